// Row filters (`where:` in table_options, docs/mapping.md) end to end: the snapshot copies only the
// rows the filter holds for; the stream inserts rows that pass, deletes only rows it sent, and turns
// an UPDATE that moves a row out of the filter into a delete and one that moves it in into an
// insert; `chsync verify` compares only the filtered rows; a filter column dropped at the source
// parks the table with a message. And the evaluator against the server itself: for a few hundred
// varied rows, the server's own `SELECT id, (expr)` against RowFilter over the same rows as
// binlog::Values (read by the snapshot reader, which gives them in the stream's form).

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "mysql/snapshot_reader.h"
#include "mysql/table_inventory.h"
#include "pipe/row_converter.h"
#include "pipe_compare.h"
#include "pipe_harness.h"
#include "policy/row_filter.h"
#include "test_env.h"

namespace chsync {
namespace {

using testing::CommandResult;
using testing::Dest;
using testing::MakeTempDir;
using testing::PipeTest;

constexpr int kServerIdBase = 17700000;

class RowFilterTest : public ::testing::TestWithParam<Dest> {
 protected:
  void SetUp() override { p_.Init("CHSYNC_TEST_MYSQL_FULL", GetParam(), "rowf", kServerIdBase); }
  void TearDown() override { p_.Cleanup(); }

  /// Writes `yaml` (its "DB" replaced by the test database) to a config file; --config FILE.
  std::vector<std::string> Config(std::string yaml) {
    for (size_t at = yaml.find("DB."); at != std::string::npos; at = yaml.find("DB.", at)) {
      yaml.replace(at, 2, p_.db());
    }
    config_path_ = MakeTempDir("rowf-config") + "/chsync.yaml";
    std::ofstream(config_path_) << yaml;
    return {"--config", config_path_};
  }

  /// `text` without the trailing zeros of its DECIMAL fraction ("1:paid:10.50" → "1:paid:10.5",
  /// "10.00" → "10"): ClickHouse 26.7 prints Decimals without them, 18.16 and MySQL with them.
  static std::string Canonical(std::string text) {
    if (text.find('.') == std::string::npos) return text;
    while (!text.empty() && text.back() == '0') text.pop_back();
    if (!text.empty() && text.back() == '.') text.pop_back();
    return text;
  }

  /// "id:status:amount" of every row the filter holds for at the source, in id order.
  std::vector<std::string> SourceRows(const std::string& where) {
    std::vector<std::string> out;
    for (const auto& r :
         p_.SourceQuery("SELECT CONCAT(id, ':', IFNULL(status, 'N'), ':', IFNULL(amount, 'N')) FROM t "
                        "WHERE (" +
                        where + ") ORDER BY id")) {
      out.push_back(Canonical(r.empty() ? "" : r[0].value_or("NULL")));
    }
    return out;
  }
  /// The same of ClickHouse's live rows.
  std::vector<std::string> DestRows() {
    std::vector<std::string> out;
    for (const auto& r :
         p_.DestQuery("SELECT concat(toString(id), ':', ifNull(status, 'N'), ':', "
                      "ifNull(toString(amount), 'N')) FROM " +
                      p_.DestTable("t") + " FINAL WHERE _chsync_is_deleted = 0 ORDER BY id")) {
      out.push_back(Canonical(r.empty() ? "" : r[0].value_or("NULL")));
    }
    return out;
  }

