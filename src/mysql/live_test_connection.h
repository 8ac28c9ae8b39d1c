#pragma once

// For the live tests of this folder: a connection to a test server of scripts/test-servers.

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>

#include "common/url.h"
#include "mysql/connection.h"

namespace chsync::mysql {

/// A connection to the server whose URL is in `env` (default: the FULL MariaDB); records a
/// failure and returns null when the variable is unset or the server does not answer.
inline std::unique_ptr<Connection> ConnectToTestServer(const char* env = "CHSYNC_TEST_MYSQL_FULL") {
  const char* url_text = std::getenv(env);
  EXPECT_NE(url_text, nullptr) << env << " is not set: run the tests through scripts/test-servers";
  if (url_text == nullptr) return nullptr;
  auto url = ParseUrl(url_text);
  EXPECT_TRUE(url.ok());
  if (!url.ok()) return nullptr;
  auto options = OptionsFromUrl(*url);
  EXPECT_TRUE(options.ok());
  if (!options.ok()) return nullptr;
  auto conn = Connection::Open(*options);
  EXPECT_TRUE(conn.ok()) << conn.error().message();
  return conn.ok() ? std::move(*conn) : nullptr;
}

}  // namespace chsync::mysql
