#include "binlog/file_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace chsync::binlog {
namespace {

constexpr uint8_t kMagic[4] = {0xfe, 'b', 'i', 'n'};
constexpr size_t kHeaderLength = 19;
constexpr uint64_t kWindowSize = uint64_t{1} << 20;

std::string BaseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

FileReader::FileReader(std::string path, DecoderOptions options)
    : path_(std::move(path)), decoder_([&] {
        options.follow_rotate = false;
        return std::move(options);
      }()) {
  decoder_.SetFile(BaseName(path_));
}

FileReader::~FileReader() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<FileReader>> FileReader::Open(const std::string& path, DecoderOptions options) {
  std::unique_ptr<FileReader> r(new FileReader(path, std::move(options)));
  CHSYNC_RETURN_IF_ERROR(r->Load());
  return r;
}

Status FileReader::Load() {
  int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error(ErrorKind::kIo, "cannot open " + path_ + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Error(ErrorKind::kIo, "cannot stat " + path_ + ": " + std::strerror(err));
  }
  if (S_ISREG(st.st_mode)) {
    // Read through a window rather than mapping the file: page faults and TLB misses over a
    // mapping cost more than copying the bytes into one reused buffer.
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    fd_ = fd;
    size_ = static_cast<uint64_t>(st.st_size);
    return CheckMagic();
  }
  char buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return Error(ErrorKind::kIo, "cannot read " + path_ + ": " + std::strerror(err));
    }
    if (n == 0) break;
    owned_.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  window_ = reinterpret_cast<const uint8_t*>(owned_.data());
  size_ = window_size_ = owned_.size();
  return CheckMagic();
}

Result<std::unique_ptr<FileReader>> FileReader::FromBytes(std::string bytes, std::string name,
                                                          DecoderOptions options) {
  std::unique_ptr<FileReader> r(new FileReader(std::move(name), std::move(options)));
  r->owned_ = std::move(bytes);
  r->window_ = reinterpret_cast<const uint8_t*>(r->owned_.data());
  r->size_ = r->window_size_ = r->owned_.size();
  CHSYNC_RETURN_IF_ERROR(r->CheckMagic());
  return r;
}

Status FileReader::Fill(uint64_t at, uint64_t n) {
  if (at >= window_start_ && n <= window_size_ && at - window_start_ <= window_size_ - n) return Status::Ok();
  // Only a streamed file can miss bytes: the whole-file window holds all size_ bytes.
  uint64_t end = window_start_ + window_size_;
  uint64_t keep = at >= window_start_ && at < end ? end - at : 0;
  if (n > buffer_capacity_) {
    uint64_t capacity = std::max<uint64_t>({n, kWindowSize, 2 * buffer_capacity_});
    auto bigger = std::make_unique_for_overwrite<uint8_t[]>(capacity);
    if (keep > 0) std::memcpy(bigger.get(), Window(at), keep);
    buffer_ = std::move(bigger);
    buffer_capacity_ = capacity;
  } else if (keep > 0) {
    std::memmove(buffer_.get(), Window(at), keep);
  }
  window_ = buffer_.get();
  window_start_ = at;
  window_size_ = keep;
  while (window_size_ < n) {
    uint64_t from = window_start_ + window_size_;
    size_t want = static_cast<size_t>(std::min(buffer_capacity_ - window_size_, size_ - from));
    ssize_t got = ::pread(fd_, buffer_.get() + window_size_, want, static_cast<off_t>(from));
    if (got < 0) {
      if (errno == EINTR) continue;
      return Error(ErrorKind::kIo, "cannot read " + path_ + " at offset " + std::to_string(from) + ": " +
                                       std::strerror(errno));
    }
    if (got == 0) {
      return Error(ErrorKind::kIo, path_ + " ends at offset " + std::to_string(from) + ", before the " +
                                       std::to_string(size_) +
                                       " bytes it had when opened (truncated meanwhile?)");
    }
    window_size_ += static_cast<uint64_t>(got);
  }
  return Status::Ok();
}

Status FileReader::CheckMagic() {
  bool magic = size_ >= sizeof kMagic;
  if (magic) {
    CHSYNC_RETURN_IF_ERROR(Fill(0, sizeof kMagic));
    magic = std::memcmp(Window(0), kMagic, sizeof kMagic) == 0;
  }
  if (!magic) {
    return Error(ErrorKind::kCorrupt,
                 path_ + " is not a binlog file: it does not start with the magic bytes fe 62 69 6e");
  }
  position_ = sizeof kMagic;
  return Status::Ok();
}

Result<std::optional<RawEvent>> FileReader::NextRaw() {
  if (framing_failed_) {
    return Error(ErrorKind::kCorrupt, "cannot continue reading " + path_ +
                                          " after a framing error at offset " + std::to_string(position_));
  }
  if (position_ == size_) return std::optional<RawEvent>();
  uint64_t left = size_ - position_;
  if (left < kHeaderLength) {
    framing_failed_ = true;
    return Error(ErrorKind::kCorrupt, "truncated event header at offset " + std::to_string(position_) + ": " +
                                          std::to_string(left) + " bytes left, a header needs 19");
  }
  CHSYNC_RETURN_IF_ERROR(Fill(position_, kHeaderLength));
  const uint8_t* p = Window(position_);
  uint32_t size = uint32_t{p[9]} | (uint32_t{p[10]} << 8) | (uint32_t{p[11]} << 16) | (uint32_t{p[12]} << 24);
  if (size < kHeaderLength) {
    framing_failed_ = true;
    return Error(ErrorKind::kCorrupt, "bad event_size " + std::to_string(size) + " at offset " +
                                          std::to_string(position_) + " (smaller than the 19-byte header)");
  }
  if (size > left) {
    framing_failed_ = true;
    return Error(ErrorKind::kCorrupt, "truncated event at offset " + std::to_string(position_) +
                                          ": event_size " + std::to_string(size) + " but only " +
                                          std::to_string(left) + " bytes left in the file");
  }
  CHSYNC_RETURN_IF_ERROR(Fill(position_, size));
  p = Window(position_);
  RawEvent raw{std::string_view(reinterpret_cast<const char*>(p), size), position_};
  position_ += size;
  return std::optional<RawEvent>(raw);
}

Result<std::optional<Event>> FileReader::Next() {
  CHSYNC_ASSIGN_OR_RETURN(std::optional<RawEvent> raw, NextRaw());
  if (!raw) return std::optional<Event>();
  CHSYNC_ASSIGN_OR_RETURN(Event e, decoder_.Decode(raw->bytes, raw->position));
  return std::optional<Event>(std::move(e));
}

Status FileReader::SkipTo(uint64_t target) {
  while (position_ < target) {
    CHSYNC_ASSIGN_OR_RETURN(std::optional<RawEvent> raw, NextRaw());
    if (!raw) break;
    auto type = static_cast<EventType>(static_cast<uint8_t>(raw->bytes[4]));
    if (type == EventType::kFormatDescription || type == EventType::kStartV3 ||
        type == EventType::kMariaStartEncryption) {
      CHSYNC_RETURN_IF_ERROR(decoder_.Decode(raw->bytes, raw->position));
    }
  }
  if (position_ != target) {
    return Error(ErrorKind::kUsage, "position " + std::to_string(target) +
                                        " is not the start of an event in " + path_ +
                                        " (the nearest event starts at " + std::to_string(position_) + ")");
  }
  return Status::Ok();
}

}  // namespace chsync::binlog
