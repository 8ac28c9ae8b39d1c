// table_options' delete and history modes end to end (docs/mapping.md): `deletes: ignore` keeps
// the rows a DELETE or a TRUNCATE TABLE removes at the source, while an UPDATE still replaces its
// row (one that moves the row within the sorting key too); `history: true` records every change in
// `<table>_history` through ADD/DROP/RENAME COLUMN and TRUNCATE, once each across kill -9 replays.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "pipe_compare.h"
#include "pipe_harness.h"
#include "test_env.h"

namespace chsync {
namespace {

using testing::CommandResult;
using testing::Dest;
using testing::MakeTempDir;
using testing::PipeTest;

constexpr int kServerIdBase = 21300000;

class DeleteModesTest : public ::testing::TestWithParam<Dest> {
 protected:
  void SetUp() override { p_.Init("CHSYNC_TEST_MYSQL_FULL", GetParam(), "dmode", kServerIdBase); }
  void TearDown() override { p_.Cleanup(); }

  /// Writes `yaml` (its "DB" replaced by the test database) to a config file; --config FILE.
  std::vector<std::string> Config(std::string yaml) {
    for (size_t at = yaml.find("DB."); at != std::string::npos; at = yaml.find("DB.", at)) {
      yaml.replace(at, 2, p_.db());
    }
    const std::string path = MakeTempDir("dmode-config") + "/chsync.yaml";
    std::ofstream(path) << yaml;
    return {"--config", path};
  }

  /// The live rows of ClickHouse table `table` (FINAL, not deleted) as "id:s" texts, by id.
  std::string LiveRows(const std::string& table) {
    std::string out;
    for (const auto& row : p_.DestQuery("SELECT id, s FROM " + p_.DestTable(table) +
                                        " FINAL WHERE _chsync_is_deleted = 0 ORDER BY id")) {
      if (!out.empty()) out += ' ';
      out += row.at(0).value_or("NULL") + ":" + row.at(1).value_or("NULL");
    }
    return out;
  }

  PipeTest p_;
};

TEST_P(DeleteModesTest, IgnoredDeletesKeepTheRowsAndUpdatesStillReplace) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20))",
              "CREATE TABLE u (id INT PRIMARY KEY, s VARCHAR(20))",
              "INSERT INTO t SELECT seq, CONCAT('a', seq) FROM seq_1_to_6",
              "INSERT INTO u SELECT seq, CONCAT('a', seq) FROM seq_1_to_6"});
  const std::vector<std::string> config = Config("table_options:\n  DB.t:\n    deletes: ignore\n");
  ASSERT_RUN_OK(p_.Run(config), "the snapshot");
  EXPECT_EQ(LiveRows("t"), "1:a1 2:a2 3:a3 4:a4 5:a5 6:a6");

  // Streaming: deletes, an update in place, an update of the key (the old key goes: an update, not a
  // delete), an update that changes nothing, inserts. u (soft deletes, the default) follows the source.
  for (const char* table : {"t", "u"}) {
    const std::string t = table;
    p_.ExecAll({"DELETE FROM " + t + " WHERE id <= 2", "UPDATE " + t + " SET s = 'b4' WHERE id = 4",
                "UPDATE " + t + " SET id = 50 WHERE id = 5", "UPDATE " + t + " SET s = s WHERE id = 6",
                "INSERT INTO " + t + " VALUES (7, 'a7')", "DELETE FROM " + t + " WHERE id = 7"});
  }
  CommandResult r = p_.Run(config);
  ASSERT_RUN_OK(r, "streaming deletes and updates");
  EXPECT_EQ(LiveRows("t"), "1:a1 2:a2 3:a3 4:b4 6:a6 7:a7 50:a5")
      << "deleted rows stay; the updated and the moved row replace theirs";
  EXPECT_EQUAL_TO_SOURCE(p_, "u", "a table with soft deletes beside");

  // TRUNCATE TABLE: the append-only table keeps its rows (logged), the other is emptied.
  p_.ExecAll({"TRUNCATE TABLE t", "TRUNCATE TABLE u", "INSERT INTO t VALUES (8, 'a8'), (3, 'c3')",
              "INSERT INTO u VALUES (8, 'a8')"});
  r = p_.Run(config);
  ASSERT_RUN_OK(r, "streaming a TRUNCATE");
  EXPECT_NE(r.err.find("not propagated (deletes: ignore, append-only)"), std::string::npos) << r.Describe();
  EXPECT_EQ(LiveRows("t"), "1:a1 2:a2 3:c3 4:b4 6:a6 7:a7 8:a8 50:a5");
  EXPECT_EQUAL_TO_SOURCE(p_, "u", "after its TRUNCATE");
}

