#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace chsync::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

/// Messages below `level` are dropped. Thread-safe.
void SetLevel(Level level);
Level GetLevel();

/// How Write lays out a line. kText: "2026-11-29T17:00:00.123Z INFO  message", for people.
/// kJson: one JSON object per line with the keys in this order,
/// {"ts":"2026-11-29T17:00:00.123Z","level":"info","msg":"message"}, level one of debug, info,
/// warn, error, the message escaped by JsonEscape (common/json_text.h), so that any bytes in it
/// (quotes, newlines, invalid UTF-8) still make one valid object on one line. Thread-safe.
enum class Format { kText, kJson };
void SetFormat(Format format);
Format GetFormat();

/// Writes one line in the current format to stderr (the descriptor), in one write under a lock
/// (lines of several threads never interleave). Messages carry no secrets: the message goes
/// through Redact (common/redact.h) before it is laid out. Thread-safe.
void Write(Level level, std::string_view message);

/// The line Write writes for `message` at `unix_ms` (milliseconds since 1970, UTC), without the
/// newline: the message redacted, then laid out. For tests and for writers that need the same
/// layout elsewhere.
std::string FormatLine(Format format, Level level, int64_t unix_ms, std::string_view message);

template <typename... Args>
void Debug(fmt::format_string<Args...> f, Args&&... args) {
  if (GetLevel() <= Level::kDebug) Write(Level::kDebug, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void Info(fmt::format_string<Args...> f, Args&&... args) {
  if (GetLevel() <= Level::kInfo) Write(Level::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void Warn(fmt::format_string<Args...> f, Args&&... args) {
  if (GetLevel() <= Level::kWarn) Write(Level::kWarn, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void Err(fmt::format_string<Args...> f, Args&&... args) {
  Write(Level::kError, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace chsync::log
