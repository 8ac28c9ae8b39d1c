#pragma once

// The clocks of the pipe.

#include <chrono>
#include <cstdint>

namespace chsync::pipe {

/// Milliseconds since the epoch (the wall clock): when something was saved or happened.
uint64_t NowMs();

/// steady_clock::now() read from the coarse clock (CLOCK_MONOTONIC_COARSE, the same clock ticking
/// in steps of a few milliseconds): for checks made once per transaction.
std::chrono::steady_clock::time_point CoarseSteadyNow();

}  // namespace chsync::pipe
