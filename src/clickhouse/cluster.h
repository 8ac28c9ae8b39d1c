#pragma once

// A ClickHouse cluster as a destination (docs/clusters.md): its topology, the names and statements
// of shard-local and Distributed tables, the outcome of ON CLUSTER statements, and a connection
// over several server URLs that moves to the next one when a node fails.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clickhouse/connection.h"
#include "common/result.h"

namespace chsync::clickhouse {

/// One replica of one shard, as system.clusters lists it (the native TCP port, not HTTP).
struct ClusterNode {
  uint32_t shard = 0;    ///< shard_num, from 1
  uint32_t replica = 0;  ///< replica_num, from 1
  std::string host;
  uint16_t port = 0;
  uint32_t weight = 1;  ///< shard_weight

  std::string Address() const { return host + ":" + std::to_string(port); }
};

struct ClusterTopology {
  std::string name;
  std::vector<ClusterNode> nodes;  ///< in shard, then replica order

  size_t shards() const;
  /// The shard_weight of each shard, in shard_num order (what a Distributed table routes by).
  std::vector<uint32_t> ShardWeights() const;
  /// The largest replica count of any shard.
  size_t max_replicas() const;
  /// "2 shards × 1 replica (shard 1: 127.0.0.1:9000; shard 2: 127.0.0.1:9001)".
  std::string Describe() const;
};

/// SELECT shard_num, replica_num, host_name, port, shard_weight FROM system.clusters WHERE cluster = `name`.
std::string TopologyQuery(std::string_view name);
/// The topology from TopologyQuery's TabSeparated output; kConfig when it has no row (the server
/// does not define the cluster), kServer when a row is malformed.
Result<ClusterTopology> ParseTopology(std::string_view name, std::string_view tsv);

/// The database that holds the shard-local tables of destination database `database` on a
/// cluster with more than one shard: "<database>_local". The Distributed tables keep the source
/// tables' names in `database` itself.
std::string LocalDatabase(std::string_view database);

/// The macros (`{name}`) that `pattern` uses, other than the ones chsync fills itself ({db},
/// {database}, {table}), in order of first use.
std::vector<std::string> ServerMacros(std::string_view pattern);

/// The ZooKeeper path of a replicated table: `pattern` with {db}/{database} and {table} replaced by
/// the destination names (ClickHouse 18.16 keeps {database}/{table} unexpanded in the table's
/// metadata, so a renamed table would not start again), then "/" + `token` when token is not
/// empty. The token makes the path of every created table unique: a RENAME keeps the path, and a
/// new table under the old name would otherwise collide with it (Code 253).
std::string ReplicationPath(std::string_view pattern, std::string_view database, std::string_view table,
                            std::string_view token);

/// The sharding expression of a Distributed table over a local table whose system.tables
/// sorting_key is `sorting_key`: cityHash64 of the key's text, so every version of a key lands on
/// one shard (FINAL is per shard) and widening a key column's integer type keeps the routing.
std::string ShardingExpression(std::string_view sorting_key);

/// CREATE TABLE IF NOT EXISTS `database`.`table` ON CLUSTER `cluster` AS `local_database`.`table`
/// ENGINE = Distributed(cluster, local_database, table, ShardingExpression(sorting_key)).
std::string CreateDistributed(std::string_view database, std::string_view table,
                              std::string_view local_database, std::string_view cluster,
                              std::string_view sorting_key);

/// How a Distributed table differs from the one chsync makes.
struct DistributedDifference {
  /// kShardingKey: over the right cluster and local table, sharded by another expression
  /// (`sharding`); kOther: anything else (another cluster or table, other arguments, no Distributed).
  enum class Kind { kShardingKey, kOther };
  Kind kind = Kind::kOther;
  std::string what;      ///< as a phrase: "it shards by rand(), not by cityHash64(…)"
  std::string sharding;  ///< kShardingKey: the table's sharding expression
};

/// How a table whose system.tables engine_full is `engine_full` differs from the Distributed table
/// CreateDistributed(…, local_database, table, cluster, sorting_key) makes; none when it does not.
/// Names compare unquoted ('c', `c` and c alike); the sharding key as 18.16 prints a tuple,
/// `(k1, k2)`, or as later versions do, `tuple(k1, k2)`.
std::optional<DistributedDifference> DistributedDiffers(std::string_view engine_full,
                                                        std::string_view cluster,
                                                        std::string_view local_database,
                                                        std::string_view table, std::string_view sorting_key);

/// DROP TABLE IF EXISTS `database`.`table` ON CLUSTER `cluster`: the Distributed table (its data
/// stays in the local tables).
std::string DropDistributed(std::string_view database, std::string_view table, std::string_view cluster);

/// The ZooKeeper path of the distributed DDL task named in a Code 159 message ("Watching task
/// /clickhouse/task_queue/ddl/query-0000000015 is executing longer than …"); empty when absent.
std::string DdlTaskPath(std::string_view message);

/// A host's outcome of a distributed DDL task (a child of the task's "finished" node).
struct HostOutcome {
  std::string host;  ///< "127.0.0.1:9000" (the node's name, percent-decoded)
  int code = 0;      ///< 0: done
  std::string message;
};
/// Rows of `SELECT name, value FROM system.zookeeper WHERE path = '<task>/finished'`
/// (TabSeparated): the name is the url-encoded host:port, the value "<code>\n<message>".
std::vector<HostOutcome> ParseFinished(std::string_view tsv);

/// True for the codes an ON CLUSTER ALTER of a replicated table reports while the change is in
/// ZooKeeper and the replicas apply it later: 341 (a replica did not confirm within
/// replication_alter_columns_timeout) and 48 (another replica of the shard ran it).
bool AppliedAsynchronously(int code);

/// The (first field, second field) pairs of two-column TabSeparated rows, such as `SELECT macro,
/// substitution FROM system.macros`; rows without a tab are skipped.
std::vector<std::pair<std::string, std::string>> ParsePairs(std::string_view tsv);

/// The `urls` of `text` split at commas ("http://a:8123,http://b:8123"), each trimmed; empty
/// items are skipped. SplitUrlList (common/url.h): a comma in a password does not split.
std::vector<std::string> SplitUrls(std::string_view text);

/// A connection over several server URLs of one cluster. A statement runs on the current node; a
/// failure that another node may not share (the node unreachable, its ZooKeeper session lost,
/// the table read-only on it) moves to the next URL, and the retry policy retries there. Each
/// switch is logged. Every node must accept the same statements (same user and databases).
class FailoverConnection : public Connection {
 public:
  /// `nodes` must not be empty; each with its retries off (they are done here).
  explicit FailoverConnection(std::vector<std::unique_ptr<Connection>> nodes);

  std::string Describe() const override;
  bool embedded() const override { return false; }

  /// The node statements go to now.
  size_t current() const { return current_.load(std::memory_order_relaxed); }
  size_t size() const { return nodes_.size(); }
  /// Node `i`, for statements that must run on a particular node.
  Connection& node(size_t i) { return *nodes_[i]; }

 protected:
  Result<std::string> Run(std::string_view sql, std::string_view data, std::string_view format,
                          const RequestOptions& request) override;

 private:
  std::vector<std::unique_ptr<Connection>> nodes_;
  /// Read by Describe() from other threads (status), written by the one using the connection.
  std::atomic<size_t> current_{0};
};

/// True for a failure of one node that another node of the cluster may not share: kNetwork,
/// 242 (table read-only: the node lost ZooKeeper), 225 (ZooKeeper session expired), 999 (a
/// ZooKeeper error), 209/210 (socket), 279 (the node cannot reach a shard).
bool NodeFailure(const Error& error);

}  // namespace chsync::clickhouse
