#include "metrics/pipe_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <utility>

#include "clickhouse/connection.h"
#include "common/log.h"
#include "mysql/mysql_gtid_set.h"
#include "mysql/source_set.h"
#include "position/row_version.h"
#include "schema/parser.h"
#include "schema/table_schema.h"

#ifndef CHSYNC_VERSION
#define CHSYNC_VERSION "0.1.0"
#endif

namespace chsync::pipe {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string UuidText(const std::array<uint8_t, 16>& uuid) {
  std::string out;
  out.reserve(36);
  for (size_t i = 0; i < uuid.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", uuid[i]);
  }
  return out;
}

struct LiveStatus {
  std::mutex mutex;
  RunStatus status;
};

LiveStatus& Live() {
  static LiveStatus live;
  return live;
}

}  // namespace

void PendingRowChanges::Count() {
  if (counters.inserts == nullptr) return;
  if (inserts != 0) counters.inserts->Add(static_cast<double>(inserts));
  if (updates != 0) counters.updates->Add(static_cast<double>(updates));
  if (deletes != 0) counters.deletes->Add(static_cast<double>(deletes));
  inserts = updates = deletes = 0;
}

void PendingRowChanges::Absorb(PendingRowChanges& other) {
  if (counters.inserts == nullptr) counters = other.counters;
  inserts += other.inserts;
  updates += other.updates;
  deletes += other.deletes;
  other.inserts = other.updates = other.deletes = 0;
}

