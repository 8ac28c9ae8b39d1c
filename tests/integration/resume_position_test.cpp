// Issue 20: a restart on the server that wrote the checkpoint resumes by file:position (checked
// first, src/position/resume_position.h); everything else by GTID as before. Against the MariaDB pair of
// scripts/test-servers (mysql-primary server_id 11, mysql-replica server_id 12), whose binlogs
// these tests reset and purge: RESOURCE_LOCK mysql_pair (resume_position.cmake).

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/url.h"
#include "pipe_compare.h"
#include "pipe_harness.h"
#include "replication_pair.h"
#include "tcp_proxy.h"
#include "test_env.h"

namespace chsync {
namespace {

using testing::BackgroundProcess;
using testing::CommandResult;
using testing::Dest;
using testing::PipeTest;
using testing::PurgeAllButCurrent;
using testing::ReadFile;
using testing::ReplicationPair;
using testing::TcpProxy;

constexpr int kServerIdBase = 20400000;
/// What `chsync run` says when it opens the dump at the checkpoint's position.
constexpr const char* kByPosition = "(the checkpoint's server, GTID position ";

class ResumePositionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pair_.Reset();
    p_.Init("CHSYNC_TEST_MYSQL_PRIMARY", Dest::kServer, "resume_pos", kServerIdBase);
  }
  void TearDown() override {
    p_.Cleanup();
    pair_.Reset();
  }

  /// Table t (id, v, s) with 200 rows, at the source.
  void CreateTable() {
    p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, v INT, s VARCHAR(40))",
                "INSERT INTO t (id, v, s) SELECT seq, seq, 'a' FROM seq_1_to_200"});
  }

  /// One transaction per statement: inserts, updates, deletes and key changes from id `from`.
  void Write(int from, int to) {
    for (int i = from; i < to; ++i) {
      const std::string n = std::to_string(i);
      p_.Exec("INSERT INTO t (id, v, s) VALUES (" + n + ", " + n + ", 'w" + n + "')");
      if (i % 3 == 0)
        p_.Exec("UPDATE t SET v = v + 1000, s = CONCAT(s, '+') WHERE id = " + std::to_string(i - 2));
      if (i % 7 == 0) p_.Exec("DELETE FROM t WHERE id = " + std::to_string(i - 5));
      if (i % 11 == 0) p_.Exec("UPDATE t SET id = " + std::to_string(i + 100000) + " WHERE id = " + n);
    }
  }

  /// Polls until the FINAL view of t equals the source ("") or `seconds` pass (the difference).
  std::string EqualWithin(int seconds) { return p_.CompareWithin("t", seconds); }

  ReplicationPair pair_;
  PipeTest p_;
};