  CommandResult Verify() const {
    return testing::RunCommand(
        {testing::ChsyncBinary(), "verify", "--source", p_.source_url(), "--dest", p_.dest_url(), "--tables",
         p_.db() + ".*", "--state", p_.state(), "--config", config_path_},
        300'000);
  }

  PipeTest p_;
  std::string config_path_;
};

// The filter: a case-insensitive string comparison (trailing spaces and case ignored, as MySQL's
// utf8mb4_general_ci does), a DECIMAL bound, and NULLs (which never pass).
constexpr const char* kWhere = "status IN ('paid', 'shipped') AND amount >= 10";

TEST_P(RowFilterTest, SnapshotStreamUpdatesInAndOutDeletesAndVerify) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll(
      {"CREATE TABLE t (id INT PRIMARY KEY, status VARCHAR(10) COLLATE utf8mb4_general_ci, "
       "amount DECIMAL(10,2), note VARCHAR(20)) DEFAULT CHARSET utf8mb4",
       "INSERT INTO t SELECT seq, ELT(1 + seq % 5, 'paid', 'PAID ', 'new', NULL, 'Shipped'), "
       "IF(seq % 7 = 0, NULL, seq % 30), CONCAT('n', seq) FROM seq_1_to_3000"});
  const std::vector<std::string> config =
      Config(std::string("table_options:\n  DB.t:\n    where: \"") + kWhere + "\"\n");
  // Chunks of 1000 rows: the second one's SELECT (after the last key) carries the filter too.
  std::vector<std::string> first = config;
  first.insert(first.end(), {"--snapshot-chunk-rows", "1000"});
  CommandResult r = p_.Run(first);
  ASSERT_RUN_OK(r, "the snapshot with a row filter");
  const std::vector<std::string> snapshot = SourceRows(kWhere);
  ASSERT_GT(snapshot.size(), 1000U) << "more than one chunk";
  ASSERT_LT(snapshot.size(), 2000U) << "the filter must leave rows out for the test to mean anything";
  EXPECT_EQ(DestRows(), snapshot) << "the snapshot copies the filtered rows";

  // Streaming: inserts in and out; updates in→in, out→in, in→out, out→out, a key change of a row
  // that stays in and of one that moves out; deletes of rows in and out.
  p_.ExecAll({
      "INSERT INTO t VALUES (10001, 'paid', 50, 'in'), (10002, 'new', 50, 'out'), (10003, 'SHIPPED  ', 10, "
      "'in'), "
      "(10004, 'paid', 9.99, 'out'), (10005, NULL, 100, 'out')",
      "UPDATE t SET note = 'in to in' WHERE id = 10001",
      "UPDATE t SET status = 'paid' WHERE id = 10002",  // out → in
      "UPDATE t SET amount = 1 WHERE id = 10003",       // in → out
      "UPDATE t SET note = 'out to out' WHERE id = 10004",
      "UPDATE t SET status = 'Paid' WHERE id IN (3, 8)",              // 'new' → in where amount allows
      "UPDATE t SET status = NULL WHERE id IN (1, 6, 11)",            // in → out (NULL)
      "UPDATE t SET id = id + 50000 WHERE id IN (16, 21)",            // key change
      "UPDATE t SET id = 60003, status = 'new' WHERE id = 26",        // key change moving out
      "DELETE FROM t WHERE id IN (31, 33, 34, 10004, 10005)",         // in and out
      "UPDATE t SET amount = amount + 0 WHERE id BETWEEN 40 AND 60",  // changes nothing
  });
  r = p_.Run(config);
  ASSERT_RUN_OK(r, "streaming with a row filter");
  EXPECT_EQ(DestRows(), SourceRows(kWhere)) << "after inserts, updates in and out and deletes";
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.DestTable("t") + " WHERE id IN (10002, 10004, 10005)"),
            "1")
      << "only the row moved in is in ClickHouse; rows never in it have no tombstones";

  CommandResult v = Verify();
  EXPECT_EQ(v.exit_code, 0) << "verify compares only the filtered rows:\n" << v.Describe();
  // And it does look: a row deleted in ClickHouse behind the pipe's back is a difference.
  p_.DestQuery(
      "INSERT INTO " + p_.DestTable("t") +
      " (id, status, amount, note, _chsync_version, _chsync_is_deleted) SELECT id, status, amount, note, "
      "_chsync_version + 1, 1 FROM " +
      p_.DestTable("t") + " FINAL WHERE id = 10001");
  v = Verify();
  EXPECT_NE(v.exit_code, 0) << "a missing filtered row is a difference:\n" << v.Describe();

  // The filter's column dropped at the source: the table parks, with what to do.
  p_.ExecAll({"ALTER TABLE t DROP COLUMN amount", "INSERT INTO t VALUES (20001, 'paid', 'after the drop')"});
  r = p_.Run(config);
  ASSERT_RUN_OK(r, "past the drop of a filter column");
  EXPECT_NE(r.err.find("table " + p_.db() + ".t PARKED"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("where:"), std::string::npos) << r.Describe();
  CommandResult status = p_.ChsyncStatus();
  EXPECT_NE(status.out.find(p_.db() + ".t  parked since"), std::string::npos) << status.Describe();
  EXPECT_NE(status.out.find("row filter"), std::string::npos) << status.Describe();
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.DestTable("t") + " WHERE id = 20001"), "0")
      << "rows after the park are not applied";
  r = p_.Run(config);
  ASSERT_RUN_OK(r, "a restart with the table parked");
}