PipeMetrics::PipeMetrics()
    : build_info(registry.AddGauge("chsync_build_info", "chsync's version and commit (always 1).",
                                   {"version", "commit"})),
      process_start_time(registry.AddGauge("chsync_process_start_time_seconds",
                                           "When this process started (unix time, seconds).")),
      pipe_state(registry.AddGauge(
          "chsync_pipe_state",
          "1 for the pipe's current state (snapshot, streaming, stopped, failed), 0 for the others.",
          {"state"})),
      replication_lag(
          registry.AddGauge("chsync_replication_lag_seconds",
                            "Now minus the source commit time of the last transaction ClickHouse "
                            "acknowledged (checkpointed); 0 "
                            "while a heartbeat or the end of the binlog showed nothing pending.")),
      seconds_since_last_event(
          registry.AddGauge("chsync_seconds_since_last_event",
                            "Seconds since the stream last read a binlog event or heartbeat.")),
      last_checkpoint_time(registry.AddGauge("chsync_last_checkpoint_time_seconds",
                                             "When the last checkpoint was saved (unix time, seconds).")),
      checkpoint_file_sequence(registry.AddGauge(
          "chsync_checkpoint_file_sequence", "The checkpoint's binlog file number (42 for binlog.000042).")),
      checkpoint_offset(registry.AddGauge("chsync_checkpoint_offset_bytes",
                                          "The checkpoint's byte offset in its binlog file.")),
      checkpoint_gtid_sequence(registry.AddGauge(
          "chsync_checkpoint_gtid_sequence",
          "The checkpoint's last GTID sequence number per MariaDB domain and server id (MySQL: per source "
          "uuid[:tag] as domain, server_id empty).",
          {"domain", "server_id"})),
      row_changes(registry.AddCounter(
          "chsync_row_changes_total",
          "Source row changes applied, counted when ClickHouse acknowledged the INSERT that carried them, by "
          "table (source db.t) and kind (insert, update, delete).",
          {"table", "kind"})),
      binlog_events(registry.AddCounter("chsync_binlog_events_total",
                                        "Binlog events read from the source (heartbeats not counted).")),
      binlog_bytes_read(registry.AddCounter("chsync_binlog_bytes_read_total",
                                            "Bytes of binlog events read from the source.")),
      transactions(registry.AddCounter(
          "chsync_transactions_total",
          "Source transactions (and statements outside one) the stream read to their end.")),
      batch_rows(registry.AddHistogram("chsync_batch_rows",
                                       "Rows per INSERT into ClickHouse (stream and snapshot).",
                                       metrics::ExponentialBuckets(1, 4, 12))),
      batch_bytes(registry.AddHistogram("chsync_batch_bytes",
                                        "Bytes (RowBinary) per INSERT into ClickHouse (stream and snapshot).",
                                        metrics::ExponentialBuckets(256, 4, 12))),
      insert_duration(registry.AddHistogram(
          "chsync_insert_duration_seconds",
          "Seconds per INSERT into ClickHouse, from sending to acknowledgement (retries included).",
          metrics::ExponentialBuckets(0.001, 2.5, 14))),
      clickhouse_errors(registry.AddCounter(
          "chsync_clickhouse_errors_total",
          "Failed ClickHouse requests (every failed attempt), by ClickHouse's error code or \"network\".",
          {"code"})),
      clickhouse_retries(registry.AddCounter(
          "chsync_clickhouse_retries_total",
          "ClickHouse requests tried again after a retryable failure, by the failure's code or \"network\".",
          {"code"})),
      schema_changes(registry.AddCounter(
          "chsync_schema_changes_total",
          "Source schema changes to replicated tables, by kind and what chsync did (propagated, kept, "
          "omitted_default, rebuilt, failed).",
          {"kind", "action"})),
      snapshot_rows_copied(registry.AddGauge("chsync_snapshot_rows_copied",
                                             "Rows the snapshot (or an online rebuild) copied, per table.",
                                             {"table"})),
      snapshot_rows_estimated(
          registry.AddGauge("chsync_snapshot_rows_estimated",
                            "Rows the source estimates a table being copied has (TABLE_ROWS).", {"table"})),
      tables(registry.AddGauge("chsync_tables",
                               "Replicated tables by state (snapshot, streaming, rebuilding, parked, paused, "
                               "dropped).",
                               {"state"})),
      table_held(
          registry.AddGauge("chsync_table_held",
                            "1 for a table whose changes are not applied: parked by a failure that concerns "
                            "it alone, or paused (chsync pause); 0 once it streams again.",
                            {"table", "state"})),
      values_clamped(registry.AddCounter(
          "chsync_values_clamped_total",
          "DATE (kind date) and DATETIME/TIMESTAMP (kind datetime) values outside the ClickHouse type's "
          "range, written as its first or last value, per table.",
          {"table", "kind"})),
      binlog_bytes_behind(registry.AddGauge(
          "chsync_binlog_bytes_behind",
          "Bytes from the checkpoint to the end of the source's newest binlog file (at the last reading).")),
      retention_headroom_bytes(registry.AddGauge(
          "chsync_binlog_retention_headroom_bytes",
          "Bytes the source may still write before the checkpoint's binlog file is old enough to be purged "
          "(NaN: unknown or never).")),
      retention_headroom_seconds(registry.AddGauge(
          "chsync_binlog_retention_headroom_seconds",
          "Estimated seconds before the checkpoint's binlog file is old enough to be purged (NaN: unknown or "
          "never).")),
      binlog_write_rate(
          registry.AddGauge("chsync_binlog_write_rate_bytes_per_second",
                            "Bytes per second the source writes to its binlog (last ~5 minutes).")),
      events(binlog_events.With()),
      bytes_read(binlog_bytes_read.With()),
      transactions_applied(transactions.With()),
      batch_rows_all(batch_rows.With()),
      batch_bytes_all(batch_bytes.With()),
      insert_duration_all(insert_duration.With()) {
  SetBuildCommit("unknown");
  process_start_time.With().Set(static_cast<double>(NowMsForMetrics()) / 1000.0);
  SetState("");
  for (std::string_view state : kTableStates) tables.With({std::string(state)}).Set(0);
  replication_lag.With().Set(kNaN);
  seconds_since_last_event.With().Set(kNaN);
  for (auto* gauge :
       {&binlog_bytes_behind, &retention_headroom_bytes, &retention_headroom_seconds, &binlog_write_rate}) {
    gauge->With().Set(kNaN);
  }
  registry.OnCollect([this] { Collect(); });
}

uint64_t PipeMetrics::CoarseNowMs() {
  timespec now{};
  if (clock_gettime(CLOCK_REALTIME_COARSE, &now) != 0) return NowMsForMetrics();
  return static_cast<uint64_t>(now.tv_sec) * 1000 + static_cast<uint64_t>(now.tv_nsec) / 1'000'000;
}

