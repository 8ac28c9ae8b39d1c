#include "clickhouse/row_binary.h"

#include <gtest/gtest.h>

#include <cstring>

namespace chsync::clickhouse {
namespace {

MappedType Type(Encoding e, bool nullable = false, uint32_t precision = 0, uint32_t scale = 0) {
  MappedType m;
  m.type = "T";
  m.encoding = e;
  m.nullable = nullable;
  m.precision = precision;
  m.scale = scale;
  return m;
}

std::string Bytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(static_cast<char>(b));
  return s;
}

std::string Encode(const MappedType& m, const Cell& cell) {
  std::string out;
  Status s = EncodeCell(m, cell, out);
  EXPECT_TRUE(s.ok()) << s.error().message();
  return out;
}

Status EncodeStatus(const MappedType& m, const Cell& cell) {
  std::string out;
  return EncodeCell(m, cell, out);
}

std::string Le64(int64_t v) {
  std::string s(8, '\0');
  std::memcpy(s.data(), &v, 8);
  return s;
}

TEST(RowBinaryTest, IntegersAreRangeChecked) {
  EXPECT_EQ(Encode(Type(Encoding::kInt8), int64_t{-128}), Bytes({0x80}));
  EXPECT_EQ(Encode(Type(Encoding::kUInt16), uint64_t{65535}), Bytes({0xFF, 0xFF}));
  EXPECT_EQ(Encode(Type(Encoding::kUInt64), uint64_t{18446744073709551615u}), std::string(8, '\xFF'));
  EXPECT_EQ(Encode(Type(Encoding::kInt64), int64_t{INT64_MIN}), Le64(INT64_MIN));
  EXPECT_FALSE(EncodeStatus(Type(Encoding::kInt8), int64_t{128}).ok());
  EXPECT_FALSE(EncodeStatus(Type(Encoding::kUInt8), int64_t{-1}).ok());
  EXPECT_FALSE(EncodeStatus(Type(Encoding::kInt64), uint64_t{9223372036854775808u}).ok());
  EXPECT_FALSE(EncodeStatus(Type(Encoding::kInt32), std::string_view("1")).ok());
}

TEST(RowBinaryTest, DecimalsFromDigits) {
  EXPECT_EQ(Encode(Type(Encoding::kDecimal32, false, 9, 4), DecimalCell{"99999.9999"}),
            Bytes({0xFF, 0xC9, 0x9A, 0x3B}));
  EXPECT_EQ(Encode(Type(Encoding::kDecimal64, false, 10, 2), DecimalCell{"-1.5"}), Le64(-150));
  EXPECT_EQ(Encode(Type(Encoding::kDecimal64, false, 18, 1), DecimalCell{"12345678901234567.8"}),
            Le64(123456789012345678));
  EXPECT_EQ(Encode(Type(Encoding::kDecimal128, false, 38, 0), DecimalCell{"-1"}), std::string(16, '\xFF'));
  EXPECT_EQ(
      Encode(Type(Encoding::kDecimal256, false, 65, 30), DecimalCell{"-0.000000000000000000000000000001"}),
      std::string(32, '\xFF'));
  EXPECT_EQ(Encode(Type(Encoding::kDecimal256, false, 65, 30), DecimalCell{"-0"}), std::string(32, '\0'));
  // 2^64 = 18446744073709551616 crosses a limb boundary.
  std::string two_to_64(32, '\0');
  two_to_64[8] = 1;
  EXPECT_EQ(Encode(Type(Encoding::kDecimal256, false, 65, 0), DecimalCell{"18446744073709551616"}),
            two_to_64);
  EXPECT_EQ(Encode(Type(Encoding::kDecimal64, false, 10, 2), DecimalCell{"1.230"}), Le64(123));
}

TEST(RowBinaryTest, DecimalsThatDoNotFitAreErrors) {
  EXPECT_FALSE(EncodeStatus(Type(Encoding::kDecimal64, false, 10, 2), DecimalCell{"1.234"}).ok());
  EXPECT_FALSE(EncodeStatus(Type(Encoding::kDecimal32, false, 5, 2), DecimalCell{"1000"}).ok());
  EXPECT_FALSE(EncodeStatus(Type(Encoding::kDecimal64, false, 10, 2), DecimalCell{"1e5"}).ok());
  EXPECT_FALSE(EncodeStatus(Type(Encoding::kDecimal64, false, 10, 2), DecimalCell{""}).ok());
  EXPECT_FALSE(EncodeStatus(Type(Encoding::kDecimal64, false, 10, 2), DecimalCell{"-"}).ok());
}

TEST(RowBinaryTest, DecimalTextKeepsDigits) {
  std::string text = "-12345678901234567890123456789012345.123456789012345678901234567890";
  std::string out = Encode(Type(Encoding::kDecimalText, false, 65, 30), DecimalCell{text});
  EXPECT_EQ(out, std::string(1, static_cast<char>(text.size())) + text);
}

TEST(RowBinaryTest, DatesClampAndZeroDatesAreTheEpoch) {
  EXPECT_EQ(Encode(Type(Encoding::kDate), DateCell{2024, 6, 15}), Bytes({0xB1, 0x4D}));  // 19889
  EXPECT_EQ(Encode(Type(Encoding::kDate), DateCell{0, 0, 0}), Bytes({0, 0}));
  EXPECT_EQ(Encode(Type(Encoding::kDate), DateCell{1000, 1, 1}), Bytes({0, 0}));
  EXPECT_EQ(Encode(Type(Encoding::kDate), DateCell{9999, 12, 31}),
            Encode(Type(Encoding::kDate), DateCell{2105, 12, 31}));
  EXPECT_EQ(Encode(Type(Encoding::kDate), DateCell{2105, 12, 31}), Bytes({0x08, 0xC2}));  // 49672
  std::string min32(4, '\0');
  int32_t v = -25567;
  std::memcpy(min32.data(), &v, 4);
  EXPECT_EQ(Encode(Type(Encoding::kDate32), DateCell{1000, 1, 1}), min32);
  EXPECT_EQ(Encode(Type(Encoding::kDate32), DateCell{2020, 0, 0}), std::string(4, '\0'));
  EXPECT_FALSE(EncodeStatus(Type(Encoding::kDate32), DateCell{2020, 13, 1}).ok());
}

TEST(RowBinaryTest, DateTime64Ticks) {
  const int64_t seconds = 19889LL * 86400 + 12 * 3600 + 34 * 60 + 56;
  DateTimeCell dt{2024, 6, 15, 12, 34, 56, 789123};
  EXPECT_EQ(Encode(Type(Encoding::kDateTime64, false, 0, 6), dt), Le64(seconds * 1000000 + 789123));
  EXPECT_EQ(Encode(Type(Encoding::kDateTime64, false, 0, 3), dt), Le64(seconds * 1000 + 789));
  EXPECT_EQ(Encode(Type(Encoding::kDateTime64, false, 0, 0), dt), Le64(seconds));
  EXPECT_EQ(Encode(Type(Encoding::kDateTime64, false, 0, 6), EpochCell{seconds, 5}),
            Le64(seconds * 1000000 + 5));
  EXPECT_EQ(Encode(Type(Encoding::kDateTime64, false, 0, 6), DateTimeCell{}), Le64(0));
  // Before 1970: negative ticks.
  EXPECT_EQ(Encode(Type(Encoding::kDateTime64, false, 0, 0), DateTimeCell{1969, 12, 31, 23, 59, 59, 0}),
            Le64(-1));
}

TEST(RowBinaryTest, DateTimeClampsToItsRange) {
  EXPECT_EQ(Encode(Type(Encoding::kDateTime), DateTimeCell{1000, 1, 1, 0, 0, 0, 0}), std::string(4, '\0'));
  uint32_t last = 49672u * 86400 + 86399;  // 2105-12-31 23:59:59
  EXPECT_EQ(Encode(Type(Encoding::kDateTime), DateTimeCell{9999, 12, 31, 23, 59, 59, 0}),
            std::string(reinterpret_cast<const char*>(&last), 4));
  EXPECT_EQ(Encode(Type(Encoding::kDateTime), EpochCell{1, 999999}), Bytes({1, 0, 0, 0}));
}

std::string Text(std::string_view s) {
  return std::string(1, static_cast<char>(s.size())) + std::string(s);
}

TEST(RowBinaryTest, DateTimeTextIsWhatDateTime64Shows) {
  const MappedType six = Type(Encoding::kDateTimeText, false, 0, 6);
  const MappedType three = Type(Encoding::kDateTimeText, false, 0, 3);
  EXPECT_EQ(Encode(six, DateTimeCell{2024, 6, 15, 12, 34, 56, 789123}), Text("2024-06-15 12:34:56.789123"));
  EXPECT_EQ(Encode(three, DateTimeCell{2024, 6, 15, 12, 34, 56, 789000}), Text("2024-06-15 12:34:56.789"));
  EXPECT_EQ(Encode(six, DateTimeCell{2024, 6, 15, 1, 2, 3, 5}), Text("2024-06-15 01:02:03.000005"));
  // DATETIME as written, however far outside 1970..2105: nothing clamped.
  EXPECT_EQ(Encode(six, DateTimeCell{1000, 1, 1, 0, 0, 0, 1}), Text("1000-01-01 00:00:00.000001"));
  EXPECT_EQ(Encode(six, DateTimeCell{9999, 12, 31, 23, 59, 59, 999999}), Text("9999-12-31 23:59:59.999999"));
  // Zero dates as DateTime64 holds them (the epoch).
  EXPECT_EQ(Encode(three, DateTimeCell{}), Text("1970-01-01 00:00:00.000"));
  EXPECT_EQ(Encode(three, DateTimeCell{2024, 0, 0, 0, 0, 0, 0}), Text("1970-01-01 00:00:00.000"));
  // TIMESTAMP: the UTC instant.
  const int64_t seconds = 19889LL * 86400 + 12 * 3600 + 34 * 60 + 56;
  EXPECT_EQ(Encode(three, EpochCell{seconds, 789000}), Text("2024-06-15 12:34:56.789"));
  EXPECT_EQ(Encode(six, EpochCell{0, 0}), Text("1970-01-01 00:00:00.000000"));
  EXPECT_EQ(Encode(six, EpochCell{2147483647, 999999}), Text("2038-01-19 03:14:07.999999"));
  // Nullable, and bad input refused.
  EXPECT_EQ(Encode(Type(Encoding::kDateTimeText, true, 0, 3), NullCell{}), Bytes({1}));
  EXPECT_FALSE(EncodeStatus(six, DateTimeCell{2024, 13, 1, 0, 0, 0, 0}).ok());
  EXPECT_FALSE(EncodeStatus(six, DateTimeCell{2024, 1, 1, 24, 0, 0, 0}).ok());
  EXPECT_FALSE(EncodeStatus(six, EpochCell{0, 1000000}).ok());
  EXPECT_FALSE(EncodeStatus(six, EpochCell{INT64_MAX, 0}).ok());
  EXPECT_FALSE(EncodeStatus(six, DateCell{2024, 1, 1}).ok());
  // Sortable as text: the same order as the instants.
  EXPECT_LT(Encode(six, DateTimeCell{999, 12, 31, 23, 59, 59, 0}).substr(1),
            Encode(six, DateTimeCell{1000, 1, 1, 0, 0, 0, 0}).substr(1));
}

TEST(RowBinaryTest, ClampedValuesAreCounted) {
  ClampCounts counts;
  std::string out;
  ASSERT_TRUE(EncodeCell(Type(Encoding::kDate), DateCell{1000, 1, 1}, out, &counts).ok());
  ASSERT_TRUE(EncodeCell(Type(Encoding::kDate), DateCell{9999, 12, 31}, out, &counts).ok());
  ASSERT_TRUE(EncodeCell(Type(Encoding::kDate), DateCell{2024, 1, 1}, out, &counts).ok());
  ASSERT_TRUE(EncodeCell(Type(Encoding::kDate), DateCell{2105, 12, 31}, out, &counts).ok());
  ASSERT_TRUE(EncodeCell(Type(Encoding::kDate), DateCell{}, out, &counts).ok());  // zero date: not clamped
  ASSERT_TRUE(EncodeCell(Type(Encoding::kDate32), DateCell{1899, 12, 31}, out, &counts).ok());
  ASSERT_TRUE(EncodeCell(Type(Encoding::kDate32), DateCell{1900, 1, 1}, out, &counts).ok());
  EXPECT_EQ(counts.dates, 3u);
  EXPECT_EQ(counts.datetimes, 0u);
  ASSERT_TRUE(EncodeCell(Type(Encoding::kDateTime), DateTimeCell{1000, 1, 1, 0, 0, 0, 0}, out, &counts).ok());
  ASSERT_TRUE(EncodeCell(Type(Encoding::kDateTime), DateTimeCell{2106, 1, 1, 0, 0, 0, 0}, out, &counts).ok());
  ASSERT_TRUE(EncodeCell(Type(Encoding::kDateTime), DateTimeCell{1970, 1, 1, 0, 0, 0, 0}, out, &counts).ok());
  ASSERT_TRUE(EncodeCell(Type(Encoding::kDateTime), DateTimeCell{}, out, &counts).ok());
  ASSERT_TRUE(
      EncodeCell(Type(Encoding::kDateTime64, false, 0, 6), DateTimeCell{1000, 1, 1, 0, 0, 0, 0}, out, &counts)
          .ok());
  EXPECT_EQ(counts.datetimes, 2u);
  EXPECT_EQ(counts.dates, 3u);

  // The encoder counts the rows it keeps, not the ones it refuses, until TakeClamped().
  RowBinaryEncoder enc({Type(Encoding::kDate), Type(Encoding::kDateTime), Type(Encoding::kInt8)});
  std::vector<Cell> kept = {DateCell{1000, 1, 1}, DateTimeCell{9999, 1, 1, 0, 0, 0, 0}, int64_t{1}};
  std::vector<Cell> refused = {DateCell{1000, 1, 1}, DateTimeCell{9999, 1, 1, 0, 0, 0, 0}, int64_t{1000}};
  ASSERT_TRUE(enc.AppendRow(kept).ok());
  ASSERT_FALSE(enc.AppendRow(refused).ok());
  ASSERT_TRUE(enc.AppendRow(kept).ok());
  enc.TakeData();
  ClampCounts taken = enc.TakeClamped();
  EXPECT_EQ(taken.dates, 2u);
  EXPECT_EQ(taken.datetimes, 2u);
  EXPECT_TRUE(enc.TakeClamped().empty());
}

TEST(RowBinaryTest, TimeAsText) {
  EXPECT_EQ(Encode(Type(Encoding::kTimeText, false, 0, 0), TimeCell{true, 838, 59, 59, 0}), "\x0A-838:59:59");
  EXPECT_EQ(Encode(Type(Encoding::kTimeText, false, 0, 1), TimeCell{false, 1, 2, 3, 500000}),
            "\x0A"
            "01:02:03.5");
  EXPECT_EQ(Encode(Type(Encoding::kTimeText, false, 0, 6), TimeCell{false, 0, 0, 0, 1}),
            "\x0F"
            "00:00:00.000001");
}

TEST(RowBinaryTest, StringsAreBytesWithVarIntLength) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  std::string out = Encode(Type(Encoding::kString), std::string_view(all));
  EXPECT_EQ(out.substr(0, 2), Bytes({0x80, 0x02}));
  EXPECT_EQ(out.substr(2), all);
  EXPECT_EQ(Encode(Type(Encoding::kString), std::string_view()), Bytes({0}));
}

