#pragma once

// The Pipe behind RunPipe, shared by pipeline.cpp (set-up, snapshot, checkpoints) and stream.cpp
// (the binlog stream). Not part of the module's interface.

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
#include "mysql/binlog_stream.h"
#include "mysql/connection.h"
#include "mysql/server_probe.h"
#include "mysql/source_set.h"
#include "mysql/table_filter.h"
#include "pipe/cascades.h"
#include "pipe/checkpointer.h"
#include "pipe/clock.h"
#include "pipe/destination.h"
#include "pipe/flusher.h"
#include "pipe/live_tables.h"
#include "pipe/names.h"
#include "pipe/pipe_metrics.h"
#include "pipe/pipeline.h"
#include "pipe/rebuilds.h"
#include "pipe/retention_sample.h"
#include "pipe/row_converter.h"
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

class Pipe {
 public:
  Pipe(const RunRequest& request, const std::atomic<bool>& stop);
  ~Pipe();
  Status Run();
  /// Records `error` for `chsync status` and returns it.
  Status Fail(const Error& error);

 private:
  // pipeline.cpp
  Status Open();
  Status Initialize();
  Status ResyncTable(const std::string& qualified);
  /// Loads the saved checkpoint (refused when it is another source server's) and the tracked schemas
  /// in it, and removes prepared-XA rows files it no longer names.
  Status LoadState();
  /// Finds the cascading foreign keys of the replicated tables again when a table or its schema
  /// changed (cascades.h), and lists them and whether they are followed in the status.
  void NoteCascades();
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
  Error BinlogGap(const std::string& what);
  Status BuildTables();
  /// `saved`'s ClickHouse table, where a restart's table_options no longer place source table
  /// database.table, is renamed to where they do (kConfig when a table is there already or the
  /// table is being rebuilt).
  Status FollowMovedDestination(const DestinationState& saved, const std::string& database,
                                const std::string& table);
  Status RebuildWriter(TableState& table);
  Status Snapshot();
  /// From the saved checkpoint: the tables, what is left of the snapshot, then the stream.
  Status CopyAndStream();
  bool SnapshotDone() const;
  Status Stopped();
  Status SaveCheckpoint();
  void SyncDestinations();
  Status LoadDatabaseDefaults(schema::Tracker& tracker);
  /// Starts (or, with `resume`, continues from table.rebuild's recorded progress) the online
  /// rebuild of `table` under its current dest.source.
  Status StartRebuild(TableState& table, const std::string& position, const std::string& reason, bool resume);
  /// Stops a rebuild and drops its table; the ClickHouse table stays as it was.
  Status CancelRebuild(TableState& table);
  // table_control.cpp: parked and paused tables, and the requests of `chsync pause|resume|resync`.
  /// A failure of one table's statement or rows: parks the table (Ok) when the failure concerns it
  /// alone (ConcernsOneTable) and its on_table_error is park; otherwise returns `error`.
  Status ParkTable(TableState& table, const std::string& key, const Error& error,
                   const std::string& statement, const std::string& position);
  /// Stops applying `table`'s changes: its unsent rows and any rebuild are dropped; said loudly.
  Status HoldTable(TableState& table, HeldTable held, bool announce);
  /// Copies `table` again online from the tracked schema (an online rebuild, which ends in a swap),
  /// unparking or unpausing it.
  Status RecopyTable(TableState& table, const std::string& key, const std::string& reason);
  /// Between transactions: takes over the tables the flusher parked, and carries out the
  /// requests waiting in the state directory (at most once a second); a checkpoint records them.
  Status PollControl();
  /// One request: what it did or why it was refused ("done: …" / "refused: …"); empty when it must
  /// wait for the stream (a key added at the source that the stream has not read yet).
  Result<std::string> CarryOut(const std::string& op, const std::string& table);
  /// What the flusher needs to park `key` when ClickHouse refuses its INSERT (nothing with
  /// on_table_error=stop).
  void AttachParking(Flusher::BatchInfo& info, const std::string& key);

  /// Swaps finished rebuilds in; with `wait`, waits for every running one first.
  Status PollRebuilds(bool wait);
  /// Whether the source's columns of `table` now differ from its tracked schema (a statement the
  /// stream has not reached yet changed it).
  Result<bool> SourceMovedOn(const TableState& table);
  Result<std::vector<std::string>> SelectedDatabases();
  Result<std::vector<schema::TableSchema>> LoadSourceSchemas(
      const std::vector<std::string>& databases, const std::function<bool(const schema::TableSchema&)>& keep);
  Result<SourcePosition> StablePoint(const std::vector<std::string>& databases,
                                     const std::function<bool(const schema::TableSchema&)>& keep,
                                     std::vector<schema::TableSchema>& schemas);
  PolicyContext ContextFor(std::string_view source_database, std::string_view table = "") const;