// deletes: ignore through ADD, RENAME and DROP COLUMN: the rows deleted before and after each
// change stay, under the table's columns as they are then.
TEST_P(DeleteModesTest, IgnoredDeletesThroughSchemaChanges) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20))",
              "INSERT INTO t SELECT seq, CONCAT('a', seq) FROM seq_1_to_3"});
  const std::vector<std::string> config = Config("table_options:\n  DB.t:\n    deletes: ignore\n");
  ASSERT_RUN_OK(p_.Run(config), "the snapshot");
  p_.ExecAll({"ALTER TABLE t ADD COLUMN n INT NOT NULL DEFAULT 5", "INSERT INTO t VALUES (9, 'a9', 9)",
              "DELETE FROM t WHERE id = 9", "DELETE FROM t WHERE id = 1",
              "ALTER TABLE t RENAME COLUMN s TO label", "UPDATE t SET label = 'r2' WHERE id = 2",
              "DELETE FROM t WHERE id = 2", "ALTER TABLE t DROP COLUMN n",
              "INSERT INTO t VALUES (10, 'a10')"});
  ASSERT_RUN_OK(p_.Run(config), "streaming deletes around schema changes");
  // ClickHouse 18.16 has no RENAME COLUMN: the table keeps `s` (docs/schema-changes.md).
  const std::string label = p_.DestVersion() >= 2004 ? "label" : "s";
  std::string live;
  for (const auto& row : p_.DestQuery("SELECT id, " + label + " FROM " + p_.DestTable("t") +
                                      " FINAL WHERE _chsync_is_deleted = 0 ORDER BY id")) {
    live += (live.empty() ? "" : " ") + row.at(0).value_or("NULL") + ":" + row.at(1).value_or("NULL");
  }
  EXPECT_EQ(live, "1:a1 2:r2 3:a3 9:a9 10:a10") << "every deleted row stays, the update replaced its row";
  EXPECT_EQ(p_.SourceValue("SELECT COUNT(*) FROM t"), "2");
}

TEST_P(DeleteModesTest, AnUnknownDeleteModeIsRefusedAtStart) {
  ASSERT_TRUE(p_.connected());
  p_.Exec("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20))");
  CommandResult r = p_.Run(Config("table_options:\n  DB.t:\n    deletes: hard\n"));
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  EXPECT_NE(r.err.find("deletes' must be soft"), std::string::npos) << r.Describe();
  EXPECT_TRUE(p_.DestTables().empty());
}

// A child with `deletes: ignore` keeps the rows an ON DELETE CASCADE from its parent deletes at the
// source; ON DELETE SET NULL is an update and is applied. The parent (soft) follows the source.
TEST_P(DeleteModesTest, AnAppendOnlyChildKeepsTheRowsACascadeDeletes) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE p (id INT PRIMARY KEY)",
              "CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20), pid INT, "
              "FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE)",
              "CREATE TABLE n (id INT PRIMARY KEY, s VARCHAR(20), pid INT, "
              "FOREIGN KEY (pid) REFERENCES p (id) ON DELETE SET NULL)",
              "INSERT INTO p VALUES (1), (2)", "INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 2)",
              "INSERT INTO n VALUES (1, 'a', 1), (2, 'b', 2)"});
  const std::vector<std::string> config = Config("table_options:\n  DB.t:\n    deletes: ignore\n");
  ASSERT_RUN_OK(p_.Run(config), "the snapshot");
  p_.Exec("DELETE FROM p WHERE id = 1");
  ASSERT_RUN_OK(p_.Run(config), "streaming a cascading delete");
  EXPECT_EQ(p_.SourceValue("SELECT count(*) FROM t"), "1");
  EXPECT_EQ(LiveRows("t"), "1:a 2:b") << "the cascade's delete is not applied to an append-only child";
  EXPECT_EQUAL_TO_SOURCE(p_, "p", "the parent");
  EXPECT_EQUAL_TO_SOURCE(p_, "n", "a SET NULL child");
}

