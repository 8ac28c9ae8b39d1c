#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "clickhouse/capabilities.h"
#include "clickhouse/connection.h"
#include "clickhouse/embedded_connection.h"
#include "clickhouse/http_connection.h"
#include "clickhouse/test_destinations.h"

namespace chsync::clickhouse {
namespace {

using testing::ConnectOrFail;
using testing::EmbeddedUrl;
using testing::ServerUrl;

/// Both engines run the same checks.
enum class Engine { kServer, kEmbedded };

std::string UrlFor(Engine engine) {
  return engine == Engine::kServer ? ServerUrl() : EmbeddedUrl();
}

class ConnectionTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    conn_ = ConnectOrFail(UrlFor(GetParam()));
    ASSERT_NE(conn_, nullptr);
  }
  std::unique_ptr<Connection> conn_;
};

TEST_P(ConnectionTest, RunsAQuery) {
  auto out = conn_->Query("SELECT 1 + 1, 'a\\tb'");
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(*out, "2\ta\\tb\n");
}

TEST_P(ConnectionTest, QueryInAnotherFormat) {
  auto out = conn_->Query("SELECT 7 AS x", "JSONEachRow");
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(*out, "{\"x\":7}\n");
}

TEST_P(ConnectionTest, VersionAndCapabilitiesMatchTheEngine) {
  auto version = conn_->Version();
  ASSERT_TRUE(version.ok()) << version.error().message();
  Capabilities caps = FromVersion(*version);
  if (GetParam() == Engine::kServer) {
    EXPECT_EQ(version->major, 18);
    EXPECT_EQ(version->minor, 16);
    EXPECT_FALSE(caps.datetime64);
    EXPECT_FALSE(caps.replacing_is_deleted);
  } else {
    EXPECT_GE(*version, (ServerVersion{26, 1, 0, 0}));
    EXPECT_TRUE(caps.datetime64);
    EXPECT_TRUE(caps.replacing_is_deleted);
    EXPECT_TRUE(caps.date32);
  }
}

TEST_P(ConnectionTest, SyntaxErrorIsAServerErrorWithItsCode) {
  auto out = conn_->Query("SELEC 1");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind(), ErrorKind::kServer);
  EXPECT_EQ(out.error().server_code(), 62);
  EXPECT_NE(out.error().message().find("Syntax error"), std::string::npos) << out.error().message();
  EXPECT_NE(out.error().message().find(conn_->Describe()), std::string::npos) << out.error().message();
}

TEST_P(ConnectionTest, UnknownTableCode) {
  Status s = conn_->Execute("SELECT * FROM chsync_no_such_db.no_such_table");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kServer);
  // 81 UNKNOWN_DATABASE or 60 UNKNOWN_TABLE depending on the version.
  EXPECT_TRUE(s.error().server_code() == 81 || s.error().server_code() == 60) << s.error().message();
}

TEST_P(ConnectionTest, BadTypeInDdlIsClassified) {
  Status s = conn_->Execute("CREATE TABLE chsync_bad_type_t (a NoSuchType) ENGINE = Memory");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kServer);
  EXPECT_EQ(s.error().server_code(), 50) << s.error().message();  // UNKNOWN_TYPE
}

TEST_P(ConnectionTest, InsertsRowBinaryWithBinaryBytes) {
  std::string db = testing::UniqueDatabase("chsync_ch_conn");
  ASSERT_TRUE(conn_->Execute("CREATE DATABASE " + db).ok());
  ASSERT_TRUE(
      conn_->Execute("CREATE TABLE " + db + ".t (a UInt32, s String) ENGINE = MergeTree ORDER BY a").ok());
  // Row 1: a=1, s="\0\xff\n"; row 2: a=2, s="".
  std::string data;
  data += std::string("\x01\x00\x00\x00", 4);
  data += std::string("\x03\x00\xff\n", 4);
  data += std::string("\x02\x00\x00\x00", 4);
  data += std::string("\x00", 1);
  Status s = conn_->Insert("INSERT INTO " + db + ".t (a, s) FORMAT RowBinary", data);
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto out = conn_->Query("SELECT a, hex(s) FROM " + db + ".t ORDER BY a");
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(*out, "1\t00FF0A\n2\t\n");
  EXPECT_TRUE(conn_->Execute("DROP DATABASE " + db).ok());
}

