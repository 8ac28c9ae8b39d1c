#pragma once

// The one place the pipe's checkpoint is written: the owner of "nothing past the checkpoint is
// lost" (docs/delivery.md). The state directory is its own; every save goes through it:
//
// - At start, on a move to another server and after a copy, a checkpoint is saved at once (Save,
//   Record): nothing was sent past it.
// - While streaming, a checkpoint is made by the stream and saved by the flusher's thread only once
//   ClickHouse acknowledged every row queued before it (Deferred). Whatever it makes obsolete goes
//   with it and only after it is durable: prepared-XA rows files whose transaction ended, and the
//   requests it records as carried out (their outcome files written, their request files removed).
//   A crash before the save leaves the previous checkpoint, the rows files and the requests, so the
//   transactions and the requests are read and carried out again.
// - Tables the flusher parked (the park board) go into every checkpoint saved after the park,
//   whether or not the stream had taken them over when it made that checkpoint: their batches
//   before it were refused, so no checkpoint may come without them.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "metrics/retention_sample.h"
#include "pipe/table_state.h"
#include "state/checkpoint.h"
#include "state/control.h"
#include "state/run_status.h"
#include "state/state_dir.h"

namespace chsync::pipe {

class Checkpointer {
 public:
  /// `board`: the tables the flusher parks; it must outlive every save handed out by Deferred.
  explicit Checkpointer(const ParkBoard& board) : board_(board) {}

  /// Opens (and locks) the state directory `dir` (StateDir::Open).
  Status Open(const std::string& dir);
  bool opened() const { return state_ != nullptr; }
  const std::string& path() const { return state_->path(); }
  /// The saved checkpoint, or nullopt when none was ever saved.
  Result<std::optional<Checkpoint>> Load() const { return state_->Load(); }

  /// Saves `checkpoint` now: nothing was sent past it.
  Status Save(const Checkpoint& checkpoint) { return state_->Save(checkpoint); }
  /// Saves `checkpoint` now and says so (Report).
  Status Record(const Checkpoint& checkpoint, RunStatus status, bool mariadb, RetentionSampler* retention);

  /// Prepared-XA rows file `name` is no longer needed once the next checkpoint is saved.
  void Obsolete(std::string name) { obsolete_xa_files_.push_back(std::move(name)); }
  /// The requests of `chsync pause|resume|resync --table` waiting in the state directory that are
  /// still to be carried out, oldest first. One whose id `done` (the checkpoint's requests_done)
  /// holds was carried out already: before a restart (it is answered now, and not carried out
  /// again), or by this process (the save of the checkpoint that holds it answers it: never from
  /// memory before that save).
  Result<std::vector<ControlRequest>> Waiting(const std::vector<std::string>& done);
  /// Request `id` was carried out: it enters `done` (the checkpoint's requests_done, its oldest
  /// forgotten beyond kMaxRequestsDone), and `outcome` is written once the next checkpoint is saved.
  void Carried(std::string id, std::string outcome, std::vector<std::string>& done);
  /// Outcomes wait for the next checkpoint.
  bool outcomes_waiting() const { return !request_outcomes_.empty(); }
  /// The stream reads again from the saved checkpoint: the requests it holds are done; the others,
  /// whose effect is lost with the memory, are carried out again, and no answer noted for them is
  /// written. The rows files it names are still needed.
  void ForgetCarried() {
    carried_out_here_.clear();
    request_outcomes_.clear();
  }
  void ForgetObsolete() { obsolete_xa_files_.clear(); }

  /// The save of `checkpoint` (made by the stream at `status`), for the flusher to run once every row
  /// queued before it is in ClickHouse: merges the parked tables, saves (Record), then removes the
  /// obsolete rows files and completes the requests noted since the last one, which it takes.
  std::function<Status()> Deferred(Checkpoint checkpoint, RunStatus status, bool mariadb,
                                   RetentionSampler* retention);
  /// Saves run by the flusher so far: progress, for the retry loop.
  uint64_t saved() const { return saved_.load(); }

 private:
  /// Says that `checkpoint` was saved: metrics, `retention`'s headroom (may be null), `status`
  /// (published and written for `chsync status`). `mariadb`: the source's flavor, for the metrics.
  void Report(const Checkpoint& checkpoint, RunStatus status, bool mariadb,
              RetentionSampler* retention) const;

  const ParkBoard& board_;
  std::unique_ptr<StateDir> state_;
  /// Outcomes of requests carried out, written once the checkpoint recording them is saved.
  std::vector<std::pair<std::string, std::string>> request_outcomes_;
  /// Requests this process carried out since it last loaded the checkpoint: the save of the
  /// checkpoint that holds each answers it, never Waiting from memory.
  std::set<std::string> carried_out_here_;
  /// Prepared-XA rows files whose transaction ended: removed once a checkpoint without them is saved.
  std::vector<std::string> obsolete_xa_files_;
  std::atomic<uint64_t> saved_{0};
};

}  // namespace chsync::pipe
