#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clickhouse/capabilities.h"
#include "clickhouse/cluster.h"
#include "clickhouse/connection.h"
#include "clickhouse/ddl.h"
#include "clickhouse/server_version.h"
#include "clickhouse/shard_router.h"
#include "clickhouse/table_writer.h"
#include "common/result.h"
#include "config/config.h"
#include "policy/ddl_policy.h"
#include "schema/table_schema.h"
#include "state/checkpoint.h"
#include "state/ddl_journal.h"

namespace chsync::pipe {

/// The table of every destination database that records the schema changes applied to it.
inline constexpr std::string_view kSchemaLogTable = "_chsync_schema_log";

/// The pipe's ClickHouse: one server, an embedded store, or a cluster (docs/clusters.md). It owns
/// the connection the pipe's statements go through, what the server can do, the cluster's topology
/// and how rows reach its shards, and every statement that creates, alters, renames, empties and
/// drops a destination table — each safe to run again after a crash between two of them. Which
/// table a source table goes to (the mapping) is the pipe's to say: this class takes targets and
/// names.
class Destination {
 public:
  /// The keys a ClickHouse table is sorted and partitioned by (system.tables), as ClickHouse prints
  /// them.
  struct TableKeys {
    std::string sorting_key;
    std::string partition_key;
  };

  /// `config` (config.dest, dest_cluster, the retry and cluster settings) and `cancel` (set a few
  /// seconds after a stop: requests and retries give up) outlive this object.
  Destination(const PipeConfig& config, const std::atomic<bool>& cancel);

  /// Connects to config.dest (each statement retried as config.retry says, failures counted in the
  /// metrics), decides the capabilities, and with config.dest_cluster reads the cluster's topology,
  /// checks its nodes' macros and plans how rows reach its shards. kConfig when durable_inserts asks
  /// for what the server cannot do. Returns the server's version.
  Result<clickhouse::ServerVersion> Open();
  /// Open's steps after connecting, over `connection` (a test's fake one): it gets none of Open's
  /// retry, cancel or metrics settings, and with config.dest_cluster it is replaced by a connection
  /// to config.dest. Call it once.
  Result<clickhouse::ServerVersion> OpenWith(std::unique_ptr<clickhouse::Connection> connection);
  /// Who this pipe is, for a lock it holds in ClickHouse: "host:state directory".
  std::string owner() const;
  /// True once the pipe is stopping: a wait (for a mutation, a lock) gives up.
  bool cancelled() const { return cancel_.load(std::memory_order_relaxed); }

  /// The connection statements go through; Open succeeded.
  clickhouse::Connection& connection() { return *dest_; }
  const clickhouse::Connection& connection() const { return *dest_; }
  /// Whether Open succeeded (connection() is there).
  bool connected() const { return dest_ != nullptr; }
  /// Options for another session of the same destination (the flusher's lanes, snapshot workers).
  const clickhouse::ConnectOptions& options() const { return options_; }
  const clickhouse::Capabilities& caps() const { return caps_; }
  /// Sharded and routed: the URLs of each shard's nodes (comma-separated), in shard order. Empty:
  /// rows go through the Distributed tables.
  const std::vector<std::string>& shard_urls() const { return shard_urls_; }
  /// How rows are routed to shards now (recorded with the checkpoint).
  const Routing& routing_now() const { return routing_now_; }
  /// Whether config.dest_cluster names a cluster of more than one shard.
  bool sharded() const { return topology_ && topology_->shards() > 1; }

  /// For `chsync status`: `node` (where rows go now), and the cluster if there is one.
  std::string Describe(const std::string& node) const;
  /// Where the tables of source database `source_database` go (config.dest_database, else the same
  /// name).
  clickhouse::DdlTarget TargetFor(std::string_view source_database) const;
  /// Where tables of destination database `dest_database` are.
  clickhouse::DdlTarget TargetIn(std::string dest_database) const;

