// Issue 7 end to end: what a user sees in ClickHouse after each kind of schema change at the source
// (docs/schema-changes.md), against both destinations (ClickHouse 18.16 over HTTP and an embedded
// chDB store).
//
// Every scenario streams inserts, updates and deletes before and after the change, in one
// `chsync run --until-caught-up` that crosses the change and in another after it, and then
// requires the destination's FINAL view to equal the source value for value (pipe_compare.h).
//
// Whether a table was copied again (rebuilt online) or changed in place is seen through a "hidden"
// row: a row written at the source with sql_log_bin = 0 (at key -1, which no workload statement
// touches) never reaches the binlog, so it reaches ClickHouse only when the table is copied from
// the source again.
//
// Every test uses its own source database, --state directory, --server-id and (embedded) store.

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/url.h"
#include "mysql/connection.h"
#include "pipe_compare.h"
#include "pipe_harness.h"
#include "test_env.h"

namespace chsync {
namespace {

using testing::ChsyncBinary;
using testing::CommandResult;
using testing::Dest;
using testing::DestColumnMap;
using testing::DestName;
using testing::MakeTempDir;
using testing::PipeTest;
using testing::RunCommand;

/// Replication server ids of this binary (pipe_e2e_test uses 1000000 + …).
constexpr int kServerIdBase = 3000000;

std::string Str(int v) {
  return std::to_string(v);
}

/// Statements that insert rows [from, to] into `table` (`values`: the SELECT list over `seq`, in
/// the order of `columns`), then update (`set`: an UPDATE's SET list) and delete some rows already
/// there: the workload a scenario streams before and after a schema change.
std::vector<std::string> Churn(const std::string& table, int from, int to, const std::string& columns,
                               const std::string& values, const std::string& set,
                               const std::string& key = "id") {
  return {
      "INSERT INTO " + table + " (" + columns + ") SELECT " + values + " FROM seq_" + Str(from) + "_to_" +
          Str(to),
      "UPDATE " + table + " SET " + set + " WHERE " + key + " % 7 = " + Str(from % 7),
      "DELETE FROM " + table + " WHERE " + key + " % 23 = " + Str(from % 23),
      // one row changed twice and one deleted and inserted again, in one transaction
      "BEGIN",
      "UPDATE " + table + " SET " + set + " WHERE " + key + " = " + Str(from + 1),
      "UPDATE " + table + " SET " + set + " WHERE " + key + " = " + Str(from + 1),
      "DELETE FROM " + table + " WHERE " + key + " = " + Str(from + 2),
      "INSERT INTO " + table + " (" + columns + ") SELECT " + values + " FROM seq_" + Str(from + 2) + "_to_" +
          Str(from + 2),
      "COMMIT",
  };
}

/// The run stopped (exit 1) for db.table with the message of docs/schema-changes.md: the table,
/// the binlog position and `chsync resync --table db.table`.
void ExpectStoppedFor(const CommandResult& r, const std::string& db, const std::string& table,
                      const std::string& why) {
  const std::string name = db + "." + table;
  EXPECT_EQ(r.exit_code, 1) << "chsync run must stop (exit 1) on " << why << ":\n" << r.Describe();
  EXPECT_NE(r.err.find(name), std::string::npos) << "the error must name " << name << ":\n" << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"([A-Za-z0-9_.-]+\.[0-9]{6}:[0-9]+)")))
      << "the error must give the binlog position (file:pos):\n"
      << r.err;
  EXPECT_NE(r.err.find("chsync resync --table " + name), std::string::npos)
      << "the error must say `chsync resync --table " << name << "`:\n"
      << r.err;
}

class SchemaEvolutionTest : public ::testing::TestWithParam<Dest> {
 protected:
  void SetUp() override { p_.Init("CHSYNC_TEST_MYSQL_FULL", GetParam(), "evo", kServerIdBase); }
  void TearDown() override { p_.Cleanup(); }

  /// Table `name` (id INT PRIMARY KEY, v VARCHAR(50), n INT, ts DATETIME(3)) with rows [1, rows].
  void CreateStandard(const std::string& name, int rows) {
    p_.ExecAll({"CREATE TABLE " + name + " (id INT PRIMARY KEY, v VARCHAR(50), n INT, ts DATETIME(3))",
                "INSERT INTO " + name + " SELECT seq, CONCAT('v', seq), seq % 100, TIMESTAMP '2024-01-01 " +
                    "00:00:00.250' + INTERVAL seq MINUTE FROM seq_1_to_" + Str(rows)});
  }
  /// Churn() over a CreateStandard() table.
  std::vector<std::string> StandardChurn(const std::string& name, int from, int to) {
    return Churn(name, from, to, "id, v, n, ts",
                 "seq, CONCAT('w', seq), seq % 50, TIMESTAMP '2025-06-01 12:00:00.5' + INTERVAL seq SECOND",
                 "v = CONCAT('u', id, '-" + Str(from) + "'), n = n + 1");
  }

  PipeTest p_;
};

// ---------------------------------------------------------------------------------------------
// 1. Column renames.

TEST_P(SchemaEvolutionTest, RenameColumnKeepsDataAndTheNewNameIsQueryable) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, a INT, v VARCHAR(20), w INT NOT NULL)",
              "INSERT INTO t SELECT seq, seq * 3, CONCAT('v', seq), seq FROM seq_1_to_1000",
              "CREATE TABLE k (id INT NOT NULL PRIMARY KEY, x VARCHAR(20))",
              "INSERT INTO k SELECT seq, CONCAT('x', seq) FROM seq_1_to_300"});
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "(snapshot)");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after the snapshot");

  p_.ExecAll(
      Churn("t", 1001, 1200, "id, a, v, w", "seq, seq * 3, CONCAT('v', seq), seq", "a = a + 1, w = w + 1"));
  p_.Exec("ALTER TABLE t RENAME COLUMN a TO b");
  p_.ExecAll(
      Churn("t", 1201, 1400, "id, b, v, w", "seq, -seq, CONCAT('v', seq), seq", "b = b - 1, w = w + 2"));
  p_.Exec("ALTER TABLE t CHANGE v v2 VARCHAR(20)");
  p_.ExecAll(Churn("t", 1401, 1600, "id, b, v2, w", "seq, seq, CONCAT('n', seq), -seq",
                   "v2 = CONCAT(v2, '!'), b = b * 2"));
  // A key column renamed.
  p_.ExecAll(Churn("k", 301, 400, "id, x", "seq, CONCAT('y', seq)", "x = CONCAT('u', id)"));
  p_.Exec("ALTER TABLE k CHANGE id kid INT NOT NULL");
  p_.ExecAll(Churn("k", 401, 500, "kid, x", "seq, CONCAT('z', seq)", "x = CONCAT('u2', kid)", "kid"));
  r = p_.Run();
  ASSERT_RUN_OK(r, "across RENAME COLUMN / CHANGE");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after RENAME COLUMN a TO b and CHANGE v v2");
  EXPECT_EQUAL_TO_SOURCE(p_, "k", "after CHANGE of key column id to kid");

  // Streaming goes on into the renamed columns.
  p_.ExecAll(Churn("t", 1601, 1800, "id, b, v2, w", "seq, seq + 7, CONCAT('m', seq), seq", "b = -b"));
  p_.ExecAll(Churn("k", 501, 600, "kid, x", "seq, CONCAT('q', seq)", "x = CONCAT('u3', kid)", "kid"));
  r = p_.Run();
  ASSERT_RUN_OK(r, "after the renames");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after more rows were written to the renamed columns");
  EXPECT_EQUAL_TO_SOURCE(p_, "k", "after more rows were written to the renamed key column");

  // What a user queries: the new names work on both servers.
  EXPECT_FALSE(
      p_.DestQuery("SELECT b, v2 FROM " + p_.DestTable("t") + " FINAL WHERE _chsync_is_deleted = 0 LIMIT 3")
          .empty())
      << "SELECT b, v2 FROM t FINAL returns nothing";
  EXPECT_FALSE(p_.DestQuery("SELECT kid FROM " + p_.DestTable("k") + " FINAL LIMIT 3").empty())
      << "SELECT kid FROM k FINAL returns nothing";

  DestColumnMap t = p_.DestColumns("t");
  DestColumnMap k = p_.DestColumns("k");
  if (p_.DestVersion() >= 2004) {  // ClickHouse has RENAME COLUMN: the columns are renamed
    EXPECT_TRUE(t.count("b") && t["b"].second.empty()) << "column b must be a real column of t";
    EXPECT_TRUE(t.count("v2") && t["v2"].second.empty()) << "column v2 must be a real column of t";
    EXPECT_FALSE(t.count("a")) << "column a must be renamed to b in ClickHouse";
    EXPECT_FALSE(t.count("v")) << "column v must be renamed to v2 in ClickHouse";
  } else {  // 18.16: the old columns stay, the new names are ALIAS columns
    EXPECT_TRUE(t.count("a") && t["a"].second.empty()) << "column a must stay in ClickHouse 18.16";
    EXPECT_TRUE(t.count("v") && t["v"].second.empty()) << "column v must stay in ClickHouse 18.16";
    EXPECT_EQ(t["b"].second, "ALIAS") << "column b must be an ALIAS of a on ClickHouse 18.16";
    EXPECT_EQ(t["v2"].second, "ALIAS") << "column v2 must be an ALIAS of v on ClickHouse 18.16";
  }
  // Key columns keep their ClickHouse name on every version.
  EXPECT_TRUE(k.count("id") && k["id"].second.empty()) << "key column id must keep its name in ClickHouse";
  EXPECT_EQ(k["kid"].second, "ALIAS") << "renamed key column kid must be an ALIAS of id";
}

