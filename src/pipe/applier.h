#pragma once

// The applier: the binlog's events applied to ClickHouse in binlog order — rows into the tables'
// writers and from there, batched, to the flusher; schema changes between the rows they separate;
// transaction boundaries, XA transactions (the first phase's rows kept in the state directory
// until XA COMMIT) and foreign-key cascades; and the stream's checkpoints, made where a
// transaction ended (committed()) and saved by the flusher once every row before them is in
// ClickHouse (Checkpointer::Deferred).
//
// The applier owns where the last complete transaction ended (committed()), the GTIDs applied
// there and the transaction boundaries; the rows not sent yet and the flusher are its Outbox's,
// a statement's schema changes its SchemaApplier's. It reads and changes the table set, the
// tracked schemas and the checkpoint it is given (ApplierParts); what is the pipe's to do —
// parking a table, starting or stopping a copy, carrying out requests between transactions — it
// asks of its host (ApplierHost).

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
#include "metrics/retention_sample.h"
#include "pipe/applier_host.h"
#include "pipe/cascades.h"
#include "pipe/checkpointer.h"
#include "pipe/destination.h"
#include "pipe/flusher.h"
#include "pipe/holds.h"
#include "pipe/live_tables.h"
#include "pipe/names.h"
#include "pipe/outbox.h"
#include "pipe/pipeline.h"
#include "pipe/schema_applier.h"
#include "pipe/schema_history.h"
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
  SchemaHistory& history;
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
  void StopFlusher() { outbox_.Close(); }
  Flusher* flusher() { return outbox_.flusher(); }
  const Flusher* flusher() const { return outbox_.flusher(); }

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
  size_t PendingRows() const { return outbox_.PendingRows(); }

  /// Queues every table's pending rows for the flusher (none while an XA transaction's first phase
  /// is open: those rows wait for its XA COMMIT).
  Status FlushAll() { return outbox_.FlushAll(); }
  /// Queues the pending rows and then a checkpoint at committed() (saved once they are acknowledged).
  Status FlushAndCheckpoint();
  /// Drops `table`'s unsent rows (it is held: its copy on resume has them).
  void DropPending(TableState& table) { outbox_.DropPending(table); }

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
  /// A statement's schema changes (SchemaApplier), after the rows before it and a checkpoint at its
  /// start, when they concern a replicated table.
  Status ApplySchemaChanges(const binlog::Event& event, const binlog::QueryEvent& query,
                            const schema::ApplyResult& applied);
  /// A transaction (or a statement outside one) ended at `resume`: the next checkpoint may be there.
  Status EndTransaction(const binlog::Event& event, uint64_t resume, bool force_checkpoint);
  /// Appends a row image to the table's writer (unless `main` is false) and, with `change` given and
  /// the table's history on, to its history writer as a change of that kind (pipe/history.h).
  Status AppendImage(TableState& table, binlog::RowImage image, uint64_t version, bool deleted,
                     const binlog::Event& event, std::string_view change = {}, bool main = true);
  Status MapColumns(TableState& table, const std::shared_ptr<const binlog::TableMap>& map,
                    const binlog::Event& event);
  /// The cascades a rows event of parent table `key` sets off (cascades.h): run now, or at the
  /// open XA transaction's commit; a child they cannot be followed into is parked.
  Status FollowCascades(const std::string& key, TableState& table, const binlog::RowsEvent& rows,
                        const binlog::Event& event);
  /// Runs cascade statements (child, statement) once every row before them is in ClickHouse;
  /// `position` (the change's, "binlog.000003:1234") names where in a child's park reason.
  Status RunCascades(const std::vector<std::pair<std::string, std::string>>& statements,
                     const std::string& position);

  ApplierParts parts_;
  ApplierHost& host_;
  /// The server version and flavor of the session's last format description (a statement is read
  /// as that server reads it: its versioned comments); unset until one was read. (MySQL 4's
  /// START_EVENT_V3 binlogs, which have no row events, are not read.)
  std::optional<uint32_t> server_version_;
  bool mariadb_format_ = false;
  /// Where the last complete transaction ended, with the GTID state there.
  SourcePosition committed_;
  /// The GTIDs applied as of committed_ (committed_.gtid_set is its text at each checkpoint).
  GtidProgress gtids_;
  TransactionBoundaries boundaries_;
  /// Where the open XA transaction's first phase began (its rows file is named after it).
  uint64_t xa_group_start_ = 0;
  std::chrono::steady_clock::time_point last_checkpoint_;
  std::vector<binlog::Value> ordered_;
  std::vector<clickhouse::Cell> cells_;
  /// A history row's cells, and the rows event's coordinate and transaction's GTID they name.
  std::vector<clickhouse::Cell> history_cells_;
  std::string history_binlog_;
  std::string history_gtid_;
  /// The versions of a rows event's rows, for its cascades.
  std::vector<uint64_t> row_versions_;
  /// A statement changed the tracked schemas since the last checkpoint.
  bool schemas_dirty_ = false;
  /// The current statement ran in strict mode (its sql_mode).
  bool strict_mode_ = true;
  /// The kMariaGtidExtra{Start,Commit,Rollback}Alter bits of the last GTID event (a two-phase ALTER).
  uint8_t alter_phase_ = 0;
  /// The rows not sent yet and the flusher (after committed_, gtids_ and boundaries_, which it reads).
  Outbox outbox_;
  /// A statement's schema changes carried to ClickHouse.
  SchemaApplier schema_;
};

}  // namespace chsync::pipe
