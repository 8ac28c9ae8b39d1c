#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/result.h"
#include "net/ssh_endpoint.h"
#include "policy/mapping.h"
#include "policy/schema_policy.h"

namespace chsync::pipe {

/// Everything `chsync run`/`resync` needs, from a configuration file (YAML) and flags. Flags win
/// over the file. A complete example with every key is in docs/configuration.md.
struct PipeConfig {
  /// mysql://USER[:PASSWORD]@HOST[:PORT]; several separated by commas (in the file also a list):
  /// the primary and its replicas, in the order chsync prefers them (docs/failover.md).
  std::string source;
  /// How long the server the pipe reads from may stay unreachable before chsync tries the other
  /// --source servers (only with more than one).
  uint64_t failover_after_ms = 30000;
  /// When the source no longer has the binlog the pipe must resume from (purged, or a server
  /// without the pipe's GTIDs): kFail stops with an error, kResync copies every table again.
  enum class BinlogGap { kFail, kResync };
  BinlogGap on_binlog_gap = BinlogGap::kFail;
  /// http(s)://USER[:PASSWORD]@HOST[:PORT] or file:PATH; several server URLs separated by commas
  /// (in the file also a list): the nodes of one cluster, tried in turn when one fails.
  std::string dest;
  /// Files holding the source's and the destination's password alone (file keys
  /// source_password_file and dest_password_file, no flags; relative to the configuration file's
  /// folder). LoadConfigFile reads them into CHSYNC_SOURCE_PASSWORD and CHSYNC_DEST_PASSWORD, which
  /// every URL without a password of its own takes its password from.
  std::string source_password_file;
  std::string dest_password_file;
  /// SSH tunnels to the source and, separately, to the destination (file keys source_ssh.* and
  /// dest_ssh.*: host, port, user, key_file, known_hosts, strict_host_key_checking; no flags):
  /// every URL of `source` / `dest` without an ssh= parameter of its own goes through this bastion
  /// (net/ssh_endpoint.h; docs/configuration.md, "SSH tunnels"). An empty host: no tunnel.
  net::SshEndpoint source_ssh;
  net::SshEndpoint dest_ssh;
  std::string tables;         ///< --tables patterns; empty: every non-system table
  std::string state;          ///< the state directory
  std::string dest_database;  ///< empty: named like each source database
  /// This pipe's name among the pipes that write into the same ClickHouse tables (file key
  /// source_name): a table_options source_column then holds "NAME/database" (docs/mapping.md,
  /// "Many sources into one table"). Empty: the database name alone.
  std::string source_name;
  uint32_t server_id = 0;  ///< replica id; 0: derived from the state directory path

  /// A ClickHouse cluster (remote_servers) to create the tables on (docs/clusters.md); empty: one
  /// server. Tables are Replicated at dest_replication_path with replica dest_replica_name, and on
  /// more than one shard also Distributed.
  std::string dest_cluster;
  std::string dest_replication_path = "/clickhouse/tables/{shard}/{database}/{table}";
  std::string dest_replica_name = "{replica}";
  /// distributed_ddl_task_timeout of chsync's ON CLUSTER statements: after it, chsync names the
  /// hosts that have not run the statement yet and goes on waiting for them.
  uint64_t dest_ddl_timeout_s = 30;

  /// How a new pipe (no checkpoint in the state directory) starts (`snapshot.mode`, or `snapshot:`
  /// alone; --snapshot-mode): kInitial copies every table, then streams from the point the copy
  /// began; kNever copies nothing and streams from the end of the binlog now, or from one of the
  /// start_* keys below; kOnly copies every table and exits, with nothing to stream from
  /// (docs/configuration.md, "Start modes"). With a checkpoint, the checkpoint decides.
  enum class StartMode { kInitial, kNever, kOnly };
  StartMode snapshot_mode = StartMode::kInitial;
  /// With snapshot.mode never, at most one of these: where the stream begins instead of the end of
  /// the binlog now. start_position "FILE:POS" (a transaction's first event, or a file's end);
  /// start_gtid a MariaDB GTID position (domain-server-seq, comma-separated) or a MySQL GTID set
  /// (the transactions already applied: the stream begins after them); start_time
  /// "YYYY-MM-DD HH:MM:SS" in UTC, or with an offset ("…+02:00", "…Z"): the first transaction
  /// whose binlog timestamp is at or after it.
  std::string start_position;
  std::string start_gtid;
  std::string start_time;

  unsigned snapshot_parallelism = 4;  ///< tables/chunks copied at once
  /// How MySQL/MariaDB JSON columns are kept (`json:`, --json; per table in table_options):
  /// kString writes the document's text into a String; kNative a ClickHouse JSON column (ClickHouse
  /// 25.3 or later; refused at start on an older server). Decided when a column is created:
  /// changing it later needs a resync of the table.
  enum class JsonMode { kString, kNative };
  JsonMode json = JsonMode::kString;
  uint64_t snapshot_chunk_rows = 100000;  ///< rows per primary-key range chunk

  uint64_t batch_max_rows = 100000;  ///< flush a table's batch at this many rows…
  uint64_t batch_max_age_ms = 500;   ///< …or when its oldest row waited this long
  /// …or when its rows take this many bytes; also the bound of all tables' unsent rows together,
  /// and (twice it) of the batches queued for ClickHouse: what bounds the pipe's memory.
  uint64_t batch_max_bytes = 32ull << 20;

