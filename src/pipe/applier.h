#pragma once

// The applier: the binlog's events applied to ClickHouse in binlog order — rows into the tables'
// writers and from there, batched, to the flusher; schema changes between the rows they separate;
// transaction boundaries, XA transactions (the first phase's rows kept in the state directory
// until XA COMMIT) and foreign-key cascades; and the stream's checkpoints, made where a
// transaction ended (committed()) and saved by the flusher once every row before them is in
// ClickHouse (Checkpointer::Deferred).
//
// The applier owns where the last complete transaction ended (committed()), the GTIDs applied
// there, the rows not yet sent (the writers' bytes, the open XA transaction's batches) and the
// flusher. It reads and changes the table set, the tracked schemas and the checkpoint it is given
// (ApplierParts); what is the pipe's to do — parking a table, starting or stopping a copy,
// carrying out requests between transactions — it asks of its host (ApplierHost).

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "binlog/event.h"
#include "clickhouse/table_writer.h"
#include "common/result.h"
#include "pipe/cascades.h"
#include "pipe/checkpointer.h"
#include "pipe/destination.h"
#include "pipe/flusher.h"
#include "pipe/holds.h"
#include "pipe/live_tables.h"
#include "pipe/names.h"
#include "pipe/pipeline.h"
#include "pipe/retention_sample.h"
#include "pipe/source_link.h"
#include "pipe/table_set.h"
#include "policy/ddl_policy.h"
#include "position/gtid_progress.h"
#include "position/transaction_boundary.h"
#include "position/versions.h"
#include "schema/tracker.h"
#include "state/checkpoint.h"
#include "state/run_status.h"
#include "state/xa_store.h"

namespace chsync::pipe {

/// What the applier asks of the pipe that runs it.
class ApplierHost {
 public:
  virtual ~ApplierHost() = default;
  /// A failure of one table's statement or rows: parks the table (Ok) when the failure concerns it
  /// alone and its on_table_error is park (Holds::ParkFor); otherwise returns `error`.
  virtual Status ParkTable(TableState& table, const std::string& key, const Error& error,
                           const std::string& statement, const std::string& position) = 0;
  /// Starts (or, with `resume`, continues) the online copy of `table` under its dest.source.
  virtual Status StartRebuild(TableState& table, const std::string& position, const std::string& reason,
                              bool resume) = 0;
  /// Stops `table`'s online copy, if any, and drops its table.
  virtual Status CancelRebuild(TableState& table) = 0;
  /// Makes `table`'s converter and writer for its dest (and reads its key from ClickHouse).
  virtual Status RebuildWriter(TableState& table) = 0;
  /// Between transactions: the requests waiting, and the copies that finished.
  virtual Status BetweenTransactions() = 0;
  /// The cascading foreign keys may have changed: found again when needed.
  virtual void NoteCascades() = 0;
  /// A checkpoint is being made: the tables' destinations into it, the status's destination and tables.
  virtual void BeforeCheckpoint() = 0;
};

/// The pipe's collaborators the applier works on (each outlives it).
struct ApplierParts {
  const RunRequest& request;
  SourceLink& source;
  schema::Tracker& tracker;
  Checkpoint& checkpoint;
  RunStatus& status;
  TableSet& set;
  Destination& destination;
  Checkpointer& checkpointer;
  CascadeFollower& cascades;
  Holds& holds;
  std::optional<Versions>& versions;
  std::unique_ptr<RetentionSampler>& retention;
};

class Applier {
 public:
  Applier(ApplierParts parts, ApplierHost& host);
  Applier(const Applier&) = delete;
  Applier& operator=(const Applier&) = delete;

  /// Starts from `resume` (the checkpoint's): its position, GTIDs and row-version shift; nothing
  /// pending; a new flusher (to the destination, and to each shard when rows are routed).
  Status Start(const SourcePosition& resume);
  /// A new stream session starts at committed(): no format description read yet.
  void BeginSession();
  /// The stream reads again from the saved checkpoint, whose schemas are the tracker's now.
  void MarkSchemasSaved() { schemas_dirty_ = false; }
  /// Stops the flusher: what it still held was never acknowledged.
  void StopFlusher() { flusher_.reset(); }
  Flusher* flusher() { return flusher_.get(); }
  const Flusher* flusher() const { return flusher_.get(); }

  /// `outer_end`: the end of the event as it lies in the file (a TRANSACTION_PAYLOAD's end for the
  /// events inside it).
  Status HandleEvent(const binlog::Event& event, uint64_t outer_end);
  /// A binlog file began between transactions, its format description ending at `end`: resuming
  /// there is as good as anywhere.
  void NoteFileStart(std::string_view file, uint64_t end);