/// Occurrences of `what` in `text`.
size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_F(ResumePositionTest, ARestartOnTheSameServerResumesByPosition) {
  ASSERT_TRUE(p_.connected());
  CreateTable();
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "the first time");
  Write(300, 360);

  r = p_.Run({"--log-level", "debug"});
  ASSERT_RUN_OK(r, "again on the same server");
  EXPECT_NE(r.err.find(kByPosition), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("checked there: the next transaction is 0-11-"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("reading server_id 11 at "), std::string::npos) << r.Describe();
  EXPECT_EQ(r.err.find("from GTID"), std::string::npos) << "one way of reading, said once:\n" << r.Describe();
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after a restart by position");

  // Nothing written since: the checkpoint is the end of the server's binlog.
  r = p_.Run();
  ASSERT_RUN_OK(r, "at the live end");
  EXPECT_NE(r.err.find("checked there: the end of its binlog"), std::string::npos) << r.Describe();
  p_.Exec("UPDATE t SET v = -v WHERE id < 100");
  Write(400, 420);
  r = p_.Run();
  ASSERT_RUN_OK(r, "after resuming at the live end");
  EXPECT_NE(r.err.find(kByPosition), std::string::npos) << r.Describe();
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after writes that followed a resume at the live end");

  // A new file began since the checkpoint, which is now the end of a file the server left: its
  // Rotate event is there, and the conservative answer is GTID.
  p_.Exec("FLUSH BINARY LOGS");
  Write(500, 510);
  r = p_.Run({"--log-level", "debug"});
  ASSERT_RUN_OK(r, "after a rotation");
  EXPECT_NE(r.err.find("is a Rotate event"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("from GTID 0-11-"), std::string::npos) << r.Describe();
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after a rotation");
  r = p_.Run();
  ASSERT_RUN_OK(r, "in the new file");
  EXPECT_NE(r.err.find(kByPosition), std::string::npos) << r.Describe();
}

TEST_F(ResumePositionTest, ReconnectsResumeByPositionToo) {
  ASSERT_TRUE(p_.connected());
  CreateTable();
  auto source = ParseUrl(p_.source_url());
  ASSERT_TRUE(source.ok());
  std::string error;
  std::unique_ptr<TcpProxy> proxy = TcpProxy::Start(source->port, &error);
  ASSERT_NE(proxy, nullptr) << error;
  const std::string from = ":" + std::to_string(source->port);
  const size_t at = p_.source_url().rfind(from);
  ASSERT_NE(at, std::string::npos);
  p_.SetRunSources(p_.source_url().substr(0, at) + ":" + std::to_string(proxy->port()) +
                   p_.source_url().substr(at + from.size()));

  auto run = BackgroundProcess::Start(
      p_.RunArgs(p_.db() + ".*", false, {"--log-level", "debug", "--batch-age-ms", "200"}),
      p_.state() + "/run.log");
  ASSERT_TRUE(run.has_value());
  ASSERT_EQ(EqualWithin(60), "") << "the snapshot did not arrive:\n" << run->Log();
  // Every connection through the proxy breaks (the dump's and the control connection): each
  // session after that decides again, on its own new connection.
  for (int i = 0; i < 3; ++i) {
    Write(1000 + 20 * i, 1010 + 20 * i);
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    proxy->DropAll();
    Write(1010 + 20 * i, 1020 + 20 * i);
  }
  const std::string report = EqualWithin(60);
  const std::string log = run->Log();
  EXPECT_EQ(report, "") << "after dropped connections:\n" << log;
  EXPECT_GE(Count(log, "by position: the next transaction is 0-11-") +
                Count(log, "by position: the end of its binlog"),
            4u)
      << "the first session and each of the three after a drop open by position:\n"
      << log;
  EXPECT_EQ(log.find("by GTID rather than by position"), std::string::npos) << log;
  EXPECT_EQ(log.find("from GTID"), std::string::npos) << log;
  EXPECT_EQ(run->SignalAndWait(SIGTERM, 30000), 0) << run->Log();
}

TEST_F(ResumePositionTest, AnUnexpectedFirstGtidEndsTheSessionAndGtidTakesOver) {
  ASSERT_TRUE(p_.connected());
  CreateTable();
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "the first time");
  // Streaming from the end of the binlog, checked there; the next transaction then skips sequence
  // numbers (SET gtid_seq_no): not the one that follows the checkpoint, so the session opened by
  // position gives way to one opened by GTID, which finds it.
  auto run = testing::BackgroundProcess::Start(
      p_.RunArgs(p_.db() + ".*", false, {"--log-level", "debug", "--batch-age-ms", "200"}),
      p_.state() + "/run.log");
  ASSERT_TRUE(run.has_value());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (run->Log().find("checked there: the end of its binlog") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_NE(run->Log().find("checked there: the end of its binlog"), std::string::npos) << run->Log();
  const std::string pos = p_.SourceValue("SELECT @@gtid_binlog_pos");
  const size_t dash = pos.rfind('-');
  ASSERT_NE(dash, std::string::npos) << pos;
  const std::string later = std::to_string(std::stoull(pos.substr(dash + 1)) + 5);
  p_.Exec("SET gtid_seq_no = " + later);
  p_.Exec("INSERT INTO t (id, v, s) VALUES (777, 7, 'after a gap')");
  Write(800, 810);

  EXPECT_EQ(EqualWithin(60), "") << run->Log();
  const std::string log = run->Log();
  EXPECT_NE(log.find("the first transaction read by position from binlog.000001:"), std::string::npos) << log;
  EXPECT_NE(log.find("0-11-" + later + " does not follow the checkpoint's"), std::string::npos) << log;
  EXPECT_NE(log.find("reading by GTID from now on"), std::string::npos) << log;
  EXPECT_NE(log.find("from GTID 0-11-"), std::string::npos) << "the next session must open by GTID:\n" << log;
  EXPECT_EQ(run->SignalAndWait(SIGTERM, 30000), 0) << log;
}

TEST_F(ResumePositionTest, AResetBinlogIsResumedByGtidAndNeverApplied) {
  ASSERT_TRUE(p_.connected());
  CreateTable();
  Write(300, 340);
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "before RESET MASTER");
  // The binlog starts over at 0-11-1; a few transactions, fewer than the pipe applied before.
  p_.Exec("RESET MASTER");
  p_.Exec("INSERT INTO t (id, v, s) VALUES (900001, 1, 'after reset, a longer row')");
  p_.Exec("UPDATE t SET v = 42 WHERE id < 10");

  r = p_.Run({"--log-level", "debug"});
  EXPECT_EQ(r.err.find(kByPosition), std::string::npos) << "a reset binlog must not be read by position:\n"
                                                        << r.Describe();
  EXPECT_NE(r.err.find("resuming binlog.000001:"), std::string::npos)
      << "the debug log must say why not by position:\n"
      << r.Describe();
  // The GTID the pipe must resume after is not in the new binlog: a binlog gap, never rows read
  // from a place that means something else now.
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("is gone from server_id 11"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("on_binlog_gap"), std::string::npos) << r.Describe();
  EXPECT_NE(p_.Compare("t"), "") << "nothing after the reset may have been applied";

  r = p_.Run({"--on-binlog-gap", "resync"});
  ASSERT_RUN_OK(r, "with on_binlog_gap=resync");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after the resync");
  Write(600, 620);
  r = p_.Run();
  ASSERT_RUN_OK(r, "streaming after the resync");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "streaming after the resync");
}