TEST(RowBinaryTest, NullableAndNull) {
  EXPECT_EQ(Encode(Type(Encoding::kInt32, true), NullCell{}), Bytes({1}));
  EXPECT_EQ(Encode(Type(Encoding::kInt32, true), int64_t{1}), Bytes({0, 1, 0, 0, 0}));
  EXPECT_FALSE(EncodeStatus(Type(Encoding::kInt32), NullCell{}).ok());
  EXPECT_EQ(Encode(Type(Encoding::kFloat32Array), NullCell{}), Bytes({0}));
}

TEST(RowBinaryTest, EnumsAndSets) {
  MappedType e = Type(Encoding::kEnum8);
  e.labels = {"a", "b", "c"};
  EXPECT_EQ(Encode(e, uint64_t{2}), Bytes({2}));
  EXPECT_EQ(Encode(e, uint64_t{0}), Bytes({0}));
  EXPECT_FALSE(EncodeStatus(e, uint64_t{4}).ok());
  MappedType declared_empty = Type(Encoding::kEnum16);
  declared_empty.labels = {"x", ""};
  EXPECT_EQ(Encode(declared_empty, uint64_t{0}), Bytes({2, 0}));
  MappedType set = Type(Encoding::kSetText);
  set.labels = {"a", "b", "c"};
  EXPECT_EQ(Encode(set, uint64_t{5}),
            "\x03"
            "a,c");
  EXPECT_EQ(Encode(set, uint64_t{0}), Bytes({0}));
  EXPECT_FALSE(EncodeStatus(set, uint64_t{8}).ok());
}

