#pragma once

// The Pipe behind RunPipe: the coordinator over its collaborators (src/README.md), defined in
// pipeline.cpp (set-up, snapshot, checkpoints), stream.cpp (the binlog sessions one after the
// other), failover.cpp, rebuild.cpp and table_control.cpp. Not part of the module's interface.

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "binlog/decoder.h"
#include "binlog/event.h"
#include "clickhouse/capabilities.h"
#include "clickhouse/cluster.h"
#include "clickhouse/connection.h"
#include "clickhouse/shard_router.h"
#include "clickhouse/table_writer.h"
#include "metrics/pipe_metrics.h"
#include "metrics/retention_sample.h"
#include "mysql/binlog_stream.h"
#include "mysql/connection.h"
#include "mysql/server_probe.h"
#include "mysql/source_set.h"
#include "mysql/table_filter.h"
#include "pipe/applier.h"
#include "pipe/binlog_session.h"
#include "pipe/cascades.h"
#include "pipe/checkpointer.h"
#include "pipe/clock.h"
#include "pipe/destination.h"
#include "pipe/flusher.h"
#include "pipe/holds.h"
#include "pipe/live_tables.h"
#include "pipe/names.h"
#include "pipe/pipeline.h"
#include "pipe/rebuilds.h"
#include "pipe/row_converter.h"
#include "pipe/schema_history.h"
#include "pipe/snapshot.h"
#include "pipe/source_link.h"
#include "pipe/table_set.h"
#include "pipe/table_state.h"
#include "policy/ddl_policy.h"
#include "position/gtid_progress.h"
#include "position/transaction_boundary.h"
#include "position/versions.h"
#include "schema/tracker.h"
#include "state/checkpoint.h"
#include "state/ddl_journal.h"
#include "state/run_status.h"
#include "state/state_dir.h"
#include "state/xa_store.h"

namespace chsync::pipe {

class Pipe : private ApplierHost, private SessionHost {
 public:
  Pipe(const RunRequest& request, const std::atomic<bool>& stop);
  ~Pipe() override;
  Status Run();
  /// Records `error` for `chsync status` and returns it.
  Status Fail(const Error& error);

