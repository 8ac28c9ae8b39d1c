#include "position/row_version.h"

#include <string>

namespace chsync::pipe {

Result<uint64_t> RowVersion(const RowCoordinate& c) {
  if (c.file_sequence == 0 || c.file_sequence > kMaxFileSequence) {
    return Error(ErrorKind::kUnsupported,
                 "binlog file number " + std::to_string(c.file_sequence) + " is outside 1.." +
                     std::to_string(kMaxFileSequence) +
                     ": row versions cannot be derived from it; run chsync resync into fresh tables");
  }
  if (c.offset > kMaxOffset) {
    return Error(ErrorKind::kUnsupported, "binlog offset " + std::to_string(c.offset) + " exceeds 16 TiB");
  }
  return (uint64_t{c.file_sequence} << kOffsetBits) | c.offset;
}

uint64_t RowSlotExpansion(const binlog::Event& event) {
  const uint64_t size = event.header.event_size;
  uint64_t inflated = 0;
  if (const auto* payload = std::get_if<binlog::TransactionPayloadEvent>(&event.body)) {
    for (const binlog::Event& inner : payload->events) inflated += inner.header.event_size;
  } else if (const auto* rows = std::get_if<binlog::RowsEvent>(&event.body)) {
    if (rows->compressed) inflated = rows->inflated_size;
  }
  return inflated > size ? inflated - size : 0;
}

void RowNumbering::Resume(std::string_view file, uint64_t shift) {
  file_ = std::string(file);
  shift_ = event_shift_ = shift;
}

void RowNumbering::BeginEvent(const binlog::Event& event, std::string_view file) {
  if (file != file_) {
    file_ = std::string(file);
    shift_ = 0;
  }
  event_shift_ = shift_;
  shift_ += RowSlotExpansion(event);
}

Result<uint64_t> RowNumbering::Offset(const binlog::Event& event, const binlog::RowsEvent& rows,
                                      size_t k) const {
  if (rows.compressed && k >= rows.inflated_size) {
    return Error(ErrorKind::kCorrupt, "compressed rows event at " + std::string(event.file) + ":" +
                                          std::to_string(event.position) +
                                          " has more rows than inflated bytes");
  }
  uint64_t slot = event.payload_index ? event.payload_offset + k : k;
  return event.position + event_shift_ + slot;
}

Result<uint32_t> BinlogFileSequence(std::string_view name) {
  size_t dot = name.rfind('.');
  std::string_view digits = dot == std::string_view::npos ? std::string_view() : name.substr(dot + 1);
  if (digits.empty() || digits.size() > 10 ||
      digits.find_first_not_of("0123456789") != std::string_view::npos) {
    return Error(ErrorKind::kCorrupt, "binlog file name '" + std::string(name) + "' has no numeric suffix");
  }
  uint64_t v = std::stoull(std::string(digits));
  if (v > UINT32_MAX)
    return Error(ErrorKind::kCorrupt, "binlog file number too large in '" + std::string(name) + "'");
  return static_cast<uint32_t>(v);
}

}  // namespace chsync::pipe