// A renamed column changed again: on 18.16 (and for key columns) ClickHouse holds it under its old
// name, so later MODIFY, rename and DROP statements must reach that column.
TEST_P(SchemaEvolutionTest, RenamedColumnChangedAgainFollowsItsClickHouseColumn) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, a INT, v VARCHAR(20) NOT NULL, w INT NOT NULL)",
              "INSERT INTO t SELECT seq, seq * 3, CONCAT('v', seq), seq FROM seq_1_to_500"});
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.Exec("ALTER TABLE t RENAME COLUMN a TO b");
  p_.ExecAll(Churn("t", 501, 600, "id, b, v, w", "seq, seq, CONCAT('v', seq), seq", "b = b + 1"));
  p_.Exec("ALTER TABLE t MODIFY b BIGINT");
  p_.ExecAll(Churn("t", 601, 700, "id, b, v, w", "seq, seq * 4000000000, 'big', seq", "b = b + 3000000000"));
  p_.Exec("ALTER TABLE t RENAME COLUMN b TO c, RENAME COLUMN w TO w2");
  p_.ExecAll(Churn("t", 701, 800, "id, c, v, w2", "seq, -seq, 'c', seq", "c = c - 1, w2 = w2 + 1"));
  r = p_.Run();
  ASSERT_RUN_OK(r, "across RENAME, MODIFY and a second RENAME of one column");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after the renamed column was widened and renamed again");
  p_.Exec("ALTER TABLE t DROP COLUMN w2");
  p_.ExecAll(Churn("t", 801, 900, "id, c, v", "seq, seq, 'd'", "c = c + 5"));
  r = p_.Run();
  ASSERT_RUN_OK(r, "across DROP of a renamed column");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after a renamed column was dropped");
  EXPECT_FALSE(
      p_.DestQuery("SELECT c FROM " + p_.DestTable("t") + " FINAL WHERE _chsync_is_deleted = 0 AND c < -700")
          .empty())
      << "SELECT c FROM t returns none of the rows written after the second rename";
}

TEST_P(SchemaEvolutionTest, RenameColumnIgnoredByPolicyKeepsTheOldName) {
  ASSERT_TRUE(p_.connected());
  CreateStandard("t", 300);
  const std::vector<std::string> policy = {"--schema-policy", "rename_column=ignore"};
  CommandResult r = p_.Run(policy);
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.ExecAll(StandardChurn("t", 301, 400));
  p_.Exec("ALTER TABLE t RENAME COLUMN n TO m");
  p_.ExecAll(Churn("t", 401, 500, "id, v, m, ts", "seq, 'r', -CAST(seq AS SIGNED), NULL", "m = m + 1000"));
  r = p_.Run(policy);
  ASSERT_RUN_OK(r, "across RENAME COLUMN with rename_column=ignore");
  DestColumnMap columns = p_.DestColumns("t");
  EXPECT_TRUE(columns.count("n") && columns["n"].second.empty())
      << "with rename_column=ignore ClickHouse t keeps column n";
  EXPECT_FALSE(columns.count("m")) << "with rename_column=ignore ClickHouse t gets no column m";
  // Rows keep flowing into n: the source's m, value for value.
  auto src = p_.SourceQuery("SELECT id, m FROM t ORDER BY id");
  auto dst = p_.DestQuery("SELECT id, n FROM " + p_.DestTable("t") +
                          " FINAL WHERE _chsync_is_deleted = 0 ORDER BY id");
  EXPECT_EQ(dst, src) << "ClickHouse t.n must hold the source's t.m for every row";
}

// ---------------------------------------------------------------------------------------------
// RENAME TABLE / ALTER TABLE … RENAME TO.

TEST_P(SchemaEvolutionTest, RenamedTablesAreRenamedInClickHouse) {
  ASSERT_TRUE(p_.connected());
  CreateStandard("a", 300);
  CreateStandard("b", 300);
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.ExecAll(StandardChurn("a", 301, 400));
  p_.ExecAll({"RENAME TABLE a TO a2", "ALTER TABLE b RENAME TO b2"});
  p_.ExecAll(StandardChurn("a2", 401, 500));
  p_.ExecAll(StandardChurn("b2", 401, 500));
  r = p_.Run();
  ASSERT_RUN_OK(r, "across RENAME TABLE");
  EXPECT_EQ(p_.DestTables(), (std::set<std::string>{"a2", "b2"}))
      << "after RENAME TABLE a TO a2 and ALTER TABLE b RENAME TO b2 ClickHouse must hold a2 and b2 only";
  EXPECT_EQUAL_TO_SOURCE(p_, "a2", "after RENAME TABLE a TO a2");
  EXPECT_EQUAL_TO_SOURCE(p_, "b2", "after ALTER TABLE b RENAME TO b2");
}

// ---------------------------------------------------------------------------------------------
// 2. Widening in place.

TEST_P(SchemaEvolutionTest, WideningTypesChangesTheClickHouseColumnInPlace) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll(
      {"CREATE TABLE w (id INT PRIMARY KEY, i INT, s VARCHAR(10), d DECIMAL(10,2), n INT NOT NULL, "
       "f FLOAT)",
       "INSERT INTO w SELECT seq, CAST(seq AS SIGNED) * 1000 - 500000, CONCAT('s', seq), seq * 1.25 - 300, "
       "seq, seq / 10 "
       "FROM seq_1_to_1000"});
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "(snapshot)");
  EXPECT_EQUAL_TO_SOURCE(p_, "w", "after the snapshot");
  DestColumnMap before = p_.DestColumns("w");

  // A row ClickHouse gets only if the table is copied again.
  p_.ExecHidden({"INSERT INTO w VALUES (-1, 0, 'hidden', 0, 0, 0)"});
  const std::string cols = "id, i, s, d, n, f";
  p_.ExecAll(Churn("w", 1001, 1200, cols,
                   "seq, -CAST(seq AS SIGNED), CONCAT('t', seq), seq / 4, seq, seq / 3", "i = i + 1"));
  p_.ExecAll({"ALTER TABLE w MODIFY i BIGINT", "ALTER TABLE w MODIFY s VARCHAR(100)",
              "ALTER TABLE w MODIFY d DECIMAL(12,2), MODIFY n INT NULL", "ALTER TABLE w MODIFY f DOUBLE"});
  // Values only the wider types hold.
  p_.ExecAll(Churn("w", 1201, 1400, cols,
                   "seq, 5000000000 + seq, CONCAT(REPEAT('long value ', 5), seq), 9999999999.99 - seq, "
                   "IF(seq % 2 = 0, NULL, seq), seq / 3",
                   "i = i + 3000000000, n = NULL, s = CONCAT(REPEAT('x', 60), id)"));
  r = p_.Run();
  ASSERT_RUN_OK(r, "across the widening ALTERs");
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.DestTable("w") + " FINAL WHERE id = -1"), "0")
      << "a widening ALTER must change w in place, but ClickHouse got row id=-1 that is not in the binlog: "
         "the "
         "table was copied again";
  p_.ExecHidden({"DELETE FROM w WHERE id = -1"});
  EXPECT_EQUAL_TO_SOURCE(p_, "w",
                         "after INT→BIGINT, VARCHAR(10)→VARCHAR(100), DECIMAL(10,2)→(12,2), NOT NULL→NULL");

  p_.ExecAll(Churn("w", 1401, 1500, cols,
                   "seq, -6000000000 - CAST(seq AS SIGNED), REPEAT('y', 90), -9999999999.99, NULL, 1e300",
                   "d = d + 1, f = f * 2"));
  r = p_.Run();
  ASSERT_RUN_OK(r, "after the widening ALTERs");
  EXPECT_EQUAL_TO_SOURCE(p_, "w", "after more rows with wide values");

  DestColumnMap after = p_.DestColumns("w");
  EXPECT_EQ(before["i"].first, "Nullable(Int32)");
  EXPECT_EQ(after["i"].first, "Nullable(Int64)") << "INT → BIGINT: column i";
  EXPECT_EQ(after["s"].first, before["s"].first) << "VARCHAR(10) → VARCHAR(100) keeps the ClickHouse type";
  EXPECT_EQ(before["d"].first, "Nullable(Decimal(10, 2))");
  EXPECT_EQ(after["d"].first, "Nullable(Decimal(12, 2))") << "DECIMAL(10,2) → DECIMAL(12,2): column d";
  EXPECT_EQ(before["n"].first, "Int32");
  EXPECT_EQ(after["n"].first, "Nullable(Int32)") << "NOT NULL → NULL: column n";
  EXPECT_EQ(after["f"].first, "Nullable(Float64)") << "FLOAT → DOUBLE: column f";
}

// ---------------------------------------------------------------------------------------------
// 3. Changes that alter existing values: the table is rebuilt online.

TEST_P(SchemaEvolutionTest, ValueChangingTypeChangesRebuildTheTable) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE r_dt (id INT PRIMARY KEY, ts DATETIME(6), v VARCHAR(20))",
              "INSERT INTO r_dt SELECT seq, TIMESTAMP '2024-01-01 00:00:00.000000' + INTERVAL seq * 1234567 "
              "MICROSECOND, CONCAT('v', seq) FROM seq_1_to_600",
              "CREATE TABLE r_vc (id INT PRIMARY KEY, v VARCHAR(20), n INT)",
              "INSERT INTO r_vc SELECT seq, CONCAT('value-', seq), seq FROM seq_1_to_600",
              "CREATE TABLE r_key (id INT NOT NULL PRIMARY KEY, v VARCHAR(20))",
              "INSERT INTO r_key SELECT seq, CONCAT('k', seq) FROM seq_1_to_600"});
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "(snapshot)");
  for (const char* t : {"r_dt", "r_vc", "r_key"}) EXPECT_EQUAL_TO_SOURCE(p_, t, "after the snapshot");

  p_.ExecHidden({"INSERT INTO r_dt VALUES (-1, '2020-02-02 02:02:02.999999', 'hidden')",
                 "INSERT INTO r_vc VALUES (-1, 'hidden row', 0)", "INSERT INTO r_key VALUES (-1, 'hidden')"});
  p_.ExecAll(Churn("r_dt", 601, 700, "id, ts, v",
                   "seq, TIMESTAMP '2024-05-05 05:05:05.555555' + INTERVAL seq SECOND, 'c'",
                   "ts = ts + INTERVAL 1 DAY"));
  p_.ExecAll(Churn("r_vc", 601, 700, "id, v, n", "seq, CONCAT('value-', seq), seq", "n = n + 1"));
  p_.ExecAll(Churn("r_key", 601, 700, "id, v", "seq, CONCAT('k', seq)", "v = CONCAT(v, '+')"));
  // The source truncates the fractional seconds, the non-strict narrowing cuts the strings, and the
  // key column's type changes (the ClickHouse sorting key).
  p_.ExecAll({"ALTER TABLE r_dt MODIFY ts DATETIME(0)", "SET SESSION sql_mode = ''",
              "ALTER TABLE r_vc MODIFY v VARCHAR(5)", "SET SESSION sql_mode = DEFAULT",
              "ALTER TABLE r_key MODIFY id BIGINT NOT NULL"});
  p_.ExecAll(Churn("r_dt", 701, 800, "id, ts, v",
                   "seq, TIMESTAMP '2024-06-06 06:06:06' + INTERVAL seq MINUTE, 'd'",
                   "ts = ts - INTERVAL 1 HOUR"));
  p_.ExecAll(Churn("r_vc", 701, 800, "id, v, n", "seq, LEFT(CONCAT('n', seq), 5), -seq",
                   "v = LEFT(CONCAT('u', id), 5)"));
  p_.ExecAll({"INSERT INTO r_key SELECT seq + 4000000000, CONCAT('big', seq) FROM seq_701_to_800",
              "UPDATE r_key SET v = CONCAT('u', id) WHERE id % 7 = 1", "DELETE FROM r_key WHERE id % 23 = 2",
              "UPDATE r_key SET id = id + 8000000000 WHERE id = 4000000750"});
  r = p_.Run();
  ASSERT_RUN_OK(r, "across the rebuilding ALTERs");
  for (const char* t : {"r_dt", "r_vc", "r_key"}) {
    EXPECT_EQUAL_TO_SOURCE(p_, t, "after its rebuilding ALTER");
  }
  // The rebuilds copied the tables from the source again (the hidden rows came along). On ClickHouse
  // before 20.1 DATETIME(6) and DATETIME(0) are the same DateTime, truncated alike: no copy needed.
  if (p_.DestVersion() >= 2001) {
    EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.DestTable("r_dt") + " FINAL WHERE id = -1"), "1")
        << "DATETIME(6) → DATETIME(0) must rebuild r_dt from the source (row id=-1 is not in ClickHouse)";
  }
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.DestTable("r_vc") + " FINAL WHERE id = -1"), "1")
      << "a non-strict VARCHAR(20) → VARCHAR(5) must rebuild r_vc from the source (row id=-1 is not in "
         "ClickHouse)";
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.DestTable("r_key") + " FINAL WHERE id = -1"), "1")
      << "a key column type change must rebuild r_key from the source (row id=-1 is not in ClickHouse)";
  EXPECT_EQ(p_.DestColumns("r_key")["id"].first, "Int64") << "r_key.id must be Int64 after INT → BIGINT";

  // Streaming goes on into the rebuilt tables.
  p_.ExecAll(Churn("r_dt", 801, 900, "id, ts, v",
                   "seq, TIMESTAMP '2024-07-07 07:07:07' + INTERVAL seq SECOND, 'e'", "v = 'again'"));
  p_.ExecAll(Churn("r_vc", 801, 900, "id, v, n", "seq, 'abc', seq", "v = 'zz'"));
  p_.ExecAll({"INSERT INTO r_key SELECT seq + 5000000000, 'x' FROM seq_801_to_900",
              "UPDATE r_key SET v = 'again' WHERE id % 7 = 3", "DELETE FROM r_key WHERE id % 23 = 4"});
  r = p_.Run();
  ASSERT_RUN_OK(r, "after the rebuilds");
  for (const char* t : {"r_dt", "r_vc", "r_key"})
    EXPECT_EQUAL_TO_SOURCE(p_, t, "after rows streamed into the rebuilt table");
}

