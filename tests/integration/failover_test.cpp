// Issue 15 end to end, against the MariaDB GTID primary/replica pair of scripts/test-servers
// (mysql-primary server_id 11, mysql-replica server_id 12): a failover under load followed by GTID
// without a resync, a restart on the replica, a candidate that is behind, purged binlogs with both
// on_binlog_gap policies, and reading from a replica from the start.
//
// Every test resets the pair first and holds ctest's RESOURCE_LOCK mysql_pair (failover.cmake).

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "pipe_compare.h"
#include "pipe_harness.h"
#include "replication_pair.h"
#include "test_env.h"

namespace chsync {
namespace {

using testing::BackgroundProcess;
using testing::CommandResult;
using testing::Dest;
using testing::MakeTempDir;
using testing::PipeTest;
using testing::PurgeAllButCurrent;
using testing::ReadFile;
using testing::ReplicationPair;

constexpr int kServerIdBase = 11000000;

class FailoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pair_.Reset();
    p_.Init("CHSYNC_TEST_MYSQL_PRIMARY", Dest::kServer, "failover", kServerIdBase);
  }
  void TearDown() override {
    p_.Cleanup();
    pair_.Reset();
  }

  /// Polls until every table's FINAL view equals the source (true), or `seconds` pass.
  bool ConvergesWithin(const std::vector<std::string>& tables, int seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      bool equal = true;
      for (const std::string& t : tables) equal = equal && p_.Compare(t).empty();
      if (equal) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return false;
  }

  /// Polls until `sql` returns `expected` at the destination (true), or `seconds` pass. Errors
  /// while polling (the database not created yet by the snapshot) count as "not yet".
  bool DestReaches(const std::string& sql, const std::string& expected, int seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      std::string error;
      auto rows = testing::QueryDestination(p_.dest_url(), sql, &error);
      if (rows.has_value() && !rows->empty() && !(*rows)[0].empty() && (*rows)[0][0] == expected) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }

  /// Keys that appear more than once in the FINAL view of `table` ("" when none).
  std::string DuplicateKeys(const std::string& table) {
    return p_.DestValue(
        "SELECT arrayStringConcat(groupArray(toString(id)), ',') FROM (SELECT id, count() AS n "
        "FROM " +
        p_.DestTable(table) + " FINAL WHERE _chsync_is_deleted = 0 GROUP BY id HAVING n > 1)");
  }

  /// Table t (id, v, s) with `rows` rows, at the source.
  void CreateTable(int rows) {
    p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, v INT, s VARCHAR(40))",
                "INSERT INTO t (id, v, s) SELECT seq, seq, 'a' FROM seq_1_to_" + std::to_string(rows)});
  }

  ReplicationPair pair_;
  PipeTest p_;
};

/// Inserts, updates, deletes and key changes over `t` (id, v, s), numbered from `from`.
std::vector<std::string> Workload(int from, int to) {
  std::vector<std::string> out;
  for (int i = from; i < to; ++i) {
    out.push_back("INSERT INTO t (id, v, s) VALUES (" + std::to_string(i) + ", " + std::to_string(i) +
                  ", 'w" + std::to_string(i) + "')");
    if (i % 3 == 0)
      out.push_back("UPDATE t SET v = v + 1000, s = CONCAT(s, '+') WHERE id = " + std::to_string(i - 2));
    if (i % 7 == 0) out.push_back("DELETE FROM t WHERE id = " + std::to_string(i - 5));
    if (i % 11 == 0) {
      out.push_back("UPDATE t SET id = " + std::to_string(i + 100000) +
                    " WHERE id = " + std::to_string(i - 1));
    }
  }
  return out;
}

