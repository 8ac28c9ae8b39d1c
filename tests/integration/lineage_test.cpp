// Issue 33, case 1: row versions only grow across a change of the source's binlog lineage
// (src/position/lineage.h). Against the MariaDB pair of scripts/test-servers (mysql-primary
// server_id 11, mysql-replica server_id 12), which these tests promote, reset and re-point:
// RESOURCE_LOCK mysql_pair (lineage.cmake).
//
// Each test fails on a pipe whose versions come from the file numbers alone: the rows changed
// after the move keep their old values in the FINAL view (a lower version loses), or rows are
// skipped.

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

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
using testing::ReadFile;
using testing::ReplicationPair;
using testing::TcpProxy;

constexpr int kServerIdBase = 33100000;

class LineageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pair_.Reset();
    p_.Init("CHSYNC_TEST_MYSQL_PRIMARY", Dest::kServer, "lineage", kServerIdBase);
  }
  void TearDown() override {
    p_.Cleanup();
    pair_.Reset();
  }

  /// Table t (id, v, s) with `rows` rows, at the source.
  void CreateTable(int rows) {
    p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, v INT, s VARCHAR(40))",
                "INSERT INTO t (id, v, s) SELECT seq, seq, 'a' FROM seq_1_to_" + std::to_string(rows)});
  }

  /// Polls until the FINAL view of t equals the source ("") or `seconds` pass (the difference).
  std::string EqualWithin(int seconds) { return p_.CompareWithin("t", seconds); }

  /// `url` with its port replaced by `port`.
  static std::string WithPort(const std::string& url, int port) {
    auto parsed = ParseUrl(url);
    if (!parsed.ok()) return url;
    const std::string from = ":" + std::to_string(parsed->port);
    const size_t at = url.rfind(from);
    if (at == std::string::npos) return url;
    return url.substr(0, at) + ":" + std::to_string(port) + url.substr(at + from.size());
  }

  static int PortOf(const std::string& url) {
    auto parsed = ParseUrl(url);
    return parsed.ok() ? parsed->port : 0;
  }

  ReplicationPair pair_;
  PipeTest p_;
};

// One --source URL, a proxy behind it (ProxySQL, HAProxy, a VIP, a Kubernetes Service) re-pointed
// to the promoted replica, whose binlog files are numbered below the primary's.
TEST_F(LineageTest, AProxyRePointedToThePromotedReplicaKeepsVersionsGrowing) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"FLUSH BINARY LOGS", "FLUSH BINARY LOGS", "FLUSH BINARY LOGS"});
  CreateTable(300);
  ASSERT_TRUE(pair_.WaitReplicaCaughtUp());
  std::string error;
  std::unique_ptr<TcpProxy> proxy = TcpProxy::Start(PortOf(pair_.primary_url()), &error);
  ASSERT_NE(proxy, nullptr) << error;
  p_.SetRunSources(WithPort(pair_.primary_url(), proxy->port()));

  auto run = BackgroundProcess::Start(p_.RunArgs(p_.db() + ".*", false, {"--batch-age-ms", "200"}),
                                      p_.state() + "/run.log");
  ASSERT_TRUE(run.has_value());
  ASSERT_EQ(EqualWithin(60), "") << "the snapshot did not arrive:\n" << run->Log();
  p_.ExecAll({"UPDATE t SET v = v + 1000, s = 'on the primary' WHERE id <= 100"});
  ASSERT_EQ(EqualWithin(60), "") << run->Log();

  // The failover: the replica is promoted and the proxy sends every new connection there.
  ASSERT_TRUE(pair_.WaitReplicaCaughtUp());
  ASSERT_TRUE(pair_.Promote());
  proxy->Retarget(PortOf(pair_.replica_url()));
  proxy->DropAll();
  p_.ConnectSource(pair_.replica_url());
  p_.ExecAll({"UPDATE t SET v = -1, s = 'on the new primary' WHERE id <= 50", "DELETE FROM t WHERE id > 290",
              "INSERT INTO t (id, v, s) VALUES (5000, 5, 'new')"});

  const std::string report = EqualWithin(90);
  const std::string log = run->Log();
  EXPECT_EQ(report, "") << "rows changed on the new primary must replace the old ones:\n" << log;
  EXPECT_NE(log.find("now leads to server_id 12"), std::string::npos) << log;
  EXPECT_NE(log.find("moving the pipe from server_id 11"), std::string::npos) << log;
  EXPECT_EQ(run->SignalAndWait(SIGTERM, 30000), 0) << log;
  // The checkpoint names the server it was read on.
  EXPECT_NE(ReadFile(p_.state() + "/checkpoint.json").find("\"server_id\": 12"), std::string::npos)
      << ReadFile(p_.state() + "/checkpoint.json");
}

