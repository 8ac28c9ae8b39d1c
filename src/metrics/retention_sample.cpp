#include "metrics/retention_sample.h"

#include <algorithm>
#include <utility>

#include "common/log.h"
#include "metrics/pipe_metrics.h"

namespace chsync::pipe {

RetentionSampler::RetentionSampler(mysql::ConnectOptions source, std::chrono::milliseconds every)
    : every_(every), source_(std::move(source)) {
  thread_ = std::thread([this] { Loop(); });
}

RetentionSampler::~RetentionSampler() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    quit_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void RetentionSampler::SetSource(const mysql::ConnectOptions& source) {
  std::lock_guard<std::mutex> lock(mutex_);
  source_ = source;
  ++source_generation_;
  estimator_ = mysql::RetentionEstimator();
  have_reading_ = false;
  wake_.notify_all();
}

void RetentionSampler::SetCheckpoint(const std::string& file, uint64_t offset) {
  std::lock_guard<std::mutex> lock(mutex_);
  checkpoint_file_ = file;
  checkpoint_offset_ = offset;
  if (have_reading_) Publish();
}

void RetentionSampler::Publish() {
  if (checkpoint_file_.empty()) return;
  mysql::RetentionHeadroom h = estimator_.For(checkpoint_file_, checkpoint_offset_);
  PipeMetrics& m = Metrics();
  m.binlog_bytes_behind.With().Set(static_cast<double>(h.bytes_behind));
  m.retention_headroom_bytes.With().Set(h.headroom_bytes);
  m.retention_headroom_seconds.With().Set(h.headroom_seconds);
  m.binlog_write_rate.With().Set(h.write_rate_bytes_per_s);
}

void RetentionSampler::Loop() {
  std::unique_ptr<mysql::Connection> conn;
  uint64_t conn_generation = 0;
  bool said_failure = false;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!quit_) {
    // Short timeouts: the thread must stop soon after the pipe does.
    mysql::ConnectOptions options = source_;
    options.connect_timeout_s = std::min(options.connect_timeout_s, 5U);
    options.read_timeout_s = std::min(options.read_timeout_s, 10U);
    options.write_timeout_s = std::min(options.write_timeout_s, 10U);
    const uint64_t generation = source_generation_;
    lock.unlock();
    if (conn != nullptr && conn_generation != generation) conn.reset();
    Result<mysql::RetentionReading> reading = Error(ErrorKind::kInternal, "no reading");
    if (conn == nullptr) {
      auto opened = mysql::Connection::Open(options);
      if (opened.ok()) {
        conn = std::move(*opened);
        conn_generation = generation;
      } else {
        reading = std::move(opened).error();
      }
    }
    if (conn != nullptr) reading = mysql::ReadRetention(*conn);
    lock.lock();
    if (reading.ok()) {
      said_failure = false;
      if (generation == source_generation_) {
        estimator_.Add(*reading);
        have_reading_ = true;
        Publish();
      }
    } else {
      conn.reset();
      if (!said_failure) {
        log::Debug("binlog retention of {} not read: {}", options.Address(), reading.error().message());
        said_failure = true;
      }
    }
    wake_.wait_for(lock, every_, [&] { return quit_ || generation != source_generation_; });
  }
  lock.unlock();
  conn.reset();
}

}  // namespace chsync::pipe
