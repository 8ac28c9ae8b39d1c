#include "pipe/flusher.h"

#include <utility>

namespace chsync::pipe {

Flusher::Flusher(std::unique_ptr<clickhouse::Connection> connection, size_t max_queued,
                 size_t max_queued_bytes)
    : connection_(std::move(connection)),
      max_queued_(max_queued),
      max_queued_bytes_(max_queued_bytes),
      thread_([this] { Loop(); }) {}

Flusher::~Flusher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    quit_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

Status Flusher::Insert(std::string prefix, std::string data) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] {
    return error_.has_value() || (queue_.size() < max_queued_ &&
                                  (queued_bytes_ == 0 || queued_bytes_ + data.size() <= max_queued_bytes_));
  });
  if (error_) return *error_;
  queued_bytes_ += data.size();
  queue_.push_back({std::move(prefix), std::move(data), nullptr});
  changed_.notify_all();
  return Status::Ok();
}

Status Flusher::After(std::function<Status()> task) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (error_) return *error_;
  queue_.push_back({"", "", std::move(task)});
  changed_.notify_all();
  return Status::Ok();
}

Status Flusher::Drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return error_.has_value() || (queue_.empty() && !busy_); });
  if (error_) return *error_;
  return Status::Ok();
}

void Flusher::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return quit_ || (!queue_.empty() && !error_); });
    if (quit_) return;
    Job job = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    changed_.notify_all();
    lock.unlock();
    Status s = job.task ? job.task() : connection_->Insert(job.prefix, job.data);
    const size_t sent = job.data.size();
    job = Job{};  // the batch's memory goes before the next one is taken
    lock.lock();
    busy_ = false;
    queued_bytes_ -= sent;
    if (!s.ok() && !error_) {
      error_ = s.error();
      queue_.clear();
      queued_bytes_ = 0;
    }
    changed_.notify_all();
  }
}

}  // namespace chsync::pipe