// Two GTID domains written in turns on the primary (a session with gtid_domain_id = 1, as a
// multi-source or multi-domain setup writes them), then a move through the proxy to the promoted
// replica. A multi-domain position is never resumed by file:position (a position is only safe for
// one domain: transactions of another may lie before it and be applied already); by GTID, the
// server skips what each domain already has. No transaction is applied twice or skipped.
TEST_F(LineageTest, TwoDomainsMoveToThePromotedReplicaByGtid) {
  ASSERT_TRUE(p_.connected());
  CreateTable(200);
  ASSERT_TRUE(pair_.WaitReplicaCaughtUp());
  std::string error;
  std::unique_ptr<TcpProxy> proxy = TcpProxy::Start(PortOf(pair_.primary_url()), &error);
  ASSERT_NE(proxy, nullptr) << error;
  p_.SetRunSources(WithPort(pair_.primary_url(), proxy->port()));
  auto run = BackgroundProcess::Start(p_.RunArgs(p_.db() + ".*", false, {"--batch-age-ms", "200"}),
                                      p_.state() + "/run.log");
  ASSERT_TRUE(run.has_value());
  ASSERT_EQ(EqualWithin(60), "") << "the snapshot did not arrive:\n" << run->Log();
  for (int round = 0; round < 10; ++round) {
    const std::string domain = round % 2 == 0 ? "0" : "1";
    p_.ExecAll({"SET SESSION gtid_domain_id = " + domain, "UPDATE t SET v = v + 1, s = 'domain " + domain +
                                                              "' WHERE id % 10 = " + std::to_string(round)});
  }
  p_.Exec("SET SESSION gtid_domain_id = 0");
  ASSERT_EQ(EqualWithin(60), "") << run->Log();
  ASSERT_NE(p_.SourceValue("SELECT @@gtid_binlog_pos").find("1-11-"), std::string::npos);

  ASSERT_TRUE(pair_.WaitReplicaCaughtUp());
  ASSERT_TRUE(pair_.Promote());
  proxy->Retarget(PortOf(pair_.replica_url()));
  proxy->DropAll();
  p_.ConnectSource(pair_.replica_url());
  for (int round = 0; round < 6; ++round) {
    const std::string domain = round % 2 == 0 ? "1" : "0";
    p_.ExecAll({"SET SESSION gtid_domain_id = " + domain, "UPDATE t SET v = v * 2, s = 'after, domain " +
                                                              domain +
                                                              "' WHERE id % 7 = " + std::to_string(round)});
  }
  p_.Exec("SET SESSION gtid_domain_id = 0");
  const std::string report = EqualWithin(90);
  const std::string log = run->Log();
  EXPECT_EQ(report, "") << log;
  EXPECT_NE(log.find("moving the pipe from server_id 11"), std::string::npos) << log;
  // On the new server, by GTID, both domains named (never by a file:position of one of them).
  const size_t moved = log.find("moving the pipe from server_id 11");
  const size_t reading = log.find("reading server_id 12 at ", moved);
  ASSERT_NE(reading, std::string::npos) << log;
  const std::string line = log.substr(reading, log.find('\n', reading) - reading);
  EXPECT_NE(line.find(" from GTID "), std::string::npos) << line;
  EXPECT_NE(line.find("1-11-"), std::string::npos) << line;
  EXPECT_EQ(run->SignalAndWait(SIGTERM, 30000), 0) << log;
}

