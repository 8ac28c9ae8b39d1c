#pragma once

// Narrowing a differing chunk down to rows and columns, and deciding whether a difference is the
// pipe's lag: pure functions over the cells both databases returned (docs/verify.md).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "verify/plan.h"

namespace chsync::verify {

/// Rows of canonical cells, one per plan column.
using CellRows = std::vector<std::vector<std::string>>;

/// One row that differs.
struct RowDifference {
  enum class Kind {
    kMissing,  ///< at the source, not in the destination's FINAL view
    kExtra,    ///< in the destination, not at the source
    kValues,   ///< in both, some columns differ
    /// Several live rows of one key in the destination (its ClickHouse sorting key or shard no longer
    /// follows the source key): `cells` name the columns whose copies differ, `copies` how many.
    kDuplicate,
  };
  Kind kind = Kind::kValues;
  std::string key_text;  ///< canonical key text (the key cells joined by ',')
  std::string key;       ///< for people: "id=5, region='eu'"
  struct Cell {
    std::string column;  ///< the source column's name
    std::string source;  ///< the values for people ("NULL" for NULL)
    std::string dest;
  };
  std::vector<Cell> cells;  ///< kValues, kDuplicate: the differing columns
  size_t copies = 1;        ///< kDuplicate: live rows of the key in the destination

  bool operator==(const RowDifference&) const = default;
};

/// The key cells of `row` joined by ',' (what plan.*_key_text computes in SQL).
std::string KeyText(const TablePlan& plan, const std::vector<std::string>& row);

/// The rows that differ between `source` and `dest` (each holding plan.columns.size() cells), in
/// key text order. For a full-row plan a row is its own key: rows are missing or extra only. A key
/// with several destination rows is one kDuplicate, whatever their values.
/// kCorrupt when a row has the wrong number of cells.
Result<std::vector<RowDifference>> CompareRows(const TablePlan& plan, const CellRows& source,
                                               const CellRows& dest);

/// Whether a difference found after the source was read at some position can be the pipe's lag.
struct LagView {
  /// The pipe's checkpoint has passed that position: every change before it is in the destination.
  bool checkpoint_passed = false;
  /// _chsync_version of the first change at that position: a destination row with a version at
  /// least this was written by a change the source read did not see yet. Unset: unknown.
  std::optional<uint64_t> first_version_after;
};

/// What the pipe's checkpoints tell about the compressed-event shift of row versions
/// (position/row_version.h) at a read position. The shift only grows within a file, so a checkpoint at
/// or before the position in the same file gives a lower bound (at the position: the exact shift);
/// nothing else tells. A lower bound never takes a change the read did not see for a real
/// difference; without it, every change in the shifted range counted as one the read did not see.
class ShiftAtRead {
 public:
  ShiftAtRead(std::string file, uint64_t position) : file_(std::move(file)), position_(position) {}
  /// A checkpoint's resume position, its shift `version_shift` and its `sequence_base`. A pipe that
  /// moved to another server meanwhile (another base) reads another server's files of the same
  /// names: nothing is known then.
  void Saw(std::string_view file, uint64_t position, uint64_t version_shift, int64_t sequence_base) {
    if (!base_) base_ = sequence_base;
    if (*base_ != sequence_base) moved_ = true;
    if (moved_) {
      lower_bound_ = 0;
      return;
    }
    if (file == file_ && position <= position_ && version_shift > lower_bound_) lower_bound_ = version_shift;
  }
  uint64_t lower_bound() const { return lower_bound_; }

 private:
  std::string file_;
  uint64_t position_;
  uint64_t lower_bound_ = 0;
  std::optional<int64_t> base_;
  bool moved_ = false;
};

/// True when `difference` may be lag rather than a real difference: the checkpoint has not passed
/// the source's read position, or the destination's latest version of the key
/// (`latest_dest_version`, from DestVersionsSql; unset when the key never reached it) is a change
/// the source read had not seen.
bool MayBeLag(const LagView& lag, std::optional<uint64_t> latest_dest_version);

/// One line for people: "id=5: amount: source 10.50, destination 10.5" / "id=7: missing in the
/// destination" / "id=9: in the destination only".
std::string DescribeDifference(const RowDifference& difference);

/// Every line of a TabSeparated output.
std::vector<std::vector<std::string>> ParseTabSeparated(std::string_view text);

}  // namespace chsync::verify
