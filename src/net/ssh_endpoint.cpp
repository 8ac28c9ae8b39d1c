#include "net/ssh_endpoint.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "common/url.h"

namespace chsync::net {
namespace {

std::string Encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0 || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    }
  }
  return out;
}

bool ValidHost(std::string_view host) {
  return !host.empty() && std::all_of(host.begin(), host.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.' || c == '_' || c == ':';
  });
}

bool ValidUser(std::string_view user) {
  return std::all_of(user.begin(), user.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.' || c == '_';
  });
}

}  // namespace

std::string SshEndpoint::Describe() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return (user.empty() ? "" : user + "@") + h + ":" + std::to_string(port);
}

std::string SshEndpoint::ToQuery() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  std::string out = "ssh=" + Encode(user.empty() ? "" : user) + (user.empty() ? "" : "%40") + Encode(h) +
                    ":" + std::to_string(port);
  if (!key_file.empty()) out += "&ssh-key=" + Encode(key_file);
  if (!known_hosts.empty()) out += "&ssh-known-hosts=" + Encode(known_hosts);
  if (!strict_host_key_checking) out += "&ssh-strict=no";
  return out;
}

Result<SshEndpoint> ParseSshTarget(std::string_view text, std::string_view what) {
  SshEndpoint e;
  auto bad = [&](std::string_view why) {
    return Error(
        ErrorKind::kUsage,
        std::string(what) + " must be [USER@]HOST[:PORT] (e.g. tunnel@bastion:22): " + std::string(why));
  };
  const size_t at = text.rfind('@');
  if (at != std::string_view::npos) {
    e.user.assign(text.substr(0, at));
    text.remove_prefix(at + 1);
    if (e.user.empty() || !ValidUser(e.user)) return bad("a user name is letters, digits, '-', '.' and '_'");
  }
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return bad("unclosed '[' in the host");
    e.host.assign(text.substr(1, close - 1));
    std::string_view after = text.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("unexpected text after ']'");
      port_text = after.substr(1);
      if (port_text.empty()) return bad("no port after ':'");
    }
  } else {
    const size_t colon = text.find(':');
    e.host.assign(text.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = text.substr(colon + 1);
      if (port_text.empty()) return bad("no port after ':'");
    }
    if (e.host.find(':') != std::string::npos) return bad("write an IPv6 host in brackets");
  }
  if (!ValidHost(e.host))
    return bad("no host, or a host name with characters other than letters, digits, '-', '.'");
  if (!port_text.empty()) {
    unsigned value = 0;
    auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
    if (ec != std::errc() || ptr != port_text.data() + port_text.size() || value == 0 || value > 65535) {
      return bad("a port is a number from 1 to 65535");
    }
    e.port = static_cast<uint16_t>(value);
  }
  return e;
}

Result<std::optional<SshEndpoint>> TakeSshParams(std::vector<std::pair<std::string, std::string>>& params,
                                                 std::string_view what) {
  std::optional<std::string> target, key, known, strict;
  std::vector<std::pair<std::string, std::string>> rest;
  for (auto& [name, value] : params) {
    std::optional<std::string>* slot = name == "ssh"               ? &target
                                       : name == "ssh-key"         ? &key
                                       : name == "ssh-known-hosts" ? &known
                                       : name == "ssh-strict"      ? &strict
                                                                   : nullptr;
    if (slot == nullptr) {
      rest.emplace_back(std::move(name), std::move(value));
      continue;
    }
    if (slot->has_value()) {
      return Error(ErrorKind::kUsage, std::string(what) + " gives " + name + "= twice: keep one");
    }
    *slot = std::move(value);
  }
  params = std::move(rest);
  if (!target) {
    if (key || known || strict) {
      return Error(ErrorKind::kUsage,
                   std::string(what) +
                       " has ssh-key, ssh-known-hosts or ssh-strict but no ssh=USER@BASTION:PORT: "
                       "add ssh= to go through a tunnel, or take them out");
    }
    return std::optional<SshEndpoint>();
  }
  CHSYNC_ASSIGN_OR_RETURN(SshEndpoint e, ParseSshTarget(*target, "ssh= in the " + std::string(what)));
  if (key) {
    if (key->empty())
      return Error(ErrorKind::kUsage, "ssh-key= in the " + std::string(what) + " names no file");
    e.key_file = *key;
  }
  if (known) {
    if (known->empty()) {
      return Error(ErrorKind::kUsage, "ssh-known-hosts= in the " + std::string(what) + " names no file");
    }
    e.known_hosts = *known;
  }
  if (strict) {
    std::string v = *strict;
    std::transform(v.begin(), v.end(), v.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (v == "yes" || v == "1" || v == "true") {
      e.strict_host_key_checking = true;
    } else if (v == "no" || v == "0" || v == "false") {
      e.strict_host_key_checking = false;
    } else {
      return Error(ErrorKind::kUsage,
                   "ssh-strict= in the " + std::string(what) + " must be yes or no, not '" + *strict + "'");
    }
  }
  return std::optional<SshEndpoint>(std::move(e));
}

std::string WithSshParams(std::string_view url_list, const SshEndpoint& endpoint) {
  std::string out;
  for (const std::string& url : SplitUrlList(url_list)) {
    if (!out.empty()) out += ", ";
    std::string item = url;
    const bool file =
        item.size() >= 5 && std::equal(item.begin(), item.begin() + 5, "file:", [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == b;
        });
    const bool has_own = item.find("?ssh=") != std::string::npos || item.find("&ssh=") != std::string::npos;
    const size_t at = item.rfind('@');
    const size_t q = item.find('?', at == std::string::npos ? 0 : at);
    if (!file && !has_own) {
      item += q == std::string::npos ? "?" : (q + 1 == item.size() ? "" : "&");
      item += endpoint.ToQuery();
    }
    out += item;
  }
  return out;
}

}  // namespace chsync::net
