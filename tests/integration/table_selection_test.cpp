// Issue 35, part 1: tables added to and removed from a running pipe's selection — by `chsync tables
// add|remove`, by SIGHUP (the configuration file's `tables:` read again) and at a restart under a
// changed configuration. An added table is copied online while a writer goes on on the others,
// which are never copied again; a kill -9 in the middle of that copy converges; a removed table
// stops being applied and keeps its ClickHouse table.

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

constexpr int kServerIdBase = 35000000;

class TableSelectionTest : public ::testing::TestWithParam<Dest> {
 protected:
  void SetUp() override { p_.Init("CHSYNC_TEST_MYSQL_FULL", GetParam(), "tsel", kServerIdBase); }
  void TearDown() override {
    if (run_) run_->SignalAndWait(SIGKILL, 10000);
    p_.Cleanup();
  }

  /// Tables a and b with `rows` rows each, and c with `c_rows`.
  void CreateTables(int rows, int c_rows) {
    p_.ExecAll({"CREATE TABLE a (id INT PRIMARY KEY, v INT, s VARCHAR(40))",
                "CREATE TABLE b (id INT PRIMARY KEY, v INT, s VARCHAR(40))",
                "CREATE TABLE c (id INT PRIMARY KEY, v INT, s VARCHAR(40))",
                "INSERT INTO a SELECT seq, seq, 'a' FROM seq_1_to_" + std::to_string(rows),
                "INSERT INTO b SELECT seq, seq, 'b' FROM seq_1_to_" + std::to_string(rows),
                "INSERT INTO c SELECT seq, seq, 'c' FROM seq_1_to_" + std::to_string(c_rows)});
  }