 private:
  // pipeline.cpp
  Status Open();
  /// A fresh start: the start position, the schemas there and the destination tables; every table
  /// to copy, or with `copy` false none (snapshot.mode never: the start is CdcStartPoint's).
  Status Initialize(bool copy = true);
  Status ResyncTable(const std::string& qualified);
  /// Loads the saved checkpoint (refused when it is another source server's) and the tracked schemas
  /// in it, and removes prepared-XA rows files it no longer names.
  Status LoadState();
  /// Finds the cascading foreign keys of the replicated tables again when a table or its schema
  /// changed (cascades.h), and lists them and whether they are followed in the status.
  void NoteCascades() override;
  // start_modes.cpp: snapshot.mode and the start_* keys (docs/configuration.md, "Start modes").
  /// With a checkpoint: the checkpoint decides (said once when start settings are given); a
  /// load-only one (snapshot.mode only) is copied again under `only` (`existing` reset) and refused
  /// under another mode.
  Status CheckStartMode(std::optional<Checkpoint>& existing);
  /// Whether a new pipe copies nothing (snapshot.mode never, not a `chsync resync`).
  bool CdcOnlyStart() const;
  /// Where a CDC-only pipe begins: `now` (the end of the binlog, where `schemas` were read), or
  /// start_position, start_gtid or start_time, refused when a statement between it and `now`
  /// changed a replicated table (`schemas`, as they are at `now`).
  Result<SourcePosition> CdcStartPoint(const SourcePosition& now,
                                       const std::vector<schema::TableSchema>& schemas);
  /// snapshot.mode only: every table is copied; saved, said, and nothing streamed.
  Status FinishLoadOnly();
  // failover.cpp: several source servers (docs/failover.md).
  /// source_.Select with what the pipe applied and sent (the lineage of versions_); a gap is
  /// BinlogGap.
  Status SelectSource(const std::vector<size_t>& order, const std::optional<Checkpoint>& saved,
                      bool accept_gap);
  /// The checkpoint's positions must be on the server the pipe reads from: a checkpoint of
  /// another server of the topology is moved onto it by GTID (translated positions, a new
  /// sequence base for row versions) and saved; without GTIDs that is refused.
  Status CheckSourceIdentity();
  /// The source has been unreachable long enough: move to another --source server, if one can
  /// take over. `target` (--until-caught-up) is re-read on the new server.
  Status FailOver(std::optional<mysql::BinlogCoordinate>& target, bool accept_gap);
  /// The URL of the current --source leads to another server than before (source_.moved()): that
  /// server becomes the one read, if it can serve the pipe (SelectSource with the saved checkpoint);
  /// the next ReloadFromCheckpoint moves the checkpoint onto it.
  Status FollowMovedSource();
  /// The error for a position the source no longer has; marks binlog_gap_.
  Error BinlogGap(const std::string& what) override;
  Status BuildTables();
  /// `saved`'s ClickHouse table, where a restart's table_options no longer place source table
  /// database.table, is renamed to where they do (kConfig when a table is there already or the
  /// table is being rebuilt). True when the table must be copied again instead: moved into or out
  /// of a shared table. kConfig when its shared table's source value or column changed.
  Result<bool> FollowMovedDestination(const DestinationState& saved, const std::string& database,
                                      const std::string& table);
  Status RebuildWriter(TableState& table) override;
  Status Snapshot();
  /// From the saved checkpoint: the tables, what is left of the snapshot, then the stream.
  Status CopyAndStream();
  bool SnapshotDone() const;
  Status Stopped();
  Status SaveCheckpoint();
  void SyncDestinations();
  /// Starts (or, with `resume`, continues from table.rebuild's recorded progress) the online
  /// rebuild of `table` under its current dest.source.
  Status StartRebuild(TableState& table, const std::string& position, const std::string& reason,
                      bool resume) override;
  /// Stops a rebuild and drops its table; the ClickHouse table stays as it was.
  Status CancelRebuild(TableState& table) override;
  // table_control.cpp: parked and paused tables, and the requests of `chsync pause|resume|resync`.
  /// A failure of one table's statement or rows: parks the table (Ok) when the failure concerns it
  /// alone (ConcernsOneTable) and its on_table_error is park; otherwise returns `error`.
  Status ParkTable(TableState& table, const std::string& key, const Error& error,
                   const std::string& statement, const std::string& position) override;
  /// Stops applying `table`'s changes: its unsent rows and any rebuild are dropped; said loudly.
  Status HoldTable(TableState& table, HeldTable held, bool announce);
  /// Copies `table` again online from the tracked schema (an online rebuild, which ends in a swap),
  /// unparking or unpausing it.
  Status RecopyTable(TableState& table, const std::string& key, const std::string& reason);
  /// Between transactions: takes over the tables the flusher parked, and carries out the
  /// requests waiting in the state directory (at most once a second); a checkpoint records them.
  Status PollControl() override;
  /// PollControl, and PollRebuilds when a copy finished (ApplierHost).
  Status BetweenTransactions() override;
  /// SyncDestinations, the status's destination line and tables (ApplierHost).
  void BeforeCheckpoint() override;
  /// One request: what it did or why it was refused ("done: …" / "refused: …"); empty when it must
  /// wait for the stream (a key added at the source that the stream has not read yet).
  Result<std::string> CarryOut(const std::string& op, const std::string& table);

  // follow_selection.cpp: tables added to and removed from the selection while the pipe runs.
  /// SIGHUP: reads `tables:` from the configuration file again; a changed one becomes the selection
  /// (with the changes of `chsync tables add|remove` on top) and is followed at once. A file that
  /// does not read is said in the log, and the selection stays.
  Status ReloadSelection();
  /// Between transactions: stops applying the replicated tables the selection no longer names
  /// (their ClickHouse tables kept), and copies online the source tables it names that the pipe
  /// does not replicate yet. One line per table for the log and the request's answer.
  Result<std::vector<std::string>> FollowSelection();
  /// Source table database.name entered the selection: tracked from a position read now, and
  /// copied online (a rebuild). What happened, in a line ("" when it is gone from the source).
  Result<std::string> AddSelectedTable(const std::string& database, const std::string& name);

  /// Swaps finished rebuilds in; with `wait`, waits for every running one first.
  Status PollRebuilds(bool wait) override;