TEST_P(SchemaEvolutionTest, TextToNumberAndKeylessTableChangesFollowTheSource) {
  ASSERT_TRUE(p_.connected());
  // VARCHAR → INT: ClickHouse cannot convert the strings in place as the source did.
  // Keyless tables are sorted by every column: dropping or retyping one changes the sorting key.
  p_.ExecAll({"CREATE TABLE conv (id INT PRIMARY KEY, s VARCHAR(10))",
              "INSERT INTO conv SELECT seq, CAST(seq * 7 AS CHAR) FROM seq_1_to_400",
              "CREATE TABLE nokey (a INT, b VARCHAR(20), c INT)",
              "INSERT INTO nokey SELECT seq, CONCAT('b', seq), seq % 9 FROM seq_1_to_400"});
  CommandResult r = p_.Run({"--schema-policy", "keyless=distinct"});
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.ExecHidden({"INSERT INTO conv VALUES (-1, '-5')"});
  p_.ExecAll(Churn("conv", 401, 500, "id, s", "seq, CAST(seq AS CHAR)", "s = CAST(id * 3 AS CHAR)"));
  p_.ExecAll({"INSERT INTO nokey SELECT seq, CONCAT('n', seq), 1 FROM seq_401_to_450",
              "UPDATE nokey SET b = CONCAT(b, '!') WHERE a % 7 = 0", "DELETE FROM nokey WHERE a % 11 = 0"});
  p_.ExecAll({"ALTER TABLE conv MODIFY s INT", "ALTER TABLE nokey DROP COLUMN c",
              "ALTER TABLE nokey MODIFY a BIGINT"});
  p_.ExecAll(Churn("conv", 501, 600, "id, s", "seq, -CAST(seq AS SIGNED)", "s = s * 2"));
  // Rows written before the changes, updated and deleted after them.
  p_.ExecAll({"INSERT INTO nokey SELECT seq + 5000000000, CONCAT('big', seq) FROM seq_1_to_50",
              "UPDATE nokey SET b = CONCAT(b, '?') WHERE a % 5 = 0", "DELETE FROM nokey WHERE a % 13 = 0"});
  r = p_.Run({"--schema-policy", "keyless=distinct"});
  ASSERT_RUN_OK(r, "across VARCHAR → INT and the keyless table's DROP/MODIFY COLUMN");
  EXPECT_EQUAL_TO_SOURCE(p_, "conv", "after MODIFY s INT (was VARCHAR(10))");
  EXPECT_EQUAL_TO_SOURCE(p_, "nokey", "after DROP COLUMN c and MODIFY a BIGINT on a table without a key");
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.DestTable("conv") + " FINAL WHERE id = -1"), "1")
      << "VARCHAR → INT must rebuild conv from the source (row id=-1 is not in ClickHouse)";
  p_.ExecAll({"UPDATE nokey SET b = 'later' WHERE a % 3 = 0", "DELETE FROM nokey WHERE a % 17 = 0",
              "UPDATE conv SET s = NULL WHERE id % 4 = 0"});
  r = p_.Run({"--schema-policy", "keyless=distinct"});
  ASSERT_RUN_OK(r, "after the rebuilds");
  EXPECT_EQUAL_TO_SOURCE(p_, "conv", "after more changes following the rebuild");
  EXPECT_EQUAL_TO_SOURCE(p_, "nokey", "after more changes following the rebuild");
}

// Issue 33, case 6 (seen: 1 of 3 rows): a column added to a keyless table must join its sorting
// key (every column), or rows that differ only in the new column collapse, and a DELETE of one
// removes them all.
TEST_P(SchemaEvolutionTest, AColumnAddedToAKeylessTableKeepsRowsThatDifferOnlyInIt) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE nk (a INT, b VARCHAR(10))", "INSERT INTO nk VALUES (1, 'x'), (2, 'y')"});
  CommandResult r = p_.Run({"--schema-policy", "keyless=distinct"});
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.ExecAll({"ALTER TABLE nk ADD COLUMN c INT",
              "INSERT INTO nk VALUES (3, 'z', 1), (3, 'z', 2), (3, 'z', 3)",
              "DELETE FROM nk WHERE a = 3 AND c = 2"});
  r = p_.Run({"--schema-policy", "keyless=distinct"});
  ASSERT_RUN_OK(r, "after ADD COLUMN on a keyless table");
  EXPECT_EQ(p_.DestCount("nk"), "4");
  EXPECT_EQUAL_TO_SOURCE(p_, "nk", "after ADD COLUMN on a keyless table");
  p_.ExecAll({"UPDATE nk SET b = 'w' WHERE c = 3", "INSERT INTO nk VALUES (4, 'q', NULL)"});
  r = p_.Run({"--schema-policy", "keyless=distinct"});
  ASSERT_RUN_OK(r, "streaming after the rebuild");
  EXPECT_EQUAL_TO_SOURCE(p_, "nk", "streaming after the rebuild");
}

// Issue 33, case 7: binlog_alter_two_phase (MariaDB 10.8+) writes an ALTER when it starts (START
// ALTER) and again when it ends (COMMIT ALTER, or ROLLBACK ALTER when it failed). Before, START ALTER
// was applied at once and COMMIT ALTER again (the table parked on a duplicate column), and a rolled
// back ALTER stayed applied in ClickHouse.
TEST_P(SchemaEvolutionTest, TwoPhaseAltersApplyAtTheirCommitOnly) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE tp (id INT PRIMARY KEY, a INT)", "INSERT INTO tp VALUES (1, 3), (2, 3)"});
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.ExecAll({"SET SESSION binlog_alter_two_phase = 1", "ALTER TABLE tp ADD COLUMN b INT NOT NULL DEFAULT 4",
              "INSERT INTO tp VALUES (3, 5, 6)"});
  // Fails after it started (a duplicate for the new unique key): ROLLBACK ALTER.
  EXPECT_FALSE(p_.conn().Execute("ALTER TABLE tp ADD UNIQUE KEY ua (a), ADD COLUMN z INT").ok());
  p_.ExecAll({"ALTER TABLE tp MODIFY a BIGINT", "UPDATE tp SET a = 5000000000 WHERE id = 1",
              "SET SESSION binlog_alter_two_phase = 0"});
  r = p_.Run();
  ASSERT_RUN_OK(r, "across two-phase ALTERs");
  EXPECT_EQ(r.err.find("PARKED"), std::string::npos) << r.Describe();
  EXPECT_EQUAL_TO_SOURCE(p_, "tp", "after a committed and a rolled back two-phase ALTER");
  EXPECT_EQ(p_.DestColumns("tp").count("z"), 0u)
      << "the rolled back ALTER's column must not be in ClickHouse";
}

