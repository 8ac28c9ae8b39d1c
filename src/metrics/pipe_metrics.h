#pragma once

// The pipe's Prometheus metrics (docs/operations.md): one process-wide registry that the pipe
// updates as it runs and that an HTTP server in the same process renders. The pipe never knows who
// reads them. Thread-safe throughout.
//
// Where each metric is updated:
//  - chsync_pipe_state, and LiveRunStatus(): whenever the pipe changes phase or writes status.json.
//  - chsync_binlog_events_total, _bytes_read_total, chsync_seconds_since_last_event: per binlog event
//    (or heartbeat) read by the stream; chsync_transactions_total at each transaction's end.
//  - chsync_row_changes_total: when ClickHouse acknowledged the INSERT that carried the rows (the
//    flusher), so rows read again after a failure are not counted twice.
//  - chsync_batch_*, chsync_insert_duration_seconds: per INSERT of the stream and of the snapshot.
//  - chsync_clickhouse_errors_total / _retries_total: every failed ClickHouse request of the pipe's
//    connections (ConnectOptions::on_failure).
//  - checkpoint gauges and chsync_replication_lag_seconds: when a checkpoint is saved, that is after
//    ClickHouse acknowledged everything before it; the lag is 0 while a heartbeat (or the end of
//    the binlog, --until-caught-up) showed that nothing is pending.
//  - chsync_schema_changes_total: when a schema change is recorded (RunStatus::schema_changes).
//  - chsync_snapshot_rows_*: as the snapshot's chunks are acknowledged.
//  - chsync_tables: at each checkpoint and phase change.
//  - chsync_values_clamped_total: ReportClamped(), after each INSERT of the stream and of the snapshot
//    (values encoded again after a failure count again).
//  - chsync_binlog_retention_*, chsync_binlog_bytes_behind, _write_rate: RetentionSampler
//    (metrics/retention_sample.h), every 15 s while streaming, and at each checkpoint from its last reading.

#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "clickhouse/row_binary.h"
#include "common/error.h"
#include "common/metrics.h"
#include "policy/ddl_policy.h"
#include "state/run_status.h"

namespace chsync::pipe {

/// The row-change counters of one table ("db.t"), kept by the stream so that counting a batch
/// needs no lookup.
struct TableRowCounters {
  metrics::Counter* inserts = nullptr;
  metrics::Counter* updates = nullptr;
  metrics::Counter* deletes = nullptr;
};

/// Row changes of one table waiting for their INSERT's acknowledgement.
struct PendingRowChanges {
  TableRowCounters counters;
  uint64_t inserts = 0;
  uint64_t updates = 0;
  uint64_t deletes = 0;

  bool empty() const { return inserts == 0 && updates == 0 && deletes == 0; }
  uint64_t rows() const { return inserts + updates + deletes; }
  /// Moves `other`'s changes here (taking its counters when these have none).
  void Absorb(PendingRowChanges& other);
  /// Adds the changes to the counters and forgets them.
  void Count();
};

/// A table the pipe knows and what it is doing with it, for a status page.
struct LiveTable {
  std::string name;   ///< "db.t" (source name)
  std::string state;  ///< one of PipeMetrics::kTableStates
};

/// The `table` label of a source table's series (chsync_row_changes_total, chsync_snapshot_rows_*,
/// chsync_values_clamped_total, chsync_table_held): its ClickHouse table `dest` ("db.t") by default,
/// so that the many source tables one ClickHouse table merges share one label set and /metrics
/// stays as small as the destination; its own name `source` with `per_source_table`
/// (http.metrics_per_source_table) or while its ClickHouse table is not known (`dest` empty).
std::string_view ChooseTableLabel(std::string_view source, std::string_view dest, bool per_source_table);

struct PipeMetrics {
  PipeMetrics();
  PipeMetrics(const PipeMetrics&) = delete;
  PipeMetrics& operator=(const PipeMetrics&) = delete;

  static constexpr std::string_view kStates[] = {"snapshot", "streaming", "stopped", "failed"};
  static constexpr std::string_view kTableStates[] = {"snapshot", "streaming", "rebuilding", "parked",
                                                      "paused",   "dropped",   "unselected"};

  metrics::Registry registry;

