// `chsync run` into a ClickHouse cluster (docs/clusters.md): two ClickHouse 18.16 nodes with a
// private ZooKeeper, as the clusters `replicated` (1 shard × 2 replicas) and `sharded` (2 shards ×
// 1 replica) that scripts/test-servers defines over them. After each run, the FINAL view through
// every node must equal the source value for value, with no key twice; nodes are killed and
// ZooKeeper stopped in the middle of streaming and schema changes.
//
// Every test of this binary holds ctest's RESOURCE_LOCK chsync_cluster (pipe_cluster.cmake): the
// fault tests stop servers that the others use.

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/test_util.h"
#include "pipe_compare.h"
#include "pipe_harness.h"
#include "test_env.h"

namespace chsync {
namespace {

using chsync::test::ReadText;
using chsync::test::WriteText;
using testing::BackgroundProcess;
using testing::CommandResult;
using testing::Dest;
using testing::MakeTempDir;
using testing::PipeTest;
using testing::QueryDestination;
using testing::RequireEnv;
using testing::RunCommand;

/// Replication server ids of this binary (pipe_e2e_test uses 1000000 + …, pipe_correctness 7000000).
constexpr int kServerIdBase = 9000000;

struct Topology {
  std::string cluster;
  std::string path;  ///< --dest-replication-path: the nodes' shard macro for this cluster
  bool sharded;
};

const Topology kReplicated{"replicated", "/clickhouse/tables/{replicated_shard}/{database}/{table}", false};
const Topology kSharded{"sharded", "/clickhouse/tables/{sharded_shard}/{database}/{table}", true};

std::string Name(const ::testing::TestParamInfo<Topology>& info) {
  return info.param.cluster;
}

/// One node's answer to `sql` (TabSeparated, trailing newline removed); "" with a failure recorded.
std::string NodeValue(const std::string& node, const std::string& sql) {
  std::string error;
  auto rows = QueryDestination(node, sql, &error);
  if (!rows) {
    ADD_FAILURE() << "ClickHouse at " << node << ": " << sql << ": " << error;
    return "";
  }
  if (rows->empty() || rows->front().empty()) return "";
  return rows->front().front().value_or("");
}

/// A pipe whose destination is the cluster: --dest lists both nodes, queries go to node 1.
class ClusterPipe : public PipeTest {
 public:
  void Init(const Topology& topology, const std::string& prefix) {
    topology_ = topology;
    PipeTest::Init("CHSYNC_TEST_MYSQL_FULL", Dest::kServer, prefix, kServerIdBase,
                   "CHSYNC_TEST_CLICKHOUSE_NODE1");
    nodes_ = {RequireEnv("CHSYNC_TEST_CLICKHOUSE_NODE1"), RequireEnv("CHSYNC_TEST_CLICKHOUSE_NODE2")};
    all_ = RequireEnv("CHSYNC_TEST_CLICKHOUSE_NODES");
  }
  void Cleanup() {
    PipeTest::Cleanup();
    for (const std::string& db : {db(), db() + "_local"}) {
      std::string error;
      (void)QueryDestination(nodes_[0],
                             "DROP DATABASE IF EXISTS `" + db + "` ON CLUSTER " + topology_.cluster, &error);
    }
  }

