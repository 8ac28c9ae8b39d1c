#pragma once

// The owner of "a held table's rows stay owed until it is copied again" (docs/table-control.md):
// which failures park a table, the board on which the flusher's threads park a table whose INSERT
// ClickHouse refused, how often the requests of `chsync pause|resume|resync --table` are read, and
// what each request asks of the pipe.
//
// A held table's binlog changes are not applied; its ClickHouse table keeps the rows it had. It
// comes back by being copied again online (an online rebuild), never by replaying the binlog from
// where it stopped: the copy is exact whatever the table went through meanwhile, needs nothing
// kept, and costs the table's size once. A park stays on the board, and so in every checkpoint
// saved after it (Checkpointer merges the board), until the copy that ends it has started
// (Unparked).
//
// The effects (dropping a table's unsent rows, starting a copy, recording the change) are the
// pipe's: Holds decides, the pipe carries out.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "config/config.h"
#include "pipe/flusher.h"
#include "pipe/live_tables.h"
#include "pipe/table_state.h"
#include "schema/table_schema.h"

namespace chsync::pipe {

/// What a request of `chsync pause|resume|resync --table` asks of the pipe, decided from the
/// tables' states alone.
struct RequestPlan {
  enum class Action {
    kAnswer,  ///< nothing to do: `answer` ("done: …" or "refused: …") is the outcome
    kPause,   ///< hold `table` as paused
    kRecopy,  ///< copy `table` again online (`reason`), unparking or unpausing it (`was`)
  };
  Action action = Action::kAnswer;
  std::string answer;
  TableState* table = nullptr;
  std::string reason;
  std::string was;  ///< "parked", "paused" or "" (streaming or being copied)
};

class Holds {
 public:
  explicit Holds(const PolicySet& policies) : policies_(policies) {}

  /// The board the flusher's threads park tables on (the checkpointer reads it at every save).
  ParkBoard& board() { return board_; }
  const ParkBoard& board() const { return board_; }

  /// A failure of `source`'s statement or rows (table `key`, at `position`): the park to hold it
  /// with, when the failure concerns that table alone (ConcernsOneTable) and its on_table_error is
  /// park; nullopt when the failure must stop the pipe.
  std::optional<HeldTable> ParkFor(const schema::TableSchema& source, const std::string& key,
                                   const Error& error, const std::string& statement,
                                   const std::string& position) const;

  /// Lets the flusher park `key` when ClickHouse refuses the INSERT of `info` for good (and drop
  /// its later batches unsent): nothing with on_table_error=stop. `position`: the changes' last
  /// position, named in the park; `state_path`: named in the message.
  void AttachParking(FlushBatchInfo& info, const std::string& key, const std::string& position,
                     const std::string& state_path);

  /// The tables the flusher parked since the last call, for the stream to take over.
  std::vector<HeldTable> TakeParkedByFlusher() { return board_.TakeNew(); }
  /// `key` is being copied again (or is gone): its rows are no longer owed.
  void Unparked(const std::string& key) { board_.Forget(key); }
  /// The stream reads again from the saved checkpoint, which holds every park the board had.
  void Clear() { board_.Clear(); }

  /// True at most once a second: time to read the requests waiting in the state directory.
  bool RequestsDue(std::chrono::steady_clock::time_point now);

  /// What request `op` ("pause", "resume", "resync") of table `key` asks, from `tables`' states.
  /// kRecopy does not say whether the table can be copied (its key, the source): the pipe checks.
  static RequestPlan Plan(const std::string& op, const std::string& key, TableStates& tables);
  /// The outcome of a pause of `key` made at `position`.
  static std::string Paused(const std::string& key, const std::string& position);
  /// The outcome of a copy of `key` (which `was` parked, paused or "") started at `position`.
  static std::string Recopying(const std::string& key, const std::string& was, const std::string& position);

 private:
  const PolicySet& policies_;
  ParkBoard board_;
  std::chrono::steady_clock::time_point last_requests_{};
};

}  // namespace chsync::pipe
