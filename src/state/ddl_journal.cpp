#include "state/ddl_journal.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>

#include "binlog/compression.h"
#include "mysql/binlog_stream.h"
#include "state/state_dir.h"

namespace chsync::pipe {
namespace {

constexpr const char* kJournalFile = "ddl-journal";
constexpr size_t kCrcDigits = 8;

Error IoError(const std::string& what, const std::string& path) {
  return Error(ErrorKind::kIo, what + " " + path + ": " + std::strerror(errno));
}

std::string EncodeLine(const DdlStep& step) {
  std::string key = step.ToString();
  return fmt::format("{:08x} {}\n", binlog::Crc32(key), key);
}

/// A line without its newline; nullopt unless its checksum and every field are right.
std::optional<DdlStep> DecodeLine(std::string_view line) {
  if (line.size() < kCrcDigits + 2 || line[kCrcDigits] != ' ') return std::nullopt;
  uint32_t crc = 0;
  auto [crc_end, crc_ec] = std::from_chars(line.data(), line.data() + kCrcDigits, crc, 16);
  if (crc_ec != std::errc() || crc_end != line.data() + kCrcDigits) return std::nullopt;
  std::string_view key = line.substr(kCrcDigits + 1);
  if (binlog::Crc32(key) != crc) return std::nullopt;
  size_t hash = key.rfind('#');
  if (hash == std::string_view::npos || hash + 1 == key.size()) return std::nullopt;
  size_t colon = key.rfind(':', hash);
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == hash) return std::nullopt;
  DdlStep step;
  auto [pos_end, pos_ec] = std::from_chars(key.data() + colon + 1, key.data() + hash, step.position);
  if (pos_ec != std::errc() || pos_end != key.data() + hash) return std::nullopt;
  step.file = std::string(key.substr(0, colon));
  step.name = std::string(key.substr(hash + 1));
  return step;
}

Result<std::optional<std::string>> ReadWhole(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return IoError("cannot open", path);
  }
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      Error e = IoError("cannot read", path);
      close(fd);
      return e;
    }
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return std::optional<std::string>(std::move(text));
}

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

std::string DdlStep::ToString() const {
  return fmt::format("{}:{}#{}", file, position, name);
}

Result<DdlJournal> DdlJournal::Open(const std::string& dir) {
  DdlJournal journal(dir + "/" + kJournalFile);
  CHSYNC_ASSIGN_OR_RETURN(std::optional<std::string> text, ReadWhole(journal.path_));
  if (!text) return journal;
  std::string_view rest = *text;
  bool damaged_tail = false;
  size_t line_number = 0;
  while (!rest.empty()) {
    ++line_number;
    size_t newline = rest.find('\n');
    std::string_view line = rest.substr(0, newline);
    rest = newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
    std::optional<DdlStep> step = newline == std::string_view::npos ? std::nullopt : DecodeLine(line);
    if (step) {
      journal.steps_.push_back(std::move(*step));
      continue;
    }
    if (!rest.empty()) {
      return Error(ErrorKind::kCorrupt,
                   fmt::format("{}: line {} is damaged (the ClickHouse steps of the schema changes being "
                               "applied). Check the ClickHouse tables of the last RENAME TABLE the pipe "
                               "applied, then remove the file to go on",
                               journal.path_, line_number));
    }
    damaged_tail = true;  // written when the process died
  }
  if (damaged_tail) CHSYNC_RETURN_IF_ERROR(journal.Rewrite());
  return journal;
}

bool DdlJournal::Done(const DdlStep& step) const {
  return std::find(steps_.begin(), steps_.end(), step) != steps_.end();
}

Status DdlJournal::Record(const DdlStep& step) {
  if (Done(step)) return Status::Ok();
  bool created = true;
  int fd = open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST) {
    created = false;
    fd = open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  }
  if (fd < 0) return IoError("cannot open", path_);
  const std::string line = EncodeLine(step);
  std::string_view data = line;
  Status s = Status::Ok();
  while (s.ok() && !data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      s = IoError("cannot write", path_);
    } else {
      data.remove_prefix(static_cast<size_t>(n));
    }
  }
  if (s.ok() && fsync(fd) != 0) s = IoError("cannot fsync", path_);
  if (close(fd) != 0 && s.ok()) s = IoError("cannot close", path_);
  if (s.ok() && created) {
    // The new file's name must survive a crash as well as its content.
    const std::string dir = DirName(path_);
    int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return IoError("cannot open directory", dir);
    int rc = fsync(dfd);
    close(dfd);
    if (rc != 0) return IoError("cannot fsync directory", dir);
  }
  if (!s.ok()) return s;
  steps_.push_back(step);
  return Status::Ok();
}

Status DdlJournal::Forget(std::string_view file, uint64_t position) {
  const mysql::BinlogCoordinate resume{std::string(file), position, ""};
  const size_t erased = std::erase_if(steps_, [&](const DdlStep& step) {
    return mysql::CompareCoordinates({step.file, step.position, ""}, resume) < 0;
  });
  return erased == 0 ? Status::Ok() : Rewrite();
}

Status DdlJournal::Rewrite() {
  if (steps_.empty()) {
    // A removal that a crash undoes brings back steps of statements that are never replayed.
    if (unlink(path_.c_str()) != 0 && errno != ENOENT) return IoError("cannot remove", path_);
    return Status::Ok();
  }
  std::string content;
  for (const DdlStep& step : steps_) content += EncodeLine(step);
  return WriteFileAtomically(path_, content);
}

}  // namespace chsync::pipe
