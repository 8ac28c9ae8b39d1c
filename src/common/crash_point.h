#pragma once

// Crash points: places where the tests end the process as kill -9 would, to walk every step of a
// multi-step change ("kill -9 between any two steps", docs/delivery.md).
//
// When the environment variable CHSYNC_CRASH_AT names a point ("rename") or its n-th arrival
// ("rename#2"), reaching it ends the process at once with _exit(137): no destructor runs, no
// buffer is flushed, no file is closed cleanly — what a SIGKILL leaves. The line "crash point
// NAME" goes to standard error first, so that a test can tell that the point was reached. Unset
// (always, outside the tests), a point costs one comparison. FailPoint is the same for failures the
// process survives, named by CHSYNC_FAIL_AT.

#include <string_view>

namespace chsync {

void CrashPoint(std::string_view point);

/// Fault points: when CHSYNC_FAIL_AT names `point` (or its n-th arrival, "point#n"), that one arrival
/// returns true, after the line "fail point NAME" on standard error, and the caller fails as the
/// operation it guards would (a save refused by the disk, say). Every other arrival: false.
bool FailPoint(std::string_view point);

/// Delay points: when CHSYNC_DELAY_AT names `point` (or "point#n"), that arrival sleeps
/// CHSYNC_DELAY_MS milliseconds (5000 without it), after the line "delay point NAME" on standard
/// error: a step that is slow for once (a disk, a server), for the tests of what runs meanwhile.
void DelayPoint(std::string_view point);

}  // namespace chsync
