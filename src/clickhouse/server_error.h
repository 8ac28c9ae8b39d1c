#pragma once

#include <string>
#include <string_view>

#include "common/error.h"

namespace chsync::clickhouse {

/// ClickHouse error codes that chsync treats specially (numbers from ClickHouse's ErrorCodes.cpp).
namespace code {
inline constexpr int kDirectoryAlreadyExists = 84;
inline constexpr int kTimeoutExceeded = 159;
inline constexpr int kUnknownUser = 192;
inline constexpr int kWrongPassword = 193;
inline constexpr int kRequiredPassword = 194;
inline constexpr int kTooManySimultaneousQueries = 202;
inline constexpr int kSocketTimeout = 209;
inline constexpr int kNetworkError = 210;
inline constexpr int kMemoryLimitExceeded = 241;
inline constexpr int kTableIsReadOnly = 242;
inline constexpr int kTooManyParts = 252;
inline constexpr int kUnknownStatusOfInsert = 319;
inline constexpr int kAuthenticationFailed = 516;
}  // namespace code

/// The error code of a ClickHouse exception text, or 0 when it carries none. Understands both
/// "Code: 62. DB::Exception: …" (19.x and later) and 18.16's
/// "Code: 62, e.displayText() = DB::Exception: …, e.what() = DB::Exception".
int ParseExceptionCode(std::string_view text);

/// The human part of a ClickHouse exception text: "DB::Exception: Syntax error: …" with the
/// "Code: N" prefix, 18.16's "e.displayText() = " / ", e.what() = DB::Exception" wrappers, the
/// trailing "(version …)" and surrounding whitespace removed. Long texts are cut at 2000 bytes.
std::string CleanExceptionMessage(std::string_view text);

/// kAuth for authentication failures (codes 192, 193, 194, 516), else kServer.
ErrorKind KindForCode(int code);

/// An Error for an exception the server (or the embedded engine) returned: kind by code, the
/// server's code, and a message "ClickHouse at <where> refused the statement: <message>
/// (code N)". `code` is the exception-code header when there was one, else 0 (then it is parsed
/// from `text`).
Error ExceptionError(std::string_view where, int code, std::string_view text);

/// True when retrying the same request later may succeed: transport failures, and server codes
/// for overload or transient states (too many parts, memory limit, timeouts, read-only replica, a
/// shard or ZooKeeper unreachable, too few replicas for insert_quorum).
/// Syntax, type and authentication errors are not retryable.
bool IsRetryable(const Error& error);

}  // namespace chsync::clickhouse
