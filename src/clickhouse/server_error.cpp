#include "clickhouse/server_error.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace chsync::clickhouse {
namespace {

constexpr size_t kMaxMessage = 2000;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

void RemovePrefix(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) == prefix) s.remove_prefix(prefix.size());
}

}  // namespace

int ParseExceptionCode(std::string_view text) {
  size_t at = text.find("Code: ");
  if (at == std::string_view::npos) return 0;
  std::string_view digits = text.substr(at + 6);
  int value = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || value <= 0) return 0;
  return value;
}

std::string CleanExceptionMessage(std::string_view text) {
  std::string_view s = Trim(text);
  if (s.substr(0, 6) == "Code: ") {
    size_t i = 6;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i < s.size() && (s[i] == '.' || s[i] == ',')) ++i;
    s = Trim(s.substr(i));
  }
  RemovePrefix(s, "e.displayText() = ");
  constexpr std::string_view kWhat = ", e.what() = DB::Exception";
  if (s.size() >= kWhat.size() && s.substr(s.size() - kWhat.size()) == kWhat) {
    s.remove_suffix(kWhat.size());
  }
  size_t version = s.rfind(" (version ");
  if (version != std::string_view::npos && s.back() == ')') s = s.substr(0, version);
  s = Trim(s);
  std::string out(s.substr(0, kMaxMessage));
  if (s.size() > kMaxMessage) out += "…";
  return out;
}

ErrorKind KindForCode(int code) {
  switch (code) {
    case code::kUnknownUser:
    case code::kWrongPassword:
    case code::kRequiredPassword:
    case code::kAuthenticationFailed: return ErrorKind::kAuth;
    default: return ErrorKind::kServer;
  }
}

Error ExceptionError(std::string_view where, int code, std::string_view text) {
  if (code <= 0) code = ParseExceptionCode(text);
  std::string message = CleanExceptionMessage(text);
  if (message.empty()) message = "(no message)";
  ErrorKind kind = KindForCode(code);
  std::string full = "ClickHouse at " + std::string(where) +
                     (kind == ErrorKind::kAuth ? " refused the credentials: " : " returned an error: ") +
                     message;
  if (code > 0) full += " (code " + std::to_string(code) + ")";
  if (kind == ErrorKind::kAuth) {
    full += "; check the user and password of --dest (CHSYNC_DEST_PASSWORD)";
  }
  return Error(kind, std::move(full), code);
}

bool IsRetryable(const Error& error) {
  if (error.kind() == ErrorKind::kNetwork) return true;
  if (error.kind() != ErrorKind::kServer) return false;
  switch (error.server_code()) {
    case code::kTimeoutExceeded:
    case code::kTooManySimultaneousQueries:
    case code::kSocketTimeout:
    case code::kNetworkError:
    case code::kMemoryLimitExceeded:
    case code::kTableIsReadOnly:
    case code::kTooManyParts:
    case code::kUnknownStatusOfInsert:
    // A cluster: a shard unreachable (279), a ZooKeeper session lost or ZooKeeper down (225, 999),
    // not enough live replicas for insert_quorum yet (285, 286).
    case 225:
    case 279:
    case 285:
    case 286:
    case 999: return true;
    default: return false;
  }
}

}  // namespace chsync::clickhouse
