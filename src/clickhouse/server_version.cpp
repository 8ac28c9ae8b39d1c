#include "clickhouse/server_version.h"

#include <charconv>

namespace chsync::clickhouse {

std::string ServerVersion::ToString() const {
  std::string s = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  if (build != 0) s += "." + std::to_string(build);
  return s;
}

Result<ServerVersion> ParseServerVersion(std::string_view text) {
  int parts[4] = {0, 0, 0, 0};
  size_t pos = 0;
  int count = 0;
  while (count < 4) {
    const char* begin = text.data() + pos;
    const char* end = text.data() + text.size();
    int value = 0;
    auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ec != std::errc() || value < 0) break;
    parts[count++] = value;
    pos = static_cast<size_t>(ptr - text.data());
    if (pos >= text.size() || text[pos] != '.') break;
    ++pos;
  }
  if (count < 2) {
    return Error(ErrorKind::kServer, "cannot read a ClickHouse version from '" +
                                         std::string(text.substr(0, 64)) + "' (expected e.g. 23.8.1)");
  }
  return ServerVersion{parts[0], parts[1], parts[2], parts[3]};
}

}  // namespace chsync::clickhouse