TEST(RowBinaryTest, UuidAndAddresses) {
  std::string uuid =
      Bytes({0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF});
  EXPECT_EQ(Encode(Type(Encoding::kUuid), std::string_view(uuid)),
            Bytes({0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x00, 0xFF, 0xEE, 0xDD, 0xCC, 0xBB, 0xAA, 0x99,
                   0x88}));
  std::string v4 = Bytes({1, 2, 3, 4});
  EXPECT_EQ(Encode(Type(Encoding::kIPv4), std::string_view(v4)), Bytes({4, 3, 2, 1}));
  EXPECT_EQ(Encode(Type(Encoding::kIPv4Text), std::string_view(v4)),
            "\x07"
            "1.2.3.4");
  std::string v6(16, '\0');
  v6[0] = 0x20;
  v6[1] = 0x01;
  v6[2] = 0x0d;
  v6[3] = static_cast<char>(0xb8);
  v6[15] = 1;
  EXPECT_EQ(Encode(Type(Encoding::kIPv6), std::string_view(v6)), v6);
  EXPECT_EQ(Encode(Type(Encoding::kIPv6Text), std::string_view(v6)),
            "\x0B"
            "2001:db8::1");
  EXPECT_FALSE(EncodeStatus(Type(Encoding::kUuid), std::string_view("short")).ok());
}

