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

/// A loopback TCP port that was free a moment ago (the kernel's pick), or -1.
int FreeLoopbackPort();

/// The whole content of the file at `path` ("" when it cannot be read).
std::string ReadFile(const std::string& path);
/// The last `max_bytes` of `text` (after "…" when cut): for failure messages.
std::string Tail(const std::string& text, size_t max_bytes = 6000);

/// A fresh empty directory under CHSYNC_TEST_TMPDIR (or /tmp), removed by nobody: the test
/// command removes its whole temporary folder.
std::string MakeTempDir(const std::string& prefix);

/// The second ClickHouse server (`clickhouse-fault` of scripts/test-servers), which tests may kill
/// and start again: its URL is CHSYNC_TEST_CLICKHOUSE_FAULT, its start script
/// CHSYNC_TEST_CLICKHOUSE_FAULT_START and its process id file CHSYNC_TEST_CLICKHOUSE_FAULT_PIDFILE.
/// Tests that use it must not run at the same time (ctest RESOURCE_LOCK chsync_clickhouse_fault).
///
/// Kills it with SIGKILL and waits (up to 30 s) until the process is gone. True when it is gone
/// (also when it was not running); records a failure otherwise.
bool KillFaultClickHouse();
/// Starts it again and waits (up to 90 s) until `SELECT 1` answers through `chsync query`. True
/// when it answers (also when it was already running); records a failure otherwise.
bool StartFaultClickHouse();
/// True when the fault ClickHouse answers `SELECT 1` now.
bool FaultClickHouseAnswers();
/// The fault ClickHouse's own folder of tables (its `path`): `data/DB/TABLE/` holds a table's parts
/// and `metadata/DB/TABLE.sql` its definition. For tests that leave it as a crash of its own would.
std::string FaultClickHousePath();
/// For a failure message when it does not answer: its process id, whether that process lives,
/// and the last lines of its error log (stack traces left out).
std::string FaultClickHouseState();

/// The same for any server of scripts/test-servers with a start script, named by its environment
/// prefix: "CHSYNC_TEST_CLICKHOUSE_NODE1" (…_START, …_PIDFILE, and the URL in the variable
/// itself) or "CHSYNC_TEST_ZOOKEEPER" (its start script waits until it serves). Tests that kill
/// cluster servers hold ctest's RESOURCE_LOCK chsync_cluster, as every test of the cluster does.
bool KillServer(const std::string& server);
bool StartServer(const std::string& server);

}  // namespace chsync::testing