// An append-only table's history still records its deletes.
TEST_P(DeleteModesTest, AnAppendOnlyTablesHistoryRecordsItsDeletes) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20))", "INSERT INTO t VALUES (1, 'a')"});
  const std::vector<std::string> config =
      Config("table_options:\n  DB.t:\n    deletes: ignore\n    history: true\n");
  ASSERT_RUN_OK(p_.Run(config), "the snapshot");
  p_.ExecAll({"INSERT INTO t VALUES (2, 'b')", "DELETE FROM t WHERE id <= 2"});
  ASSERT_RUN_OK(p_.Run(config), "streaming");
  EXPECT_EQ(LiveRows("t"), "1:a 2:b");
  EXPECT_EQ(
      p_.DestValue("SELECT arrayStringConcat(groupArray(concat(_chsync_change, ' ', toString(id))), ',') "
                   "FROM (SELECT * FROM " +
                   p_.DestTable("t_history") + " FINAL ORDER BY _chsync_version)"),
      "insert 2,delete 1,delete 2");
}

/// The history rows of `t_history` (FINAL unless `final` is false) as "change id label x" texts, in
/// the order of their versions (an update's after-image sorts before its before-image: one version).
std::vector<std::string> HistoryRows(PipeTest& p, const std::string& label, bool with_x) {
  std::vector<std::string> out;
  for (const auto& row :
       p.DestQuery("SELECT _chsync_change, id, " + label + (with_x ? ", x" : ", 0") + " FROM " +
                   p.DestTable("t_history") + " FINAL ORDER BY _chsync_version, _chsync_change")) {
    std::string line;
    for (const auto& cell : row) line += (line.empty() ? "" : " ") + cell.value_or("NULL");
    out.push_back(line);
  }
  return out;
}

TEST_P(DeleteModesTest, HistoryRecordsEveryChangeThroughSchemaChanges) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20), n INT)",
              "INSERT INTO t VALUES (1, 'a', 10), (2, 'b', 20)"});
  const std::vector<std::string> config = Config("table_options:\n  DB.t:\n    history: true\n");
  ASSERT_RUN_OK(p_.Run(config), "the snapshot");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after the snapshot");
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.DestTable("t_history")), "0")
      << "the snapshot's rows are not changes";

  p_.ExecAll({"INSERT INTO t VALUES (3, 'c', 30)", "UPDATE t SET s = 'b2' WHERE id = 2",
              "DELETE FROM t WHERE id = 1", "UPDATE t SET id = 4 WHERE id = 3",
              "ALTER TABLE t ADD COLUMN x INT NOT NULL DEFAULT 7", "UPDATE t SET x = 8 WHERE id = 2",
              "ALTER TABLE t DROP COLUMN n", "INSERT INTO t (id, s) VALUES (5, 'e')",
              "ALTER TABLE t RENAME COLUMN s TO label", "UPDATE t SET label = 'e2' WHERE id = 5",
              "TRUNCATE TABLE t", "INSERT INTO t (id, label) VALUES (6, 'f')"});
  ASSERT_RUN_OK(p_.Run(config), "streaming changes and schema changes");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after streaming");

  // ClickHouse 18.16 has no RENAME COLUMN: the main table keeps `s` (docs/schema-changes.md), and
  // so does the history table.
  const bool renames = p_.DestVersion() >= 2004;
  const std::string label = renames ? "label" : "s";
  testing::DestColumnMap columns = p_.DestColumns("t_history");
  for (const char* c : {"id", "n", "x", "_chsync_change", "_chsync_version", "_chsync_binlog", "_chsync_gtid",
                        "_chsync_commit_time"}) {
    EXPECT_TRUE(columns.contains(c)) << "history column " << c;
  }
  EXPECT_TRUE(columns.contains(label));
  if (renames) EXPECT_FALSE(columns.contains("s")) << "the rename follows";
  EXPECT_EQ(HistoryRows(p_, label, true),
            (std::vector<std::string>{"insert 3 c 7", "update_after 2 b2 7", "update_before 2 b 7",
                                      "delete 1 a 7", "update_after 4 c 7", "update_before 3 c 7",
                                      "update_after 2 b2 8", "update_before 2 b2 7", "insert 5 e 7",
                                      "update_after 5 e2 7", "update_before 5 e 7", "insert 6 f 7"}))
      << "x reads its DEFAULT in rows written before it was added";
  // The dropped column keeps its values; rows after the drop read NULL.
  EXPECT_EQ(
      p_.DestValue("SELECT arrayStringConcat(groupArray(ifNull(toString(n), 'NULL')), ',') FROM (SELECT n "
                   "FROM " +
                   p_.DestTable("t_history") + " FINAL ORDER BY _chsync_version, _chsync_change)"),
      "30,20,20,10,30,30,20,20,NULL,NULL,NULL,NULL");
  EXPECT_EQ(p_.DestValue("SELECT countIf(_chsync_binlog LIKE '%:%' AND _chsync_gtid != '' AND "
                         "toYear(_chsync_commit_time) >= 2024) FROM " +
                         p_.DestTable("t_history")),
            "12")
      << "every row names its binlog coordinate, GTID and commit time";
  // The TRUNCATE emptied the main table only.
  EXPECT_EQ(p_.DestCount("t"), "1");
}

