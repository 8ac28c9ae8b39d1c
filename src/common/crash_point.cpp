#include "common/crash_point.h"

#include <unistd.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

namespace chsync {
namespace {

struct Target {
  std::string point;  ///< empty: no crash point is set
  int nth = 1;
};

Target Parse(const char* env) {
  Target t;
  if (env == nullptr) return t;
  std::string_view text(env);
  const size_t hash = text.find('#');
  t.point = std::string(text.substr(0, hash));
  if (hash != std::string_view::npos) {
    std::string_view n = text.substr(hash + 1);
    int value = 0;
    auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), value);
    if (ec == std::errc() && end == n.data() + n.size() && value > 0) t.nth = value;
  }
  return t;
}

/// Whether this arrival at `point` is the one `target` names (one counter per kind of point).
bool Arrived(const Target& target, std::string_view point, std::atomic<int>& arrivals) {
  if (target.point.empty() || target.point != point) return false;
  return ++arrivals == target.nth;
}

}  // namespace

void CrashPoint(std::string_view point) {
  static const Target target = Parse(std::getenv("CHSYNC_CRASH_AT"));
  static std::atomic<int> arrivals{0};
  if (!Arrived(target, point, arrivals)) return;
  const std::string line = "crash point " + std::string(point) + "\n";
  (void)!write(STDERR_FILENO, line.data(), line.size());
  _exit(137);
}

void DelayPoint(std::string_view point) {
  static const Target target = Parse(std::getenv("CHSYNC_DELAY_AT"));
  static std::atomic<int> arrivals{0};
  if (!Arrived(target, point, arrivals)) return;
  int ms = 5000;
  if (const char* env = std::getenv("CHSYNC_DELAY_MS")) {
    std::string_view text(env);
    int value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && end == text.data() + text.size() && value >= 0) ms = value;
  }
  const std::string line = "delay point " + std::string(point) + "\n";
  (void)!write(STDERR_FILENO, line.data(), line.size());
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

bool FailPoint(std::string_view point) {
  static const Target target = Parse(std::getenv("CHSYNC_FAIL_AT"));
  static std::atomic<int> arrivals{0};
  if (!Arrived(target, point, arrivals)) return false;
  const std::string line = "fail point " + std::string(point) + "\n";
  (void)!write(STDERR_FILENO, line.data(), line.size());
  return true;
}

}  // namespace chsync