TEST_F(FailoverTest, FollowsAPromotedReplicaByGtidUnderLoad) {
  ASSERT_TRUE(p_.connected());
  // The primary's binlog files are numbered ahead of the replica's: without a new sequence base,
  // rows read from the replica would get lower versions than the ones they replace.
  p_.ExecAll({"FLUSH BINARY LOGS", "FLUSH BINARY LOGS", "FLUSH BINARY LOGS"});
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, v INT, s VARCHAR(40))",
              "CREATE TABLE u (k VARCHAR(20) PRIMARY KEY, n BIGINT)",
              "INSERT INTO t (id, v, s) SELECT seq, seq, CONCAT('s', seq) FROM seq_1_to_300",
              "INSERT INTO u SELECT CONCAT('k', seq), seq FROM seq_1_to_50"});
  ASSERT_TRUE(pair_.WaitReplicaCaughtUp());

  p_.SetRunSources(pair_.primary_url() + "," + pair_.replica_url());
  const std::string log = p_.state() + "/run.log";
  auto run =
      BackgroundProcess::Start(p_.RunArgs(p_.db() + ".*", false, {"--failover-after-ms", "2000"}), log);
  ASSERT_TRUE(run.has_value());

  // Load while the pipe streams from the primary, with a schema change.
  std::atomic<bool> stop_load{false};
  std::thread load([&] {
    auto conn = testing::OpenSource(pair_.primary_url());
    if (conn == nullptr) return;
    (void)conn->Execute("USE " + p_.db());
    int i = 1000;
    while (!stop_load) {
      for (const std::string& sql : Workload(i, i + 10)) (void)conn->Execute(sql);
      (void)conn->Execute("UPDATE u SET n = n + 1 WHERE k = 'k" + std::to_string(i % 50 + 1) + "'");
      i += 10;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  p_.Exec("ALTER TABLE t ADD COLUMN added INT DEFAULT 7");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  stop_load = true;
  load.join();
  ASSERT_TRUE(pair_.WaitReplicaCaughtUp());

  // The primary dies; the replica is promoted and takes the rest of the workload.
  ASSERT_TRUE(pair_.KillPrimary());
  ASSERT_TRUE(pair_.Promote());
  p_.ConnectSource(pair_.replica_url());
  ASSERT_TRUE(p_.connected());
  // New rows in a range the load above cannot reach however fast it ran (it reached id 5000 on a
  // quiet machine once), then updates of rows the primary wrote: they must win over the versions
  // read from the primary.
  p_.ExecAll(Workload(500000, 500100));
  p_.ExecAll({"UPDATE t SET v = -v, s = 'after failover' WHERE id <= 100",
              "ALTER TABLE t ADD COLUMN later VARCHAR(10) DEFAULT 'x'",
              "UPDATE t SET later = 'y' WHERE id BETWEEN 101 AND 120", "DELETE FROM u WHERE n % 2 = 0",
              "INSERT INTO u VALUES ('new', 1)"});

  const bool converged = ConvergesWithin({"t", "u"}, 90);
  ASSERT_TRUE(run->Running()) << "chsync run ended after the primary was killed:\n" << run->Log();
  EXPECT_TRUE(converged) << "ClickHouse did not converge to the promoted replica:\n"
                         << p_.Compare("t") << p_.Compare("u") << "\nlog:\n"
                         << run->Log();
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after the failover");
  EXPECT_EQUAL_TO_SOURCE(p_, "u", "after the failover");
  EXPECT_EQ(DuplicateKeys("t"), "");
  EXPECT_EQ(run->SignalAndWait(SIGTERM, 30000), 0) << run->Log();

  const std::string text = run->Log();
  EXPECT_NE(text.find("stopped answering; reading from server_id 12"), std::string::npos)
      << "the log must say when and where the pipe switched:\n"
      << text;
  EXPECT_NE(text.find("moving the pipe from server_id 11"), std::string::npos) << text;
  EXPECT_EQ(text.find("resync of every table"), std::string::npos) << "the failover must not resync:\n"
                                                                   << text;
  EXPECT_EQ(text.find("snapshot of 2 tables"), text.rfind("snapshot of 2 tables")) << "one snapshot only:\n"
                                                                                   << text;

  const CommandResult status = p_.ChsyncStatus();
  EXPECT_NE(status.out.find("server_id 12"), std::string::npos) << "status must name the server read from:\n"
                                                                << status.Describe();
  EXPECT_NE(status.out.find("0-12-"), std::string::npos) << "status must show the GTID position:\n"
                                                         << status.Describe();
}

TEST_F(FailoverTest, WaitsForALaggingReplicaThenMovesToIt) {
  ASSERT_TRUE(p_.connected());
  CreateTable(100);
  ASSERT_TRUE(pair_.WaitReplicaCaughtUp());
  auto replica = pair_.ConnectReplica();
  ASSERT_NE(replica, nullptr);
  // The replica receives but does not apply: its binlog lags behind what chsync reads.
  ASSERT_TRUE(replica->Execute("STOP SLAVE SQL_THREAD").ok());

  p_.SetRunSources(pair_.primary_url() + "," + pair_.replica_url());
  const std::string log = p_.state() + "/run.log";
  auto run =
      BackgroundProcess::Start(p_.RunArgs(p_.db() + ".*", false, {"--failover-after-ms", "1000"}), log);
  ASSERT_TRUE(run.has_value());
  p_.ExecAll(Workload(200, 260));
  p_.Exec("INSERT INTO t (id, v, s) VALUES (777777, 1, 'last on the primary')");
  ASSERT_TRUE(DestReaches("SELECT count() FROM " + p_.DestTable("t") + " FINAL WHERE id = 777777", "1", 60))
      << run->Log();
  ASSERT_EQ(p_.DestValue("SELECT count() FROM " + p_.DestTable("t") + " FINAL WHERE id = 777777"), "1");
  ASSERT_TRUE(pair_.KillPrimary());

  // chsync must not take the replica while it lacks what chsync applied…
  const auto warned_by = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (run->Log().find("cannot take this pipe") == std::string::npos &&
         std::chrono::steady_clock::now() < warned_by) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_NE(run->Log().find("transactions missing"), std::string::npos)
      << "the lagging replica must be passed over, naming what it lacks:\n"
      << run->Log();
  EXPECT_EQ(run->Log().find("moving the pipe"), std::string::npos) << run->Log();
  ASSERT_TRUE(run->Running()) << run->Log();

  // …and take it once it has applied its relay log.
  ASSERT_TRUE(replica->Execute("START SLAVE SQL_THREAD").ok());
  ASSERT_TRUE(pair_.Promote());
  p_.ConnectSource(pair_.replica_url());
  p_.ExecAll(
      {"UPDATE t SET v = -1, s = 'on the new primary' WHERE id <= 50", "DELETE FROM t WHERE id = 777777"});
  EXPECT_TRUE(ConvergesWithin({"t"}, 90)) << p_.Compare("t") << "\nlog:\n" << run->Log();
  EXPECT_NE(run->Log().find("moving the pipe from server_id 11"), std::string::npos) << run->Log();
  EXPECT_EQ(DuplicateKeys("t"), "");
  EXPECT_EQ(run->SignalAndWait(SIGTERM, 30000), 0) << run->Log();
}

TEST_F(FailoverTest, RestartsOnTheReplicaByGtid) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"FLUSH BINARY LOGS", "FLUSH BINARY LOGS",
              "CREATE TABLE t (id INT PRIMARY KEY, v INT, s VARCHAR(40))",
              "INSERT INTO t (id, v, s) SELECT seq, seq, 'a' FROM seq_1_to_200"});
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "on the primary");
  p_.ExecAll(Workload(300, 400));
  ASSERT_TRUE(pair_.WaitReplicaCaughtUp());

  // Same state directory, the replica's URL only: it resumes there by GTID.
  p_.SetRunSources(pair_.replica_url());
  p_.ConnectSource(pair_.replica_url());
  r = p_.Run();
  ASSERT_RUN_OK(r, "on the replica");
  EXPECT_NE(r.err.find("moving the pipe from server_id 11"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("reading server_id 12"), std::string::npos) << r.Describe();
  EXPECT_EQ(r.err.find("snapshot"), std::string::npos) << "no table may be copied again:\n" << r.Describe();
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after resuming on the replica");

  // Writes on the primary reach the pipe through the replica's binlog (log_slave_updates).
  p_.ConnectSource(pair_.primary_url());
  p_.ExecAll({"UPDATE t SET v = v * 2, s = 'replicated' WHERE id <= 150", "DELETE FROM t WHERE id > 380"});
  ASSERT_TRUE(pair_.WaitReplicaCaughtUp());
  p_.ConnectSource(pair_.replica_url());
  r = p_.Run();
  ASSERT_RUN_OK(r, "on the replica again");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after more writes replicated through the replica");
}