TEST(RowBinaryTest, VectorIsArrayOfFloat32) {
  float f[2] = {1.5f, -2.0f};
  std::string raw(reinterpret_cast<const char*>(f), 8);
  EXPECT_EQ(Encode(Type(Encoding::kFloat32Array), std::string_view(raw)), std::string(1, '\x02') + raw);
  EXPECT_FALSE(EncodeStatus(Type(Encoding::kFloat32Array), std::string_view("abc")).ok());
}

/// SRID 0 + little-endian WKB builders.
std::string U32(uint32_t v) {
  return std::string(reinterpret_cast<const char*>(&v), 4);
}
std::string F64(double v) {
  return std::string(reinterpret_cast<const char*>(&v), 8);
}
std::string WkbPoint(double x, double y) {
  return "\x01" + U32(1) + F64(x) + F64(y);
}

std::string Wkt(std::string_view bytes) {
  auto wkt = GeometryToWkt(bytes);
  EXPECT_TRUE(wkt.ok()) << wkt.error().message();
  return wkt.ok() ? *wkt : "";
}

TEST(RowBinaryTest, GeometryToWkt) {
  std::string srid = U32(4326);
  auto point = GeometryToWkt(srid + WkbPoint(1, 2.5));
  ASSERT_TRUE(point.ok()) << point.error().message();
  EXPECT_EQ(*point, "POINT(1 2.5)");
  std::string line = "\x01" + U32(2) + U32(2) + F64(0) + F64(0) + F64(1) + F64(-1);
  EXPECT_EQ(Wkt(srid + line), "LINESTRING(0 0,1 -1)");
  std::string poly = "\x01" + U32(3) + U32(1) + U32(4) + F64(0) + F64(0) + F64(1) + F64(0) + F64(1) + F64(1) +
                     F64(0) + F64(0);
  EXPECT_EQ(Wkt(srid + poly), "POLYGON((0 0,1 0,1 1,0 0))");
  std::string multi = "\x01" + U32(4) + U32(2) + WkbPoint(1, 1) + WkbPoint(2, 2);
  EXPECT_EQ(Wkt(srid + multi), "MULTIPOINT((1 1),(2 2))");
  std::string collection = "\x01" + U32(7) + U32(2) + WkbPoint(1, 1) + line;
  EXPECT_EQ(Wkt(srid + collection), "GEOMETRYCOLLECTION(POINT(1 1),LINESTRING(0 0,1 -1))");
  std::string empty = "\x01" + U32(7) + U32(0);
  EXPECT_EQ(Wkt(srid + empty), "GEOMETRYCOLLECTION EMPTY");
  // Big-endian point.
  std::string be = std::string("\x00\x00\x00\x00\x01", 5) + "\x3F\xF0" + std::string(6, '\0') +
                   std::string("\x40\x00", 2) + std::string(6, '\0');
  EXPECT_EQ(Wkt(srid + be), "POINT(1 2)");
}

