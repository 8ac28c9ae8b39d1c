#include "binlog/json_binary.h"

#include <gtest/gtest.h>

#include <string>

namespace chsync::binlog {
namespace {

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

Result<std::string> Text(const std::string& bin) {
  std::string out;
  Status s = JsonBinaryToText(bin, 0, out);
  if (!s.ok()) return s.error();
  return out;
}

TEST(JsonBinaryTest, Literals) {
  EXPECT_EQ(*Text(Bytes({0x04, 0x00})), "null");
  EXPECT_EQ(*Text(Bytes({0x04, 0x01})), "true");
  EXPECT_EQ(*Text(Bytes({0x04, 0x02})), "false");
  EXPECT_EQ(*Text(""), "null");
}

TEST(JsonBinaryTest, Scalars) {
  EXPECT_EQ(*Text(Bytes({0x05, 0xff, 0xff})), "-1");
  EXPECT_EQ(*Text(Bytes({0x06, 0xff, 0xff})), "65535");
  EXPECT_EQ(*Text(Bytes({0x09, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})), "9223372036854775807");
  EXPECT_EQ(*Text(Bytes({0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})), "18446744073709551615");
  EXPECT_EQ(*Text(Bytes({0x0b, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f})), "1.5");
  EXPECT_EQ(*Text(Bytes({0x0c, 0x03, 'a', '"', '\n'})), "\"a\\\"\\n\"");
}

TEST(JsonBinaryTest, SmallObjectWithInlinedValue) {
  // {"a": 1}: count 1, size 12, key entry (offset 11, length 1), value entry (int16 inline 1), key.
  std::string bin = Bytes({0x00, 0x01, 0x00, 0x0c, 0x00, 0x0b, 0x00, 0x01, 0x00, 0x05, 0x01, 0x00, 'a'});
  EXPECT_EQ(*Text(bin), "{\"a\": 1}");
}

TEST(JsonBinaryTest, SmallArrayWithStringValue) {
  // ["xy", true]: count 2, size 13, entries (string at offset 10), (literal true inline), string.
  auto t = Text(Bytes({0x02, 0x02, 0x00, 0x0d, 0x00, 0x0c, 0x0a, 0x00, 0x04, 0x01, 0x00, 0x02, 'x', 'y'}));
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(*t, "[\"xy\", true]");
}

TEST(JsonBinaryTest, OffsetPastContainerIsCorrupt) {
  auto t = Text(Bytes({0x02, 0x01, 0x00, 0x07, 0x00, 0x0c, 0x40, 0x00}));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().kind(), ErrorKind::kCorrupt);
}

TEST(JsonBinaryTest, ContainerSizePastEndIsCorrupt) {
  auto t = Text(Bytes({0x00, 0x01, 0x00, 0xff, 0x00, 0x0b, 0x00}));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message().find("container size past the end"), std::string::npos)
      << t.error().message();
}

TEST(JsonBinaryTest, DeepNestingIsAnErrorNotAStackOverflow) {
  // Arrays nested until the 16-bit size runs out, each [<next>], innermost [null].
  std::string current = Bytes({0x02, 0x01, 0x00, 0x07, 0x00, 0x04, 0x00, 0x00});
  for (int depth = 0; depth < 300; ++depth) {
    std::string payload = current.substr(1);
    auto size = static_cast<int>(7 + payload.size());
    std::string outer = Bytes({0x02, 0x01, 0x00, size & 0xff, size >> 8, 0x02, 0x07, 0x00});
    outer += payload;
    current = outer;
  }
  auto t = Text(current);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message().find("nesting too deep"), std::string::npos) << t.error().message();
}

}  // namespace
}  // namespace chsync::binlog
