#include "state/control.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "common/log.h"
#include "state/state_dir.h"

namespace chsync::pipe {
namespace {

using nlohmann::ordered_json;

constexpr std::string_view kRequestSuffix = ".req";
constexpr std::string_view kDoneSuffix = ".done";
constexpr std::string_view kBadSuffix = ".bad";
constexpr std::string_view kTempSuffix = ".tmp";
/// A request file is a few hundred bytes; anything much larger is not one.
constexpr size_t kMaxFileBytes = size_t{64} * 1024;

Error IoError(const std::string& what, const std::string& path) {
  return Error(ErrorKind::kIo, what + " " + path + ": " + std::strerror(errno));
}

std::string RequestsDir(const std::string& state_dir) {
  return state_dir + "/requests";
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

/// Ids name files: letters, digits, '-' and '_' only (no '/', no '.', nothing hidden).
bool IsSafeId(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_';
  });
}

uint64_t NowMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

/// Orders ids as numbers where they hold digits: "…-9" before "…-10".
bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    bool da = a[i] >= '0' && a[i] <= '9', db = b[j] >= '0' && b[j] <= '9';
    if (da && db) {
      size_t ie = i, je = j;
      while (ie < a.size() && a[ie] >= '0' && a[ie] <= '9') ++ie;
      while (je < b.size() && b[je] >= '0' && b[je] <= '9') ++je;
      std::string_view na = a.substr(i, ie - i), nb = b.substr(j, je - j);
      while (na.size() > 1 && na.front() == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb.front() == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

/// The file's text, nullopt when it does not exist. kCorrupt when it is larger than kMaxFileBytes.
Result<std::optional<std::string>> ReadSmallFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return IoError("cannot open", path);
  }
  std::string text;
  char buf[4096];
  while (true) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      Error e = IoError("cannot read", path);
      close(fd);
      return e;
    }
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxFileBytes) {
      close(fd);
      return Error(ErrorKind::kCorrupt, path + " is larger than " + std::to_string(kMaxFileBytes) + " bytes");
    }
  }
  close(fd);
  return std::optional<std::string>(std::move(text));
}

Status SyncDir(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open directory", dir);
  int rc = fsync(fd);
  close(fd);
  if (rc != 0) return IoError("cannot fsync directory", dir);
  return Status::Ok();
}

/// Removes `path`; a file already gone is fine.
Status RemoveFile(const std::string& path) {
  if (unlink(path.c_str()) != 0 && errno != ENOENT) return IoError("cannot remove", path);
  return Status::Ok();
}

std::string ToText(const ControlRequest& r) {
  ordered_json j{{"id", r.id}, {"op", r.op}, {"table", r.table}, {"at_ms", r.at_ms}};
  return j.dump() + "\n";
}

/// Parses a request file named `<stem>.req`; the error says what is wrong, for the log.
Result<ControlRequest> FromText(std::string_view text, std::string_view stem) {
  ordered_json j = ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Error(ErrorKind::kCorrupt, "not a JSON object");
  for (const char* key : {"id", "op", "table"}) {
    if (!j.contains(key) || !j.at(key).is_string())
      return Error(ErrorKind::kCorrupt, std::string("no string \"") + key + "\"");
  }
  if (!j.contains("at_ms") || !j.at("at_ms").is_number_unsigned())
    return Error(ErrorKind::kCorrupt, "no number \"at_ms\"");
  ControlRequest r{j.at("id").get<std::string>(), j.at("op").get<std::string>(),
                   j.at("table").get<std::string>(), j.at("at_ms").get<uint64_t>()};
  if (r.id != stem) return Error(ErrorKind::kCorrupt, "id '" + r.id + "' is not the file's name");
  if (!IsControlOp(r.op)) return Error(ErrorKind::kCorrupt, "unknown op '" + r.op + "'");
  if (!IsQualifiedTable(r.table))
    return Error(ErrorKind::kCorrupt, "table '" + r.table + "' is not DB.TABLE");
  return r;
}

/// Sets a request file that does not parse aside as <name>.bad and says so; when the rename fails
/// (the next poll finds the file again), says so once per process.
void SetAside(const std::string& dir, const std::string& name, const std::string& why) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::string path = dir + "/" + name;
  std::string bad = path + std::string(kBadSuffix);
  bool renamed = rename(path.c_str(), bad.c_str()) == 0;
  int err = errno;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (renamed) {
      warned.erase(path);  // gone: a later file of that name is a new one
    } else if (!warned.insert(path).second) {
      return;
    }
  }
  if (renamed) {
    log::Warn(
        "control request {} is not a valid request ({}): set aside as {}; submit it again with chsync "
        "resync, pause or resume",
        path, why, bad);
  } else {
    log::Warn("control request {} is not a valid request ({}), and renaming it to {} failed ({}): ignored",
              path, why, bad, std::strerror(err));
  }
}

bool OlderThanKeep(const std::string& path, uint64_t now_ms) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return false;
  uint64_t modified_ms =
      static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000 + static_cast<uint64_t>(st.st_mtim.tv_nsec) / 1000000;
  uint64_t keep_ms =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(kOutcomeKeep).count());
  return now_ms > modified_ms && now_ms - modified_ms > keep_ms;
}

}  // namespace