  /// Routed: makes `writer` collect rows per shard, when the table's Distributed table shards by
  /// chsync's expression over a key ShardRouter can reproduce; otherwise its rows go through the
  /// Distributed table (said once per table).
  void RouteWriter(const schema::TableSchema& layout, const clickhouse::DdlTarget& target,
                   clickhouse::TableWriter& writer);
  /// Runs a DDL statement. An ON CLUSTER one that some node has not run within
  /// dest_ddl_timeout_s is waited for, never sent again.
  Status Ddl(const std::string& sql);
  /// The keys of the table `name`; nullopt when there is no such table (on a sharded cluster: the
  /// local table).
  Result<std::optional<TableKeys>> ReadTableKeys(const clickhouse::DdlTarget& target, std::string_view name);
  /// Reads the keys of every table of `databases` (storage databases) in one query, for
  /// ReadTableKeys to answer from until the next statement (Ddl) or ForgetTableKeys: a pipe's start
  /// asks for the keys of each of its tables, one query each otherwise (issue 36: 3,000 tables).
  /// A failure only means no prefetch: ReadTableKeys asks ClickHouse as before.
  void PrefetchTableKeys(const std::set<std::string>& databases);
  void ForgetTableKeys() { prefetched_keys_.clear(); }
  /// Whether the table `name` exists (on a sharded cluster: the local table).
  Result<bool> DestinationTableExists(const clickhouse::DdlTarget& target, std::string_view name);
  /// Sharded: creates the Distributed table `name` over its local table when missing (`recreate`:
  /// drops it first, to take the local table's current columns). Nothing without a local table.
  Status EnsureDistributed(const clickhouse::DdlTarget& target, std::string_view name, bool recreate);
  /// engine_full of the table `name` in target.database ("" when there is none).
  Result<std::string> DistributedEngine(const clickhouse::DdlTarget& target, std::string_view name);
  /// How the Distributed table `name` differs from chsync's over its local table with `sorting_key`
  /// (none when it does not, or when there is none).
  Result<std::optional<clickhouse::DistributedDifference>> ForeignDistributed(
      const clickhouse::DdlTarget& target, std::string_view name, std::string_view sorting_key);
  /// The kConfig error for a Distributed table chsync neither writes through nor replaces.
  Error ForeignDistributedError(const clickhouse::DdlTarget& target, std::string_view name,
                                const std::string& differs) const;
  /// Drops the table (and its Distributed table), if it exists.
  Status DropDestination(const clickhouse::DdlTarget& target, std::string_view name);
  /// Empties the table on every shard.
  Status TruncateDestination(const clickhouse::DdlTarget& target, std::string_view name);
  /// After an ALTER on a cluster: waits until every node that answers has applied it to `name`
  /// (restarting the replicas that do not: ClickHouse 18.16 stops applying ALTERs after a
  /// ZooKeeper session loss); kNetwork after 120 s.
  Status SettleReplicas(const clickhouse::DdlTarget& target, std::string_view name);
  /// `SELECT count()` of the whole table (every shard).
  Result<std::string> RowCount(const clickhouse::DdlTarget& target, std::string_view name);
  /// Before an ALTER … MODIFY COLUMN of `name`: no part with no row may be left. ClickHouse 18.16
  /// fails the ALTER on a part a DELETE mutation emptied, active or merged away but still on disk
  /// ("File not found: … converting.mrk"), after it changed the table's type, and the parts it had
  /// not converted no longer read ("Type mismatch for column"). Active ones are merged away
  /// (OPTIMIZE … PARTITION ID … FINAL), and their removal (old_parts_lifetime) is waited for, up to
  /// 20 minutes. ClearSourceRows merges first so that its DELETE leaves none in the usual case.
  Status MergeEmptyParts(const clickhouse::DdlTarget& target, std::string_view name);
  /// Runs a plan's statements, skipping those a crash let run already.
  Status RunPlan(const TablePlan& plan, const clickhouse::DdlTarget& target, std::string_view table);
  /// Renames ClickHouse table `from` to `to` when `from` exists and `to` does not (so that running
  /// it again after a crash does nothing).
  Status RenameDestination(const clickhouse::DdlTarget& from_target, std::string_view from,
                           const clickhouse::DdlTarget& to_target, std::string_view to);
  /// Before a table is created in ClickHouse under `name`: an existing table there (kept after a
  /// DROP at the source, or left by something else) is renamed aside to `<name>__dropped_<at>`;
  /// an empty one is dropped.
  Status MakeRoom(const clickhouse::DdlTarget& target, const std::string& name, const std::string& at);
  /// Creates `_chsync_schema_log` in destination database `database` unless this object did already.
  Status EnsureSchemaLog(const std::string& database);

  /// Before the journaled steps of a source statement (RunStepOnce): opens the journal of state
  /// directory `state_dir` (ddl_journal.h) if needed, and forgets the steps of statements before
  /// `file`:`position`, the resume position of the saved checkpoint (never replayed).
  Status BeginJournaled(const std::string& state_dir, std::string_view file, uint64_t position);
  /// Runs `run`, ClickHouse step `step` of a source statement, unless the journal records it as
  /// done by an earlier pass over the statement (a crash came before the checkpoint after it);
  /// records it once `run` succeeded. BeginJournaled came first.
  Status RunStepOnce(const DdlStep& step, const std::function<Status()>& run);

  /// Swaps table `temp` (a rebuild's copy) in for table `name`: `name` becomes `replaced`, `temp`
  /// becomes `name`, the Distributed table is made over it and `replaced` is dropped. Run again after
  /// a crash between any two of those steps, it goes on from there.
  Status SwapIn(const clickhouse::DdlTarget& target, const std::string& name, const std::string& temp,
                const std::string& replaced);

 private:
  /// Reads the topology of config.dest_cluster and checks that its nodes have the macros the
  /// table paths use; the connections opened after it carry the cluster's settings.
  Status OpenCluster();
  /// Sharded: whether chsync sends rows to the shards itself (shard_urls_), which needs a URL of
  /// every shard in config.dest and a server that prints and hashes keys as ShardRouter does.
  Status PlanShardRouting();
  /// Waits until every node of the cluster has run the distributed DDL task `task`, naming the ones
  /// that have not every 30 s; fails when a node failed it (other than AppliedAsynchronously).
  Status WaitForDdlTask(const std::string& task, const std::string& sql);

  const PipeConfig& config_;
  const std::atomic<bool>& cancel_;
  clickhouse::ConnectOptions options_;
  std::unique_ptr<clickhouse::Connection> dest_;
  /// PrefetchTableKeys' answer: (database, table) → keys.
  std::map<std::pair<std::string, std::string>, TableKeys, std::less<>> prefetched_keys_;
  clickhouse::Capabilities caps_;
  /// The destination cluster (config.dest_cluster); empty for one server.
  std::optional<clickhouse::ClusterTopology> topology_;
  std::vector<std::string> shard_urls_;
  /// How the cluster's servers print key values (from the routing probe).
  clickhouse::KeyStyle key_style_{};
  Routing routing_now_{"", {1}, ""};
  /// Tables whose rows go through the Distributed table, already said in the log.
  std::set<std::string> unrouted_said_;
  /// Destination databases whose `_chsync_schema_log` exists.
  std::set<std::string> schema_logs_;
  /// The ClickHouse steps of the last statements run step by step (RunStepOnce).
  std::optional<DdlJournal> journal_;
};

}  // namespace chsync::pipe