TEST_P(ConnectionTest, TruncatedRowBinaryIsRejectedWhole) {
  std::string db = testing::UniqueDatabase("chsync_ch_trunc");
  ASSERT_TRUE(conn_->Execute("CREATE DATABASE " + db).ok());
  ASSERT_TRUE(
      conn_->Execute("CREATE TABLE " + db + ".t (a UInt32, b UInt64) ENGINE = MergeTree ORDER BY a").ok());
  std::string data(12, '\x01');
  data += std::string(5, '\x02');  // second row cut short
  Status s = conn_->Insert("INSERT INTO " + db + ".t (a, b) FORMAT RowBinary", data);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kServer);
  EXPECT_NE(s.error().server_code(), 0) << s.error().message();
  auto count = conn_->Query("SELECT count() FROM " + db + ".t");
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, "0\n");
  EXPECT_TRUE(conn_->Execute("DROP DATABASE " + db).ok());
}

TEST_P(ConnectionTest, LargeInsertArrivesWhole) {
  std::string db = testing::UniqueDatabase("chsync_ch_large");
  ASSERT_TRUE(conn_->Execute("CREATE DATABASE " + db).ok());
  ASSERT_TRUE(
      conn_->Execute("CREATE TABLE " + db + ".t (a UInt64, s String) ENGINE = MergeTree ORDER BY a").ok());
  // 300000 rows of 8 + 1 + 10 bytes: 5.7 MB in one insert.
  std::string data;
  for (uint64_t i = 0; i < 300000; ++i) {
    data.append(reinterpret_cast<const char*>(&i), 8);
    data += '\x0A';
    data += "row-" + std::to_string(100000 + i % 10000);
  }
  RequestOptions request;
  request.settings = {{"max_threads", "1"}};
  Status s = conn_->Insert("INSERT INTO " + db + ".t (a, s) FORMAT RowBinary", data, request);
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto out = conn_->Query("SELECT count(), sum(a), uniqExact(s) FROM " + db + ".t");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "300000\t44999850000\t10000\n");
  EXPECT_TRUE(conn_->Execute("DROP DATABASE " + db).ok());
}

TEST_P(ConnectionTest, PerRequestSettings) {
  RequestOptions request;
  request.query_id = testing::UniqueDatabase("chsync_qid");
  request.settings = {{"max_threads", "1"}};
  auto out = conn_->Query("SELECT getSetting('max_threads')", "TabSeparated", request);
  if (GetParam() == Engine::kServer) {
    // 18.16 has no getSetting(); the setting must still be accepted.
    auto plain = conn_->Query("SELECT 1", "TabSeparated", request);
    ASSERT_TRUE(plain.ok()) << plain.error().message();
  } else {
    ASSERT_TRUE(out.ok()) << out.error().message();
    EXPECT_EQ(*out, "1\n");
  }
  request.settings = {{"chsync_no_such_setting", "1"}};
  auto bad = conn_->Query("SELECT 1", "TabSeparated", request);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind(), ErrorKind::kServer);
  EXPECT_EQ(bad.error().server_code(), 115) << bad.error().message();  // UNKNOWN_SETTING
}

INSTANTIATE_TEST_SUITE_P(Engines, ConnectionTest, ::testing::Values(Engine::kServer, Engine::kEmbedded),
                         [](const auto& param_info) {
                           return param_info.param == Engine::kServer ? "Server" : "Embedded";
                         });

/// The server URL with its password replaced.
std::string WithPassword(const std::string& url, const std::string& password) {
  auto parsed = ParseUrl(url);
  EXPECT_TRUE(parsed.ok());
  return "http://" + parsed->user + ":" + password + "@" + parsed->Address() + "/";
}

TEST(ServerConnectionTest, WrongPasswordIsAnAuthErrorWithoutThePassword) {
  std::string url = ServerUrl();
  ASSERT_FALSE(url.empty());
  auto conn = ConnectOrFail(WithPassword(url, "wrong-secret-4711"));
  ASSERT_NE(conn, nullptr);
  auto out = conn->Query("SELECT 1");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind(), ErrorKind::kAuth);
  EXPECT_EQ(out.error().server_code(), 193);
  EXPECT_EQ(out.error().message().find("wrong-secret-4711"), std::string::npos) << out.error().message();
  EXPECT_NE(out.error().message().find("password"), std::string::npos) << out.error().message();
}

TEST(ServerConnectionTest, PasswordFromEnvironment) {
  std::string url = ServerUrl();
  ASSERT_FALSE(url.empty());
  auto parsed = ParseUrl(url);
  ASSERT_TRUE(parsed.ok());
  ConnectOptions options;
  options.password_env = "CHSYNC_TEST_CH_PASSWORD_FOR_ENV_TEST";
  setenv(options.password_env.c_str(), parsed->password.c_str(), 1);
  auto conn = ConnectOrFail("http://" + parsed->user + "@" + parsed->Address(), options);
  ASSERT_NE(conn, nullptr);
  auto out = conn->Query("SELECT 1");
  EXPECT_TRUE(out.ok()) << out.error().message();
}

