#include "pipe/flusher.h"

#include <chrono>
#include <utility>

#include "metrics/pipe_metrics.h"

namespace chsync::pipe {

Flusher::Flusher(std::vector<std::unique_ptr<clickhouse::Connection>> lanes, size_t max_queued,
                 size_t max_queued_bytes)
    : max_queued_(max_queued), max_queued_bytes_(max_queued_bytes) {
  for (auto& connection : lanes) {
    lanes_.push_back(std::make_unique<Lane>());
    lanes_.back()->connection = std::move(connection);
  }
  for (auto& lane : lanes_) lane->thread = std::thread([this, l = lane.get()] { Loop(*l); });
}

Flusher::Flusher(std::unique_ptr<clickhouse::Connection> connection, size_t max_queued,
                 size_t max_queued_bytes)
    : Flusher(
          [&] {
            std::vector<std::unique_ptr<clickhouse::Connection>> one;
            one.push_back(std::move(connection));
            return one;
          }(),
          max_queued, max_queued_bytes) {}

Flusher::~Flusher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    quit_ = true;
  }
  changed_.notify_all();
  for (auto& lane : lanes_) lane->thread.join();
}

Status Flusher::Insert(std::string prefix, std::string data, size_t lane_index, BatchInfo info) {
  Lane& lane = *lanes_.at(lane_index);
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] {
    return error_.has_value() || (lane.queue.size() < max_queued_ &&
                                  (queued_bytes_ == 0 || queued_bytes_ + data.size() <= max_queued_bytes_));
  });
  if (error_) return *error_;
  queued_bytes_ += data.size();
  lane.queue.push_back({std::move(prefix), std::move(data), nullptr, std::move(info)});
  changed_.notify_all();
  return Status::Ok();
}

Status Flusher::After(std::function<Status()> task) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (error_) return *error_;
  auto barrier = std::make_shared<Barrier>();
  barrier->task = std::move(task);
  barrier->waiting = lanes_.size();
  barrier->order = barriers_queued_++;
  for (auto& lane : lanes_) lane->queue.push_back({"", "", barrier, {}});
  changed_.notify_all();
  return Status::Ok();
}

bool Flusher::Idle() const {
  for (const auto& lane : lanes_) {
    if (!lane->queue.empty() || lane->busy) return false;
  }
  return true;
}

Status Flusher::Drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return error_.has_value() || Idle(); });
  if (error_) return *error_;
  return Status::Ok();
}

std::string Flusher::Describe() const {
  if (lanes_.size() == 1) return lanes_[0]->connection->Describe();
  std::string out;
  for (size_t i = 1; i < lanes_.size(); ++i) {
    out += (i == 1 ? "shard " : ", shard ") + std::to_string(i) + " " + lanes_[i]->connection->Describe();
  }
  return out;
}

void Flusher::Loop(Lane& lane) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return quit_ || (!lane.queue.empty() && !error_); });
    if (quit_) return;
    Job job = std::move(lane.queue.front());
    lane.queue.pop_front();
    lane.busy = true;
    changed_.notify_all();
    Status s = Status::Ok();
    size_t sent = 0;
    if (job.barrier) {
      // The lane that reaches a barrier last runs its task, after the tasks queued before it.
      if (--job.barrier->waiting == 0) {
        changed_.wait(lock,
                      [&] { return quit_ || error_.has_value() || barriers_run_ == job.barrier->order; });
        if (!quit_ && !error_) {
          lock.unlock();
          s = job.barrier->task();
          lock.lock();
        }
        ++barriers_run_;
      }
    } else {
      lock.unlock();
      const auto start = std::chrono::steady_clock::now();
      const bool skipped = job.info.skip && job.info.skip();
      if (!skipped && s.ok()) s = lane.connection->Insert(job.prefix, job.data);
      sent = job.data.size();
      if (!s.ok() && job.info.rejected && job.info.rejected(s.error())) {
        s = Status::Ok();
      } else if (s.ok() && sent != 0 && !skipped) {
        Metrics().ObserveInsert(
            job.info.rows, sent,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        if (job.info.acknowledged) job.info.acknowledged();
      }
      job = Job{};  // the batch's memory goes before the next one is taken
      lock.lock();
    }
    lane.busy = false;
    queued_bytes_ -= sent;
    if (!s.ok() && !error_) {
      error_ = s.error();
      for (auto& l : lanes_) l->queue.clear();
      queued_bytes_ = 0;
    }
    changed_.notify_all();
    if (quit_) return;
  }
}

}  // namespace chsync::pipe
