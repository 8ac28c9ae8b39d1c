#include "clickhouse/type_mapping.h"

#include <gtest/gtest.h>

#include "clickhouse/test_columns.h"

namespace chsync::clickhouse {
namespace {

using schema::ColumnType;
using testing::Col;

const Capabilities kOld = FromVersion({18, 16, 1, 0});
const Capabilities kNew = FromVersion({26, 7, 3, 1});

struct Case {
  schema::Column column;
  const char* on_old;  // ClickHouse 18.16
  const char* on_new;  // ClickHouse 26.7
};

TEST(TypeMappingTest, EveryMySqlTypeOnBothVersions) {
  const Case cases[] = {
      {Col("a", ColumnType::kTinyInt).NotNull(), "Int8", "Int8"},
      {Col("a", ColumnType::kTinyInt).Unsigned().NotNull(), "UInt8", "UInt8"},
      {Col("a", ColumnType::kTinyInt).Length(1).NotNull(), "Int8", "Int8"},
      {Col("a", ColumnType::kSmallInt).NotNull(), "Int16", "Int16"},
      {Col("a", ColumnType::kSmallInt).Unsigned().NotNull(), "UInt16", "UInt16"},
      {Col("a", ColumnType::kMediumInt).NotNull(), "Int32", "Int32"},
      {Col("a", ColumnType::kMediumInt).Unsigned().NotNull(), "UInt32", "UInt32"},
      {Col("a", ColumnType::kInt).NotNull(), "Int32", "Int32"},
      {Col("a", ColumnType::kInt).Unsigned().NotNull(), "UInt32", "UInt32"},
      {Col("a", ColumnType::kBigInt).NotNull(), "Int64", "Int64"},
      {Col("a", ColumnType::kBigInt).Unsigned().NotNull(), "UInt64", "UInt64"},
      {Col("a", ColumnType::kFloat).NotNull(), "Float32", "Float32"},
      {Col("a", ColumnType::kDouble).NotNull(), "Float64", "Float64"},
      {Col("a", ColumnType::kDecimal).Precision(10, 2).NotNull(), "Decimal(10, 2)", "Decimal(10, 2)"},
      {Col("a", ColumnType::kDecimal).Precision(38, 10).NotNull(), "Decimal(38, 10)", "Decimal(38, 10)"},
      {Col("a", ColumnType::kDecimal).Precision(65, 30).NotNull(), "String", "Decimal(65, 30)"},
      {Col("a", ColumnType::kBit).Length(5).NotNull(), "UInt64", "UInt64"},
      {Col("a", ColumnType::kYear).NotNull(), "UInt16", "UInt16"},
      {Col("a", ColumnType::kDate).NotNull(), "Date", "Date32"},
      {Col("a", ColumnType::kDateTime).Fsp(0).NotNull(), "DateTime('UTC')", "DateTime64(0, 'UTC')"},
      {Col("a", ColumnType::kDateTime).Fsp(6).NotNull(), "DateTime('UTC')", "DateTime64(6, 'UTC')"},
      {Col("a", ColumnType::kTimestamp).Fsp(3).NotNull(), "DateTime('UTC')", "DateTime64(3, 'UTC')"},
      {Col("a", ColumnType::kTime).Fsp(2).NotNull(), "String", "String"},
      {Col("a", ColumnType::kChar).Length(3).NotNull(), "String", "String"},
      {Col("a", ColumnType::kVarChar).Length(300).NotNull(), "String", "String"},
      {Col("a", ColumnType::kBinary).Length(16).NotNull(), "String", "String"},
      {Col("a", ColumnType::kVarBinary).Length(16).NotNull(), "String", "String"},
      {Col("a", ColumnType::kLongBlob).NotNull(), "String", "String"},
      {Col("a", ColumnType::kMediumText).NotNull(), "String", "String"},
      {Col("a", ColumnType::kJson).NotNull(), "String", "String"},
      {Col("a", ColumnType::kEnum).Labels({"x", "y'z"}).NotNull(), "Enum8('' = 0, 'x' = 1, 'y\\'z' = 2)",
       "Enum8('' = 0, 'x' = 1, 'y\\'z' = 2)"},
      {Col("a", ColumnType::kEnum).Labels({"", "b"}).NotNull(), "Enum8('' = 1, 'b' = 2)",
       "Enum8('' = 1, 'b' = 2)"},
      {Col("a", ColumnType::kSet).Labels({"a", "b"}).NotNull(), "String", "String"},
      {Col("a", ColumnType::kGeometry).NotNull(), "String", "String"},
      {Col("a", ColumnType::kPoint).NotNull(), "String", "String"},
      {Col("a", ColumnType::kVector).Length(3).NotNull(), "Array(Float32)", "Array(Float32)"},
      {Col("a", ColumnType::kVector).Length(3), "Array(Float32)", "Array(Float32)"},
      {Col("a", ColumnType::kUuid).NotNull(), "UUID", "UUID"},
      {Col("a", ColumnType::kInet4).NotNull(), "String", "IPv4"},
      {Col("a", ColumnType::kInet6).NotNull(), "String", "IPv6"},
      {Col("a", ColumnType::kInt), "Nullable(Int32)", "Nullable(Int32)"},
      {Col("a", ColumnType::kDecimal).Precision(65, 30), "Nullable(String)", "Nullable(Decimal(65, 30))"},
      {Col("a", ColumnType::kEnum).Labels({"x"}), "Nullable(Enum8('' = 0, 'x' = 1))",
       "Nullable(Enum8('' = 0, 'x' = 1))"},
      // A NULL stores 0: when '' is declared, 0 gets a label no MySQL member can have.
      {Col("a", ColumnType::kEnum).Labels({"x", "", "y"}),
       "Nullable(Enum8(' ' = 0, 'x' = 1, '' = 2, 'y' = 3))",
       "Nullable(Enum8(' ' = 0, 'x' = 1, '' = 2, 'y' = 3))"},
  };
  for (const Case& c : cases) {
    auto old_type = MapColumn(c.column, kOld);
    auto new_type = MapColumn(c.column, kNew);
    ASSERT_TRUE(old_type.ok()) << c.column.TypeText() << ": " << old_type.error().message();
    ASSERT_TRUE(new_type.ok()) << c.column.TypeText() << ": " << new_type.error().message();
    EXPECT_EQ(old_type->type, c.on_old) << c.column.TypeText() << " nullable=" << c.column.nullable;
    EXPECT_EQ(new_type->type, c.on_new) << c.column.TypeText() << " nullable=" << c.column.nullable;
  }
}

TEST(TypeMappingTest, LargeEnumUsesEnum16) {
  Col col("a", ColumnType::kEnum);
  col.NotNull();
  for (int i = 0; i < 200; ++i) col.c.enum_values.push_back("v" + std::to_string(i));
  auto m = MapColumn(col, kNew);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->encoding, Encoding::kEnum16);
  EXPECT_TRUE(m->type.starts_with("Enum16('' = 0, 'v0' = 1,"));
  EXPECT_TRUE(m->type.ends_with("'v199' = 200)"));
}

TEST(TypeMappingTest, EnumZeroHasALabelWheneverItIsStored) {
  EXPECT_EQ(EnumZeroLabel({"a", "b"}, false), "");
  EXPECT_EQ(EnumZeroLabel({"a", "b"}, true), "");
  EXPECT_EQ(EnumZeroLabel({"a", ""}, false), std::nullopt);  // index 0 is written as the declared ''
  EXPECT_EQ(EnumZeroLabel({"a", ""}, true), " ");
  // Labels as the DDL spelled them (chsync keeps trailing spaces MySQL strips): still distinct.
  EXPECT_EQ(EnumZeroLabel({"", " ", "  "}, true), "   ");
  auto m = MapColumn(Col("a", ColumnType::kEnum).Labels({"", " "}), kOld);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->type, "Nullable(Enum8('  ' = 0, '' = 1, ' ' = 2))");
}

