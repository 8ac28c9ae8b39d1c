#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "clickhouse/connection.h"
#include "common/result.h"

namespace chsync::pipe {

/// Sends the stream's batches to ClickHouse on a thread of its own, in the order they were
/// queued, so that decoding the next rows overlaps the previous INSERT. A task queued with After()
/// runs once every batch queued before it was acknowledged (how a checkpoint waits for its rows).
/// The first failure is kept: later calls return it and nothing more is sent.
class Flusher {
 public:
  /// At most `max_queued` batches holding at most `max_queued_bytes` together may wait (a single
  /// larger batch may, alone); Insert blocks beyond that (bounds memory).
  Flusher(std::unique_ptr<clickhouse::Connection> connection, size_t max_queued, size_t max_queued_bytes);
  ~Flusher();
  Flusher(const Flusher&) = delete;
  Flusher& operator=(const Flusher&) = delete;

  /// Queues one INSERT (`prefix` as TableWriter::insert_prefix(), `data` RowBinary rows).
  Status Insert(std::string prefix, std::string data);
  /// Queues a task to run after everything queued so far succeeded.
  Status After(std::function<Status()> task);
  /// Waits until everything queued ran; returns the first failure, if any.
  Status Drain();
  /// The server the batches go to now (Connection::Describe), from any thread.
  std::string Describe() const { return connection_->Describe(); }

 private:
  struct Job {
    std::string prefix;
    std::string data;
    std::function<Status()> task;
  };
  void Loop();

  std::unique_ptr<clickhouse::Connection> connection_;
  size_t max_queued_;
  size_t max_queued_bytes_;
  size_t queued_bytes_ = 0;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Job> queue_;
  bool busy_ = false;
  bool quit_ = false;
  std::optional<Error> error_;
  std::thread thread_;
};

}  // namespace chsync::pipe