  metrics::Family<metrics::Gauge>& build_info;
  metrics::Family<metrics::Gauge>& process_start_time;
  metrics::Family<metrics::Gauge>& pipe_state;
  metrics::Family<metrics::Gauge>& replication_lag;
  metrics::Family<metrics::Gauge>& seconds_since_last_event;
  metrics::Family<metrics::Gauge>& last_checkpoint_time;
  metrics::Family<metrics::Gauge>& checkpoint_file_sequence;
  metrics::Family<metrics::Gauge>& checkpoint_offset;
  metrics::Family<metrics::Gauge>& checkpoint_gtid_sequence;
  metrics::Family<metrics::Counter>& row_changes;
  metrics::Family<metrics::Counter>& binlog_events;
  metrics::Family<metrics::Counter>& binlog_bytes_read;
  metrics::Family<metrics::Counter>& transactions;
  metrics::Family<metrics::Histogram>& batch_rows;
  metrics::Family<metrics::Histogram>& batch_bytes;
  metrics::Family<metrics::Histogram>& insert_duration;
  metrics::Family<metrics::Counter>& clickhouse_errors;
  metrics::Family<metrics::Counter>& clickhouse_retries;
  metrics::Family<metrics::Counter>& schema_changes;
  metrics::Family<metrics::Gauge>& snapshot_rows_copied;
  metrics::Family<metrics::Gauge>& snapshot_rows_estimated;
  metrics::Family<metrics::Gauge>& tables;
  /// The parked or paused source tables (labels table, state) of each label (1 for a table labelled
  /// by its own name); 0 once they stream again.
  metrics::Family<metrics::Gauge>& table_held;
  /// Values clamped into a ClickHouse type's range as they were encoded (labels table, kind: date,
  /// datetime); see ReportClamped().
  metrics::Family<metrics::Counter>& values_clamped;
  metrics::Family<metrics::Gauge>& binlog_bytes_behind;
  metrics::Family<metrics::Gauge>& retention_headroom_bytes;
  metrics::Family<metrics::Gauge>& retention_headroom_seconds;
  metrics::Family<metrics::Gauge>& binlog_write_rate;

  // The children updated per event, held to skip the lookup.
  metrics::Counter& events;
  metrics::Counter& bytes_read;
  metrics::Counter& transactions_applied;
  metrics::Histogram& batch_rows_all;
  metrics::Histogram& batch_bytes_all;
  metrics::Histogram& insert_duration_all;

  /// chsync_build_info's commit label: the git commit chsync was built from, which the command line
  /// knows (cli/version.h BuildCommit); "unknown" until it is set.
  void SetBuildCommit(std::string_view commit);
  /// Sets chsync_pipe_state: 1 for `phase`, 0 for the others (all 0 for an unknown phase).
  void SetState(std::string_view phase);
  /// Label tables by their source table (http.metrics_per_source_table) rather than by their
  /// ClickHouse table; set before the pipe labels any table.
  void SetPerSourceTable(bool per_source_table);
  /// Source table `source` ("db.t") goes to ClickHouse table `dest` ("db.t"): its series are labelled
  /// `dest` from now on (ChooseTableLabel). Its snapshot progress moves to the new label.
  void NoteTableDest(const std::string& source, const std::string& dest);
  /// The `table` label of source table `source` ("db.t").
  std::string TableLabel(const std::string& source) const;
  /// The counters of source table `table` ("db.t"), under its label.
  TableRowCounters RowCounters(const std::string& table);
  /// Snapshot progress of source table `source` ("db.t"): rows copied, and the source's estimate
  /// when given; chsync_snapshot_rows_* of its label are the sums over the source tables with it.
  void SetSnapshotRows(const std::string& source, uint64_t copied, std::optional<uint64_t> estimated = {});
  /// One INSERT acknowledged by ClickHouse.
  void ObserveInsert(uint64_t rows, uint64_t bytes, double seconds);
  /// A failed ClickHouse request; `retrying`: another attempt follows. Cancellations are not counted.
  void ObserveClickHouseFailure(const Error& error, bool retrying);
  /// A schema change recorded with `kind` (SchemaChangeKind) and `action` (SchemaChangeAction).
  void NoteSchemaChange(std::string_view kind, std::string_view action);

