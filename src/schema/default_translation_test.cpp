#include "schema/default_translation.h"

#include <gtest/gtest.h>

#include "schema/parser.h"

namespace chsync::schema {
namespace {

struct Case {
  const char* column;  ///< column definition as written in CREATE TABLE
  bool full_metadata;
  const char* literal;  ///< expected ClickHouse literal, or nullptr when omitted
  const char* reason;   ///< expected substring of the omission reason
};

Column ParseColumn(const std::string& definition) {
  auto st = ParseStatement("CREATE TABLE t (" + definition + ")");
  EXPECT_TRUE(st.ok()) << definition << ": " << (st.ok() ? "" : st.error().message());
  if (!st.ok() || st->columns.empty()) return {};
  return st->columns[0].column;
}

const Case kCases[] = {
    // Integer, decimal and float literals with sign.
    {"c INT DEFAULT 5", true, "5", nullptr},
    {"c INT DEFAULT -5", true, "-5", nullptr},
    {"c INT DEFAULT +7", true, "7", nullptr},
    {"c INT DEFAULT 0", true, "0", nullptr},
    {"c INT DEFAULT -0", true, "0", nullptr},
    {"c BIGINT UNSIGNED DEFAULT 18446744073709551615", true, "18446744073709551615", nullptr},
    {"c BIGINT DEFAULT -9223372036854775808", true, "-9223372036854775808", nullptr},
    {"c TINYINT DEFAULT 128", true, nullptr, "out of range"},
    {"c TINYINT UNSIGNED DEFAULT -1", true, nullptr, "out of range"},
    {"c INT DEFAULT 1.5", true, nullptr, "fraction"},
    {"c INT DEFAULT '42'", true, "42", nullptr},
    {"c DOUBLE DEFAULT 1e5", true, "1e5", nullptr},
    {"c FLOAT DEFAULT -2.5E-3", true, "-2.5E-3", nullptr},
    {"c DOUBLE DEFAULT .5", true, "0.5", nullptr},
    {"c DECIMAL(10,2) DEFAULT 1.50", true, "1.50", nullptr},
    {"c DECIMAL(10,2) DEFAULT -3", true, "-3", nullptr},
    {"c DECIMAL(10,2) DEFAULT 1.505", true, nullptr, "more decimals"},
    {"c DECIMAL(3,1) DEFAULT 123.4", true, nullptr, "out of range"},
    {"c DECIMAL(10,2) DEFAULT 1e5", true, nullptr, "exponent"},
    // Booleans.
    {"c BOOL DEFAULT TRUE", true, "1", nullptr},
    {"c BOOLEAN DEFAULT false", true, "0", nullptr},
    {"c VARCHAR(10) DEFAULT TRUE", true, nullptr, "TRUE as a default"},
    // Strings.
    {"c VARCHAR(20) DEFAULT 'hello'", true, "'hello'", nullptr},
    {"c VARCHAR(20) DEFAULT 'it''s'", true, "'it\\'s'", nullptr},
    {"c VARCHAR(20) DEFAULT \"say \"\"hi\"\"\"", true, "'say \"hi\"'", nullptr},
    {"c VARCHAR(20) DEFAULT 'a\\\\b'", true, nullptr, "backslash"},
    {"c VARCHAR(20) DEFAULT 'tab\\there'", true, nullptr, "control character"},
    {"c VARCHAR(20) DEFAULT 'line\nbreak'", true, nullptr, "control character"},
    {"c VARCHAR(20) DEFAULT _utf8mb4'x'", true, "'x'", nullptr},
    {"c VARCHAR(20) DEFAULT _latin1'x' COLLATE latin1_bin", true, "'x'", nullptr},
    {"c VARCHAR(20) DEFAULT N'nat'", true, "'nat'", nullptr},
    {"c VARCHAR(20) DEFAULT 'a' 'b'", true, "'ab'", nullptr},
    {"c VARCHAR(20) DEFAULT ''", true, "''", nullptr},
    {"c VARCHAR(20) DEFAULT 1.50", true, "'1.50'", nullptr},
    {"c TEXT DEFAULT 'x'", true, "'x'", nullptr},
    {"c BINARY(3) DEFAULT 'ab'", true, nullptr, "pads"},
    {"c VARBINARY(3) DEFAULT 'ab'", true, "'ab'", nullptr},
    // Bit and hex literals.
    {"c BIT(3) DEFAULT b'101'", true, nullptr, "bit literal"},
    {"c BIT(8) DEFAULT 0b101", true, nullptr, "bit literal"},
    {"c VARBINARY(4) DEFAULT 0x41", true, nullptr, "hexadecimal literal"},
    {"c VARCHAR(4) DEFAULT X'41'", true, nullptr, "hexadecimal literal"},
    {"c BIT(3) DEFAULT 5", true, "5", nullptr},
    {"c BIT(2) DEFAULT 5", true, nullptr, "does not fit"},
    // NULL and functions.
    {"c INT DEFAULT NULL", true, nullptr, "NULL"},
    {"c INT NULL", true, nullptr, "no default"},
    {"c DATETIME(6) DEFAULT CURRENT_TIMESTAMP(6)", true, nullptr, "CURRENT_TIMESTAMP(6)"},
    {"c TIMESTAMP DEFAULT CURRENT_TIMESTAMP", true, nullptr, "CURRENT_TIMESTAMP"},
    {"c DATETIME DEFAULT NOW()", true, nullptr, "CURRENT_TIMESTAMP"},
    {"c DATETIME DEFAULT (now())", true, nullptr, "expression default (now())"},
    {"c CHAR(36) DEFAULT (UUID())", true, nullptr, "expression default (UUID())"},
    {"c VARCHAR(3) DEFAULT ('x')", true, nullptr, "expression default ('x')"},
    {"c INT DEFAULT (1 + 2)", true, nullptr, "expression"},
    {"c CHAR(36) DEFAULT uuid()", true, nullptr, "expression default (uuid())"},
    {"c INT DEFAULT 1 + 2", true, nullptr, "expression default (1 + 2)"},
    // Dates and datetimes.
    {"c DATE DEFAULT '2024-01-31'", true, "'2024-01-31'", nullptr},
    {"c DATE DEFAULT '2024-02-30'", true, nullptr, "day out of range"},
    {"c DATE DEFAULT '2024-02-29'", true, "'2024-02-29'", nullptr},
    {"c DATE DEFAULT '0000-00-00'", true, nullptr, "zero date"},
    {"c DATE DEFAULT DATE '2020-05-01'", true, "'2020-05-01'", nullptr},
    {"c DATETIME DEFAULT '2024-01-31 10:20:30'", true, "'2024-01-31 10:20:30'", nullptr},
    {"c DATETIME DEFAULT '2024-01-31'", true, "'2024-01-31 00:00:00'", nullptr},
    {"c DATETIME(3) DEFAULT '2024-01-31 10:20:30.125'", true, "'2024-01-31 10:20:30.125'", nullptr},
    {"c DATETIME DEFAULT '2024-01-31 10:20:30.5'", true, nullptr, "fractional"},
    {"c DATETIME DEFAULT '0000-00-00 00:00:00'", true, nullptr, "zero date"},
    {"c DATETIME DEFAULT '2024-01-31 25:00:00'", true, nullptr, "out of range"},
    {"c TIMESTAMP DEFAULT '2024-01-31 10:20:30'", true, nullptr, "time zone"},
    {"c TIME DEFAULT '10:00:00'", true, nullptr, "TIME"},
    {"c YEAR DEFAULT 2024", true, "2024", nullptr},
    {"c YEAR DEFAULT '24'", true, "2024", nullptr},
    // ENUM and SET, with and without full metadata.
    {"c ENUM('a','b') DEFAULT 'b'", true, "'b'", nullptr},
    {"c ENUM('a','b') DEFAULT 'b'", false, nullptr, "binlog_row_metadata=FULL"},
    {"c ENUM('a','b') DEFAULT 'z'", true, nullptr, "not a member"},
    {"c SET('x','y','z') DEFAULT 'x,z'", true, "'x,z'", nullptr},
    {"c SET('x','y','z') DEFAULT 'x,z'", false, nullptr, "binlog_row_metadata=FULL"},
    {"c SET('x','y') DEFAULT ''", true, "''", nullptr},
    // Types without a portable literal.
    {"c GEOMETRY DEFAULT 'x'", true, nullptr, "no portable"},
    {"c JSON DEFAULT ('{}')", true, nullptr, "expression"},
};

TEST(DefaultTranslationTest, Table) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.column);
    Column column = ParseColumn(c.column);
    DefaultTranslation t = TranslateDefault(column, c.full_metadata);
    if (c.literal != nullptr) {
      EXPECT_TRUE(t.propagated) << t.reason;
      EXPECT_EQ(t.literal, c.literal);
      EXPECT_TRUE(t.reason.empty());
    } else {
      EXPECT_FALSE(t.propagated) << t.literal;
      EXPECT_NE(t.reason.find(c.reason), std::string::npos) << "reason: " << t.reason;
      EXPECT_TRUE(t.literal.empty());
    }
  }
}

TEST(DefaultTranslationTest, NoBackslashEscapesKeepsBackslashAndOmits) {
  LexOptions options = LexOptionsFromSqlMode("NO_BACKSLASH_ESCAPES");
  auto st = ParseStatement("CREATE TABLE t (c VARCHAR(9) DEFAULT 'a\\nb')", options);
  ASSERT_TRUE(st.ok()) << st.error().message();
  EXPECT_EQ(st->columns[0].column.default_value.text, "a\\nb");
  DefaultTranslation t = TranslateDefault(st->columns[0].column, true);
  EXPECT_FALSE(t.propagated);
  EXPECT_NE(t.reason.find("backslash"), std::string::npos);
}

TEST(DefaultTranslationTest, QuoteClickHouseString) {
  EXPECT_EQ(QuoteClickHouseString("plain"), "'plain'");
  EXPECT_EQ(QuoteClickHouseString("it's"), "'it\\'s'");
  EXPECT_EQ(QuoteClickHouseString("a\\b"), "'a\\\\b'");
  EXPECT_EQ(QuoteClickHouseString(""), "''");
}

}  // namespace
}  // namespace chsync::schema
