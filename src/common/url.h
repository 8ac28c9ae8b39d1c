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
/// The user and password end at the URL's last '@', so a password may hold '@', ':', '/', '?',
/// ',' and any other byte as it is (or percent-encoded); an '@' after the host (in the path or
/// the query) must be written %40.
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

/// Parses `text`. Errors are kUsage and never quote the password, nor any text before the last
/// '@'. A password the URL holds is registered as a known secret (common/redact.h), as written and
/// decoded, so that no message shows it. Text holding several URLs ("mysql://a,mysql://b") is
/// refused: split lists with SplitUrlList first.
Result<Url> ParseUrl(std::string_view text);

/// Splits a comma-separated list of URLs ("mysql://a:3306, mysql://b:3306"). A comma splits where
/// the next URL begins (a `scheme://` or `file:` follows it, spaces allowed between) or where no
/// '@' follows it before the next "://"; a comma followed by an '@' of the same URL is part of a
/// user and password and stays in its URL. Items are trimmed of spaces and tabs; empty ones
/// (",,", a trailing comma) are dropped.
std::vector<std::string> SplitUrlList(std::string_view text);

/// The `name=value` pairs of a URL query ("a=1&b=x%20y"), percent-decoded, in order; a pair
/// without '=' has an empty value, empty pairs are skipped. Fails (kUsage) on a bad escape.
Result<std::vector<std::pair<std::string, std::string>>> ParseQueryParams(std::string_view query);

/// Decodes %XX escapes. Fails on a malformed escape.
Result<std::string> PercentDecode(std::string_view text);

}  // namespace chsync
