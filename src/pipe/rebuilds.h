#pragma once

// The copies of online rebuilds (rebuild.cpp decides when a table is copied again, and swaps the
// copy in): each runs on a thread of its own beside the stream, writes its progress where the
// stream's checkpoints read it, and says when it ended.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>

#include "common/result.h"
#include "pipe/live_tables.h"
#include "state/checkpoint.h"

namespace chsync::pipe {

class Rebuilds {
 public:
  /// One table's copy: reports each chunk's progress through `on_chunk`, gives up once `stop` is
  /// set, and fails when it ended unfinished without being stopped.
  using Copy = std::function<Status(const std::function<Status(const TableSnapshot&)>& on_chunk,
                                    const std::atomic<bool>& stop)>;

  /// At most this many copies run at once (the pipe's snapshot.parallelism); the others wait for
  /// a turn. Set before the first Launch.
  void SetParallelism(unsigned copies) { limit_ = copies == 0 ? 1 : copies; }
  /// Starts `copy` on a thread of `rebuild` once fewer than the limit run and the copies launched
  /// before it have had their turn (in the order of the Launch calls): its progress goes to
  /// rebuild.state.progress (under rebuild.mutex), its outcome to rebuild.result, then
  /// rebuild.finished is set. Stopped before its turn, it ends with an error and copies nothing.
  void Launch(Rebuilder& rebuild, Copy copy);
  /// Whether a copy of `tables` finished. Asked once per transaction: it walks the tables only when
  /// a copy ended since it last found none.
  bool AnyFinished(const TableStates& tables) const;
  /// Stops every copy of `tables` (each finishes its current chunk) and waits for their threads.
  static void StopAll(TableStates& tables);

 private:
  /// Bumped by a copy's thread when it ended.
  std::atomic<uint64_t> ended_{0};
  /// The copies running now, and their limit.
  std::mutex turns_mutex_;
  std::condition_variable turns_;
  unsigned running_ = 0;
  unsigned limit_ = 4;
  /// The copies waiting for a turn, in the order they were launched.
  std::deque<const Rebuilder*> waiting_;
  mutable uint64_t seen_ = 0;
};

}  // namespace chsync::pipe
