#include "common/url.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace chsync {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

Result<std::string> PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    if (text.size() - i < 3) {
      return Error(ErrorKind::kUsage, "malformed percent-escape at the end of a URL part");
    }
    int hi = HexValue(text[i + 1]);
    int lo = HexValue(text[i + 2]);
    if (hi < 0 || lo < 0) return Error(ErrorKind::kUsage, "malformed percent-escape in a URL part");
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> ParseQueryParams(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> params;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    CHSYNC_ASSIGN_OR_RETURN(std::string name, PercentDecode(pair.substr(0, eq)));
    std::string value;
    if (eq != std::string_view::npos) {
      CHSYNC_ASSIGN_OR_RETURN(value, PercentDecode(pair.substr(eq + 1)));
    }
    params.emplace_back(std::move(name), std::move(value));
  }
  return params;
}

std::string Url::Redacted() const {
  if (scheme == "file") return "file:" + path;
  std::string s = scheme + "://";
  if (!user.empty() || has_password) {
    s += user;
    if (has_password) s += ":***";
    s += "@";
  }
  s += Address();
  s += path;
  if (!query.empty()) s += "?" + query;
  return s;
}

std::string Url::Address() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  if (port != 0) h += ":" + std::to_string(port);
  return h;
}

Result<Url> ParseUrl(std::string_view text) {
  Url url;
  size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    return Error(ErrorKind::kUsage,
                 "not a URL (expected scheme://…): '" + std::string(text.substr(0, text.find('@'))) + "'");
  }
  url.scheme.assign(text.substr(0, colon));
  std::transform(url.scheme.begin(), url.scheme.end(), url.scheme.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string_view rest = text.substr(colon + 1);
  if (url.scheme == "file") {
    if (rest.substr(0, 2) == "//") rest.remove_prefix(2);
    if (rest.empty()) return Error(ErrorKind::kUsage, "file: URL without a path");
    url.path.assign(rest);
    return url;
  }
  if (rest.substr(0, 2) != "//") {
    return Error(ErrorKind::kUsage, "URL must start with " + url.scheme + "://");
  }
  rest.remove_prefix(2);
  size_t end_authority = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, end_authority);
  std::string_view tail = end_authority == std::string_view::npos ? "" : rest.substr(end_authority);

  // The password may contain '@' when not percent-encoded, so split at the last '@'.
  size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    authority = authority.substr(at + 1);
    size_t pc = userinfo.find(':');
    CHSYNC_ASSIGN_OR_RETURN(url.user, PercentDecode(userinfo.substr(0, pc)));
    if (pc != std::string_view::npos) {
      url.has_password = true;
      CHSYNC_ASSIGN_OR_RETURN(url.password, PercentDecode(userinfo.substr(pc + 1)));
    }
  }
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return Error(ErrorKind::kUsage, "unclosed '[' in URL host");
    url.host.assign(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Error(ErrorKind::kUsage, "unexpected text after ']' in URL host");
      port_text = after.substr(1);
    }
  } else {
    size_t pc = authority.rfind(':');
    url.host.assign(authority.substr(0, pc));
    if (pc != std::string_view::npos) port_text = authority.substr(pc + 1);
  }
  if (url.host.empty()) return Error(ErrorKind::kUsage, "URL without a host: " + url.Redacted());
  if (!port_text.empty()) {
    unsigned value = 0;
    auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
    if (ec != std::errc() || ptr != port_text.data() + port_text.size() || value == 0 || value > 65535) {
      return Error(ErrorKind::kUsage, "invalid port '" + std::string(port_text) + "' in " + url.Redacted());
    }
    url.port = static_cast<uint16_t>(value);
  }
  size_t q = tail.find('?');
  url.path.assign(tail.substr(0, q));
  if (q != std::string_view::npos) url.query.assign(tail.substr(q + 1));
  return url;
}

}  // namespace chsync
