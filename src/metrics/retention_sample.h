#pragma once

// Binlog retention headroom of a streaming pipe (mysql/binlog_retention.h), kept in the pipe's
// metrics: chsync_binlog_bytes_behind, chsync_binlog_retention_headroom_{bytes,seconds} and
// chsync_binlog_write_rate_bytes_per_second.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "mysql/binlog_retention.h"
#include "mysql/connection.h"

namespace chsync::pipe {

/// Reads the source's binlog list on a thread of its own, on a connection of its own (opened with
/// short timeouts and kept between readings), right away and then every `every`; never blocks the
/// caller for longer than a mutex. A failed reading is logged once at debug level (until one
/// succeeds again), drops the connection, and leaves the gauges as they were. Thread-safe.
class RetentionSampler {
 public:
  explicit RetentionSampler(mysql::ConnectOptions source,
                            std::chrono::milliseconds every = std::chrono::seconds(15));
  /// Stops the thread (a reading in progress finishes first: at most its timeouts).
  ~RetentionSampler();
  RetentionSampler(const RetentionSampler&) = delete;
  RetentionSampler& operator=(const RetentionSampler&) = delete;

  /// The pipe reads another server now: readings start over there.
  void SetSource(const mysql::ConnectOptions& source);
  /// The checkpoint moved: the gauges are computed again from the last reading.
  void SetCheckpoint(const std::string& file, uint64_t offset);

 private:
  void Loop();
  /// REQUIRES: mutex_ held.
  void Publish();

  const std::chrono::milliseconds every_;
  std::mutex mutex_;
  std::condition_variable wake_;
  mysql::ConnectOptions source_;
  uint64_t source_generation_ = 0;
  mysql::RetentionEstimator estimator_;
  bool have_reading_ = false;
  std::string checkpoint_file_;
  uint64_t checkpoint_offset_ = 0;
  bool quit_ = false;
  std::thread thread_;
};

}  // namespace chsync::pipe
