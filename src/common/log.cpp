#include "common/log.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

#include "common/json_text.h"
#include "common/redact.h"

namespace chsync::log {
namespace {

std::atomic<Level> g_level{Level::kInfo};
std::atomic<Format> g_format{Format::kText};
std::mutex g_mutex;

/// The text format's level column, padded to five characters.
const char* TextLevelName(Level level) {
  switch (level) {
    case Level::kDebug: return "DEBUG";
    case Level::kInfo: return "INFO ";
    case Level::kWarn: return "WARN ";
    case Level::kError: return "ERROR";
  }
  return "?";
}

const char* JsonLevelName(Level level) {
  switch (level) {
    case Level::kDebug: return "debug";
    case Level::kInfo: return "info";
    case Level::kWarn: return "warn";
    case Level::kError: return "error";
  }
  return "?";
}

/// "2026-11-29T17:00:00.123Z"; times before 1970 are not expected (the clock of a running host).
std::string Timestamp(int64_t unix_ms) {
  int64_t secs = unix_ms / 1000;
  int64_t millis = unix_ms % 1000;
  if (millis < 0) {
    millis += 1000;
    secs -= 1;
  }
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  size_t n = std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%.*s.%03dZ", static_cast<int>(n), stamp, static_cast<int>(millis));
  return out;
}

}  // namespace

void SetLevel(Level level) {
  g_level.store(level);
}
Level GetLevel() {
  return g_level.load(std::memory_order_relaxed);
}

void SetFormat(Format format) {
  g_format.store(format);
}
Format GetFormat() {
  return g_format.load(std::memory_order_relaxed);
}

std::string FormatLine(Format format, Level level, int64_t unix_ms, std::string_view raw_message) {
  const std::string message = Redact(raw_message);
  std::string line;
  if (format == Format::kJson) {
    line.reserve(message.size() + 64);
    line += R"({"ts":")";
    line += Timestamp(unix_ms);
    line += R"(","level":")";
    line += JsonLevelName(level);
    line += R"(","msg":")";
    line += JsonEscape(message);
    line += "\"}";
    return line;
  }
  line.reserve(message.size() + 32);
  line += Timestamp(unix_ms);
  line += ' ';
  line += TextLevelName(level);
  line += ' ';
  line += message;
  return line;
}

void Write(Level level, std::string_view message) {
  if (level < GetLevel()) return;
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::string line = FormatLine(GetFormat(), level, static_cast<int64_t>(ms), message);
  line += '\n';
  std::lock_guard<std::mutex> lock(g_mutex);
  // Straight to the descriptor: the line is redacted already, and the CLI's stderr stream, which
  // redacts what passes through it (cli/main.cpp), must not touch a JSON line's structure.
  std::fflush(stderr);
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // nowhere to report it
    done += static_cast<size_t>(n);
  }
}

}  // namespace chsync::log