TEST_F(FailoverTest, RefusesACandidateThatIsBehindNamingTheMissingGtids) {
  ASSERT_TRUE(p_.connected());
  CreateTable(100);
  ASSERT_TRUE(pair_.WaitReplicaCaughtUp());
  auto replica = pair_.ConnectReplica();
  ASSERT_NE(replica, nullptr);
  ASSERT_TRUE(replica->Execute("STOP SLAVE").ok());
  p_.ExecAll(Workload(200, 210));  // the replica misses these
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "on the primary");
  const std::string checkpoint = ReadFile(p_.state() + "/checkpoint.json");

  p_.SetRunSources(pair_.replica_url());
  r = p_.Run();
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("lacks transactions chsync already applied"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("domain 0: has 0-11-"), std::string::npos) << "the missing GTIDs must be named:\n"
                                                                  << r.Describe();
  EXPECT_NE(r.err.find("transactions missing"), std::string::npos) << r.Describe();
  EXPECT_EQ(ReadFile(p_.state() + "/checkpoint.json"), checkpoint) << "a refused run changed the checkpoint";

  // Once it has caught up, it serves.
  ASSERT_TRUE(replica->Execute("START SLAVE").ok());
  ASSERT_TRUE(pair_.WaitReplicaCaughtUp());
  r = p_.Run();
  ASSERT_RUN_OK(r, "on the replica once caught up");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after the replica caught up");
}

