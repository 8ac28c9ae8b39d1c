#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "binlog/decoder.h"
#include "binlog/event.h"
#include "common/result.h"

namespace chsync::binlog {

/// The bytes of one event in a file and where it starts.
struct RawEvent {
  std::string_view bytes;
  uint64_t position = 0;
};

/// Reads a binlog (or relay log) file from disk and splits it into events.
///
/// Checks the 4-byte magic (0xfe 'b' 'i' 'n'), then walks the file by each header's
/// event_size: the position of an event is the previous position plus the previous size
/// (64-bit; the header's log_pos is never trusted). A size smaller than a header or larger than
/// what is left is reported as a kCorrupt error naming the byte offset; so is a truncated tail.
/// A regular file is read forward through a window that always holds the whole current event
/// (other files are read whole): the bytes of an event, and the views into them in a decoded
/// Event, stay valid until the next call to NextRaw(), Next() or SkipTo(). The file's size is
/// taken when it is opened. Not thread-safe.
class FileReader {
 public:
  ~FileReader();
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;

  /// Opens `path`; the decoder's file name becomes the path's last component.
  static Result<std::unique_ptr<FileReader>> Open(const std::string& path, DecoderOptions options = {});

  /// A reader over bytes already in memory (a whole binlog file, magic included), for tests and
  /// fuzzing; `name` plays the file name.
  static Result<std::unique_ptr<FileReader>> FromBytes(std::string bytes, std::string name,
                                                       DecoderOptions options = {});

  /// The next event's bytes without decoding it, or nullopt at the clean end of the file.
  Result<std::optional<RawEvent>> NextRaw();
  /// The next event, decoded, or nullopt at the clean end of the file. On error, position()
  /// still names the failing event, and the next call moves on to the event after it only if
  /// its size was sane (the error was inside the event); a framing error is final.
  Result<std::optional<Event>> Next();

  /// Skips forward to `position` without decoding row data, still decoding the events that
  /// change the format (FORMAT_DESCRIPTION, START_ENCRYPTION). REQUIRES: position() <= position.
  /// Fails when `position` is not the start of an event.
  Status SkipTo(uint64_t position);

  /// Offset of the next event to read.
  uint64_t position() const { return position_; }
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  Decoder& decoder() { return decoder_; }

 private:
  FileReader(std::string path, DecoderOptions options);
  Status Load();
  Status CheckMagic();
  /// Makes the `n` bytes at file offset `at` (REQUIRES: at + n <= size_) available at
  /// Window(at), reading forward when the window does not hold them.
  Status Fill(uint64_t at, uint64_t n);
  const uint8_t* Window(uint64_t at) const { return window_ + (at - window_start_); }

  std::string path_;
  Decoder decoder_;
  int fd_ = -1;  ///< the regular file being read through the window, else -1
  uint64_t size_ = 0;
  uint64_t position_ = 0;
  bool framing_failed_ = false;
  const uint8_t* window_ = nullptr;  ///< holds the file's bytes [window_start_, + window_size_)
  uint64_t window_start_ = 0;
  uint64_t window_size_ = 0;
  std::unique_ptr<uint8_t[]> buffer_;  ///< the window's storage when streaming
  uint64_t buffer_capacity_ = 0;
  std::string owned_;  ///< the whole file, when it is not a regular file (or from FromBytes)
};

}  // namespace chsync::binlog