// MODIFY COLUMN: the history table's column takes the new type with the table's, and keeps the
// values written under the old one.
TEST_P(DeleteModesTest, HistoryColumnsFollowATypeChange) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, n INT NOT NULL)", "INSERT INTO t VALUES (1, 1)"});
  const std::vector<std::string> config = Config("table_options:\n  DB.t:\n    history: true\n");
  ASSERT_RUN_OK(p_.Run(config), "the snapshot");
  p_.ExecAll({"INSERT INTO t VALUES (2, 2)", "ALTER TABLE t MODIFY n BIGINT NOT NULL",
              "INSERT INTO t VALUES (3, 5000000000)"});
  ASSERT_RUN_OK(p_.Run(config), "streaming a type change");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after the type change");
  EXPECT_EQ(p_.DestColumns("t_history")["n"].first, p_.DestColumns("t")["n"].first);
  EXPECT_EQ(p_.DestColumns("t_history")["n"].first, "Int64");
  EXPECT_EQ(p_.DestValue("SELECT arrayStringConcat(groupArray(toString(n)), ',') FROM (SELECT n FROM " +
                         p_.DestTable("t_history") + " FINAL ORDER BY _chsync_version)"),
            "2,5000000000");
}

// kill -9 after a RENAME COLUMN reached the ClickHouse table and before its history table
// (CHSYNC_CRASH_AT=alter): the statement replayed renames the history table's column too.
// ClickHouse before 20.4 renames no column (18.16 re-creates the table): the embedded store only.
class DeleteModesRenameTest : public DeleteModesTest {};

TEST_P(DeleteModesRenameTest, AKillBetweenARenameAndItsHistoryConverges) {
  ASSERT_TRUE(p_.connected());
  ASSERT_GE(p_.DestVersion(), 2004) << "a ClickHouse that renames columns (20.4 and later)";
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20))", "INSERT INTO t VALUES (1, 'a')"});
  const std::vector<std::string> config = Config("table_options:\n  DB.t:\n    history: true\n");
  ASSERT_RUN_OK(p_.Run(config), "the snapshot");
  p_.ExecAll({"INSERT INTO t VALUES (2, 'b')", "ALTER TABLE t RENAME COLUMN s TO label",
              "INSERT INTO t VALUES (3, 'c')"});
  setenv("CHSYNC_CRASH_AT", "alter", 1);
  CommandResult r = p_.Run(config);
  unsetenv("CHSYNC_CRASH_AT");
  ASSERT_EQ(r.exit_code, 137) << r.Describe();
  ASSERT_NE(r.err.find("crash point alter"), std::string::npos) << r.Describe();
  ASSERT_RUN_OK(p_.Run(config), "after the kill");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after the kill");
  testing::DestColumnMap columns = p_.DestColumns("t_history");
  EXPECT_TRUE(columns.contains("label"));
  EXPECT_FALSE(columns.contains("s"));
  EXPECT_EQ(p_.DestValue("SELECT arrayStringConcat(groupArray(concat(toString(id), ':', label)), ',') FROM "
                         "(SELECT id, label FROM " +
                         p_.DestTable("t_history") + " FINAL ORDER BY _chsync_version)"),
            "2:b,3:c");
}