uint64_t PipeMetrics::NowMsForMetrics() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

void PipeMetrics::Collect() {
  const uint64_t now = NowMsForMetrics();
  const uint64_t last = last_event_ms_.load(std::memory_order_relaxed);
  seconds_since_last_event.With().Set(last == 0 ? kNaN
                                                : static_cast<double>(now > last ? now - last : 0) / 1000.0);
  double lag = kNaN;
  if (caught_up_at_.load(std::memory_order_relaxed) == events_seen_.load(std::memory_order_relaxed)) {
    lag = 0;
  } else {
    // Caught up at caught_up_ms_ (refreshed at every idle heartbeat): what was read since is newer
    // than that, so the lag is at most the time since then, even when the last acknowledged
    // transaction is much older (a source that was idle for an hour).
    const uint64_t base = std::max(acked_commit_s_.load(std::memory_order_relaxed) * 1000,
                                   caught_up_ms_.load(std::memory_order_relaxed));
    if (base != 0) lag = static_cast<double>(now > base ? now - base : 0) / 1000.0;
  }
  replication_lag.With().Set(lag);
}

void PipeMetrics::SetState(std::string_view phase) {
  for (std::string_view state : kStates) pipe_state.With({std::string(state)}).Set(state == phase ? 1 : 0);
}

std::string_view ChooseTableLabel(std::string_view source, std::string_view dest, bool per_source_table) {
  return per_source_table || dest.empty() ? source : dest;
}

void PipeMetrics::SetPerSourceTable(bool per_source_table) {
  std::lock_guard<std::mutex> lock(mutex_);
  per_source_table_ = per_source_table;
}

std::string PipeMetrics::LabelLocked(const std::string& source) const {
  auto it = dest_of_.find(source);
  return std::string(ChooseTableLabel(source, it == dest_of_.end() ? "" : it->second, per_source_table_));
}

std::string PipeMetrics::TableLabel(const std::string& source) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return LabelLocked(source);
}

void PipeMetrics::MoveShareLocked(SnapshotShare& share, const std::string& label, double copied,
                                  double estimated) {
  if (!share.label.empty()) {
    snapshot_rows_copied.With({share.label}).Add(-share.copied);
    snapshot_rows_estimated.With({share.label}).Add(-share.estimated);
  }
  share.label = label;
  share.copied = copied;
  share.estimated = estimated;
  snapshot_rows_copied.With({label}).Add(copied);
  snapshot_rows_estimated.With({label}).Add(estimated);
}

void PipeMetrics::NoteTableDest(const std::string& source, const std::string& dest) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string& known = dest_of_[source];
  if (known == dest) return;
  known = dest;
  auto share = snapshot_shares_.find(source);
  if (share == snapshot_shares_.end()) return;
  const std::string label = LabelLocked(source);
  if (label != share->second.label) {
    MoveShareLocked(share->second, label, share->second.copied, share->second.estimated);
  }
}

void PipeMetrics::SetSnapshotRows(const std::string& source, uint64_t copied,
                                  std::optional<uint64_t> estimated) {
  std::lock_guard<std::mutex> lock(mutex_);
  SnapshotShare& share = snapshot_shares_[source];
  MoveShareLocked(share, LabelLocked(source), static_cast<double>(copied),
                  estimated ? static_cast<double>(*estimated) : share.estimated);
}

TableRowCounters PipeMetrics::RowCounters(const std::string& table) {
  const std::string label = TableLabel(table);
  return {&row_changes.With({label, "insert"}), &row_changes.With({label, "update"}),
          &row_changes.With({label, "delete"})};
}

void PipeMetrics::ObserveInsert(uint64_t rows, uint64_t bytes, double seconds) {
  batch_rows_all.Observe(static_cast<double>(rows));
  batch_bytes_all.Observe(static_cast<double>(bytes));
  insert_duration_all.Observe(seconds);
}