  // Checks of the replicated tables' ClickHouse tables (pipeline.cpp), over set_.
  using Placement = TableSet::Placement;
  using TableKeys = Destination::TableKeys;
  /// For `chsync status`: the server rows go to now, and the cluster if there is one.
  std::string DestinationLine() const;
  /// The checkpoint's rows were routed as destination_ routes now (RoutingChange), else kConfig with
  /// how to reshard; a checkpoint older than the field records the routing of now.
  Status CheckRouting();
  /// Sharded: every replicated table's Distributed table is chsync's (DistributedDiffers), else
  /// kConfig naming the table and the difference. A missing one is made again.
  Status CheckDistributedTables();

  // stream.cpp
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
  /// One session of the binlog stream; returns Ok when stopped or caught up.
  Status StreamSession(const std::optional<mysql::BinlogCoordinate>& target, bool& done);
  /// `outer_end`: the end of the event as it lies in the file (a TRANSACTION_PAYLOAD's end for the
  /// events inside it).
  Status HandleEvent(const binlog::Event& event, uint64_t outer_end);
  Status HandleRows(const binlog::Event& event, const binlog::RowsEvent& rows);
  Status HandleQuery(const binlog::Event& event, const binlog::QueryEvent& query, uint64_t resume);
  /// A row-changing statement written as text (a session in STATEMENT format, a MIXED server):
  /// parks (or, with on_table_error=stop, stops on) every replicated table it names; its changes
  /// are not in the binlog as rows.
  Status ParkStatementTables(const binlog::Event& event, const binlog::QueryEvent& query);
  /// Whether statement `sql` (run in `database`, at `event`) may concern `table`: it names the
  /// table, in its database or naming that too, and the table was not copied again after it.
  bool StatementNames(const TableState& table, std::string_view sql, std::string_view database,
                      const binlog::Event& event) const;
  /// XA: the first phase's rows are written to the state directory at XA PREPARE and sent at XA COMMIT.
  Status PrepareXa(const binlog::Event& event, const Boundary& boundary);
  Status FinishXa(const binlog::Event& event, const Boundary& boundary, bool commit);
  /// Adds a kTableRenamed change for each table of a RENAME TABLE statement that the tracker does
  /// not track (so reported nothing about) and that lands on a replicated name.
  void AddUntrackedRenames(std::string_view sql, std::string_view database, const schema::LexOptions& lex,
                           schema::ApplyResult& applied);
  Status ApplySchemaChanges(const binlog::Event& event, const binlog::QueryEvent& query,
                            const schema::ApplyResult& applied);
  /// The kTableRenamed changes of a statement, in order: ClickHouse tables renamed along.
  Status ApplyTableRenames(const binlog::Event& event, const std::string& statement,
                           const std::vector<schema::SchemaChange>& changes);
  /// Records a schema change of table `key`; `action` (SchemaChangeAction) counts it in the
  /// metrics under the statement's kind ("": not counted, e.g. a rebuild that finished).
  void Record(const std::string& key, const std::string& database, const std::string& position,
              const std::string& statement, const std::vector<std::string>& lines, std::string_view action);
  /// Sets status_.phase and publishes it (LiveRunStatus, chsync_pipe_state).
  void SetPhase(const std::string& phase);
  /// The tables and their states, for the metrics (chsync_tables, LiveTables).
  void PublishTables();
  /// The metrics' view of `table`'s rows about to be queued: their row changes move into the
  /// batch, counted when it is acknowledged.
  Flusher::BatchInfo TakeBatchInfo(TableState& table);
  /// A transaction (or a statement outside one) ended at `resume`: the next checkpoint may be there.
  Status EndTransaction(const binlog::Event& event, uint64_t resume, bool force_checkpoint);
  /// Appends `record` to `_chsync_schema_log` in `database` (created on first use). A failure is
  /// logged, not fatal: the history is also in `chsync status` and the log.
  void RecordSchemaChange(const std::string& database, const SchemaChangeRecord& record);
  Status AppendImage(TableState& table, binlog::RowImage image, uint64_t version, bool deleted,
                     const binlog::Event& event);
  Status MapColumns(TableState& table, const std::shared_ptr<const binlog::TableMap>& map,
                    const binlog::Event& event);
  /// Queues every table's pending rows for the flusher (none while an XA transaction's first phase is
  /// open: those rows wait for its XA COMMIT).
  Status FlushAll();
  /// Queues one table's pending rows (into the open XA transaction's rows while one is open).
  Status FlushTable(const std::string& key, TableState& table);
  /// Queues every table's pending rows for the flusher, whatever is open.
  Status SendWriters();
  /// Queues `table`'s pending rows: to each shard's lane when its writer is routed, else lane 0.
  Status QueueRows(TableState& table);
  /// The open XA group committed in one phase: the rows set aside for it (xa_batches_) go to the
  /// flusher now.
  Status SendOpenXaBatches(const std::string& position);
  /// The cascades a rows event of parent table `key` sets off (cascades.h): run now, or at the
  /// open XA transaction's commit; a child they cannot be followed into is parked.
  Status FollowCascades(const std::string& key, TableState& table, const binlog::RowsEvent& rows,
                        const binlog::Event& event);
  /// Runs cascade statements (child, statement) once every row before them is in ClickHouse;
  /// `position` (the change's, "binlog.000003:1234") names where in a child's park reason.
  Status RunCascades(const std::vector<std::pair<std::string, std::string>>& statements,
                     const std::string& position);
  /// Drops the rows of the open XA transaction's first phase (rolled back, or never prepared).
  void DiscardOpenXaRows();
  /// Queues the pending rows and then a checkpoint at committed_ (saved once they are acknowledged).
  Status FlushAndCheckpoint();
  size_t PendingRows() const;
  /// A GTID-started session's first transaction (or heartbeat): kNetwork with lineage_break_ set
  /// when it lies before the checkpoint's position (the server's binlog begins anew).
  Status CheckLanding(const binlog::Event& event, const mysql::StreamEvent& ev,
                      const binlog::HeartbeatEvent* hb);
  Error ResyncError(const std::string& table, const std::string& what, const binlog::Event& event) const;

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