// A filter column renamed at the source parks the table; with the filter edited to the new name,
// `chsync resume` copies it again under the new filter, and it streams on.
TEST_P(RowFilterTest, ARenamedFilterColumnParksUntilTheFilterIsEditedAndTheTableResumed) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE r (id INT PRIMARY KEY, region VARCHAR(10), v INT)",
              "INSERT INTO r SELECT seq, ELT(1 + seq % 3, 'eu', 'us', 'apac'), seq FROM seq_1_to_300"});
  auto live = [&] {
    return p_.DestValue("SELECT count() FROM " + p_.DestTable("r") + " FINAL WHERE _chsync_is_deleted = 0");
  };
  std::vector<std::string> config = Config("table_options:\n  DB.r:\n    where: \"region = 'eu'\"\n");
  CommandResult r = p_.Run(config);
  ASSERT_RUN_OK(r, "the snapshot");
  EXPECT_EQ(live(), "100");

  p_.ExecAll({"ALTER TABLE r RENAME COLUMN region TO area", "INSERT INTO r VALUES (1000, 'eu', 0)"});
  r = p_.Run(config);
  ASSERT_RUN_OK(r, "past the rename");
  EXPECT_NE(r.err.find("table " + p_.db() + ".r PARKED"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("unknown column region"), std::string::npos) << r.Describe();
  EXPECT_EQ(live(), "100") << "parked: nothing after the rename applied";

  config = Config("table_options:\n  DB.r:\n    where: \"area IN ('eu', 'us')\"\n");
  CommandResult resumed = testing::RunCommand(
      {testing::ChsyncBinary(), "resume", "--state", p_.state(), "--table", p_.db() + ".r"}, 120'000);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.Describe();
  r = p_.Run(config);
  ASSERT_RUN_OK(r, "the resume under the edited filter");
  p_.ExecAll(
      {"INSERT INTO r VALUES (1001, 'us', 1), (1002, 'apac', 2)", "UPDATE r SET area = 'apac' WHERE id = 3"});
  r = p_.Run(config);
  ASSERT_RUN_OK(r, "streaming under the edited filter");
  EXPECT_EQ(live(), p_.SourceValue("SELECT COUNT(*) FROM r WHERE area IN ('eu', 'us')"));
  CommandResult v = Verify();
  EXPECT_EQ(v.exit_code, 0) << v.Describe();
}

// The evaluator against MariaDB itself: source-side only, so run with one destination.
class RowFilterSourceTest : public RowFilterTest {};

TEST_P(RowFilterSourceTest, EvaluatorAgreesWithTheServer) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({
      "CREATE TABLE v (id INT PRIMARY KEY, s VARCHAR(20) COLLATE utf8mb4_general_ci, "
      "b VARCHAR(20) COLLATE utf8mb4_bin, u VARCHAR(20) COLLATE utf8mb4_unicode_ci, "
      "w CHAR(6) CHARACTER SET latin1 COLLATE latin1_swedish_ci, vb VARBINARY(10), n INT, un BIGINT "
      "UNSIGNED, "
      "dc DECIMAL(8,3), f DOUBLE, d DATE, dt DATETIME(3), ts TIMESTAMP(0) NULL, tm TIME, "
      "e ENUM('new','paid','Shipped'), st SET('x','y','z'), y YEAR) DEFAULT CHARSET utf8mb4",
      "SET time_zone = '+00:00'",
      "INSERT INTO v SELECT seq, "
      "ELT(1 + seq % 17, 'a', 'A', 'a ', 'abc', 'ABC  ', 'b', '', ' a', 'a_b', 'a%b', '10', '9', '1e2', 'x "
      "y', "
      "'Zeta', '_', NULL), "
      "ELT(1 + seq % 13, 'a', 'A', 'a ', 'abc', 'Abc', 'b', '', 'a\\b', '10', '9.5', NULL, 'paid', 'PAID'), "
      "ELT(1 + seq % 11, 'apple', 'Apple ', 'APPLE', 'banana', 'b', '', '12', '7x', 'zz', 'Zz', NULL), "
      "ELT(1 + seq % 7, 'a', 'A ', 'abc', 'xyz', '', '5', NULL), "
      "ELT(1 + seq % 5, 'x', 'x ', 'X', '', NULL), "
      "IF(seq % 19 = 0, NULL, seq % 23 - 11), IF(seq % 29 = 0, NULL, 18446744073709551615 - seq % 3), "
      "IF(seq % 13 = 0, NULL, (seq % 41) / 8 - 2), IF(seq % 11 = 0, NULL, (seq % 37) / 10), "
      "IF(seq % 9 = 0, NULL, '2024-01-01' + INTERVAL (seq % 60) - 30 DAY), "
      "IF(seq % 8 = 0, NULL, '2024-03-01 12:00:00' + INTERVAL (seq % 50) * 137 MINUTE + INTERVAL seq % 3 "
      "SECOND_MICROSECOND), "
      "IF(seq % 10 = 0, NULL, FROM_UNIXTIME(1704067200 + (seq % 40 - 20) * 3600)), "
      "IF(seq % 12 = 0, NULL, SEC_TO_TIME((seq % 31 - 15) * 997)), "
      "IF(seq % 6 = 0, NULL, ELT(1 + seq % 3, 'new', 'paid', 'Shipped')), "
      "IF(seq % 7 = 0, NULL, ELT(1 + seq % 4, '', 'x', 'y,z', 'x,z')), "
      "IF(seq % 14 = 0, NULL, 2020 + seq % 8) "
      "FROM (SELECT CAST(seq AS SIGNED) AS seq FROM seq_1_to_400) q",
  });
  const std::vector<std::string> expressions = {
      "s = 'a'",
      "s <> 'A'",
      "s > 'a'",
      "s < 'B' AND s >= 'a'",
      "s IN ('abc', 'zeta', '')",
      "s NOT IN ('abc', NULL)",
      "s LIKE 'a%'",
      "s LIKE 'a\\_b'",
      "s LIKE '%\\%%'",
      "s NOT LIKE '_'",
      "s LIKE 'A_'",
      "s = 10",
      "s > 9",
      "s BETWEEN 'a' AND 'b'",
      "s IS NULL OR s = ''",
      "b = 'a'",
      "b = 'A'",
      "b > 'a'",
      "b < 'abc '",
      "b LIKE 'a%'",
      "b LIKE 'a|b' ESCAPE '|'",
      "b IN ('paid', 'x')",
      "b = 9.5",
      "u = 'apple'",
      "u LIKE 'APP%'",
      "u > 'b'",
      "u BETWEEN 'a' AND 'b'",
      "u = 7",
      "w = 'a'",
      "w > 'a'",
      "w LIKE 'A %'",
      "vb = 'x'",
      "vb = 'x '",
      "vb > 'x'",
      "vb LIKE 'x%'",
      "n = 0",
      "n > -3 AND n <= 5",
      "n BETWEEN -5 AND '5'",
      "n IN (1, 2, '3', 4.0)",
      "n = '4abc'",
      "n <=> NULL",
      "NOT n > 0",
      "n > 0 XOR n < 5",
      "(n > 0) IS NOT TRUE",
      "un = 18446744073709551615",
      "un > 18446744073709551613.5",
      "un = 18446744073709551614e0",
      "dc = 0.5",
      "dc > '1.25'",
      "dc BETWEEN -1 AND 1.125",
      "dc > 0 OR dc IS NULL",
      "f = 0.3",
      "f > 1.5",
      "f BETWEEN 0.1 AND 0.7",
      "f = '0.5'",
      "d = '2024-01-01'",
      "d > '2023-12-25' AND d < '2024-01-20'",
      "d BETWEEN '2023-12-10' AND '2024-01-05 12:00:00'",
      "d >= 20240110",
      "dt > '2024-03-02'",
      "dt = '2024-03-01 14:17:00.000'",
      "dt BETWEEN '2024-03-01 12:00' AND '2024-03-03 23:59:59'",
      "dt < d",
      "ts < '2024-01-01 00:00:00'",
      "ts >= '2024-01-01 05:00' AND ts <= '2024-01-01 10:00:00'",
      "tm > '00:00:00'",
      "tm BETWEEN '-01:00:00' AND '02:30:00'",
      "tm < '-02:00'",
      "e = 'paid'",
      "e = 'SHIPPED'",
      "e > 'o'",
      "e = 2",
      "e IN ('new', 3)",
      "e LIKE '%e%'",
      "st = 'x,z'",
      "st LIKE '%z'",
      "st = 0",
      "st = 5",
      "y > 2023",
      "y = '2021'",
      "(s = 'a' OR b = 'b') AND NOT (n < 0 OR n IS NULL)",
      "s = 'a' OR n > 3 OR d IS NULL",
      "!(e = 'new') && (tm IS NOT NULL || dc > 0)",
      "s = b",
      "TRUE",
      "n",
      "s",
  };
  const std::string db = p_.db();
  auto schemas = mysql::LoadTableSchemas(p_.conn(), {db}, true);
  ASSERT_TRUE(schemas.ok()) << schemas.error().message();
  ASSERT_EQ(schemas->size(), 1U);
  const schema::TableSchema& table = schemas->front();

  std::vector<pipe::RowFilter> filters;
  std::vector<std::string> refused;
  for (const std::string& e : expressions) {
    auto f = pipe::RowFilter::Parse(e, table, "test");
    if (!f.ok()) {
      refused.push_back(e + ": " + f.error().message());
      filters.emplace_back();
      continue;
    }
    filters.push_back(std::move(f).value());
  }
  // "s = b" compares two collations: refused, as documented. Nothing else is.
  ASSERT_EQ(refused.size(), 1U) << ::testing::PrintToString(refused);

  // ours[expression][id]: "1", "0", "NULL" or "error: …".
  std::vector<std::map<int64_t, std::string>> ours(expressions.size());
  auto conn = testing::OpenSource(p_.source_url());
  ASSERT_NE(conn, nullptr);
  auto reader = mysql::SnapshotReader::Open(*conn, pipe::SnapshotQueryFor(table, 100000));
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  auto chunk = (*reader)->ReadChunk({}, [&](const std::vector<binlog::Value>& row) -> Status {
    const int64_t id = row[0].i;
    for (size_t k = 0; k < filters.size(); ++k) {
      if (expressions[k] == "s = b") continue;
      auto t = filters[k].Evaluate(row);
      ours[k][id] = !t.ok()                     ? "error: " + t.error().message()
                    : *t == pipe::Truth::kTrue  ? "1"
                    : *t == pipe::Truth::kFalse ? "0"
                                                : "NULL";
    }
    return Status::Ok();
  });
  ASSERT_TRUE(chunk.ok()) << chunk.error().message();
  ASSERT_EQ(chunk->rows, 400U);

  size_t compared = 0;
  for (size_t k = 0; k < expressions.size(); ++k) {
    if (expressions[k] == "s = b") continue;
    // The truth of the expression as a WHERE sees it: TRUE, FALSE or NULL.
    const auto rows = p_.SourceQuery("SELECT id, CASE WHEN (" + expressions[k] + ") THEN 1 WHEN NOT (" +
                                     expressions[k] + ") THEN 0 END FROM v ORDER BY id");
    ASSERT_EQ(rows.size(), 400U) << expressions[k];
    size_t differences = 0;
    for (const auto& r : rows) {
      const int64_t id = std::stoll(r[0].value_or("0"));
      const std::string server = r[1] ? *r[1] : "NULL";
      const std::string& mine = ours[k][id];
      if (mine != server && ++differences <= 3) {
        ADD_FAILURE() << expressions[k] << " for id " << id << ": server " << server << ", chsync " << mine
                      << " (row: "
                      << p_.SourceValue(
                             "SELECT CONCAT_WS('|', QUOTE(s), QUOTE(b), QUOTE(u), QUOTE(w), n, dc, f, d, "
                             "dt, ts, tm, e, st, y) FROM v WHERE id = " +
                             std::to_string(id))
                      << ")";
      }
      ++compared;
    }
  }
  EXPECT_EQ(compared, (expressions.size() - 1) * 400);
}

INSTANTIATE_TEST_SUITE_P(Destinations, RowFilterTest, ::testing::Values(Dest::kServer, Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& info) {
                           return testing::DestName(info.param);
                         });
INSTANTIATE_TEST_SUITE_P(Destinations, RowFilterSourceTest, ::testing::Values(Dest::kServer),
                         [](const ::testing::TestParamInfo<Dest>& info) {
                           return testing::DestName(info.param);
                         });

}  // namespace
}  // namespace chsync
