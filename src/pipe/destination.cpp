// The pipe's ClickHouse (destination.h): the connection, the cluster and its shards, and the
// statements that create, alter, rename, empty and drop the tables, each safe to run again after a
// crash.

#include "pipe/destination.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "clickhouse/cluster.h"
#include "clickhouse/ddl.h"
#include "clickhouse/server_error.h"
#include "clickhouse/shard_router.h"
#include "clickhouse/sql_quoting.h"
#include "common/crash_point.h"
#include "common/log.h"
#include "metrics/pipe_metrics.h"

namespace chsync::pipe {
namespace {

using clickhouse::QualifiedName;
using clickhouse::QuoteIdentifier;
using clickhouse::QuoteString;

/// A token unique to this call (time in microseconds and a counter, base 36) for the ZooKeeper path
/// of a table about to be created.
std::string PathToken() {
  static std::atomic<uint64_t> counter{0};
  uint64_t micros = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                              std::chrono::system_clock::now().time_since_epoch())
                                              .count());
  uint64_t v = micros * 16 + (counter++ % 16);
  std::string out;
  do {
    out.insert(out.begin(), "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36]);
    v /= 36;
  } while (v != 0);
  return out;
}

std::string Joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

clickhouse::DdlTarget Destination::TargetFor(std::string_view source_database) const {
  return TargetIn(config_.dest_database.empty() ? std::string(source_database) : config_.dest_database);
}

clickhouse::DdlTarget Destination::TargetIn(std::string dest_database) const {
  clickhouse::DdlTarget target;
  target.database = std::move(dest_database);
  target.durable = config_.durable_inserts;
  if (topology_) {
    target.cluster = topology_->name;
    target.replication_path = config_.dest_replication_path;
    target.replica_name = config_.dest_replica_name;
    target.path_token = PathToken();
    target.sharded = topology_->shards() > 1;
    target.local_database = clickhouse::LocalDatabase(target.database);
  }
  return target;
}

Destination::Destination(const PipeConfig& config, const std::atomic<bool>& cancel)
    : config_(config), cancel_(cancel) {}

Result<clickhouse::ServerVersion> Destination::Open() {
  const PipeConfig& c = config_;
  // A pipe outlives short outages of its destination (a restart, a network blip): each statement
  // is retried for a few minutes, and then the stream starts again from its last checkpoint.
  options_ = clickhouse::ConnectOptions();
  options_.retry.max_attempts = c.retry_attempts;
  options_.retry.max_backoff = std::chrono::milliseconds(c.retry_max_backoff_ms);
  options_.retry.initial_backoff = std::min(options_.retry.initial_backoff, options_.retry.max_backoff);
  options_.cancel = &cancel_;
  options_.on_failure = [](const Error& error, int /*attempt*/, bool retrying) {
    Metrics().ObserveClickHouseFailure(error, retrying);
  };
  CHSYNC_ASSIGN_OR_RETURN(std::unique_ptr<clickhouse::Connection> connection,
                          clickhouse::Connect(c.dest, options_));
  return OpenWith(std::move(connection));
}

Result<clickhouse::ServerVersion> Destination::OpenWith(std::unique_ptr<clickhouse::Connection> connection) {
  const PipeConfig& c = config_;
  topology_.reset();
  shard_urls_.clear();
  routing_now_ = Routing{"", {1}, ""};
  schema_logs_.clear();
  dest_ = std::move(connection);
  CHSYNC_ASSIGN_OR_RETURN(clickhouse::ServerVersion version, dest_->Version());
  caps_ = clickhouse::FromVersion(version);
  caps_.datetime_fallback_text = c.datetime_fallback == PipeConfig::DateTimeFallback::kString;
  caps_.json_native = c.json == PipeConfig::JsonMode::kNative;
  if (!c.dest_cluster.empty()) CHSYNC_RETURN_IF_ERROR(OpenCluster());
  if (c.durable_inserts && !caps_.fsync_after_insert) {
    return Error(
        ErrorKind::kConfig,
        fmt::format("durable_inserts: ClickHouse {}.{} at {} cannot fsync inserted parts (fsync_after_insert "
                    "needs 21.1 or later): upgrade it, use replicas with insert_quorum (?insert_quorum=2 in "
                    "the destination URL), or set durable_inserts: false",
                    version.major, version.minor, dest_->Describe()));
  }
  return version;
}

std::string Destination::Describe(const std::string& node) const {
  if (!topology_) return node;
  return "cluster " + topology_->name + " (" + topology_->Describe() + "), writing to " + node;
}

Status Destination::OpenCluster() {
  const PipeConfig& c = config_;
  if (dest_->embedded()) {
    return Error(ErrorKind::kConfig,
                 "dest_cluster '" + c.dest_cluster + "' needs ClickHouse servers, not an embedded store");
  }
  auto rows = dest_->Query(clickhouse::TopologyQuery(c.dest_cluster));
  if (!rows.ok()) return std::move(rows.error().AddContext("reading cluster " + c.dest_cluster));
  auto topology = clickhouse::ParseTopology(c.dest_cluster, *rows);
  if (!topology.ok()) {
    if (topology.error().kind() != ErrorKind::kConfig) return topology.error();
    auto known = dest_->Query("SELECT DISTINCT cluster FROM system.clusters ORDER BY cluster");
    std::string list = known.ok() ? *known : "";
    std::replace(list.begin(), list.end(), '\n', ' ');
    return Error(
        ErrorKind::kConfig,
        fmt::format("--dest-cluster: ClickHouse at {} has no cluster '{}' (its clusters: {}); name one of "
                    "them, or define it in remote_servers of every node",
                    dest_->Describe(), c.dest_cluster, list.empty() ? "none" : list));
  }
  topology_ = std::move(topology).value();
  routing_now_ = Routing{topology_->name, topology_->ShardWeights(), ""};

  // Every macro the table paths use must be defined on every shard (one replica of each answers
  // through cluster()) and on every node chsync writes to.
  std::vector<std::string> macros = clickhouse::ServerMacros(c.dest_replication_path);
  for (const std::string& m : clickhouse::ServerMacros(c.dest_replica_name)) {
    if (std::find(macros.begin(), macros.end(), m) == macros.end()) macros.push_back(m);
  }
  auto defined = dest_->Query("SELECT macro, count() FROM cluster(" + QuoteString(c.dest_cluster) +
                              ", system.macros) GROUP BY macro ORDER BY macro");
  if (!defined.ok()) {
    if (!clickhouse::NodeFailure(defined.error())) {
      return std::move(defined.error().AddContext("reading the macros of cluster " + c.dest_cluster));
    }
    // A shard down now: its nodes are checked by the statements themselves (Code 62 names a
    // missing macro), and this node's macros below.
    log::Warn("cluster {}: cannot read every shard's macros now ({}); checking {} only", c.dest_cluster,
              defined.error().message(), dest_->Describe());
    defined = std::string();
  }
  auto local = dest_->Query("SELECT macro FROM system.macros ORDER BY macro");
  if (!local.ok()) return local.error();
  std::map<std::string, size_t> shards_with;
  std::vector<std::string> names;
  for (const auto& [name, count] : clickhouse::ParsePairs(*defined)) {
    shards_with[name] = std::strtoull(count.c_str(), nullptr, 10);
    names.push_back(name);
  }
  const size_t shards = topology_->shards();
  for (const std::string& m : macros) {
    size_t have = shards_with.contains(m) ? shards_with[m] : 0;
    bool here = ("\n" + *local).find("\n" + m + "\n") != std::string::npos;
    if ((have < shards && !defined->empty()) || !here) {
      return Error(
          ErrorKind::kConfig,
          fmt::format(
              "cluster '{}': macro {{{}}} (used by {} '{}') is defined on {} of its {} shards{}; add "
              "<macros><{}>…</{}></macros> to every node's config, or use the macros the nodes have ({}) "
              "in --dest-replication-path (file keys dest_replication_path, dest_replica_name)",
              c.dest_cluster, m,
              c.dest_replication_path.find("{" + m + "}") != std::string::npos ? "dest_replication_path"
                                                                               : "dest_replica_name",
              c.dest_replication_path.find("{" + m + "}") != std::string::npos ? c.dest_replication_path
                                                                               : c.dest_replica_name,
              have, shards, here ? "" : " and not on " + dest_->Describe(), m, m,
              names.empty() ? "none" : Joined(names)));
    }
  }

  // Every later session (the flusher's, the snapshot's) carries the cluster's settings.
  options_.settings.emplace_back("distributed_ddl_task_timeout", std::to_string(c.dest_ddl_timeout_s));
  if (topology_->shards() > 1) {
    // A Distributed insert is acknowledged once every shard has stored its rows, never spooled.
    options_.settings.emplace_back("insert_distributed_sync", "1");
  }
  CHSYNC_ASSIGN_OR_RETURN(dest_, clickhouse::Connect(c.dest, options_));
  log::Info("destination cluster {}: {}; {}", topology_->name, topology_->Describe(),
            topology_->shards() > 1
                ? "tables in <database>_local on every shard, Distributed tables under the "
                  "source names"
                : "ReplicatedReplacingMergeTree tables on every replica");
  return topology_->shards() > 1 ? PlanShardRouting() : Status::Ok();
}

Status Destination::PlanShardRouting() {
  shard_urls_.clear();
  // How the servers print keys decides where the Distributed tables themselves put a row, so it is
  // recorded whether or not chsync routes rows itself.
  clickhouse::RoutingProbe probe = clickhouse::MakeRoutingProbe();
  auto hashed = dest_->Query(probe.sql, "TabSeparatedRaw");
  if (!hashed.ok() && !clickhouse::IsRetryable(hashed.error())) {
    // A server that lacks a function of the probe: its key text is unknown (compared with nothing).
    log::Warn("cluster {}: cannot check how it hashes keys ({}); rows go through the Distributed tables",
              topology_->name, hashed.error().message());
    routing_now_.key_text = "unknown";
    return Status::Ok();
  }
  if (!hashed.ok()) return std::move(hashed.error().AddContext("checking how the cluster hashes keys"));
  const std::optional<clickhouse::KeyStyle> style = probe.Match(*hashed);
  routing_now_.key_text = style ? clickhouse::KeyStyleName(*style) : "unknown";
  const size_t shards = topology_->shards();
  std::vector<std::string> urls(shards);
  clickhouse::ConnectOptions once = options_;
  once.retry.max_attempts = 1;
  for (const std::string& url : clickhouse::SplitUrls(config_.dest)) {
    auto node = clickhouse::Connect(url, once);
    if (!node.ok()) return node.error();
    // is_local marks the shard of the node answering (every replica of it).
    auto local = (*node)->Query("SELECT DISTINCT shard_num FROM system.clusters WHERE cluster = " +
                                QuoteString(topology_->name) + " AND is_local = 1");
    size_t shard = local.ok() ? std::strtoull(local->c_str(), nullptr, 10) : 0;
    if (!local.ok() || shard == 0 || shard > shards || local->find('\n') + 1 != local->size()) {
      log::Warn("cluster {}: cannot tell which shard {} is ({}); rows are not sent to it directly",
                topology_->name, (*node)->Describe(),
                local.ok() ? "system.clusters: " + *local : local.error().message());
      continue;
    }
    urls[shard - 1] += (urls[shard - 1].empty() ? "" : ",") + url;
  }
  std::vector<std::string> missing;
  for (size_t i = 0; i < shards; ++i) {
    if (urls[i].empty()) missing.push_back(std::to_string(i + 1));
  }
  if (!missing.empty()) {
    log::Info(
        "cluster {}: rows go through the Distributed tables (synchronously), since --dest names no node of "
        "shard {}; list a node of every shard in --dest to have chsync send each row to its shard itself, "
        "which is faster",
        topology_->name, Joined(missing));
    return Status::Ok();
  }
  if (!style) {
    log::Warn(
        "cluster {}: ClickHouse {} prints or hashes key values differently from what chsync reproduces "
        "(`{}` gave {}); rows go through the Distributed tables (synchronously)",
        topology_->name, caps_.version.ToString(), probe.sql, *hashed);
    return Status::Ok();
  }
  key_style_ = *style;
  shard_urls_ = std::move(urls);
  log::Info("cluster {}: chsync sends each row to its shard (by the Distributed tables' sharding key)",
            topology_->name);
  return Status::Ok();
}

void Destination::RouteWriter(const schema::TableSchema& layout, const clickhouse::DdlTarget& target,
                              clickhouse::TableWriter& writer) {
  const std::string name = target.database + "." + layout.name;
  auto unrouted = [&](const std::string& why) {
    if (unrouted_said_.insert(name).second) {
      log::Info("rows of {} go through its Distributed table (synchronously): {}", name, why);
    }
  };
  auto key = dest_->Query("SELECT sorting_key FROM system.tables WHERE database = " +
                              QuoteString(target.local_database) + " AND name = " + QuoteString(layout.name),
                          "TabSeparatedRaw");
  auto engine = DistributedEngine(target, layout.name);
  if (!key.ok() || !engine.ok()) {
    unrouted((key.ok() ? engine : key).error().message());
    return;
  }
  while (!key->empty() && key->back() == '\n') key->pop_back();
  if (key->empty() || engine->empty()) {
    unrouted(key->empty() ? "it has no local table" : "it has no Distributed table yet");
    return;
  }
  if (auto differs =
          clickhouse::DistributedDiffers(*engine, target.cluster, target.local_database, layout.name, *key)) {
    unrouted("its Distributed table is not chsync's over the sorting key '" + *key + "': " + differs->what);
    return;
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < writer.types().size() && i < layout.columns.size(); ++i) {
    names.push_back(layout.columns[i].name);
  }
  auto router =
      clickhouse::ShardRouter::Create(*key, names, writer.types(), topology_->ShardWeights(), key_style_);
  if (!router.ok()) {
    unrouted(router.error().message());
    return;
  }
  writer.RouteTo(std::move(router).value(), target.local_database);
  unrouted_said_.erase(name);
}

Status Destination::Ddl(const std::string& sql) {
  ForgetTableKeys();
  clickhouse::RequestOptions request;
  request.on_cluster = topology_.has_value() && sql.find(" ON CLUSTER ") != std::string::npos;
  Status s = dest_->Execute(sql, request);
  if (s.ok()) return s;
  if (request.on_cluster && s.error().server_code() == clickhouse::code::kTimeoutExceeded) {
    std::string task = clickhouse::DdlTaskPath(s.error().message());
    if (!task.empty()) return WaitForDdlTask(task, sql);
  }
  return std::move(s.error().AddContext("ClickHouse statement " + sql));
}

Status Destination::WaitForDdlTask(const std::string& task, const std::string& sql) {
  const auto start = std::chrono::steady_clock::now();
  auto last_report = start;
  std::set<std::string> all;
  for (const clickhouse::ClusterNode& n : topology_->nodes) all.insert(n.Address());
  log::Warn(
      "cluster {}: `{}` has not finished on every node within dest_ddl_timeout_s ({} s); it stays queued "
      "in ZooKeeper ({}) and chsync waits for it",
      topology_->name, sql, config_.dest_ddl_timeout_s, task);
  for (;;) {
    auto rows = dest_->Query("SELECT name, value FROM system.zookeeper WHERE path = " +
                             QuoteString(task + "/finished"));
    if (rows.ok()) {
      std::vector<clickhouse::HostOutcome> done = clickhouse::ParseFinished(*rows);
      if (done.size() >= all.size()) {
        for (const clickhouse::HostOutcome& h : done) {
          if (h.code == 0) continue;
          if (clickhouse::AppliedAsynchronously(h.code)) {
            log::Info("cluster {}: node {} applies `{}` asynchronously ({})", topology_->name, h.host, sql,
                      h.message);
            continue;
          }
          return Error(ErrorKind::kServer,
                       fmt::format("ClickHouse statement {}: node {} of cluster {} failed it: {} (code {})",
                                   sql, h.host, topology_->name, h.message, h.code));
        }
        log::Info("cluster {}: `{}` done on every node after {} s", topology_->name, sql,
                  std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start)
                      .count());
        return Status::Ok();
      }
      if (std::chrono::steady_clock::now() - last_report >= std::chrono::seconds(30)) {
        std::set<std::string> missing = all;
        for (const clickhouse::HostOutcome& h : done) missing.erase(h.host);
        log::Warn(
            "cluster {}: still waiting for {} to run `{}` ({} s); start the node, or take it out of the "
            "cluster's remote_servers. Nothing is lost meanwhile: rows wait in the binlog",
            topology_->name, Joined({missing.begin(), missing.end()}), sql,
            std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start)
                .count());
        last_report = std::chrono::steady_clock::now();
      }
    } else if (clickhouse::IsCancelled(rows.error())) {
      return rows.error();
    }
    for (int i = 0; i < 20; ++i) {
      if (cancel_) return clickhouse::CancelledError("waiting for " + task);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

Result<bool> Destination::DestinationTableExists(const clickhouse::DdlTarget& target, std::string_view name) {
  CHSYNC_ASSIGN_OR_RETURN(
      std::string found,
      dest_->Query("SELECT count() FROM system.tables WHERE database = " +
                   QuoteString(target.StorageDatabase()) + " AND name = " + QuoteString(name)));
  return found.starts_with("1");
}

void Destination::PrefetchTableKeys(const std::set<std::string>& databases) {
  prefetched_keys_.clear();
  if (databases.empty()) return;
  std::string in_list;
  for (const std::string& database : databases)
    in_list += (in_list.empty() ? "" : ", ") + QuoteString(database);
  const std::string from = " FROM system.tables WHERE database IN (" + in_list + ")";
  auto read = dest_->Query("SELECT database, name, sorting_key, partition_key" + from, "TabSeparatedRaw");
  if (!read.ok() && read.error().kind() == ErrorKind::kServer) {
    read = dest_->Query("SELECT database, name, sorting_key, ''" + from, "TabSeparatedRaw");
  }
  if (!read.ok()) return;
  // Raw text: a row whose names or keys hold a tab or a line break does not split into four
  // fields and is skipped; ReadTableKeys asks for that table alone.
  std::string_view rest = *read;
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    std::string_view row = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    std::vector<std::string_view> fields;
    for (size_t at = 0;;) {
      const size_t tab = row.find('\t', at);
      fields.push_back(row.substr(at, tab == std::string_view::npos ? std::string_view::npos : tab - at));
      if (tab == std::string_view::npos) break;
      at = tab + 1;
    }
    if (fields.size() != 4) continue;
    prefetched_keys_[{std::string(fields[0]), std::string(fields[1])}] =
        TableKeys{std::string(fields[2]), std::string(fields[3])};
  }
}

Result<std::optional<Destination::TableKeys>> Destination::ReadTableKeys(const clickhouse::DdlTarget& target,
                                                                         std::string_view name) {
  if (auto known = prefetched_keys_.find(std::pair{target.StorageDatabase(), std::string(name)});
      known != prefetched_keys_.end()) {
    return std::optional<TableKeys>(known->second);
  }
  const std::string where = " FROM system.tables WHERE database = " + QuoteString(target.StorageDatabase()) +
                            " AND name = " + QuoteString(name);
  auto read = dest_->Query("SELECT sorting_key, partition_key" + where, "TabSeparatedRaw");
  if (!read.ok() && read.error().kind() == ErrorKind::kServer) {
    read = dest_->Query("SELECT sorting_key, ''" + where, "TabSeparatedRaw");  // no partition_key
  }
  if (!read.ok()) return std::move(read).error();
  std::string row = std::move(read).value();
  if (row.empty()) return std::optional<TableKeys>();
  while (!row.empty() && row.back() == '\n') row.pop_back();
  const size_t tab = row.find('\t');
  TableKeys keys;
  keys.sorting_key = row.substr(0, tab);
  if (tab != std::string::npos) keys.partition_key = row.substr(tab + 1);
  return std::optional<TableKeys>(std::move(keys));
}

Status Destination::EnsureDistributed(const clickhouse::DdlTarget& target, std::string_view name,
                                      bool recreate) {
  if (!target.sharded) return Status::Ok();
  CHSYNC_ASSIGN_OR_RETURN(
      std::string key,
      dest_->Query("SELECT sorting_key FROM system.tables WHERE database = " +
                       QuoteString(target.local_database) + " AND name = " + QuoteString(name),
                   "TabSeparatedRaw"));
  while (!key.empty() && key.back() == '\n') key.pop_back();
  if (recreate) {
    // Made again to take the local table's new columns: chsync's own only, never one someone made
    // (its rows may have been routed by another expression than chsync's).
    CHSYNC_ASSIGN_OR_RETURN(std::optional<clickhouse::DistributedDifference> differs,
                            ForeignDistributed(target, name, key));
    if (differs) return ForeignDistributedError(target, name, differs->what);
    CHSYNC_RETURN_IF_ERROR(Ddl(clickhouse::DropDistributed(target.database, name, target.cluster)));
  }
  if (key.empty()) return Status::Ok();  // no local table (yet): nothing to put a Distributed table over
  CHSYNC_RETURN_IF_ERROR(Ddl(clickhouse::CreateDatabase(target)));
  return Ddl(
      clickhouse::CreateDistributed(target.database, name, target.local_database, target.cluster, key));
}

Result<std::string> Destination::DistributedEngine(const clickhouse::DdlTarget& target,
                                                   std::string_view name) {
  CHSYNC_ASSIGN_OR_RETURN(std::string engine,
                          dest_->Query("SELECT engine_full FROM system.tables WHERE database = " +
                                           QuoteString(target.database) + " AND name = " + QuoteString(name),
                                       "TabSeparatedRaw"));
  while (!engine.empty() && engine.back() == '\n') engine.pop_back();
  return engine;
}

Result<std::optional<clickhouse::DistributedDifference>> Destination::ForeignDistributed(
    const clickhouse::DdlTarget& target, std::string_view name, std::string_view sorting_key) {
  CHSYNC_ASSIGN_OR_RETURN(std::string engine, DistributedEngine(target, name));
  // No Distributed table, or no local table to compare it with.
  if (engine.empty() || sorting_key.empty()) return std::optional<clickhouse::DistributedDifference>();
  return clickhouse::DistributedDiffers(engine, target.cluster, target.local_database, name, sorting_key);
}

Error Destination::ForeignDistributedError(const clickhouse::DdlTarget& target, std::string_view name,
                                           const std::string& differs) const {
  return Error(
      ErrorKind::kConfig,
      fmt::format(
          "ClickHouse table {} is not the Distributed table chsync makes over {}: {}. chsync neither writes "
          "through nor replaces a Distributed table someone made: rows routed by another expression "
          "than the one of the rows before them would not meet their other versions on one shard. Run "
          "`chsync resync --table` for its source table (it copies the table again under chsync's own "
          "Distributed table), or, if it was replaced only now and nothing was written through it, "
          "drop it: chsync makes its own at the next start",
          QualifiedName(target.database, name), QualifiedName(target.local_database, name), differs));
}

Status Destination::DropDestination(const clickhouse::DdlTarget& target, std::string_view name) {
  if (target.sharded) {
    CHSYNC_RETURN_IF_ERROR(Ddl(clickhouse::DropDistributed(target.database, name, target.cluster)));
  }
  return Ddl(clickhouse::DropTable(name, target));
}

std::string Destination::owner() const {
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  std::error_code error;
  const std::filesystem::path state = std::filesystem::absolute(config_.state, error);
  return std::string(host.data()) + ":" + (error ? config_.state : state.string());
}

Status Destination::TruncateDestination(const clickhouse::DdlTarget& target, std::string_view name) {
  if (caps_.version.major >= 21) return Ddl(clickhouse::TruncateTable(name, target));
  // ClickHouse before 21 empties a table in a way a crash undoes: after TRUNCATE and a kill -9 of
  // the server, 18.16 loads the truncated parts again (7 rows truncated, 1 inserted: 8 after the
  // restart). And it runs TRUNCATE of a replicated table on the shard's leader replica: a non-leader
  // forwards it there as the passwordless `default` user (Code 194), and on the leader it can hang
  // for good when a replica is still fetching a part just inserted (seen on 18.16). So the table is
  // emptied by replacing it: a new empty one (a replicated one with its own ZooKeeper path) takes
  // its name, the old one is dropped.
  const bool replicated = topology_ && topology_->max_replicas() > 1;
  const std::string& db = target.StorageDatabase();
  const std::string on = target.cluster.empty() ? "" : " ON CLUSTER " + QuoteIdentifier(target.cluster);
  const std::string fresh = std::string(name) + "__chsync_truncating";
  // The name the full table is renamed to, and the next ones: 18.16 renames a table by moving its
  // folder of parts, then writing its definition under the new name, then removing the old one, so
  // a kill -9 of ClickHouse in between leaves a folder no table owns ("Target path already exists"
  // when a table would take its name) or a table under both names. Its rows are the truncated
  // ones whatever state it left: the next name is taken, and the folder named in the log.
  std::vector<std::string> asides;
  for (int i = 1; i <= 5; ++i) {
    asides.push_back(std::string(name) + "__chsync_truncated" + (i == 1 ? "" : "_" + std::to_string(i)));
  }
  auto drop_asides = [&]() -> Status {
    std::string in;
    for (const std::string& aside : asides) in += (in.empty() ? "" : ", ") + QuoteString(aside);
    CHSYNC_ASSIGN_OR_RETURN(
        std::string left, dest_->Query("SELECT name FROM system.tables WHERE database = " + QuoteString(db) +
                                           " AND name IN (" + in + ")",
                                       "TabSeparatedRaw"));
    for (const std::string& aside : asides) {
      if (("\n" + left).find("\n" + aside + "\n") == std::string::npos) continue;
      CHSYNC_RETURN_IF_ERROR(Ddl("DROP TABLE IF EXISTS " + QualifiedName(db, aside) + on));
    }
    return Status::Ok();
  };
  // Every step starts again from what is there, and empties the table again: the TRUNCATE is run
  // again at its place in the binlog, so the rows in `name` now are all older than it (a crash
  // inside ClickHouse's rename can leave `name` an empty table that the replay filled again).
  // What a crash left aside holds only rows of before the TRUNCATE.
  CHSYNC_RETURN_IF_ERROR(drop_asides());
  CHSYNC_ASSIGN_OR_RETURN(bool has_table, DestinationTableExists(target, name));
  CHSYNC_ASSIGN_OR_RETURN(bool has_fresh, DestinationTableExists(target, fresh));
  if (!has_table) {
    // A crash between the swap's two renames: the empty table is not yet under the name.
    if (!has_fresh) return Status::Ok();
    Status renamed = Ddl("RENAME TABLE " + QualifiedName(db, fresh) + " TO " + QualifiedName(db, name) + on);
    if (renamed.ok() || renamed.error().server_code() != clickhouse::code::kDirectoryAlreadyExists ||
        replicated)
      return renamed;
    // Killed inside that rename, after the empty table's folder moved to the name: a table made
    // there takes the folder (an empty table's parts), and the empty one goes.
    CHSYNC_ASSIGN_OR_RETURN(std::string engine,
                            dest_->Query("SELECT engine_full FROM system.tables WHERE database = " +
                                             QuoteString(db) + " AND name = " + QuoteString(fresh),
                                         "TabSeparatedRaw"));
    while (!engine.empty() && engine.back() == '\n') engine.pop_back();
    if (engine.starts_with("Replicated")) return renamed;
    CHSYNC_RETURN_IF_ERROR(Ddl("CREATE TABLE IF NOT EXISTS " + QualifiedName(db, name) + on + " AS " +
                               QualifiedName(db, fresh) + " ENGINE = " + engine));
    return Ddl("DROP TABLE IF EXISTS " + QualifiedName(db, fresh) + on);
  }
  if (!has_fresh) {
    CHSYNC_ASSIGN_OR_RETURN(std::string engine,
                            dest_->Query("SELECT engine_full FROM system.tables WHERE database = " +
                                             QuoteString(db) + " AND name = " + QuoteString(name),
                                         "TabSeparatedRaw"));
    while (!engine.empty() && engine.back() == '\n') engine.pop_back();
    if (replicated || engine.starts_with("Replicated")) {
      // The engine's first argument is the ZooKeeper path: the new table gets a path of its own.
      size_t open = engine.find('\'');
      size_t close = open == std::string::npos ? std::string::npos : engine.find('\'', open + 1);
      if (!engine.starts_with("Replicated") || close == std::string::npos) {
        return Error(ErrorKind::kInternal, "TRUNCATE of " + db + "." + std::string(name) +
                                               ": unexpected engine of a replicated table: " + engine);
      }
      std::string path = clickhouse::ReplicationPath(target.replication_path, db, name, target.path_token);
      engine.replace(open, close - open + 1, QuoteString(path));
    }
    CHSYNC_RETURN_IF_ERROR(Ddl("CREATE TABLE IF NOT EXISTS " + QualifiedName(db, fresh) + on + " AS " +
                               QualifiedName(db, name) + " ENGINE = " + engine));
    CrashPoint("truncate.created");
  }
  for (const std::string& aside : asides) {
    Status swapped = Ddl("RENAME TABLE " + QualifiedName(db, name) + " TO " + QualifiedName(db, aside) +
                         ", " + QualifiedName(db, fresh) + " TO " + QualifiedName(db, name) + on);
    if (swapped.ok()) {
      CrashPoint("truncate.swapped");
      return Ddl("DROP TABLE IF EXISTS " + QualifiedName(db, aside) + on);
    }
    if (swapped.error().server_code() != clickhouse::code::kDirectoryAlreadyExists) return swapped;
    // Refused before anything moved: 18.16 checks the folder first.
    log::Warn(
        "TRUNCATE of {}.{}: the folder of ClickHouse table {} is there but no table owns it: a kill of "
        "ClickHouse in the middle of an earlier rename left it, with rows that were truncated; the table "
        "is set aside under another name. Delete that folder to free its space ({})",
        db, name, aside, swapped.error().message());
  }
  return Error(ErrorKind::kServer,
               fmt::format("TRUNCATE of {}.{}: the folders of {} … {} are all there, owned by no table "
                           "(kills of ClickHouse in the middle of renames left them); delete them in "
                           "ClickHouse's data folder of database {}, then `chsync resume --table`",
                           db, name, asides.front(), asides.back(), db));
}

Status Destination::SettleReplicas(const clickhouse::DdlTarget& target, std::string_view name) {
  // A replica applies an ALTER of a replicated table when its own columns in ZooKeeper
  // (<replica_path>/columns) equal the table's (<zookeeper_path>/columns). ClickHouse 18.16 loses
  // the thread that does this when its ZooKeeper session expires, until the replica is restarted.
  auto* failover = dynamic_cast<clickhouse::FailoverConnection*>(dest_.get());
  const size_t count = failover != nullptr ? failover->size() : 1;
  const std::string where =
      " WHERE database = " + QuoteString(target.StorageDatabase()) + " AND table = " + QuoteString(name);
  auto behind = [&](clickhouse::Connection& node) -> Result<bool> {
    CHSYNC_ASSIGN_OR_RETURN(
        std::string paths,
        node.Query("SELECT zookeeper_path, replica_path FROM system.replicas" + where, "TabSeparatedRaw"));
    size_t tab = paths.find('\t');
    if (tab == std::string::npos) return false;  // not a replicated table here (yet)
    std::string zk = paths.substr(0, tab);
    std::string replica = paths.substr(tab + 1);
    while (!replica.empty() && replica.back() == '\n') replica.pop_back();
    CHSYNC_ASSIGN_OR_RETURN(
        std::string same,
        node.Query("SELECT (SELECT value FROM system.zookeeper WHERE path = " + QuoteString(zk) +
                   " AND name = 'columns') = (SELECT value FROM system.zookeeper WHERE path = " +
                   QuoteString(replica) + " AND name = 'columns')"));
    return !same.starts_with("1");
  };
  const auto start = std::chrono::steady_clock::now();
  bool restarted = false;
  for (;;) {
    std::vector<std::string> lagging;
    for (size_t i = 0; i < count; ++i) {
      clickhouse::Connection& node = failover != nullptr ? failover->node(i) : *dest_;
      auto late = behind(node);
      // A node that does not answer catches up from ZooKeeper when it is back.
      if (late.ok() && *late) lagging.push_back(node.Describe());
    }
    if (lagging.empty()) return Status::Ok();
    const auto waited = std::chrono::steady_clock::now() - start;
    if (!restarted && waited >= std::chrono::seconds(2)) {
      log::Warn(
          "cluster {}: {}.{} has not taken its new columns on {}; restarting the replica there (SYSTEM "
          "RESTART REPLICA: ClickHouse 18.16 stops applying ALTERs after a ZooKeeper session loss)",
          topology_->name, target.StorageDatabase(), name, Joined(lagging));
      for (size_t i = 0; i < count; ++i) {
        clickhouse::Connection& node = failover != nullptr ? failover->node(i) : *dest_;
        auto late = behind(node);
        if (!late.ok() || !*late) continue;
        Status s = node.Execute("SYSTEM RESTART REPLICA " + QualifiedName(target.StorageDatabase(), name));
        if (!s.ok()) log::Warn("SYSTEM RESTART REPLICA on {}: {}", node.Describe(), s.error().message());
      }
      restarted = true;
    }
    if (waited >= std::chrono::seconds(120)) {
      return Error(
          ErrorKind::kNetwork,
          fmt::format("cluster {}: {}.{} still lacks the columns of its last ALTER on {} after 120 s; run "
                      "SYSTEM RESTART REPLICA {}.{} there",
                      topology_->name, target.StorageDatabase(), name, Joined(lagging),
                      target.StorageDatabase(), name));
    }
    for (int i = 0; i < 10; ++i) {
      if (cancel_) return clickhouse::CancelledError("waiting for the replicas of " + std::string(name));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

Result<std::string> Destination::RowCount(const clickhouse::DdlTarget& target, std::string_view name) {
  if (target.sharded) {
    return dest_->Query("SELECT count() FROM cluster(" + QuoteString(target.cluster) + ", " +
                        QuoteString(target.local_database) + ", " + QuoteString(name) + ")");
  }
  return dest_->Query("SELECT count() FROM " + QualifiedName(target.database, name));
}

Status Destination::RenameDestination(const clickhouse::DdlTarget& from_target, std::string_view from,
                                      const clickhouse::DdlTarget& to_target, std::string_view to) {
  CHSYNC_ASSIGN_OR_RETURN(bool from_exists, DestinationTableExists(from_target, from));
  CHSYNC_ASSIGN_OR_RETURN(bool to_exists, DestinationTableExists(to_target, to));
  if (!from_exists || to_exists) {
    log::Debug("ClickHouse rename {}.{} to {}.{} skipped (source table {}, target {})", from_target.database,
               from, to_target.database, to, from_exists ? "exists" : "missing",
               to_exists ? "exists" : "missing");
  } else {
    CHSYNC_RETURN_IF_ERROR(Ddl(clickhouse::CreateDatabase(to_target)));
    if (to_target.sharded) {
      CHSYNC_RETURN_IF_ERROR(Ddl(clickhouse::CreateDatabase(to_target.StorageDatabase(), to_target)));
    }
    std::string sql = "RENAME TABLE " + QualifiedName(from_target.StorageDatabase(), from) + " TO " +
                      QualifiedName(to_target.StorageDatabase(), to) +
                      (topology_ ? " ON CLUSTER " + QuoteIdentifier(topology_->name) : "");
    CHSYNC_RETURN_IF_ERROR(Ddl(sql));
    CrashPoint("rename");  // renamed, its Distributed table not yet moved
  }
  if (from_target.sharded) {
    // The Distributed table keeps the old local name in its engine: it moves by being created again.
    CHSYNC_ASSIGN_OR_RETURN(bool from_still, DestinationTableExists(from_target, from));
    if (!from_still) {
      CHSYNC_RETURN_IF_ERROR(
          Ddl(clickhouse::DropDistributed(from_target.database, from, from_target.cluster)));
    }
    CHSYNC_RETURN_IF_ERROR(EnsureDistributed(to_target, to, /*recreate=*/false));
  }
  return Status::Ok();
}

Status Destination::MakeRoom(const clickhouse::DdlTarget& target, const std::string& name,
                             const std::string& at) {
  CHSYNC_ASSIGN_OR_RETURN(bool exists, DestinationTableExists(target, name));
  if (!exists) return Status::Ok();
  std::string aside = name + "__dropped_" + at;
  CHSYNC_ASSIGN_OR_RETURN(bool aside_exists, DestinationTableExists(target, aside));
  if (aside_exists) return Status::Ok();  // done before a crash: `name` is the new table
  CHSYNC_ASSIGN_OR_RETURN(std::string rows, RowCount(target, name));
  if (rows.starts_with("0")) return DropDestination(target, name);
  log::Info(
      "ClickHouse table {}.{} (kept from a table dropped at the source) renamed to {} to make room for "
      "the new table",
      target.database, name, aside);
  return RenameDestination(target, name, target, aside);
}

Status Destination::MergeEmptyParts(const clickhouse::DdlTarget& target, std::string_view name) {
  if (caps_.modify_as_mutation) return Status::Ok();
  const std::string& database = target.StorageDatabase();
  const std::string table = QualifiedName(database, name);
  // partition_id, active, name of each part with no row.
  auto empty_parts = [&]() -> Result<std::vector<std::vector<std::string>>> {
    CHSYNC_ASSIGN_OR_RETURN(
        std::string text,
        dest_->Query("SELECT partition_id, active, name FROM system.parts WHERE database = " +
                         QuoteString(database) + " AND table = " + QuoteString(name) + " AND rows = 0",
                     "TabSeparatedRaw"));
    std::vector<std::vector<std::string>> out;
    for (size_t start = 0; start < text.size();) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      std::vector<std::string> fields =
          clickhouse::SplitTabSeparated(std::string_view(text).substr(start, end - start));
      start = end + 1;
      if (fields.size() >= 3) out.push_back(std::move(fields));
    }
    return out;
  };
  CHSYNC_ASSIGN_OR_RETURN(auto parts, empty_parts());
  if (parts.empty()) return Status::Ok();
  std::set<std::string> merged;
  for (const std::vector<std::string>& part : parts) {
    if (part[1] != "1" || !merged.insert(part[0]).second) continue;
    log::Info("{}: merging partition {}, whose part {} a DELETE emptied, before a column changes type", table,
              part[0], part[2]);
    CHSYNC_RETURN_IF_ERROR(
        dest_->Execute(fmt::format("OPTIMIZE TABLE {} PARTITION ID {} FINAL", table, QuoteString(part[0]))));
  }
  // Merged away, the part stays on disk until ClickHouse removes it (old_parts_lifetime, 8 minutes by
  // default), and the ALTER still fails on it: waited for.
  const auto start = std::chrono::steady_clock::now();
  auto reported = start - std::chrono::seconds(60);
  for (;;) {
    CHSYNC_ASSIGN_OR_RETURN(parts, empty_parts());
    if (parts.empty()) return Status::Ok();
    const auto now = std::chrono::steady_clock::now();
    if (now - start > std::chrono::minutes(20)) {
      return Error(
          ErrorKind::kServer,
          fmt::format("{} still has the part {} that a DELETE emptied after 20 minutes, and ClickHouse "
                      "18.16 fails a MODIFY COLUMN on it half-way, leaving the table unreadable; once "
                      "system.parts no longer lists it, resume the table",
                      table, parts.front()[2]));
    }
    if (cancelled())
      return clickhouse::CancelledError("waiting for ClickHouse to remove the empty part of " + table);
    if (now - reported >= std::chrono::seconds(30)) {
      log::Info(
          "{}: waiting {} s for ClickHouse to remove the part {} a DELETE emptied (old_parts_lifetime) "
          "before a column changes type: ClickHouse 18.16 fails the ALTER on it",
          table, std::chrono::duration_cast<std::chrono::seconds>(now - start).count(), parts.front()[2]);
      reported = now;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

Status Destination::RunPlan(const TablePlan& plan, const clickhouse::DdlTarget& target,
                            std::string_view table) {
  // How many shards have the column (one replica of each answers through cluster(); replicas of a
  // shard follow each other through ZooKeeper); one server: 0 or 1.
  auto shards_with_column = [&](const std::string& column) -> Result<size_t> {
    std::string from =
        topology_ ? "cluster(" + QuoteString(topology_->name) + ", system.columns)" : "system.columns";
    CHSYNC_ASSIGN_OR_RETURN(
        std::string found,
        dest_->Query("SELECT count() FROM " + from +
                     " WHERE database = " + QuoteString(target.StorageDatabase()) +
                     " AND table = " + QuoteString(table) + " AND name = " + QuoteString(column)));
    return static_cast<size_t>(std::strtoull(found.c_str(), nullptr, 10));
  };
  const size_t all = topology_ ? topology_->shards() : 1;
  bool altered = false;
  for (size_t i = 0; i < plan.statements.size(); ++i) {
    const std::string& sql = plan.statements[i];
    // A server without ADD COLUMN IF NOT EXISTS / DROP COLUMN IF EXISTS: the statement may have run
    // before a crash (on a cluster: on some shards only, which then refuse it again).
    std::string exists = i < plan.skip_if_column_exists.size() ? plan.skip_if_column_exists[i] : "";
    std::string missing = i < plan.skip_if_column_missing.size() ? plan.skip_if_column_missing[i] : "";
    auto applied = [&]() -> Result<bool> {
      if (!exists.empty()) {
        CHSYNC_ASSIGN_OR_RETURN(size_t n, shards_with_column(exists));
        return n >= all;
      }
      if (!missing.empty()) {
        CHSYNC_ASSIGN_OR_RETURN(size_t n, shards_with_column(missing));
        return n == 0;
      }
      return false;
    };
    // What follows an ALTER (replicas settled, the Distributed table made again) follows it also
    // when a crash came after the ALTER itself: a replay that finds it applied does the rest.
    const bool alter = sql.starts_with("ALTER TABLE");
    altered = altered || alter;
    CHSYNC_ASSIGN_OR_RETURN(bool done, applied());
    if (done) {
      log::Info("already applied: {}", sql);
      if (alter && topology_) CHSYNC_RETURN_IF_ERROR(SettleReplicas(target, table));
      continue;
    }
    Status s = Status::Ok();
    if (sql.starts_with("TRUNCATE TABLE")) {
      s = TruncateDestination(target, table);
    } else {
      if (alter && sql.find(" MODIFY COLUMN ") != std::string::npos) s = MergeEmptyParts(target, table);
      // The plan's DROP TABLE is DropTable(table, target): with the Distributed table first.
      if (s.ok()) s = sql.starts_with("DROP TABLE") ? DropDestination(target, table) : Ddl(sql);
      if (s.ok() && alter) CrashPoint("alter");  // run, not yet settled nor its Distributed table made again
      if (s.ok() && topology_ && alter) s = SettleReplicas(target, table);
      if (s.ok() && sql.starts_with("CREATE TABLE")) s = EnsureDistributed(target, table, /*recreate=*/false);
    }
    if (!s.ok() && topology_ && (!exists.empty() || !missing.empty())) {
      // Shards that had applied it refused it; the others ran it.
      CHSYNC_ASSIGN_OR_RETURN(bool now, applied());
      if (now) {
        log::Info("cluster {}: `{}` now applied on every shard ({})", topology_->name, sql,
                  s.error().message());
        if (alter) CHSYNC_RETURN_IF_ERROR(SettleReplicas(target, table));
        continue;
      }
    }
    if (!s.ok()) return s;
  }
  if (altered && target.sharded) {
    // The Distributed table takes the local table's new columns by being created again (ALTER of a
    // Distributed table ON CLUSTER is refused on clusters with internal_replication).
    CHSYNC_RETURN_IF_ERROR(EnsureDistributed(target, table, /*recreate=*/true));
  }
  return Status::Ok();
}

Status Destination::EnsureSchemaLog(const std::string& database) {
  if (schema_logs_.contains(database)) return Status::Ok();
  clickhouse::DdlTarget target = TargetIn(database);
  CHSYNC_RETURN_IF_ERROR(Ddl(clickhouse::CreateDatabase(target)));
  if (target.sharded)
    CHSYNC_RETURN_IF_ERROR(Ddl(clickhouse::CreateDatabase(target.StorageDatabase(), target)));
  // One row per statement and table; a statement replayed after a crash collapses into its first
  // row (same position and table) when ClickHouse merges, or under FINAL.
  CHSYNC_RETURN_IF_ERROR(
      Ddl("CREATE TABLE IF NOT EXISTS " + QualifiedName(target.StorageDatabase(), kSchemaLogTable) +
          (topology_ ? " ON CLUSTER " + QuoteIdentifier(topology_->name) : "") + " (`at` " +
          (caps_.datetime64 ? "DateTime64(3)" : "DateTime") +
          ", `position` String, `table` String, `statement` String, `actions` Array(String)) ENGINE = " +
          clickhouse::ReplacingEngine(kSchemaLogTable, "", target) + " ORDER BY (`position`, `table`)" +
          (config_.durable_inserts ? " SETTINGS " + std::string(clickhouse::kDurableSettings) : "")));
  CHSYNC_RETURN_IF_ERROR(EnsureDistributed(target, kSchemaLogTable, /*recreate=*/false));
  schema_logs_.insert(database);
  return Status::Ok();
}

Status Destination::BeginJournaled(const std::string& state_dir, std::string_view file, uint64_t position) {
  if (!journal_) {
    CHSYNC_ASSIGN_OR_RETURN(DdlJournal journal, DdlJournal::Open(state_dir));
    journal_ = std::move(journal);
  }
  return journal_->Forget(file, position);
}

Status Destination::RunStepOnce(const DdlStep& step, const std::function<Status()>& run) {
  if (journal_->Done(step)) {
    log::Info("{}: done in ClickHouse before the restart, not run again", step.ToString());
    return Status::Ok();
  }
  CHSYNC_RETURN_IF_ERROR(run());
  Status recorded = journal_->Record(step);
  if (!recorded.ok()) journal_.reset();  // its file may end in a torn line: read it again first
  return recorded;
}

Status Destination::SwapIn(const clickhouse::DdlTarget& target, const std::string& name,
                           const std::string& temp, const std::string& replaced) {
  // Each step is skipped when a crash let it run already (see RenameDestination).
  CHSYNC_ASSIGN_OR_RETURN(bool temp_exists, DestinationTableExists(target, temp));
  if (temp_exists) {
    CHSYNC_RETURN_IF_ERROR(DropDestination(target, replaced));
    CHSYNC_RETURN_IF_ERROR(RenameDestination(target, name, target, replaced));
    CHSYNC_RETURN_IF_ERROR(RenameDestination(target, temp, target, name));
  }
  // A crash between the second rename and the Distributed table over it (issue 33, case 4): the
  // local table is swapped in already, its Distributed table not yet.
  CHSYNC_RETURN_IF_ERROR(EnsureDistributed(target, name, /*recreate=*/false));
  return DropDestination(target, replaced);
}

}  // namespace chsync::pipe
