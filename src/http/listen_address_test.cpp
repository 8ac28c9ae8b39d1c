#include "http/listen_address.h"

#include <gtest/gtest.h>

#include <string>

namespace chsync::http {
namespace {

struct GoodCase {
  const char* text;
  const char* host;
  uint16_t port;
  const char* printed;
};

TEST(ListenAddressTest, ParsesEveryAcceptedForm) {
  const GoodCase cases[] = {
      {"127.0.0.1:9187", "127.0.0.1", 9187, "127.0.0.1:9187"},
      {"[::1]:9187", "::1", 9187, "[::1]:9187"},
      {":9187", "127.0.0.1", 9187, "127.0.0.1:9187"},
      {"0.0.0.0:9187", "0.0.0.0", 9187, "0.0.0.0:9187"},
      {"[::]:80", "::", 80, "[::]:80"},
      {"localhost:8123", "localhost", 8123, "localhost:8123"},
      {"metrics-host.internal:1", "metrics-host.internal", 1, "metrics-host.internal:1"},
      {"127.0.0.1:0", "127.0.0.1", 0, "127.0.0.1:0"},
      {":0", "127.0.0.1", 0, "127.0.0.1:0"},
      {"10.1.2.3:65535", "10.1.2.3", 65535, "10.1.2.3:65535"},
  };
  for (const GoodCase& c : cases) {
    SCOPED_TRACE(c.text);
    auto parsed = ParseListenAddress(c.text);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message();
    EXPECT_EQ(parsed->host, c.host);
    EXPECT_EQ(parsed->port, c.port);
    EXPECT_EQ(parsed->ToString(), c.printed);
  }
}

struct BadCase {
  const char* text;
  const char* says;
};

TEST(ListenAddressTest, RejectsBadTextWithAClearMessage) {
  const BadCase cases[] = {
      {"", "empty"},
      {"9187", "no port"},
      {"127.0.0.1", "no port"},
      {"127.0.0.1:", "no port"},
      {"127.0.0.1:65536", "0 to 65535"},
      {"127.0.0.1:99999999", "0 to 65535"},
      {"127.0.0.1:-1", "0 to 65535"},
      {"127.0.0.1:+80", "0 to 65535"},
      {"127.0.0.1:80x", "0 to 65535"},
      {"127.0.0.1: 80", "0 to 65535"},
      {"::1:9187", "brackets"},
      {"[::1:9187", "not closed"},
      {"[::1]9187", "port must follow"},
      {"[::1]", "port must follow"},
      {"[nonsense]:80", "not an IPv6"},
      {"[127.0.0.1]:80", "not an IPv6"},
      {"300.1.1.1:80", "neither"},
      {"1.2.3:80", "neither"},
      {"host name:80", "neither"},
      {"a..b:80", "neither"},
      {"http://127.0.0.1:80", "not a URL"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.text);
    auto parsed = ParseListenAddress(c.text);
    ASSERT_FALSE(parsed.ok()) << parsed->ToString();
    EXPECT_EQ(parsed.error().kind(), ErrorKind::kUsage);
    EXPECT_NE(parsed.error().message().find(c.says), std::string::npos) << parsed.error().message();
    EXPECT_NE(parsed.error().message().find("e.g. 127.0.0.1:9187"), std::string::npos);
  }
}

TEST(ListenAddressTest, KnowsLoopback) {
  EXPECT_TRUE(ParseListenAddress(":1")->IsLoopback());
  EXPECT_TRUE(ParseListenAddress("127.3.4.5:1")->IsLoopback());
  EXPECT_TRUE(ParseListenAddress("[::1]:1")->IsLoopback());
  EXPECT_TRUE(ParseListenAddress("localhost:1")->IsLoopback());
  EXPECT_FALSE(ParseListenAddress("0.0.0.0:1")->IsLoopback());
  EXPECT_FALSE(ParseListenAddress("[::]:1")->IsLoopback());
  EXPECT_FALSE(ParseListenAddress("10.0.0.1:1")->IsLoopback());
}

}  // namespace
}  // namespace chsync::http