bool IsControlOp(std::string_view op) {
  return op == "resync" || op == "pause" || op == "resume" || op == "tables-add" || op == "tables-remove";
}

bool IsQualifiedTable(std::string_view table) {
  size_t dot = table.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == table.size()) return false;
  return std::none_of(table.begin(), table.end(),
                      [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

Result<ControlRequest> SubmitRequest(const std::string& state_dir, std::string_view op,
                                     std::string_view table) {
  if (!IsControlOp(op)) {
    return Error(ErrorKind::kUsage,
                 "unknown control request '" + std::string(op) + "' (resync, pause or resume)");
  }
  if (!IsQualifiedTable(table)) {
    return Error(ErrorKind::kUsage, "--table must be DB.TABLE, not '" + std::string(table) + "'");
  }
  static std::atomic<uint64_t> counter{0};
  ControlRequest r;
  r.at_ms = NowMs();
  r.id = std::to_string(r.at_ms) + "-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
  r.op = std::string(op);
  r.table = std::string(table);
  std::string dir = RequestsDir(state_dir);
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return IoError("cannot create directory", dir);
  CHSYNC_RETURN_IF_ERROR(WriteFileAtomically(dir + "/" + r.id + std::string(kRequestSuffix), ToText(r)));
  return r;
}

Result<std::vector<ControlRequest>> PendingRequests(const std::string& state_dir) {
  std::string dir = RequestsDir(state_dir);
  std::vector<ControlRequest> requests;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT) return requests;
    return IoError("cannot open directory", dir);
  }
  std::vector<std::string> names;
  while (dirent* entry = readdir(d)) names.emplace_back(entry->d_name);
  closedir(d);

  uint64_t now = NowMs();
  for (const std::string& name : names) {
    std::string path = dir;
    path += '/';
    path += name;
    if (EndsWith(name, kDoneSuffix) || EndsWith(name, kTempSuffix)) {
      if (OlderThanKeep(path, now)) (void)RemoveFile(path);
      continue;
    }
    if (!EndsWith(name, kRequestSuffix)) continue;
    std::string stem = name.substr(0, name.size() - kRequestSuffix.size());
    if (!IsSafeId(stem)) {
      SetAside(dir, name, "its name is not a request id");
      continue;
    }
    auto text = ReadSmallFile(path);
    if (!text.ok()) {  // one unreadable file must not hold up the others
      SetAside(dir, name, text.error().message());
      continue;
    }
    if (!text->has_value()) continue;  // completed since the directory was read
    auto request = FromText(**text, stem);
    if (!request.ok()) {
      SetAside(dir, name, request.error().message());
      continue;
    }
    requests.push_back(std::move(*request));
  }
  std::sort(requests.begin(), requests.end(), [](const ControlRequest& a, const ControlRequest& b) {
    if (a.at_ms != b.at_ms) return a.at_ms < b.at_ms;
    return NaturalLess(a.id, b.id);
  });
  return requests;
}

Status CompleteRequest(const std::string& state_dir, const std::string& id, std::string_view outcome) {
  if (!IsSafeId(id)) return Error(ErrorKind::kUsage, "'" + id + "' is not a control request id");
  std::string dir = RequestsDir(state_dir);
  std::string request = dir + "/" + id + std::string(kRequestSuffix);
  std::string done = dir + "/" + id + std::string(kDoneSuffix);
  if (access(request.c_str(), F_OK) != 0) {
    if (errno == ENOENT) return Status::Ok();  // completed before: its outcome was written then
    return IoError("cannot look at", request);
  }
  if (access(done.c_str(), F_OK) != 0) {
    if (errno != ENOENT) return IoError("cannot look at", done);
    std::string text(outcome);
    if (text.empty() || text.back() != '\n') text += '\n';
    CHSYNC_RETURN_IF_ERROR(WriteFileAtomically(done, text));
  }
  CHSYNC_RETURN_IF_ERROR(RemoveFile(request));
  return SyncDir(dir);
}

Result<std::optional<std::string>> WaitForOutcome(const std::string& state_dir, const std::string& id,
                                                  std::chrono::milliseconds timeout,
                                                  const std::atomic<bool>* stop) {
  if (!IsSafeId(id)) return Error(ErrorKind::kUsage, "'" + id + "' is not a control request id");
  std::string done = RequestsDir(state_dir) + "/" + id + std::string(kDoneSuffix);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    CHSYNC_ASSIGN_OR_RETURN(std::optional<std::string> text, ReadSmallFile(done));
    if (text) {
      (void)RemoveFile(done);
      while (!text->empty() && (text->back() == '\n' || text->back() == '\r')) text->pop_back();
      return text;
    }
    if (stop != nullptr && stop->load()) return std::optional<std::string>();
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return std::optional<std::string>();
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(std::chrono::milliseconds(100), deadline - now));
  }
}

bool PipeRunning(const std::string& state_dir) {
  std::string path = state_dir + "/lock";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool held = false;
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
    flock(fd, LOCK_UN);
  } else {
    held = errno == EWOULDBLOCK;
  }
  close(fd);
  return held;
}

}  // namespace chsync::pipe
