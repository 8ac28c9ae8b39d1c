// Issue 17 end to end: a table whose statement or rows fail parks while the others keep flowing;
// `chsync resync --table`, `pause` and `resume` reach a running pipe through its state directory;
// a kill -9 in the middle of an online re-copy; a request carried out before a crash is not
// carried out again; on_table_error=stop keeps the old behaviour.

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "pipe_compare.h"
#include "pipe_harness.h"
#include "test_env.h"

namespace chsync {
namespace {

using testing::BackgroundProcess;
using testing::CommandResult;
using testing::Dest;
using testing::PipeTest;
using testing::ReadFile;
using testing::WaitFor;

constexpr int kServerIdBase = 17000000;

class TableControlTest : public ::testing::TestWithParam<Dest> {
 protected:
  void SetUp() override { p_.Init("CHSYNC_TEST_MYSQL_FULL", GetParam(), "tctl", kServerIdBase); }
  void TearDown() override {
    if (run_) run_->SignalAndWait(SIGKILL, 10000);
    p_.Cleanup();
  }

  /// Tables a and b with `rows` rows each.
  void CreateTables(int rows) {
    p_.ExecAll({"CREATE TABLE a (id INT PRIMARY KEY, v INT, s VARCHAR(40))",
                "CREATE TABLE b (id INT PRIMARY KEY, v INT, s VARCHAR(40))",
                "INSERT INTO a SELECT seq, seq, 'a' FROM seq_1_to_" + std::to_string(rows),
                "INSERT INTO b SELECT seq, seq, 'b' FROM seq_1_to_" + std::to_string(rows)});
  }

  /// Starts `chsync run` (not until caught up) in the background (StartPipeInBackground).
  void StartRun(const std::vector<std::string>& extra = {}) {
    run_.reset();
    auto started = testing::StartPipeInBackground(p_, p_.RunArgs(p_.db() + ".*", false, extra),
                                                  p_.state() + "/run" + std::to_string(++runs_) + ".log");
    ASSERT_TRUE(started.has_value());
    run_.emplace(std::move(*started));
  }

  bool Converges(const std::vector<std::string>& tables, int seconds) {
    return p_.AllEqualWithin(tables, seconds);
  }

  bool LogHas(const std::string& text, int seconds) {
    return WaitFor([&] { return run_->Log().find(text) != std::string::npos; }, seconds);
  }

