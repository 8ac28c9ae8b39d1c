#pragma once

// The ClickHouse steps of a source statement that ClickHouse already acknowledged, kept in the
// state directory, so that the statement replayed after a crash does not run them a second time.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace chsync::pipe {

/// One ClickHouse step of the source statement that starts at `file`:`position`: "0/room" (the
/// table in the way of the statement's first rename moved aside), "0/rename", "1/room", …
struct DdlStep {
  std::string file;
  uint64_t position = 0;
  std::string name;

  /// "binlog.000003:516086236#1/rename".
  std::string ToString() const;
  bool operator==(const DdlStep&) const = default;
};

/// A write-ahead journal (`DIR/ddl-journal`) of the ClickHouse steps of statements whose steps
/// are each safe to run again on their own, but not once a later step of the same statement ran.
/// In `RENAME TABLE t TO _t_del, _t_gho TO t`, renaming `t` to `_t_del` again after the second
/// rename moved `_t_gho` onto `t` would move the wrong table.
///
/// The pipe saves a checkpoint at a statement's start before it runs the statement's ClickHouse
/// steps, and the next checkpoint after them; a crash in between replays the statement. Each step
/// is recorded right after ClickHouse acknowledged it; on the replay, a recorded step is not run
/// again (the pipe's bookkeeping in memory is still done as in the first pass), and the others run.
/// A crash between a step and its record replays that one step, which must be safe to run twice.
///
/// File layout: one line per step, `<crc32 of the key, 8 hex digits> <DdlStep::ToString()>\n`,
/// appended and fsync'd by Record(). A damaged last line (a crash while it was written) is
/// ignored and cut off; a damaged line before it is kCorrupt, naming the file.
///
/// Not thread-safe; one process at a time (the state directory's lock).
class DdlJournal {
 public:
  /// Reads `dir`/ddl-journal; no file is an empty journal.
  static Result<DdlJournal> Open(const std::string& dir);

  /// Whether `step` was recorded.
  bool Done(const DdlStep& step) const;
  /// Appends `step` and fsyncs the file: once this returns Ok, Done(step) is true in this process
  /// and in every later one. On an error the journal in memory is unchanged, and the file may
  /// hold a damaged last line: Open() it again before the next Record().
  Status Record(const DdlStep& step);
  /// Forgets the steps of statements before `file`:`position`, the resume position of a saved
  /// checkpoint (such statements are never replayed). The file is rewritten crash-safely when a
  /// step goes, removed when none is left.
  Status Forget(std::string_view file, uint64_t position);

  const std::vector<DdlStep>& steps() const { return steps_; }
  const std::string& path() const { return path_; }

 private:
  explicit DdlJournal(std::string path) : path_(std::move(path)) {}
  Status Rewrite();

  std::string path_;
  std::vector<DdlStep> steps_;
};

}  // namespace chsync::pipe
