// SourceLink (pipe/source_link.h) against the real MariaDB servers of scripts/test-servers: which
// server of --source it takes, why it refuses the others, and that every session it opens is
// checked against the server it took — through a proxy re-pointed to another server, too.

#include "pipe/source_link.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "common/url.h"
#include "mysql/binlog_stream.h"
#include "mysql/connection.h"
#include "tcp_proxy.h"
#include "test_env.h"

namespace chsync::pipe {
namespace {

using testing::RequireEnv;
using testing::TcpProxy;

int PortOf(const std::string& url) {
  auto parsed = ParseUrl(url);
  return parsed.ok() ? parsed->port : 0;
}

/// `url` with its port replaced by `port`.
std::string WithPort(const std::string& url, int port) {
  const std::string from = ":" + std::to_string(PortOf(url));
  const size_t at = url.rfind(from);
  if (at == std::string::npos) return url;
  return url.substr(0, at) + ":" + std::to_string(port) + url.substr(at + from.size());
}

/// A gap error that remembers what it was asked to say.
struct GapSeen {
  std::string what;
  SourceLink::GapError Make() {
    return [this](const std::string& text) {
      what = text;
      return Error(ErrorKind::kServer, "gap: " + text);
    };
  }
};

std::unique_ptr<mysql::Connection> Connect(const std::string& url) {
  auto parsed = ParseUrl(url);
  if (!parsed.ok()) return nullptr;
  auto options = mysql::OptionsFromUrl(*parsed);
  if (!options.ok()) return nullptr;
  auto conn = mysql::Connection::Open(*options);
  return conn.ok() ? std::move(*conn) : nullptr;
}

TEST(SourceLinkTest, TakesTheFirstServerThatCanServeAndSaysWhyTheOthersCannot) {
  const std::string statement = RequireEnv("CHSYNC_TEST_MYSQL_STATEMENT");
  const std::string full = RequireEnv("CHSYNC_TEST_MYSQL_FULL");
  const std::string minimal = RequireEnv("CHSYNC_TEST_MYSQL_MINIMAL");
  GapSeen gap;

  SourceLink link;
  ASSERT_TRUE(link.Configure(statement + "," + full).ok());
  ASSERT_EQ(link.size(), 2u);
  Status s = link.Select(link.Order(), std::nullopt, "", false, gap.Make());
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(link.current(), 1u);
  EXPECT_EQ(link.identity().server_id, 101u);
  EXPECT_TRUE(link.full_metadata());
  EXPECT_EQ(link.Describe(), "server_id 101 at 127.0.0.1:" + std::to_string(PortOf(full)));
  EXPECT_EQ(link.FailoverOrder(), (std::vector<size_t>{0, 1}));

  SourceLink minimal_link;
  ASSERT_TRUE(minimal_link.Configure(minimal).ok());
  ASSERT_TRUE(minimal_link.Select(minimal_link.Order(), std::nullopt, "", false, gap.Make()).ok());
  EXPECT_EQ(minimal_link.identity().server_id, 102u);
  EXPECT_FALSE(minimal_link.full_metadata());

  SourceLink only_statement;
  ASSERT_TRUE(only_statement.Configure(statement).ok());
  s = only_statement.Select(only_statement.Order(), std::nullopt, "", false, gap.Make());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
  EXPECT_NE(s.error().message().find("binlog_format is STATEMENT"), std::string::npos) << s.error().message();
  EXPECT_NE(s.error().message().find("set binlog_format=ROW"), std::string::npos) << s.error().message();
  EXPECT_TRUE(gap.what.empty());

  // A server that does not answer is a network failure (the pipe waits for it), not a refusal.
  const int closed = testing::FreeLoopbackPort();
  ASSERT_GT(closed, 0);
  SourceLink down;
  ASSERT_TRUE(down.Configure(WithPort(full, closed)).ok());
  s = down.Select(down.Order(), std::nullopt, "", false, gap.Make());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kNetwork) << s.error().message();

  // Bad URLs are refused before any server is tried.
  SourceLink bad;
  s = bad.Configure(full + ",mysql://nobody@");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("--source"), std::string::npos) << s.error().message();
}

