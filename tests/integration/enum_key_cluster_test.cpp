// `chsync run` of a table without a primary key whose key (every column) holds a Nullable ENUM
// that declares '' itself, into the test cluster `sharded` (2 shards × 1 replica, ClickHouse
// 18.16): issue 33, case 7. The key enters the sorting key as isNull(e), assumeNotNull(e), and
// the Distributed table shards by cityHash64(toString(tuple(…))). A NULL stores the enum value 0,
// so 0 must have a label for toString to print it (src/clickhouse/type_mapping.cpp, MapEnum).
// Both ways rows reach the shards are run: chsync sending each row to its shard (--dest names a
// node of each shard) and the Distributed table routing them (--dest names node 1 only).
//
// Every test of this binary holds ctest's RESOURCE_LOCK chsync_cluster (enum_key_cluster.cmake):
// pipe_cluster_test stops the servers these tests use.

#include <gtest/gtest.h>

#include <chrono>
#include <set>
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
using testing::PipeTest;
using testing::QueryDestination;
using testing::RequireEnv;
using testing::RunCommand;

/// Replication server ids of this binary (pipe_cluster_test uses 9000000 + …).
constexpr int kServerIdBase = 45000000;

enum class Writes { kRouted, kDistributed };

std::string Name(const ::testing::TestParamInfo<Writes>& info) {
  return info.param == Writes::kRouted ? "RoutedByChsync" : "ThroughDistributedTable";
}

/// One node's answer to `sql` (first field of the first row); "" with a failure recorded.
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

class EnumKeyCluster : public ::testing::TestWithParam<Writes> {
 protected:
  void SetUp() override {
    pipe_.Init("CHSYNC_TEST_MYSQL_FULL", Dest::kServer, "enumkey", kServerIdBase,
               "CHSYNC_TEST_CLICKHOUSE_NODE1");
    nodes_ = {RequireEnv("CHSYNC_TEST_CLICKHOUSE_NODE1"), RequireEnv("CHSYNC_TEST_CLICKHOUSE_NODE2")};
  }
  void TearDown() override {
    pipe_.Cleanup();
    for (const std::string& db : {pipe_.db(), pipe_.db() + "_local"}) {
      std::string error;
      (void)QueryDestination(nodes_[0], "DROP DATABASE IF EXISTS `" + db + "` ON CLUSTER sharded", &error);
    }
  }

  CommandResult Run() const {
    std::vector<std::string> argv = pipe_.RunArgs(pipe_.db() + ".*", true, {});
    if (GetParam() == Writes::kRouted) {
      for (size_t i = 0; i + 1 < argv.size(); ++i) {
        if (argv[i] == "--dest") argv[i + 1] = RequireEnv("CHSYNC_TEST_CLICKHOUSE_NODES");
      }
    }
    argv.insert(argv.end(), {"--dest-cluster", "sharded", "--dest-replication-path",
                             "/clickhouse/tables/{sharded_shard}/{database}/{table}", "--batch-age-ms", "200",
                             "--schema-policy", "keyless=distinct"});
    return RunCommand(argv, 300'000);
  }

  /// Every node's FINAL view of `table` equals the source (each asked again for up to 30 s).
  void ExpectEveryNodeEqual(const std::string& table, const std::string& when) {
    for (const std::string& node : nodes_) {
      std::string report;
      for (int attempt = 0; attempt < 60; ++attempt) {
        report = testing::CompareTable(pipe_.conn(), node, pipe_.db(), table);
        if (report.empty()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
      EXPECT_TRUE(report.empty()) << "ClickHouse table " << table << " through " << node
                                  << " differs from the source " << when << ":\n"
                                  << report;
    }
  }

  /// Every row of `table` on the shard its Distributed table names, no key on both (pipe_harness.h).
  void ExpectRowsOnTheirShards(const std::string& table) {
    testing::ExpectRowsOnTheirShards(nodes_, pipe_.db(), table);
  }

  /// NULL rows of `table` on each shard, as "n1/n2".
  std::string NullsPerShard(const std::string& table) {
    const std::string sql = "SELECT count() FROM `" + pipe_.db() + "_local`.`" + table + "` WHERE e IS NULL";
    return NodeValue(nodes_[0], sql) + "/" + NodeValue(nodes_[1], sql);
  }

  PipeTest pipe_;
  std::vector<std::string> nodes_;
};

TEST_P(EnumKeyCluster, NullEmptyAndOtherLabelsOfAKeyEnumReachTheirShards) {
  ASSERT_TRUE(pipe_.connected());
  // '' declared, and not first: its index is 2; x keeps rows distinct (the key is the whole row).
  pipe_.ExecAll({
      "CREATE TABLE k (e ENUM('a', '', 'b') NULL, x INT)",
      "INSERT INTO k SELECT IF(seq % 4 = 0, NULL, ELT(seq % 4, 'a', '', 'b')), seq FROM seq_1_to_400",
      "INSERT INTO k VALUES (NULL, NULL)",
  });
  CommandResult first = Run();
  ASSERT_RUN_OK(first, "(snapshot)");
  ExpectEveryNodeEqual("k", "after the snapshot");
  ExpectRowsOnTheirShards("k");
  // 101 NULLs spread over both shards.
  const std::string nulls = NullsPerShard("k");
  EXPECT_EQ(nulls.find("0/"), std::string::npos) << nulls;
  EXPECT_EQ(nulls.find("/0"), std::string::npos) << nulls;

  // Streaming: new NULLs, values made NULL and NULLs made '' or 'b' (a key change: the old version
  // is deleted on its shard), deletes of NULL and other rows.
  pipe_.ExecAll({
      "INSERT INTO k SELECT IF(seq % 2 = 0, NULL, ''), seq FROM seq_1001_to_1100",
      "UPDATE k SET e = NULL WHERE x % 10 = 1 AND x < 400",
      "UPDATE k SET e = '' WHERE e IS NULL AND x % 3 = 0",
      "UPDATE k SET e = 'b' WHERE e IS NULL AND x % 3 = 1 AND x < 400",
      "UPDATE k SET x = x + 5000 WHERE e IS NULL AND x % 7 = 2",
      "DELETE FROM k WHERE x % 11 = 0",
      "DELETE FROM k WHERE e IS NULL AND x % 5 = 3",
      "DELETE FROM k WHERE x IS NULL",
  });
  CommandResult second = Run();
  ASSERT_RUN_OK(second, "(streaming)");
  if (GetParam() == Writes::kRouted) {
    EXPECT_NE(second.err.find("chsync sends each row to its shard"), std::string::npos) << second.Describe();
    EXPECT_EQ(second.err.find("go through its Distributed table"), std::string::npos) << second.Describe();
  }
  ExpectEveryNodeEqual("k", "after streaming");
  ExpectRowsOnTheirShards("k");
}

INSTANTIATE_TEST_SUITE_P(Cluster, EnumKeyCluster, ::testing::Values(Writes::kRouted, Writes::kDistributed),
                         Name);

}  // namespace
}  // namespace chsync
