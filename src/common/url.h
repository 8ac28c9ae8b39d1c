#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace chsync {

/// A connection URL: `scheme://[user[:password]@]host[:port][/path][?query]`, or
/// `file:PATH` (scheme "file", everything after the colon in `path`).
/// User and password are percent-decoded; host may be an IPv6 literal in brackets.
struct Url {
  std::string scheme;  ///< lower-cased
  std::string user;
  std::string password;
  bool has_password = false;
  std::string host;
  uint16_t port = 0;  ///< 0 when the URL names none
  std::string path;   ///< "/db" for "…:3306/db"; the file path for file:
  std::string query;  ///< after '?', undecoded

  /// The URL with the password replaced by "***", for messages and logs.
  std::string Redacted() const;
  /// "host:port" (IPv6 in brackets), for messages.
  std::string Address() const;
};

/// Parses `text`. Errors are kUsage and never quote the password.
Result<Url> ParseUrl(std::string_view text);

/// The `name=value` pairs of a URL query ("a=1&b=x%20y"), percent-decoded, in order; a pair
/// without '=' has an empty value, empty pairs are skipped. Fails (kUsage) on a bad escape.
Result<std::vector<std::pair<std::string, std::string>>> ParseQueryParams(std::string_view query);

/// Decodes %XX escapes. Fails on a malformed escape.
Result<std::string> PercentDecode(std::string_view text);

}  // namespace chsync
