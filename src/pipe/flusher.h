#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "clickhouse/connection.h"
#include "common/result.h"

namespace chsync::pipe {

/// What the metrics know of a batch: its rows (chsync_batch_rows), and what to run once ClickHouse
/// acknowledged it (on the flusher's thread; counting its row changes).
struct FlushBatchInfo {
  uint64_t rows = 0;
  std::function<void()> acknowledged;
  /// Checked on the flusher's thread before the INSERT: true drops the batch unsent (its table was
  /// parked meanwhile).
  std::function<bool()> skip;
  /// Called on the flusher's thread when ClickHouse refused the INSERT for good: true when the
  /// failure was absorbed (its table parked); the flusher then goes on with the next batch.
  std::function<bool(const Error&)> rejected;
};

/// Sends the stream's batches to ClickHouse on threads of its own, so that decoding the next rows
/// overlaps the INSERTs. Each lane is one connection with one thread, sending its batches in the
/// order they were queued: lane 0 is the destination as a whole, lanes 1…N the shards of a
/// cluster when chsync routes rows to them itself (their INSERTs run at the same time). A task
/// queued with After() runs once every batch queued before it, on every lane, was acknowledged
/// (how a checkpoint waits for its rows); tasks run one at a time, in the order they were queued.
/// The first failure is kept: later calls return it and nothing more is sent.
class Flusher {
 public:
  /// At most `max_queued` batches per lane holding at most `max_queued_bytes` together may wait (a
  /// single larger batch may, alone); Insert blocks beyond that (bounds memory).
  Flusher(std::vector<std::unique_ptr<clickhouse::Connection>> lanes, size_t max_queued,
          size_t max_queued_bytes);
  Flusher(std::unique_ptr<clickhouse::Connection> connection, size_t max_queued, size_t max_queued_bytes);
  ~Flusher();
  Flusher(const Flusher&) = delete;
  Flusher& operator=(const Flusher&) = delete;

  using BatchInfo = FlushBatchInfo;

  size_t lanes() const { return lanes_.size(); }
  /// Queues one INSERT on `lane` (`prefix` as TableWriter::insert_prefix(), `data` RowBinary rows).
  /// Every acknowledged INSERT is observed in the pipe's metrics (rows, bytes, duration).
  Status Insert(std::string prefix, std::string data, size_t lane = 0, BatchInfo info = {});
  /// Queues a task to run after everything queued so far succeeded.
  Status After(std::function<Status()> task);
  /// Waits until everything queued ran; returns the first failure, if any.
  Status Drain();
  /// The servers the batches go to now (Connection::Describe of each lane), from any thread.
  std::string Describe() const;

 private:
  struct Barrier {
    std::function<Status()> task;
    size_t waiting = 0;  ///< lanes that have not reached it yet
    uint64_t order = 0;
  };
  struct Job {
    std::string prefix;
    std::string data;
    std::shared_ptr<Barrier> barrier;
    BatchInfo info;
  };
  struct Lane {
    std::unique_ptr<clickhouse::Connection> connection;
    std::deque<Job> queue;
    bool busy = false;
    std::thread thread;
  };
  void Loop(Lane& lane);
  bool Idle() const;

  std::vector<std::unique_ptr<Lane>> lanes_;
  size_t max_queued_;
  size_t max_queued_bytes_;
  size_t queued_bytes_ = 0;
  uint64_t barriers_queued_ = 0;
  uint64_t barriers_run_ = 0;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool quit_ = false;
  std::optional<Error> error_;
};

}  // namespace chsync::pipe