TEST(ServerConnectionTest, HeaderAuthentication) {
  std::string url = ServerUrl();
  ASSERT_FALSE(url.empty());
  auto parsed = ParseUrl(url);
  ASSERT_TRUE(parsed.ok());
  // With auth=header no Basic credentials are sent: the right key works, a wrong one is refused.
  auto conn = ConnectOrFail(WithPassword(url, parsed->password) + "?auth=header");
  ASSERT_NE(conn, nullptr);
  auto out = conn->Query("SELECT 1");
  ASSERT_TRUE(out.ok()) << out.error().message();
  auto wrong = ConnectOrFail(WithPassword(url, "header-wrong-pw") + "?auth=header");
  ASSERT_NE(wrong, nullptr);
  auto refused = wrong->Query("SELECT 1");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind(), ErrorKind::kAuth);
  EXPECT_EQ(refused.error().message().find("header-wrong-pw"), std::string::npos);
}

TEST(ServerConnectionTest, ClosedPortIsANetworkError) {
  // Bind an ephemeral port, then close it: nothing listens there afterwards.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  int port = ntohs(addr.sin_port);
  close(fd);
  ConnectOptions options;
  options.connect_timeout = std::chrono::milliseconds(3000);
  auto conn = ConnectOrFail("http://default:secret-pw-99@127.0.0.1:" + std::to_string(port), options);
  ASSERT_NE(conn, nullptr);
  auto out = conn->Query("SELECT 1");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind(), ErrorKind::kNetwork);
  EXPECT_NE(out.error().message().find("127.0.0.1:" + std::to_string(port)), std::string::npos)
      << out.error().message();
  EXPECT_EQ(out.error().message().find("secret-pw-99"), std::string::npos) << out.error().message();
}

TEST(ServerConnectionTest, CompressedInsert) {
  std::string url = ServerUrl();
  ASSERT_FALSE(url.empty());
  auto conn = ConnectOrFail(url + (url.find('?') == std::string::npos ? "?" : "&") + "compress=1");
  ASSERT_NE(conn, nullptr);
  std::string db = testing::UniqueDatabase("chsync_ch_gzip");
  ASSERT_TRUE(conn->Execute("CREATE DATABASE " + db).ok());
  ASSERT_TRUE(
      conn->Execute("CREATE TABLE " + db + ".t (a UInt64, s String) ENGINE = MergeTree ORDER BY a").ok());
  // 200000 rows of 8 + 1 + 10 bytes: 3.8 MB, above the 1 MiB compression threshold.
  std::string data;
  for (uint64_t i = 0; i < 200000; ++i) {
    data.append(reinterpret_cast<const char*>(&i), 8);
    data += '\x0A';
    data += "row-" + std::to_string(100000 + i % 10000);
  }
  Status s = conn->Insert("INSERT INTO " + db + ".t (a, s) FORMAT RowBinary", data);
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto out = conn->Query("SELECT count(), sum(a), uniqExact(s) FROM " + db + ".t");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "200000\t19999900000\t10000\n");
  EXPECT_TRUE(conn->Execute("DROP DATABASE " + db).ok());
}

TEST(ServerConnectionTest, RejectsBadUrlOptions) {
  for (const char* bad : {"?compress=2", "?ssl-verify=yes", "?auth=kerberos", "?password=x"}) {
    auto conn = Connect(std::string("http://u@127.0.0.1:1/") + bad);
    ASSERT_FALSE(conn.ok()) << bad;
    EXPECT_EQ(conn.error().kind(), ErrorKind::kUsage) << bad;
  }
}

TEST(ServerConnectionTest, KeepsTheConnectionAlive) {
  std::string url = ServerUrl();
  ASSERT_FALSE(url.empty());
  auto conn = ConnectOrFail(url);
  ASSERT_NE(conn, nullptr);
  auto* http = dynamic_cast<HttpConnection*>(conn.get());
  ASSERT_NE(http, nullptr);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(conn->Query("SELECT 1").ok());
  EXPECT_FALSE(conn->Query("SELEC 1").ok());  // an error response keeps the connection too
  ASSERT_TRUE(conn->Query("SELECT 1").ok());
  EXPECT_EQ(http->connections_opened(), 1u);
}