TEST(TypeMappingTest, FallbacksAreExplained) {
  auto wide = MapColumn(Col("a", ColumnType::kDecimal).Precision(65, 30), kOld);
  ASSERT_TRUE(wide.ok());
  EXPECT_EQ(wide->encoding, Encoding::kDecimalText);
  EXPECT_NE(wide->fallback_note.find("22.3"), std::string::npos) << wide->fallback_note;
  auto date = MapColumn(Col("a", ColumnType::kDate), kOld);
  ASSERT_TRUE(date.ok());
  EXPECT_NE(date->fallback_note.find("Date32"), std::string::npos);
  auto exact = MapColumn(Col("a", ColumnType::kDate), kNew);
  EXPECT_TRUE(exact->fallback_note.empty());
}

TEST(TypeMappingTest, DateTimeFallbackStringKeepsFractionsAsText) {
  Capabilities text = kOld;
  text.datetime_fallback_text = true;
  auto dt6 = MapColumn(Col("a", ColumnType::kDateTime).Fsp(6).NotNull(), text);
  ASSERT_TRUE(dt6.ok());
  EXPECT_EQ(dt6->type, "String");
  EXPECT_EQ(dt6->encoding, Encoding::kDateTimeText);
  EXPECT_EQ(dt6->scale, 6u);
  EXPECT_NE(dt6->fallback_note.find("datetime_fallback: string"), std::string::npos) << dt6->fallback_note;
  auto ts3 = MapColumn(Col("a", ColumnType::kTimestamp).Fsp(3), text);
  ASSERT_TRUE(ts3.ok());
  EXPECT_EQ(ts3->type, "Nullable(String)");
  EXPECT_EQ(ts3->scale, 3u);
  // Whole seconds lose nothing in DateTime: they stay DateTime.
  auto dt0 = MapColumn(Col("a", ColumnType::kDateTime).Fsp(0).NotNull(), text);
  ASSERT_TRUE(dt0.ok());
  EXPECT_EQ(dt0->type, "DateTime('UTC')");
  // The default drops the fraction; a server with DateTime64 ignores the choice.
  EXPECT_EQ(MapColumn(Col("a", ColumnType::kDateTime).Fsp(6).NotNull(), kOld)->type, "DateTime('UTC')");
  Capabilities new_text = kNew;
  new_text.datetime_fallback_text = true;
  EXPECT_EQ(MapColumn(Col("a", ColumnType::kDateTime).Fsp(6).NotNull(), new_text)->type,
            "DateTime64(6, 'UTC')");
  EXPECT_FALSE(FromVersion({18, 16, 1, 0}).datetime_fallback_text);
}

