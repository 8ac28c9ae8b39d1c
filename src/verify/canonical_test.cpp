#include "verify/canonical.h"

#include <gtest/gtest.h>

#include "clickhouse/server_version.h"

namespace chsync::verify {
namespace {

schema::Column Col(std::string name, schema::ColumnType type, bool nullable = false) {
  schema::Column c;
  c.name = std::move(name);
  c.type = type;
  c.nullable = nullable;
  if (schema::IsCharacterType(type)) c.charset = "utf8mb4";
  return c;
}

clickhouse::Capabilities Old() {
  return clickhouse::FromVersion(clickhouse::ServerVersion{18, 16});
}
clickhouse::Capabilities New() {
  return clickhouse::FromVersion(clickhouse::ServerVersion{26, 7});
}

TEST(CanonicalTest, IntegersAreTheirDecimalText) {
  auto c = CanonicalColumn(Col("id", schema::ColumnType::kBigInt), "id", New(), {});
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->source_sql, "`id`");
  EXPECT_EQ(c->dest_sql, "toString(`id`)");
  EXPECT_EQ(c->exactness, Exactness::kExact);
}

TEST(CanonicalTest, NullIsNOnBothSides) {
  auto c = CanonicalColumn(Col("n", schema::ColumnType::kInt, true), "n", New(), {});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->source_sql, "IF(`n` IS NULL, 'N', `n`)");
  EXPECT_EQ(c->dest_sql, "if(isNull(`n`), 'N', toString(assumeNotNull(`n`)))");
}

TEST(CanonicalTest, TextCarriesItsLengthAndIsUtf8) {
  auto c = CanonicalColumn(Col("s", schema::ColumnType::kVarChar), "s_ch", New(), {});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->source_sql, "CONCAT(LENGTH(`s`), ':', `s`)");
  schema::Column latin1 = Col("l", schema::ColumnType::kVarChar);
  latin1.charset = "latin1";
  auto l = CanonicalColumn(latin1, "l", New(), {});
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->source_sql, "CONCAT(LENGTH(CONVERT(`l` USING utf8mb4)), ':', CONVERT(`l` USING utf8mb4))");
  EXPECT_EQ(c->dest_sql, "concat(toString(length(`s_ch`)), ':', `s_ch`)");
  EXPECT_TRUE(c->prefixed);
  auto b = CanonicalColumn(Col("b", schema::ColumnType::kVarBinary), "b", New(), {});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->source_sql, "CONCAT(LENGTH(`b`), ':', `b`)");
}

TEST(CanonicalTest, DatetimeFractionsAreLossyOnOldServers) {
  schema::Column dt = Col("t", schema::ColumnType::kDateTime);
  dt.fsp = 3;
  auto old_server = CanonicalColumn(dt, "t", Old(), {});
  ASSERT_TRUE(old_server.ok());
  EXPECT_EQ(old_server->exactness, Exactness::kLossy);
  EXPECT_NE(old_server->source_sql.find("DATE_FORMAT(`t`, '%Y-%m-%d %H:%i:%s')"), std::string::npos);
  auto new_server = CanonicalColumn(dt, "t", New(), {});
  ASSERT_TRUE(new_server.ok());
  EXPECT_EQ(new_server->exactness, Exactness::kExact);
  EXPECT_NE(new_server->source_sql.find("'1970-01-01 00:00:00.000'"), std::string::npos);
}

TEST(CanonicalTest, DatesClampAsChsyncWritesThem) {
  auto old_server = CanonicalColumn(Col("d", schema::ColumnType::kDate), "d", Old(), {});
  ASSERT_TRUE(old_server.ok());
  EXPECT_NE(old_server->source_sql.find("'2105-12-31'"), std::string::npos);
  EXPECT_NE(old_server->dest_sql.find("toUInt16(`d`) = 0"), std::string::npos);
  auto new_server = CanonicalColumn(Col("d", schema::ColumnType::kDate), "d", New(), {});
  ASSERT_TRUE(new_server.ok());
  EXPECT_NE(new_server->source_sql.find("'1900-01-01'"), std::string::npos);
}

