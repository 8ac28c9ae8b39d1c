#include "clickhouse/merged_type.h"

#include <gtest/gtest.h>

#include "clickhouse/ddl.h"
#include "clickhouse/test_columns.h"

namespace chsync::clickhouse {
namespace {

using schema::ColumnType;
using testing::Col;

const Capabilities kOld = FromVersion({18, 16, 1, 0});

MappedType Ours(const schema::Column& column) {
  auto mapped = MapColumn(column, kOld);
  EXPECT_TRUE(mapped.ok());
  return SharedStorageType(*mapped);
}

TEST(MergedTypeTest, SmallIntegersAndFloatsAreStoredWideSoThatAWideningChangesNothing) {
  EXPECT_EQ(Ours(Col("a", ColumnType::kInt).NotNull()).type, "Int64");
  EXPECT_EQ(Ours(Col("a", ColumnType::kTinyInt).Unsigned()).type, "Nullable(Int64)");
  EXPECT_EQ(Ours(Col("a", ColumnType::kBigInt).Unsigned().NotNull()).type, "UInt64");
  EXPECT_EQ(Ours(Col("a", ColumnType::kFloat).NotNull()).type, "Float64");
  EXPECT_EQ(Ours(Col("a", ColumnType::kVarChar).Length(5).NotNull()).type, "String");

  ColumnMerge m = MergeColumn("Int64", Ours(Col("a", ColumnType::kBigInt).NotNull()));
  EXPECT_EQ(m.kind, ColumnMerge::Kind::kKeep);
  m = MergeColumn("Int64", Ours(Col("a", ColumnType::kSmallInt).NotNull()));
  EXPECT_EQ(m.kind, ColumnMerge::Kind::kKeep);
  EXPECT_EQ(m.write_as.encoding, Encoding::kInt64);
}

TEST(MergedTypeTest, AWiderTypeFromOneSourceWidensTheColumnAndANarrowerOneWritesIntoIt) {
  // DECIMAL(12,2) in one tenant, DECIMAL(12,4) in another: Decimal(14, 4) holds both.
  ColumnMerge m =
      MergeColumn("Decimal(12, 2)", Ours(Col("p", ColumnType::kDecimal).Precision(12, 4).NotNull()));
  ASSERT_EQ(m.kind, ColumnMerge::Kind::kModify);
  EXPECT_EQ(m.type, "Decimal(14, 4)");
  EXPECT_EQ(m.write_as.encoding, Encoding::kDecimal64);
  EXPECT_EQ(m.write_as.scale, 4U);
  // The narrower source writes into the wider column as it is.
  m = MergeColumn("Decimal(14, 4)", Ours(Col("p", ColumnType::kDecimal).Precision(10, 2).NotNull()));
  ASSERT_EQ(m.kind, ColumnMerge::Kind::kKeep);
  EXPECT_EQ(m.write_as.type, "Decimal(14, 4)");
  EXPECT_EQ(m.write_as.scale, 4U);
  // A NULL-able source makes the column Nullable; a NOT NULL one writes into a Nullable column.
  m = MergeColumn("Int64", Ours(Col("a", ColumnType::kInt)));
  ASSERT_EQ(m.kind, ColumnMerge::Kind::kModify);
  EXPECT_EQ(m.type, "Nullable(Int64)");
  m = MergeColumn("Nullable(String)", Ours(Col("s", ColumnType::kVarChar).Length(3).NotNull()));
  EXPECT_EQ(m.kind, ColumnMerge::Kind::kKeep);
  EXPECT_TRUE(m.write_as.nullable);
  m = MergeColumn("LowCardinality(String)", Ours(Col("s", ColumnType::kText)));
  ASSERT_EQ(m.kind, ColumnMerge::Kind::kModify);
  EXPECT_EQ(m.type, "LowCardinality(Nullable(String))");
  // DATETIME(3) and DATETIME(6) where DateTime64 exists.
  MappedType dt3{.type = "DateTime64(3, 'UTC')", .encoding = Encoding::kDateTime64, .scale = 3};
  m = MergeColumn("DateTime64(6, 'UTC')", dt3);
  ASSERT_EQ(m.kind, ColumnMerge::Kind::kKeep);
  EXPECT_EQ(m.write_as.scale, 6U);
}

TEST(MergedTypeTest, AnEnumThatExtendsTheOtherMergesAndOneThatDisagreesConflicts) {
  auto e = [](std::vector<std::string> labels) {
    schema::Column c = Col("e", ColumnType::kEnum).NotNull();
    c.enum_values = std::move(labels);
    return Ours(c);
  };
  const std::string ab = e({"a", "b"}).type;
  ColumnMerge m = MergeColumn(ab, e({"a", "b", "c"}));
  ASSERT_EQ(m.kind, ColumnMerge::Kind::kModify);
  EXPECT_EQ(m.type, e({"a", "b", "c"}).type);
  m = MergeColumn(e({"a", "b", "c"}).type, e({"a", "b"}));
  EXPECT_EQ(m.kind, ColumnMerge::Kind::kKeep);
  m = MergeColumn(ab, e({"b", "a"}));
  EXPECT_EQ(m.kind, ColumnMerge::Kind::kConflict);
  // 'a' is not a prefix label of 'ab'.
  m = MergeColumn(e({"a"}).type, e({"ab"}));
  EXPECT_EQ(m.kind, ColumnMerge::Kind::kConflict);
}

TEST(MergedTypeTest, TypesNoColumnHoldsTogetherConflictWithAMessageNamingBoth) {
  ColumnMerge m = MergeColumn("Int64", Ours(Col("a", ColumnType::kBigInt).Unsigned().NotNull()));
  ASSERT_EQ(m.kind, ColumnMerge::Kind::kConflict);
  EXPECT_NE(m.why.find("Int64"), std::string::npos);
  EXPECT_NE(m.why.find("UInt64"), std::string::npos);
  EXPECT_EQ(MergeColumn("String", Ours(Col("a", ColumnType::kInt).NotNull())).kind,
            ColumnMerge::Kind::kConflict);
  EXPECT_EQ(MergeColumn("Date", Ours(Col("a", ColumnType::kInt).NotNull())).kind,
            ColumnMerge::Kind::kConflict);
  EXPECT_EQ(
      MergeColumn("Decimal(38, 30)", Ours(Col("p", ColumnType::kDecimal).Precision(20, 2).NotNull())).kind,
      ColumnMerge::Kind::kConflict);
  EXPECT_EQ(MergeColumn("Nullable(", Ours(Col("a", ColumnType::kInt))).kind, ColumnMerge::Kind::kConflict);
}

TEST(MergedTypeTest, ASharedTableLeadsWithItsSourceColumnAndAddsColumnsAtTheEnd) {
  schema::TableSchema t;
  t.database = "tenant_1";
  t.name = "users";
  t.columns = {Col("id", ColumnType::kInt).NotNull(), Col("n", ColumnType::kVarChar).Length(9)};
  t.primary_key = {"id"};
  t.RenumberColumns();
  CreateOptions options{.table = "users", .source_column = "_source"};
  auto sql = CreateTable(t, kOld, DdlTarget{.database = "dw"}, options);
  ASSERT_TRUE(sql.ok()) << sql.error().message();
  EXPECT_NE(sql->find("`_source` String,\n    `id` Int64"), std::string::npos) << *sql;
  EXPECT_NE(sql->find("ORDER BY (`_source`, `id`)"), std::string::npos) << *sql;
  auto add =
      AddColumn("users", Col("x", ColumnType::kSmallInt), "n", kOld, DdlTarget{.database = "dw"}, options);
  ASSERT_TRUE(add.ok());
  EXPECT_EQ(*add, "ALTER TABLE `dw`.`users` ADD COLUMN `x` Nullable(Int64)");
  t.columns.push_back(Col("_source", ColumnType::kInt));
  t.RenumberColumns();
  EXPECT_FALSE(CreateTable(t, kOld, DdlTarget{.database = "dw"}, options).ok());
}

}  // namespace
}  // namespace chsync::clickhouse
