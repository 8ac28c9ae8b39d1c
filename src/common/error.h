#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace chsync {

/// What kind of failure an Error is. The pipe decides to retry, skip or stop by kind,
/// never by parsing a message.
enum class ErrorKind {
  kUsage,        ///< the user called us wrongly (bad flag, bad URL): exit 2
  kConfig,       ///< the source or destination is set up in a way we cannot work with
  kCorrupt,      ///< untrusted bytes or text that do not parse (binlog event, packet, DDL)
  kUnsupported,  ///< valid input that this version does not handle
  kNetwork,      ///< could not reach a server, or the connection broke: retryable
  kAuth,         ///< a server refused our credentials
  kServer,       ///< a server answered with an error (server_code() holds its code)
  kIo,           ///< local file system
  kNotFound,     ///< a named object does not exist
  kInternal,     ///< a bug in chsync
};

std::string_view ErrorKindName(ErrorKind kind);

/// An error a user may see: what happened, and with context added on the way up, where.
class Error {
 public:
  Error(ErrorKind kind, std::string message, int server_code = 0)
      : kind_(kind), server_code_(server_code), message_(std::move(message)) {}

  ErrorKind kind() const { return kind_; }
  /// The server's own error number for kServer/kAuth errors (MySQL errno, ClickHouse code), else 0.
  int server_code() const { return server_code_; }
  const std::string& message() const { return message_; }

  /// Prepends "context: " to the message, e.g. "while decoding TABLE_MAP at binlog.000042:1234".
  Error& AddContext(std::string_view context);

 private:
  ErrorKind kind_;
  int server_code_;
  std::string message_;
};

}  // namespace chsync
