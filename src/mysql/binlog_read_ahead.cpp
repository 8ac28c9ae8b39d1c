#include "mysql/binlog_read_ahead.h"

#include <mariadb/mysql.h>
#include <sys/socket.h>

#include <chrono>
#include <utility>

namespace chsync::mysql {
namespace {

constexpr size_t kWakeBytes = size_t{64} << 10;

}  // namespace

void BinlogReadAhead::Batch::Clear(size_t keep_bytes) {
  if (bytes.capacity() > keep_bytes) {
    std::string().swap(bytes);  // after a large event: its memory goes back
  } else {
    bytes.clear();
  }
  entries.clear();
  files.clear();
  error.reset();
}

uint32_t BinlogReadAhead::Batch::File(std::string_view name) {
  if (files.empty() || files.back() != name) files.emplace_back(name);
  return static_cast<uint32_t>(files.size() - 1);
}

BinlogReadAhead::BinlogReadAhead(std::unique_ptr<BinlogStream> stream, bool ahead, size_t max_bytes)
    : stream_(std::move(stream)),
      ahead_(ahead),
      max_bytes_(max_bytes),
      checksum_(stream_->checksum()),
      socket_(stream_->socket()),
      next_(stream_->next_coordinate()) {
  if (ahead_) thread_ = std::thread([this] { Read(); });
}

BinlogReadAhead::~BinlogReadAhead() {
  if (!ahead_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  room_.notify_all();
  // A read that waits for the server returns at once (with an error nobody reads).
  if (socket_ >= 0) ::shutdown(socket_, SHUT_RDWR);
  thread_.join();
}

void BinlogReadAhead::Read() {
  while (true) {
    Result<StreamEvent> ev = stream_->Next();
    std::unique_lock<std::mutex> lock(mutex_);
    if (stop_) return;
    if (!ev.ok()) {
      filling_.error = std::move(ev.error());
      failed_ = true;
      if (waiting_) ready_.notify_one();
      return;
    }
    Entry e;
    e.offset = filling_.bytes.size();
    e.size = ev->bytes.size();
    e.file = filling_.File(ev->at.file);
    e.position = ev->at.position;
    e.next_file = filling_.File(stream_->next_coordinate().file);
    e.next_position = stream_->next_coordinate().position;
    e.type = ev->type;
    e.artificial = ev->artificial;
    filling_.bytes.append(ev->bytes);
    filling_.entries.push_back(e);
    // Next waits: it is woken once a batch is worth it, or before a read that may wait for the
    // server (not for every event, which would cost a wake-up each).
    if (waiting_ && (filling_.bytes.size() >= kWakeBytes || !stream_->buffered())) ready_.notify_one();
    if (e.size > max_bytes_) {
      // A large event is not read past until it is decoded (Next asks for the one after it), so
      // that no more than two copies of one exist: Connector/C's and ours.
      room_.wait(lock, [this] { return stop_ || (filling_.entries.empty() && waiting_); });
    } else {
      room_.wait(lock, [this] { return stop_ || filling_.bytes.size() < max_bytes_; });
    }
    if (stop_) return;
  }
}

Result<StreamEvent> BinlogReadAhead::Next() {
  if (!ahead_) return stream_->Next();
  if (next_entry_ == reading_.entries.size()) {
    if (reading_.error) return *reading_.error;  // the stream ended: it stays so
    {
      std::unique_lock<std::mutex> lock(mutex_);
      waiting_ = true;
      room_.notify_one();  // the reading thread may wait for this after a large event
      // Woken by the reading thread (see Read), or after 2 ms at the latest: whether Connector/C
      // holds more of the stream is a guess, and events must not wait on a wrong one.
      while (!ready_.wait_for(lock, std::chrono::milliseconds(2),
                              [this] { return !filling_.entries.empty() || filling_.error.has_value(); })) {
      }
      waiting_ = false;
      std::swap(reading_, filling_);
      filling_.Clear(2 * max_bytes_);
    }
    room_.notify_one();
    next_entry_ = 0;
    if (reading_.entries.empty()) return *reading_.error;
  }
  const Entry& e = reading_.entries[next_entry_++];
  StreamEvent out;
  out.bytes = std::string_view(reading_.bytes).substr(e.offset, e.size);
  out.at = {reading_.files[e.file], e.position};
  out.type = e.type;
  out.artificial = e.artificial;
  next_.file = reading_.files[e.next_file];
  next_.position = e.next_position;
  return out;
}

}  // namespace chsync::mysql
