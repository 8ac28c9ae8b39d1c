#include "common/url.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "common/redact.h"

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
  return Redact(s);  // a password=… query parameter, a known secret in the path
}

std::string Url::Address() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  if (port != 0) h += ":" + std::to_string(port);
  return h;
}

namespace {

bool IsSchemeChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '-' || c == '.';
}

/// Whether `text` begins with another URL: `scheme://` or `file:`.
bool StartsUrl(std::string_view text) {
  if (text.empty() || std::isalpha(static_cast<unsigned char>(text.front())) == 0) return false;
  size_t i = 1;
  while (i < text.size() && IsSchemeChar(text[i])) ++i;
  if (i >= text.size() || text[i] != ':') return false;
  std::string_view scheme = text.substr(0, i);
  if (text.substr(i + 1, 2) == "//") return true;
  return scheme.size() == 4 && std::tolower(static_cast<unsigned char>(scheme[0])) == 'f' &&
         std::tolower(static_cast<unsigned char>(scheme[1])) == 'i' &&
         std::tolower(static_cast<unsigned char>(scheme[2])) == 'l' &&
         std::tolower(static_cast<unsigned char>(scheme[3])) == 'e';
}

/// Whether `rest` (what follows a URL's "scheme://") holds the start of another URL after a comma.
bool HoldsAnotherUrl(std::string_view rest) {
  for (size_t comma = rest.find(','); comma != std::string_view::npos; comma = rest.find(',', comma + 1)) {
    std::string_view after = rest.substr(comma + 1);
    while (!after.empty() && (after.front() == ' ' || after.front() == '\t')) after.remove_prefix(1);
    if (StartsUrl(after)) return true;
  }
  return false;
}

/// A host name or IPv4 address: letters, digits, '-', '.', '_'.
bool ValidHostName(std::string_view host) {
  return std::all_of(host.begin(), host.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.' || c == '_';
  });
}

}  // namespace

std::vector<std::string> SplitUrlList(std::string_view text) {
  std::vector<std::string> out;
  auto add = [&out](std::string_view item) {
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
  };
  size_t start = 0;
  for (size_t comma = text.find(','); comma != std::string_view::npos; comma = text.find(',', comma + 1)) {
    std::string_view after = text.substr(comma + 1);
    while (!after.empty() && (after.front() == ' ' || after.front() == '\t' || after.front() == ',')) {
      after.remove_prefix(1);
    }
    if (!after.empty() && !StartsUrl(after)) {
      // An '@' before the next URL makes this comma part of a user and password.
      std::string_view up_to_next = text.substr(comma + 1);
      size_t next = up_to_next.find("://");
      if (up_to_next.substr(0, next).find('@') != std::string_view::npos) continue;
    }
    add(text.substr(start, comma - start));
    start = comma + 1;
  }
  add(text.substr(start));
  return out;
}

Result<Url> ParseUrl(std::string_view text) {
  Url url;
  size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    // The text is not quoted: without a scheme it may be anything, a password too.
    return Error(ErrorKind::kUsage, "not a URL: expected scheme://USER:PASSWORD@HOST:PORT or file:PATH");
  }
  url.scheme.assign(text.substr(0, colon));
  if (!std::all_of(url.scheme.begin(), url.scheme.end(), IsSchemeChar)) {
    return Error(ErrorKind::kUsage, "not a URL: expected scheme://USER:PASSWORD@HOST:PORT or file:PATH");
  }
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
  if (HoldsAnotherUrl(rest)) {
    return Error(ErrorKind::kUsage, "several comma-separated URLs where one is expected (" + url.scheme +
                                        "://…,…): give one URL here");
  }

  // The user and password end at the last '@', so that a password needs no escaping; an '@' in an
  // ssh= parameter (?ssh=user@bastion:22, net/ssh_endpoint.h) is the bastion's user.
  size_t ssh = rest.rfind("?ssh=");
  ssh = std::min(ssh, rest.rfind("&ssh="));
  size_t at = rest.substr(0, ssh).rfind('@');
  if (at != std::string_view::npos) {
    std::string_view userinfo = rest.substr(0, at);
    rest = rest.substr(at + 1);
    size_t pc = userinfo.find(':');
    if (pc != std::string_view::npos) RegisterSecret(userinfo.substr(pc + 1));  // as written
    auto user = PercentDecode(userinfo.substr(0, pc));
    if (!user.ok()) return Error(ErrorKind::kUsage, "malformed percent-escape in the user of a URL");
    url.user = std::move(*user);
    if (pc != std::string_view::npos) {
      url.has_password = true;
      auto password = PercentDecode(userinfo.substr(pc + 1));
      if (!password.ok())
        return Error(ErrorKind::kUsage, "malformed percent-escape in the password of a URL");
      url.password = std::move(*password);
      RegisterSecret(url.password);
    }
  }
  // What errors of a malformed URL show of it: the scheme and the user, nothing after them. The
  // text that follows may be the end of a password whose "@host" is missing ("u:p@w" without a
  // host reads as password "p", host "w"; without any '@', "u:p" reads as host "u", port "p").
  const std::string shown =
      url.scheme + "://" +
      (at != std::string_view::npos ? url.user + (url.has_password ? ":***" : "") + "@…" : "…");
  size_t end_authority = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, end_authority);
  std::string_view tail = end_authority == std::string_view::npos ? "" : rest.substr(end_authority);
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos)
      return Error(ErrorKind::kUsage, "unclosed '[' in the host of " + shown);
    url.host.assign(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        return Error(ErrorKind::kUsage, "unexpected text after ']' in the host of " + shown);
      }
      port_text = after.substr(1);
    }
  } else {
    size_t pc = authority.rfind(':');
    url.host.assign(authority.substr(0, pc));
    if (pc != std::string_view::npos) port_text = authority.substr(pc + 1);
    if (!ValidHostName(url.host)) {
      std::string hint = url.host.find(',') != std::string::npos
                             ? "; several servers are given with their scheme each: " + url.scheme + "://…," +
                                   url.scheme + "://…"
                             : "";
      return Error(ErrorKind::kUsage, "invalid host name in " + shown +
                                          " (letters, digits, '-', '.' and '_', or [IPv6])" + hint);
    }
  }
  if (url.host.empty()) return Error(ErrorKind::kUsage, "URL without a host: " + shown);
  if (!port_text.empty()) {
    unsigned value = 0;
    auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
    if (ec != std::errc() || ptr != port_text.data() + port_text.size() || value == 0 || value > 65535) {
      return Error(ErrorKind::kUsage, "invalid port in " + shown + ": a port is a number from 1 to 65535");
    }
    url.port = static_cast<uint16_t>(value);
  }
  size_t q = tail.find('?');
  url.path.assign(tail.substr(0, q));
  if (q != std::string_view::npos) url.query.assign(tail.substr(q + 1));
  return url;
}

}  // namespace chsync