  CommandResult Control(const std::string& op, const std::string& table) {
    return testing::RunCommand({testing::ChsyncBinary(), op, "--state", p_.state(), "--table", table},
                               120'000);
  }

  std::string Table(const std::string& t) const { return p_.db() + "." + t; }

  PipeTest p_;
  std::optional<BackgroundProcess> run_;
  int runs_ = 0;
};

// A `fail` policy on b: b parks, a keeps flowing while writes go on; `resync --table` re-copies b
// online and both end equal to the source.
TEST_P(TableControlTest, AFailingTableParksWhileTheOtherFlowsAndResyncUnparksItOnline) {
  ASSERT_TRUE(p_.connected());
  CreateTables(200);
  StartRun({"--schema-policy", Table("b") + ":truncate=fail"});
  ASSERT_TRUE(Converges({"a", "b"}, 90)) << p_.Compare("a") << p_.Compare("b") << run_->Log();

  p_.ExecAll({"TRUNCATE TABLE b", "INSERT INTO b VALUES (1, 10, 'after truncate')",
              "UPDATE a SET v = -v WHERE id <= 50", "INSERT INTO a VALUES (1001, 1, 'new')"});
  ASSERT_TRUE(LogHas("table " + Table("b") + " PARKED", 60)) << run_->Log();
  for (int i = 0; i < 5; ++i) {
    p_.ExecAll({"INSERT INTO a VALUES (" + std::to_string(2000 + i) + ", 1, 'while parked')",
                "UPDATE b SET v = v + 1 WHERE id = 1"});
  }
  EXPECT_TRUE(Converges({"a"}, 60)) << p_.Compare("a");
  EXPECT_TRUE(run_->Running()) << run_->Log();
  EXPECT_FALSE(p_.Compare("b").empty()) << "b is parked: its ClickHouse table keeps the rows it had";
  EXPECT_EQ(p_.DestCount("b"), "200");

  CommandResult status = p_.ChsyncStatus();
  EXPECT_NE(status.out.find(Table("b") + "  parked"), std::string::npos) << status.Describe();
  EXPECT_NE(status.out.find("TRUNCATE TABLE b"), std::string::npos) << status.Describe();

  CommandResult resync = Control("resync", Table("b"));
  EXPECT_EQ(resync.exit_code, 0) << resync.Describe();
  EXPECT_NE(resync.out.find("done: "), std::string::npos) << resync.Describe();
  p_.ExecAll(
      {"INSERT INTO b VALUES (3, 3, 'after resync')", "INSERT INTO a VALUES (3000, 3, 'after resync')"});
  EXPECT_TRUE(Converges({"a", "b"}, 120)) << p_.Compare("a") << p_.Compare("b") << run_->Log();
  EXPECT_TRUE(LogHas("rebuild of " + Table("b"), 5)) << run_->Log();
  status = p_.ChsyncStatus();
  EXPECT_EQ(status.out.find(Table("b") + "  parked"), std::string::npos) << status.Describe();
  EXPECT_EQ(status.out.find("held tables"), std::string::npos) << status.Describe();
  EXPECT_EQ(run_->SignalAndWait(SIGTERM, 30000), 0) << run_->Log();
}

// Issue 33, case 9: a session in STATEMENT format changes rows of b. The binlog holds the
// statement's text, not its rows; before, the QUERY event was skipped silently and ClickHouse kept
// the old values. Now b parks with the statement and its position, a flows on, resync repairs b.
TEST_P(TableControlTest, AStatementFormatSessionParksTheTableItChanges) {
  ASSERT_TRUE(p_.connected());
  CreateTables(50);
  StartRun();
  ASSERT_TRUE(Converges({"a", "b"}, 90)) << p_.Compare("a") << p_.Compare("b") << run_->Log();

  p_.ExecAll({"SET SESSION binlog_format = 'STATEMENT'", "UPDATE b SET v = -1 WHERE id <= 10",
              "SET SESSION binlog_format = 'ROW'", "UPDATE a SET v = -1 WHERE id <= 10"});
  ASSERT_TRUE(LogHas("table " + Table("b") + " PARKED", 60)) << run_->Log();
  EXPECT_TRUE(Converges({"a"}, 60)) << p_.Compare("a");
  EXPECT_TRUE(LogHas("STATEMENT format", 5)) << run_->Log();
  CommandResult status = p_.ChsyncStatus();
  EXPECT_NE(status.out.find(Table("b") + "  parked"), std::string::npos) << status.Describe();
  EXPECT_NE(status.out.find("UPDATE b SET v = -1"), std::string::npos) << status.Describe();

  CommandResult resync = Control("resync", Table("b"));
  EXPECT_EQ(resync.exit_code, 0) << resync.Describe();
  EXPECT_TRUE(Converges({"a", "b"}, 120)) << p_.Compare("a") << p_.Compare("b") << run_->Log();
  EXPECT_EQ(run_->SignalAndWait(SIGTERM, 30000), 0) << run_->Log();
}

// Issue 33, case 9: a session with binlog_row_image=MINIMAL (or NOBLOB) updates rows of b: its row
// images leave columns out. b parks — a partial row is never applied as if it were whole — while a
// flows on (before, the after-image's error stopped the whole pipe), and resync repairs b.
TEST_P(TableControlTest, APartialRowImageSessionParksTheTableItChanges) {
  ASSERT_TRUE(p_.connected());
  CreateTables(50);
  StartRun();
  ASSERT_TRUE(Converges({"a", "b"}, 90)) << p_.Compare("a") << p_.Compare("b") << run_->Log();

  p_.ExecAll({"SET SESSION binlog_row_image = 'MINIMAL'", "UPDATE b SET v = -1 WHERE id <= 10",
              "SET SESSION binlog_row_image = 'FULL'", "UPDATE a SET v = -1 WHERE id <= 10"});
  ASSERT_TRUE(LogHas("table " + Table("b") + " PARKED", 60)) << run_->Log();
  EXPECT_TRUE(Converges({"a"}, 60)) << p_.Compare("a");
  EXPECT_TRUE(run_->Running()) << run_->Log();
  CommandResult status = p_.ChsyncStatus();
  EXPECT_NE(status.out.find(Table("b") + "  parked"), std::string::npos) << status.Describe();
  EXPECT_NE(status.out.find("binlog_row_image"), std::string::npos) << status.Describe();

  CommandResult resync = Control("resync", Table("b"));
  EXPECT_EQ(resync.exit_code, 0) << resync.Describe();
  EXPECT_TRUE(Converges({"a", "b"}, 120)) << p_.Compare("a") << p_.Compare("b") << run_->Log();
  EXPECT_EQ(run_->SignalAndWait(SIGTERM, 30000), 0) << run_->Log();
}

// The stop policy keeps the behaviour from before parking: the pipe stops with the error.
TEST_P(TableControlTest, StopPolicyStopsThePipe) {
  ASSERT_TRUE(p_.connected());
  CreateTables(20);
  CommandResult r = p_.Run({"--schema-policy", Table("b") + ":truncate=fail", "--schema-policy",
                            Table("b") + ":on_table_error=stop"});
  ASSERT_RUN_OK(r, "initial");
  p_.Exec("TRUNCATE TABLE b");
  r = p_.Run({"--schema-policy", Table("b") + ":truncate=fail", "--schema-policy",
              Table("b") + ":on_table_error=stop"});
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("chsync resync --table " + Table("b")), std::string::npos) << r.Describe();
  EXPECT_EQ(r.err.find("PARKED"), std::string::npos) << r.Describe();
}

// Pause stops applying a's changes (its ClickHouse table keeps its rows); resume copies it again.
TEST_P(TableControlTest, PauseAndResumeOneTable) {
  ASSERT_TRUE(p_.connected());
  CreateTables(100);
  StartRun();
  ASSERT_TRUE(Converges({"a", "b"}, 90)) << p_.Compare("a") << p_.Compare("b") << run_->Log();
  CommandResult paused = Control("pause", Table("a"));
  ASSERT_EQ(paused.exit_code, 0) << paused.Describe();
  EXPECT_NE(paused.out.find("done: " + Table("a") + " paused"), std::string::npos) << paused.Describe();
  p_.ExecAll({"DELETE FROM a WHERE id <= 10", "INSERT INTO b VALUES (500, 5, 'b goes on')",
              "ALTER TABLE a ADD COLUMN extra INT DEFAULT 7"});
  EXPECT_TRUE(Converges({"b"}, 60)) << p_.Compare("b");
  EXPECT_EQ(p_.DestCount("a"), "100") << "a is paused";
  CommandResult again = Control("pause", Table("a"));
  EXPECT_NE(again.out.find("paused already"), std::string::npos) << again.Describe();
  CommandResult status = p_.ChsyncStatus();
  EXPECT_NE(status.out.find(Table("a") + "  paused"), std::string::npos) << status.Describe();

  CommandResult resumed = Control("resume", Table("a"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.Describe();
  p_.Exec("UPDATE a SET extra = 8 WHERE id = 11");
  EXPECT_TRUE(Converges({"a", "b"}, 120)) << p_.Compare("a") << p_.Compare("b") << run_->Log();
  CommandResult twice = Control("resume", Table("a"));
  EXPECT_EQ(twice.exit_code, 1) << twice.Describe();
  EXPECT_NE(twice.out.find("refused: "), std::string::npos) << twice.Describe();
  CommandResult unknown = Control("pause", p_.db() + ".nope");
  EXPECT_EQ(unknown.exit_code, 1) << unknown.Describe();
  EXPECT_NE(unknown.out.find("not a table this pipe replicates"), std::string::npos) << unknown.Describe();
  EXPECT_EQ(run_->SignalAndWait(SIGTERM, 30000), 0) << run_->Log();
}

// kill -9 while the online re-copy of b runs: the next run goes on copying from where the
// checkpoint left it, and both tables converge.
TEST_P(TableControlTest, KilledDuringAnOnlineResyncConverges) {
  ASSERT_TRUE(p_.connected());
  CreateTables(400000);
  const std::vector<std::string> flags = {"--snapshot-chunk-rows", "2000"};
  StartRun(flags);
  ASSERT_TRUE(Converges({"a", "b"}, 300)) << p_.Compare("a") << p_.Compare("b") << run_->Log();
  // "done" comes once the checkpoint that records the copy is saved; the copy itself takes
  // seconds: the kill right after it lands in the middle of the copy.
  CommandResult resync = Control("resync", Table("b"));
  ASSERT_EQ(resync.exit_code, 0) << resync.Describe();
  ASSERT_EQ(run_->SignalAndWait(SIGKILL, 10000), -1);
  StartRun(flags);
  for (int i = 0; i < 40; ++i) {
    p_.ExecAll({"UPDATE b SET v = v + 1, s = 'during the copy' WHERE id % 997 = " + std::to_string(i),
                "DELETE FROM b WHERE id = " + std::to_string(100 + i * 5000),
                "INSERT INTO a VALUES (" + std::to_string(500000 + i) + ", 1, 'during')"});
  }
  ASSERT_TRUE(Converges({"a", "b"}, 300)) << p_.Compare("a") << p_.Compare("b") << run_->Log();
  // The checkpoint it restarted from recorded the copy (no request was made again): the restarted
  // process carries it through to the swap, or finds it swapped in already.
  const std::string log = run_->Log();
  EXPECT_TRUE(log.find("rebuild finished") != std::string::npos ||
              log.find("already swapped in") != std::string::npos)
      << "the restarted pipe did not take up the copy recorded in its checkpoint:\n"
      << log;
  EXPECT_EQ(p_.DestTables(), (std::set<std::string>{"a", "b"}))
      << "the rebuild's table is gone once swapped in";
  EXPECT_EQ(run_->SignalAndWait(SIGTERM, 30000), 0) << run_->Log();
}

// A request whose id the checkpoint already records (a crash came between its checkpoint and
// the removal of its file) is completed, not carried out again.
TEST_P(TableControlTest, ARequestCarriedOutBeforeACrashIsNotCarriedOutAgain) {
  ASSERT_TRUE(p_.connected());
  CreateTables(10);
  ASSERT_RUN_OK(p_.Run(), "initial");
  CommandResult queued = Control("pause", Table("a"));
  ASSERT_EQ(queued.exit_code, 0) << queued.Describe();
  EXPECT_NE(queued.out.find("next `chsync run`"), std::string::npos) << queued.Describe();
  std::string id;
  for (const auto& entry : std::filesystem::directory_iterator(p_.state() + "/requests")) {
    std::string name = entry.path().filename().string();
    if (name.ends_with(".req")) id = name.substr(0, name.size() - 4);
  }
  ASSERT_FALSE(id.empty());
  nlohmann::ordered_json checkpoint =
      nlohmann::ordered_json::parse(ReadFile(p_.state() + "/checkpoint.json"));
  checkpoint["requests_done"] = nlohmann::ordered_json::array({id});
  std::ofstream(p_.state() + "/checkpoint.json", std::ios::trunc) << checkpoint.dump(2);

  p_.Exec("INSERT INTO a VALUES (11, 11, 'streams')");
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "with the request already done");
  EXPECT_EQUAL_TO_SOURCE(p_, "a", "the pause was not carried out a second time");
  EXPECT_FALSE(std::filesystem::exists(p_.state() + "/requests/" + id + ".req"));
  EXPECT_NE(ReadFile(p_.state() + "/requests/" + id + ".done").find("before chsync restarted"),
            std::string::npos);

  // The same request queued anew is carried out.
  ASSERT_EQ(Control("pause", Table("a")).exit_code, 0);
  r = p_.Run();
  ASSERT_RUN_OK(r, "with a new pause");
  EXPECT_NE(p_.ChsyncStatus().out.find(Table("a") + "  paused"), std::string::npos);
}

// Issue 33, case 6 (seen: 5 source rows, 3 in ClickHouse, exit 0): a table without a primary key or
// NOT NULL unique key was sorted by every column, so identical rows collapsed. It is refused by
// default: parked at once, with what to do, while the other tables stream; once it has a key,
// `resume` copies it whole. Before, k was replicated with 2 of its 5 rows.
TEST_P(TableControlTest, ATableWithoutAKeyIsParkedUntilItHasOne) {
  ASSERT_TRUE(p_.connected());
  CreateTables(100);
  p_.ExecAll({"CREATE TABLE k (v INT, s VARCHAR(10))",
              "INSERT INTO k VALUES (1, 'x'), (1, 'x'), (1, 'x'), (2, 'y'), (2, 'y')"});
  StartRun();
  ASSERT_TRUE(Converges({"a", "b"}, 90)) << p_.Compare("a") << p_.Compare("b") << run_->Log();
  ASSERT_TRUE(LogHas("table " + Table("k") + " PARKED", 30)) << run_->Log();
  EXPECT_NE(run_->Log().find(Table("k") + " has no primary key or NOT NULL unique key"), std::string::npos)
      << run_->Log();
  EXPECT_EQ(p_.DestCount("k"), "0") << "a refused table gets none of its rows, not its distinct ones";
  // A keyless table created while the pipe runs is parked too, at its CREATE.
  p_.ExecAll({"CREATE TABLE k2 (v INT)", "INSERT INTO k2 VALUES (7), (7)", "INSERT INTO k VALUES (3, 'z')",
              "INSERT INTO a VALUES (500, 5, 'a goes on')"});
  EXPECT_TRUE(Converges({"a"}, 60)) << p_.Compare("a");
  EXPECT_TRUE(LogHas("table " + Table("k2") + " PARKED", 30)) << run_->Log();
  // One renamed into the selection from a database the pipe does not replicate: parked, not copied.
  const std::string outside = p_.db() + "_out";
  p_.ExecAll({"CREATE DATABASE IF NOT EXISTS " + outside, "CREATE TABLE " + outside + ".k3 (v INT)",
              "INSERT INTO " + outside + ".k3 VALUES (1), (1)",
              "RENAME TABLE " + outside + ".k3 TO " + Table("k3"), "DROP DATABASE " + outside});
  EXPECT_TRUE(LogHas("table " + Table("k3") + " PARKED", 30)) << run_->Log();
  EXPECT_EQ(run_->Log().find("rebuild of " + Table("k3")), std::string::npos) << run_->Log();
  CommandResult status = p_.ChsyncStatus();
  EXPECT_NE(status.out.find(Table("k") + "  parked"), std::string::npos) << status.Describe();
  EXPECT_NE(status.out.find(Table("k2") + "  parked"), std::string::npos) << status.Describe();
  CommandResult refused = Control("resume", Table("k"));
  EXPECT_EQ(refused.exit_code, 1) << refused.Describe();
  EXPECT_NE(
      refused.out.find("refused: " + Table("k") + " stays parked: " + Table("k") + " has no primary key"),
      std::string::npos)
      << refused.Describe();

  // What the message says to do: an invisible key, then resume.
  p_.Exec("ALTER TABLE k ADD COLUMN _id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY INVISIBLE");
  CommandResult resumed = Control("resume", Table("k"));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.Describe();
  p_.ExecAll({"DELETE FROM k WHERE v = 1 LIMIT 1", "INSERT INTO k (v, s) VALUES (2, 'y')"});
  EXPECT_TRUE(Converges({"a", "b", "k"}, 120)) << p_.Compare("k") << run_->Log();
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.DestTable("k") +
                         " FINAL WHERE _chsync_is_deleted = 0 AND "
                         "v = 2"),
            "3")
      << "identical source rows are rows of their own in ClickHouse";
  EXPECT_EQ(run_->SignalAndWait(SIGTERM, 30000), 0) << run_->Log();

