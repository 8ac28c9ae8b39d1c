#include "verify/canonical.h"

#include <gtest/gtest.h>

#include "clickhouse/server_version.h"
#include "clickhouse/type_mapping.h"

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

// A shared table's column is as wide as its widest source (docs/mapping.md, "Many sources into one
// table"): a DECIMAL(10,2) source's 1.50 is 1.500000 in a Decimal(20, 6). Both sides then print
// the value without trailing fraction zeros, on every version; the destination at its own scale
// (printing it at the source's would hide digits the source cannot have).
TEST(CanonicalTest, ADecimalInAWiderSharedColumnIsComparedByValue) {
  schema::Column dec = Col("amount", schema::ColumnType::kDecimal);
  dec.precision = 10;
  dec.scale = 2;
  const std::string trimmed_source = "TRIM(TRAILING '.' FROM TRIM(TRAILING '0' FROM CAST(`amount` AS CHAR)))";
  auto old_server = CanonicalColumn(dec, "amount", Old(), {}, "Decimal(20, 6)");
  ASSERT_TRUE(old_server.ok()) << old_server.error().message();
  EXPECT_EQ(old_server->source_sql, trimmed_source);
  EXPECT_EQ(old_server->dest_sql,
            "replaceRegexpOne(replaceRegexpOne(toString(`amount`), '(\\\\.[0-9]*?)0+$', '\\\\1'), "
            "'\\\\.$', '')");
  EXPECT_EQ(old_server->exactness, Exactness::kExact);
  auto new_server = CanonicalColumn(dec, "amount", New(), {}, "Decimal(20, 6)");
  ASSERT_TRUE(new_server.ok());
  EXPECT_EQ(new_server->source_sql, trimmed_source);
  EXPECT_NE(new_server->dest_sql.find("replaceRegexpOne(toDecimalString(`amount`, 6)"), std::string::npos)
      << new_server->dest_sql;
  // Without a fraction at the source there are no zeros to trim there ("100" stays "100").
  schema::Column whole = Col("n", schema::ColumnType::kDecimal);
  whole.precision = 10;
  whole.scale = 0;
  auto widened_whole = CanonicalColumn(whole, "n", Old(), {}, "Decimal(16, 6)");
  ASSERT_TRUE(widened_whole.ok());
  EXPECT_EQ(widened_whole->source_sql, "CAST(`n` AS CHAR)");
  EXPECT_NE(widened_whole->dest_sql.find("replaceRegexpOne"), std::string::npos);
  // A source Decimal128 on 18.16 is printed in two parts, then trimmed.
  schema::Column wide = dec;
  wide.precision = 30;
  auto wide_old = CanonicalColumn(wide, "amount", Old(), {}, "Decimal(34, 6)");
  ASSERT_TRUE(wide_old.ok());
  EXPECT_NE(wide_old->dest_sql.find("toDecimal128(1000000000000000000, 0)"), std::string::npos);
  EXPECT_EQ(wide_old->dest_sql.rfind("replaceRegexpOne(replaceRegexpOne(concat(", 0), 0u)
      << wide_old->dest_sql;
  EXPECT_EQ(wide_old->source_sql, trimmed_source);
}

// The column's own type, given or not, prints as before: S digits on 18.16 and 26.7.
TEST(CanonicalTest, TheMappedTypeGivenAsTheDestinationsChangesNothing) {
  schema::Column dec = Col("m", schema::ColumnType::kDecimal);
  dec.precision = 10;
  dec.scale = 2;
  schema::Column dt = Col("t", schema::ColumnType::kDateTime, true);
  dt.fsp = 3;
  for (const clickhouse::Capabilities& caps : {Old(), New()}) {
    for (const schema::Column& column : {dec, dt, Col("i", schema::ColumnType::kInt)}) {
      auto mapped = clickhouse::MapColumn(column, caps);
      ASSERT_TRUE(mapped.ok());
      auto plain = CanonicalColumn(column, "c", caps, {});
      auto given = CanonicalColumn(column, "c", caps, {}, mapped->type);
      ASSERT_TRUE(plain.ok());
      ASSERT_TRUE(given.ok());
      EXPECT_EQ(plain->source_sql, given->source_sql) << mapped->type;
      EXPECT_EQ(plain->dest_sql, given->dest_sql) << mapped->type;
    }
  }
  // A type it cannot read, or narrower than the source's, is taken as MapColumn maps the column.
  auto odd = CanonicalColumn(dec, "m", New(), {}, "Decimal(8, 1)");
  ASSERT_TRUE(odd.ok());
  EXPECT_EQ(odd->dest_sql, "toDecimalString(`m`, 2)");
}

// DATETIME in a DateTime64(6) another source's DATETIME(6) made: the source prints its value at
// the destination's precision ("… 10:00:00.000000").
TEST(CanonicalTest, ADatetimeInAWiderSharedColumnPrintsAtItsPrecision) {
  schema::Column dt = Col("at", schema::ColumnType::kDateTime);
  dt.fsp = 0;
  auto c = CanonicalColumn(dt, "at", New(), {}, "DateTime64(6, 'UTC')");
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_NE(c->source_sql.find("CAST(CAST(`at` AS DATETIME(6)) AS CHAR)"), std::string::npos)
      << c->source_sql;
  EXPECT_NE(c->source_sql.find("'1970-01-01 00:00:00.000000'"), std::string::npos) << c->source_sql;
  EXPECT_EQ(c->dest_sql, "toString(`at`)");
  EXPECT_EQ(c->exactness, Exactness::kExact);
  // DATETIME(3) into DateTime64(6).
  dt.fsp = 3;
  auto milli = CanonicalColumn(dt, "at", New(), {}, "Nullable(DateTime64(6, 'UTC'))");
  ASSERT_TRUE(milli.ok());
  EXPECT_NE(milli->source_sql.find("AS DATETIME(6)"), std::string::npos) << milli->source_sql;
  EXPECT_EQ(milli->dest_sql, "if(isNull(`at`), 'N', toString(assumeNotNull(`at`)))");
}

// A NOT NULL source column in a Nullable shared column (another source's is NULL-able): the
// destination side reads it as Nullable; this source's rows never hold NULL.
TEST(CanonicalTest, ANotNullColumnInANullableSharedColumn) {
  auto c = CanonicalColumn(Col("n", schema::ColumnType::kInt), "n", Old(), {}, "Nullable(Int64)");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->source_sql, "`n`");
  EXPECT_EQ(c->dest_sql, "if(isNull(`n`), 'N', toString(assumeNotNull(`n`)))");
  schema::Column f = Col("f", schema::ColumnType::kFloat);
  auto fl = CanonicalColumn(f, "f", New(), {}, "LowCardinality(Nullable(Float64))");
  ASSERT_TRUE(fl.ok());
  EXPECT_EQ(fl->source_sql, "CAST(`f` AS DOUBLE)");
  EXPECT_EQ(fl->dest_sql, "if(isNull(`f`), 'N', toString(toFloat64(assumeNotNull(`f`))))");
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
