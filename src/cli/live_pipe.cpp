#include "cli/live_pipe.h"

#include <signal.h>

#include <cerrno>
#include <fstream>

namespace chsync::cli {

std::string DiscoveryFilePath(const std::string& store_path) {
  std::string path = store_path;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path + ".chsync-http";
}

std::optional<std::string> FindLivePipe(const std::string& store_path) {
  std::ifstream in(DiscoveryFilePath(store_path));
  std::string url;
  long pid = 0;
  if (!(in >> url >> pid) || pid <= 0) return std::nullopt;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return std::nullopt;
  if (url.rfind("http://", 0) != 0) return std::nullopt;
  return url;
}

}  // namespace chsync::cli