  /// How often one ClickHouse statement or insert is tried before the pipe gives it up, and the
  /// longest back-off between tries. When it gives up, the pipe reads again from its last
  /// checkpoint, with the schema state saved there, after its own back-off (capped the same way).
  int retry_attempts = 12;
  uint64_t retry_max_backoff_ms = 30000;
  /// Exit after this long without a saved checkpoint while failures repeat; 0: keep trying.
  uint64_t retry_give_up_after_ms = 0;

  /// Create ClickHouse tables that fsync every inserted part (fsync_after_insert, ClickHouse ≥ 21.1), so
  /// that a checkpoint never runs ahead of what a power loss of the ClickHouse host would keep.
  bool durable_inserts = false;
  /// /metrics labels each table by its source table ("db.t") instead of the ClickHouse table it
  /// goes to (http.metrics_per_source_table; docs/operations.md).
  bool http_metrics_per_source_table = false;

  /// How DATETIME(fsp>0)/TIMESTAMP(fsp>0) columns are kept on a ClickHouse without DateTime64
  /// (before 20.1): kDropFraction writes DateTime (whole seconds, 1970..2105, clamped); kString
  /// writes a String 'YYYY-MM-DD HH:MM:SS.f…' with fsp digits, every value exactly. Servers with
  /// DateTime64 ignore it. Decided when a table is created: changing it later needs a resync.
  enum class DateTimeFallback { kDropFraction, kString };
  DateTimeFallback datetime_fallback = DateTimeFallback::kDropFraction;

  std::string log_level = "info";  ///< debug, info, warn, error
  /// text (a line for people) or json (one object per line: ts, level, msg); see common/log.h.
  std::string log_format = "text";

  /// HOST:PORT to serve /metrics, /healthz, /readyz, the status page and live queries on
  /// (docs/operations.md); empty: no HTTP server. IPv6 hosts in brackets ("[::1]:9187").
  std::string http_listen;
  /// /readyz answers "not ready" while the pipe is further behind the source than this, in seconds.
  double http_ready_max_lag_s = 60;

  /// What to do about each kind of schema change, per table (`schema_changes:`, --schema-policy).
  PolicySet policies;

  /// Per-table mapping and ClickHouse table options (`table_options:`, docs/mapping.md).
  MappingSet mappings;
};

/// Reads a YAML configuration file into `config` (keys present in the file override the defaults).
/// Unknown keys, wrong types and out-of-range values are kConfig errors naming the file, line and key.
/// Then reads the password files it names (source_password_file, dest_password_file) and sets
/// CHSYNC_SOURCE_PASSWORD / CHSYNC_DEST_PASSWORD to their contents (a final newline dropped),
/// replacing a value from the environment; a missing, empty or multi-line file is a kConfig error
/// naming the key and the file. REQUIRES: no other thread runs (it calls setenv).
Status LoadConfigFile(const std::string& path, PipeConfig& config);

/// Puts source_ssh and dest_ssh into the URLs of `source` and `dest` as ssh= parameters (only URLs
/// that name no ssh= of their own; flags given on the command line too). Call once, after the flags
/// were merged. kConfig when a tunnel's keys lack its host.
Status ApplySshKeys(PipeConfig& config);

/// Same as LoadConfigFile on YAML text, without reading password files; `origin` names it in errors.
Status LoadConfigText(std::string_view yaml, const std::string& origin, PipeConfig& config);

/// Checks a merged configuration: required settings present, values in range. kConfig errors
/// say which setting and how to give it (flag and file key).
Status Validate(const PipeConfig& config);

/// Checks an http listen address: HOST:PORT with a port 0–65535 (0: any free port) and IPv6 hosts
/// in brackets; kConfig naming --http and http.listen otherwise.
Status ValidateListenAddress(std::string_view address);

/// "fail" or "resync" (--on-binlog-gap, file key on_binlog_gap); kConfig otherwise.
Result<PipeConfig::BinlogGap> ParseBinlogGap(std::string_view text);

/// "initial", "never" or "only" (--snapshot-mode, file key snapshot.mode); kConfig otherwise.
Result<PipeConfig::StartMode> ParseStartMode(std::string_view text);
std::string_view StartModeName(PipeConfig::StartMode mode);

/// FILE:POS of start_position: a binlog file name and a byte offset of at least 4; kConfig
/// naming the key otherwise.
Result<std::pair<std::string, uint64_t>> ParseStartPosition(std::string_view text);

/// start_time as seconds since the epoch: "YYYY-MM-DD HH:MM:SS" (or with a T) in UTC, optionally
/// followed by "Z" or an offset "+HH:MM"/"-HH:MM"; kConfig naming the key otherwise.
Result<int64_t> ParseStartTime(std::string_view text);

/// "string" or "native" (--json, file key json, table_options key json); kConfig otherwise.
Result<PipeConfig::JsonMode> ParseJsonMode(std::string_view text);

/// "drop_fraction" or "string" (--datetime-fallback, file key datetime_fallback); kConfig otherwise.
Result<PipeConfig::DateTimeFallback> ParseDateTimeFallback(std::string_view text);

}  // namespace chsync::pipe
