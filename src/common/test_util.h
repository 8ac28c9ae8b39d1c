#pragma once

// Helpers that unit tests share: a scratch directory, whole-file reads and writes, and running a
// command (the built chsync) to see its exit code, stdout and stderr. Header-only, for tests.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>

namespace chsync::test {

/// A fresh directory under /tmp named after `prefix`, removed with what is in it at the end of the
/// test.
class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "chsync-test") {
    std::string pattern = "/tmp/" + std::string(prefix) + ".XXXXXX";
    const char* dir = mkdtemp(pattern.data());
    EXPECT_NE(dir, nullptr) << "cannot make a directory like " << pattern;
    path_ = dir != nullptr ? dir : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  operator const std::string&() const { return path_; }  // NOLINT(google-explicit-constructor)

 private:
  std::string path_;
};

/// The whole file; "" when it cannot be read.
inline std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Replaces the file's content with `content`.
inline void WriteText(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

inline bool Exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

inline bool Has(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

/// What a command did.
struct CommandRun {
  int exit_code = -1;  ///< -1 when it did not exit normally (or could not start)
  std::string out;
  std::string err;
};

/// Runs shell command `command` with its stderr sent to the file `err_path`, and returns its exit
/// code, its stdout and that file's content.
inline CommandRun RunCommand(const std::string& command, const std::string& err_path) {
  CommandRun r;
  const std::string cmd = command + " 2>" + err_path;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = ReadText(err_path);
  return r;
}

}  // namespace chsync::test
