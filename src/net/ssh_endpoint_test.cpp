#include "net/ssh_endpoint.h"

#include <gtest/gtest.h>

#include "common/url.h"

namespace chsync::net {
namespace {

TEST(SshEndpointTest, ParsesUserHostAndPort) {
  auto e = ParseSshTarget("tunnel@bastion.example.com:2222", "ssh=");
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_EQ(e->user, "tunnel");
  EXPECT_EQ(e->host, "bastion.example.com");
  EXPECT_EQ(e->port, 2222);
  auto bare = ParseSshTarget("bastion", "ssh=");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->user, "");
  EXPECT_EQ(bare->port, 22);
  auto v6 = ParseSshTarget("t@[2001:db8::1]:22", "ssh=");
  ASSERT_TRUE(v6.ok()) << v6.error().message();
  EXPECT_EQ(v6->host, "2001:db8::1");
  EXPECT_EQ(v6->Describe(), "t@[2001:db8::1]:22");
}

TEST(SshEndpointTest, RefusesBadTargetsNamingTheForm) {
  for (const char* text : {"", "@bastion", "t@", "t@bastion:", "t@bastion:0", "t@bastion:70000",
                           "t@bastion:x", "t@bas tion", "t@2001:db8::1", "t@[::1", "a b@bastion"}) {
    auto e = ParseSshTarget(text, "ssh= in the source URL");
    ASSERT_FALSE(e.ok()) << text;
    EXPECT_EQ(e.error().kind(), ErrorKind::kUsage);
    EXPECT_NE(e.error().message().find("ssh= in the source URL must be [USER@]HOST[:PORT]"),
              std::string::npos)
        << e.error().message();
  }
}

TEST(SshEndpointTest, TakesTheSshParametersOutOfAUrlsQuery) {
  auto url = ParseUrl(
      "mysql://repl:p@ss@db.internal:3306?ssh=tunnel@bastion:2222&ssh-key=/etc/chsync/id&"
      "ssh-known-hosts=/etc/chsync/known_hosts&ssh-strict=no&ssl=required");
  ASSERT_TRUE(url.ok()) << url.error().message();
  EXPECT_EQ(url->user, "repl");
  EXPECT_EQ(url->password, "p@ss");
  EXPECT_EQ(url->host, "db.internal");
  EXPECT_EQ(url->port, 3306);
  auto params = ParseQueryParams(url->query);
  ASSERT_TRUE(params.ok());
  auto e = TakeSshParams(*params, "source URL");
  ASSERT_TRUE(e.ok()) << e.error().message();
  ASSERT_TRUE(e->has_value());
  EXPECT_EQ((*e)->user, "tunnel");
  EXPECT_EQ((*e)->host, "bastion");
  EXPECT_EQ((*e)->port, 2222);
  EXPECT_EQ((*e)->key_file, "/etc/chsync/id");
  EXPECT_EQ((*e)->known_hosts, "/etc/chsync/known_hosts");
  EXPECT_FALSE((*e)->strict_host_key_checking);
  ASSERT_EQ(params->size(), 1u);  // the others stay for the connection
  EXPECT_EQ((*params)[0].first, "ssl");
}

TEST(SshEndpointTest, NoSshParameterIsNoTunnelAndStrayOnesAreRefused) {
  std::vector<std::pair<std::string, std::string>> none = {{"ssl", "1"}};
  auto e = TakeSshParams(none, "source URL");
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e->has_value());
  std::vector<std::pair<std::string, std::string>> stray = {{"ssh-key", "/k"}};
  auto refused = TakeSshParams(stray, "destination URL");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("no ssh=USER@BASTION:PORT"), std::string::npos);
  std::vector<std::pair<std::string, std::string>> strict = {{"ssh", "b"}, {"ssh-strict", "maybe"}};
  EXPECT_FALSE(TakeSshParams(strict, "source URL").ok());
  std::vector<std::pair<std::string, std::string>> twice = {{"ssh", "b"}, {"ssh", "c"}};
  EXPECT_FALSE(TakeSshParams(twice, "source URL").ok());
}

TEST(SshEndpointTest, ConfigurationKeysBecomeParametersOfEveryUrlWithoutItsOwn) {
  SshEndpoint e;
  e.host = "bastion";
  e.port = 2022;
  e.user = "tunnel";
  e.key_file = "/etc/chsync/id key";
  const std::string list = WithSshParams(
      "mysql://repl@db-1:3306, mysql://repl@db-2:3306?ssl=1, mysql://repl@db-3?ssh=other@b2, file:/tmp/x", e);
  EXPECT_EQ(list,
            "mysql://repl@db-1:3306?ssh=tunnel%40bastion:2022&ssh-key=/etc/chsync/id%20key, "
            "mysql://repl@db-2:3306?ssl=1&ssh=tunnel%40bastion:2022&ssh-key=/etc/chsync/id%20key, "
            "mysql://repl@db-3?ssh=other@b2, file:/tmp/x");
  // What was written reads back as the same endpoint.
  for (const std::string& text : SplitUrlList(list)) {
    if (text.starts_with("file:")) continue;
    auto url = ParseUrl(text);
    ASSERT_TRUE(url.ok()) << text;
    auto params = ParseQueryParams(url->query);
    ASSERT_TRUE(params.ok());
    auto back = TakeSshParams(*params, "source URL");
    ASSERT_TRUE(back.ok() && back->has_value()) << text;
    if (url->host != "db-3") {
      EXPECT_EQ(**back, e);
    }
    EXPECT_EQ(url->user, "repl");
  }
}

}  // namespace
}  // namespace chsync::net
