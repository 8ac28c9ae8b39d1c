#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "binlog/event.h"
#include "common/result.h"

namespace chsync::pipe {

/// The `_chsync_version` of a row written by the stream: replay-stable and strictly increasing in
/// binlog order, derived from the binlog coordinate only (never a clock or a counter), so replaying
/// the same events after a crash — or after losing the state directory — writes identical versions.
///
///   bits 63..44  binlog file sequence number (the numeric suffix of "binlog.000042": 42), 1..2^20-1
///   bits 43..0   the row's offset: its event's position in the file plus the row's index in the
///                event (files up to 16 TiB)
///
/// Offsets are unique and grow with binlog order. A row takes a "slot" of its event: its index k in
/// the event, or for an event inside a zstd TRANSACTION_PAYLOAD (MySQL ≥ 8.0.20) the inner event's
/// byte offset in the inflated payload plus k. An uncompressed event of S bytes has fewer than S
/// rows, so its slots stay below the next event's position. A compressed one (a payload, or
/// MariaDB's *_ROWS_COMPRESSED with log_bin_compress=ON) may hold more rows than bytes — 5000
/// identical rows fit in a few hundred bytes — so its slots run up to its inflated size I: every
/// later offset of the same file is shifted up by the file's `shift`, the running sum of
/// max(0, I - S) over its earlier compressed events. The shift depends on the file's bytes only
/// (not on which tables are replicated: skipped events count too), starts at 0 in every file, and
/// is saved with every checkpoint position (SourcePosition::version_shift), so that a replay from
/// any checkpoint numbers every row exactly as the first pass did. Snapshot rows carry version 0.
///
/// Why not bits of its own for the slot: the version must fit 64 bits (ClickHouse 18.16's version
/// column is at most UInt64), and a payload may hold millions of rows while files may exceed 4 GiB;
/// no fixed split of 44 bits serves both, while the shift costs nothing where nothing is compressed.
struct RowCoordinate {
  uint32_t file_sequence = 0;
  uint64_t offset = 0;  ///< event position + row index in the event (+ expansion)
};

inline constexpr int kOffsetBits = 44;
inline constexpr uint64_t kMaxOffset = (uint64_t{1} << kOffsetBits) - 1;
inline constexpr uint32_t kMaxFileSequence = (uint32_t{1} << (64 - kOffsetBits)) - 1;

/// The version for a coordinate; kUnsupported when the file sequence or the offset do not fit (the
/// message says which and that a resync into fresh tables is needed).
Result<uint64_t> RowVersion(const RowCoordinate& coordinate);

/// How far an outer event moves the offsets of the events after it in its file: max(0, I - S) for a
/// TRANSACTION_PAYLOAD (I: its inflated size) or a MariaDB compressed rows event (I: the declared
/// inflated size of its rows), 0 for every other event.
uint64_t RowSlotExpansion(const binlog::Event& event);

/// Numbers the rows of one stream in binlog order (see above). Not thread-safe.
class RowNumbering {
 public:
  /// Resumes at a checkpoint position in `file` whose shift was `shift`.
  void Resume(std::string_view file, uint64_t shift);
  /// Before the rows of an outer event (read from `file`) are numbered.
  void BeginEvent(const binlog::Event& event, std::string_view file);
  /// The offset of row `k` of `event` (the outer event given to BeginEvent, or one inside it);
  /// kCorrupt when a compressed event has more rows than it declares inflated bytes.
  Result<uint64_t> Offset(const binlog::Event& event, const binlog::RowsEvent& rows, size_t k) const;
  /// The shift after the current event: what a checkpoint right after it records.
  uint64_t shift() const { return shift_; }

 private:
  std::string file_;
  uint64_t shift_ = 0;        ///< after the current event
  uint64_t event_shift_ = 0;  ///< before it: what its rows use
};

/// The numeric suffix of a binlog file name ("mysql-bin.000042" → 42); kCorrupt when there is none.
Result<uint32_t> BinlogFileSequence(std::string_view file_name);

}  // namespace chsync::pipe
