#include "binlog/partial_rows.h"

#include <algorithm>
#include <utility>

#include "binlog/compression.h"

namespace chsync::binlog {
namespace {

constexpr size_t kHeaderLength = 19;
constexpr size_t kChecksumLength = 4;
constexpr size_t kEventSizeOffset = 9;
/// A finished group's buffer larger than this is released when the next group starts.
constexpr size_t kKeepCapacity = size_t{16} << 20;

uint32_t ReadLE32(const char* p) {
  auto u = reinterpret_cast<const uint8_t*>(p);
  return uint32_t{u[0]} | (uint32_t{u[1]} << 8) | (uint32_t{u[2]} << 16) | (uint32_t{u[3]} << 24);
}

void PutLE(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void WriteLE32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

bool IsRowsEventType(uint8_t type) {
  return (type >= 23 && type <= 25) || (type >= 30 && type <= 32) || (type >= 166 && type <= 171);
}

std::string Where(std::string_view file, uint64_t position) {
  return std::string(file) + ":" + std::to_string(position);
}

std::string FragmentName(uint32_t sequence, uint32_t total) {
  return "fragment " + std::to_string(sequence) + "/" + std::to_string(total);
}

}  // namespace

Result<PartialRowsFragment> ParsePartialRowsFragment(ByteReader body) {
  PartialRowsFragment f;
  uint64_t fields_at = body.offset();
  CHSYNC_ASSIGN_OR_RETURN(uint32_t first, body.ReadU32("PARTIAL_ROW_DATA fragment count"));
  CHSYNC_ASSIGN_OR_RETURN(uint32_t second, body.ReadU32("PARTIAL_ROW_DATA fragment count"));
  CHSYNC_ASSIGN_OR_RETURN(f.flags, body.ReadU8("PARTIAL_ROW_DATA flags"));
  // MariaDB's protocol page lists the total first and the sequence number second; the
  // Doxygen block of Partial_rows_log_event lists them the other way round. A sequence number
  // never exceeds the total, so the larger of the two is the total whichever order was
  // written, and both readings give the same fragment.
  f.total = std::max(first, second);
  f.sequence = std::min(first, second);
  if (f.sequence == 0) {
    return Error(ErrorKind::kCorrupt, "PARTIAL_ROW_DATA fragment numbers " + std::to_string(first) + " and " +
                                          std::to_string(second) +
                                          " (the sequence number and the total count from 1) at offset " +
                                          std::to_string(fields_at));
  }
  if (f.flags & kPartialRowsFlagOrigEventSize) {
    CHSYNC_ASSIGN_OR_RETURN(uint64_t size, body.ReadU64("PARTIAL_ROW_DATA original event size"));
    f.original_size = size;
  }
  f.chunk = body.ReadRest();
  return f;
}

void AppendPartialRowsFragment(const PartialRowsFragment& fragment, std::string& out) {
  PutLE(out, fragment.total, 4);
  PutLE(out, fragment.sequence, 4);
  uint8_t flags = fragment.flags;
  if (fragment.original_size) flags |= kPartialRowsFlagOrigEventSize;
  out.push_back(static_cast<char>(flags));
  if (fragment.original_size) PutLE(out, *fragment.original_size, 8);
  out.append(fragment.chunk);
}

PartialRowsAssembler::PartialRowsAssembler(uint64_t max_event_size)
    : max_event_size_(std::min<uint64_t>(max_event_size, UINT32_MAX)) {}

void PartialRowsAssembler::Reset() {
  std::string().swap(buffer_);
  first_file_.clear();
  first_position_ = 0;
  expected_total_ = 0;
  received_ = 0;
  original_size_.reset();
}

std::string PartialRowsAssembler::GroupName() const {
  return "the fragmented rows event that began at " + Where(first_file_, first_position_) + " (" +
         std::to_string(received_) + " of " + std::to_string(expected_total_) + " fragments, " +
         std::to_string(buffer_.size()) + " bytes received)";
}

Error PartialRowsAssembler::Fail(ErrorKind kind, std::string message) {
  Reset();
  return Error(kind, std::move(message));
}

Status PartialRowsAssembler::BeforeOtherEvent(EventType type, std::string_view file, uint64_t position) {
  if (!in_progress()) {
    if (buffer_.capacity() > kKeepCapacity) std::string().swap(buffer_);
    return Status::Ok();
  }
  if (type == EventType::kHeartbeat || type == EventType::kHeartbeatV2) return Status::Ok();
  std::string group = GroupName();
  return Fail(ErrorKind::kCorrupt,
              std::string(EventTypeName(type)) + " event at " + Where(file, position) + " interrupts " +
                  group + ": " + FragmentName(received_ + 1, expected_total_) +
                  " was expected (the binlog is damaged or was cut inside a transaction)");
}

Result<std::optional<ReassembledRowsEvent>> PartialRowsAssembler::Add(const PartialRowsFragment& fragment,
                                                                      std::string_view file,
                                                                      uint64_t position,
                                                                      ChecksumAlgorithm checksum) {
  std::string at = Where(file, position);
  std::string name = FragmentName(fragment.sequence, fragment.total);
  if (fragment.total == 0 || fragment.sequence == 0 || fragment.sequence > fragment.total) {
    return Fail(ErrorKind::kCorrupt,
                "PARTIAL_ROW_DATA " + name + " at " + at + " is not a valid fragment number");
  }
  if (!in_progress()) {
    if (fragment.sequence != 1) {
      return Fail(ErrorKind::kCorrupt,
                  "PARTIAL_ROW_DATA " + name + " at " + at +
                      " without the fragments before it: expected fragment 1 to start a group (did reading "
                      "start inside a fragmented rows event?)");
    }
    if (buffer_.capacity() > kKeepCapacity) std::string().swap(buffer_);
    buffer_.clear();
    first_file_.assign(file);
    first_position_ = position;
    expected_total_ = fragment.total;
    received_ = 0;
    original_size_.reset();
  } else {
    if (fragment.total != expected_total_) {
      std::string group = GroupName();
      return Fail(ErrorKind::kCorrupt, "PARTIAL_ROW_DATA " + name + " at " + at + " belongs to a group of " +
                                           std::to_string(fragment.total) + " fragments, but " + group +
                                           " has " + std::to_string(expected_total_));
    }
    if (fragment.sequence != received_ + 1) {
      std::string group = GroupName();
      return Fail(ErrorKind::kCorrupt, "PARTIAL_ROW_DATA " + name + " at " + at + " out of order: expected " +
                                           FragmentName(received_ + 1, expected_total_) + " of " + group);
    }
  }
  if (fragment.original_size) {
    if (original_size_ && *original_size_ != *fragment.original_size) {
      std::string group = GroupName();
      return Fail(ErrorKind::kCorrupt, "PARTIAL_ROW_DATA " + name + " at " + at +
                                           " declares an original size of " +
                                           std::to_string(*fragment.original_size) + " bytes, but " + group +
                                           " declared " + std::to_string(*original_size_));
    }
    if (*fragment.original_size > max_event_size_) {
      return Fail(ErrorKind::kUnsupported,
                  "PARTIAL_ROW_DATA " + name + " at " + at + " declares a rows event of " +
                      std::to_string(*fragment.original_size) + " bytes, more than the limit of " +
                      std::to_string(max_event_size_) +
                      " bytes (raise the decoder's size limit if it is genuine)");
    }
    if (*fragment.original_size < buffer_.size()) {
      std::string group = GroupName();
      return Fail(ErrorKind::kCorrupt, "PARTIAL_ROW_DATA " + name + " at " + at +
                                           " declares an original size of " +
                                           std::to_string(*fragment.original_size) + " bytes, fewer than " +
                                           group + " already carries");
    }
    original_size_ = fragment.original_size;
  }
  uint64_t limit = original_size_ ? *original_size_ : max_event_size_;
  if (fragment.chunk.size() > limit - buffer_.size()) {
    std::string group = GroupName();
    std::string what = original_size_
                           ? "the original size of " + std::to_string(*original_size_) + " bytes declared"
                           : "the limit of " + std::to_string(max_event_size_) + " bytes";
    return Fail(original_size_ ? ErrorKind::kCorrupt : ErrorKind::kUnsupported,
                "PARTIAL_ROW_DATA " + name + " at " + at + " brings " + group + " to " +
                    std::to_string(buffer_.size() + fragment.chunk.size()) + " bytes, past " + what);
  }
  buffer_.append(fragment.chunk);
  ++received_;
  if (received_ < expected_total_) return std::optional<ReassembledRowsEvent>();

  // The group is complete.
  std::string group = "the rows event reassembled from " + std::to_string(expected_total_) +
                      " PARTIAL_ROW_DATA fragments at " + Where(first_file_, first_position_) + ".." + at;
  if (original_size_ && *original_size_ != buffer_.size()) {
    return Fail(ErrorKind::kCorrupt, "the fragments of " + group + " carry " +
                                         std::to_string(buffer_.size()) + " bytes, but fragment 1 declared " +
                                         std::to_string(*original_size_));
  }
  if (buffer_.size() < kHeaderLength) {
    return Fail(ErrorKind::kCorrupt,
                group + " has " + std::to_string(buffer_.size()) + " bytes, fewer than an event header");
  }
  auto type = static_cast<uint8_t>(buffer_[4]);
  if (!IsRowsEventType(type)) {
    std::string type_name(EventTypeName(static_cast<EventType>(type)));
    if (type_name == "UNKNOWN") type_name += "_" + std::to_string(type);
    return Fail(ErrorKind::kCorrupt, group + " is a " + type_name + " event, not a rows event");
  }
  ReassembledRowsEvent out;
  out.type = static_cast<EventType>(type);
  out.fragments = expected_total_;
  out.carried_bytes = buffer_.size();
  uint64_t size = buffer_.size();
  uint32_t declared = ReadLE32(buffer_.data() + kEventSizeOffset);
  if (checksum != ChecksumAlgorithm::kNone && declared == size && size >= kHeaderLength + kChecksumLength &&
      Crc32(std::string_view(buffer_).substr(0, size - kChecksumLength)) ==
          ReadLE32(buffer_.data() + size - kChecksumLength)) {
    // The original event with its CRC32, as it would have been written whole.
    buffer_.resize(size - kChecksumLength);
    out.had_checksum = true;
  } else if (declared == size) {
    // The original event without a checksum.
  } else if (declared == size + kChecksumLength) {
    // The header counts a checksum that the chunks do not carry.
  } else {
    return Fail(ErrorKind::kCorrupt, "the header of " + group + " says event_size " +
                                         std::to_string(declared) + ", but the fragments carry " +
                                         std::to_string(size) + " bytes");
  }
  WriteLE32(buffer_.data() + kEventSizeOffset, static_cast<uint32_t>(buffer_.size()));
  out.event = buffer_;
  out.first_file = first_file_;
  out.first_position = first_position_;
  expected_total_ = 0;
  received_ = 0;
  original_size_.reset();
  return std::optional<ReassembledRowsEvent>(out);
}

}  // namespace chsync::binlog
