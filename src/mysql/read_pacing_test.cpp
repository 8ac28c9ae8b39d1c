#include "mysql/read_pacing.h"

#include <gtest/gtest.h>

namespace chsync::mysql {
namespace {

using std::chrono::milliseconds;
using Clock = ReadPacing::Clock;

TEST(ReadPacing, OffNeverPauses) {
  ReadPacing pacing(milliseconds(0));
  EXPECT_FALSE(pacing.enabled());
  EXPECT_EQ(pacing.AfterRead(100, true, Clock::now()), milliseconds(0));
  EXPECT_EQ(pacing.pauses(), 0u);
}

TEST(ReadPacing, ReadsThatFoundDataNeverPause) {
  ReadPacing pacing(milliseconds(10));
  const Clock::time_point t = Clock::now();
  for (int i = 0; i < 1000; ++i)
    EXPECT_EQ(pacing.AfterRead(200, false, t + milliseconds(i)), milliseconds(0));
  EXPECT_EQ(pacing.pauses(), 0u);
}

// The live end of a slow source: every read that waited is followed by a pause.
TEST(ReadPacing, WaitsAtALowRatePause) {
  ReadPacing pacing(milliseconds(10), /*rate_limit=*/1'000'000);
  const Clock::time_point t = Clock::now();
  EXPECT_EQ(pacing.AfterRead(500, true, t), milliseconds(10));  // the first wait
  // 20 KB in the next 50 ms: 400 KB/s, below the limit.
  for (int i = 0; i < 19; ++i) EXPECT_EQ(pacing.AfterRead(1000, false, t + milliseconds(i)), milliseconds(0));
  EXPECT_EQ(pacing.AfterRead(1000, true, t + milliseconds(50)), milliseconds(10));
  EXPECT_EQ(pacing.pauses(), 2u);
}

// A source sending faster than the limit between two waits (catching up, a bulk load): no pause,
// so the socket's buffer never fills while chsync sleeps; once the rate falls, pauses come back.
TEST(ReadPacing, WaitsAtAHighRateDoNotPause) {
  ReadPacing pacing(milliseconds(10), /*rate_limit=*/1'000'000);
  const Clock::time_point t = Clock::now();
  EXPECT_EQ(pacing.AfterRead(100, true, t), milliseconds(10));
  // 2 MB within 100 ms: 20 MB/s.
  EXPECT_EQ(pacing.AfterRead(2'000'000, false, t + milliseconds(90)), milliseconds(0));
  EXPECT_EQ(pacing.AfterRead(100, true, t + milliseconds(100)), milliseconds(0));
  // Then 10 KB in a second.
  EXPECT_EQ(pacing.AfterRead(10'000, true, t + milliseconds(1100)), milliseconds(10));
  EXPECT_EQ(pacing.pauses(), 2u);
}

}  // namespace
}  // namespace chsync::mysql
