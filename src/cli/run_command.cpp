// `chsync run` and `chsync resync`: the pipe. Both take the same flags (and a configuration
// file); resync first rebuilds one table or all of them, then continues as run does.
// Exit 0 after a clean stop (SIGINT/SIGTERM, or --until-caught-up reached), 1 on a pipe failure
// with the reason on stderr, 2 on bad usage or configuration.
// `chsync resync --table DB.TABLE` while a `chsync run` holds the state directory does not open it:
// it asks the running pipe to copy the table again online (a control request, state/control.h) and
// prints its answer, as `chsync pause` does (table_control_command.cpp).

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "cli/observe.h"
#include "common/log.h"
#include "config/config.h"
#include "pipe/pipeline.h"
#include "state/control.h"

namespace chsync::cli {

/// Defined in table_control_command.cpp: submits a control request to the pipe of `state`, waits
/// up to `wait_s` seconds for its answer, prints it and returns the exit code.
int RunTableControl(std::string_view op, const std::string& state, const std::string& table, unsigned wait_s);

namespace {

std::atomic<bool> g_stop{false};
std::atomic<bool> g_reload{false};

extern "C" void OnStopSignal(int /*signal*/) {
  g_stop.store(true);
}

extern "C" void OnReloadSignal(int /*signal*/) {
  g_reload.store(true);
}

/// Flags as given: unset ones leave the configuration file's (or the default) value alone.
struct RunFlags {
  std::string config_file;
  std::optional<std::string> source, dest, tables, state, dest_database, log_level, dest_cluster,
      dest_replication_path, on_binlog_gap, log_format, http_listen, datetime_fallback, json, snapshot_mode,
      start_position, start_gtid, start_time;
  std::optional<uint64_t> failover_after_ms;
  std::optional<double> ready_max_lag_s;
  std::optional<uint32_t> server_id;
  std::optional<unsigned> snapshot_parallelism;
  std::optional<uint64_t> snapshot_chunk_rows, batch_rows, batch_age_ms, batch_bytes;
  std::vector<std::string> schema_policies;  // --schema-policy, in the order given
  bool until_caught_up = false;
  std::string table;     // resync --table
  unsigned wait_s = 60;  // resync --wait-s, with a running pipe
};

int RunOrResync(const RunFlags& f, bool resync) {
  const char* name = resync ? "resync" : "run";
  pipe::PipeConfig config;
  if (!f.config_file.empty()) {
    Status loaded = pipe::LoadConfigFile(f.config_file, config);
    if (!loaded.ok()) {
      fmt::print(stderr, "chsync {}: {}\n", name, loaded.error().message());
      return kExitUsage;
    }
  }
  if (f.state) config.state = *f.state;
  if (resync && !config.state.empty() && pipe::PipeRunning(config.state)) {
    // The running pipe does the work; the other flags are its business.
    if (f.table.empty()) {
      fmt::print(stderr,
                 "chsync resync: a chsync run is running on {}: a running pipe copies one table again "
                 "(--table DB.TABLE); to copy every table, stop it first\n",
                 config.state);
      return kExitUsage;
    }
    return RunTableControl("resync", config.state, f.table, f.wait_s);
  }
  if (f.source) config.source = *f.source;
  if (f.dest) config.dest = *f.dest;
  if (Status ssh = pipe::ApplySshKeys(config); !ssh.ok()) {  // source_ssh: and dest_ssh:
    fmt::print(stderr, "chsync {}: {}\n", name, ssh.error().message());
    return kExitUsage;
  }
  if (f.tables) config.tables = *f.tables;
  if (f.dest_database) config.dest_database = *f.dest_database;
  if (f.dest_cluster) config.dest_cluster = *f.dest_cluster;
  if (f.dest_replication_path) config.dest_replication_path = *f.dest_replication_path;
  if (f.log_level) config.log_level = *f.log_level;
  if (f.log_format) config.log_format = *f.log_format;
  if (f.http_listen) config.http_listen = *f.http_listen;
  if (f.ready_max_lag_s) config.http_ready_max_lag_s = *f.ready_max_lag_s;
  if (f.failover_after_ms) config.failover_after_ms = *f.failover_after_ms;
  if (f.on_binlog_gap) {
    auto gap = pipe::ParseBinlogGap(*f.on_binlog_gap);
    if (!gap.ok()) {
      fmt::print(stderr, "chsync {}: --on-binlog-gap: {}\n", name, gap.error().message());
      return kExitUsage;
    }
    config.on_binlog_gap = *gap;
  }
  if (f.datetime_fallback) {
    auto fallback = pipe::ParseDateTimeFallback(*f.datetime_fallback);
    if (!fallback.ok()) {
      fmt::print(stderr, "chsync {}: --datetime-fallback: {}\n", name, fallback.error().message());
      return kExitUsage;
    }
    config.datetime_fallback = *fallback;
  }
  if (f.json) {
    auto mode = pipe::ParseJsonMode(*f.json);
    if (!mode.ok()) {
      fmt::print(stderr, "chsync {}: --json: {}\n", name, mode.error().message());
      return kExitUsage;
    }
    config.json = *mode;
  }
  if (f.snapshot_mode) {
    auto mode = pipe::ParseStartMode(*f.snapshot_mode);
    if (!mode.ok()) {
      fmt::print(stderr, "chsync {}: --snapshot-mode: {}\n", name, mode.error().message());
      return kExitUsage;
    }
    config.snapshot_mode = *mode;
  }
  // One start point replaces another the file gives.
  if (f.start_position || f.start_gtid || f.start_time) {
    config.start_position = f.start_position.value_or("");
    config.start_gtid = f.start_gtid.value_or("");
    config.start_time = f.start_time.value_or("");
  }
  if (f.server_id) config.server_id = *f.server_id;
  if (f.snapshot_parallelism) config.snapshot_parallelism = *f.snapshot_parallelism;
  if (f.snapshot_chunk_rows) config.snapshot_chunk_rows = *f.snapshot_chunk_rows;
  if (f.batch_rows) config.batch_max_rows = *f.batch_rows;
  if (f.batch_age_ms) config.batch_max_age_ms = *f.batch_age_ms;
  if (f.batch_bytes) config.batch_max_bytes = *f.batch_bytes;
  for (const std::string& assignment : f.schema_policies) {
    Status assigned = config.policies.Assign(assignment);
    if (!assigned.ok()) {
      fmt::print(stderr, "chsync {}: {}\n", name, assigned.error().message());
      return kExitUsage;
    }
  }
  Status valid = pipe::Validate(config);
  if (!valid.ok()) {
    fmt::print(stderr, "chsync {}: {}\n", name, valid.error().message());
    return kExitUsage;
  }
  log::SetLevel(config.log_level == "debug"   ? log::Level::kDebug
                : config.log_level == "warn"  ? log::Level::kWarn
                : config.log_level == "error" ? log::Level::kError
                                              : log::Level::kInfo);
  log::SetFormat(config.log_format == "json" ? log::Format::kJson : log::Format::kText);

  pipe::RunRequest request;
  request.config = config;
  request.until_caught_up = f.until_caught_up;
  request.resync = resync;
  request.resync_table = f.table;
  request.terminal = isatty(STDERR_FILENO) != 0;
  request.config_file = f.config_file;
  request.tables_from_flag = f.tables.has_value();
  request.reload = &g_reload;

  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  // SIGHUP: `tables:` read again from the configuration file (docs/table-control.md).
  struct sigaction reload {};
  reload.sa_handler = OnReloadSignal;
  reload.sa_flags = SA_RESTART;  // a read it interrupts goes on
  sigemptyset(&reload.sa_mask);
  sigaction(SIGHUP, &reload, nullptr);

  // Serves metrics, probes, the status page and read-only queries until the pipe returns.
  std::unique_ptr<Observer> observer;
  if (!config.http_listen.empty()) {
    auto started = Observer::Start(config);
    if (!started.ok()) {
      fmt::print(stderr, "chsync {}: {}\n", name, started.error().message());
      return kExitUsage;
    }
    observer = std::move(*started);
  }

  Status s = pipe::RunPipe(request, g_stop);
  if (!s.ok()) {
    if (log::GetFormat() == log::Format::kJson) {
      log::Err("chsync {}: {}", name, s.error().message());  // one JSON object, like every other line
    } else {
      fmt::print(stderr, "chsync {}: {}\n", name, s.error().message());
    }
    bool usage = s.error().kind() == ErrorKind::kUsage || s.error().kind() == ErrorKind::kConfig;
    return usage ? kExitUsage : kExitFailure;
  }
  if (g_stop) {
    log::Info("stopped");
  } else {
    log::Info("caught up; checkpoint saved");
  }
  return kExitOk;
}

void AddFlags(CLI::App* sub, RunFlags& f) {
  sub->add_option(
      "--source", f.source,
      "mysql://USER:PASSWORD@HOST:PORT (password also from CHSYNC_SOURCE_PASSWORD); several, "
      "comma-separated: a primary and its replicas, followed by GTID on failover (docs/failover.md)");
  sub->add_option("--failover-after-ms", f.failover_after_ms,
                  "with several --source servers: how long the current one may stay unreachable before "
                  "chsync moves to another (default 30000)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{86400000}));
  sub->add_option("--on-binlog-gap", f.on_binlog_gap,
                  "fail (default) or resync: what to do when the source no longer has the binlog this pipe "
                  "must resume from");
  sub->add_option("--datetime-fallback", f.datetime_fallback,
                  "drop_fraction (default) or string: how DATETIME/TIMESTAMP with fractional seconds are "
                  "kept on a ClickHouse without DateTime64 (before 20.1); string keeps them exactly as text");
  sub->add_option("--json", f.json,
                  "string (default) or native: MySQL/MariaDB JSON columns as their text in a String, or as "
                  "ClickHouse JSON (ClickHouse 25.3 or later); per table with table_options' json");
  sub->add_option(
      "--dest", f.dest,
      "http(s)://USER:PASSWORD@HOST:PORT (ClickHouse server; several, comma-separated: the "
      "nodes of a cluster) or file:PATH (embedded store); password also from CHSYNC_DEST_PASSWORD");
  sub->add_option("--dest-cluster", f.dest_cluster,
                  "ClickHouse cluster (remote_servers) to create Replicated (and on several shards "
                  "Distributed) tables on; see docs/clusters.md");
  sub->add_option("--dest-replication-path", f.dest_replication_path,
                  "ZooKeeper path pattern of the Replicated tables (default "
                  "/clickhouse/tables/{shard}/{database}/{table})");
  sub->add_option("--tables", f.tables, "tables to replicate: 'db.*,db2.t,!db.tmp_*' (default: all)");
  sub->add_option("--state", f.state, "state directory (checkpoint, status); one pipe per directory");
  sub->add_option("--config", f.config_file, "YAML configuration file (flags override it)");
  sub->add_flag("--until-caught-up", f.until_caught_up,
                "exit 0 once every change committed before streaming began is applied and checkpointed");
  sub->add_option(
      "--snapshot-mode", f.snapshot_mode,
      "how a new pipe starts: initial (default: copy, then stream), never (stream only, from now or "
      "--start-*), only (copy and exit); file key snapshot.mode");
  sub->add_option("--start-position", f.start_position,
                  "with --snapshot-mode never: stream from FILE:POS (a transaction's start)");
  sub->add_option(
      "--start-gtid", f.start_gtid,
      "with --snapshot-mode never: stream from the transaction after this GTID position (MariaDB) "
      "or GTID set (MySQL)");
  sub->add_option("--start-time", f.start_time,
                  "with --snapshot-mode never: stream from the first transaction at or after 'YYYY-MM-DD "
                  "HH:MM:SS' (UTC, or with an offset such as +02:00)");
  sub->add_option("--dest-database", f.dest_database,
                  "destination database for every table (default: named like each source database)");
  sub->add_option("--server-id", f.server_id,
                  "replica server_id, unique among the source's replicas (default: from the state path)")
      ->check(CLI::Range(1u, 0xFFFFFFFFu));
  sub->add_option("--snapshot-parallelism", f.snapshot_parallelism, "tables copied at once (default 4)")
      ->check(CLI::Range(1u, 64u));
  sub->add_option("--snapshot-chunk-rows", f.snapshot_chunk_rows,
                  "rows per primary-key range chunk of the snapshot (default 100000)")
      ->check(CLI::Range(uint64_t{1000}, uint64_t{100000000}));
  sub->add_option("--batch-rows", f.batch_rows, "flush a table's rows at this many (default 100000)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{10000000}));
  sub->add_option("--batch-age-ms", f.batch_age_ms, "…or when they waited this long (default 500)")
      ->check(CLI::Range(uint64_t{10}, uint64_t{600000}));
  sub->add_option("--batch-max-bytes", f.batch_bytes,
                  "…or when they take this many bytes; bounds memory (default 33554432, 32 MiB)")
      ->check(CLI::Range(uint64_t{1} << 16, uint64_t{1} << 34));
  sub->add_option("--log-level", f.log_level, "debug, info (default), warn, error");
  sub->add_option("--log-format", f.log_format,
                  "text (default) or json: one JSON object per line with ts, level and msg");
  sub->add_option("--http", f.http_listen,
                  "serve /metrics, /healthz, /readyz, a status page and live queries on ADDR, e.g. "
                  "127.0.0.1:9187 (off by default; see docs/operations.md)")
      ->type_name("ADDR");
  sub->add_option("--ready-max-lag-s", f.ready_max_lag_s,
                  "with --http: /readyz reports not ready while the pipe is more than this many seconds "
                  "behind the source (default 60)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--schema-policy", f.schema_policies,
                  "KEY=VALUE or DB.TABLE:KEY=VALUE (repeatable; applied after the file's schema_changes), "
                  "e.g. truncate=ignore, 'shop.*:drop_table=drop' (see docs/configuration.md)")
      ->allow_extra_args(false);
}

void AddRunCommand(CLI::App& app, RunFunction& run) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* sub = app.add_subcommand("run", "Copy the tables, then keep them in sync from the binlog");
  AddFlags(sub, *flags);
  sub->callback([flags, &run] { run = [flags] { return RunOrResync(*flags, false); }; });
}

void AddResyncCommand(CLI::App& app, RunFunction& run) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* sub = app.add_subcommand(
      "resync", "Copy one table (--table) or every table again, then continue as `run` does");
  AddFlags(sub, *flags);
  sub->add_option("--table", flags->table, "the table to copy again, DB.TABLE (default: every table)");
  sub->add_option("--wait-s", flags->wait_s,
                  "with --table while a chsync run is running on --state: how long to wait for its answer "
                  "(default 60)")
      ->check(CLI::Range(0u, 86400u));
  sub->callback([flags, &run] { run = [flags] { return RunOrResync(*flags, true); }; });
}

const CommandRegistration kRunRegistration{50, &AddRunCommand};
const CommandRegistration kResyncRegistration{51, &AddResyncCommand};

}  // namespace
}  // namespace chsync::cli
