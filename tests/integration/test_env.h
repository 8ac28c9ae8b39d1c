#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace chsync::testing {

/// The value of a variable that the test command (scripts/test) sets. A test that needs a server
/// fails, never skips, when the variable is missing: run the tests through scripts/test.
inline std::string RequireEnv(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') {
    ADD_FAILURE() << name << " is not set: integration tests need the servers that scripts/test starts "
                  << "(run scripts/test, or scripts/test-servers start DIR and source DIR/env.sh)";
    return "";
  }
  return v;
}

/// What a finished child process left.
struct ProcessResult {
  int exit_code = -1;  ///< -1 when it did not exit normally
  std::string output;  ///< stdout and stderr, interleaved
};

/// Runs `argv` (argv[0] is a path) with `extra_env` ("NAME=value") added to the environment,
/// waits for it, and returns its exit code and combined output.
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::vector<std::string>& extra_env = {});

/// Path of the built chsync executable.
std::string ChsyncBinary();

/// A fresh empty directory under CHSYNC_TEST_TMPDIR (or /tmp), removed by nobody: the test
/// command removes its whole temporary folder.
std::string MakeTempDir(const std::string& prefix);

}  // namespace chsync::testing