  // A restart keeps k2 parked, says so, and does not park it anew.
  StartRun();
  EXPECT_TRUE(LogHas(Table("k2") + " is parked", 60)) << run_->Log();
  EXPECT_EQ(run_->Log().find("PARKED"), std::string::npos) << run_->Log();
  EXPECT_EQ(run_->SignalAndWait(SIGTERM, 30000), 0) << run_->Log();
}

// keyless=distinct replicates such a table as the set of its distinct rows, as before (docs/types.md).
TEST_P(TableControlTest, AKeylessTableUnderKeylessDistinctKeepsItsDistinctRows) {
  ASSERT_TRUE(p_.connected());
  CreateTables(10);
  p_.ExecAll({"CREATE TABLE k (v INT, s VARCHAR(10))",
              "INSERT INTO k VALUES (1, 'x'), (1, 'x'), (1, 'x'), (2, 'y'), (2, 'y')"});
  StartRun({"--schema-policy", Table("k") + ":keyless=distinct"});
  ASSERT_TRUE(Converges({"a", "b"}, 90)) << run_->Log();
  EXPECT_TRUE(WaitFor([&] { return p_.DestCount("k") == "2"; }, 60)) << p_.DestCount("k") << run_->Log();
  EXPECT_EQ(run_->Log().find("PARKED"), std::string::npos) << run_->Log();
  EXPECT_EQ(run_->SignalAndWait(SIGTERM, 30000), 0) << run_->Log();
  // An earlier pipe's keyless table, restarted under the default, is parked (identical rows were
  // collapsed in it) with what to do.
  StartRun();
  EXPECT_TRUE(LogHas("table " + Table("k") + " PARKED", 60)) << run_->Log();
  EXPECT_EQ(run_->SignalAndWait(SIGTERM, 30000), 0) << run_->Log();
}

INSTANTIATE_TEST_SUITE_P(Destinations, TableControlTest, ::testing::Values(Dest::kServer, Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& i) { return DestName(i.param); });

// ClickHouse refuses b's INSERTs (a column of its table was dropped there by hand): b parks from
// the flusher while a flows; `resume` copies b again into a table of the right shape.
TEST(TableControlServerTest, AnInsertClickHouseRefusesParksTheTable) {
  PipeTest p;
  p.Init("CHSYNC_TEST_MYSQL_FULL", Dest::kServer, "tctl_ins", kServerIdBase + 500000);
  ASSERT_TRUE(p.connected());
  p.ExecAll({"CREATE TABLE a (id INT PRIMARY KEY, v INT)",
             "CREATE TABLE b (id INT PRIMARY KEY, v INT, s TEXT)",
             "INSERT INTO a SELECT seq, seq FROM seq_1_to_50",
             "INSERT INTO b SELECT seq, seq, 'x' FROM seq_1_to_50"});
  ASSERT_RUN_OK(p.Run(), "initial");
  std::string error;
  ASSERT_TRUE(
      testing::QueryDestination(p.dest_url(), "ALTER TABLE " + p.DestTable("b") + " DROP COLUMN s", &error))
      << error;
  auto run = BackgroundProcess::Start(p.RunArgs(p.db() + ".*", false, {}), p.state() + "/run.log");
  ASSERT_TRUE(run.has_value());
  p.ExecAll({"INSERT INTO b VALUES (51, 51, 'refused')", "INSERT INTO a VALUES (51, 51)"});
  ASSERT_TRUE(WaitFor([&] { return run->Log().find("PARKED") != std::string::npos; }, 60)) << run->Log();
  EXPECT_NE(run->Log().find("ClickHouse refused its INSERT"), std::string::npos) << run->Log();
  for (int i = 52; i < 60; ++i) p.Exec("INSERT INTO a VALUES (" + std::to_string(i) + ", 0)");
  EXPECT_TRUE(WaitFor([&] { return p.Compare("a").empty(); }, 60)) << p.Compare("a");
  EXPECT_TRUE(run->Running()) << run->Log();
  EXPECT_NE(p.ChsyncStatus().out.find(p.db() + ".b  parked"), std::string::npos);

  CommandResult resumed = testing::RunCommand(
      {testing::ChsyncBinary(), "resume", "--state", p.state(), "--table", p.db() + ".b"}, 120'000);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.Describe();
  EXPECT_TRUE(WaitFor([&] { return p.Compare("b").empty() && p.Compare("a").empty(); }, 120))
      << p.Compare("b") << run->Log();
  EXPECT_EQ(run->SignalAndWait(SIGTERM, 30000), 0) << run->Log();
  p.Cleanup();
}

/// Starts `chsync run` over `tables` in `run`, with the environment variables `env` set for it (a
/// fail or a delay point), waits until it streams, and asks it to pause DB.a (`--wait-s wait_s`)
/// while `meanwhile` runs; returns the pause's answer.
CommandResult PauseWhile(PipeTest& p, const std::string& tables,
                         const std::vector<std::pair<std::string, std::string>>& env,
                         const std::string& wait_s, std::optional<BackgroundProcess>& run,
                         const std::function<void()>& meanwhile) {
  for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
  auto started =
      BackgroundProcess::Start(p.RunArgs(tables, false, {"--batch-age-ms", "100"}), p.state() + "/run.log");
  for (const auto& [name, value] : env) unsetenv(name.c_str());
  if (!started.has_value()) {
    ADD_FAILURE() << "chsync run did not start";
    return {};
  }
  run.emplace(std::move(*started));
  if (!WaitFor([&] { return run->Log().find("streaming from") != std::string::npos; }, 60)) {
    ADD_FAILURE() << run->Log();
    return {};
  }
  CommandResult paused;
  std::thread pause([&] {
    paused = testing::RunCommand({testing::ChsyncBinary(), "pause", "--state", p.state(), "--table",
                                  p.db() + ".a", "--wait-s", wait_s},
                                 60'000);
  });
  meanwhile();
  pause.join();
  return paused;
}

/// Kills `run` (SIGKILL), runs the pipe over `tables` until caught up, and expects DB.a paused: a
/// pause no saved checkpoint held before the kill stayed queued, and this run carried it out.
void ExpectPausedAfterAKill(PipeTest& p, const std::string& tables, BackgroundProcess& run) {
  EXPECT_NE(run.SignalAndWait(SIGKILL, 10000), 0);
  ASSERT_RUN_OK(p.RunTables(tables), "after the kill");
  CommandResult status = p.ChsyncStatus();
  EXPECT_NE(status.out.find(p.db() + ".a  paused"), std::string::npos) << status.Describe();
}

// Issue 33, case 7: a request is "done" only once a saved checkpoint holds it. The save of the
// checkpoint that records a pause fails (CHSYNC_FAIL_AT): the pause must not be reported done (the
// pipe stops on a state directory it cannot write), it stays queued, and the next run carries it out.
TEST(TableControlServerTest, ARequestIsDoneOnlyOnceTheCheckpointHoldingItIsSaved) {
  PipeTest p;
  p.Init("CHSYNC_TEST_MYSQL_FULL", Dest::kServer, "tctl_save", kServerIdBase + 600000);
  ASSERT_TRUE(p.connected());
  p.ExecAll({"CREATE TABLE a (id INT PRIMARY KEY, v INT)", "INSERT INTO a SELECT seq, seq FROM seq_1_to_20"});
  ASSERT_RUN_OK(p.Run(), "initial");
  std::optional<BackgroundProcess> run;
  CommandResult paused =
      PauseWhile(p, p.db() + ".*", {{"CHSYNC_FAIL_AT", "checkpoint.save.request"}}, "5", run, [&] {
        // Transactions keep the stream going (and polling for requests) around the failed save.
        for (int i = 0;
             i < 8 && !WaitFor([&] { return run->Log().find("fail point") != std::string::npos; }, 1); ++i) {
          p.Exec("INSERT INTO a VALUES (" + std::to_string(200 + i) + ", 0)");
        }
        for (int i = 0; i < 4; ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(400));
          p.Exec("INSERT INTO a VALUES (" + std::to_string(300 + i) + ", 0)");
        }
      });
  ASSERT_TRUE(run.has_value());
  ASSERT_NE(run->Log().find("fail point checkpoint.save.request"), std::string::npos) << run->Log();
  EXPECT_EQ(paused.out.find("carried out before chsync restarted"), std::string::npos)
      << "reported done from a checkpoint that was never saved:\n"
      << paused.Describe() << run->Log();
  EXPECT_EQ(paused.out.find("done"), std::string::npos) << paused.Describe() << run->Log();
  EXPECT_NE(paused.err.find("stays queued"), std::string::npos) << paused.Describe() << run->Log();
  ExpectPausedAfterAKill(p, p.db() + ".*", *run);
  p.Cleanup();
}

// Issue 33, case 7: the save of the checkpoint that records a pause is slow (CHSYNC_DELAY_AT holds
// it 8 s); meanwhile the stream goes on and polls for requests. The pause is not reported done from
// the pipe's memory before a saved checkpoint holds it: a kill -9 in that window leaves it queued,
// and the next run carries it out. (Before: "done: carried out before chsync restarted", and the
// pause was lost with the kill.)
TEST(TableControlServerTest, ARequestIsNotDoneWhileItsCheckpointIsStillBeingSaved) {
  PipeTest p;
  p.Init("CHSYNC_TEST_MYSQL_FULL", Dest::kServer, "tctl_slow", kServerIdBase + 650000);
  ASSERT_TRUE(p.connected());
  p.ExecAll({"CREATE TABLE a (id INT PRIMARY KEY, v INT)", "CREATE TABLE noise (id INT PRIMARY KEY)",
             "INSERT INTO a SELECT seq, seq FROM seq_1_to_20"});
  ASSERT_RUN_OK(p.RunTables(p.db() + ".a"), "initial");
  std::optional<BackgroundProcess> run;
  CommandResult paused = PauseWhile(
      p, p.db() + ".a", {{"CHSYNC_DELAY_AT", "checkpoint.save.request"}, {"CHSYNC_DELAY_MS", "8000"}}, "4",
      run, [&] {
        // Transactions on a table the pipe does not replicate: the stream polls on, queuing nothing.
        for (int i = 0; i < 12; ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
          p.Exec("INSERT INTO noise VALUES (" + std::to_string(i) + ")");
        }
      });
  ASSERT_TRUE(run.has_value());
  ASSERT_NE(run->Log().find("delay point checkpoint.save.request"), std::string::npos) << run->Log();
  EXPECT_EQ(paused.out.find("done"), std::string::npos)
      << "reported done while the checkpoint holding it was not saved yet:\n"
      << paused.Describe() << run->Log();
  ExpectPausedAfterAKill(p, p.db() + ".a", *run);  // within the 8 s the save waits
  p.Cleanup();
}

// Issue 33, case 2: ClickHouse refuses a table's INSERT (the table detached) in a transaction that
// also writes a large table; the source goes quiet and the pipe is killed. The refused rows stay
// owed: after the restart the table is still parked (not streamed on past its missing rows), and a
// resume brings it back equal to the source.
TEST(TableControlServerTest, ARefusedTableStaysOwedAcrossAQuietSourceAndAKill) {
  PipeTest p;
  p.Init("CHSYNC_TEST_MYSQL_FULL", Dest::kServer, "tctl_owed", kServerIdBase + 700000);
  ASSERT_TRUE(p.connected());
  p.ExecAll({"CREATE TABLE big (id INT PRIMARY KEY, v INT, s VARCHAR(40))",
             "CREATE TABLE small (id INT PRIMARY KEY, v INT)", "INSERT INTO small VALUES (1, 1)"});
  ASSERT_RUN_OK(p.Run(), "initial");
  auto run = BackgroundProcess::Start(p.RunArgs(p.db() + ".*", false, {"--batch-rows", "5000"}),
                                      p.state() + "/run.log");
  ASSERT_TRUE(run.has_value());
  ASSERT_TRUE(WaitFor([&] { return run->Log().find("streaming from") != std::string::npos; }, 60))
      << run->Log();
  std::string error;
  ASSERT_TRUE(testing::QueryDestination(p.dest_url(), "DETACH TABLE " + p.DestTable("small"), &error))
      << error;
  p.ExecAll({"START TRANSACTION", "INSERT INTO small VALUES (2, 2)",
             "INSERT INTO big SELECT seq, seq, REPEAT('x', 30) FROM seq_1_to_40000", "COMMIT"});
  ASSERT_TRUE(WaitFor([&] { return run->Log().find("PARKED") != std::string::npos; }, 60)) << run->Log();
  EXPECT_TRUE(WaitFor([&] { return p.Compare("big").empty(); }, 60)) << p.Compare("big");
  std::this_thread::sleep_for(std::chrono::seconds(2));  // a quiet source: no transaction moves the stream
  EXPECT_NE(run->SignalAndWait(SIGKILL, 10000), 0);
  ASSERT_TRUE(testing::QueryDestination(p.dest_url(), "ATTACH TABLE " + p.DestTable("small"), &error))
      << error;

  p.Exec("INSERT INTO big VALUES (40001, 1, 'after')");
  ASSERT_RUN_OK(p.Run(), "after the kill");
  CommandResult status = p.ChsyncStatus();
  EXPECT_NE(status.out.find(p.db() + ".small  parked"), std::string::npos)
      << "the refused row of small is owed until small is copied again\n"
      << status.Describe();
  EXPECT_EQUAL_TO_SOURCE(p, "big", "after the kill");
  CommandResult resumed = testing::RunCommand(
      {testing::ChsyncBinary(), "resume", "--state", p.state(), "--table", p.db() + ".small"}, 120'000);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.Describe();  // queued: no pipe runs
  ASSERT_RUN_OK(p.Run(), "the resume");
  EXPECT_EQUAL_TO_SOURCE(p, "small", "after the resume");
  p.Cleanup();
}

// Issue 33, case 9: the run names each cascading foreign key of a replicated table in its log and
// `chsync status` lists them with whether chsync follows them (tests/integration/cascades_test.cpp
// walks the following itself).
TEST(TableControlServerTest, CascadingForeignKeysAreNamedInTheLogAndTheStatus) {
  PipeTest p;
  p.Init("CHSYNC_TEST_MYSQL_FULL", Dest::kServer, "tctl_fk", kServerIdBase + 800000);
  ASSERT_TRUE(p.connected());
  p.ExecAll({"CREATE TABLE department (id INT PRIMARY KEY)",
             "CREATE TABLE dept_emp (emp_no INT, dept_id INT, PRIMARY KEY (emp_no, dept_id), CONSTRAINT "
             "fk_dept FOREIGN KEY (dept_id) REFERENCES department (id) ON DELETE CASCADE)",
             "INSERT INTO department VALUES (1), (2)", "INSERT INTO dept_emp VALUES (10, 1), (11, 2)"});
  CommandResult r = p.Run();
  ASSERT_RUN_OK(r, "initial");
  const std::string key = p.db() + ".dept_emp (fk_dept) -> " + p.db() + ".department: ON DELETE CASCADE";
  EXPECT_NE(r.err.find("foreign key " + key + ": followed"), std::string::npos) << r.Describe();
  CommandResult status = p.ChsyncStatus();
  EXPECT_NE(status.out.find("cascading foreign keys ("), std::string::npos) << status.Describe();
  EXPECT_NE(status.out.find("  " + key + ": followed\n"), std::string::npos) << status.Describe();
  p.Cleanup();
}

}  // namespace
}  // namespace chsync
