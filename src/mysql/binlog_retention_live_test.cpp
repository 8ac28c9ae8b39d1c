// ReadRetention against the FULL MariaDB test server. Rotates its binlog (FLUSH BINARY LOGS), which
// every reader of the binlog must cope with anyway; changes no global variable.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

#include "common/url.h"
#include "mysql/binlog_retention.h"
#include "mysql/connection.h"
#include "mysql/live_test_connection.h"

namespace chsync::mysql {
namespace {

std::unique_ptr<Connection> Connect() {
  return ConnectToTestServer();
}

TEST(BinlogRetentionLive, ListsFilesAndTheExpiry) {
  auto conn = Connect();
  ASSERT_NE(conn, nullptr);
  auto reading = ReadRetention(*conn);
  ASSERT_TRUE(reading.ok()) << reading.error().message();
  ASSERT_GE(reading->files.size(), 1u);
  EXPECT_GT(reading->files.back().size, 0u) << "a binlog file starts with its format description";
  for (const BinaryLogFile& f : reading->files) EXPECT_FALSE(f.name.empty());
  EXPECT_TRUE(std::is_sorted(
      reading->files.begin(), reading->files.end(),
      [](const BinaryLogFile& a, const BinaryLogFile& b) { return CompareBinlogNames(a.name, b.name) < 0; }))
      << "oldest first";
  EXPECT_GT(reading->read_at_ms, uint64_t{1700000000000});

  // The expiry as the server states it.
  auto seconds = conn->QueryValue("SELECT @@GLOBAL.binlog_expire_logs_seconds");
  ASSERT_TRUE(seconds.ok()) << seconds.error().message();
  auto days = conn->QueryValue("SELECT @@GLOBAL.expire_logs_days");
  ASSERT_TRUE(days.ok()) << days.error().message();
  uint64_t expected = std::stoull(seconds->value_or("0"));
  if (expected == 0) expected = static_cast<uint64_t>(std::stod(days->value_or("0")) * 86400);
  EXPECT_EQ(reading->expire_seconds, expected);
}

TEST(BinlogRetentionLive, FlushBinaryLogsAddsAFile) {
  auto conn = Connect();
  ASSERT_NE(conn, nullptr);
  auto before = ReadRetention(*conn);
  ASSERT_TRUE(before.ok()) << before.error().message();
  ASSERT_FALSE(before->files.empty());
  Status flushed = conn->Execute("FLUSH BINARY LOGS");
  ASSERT_TRUE(flushed.ok()) << flushed.error().message();
  auto after = ReadRetention(*conn);
  ASSERT_TRUE(after.ok()) << after.error().message();
  ASSERT_FALSE(after->files.empty());
  EXPECT_GT(CompareBinlogNames(after->files.back().name, before->files.back().name), 0)
      << before->files.back().name << " then " << after->files.back().name;
  // The file that was newest before is still there, closed, and at least as large.
  auto old = std::find_if(after->files.begin(), after->files.end(),
                          [&](const BinaryLogFile& f) { return f.name == before->files.back().name; });
  ASSERT_NE(old, after->files.end());
  EXPECT_GE(old->size, before->files.back().size);

  // The estimator over the two readings: the checkpoint in the closed file is behind the whole
  // new file, and the write rate is not negative.
  RetentionEstimator estimator;
  estimator.Add(*before);
  estimator.Add(*after);
  RetentionHeadroom h = estimator.For(old->name, 4);
  EXPECT_TRUE(h.checkpoint_file_present);
  EXPECT_GE(h.bytes_behind, old->size - 4 + after->files.back().size);
  EXPECT_GE(h.write_rate_bytes_per_s, 0);
}

}  // namespace
}  // namespace chsync::mysql
