#include "pipe/row_version.h"

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