TEST(TypeMappingTest, UnknownTypeIsUnsupported) {
  Col col("weird", ColumnType::kUnknown);
  col.c.type_spelling = "FOOTYPE";
  auto m = MapColumn(col, kNew);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(m.error().message().find("weird"), std::string::npos);
}

TEST(TypeMappingTest, DecimalEncodingWidthFollowsPrecision) {
  EXPECT_EQ(MapColumn(Col("a", ColumnType::kDecimal).Precision(9, 2), kNew)->encoding, Encoding::kDecimal32);
  EXPECT_EQ(MapColumn(Col("a", ColumnType::kDecimal).Precision(10, 2), kNew)->encoding, Encoding::kDecimal64);
  EXPECT_EQ(MapColumn(Col("a", ColumnType::kDecimal).Precision(18, 2), kNew)->encoding, Encoding::kDecimal64);
  EXPECT_EQ(MapColumn(Col("a", ColumnType::kDecimal).Precision(19, 2), kNew)->encoding,
            Encoding::kDecimal128);
  EXPECT_EQ(MapColumn(Col("a", ColumnType::kDecimal).Precision(39, 2), kNew)->encoding,
            Encoding::kDecimal256);
}

// json: string (the default) keeps JSON as text; json: native makes MySQL's JSON and MariaDB's
// (LONGTEXT with a json_valid CHECK) ClickHouse JSON, Nullable when the column is; other text stays
// String; a server before 25.3 refuses it, naming the column, its version and what to do.
TEST(TypeMappingTest, JsonAsStringOrNative) {
  schema::Column mysql_json = Col("doc", ColumnType::kJson);
  schema::Column mariadb_json = Col("doc", ColumnType::kLongText).NotNull();
  mariadb_json.json_valid_check = true;
  schema::Column text = Col("doc", ColumnType::kLongText);
  Capabilities native = kNew;
  native.json_native = true;
  struct JsonCase {
    schema::Column column;
    Capabilities caps;
    const char* type;
    Encoding encoding;
  };
  const JsonCase cases[] = {
      {mysql_json, kNew, "Nullable(String)", Encoding::kString},
      {mariadb_json, kNew, "String", Encoding::kString},
      {mysql_json, native, "Nullable(JSON)", Encoding::kJson},
      {mariadb_json, native, "JSON", Encoding::kJson},
      {text, native, "Nullable(String)", Encoding::kString},
      {mysql_json, FromVersion({25, 3, 1, 0}).json_type_ready ? native : kNew, "Nullable(JSON)",
       Encoding::kJson},
  };
  for (const JsonCase& c : cases) {
    auto m = MapColumn(c.column, c.caps);
    ASSERT_TRUE(m.ok()) << m.error().message();
    EXPECT_EQ(m->type, c.type) << c.column.TypeText();
    EXPECT_EQ(m->encoding, c.encoding) << c.column.TypeText();
  }
  EXPECT_FALSE(FromVersion({25, 2, 9, 0}).json_type_ready);
  EXPECT_TRUE(FromVersion({25, 3, 1, 0}).json_type_ready);

  for (const ServerVersion& v : {ServerVersion{18, 16, 1, 0}, ServerVersion{24, 8, 2, 0}}) {
    Capabilities old = FromVersion(v);
    old.json_native = true;
    auto refused = MapColumn(mysql_json, old);
    ASSERT_FALSE(refused.ok()) << v.ToString();
    EXPECT_EQ(refused.error().kind(), ErrorKind::kUnsupported);
    const std::string& msg = refused.error().message();
    EXPECT_NE(msg.find("column doc json"), std::string::npos) << msg;
    EXPECT_NE(msg.find("production-ready from ClickHouse 25.3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("this server is " + v.ToString()), std::string::npos) << msg;
    EXPECT_NE(msg.find("set json: string"), std::string::npos) << msg;
    // Text that is not JSON is not concerned.
    EXPECT_TRUE(MapColumn(text, old).ok());
  }
}

}  // namespace
}  // namespace chsync::clickhouse
