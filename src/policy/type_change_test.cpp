#include "policy/type_change.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "clickhouse/capabilities.h"
#include "schema/parser.h"

namespace chsync::pipe {

/// Verdict kinds by name in test failures.
void PrintTo(TypeChangeVerdict::Kind kind, std::ostream* out) {
  *out << TypeChangeKindName(kind);
}

namespace {

using Kind = TypeChangeVerdict::Kind;

const clickhouse::Capabilities kOld = clickhouse::FromVersion({18, 16, 1, 0});
const clickhouse::Capabilities kNew = clickhouse::FromVersion({26, 7, 3, 1});

/// A column from its COLUMN_TYPE text, optionally " NULL" / " NOT NULL" and " CHARSET x" at the
/// end (NOT NULL by default; character types default to utf8mb4).
schema::Column Col(std::string text) {
  bool nullable = false;
  std::string charset = "utf8mb4";
  if (size_t at = text.find(" CHARSET "); at != std::string::npos) {
    charset = text.substr(at + 9);
    text = text.substr(0, at);
  }
  if (text.ends_with(" NOT NULL")) {
    text = text.substr(0, text.size() - 9);
  } else if (text.ends_with(" NULL")) {
    nullable = true;
    text = text.substr(0, text.size() - 5);
  }
  Result<schema::Column> parsed = schema::ParseColumnType(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << (parsed.ok() ? "" : parsed.error().message());
  schema::Column c = parsed.ok() ? *parsed : schema::Column{};
  c.name = "c";
  c.nullable = nullable;
  if (schema::IsCharacterType(c.type)) c.charset = charset;
  return c;
}

struct Case {
  const char* from;
  const char* to;
  bool strict;
  Kind on_new;  ///< ClickHouse 26.7 capabilities
  Kind on_old;  ///< ClickHouse 18.16 capabilities
};

constexpr Kind U = Kind::kUnchanged;
constexpr Kind M = Kind::kModify;
constexpr Kind R = Kind::kRebuild;
constexpr bool kStrict = true;
constexpr bool kLoose = false;

const Case kCases[] = {
    // Integers: widening converts in ClickHouse; same ClickHouse type is nothing to do.
    {"int", "bigint", kLoose, M, M},
    {"int unsigned", "bigint", kLoose, M, M},
    {"tinyint unsigned", "smallint", kLoose, M, M},
    {"mediumint", "int", kLoose, U, U},
    {"tinyint(1)", "tinyint(4)", kLoose, U, U},
    {"int", "int unsigned", kLoose, R, R},
    {"int", "int unsigned", kStrict, M, M},
    {"bigint", "int", kLoose, R, R},
    {"bigint", "int", kStrict, M, M},
    {"int", "mediumint", kStrict, U, U},
    {"int", "mediumint", kLoose, R, R},
    {"bigint unsigned", "bigint", kStrict, M, M},
    {"int", "decimal(12,0)", kStrict, R, R},
    {"int", "varchar(20)", kStrict, R, R},
    {"bit(8)", "bit(16)", kLoose, U, U},
    {"bit(16)", "bit(4)", kLoose, R, R},
    {"bit(16)", "bit(4)", kStrict, U, U},
    {"bit(8)", "tinyint unsigned", kStrict, R, R},
    {"year", "year", kLoose, U, U},
    // Floating point.
    {"float", "double", kLoose, M, M},
    {"double", "float", kStrict, R, R},
    {"float(7,2)", "double", kLoose, M, M},
    {"float", "float(7,2)", kStrict, R, R},
    {"float(7,2)", "double(7,2)", kStrict, R, R},
    {"double(10,2)", "double", kLoose, U, U},
    // DECIMAL.
    {"decimal(10,2)", "decimal(12,2)", kLoose, M, M},
    {"decimal(10,2)", "decimal(12,4)", kLoose, M, M},
    {"decimal(9,2)", "decimal(20,2)", kLoose, M, M},
    {"decimal(10,2)", "decimal(11,3)", kLoose, M, M},
    {"decimal(10,2)", "decimal(10,1)", kStrict, R, R},
    {"decimal(10,2)", "decimal(10,3)", kStrict, R, R},  // one integer digit fewer: ClickHouse may throw
    {"decimal(10,2)", "decimal(8,2)", kStrict, R, R},
    {"decimal(10,2)", "decimal(8,2)", kLoose, R, R},
    {"decimal(10,2)", "decimal(10,2) unsigned", kStrict, U, U},
    {"decimal(10,2)", "decimal(10,2) unsigned", kLoose, R, R},
    {"decimal(10,2)", "decimal(12,2) unsigned", kStrict, M, M},
    {"decimal(10,2) unsigned", "decimal(10,2)", kLoose, U, U},
    {"decimal(20,2)", "decimal(40,2)", kLoose, M, R},  // String on 18.16: text digits differ
    {"decimal(40,2)", "decimal(45,2)", kLoose, M, U},  // same text on 18.16
    {"decimal(40,2)", "decimal(45,4)", kLoose, M, R},
    // Dates and times.
    {"datetime", "datetime(3)", kLoose, M, U},
    {"datetime(3)", "datetime(6)", kLoose, M, U},
    {"timestamp", "timestamp(6)", kLoose, M, U},
    {"datetime(6)", "datetime", kStrict, R, R},
    {"timestamp(3)", "timestamp(2)", kStrict, R, R},
    {"time", "time(3)", kLoose, R, R},
    {"time(3)", "time", kStrict, R, R},
    {"time(2)", "time(2)", kStrict, U, U},
    {"datetime", "timestamp", kStrict, R, R},
    {"date", "datetime", kStrict, R, R},
    {"date", "date", kStrict, U, U},
    // Text.
    {"varchar(10)", "varchar(100)", kLoose, U, U},
    {"varchar(100)", "varchar(10)", kLoose, R, R},
    {"varchar(100)", "varchar(10)", kStrict, U, U},
    {"text", "mediumtext", kLoose, U, U},
    {"text", "tinytext", kLoose, R, R},
    {"text", "tinytext", kStrict, U, U},
    {"varchar(100)", "text", kLoose, U, U},
    {"varchar(20000)", "text", kLoose, R, R},  // 80000 bytes of utf8mb4 do not fit 65535
    {"char(10)", "varchar(10)", kLoose, U, U},
    {"char(10)", "text", kLoose, U, U},
    {"char(10)", "char(20)", kLoose, U, U},
    {"varchar(10)", "char(10)", kStrict, R, R},
    {"varchar(10) CHARSET latin1", "varchar(10) CHARSET utf8mb4", kLoose, U, U},
    {"text CHARSET latin1", "text CHARSET utf8mb4", kLoose, R, R},  // é takes 2 bytes: may not fit
    {"text CHARSET latin1", "mediumtext CHARSET utf8mb4", kLoose, U, U},
    {"varchar(10) CHARSET utf8mb3", "varchar(10) CHARSET utf8mb4", kLoose, U, U},
    {"varchar(10) CHARSET utf8mb4", "varchar(10) CHARSET latin1", kLoose, R, R},
    {"varchar(10) CHARSET utf8mb4", "varchar(10) CHARSET latin1", kStrict, U, U},
    {"varchar(10) CHARSET big5", "varchar(10) CHARSET utf8mb4", kStrict, R, R},
    {"varchar(10) CHARSET utf8mb4", "varchar(10) CHARSET binary", kStrict, R, R},
    {"varchar(10)", "varbinary(40)", kStrict, R, R},
    {"json", "json", kStrict, U, U},
    {"json", "longtext", kStrict, R, R},
    // Bytes.
    {"varbinary(10)", "varbinary(100)", kLoose, U, U},
    {"varbinary(10)", "blob", kLoose, U, U},
    {"blob", "tinyblob", kLoose, R, R},
    {"blob", "tinyblob", kStrict, U, U},
    {"binary(4)", "varbinary(6)", kLoose, U, U},
    {"binary(4)", "blob", kLoose, U, U},
    {"binary(4)", "binary(6)", kStrict, R, R},
    {"varbinary(6)", "binary(6)", kStrict, R, R},
    {"binary(4)", "varbinary(2)", kStrict, R, R},
    // ENUM and SET.
    {"enum('a','b')", "enum('a','b','c')", kLoose, M, M},
    {"enum('a','b')", "enum('b','a')", kStrict, R, R},
    {"enum('a','b','c')", "enum('a','b')", kStrict, R, R},
    {"enum('a','b')", "enum('a','b','')", kStrict, R, R},
    {"enum('a','b')", "enum('A','b')", kStrict, R, R},
    {"set('a','b')", "set('a','b','c')", kLoose, U, U},
    {"set('a','b')", "set('b','a')", kStrict, R, R},
    {"set('a','b')", "set('a')", kStrict, R, R},
    // Nullability.
    {"int NOT NULL", "int NULL", kLoose, M, M},
    {"int NOT NULL", "bigint NULL", kLoose, M, M},
    {"varchar(10) NOT NULL", "varchar(20) NULL", kLoose, M, M},
    {"int NULL", "bigint NULL", kLoose, M, M},
    {"int NULL", "int NOT NULL", kLoose, R, R},
    {"int NULL", "int NOT NULL", kStrict, R, R},
    {"enum('a') NULL", "enum('a','b') NULL", kLoose, M, M},
    // Other types.
    {"point", "geometry", kLoose, U, U},
    {"geometry", "point", kStrict, R, R},
    {"uuid", "uuid", kLoose, U, U},
    {"inet6", "inet6", kLoose, U, U},
    {"inet4", "inet6", kStrict, R, R},
};

TEST(TypeChangeTest, Table) {
  for (const Case& c : kCases) {
    schema::Column from = Col(c.from);
    schema::Column to = Col(c.to);
    TypeChangeVerdict on_new = ClassifyTypeChange(from, to, c.strict, kNew);
    TypeChangeVerdict on_old = ClassifyTypeChange(from, to, c.strict, kOld);
    std::string what = std::string(c.from) + " → " + c.to + (c.strict ? " (strict)" : " (non-strict)");
    EXPECT_EQ(on_new.kind, c.on_new) << what << " on 26.7: " << on_new.reason;
    EXPECT_EQ(on_old.kind, c.on_old) << what << " on 18.16: " << on_old.reason;
    EXPECT_FALSE(on_new.reason.empty()) << what;
  }
}

TEST(TypeChangeTest, DateTimeKeptAsTextRebuildsWhenItsTextChanges) {
  clickhouse::Capabilities text = kOld;
  text.datetime_fallback_text = true;
  // The width of the fraction is part of the text chsync writes: ClickHouse cannot pad it.
  TypeChangeVerdict v = ClassifyTypeChange(Col("datetime(3)"), Col("datetime(6)"), false, text);
  EXPECT_EQ(v.kind, Kind::kRebuild) << v.reason;
  // DateTime → String would print no fraction digits at all.
  v = ClassifyTypeChange(Col("datetime"), Col("datetime(3)"), false, text);
  EXPECT_EQ(v.kind, Kind::kRebuild) << v.reason;
  EXPECT_NE(v.reason.find("datetime_fallback"), std::string::npos) << v.reason;
  v = ClassifyTypeChange(Col("datetime(3)"), Col("datetime(3) NULL"), false, text);
  EXPECT_EQ(v.kind, Kind::kModify) << v.reason;
  v = ClassifyTypeChange(Col("datetime(3)"), Col("datetime(3)"), false, text);
  EXPECT_EQ(v.kind, Kind::kUnchanged) << v.reason;
}

TEST(TypeChangeTest, ReasonNamesTypesAndCause) {
  TypeChangeVerdict v = ClassifyTypeChange(Col("datetime(6)"), Col("datetime"), true, kNew);
  EXPECT_EQ(v.kind, Kind::kRebuild);
  EXPECT_NE(v.reason.find("datetime(6)"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("fractional"), std::string::npos) << v.reason;

  v = ClassifyTypeChange(Col("int"), Col("bigint"), false, kNew);
  EXPECT_NE(v.reason.find("Int32 → Int64"), std::string::npos) << v.reason;
}

TEST(TypeChangeTest, GeneratedExpressionChangeRebuilds) {
  schema::Column from = Col("int");
  from.generated = schema::GeneratedKind::kStored;
  from.generation_expression = "a + 1";
  schema::Column to = from;
  to.generation_expression = "a + 2";
  EXPECT_EQ(ClassifyTypeChange(from, to, true, kNew).kind, Kind::kRebuild);
  EXPECT_EQ(ClassifyTypeChange(from, from, true, kNew).kind, Kind::kUnchanged);
}

TEST(TypeChangeTest, CollationChangeWithinCharsetIsUnchanged) {
  schema::Column from = Col("varchar(10)");
  from.collation = "utf8mb4_general_ci";
  schema::Column to = from;
  to.collation = "utf8mb4_bin";
  EXPECT_EQ(ClassifyTypeChange(from, to, false, kNew).kind, Kind::kUnchanged);
  // Charset known only from the collation.
  from.charset.clear();
  to.charset.clear();
  to.collation = "latin1_swedish_ci";
  EXPECT_EQ(ClassifyTypeChange(from, to, false, kNew).kind, Kind::kRebuild);
  EXPECT_EQ(ClassifyTypeChange(from, to, true, kNew).kind, Kind::kUnchanged);
}

TEST(TypeChangeTest, UnknownCharsetRebuilds) {
  schema::Column from = Col("varchar(10)");
  schema::Column to = from;
  from.charset.clear();
  EXPECT_EQ(ClassifyTypeChange(from, to, true, kNew).kind, Kind::kRebuild);
}

// Under json: native a change to or from JSON copies the table again: ClickHouse's MODIFY would
// write its own text of each document, or fail on text that is not a JSON object.
TEST(TypeChangeTest, ChangesToAndFromNativeJsonRebuild) {
  clickhouse::Capabilities native = kNew;
  native.json_native = true;
  schema::Column mariadb_json = Col("longtext NULL");
  mariadb_json.json_valid_check = true;
  TypeChangeVerdict v = ClassifyTypeChange(Col("longtext NULL"), mariadb_json, true, native);
  EXPECT_EQ(v.kind, Kind::kRebuild) << v.reason;
  EXPECT_NE(v.reason.find("json: native"), std::string::npos) << v.reason;
  v = ClassifyTypeChange(Col("json NULL"), Col("text NULL"), true, native);
  EXPECT_EQ(v.kind, Kind::kRebuild) << v.reason;
  v = ClassifyTypeChange(Col("json NOT NULL"), Col("json NULL"), true, native);
  EXPECT_EQ(v.kind, Kind::kModify) << v.reason;
  // As text (json: string) nothing changes in ClickHouse.
  v = ClassifyTypeChange(Col("longtext NULL"), mariadb_json, true, kNew);
  EXPECT_EQ(v.kind, Kind::kUnchanged) << v.reason;
}

}  // namespace
}  // namespace chsync::pipe