TEST(CanonicalTest, NamesWhatIsNotExact) {
  struct Case {
    schema::ColumnType type;
    Exactness expected;
  };
  for (const Case& c : std::vector<Case>{{schema::ColumnType::kDouble, Exactness::kApproximate},
                                         {schema::ColumnType::kFloat, Exactness::kApproximate},
                                         {schema::ColumnType::kPoint, Exactness::kApproximate},
                                         {schema::ColumnType::kJson, Exactness::kExact},
                                         {schema::ColumnType::kDecimal, Exactness::kExact},
                                         {schema::ColumnType::kTime, Exactness::kExact}}) {
    schema::Column col = Col("c", c.type);
    if (c.type == schema::ColumnType::kDecimal) {
      col.precision = 10;
      col.scale = 2;
    }
    if (c.type == schema::ColumnType::kTime) col.fsp = 0;
    auto canon = CanonicalColumn(col, "c", New(), {});
    ASSERT_TRUE(canon.ok()) << schema::ColumnTypeName(c.type) << ": " << canon.error().message();
    EXPECT_EQ(canon->exactness, c.expected) << schema::ColumnTypeName(c.type);
    EXPECT_EQ(canon->note.empty(), c.expected == Exactness::kExact) << schema::ColumnTypeName(c.type);
  }
  auto mysql_json = CanonicalColumn(Col("j", schema::ColumnType::kJson), "j", New(), SourceFlavor{false});
  ASSERT_TRUE(mysql_json.ok());
  EXPECT_EQ(mysql_json->exactness, Exactness::kApproximate);
}

TEST(CanonicalTest, DecimalsPrintTheirFractionAsEachVersionCan) {
  schema::Column dec = Col("m", schema::ColumnType::kDecimal);
  dec.precision = 30;
  dec.scale = 2;
  // 18.16 prints S digits, but its Decimal128 toString breaks above ~10^21: printed in two parts.
  auto old_server = CanonicalColumn(dec, "m", Old(), {});
  ASSERT_TRUE(old_server.ok()) << old_server.error().message();
  EXPECT_EQ(old_server->source_sql, "CAST(`m` AS CHAR)");
  EXPECT_NE(old_server->dest_sql.find("toDecimal128(1000000000000000000, 0)"), std::string::npos);
  // 26.7: toDecimalString prints S digits.
  auto new_server = CanonicalColumn(dec, "m", New(), {});
  ASSERT_TRUE(new_server.ok());
  EXPECT_EQ(new_server->source_sql, "CAST(`m` AS CHAR)");
  EXPECT_EQ(new_server->dest_sql, "toDecimalString(`m`, 2)");
  // 22.8 drops trailing zeros and has no toDecimalString: both sides drop them.
  auto between = CanonicalColumn(dec, "m", clickhouse::FromVersion(clickhouse::ServerVersion{22, 8}), {});
  ASSERT_TRUE(between.ok());
  EXPECT_NE(between->source_sql.find("TRIM(TRAILING '0'"), std::string::npos);
  EXPECT_NE(between->dest_sql.find("replaceRegexpOne"), std::string::npos);
}

TEST(CanonicalTest, EnumsCompareTheirIndex) {
  schema::Column e = Col("e", schema::ColumnType::kEnum);
  e.enum_values = {"a", "b"};
  auto c = CanonicalColumn(e, "e", New(), {});
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->source_sql, "(`e` + 0)");
  EXPECT_EQ(c->dest_sql, "toString(toInt16(`e`))");
}

TEST(CanonicalTest, HashesTakeTheSameBitsOfMd5) {
  EXPECT_EQ(SourceHash64("x"), "CAST(CONV(SUBSTR(SHA1(x), 1, 16), 16, 10) AS UNSIGNED)");
  EXPECT_EQ(DestHash64("x"), "reinterpretAsUInt64(reverse(substring(SHA1(x), 1, 8)))");
  EXPECT_EQ(SourceConcat({"a", "b"}), "CONCAT(a, ',', b)");
  EXPECT_EQ(DestConcat({"a", "b"}), "concat(a, ',', b)");
  EXPECT_EQ(DestConcat({"a"}), "toString(a)");
}

TEST(CanonicalTest, DisplayCell) {
  EXPECT_EQ(DisplayCell("N", true), "NULL");
  EXPECT_EQ(DisplayCell("N", false), "NULL");
  EXPECT_EQ(DisplayCell("3:a:b", true), "a:b");
  EXPECT_EQ(DisplayCell("01:02:03", false), "01:02:03");
  EXPECT_EQ(DisplayCell("0:", true), "");
}

}  // namespace
}  // namespace chsync::verify