TEST(SourceLinkTest, ASessionThatReachesAnotherServerIsRefusedUntilItIsProbedAgain) {
  const std::string full = RequireEnv("CHSYNC_TEST_MYSQL_FULL");
  const std::string compress = RequireEnv("CHSYNC_TEST_MYSQL_COMPRESS");
  std::string error;
  std::unique_ptr<TcpProxy> proxy = TcpProxy::Start(PortOf(full), &error);
  ASSERT_NE(proxy, nullptr) << error;
  GapSeen gap;

  SourceLink link;
  ASSERT_TRUE(link.Configure(WithPort(full, proxy->port())).ok());
  ASSERT_TRUE(link.Select(link.Order(), std::nullopt, "", false, gap.Make()).ok());
  ASSERT_EQ(link.identity().server_id, 101u);
  auto session = link.OpenSession();
  ASSERT_TRUE(session.ok()) << session.error().message();
  EXPECT_FALSE(link.moved());

  // The proxy now leads to another server: a reconnect (not a failover) reaches it.
  proxy->Retarget(PortOf(compress));
  proxy->DropAll();
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto moved = link.OpenSession();
    ASSERT_FALSE(moved.ok());
    EXPECT_EQ(moved.error().kind(), ErrorKind::kNetwork);
    EXPECT_NE(moved.error().message().find("now leads to server_id 104, not to server_id 101"),
              std::string::npos)
        << moved.error().message();
    EXPECT_TRUE(link.moved());
    EXPECT_EQ(link.identity().server_id, 101u) << "a session must not change the server read";
  }

  // Probed again, the server behind the proxy is the one read, and its sessions are let through.
  ASSERT_TRUE(link.Select({link.current()}, std::nullopt, "", false, gap.Make()).ok());
  link.ForgetMove();
  EXPECT_EQ(link.identity().server_id, 104u);
  session = link.OpenSession();
  ASSERT_TRUE(session.ok()) << session.error().message();
  auto reached = link.ReadIdentity(**session);
  ASSERT_TRUE(reached.ok());
  EXPECT_EQ(reached->server_id, 104u);
  EXPECT_FALSE(link.moved());
}

TEST(SourceLinkTest, AnotherServerMustHoldEveryTransactionAppliedAndSent) {
  const std::string compress = RequireEnv("CHSYNC_TEST_MYSQL_COMPRESS");
  auto conn = Connect(compress);
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(conn->Execute("CREATE DATABASE IF NOT EXISTS source_link_test").ok());
  auto has = conn->QueryValue("SELECT @@GLOBAL.gtid_binlog_pos");
  ASSERT_TRUE(has.ok() && has->has_value() && !(*has)->empty());

  // A checkpoint saved on server 101, which compress (104) is not.
  Checkpoint saved;
  saved.source = SourceIdentity{101, "", "127.0.0.1:1"};
  GapSeen gap;
  SourceLink link;
  ASSERT_TRUE(link.Configure(compress).ok());

  // Without a GTID position nothing says where to go on: refused.
  Status s = link.Select(link.Order(), saved, "", false, gap.Make());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
  EXPECT_NE(s.error().message().find("records no GTID position"), std::string::npos) << s.error().message();

  // Transactions applied that the server lacks: a binlog gap, or taken with accept_gap.
  saved.resume.gtid_set = "0-101-999999999";
  s = link.Select(link.Order(), saved, "", false, gap.Make());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message().rfind("gap: ", 0), 0u) << s.error().message();
  EXPECT_NE(gap.what.find("lacks transactions chsync already applied"), std::string::npos) << gap.what;
  gap.what.clear();
  s = link.Select(link.Order(), saved, "", true, gap.Make());
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_NE(link.gtid_gap().find("lacks transactions chsync already applied"), std::string::npos);
  EXPECT_TRUE(gap.what.empty());
  link.ClearGtidGap();

  // It holds what was applied, but not what was sent past the checkpoint: a gap too.
  saved.resume.gtid_set = **has;
  s = link.Select(link.Order(), saved, "0-104-999999999", false, gap.Make());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(gap.what.find("whose rows chsync already sent to ClickHouse"), std::string::npos) << gap.what;

  // It holds both: taken, no gap.
  gap.what.clear();
  s = link.Select(link.Order(), saved, **has, false, gap.Make());
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_TRUE(link.gtid_gap().empty());
  EXPECT_TRUE(gap.what.empty());
  EXPECT_TRUE(link.ResumeByGtid(**has));
  EXPECT_FALSE(link.ResumeByGtid(""));

  // Where the transactions after everything it has begin: the end of its binlog.
  auto end = mysql::CurrentBinlogPosition(link.control());
  ASSERT_TRUE(end.ok());
  auto located = link.LocateGtidStart(**has, 4242);
  ASSERT_TRUE(located.ok()) << located.error().message();
  // Another test may write meanwhile: the start is at or after the end read before.
  EXPECT_GE(mysql::CompareCoordinates(*located, *end), 0) << located->ToString() << " " << end->ToString();
  auto now = link.MariaBinlogGtid();
  ASSERT_TRUE(now.has_value());
  EXPECT_FALSE(now->empty());
  EXPECT_TRUE(conn->Execute("DROP DATABASE IF EXISTS source_link_test").ok());
}

}  // namespace
}  // namespace chsync::pipe
