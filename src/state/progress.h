#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

namespace chsync::pipe {

/// The snapshot's progress report. On a terminal it redraws a compact block on stderr (one line
/// per table being copied: rows copied / estimate, rows/s, ETA; then a totals line) and prints a
/// permanent line as each table finishes; otherwise it logs (common/log.h) a line per table being
/// copied every `log_interval` and one line when a table finishes. Thread-safe: workers report,
/// one thread calls Tick.
class SnapshotProgress {
 public:
  using Clock = std::chrono::steady_clock;

  /// `out` is where the terminal display goes (stderr by default).
  SnapshotProgress(bool terminal, std::chrono::milliseconds log_interval, std::FILE* out = stderr);

  /// Registers a table (before any worker starts); returns its id.
  size_t AddTable(std::string name, uint64_t estimate);
  /// A worker began (or resumed) copying the table, with `rows_before` rows copied by earlier runs.
  void Started(size_t id, uint64_t rows_before, bool resumed);
  /// The table now has `rows` rows copied in all (earlier runs included).
  void Copied(size_t id, uint64_t rows);
  /// The table is completely copied.
  void Finished(size_t id);
  /// The table stopped before its end (stop requested or an error).
  void Interrupted(size_t id);

  /// How often Tick wants to be called.
  std::chrono::milliseconds tick_interval() const;
  /// Redraws (terminal, at most every 250 ms) or logs (every log_interval) when due.
  void Tick();
  /// Clears the display and prints or logs the final summary.
  void Summary();

 private:
  enum class State { kWaiting, kCopying, kDone, kInterrupted };
  struct Table {
    std::string name;
    uint64_t estimate = 0;
    uint64_t rows_before = 0;  // copied by earlier runs
    uint64_t rows = 0;         // copied in all
    State state = State::kWaiting;
    Clock::time_point started;
    Clock::time_point finished;
  };

  /// "db.t  1,234 / ~5,000 (24%)  10,000 rows/s  ETA 0:01" for a table being copied.
  std::string LiveLine(const Table& t, Clock::time_point now) const;
  /// "db.t: 5,000 rows in 1.2 s (4,166 rows/s)".
  static std::string DoneLine(const Table& t);
  std::string TotalsLine(Clock::time_point now) const;
  /// Erases the live block (terminal) and returns the escape codes that do it.
  std::string EraseBlock();
  void Redraw(Clock::time_point now);

  const bool terminal_;
  const std::chrono::milliseconds log_interval_;
  std::FILE* const out_;
  const Clock::time_point start_ = Clock::now();

  mutable std::mutex mu_;
  std::vector<Table> tables_;
  /// Lines of finished tables not yet printed above the live block (terminal).
  std::vector<std::string> finished_lines_;
  size_t block_lines_ = 0;  // lines of the live block on screen
  Clock::time_point last_draw_{};
  Clock::time_point last_log_ = start_;
};

}  // namespace chsync::pipe