  std::vector<std::string> Args(bool until_caught_up, const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> argv = RunArgs(db() + ".*", until_caught_up, extra);
    for (size_t i = 0; i + 1 < argv.size(); ++i) {
      if (argv[i] == "--dest") argv[i + 1] = all_;
    }
    // nokey has no key: replicated as its distinct rows.
    argv.insert(argv.end(), {"--dest-cluster", topology_.cluster, "--dest-replication-path", topology_.path,
                             "--batch-age-ms", "200", "--schema-policy", db() + ".nokey:keyless=distinct"});
    return argv;
  }
  CommandResult RunCluster(const std::vector<std::string>& extra = {}) const {
    return RunCommand(Args(true, extra), 300'000);
  }

  /// Every node's FINAL view of `table` equals the source (replicas may need a moment to fetch
  /// the last parts: each is asked again for up to 30 s).
  void ExpectEveryNodeEqual(const std::string& table, const std::string& when) {
    for (const std::string& node : nodes_) {
      std::string report;
      for (int attempt = 0; attempt < 60; ++attempt) {
        report = testing::CompareTable(conn(), node, db(), table);
        if (report.empty()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
      EXPECT_TRUE(report.empty()) << "ClickHouse table " << table << " through " << node
                                  << " differs from the source " << when << ":\n"
                                  << report;
    }
  }

  /// "engine" of db(.local).table on node `n`.
  std::string Engine(size_t n, const std::string& database, const std::string& table) const {
    return NodeValue(nodes_[n], "SELECT engine FROM system.tables WHERE database = '" + database +
                                    "' AND name = '" + table + "'");
  }

  /// Every row of `table` on the shard its Distributed table names, no key on both (pipe_harness.h).
  void ExpectRowsOnTheirShards(const std::string& table) {
    testing::ExpectRowsOnTheirShards(nodes_, db(), table);
  }

  /// `chsync verify` of the test database through `dest` (every node by default).
  CommandResult Verify(const std::string& dest = "") const {
    return RunCommand(
        {testing::ChsyncBinary(), "verify", "--source", source_url(), "--dest", dest.empty() ? all_ : dest,
         "--tables", db() + ".*", "--state", state(), "--chunk-rows", "1000"},
        300'000);
  }

  const std::vector<std::string>& nodes() const { return nodes_; }
  const Topology& topology() const { return topology_; }

 private:
  Topology topology_;
  std::vector<std::string> nodes_;
  std::string all_;
};

class ClusterScenario : public ::testing::TestWithParam<Topology> {
 protected:
  void SetUp() override { pipe_.Init(GetParam(), "cluster"); }
  void TearDown() override { pipe_.Cleanup(); }
  ClusterPipe pipe_;
};

TEST_P(ClusterScenario, SnapshotStreamingAndSchemaChangesReachEveryNode) {
  ASSERT_TRUE(pipe_.connected());
  const bool sharded = GetParam().sharded;
  pipe_.ExecAll({
      "CREATE TABLE orders (id INT PRIMARY KEY, customer VARCHAR(40) NOT NULL, amount DECIMAL(12,2), "
      "placed DATETIME NOT NULL, note TEXT)",
      "INSERT INTO orders SELECT seq, CONCAT('c', seq % 97), seq * 1.25, '2026-01-01 00:00:00' + INTERVAL "
      "seq "
      "MINUTE, IF(seq % 5 = 0, NULL, REPEAT('n', seq % 30)) FROM seq_1_to_3000",
      "CREATE TABLE tags (a INT NOT NULL, b VARCHAR(10) NOT NULL, v INT, PRIMARY KEY (a, b))",
      "INSERT INTO tags SELECT seq % 50, CONCAT('b', seq % 7), seq FROM seq_1_to_300",
      "CREATE TABLE nokey (x INT, y VARCHAR(10))",
      "INSERT INTO nokey VALUES (1, 'a'), (1, 'b'), (2, NULL)",
  });
  CommandResult first = pipe_.RunCluster();
  ASSERT_RUN_OK(first, "(snapshot)");
  for (const char* t : {"orders", "tags", "nokey"}) pipe_.ExpectEveryNodeEqual(t, "after the snapshot");
  CommandResult status = pipe_.ChsyncStatus();
  EXPECT_NE(status.out.find("destination    cluster " + GetParam().cluster + " ("), std::string::npos)
      << status.Describe();
  // Sharded: --dest names a node of each shard, so chsync writes to each shard itself.
  EXPECT_NE(status.out.find(sharded ? "), writing to shard 1 http://127.0.0.1:"
                                    : "), writing to http://127.0.0.1:"),
            std::string::npos)
      << status.Describe();

  // The tables: Replicated on every node; with shards, local ones under Distributed ones.
  for (size_t n = 0; n < 2; ++n) {
    if (sharded) {
      EXPECT_EQ(pipe_.Engine(n, pipe_.db() + "_local", "orders"), "ReplicatedReplacingMergeTree");
      EXPECT_EQ(pipe_.Engine(n, pipe_.db(), "orders"), "Distributed");
    } else {
      EXPECT_EQ(pipe_.Engine(n, pipe_.db(), "orders"), "ReplicatedReplacingMergeTree");
    }
  }
  if (sharded) {
    // Rows are spread over both shards, and no key is on both.
    const std::string local = "`" + pipe_.db() + "_local`.orders";
    std::string on1 = NodeValue(pipe_.nodes()[0], "SELECT count() FROM " + local);
    std::string on2 = NodeValue(pipe_.nodes()[1], "SELECT count() FROM " + local);
    EXPECT_GT(std::stoll(on1.empty() ? "0" : on1), 500) << on1 << " / " << on2;
    EXPECT_GT(std::stoll(on2.empty() ? "0" : on2), 500) << on1 << " / " << on2;
    std::set<std::string> ids;
    size_t both = 0;
    for (const std::string& node : pipe_.nodes()) {
      std::string error;
      auto rows = QueryDestination(node, "SELECT DISTINCT id FROM " + local, &error);
      ASSERT_TRUE(rows.has_value()) << error;
      for (const auto& row : *rows) {
        std::string id = row.at(0).value_or("");
        both += ids.insert(id).second ? 0 : 1;
      }
    }
    EXPECT_EQ(both, 0u) << "keys stored on both shards";
  }

  // Streaming: updates, deletes, key changes, and the seeds' schema changes.
  pipe_.ExecAll({
      "UPDATE orders SET amount = amount + 1 WHERE id % 10 = 0",
      "DELETE FROM orders WHERE id % 17 = 0",
      "UPDATE orders SET id = id + 100000 WHERE id BETWEEN 1 AND 40",
      "UPDATE tags SET b = 'moved' WHERE a = 3 AND b = 'b3'",
      "DELETE FROM nokey WHERE x = 2",
      "ALTER TABLE orders ADD COLUMN status VARCHAR(10) NOT NULL DEFAULT 'new'",
      "INSERT INTO orders (id, customer, amount, placed, status) VALUES (900001, 'z', 1.5, NOW(), 'paid')",
      "ALTER TABLE orders ADD COLUMN flag INT",
      "UPDATE orders SET flag = id % 3 WHERE id % 4 = 0",
      "ALTER TABLE orders MODIFY amount DECIMAL(18,4)",
      "UPDATE orders SET amount = amount / 3 WHERE id % 9 = 0",
      "ALTER TABLE orders DROP COLUMN note",
      "ALTER TABLE tags MODIFY v BIGINT",
      "UPDATE tags SET v = v * 10000000000 WHERE a % 2 = 0",
      "CREATE TABLE later (k INT PRIMARY KEY, s VARCHAR(20))",
      "INSERT INTO later SELECT seq, CONCAT('s', seq) FROM seq_1_to_200",
      "RENAME TABLE later TO renamed",
      "UPDATE renamed SET s = 'after rename' WHERE k < 50",
      "CREATE TABLE gone (k INT PRIMARY KEY)",
      "INSERT INTO gone VALUES (1), (2)",
      "DROP TABLE gone",
      "INSERT INTO tags VALUES (1000, 'x', 1)",
      "TRUNCATE TABLE tags",
      "INSERT INTO tags VALUES (1, 'after', 2), (2, 'after', 3)",
  });
  CommandResult second = pipe_.RunCluster();
  ASSERT_RUN_OK(second, "(streaming)");
  for (const char* t : {"orders", "tags", "nokey", "renamed"})
    pipe_.ExpectEveryNodeEqual(t, "after streaming");
  if (sharded) {
    // --dest names a node of each shard: chsync sent the streamed rows to the shards itself.
    EXPECT_NE(second.err.find("chsync sends each row to its shard"), std::string::npos) << second.Describe();
    for (const char* t : {"orders", "tags", "nokey", "renamed"}) pipe_.ExpectRowsOnTheirShards(t);
  }

  // The dropped column stays (drop_column=keep), NULL from then on; the schema log has the changes.
  for (size_t n = 0; n < 2; ++n) {
    const std::string& node = pipe_.nodes()[n];
    EXPECT_EQ(NodeValue(node, "SELECT count() FROM system.columns WHERE database = '" + pipe_.db() +
                                  "' AND table = 'orders' AND name IN ('note', 'status', 'flag')"),
              "3")
        << node;
    EXPECT_EQ(NodeValue(node, "SELECT count() FROM system.tables WHERE database = '" + pipe_.db() +
                                  "' AND name = 'later'"),
              "0")
        << node;
    std::string logged = NodeValue(node, "SELECT count() FROM `" + pipe_.db() + "`._chsync_schema_log FINAL");
    EXPECT_GE(std::stoll(logged.empty() ? "0" : logged), 8) << node;
  }
}

// `chsync verify` of a cluster copy: through the Distributed tables (several shards) or the
// replicated tables, from every node; rows changed on one shard's node are found and named.
// Issue 33, case 4: a kill -9 right after one ClickHouse step of a multi-step change, then a run
// that must finish the change: an ALTER run on every shard but not yet settled nor its Distributed
// table made again; a rebuild swap whose second rename ran before its Distributed table was made;
// a TRUNCATE's replacement table made, and swapped in. (CHSYNC_CRASH_AT ends chsync at the point
// with _exit, as SIGKILL would: src/common/crash_point.h.)
TEST_P(ClusterScenario, AKillBetweenAnyTwoStepsOfAChangeConverges) {
  ASSERT_TRUE(pipe_.connected());
  pipe_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL, s VARCHAR(20))",
                 "INSERT INTO t SELECT seq, seq, 'a' FROM seq_1_to_200"});
  ASSERT_RUN_OK(pipe_.RunCluster(), "(snapshot)");
  struct Step {
    const char* point;
    std::vector<std::string> statements;
  };
  const std::vector<Step> steps = {
      {"alter", {"ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 7", "UPDATE t SET c = id WHERE id <= 20"}},
      {"rename#2",  // the rebuild's swap: `t` aside, then the copy onto `t`
       {"ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (id, v)",
        "UPDATE t SET s = 'rebuilt' WHERE id <= 5"}},
      {"truncate.created", {"TRUNCATE TABLE t", "INSERT INTO t (id, v, s, c) VALUES (1, 1, 'after', 1)"}},
      {"truncate.swapped", {"TRUNCATE TABLE t", "INSERT INTO t (id, v, s, c) VALUES (2, 2, 'again', 2)"}},
  };
  for (const Step& step : steps) {
    SCOPED_TRACE(step.point);
    pipe_.ExecAll(step.statements);
    setenv("CHSYNC_CRASH_AT", step.point, 1);
    CommandResult crashed = pipe_.RunCluster();
    unsetenv("CHSYNC_CRASH_AT");
    EXPECT_EQ(crashed.exit_code, 137) << crashed.Describe();
    const std::string point = std::string(step.point).substr(0, std::string(step.point).find('#'));
    ASSERT_NE(crashed.err.find("crash point " + point), std::string::npos) << crashed.Describe();
    CommandResult again = pipe_.RunCluster();
    ASSERT_RUN_OK(again, std::string("after a kill at ") + step.point);
    pipe_.ExpectEveryNodeEqual("t", std::string("after a kill at ") + step.point);
  }
}

TEST_P(ClusterScenario, VerifyComparesTheClusterCopy) {
  ASSERT_TRUE(pipe_.connected());
  const bool sharded = GetParam().sharded;
  pipe_.ExecAll({
      "CREATE TABLE orders (id INT PRIMARY KEY, customer VARCHAR(40) NOT NULL, amount DECIMAL(12,2), "
      "placed DATETIME NOT NULL)",
      "INSERT INTO orders SELECT seq, CONCAT('c', seq), seq * 1.25, '2026-01-01 00:00:00' + INTERVAL seq "
      "MINUTE FROM seq_1_to_5000",
      "CREATE TABLE codes (code VARCHAR(10) PRIMARY KEY, v INT)",
      "INSERT INTO codes SELECT CONCAT('k', seq), seq FROM seq_1_to_300",
      "CREATE TABLE nokey (x INT, y VARCHAR(10))",
      "INSERT INTO nokey VALUES (1, 'a'), (1, 'a'), (2, NULL)",
  });
  ASSERT_RUN_OK(pipe_.RunCluster(), "(snapshot)");
  pipe_.ExecAll(
      {"UPDATE orders SET amount = amount + 1 WHERE id % 10 = 0", "DELETE FROM orders WHERE id % 17 = 0"});
  ASSERT_RUN_OK(pipe_.RunCluster(), "(streaming)");
  for (const char* t : {"orders", "codes"}) pipe_.ExpectEveryNodeEqual(t, "before verify");

  CommandResult equal = pipe_.Verify();
  EXPECT_EQ(equal.exit_code, 0) << equal.Describe();
  EXPECT_NE(equal.out.find("verify: 3 table(s) equal"), std::string::npos) << equal.Describe();
  CommandResult second_node = pipe_.Verify(pipe_.nodes()[1]);
  EXPECT_EQ(second_node.exit_code, 0) << second_node.Describe();

  // A newer version of one row and a tombstone of another, written on the node that holds them
  // (the shard's local table; with one shard, the replicated table itself).
  const std::string database = sharded ? pipe_.db() + "_local" : pipe_.db();
  auto holder = [&](const std::string& table, const std::string& where) -> std::string {
    if (!sharded) return pipe_.nodes()[0];
    for (const std::string& node : pipe_.nodes()) {
      if (NodeValue(node, "SELECT count() FROM `" + database + "`.`" + table + "` WHERE " + where) != "0")
        return node;
    }
    ADD_FAILURE() << "no shard holds " << table << " " << where;
    return pipe_.nodes()[0];
  };
  for (const auto& [table, where, insert] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"orders", "id = 1234",
            "(id, customer, amount, placed, _chsync_version, _chsync_is_deleted) VALUES "
            "(1234, 'changed', 1542.50, '2026-01-01 20:34:00', 18446744073709551000, 0)"},
           {"orders", "id = 77",
            "(id, customer, amount, placed, _chsync_version, _chsync_is_deleted) VALUES "
            "(77, 'c77', 96.25, '2026-01-01 01:17:00', 18446744073709551000, 1)"},
           {"codes", "code = 'k42'",
            "(code, v, _chsync_version, _chsync_is_deleted) VALUES ('k42', -42, "
            "18446744073709551000, 0)"}}) {
    std::string error;
    const std::string node = holder(table, where);
    ASSERT_TRUE(QueryDestination(node, "INSERT INTO `" + database + "`.`" + table + "` " + insert, &error))
        << node << ": " << error;
  }
  CommandResult v = pipe_.Verify();
  EXPECT_EQ(v.exit_code, 1) << v.Describe();
  EXPECT_NE(v.out.find("id=1234: customer: source 'c1234', destination 'changed'"), std::string::npos)
      << v.Describe();
  EXPECT_NE(v.out.find("id=77: missing in the destination"), std::string::npos) << v.Describe();
  EXPECT_NE(v.out.find("code='k42': v: source 42, destination -42"), std::string::npos) << v.Describe();
  EXPECT_NE(v.out.find("2 of 3 table(s) differ"), std::string::npos) << v.Describe();
}

INSTANTIATE_TEST_SUITE_P(Cluster, ClusterScenario, ::testing::Values(kReplicated, kSharded), Name);

/// Issue 33, case 5: a key's versions meet on one shard only while the routing stays the one its
/// rows were written under. The checkpoint records it; a checkpoint written under other weights
/// (as after a shard's weight or count changed in remote_servers) stops the pipe before any row is
/// routed, `chsync resync` copies every table under the new routing; a Distributed table someone
/// replaced is neither written through nor replaced.
TEST(ClusterRouting, AChangedRoutingOrDistributedTableStopsThePipe) {
  ClusterPipe pipe;
  pipe.Init(kSharded, "routing");
  ASSERT_TRUE(pipe.connected());
  pipe.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL, d DECIMAL(10,2), day DATE)",
                "INSERT INTO t SELECT seq, seq, seq / 4, '2024-01-01' + INTERVAL seq DAY FROM seq_1_to_300"});
  ASSERT_RUN_OK(pipe.RunCluster(), "(snapshot)");
  const std::string checkpoint_file = pipe.state() + "/checkpoint.json";
  nlohmann::json saved = nlohmann::json::parse(ReadText(checkpoint_file));
  ASSERT_TRUE(saved.contains("routing")) << saved.dump(2);
  EXPECT_EQ(saved["routing"]["cluster"], "sharded");
  EXPECT_EQ(saved["routing"]["weights"], nlohmann::json::array({1, 1}));
  EXPECT_EQ(saved["routing"]["key_text"], "18.16");

  // The rows so far were written as if the cluster's shard weights had been 2 and 1.
  saved["routing"]["weights"] = nlohmann::json::array({2, 1});
  WriteText(checkpoint_file, saved.dump(2));
  pipe.ExecAll({"UPDATE t SET v = v + 1000 WHERE id <= 50", "INSERT INTO t VALUES (301, 301, 1.25, NULL)"});
  CommandResult stopped = pipe.RunCluster();
  EXPECT_EQ(stopped.exit_code, 2) << stopped.Describe();
  EXPECT_NE(stopped.err.find("routed over 2 shards of cluster 'sharded' (weights 2, 1)"), std::string::npos)
      << stopped.Describe();
  EXPECT_NE(stopped.err.find("run `chsync resync` with the same flags"), std::string::npos)
      << stopped.Describe();
  EXPECT_EQ(pipe.DestValue("SELECT count() FROM " + pipe.DestTable("t") + " WHERE v > 1000"), "0")
      << "rows were routed under a changed routing";

  std::vector<std::string> resync = pipe.Args(true);
  resync[1] = "resync";
  ASSERT_RUN_OK(RunCommand(resync, 300'000), "(resync under the new routing)");
  saved = nlohmann::json::parse(ReadText(checkpoint_file));
  EXPECT_EQ(saved["routing"]["weights"], nlohmann::json::array({1, 1}));
  pipe.ExpectEveryNodeEqual("t", "after the resync");
  pipe.ExpectRowsOnTheirShards("t");

  // Someone replaces the Distributed table with one that shards at random.
  const std::string dist = "`" + pipe.db() + "`.`t`";
  const std::string local = "`" + pipe.db() + "_local`.`t`";
  for (const std::string& sql :
       {"DROP TABLE " + dist + " ON CLUSTER sharded", "CREATE TABLE " + dist + " ON CLUSTER sharded AS " +
                                                          local + " ENGINE = Distributed(sharded, `" +
                                                          pipe.db() + "_local`, t, rand())"}) {
    std::string error;
    ASSERT_TRUE(QueryDestination(pipe.nodes()[0], sql, &error).has_value()) << sql << ": " << error;
  }
  pipe.ExecAll({"UPDATE t SET v = v + 2000 WHERE id <= 50"});
  CommandResult refused = pipe.RunCluster();
  EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
  EXPECT_NE(refused.err.find("is not the Distributed table chsync makes"), std::string::npos)
      << refused.Describe();
  EXPECT_NE(refused.err.find("it shards by rand()"), std::string::npos) << refused.Describe();
  EXPECT_EQ(NodeValue(pipe.nodes()[0], "SELECT engine_full FROM system.tables WHERE database = '" +
                                           pipe.db() + "' AND name = 't'"),
            "Distributed(sharded, " + pipe.db() + "_local, t, rand())")
      << "the user's Distributed table was replaced";
  EXPECT_EQ(pipe.DestValue("SELECT count() FROM " + pipe.DestTable("t") + " WHERE v > 2000"), "0");

  // As the message says: the table copied again, under chsync's own Distributed table.
  std::vector<std::string> resync_table = pipe.Args(true, {"--table", pipe.db() + ".t"});
  resync_table[1] = "resync";
  ASSERT_RUN_OK(RunCommand(resync_table, 300'000), "(resync of t)");
  EXPECT_NE(NodeValue(pipe.nodes()[0], "SELECT engine_full FROM system.tables WHERE database = '" +
                                           pipe.db() + "' AND name = 't'")
                .find("cityHash64"),
            std::string::npos);
  pipe.ExpectEveryNodeEqual("t", "after the resync of t");
  pipe.ExpectRowsOnTheirShards("t");

  // Dropped, chsync makes its own again and goes on.
  std::string error;
  ASSERT_TRUE(
      QueryDestination(pipe.nodes()[0], "DROP TABLE " + dist + " ON CLUSTER sharded", &error).has_value())
      << error;
  ASSERT_RUN_OK(pipe.RunCluster(), "(its own Distributed table again)");
  pipe.ExpectEveryNodeEqual("t", "with chsync's Distributed table again");
  pipe.ExpectRowsOnTheirShards("t");
  pipe.Cleanup();
}

/// Rounds of row changes while a background `chsync run` streams; `during(round)` runs before each
/// round (kills and starts servers, schema changes).
void Workload(ClusterPipe& pipe, int rounds, const std::function<void(int)>& during) {
  for (int round = 0; round < rounds; ++round) {
    during(round);
    const std::string base = std::to_string(100000 + round * 1000);
    pipe.ExecAll({"INSERT INTO t (id, v) SELECT " + base + " + seq, CONCAT('r', seq) FROM seq_1_to_200",
                  "UPDATE t SET v = CONCAT(v, '+') WHERE id % 7 = " + std::to_string(round % 7),
                  "DELETE FROM t WHERE id % 50 = " + std::to_string(round)});
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
}

/// After a fault: the background run itself gets past it (a last row written after the workload
/// reaches ClickHouse within 240 s), stops cleanly, and every node equals the source.
void FinishAndCompare(ClusterPipe& pipe, BackgroundProcess& run, const std::string& when) {
  pipe.Exec("INSERT INTO t (id, v) VALUES (999999, 'last')");
  const std::string probe = "SELECT count() FROM `" + pipe.db() + "`.t FINAL WHERE id = 999999";
  bool arrived = false;
  for (int i = 0; i < 480 && !arrived && run.Running(); ++i) {
    std::string error;
    auto rows = QueryDestination(pipe.nodes()[0], probe, &error);
    arrived = rows && !rows->empty() && rows->front().at(0) == std::optional<std::string>("1");
    if (!arrived) std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  EXPECT_TRUE(arrived) << "the background run did not get past the fault " << when << ":\n" << run.Log();
  int stopped = run.SignalAndWait(SIGTERM, 120'000);
  EXPECT_EQ(stopped, 0) << "the background run, " << when << ":\n" << run.Log();
  CommandResult last = pipe.RunCluster();
  ASSERT_RUN_OK(last, "(catching up " + when + ")");
  pipe.ExpectEveryNodeEqual("t", when);
}

class ClusterFault : public ::testing::TestWithParam<Topology> {
 protected:
  void SetUp() override {
    pipe_.Init(GetParam(), "clusterfault");
    ASSERT_TRUE(pipe_.connected());
    pipe_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(40) NOT NULL)",
                   "INSERT INTO t SELECT seq, CONCAT('s', seq) FROM seq_1_to_2000"});
    CommandResult first = pipe_.RunCluster();
    ASSERT_RUN_OK(first, "(snapshot)");
  }
  void TearDown() override {
    // Whatever a test did, the servers run again for the next one.
    EXPECT_TRUE(testing::StartServer("CHSYNC_TEST_ZOOKEEPER"));
    EXPECT_TRUE(testing::StartServer("CHSYNC_TEST_CLICKHOUSE_NODE1"));
    EXPECT_TRUE(testing::StartServer("CHSYNC_TEST_CLICKHOUSE_NODE2"));
    pipe_.Cleanup();
  }
  ClusterPipe pipe_;
};

TEST_P(ClusterFault, NodeKilledInTheMiddleOfStreamingAndSchemaChanges) {
  // Replicated: the node chsync writes to dies, and it goes on through the other one. Sharded: a
  // shard is gone, and inserts and the ON CLUSTER ALTER wait until it is back.
  const std::string victim =
      GetParam().sharded ? "CHSYNC_TEST_CLICKHOUSE_NODE2" : "CHSYNC_TEST_CLICKHOUSE_NODE1";
  const std::string log = MakeTempDir("clusterfault-log") + "/run.log";
  auto run = BackgroundProcess::Start(pipe_.Args(false), log);
  ASSERT_TRUE(run.has_value());
  Workload(pipe_, 10, [&](int round) {
    if (round == 3) ASSERT_TRUE(testing::KillServer(victim));
    if (round == 4) pipe_.Exec("ALTER TABLE t ADD COLUMN n INT NOT NULL DEFAULT 3");
    if (round == 6) ASSERT_TRUE(testing::StartServer(victim));
    if (round == 7) pipe_.Exec("UPDATE t SET n = id % 5 WHERE id % 3 = 0");
  });
  if (!GetParam().sharded) {
    EXPECT_NE(run->Log().find("statements go to"), std::string::npos)
        << "chsync did not move to the other node:\n"
        << run->Log();
  }
  FinishAndCompare(pipe_, *run, "after a node was killed and started again");
}

TEST_P(ClusterFault, ZooKeeperStoppedForAWhile) {
  const std::string log = MakeTempDir("clusterfault-log") + "/run.log";
  auto run = BackgroundProcess::Start(pipe_.Args(false), log);
  ASSERT_TRUE(run.has_value());
  Workload(pipe_, 10, [&](int round) {
    if (round == 2) ASSERT_TRUE(testing::KillServer("CHSYNC_TEST_ZOOKEEPER"));
    if (round == 5) ASSERT_TRUE(testing::StartServer("CHSYNC_TEST_ZOOKEEPER"));
    if (round == 7) pipe_.Exec("ALTER TABLE t ADD COLUMN n INT NOT NULL DEFAULT 3");
    if (round == 8) pipe_.Exec("UPDATE t SET n = id % 5 WHERE id % 3 = 0");
  });
  FinishAndCompare(pipe_, *run, "after ZooKeeper was stopped and started again");
  EXPECT_NE(run->Log().find("retrying"), std::string::npos) << "no retry was logged:\n" << run->Log();
}

INSTANTIATE_TEST_SUITE_P(Cluster, ClusterFault, ::testing::Values(kReplicated, kSharded), Name);

// Issue 36: pipes connected to different nodes of a cluster alter a shared table one at a time
// (docs/mapping.md, "Several pipes, one table"). The lock is a replicated table at one ZooKeeper
// path per shared table: taken by hand through node 2, it makes a pipe connected to node 1 wait
// (naming its owner and node) until it is dropped; a pipe killed while it held the lock through
// node 1 takes it back when it starts again connected to node 2.
class ClusterFanIn : public ::testing::Test {
 protected:
  void SetUp() override { pipe_.Init(kReplicated, "clusterfanin"); }
  void TearDown() override {
    for (int i = 1; i <= 2; ++i) (void)pipe_.conn().Execute("DROP DATABASE IF EXISTS " + Tenant(i));
    pipe_.Cleanup();  // the lock too, wherever a failure left it
  }
  std::string Tenant(int i) const { return pipe_.db() + "_t" + std::to_string(i); }
  ClusterPipe pipe_;
};

TEST_F(ClusterFanIn, ALockTakenThroughAnotherNodeMakesAPipeWaitAndAKilledPipeTakesItsOwnBack) {
  ClusterPipe& pipe = pipe_;
  ASSERT_TRUE(pipe.connected());
  const std::string db = pipe.db();
  const std::string& node1 = pipe.nodes()[0];
  const std::string& node2 = pipe.nodes()[1];
  auto tenant = [&](int i) { return Tenant(i); };
  for (int i = 1; i <= 2; ++i) {
    pipe.ExecAll({"CREATE DATABASE " + tenant(i),
                  "CREATE TABLE " + tenant(i) + ".users (id INT PRIMARY KEY, v INT)",
                  "INSERT INTO " + tenant(i) + ".users SELECT seq, seq FROM seq_1_to_5"});
  }
  const std::string config = MakeTempDir("clusterfanin-config") + "/chsync.yaml";
  WriteText(config, "table_options:\n  \"" + db + "_t*.users\":\n    dest: " + db +
                        ".users\n    source_column: _source\n");
  // `dest`: the nodes in the order the pipe tries them (it is connected to the first).
  auto args = [&](bool until_caught_up, const std::string& dest) {
    std::vector<std::string> argv = pipe.RunArgs(db + "_t*.*", until_caught_up, {"--config", config});
    for (size_t i = 0; i + 1 < argv.size(); ++i) {
      if (argv[i] == "--dest") argv[i + 1] = dest;
    }
    argv.insert(argv.end(), {"--dest-cluster", kReplicated.cluster, "--dest-replication-path",
                             kReplicated.path, "--batch-age-ms", "200"});
    return argv;
  };
  const std::string node1_first = node1 + "," + node2;
  const std::string node2_first = node2 + "," + node1;
  ASSERT_RUN_OK(RunCommand(args(true, node1_first), 300'000), "(snapshot)");

  const std::string lock = "`" + db + "`.users__chsync_altering";
  const std::string path = "/chsync/alter_locks/" + db + "/users";
  auto column_on = [&](const std::string& node, const std::string& column) {
    return NodeValue(node, "SELECT count() FROM system.columns WHERE database = '" + db +
                               "' AND table = 'users' AND name = '" + column + "'");
  };
  auto lock_on = [&](const std::string& node) {
    return NodeValue(node, "SELECT count() FROM system.tables WHERE database = '" + db +
                               "' AND name = 'users__chsync_altering'");
  };
  auto path_left = [&] {
    return NodeValue(node1, "SELECT count() FROM system.zookeeper WHERE path = '/chsync/alter_locks/" + db +
                                "' AND name = 'users'");
  };
  std::string error;
  ASSERT_TRUE(QueryDestination(node2,
                               "CREATE TABLE " + lock +
                                   " (owner String DEFAULT 'another-host:/var/lib/chsync') ENGINE = "
                                   "ReplicatedMergeTree('" +
                                   path + "', 'lock') ORDER BY tuple()",
                               &error)
                  .has_value())
      << error;
  const std::string log = MakeTempDir("clusterfanin-log") + "/run.log";
  auto run = BackgroundProcess::Start(args(false, node1_first), log);
  ASSERT_TRUE(run.has_value());
  pipe.ExecAll({"ALTER TABLE " + tenant(1) + ".users ADD COLUMN c INT NOT NULL DEFAULT 3",
                "INSERT INTO " + tenant(1) + ".users (id, v, c) VALUES (6, 6, 6)"});
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        return run->Log().find("is held by 'another-host:/var/lib/chsync' through node 127.0.0.1:") !=
               std::string::npos;
      },
      60))
      << "the pipe connected to node 1 did not wait for the lock taken through node 2:\n"
      << run->Log();
  EXPECT_EQ(column_on(node1, "c"), "0") << "altered while a pipe on another node held the table";
  EXPECT_EQ(column_on(node2, "c"), "0") << "altered while a pipe on another node held the table";
  ASSERT_TRUE(QueryDestination(node2, "DROP TABLE " + lock, &error).has_value()) << error;
  ASSERT_TRUE(
      testing::WaitFor([&] { return column_on(node1, "c") == "1" && column_on(node2, "c") == "1"; }, 60))
      << run->Log();
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        return NodeValue(node1, "SELECT count() FROM `" + db + "`.users FINAL WHERE id = 6 AND c = 6") == "1";
      },
      60))
      << run->Log();
  EXPECT_EQ(lock_on(node1), "0") << "the pipe left its lock";
  EXPECT_EQ(path_left(), "0") << "the lock's ZooKeeper path stayed";
  EXPECT_EQ(run->SignalAndWait(SIGTERM, 60'000), 0) << run->Log();

  // Killed while it holds the lock, through node 1 (it is connected there).
  pipe.ExecAll({"ALTER TABLE " + tenant(2) + ".users ADD COLUMN c2 INT NOT NULL DEFAULT 4",
                "INSERT INTO " + tenant(2) + ".users (id, v, c2) VALUES (7, 7, 7)"});
  setenv("CHSYNC_CRASH_AT", "fan_in.locked", 1);
  CommandResult crashed = RunCommand(args(true, node1_first), 300'000);
  unsetenv("CHSYNC_CRASH_AT");
  ASSERT_EQ(crashed.exit_code, 137) << crashed.Describe();
  ASSERT_NE(crashed.err.find("crash point fan_in.locked"), std::string::npos) << crashed.Describe();
  EXPECT_EQ(lock_on(node1), "1");
  EXPECT_EQ(lock_on(node2), "0");
  EXPECT_EQ(column_on(node1, "c2"), "0");
  // Started again connected to node 2: the lock is its own, taken back at once.
  CommandResult again = RunCommand(args(true, node2_first), 300'000);
  ASSERT_RUN_OK(again, "(after a kill while it held the lock)");
  EXPECT_NE(again.err.find("is this pipe's, left by a stop in the middle of an ALTER: taken back"),
            std::string::npos)
      << again.Describe();
  EXPECT_EQ(again.err.find("waiting for another pipe"), std::string::npos) << again.Describe();
  for (const std::string& node : pipe.nodes()) {
    EXPECT_TRUE(testing::WaitFor(
        [&] {
          return NodeValue(node, "SELECT count() FROM `" + db + "`.users FINAL WHERE _source = '" +
                                     tenant(2) + "' AND id = 7 AND c2 = 7") == "1";
        },
        60))
        << node;
    EXPECT_EQ(lock_on(node), "0") << node;
  }
  EXPECT_EQ(path_left(), "0") << "the lock's ZooKeeper path stayed";
}

/// chsync's output of a run that must fail with exit 2 and say `what`; nothing is created.
void ExpectConfigError(ClusterPipe& pipe, const std::vector<std::string>& argv, const std::string& what) {
  CommandResult r = RunCommand(argv, 120'000);
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  EXPECT_NE(r.err.find(what), std::string::npos) << r.Describe();
  for (const std::string& node : pipe.nodes()) {
    EXPECT_EQ(NodeValue(node, "SELECT count() FROM system.databases WHERE name LIKE '" + pipe.db() + "%'"),
              "0")
        << "something was created on " << node;
  }
}

TEST(ClusterConfig, CheckReportsTopologyMacrosAndZooKeeper) {
  // A table of its own at the source: `check` blocks when the source has none to replicate.
  ClusterPipe pipe;
  pipe.Init(kSharded, "clustercheck");
  ASSERT_TRUE(pipe.connected());
  pipe.Exec("CREATE TABLE t (id INT PRIMARY KEY)");
  const std::string nodes = RequireEnv("CHSYNC_TEST_CLICKHOUSE_NODES");
  std::vector<std::string> argv = {testing::ChsyncBinary(),
                                   "check",
                                   "--source",
                                   pipe.source_url(),
                                   "--dest",
                                   nodes,
                                   "--tables",
                                   pipe.db() + ".*",
                                   "--dest-cluster",
                                   "sharded",
                                   "--dest-replication-path",
                                   kSharded.path};
  CommandResult good = RunCommand(argv, 120'000);
  EXPECT_EQ(good.exit_code, 0) << good.Describe();
  EXPECT_NE(good.out.find("topology                   2 shards × 1 replica (shard 1: 127.0.0.1:"),
            std::string::npos)
      << good.Describe();
  EXPECT_NE(good.out.find("macros replica=node2 replicated_shard=r1 sharded_shard=s2; ZooKeeper answers"),
            std::string::npos)
      << good.Describe();

  argv.back() = "/clickhouse/tables/{shard}/{database}/{table}";
  CommandResult macro = RunCommand(argv, 120'000);
  EXPECT_EQ(macro.exit_code, 1) << macro.Describe();
  EXPECT_NE(macro.out.find("has no macro {shard}"), std::string::npos) << macro.Describe();

  argv[9] = "nosuch";
  CommandResult unknown = RunCommand(argv, 120'000);
  EXPECT_EQ(unknown.exit_code, 1) << unknown.Describe();
  EXPECT_NE(unknown.out.find("cluster 'nosuch' is not defined"), std::string::npos) << unknown.Describe();
  pipe.Cleanup();
}

TEST(ClusterConfig, BadClusterSettingsAreClearErrors) {
  ClusterPipe pipe;
  pipe.Init(kSharded, "clusterconf");
  ASSERT_TRUE(pipe.connected());
  pipe.Exec("CREATE TABLE t (id INT PRIMARY KEY)");
  std::vector<std::string> argv = pipe.Args(true);

  std::vector<std::string> unknown = argv;
  for (size_t i = 0; i + 1 < unknown.size(); ++i) {
    if (unknown[i] == "--dest-cluster") unknown[i + 1] = "nosuch";
  }
  ExpectConfigError(pipe, unknown, "has no cluster 'nosuch' (its clusters: ");

  // The default path's {shard} macro: these nodes have replicated_shard and sharded_shard instead.
  std::vector<std::string> macro = argv;
  for (size_t i = 0; i + 1 < macro.size(); ++i) {
    if (macro[i] == "--dest-replication-path") macro[i + 1] = "/clickhouse/tables/{shard}/{database}/{table}";
  }
  ExpectConfigError(pipe, macro, "macro {shard} (used by dest_replication_path");

  std::vector<std::string> path = argv;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    if (path[i] == "--dest-replication-path") path[i + 1] = "clickhouse/{sharded_shard}/{table}";
  }
  ExpectConfigError(pipe, path, "dest_replication_path must be a ZooKeeper path starting with '/'");
  pipe.Cleanup();
}

}  // namespace
}  // namespace chsync