TEST_P(SchemaEvolutionTest, RebuildWhileTheSourceKeepsChangingAndThePipeRestarts) {
  ASSERT_TRUE(p_.connected());
  constexpr int kRows = 120000;
  p_.ExecAll({"CREATE TABLE big (id INT PRIMARY KEY, v VARCHAR(30), n INT)",
              "INSERT INTO big SELECT seq, CONCAT('value number ', seq), seq FROM seq_1_to_" + Str(kRows)});
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "(snapshot)");

  // A pipe that keeps running while the source changes during the rebuild's copy, and is stopped
  // (SIGTERM) soon after the rebuild started.
  const std::string log = MakeTempDir("evo-log") + "/run.log";
  auto run = testing::BackgroundProcess::Start(
      p_.RunArgs(p_.db() + ".*", false, {"--snapshot-chunk-rows", "1000", "--snapshot-parallelism", "1"}),
      log);
  ASSERT_TRUE(run.has_value());
  // A non-strict narrowing: the source cuts the strings, so ClickHouse must copy the table again.
  p_.ExecAll(
      {"SET SESSION sql_mode = ''", "ALTER TABLE big MODIFY v VARCHAR(8)", "SET SESSION sql_mode = DEFAULT"});
  int rounds_after_start = -1;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  for (int round = 0; rounds_after_start < 3 && std::chrono::steady_clock::now() < deadline; ++round) {
    const int lo = (round * 997) % (kRows - 100) + 1;
    const int hi = kRows - lo - 50;
    p_.ExecAll({"UPDATE big SET n = n + 1, v = LEFT(CONCAT('r', " + Str(round) +
                    ", '-', id), 8) WHERE id BETWEEN " + Str(lo) + " AND " + Str(lo + 20) +
                    " OR id BETWEEN " + Str(hi) + " AND " + Str(hi + 20),
                "DELETE FROM big WHERE id IN (" + Str(lo + 30) + ", " + Str(hi + 30) + ")",
                "INSERT INTO big VALUES (" + Str(1000000 + round) + ", 'new', " + Str(round) + ")"});
    if (rounds_after_start >= 0) {
      ++rounds_after_start;
    } else if (run->Log().find("rebuild of") != std::string::npos) {
      rounds_after_start = 0;
    }
    if (!run->Running()) break;
  }
  ASSERT_TRUE(run->Running()) << "chsync run exited during the rebuild (" << run->exit_code() << "):\n"
                              << run->Log();
  EXPECT_GE(rounds_after_start, 0) << "no rebuild of big started within 90 s of the ALTER:\n" << run->Log();
  EXPECT_EQ(run->SignalAndWait(SIGTERM, 60'000), 0) << "chsync run must exit 0 on SIGTERM:\n" << run->Log();

  // Started again, it finishes what it was doing.
  p_.ExecAll({"UPDATE big SET v = 'last' WHERE id % 1000 = 7", "DELETE FROM big WHERE id % 1000 = 8"});
  r = p_.Run();
  ASSERT_RUN_OK(r, "after a restart in the middle of a rebuild");
  EXPECT_EQUAL_TO_SOURCE(p_, "big",
                         "after a rebuild during which the source changed and the pipe was restarted");
}

// ---------------------------------------------------------------------------------------------
// 4. TRUNCATE TABLE.

TEST_P(SchemaEvolutionTest, TruncateIsPropagatedByDefault) {
  ASSERT_TRUE(p_.connected());
  CreateStandard("t", 800);
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.ExecAll(StandardChurn("t", 801, 900));
  p_.Exec("TRUNCATE TABLE t");
  p_.ExecAll(StandardChurn("t", 2001, 2300));
  r = p_.Run();
  ASSERT_RUN_OK(r, "across TRUNCATE");
  EXPECT_EQUAL_TO_SOURCE(p_, "t",
                         "after TRUNCATE TABLE t (ClickHouse must hold only the rows written after it)");
  p_.ExecAll(StandardChurn("t", 2301, 2400));
  r = p_.Run();
  ASSERT_RUN_OK(r, "after TRUNCATE");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after more rows following TRUNCATE");
}

TEST_P(SchemaEvolutionTest, TruncateIgnoredByPolicyKeepsTheRows) {
  ASSERT_TRUE(p_.connected());
  CreateStandard("t", 800);
  CreateStandard("u", 300);
  const std::vector<std::string> policy = {"--schema-policy", p_.db() + ".t:truncate=ignore"};
  CommandResult r = p_.Run(policy);
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.ExecAll(StandardChurn("t", 801, 900));
  const std::string before = p_.SourceValue("SELECT count(*) FROM t");
  const std::string v1 = p_.SourceValue("SELECT v FROM t WHERE id = 1");
  p_.ExecAll({"TRUNCATE TABLE t", "TRUNCATE TABLE u"});
  p_.ExecAll(StandardChurn("t", 2001, 2300));
  p_.ExecAll(StandardChurn("u", 2001, 2100));
  const std::string added = p_.SourceValue("SELECT count(*) FROM t");
  r = p_.Run(policy);
  ASSERT_RUN_OK(r, "across TRUNCATE with truncate=ignore for t");
  EXPECT_EQ(p_.DestCount("t"), Str(std::stoi(before) + std::stoi(added)))
      << "with truncate=ignore ClickHouse t must keep the " << before
      << " rows from before TRUNCATE and add the " << added << " written after it";
  EXPECT_EQ(
      p_.DestValue("SELECT v FROM " + p_.DestTable("t") + " FINAL WHERE id = 1 AND _chsync_is_deleted = 0"),
      v1)
      << "row id=1 (truncated at the source) must still be in ClickHouse t with v = '" << v1 << "'";
  EXPECT_EQUAL_TO_SOURCE(p_, "u", "after TRUNCATE TABLE u (the default policy propagates it)");
}

// ---------------------------------------------------------------------------------------------
// 5. Tables created while the pipe runs.

TEST_P(SchemaEvolutionTest, TablesCreatedWhileRunningAreReplicated) {
  ASSERT_TRUE(p_.connected());
  // e, made by CREATE TABLE … SELECT, has no key: compared as its distinct rows.
  const std::vector<std::string> keyless = {"--schema-policy", p_.db() + ".e:keyless=distinct"};
  CreateStandard("a", 300);
  CommandResult r = p_.Run(keyless);
  ASSERT_RUN_OK(r, "(snapshot)");

  p_.ExecAll({"CREATE TABLE b (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(30), n DECIMAL(8,3) NOT NULL)",
              "INSERT INTO b (v, n) SELECT CONCAT('b', seq), seq / 8 FROM seq_1_to_500",
              "CREATE TABLE c LIKE b", "INSERT INTO c SELECT * FROM b WHERE id % 2 = 0",
              "CREATE TABLE d (PRIMARY KEY (id)) SELECT id, v, n * 2 AS n2 FROM b WHERE id % 3 = 0",
              "CREATE TABLE e SELECT v, n FROM b WHERE id <= 40"});
  p_.ExecAll(Churn("b", 501, 600, "id, v, n", "seq, CONCAT('x', seq), seq", "n = n + 1"));
  p_.ExecAll(Churn("c", 1001, 1100, "id, v, n", "seq, 'c', -seq", "v = CONCAT('u', id)"));
  p_.ExecAll(Churn("d", 1001, 1100, "id, v, n2", "seq, 'd', seq * 2", "n2 = -n2"));
  r = p_.Run(keyless);
  ASSERT_RUN_OK(r, "across CREATE TABLE, CREATE TABLE … LIKE and CREATE TABLE … SELECT");
  for (const char* t : {"a", "b", "c", "d", "e"})
    EXPECT_EQUAL_TO_SOURCE(p_, t, "after it was created while running");

  p_.ExecAll(Churn("c", 1101, 1200, "id, v, n", "seq, 'c2', seq", "n = 0"));
  p_.ExecAll({"UPDATE e SET n = n + 100 WHERE n < 3", "DELETE FROM e WHERE v = 'b7'"});
  r = p_.Run(keyless);
  ASSERT_RUN_OK(r, "after the creates");
  for (const char* t : {"c", "e"}) EXPECT_EQUAL_TO_SOURCE(p_, t, "after more changes");
}

TEST_P(SchemaEvolutionTest, CreateTableIgnoredByPolicyIsNotCreated) {
  ASSERT_TRUE(p_.connected());
  CreateStandard("a", 100);
  const std::vector<std::string> policy = {"--schema-policy", p_.db() + ".b*:create_table=ignore"};
  CommandResult r = p_.Run(policy);
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.ExecAll({"CREATE TABLE b (id INT PRIMARY KEY, v INT)", "INSERT INTO b SELECT seq, seq FROM seq_1_to_50",
              "CREATE TABLE c LIKE b", "INSERT INTO c SELECT seq, -CAST(seq AS SIGNED) FROM seq_1_to_50"});
  p_.ExecAll(StandardChurn("a", 101, 200));
  r = p_.Run(policy);
  ASSERT_RUN_OK(r, "across CREATE TABLE with create_table=ignore for b*");
  EXPECT_EQ(p_.DestTables(), (std::set<std::string>{"a", "c"}))
      << "with create_table=ignore for " << p_.db()
      << ".b* the new table b must not be created in ClickHouse "
      << "(c, created by the same pipe under the default policy, must)";
  EXPECT_EQUAL_TO_SOURCE(p_, "a", "after CREATE TABLE b (ignored)");
  EXPECT_EQUAL_TO_SOURCE(p_, "c", "after CREATE TABLE c LIKE b");
}

// ---------------------------------------------------------------------------------------------
// 6. DROP TABLE.

TEST_P(SchemaEvolutionTest, DroppedTableIsKeptAndARecreatedOneStartsFresh) {
  ASSERT_TRUE(p_.connected());
  CreateStandard("t", 500);
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.ExecAll(StandardChurn("t", 501, 600));
  const std::string rows_before_drop = p_.SourceValue("SELECT count(*) FROM t");
  p_.Exec("DROP TABLE t");
  r = p_.Run();
  ASSERT_RUN_OK(r, "across DROP TABLE");
  EXPECT_TRUE(p_.DestTables().count("t"))
      << "DROP TABLE t is not propagated by default: ClickHouse t must stay";
  EXPECT_EQ(p_.DestCount("t"), rows_before_drop) << "ClickHouse t must keep its rows after DROP TABLE t";

  // Re-created with another shape.
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20), extra DATE)",
              "INSERT INTO t SELECT seq, CONCAT('new', seq), DATE '2024-01-01' + INTERVAL seq DAY FROM "
              "seq_1_to_200"});
  p_.ExecAll(Churn("t", 201, 300, "id, v, extra", "seq, 'n', NULL", "extra = DATE '2000-01-01'"));
  r = p_.Run();
  ASSERT_RUN_OK(r, "across the CREATE TABLE of a dropped table");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after t was dropped and created again");
  std::string aside;
  for (const std::string& name : p_.DestTables()) {
    if (name.rfind("t__dropped_", 0) == 0) aside = name;
  }
  ASSERT_FALSE(aside.empty()) << "the kept ClickHouse t must be renamed aside to t__dropped_N; tables: "
                              << ::testing::PrintToString(p_.DestTables());
  EXPECT_EQ(p_.DestCount(aside), rows_before_drop) << aside << " must hold the rows of the dropped t";
}

