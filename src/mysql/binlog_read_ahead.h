#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/result.h"
#include "mysql/binlog_stream.h"

namespace chsync::mysql {

/// Reads a BinlogStream on a thread of its own, so that the socket reads and the copies out of
/// Connector/C's buffers overlap the caller's decoding (a catch-up is bound by the one thread that
/// reads, decodes and converts). The reading thread copies events into a batch of up to
/// `max_bytes` (it waits while one that full is not taken), and Next hands them out in order, the
/// stream's error last. An event larger than `max_bytes` is not read past until the caller asks
/// for the next one, so memory stays within two copies of the largest event plus two batches.
/// Next keeps BinlogStream::Next's contract: an event's bytes and file stay valid until the next
/// call. With `ahead` false there is no thread: Next reads the stream itself (the pipe at the live
/// end, where one thread measured a lower lag).
class BinlogReadAhead {
 public:
  explicit BinlogReadAhead(std::unique_ptr<BinlogStream> stream, bool ahead = true,
                           size_t max_bytes = size_t{4} << 20);
  /// Stops the reading thread (shutting the socket down when it waits in a read) and closes the
  /// stream.
  ~BinlogReadAhead();
  BinlogReadAhead(const BinlogReadAhead&) = delete;
  BinlogReadAhead& operator=(const BinlogReadAhead&) = delete;

  /// The next event, or the stream's error once every event before it was handed out.
  Result<StreamEvent> Next();
  /// Where the event after the last one Next returned starts (BinlogStream::next_coordinate then).
  const BinlogCoordinate& next_coordinate() const { return ahead_ ? next_ : stream_->next_coordinate(); }
  const std::string& checksum() const { return checksum_; }

 private:
  struct Entry {
    size_t offset = 0;  ///< of its bytes in Batch::bytes
    size_t size = 0;
    uint32_t file = 0;  ///< index into Batch::files
    uint64_t position = 0;
    uint32_t next_file = 0;
    uint64_t next_position = 0;
    uint8_t type = 0;
    bool artificial = false;
  };
  struct Batch {
    std::string bytes;
    std::vector<Entry> entries;
    std::vector<std::string> files;
    std::optional<Error> error;  ///< after the entries: the stream's failure
    /// Empties it, keeping its memory up to `keep_bytes`.
    void Clear(size_t keep_bytes);
    uint32_t File(std::string_view name);
  };

  void Read();

  std::unique_ptr<BinlogStream> stream_;
  const bool ahead_;
  const size_t max_bytes_;
  const std::string checksum_;
  int socket_ = -1;

  std::mutex mutex_;
  std::condition_variable ready_;  ///< events (or the error) in filling_
  std::condition_variable room_;   ///< filling_ was taken, or stop
  Batch filling_;                  ///< the reading thread's, under mutex_
  bool waiting_ = false;           ///< Next waits for filling_
  bool stop_ = false;
  bool failed_ = false;  ///< the stream's error is in filling_ or reading_: the thread ended

  Batch reading_;  ///< Next's, taken from filling_ whole
  size_t next_entry_ = 0;
  BinlogCoordinate next_;
  std::thread thread_;
};

}  // namespace chsync::mysql