TEST_F(FailoverTest, PurgedBinlogsFailClearlyOrAreResynced) {
  ASSERT_TRUE(p_.connected());
  CreateTable(100);
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "before the purge");
  p_.ExecAll(Workload(200, 260));  // read by nobody before the purge
  ASSERT_TRUE(PurgeAllButCurrent(p_));
  p_.ExecAll({"INSERT INTO t (id, v, s) VALUES (9999, 1, 'after purge')"});

  r = p_.Run();
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("is gone from server_id 11"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("GTID 0-11-"), std::string::npos) << "the error must name the GTID position:\n"
                                                         << r.Describe();
  EXPECT_NE(r.err.find("on_binlog_gap"), std::string::npos) << "the error must say what to do:\n"
                                                            << r.Describe();

  r = p_.Run({"--on-binlog-gap", "resync"});
  ASSERT_RUN_OK(r, "with on_binlog_gap=resync");
  EXPECT_NE(r.err.find("on_binlog_gap is resync: copying every table again"), std::string::npos)
      << r.Describe();
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after the resync");
  p_.ExecAll({"UPDATE t SET v = 0 WHERE id < 50"});
  r = p_.Run();
  ASSERT_RUN_OK(r, "streaming after the resync");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "streaming after the resync");
}

TEST_F(FailoverTest, CopiesAndStreamsFromAReplica) {
  ASSERT_TRUE(p_.connected());
  CreateTable(500);
  ASSERT_TRUE(pair_.WaitReplicaCaughtUp());
  // The primary takes the writes; the pipe reads only the replica.
  p_.SetRunSources(pair_.replica_url());
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "snapshot from the replica");
  EXPECT_NE(r.err.find("reading server_id 12"), std::string::npos) << r.Describe();
  p_.ExecAll(Workload(600, 700));
  p_.Exec("ALTER TABLE t ADD COLUMN z INT DEFAULT 3");
  p_.ExecAll(Workload(700, 720));
  ASSERT_TRUE(pair_.WaitReplicaCaughtUp());
  r = p_.Run();
  ASSERT_RUN_OK(r, "streaming from the replica");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "read from the replica");
}

}  // namespace
}  // namespace chsync
