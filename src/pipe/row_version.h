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
///   bits 43..0   the row's offset: its event's position in the file plus the row's index in the
///                event (files up to 16 TiB)
///
/// Position plus index is unique and grows with binlog order: every row takes at least one byte of
/// its event, so index < event size and the next event starts above. Rows inside a zstd
/// TRANSACTION_PAYLOAD (MySQL ≥ 8.0.20) are numbered 0..N-1 across the whole payload; when a payload
/// of S bytes holds N ≥ S rows (highly compressible data), every later offset of the same file is
/// shifted up by `expansion`, the running sum of max(0, N - S + 1) over the file's earlier
/// payloads, so that later events still sort above. Snapshot rows carry version 0.
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

/// The numeric suffix of a binlog file name ("mysql-bin.000042" → 42); kCorrupt when there is none.
Result<uint32_t> BinlogFileSequence(std::string_view file_name);

}  // namespace chsync::pipe
