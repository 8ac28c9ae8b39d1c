// The rows not sent yet, and the flusher that sends them (outbox.h).

#include "pipe/outbox.h"

#include <algorithm>
#include <utility>

#include "metrics/pipe_metrics.h"
#include "pipe/names.h"

namespace chsync::pipe {

void Outbox::Open(std::vector<std::unique_ptr<clickhouse::Connection>> lanes) {
  pending_bytes_ = 0;
  pending_rows_bound_ = PendingRows();
  set_aside_.clear();
  set_aside_changes_.clear();
  flusher_ =
      std::make_unique<Flusher>(std::move(lanes), 4, static_cast<size_t>(2 * parts_.config.batch_max_bytes));
}

bool Outbox::Due(std::chrono::steady_clock::time_point now) {
  const bool pending = pending_bytes_ > 0;  // every row has bytes
  if (pending_bytes_ >= parts_.config.batch_max_bytes ||
      (pending && now - last_flush_ >= std::chrono::milliseconds(parts_.config.batch_max_age_ms))) {
    return true;
  }
  if (pending_rows_bound_ < parts_.config.batch_max_rows) return false;
  pending_rows_bound_ = PendingRows();
  return pending_rows_bound_ >= parts_.config.batch_max_rows;
}

size_t Outbox::PendingRows() const {
  size_t rows = 0;
  for (const auto& [key, table] : parts_.set.tables())
    rows += (table->writer ? table->writer->batch_rows() : 0) + (table->history ? table->history->rows() : 0);
  return rows;
}

Status Outbox::FlushIfFull(const std::string& key, TableState& table) {
  if (table.writer->batch_rows() >= parts_.config.batch_max_rows ||
      table.writer->bytes() >= parts_.config.batch_max_bytes) {
    CHSYNC_RETURN_IF_ERROR(FlushTable(key, table));
  }
  // All tables' unsent rows together stay under the byte bound too.
  if (pending_bytes_ >= parts_.config.batch_max_bytes) CHSYNC_RETURN_IF_ERROR(FlushAll());
  return Status::Ok();
}

Status Outbox::FlushTable(const std::string& key, TableState& table) {
  const bool history = table.history && table.history->rows() > 0;
  if (!table.writer || (table.writer->rows() == 0 && !history)) return Status::Ok();
  ReportClamped(key, table.writer->TakeClamped(), parts_.destination.caps().date32);
  pending_bytes_ -= std::min(pending_bytes_, table.writer->bytes() + (history ? table.history->bytes() : 0));
  if (origin_.boundaries.open_xa()) {
    set_aside_changes_[key].Absorb(table.changes);
    if (table.writer->rows() > 0)
      set_aside_.push_back({key, table.writer->insert_prefix(), table.writer->TakeData()});
    if (history) set_aside_.push_back({key, table.history->insert_prefix(), table.history->TakeData()});
    return Status::Ok();
  }
  return QueueRows(table);
}

Flusher::BatchInfo Outbox::TakeBatchInfo(TableState& table) {
  Flusher::BatchInfo info;
  info.rows = table.writer->rows();
  if (!table.changes.empty()) {
    PendingRowChanges changes;
    changes.Absorb(table.changes);
    info.acknowledged = [changes]() mutable { changes.Count(); };
  }
  return info;
}

Status Outbox::NoteSent() {
  const std::string gtids = origin_.gtids.ToStringWithOpen();
  if (gtids.empty()) return Status::Ok();  // a source without GTIDs: nothing to note
  return parts_.versions->lineage().NoteSent(gtids);
}

void Outbox::AttachParking(Flusher::BatchInfo& info, const std::string& key) {
  parts_.holds.AttachParking(info, key, Coordinate(origin_.committed.file, origin_.committed.position),
                             parts_.checkpointer.path());
}

Status Outbox::QueueRows(TableState& table) {
  // A move to another server must find these rows' transactions there (lineage.h), the open one
  // included: also the first transaction a source with no GTID before it ever wrote.
  CHSYNC_RETURN_IF_ERROR(NoteSent());
  const std::string key = TableKey(table.dest.source.database, table.dest.source.name);
  if (table.history && table.history->rows() > 0) {
    // The history table's rows (pipe/history.h) go before the checkpoint after them, as the table's.
    Flusher::BatchInfo history;
    history.rows = table.history->rows();
    AttachParking(history, key);
    CHSYNC_RETURN_IF_ERROR(
        flusher_->Insert(table.history->insert_prefix(), table.history->TakeData(), 0, std::move(history)));
  }
  if (table.writer->rows() == 0) return Status::Ok();
  Flusher::BatchInfo info = TakeBatchInfo(table);
  ReportClamped(key, table.writer->TakeClamped(), parts_.destination.caps().date32);
  if (table.writer->routed() && flusher_->lanes() > 1) {
    const size_t total_bytes = std::max<size_t>(1, table.writer->bytes());
    std::vector<std::pair<size_t, std::string>> shards = table.writer->TakeShardData();
    for (size_t i = 0; i < shards.size(); ++i) {
      auto& [shard, data] = shards[i];
      // Rows per shard in proportion to its bytes; the changes count with the last shard's INSERT.
      Flusher::BatchInfo part;
      part.rows = info.rows * data.size() / total_bytes;
      if (i + 1 == shards.size()) part.acknowledged = std::exchange(info.acknowledged, nullptr);
      AttachParking(part, key);
      CHSYNC_RETURN_IF_ERROR(
          flusher_->Insert(table.writer->local_prefix(), std::move(data), 1 + shard, std::move(part)));
    }
    return Status::Ok();
  }
  AttachParking(info, key);
  return flusher_->Insert(table.writer->insert_prefix(), table.writer->TakeData(), 0, std::move(info));
}

Status Outbox::SendWriters() {
  for (auto& [key, table] : parts_.set.tables()) {
    if (table->writer && (table->writer->rows() > 0 || (table->history && table->history->rows() > 0)))
      CHSYNC_RETURN_IF_ERROR(QueueRows(*table));
  }
  pending_bytes_ = 0;
  pending_rows_bound_ = 0;
  last_flush_ = std::chrono::steady_clock::now();
  return Status::Ok();
}

Status Outbox::FlushAll() {
  if (!origin_.boundaries.open_xa()) return SendWriters();
  for (auto& [key, table] : parts_.set.tables()) CHSYNC_RETURN_IF_ERROR(FlushTable(key, *table));
  return Status::Ok();
}

Status Outbox::SendSetAside() {
  if (set_aside_.empty()) return Status::Ok();
  CHSYNC_RETURN_IF_ERROR(NoteSent());
  std::vector<XaBatch> batches = std::exchange(set_aside_, {});
  std::map<std::string, PendingRowChanges> changes = std::exchange(set_aside_changes_, {});
  for (XaBatch& batch : batches) {
    Flusher::BatchInfo info;
    // The table's changes count with its first batch.
    if (auto it = changes.find(batch.table); it != changes.end()) {
      info.rows = it->second.rows();
      info.acknowledged = [counted = it->second]() mutable { counted.Count(); };
      changes.erase(it);
    }
    AttachParking(info, batch.table);
    CHSYNC_RETURN_IF_ERROR(
        flusher_->Insert(std::move(batch.prefix), std::move(batch.data), 0, std::move(info)));
  }
  return Status::Ok();
}

void Outbox::DiscardSetAside() {
  for (auto& [key, table] : parts_.set.tables()) {
    if (table->writer) (void)table->writer->TakeData();
    if (table->history) (void)table->history->TakeData();
    table->changes.inserts = table->changes.updates = table->changes.deletes = 0;
  }
  set_aside_.clear();
  set_aside_changes_.clear();
  pending_bytes_ = 0;
  pending_rows_bound_ = 0;
}

std::vector<XaBatch> Outbox::TakePrepared() {
  std::vector<XaBatch> batches = std::exchange(set_aside_, {});
  for (auto& [key, table] : parts_.set.tables()) {
    const bool history = table->history && table->history->rows() > 0;
    if (!table->writer || (table->writer->rows() == 0 && !history)) continue;
    set_aside_changes_[key].Absorb(table->changes);
    if (table->writer->rows() > 0)
      batches.push_back({key, table->writer->insert_prefix(), table->writer->TakeData()});
    if (history) batches.push_back({key, table->history->insert_prefix(), table->history->TakeData()});
  }
  pending_bytes_ = 0;
  // Each table's changes go with its first batch, into the file: counted at XA COMMIT, also by a
  // chsync restarted in between.
  for (const auto& entry : set_aside_changes_) {
    const std::string& key = entry.first;
    const PendingRowChanges& changes = entry.second;
    auto first =
        std::find_if(batches.begin(), batches.end(), [&](const XaBatch& b) { return b.table == key; });
    if (first == batches.end()) continue;
    first->inserts = changes.inserts;
    first->updates = changes.updates;
    first->deletes = changes.deletes;
  }
  set_aside_changes_.clear();
  return batches;
}

Status Outbox::SendPrepared(std::vector<XaBatch> batches) {
  CHSYNC_RETURN_IF_ERROR(NoteSent());
  for (XaBatch& batch : batches) {
    auto target = parts_.set.tables().find(batch.table);
    if (target == parts_.set.tables().end()) continue;  // no longer replicated (dropped, renamed away)
    if (target->second->held) continue;                 // parked or paused: its copy on resume has these rows
    // The table's changes count with its first batch (they are in the file).
    Flusher::BatchInfo info;
    PendingRowChanges counted;
    counted.inserts = batch.inserts;
    counted.updates = batch.updates;
    counted.deletes = batch.deletes;
    if (!counted.empty()) {
      counted.counters = Metrics().RowCounters(batch.table);
      info.rows = counted.rows();
      info.acknowledged = [counted]() mutable { counted.Count(); };
    }
    AttachParking(info, batch.table);
    CHSYNC_RETURN_IF_ERROR(
        flusher_->Insert(std::move(batch.prefix), std::move(batch.data), 0, std::move(info)));
  }
  return Status::Ok();
}

void Outbox::DropPending(TableState& table) {
  if (!table.writer) return;
  pending_bytes_ -=
      std::min(pending_bytes_, table.writer->bytes() + (table.history ? table.history->bytes() : 0));
  (void)table.writer->TakeData();
  if (table.history) (void)table.history->TakeData();
}

}  // namespace chsync::pipe
