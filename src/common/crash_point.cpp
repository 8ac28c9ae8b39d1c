#include "common/crash_point.h"

#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cstdlib>
#include <string>

namespace chsync {
namespace {

struct Target {
  std::string point;  ///< empty: no crash point is set
  int nth = 1;
};

const Target& Configured() {
  static const Target target = [] {
    Target t;
    const char* env = std::getenv("CHSYNC_CRASH_AT");
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
  }();
  return target;
}

}  // namespace

void CrashPoint(std::string_view point) {
  const Target& target = Configured();
  if (target.point.empty() || target.point != point) return;
  static std::atomic<int> arrivals{0};
  if (++arrivals < target.nth) return;
  const std::string line = "crash point " + std::string(point) + "\n";
  (void)!write(STDERR_FILENO, line.data(), line.size());
  _exit(137);
}

}  // namespace chsync
