// What the pipe does for parked and paused tables and for the requests of `chsync
// pause|resume|resync --table` (docs/table-control.md); Holds (holds.h) decides which failures park
// a table and what a request asks, and keeps the park board.
//
// A request is carried out once: its id enters checkpoint_.requests_done in the checkpoint that
// also holds its effect, and its file is removed (with the outcome written beside it) only after
// that checkpoint is saved. A crash before: the request is carried out again from the saved state.
// After: its id is in the checkpoint, and it is only completed.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "clickhouse/server_error.h"
#include "common/log.h"
#include "pipe/pipe.h"
#include "state/control.h"

namespace chsync::pipe {

Status Pipe::ParkTable(TableState& table, const std::string& key, const Error& error,
                       const std::string& statement, const std::string& position) {
  std::optional<HeldTable> held = holds_.ParkFor(table.dest.source, key, error, statement, position);
  if (!held) return error;
  return HoldTable(table, std::move(*held), /*announce=*/true);
}

Status Pipe::HoldTable(TableState& table, HeldTable held, bool announce) {
  if (table.rebuild) CHSYNC_RETURN_IF_ERROR(CancelRebuild(table));
  applier_.DropPending(table);
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
  history_.Record(held.table,
                  set_.PlaceFor(table.dest.source.database, table.dest.source.name).target.database,
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
  const std::string position = applier_.committed_at();
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
  holds_.Unparked(key);
  PublishTables();
  return Status::Ok();
}

Status Pipe::PollControl() {
  if (!applier_.between_transactions()) return Status::Ok();
  bool took_over = false;
  for (HeldTable& held : holds_.TakeParkedByFlusher()) {
    auto it = set_.tables().find(held.table);
    if (it == set_.tables().end() || it->second->held) continue;
    CHSYNC_RETURN_IF_ERROR(HoldTable(*it->second, std::move(held), /*announce=*/false));
    took_over = true;
  }
  // The stream's own checkpoint records the park from now on: saved at once, not at the next
  // transaction (on a quiet source that may be long).
  if (took_over) CHSYNC_RETURN_IF_ERROR(applier_.FlushAndCheckpoint());
  if (request_.reload != nullptr && request_.reload->exchange(false))
    CHSYNC_RETURN_IF_ERROR(ReloadSelection());
  if (selection_due_) {
    CHSYNC_ASSIGN_OR_RETURN(std::vector<std::string> lines, FollowSelection());
    for (const std::string& line : lines)
      log::Info("table selection {}: {}", set_.selection().Describe(), line);
    checkpoint_.selection = set_.selection().Describe();
    selection_due_ = false;
    CHSYNC_RETURN_IF_ERROR(applier_.FlushAndCheckpoint());
  }
  if (!holds_.RequestsDue(CoarseSteadyNow())) return Status::Ok();
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
  return applier_.FlushAndCheckpoint();
}

Status Pipe::BetweenTransactions() {
  CHSYNC_RETURN_IF_ERROR(PollControl());
  return rebuilds_.AnyFinished(set_.tables()) ? PollRebuilds(false) : Status::Ok();
}

Result<std::string> Pipe::CarryOut(const std::string& op, const std::string& key) {
  if (op == "tables-add" || op == "tables-remove") {
    auto changed = set_.selection().With(op == "tables-add" ? "add" : "remove", key, NowMs());
    if (!changed.ok()) return "refused: " + changed.error().message();
    checkpoint_.selection_changes = changed->changes();
    set_.Select(std::move(changed).value());
    CHSYNC_ASSIGN_OR_RETURN(std::vector<std::string> lines, FollowSelection());
    checkpoint_.selection = set_.selection().Describe();
    return fmt::format("done: the selection is now {}; {}", set_.selection().Describe(),
                       fmt::join(lines, "; "));
  }
  RequestPlan plan = Holds::Plan(op, key, set_.tables());
  if (plan.action == RequestPlan::Action::kAnswer) return plan.answer;
  TableState& table = *plan.table;
  const std::string position = applier_.committed_at();
  if (plan.action == RequestPlan::Action::kPause) {
    CHSYNC_RETURN_IF_ERROR(HoldTable(table, {key, "paused", "chsync pause", "", position, NowMs()}, true));
    return Holds::Paused(key, position);
  }
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
                              source_.LoadSchemas({now->database}, keep));
      if (!live.empty() && !KeylessRefusal(live[0], policy)) return std::string();
      return "refused: " + key + (plan.was.empty() ? "" : " stays " + plan.was) + ": " + *refused;
    }
  }
  Status s = RecopyTable(table, key, plan.reason);
  if (!s.ok()) {
    if (s.error().kind() == ErrorKind::kNetwork || clickhouse::IsRetryable(s.error())) return s.error();
    return "refused: " + key + " cannot be copied again (it is parked now): " + s.error().message();
  }
  return Holds::Recopying(key, plan.was, position);
}

}  // namespace chsync::pipe
