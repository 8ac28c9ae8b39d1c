#include "common/url.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/redact.h"

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

TEST(ParseUrl, PasswordsWithAnyCharacter) {
  for (std::string password : {"a/b", "a?b", "a,b", "a;b", "a b", "a'b\"c", "a:b@c", "p\xC3\xA4ss"}) {
    auto url = ParseUrl("mysql://u:" + password + "@h:3306/db?ssl=1");
    ASSERT_TRUE(url.ok()) << password << ": " << url.error().message();
    EXPECT_EQ(url->password, password);
    EXPECT_EQ(url->host, "h");
    EXPECT_EQ(url->port, 3306);
    EXPECT_EQ(url->path, "/db");
    EXPECT_EQ(url->query, "ssl=1");
  }
}

/// What no error message of a malformed URL may hold.
void ExpectRefusedWithout(const std::string& text, const std::vector<std::string>& hidden) {
  auto url = ParseUrl(text);
  ASSERT_FALSE(url.ok()) << text;
  EXPECT_EQ(url.error().kind(), ErrorKind::kUsage);
  for (const std::string& h : hidden) {
    EXPECT_EQ(url.error().message().find(h), std::string::npos) << text << " -> " << url.error().message();
  }
}

TEST(ParseUrl, MalformedUrlsNeverQuoteWhatMayBeAPassword) {
  ExpectRefusedWithout("mysql://u:Pw9x@", {"Pw9x"});
  ExpectRefusedWithout("mysql://u:Pw9x@host:notaport", {"Pw9x"});
  ExpectRefusedWithout("mysql://u:Pw9x", {"Pw9x"});       // '@host' missing: reads as host:port
  ExpectRefusedWithout("mysql://u:Pw:9x", {"Pw", "9x"});  // ... with a ':' in the password
  ExpectRefusedWithout("u:Pw9x@host", {"Pw9x"});          // no scheme
  ExpectRefusedWithout(":Pw9x@host", {"Pw9x"});
  ExpectRefusedWithout("Pw9x", {"Pw9x"});
  ExpectRefusedWithout("mysql://u:%zzPw9x@h", {"Pw9x", "zz"});
  ExpectRefusedWithout("mysql://u:Pw9x@[::1", {"Pw9x"});
  ExpectRefusedWithout("mysql://u:Pw9x@h h:1", {"Pw9x"});
  // The '@' is the password's: what follows it is its end, not a host ("@host" is missing).
  ExpectRefusedWithout("mysql://u:Pw9x@Pw9y:Pw9z", {"Pw9"});
  ExpectRefusedWithout("mysql://u:Pw9x@/Pw9z", {"Pw9"});  // no host: the path is not shown
  ExpectRefusedWithout("mysql://u:123456", {"123456"});   // a number in the port's place
  auto bad = ParseUrl("mysql://repl:pw@db-1:notaport");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message(), "invalid port in mysql://repl:***@…: a port is a number from 1 to 65535");
}

TEST(ParseUrl, SeveralUrlsInOneAreRefused) {
  auto url = ParseUrl("mysql://chsync:Pw9x@127.0.0.1:3306,mysql://chsync:Pw9x@127.0.0.1:3307");
  ASSERT_FALSE(url.ok());
  EXPECT_NE(url.error().message().find("several"), std::string::npos) << url.error().message();
  EXPECT_EQ(url.error().message().find("Pw9x"), std::string::npos);
  auto hosts = ParseUrl("mysql://u:Pw9x@h1,h2:3306");
  ASSERT_FALSE(hosts.ok());
  EXPECT_NE(hosts.error().message().find("several servers are given with their scheme each"),
            std::string::npos)
      << hosts.error().message();
  EXPECT_EQ(hosts.error().message().find("Pw9x"), std::string::npos);
}

TEST(ParseUrl, RegistersThePasswordAsASecret) {
  ASSERT_TRUE(ParseUrl("mysql://u:reg%2Fistered-pw@h").ok());
  EXPECT_EQ(Redact("echo reg/istered-pw and reg%2Fistered-pw"), "echo *** and ***");
  ClearSecretsForTest();
}

TEST(SplitUrlList, SplitsWhereTheNextUrlBegins) {
  using List = std::vector<std::string>;
  EXPECT_EQ(SplitUrlList("mysql://a:3306,mysql://b:3306"), (List{"mysql://a:3306", "mysql://b:3306"}));
  EXPECT_EQ(SplitUrlList(" http://a:8123, http://b:8123,,"), (List{"http://a:8123", "http://b:8123"}));
  EXPECT_EQ(SplitUrlList("mysql://u:p,w@a,MySQL://u:x,,y@b"), (List{"mysql://u:p,w@a", "MySQL://u:x,,y@b"}));
  EXPECT_EQ(SplitUrlList("file:store, file:other"), (List{"file:store", "file:other"}));
  EXPECT_EQ(SplitUrlList(",,"), List{});
  EXPECT_EQ(SplitUrlList(""), List{});
  EXPECT_EQ(SplitUrlList("u:p@h1,u:p@h2"), List{"u:p@h1,u:p@h2"});  // not URLs: ParseUrl refuses it
  EXPECT_EQ(SplitUrlList("a, b,c"), (List{"a", "b", "c"}));
  EXPECT_EQ(SplitUrlList("mysql://u:p@a,b"), (List{"mysql://u:p@a", "b"}));
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
