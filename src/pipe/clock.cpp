#include "pipe/clock.h"

#include <time.h>

namespace chsync::pipe {

uint64_t NowMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

std::chrono::steady_clock::time_point CoarseSteadyNow() {
  timespec now{};
  if (clock_gettime(CLOCK_MONOTONIC_COARSE, &now) != 0) return std::chrono::steady_clock::now();
  return std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::seconds(now.tv_sec) +
                                                                      std::chrono::nanoseconds(now.tv_nsec)));
}

}  // namespace chsync::pipe
