#pragma once

// The versions the stream gives rows: the one place where the pipe numbers them. It joins the two
// halves of "versions only grow for a row" — the lineage (lineage.h: epochs, and the high-water
// mark of counted sequences, made durable before a row of a higher one is numbered) and the
// numbering of rows within a binlog file (row_version.h) — so that no other code counts a file's
// sequence or computes a version. Not thread-safe: the stream's thread numbers rows.

#include <cstdint>
#include <string>
#include <string_view>

#include "binlog/event.h"
#include "common/result.h"
#include "position/lineage.h"
#include "position/row_version.h"

namespace chsync::pipe {

class Versions {
 public:
  /// Reads the lineage of state directory `dir` (Lineage::Load).
  static Result<Versions> Load(const std::string& dir);

  /// The epochs, the high-water mark and the GTIDs whose rows were sent.
  Lineage& lineage() { return lineage_; }
  const Lineage& lineage() const { return lineage_; }

  /// The stream resumes at a checkpoint position in `file` whose shift was `shift`.
  void Resume(std::string_view file, uint64_t shift) { numbering_.Resume(file, shift); }
  /// Before the rows of an outer event read from `file` are numbered.
  void BeginEvent(const binlog::Event& event, std::string_view file) { numbering_.BeginEvent(event, file); }
  /// The shift after the current event: what a checkpoint right after it records.
  uint64_t shift() const { return numbering_.shift(); }

  /// The counted sequence of binlog `file` under sequence base `base` (Lineage::Count: made durable
  /// as the high-water mark first when it is above it); counted once per file and base.
  Result<uint32_t> Sequence(std::string_view file, int64_t base);
  /// The version of row `k` of `event` (the outer event given to BeginEvent, or one inside it),
  /// in a file of counted sequence `sequence`.
  Result<uint64_t> Of(uint32_t sequence, const binlog::Event& event, const binlog::RowsEvent& rows,
                      size_t k) const;
  /// The version of the statement `event` of `file` (sequence base `base`): above every row before
  /// it, below every row after it. For the rows a statement writes itself (a shared table's
  /// deletions of one source's rows at a TRUNCATE).
  Result<uint64_t> OfStatement(std::string_view file, int64_t base, const binlog::Event& event);

 private:
  explicit Versions(Lineage lineage) : lineage_(std::move(lineage)) {}

  Lineage lineage_;
  RowNumbering numbering_;
  /// The file and base the last Sequence counted, and what it counted.
  std::string file_;
  int64_t base_ = 0;
  uint32_t sequence_ = 0;
};

}  // namespace chsync::pipe