  /// `chsync run` arguments: --tables `tables`, or (empty) none, the configuration file deciding.
  std::vector<std::string> Args(const std::string& tables, bool until_caught_up,
                                std::vector<std::string> extra) const {
    std::vector<std::string> argv = p_.RunArgs("-", until_caught_up, {});
    for (size_t i = 0; i + 1 < argv.size(); ++i) {
      if (argv[i] == "--tables") {
        if (tables.empty()) {
          argv.erase(argv.begin() + static_cast<std::ptrdiff_t>(i),
                     argv.begin() + static_cast<std::ptrdiff_t>(i) + 2);
        } else {
          argv[i + 1] = tables;
        }
        break;
      }
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }

  /// Starts `chsync run` in the background (StartPipeInBackground).
  void StartRun(const std::string& tables, const std::vector<std::string>& extra = {}) {
    run_.reset();
    auto started = testing::StartPipeInBackground(p_, Args(tables, false, extra),
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

  CommandResult Tables(const std::string& op, const std::string& pattern) {
    return testing::RunCommand({testing::ChsyncBinary(), "tables", op, "--state", p_.state(), pattern},
                               120'000);
  }

  /// The checkpoint's snapshot entry of `table`: {state, rows_copied}.
  std::pair<std::string, uint64_t> SnapshotEntry(const std::string& table) {
    const nlohmann::json j = nlohmann::json::parse(ReadFile(p_.state() + "/checkpoint.json"), nullptr, false);
    if (j.is_discarded() || !j.contains("snapshot")) return {"", 0};
    for (const auto& s : j.at("snapshot")) {
      if (s.value("database", "") == p_.db() && s.value("table", "") == table) {
        return {s.value("state", ""), s.value("rows_copied", uint64_t{0})};
      }
    }
    return {"absent", 0};
  }

  uint64_t Count(const std::string& table) {
    const std::string n = p_.DestCount(table);
    return n.empty() ? 0 : std::stoull(n);
  }

  std::string Table(const std::string& t) const { return p_.db() + "." + t; }

  PipeTest p_;
  std::optional<BackgroundProcess> run_;
  int runs_ = 0;
};

// `chsync tables add` while a writer goes on on a: c is copied online, then streamed; a and b are
// never copied again (their ClickHouse row counts never drop, their snapshot entries unchanged).
// `tables remove` stops applying c and keeps its ClickHouse table; adding it back copies it again.
TEST_P(TableSelectionTest, ATableAddedByRequestIsCopiedOnlineWhileTheOthersStreamOn) {
  ASSERT_TRUE(p_.connected());
  CreateTables(300, 20000);
  StartRun(Table("a") + "," + Table("b"), {"--snapshot-chunk-rows", "1000"});
  ASSERT_TRUE(Converges({"a", "b"}, 120)) << p_.Compare("a") << p_.Compare("b") << run_->Log();
  EXPECT_EQ(p_.DestTables(), (std::set<std::string>{"a", "b"}));
  const auto a_before = SnapshotEntry("a");
  const auto b_before = SnapshotEntry("b");
  ASSERT_EQ(a_before.first, "done");
  ASSERT_EQ(SnapshotEntry("c").first, "absent");

  CommandResult added = Tables("add", Table("c"));
  ASSERT_EQ(added.exit_code, 0) << added.Describe() << run_->Log();
  EXPECT_NE(added.out.find("added: copying it online"), std::string::npos) << added.Describe();

  // The writer goes on on a and on c while c is copied; a's rows in ClickHouse never drop.
  uint64_t a_rows = Count("a");
  for (int i = 0; i < 30; ++i) {
    p_.ExecAll({"INSERT INTO a VALUES (" + std::to_string(1000 + i) + ", 1, 'during the copy')",
                "UPDATE a SET v = v + 1 WHERE id = " + std::to_string(1 + i),
                "UPDATE c SET v = -v, s = 'changed during the copy' WHERE id % 503 = " + std::to_string(i),
                "DELETE FROM c WHERE id = " + std::to_string(100 + i * 600),
                "INSERT INTO c VALUES (" + std::to_string(100000 + i) + ", 7, 'new during the copy')"});
    const uint64_t now = Count("a");
    EXPECT_GE(now, a_rows) << "a's ClickHouse rows dropped while c was added: a was copied again";
    a_rows = std::max(a_rows, now);
  }
  ASSERT_TRUE(Converges({"a", "b", "c"}, 180))
      << p_.Compare("a") << p_.Compare("b") << p_.Compare("c") << run_->Log();
  EXPECT_TRUE(LogHas("rebuild finished", 30)) << run_->Log();
  const std::string log = run_->Log();
  EXPECT_EQ(log.find("rebuild of " + Table("a")), std::string::npos) << log;
  EXPECT_EQ(log.find("rebuild of " + Table("b")), std::string::npos) << log;
  EXPECT_EQ(SnapshotEntry("a"), a_before) << "a's snapshot was not done again";
  EXPECT_EQ(SnapshotEntry("b"), b_before);
  EXPECT_EQ(p_.DestTables(), (std::set<std::string>{"a", "b", "c"})) << "no copy's table is left";

  // Streamed from then on.
  p_.ExecAll({"UPDATE c SET s = 'streamed' WHERE id <= 10", "DELETE FROM c WHERE id = 11"});
  ASSERT_TRUE(Converges({"c"}, 60)) << p_.Compare("c");

  // Removed: its changes are no longer applied, its ClickHouse table stays with its rows.
  CommandResult removed = Tables("remove", Table("c"));
  ASSERT_EQ(removed.exit_code, 0) << removed.Describe() << run_->Log();
  EXPECT_NE(removed.out.find("removed from the selection"), std::string::npos) << removed.Describe();
  const uint64_t c_rows = Count("c");
  p_.ExecAll({"INSERT INTO c VALUES (200000, 1, 'after the removal')", "DELETE FROM c WHERE id <= 100",
              "INSERT INTO a VALUES (5000, 1, 'after the removal of c')"});
  ASSERT_TRUE(Converges({"a"}, 60)) << p_.Compare("a");
  EXPECT_EQ(Count("c"), c_rows) << "c's changes after its removal were applied";
  EXPECT_EQ(SnapshotEntry("c").first, "absent");
  EXPECT_TRUE(p_.DestTables().contains("c")) << "its ClickHouse table is kept";
  CommandResult status = p_.ChsyncStatus();
  EXPECT_NE(status.out.find("unselected     1"), std::string::npos) << status.Describe();
  EXPECT_NE(status.out.find(Table("c") + "  removed since"), std::string::npos) << status.Describe();

  // Added back: copied again, equal once more.
  CommandResult again = Tables("add", Table("c"));
  ASSERT_EQ(again.exit_code, 0) << again.Describe() << run_->Log();
  ASSERT_TRUE(Converges({"a", "b", "c"}, 180)) << p_.Compare("c") << run_->Log();
  EXPECT_EQ(run_->SignalAndWait(SIGTERM, 30000), 0) << run_->Log();
  status = p_.ChsyncStatus();
  EXPECT_EQ(status.out.find("unselected"), std::string::npos) << status.Describe();
  EXPECT_NE(status.out.find("then add " + Table("c")), std::string::npos) << status.Describe();
}

// SIGHUP reads `tables:` from the configuration file again and follows it; a restart under a
// configuration that no longer names a table stops applying it and says what changed.
TEST_P(TableSelectionTest, SighupAndARestartFollowTheConfiguredTables) {
  ASSERT_TRUE(p_.connected());
  CreateTables(200, 10);
  const std::string config = p_.state() + ".yaml";
  auto write_config = [&](const std::string& tables) {
    std::ofstream out(config, std::ios::trunc);
    out << "tables: \"" << tables << "\"\n";
  };
  write_config(Table("a"));
  StartRun("", {"--config", config});
  ASSERT_TRUE(Converges({"a"}, 120)) << p_.Compare("a") << run_->Log();
  EXPECT_EQ(p_.DestTables(), (std::set<std::string>{"a"}));

  const auto a_before = SnapshotEntry("a");
  write_config(Table("a") + ", " + Table("b"));
  ASSERT_EQ(kill(run_->pid(), SIGHUP), 0);
  // A writer on a and b while b is added: a's ClickHouse rows never drop.
  uint64_t a_rows = Count("a");
  for (int i = 0; i < 20; ++i) {
    p_.ExecAll({"UPDATE b SET s = 'after the SIGHUP' WHERE id = " + std::to_string(1 + i),
                "INSERT INTO a VALUES (" + std::to_string(900 + i) + ", 9, 'a')"});
    const uint64_t now = Count("a");
    EXPECT_GE(now, a_rows) << "a's ClickHouse rows dropped while b was added: a was copied again";
    a_rows = std::max(a_rows, now);
  }
  ASSERT_TRUE(LogHas("SIGHUP: `tables:`", 30)) << run_->Log();
  ASSERT_TRUE(Converges({"a", "b"}, 120)) << p_.Compare("b") << run_->Log();
  EXPECT_EQ(SnapshotEntry("a"), a_before) << "a's snapshot was not done again";
  EXPECT_EQ(run_->Log().find("rebuild of " + Table("a")), std::string::npos) << run_->Log();

  // A file that does not read leaves the running pipe as it is.
  {
    std::ofstream out(config, std::ios::trunc);
    out << "tables: [unclosed\n";
  }
  ASSERT_EQ(kill(run_->pid(), SIGHUP), 0);
  ASSERT_TRUE(LogHas("the selection stays", 30)) << run_->Log();
  EXPECT_TRUE(run_->Running()) << run_->Log();
  // New table_options with a new table: copied under the old ones, they would be wrong for good;
  // the pipe says to restart, and changes nothing.
  {
    std::ofstream out(config, std::ios::trunc);
    out << "tables: \"" << Table("a") << ", " << Table("b") << ", " << Table("c") << "\"\n"
        << "table_options:\n  " << Table("c") << ":\n    exclude_columns: [s]\n";
  }
  ASSERT_EQ(kill(run_->pid(), SIGHUP), 0);
  ASSERT_TRUE(LogHas("changed too, and they take effect only at a start", 30)) << run_->Log();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_FALSE(p_.DestTables().contains("c")) << "c was copied without its table_options";
  EXPECT_TRUE(run_->Running()) << run_->Log();
  ASSERT_EQ(run_->SignalAndWait(SIGTERM, 30000), 0) << run_->Log();

  // The restart names b alone: a stops being applied, its ClickHouse table kept.
  write_config(Table("b"));
  const uint64_t a_kept = Count("a");
  p_.ExecAll({"INSERT INTO a VALUES (5901, 9, 'not applied')", "UPDATE b SET v = 0 WHERE id = 1"});
  CommandResult restarted = testing::RunCommand(Args("", true, {"--config", config}), 300'000);
  ASSERT_RUN_OK(restarted, "under a configuration without a");
  EXPECT_NE(restarted.err.find("the table selection changed since the last run"), std::string::npos)
      << restarted.Describe();
  EXPECT_NE(restarted.err.find("removed from the selection"), std::string::npos) << restarted.Describe();
  EXPECT_EQ(p_.Compare("b"), "");
  EXPECT_EQ(Count("a"), a_kept) << "a's changes were applied after it left the selection";
  CommandResult status = p_.ChsyncStatus();
  EXPECT_NE(status.out.find(Table("a") + "  removed since"), std::string::npos) << status.Describe();
}

// kill -9 while an added table is copied: the next run goes on with the copy its checkpoint
// recorded (no request is made again), and every table converges.
TEST_P(TableSelectionTest, KilledDuringTheCopyOfAnAddedTableConverges) {
  ASSERT_TRUE(p_.connected());
  CreateTables(100, 300000);
  const std::vector<std::string> flags = {"--snapshot-chunk-rows", "2000"};
  StartRun(Table("a"), flags);
  ASSERT_TRUE(Converges({"a"}, 120)) << p_.Compare("a") << run_->Log();
  CommandResult added = Tables("add", Table("c"));
  ASSERT_EQ(added.exit_code, 0) << added.Describe() << run_->Log();
  // "done" comes once the checkpoint that records the copy is saved; the copy takes seconds.
  ASSERT_EQ(run_->SignalAndWait(SIGKILL, 10000), -1);
  const nlohmann::json saved =
      nlohmann::json::parse(ReadFile(p_.state() + "/checkpoint.json"), nullptr, false);
  ASSERT_FALSE(saved.is_discarded());
  bool copying = false;
  for (const auto& r : saved.value("rebuilds", nlohmann::json::array()))
    copying |= r.value("table", "") == "c";
  ASSERT_TRUE(copying) << "the kill came after the copy: " << saved.dump() << run_->Log();
  EXPECT_EQ(SnapshotEntry("c").first, "done") << "c is not copied by a snapshot of its own";
  StartRun(Table("a"), flags);
  for (int i = 0; i < 30; ++i) {
    p_.ExecAll({"UPDATE c SET v = v + 1, s = 'during the copy' WHERE id % 991 = " + std::to_string(i),
                "DELETE FROM c WHERE id = " + std::to_string(100 + i * 7000),
                "INSERT INTO a VALUES (" + std::to_string(500000 + i) + ", 1, 'during')"});
  }
  ASSERT_TRUE(Converges({"a", "c"}, 300)) << p_.Compare("a") << p_.Compare("c") << run_->Log();
  const std::string log = run_->Log();
  EXPECT_TRUE(log.find("rebuild finished") != std::string::npos ||
              log.find("already swapped in") != std::string::npos)
      << "the restarted pipe did not take up the copy its checkpoint recorded:\n"
      << log;
  EXPECT_EQ(p_.DestTables(), (std::set<std::string>{"a", "c"})) << "the copy's table is gone once swapped in";
  EXPECT_EQ(run_->SignalAndWait(SIGTERM, 30000), 0) << run_->Log();
}

INSTANTIATE_TEST_SUITE_P(Destinations, TableSelectionTest, ::testing::Values(Dest::kServer, Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& info) {
                           return testing::DestName(info.param);
                         });

}  // namespace
}  // namespace chsync