// RESET MASTER and the GTID state set again (a server re-cloned with the same server_id, a
// restore): the GTIDs go on, the files begin again at 000001.
TEST_F(LineageTest, ResetMasterWithTheGtidStateRestoredBeginsANewEpoch) {
  ASSERT_TRUE(p_.connected());
  CreateTable(200);
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "the snapshot");
  // The rows the reset's updates change were last written by the stream from binlog.000004.
  p_.ExecAll({"FLUSH BINARY LOGS", "FLUSH BINARY LOGS", "FLUSH BINARY LOGS",
              "UPDATE t SET v = v + 1 WHERE id <= 100"});
  r = p_.Run();
  ASSERT_RUN_OK(r, "before the reset");
  const std::string state = p_.SourceValue("SELECT @@GLOBAL.gtid_binlog_state");
  ASSERT_FALSE(state.empty());
  p_.ExecAll({"RESET MASTER", "SET GLOBAL gtid_binlog_state = '" + state + "'"});
  p_.ExecAll({"UPDATE t SET v = 7000 + id, s = 'after the reset' WHERE id <= 10"});

  r = p_.Run();
  ASSERT_RUN_OK(r, "after the reset");
  EXPECT_NE(r.err.find("was written anew"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("new epoch"), std::string::npos) << r.Describe();
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after RESET MASTER with the GTID state restored");

  // The new lineage is the checkpoint's from now on: a restart reads it by position, and later
  // changes of the same rows win again.
  p_.ExecAll({"UPDATE t SET v = 9000 + id WHERE id <= 20", "DELETE FROM t WHERE id = 3"});
  r = p_.Run();
  ASSERT_RUN_OK(r, "a restart in the new lineage");
  EXPECT_EQ(r.err.find("was written anew"), std::string::npos) << r.Describe();
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after a restart in the new lineage");
}

// RESET MASTER alone: the GTIDs begin again at 0-11-1, so sequence numbers after the checkpoint's
// are reissued to other transactions. Resuming "after 0-11-N" would skip the first N of them.
TEST_F(LineageTest, ResetMasterWithoutTheGtidStateIsABinlogGapNeverASilentSkip) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"FLUSH BINARY LOGS", "FLUSH BINARY LOGS"});
  CreateTable(10);
  std::vector<std::string> first;
  for (int i = 0; i < 40; ++i)
    first.push_back("INSERT INTO t (id, v, s) VALUES (" + std::to_string(100 + i) + ", 1, 'x')");
  p_.ExecAll(first);
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "before the reset");
  const std::string checkpoint = ReadFile(p_.state() + "/checkpoint.json");
  p_.Exec("RESET MASTER");
  std::vector<std::string> more;
  for (int i = 0; i < 100; ++i)
    more.push_back("INSERT INTO t (id, v, s) VALUES (" + std::to_string(1000 + i) + ", 2, 'y')");
  p_.ExecAll(more);

  r = p_.Run();
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("was written anew since the checkpoint"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("numbered below the checkpoint's binlog.000003"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("on_binlog_gap"), std::string::npos) << "the error must say what to do:\n"
                                                            << r.Describe();
  EXPECT_EQ(ReadFile(p_.state() + "/checkpoint.json"), checkpoint) << "a refused run moved the checkpoint";
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.DestTable("t") + " FINAL WHERE _chsync_is_deleted = 0"),
            "50")
      << "nothing of the new binlog may be applied";

  r = p_.Run({"--on-binlog-gap", "resync"});
  ASSERT_RUN_OK(r, "with on_binlog_gap=resync");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after the resync");
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.DestTable("t") + " FINAL WHERE _chsync_is_deleted = 0"),
            "150");
}

