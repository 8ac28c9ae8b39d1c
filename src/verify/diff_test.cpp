#include "verify/diff.h"

#include <gtest/gtest.h>

#include "clickhouse/server_version.h"
#include "clickhouse/sql_quoting.h"

namespace chsync::verify {
namespace {

TablePlan Plan(bool keyless = false) {
  schema::TableSchema t;
  t.database = "shop";
  t.name = "t";
  schema::Column id;
  id.name = "id";
  id.type = schema::ColumnType::kInt;
  id.nullable = false;
  schema::Column name;
  name.name = "name";
  name.type = schema::ColumnType::kVarChar;
  name.charset = "utf8mb4";
  t.columns = {id, name};
  if (!keyless)
    t.primary_key = {"id"};
  else
    t.columns[0].nullable = true;
  t.RenumberColumns();
  auto plan = PlanTable(t, {}, "shop", "t", clickhouse::FromVersion(clickhouse::ServerVersion{26, 7}), {});
  EXPECT_TRUE(plan.ok());
  return *plan;
}

TEST(DiffTest, FindsMissingExtraAndChangedRows) {
  TablePlan plan = Plan();
  CellRows source{{"1", "1:a"}, {"2", "1:b"}, {"3", "N"}};
  CellRows dest{{"1", "1:a"}, {"3", "2:it"}, {"4", "1:d"}};
  auto diffs = CompareRows(plan, source, dest);
  ASSERT_TRUE(diffs.ok());
  ASSERT_EQ(diffs->size(), 3u);
  EXPECT_EQ(DescribeDifference((*diffs)[0]), "id=2: missing in the destination");
  EXPECT_EQ(DescribeDifference((*diffs)[1]), "id=3: name: source NULL, destination 'it'");
  EXPECT_EQ(DescribeDifference((*diffs)[2]), "id=4: in the destination only");
}

TEST(DiffTest, KeylessRowsAreMissingOrExtra) {
  TablePlan plan = Plan(true);
  auto diffs = CompareRows(plan, {{"1", "1:a"}}, {{"1", "1:b"}});
  ASSERT_TRUE(diffs.ok());
  ASSERT_EQ(diffs->size(), 2u);
  EXPECT_EQ((*diffs)[0].kind, RowDifference::Kind::kMissing);
  EXPECT_EQ((*diffs)[1].kind, RowDifference::Kind::kExtra);
  EXPECT_EQ((*diffs)[0].key, "row (id=1, name='a')");
}

TEST(DiffTest, WrongWidthIsAnError) {
  TablePlan plan = Plan();
  EXPECT_FALSE(CompareRows(plan, {{"1"}}, {}).ok());
}

TEST(DiffTest, ValuesAreShownEscaped) {
  TablePlan plan = Plan();
  auto diffs = CompareRows(plan, {{"1", "3:a'\n"}}, {{"1", "0:"}});
  ASSERT_TRUE(diffs.ok());
  ASSERT_EQ(diffs->size(), 1u);
  EXPECT_EQ(DescribeDifference((*diffs)[0]), "id=1: name: source 'a\\'\\x0a', destination ''");
}

TEST(DiffTest, LagDecision) {
  LagView behind;  // checkpoint has not passed the read position
  EXPECT_TRUE(MayBeLag(behind, std::nullopt));
  LagView passed{true, 1000};
  EXPECT_FALSE(MayBeLag(passed, std::nullopt));  // never written: a real difference
  EXPECT_FALSE(MayBeLag(passed, 999));           // written before the read: real
  EXPECT_TRUE(MayBeLag(passed, 1000));           // written by a change the read did not see
  EXPECT_FALSE(MayBeLag(LagView{true, std::nullopt}, 5));
}

TEST(DiffTest, TwoLiveRowsOfOneKeyAreNamedAsSuch) {
  // One key twice in ClickHouse's FINAL view (a sorting key or a shard that no longer follows the
  // source key): both copies are shown, never one of them compared as if it were the only one.
  TablePlan plan = Plan();
  auto diffs = CompareRows(plan, {{"1", "1:a"}, {"2", "1:b"}}, {{"1", "1:a"}, {"1", "1:z"}, {"2", "1:b"}});
  ASSERT_TRUE(diffs.ok());
  ASSERT_EQ(diffs->size(), 1u);
  EXPECT_EQ((*diffs)[0].kind, RowDifference::Kind::kDuplicate);
  EXPECT_EQ((*diffs)[0].copies, 2u);
  EXPECT_EQ(
      DescribeDifference((*diffs)[0]),
      "id=1: 2 live rows in the destination (one key, several ClickHouse sorting keys or shards): name: "
      "source 'a', destination 'a' | 'z'");
  // Identical copies, and copies of a key the source no longer has, are named too.
  diffs = CompareRows(plan, {}, {{"3", "1:c"}, {"3", "1:c"}});
  ASSERT_TRUE(diffs.ok());
  ASSERT_EQ(diffs->size(), 1u);
  EXPECT_EQ(DescribeDifference((*diffs)[0]),
            "id=3: 2 live rows in the destination (one key, several ClickHouse sorting keys or shards)");
}

TEST(DiffTest, TheShiftAtAReadPositionIsBoundedByCheckpointsBeforeIt) {
  ShiftAtRead shift("binlog.000004", 5000);
  EXPECT_EQ(shift.lower_bound(), 0u);
  shift.Saw("binlog.000004", 1200, 300, 0);  // compressed events before 1200 moved versions by 300
  EXPECT_EQ(shift.lower_bound(), 300u);
  shift.Saw("binlog.000004", 9000, 7000, 0);  // after the read: says nothing about it
  shift.Saw("binlog.000003", 100, 9000, 0);   // another file
  EXPECT_EQ(shift.lower_bound(), 300u);
  shift.Saw("binlog.000004", 5000, 450, 0);  // at the read position itself: exact
  EXPECT_EQ(shift.lower_bound(), 450u);
  // The pipe moved to another server (a new sequence base): its binlog.000004 is another file.
  shift.Saw("binlog.000004", 4000, 900, 7);
  EXPECT_EQ(shift.lower_bound(), 0u);
  shift.Saw("binlog.000004", 4000, 900, 0);
  EXPECT_EQ(shift.lower_bound(), 0u);
}

TEST(DiffTest, TabSeparated) {
  EXPECT_EQ(clickhouse::SplitTabSeparated("a\\tb\tc\\\\d\t\\0\\n"),
            (std::vector<std::string>{"a\tb", "c\\d", std::string("\0\n", 2)}));
  auto rows = ParseTabSeparated("1\t2\n3\t4\n");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1], (std::vector<std::string>{"3", "4"}));
  EXPECT_TRUE(ParseTabSeparated("").empty());
}

}  // namespace
}  // namespace chsync::verify
