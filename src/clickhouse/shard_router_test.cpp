#include "clickhouse/shard_router.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "clickhouse/test_columns.h"

namespace chsync::clickhouse {
namespace {

MappedType Type(std::string name, Encoding e, bool nullable = false, uint32_t scale = 0) {
  MappedType t;
  t.type = nullable ? "Nullable(" + name + ")" : std::move(name);
  t.encoding = e;
  t.nullable = nullable;
  t.scale = scale;
  if (e == Encoding::kDecimal32 || e == Encoding::kDecimal64)
    t.precision = e == Encoding::kDecimal32 ? 9 : 18;
  return t;
}

// cityHash64(substring('The quick brown fox jumps over the lazy dog 0123456789 ' repeated, 1, n))
// as ClickHouse 18.16 returned it: every length class of CityHash64 (0, 1–3, 4–8, 9–16, 17–32,
// 33–64, and the 64-byte loop once, twice and many times).
TEST(CityHash64Test, AgreesWithClickHouseAtEveryLengthClass) {
  std::string text;
  for (int i = 0; i < 30; ++i) text += "The quick brown fox jumps over the lazy dog 0123456789 ";
  const std::map<size_t, uint64_t> server = {
      {0, 11160318154034397263u},   {1, 5570910369516329963u},    {2, 1543931613479180149u},
      {3, 9456065179546978676u},    {4, 7426151758103449081u},    {7, 12915914661088991145u},
      {8, 8261970815632334399u},    {9, 15693689613497209625u},   {15, 14516595473119768720u},
      {16, 3887581654433788716u},   {17, 17248679875317671279u},  {24, 5574213167716506373u},
      {31, 2921807510953238776u},   {32, 14343997730508542907u},  {33, 4305124436332828171u},
      {48, 6567265333618042649u},   {63, 2793300865938745406u},   {64, 8599648750296733905u},
      {65, 5109190339283860727u},   {100, 17461487830725346971u}, {127, 5046987555524298463u},
      {128, 11321235591923862400u}, {129, 14177525836675161075u}, {200, 10070943704510180451u},
      {1000, 2640420909813735011u},
  };
  for (const auto& [length, hash] : server) {
    EXPECT_EQ(CityHash64(std::string_view(text).substr(0, length)), hash) << "length " << length;
  }
  EXPECT_EQ(CityHash64("a"), 2603192927274642682u);
  EXPECT_EQ(CityHash64("hello world"), 12386028635079221413u);
}

TEST(ParseSortingKeyTest, ColumnsAndNullableParts) {
  auto parts = ParseSortingKey("id, isNull(c), assumeNotNull(c), `odd name`");
  ASSERT_TRUE(parts.ok()) << parts.error().message();
  ASSERT_EQ(parts->size(), 4u);
  EXPECT_EQ((*parts)[0].kind, KeyPart::Kind::kColumn);
  EXPECT_EQ((*parts)[0].column, "id");
  EXPECT_EQ((*parts)[1].kind, KeyPart::Kind::kIsNull);
  EXPECT_EQ((*parts)[1].column, "c");
  EXPECT_EQ((*parts)[2].kind, KeyPart::Kind::kAssumeNotNull);
  EXPECT_EQ((*parts)[3].column, "odd name");
}

TEST(ParseSortingKeyTest, OtherExpressionsAreUnsupported) {
  for (const char* key : {"", "intHash32(id)", "id + 1", "tuple()", "(id, v)", "1id"}) {
    auto parts = ParseSortingKey(key);
    EXPECT_FALSE(parts.ok()) << key;
    if (!parts.ok()) {
      EXPECT_EQ(parts.error().kind(), ErrorKind::kUnsupported) << key;
    }
  }
}

TEST(ShardRouterTest, KeyTextIsWhatClickHousePrints) {
  std::vector<std::string> names = {"id", "name", "price", "day", "at", "c"};
  std::vector<MappedType> types = {Type("Int32", Encoding::kInt32),
                                   Type("String", Encoding::kString),
                                   Type("Decimal(10, 2)", Encoding::kDecimal64, false, 2),
                                   Type("Date", Encoding::kDate),
                                   Type("DateTime('UTC')", Encoding::kDateTime),
                                   Type("String", Encoding::kString, true)};
  auto router =
      ShardRouter::Create("id, name, price, day, at, isNull(c), assumeNotNull(c)", names, types, {1, 1});
  ASSERT_TRUE(router.ok()) << router.error().message();
  std::vector<Cell> row = {int64_t{-5},          std::string_view("a'b\\c"),           DecimalCell{"-1.5"},
                           DateCell{2026, 1, 2}, DateTimeCell{2026, 1, 2, 3, 4, 5, 0}, NullCell{}};
  auto text = router->KeyText(row);
  ASSERT_TRUE(text.ok()) << text.error().message();
  EXPECT_EQ(*text, "(-5,'a\\'b\\\\c',-1.50,'2026-01-02','2026-01-02 03:04:05',1,'')");
  // Zero dates are stored as day 0, which 18.16 prints as zeros.
  row[3] = DateCell{0, 0, 0};
  row[4] = DateTimeCell{1970, 1, 1, 0, 0, 0, 0};
  row[5] = std::string_view("x");
  text = router->KeyText(row);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "(-5,'a\\'b\\\\c',-1.50,'0000-00-00','0000-00-00 00:00:00',0,'x')");
}

TEST(ShardRouterTest, NewerServersPrintZeroDatesAsEpochAndTrimDecimals) {
  std::vector<std::string> names = {"d", "day", "at", "n"};
  std::vector<MappedType> types = {
      Type("Decimal(10, 2)", Encoding::kDecimal64, false, 2), Type("Date", Encoding::kDate),
      Type("DateTime('UTC')", Encoding::kDateTime), Type("Decimal(10, 2)", Encoding::kDecimal64, true, 2)};
  auto router = ShardRouter::Create("d, day, at, assumeNotNull(n)", names, types, {1}, KeyStyle{true, true});
  ASSERT_TRUE(router.ok()) << router.error().message();
  std::vector<Cell> row = {DecimalCell{"-9071.20"}, DateCell{0, 0, 0}, EpochCell{0, 0}, NullCell{}};
  auto text = router->KeyText(row);
  ASSERT_TRUE(text.ok()) << text.error().message();
  EXPECT_EQ(*text, "(-9071.2,'1970-01-01','1970-01-01 00:00:00',0)");
  row[0] = DecimalCell{"5.00"};
  EXPECT_EQ(*router->KeyText(row), "(5,'1970-01-01','1970-01-01 00:00:00',0)");
}

// Issue 33, case 7: a NULL stores the enum value 0, which an ENUM declaring '' gives no member; the
// mapping labels it, and the router prints that label as the server does (Code 49 without it).
TEST(ShardRouterTest, NullOfAnEnumDeclaringEmptyPrintsTheLabelOfZero) {
  std::vector<std::string> names = {"e", "x"};
  auto e = MapColumn(testing::Col("e", schema::ColumnType::kEnum).Labels({"a", "", "b"}),
                     FromVersion({18, 16, 1, 0}));
  ASSERT_TRUE(e.ok());
  std::vector<MappedType> types = {*e, Type("Int32", Encoding::kInt32)};
  auto router = ShardRouter::Create("isNull(e), assumeNotNull(e), x", names, types, {1, 1});
  ASSERT_TRUE(router.ok()) << router.error().message();
  auto text = [&](Cell cell) {
    std::vector<Cell> row = {cell, int64_t{5}};
    auto t = router->KeyText(row);
    EXPECT_TRUE(t.ok()) << t.error().message();
    return t.ok() ? *t : "";
  };
  EXPECT_EQ(text(NullCell{}), "(1,' ',5)");
  EXPECT_EQ(text(uint64_t{2}), "(0,'',5)");
  EXPECT_EQ(text(uint64_t{0}), "(0,'',5)");  // MySQL's invalid value is written as the declared ''
  EXPECT_EQ(text(uint64_t{3}), "(0,'b',5)");
  std::vector<Cell> row = {NullCell{}, int64_t{5}};
  auto shard = router->Route(row);
  ASSERT_TRUE(shard.ok()) << shard.error().message();
  EXPECT_EQ(*shard, CityHash64("(1,' ',5)") % 2);
  // An ENUM without '' keeps '' for 0, NULLs included.
  auto plain =
      MapColumn(testing::Col("e", schema::ColumnType::kEnum).Labels({"a"}), FromVersion({18, 16, 1, 0}));
  ASSERT_TRUE(plain.ok());
  types[0] = *plain;
  router = ShardRouter::Create("isNull(e), assumeNotNull(e), x", names, types, {1, 1});
  ASSERT_TRUE(router.ok()) << router.error().message();
  EXPECT_EQ(text(NullCell{}), "(1,'',5)");
}

TEST(ShardRouterTest, ShardIsHashModuloCumulativeWeight) {
  std::vector<std::string> names = {"id"};
  std::vector<MappedType> types = {Type("UInt64", Encoding::kUInt64)};
  auto even = ShardRouter::Create("id", names, types, {1, 1});
  auto weighted = ShardRouter::Create("id", names, types, {2, 0, 1});
  ASSERT_TRUE(even.ok() && weighted.ok());
  std::map<size_t, int> counts;
  for (uint64_t id = 0; id < 3000; ++id) {
    std::vector<Cell> row = {id};
    uint64_t hash = CityHash64("(" + std::to_string(id) + ")");
    auto a = even->Route(row);
    auto b = weighted->Route(row);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(*a, hash % 2);
    EXPECT_EQ(*b, hash % 3 < 2 ? 0u : 2u);  // shard 2 (weight 0) gets nothing
    ++counts[*b];
  }
  EXPECT_GT(counts[0], 1800);
  EXPECT_GT(counts[2], 800);
  EXPECT_EQ(counts[1], 0);
}

TEST(ShardRouterTest, UnreproducibleKeyTypesAreUnsupported) {
  std::vector<std::string> names = {"f", "d", "t", "big"};
  std::vector<MappedType> types = {Type("Float64", Encoding::kFloat64), Type("DateTime", Encoding::kDateTime),
                                   Type("DateTime64(3, 'UTC')", Encoding::kDateTime64, false, 3),
                                   Type("Decimal(30, 2)", Encoding::kDecimal128, false, 2)};
  for (const char* key : {"f", "d", "t", "big", "missing"}) {
    auto router = ShardRouter::Create(key, names, types, {1, 1});
    EXPECT_FALSE(router.ok()) << key;
    if (!router.ok()) {
      EXPECT_EQ(router.error().kind(), ErrorKind::kUnsupported) << key;
    }
  }
  EXPECT_FALSE(ShardRouter::Create("f", names, types, {0, 0}).ok());
}

TEST(ShardRouterTest, ProbeIsComputed) {
  RoutingProbe probe = MakeRoutingProbe();
  EXPECT_TRUE(probe.sql.starts_with("SELECT cityHash64(toString(tuple(")) << probe.sql;
  ASSERT_EQ(probe.expected.size(), 4u);  // every style; each prints the probe differently
  for (size_t i = 0; i < 4; ++i) {
    for (size_t j = i + 1; j < 4; ++j) EXPECT_NE(probe.expected[i].second, probe.expected[j].second);
  }
  auto match = probe.Match(std::to_string(probe.expected[3].second) + "\n");
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(*match, probe.expected[3].first);
  EXPECT_FALSE(probe.Match("12").has_value());
  EXPECT_FALSE(probe.Match("Code: 46").has_value());
}

}  // namespace
}  // namespace chsync::clickhouse