TEST(RowBinaryTest, MalformedGeometryIsAnErrorWithOffset) {
  std::string srid = U32(0);
  auto truncated = GeometryToWkt(srid + WkbPoint(1, 2).substr(0, 12));
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.error().kind(), ErrorKind::kCorrupt);
  EXPECT_NE(truncated.error().message().find("truncated"), std::string::npos);
  auto huge_count = GeometryToWkt(srid + "\x01" + U32(2) + U32(0xFFFFFFFF));
  ASSERT_FALSE(huge_count.ok());
  EXPECT_NE(huge_count.error().message().find("exceeds"), std::string::npos);
  EXPECT_FALSE(GeometryToWkt(srid + "\x01" + U32(99)).ok());
  EXPECT_FALSE(GeometryToWkt("ab").ok());
  EXPECT_FALSE(GeometryToWkt(srid + WkbPoint(1, 2) + "x").ok());
  // Deep nesting stops at 32 levels instead of recursing without bound.
  std::string deep;
  for (int i = 0; i < 40; ++i) deep += "\x01" + U32(7) + U32(1);
  deep += WkbPoint(0, 0);
  EXPECT_FALSE(GeometryToWkt(srid + deep).ok());
}

TEST(RowBinaryTest, EncoderAppendsWholeRowsOnly) {
  RowBinaryEncoder enc({Type(Encoding::kInt32), Type(Encoding::kString)});
  std::vector<Cell> good = {int64_t{7}, std::string_view("x")};
  ASSERT_TRUE(enc.AppendRow(good).ok());
  std::vector<Cell> bad = {int64_t{8}, NullCell{}};
  Status s = enc.AppendRow(bad);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("column 2"), std::string::npos) << s.error().message();
  EXPECT_EQ(enc.rows(), 1u);
  EXPECT_EQ(enc.data(), Bytes({7, 0, 0, 0, 1, 'x'}));
  std::vector<Cell> short_row = {int64_t{1}};
  EXPECT_FALSE(enc.AppendRow(short_row).ok());
}

