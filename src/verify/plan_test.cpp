#include "verify/plan.h"

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

schema::TableSchema Table(std::vector<schema::Column> columns, std::vector<std::string> key) {
  schema::TableSchema t;
  t.database = "shop";
  t.name = "orders";
  t.columns = std::move(columns);
  t.primary_key = std::move(key);
  t.RenumberColumns();
  return t;
}

clickhouse::Capabilities Caps() {
  return clickhouse::FromVersion(clickhouse::ServerVersion{26, 7});
}

TEST(PlanTest, IntegerKeyIsRanged) {
  auto plan = PlanTable(
      Table({Col("id", schema::ColumnType::kInt), Col("v", schema::ColumnType::kVarChar, true)}, {"id"}), {},
      "shop", "orders", Caps(), {});
  ASSERT_TRUE(plan.ok()) << plan.error().message();
  EXPECT_TRUE(plan->ranged);
  EXPECT_FALSE(plan->full_row);
  EXPECT_EQ(plan->dest_table, "`shop`.`orders`");
  Chunk chunk{"10", "20", 0, 1};
  EXPECT_EQ(SourceChunkCondition(*plan, chunk), "`id` >= 10 AND `id` < 20");
  EXPECT_EQ(DestChunkCondition(*plan, Chunk{std::nullopt, "20", 0, 1}), "`id` < 20");
  EXPECT_EQ(SourceChunkCondition(*plan, Chunk{}), "1");
  EXPECT_EQ(SourceNextBoundarySql(*plan, "10", 1000),
            "SELECT `id` FROM `shop`.`orders` WHERE `id` >= 10 ORDER BY `id` LIMIT 1 OFFSET 1000");
  // A boundary that is not an integer never reaches the SQL.
  EXPECT_EQ(SourceChunkCondition(*plan, Chunk{"1; DROP TABLE x", std::nullopt, 0, 1}), "1");
}

TEST(PlanTest, TextKeyUsesHashBuckets) {
  auto plan = PlanTable(
      Table({Col("code", schema::ColumnType::kVarChar), Col("v", schema::ColumnType::kInt)}, {"code"}), {},
      "shop", "orders", Caps(), {});
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(plan->ranged);
  Chunk chunk{std::nullopt, std::nullopt, 3, 16};
  EXPECT_NE(SourceChunkCondition(*plan, chunk).find(", 16) = 3"), std::string::npos);
  EXPECT_NE(DestChunkCondition(*plan, chunk).find(" % 16) = 3"), std::string::npos);
  EXPECT_EQ(chunk.Describe("x"), "bucket 3 of 16");
}

TEST(PlanTest, KeylessTableIsComparedAsDistinctRows) {
  auto plan = PlanTable(
      Table({Col("a", schema::ColumnType::kInt, true), Col("b", schema::ColumnType::kInt, true)}, {}), {},
      "shop", "orders", Caps(), {});
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->full_row);
  EXPECT_EQ(plan->key.size(), 2u);
  EXPECT_NE(SourceSummarySql(*plan, Chunk{}).find("SELECT DISTINCT"), std::string::npos);
  EXPECT_EQ(plan->source_key_text, plan->source_row_text);
}

TEST(PlanTest, MappingExcludesAndRenames) {
  ColumnMapping mapping;
  mapping.excluded = {"SECRET"};
  mapping.renamed = {{"v", "value"}};
  auto plan = PlanTable(Table({Col("id", schema::ColumnType::kInt), Col("v", schema::ColumnType::kInt),
                               Col("secret", schema::ColumnType::kVarChar)},
                              {"id"}),
                        mapping, "analytics", "orders_v2", Caps(), {});
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->columns.size(), 2u);
  EXPECT_EQ(plan->columns[1].dest_name, "value");
  EXPECT_EQ(plan->columns[1].dest_sql, "toString(`value`)");
  ASSERT_EQ(plan->notes.size(), 1u);
  EXPECT_NE(plan->notes[0].find("secret: excluded"), std::string::npos);
  EXPECT_EQ(plan->dest_name, "analytics.orders_v2");
}