TEST_P(SchemaEvolutionTest, DropTablePolicyDropDropsItInClickHouse) {
  ASSERT_TRUE(p_.connected());
  CreateStandard("t", 300);
  CreateStandard("u", 300);
  const std::vector<std::string> policy = {"--schema-policy", "drop_table=drop"};
  CommandResult r = p_.Run(policy);
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.ExecAll(StandardChurn("t", 301, 400));
  p_.ExecAll(StandardChurn("u", 301, 400));
  p_.Exec("DROP TABLE t");
  p_.ExecAll(StandardChurn("u", 401, 500));
  r = p_.Run(policy);
  ASSERT_RUN_OK(r, "across DROP TABLE with drop_table=drop");
  std::set<std::string> tables = p_.DestTables();
  EXPECT_FALSE(tables.count("t")) << "with drop_table=drop, DROP TABLE t must drop ClickHouse t; tables: "
                                  << ::testing::PrintToString(tables);
  EXPECT_EQUAL_TO_SOURCE(p_, "u", "after DROP TABLE t");
}

// ---------------------------------------------------------------------------------------------
// 7. and 8. Online schema change tools.

/// After a swap: ClickHouse t equals the source (new column included), holds each key once, and
/// the tool's other tables are gone from ClickHouse.
void ExpectMigrated(PipeTest& p, const std::string& tool) {
  EXPECT_EQUAL_TO_SOURCE(p, "t", "after the " + tool + " swap");
  auto counts = p.DestQuery("SELECT count(), uniqExact(id) FROM " + p.DestTable("t") +
                            " FINAL WHERE _chsync_is_deleted = 0");
  ASSERT_EQ(counts.size(), 1u);
  ASSERT_EQ(counts[0].size(), 2u);
  EXPECT_EQ(counts[0][0], counts[0][1])
      << "ClickHouse t has duplicated keys after the " << tool << " swap: count() "
      << counts[0][0].value_or("?") << ", distinct ids " << counts[0][1].value_or("?");
  EXPECT_TRUE(p.DestColumns("t").count("c"))
      << "ClickHouse t lacks column c added by the " << tool << " migration";
  std::set<std::string> tables = p.DestTables();
  EXPECT_EQ(tables, std::set<std::string>{"t"})
      << "after the " << tool << " migration ClickHouse must hold t only (leftovers dropped), it holds "
      << ::testing::PrintToString(tables);
}

/// gh-ost's statements (github.com/github/gh-ost go/logic/applier.go), as it issues them for
/// `ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 7, MODIFY v VARCHAR(200)`, with the changes to t
/// replayed on the ghost table as its applier does.
/// The table both migrations change, copied by a first run.
void StartMigration(PipeTest& p, const std::string& tables) {
  p.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(50), n INT, ts DATETIME(3))",
             "INSERT INTO t SELECT seq, CONCAT('v', seq), seq % 100, TIMESTAMP '2024-01-01 00:00:00.250' + "
             "INTERVAL seq MINUTE FROM seq_1_to_2000"});
  CommandResult r = p.RunTables(tables);
  ASSERT_RUN_OK(r, "(snapshot)");
  EXPECT_EQUAL_TO_SOURCE(p, "t", "after the snapshot");
}

/// After a migration's swap: changes to the migrated table, then the checks.
void FinishMigration(PipeTest& p, const std::string& tables, const std::string& tool) {
  p.ExecAll(Churn("t", 3001, 3100, "id, v, n, ts, c", "seq, REPEAT('long ', 30), seq, NULL, seq * 2",
                  "c = c + id, v = CONCAT(v, '!')"));
  CommandResult r = p.RunTables(tables);
  ASSERT_RUN_OK(r, "across the " + tool + " swap");
  ExpectMigrated(p, tool);

  p.ExecAll(Churn("t", 3101, 3200, "id, v, n, ts, c", "seq, 'after', seq, NOW(), -seq", "c = 0"));
  r = p.RunTables(tables);
  ASSERT_RUN_OK(r, "after the " + tool + " migration");
  EXPECT_EQUAL_TO_SOURCE(p, "t", "after more changes following the " + tool + " migration");
}

void GhostMigration(PipeTest& p, const std::string& tables) {
  const std::string db = "`" + p.db() + "`";
  StartMigration(p, tables);
  CommandResult r;

  p.ExecAll({
      "DROP TABLE IF EXISTS " + db + ".`_t_ghc`",
      "CREATE TABLE " + db +
          ".`_t_ghc` (id bigint auto_increment, last_update timestamp not null DEFAULT CURRENT_TIMESTAMP ON "
          "UPDATE CURRENT_TIMESTAMP, hint varchar(64) charset ascii not null, value varchar(4096) charset "
          "ascii "
          "not null, primary key(id), unique key hint_uidx(hint)) auto_increment=256 comment='gh-ost "
          "changelog'",
      "DROP TABLE IF EXISTS " + db + ".`_t_gho`",
      "CREATE /* gh-ost */ TABLE " + db + ".`_t_gho` LIKE " + db + ".`t`",
      "ALTER /* gh-ost */ TABLE " + db +
          ".`_t_gho` ADD COLUMN c INT NOT NULL DEFAULT 7, MODIFY v VARCHAR(200)",
      "INSERT /* gh-ost */ INTO " + db +
          ".`_t_ghc` (id, hint, value) VALUES (NULLIF(2, 0), 'state', 'GhostTableMigrated') ON DUPLICATE KEY "
          "UPDATE last_update=NOW(), value=VALUES(value)",
  });
  const std::string cols = "`id`, `v`, `n`, `ts`";
  int chunk = 0;
  auto copy_chunk = [&](int lo, int hi) {
    p.Exec("INSERT /* gh-ost " + db + ".`t` */ IGNORE INTO " + db + ".`_t_gho` (" + cols + ") (SELECT " +
           cols + " FROM " + db + ".`t` FORCE INDEX (`PRIMARY`) WHERE (((`id` > " + Str(lo - 1) +
           ")) AND ((`id` < " + Str(hi) + ") OR ((`id` = " + Str(hi) + ")))) LOCK IN SHARE MODE)");
    // Changes to t meanwhile, each replayed on the ghost table by gh-ost's applier.
    const int base = 100000 + chunk * 100;
    const std::string set = "v = CONCAT('g" + Str(chunk) + "-', id), n = n + 1";
    const std::string where_upd = "id % 17 = " + Str(chunk);
    const std::string where_del = "id % 29 = " + Str(chunk);
    p.ExecAll({
        "INSERT INTO t (id, v, n, ts) SELECT seq, CONCAT('new', seq), seq % 10, TIMESTAMP '2025-01-01 "
        "00:00:00.5' + INTERVAL seq SECOND FROM seq_" +
            Str(base) + "_to_" + Str(base + 30),
        "REPLACE /* gh-ost " + db + ".`_t_gho` */ INTO " + db + ".`_t_gho` (" + cols + ") SELECT " + cols +
            " FROM t WHERE id BETWEEN " + Str(base) + " AND " + Str(base + 30),
        "UPDATE t SET " + set + " WHERE " + where_upd,
        "UPDATE /* gh-ost " + db + ".`_t_gho` */ " + db + ".`_t_gho` SET " + set + " WHERE " + where_upd,
        "DELETE FROM t WHERE " + where_del,
        "DELETE /* gh-ost " + db + ".`_t_gho` */ FROM " + db + ".`_t_gho` WHERE " + where_del,
        "INSERT /* gh-ost */ INTO " + db +
            ".`_t_ghc` (id, hint, value) VALUES (NULLIF(1, 0), 'heartbeat', NOW(6)) ON DUPLICATE KEY UPDATE "
            "last_update=NOW(), value=VALUES(value)",
    });
    ++chunk;
  };
  copy_chunk(1, 500);
  copy_chunk(501, 1000);
  // The pipe catches up in the middle of the migration.
  r = p.RunTables(tables);
  ASSERT_RUN_OK(r, "in the middle of the gh-ost migration");
  EXPECT_EQUAL_TO_SOURCE(p, "t", "in the middle of the gh-ost migration");
  EXPECT_EQUAL_TO_SOURCE(p, "_t_gho", "in the middle of the gh-ost migration (ghost tables are replicated)");
  copy_chunk(1001, 1500);
  copy_chunk(1501, 2000);
  // Cut-over: the sentry table, then the atomic swap, then the cleanup.
  p.ExecAll({
      "CREATE /* gh-ost */ TABLE " + db +
          ".`_t_del` (id int auto_increment primary key) engine=InnoDB comment='ghost-cut-over-sentry'",
      "DROP /* gh-ost */ TABLE IF EXISTS " + db + ".`_t_del`",
      "RENAME /* gh-ost */ TABLE " + db + ".`t` TO " + db + ".`_t_del`, " + db + ".`_t_gho` TO " + db +
          ".`t`",
      "DROP /* gh-ost */ TABLE IF EXISTS " + db + ".`_t_ghc`",
      "DROP /* gh-ost */ TABLE IF EXISTS " + db + ".`_t_del`",
  });
  FinishMigration(p, tables, "gh-ost");
}

TEST_P(SchemaEvolutionTest, GhostMigrationOfAListedTable) {
  ASSERT_TRUE(p_.connected());
  GhostMigration(p_, p_.db() + ".t");
}

TEST_P(SchemaEvolutionTest, GhostMigrationOfTheWholeDatabase) {
  ASSERT_TRUE(p_.connected());
  GhostMigration(p_, p_.db() + ".*");
}

