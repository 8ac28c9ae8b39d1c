#pragma once

#include <compare>
#include <string>
#include <string_view>

#include "common/result.h"

namespace chsync::clickhouse {

/// A ClickHouse release number as `SELECT version()` prints it: "18.16.1", "26.7.3.1".
/// Missing parts are 0, so "23.2" compares equal to "23.2.0.0".
struct ServerVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  int build = 0;

  /// "major.minor.patch[.build]" (build omitted when 0).
  std::string ToString() const;

  auto operator<=>(const ServerVersion&) const = default;  // NOLINT(modernize-use-nullptr): clang-tidy 14 bug
};

/// Parses the text of `SELECT version()`; trailing text after the numbers ("-stable", " (official
/// build)", a newline) is ignored. Fails (kServer) when the text does not start with "N.N".
Result<ServerVersion> ParseServerVersion(std::string_view text);

}  // namespace chsync::clickhouse
