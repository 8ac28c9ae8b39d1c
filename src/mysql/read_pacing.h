#pragma once

#include <chrono>
#include <cstdint>

namespace chsync::mysql {

/// When to pause before reading on at a live binlog's end, so that the events of several
/// transactions are read with one wake-up instead of one wake-up each.
///
/// At the live end, every transaction the source commits wakes the reading thread (a poll, a
/// context switch, a short read): at a thousand small transactions a second that is about a third
/// of the stream's CPU time. The pipe holds rows for up to its batch age (a second by default)
/// before it sends them anyway, so reading them a few milliseconds later changes no lag anyone
/// sees. Pausing after a read that had to wait lets the next transactions gather in the socket's
/// buffer; the reads after the pause find them there.
///
/// Never while catching up: a read that did not wait (the data was there) never pauses, and
/// neither does a read that waited while the source sends faster than `rate_limit` bytes a second
/// (measured from one wait to the next): at such rates a pause could fill the socket's buffer and
/// slow the source's sending.
class ReadPacing {
 public:
  using Clock = std::chrono::steady_clock;

  /// `pause` 0 turns pacing off.
  explicit ReadPacing(std::chrono::milliseconds pause, uint64_t rate_limit = uint64_t{32} << 20)
      : pause_(pause), rate_limit_(rate_limit) {}

  bool enabled() const { return pause_.count() > 0; }

  /// After each read of `bytes` that ended at `now`; `waited` when the read found nothing to read
  /// and had to wait for the server. Returns how long to pause before the next read (zero: go on).
  std::chrono::milliseconds AfterRead(uint64_t bytes, bool waited, Clock::time_point now) {
    since_wait_ += bytes;
    if (!waited || !enabled()) return std::chrono::milliseconds(0);
    const double seconds = std::chrono::duration<double>(now - last_wait_).count();
    const bool first = last_wait_ == Clock::time_point{};
    const bool slow = first || static_cast<double>(since_wait_) <= static_cast<double>(rate_limit_) * seconds;
    since_wait_ = 0;
    last_wait_ = now;
    if (!slow) return std::chrono::milliseconds(0);
    ++pauses_;
    return pause_;
  }

  /// Pauses so far (for tests and figures).
  uint64_t pauses() const { return pauses_; }

 private:
  std::chrono::milliseconds pause_;
  uint64_t rate_limit_;
  uint64_t since_wait_ = 0;
  Clock::time_point last_wait_{};
  uint64_t pauses_ = 0;
};

}  // namespace chsync::mysql
