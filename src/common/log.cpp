#include "common/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace chsync::log {
namespace {

std::atomic<Level> g_level{Level::kInfo};
std::mutex g_mutex;

const char* LevelName(Level level) {
  switch (level) {
    case Level::kDebug: return "DEBUG";
    case Level::kInfo: return "INFO ";
    case Level::kWarn: return "WARN ";
    case Level::kError: return "ERROR";
  }
  return "?";
}

}  // namespace

void SetLevel(Level level) {
  g_level.store(level);
}
Level GetLevel() {
  return g_level.load(std::memory_order_relaxed);
}

void Write(Level level, std::string_view message) {
  if (level < GetLevel()) return;
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
  std::lock_guard<std::mutex> lock(g_mutex);
  std::fprintf(stderr, "%s.%03dZ %s %.*s\n", stamp, static_cast<int>(ms % 1000), LevelName(level),
               static_cast<int>(message.size()), message.data());
}

}  // namespace chsync::log
