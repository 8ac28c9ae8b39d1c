#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include "clickhouse/connection.h"

namespace chsync::clickhouse::testing {

/// URL of the ClickHouse 18.16 test server (CHSYNC_TEST_CLICKHOUSE), or "" after recording a
/// failure: integration tests fail, never skip, when their server is missing.
inline std::string ServerUrl() {
  const char* url = std::getenv("CHSYNC_TEST_CLICKHOUSE");
  if (url == nullptr || *url == '\0') {
    ADD_FAILURE() << "CHSYNC_TEST_CLICKHOUSE is not set; run the tests through the test command "
                     "(scripts/test-servers) or `source` its env.sh";
    return "";
  }
  return url;
}

/// A file: URL for an embedded store private to this test process (one store per process, as
/// chDB allows), or "" after recording a failure when CHSYNC_CHDB_LIB is unset.
inline std::string EmbeddedUrl() {
  const char* lib = std::getenv("CHSYNC_CHDB_LIB");
  if (lib == nullptr || *lib == '\0') {
    ADD_FAILURE() << "CHSYNC_CHDB_LIB is not set; it must name libchdb.so (scripts/setup installs it)";
    return "";
  }
  static const std::string dir = [] {
    std::string tmpl = ::testing::TempDir() + "chsync-clickhouse-XXXXXX";
    char* made = mkdtemp(tmpl.data());
    return made != nullptr ? std::string(made) : std::string();
  }();
  if (dir.empty()) {
    ADD_FAILURE() << "cannot create a temporary store directory";
    return "";
  }
  return "file:" + dir + "/store";
}

/// A database name unique to this process and moment, for tests sharing one server.
inline std::string UniqueDatabase(const std::string& prefix) {
  auto ticks = std::chrono::steady_clock::now().time_since_epoch().count();
  return prefix + "_" + std::to_string(getpid()) + "_" + std::to_string(ticks % 1000000007);
}

/// Connects to `url` or records a failure and returns nullptr.
inline std::unique_ptr<Connection> ConnectOrFail(const std::string& url, const ConnectOptions& options = {}) {
  if (url.empty()) return nullptr;
  auto conn = Connect(url, options);
  if (!conn.ok()) {
    ADD_FAILURE() << "cannot connect: " << conn.error().message();
    return nullptr;
  }
  return std::move(conn).value();
}

}  // namespace chsync::clickhouse::testing