void PipeMetrics::ObserveClickHouseFailure(const Error& error, bool retrying) {
  if (clickhouse::IsCancelled(error)) return;
  const std::string code = ClickHouseErrorCode(error);
  clickhouse_errors.With({code}).Add();
  if (retrying) clickhouse_retries.With({code}).Add();
}

void PipeMetrics::NoteSchemaChange(std::string_view kind, std::string_view action) {
  schema_changes.With({std::string(kind), std::string(action)}).Add();
}

void PipeMetrics::MarkCaughtUp(uint64_t events_seen) {
  caught_up_ms_.store(NowMsForMetrics(), std::memory_order_relaxed);
  caught_up_at_.store(events_seen, std::memory_order_relaxed);
}

void PipeMetrics::NoteCheckpoint(const std::string& file, uint64_t offset, const std::string& gtid_text,
                                 bool mariadb, uint64_t saved_at_ms, uint64_t commit_time_s) {
  last_checkpoint_time.With().Set(static_cast<double>(saved_at_ms) / 1000.0);
  if (auto sequence = BinlogFileSequence(file); sequence.ok()) {
    checkpoint_file_sequence.With().Set(static_cast<double>(*sequence));
  }
  checkpoint_offset.With().Set(static_cast<double>(offset));
  if (commit_time_s != 0) acked_commit_s_.store(commit_time_s, std::memory_order_relaxed);

  std::vector<std::pair<std::vector<std::string>, double>> gtids;
  if (mariadb) {
    if (auto list = mysql::MariaDbGtidList::Parse(gtid_text); list.ok()) {
      for (const auto& [domain, gtid] : list->domains()) {
        gtids.push_back(
            {{std::to_string(domain), std::to_string(gtid.server_id)}, static_cast<double>(gtid.seq)});
      }
    }
  } else if (auto set = mysql::MysqlGtidSet::Parse(gtid_text); set.ok()) {
    for (const mysql::MysqlGtidSet::Entry& entry : set->entries()) {
      if (entry.intervals.empty()) continue;
      std::string domain = UuidText(entry.uuid);
      if (!entry.tag.empty()) domain += ":" + entry.tag;
      gtids.push_back({{domain, ""}, static_cast<double>(entry.intervals.back().end - 1)});
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& labels : gtid_labels_) {
    bool kept = std::any_of(gtids.begin(), gtids.end(), [&](const auto& g) { return g.first == labels; });
    if (!kept) checkpoint_gtid_sequence.Remove(labels);
  }
  gtid_labels_.clear();
  for (auto& [labels, value] : gtids) {
    checkpoint_gtid_sequence.With(labels).Set(value);
    gtid_labels_.push_back(std::move(labels));
  }
}

void PipeMetrics::SetTables(std::vector<LiveTable> list) {
  std::map<std::string, double> counts;
  for (std::string_view state : kTableStates) counts[std::string(state)] = 0;
  for (const LiveTable& t : list) counts[t.state] += 1;
  for (const auto& [state, count] : counts) tables.With({state}).Set(count);
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<std::pair<std::string, std::string>, double> held;
  for (const LiveTable& t : list) {
    if (t.state == "parked" || t.state == "paused") held[{LabelLocked(t.name), t.state}] += 1;
  }
  for (const auto& labels : held_labels_) {
    if (!held.contains(labels)) table_held.With({labels.first, labels.second}).Set(0);
  }
  for (const auto& [labels, count] : held) {
    table_held.With({labels.first, labels.second}).Set(count);
    held_labels_.insert(labels);
  }
  tables_ = std::move(list);
}

std::vector<LiveTable> PipeMetrics::Tables() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return tables_;
}

void PipeMetrics::SetBuildCommit(std::string_view commit) {
  build_info.Clear();
  build_info.With({CHSYNC_VERSION, std::string(commit)}).Set(1);
}

PipeMetrics& Metrics() {
  static PipeMetrics metrics;
  return metrics;
}

RunStatus LiveRunStatus() {
  LiveStatus& live = Live();
  std::lock_guard<std::mutex> lock(live.mutex);
  return live.status;
}

std::vector<LiveTable> LiveTables() {
  return Metrics().Tables();
}