TEST_F(ResumePositionTest, AFailoverToTheReplicaIsResumedByGtid) {
  ASSERT_TRUE(p_.connected());
  p_.Exec("FLUSH BINARY LOGS");  // the primary's positions differ from the replica's
  CreateTable();
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "on the primary");
  Write(300, 340);
  ASSERT_TRUE(pair_.WaitReplicaCaughtUp());

  p_.SetRunSources(pair_.replica_url());
  p_.ConnectSource(pair_.replica_url());
  r = p_.Run({"--log-level", "debug"});
  ASSERT_RUN_OK(r, "on the replica");
  EXPECT_NE(r.err.find("moving the pipe from server_id 11"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("reading server_id 12"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("from GTID 0-11-"), std::string::npos) << r.Describe();
  EXPECT_EQ(r.err.find(kByPosition), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("read on server_id 11, not on server_id 12"), std::string::npos) << r.Describe();
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after moving to the replica");

  // From then on the checkpoint is the replica's: a restart there resumes by position.
  p_.ConnectSource(pair_.primary_url());
  Write(400, 420);
  ASSERT_TRUE(pair_.WaitReplicaCaughtUp());
  p_.ConnectSource(pair_.replica_url());
  r = p_.Run();
  ASSERT_RUN_OK(r, "on the replica again");
  EXPECT_NE(r.err.find(kByPosition), std::string::npos) << r.Describe();
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after a restart on the replica");
}

TEST_F(ResumePositionTest, APurgedFileIsResumedByGtid) {
  ASSERT_TRUE(p_.connected());
  CreateTable();
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "before the purge");
  Write(300, 320);  // read by nobody before the purge
  ASSERT_TRUE(PurgeAllButCurrent(p_));
  p_.Exec("INSERT INTO t (id, v, s) VALUES (9999, 1, 'after purge')");

  r = p_.Run({"--log-level", "debug"});
  EXPECT_EQ(r.err.find(kByPosition), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("is not in the server's SHOW BINARY LOGS"), std::string::npos) << r.Describe();
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("is gone from server_id 11"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("GTID 0-11-"), std::string::npos) << r.Describe();

  r = p_.Run({"--on-binlog-gap", "resync"});
  ASSERT_RUN_OK(r, "with on_binlog_gap=resync");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after the resync");
}