// A JSON column receives the document's text as a String; one that is not an object goes under
// _value, since ClickHouse's JSON holds objects only.
TEST(RowBinaryTest, JsonIsSentAsTextAndNonObjectsAreWrapped) {
  MappedType json;
  json.type = "JSON";
  json.encoding = Encoding::kJson;
  EXPECT_EQ(Encode(json, Cell(std::string("{\"a\":1}"))), std::string("\x07{\"a\":1}"));
  EXPECT_EQ(JsonObjectText(" {\"a\": [1, {\"b\" : \"x y\"}]}\n"), "{\"a\":[1,{\"b\":\"x y\"}]}");
  EXPECT_EQ(JsonObjectText("[1, 2]"), "{\"_value\":[1,2]}");
  EXPECT_EQ(JsonObjectText("\"s\""), "{\"_value\":\"s\"}");
  EXPECT_EQ(JsonObjectText("null"), "{\"_value\":null}");
  EXPECT_EQ(JsonObjectText("12.5"), "{\"_value\":12.5}");
  EXPECT_EQ(JsonObjectText("{}"), "{}");
  EXPECT_EQ(JsonObjectText("{\"e\":\"\\ud83d\\ude00\\n\\\"\",\"f\":-0.5E+2}"),
            "{\"e\":\"\\ud83d\\ude00\\n\\\"\",\"f\":-0.5E+2}");
}

