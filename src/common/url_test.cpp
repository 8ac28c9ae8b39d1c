#include "common/url.h"

#include <gtest/gtest.h>

namespace chsync {
namespace {

TEST(ParseUrl, MysqlWithEverything) {
  auto url = ParseUrl("mysql://repl:p%40ss%3Aw@db.example:3307/shop?ssl=1");
  ASSERT_TRUE(url.ok()) << url.error().message();
  EXPECT_EQ(url->scheme, "mysql");
  EXPECT_EQ(url->user, "repl");
  EXPECT_EQ(url->password, "p@ss:w");
  EXPECT_EQ(url->host, "db.example");
  EXPECT_EQ(url->port, 3307);
  EXPECT_EQ(url->path, "/shop");
  EXPECT_EQ(url->query, "ssl=1");
  EXPECT_EQ(url->Redacted(), "mysql://repl:***@db.example:3307/shop?ssl=1");
}

TEST(ParseUrl, UnencodedAtInPasswordSplitsAtLastAt) {
  auto url = ParseUrl("http://default:a@b@127.0.0.1:8123");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->password, "a@b");
  EXPECT_EQ(url->host, "127.0.0.1");
}

TEST(ParseUrl, Ipv6AndNoPort) {
  auto url = ParseUrl("https://[::1]");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->host, "::1");
  EXPECT_EQ(url->port, 0);
  EXPECT_FALSE(url->has_password);
  EXPECT_EQ(url->Address(), "[::1]");
}

TEST(ParseUrl, FileUrl) {
  auto url = ParseUrl("file:/var/lib/chsync/store");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->scheme, "file");
  EXPECT_EQ(url->path, "/var/lib/chsync/store");
  EXPECT_EQ(ParseUrl("file:relative/dir")->path, "relative/dir");
}

TEST(ParseUrl, ErrorsNeverQuoteThePassword) {
  auto bad_port = ParseUrl("mysql://u:secret@h:99999");
  ASSERT_FALSE(bad_port.ok());
  EXPECT_EQ(bad_port.error().kind(), ErrorKind::kUsage);
  EXPECT_EQ(bad_port.error().message().find("secret"), std::string::npos);
  EXPECT_FALSE(ParseUrl("mysql://u:secret@").ok());
  EXPECT_FALSE(ParseUrl("nonsense").ok());
  EXPECT_FALSE(ParseUrl("mysql:host").ok());
  EXPECT_FALSE(ParseUrl("mysql://u:%zz@h").ok());
  EXPECT_FALSE(ParseUrl("mysql://u:%4@h").ok());
}

TEST(ParseQueryParams, DecodesPairsInOrder) {
  auto params = ParseQueryParams("ssl=1&ssl-ca=%2Fetc%2Fca.pem&&flag&max_threads=4");
  ASSERT_TRUE(params.ok());
  std::vector<std::pair<std::string, std::string>> expected = {
      {"ssl", "1"}, {"ssl-ca", "/etc/ca.pem"}, {"flag", ""}, {"max_threads", "4"}};
  EXPECT_EQ(*params, expected);
  EXPECT_TRUE(ParseQueryParams("")->empty());
  EXPECT_FALSE(ParseQueryParams("a=%G1").ok());
}

}  // namespace
}  // namespace chsync