  using Placement = TableSet::Placement;
  using TableKeys = Destination::TableKeys;
  /// For `chsync status`: the server rows go to now, and the cluster if there is one.
  std::string DestinationLine() const;

  // stream.cpp: the binlog sessions (binlog_session.h) one after the other.
  Status Stream();
  /// Everything the stream holds in memory is dropped and taken again from the saved checkpoint
  /// (schemas, destination tables, rebuilds, prepared XA transactions): after a failure, the pipe
  /// goes on exactly as a restart would.
  Status ReloadFromCheckpoint();
  /// Stream state (committed position, GTIDs, row-version shift) from checkpoint_.resume, and a
  /// new flusher.
  Status StartStreamState();
  /// Stopped (SIGTERM) before ClickHouse acknowledged what was read: the saved checkpoint stays.
  Status StoppedUnacknowledged(const Error& error);
  /// Sets status_.phase and publishes it (LiveRunStatus, chsync_pipe_state).
  void SetPhase(const std::string& phase);
  /// The tables and their states, for the metrics (chsync_tables, LiveTables).
  void PublishTables();

  const RunRequest& request_;
  const std::atomic<bool>& stop_;

  /// The servers of --source, the one read, and its identity, checked on every session.
  SourceLink source_;
  /// The foreign-key cascades the stream follows in ClickHouse.
  CascadeFollower cascades_;

  Checkpoint checkpoint_;
  schema::Tracker tracker_;
  /// The copies of online rebuilds: declared before set_, so that the Rebuilders of its tables
  /// (whose destructors join the copies' threads) go first and the threads' counter here last.
  Rebuilds rebuilds_;
  RunStatus status_;

  /// Parked and paused tables: the park board (which the flusher's threads use, so it outlives
  /// the applier's flusher), when requests are read, and what each asks.
  Holds holds_{request_.config.policies};
  /// The state directory and every save of the checkpoint (the flusher runs the stream's).
  Checkpointer checkpointer_{holds_.board()};
  /// The source's binlog retention headroom (the metrics), sampled while streaming.
  std::unique_ptr<RetentionSampler> retention_;
  /// Cancels ClickHouse requests and retries a few seconds after stop_ (a watcher thread sets it):
  /// a stop waits that long for ClickHouse to acknowledge what was read, and no longer.
  std::atomic<bool> cancel_{false};
  std::atomic<bool> quit_watch_{false};
  std::thread stop_watch_;
  /// The ClickHouse side: connection, capabilities, cluster, and the statements on its tables.
  Destination destination_;
  /// The replicated tables: which, where in ClickHouse, and their state while the pipe runs
  /// (declared after the rebuilds whose threads use their Rebuilders, so destroyed before them).
  TableSet set_{request_.config, destination_};
  /// The schema changes applied: metrics, log, the run status, `_chsync_schema_log`.
  SchemaHistory history_{status_, destination_};
  /// Row versions: the lineage (epochs, the high-water mark) and the numbering of rows
  /// (versions.h); set by Open.
  std::optional<Versions> versions_;
  /// The binlog's events applied to ClickHouse: rows, schema changes, transactions, XA, cascades,
  /// the stream's checkpoints; owns the flusher (declared after the park board and the
  /// checkpointer its threads use, so destroyed before them).
  Applier applier_{{request_, source_, tracker_, checkpoint_, status_, set_, destination_, checkpointer_,
                    cascades_, holds_, versions_, retention_, history_},
                   *this};
  /// One session of the binlog stream at a time: where it starts, by GTID or position, and where
  /// it landed; the replica server id of its dumps.
  BinlogSession session_{{request_, stop_, source_, set_, tracker_, applier_, versions_}, *this};
  /// The configured `tables:` (--tables, or the file's, read again on SIGHUP).
  std::string tables_spec_ = request_.config.tables;
  /// The selection differs from the one the checkpoint's tables follow: FollowSelection is due.
  bool selection_due_ = false;
  /// Stopped (SIGTERM) while Open waited for a source that did not answer: Run ends at once.
  bool stopped_at_start_ = false;
  /// The source no longer has what the pipe must read next (on_binlog_gap decides).
  bool binlog_gap_ = false;
};

}  // namespace chsync::pipe