  // Stream state.
  std::unique_ptr<binlog::Decoder> decoder_;
  /// Tables the flusher parked (an INSERT refused), until the stream takes them over; outlives
  /// flusher_, whose threads use it.
  ParkBoard park_board_;
  /// The state directory and every save of the checkpoint (the flusher runs the stream's).
  Checkpointer checkpointer_{park_board_};
  std::chrono::steady_clock::time_point last_control_poll_{};
  /// Sends the stream's batches and saves its checkpoints in order, beside the decoding thread.
  std::unique_ptr<Flusher> flusher_;
  /// Bytes of rows in the tables' writers (an estimate kept as rows are added and sent).
  size_t pending_bytes_ = 0;
  /// At least PendingRows(): rows appended since it was last computed or everything was sent.
  /// EndTransaction computes PendingRows() (a walk over every table) only when this reaches
  /// batch.max_rows, not once per transaction.
  size_t pending_rows_bound_ = 0;
  TransactionBoundaries boundaries_;
  /// The open XA transaction's first phase: where its group began, and its rows sent out of the
  /// writers early (batch limits).
  uint64_t xa_group_start_ = 0;
  std::vector<XaBatch> xa_batches_;
  /// The open XA transaction's row changes whose rows left the writers (xa_batches_), by table (at
  /// XA PREPARE they go into its rows file, counted at XA COMMIT).
  std::map<std::string, PendingRowChanges> xa_changes_;
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
  /// Where the last complete transaction ended, with the GTID state there.
  SourcePosition committed_;
  /// The GTIDs applied as of committed_ (committed_.gtid_set is its text at each checkpoint).
  GtidProgress gtids_;
  /// Row versions: the lineage (epochs, the high-water mark) and the numbering of rows
  /// (versions.h); set by Open.
  std::optional<Versions> versions_;
  /// Set by a stream session that found the server's binlog no longer the one the checkpoint's
  /// positions are in (why): the next ReloadFromCheckpoint moves the checkpoint by GTID into a new
  /// epoch (CheckSourceIdentity).
  std::string lineage_break_;
  /// Stopped (SIGTERM) while Open waited for a source that did not answer: Run ends at once.
  bool stopped_at_start_ = false;
  std::chrono::steady_clock::time_point last_flush_;
  std::chrono::steady_clock::time_point last_checkpoint_;
  std::vector<binlog::Value> ordered_;
  std::vector<clickhouse::Cell> cells_;
  /// The versions of a rows event's rows, for its cascades.
  std::vector<uint64_t> row_versions_;
  uint32_t server_id_ = 0;
  bool schemas_dirty_ = false;
  /// The current statement ran in strict mode (its sql_mode).
  bool strict_mode_ = true;
  /// The last stream session failed because the source did not answer (not ClickHouse).
  bool source_failed_ = false;
  /// The source no longer has what the pipe must read next (on_binlog_gap decides).
  bool binlog_gap_ = false;
  /// A GTID-started session has not yet seen its first format description (which belongs to the
  /// start of the file, before the GTID position).
  bool skip_first_format_ = false;
  /// What the log said of how the stream starts (said once, and again when it changes).
  bool said_start_ = false;
  bool last_by_gtid_ = false;
  /// The server the loaded checkpoint's positions were read on (CheckSourceIdentity): a session
  /// may open its dump there by position (resume_position.h).
  std::optional<SourceIdentity> positions_read_on_;
  /// This session opened its dump by position: its first GTID must be one the checkpoint lacks.
  bool check_first_gtid_ = false;
  /// The kMariaGtidExtra{Start,Commit,Rollback}Alter bits of the last GTID event (a two-phase ALTER).
  uint8_t alter_phase_ = 0;
  /// A session opened by GTID has not yet seen where it landed (CheckLanding).
  bool check_landing_ = false;
  /// A session opened by position read a GTID the checkpoint held: by GTID for the rest of the run.
  bool position_refused_ = false;
};

}  // namespace chsync::pipe