  /// Where the last complete transaction ended, with the GTID state there.
  const SourcePosition& committed() const { return committed_; }
  /// committed() as "binlog.000003:1234".
  std::string committed_at() const { return Coordinate(committed_.file, committed_.position); }
  /// The GTIDs applied as of committed(), and of the transaction being read.
  const GtidProgress& gtids() const { return gtids_; }
  GtidProgress& gtids() { return gtids_; }
  bool in_transaction() const { return boundaries_.in_transaction(); }
  /// Between transactions and outside an open XA transaction's first phase.
  bool between_transactions() const { return !boundaries_.in_transaction() && !boundaries_.open_xa(); }
  /// Rows in the tables' writers (a walk over every table).
  size_t PendingRows() const;

  /// Queues every table's pending rows for the flusher (none while an XA transaction's first phase
  /// is open: those rows wait for its XA COMMIT).
  Status FlushAll();
  /// Queues the pending rows and then a checkpoint at committed() (saved once they are acknowledged).
  Status FlushAndCheckpoint();
  /// Drops `table`'s unsent rows (it is held: its copy on resume has them).
  void DropPending(TableState& table);
  /// Holds::AttachParking for `key`'s rows queued now.
  void AttachParking(Flusher::BatchInfo& info, const std::string& key);
  /// Records a schema change of table `key`; `action` (SchemaChangeAction) counts it in the
  /// metrics under the statement's kind ("": not counted, e.g. a rebuild that finished).
  void Record(const std::string& key, const std::string& database, const std::string& position,
              const std::string& statement, const std::vector<std::string>& lines, std::string_view action);

 private:
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
  Error ResyncError(const std::string& table, const std::string& what, const binlog::Event& event) const;

  using Placement = TableSet::Placement;

  // The collaborators (ApplierParts), named as the pipe names them.
  const RunRequest& request_;
  SourceLink& source_;
  schema::Tracker& tracker_;
  Checkpoint& checkpoint_;
  RunStatus& status_;
  TableSet& set_;
  Destination& destination_;
  Checkpointer& checkpointer_;
  CascadeFollower& cascades_;
  Holds& holds_;
  std::optional<Versions>& versions_;
  std::unique_ptr<RetentionSampler>& retention_;
  ApplierHost& host_;

  /// The server version and flavor of the session's last format description (a statement is read
  /// as that server reads it: its versioned comments); unset until one was read. (MySQL 4's
  /// START_EVENT_V3 binlogs, which have no row events, are not read.)
  std::optional<uint32_t> server_version_;
  bool mariadb_format_ = false;
  /// Sends the batches and saves the checkpoints in order, beside the decoding thread.
  std::unique_ptr<Flusher> flusher_;
  /// Where the last complete transaction ended, with the GTID state there.
  SourcePosition committed_;
  /// The GTIDs applied as of committed_ (committed_.gtid_set is its text at each checkpoint).
  GtidProgress gtids_;
  TransactionBoundaries boundaries_;
  /// Bytes of rows in the tables' writers (an estimate kept as rows are added and sent).
  size_t pending_bytes_ = 0;
  /// At least PendingRows(): rows appended since it was last computed or everything was sent.
  /// EndTransaction computes PendingRows() (a walk over every table) only when this reaches
  /// batch.max_rows, not once per transaction.
  size_t pending_rows_bound_ = 0;
  /// The open XA transaction's first phase: where its group began, and its rows sent out of the
  /// writers early (batch limits).
  uint64_t xa_group_start_ = 0;
  std::vector<XaBatch> xa_batches_;
  /// The open XA transaction's row changes whose rows left the writers (xa_batches_), by table (at
  /// XA PREPARE they go into its rows file, counted at XA COMMIT).
  std::map<std::string, PendingRowChanges> xa_changes_;
  std::chrono::steady_clock::time_point last_flush_;
  std::chrono::steady_clock::time_point last_checkpoint_;
  std::vector<binlog::Value> ordered_;
  std::vector<clickhouse::Cell> cells_;
  /// The versions of a rows event's rows, for its cascades.
  std::vector<uint64_t> row_versions_;
  /// A statement changed the tracked schemas since the last checkpoint.
  bool schemas_dirty_ = false;
  /// The current statement ran in strict mode (its sql_mode).
  bool strict_mode_ = true;
  /// The kMariaGtidExtra{Start,Commit,Rollback}Alter bits of the last GTID event (a two-phase ALTER).
  uint8_t alter_phase_ = 0;
};

}  // namespace chsync::pipe