TEST(ServerConnectionTest, TlsFailuresAreClear) {
  std::string url = ServerUrl();
  ASSERT_FALSE(url.empty());
  auto parsed = ParseUrl(url);
  ASSERT_TRUE(parsed.ok());
  // The test server speaks plain HTTP: a TLS handshake with it fails as a network error.
  auto tls = ConnectOrFail("https://" + parsed->user + "@" + parsed->Address() + "/?ssl-verify=0");
  ASSERT_NE(tls, nullptr);
  auto out = tls->Query("SELECT 1");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().kind(), ErrorKind::kNetwork) << out.error().message();
  // A CA bundle that does not exist is a configuration error, named as such.
  auto bad_ca =
      ConnectOrFail("https://" + parsed->user + "@" + parsed->Address() + "/?ssl-ca=/nonexistent/ca.pem");
  ASSERT_NE(bad_ca, nullptr);
  auto refused = bad_ca->Query("SELECT 1");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind(), ErrorKind::kConfig) << refused.error().message();
}

TEST(ServerConnectionTest, RejectsUnknownScheme) {
  auto conn = Connect("ftp://h/");
  ASSERT_FALSE(conn.ok());
  EXPECT_EQ(conn.error().kind(), ErrorKind::kUsage);
}

TEST(EmbeddedConnectionTest, BootTimeIsReported) {
  std::string url = EmbeddedUrl();
  ASSERT_FALSE(url.empty());
  auto start = std::chrono::steady_clock::now();
  auto conn = ConnectOrFail(url);
  ASSERT_NE(conn, nullptr);
  auto booted = std::chrono::steady_clock::now();
  auto out = conn->Query("SELECT 1");
  auto done = std::chrono::steady_clock::now();
  ASSERT_TRUE(out.ok()) << out.error().message();
  auto ms = [](auto d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
  RecordProperty("dlopen_and_connect_ms", std::to_string(ms(booted - start)));
  RecordProperty("first_query_ms", std::to_string(ms(done - booted)));
  std::printf("chDB dlopen+connect: %lld ms, first query: %lld ms\n",
              static_cast<long long>(ms(booted - start)), static_cast<long long>(ms(done - booted)));
}

TEST(EmbeddedConnectionTest, SameStoreIsSharedAndADifferentStoreIsRefused) {
  std::string url = EmbeddedUrl();
  ASSERT_FALSE(url.empty());
  auto first = ConnectOrFail(url);
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(first->Execute("CREATE DATABASE IF NOT EXISTS chsync_shared").ok());
  auto second = ConnectOrFail(url);
  ASSERT_NE(second, nullptr);
  auto dbs = second->Query("SELECT count() FROM system.databases WHERE name = 'chsync_shared'");
  ASSERT_TRUE(dbs.ok()) << dbs.error().message();
  EXPECT_EQ(*dbs, "1\n");

  auto other = Connect(url + "-other");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().kind(), ErrorKind::kConfig);
  EXPECT_NE(other.error().message().find("one store per process"), std::string::npos)
      << other.error().message();
}

TEST(EmbeddedConnectionTest, MissingLibraryExplainsWhereItLookedAndHowToInstall) {
  ConnectOptions options;
  options.chdb_library = "/nonexistent/chsync/libchdb.so";
  auto found = EmbeddedConnection::LocateLibrary(options);
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.error().kind(), ErrorKind::kConfig);
  EXPECT_NE(found.error().message().find("/nonexistent/chsync/libchdb.so"), std::string::npos);
  EXPECT_NE(found.error().message().find("scripts/setup"), std::string::npos);
}

/// Restores an environment variable when it goes out of scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

TEST(EmbeddedConnectionTest, LibrarySearchOrder) {
  {
    ScopedEnv env("CHSYNC_CHDB_LIB", "/from/env/libchdb.so");
    EXPECT_EQ(EmbeddedConnection::LibraryCandidates({}), std::vector<std::string>{"/from/env/libchdb.so"});
    auto located = EmbeddedConnection::LocateLibrary({});
    ASSERT_FALSE(located.ok());
    EXPECT_NE(located.error().message().find("/from/env/libchdb.so"), std::string::npos);
  }
  ScopedEnv unset("CHSYNC_CHDB_LIB", nullptr);
  auto candidates = EmbeddedConnection::LibraryCandidates({});
  ASSERT_EQ(candidates.size(), 3u);
  EXPECT_TRUE(candidates[0].ends_with("/lib/libchdb.so")) << candidates[0];
  EXPECT_EQ(candidates[1], CHSYNC_SOURCE_DIR "/.deps/chdb/libchdb.so");
  EXPECT_EQ(candidates[2], "libchdb.so");
}

}  // namespace
}  // namespace chsync::clickhouse