  /// A binlog event (or heartbeat) of `bytes` bytes was read; `heartbeat` events do not count as
  /// events in the lag's sense (they show that nothing is pending). Called by the thread that reads
  /// the binlog only (one per process), so the counts need no atomic read-modify-write.
  void NoteEventRead(size_t bytes, bool heartbeat) {
    if (!heartbeat) {
      events.AddFromOneThread();
      bytes_read.AddFromOneThread(static_cast<double>(bytes));
      events_seen_.store(events_seen_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    last_event_ms_.store(CoarseNowMs(), std::memory_order_relaxed);
  }
  /// The value to give MarkCaughtUp once everything read so far is acknowledged.
  uint64_t EventsSeen() const { return events_seen_.load(std::memory_order_relaxed); }
  /// ClickHouse acknowledged everything up to the `events_seen`-th event and the source had nothing
  /// more then: the lag is 0 until another event is read.
  void MarkCaughtUp(uint64_t events_seen);
  /// A checkpoint was saved at `file`:`offset` with GTIDs `gtid_text` (MariaDB's list or MySQL's set,
  /// per `mariadb`), at `saved_at_ms`; `commit_time_s` is the source commit time of its last
  /// transaction (0: none yet).
  void NoteCheckpoint(const std::string& file, uint64_t offset, const std::string& gtid_text, bool mariadb,
                      uint64_t saved_at_ms, uint64_t commit_time_s);
  /// The tables and their states (chsync_tables and LiveTables()).
  void SetTables(std::vector<LiveTable> tables);
  std::vector<LiveTable> Tables() const;

  /// Wall clock in ms (what the collectors compare with).
  static uint64_t NowMsForMetrics();
  /// The same to a few ms (the kernel's tick): what every event can afford to read.
  static uint64_t CoarseNowMs();

 private:
  void Collect();

  std::atomic<uint64_t> events_seen_{0};
  /// events_seen_ when the pipe was last known caught up; max: never.
  std::atomic<uint64_t> caught_up_at_{std::numeric_limits<uint64_t>::max()};
  std::atomic<uint64_t> caught_up_ms_{0};  ///< wall clock then
  std::atomic<uint64_t> last_event_ms_{0};
  std::atomic<uint64_t> acked_commit_s_{0};

  mutable std::mutex mutex_;  // guards what follows
  std::vector<std::vector<std::string>> gtid_labels_;
  std::vector<LiveTable> tables_;
  std::set<std::pair<std::string, std::string>> held_labels_;
  bool per_source_table_ = false;
  std::map<std::string, std::string, std::less<>> dest_of_;  ///< source "db.t" → ClickHouse "db.t"
  /// Each source table's contribution to chsync_snapshot_rows_*: its label, copied, estimated.
  struct SnapshotShare {
    std::string label;
    double copied = 0;
    double estimated = 0;
  };
  std::map<std::string, SnapshotShare, std::less<>> snapshot_shares_;
  std::string LabelLocked(const std::string& source) const;
  void MoveShareLocked(SnapshotShare& share, const std::string& label, double copied, double estimated);
};

/// The process's metrics (created on first use).
PipeMetrics& Metrics();

/// The RunStatus the pipe last wrote to status.json (or would have: phase changes too), kept in
/// memory for a status page in the same process. Empty before a pipe ran.
RunStatus LiveRunStatus();
/// The tables of the running pipe and their states.
std::vector<LiveTable> LiveTables();
/// Keeps `status` as LiveRunStatus() and sets chsync_pipe_state from its phase.
void PublishRunStatus(const RunStatus& status);

/// The kind of a schema change from its source statement, for chsync_schema_changes_total:
/// add_column, drop_column, modify_column, rename_column, create_table, drop_table, rename_table,
/// truncate, or other (an ALTER's first clause that is one of those decides; keys, options,
/// partitions and statements that do not parse are "other").
std::string_view SchemaChangeKind(std::string_view statement);

/// What the pipe did about a table's schema change, for chsync_schema_changes_total: rebuilt (the
/// table is copied again), omitted_default (an added column's default could not travel),
/// propagated (ClickHouse statements ran), or kept (ClickHouse left as it was: not propagated by
/// the rules or policies). "failed" is counted where a policy stops the pipe.
std::string_view SchemaChangeAction(const TablePlan& plan);

/// Counts the values clamped in rows of `table` ("db.t") in chsync_values_clamped_total and logs the
/// table's totals so far ("db.t: 3 DATE values outside 1970-01-01..2105-12-31 clamped so far
/// (ClickHouse Date)"): at once the first time, then at most once a minute per table. `date32`:
/// the server has Date32 (the dates' range is then 1900-01-01..2299-12-31). Thread-safe.
void ReportClamped(std::string_view table, const clickhouse::ClampCounts& counts, bool date32);

/// chsync_clickhouse_*_total's code label: ClickHouse's error code, "network" for a transport
/// failure, else the error kind's name.
std::string ClickHouseErrorCode(const Error& error);

}  // namespace chsync::pipe
