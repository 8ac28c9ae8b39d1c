#include "clickhouse/cluster.h"

#include <gtest/gtest.h>

#include "clickhouse/ddl.h"

namespace chsync::clickhouse {
namespace {

TEST(ClusterTest, TopologyFromSystemClusters) {
  // As ClickHouse 18.16 answers TopologyQuery for the test cluster `replicated` (1 shard × 2).
  auto t = ParseTopology("replicated", "1\t1\t127.0.0.1\t39527\n1\t2\t127.0.0.1\t22995\n");
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(t->shards(), 1u);
  EXPECT_EQ(t->max_replicas(), 2u);
  EXPECT_EQ(t->Describe(), "1 shard × 2 replicas (shard 1: 127.0.0.1:39527, 127.0.0.1:22995)");

  auto s = ParseTopology("sharded", "2\t1\t127.0.0.1\t22995\n1\t1\t127.0.0.1\t39527\n");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->shards(), 2u);
  EXPECT_EQ(s->max_replicas(), 1u);
  EXPECT_EQ(s->Describe(), "2 shards × 1 replica (shard 1: 127.0.0.1:39527; shard 2: 127.0.0.1:22995)");
  EXPECT_EQ(s->ShardWeights(), (std::vector<uint32_t>{1, 1}));

  auto w = ParseTopology("weighted", "1\t1\ta\t9000\t3\n1\t2\tb\t9000\t3\n2\t1\tc\t9000\t1\n");
  ASSERT_TRUE(w.ok()) << w.error().message();
  EXPECT_EQ(w->ShardWeights(), (std::vector<uint32_t>{3, 1}));
  EXPECT_FALSE(ParseTopology("c", "1\t1\th\t9000\tx\n").ok());
}

TEST(ClusterTest, UnknownClusterAndBadRowsAreErrors) {
  auto none = ParseTopology("nocluster", "");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().kind(), ErrorKind::kConfig);
  EXPECT_NE(none.error().message().find("'nocluster' is not defined"), std::string::npos);
  auto bad = ParseTopology("c", "1\tx\t127.0.0.1\t9000\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind(), ErrorKind::kServer);
  EXPECT_FALSE(ParseTopology("c", "1\t1\t\t9000\n").ok());
  EXPECT_FALSE(ParseTopology("c", "1\t1\th\t99999\n").ok());
}

TEST(ClusterTest, ReplicationPathFillsNamesAndAppendsTheToken) {
  EXPECT_EQ(ReplicationPath("/clickhouse/tables/{shard}/{database}/{table}", "shop", "orders", "k1"),
            "/clickhouse/tables/{shard}/shop/orders/k1");
  EXPECT_EQ(ReplicationPath("/ch/{sharded_shard}/{db}/{table}/", "d", "t", ""), "/ch/{sharded_shard}/d/t");
  EXPECT_EQ(ServerMacros("/clickhouse/tables/{shard}/{database}/{table}"), std::vector<std::string>{"shard"});
  EXPECT_EQ(ServerMacros("/a/{layer}-{shard}/{db}/{table}/{shard}"),
            (std::vector<std::string>{"layer", "shard"}));
}

TEST(ClusterTest, DistributedTableOverTheLocalOne) {
  EXPECT_EQ(LocalDatabase("shop"), "shop_local");
  EXPECT_EQ(
      CreateDistributed("shop", "orders", "shop_local", "sharded", "isNull(id), assumeNotNull(id)"),
      "CREATE TABLE IF NOT EXISTS `shop`.`orders` ON CLUSTER `sharded` AS `shop_local`.`orders` ENGINE = "
      "Distributed(`sharded`, `shop_local`, `orders`, cityHash64(toString(tuple(isNull(id), "
      "assumeNotNull(id)))))");
}

TEST(ClusterTest, ADistributedTableChsyncMadeIsRecognisedAsEveryVersionPrintsIt) {
  // As 18.16 printed chsync's own statement (tuple printed as a parenthesised list) and as later
  // versions keep it; names quoted or not.
  EXPECT_EQ(DistributedDiffers("Distributed(sharded, shop_local, t, cityHash64(toString((id, s))))",
                               "sharded", "shop_local", "t", "id, s"),
            std::nullopt);
  EXPECT_EQ(
      DistributedDiffers("Distributed(`my-cluster`, 'shop_local', `t\\`x`, cityHash64(toString(tuple(id))))",
                         "my-cluster", "shop_local", "t`x", "id"),
      std::nullopt);
}

TEST(ClusterTest, ADistributedTableTheUserChangedIsNamedWithTheDifference) {
  auto differs = [](std::string_view engine) {
    auto d = DistributedDiffers(engine, "sharded", "shop_local", "t", "id");
    return d ? d->what : std::string("(same)");
  };
  EXPECT_EQ(differs("Distributed('sharded', shop_local, 't', rand())"),
            "it shards by rand(), not by cityHash64(toString(tuple(id)))");
  auto sharding = DistributedDiffers("Distributed(sharded, shop_local, t, intHash64(id))", "sharded",
                                     "shop_local", "t", "id");
  ASSERT_TRUE(sharding.has_value());
  EXPECT_EQ(sharding->kind, DistributedDifference::Kind::kShardingKey);
  EXPECT_EQ(sharding->sharding, "intHash64(id)");
  EXPECT_EQ(DistributedDiffers("Distributed(other, shop_local, t, intHash64(id))", "sharded", "shop_local",
                               "t", "id")
                ->kind,
            DistributedDifference::Kind::kOther);
  EXPECT_EQ(differs("Distributed(other, shop_local, t, cityHash64(toString((id))))"),
            "it is over cluster other, not sharded");
  EXPECT_EQ(differs("Distributed(sharded, shop_local, t2, cityHash64(toString((id))))"),
            "it reads shop_local.t2, not shop_local.t");
  EXPECT_EQ(differs("Distributed(sharded, shop_local, t)"),
            "its engine has 3 arguments, not 4 (Distributed(sharded, shop_local, t))");
  EXPECT_EQ(
      differs("Distributed(sharded, shop_local, t, cityHash64(toString((id))), 'ssd')"),
      "its engine has 5 arguments, not 4 (Distributed(sharded, shop_local, t, cityHash64(toString((id))), "
      "'ssd'))");
  EXPECT_EQ(differs("ReplacingMergeTree(_chsync_version) ORDER BY id"),
            "it is not a Distributed table (ReplacingMergeTree(_chsync_version) ORDER BY id)");
  // A comma inside a quoted name or a call does not split arguments.
  EXPECT_EQ(DistributedDiffers("Distributed('a,b', shop_local, t, cityHash64(toString((id, 'x,y'))))", "a,b",
                               "shop_local", "t", "id, 'x,y'"),
            std::nullopt);
}

TEST(ClusterTest, ShardedTargetsAddressTheLocalTables) {
  DdlTarget target{.database = "shop", .cluster = "sharded"};
  target.replication_path = "/clickhouse/tables/{sharded_shard}/{database}/{table}";
  target.path_token = "1f2e";
  target.sharded = true;
  target.local_database = "shop_local";
  schema::TableSchema t;
  t.database = "src";
  t.name = "orders";
  schema::Column id;
  id.name = "id";
  id.type = schema::ColumnType::kInt;
  id.type_spelling = "int";
  t.columns.push_back(id);
  t.primary_key = {"id"};
  auto sql = CreateTable(t, FromVersion({18, 16, 1}), target);
  ASSERT_TRUE(sql.ok()) << sql.error().message();
  EXPECT_TRUE(sql->starts_with("CREATE TABLE IF NOT EXISTS `shop_local`.`orders` ON CLUSTER `sharded`"))
      << *sql;
  EXPECT_NE(
      sql->find("ReplicatedReplacingMergeTree('/clickhouse/tables/{sharded_shard}/shop_local/orders/1f2e', "
                "'{replica}', `_chsync_version`)"),
      std::string::npos)
      << *sql;
  EXPECT_EQ(TruncateTable("orders", target),
            "TRUNCATE TABLE IF EXISTS `shop_local`.`orders` ON CLUSTER `sharded`");
  EXPECT_EQ(RenameTable("a", "b", target),
            "RENAME TABLE `shop_local`.`a` TO `shop_local`.`b` ON CLUSTER `sharded`");
  EXPECT_EQ(InsertPrefix(target.database, "orders", {"id"}),
            "INSERT INTO `shop`.`orders` (`id`) FORMAT RowBinary");
  EXPECT_EQ(CreateDatabase(target.StorageDatabase(), target),
            "CREATE DATABASE IF NOT EXISTS `shop_local` ON CLUSTER `sharded`");
}

TEST(ClusterTest, TaskPathOfADdlTimeout) {
  // ClickHouse 18.16's message when a host did not run an ON CLUSTER statement in time.
  const std::string message =
      "ClickHouse at http://127.0.0.1:49700 returned an error: Watching task "
      "/clickhouse/task_queue/ddl/query-0000000015 is executing longer than distributed_ddl_task_timeout "
      "(=8) seconds. There are 1 unfinished hosts (0 of them are currently active), they are going to "
      "execute the query in background (code 159)";
  EXPECT_EQ(DdlTaskPath(message), "/clickhouse/task_queue/ddl/query-0000000015");
  EXPECT_EQ(DdlTaskPath("Code: 159, e.displayText() = Timeout exceeded"), "");
}

TEST(ClusterTest, FinishedHostsOfATask) {
  // system.zookeeper rows of a task's finished node on 18.16 (one host done, one failed).
  auto hosts = ParseFinished(
      "127%2E0%2E0%2E1:22995\t0\\n\n"
      "127%2E0%2E0%2E1:39527\t341\\nCode: 341, e.displayText() = Alter is not finished\\n\n");
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_EQ(hosts[0].host, "127.0.0.1:22995");
  EXPECT_EQ(hosts[0].code, 0);
  EXPECT_EQ(hosts[1].host, "127.0.0.1:39527");
  EXPECT_EQ(hosts[1].code, 341);
  EXPECT_EQ(hosts[1].message, "Code: 341, e.displayText() = Alter is not finished");
  EXPECT_TRUE(AppliedAsynchronously(341));
  EXPECT_FALSE(AppliedAsynchronously(60));
}

TEST(ClusterTest, PairsOfTwoColumnRows) {
  auto pairs = ParsePairs("replica\tnode1\nsharded_shard\ts1\nbroken\n");
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0], (std::pair<std::string, std::string>{"replica", "node1"}));
  EXPECT_EQ(pairs[1].second, "s1");
}

TEST(ClusterTest, UrlLists) {
  EXPECT_EQ(SplitUrls("http://a:8123, http://b:8123,,"),
            (std::vector<std::string>{"http://a:8123", "http://b:8123"}));
  EXPECT_EQ(SplitUrls("file:store"), std::vector<std::string>{"file:store"});
}

TEST(ClusterTest, NodeFailuresMoveToTheNextNode) {
  EXPECT_TRUE(NodeFailure(Error(ErrorKind::kNetwork, "connection refused")));
  EXPECT_FALSE(NodeFailure(CancelledError("stop")));
  EXPECT_TRUE(NodeFailure(Error(ErrorKind::kServer, "read-only", 242)));
  EXPECT_TRUE(NodeFailure(Error(ErrorKind::kServer, "session expired", 225)));
  EXPECT_FALSE(NodeFailure(Error(ErrorKind::kServer, "syntax", 62)));
  EXPECT_FALSE(NodeFailure(Error(ErrorKind::kAuth, "password", 193)));
}

}  // namespace
}  // namespace chsync::clickhouse