void PublishRunStatus(const RunStatus& status) {
  Metrics().SetState(status.phase);
  LiveStatus& live = Live();
  std::lock_guard<std::mutex> lock(live.mutex);
  live.status = status;
}

std::string_view SchemaChangeKind(std::string_view statement) {
  auto parsed = schema::ParseStatement(statement);
  if (!parsed.ok()) return "other";
  switch (parsed->kind) {
    case schema::StatementKind::kCreateTable:
    case schema::StatementKind::kCreateTableLike: return "create_table";
    case schema::StatementKind::kDropTable: return "drop_table";
    case schema::StatementKind::kRenameTable: return "rename_table";
    case schema::StatementKind::kTruncateTable: return "truncate";
    case schema::StatementKind::kAlterTable: break;
    default: return "other";
  }
  using Op = schema::AlterOperation::Kind;
  for (const schema::AlterOperation& op : parsed->operations) {
    switch (op.kind) {
      case Op::kAddColumn: return "add_column";
      case Op::kDropColumn: return "drop_column";
      case Op::kModifyColumn:
      case Op::kSetDefault:
      case Op::kDropDefault:
      case Op::kSetVisible:
      case Op::kSetInvisible: return "modify_column";
      case Op::kChangeColumn:
        return schema::EqualsIgnoreCase(op.name, op.definition.column.name) ? "modify_column"
                                                                            : "rename_column";
      case Op::kRenameColumn: return "rename_column";
      case Op::kRenameTable: return "rename_table";
      default: break;
    }
  }
  return "other";
}

std::string_view SchemaChangeAction(const TablePlan& plan) {
  if (plan.rebuild) return "rebuilt";
  for (const std::string& line : plan.log_lines) {
    if (line.find("default omitted") != std::string::npos) return "omitted_default";
  }
  if (!plan.statements.empty()) return "propagated";
  return "kept";
}

std::string ClickHouseErrorCode(const Error& error) {
  if (error.server_code() != 0) return std::to_string(error.server_code());
  if (error.kind() == ErrorKind::kNetwork) return "network";
  return std::string(ErrorKindName(error.kind()));
}

void ReportClamped(std::string_view table, const clickhouse::ClampCounts& counts, bool date32) {
  if (counts.empty()) return;
  PipeMetrics& m = Metrics();
  const std::string name(table);
  const std::string label = m.TableLabel(name);
  if (counts.dates > 0) m.values_clamped.With({label, "date"}).Add(static_cast<double>(counts.dates));
  if (counts.datetimes > 0)
    m.values_clamped.With({label, "datetime"}).Add(static_cast<double>(counts.datetimes));

  struct Seen {
    clickhouse::ClampCounts total;
    std::chrono::steady_clock::time_point logged;
    bool ever_logged = false;
  };
  static std::mutex mutex;
  static std::map<std::string, Seen, std::less<>> seen;
  std::string line;
  {
    std::lock_guard lock(mutex);
    Seen& s = seen[name];
    s.total += counts;
    const auto now = std::chrono::steady_clock::now();
    if (s.ever_logged && now - s.logged < std::chrono::minutes(1)) return;
    s.ever_logged = true;
    s.logged = now;
    std::vector<std::string> parts;
    if (s.total.dates > 0) {
      parts.push_back(fmt::format("{} DATE value{} outside {} clamped so far (ClickHouse {})", s.total.dates,
                                  s.total.dates == 1 ? "" : "s",
                                  date32 ? "1900-01-01..2299-12-31" : "1970-01-01..2105-12-31",
                                  date32 ? "Date32" : "Date"));
    }
    if (s.total.datetimes > 0) {
      parts.push_back(fmt::format(
          "{} DATETIME/TIMESTAMP value{} outside 1970-01-01 00:00:00..2105-12-31 23:59:59 clamped so far "
          "(ClickHouse DateTime)",
          s.total.datetimes, s.total.datetimes == 1 ? "" : "s"));
    }
    line = name + ": ";
    for (size_t i = 0; i < parts.size(); ++i) line += (i > 0 ? "; " : "") + parts[i];
  }
  log::Warn("{} (docs/types.md)", line);
}

}  // namespace chsync::pipe
