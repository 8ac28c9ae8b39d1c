#include "pipe/holds.h"

#include <fmt/format.h>

#include "common/log.h"
#include "pipe/clock.h"

namespace chsync::pipe {

std::optional<HeldTable> Holds::ParkFor(const schema::TableSchema& source, const std::string& key,
                                        const Error& error, const std::string& statement,
                                        const std::string& position) const {
  if (!ConcernsOneTable(error) ||
      policies_.For(source.database, source.name).on_table_error == SchemaPolicy::TableError::kStop) {
    return std::nullopt;
  }
  return HeldTable{key, "parked", error.message(), statement.substr(0, 1000), position, NowMs()};
}

void Holds::AttachParking(FlushBatchInfo& info, const std::string& key, const std::string& position,
                          const std::string& state_path) {
  const size_t dot = key.find('.');
  const SchemaPolicy policy = policies_.For(key.substr(0, dot), key.substr(dot + 1));
  if (policy.on_table_error == SchemaPolicy::TableError::kStop) return;
  ParkBoard* board = &board_;
  info.skip = [board, key] { return board->Parked(key); };
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
          "it again online",
          key, held.reason, state_path, key);
    }
    return true;
  };
}

bool Holds::RequestsDue(std::chrono::steady_clock::time_point now) {
  if (now - last_requests_ < std::chrono::seconds(1)) return false;
  last_requests_ = now;
  return true;
}

RequestPlan Holds::Plan(const std::string& op, const std::string& key, TableStates& tables) {
  RequestPlan plan;
  auto it = tables.find(key);
  if (it == tables.end()) {
    std::string known;
    for (const auto& [name, table] : tables) known += (known.empty() ? "" : ", ") + name;
    plan.answer = "refused: " + key + " is not a table this pipe replicates (it replicates " +
                  (known.empty() ? std::string("none") : known) + ")";
    return plan;
  }
  TableState& table = *it->second;
  if (op == "pause") {
    if (!table.held) {
      plan.action = RequestPlan::Action::kPause;
      plan.table = &table;
    } else if (table.held->state == "paused") {
      plan.answer = "done: " + key + " was paused already (since " + table.held->position + ")";
    } else {
      plan.answer = "refused: " + key + " is parked (" + table.held->reason + "); resume or resync it";
    }
    return plan;
  }
  if (op == "resume" && !table.held) {
    plan.answer = "refused: " + key + " is not paused or parked (it is " +
                  (table.rebuild ? "being copied" : "streaming") + ")";
    return plan;
  }
  if (op == "resume" || op == "resync") {
    plan.action = RequestPlan::Action::kRecopy;
    plan.table = &table;
    plan.reason = op == "resync" ? "chsync resync --table" : "chsync resume";
    plan.was = table.held ? table.held->state : "";
    return plan;
  }
  plan.answer = "refused: unknown request '" + op + "'";
  return plan;
}

std::string Holds::Paused(const std::string& key, const std::string& position) {
  return "done: " + key + " paused at " + position +
         "; its ClickHouse table keeps its rows, and `chsync resume` copies it again online";
}

std::string Holds::Recopying(const std::string& key, const std::string& was, const std::string& position) {
  return "done: " + key + (was.empty() ? "" : " (" + was + ")") + " is being copied again online from " +
         position + "; every other table keeps streaming";
}

}  // namespace chsync::pipe
