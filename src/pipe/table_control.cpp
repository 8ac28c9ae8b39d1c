// Parked and paused tables, and the requests of `chsync pause|resume|resync --table` carried out by
// a running pipe (docs/table-control.md).
//
// A held table's binlog changes are not applied; its ClickHouse table keeps the rows it had. It
// comes back by being copied again online (RecopyTable: an online rebuild, rebuild.cpp), never by
// replaying the binlog from where it stopped: the copy is exact whatever the table went through
// meanwhile (a refused ALTER half-applied, more DDL, a purged binlog), needs nothing kept, and costs
// the table's size once.
//
// A request is carried out once: its id enters checkpoint_.requests_done in the checkpoint that
// also holds its effect, and its file is removed (with the outcome written beside it) only after
// that checkpoint is saved. A crash before: the request is carried out again from the saved state.
// After: its id is in the checkpoint, and it is only completed.

#include <fmt/format.h>

#include <algorithm>

#include "clickhouse/server_error.h"
#include "common/log.h"
#include "pipe/pipeline_internal.h"
#include "state/control.h"

namespace chsync::pipe {

Status Pipe::ParkTable(TableState& table, const std::string& key, const Error& error,
                       const std::string& statement, const std::string& position) {
  const schema::TableSchema& source = table.dest.source;
  if (!ConcernsOneTable(error) || request_.config.policies.For(source.database, source.name).on_table_error ==
                                      SchemaPolicy::TableError::kStop) {
    return error;
  }
  HeldTable held{key, "parked", error.message(), statement.substr(0, 1000), position, NowMs()};
  return HoldTable(table, std::move(held), /*announce=*/true);
}

Status Pipe::HoldTable(TableState& table, HeldTable held, bool announce) {
  if (table.rebuild) CHSYNC_RETURN_IF_ERROR(CancelRebuild(table));
  if (table.writer) {
    pending_bytes_ -= std::min(pending_bytes_, table.writer->bytes());
    (void)table.writer->TakeData();
  }
  table.changes.inserts = table.changes.updates = table.changes.deletes = 0;
  table.table_map.reset();
  if (announce && held.state == "parked") {
    log::Err(
        "table {} PARKED at {}: {}. Its changes are no longer applied and its ClickHouse table keeps the "
        "rows it "
        "had; every other table goes on. Fix the cause, then `chsync resume --state {} --table {}` (or "
        "`chsync "
        "resync --table`) copies it again online",
        held.table, held.position, held.reason, checkpointer_.path(), held.table);
  } else if (announce) {
    log::Warn("table {} paused at {}: its changes are no longer applied until `chsync resume`", held.table,
              held.position);
  }
  Record(held.table, set_.PlaceFor(table.dest.source.database, table.dest.source.name).target.database,
         held.position, held.statement.empty() ? "(" + held.reason + ")" : held.statement,
         {held.state == "parked" ? "parked: " + held.reason : "paused"}, "");
  table.held = std::move(held);
  PublishTables();
  return Status::Ok();
}

Status Pipe::RecopyTable(TableState& table, const std::string& key, const std::string& reason) {
  const schema::TableSchema* now = tracker_.Find(table.dest.source.database, table.dest.source.name);
  if (now == nullptr) return Error(ErrorKind::kNotFound, key + " is not tracked any more");
  if (table.rebuild) CHSYNC_RETURN_IF_ERROR(CancelRebuild(table));
  std::optional<HeldTable> was = std::move(table.held);
  table.held.reset();
  table.dest = set_.FreshDestination(*now, table.dest.excluded);
  const std::string position = Coordinate(committed_.file, committed_.position);
  Status started = StartRebuild(table, position, reason, /*resume=*/false);
  if (!started.ok()) {
    table.rebuild.reset();
    if (started.error().kind() == ErrorKind::kNetwork || clickhouse::IsRetryable(started.error())) {
      table.held = std::move(was);
      return started;  // the pipe reads again from its checkpoint, where the request still waits
    }
    // Its ClickHouse table can no longer be trusted to match the tracked layout: parked.
    CHSYNC_RETURN_IF_ERROR(HoldTable(
        table,
        {key, "parked", "copying it again failed: " + started.error().message(), reason, position, NowMs()},
        /*announce=*/true));
    return started;
  }
  park_board_.Forget(key);
  PublishTables();
  return Status::Ok();
}

void Pipe::AttachParking(Flusher::BatchInfo& info, const std::string& key) {
  const size_t dot = key.find('.');
  const SchemaPolicy policy = request_.config.policies.For(key.substr(0, dot), key.substr(dot + 1));
  if (policy.on_table_error == SchemaPolicy::TableError::kStop) return;
  ParkBoard* board = &park_board_;
  info.skip = [board, key] { return board->Parked(key); };
  const std::string position = Coordinate(committed_.file, committed_.position);
  const std::string state_path = checkpointer_.path();
  const uint64_t rows = info.rows;
  info.rejected = [board, key, position, state_path, rows](const Error& error) {
    if (!ConcernsOneTable(error)) return false;
    HeldTable held{key,
                   "parked",
                   "ClickHouse refused its INSERT: " + error.message(),
                   fmt::format("INSERT of {} rows (changes up to {})", rows, position),
                   position,
                   NowMs()};
    if (board->Park(held)) {
      log::Err(
          "table {} PARKED: {}. Its changes are no longer applied and its ClickHouse table keeps the rows it "
          "had; every other table goes on. Fix the cause, then `chsync resume --state {} --table {}` copies "
          "it "
          "again online",
          key, held.reason, state_path, key);
    }
    return true;
  };
}

Status Pipe::PollControl() {
  if (boundaries_.in_transaction() || boundaries_.open_xa()) return Status::Ok();
  bool took_over = false;
  for (HeldTable& held : park_board_.TakeNew()) {
    auto it = set_.tables().find(held.table);
    if (it == set_.tables().end() || it->second->held) continue;
    CHSYNC_RETURN_IF_ERROR(HoldTable(*it->second, std::move(held), /*announce=*/false));
    took_over = true;
  }
  // The stream's own checkpoint records the park from now on: saved at once, not at the next
  // transaction (on a quiet source that may be long).
  if (took_over) CHSYNC_RETURN_IF_ERROR(FlushAndCheckpoint());
  const auto now = CoarseSteadyNow();
  if (now - last_control_poll_ < std::chrono::seconds(1)) return Status::Ok();
  last_control_poll_ = now;
  CHSYNC_ASSIGN_OR_RETURN(std::vector<ControlRequest> requests,
                          checkpointer_.Waiting(checkpoint_.requests_done));
  if (requests.empty()) return Status::Ok();
  for (const ControlRequest& request : requests) {
    CHSYNC_ASSIGN_OR_RETURN(std::string outcome, CarryOut(request.op, request.table));
    if (outcome.empty()) continue;  // waits for the stream to read a statement (CarryOut)
    log::Info("request {} {} {}: {}", request.id, request.op, request.table, outcome);
    checkpointer_.Carried(request.id, std::move(outcome), checkpoint_.requests_done);
  }
  if (!checkpointer_.outcomes_waiting()) return Status::Ok();
  return FlushAndCheckpoint();
}

Result<std::string> Pipe::CarryOut(const std::string& op, const std::string& key) {
  auto it = set_.tables().find(key);
  if (it == set_.tables().end()) {
    std::string known;
    for (const auto& [name, table] : set_.tables()) known += (known.empty() ? "" : ", ") + name;
    return "refused: " + key + " is not a table this pipe replicates (it replicates " +
           (known.empty() ? std::string("none") : known) + ")";
  }
  TableState& table = *it->second;
  const std::string position = Coordinate(committed_.file, committed_.position);
  if (op == "pause") {
    if (table.held) {
      return table.held->state == "paused"
                 ? "done: " + key + " was paused already (since " + table.held->position + ")"
                 : "refused: " + key + " is parked (" + table.held->reason + "); resume or resync it";
    }
    CHSYNC_RETURN_IF_ERROR(HoldTable(table, {key, "paused", "chsync pause", "", position, NowMs()}, true));
    return "done: " + key + " paused at " + position +
           "; its ClickHouse table keeps its rows, and `chsync resume` copies it again online";
  }
  if (op == "resume" && !table.held) {
    return "refused: " + key + " is not paused or parked (it is " +
           (table.rebuild ? "being copied" : "streaming") + ")";
  }
  if (op == "resume" || op == "resync") {
    const std::string was = table.held ? table.held->state : "";
    const schema::TableSchema* now = tracker_.Find(table.dest.source.database, table.dest.source.name);
    if (now != nullptr) {
      const SchemaPolicy policy = request_.config.policies.For(now->database, now->name);
      if (std::optional<std::string> refused = KeylessRefusal(*now, policy)) {
        // The key may be in a statement at the source the stream has not read yet: then the request
        // waits for it rather than being refused.
        auto keep = [&](const schema::TableSchema& t) {
          return t.database == now->database && t.name == now->name;
        };
        CHSYNC_ASSIGN_OR_RETURN(std::vector<schema::TableSchema> live,
                                LoadSourceSchemas({now->database}, keep));
        if (!live.empty() && !KeylessRefusal(live[0], policy)) return std::string();
        return "refused: " + key + (was.empty() ? "" : " stays " + was) + ": " + *refused;
      }
    }
    Status s = RecopyTable(table, key, op == "resync" ? "chsync resync --table" : "chsync resume");
    if (!s.ok()) {
      if (s.error().kind() == ErrorKind::kNetwork || clickhouse::IsRetryable(s.error())) return s.error();
      return "refused: " + key + " cannot be copied again (it is parked now): " + s.error().message();
    }
    return "done: " + key + (was.empty() ? "" : " (" + was + ")") + " is being copied again online from " +
           position + "; every other table keeps streaming";
  }
  return "refused: unknown request '" + op + "'";
}

}  // namespace chsync::pipe
