#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace chsync::http {

/// Where the HTTP server listens: an IPv4 or IPv6 literal (or a host name) and a port.
struct ListenAddress {
  std::string host = "127.0.0.1";  ///< IPv6 without brackets ("::1")
  uint16_t port = 0;               ///< 0: the system picks a free port

  /// "127.0.0.1:9187" or "[::1]:9187", for messages and logs.
  std::string ToString() const;
  /// True for 127.0.0.0/8, ::1 and "localhost": nothing outside this machine can connect.
  bool IsLoopback() const;
};

/// Parses "HOST:PORT". Accepted forms: "127.0.0.1:9187", "[::1]:9187", "0.0.0.0:9187",
/// "localhost:9187", and ":9187" (no host: loopback, 127.0.0.1, so that nothing is exposed by
/// accident). The port is 0–65535, 0 picking a free one. Errors are kUsage and quote the text
/// with an example of the expected form; an IPv6 literal must be in brackets.
Result<ListenAddress> ParseListenAddress(std::string_view text);

}  // namespace chsync::http
