#pragma once

#include <cstdint>
#include <string_view>

#include "common/result.h"

namespace chsync::pipe {

/// The `_chsync_version` of a row written by the stream: replay-stable and strictly increasing in
/// binlog order, derived from the binlog coordinate only (never a clock or a counter), so replaying
/// the same events after a crash — or after losing the state directory — writes identical versions.
///
///   bits 63..44  binlog file sequence number (the numeric suffix of "binlog.000042": 42), 1..2^20-1
///   bits 43..0   offset of the row inside that file, in bytes (files up to 16 TiB)
///
/// The row offset is the event's position plus the byte offset of the row image inside the event,
/// which is unique and grows with binlog order because a row lies inside its event. Rows inside a
/// zstd TRANSACTION_PAYLOAD (MySQL ≥ 8.0.20) have no file offset of their own: they count from the
/// payload event's position through the uncompressed bytes, and `expansion` (the sum, over earlier
/// payload events of the same file, of uncompressed minus compressed size) is added to every offset
/// after them, so that later events still sort above. Snapshot rows carry version 0.
struct RowCoordinate {
  uint32_t file_sequence = 0;
  uint64_t offset = 0;  ///< event position + row offset in the event (+ expansion)
};

inline constexpr int kOffsetBits = 44;
inline constexpr uint64_t kMaxOffset = (uint64_t{1} << kOffsetBits) - 1;
inline constexpr uint32_t kMaxFileSequence = (uint32_t{1} << (64 - kOffsetBits)) - 1;

/// The version for a coordinate; kUnsupported when the file sequence or the offset do not fit (the
/// message says which and that a resync into fresh tables is needed).
Result<uint64_t> RowVersion(const RowCoordinate& coordinate);

/// The numeric suffix of a binlog file name ("mysql-bin.000042" → 42); kCorrupt when there is none.
Result<uint32_t> BinlogFileSequence(std::string_view file_name);

}  // namespace chsync::pipe