// A table shared by several sources (table_options' source_column): every question to the
// destination carries this source's filter, or the other sources' rows count as differences.
TEST(PlanTest, EveryDestinationQuestionOfASharedTableAsksForThisSourcesRowsOnly) {
  ColumnMapping mapping;
  mapping.source_column = "_source";
  mapping.source_value = "tenant_1";
  const std::string filter = "`_source` = 'tenant_1'";
  auto ranged = PlanTable(
      Table({Col("id", schema::ColumnType::kInt), Col("v", schema::ColumnType::kVarChar, true)}, {"id"}),
      mapping, "shop", "orders", Caps(), {});
  auto bucketed = PlanTable(
      Table({Col("code", schema::ColumnType::kVarChar), Col("v", schema::ColumnType::kInt)}, {"code"}),
      mapping, "shop", "orders", Caps(), {});
  ASSERT_TRUE(ranged.ok()) << ranged.error().message();
  ASSERT_TRUE(bucketed.ok()) << bucketed.error().message();
  ASSERT_TRUE(ranged->ranged);
  ASSERT_FALSE(bucketed->ranged);
  EXPECT_EQ(ranged->dest_filter, filter);
  for (const TablePlan* plan : {&*ranged, &*bucketed}) {
    const Chunk chunk = plan->ranged ? Chunk{"10", "20", 0, 1} : Chunk{std::nullopt, std::nullopt, 3, 16};
    for (const std::string& sql :
         {DestSummarySql(*plan, chunk), DestSummarySql(*plan, Chunk{}), DestBucketSummarySql(*plan, 16),
          DestBucketSummarySql(*plan, 1), DestSubBucketSql(*plan, chunk, 8), DestRowsSql(*plan, chunk, 8, {}),
          DestRowsSql(*plan, chunk, 8, {1, 2}), DestVersionsSql(*plan, chunk, 8, {1})}) {
      EXPECT_NE(sql.find(filter), std::string::npos) << sql;
    }
  }
  // A table of its own has no filter.
  auto own = PlanTable(
      Table({Col("code", schema::ColumnType::kVarChar), Col("v", schema::ColumnType::kInt)}, {"code"}), {},
      "shop", "orders", Caps(), {});
  ASSERT_TRUE(own.ok());
  EXPECT_EQ(DestBucketSummarySql(*own, 4).find("_source"), std::string::npos);
}

// The destination's column types (mapping.dest_types) decide how its cells print: a shared
// column another source widened is compared by value.
TEST(PlanTest, AColumnWidenedAtTheDestinationIsComparedByValue) {
  schema::Column amount = Col("amount", schema::ColumnType::kDecimal);
  amount.precision = 10;
  amount.scale = 2;
  const schema::TableSchema t = Table({Col("id", schema::ColumnType::kInt), amount}, {"id"});
  auto as_mapped = PlanTable(t, {}, "shop", "orders", Caps(), {});
  ColumnMapping mapping;
  mapping.dest_types = {{"amount", "Nullable(Decimal(20, 6))"}, {"id", "Int64"}};
  auto widened = PlanTable(t, mapping, "shop", "orders", Caps(), {});
  ASSERT_TRUE(as_mapped.ok());
  ASSERT_TRUE(widened.ok());
  EXPECT_EQ(as_mapped->columns[1].dest_sql, "toDecimalString(`amount`, 2)");
  EXPECT_NE(widened->columns[1].dest_sql.find("toDecimalString(assumeNotNull(`amount`), 6)"),
            std::string::npos)
      << widened->columns[1].dest_sql;
  EXPECT_NE(widened->columns[1].source_sql.find("TRIM(TRAILING '0'"), std::string::npos);
  EXPECT_EQ(widened->columns[0].dest_sql, "toString(`id`)");
}

TEST(PlanTest, ParseSumIsModulo2To64) {
  EXPECT_EQ(*ParseSum("18446744073709551616"), 0u);
  EXPECT_EQ(*ParseSum("18446744073709551617"), 1u);
  EXPECT_EQ(*ParseSum("36893488147419103234"), 2u);
  EXPECT_EQ(*ParseSum("42"), 42u);
  EXPECT_EQ(*ParseSum("42.000"), 42u);
  EXPECT_EQ(*ParseSum(""), 0u);
  EXPECT_FALSE(ParseSum("4.5").ok());
  EXPECT_FALSE(ParseSum("-1").ok());
  EXPECT_FALSE(ParseSum("abc").ok());
}

TEST(PlanTest, ParseCount) {
  EXPECT_EQ(*ParseCount("0"), 0u);
  EXPECT_EQ(*ParseCount("18446744073709551615"), 18446744073709551615u);
  EXPECT_FALSE(ParseCount("18446744073709551616").ok());
  EXPECT_FALSE(ParseCount("").ok());
  EXPECT_FALSE(ParseCount("1x").ok());
}

TEST(PlanTest, DifferingBuckets) {
  std::map<uint64_t, Summary> a{{1, {2, 5}}, {2, {1, 7}}, {4, {1, 1}}};
  std::map<uint64_t, Summary> b{{1, {2, 5}}, {2, {1, 8}}, {3, {1, 1}}};
  EXPECT_EQ(DifferingBuckets(a, b), (std::vector<uint64_t>{2, 3, 4}));
  EXPECT_TRUE(DifferingBuckets(a, a).empty());
}

TEST(PlanTest, SubBuckets) {
  EXPECT_EQ(SubBucketsFor(0), 1u);
  EXPECT_EQ(SubBucketsFor(3200), 100u);
  EXPECT_EQ(SubBucketsFor(100'000'000), 4096u);
}

}  // namespace
}  // namespace chsync::verify
