#include "http/listen_address.h"

#include <arpa/inet.h>

#include <cctype>
#include <charconv>

namespace chsync::http {
namespace {

Error BadAddress(std::string_view text, std::string_view why) {
  std::string message = "bad listen address \"";
  message += text;
  message += "\": ";
  message += why;
  message += " (expected HOST:PORT, e.g. 127.0.0.1:9187, [::1]:9187, 0.0.0.0:9187 or :9187)";
  return Error(ErrorKind::kUsage, std::move(message));
}

bool IsIpv4(const std::string& host) {
  in_addr addr{};
  return inet_pton(AF_INET, host.c_str(), &addr) == 1;
}

bool IsIpv6(const std::string& host) {
  in6_addr addr{};
  return inet_pton(AF_INET6, host.c_str(), &addr) == 1;
}

/// A DNS name: labels of letters, digits and '-', separated by dots.
bool IsHostName(std::string_view host) {
  if (host.empty() || host.size() > 253 || host.front() == '.' || host.back() == '.') return false;
  char previous = '.';
  for (char c : host) {
    bool alnum = std::isalnum(static_cast<unsigned char>(c)) != 0;
    if (!alnum && c != '-' && c != '.') return false;
    if (c == '.' && previous == '.') return false;
    previous = c;
  }
  return true;
}

bool AllDigitsAndDots(std::string_view text) {
  for (char c : text) {
    if (c != '.' && (c < '0' || c > '9')) return false;
  }
  return true;
}

}  // namespace

std::string ListenAddress::ToString() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return h + ":" + std::to_string(port);
}

bool ListenAddress::IsLoopback() const {
  if (host == "localhost" || host == "::1") return true;
  in_addr addr{};
  if (inet_pton(AF_INET, host.c_str(), &addr) != 1) return false;
  return (ntohl(addr.s_addr) >> 24) == 127;
}

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  if (text.empty()) return BadAddress(text, "it is empty");
  if (text.find("://") != std::string_view::npos) return BadAddress(text, "give HOST:PORT, not a URL");
  std::string_view host;
  std::string_view port_text;
  if (text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return BadAddress(text, "the '[' of an IPv6 address is not closed");
    host = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (rest.empty() || rest.front() != ':') return BadAddress(text, "a port must follow the ']'");
    port_text = rest.substr(1);
    if (!IsIpv6(std::string(host))) return BadAddress(text, "the text in brackets is not an IPv6 address");
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return BadAddress(text, "no port");
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return BadAddress(text, "an IPv6 address must be written in brackets, e.g. [::1]:9187");
    }
    if (!host.empty()) {
      std::string h(host);
      if (AllDigitsAndDots(host) ? !IsIpv4(h) : !IsHostName(host)) {
        return BadAddress(text, "the host is neither an IP address nor a host name");
      }
    }
  }
  if (port_text.empty()) return BadAddress(text, "no port");
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port > 65535 ||
      port_text.size() > 5) {
    return BadAddress(text, "the port is not a number from 0 to 65535");
  }
  ListenAddress address;
  address.host = host.empty() ? std::string("127.0.0.1") : std::string(host);
  address.port = static_cast<uint16_t>(port);
  return address;
}

}  // namespace chsync::http