/// pt-online-schema-change's statements (percona-toolkit bin/pt-online-schema-change), as it issues
/// them for `--alter "ADD COLUMN c INT NOT NULL DEFAULT 7, MODIFY v VARCHAR(200)"`.
void PtOscMigration(PipeTest& p, const std::string& tables) {
  const std::string db = "`" + p.db() + "`";
  const std::string trig = "`pt_osc_" + p.db() + "_t_";
  StartMigration(p, tables);
  CommandResult r;

  const std::string cols = "`id`, `v`, `n`, `ts`";
  const std::string new_cols = "NEW.`id`, NEW.`v`, NEW.`n`, NEW.`ts`";
  p.ExecAll({
      "CREATE TABLE " + db + ".`_t_new` LIKE " + db + ".`t`",
      "ALTER TABLE " + db + ".`_t_new` ADD COLUMN c INT NOT NULL DEFAULT 7, MODIFY v VARCHAR(200)",
      "CREATE TRIGGER " + trig + "del` AFTER DELETE ON " + db +
          ".`t` FOR EACH ROW BEGIN DECLARE CONTINUE HANDLER FOR 1146 begin end; DELETE IGNORE FROM " + db +
          ".`_t_new` WHERE " + db + ".`_t_new`.`id` <=> OLD.`id`; END",
      "CREATE TRIGGER " + trig + "upd` AFTER UPDATE ON " + db +
          ".`t` FOR EACH ROW BEGIN DECLARE CONTINUE HANDLER FOR 1146 begin end; DELETE IGNORE FROM " + db +
          ".`_t_new` WHERE !(OLD.`id` <=> NEW.`id`) AND " + db +
          ".`_t_new`.`id` <=> OLD.`id`; REPLACE INTO " + db + ".`_t_new` (" + cols + ") VALUES (" + new_cols +
          "); END",
      "CREATE TRIGGER " + trig + "ins` AFTER INSERT ON " + db +
          ".`t` FOR EACH ROW BEGIN DECLARE CONTINUE HANDLER FOR 1146 begin end; REPLACE INTO " + db +
          ".`_t_new` (" + cols + ") VALUES (" + new_cols + ");END",
  });
  int chunk = 0;
  auto copy_chunk = [&](int lo, int hi) {
    p.Exec("INSERT LOW_PRIORITY IGNORE INTO " + db + ".`_t_new` (" + cols + ") SELECT " + cols + " FROM " +
           db + ".`t` FORCE INDEX(`PRIMARY`) WHERE ((`id` >= '" + Str(lo) + "')) AND ((`id` <= '" + Str(hi) +
           "')) LOCK IN SHARE MODE /*pt-online-schema-change 4242 copy nibble*/");
    // Changes to t meanwhile (the triggers copy them), a key change among them.
    const int base = 100000 + chunk * 100;
    p.ExecAll({
        "INSERT INTO t (id, v, n, ts) SELECT seq, CONCAT('new', seq), seq % 10, TIMESTAMP '2025-01-01 "
        "00:00:00.5' + INTERVAL seq SECOND FROM seq_" +
            Str(base) + "_to_" + Str(base + 30),
        "UPDATE t SET v = CONCAT('p" + Str(chunk) + "-', id), n = n + 1 WHERE id % 17 = " + Str(chunk),
        "DELETE FROM t WHERE id % 29 = " + Str(chunk),
        "UPDATE t SET id = id + 500000 WHERE id = " + Str(base + 3),
    });
    ++chunk;
  };
  copy_chunk(1, 500);
  copy_chunk(501, 1000);
  r = p.RunTables(tables);
  ASSERT_RUN_OK(r, "in the middle of the pt-online-schema-change migration");
  EXPECT_EQUAL_TO_SOURCE(p, "t", "in the middle of the pt-online-schema-change migration");
  EXPECT_EQUAL_TO_SOURCE(p, "_t_new",
                         "in the middle of the pt-online-schema-change migration (_t_new is replicated)");
  copy_chunk(1001, 1500);
  copy_chunk(1501, 2000);
  p.ExecAll({
      "ANALYZE TABLE " + db + ".`_t_new` /* pt-online-schema-change */",
      "RENAME TABLE " + db + ".`t` TO " + db + ".`_t_old`, " + db + ".`_t_new` TO " + db + ".`t`",
      "DROP TABLE IF EXISTS " + db + ".`_t_old`",
      "DROP TRIGGER IF EXISTS " + db + "." + trig + "del`",
      "DROP TRIGGER IF EXISTS " + db + "." + trig + "upd`",
      "DROP TRIGGER IF EXISTS " + db + "." + trig + "ins`",
  });
  FinishMigration(p, tables, "pt-online-schema-change");
}

TEST_P(SchemaEvolutionTest, PtOscMigrationOfAListedTable) {
  ASSERT_TRUE(p_.connected());
  PtOscMigration(p_, p_.db() + ".t");
}

TEST_P(SchemaEvolutionTest, PtOscMigrationOfTheWholeDatabase) {
  ASSERT_TRUE(p_.connected());
  PtOscMigration(p_, p_.db() + ".*");
}

// ---------------------------------------------------------------------------------------------
// 9. DROP COLUMN.

TEST_P(SchemaEvolutionTest, DropColumnPropagatedByPolicy) {
  ASSERT_TRUE(p_.connected());
  CreateStandard("t", 500);
  const std::vector<std::string> policy = {"--schema-policy", "drop_column=propagate"};
  CommandResult r = p_.Run(policy);
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.ExecAll(StandardChurn("t", 501, 600));
  p_.Exec("ALTER TABLE t DROP COLUMN n");
  p_.ExecAll(Churn("t", 601, 700, "id, v, ts", "seq, 'after drop', NULL", "v = CONCAT('d', id)"));
  r = p_.Run(policy);
  ASSERT_RUN_OK(r, "across DROP COLUMN with drop_column=propagate");
  EXPECT_FALSE(p_.DestColumns("t").count("n"))
      << "with drop_column=propagate ClickHouse t must lose column n";
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after DROP COLUMN n (propagated)");
  p_.ExecAll(Churn("t", 701, 800, "id, v, ts", "seq, 'later', NOW()", "ts = NULL"));
  r = p_.Run(policy);
  ASSERT_RUN_OK(r, "after DROP COLUMN");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after more rows following DROP COLUMN n");
}

TEST_P(SchemaEvolutionTest, DropColumnKeptByDefault) {
  ASSERT_TRUE(p_.connected());
  CreateStandard("t", 500);
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.ExecAll(StandardChurn("t", 501, 600));
  p_.Exec("ALTER TABLE t DROP COLUMN n");
  p_.ExecAll(Churn("t", 601, 700, "id, v, ts", "seq, 'after drop', NULL", "v = CONCAT('d', id)"));
  r = p_.Run();
  ASSERT_RUN_OK(r, "across DROP COLUMN");
  EXPECT_TRUE(p_.DestColumns("t").count("n"))
      << "DROP COLUMN is not propagated by default: ClickHouse t keeps n";
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after DROP COLUMN n (kept in ClickHouse)");
  EXPECT_EQ(p_.DestValue("SELECT countIf(n IS NOT NULL) FROM " + p_.DestTable("t") +
                         " FINAL WHERE _chsync_is_deleted = 0 AND id BETWEEN 601 AND 700"),
            "0")
      << "rows inserted after DROP COLUMN n must hold NULL in the kept ClickHouse column n";
  EXPECT_EQ(p_.DestValue("SELECT n FROM " + p_.DestTable("t") + " FINAL WHERE id = 50"), "50")
      << "row id=50 (untouched since the snapshot) must keep its n in ClickHouse";
}

// ---------------------------------------------------------------------------------------------
// 11. Primary key changes.

TEST_P(SchemaEvolutionTest, PrimaryKeyChangeRebuildsTheTable) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE t (id INT NOT NULL, k INT NOT NULL, v VARCHAR(20), PRIMARY KEY (id))",
              "INSERT INTO t SELECT seq, seq % 5, CONCAT('v', seq) FROM seq_1_to_800"});
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.ExecHidden({"INSERT INTO t VALUES (-1, 0, 'hidden')"});
  p_.ExecAll(Churn("t", 801, 900, "id, k, v", "seq, seq % 5, 'c'", "v = CONCAT('u', id)"));
  p_.Exec("ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (id, k)");
  // Rows that only the new key tells apart: same id, another k.
  p_.ExecAll({"INSERT INTO t SELECT seq, 10 + seq % 3, CONCAT('twin', seq) FROM seq_1_to_200",
              "UPDATE t SET v = 'twin updated' WHERE k >= 10 AND id % 4 = 0",
              "DELETE FROM t WHERE k = 11 AND id % 3 = 0",
              "UPDATE t SET v = 'first updated' WHERE k < 10 AND id % 6 = 0"});
  r = p_.Run();
  ASSERT_RUN_OK(r, "across DROP PRIMARY KEY, ADD PRIMARY KEY (id, k)");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after the primary key became (id, k)");
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.DestTable("t") + " FINAL WHERE id = -1"), "1")
      << "a primary key change must rebuild t from the source (row id=-1 is not in ClickHouse)";
  p_.ExecAll(
      {"INSERT INTO t SELECT seq, 20, 'third' FROM seq_1_to_100", "DELETE FROM t WHERE id = 5 AND k = 0"});
  r = p_.Run();
  ASSERT_RUN_OK(r, "after the key change");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after more rows under the new primary key");
}

TEST_P(SchemaEvolutionTest, PrimaryKeyChangeStopsWithKeyChangeFail) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE t (id INT NOT NULL, k INT NOT NULL, v VARCHAR(20), PRIMARY KEY (id))",
              "INSERT INTO t SELECT seq, seq % 5, CONCAT('v', seq) FROM seq_1_to_300"});
  const std::vector<std::string> policy = {"--schema-policy", p_.db() + ".*:key_change=fail",
                                           "--schema-policy", "on_table_error=stop"};
  CommandResult r = p_.Run(policy);
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.ExecAll({"INSERT INTO t VALUES (1000, 1, 'before')",
              "ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (id, k)",
              "INSERT INTO t VALUES (1, 9, 'after')"});
  r = p_.Run(policy);
  ExpectStoppedFor(r, p_.db(), "t", "a primary key change with key_change=fail");
  EXPECT_NE(r.err.find("PRIMARY KEY"), std::string::npos) << "the error must quote the statement:\n" << r.err;
  CommandResult again = p_.Run(policy);
  EXPECT_EQ(again.exit_code, 1) << "the pipe must stay stopped:\n" << again.Describe();
}

// ---------------------------------------------------------------------------------------------
// 12. Policies from the configuration file.

TEST_P(SchemaEvolutionTest, PerTablePolicyFromTheConfigFile) {
  ASSERT_TRUE(p_.connected());
  CreateStandard("strict_t", 300);
  CreateStandard("loose_t", 300);
  const std::string config = MakeTempDir("evo-config") + "/chsync.yaml";
  {
    std::ofstream out(config);
    out << "schema_changes:\n"
        << "  truncate: ignore\n"
        << "  tables:\n"
        << "    \"" << p_.db() << ".strict_*\":\n"
        << "      rename_column: fail\n"
        << "      on_table_error: stop\n"
        << "      truncate: propagate\n";
  }
  const std::vector<std::string> with_config = {"--config", config};
  CommandResult r = p_.Run(with_config);
  ASSERT_RUN_OK(r, "(snapshot) with " + config);

  // loose_t: the defaults of the file (rename followed, truncate ignored).
  p_.ExecAll(StandardChurn("loose_t", 301, 400));
  const std::string loose_before = p_.SourceValue("SELECT count(*) FROM loose_t");
  p_.ExecAll({"ALTER TABLE loose_t RENAME COLUMN n TO m", "TRUNCATE TABLE loose_t",
              "INSERT INTO loose_t (id, v, m) SELECT seq, 'after', seq FROM seq_1001_to_1100"});
  // strict_t: its own truncate=propagate.
  p_.ExecAll(
      {"TRUNCATE TABLE strict_t", "INSERT INTO strict_t (id, v, n) SELECT seq, 's', seq FROM seq_1_to_50"});
  r = p_.Run(with_config);
  ASSERT_RUN_OK(r, "across RENAME COLUMN and TRUNCATE on loose_t");
  EXPECT_EQ(p_.DestCount("loose_t"), Str(std::stoi(loose_before) + 100))
      << "truncate: ignore (file default) must keep loose_t's " << loose_before
      << " earlier rows in ClickHouse";
  EXPECT_EQ(p_.DestValue("SELECT m FROM " + p_.DestTable("loose_t") + " FINAL WHERE id = 1050"), "1050")
      << "loose_t.n renamed to m: SELECT m must return row 1050's value";
  EXPECT_EQUAL_TO_SOURCE(p_, "strict_t", "after TRUNCATE (strict_t: truncate=propagate from the file)");

  // strict_t: rename_column=fail.
  p_.ExecAll(
      {"ALTER TABLE strict_t RENAME COLUMN n TO m", "INSERT INTO strict_t (id, v, m) VALUES (999, 'x', 1)"});
  r = p_.Run(with_config);
  ExpectStoppedFor(r, p_.db(), "strict_t", "RENAME COLUMN with rename_column=fail from the config file");
  EXPECT_NE(r.err.find("RENAME COLUMN n TO m"), std::string::npos) << "the error must quote the statement:\n"
                                                                   << r.err;
}

