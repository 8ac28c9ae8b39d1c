#include "pipe/rebuilds.h"

#include <chrono>
#include <mutex>
#include <thread>
#include <utility>

namespace chsync::pipe {

void Rebuilds::Launch(Rebuilder& rebuild, Copy copy) {
  Rebuilder* r = &rebuild;
  {
    std::lock_guard<std::mutex> lock(turns_mutex_);
    waiting_.push_back(r);
  }
  rebuild.thread = std::thread([this, r, copy = std::move(copy)] {
    {
      std::unique_lock<std::mutex> lock(turns_mutex_);
      while ((running_ >= limit_ || waiting_.front() != r) && !r->stop)
        turns_.wait_for(lock, std::chrono::milliseconds(100));
      std::erase(waiting_, r);
      if (!r->stop) ++running_;
    }
    turns_.notify_all();  // the next in line may go (or is first now)
    if (r->stop) {
      r->result = Error(ErrorKind::kInternal, "the copy was stopped before its turn came");
    } else {
      auto on_chunk = [r](const TableSnapshot& progress) -> Status {
        std::lock_guard<std::mutex> lock(r->mutex);
        r->state.progress = progress;
        return Status::Ok();
      };
      r->result = copy(on_chunk, r->stop);
      {
        std::lock_guard<std::mutex> lock(turns_mutex_);
        --running_;
      }
      turns_.notify_all();
    }
    r->finished = true;
    ended_.fetch_add(1, std::memory_order_release);
  });
}

bool Rebuilds::AnyFinished(const TableStates& tables) const {
  // A copy sets `finished` before it bumps the count: a walk after the count moved sees it.
  const uint64_t ended = ended_.load(std::memory_order_acquire);
  if (ended == seen_) return false;
  for (const auto& [key, table] : tables) {
    if (table->rebuild && table->rebuild->finished) return true;
  }
  seen_ = ended;
  return false;
}

void Rebuilds::StopAll(TableStates& tables) {
  for (auto& [key, table] : tables) {
    if (table->rebuild) table->rebuild->Stop();
  }
}

}  // namespace chsync::pipe
