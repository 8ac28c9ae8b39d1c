#pragma once

// The outbox: the rows read from the binlog and not sent yet — the bytes in the tables' writers,
// and the rows of an open XA transaction's first phase set aside until it ends — and the flusher
// that sends them to ClickHouse in order. Before a batch is queued, the lineage notes the GTIDs
// it carries (a move to another server must find them there: lineage.h), and the batch carries
// what the flusher parks if ClickHouse refuses it (Holds::AttachParking).
//
// The outbox reads where the applier is (the committed position, the GTIDs, whether an XA
// transaction is open: OutboxOrigin) and never changes it.

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clickhouse/connection.h"
#include "common/result.h"
#include "pipe/checkpointer.h"
#include "pipe/destination.h"
#include "pipe/flusher.h"
#include "pipe/holds.h"
#include "pipe/live_tables.h"
#include "pipe/pipeline.h"
#include "pipe/table_set.h"
#include "position/gtid_progress.h"
#include "position/transaction_boundary.h"
#include "position/versions.h"
#include "state/checkpoint.h"
#include "state/xa_store.h"

namespace chsync::pipe {

/// The pipe's collaborators the outbox works with (each outlives it).
struct OutboxParts {
  /// batch.max_rows, batch.max_bytes, batch.max_age_ms.
  const PipeConfig& config;
  TableSet& set;
  const Destination& destination;
  Holds& holds;
  const Checkpointer& checkpointer;
  std::optional<Versions>& versions;
};

/// Where the rows queued now come from: the applier's state, read only.
struct OutboxOrigin {
  const SourcePosition& committed;
  const GtidProgress& gtids;
  const TransactionBoundaries& boundaries;
};

class Outbox {
 public:
  Outbox(OutboxParts parts, OutboxOrigin origin) : parts_(parts), origin_(origin) {}
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  /// Nothing pending; a new flusher over `lanes` (0: the destination; 1 + shard: each shard's,
  /// when rows are routed).
  void Open(std::vector<std::unique_ptr<clickhouse::Connection>> lanes);
  /// Stops the flusher: what it still held was never acknowledged.
  void Close() { flusher_.reset(); }
  Flusher* flusher() { return flusher_.get(); }
  const Flusher* flusher() const { return flusher_.get(); }

  /// A stream session starts at `now`: the age of the pending rows counts from there.
  void StartClock(std::chrono::steady_clock::time_point now) { last_flush_ = now; }
  /// `bytes` and `rows` were appended to the tables' writers.
  void NoteAppended(size_t bytes, size_t rows) {
    pending_bytes_ += bytes;
    pending_rows_bound_ += rows;
  }
  /// Whether the rows pending are due at `now`: a batch's bytes or rows, or the oldest waited
  /// batch.max_age_ms since the last send.
  bool Due(std::chrono::steady_clock::time_point now);
  /// Rows in the tables' writers (a walk over every table).
  size_t PendingRows() const;

  /// Queues `key`'s rows when its writer holds a batch, then every table's when all of them
  /// together hold a batch's bytes.
  Status FlushIfFull(const std::string& key, TableState& table);
  /// Queues every table's pending rows (set aside, while an XA transaction's first phase is open).
  Status FlushAll();
  /// Queues every table's pending rows, whatever is open.
  Status SendWriters();
  /// The open XA transaction ended in one phase (XA COMMIT … ONE PHASE, or a plain COMMIT): the
  /// rows set aside for it are queued.
  Status SendSetAside();
  /// The open XA transaction's rows are dropped (rolled back, or never prepared): the writers'
  /// and those set aside.
  void DiscardSetAside();
  /// At XA PREPARE: the open transaction's rows, out of the writers and set aside, each table's
  /// row changes counted in its first batch (for the rows file).
  std::vector<XaBatch> TakePrepared();
  /// At XA COMMIT: a prepared transaction's batches (from its rows file) queued, except those of
  /// tables no longer replicated or held (their copy on resume has these rows).
  Status SendPrepared(std::vector<XaBatch> batches);
  /// Drops `table`'s unsent rows (it is held: its copy on resume has them).
  void DropPending(TableState& table);

 private:
  /// Queues one table's pending rows (set aside while an XA transaction is open).
  Status FlushTable(const std::string& key, TableState& table);
  /// Queues `table`'s pending rows: to each shard's lane when its writer is routed, else lane 0.
  Status QueueRows(TableState& table);
  /// The metrics' view of `table`'s rows about to be queued: their row changes move into the
  /// batch, counted when it is acknowledged.
  Flusher::BatchInfo TakeBatchInfo(TableState& table);
  /// Holds::AttachParking for `key`'s rows queued now.
  void AttachParking(Flusher::BatchInfo& info, const std::string& key);
  /// The lineage notes the GTIDs of the rows about to be queued, the open transaction's included.
  Status NoteSent();

  OutboxParts parts_;
  OutboxOrigin origin_;
  /// Sends the batches and saves the checkpoints in order, beside the decoding thread.
  std::unique_ptr<Flusher> flusher_;
  /// Bytes of rows in the tables' writers (an estimate kept as rows are added and sent).
  size_t pending_bytes_ = 0;
  /// At least PendingRows(): rows appended since it was last computed or everything was sent.
  /// Due computes PendingRows() (a walk over every table) only when this reaches batch.max_rows,
  /// not once per transaction.
  size_t pending_rows_bound_ = 0;
  std::chrono::steady_clock::time_point last_flush_;
  /// The open XA transaction's rows sent out of the writers early (batch limits).
  std::vector<XaBatch> set_aside_;
  /// Their row changes, by table (at XA PREPARE they go into its rows file, counted at XA COMMIT).
  std::map<std::string, PendingRowChanges> set_aside_changes_;
};

}  // namespace chsync::pipe