// ---------------------------------------------------------------------------------------------
// 13. What `chsync status` and `_chsync_schema_log` tell.

TEST_P(SchemaEvolutionTest, StatusAndSchemaLogListPoliciesAndChanges) {
  ASSERT_TRUE(p_.connected());
  CreateStandard("a", 100);
  CreateStandard("b", 100);
  const std::vector<std::string> policy = {"--schema-policy", p_.db() + ".b:truncate=ignore"};
  CommandResult r = p_.Run(policy);
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.ExecAll({"ALTER TABLE a ADD COLUMN x INT", "ALTER TABLE a MODIFY n BIGINT", "TRUNCATE TABLE b",
              "ALTER TABLE a RENAME COLUMN v TO v2", "DROP TABLE a, b"});
  r = p_.Run(policy);
  ASSERT_RUN_OK(r, "across the schema changes");

  CommandResult status = p_.ChsyncStatus();
  ASSERT_EQ(status.exit_code, 0) << status.Describe();
  for (const std::string& s : {std::string("rename_column=rename"), std::string("drop_table=keep"),
                               p_.db() + ".b", std::string("truncate=ignore")}) {
    EXPECT_NE(status.out.find(s), std::string::npos)
        << "chsync status must list the policies (" << s << "):\n"
        << status.out;
  }
  for (const char* s : {"ALTER TABLE a ADD COLUMN x INT", "ALTER TABLE a MODIFY n BIGINT", "TRUNCATE TABLE b",
                        "ALTER TABLE a RENAME COLUMN v TO v2", "DROP TABLE"}) {
    EXPECT_NE(status.out.find(s), std::string::npos)
        << "chsync status must list the schema change " << s << ":\n"
        << status.out;
  }

  // One row per statement and table, each with what was done.
  struct Row {
    std::string position, table, statement, actions;
  };
  std::vector<Row> rows;
  for (const auto& f :
       p_.DestQuery("SELECT position, table, statement, toString(actions), length(actions) FROM " +
                    p_.DestTable("_chsync_schema_log") + " FINAL ORDER BY position, table")) {
    ASSERT_EQ(f.size(), 5u);
    rows.push_back({f[0].value_or(""), f[1].value_or(""), f[2].value_or(""), f[3].value_or("")});
    EXPECT_NE(f[4].value_or("0"), "0") << "schema log row without actions: " << rows.back().statement;
  }
  auto find = [&](const std::string& statement, const std::string& table) -> const Row* {
    for (const Row& row : rows) {
      if (row.table == p_.db() + "." + table && row.statement.find(statement) != std::string::npos)
        return &row;
    }
    return nullptr;
  };
  std::string all;
  for (const Row& row : rows)
    all += "  " + row.position + " " + row.table + " " + row.statement + " " + row.actions + "\n";
  for (const auto& [statement, table] :
       std::vector<std::pair<std::string, std::string>>{{"ADD COLUMN x", "a"},
                                                        {"MODIFY n BIGINT", "a"},
                                                        {"TRUNCATE TABLE b", "b"},
                                                        {"RENAME COLUMN v TO v2", "a"},
                                                        {"DROP TABLE", "a"},
                                                        {"DROP TABLE", "b"}}) {
    EXPECT_NE(find(statement, table), nullptr) << "_chsync_schema_log must have a row for `" << statement
                                               << "` on " << p_.db() << "." << table << ":\n"
                                               << all;
  }
  const Row* drop_a = find("DROP TABLE", "a");
  const Row* drop_b = find("DROP TABLE", "b");
  if (drop_a != nullptr && drop_b != nullptr) {
    EXPECT_EQ(drop_a->position, drop_b->position) << "DROP TABLE a, b is one statement: one position\n"
                                                  << all;
  }
  const Row* truncate = find("TRUNCATE TABLE b", "b");
  if (truncate != nullptr) {
    EXPECT_TRUE(truncate->actions.find("ignore") != std::string::npos ||
                truncate->actions.find("not propagated") != std::string::npos)
        << "the TRUNCATE of b (truncate=ignore) must say it was not propagated:\n"
        << all;
  }
}

INSTANTIATE_TEST_SUITE_P(Destinations, SchemaEvolutionTest, ::testing::Values(Dest::kServer, Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& i) { return DestName(i.param); });

// ---------------------------------------------------------------------------------------------
// `fail`, for every policy: the pipe stops with the resync message and applies nothing after it.

struct FailCase {
  const char* name;
  const char* policy;     ///< KEY=fail, given for DB.<table>
  const char* table;      ///< the table the message names
  const char* statement;  ///< run at the source after t (id, v, n) is replicated
  const char* quoted;     ///< what the message quotes (the statement as the binlog has it)
};

void PrintTo(const FailCase& c, std::ostream* os) {
  *os << c.policy << ": " << c.statement;
}

const FailCase kFailCases[] = {
    {"RenameColumn", "rename_column=fail", "t", "ALTER TABLE t RENAME COLUMN n TO m",
     "ALTER TABLE t RENAME COLUMN n TO m"},
    {"TypeChange", "type_change=fail", "t", "ALTER TABLE t MODIFY n BIGINT", "ALTER TABLE t MODIFY n BIGINT"},
    {"Truncate", "truncate=fail", "t", "TRUNCATE TABLE t", "TRUNCATE TABLE t"},
    {"CreateTable", "create_table=fail", "t2", "CREATE TABLE t2 (id INT PRIMARY KEY)",
     "CREATE TABLE t2 (id INT PRIMARY KEY)"},
    // MariaDB logs DROP TABLE rewritten: DROP TABLE `t` /* generated by server */
    {"DropTable", "drop_table=fail", "t", "DROP TABLE t", "DROP TABLE `t`"},
    {"RenameTable", "rename_table=fail", "t", "RENAME TABLE t TO t3", "RENAME TABLE t TO t3"},
    {"DropColumn", "drop_column=fail", "t", "ALTER TABLE t DROP COLUMN n", "ALTER TABLE t DROP COLUMN n"},
};

class FailPolicyTest : public ::testing::TestWithParam<std::tuple<Dest, FailCase>> {
 protected:
  void SetUp() override {
    p_.Init("CHSYNC_TEST_MYSQL_FULL", std::get<0>(GetParam()), "evo_fail", kServerIdBase);
  }
  void TearDown() override { p_.Cleanup(); }
  PipeTest p_;
};

TEST_P(FailPolicyTest, StopsWithTheResyncMessage) {
  ASSERT_TRUE(p_.connected());
  const FailCase& c = std::get<1>(GetParam());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(50), n INT)",
              "INSERT INTO t SELECT seq, CONCAT('v', seq), seq FROM seq_1_to_100",
              "CREATE TABLE other (id INT PRIMARY KEY)"});
  const std::vector<std::string> policy = {"--schema-policy", p_.db() + "." + c.table + ":" + c.policy,
                                           "--schema-policy", "on_table_error=stop"};
  CommandResult r = p_.Run(policy);
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.ExecAll({"INSERT INTO other VALUES (1)", c.statement, "INSERT INTO other VALUES (2)"});
  r = p_.Run(policy);
  ExpectStoppedFor(r, p_.db(), c.table, std::string("`") + c.statement + "` with " + c.policy);
  EXPECT_NE(r.err.find(c.quoted), std::string::npos) << "the error must quote the statement:\n" << r.err;
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.DestTable("other") + " FINAL WHERE id = 2"), "0")
      << "row 2 of table other, written after `" << c.statement << "`, must not reach ClickHouse";
  CommandResult again = p_.Run(policy);
  EXPECT_EQ(again.exit_code, 1) << "the pipe must stay stopped:\n" << again.Describe();
}

// With the default on_table_error=park, the table the policy concerns parks and the others go on
// (docs/table-control.md). A created, dropped or renamed table (create_table, drop_table,
// rename_table=fail) leaves no replicated table to park: those stop the pipe as before.
TEST_P(FailPolicyTest, ParksTheTableUnderTheDefault) {
  ASSERT_TRUE(p_.connected());
  const FailCase& c = std::get<1>(GetParam());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(50), n INT)",
              "INSERT INTO t SELECT seq, CONCAT('v', seq), seq FROM seq_1_to_100",
              "CREATE TABLE other (id INT PRIMARY KEY)"});
  const std::vector<std::string> policy = {"--schema-policy", p_.db() + "." + c.table + ":" + c.policy};
  CommandResult r = p_.Run(policy);
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.ExecAll({"INSERT INTO other VALUES (1)", c.statement, "INSERT INTO other VALUES (2)"});
  r = p_.Run(policy);
  const std::string name = std::get<1>(GetParam()).name;
  if (name == "CreateTable" || name == "DropTable" || name == "RenameTable") {
    ExpectStoppedFor(r, p_.db(), c.table, std::string("`") + c.statement + "` with " + c.policy);
    return;
  }
  ASSERT_RUN_OK(r, "past `" + std::string(c.statement) + "` with " + c.policy);
  EXPECT_NE(r.err.find("table " + p_.db() + "." + c.table + " PARKED"), std::string::npos) << r.Describe();
  EXPECT_EQUAL_TO_SOURCE(p_, "other", "the other table goes on while t is parked");
  p_.Exec("INSERT INTO other VALUES (3)");
  r = p_.Run(policy);
  ASSERT_RUN_OK(r, "again, t still parked");
  EXPECT_EQ(r.err.find("PARKED"), std::string::npos) << "said once, not at every start:\n" << r.Describe();
  EXPECT_NE(r.err.find(p_.db() + ".t is parked"), std::string::npos) << r.Describe();
  EXPECT_EQUAL_TO_SOURCE(p_, "other", "after a restart with t parked");
  CommandResult status = p_.ChsyncStatus();
  EXPECT_NE(status.out.find(p_.db() + ".t  parked since"), std::string::npos) << status.Describe();
  EXPECT_NE(status.out.find(c.quoted), std::string::npos) << status.Describe();
}