// A kill -9 after ClickHouse acknowledged rows past the saved checkpoint (an open transaction's
// batches, the rows sent at SIGTERM, rotations): the checkpoint is older than what ClickHouse holds.
// A move to the replica must number rows above those, not above the checkpoint's file.
TEST_F(LineageTest, RowsPastTheCheckpointStayBelowTheEpochOfAMove) {
  ASSERT_TRUE(p_.connected());
  p_.Exec("FLUSH BINARY LOGS");
  CreateTable(200);
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "the first time");
  const std::string old_checkpoint = ReadFile(p_.state() + "/checkpoint.json");
  ASSERT_NE(old_checkpoint.find("binlog.000002"), std::string::npos) << old_checkpoint;

  // Rows numbered in binlog.000005 reach ClickHouse…
  p_.ExecAll({"FLUSH BINARY LOGS", "FLUSH BINARY LOGS", "FLUSH BINARY LOGS",
              "UPDATE t SET v = 1, s = 'past the checkpoint' WHERE id <= 100"});
  r = p_.Run();
  ASSERT_RUN_OK(r, "past the old checkpoint");
  // …and the process dies before the checkpoint recording them is saved.
  std::ofstream(p_.state() + "/checkpoint.json", std::ios::trunc) << old_checkpoint;

  p_.ExecAll({"UPDATE t SET v = 2, s = 'after the move' WHERE id <= 100", "DELETE FROM t WHERE id > 190"});
  ASSERT_TRUE(pair_.WaitReplicaCaughtUp());
  p_.SetRunSources(pair_.replica_url());
  p_.ConnectSource(pair_.replica_url());
  r = p_.Run();
  ASSERT_RUN_OK(r, "on the replica");
  EXPECT_NE(r.err.find("moving the pipe from server_id 11"), std::string::npos) << r.Describe();
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after a move with rows past the checkpoint in ClickHouse");
}

// docs/failover.md promises that a new primary lacking transactions the pipe applied is refused.
// Rows sent past the saved checkpoint count too: a replica promoted before it had them would
// leave ClickHouse with rows its new primary never had.
TEST_F(LineageTest, ANewPrimaryWithoutTheRowsSentPastTheCheckpointIsRefused) {
  ASSERT_TRUE(p_.connected());
  CreateTable(100);
  ASSERT_TRUE(pair_.WaitReplicaCaughtUp());
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "the snapshot");
  const std::string old_checkpoint = ReadFile(p_.state() + "/checkpoint.json");
  auto replica = pair_.ConnectReplica();
  ASSERT_NE(replica, nullptr);
  ASSERT_TRUE(replica->Execute("STOP SLAVE").ok());
  p_.ExecAll({"UPDATE t SET v = 1, s = 'never on the replica' WHERE id <= 10"});
  r = p_.Run();
  ASSERT_RUN_OK(r, "rows the replica does not have");
  std::ofstream(p_.state() + "/checkpoint.json", std::ios::trunc)
      << old_checkpoint;  // kill -9 before the save

  p_.SetRunSources(pair_.replica_url());
  r = p_.Run();
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_NE(r.err.find("lacks transactions whose rows chsync already sent to ClickHouse"), std::string::npos)
      << r.Describe();
  EXPECT_NE(r.err.find("domain 0: has 0-11-"), std::string::npos) << r.Describe();

  // Once it has them, it serves.
  ASSERT_TRUE(replica->Execute("START SLAVE").ok());
  ASSERT_TRUE(pair_.WaitReplicaCaughtUp());
  r = p_.Run();
  ASSERT_RUN_OK(r, "on the replica once caught up");
  p_.ConnectSource(pair_.replica_url());
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "on the replica");
}

}  // namespace
}  // namespace chsync
