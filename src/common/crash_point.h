#pragma once

// Crash points: places where the tests end the process as kill -9 would, to walk every step of a
// multi-step change ("kill -9 between any two steps", docs/delivery.md).
//
// When the environment variable CHSYNC_CRASH_AT names a point ("rename") or its n-th arrival
// ("rename#2"), reaching it ends the process at once with _exit(137): no destructor runs, no
// buffer is flushed, no file is closed cleanly — what a SIGKILL leaves. The line "crash point
// NAME" goes to standard error first, so that a test can tell that the point was reached. Unset
// (always, outside the tests), a point costs one comparison.

#include <string_view>

namespace chsync {

void CrashPoint(std::string_view point);

}  // namespace chsync