INSTANTIATE_TEST_SUITE_P(Destinations, FailPolicyTest,
                         ::testing::Combine(::testing::Values(Dest::kServer, Dest::kEmbedded),
                                            ::testing::ValuesIn(kFailCases)),
                         [](const ::testing::TestParamInfo<std::tuple<Dest, FailCase>>& i) {
                           return DestName(std::get<0>(i.param)) + "_" + std::get<1>(i.param).name;
                         });

// ---------------------------------------------------------------------------------------------
// 10. Ordinal mode (binlog_row_metadata=MINIMAL).

struct OrdinalCase {
  const char* name;
  const char* statement;  ///< run on table t (id, a, b, c)
  const char* after;      ///< a statement using the new shape ("" for none)
};

void PrintTo(const OrdinalCase& c, std::ostream* os) {
  *os << c.statement;
}

const OrdinalCase kOrdinalCases[] = {
    {"DropColumn", "ALTER TABLE t DROP COLUMN a", ""},
    {"AddFirst", "ALTER TABLE t ADD COLUMN z INT FIRST", "UPDATE t SET z = id * 2 WHERE id % 3 = 0"},
    {"AddAfter", "ALTER TABLE t ADD COLUMN z VARCHAR(10) AFTER id",
     "UPDATE t SET z = CONCAT('z', id) WHERE id % 3 = 0"},
    {"ModifyFirst", "ALTER TABLE t MODIFY COLUMN b VARCHAR(20) FIRST",
     "UPDATE t SET b = CONCAT(b, '-long') WHERE id % 4 = 0"},
    {"ChangeAfter", "ALTER TABLE t CHANGE COLUMN c c INT AFTER id", "UPDATE t SET c = -c WHERE id % 4 = 1"},
    {"DropAndAddInOne", "ALTER TABLE t DROP COLUMN a, ADD COLUMN z INT NOT NULL DEFAULT 5 AFTER id",
     "UPDATE t SET z = id WHERE id % 5 = 0"},
};

class OrdinalEvolutionTest : public ::testing::TestWithParam<std::tuple<Dest, OrdinalCase>> {
 protected:
  void SetUp() override {
    p_.Init("CHSYNC_TEST_MYSQL_MINIMAL", std::get<0>(GetParam()), "evo_ord", kServerIdBase);
  }
  void TearDown() override { p_.Cleanup(); }
  PipeTest p_;
};

/// Inserts, updates and deletes over the columns every case keeps (id, b, c).
std::vector<std::string> OrdinalChurn(int from, int to) {
  return Churn("t", from, to, "id, b, c", "seq, CONCAT('b', seq), seq * 3", "b = CONCAT('u', id), c = c + 1");
}

TEST_P(OrdinalEvolutionTest, PositionShiftingDdlIsFollowed) {
  ASSERT_TRUE(p_.connected());
  const OrdinalCase& c = std::get<1>(GetParam());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10), c INT)",
              "INSERT INTO t SELECT seq, seq * 10, CONCAT('x', seq), seq * 100 FROM seq_1_to_500"});
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.ExecAll(OrdinalChurn(501, 600));
  p_.Exec(c.statement);
  p_.ExecAll(OrdinalChurn(601, 700));
  if (*c.after != '\0') p_.Exec(c.after);
  r = p_.Run();
  ASSERT_RUN_OK(r, std::string("across `") + c.statement + "` in ordinal mode");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", std::string("after `") + c.statement + "` (ordinal mode)");
  p_.ExecAll(OrdinalChurn(701, 800));
  r = p_.Run();
  ASSERT_RUN_OK(r, std::string("after `") + c.statement + "` in ordinal mode");
  EXPECT_EQUAL_TO_SOURCE(p_, "t",
                         std::string("after more rows following `") + c.statement + "` (ordinal mode)");
}

INSTANTIATE_TEST_SUITE_P(Destinations, OrdinalEvolutionTest,
                         ::testing::Combine(::testing::Values(Dest::kServer, Dest::kEmbedded),
                                            ::testing::ValuesIn(kOrdinalCases)),
                         [](const ::testing::TestParamInfo<std::tuple<Dest, OrdinalCase>>& i) {
                           return DestName(std::get<0>(i.param)) + "_" + std::get<1>(i.param).name;
                         });

class OrdinalStopTest : public ::testing::TestWithParam<Dest> {
 protected:
  void SetUp() override { p_.Init("CHSYNC_TEST_MYSQL_MINIMAL", GetParam(), "evo_ords", kServerIdBase); }
  void TearDown() override { p_.Cleanup(); }
  PipeTest p_;
};

TEST_P(OrdinalStopTest, PositionShiftFailStopsOnDropColumn) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10), c INT)",
              "INSERT INTO t SELECT seq, seq * 10, CONCAT('x', seq), seq * 100 FROM seq_1_to_200"});
  const std::vector<std::string> policy = {"--schema-policy", "position_shift=fail", "--schema-policy",
                                           "on_table_error=stop"};
  CommandResult r = p_.Run(policy);
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.ExecAll({"INSERT INTO t (id, b) VALUES (1000, 'before')", "ALTER TABLE t DROP COLUMN a",
              "INSERT INTO t (id, b) VALUES (1001, 'after')"});
  r = p_.Run(policy);
  ExpectStoppedFor(r, p_.db(), "t", "DROP COLUMN in ordinal mode with position_shift=fail");
  EXPECT_NE(r.err.find("ALTER TABLE t DROP COLUMN a"), std::string::npos)
      << "the error must quote the statement:\n"
      << r.err;
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.DestTable("t") + " FINAL WHERE id = 1001"), "0")
      << "row 1001, written after the DROP COLUMN, must not reach ClickHouse";
}

/// A statement MariaDB accepts (a geometry column with its spatial reference system) that chsync's
/// DDL parser cannot follow, on a replicated table.
/// (MariaDB nests parentheses far deeper than the 200 levels chsync's parser, which reads untrusted
/// text, follows; REF_SYSTEM_ID, the statement used before, parses since issue 33.)
std::string UnparseableDdl(const std::string& table = "t") {
  return "ALTER TABLE " + table + " ADD COLUMN g INT DEFAULT " + std::string(210, '(') + "1" +
         std::string(210, ')');
}
const std::string kUnparseableDdl = UnparseableDdl();

TEST_P(OrdinalStopTest, UnparseableDdlOnAReplicatedTableStops) {
  ASSERT_TRUE(p_.connected());
  {
    // The premise: the parser rejects the statement (else pick another one).
    const std::string file = MakeTempDir("evo-ddl") + "/ddl.sql";
    std::ofstream(file) << "USE d;\nCREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10), c INT);\n"
                        << kUnparseableDdl << ";\n";
    CommandResult explain =
        RunCommand({ChsyncBinary(), "explain-ddl", "--mariadb", "--metadata", "minimal", file});
    ASSERT_NE(explain.exit_code, 0) << "chsync explain-ddl parses `" << kUnparseableDdl
                                    << "`: this test needs a statement the parser rejects\n"
                                    << explain.Describe();
  }
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10), c INT)",
              "INSERT INTO t SELECT seq, seq * 10, CONCAT('x', seq), seq * 100 FROM seq_1_to_200"});
  const std::vector<std::string> stop = {"--schema-policy", "on_table_error=stop"};
  CommandResult r = p_.Run(stop);
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.ExecAll({"INSERT INTO t (id, b) VALUES (1000, 'before')", kUnparseableDdl,
              "INSERT INTO t (id, b) VALUES (1001, 'after')"});
  r = p_.Run(stop);
  ExpectStoppedFor(r, p_.db(), "t", std::string("a statement chsync cannot parse: ") + kUnparseableDdl);
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.DestTable("t") + " FINAL WHERE id = 1001"), "0")
      << "row 1001, written after the unparseable statement, must not reach ClickHouse";

  // Under the default (park), t parks there and a table created after it is replicated.
  p_.ExecAll({"CREATE TABLE u (id INT PRIMARY KEY)", "INSERT INTO u VALUES (1)"});
  r = p_.Run();
  ASSERT_RUN_OK(r, "with t parked");
  EXPECT_NE(r.err.find("table " + p_.db() + ".t PARKED"), std::string::npos) << r.Describe();
  EXPECT_EQUAL_TO_SOURCE(p_, "u", "while t is parked");
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.DestTable("t") + " FINAL WHERE id = 1001"), "0")
      << "row 1001 of the parked table";
}

// Seen in CI: the same statement on a table of the same name in another database (another pipe's,
// another test's) stopped this pipe, which does not replicate that database.
TEST_P(OrdinalStopTest, UnparseableDdlInAnotherDatabaseDoesNotStop) {
  ASSERT_TRUE(p_.connected());
  const std::string other = p_.db() + "_other";
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10), c INT)",
              "INSERT INTO t SELECT seq, seq * 10, CONCAT('x', seq), seq * 100 FROM seq_1_to_200",
              "CREATE DATABASE " + other, "CREATE TABLE " + other + ".t (id INT PRIMARY KEY, a INT)",
              "CREATE TABLE tt (id INT PRIMARY KEY)"});
  CommandResult r = p_.RunTables(p_.db() + ".t");
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.ExecAll({"INSERT INTO t (id, b) VALUES (1000, 'before')", "USE " + other, kUnparseableDdl,
              "USE " + p_.db(),
              // Names that merely contain the table's name ("t" in "tt" or in "ALTER TABLE").
              UnparseableDdl("tt"), "INSERT INTO t (id, b) VALUES (1001, 'after')"});
  r = p_.RunTables(p_.db() + ".t");
  p_.Exec("DROP DATABASE " + other);
  ASSERT_RUN_OK(r, "across unparseable statements on other tables named like t");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after unparseable statements on other tables");
}

INSTANTIATE_TEST_SUITE_P(Destinations, OrdinalStopTest, ::testing::Values(Dest::kServer, Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& i) { return DestName(i.param); });

}  // namespace
}  // namespace chsync