// A fresh start records the binlog position and its GTID position; they must name the same point,
// since a restart on this server goes by the one and anywhere else by the other. chsync reads
// @@gtid_binlog_pos on both sides of the position and asks BINLOG_GTID_POS only when a transaction
// came in between: started while a writer commits without pause (both ways get taken), and once
// with nothing written.
TEST_F(ResumePositionTest, AFreshStartsPositionAndGtidNameTheSamePoint) {
  ASSERT_TRUE(p_.connected());
  CreateTable();
  std::atomic<bool> stop{false};
  std::atomic<int> written{0};
  std::thread writer([&] {
    auto conn = testing::OpenSource(p_.source_url());
    if (conn == nullptr || !conn->Execute("USE `" + p_.db() + "`").ok()) return;
    for (int i = 100000; !stop.load(); ++i) {
      if (!conn->Execute("INSERT INTO t (id, v, s) VALUES (" + std::to_string(i) + ", 1, 'busy')").ok())
        return;
      ++written;
    }
  });
  auto start_point = [&](const std::string& when) {
    auto j = nlohmann::json::parse(ReadFile(p_.state() + "/checkpoint.json"), nullptr, false);
    if (j.is_discarded() || !j.contains("stream_start")) {
      ADD_FAILURE() << "no stream_start in the checkpoint " << when;
      return;
    }
    const auto& at = j["stream_start"];
    const std::string file = at.value("file", "");
    const uint64_t position = at.value("position", uint64_t{0});
    const std::string gtid = at.value("gtid_set", "");
    EXPECT_FALSE(gtid.empty()) << when;
    EXPECT_EQ(gtid,
              p_.SourceValue("SELECT BINLOG_GTID_POS('" + file + "', " + std::to_string(position) + ")"))
        << "the start position " << file << ":" << position << " and its GTID " << gtid << " differ " << when;
  };
  for (int run = 0; run < 4; ++run) {
    const std::string when = "(fresh start " + std::to_string(run + 1) + ", while a writer commits)";
    std::filesystem::remove_all(p_.state());
    const int before = written.load();
    CommandResult r = p_.Run();
    ASSERT_RUN_OK(r, when);
    EXPECT_GT(written.load(), before) << "the writer must commit while chsync starts " << when;
    start_point(when);
  }
  stop = true;
  writer.join();
  EXPECT_GT(written.load(), 0);
  std::filesystem::remove_all(p_.state());
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "a fresh start with nothing written");
  start_point("(a fresh start with nothing written)");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after the fresh starts");
}

// A commit between the reads of the binlog's end and of its GTID state, on a restart at the end of
// the binlog (a busy server; seen in CI on the shared MariaDB, where the run stopped: "written anew
// since the checkpoint"). CHSYNC_DELAY_AT holds chsync between the two reads while a row commits.
TEST_F(ResumePositionTest, ACommitWhileTheBinlogsEndIsReadIsNoRewrittenBinlog) {
  ASSERT_TRUE(p_.connected());
  CreateTable();
  ASSERT_RUN_OK(p_.Run(), "the first time");
  setenv("CHSYNC_DELAY_AT", "resume.binlog_end", 1);
  setenv("CHSYNC_DELAY_MS", "3000", 1);
  auto run = BackgroundProcess::Start(p_.RunArgs(p_.db() + ".*", true, {"--log-level", "debug"}),
                                      p_.state() + "/run.log");
  unsetenv("CHSYNC_DELAY_AT");
  unsetenv("CHSYNC_DELAY_MS");
  ASSERT_TRUE(run.has_value());
  for (int i = 0;
       i < 300 && run->Log().find("delay point resume.binlog_end") == std::string::npos && run->Running();
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_NE(run->Log().find("delay point resume.binlog_end"), std::string::npos) << run->Log();
  p_.Exec("INSERT INTO t (id, v, s) VALUES (5000, 1, 'meanwhile')");
  EXPECT_EQ(run->SignalAndWait(0, 60000), 0) << run->Log();
  const std::string log = run->Log();
  EXPECT_EQ(log.find("written anew"), std::string::npos) << log;
  EXPECT_NE(log.find("by position: the next transaction is 0-11-"), std::string::npos) << log;
  // --until-caught-up may have fixed its end before the row: the next run brings it.
  ASSERT_RUN_OK(p_.Run(), "after the row");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after a commit while the binlog's end was read");
}

}  // namespace
}  // namespace chsync