/// kill -9 (CHSYNC_CRASH_AT=checkpoint: the process ends as SIGKILL would, after the rows before a
/// checkpoint reached ClickHouse and before the checkpoint is saved): the restarted pipe replays
/// those rows, and no change appears twice in the history table — with FINAL, and without it once
/// ClickHouse merged the parts (OPTIMIZE … FINAL).
TEST_P(DeleteModesTest, HistoryRowsAreReplayStableAcrossKill9) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20))", "INSERT INTO t VALUES (1, 'a')"});
  const std::vector<std::string> config = Config("table_options:\n  DB.t:\n    history: true\n");
  ASSERT_RUN_OK(p_.Run(config), "the snapshot");
  // 30 changes in 10 transactions, with a schema change (which checkpoints before it) in between.
  int changes = 0;
  for (int i = 0; i < 10; ++i) {
    const std::string id = std::to_string(100 + i);
    p_.ExecAll({"BEGIN", "INSERT INTO t (id, s) VALUES (" + id + ", 'x')",
                "UPDATE t SET s = 'y' WHERE id = " + id, "DELETE FROM t WHERE id = " + id, "COMMIT"});
    changes += 4;  // insert, update before and after, delete
    if (i == 4) p_.Exec("ALTER TABLE t ADD COLUMN c INT");
  }
  int crashes = 0;
  for (int arrival = 1; arrival <= 8; ++arrival) {
    setenv("CHSYNC_CRASH_AT", ("checkpoint#" + std::to_string(arrival)).c_str(), 1);
    CommandResult r = p_.Run(config);
    unsetenv("CHSYNC_CRASH_AT");
    if (r.exit_code == 0) break;
    ASSERT_EQ(r.exit_code, 137) << r.Describe();
    ASSERT_NE(r.err.find("crash point checkpoint"), std::string::npos) << r.Describe();
    ++crashes;
  }
  EXPECT_GE(crashes, 1) << "the pipe must have been killed at least once";
  ASSERT_RUN_OK(p_.Run(config), "after the kills");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after the kills");
  const std::string history = p_.DestTable("t_history");
  const std::string raw = p_.DestValue("SELECT count() FROM " + history);
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + history + " FINAL"), std::to_string(changes))
      << raw << " raw";
  EXPECT_EQ(p_.DestValue("SELECT count() FROM (SELECT DISTINCT id, _chsync_change, _chsync_version FROM " +
                         history + ")"),
            std::to_string(changes));
  p_.DestQuery("OPTIMIZE TABLE " + history + " FINAL");
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + history), std::to_string(changes))
      << "once merged, no change is there twice (" << raw << " rows before)";
}

/// chsync following the source in the background while a writer changes the table, killed with
/// SIGKILL at random moments, four times; then caught up: each change is in the history table once.
TEST_P(DeleteModesTest, HistoryRowsAreReplayStableAcrossKill9UnderAWriter) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20))", "INSERT INTO t VALUES (1, 'a')"});
  const std::vector<std::string> config = Config("table_options:\n  DB.t:\n    history: true\n");
  ASSERT_RUN_OK(p_.Run(config), "the snapshot");
  const std::vector<std::string> argv = p_.RunArgs(p_.db() + ".*", /*until_caught_up=*/false, config);
  const std::string log = MakeTempDir("dmode-kill") + "/chsync.log";
  std::mt19937 rng(std::random_device{}());
  int changes = 0;
  int next = 1000;
  for (int round = 0; round < 4; ++round) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
      }
      std::vector<char*> args;
      for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    for (int i = 0; i < 6; ++i) {
      const std::string id = std::to_string(next++);
      p_.ExecAll({"BEGIN", "INSERT INTO t VALUES (" + id + ", 'x')", "UPDATE t SET s = 'y' WHERE id = " + id,
                  "DELETE FROM t WHERE id = " + id, "COMMIT"});
      changes += 4;
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 1500)(rng)));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "chsync ended by itself before the kill; log:\n"
        << testing::Tail(testing::ReadFile(log));
  }
  ASSERT_RUN_OK(p_.Run(config), "after the kills");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after the kills");
  const std::string history = p_.DestTable("t_history");
  const std::string raw = p_.DestValue("SELECT count() FROM " + history);
  std::printf("history rows before merging: %s for %d changes\n", raw.c_str(), changes);
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + history + " FINAL"), std::to_string(changes))
      << raw << " raw";
  p_.DestQuery("OPTIMIZE TABLE " + history + " FINAL");
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + history), std::to_string(changes)) << raw << " rows before";
}

INSTANTIATE_TEST_SUITE_P(Destinations, DeleteModesTest, ::testing::Values(Dest::kServer, Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& info) {
                           return testing::DestName(info.param);
                         });
INSTANTIATE_TEST_SUITE_P(Destinations, DeleteModesRenameTest, ::testing::Values(Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& info) {
                           return testing::DestName(info.param);
                         });

}  // namespace
}  // namespace chsync
