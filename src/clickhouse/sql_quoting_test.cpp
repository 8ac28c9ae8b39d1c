#include "clickhouse/sql_quoting.h"

#include <gtest/gtest.h>

namespace chsync::clickhouse {
namespace {

TEST(SqlQuotingTest, Identifiers) {
  EXPECT_EQ(QuoteIdentifier("plain"), "`plain`");
  EXPECT_EQ(QuoteIdentifier("select"), "`select`");
  EXPECT_EQ(QuoteIdentifier("a`b"), "`a``b`");
  EXPECT_EQ(QuoteIdentifier("back\\slash"), "`back\\\\slash`");
  EXPECT_EQ(QuoteIdentifier(std::string("nl\n\x01", 4)), "`nl\\x0A\\x01`");
  EXPECT_EQ(QuoteIdentifier("é中😀"), "`é中😀`");
  EXPECT_EQ(QuoteIdentifier(""), "``");
  EXPECT_EQ(QualifiedName("d`b", "t"), "`d``b`.`t`");
}

TEST(SqlQuotingTest, StringLiteralsAreBinarySafe) {
  EXPECT_EQ(QuoteString("it's"), "'it\\'s'");
  EXPECT_EQ(QuoteString("a\\b"), "'a\\\\b'");
  EXPECT_EQ(QuoteString(std::string("\0\x7f\xff", 3)), "'\\x00\\x7F\xff'");
  EXPECT_EQ(QuoteString("tab\there"), "'tab\\x09here'");
}

}  // namespace
}  // namespace chsync::clickhouse
