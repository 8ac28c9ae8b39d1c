#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "binlog/event.h"
#include "common/byte_reader.h"
#include "common/result.h"

namespace chsync::binlog {

/// MariaDB's PARTIAL_ROW_DATA_EVENT (type 172, `Partial_rows_log_event`, MariaDB >= 12.3,
/// MDEV-32570). A rows event larger than binlog_row_event_fragment_threshold is written to the
/// binlog (and so sent to replicas) as a group of these events, in order, right where the rows
/// event would have been (after its TABLE_MAP). Each carries the next chunk of the original
/// event's bytes; joined, the chunks are the original rows event, header included (its type is
/// nowhere else), which then decodes as usual.
///
/// Body (after the 19-byte common header; the fragment's own CRC32, if any, follows):
///
/// | size | field                                                                       |
/// |------|-----------------------------------------------------------------------------|
/// | 4    | total number of fragments in the group (>= 1)                               |
/// | 4    | sequence number of this fragment, 1-based                                   |
///
/// (That order is the protocol page's; the server's class comment lists the sequence number
/// first. The parser takes the larger as the total, which reads either order correctly.)
///
/// | size | field (continued)                                                           |
/// |------|-----------------------------------------------------------------------------|
/// | 1    | flags: 0x01 FL_ORIG_EVENT_SIZE (set on fragment 1 only)                     |
/// | 8    | size of the original rows event, only when FL_ORIG_EVENT_SIZE is set        |
/// | rest | chunk of the original rows event                                            |
inline constexpr uint8_t kPartialRowsFlagOrigEventSize = 0x01;
/// Length of the fixed part (total, sequence, flags): PARTIAL_ROWS_HEADER_LEN.
inline constexpr size_t kPartialRowsHeaderLength = 9;

/// One PARTIAL_ROW_DATA_EVENT body, parsed.
struct PartialRowsFragment {
  uint32_t total = 0;
  uint32_t sequence = 0;
  uint8_t flags = 0;
  std::optional<uint64_t> original_size;  ///< present when flags has FL_ORIG_EVENT_SIZE
  std::string_view chunk;                 ///< view into the body passed to ParsePartialRowsFragment
};

/// Parses a fragment from `body` (the event without its common header and checksum; its
/// offsets are file offsets). The larger of the two counts is the total, the smaller the
/// sequence number (either field order); a 0 is an error naming its offset.
Result<PartialRowsFragment> ParsePartialRowsFragment(ByteReader body);

/// Appends the body of `fragment` as the server writes it (original_size written when set,
/// and FL_ORIG_EVENT_SIZE then set in the flags written). For tests and tools.
void AppendPartialRowsFragment(const PartialRowsFragment& fragment, std::string& out);

/// A rows event joined from a complete group of fragments.
struct ReassembledRowsEvent {
  /// The original rows event: common header and body, without a checksum; its header's
  /// event_size equals event.size(). Decode it like an event of a TRANSACTION_PAYLOAD (no
  /// checksum). A view into the assembler: valid until its next Add(), BeforeOtherEvent() or
  /// Reset() call.
  std::string_view event;
  EventType type = EventType::kUnknown;  ///< the original event's type (a rows event type)
  /// The chunks ended with the original event's CRC32, which matched and was removed.
  bool had_checksum = false;
  uint32_t fragments = 0;
  /// Where the group's first fragment is (the rows event "starts" there: positions derived
  /// from it, such as row versions, stay inside the group's bytes).
  std::string_view first_file;
  uint64_t first_position = 0;
  /// Bytes the chunks carried (event.size(), plus 4 when had_checksum).
  uint64_t carried_bytes = 0;
};

/// Joins PARTIAL_ROW_DATA fragments into the original rows event.
///
/// Feed every fragment in stream order with Add(), and tell it about every other event with
/// BeforeOtherEvent() so that a group cut short is reported instead of silently dropped.
/// Validates: sequence numbers 1, 2, … total without gaps; the same total across the group;
/// original_size (when given) equal to the bytes the chunks carry and never exceeded on the
/// way; the joined size within `max_event_size`. Memory grows only as chunk bytes arrive,
/// never from a declared size. After any error the group is dropped: the next fragment must
/// start a new group (sequence 1). Not thread-safe.
class PartialRowsAssembler {
 public:
  /// `max_event_size`: largest original rows event accepted (a declared size above it is
  /// refused before anything is stored). Capped at 4 GiB - 1 (the header's event_size field).
  explicit PartialRowsAssembler(uint64_t max_event_size = uint64_t{1} << 31);

  /// Adds the fragment that is the event at `file`:`position`. Returns the reassembled event
  /// when this fragment completes its group, else nullopt. `checksum` is the binlog's checksum
  /// algorithm: with kCrc32 (or kUndefined) a trailing CRC32 of the original event is recognised
  /// and removed.
  Result<std::optional<ReassembledRowsEvent>> Add(const PartialRowsFragment& fragment, std::string_view file,
                                                  uint64_t position, ChecksumAlgorithm checksum);

  /// Call before decoding any event that is not a PARTIAL_ROW_DATA (top-level events only; not
  /// those inside a TRANSACTION_PAYLOAD). While a group is incomplete, returns a kCorrupt
  /// error naming the group, what arrived and what was missing, and drops the group;
  /// heartbeats are let through (they carry no binlog content). Ok otherwise.
  Status BeforeOtherEvent(EventType type, std::string_view file, uint64_t position);

  /// True between the first and the last fragment of a group.
  bool in_progress() const { return expected_total_ != 0; }
  /// Fragments received and their total, of the group in progress (0 when none).
  uint32_t received() const { return received_; }
  uint32_t total() const { return expected_total_; }
  /// Chunk bytes received so far in the group in progress (or of the last completed group).
  uint64_t bytes() const { return buffer_.size(); }

  /// Drops any group in progress and releases its memory.
  void Reset();

 private:
  Error Fail(ErrorKind kind, std::string message);
  std::string GroupName() const;

  uint64_t max_event_size_;
  std::string buffer_;
  std::string first_file_;
  uint64_t first_position_ = 0;
  uint32_t expected_total_ = 0;  ///< 0: no group in progress
  uint32_t received_ = 0;
  std::optional<uint64_t> original_size_;
};

}  // namespace chsync::binlog