// Numbers ClickHouse's JSON cannot hold become strings of their digits, so that the row is kept.
TEST(RowBinaryTest, JsonNumbersBeyondClickHouseBecomeStrings) {
  EXPECT_EQ(JsonObjectText("{\"u\":18446744073709551615,\"i\":-9223372036854775808}"),
            "{\"u\":18446744073709551615,\"i\":-9223372036854775808}");
  EXPECT_EQ(JsonObjectText("{\"u\":18446744073709551616,\"i\":-9223372036854775809}"),
            "{\"u\":\"18446744073709551616\",\"i\":\"-9223372036854775809\"}");
  EXPECT_EQ(JsonObjectText("{\"d\":[123456789012345678901234567890, 1e400, -1e400, 1e-400, 1.5e300]}"),
            "{\"d\":[\"123456789012345678901234567890\",\"1e400\",\"-1e400\",1e-400,1.5e300]}");
  EXPECT_EQ(JsonObjectText("1e999"), "{\"_value\":\"1e999\"}");
}

// Text that is not strict JSON (MariaDB's json_valid lets some pass) is kept as a string under
// _text rather than refused by ClickHouse.
TEST(RowBinaryTest, JsonThatClickHouseCannotReadIsKeptAsText) {
  for (const char* text : {"", " \n", "{\"a\":1.}", "{\"a\":-}", "{\"a\":1e}", "{\"a\":\"\\x\"}",
                           "{\"a\":01}", "{\"a\":.5}", "{\"a\":1,}", "{\"a\":1} x", "{\"a\":\"\\ud800\"}",
                           "{\"a\":\"\\udc00\"}", "{\"a\":\"\\ud800\\u0041\"}", "{\"a\":\"\\u12\"}", "{\"a\"",
                           "{\"a\":tru}", "[1", "{'a':1}", "{\"a\":\"x\ty\"}"}) {
    const std::string out = JsonObjectText(text);
    EXPECT_EQ(out.rfind("{\"_text\":\"", 0), 0U) << text << " -> " << out;
  }
  EXPECT_EQ(JsonObjectText("{\"a\":\"x\ty\\\"\"} \n"),
            "{\"_text\":\"{\\\"a\\\":\\\"x\\u0009y\\\\\\\"\\\"} \\u000a\"}");
  std::string deep(2000, '[');
  EXPECT_EQ(JsonObjectText(deep + std::string(2000, ']')).rfind("{\"_text\":", 0), 0U);
  std::string nested(100, '[');
  EXPECT_EQ(JsonObjectText(nested + std::string(100, ']')),
            "{\"_value\":" + nested + std::string(100, ']') + "}");
}

}  // namespace
}  // namespace chsync::clickhouse
