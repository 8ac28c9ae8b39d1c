#include "common/json_text.h"

#include <gtest/gtest.h>

#include <string>

namespace chsync {
namespace {

struct EscapeCase {
  const char* name;
  std::string input;
  std::string expected;
};

TEST(JsonEscape, Table) {
  const EscapeCase cases[] = {
      {"plain", "binlog.000042:1234", "binlog.000042:1234"},
      {"empty", "", ""},
      {"quote and backslash", R"(say "hi" \ bye)", R"(say \"hi\" \\ bye)"},
      {"short escapes", "a\nb\rc\td\be\ff", R"(a\nb\rc\td\be\ff)"},
      {"other control bytes", std::string("\x01\x1f", 2) + std::string(1, '\0'), R"(\u0001\u001f\u0000)"},
      {"DEL stays", "\x7f", "\x7f"},
      {"slash stays", "a/b", "a/b"},
      {"two-byte UTF-8", "gr\xc3\xbc\xc3\x9f", "gr\xc3\xbc\xc3\x9f"},
      {"three-byte UTF-8", "\xe2\x82\xac", "\xe2\x82\xac"},
      {"four-byte UTF-8", "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},
      {"highest code point", "\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf"},
      {"stray continuation", "a\x80z", R"(a\ufffdz)"},
      {"latin-1 byte", "caf\xe9!", R"(caf\ufffd!)"},
      {"truncated at end", "x\xe2\x82", R"(x\ufffd\ufffd)"},
      {"truncated before ASCII",
       "\xe2\x82"
       "a",
       R"(\ufffd\ufffda)"},
      {"overlong two-byte", "\xc0\xaf", R"(\ufffd\ufffd)"},
      {"overlong three-byte", "\xe0\x80\xaf", R"(\ufffd\ufffd\ufffd)"},
      {"surrogate", "\xed\xa0\x80", R"(\ufffd\ufffd\ufffd)"},
      {"above U+10FFFF", "\xf4\x90\x80\x80", R"(\ufffd\ufffd\ufffd\ufffd)"},
      {"F5 lead", "\xf5", R"(\ufffd)"},
      {"FF byte", "\xff", R"(\ufffd)"},
  };
  for (const EscapeCase& c : cases) {
    EXPECT_EQ(JsonEscape(c.input), c.expected) << c.name;
  }
}

TEST(JsonEscape, StringAddsQuotes) {
  EXPECT_EQ(JsonString("a\"b"), R"("a\"b")");
  EXPECT_EQ(JsonString(""), R"("")");
}

TEST(JsonEscape, EveryByteGivesValidAsciiOrUtf8) {
  // Each single byte alone: either itself (printable ASCII), a short escape, \u00XX or \ufffd.
  for (int b = 0; b < 256; ++b) {
    std::string out = JsonEscape(std::string(1, static_cast<char>(b)));
    if (b >= 0x80) {
      EXPECT_EQ(out, "\\ufffd") << b;
    } else if (b < 0x20 || b == '"' || b == '\\') {
      EXPECT_EQ(out[0], '\\') << b;
    } else {
      EXPECT_EQ(out, std::string(1, static_cast<char>(b))) << b;
    }
  }
}

}  // namespace
}  // namespace chsync
