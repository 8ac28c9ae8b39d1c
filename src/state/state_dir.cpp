#include "state/state_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace chsync::pipe {
namespace {

constexpr const char* kCheckpointFile = "checkpoint.json";

Error IoError(const std::string& what, const std::string& path) {
  return Error(ErrorKind::kIo, what + " " + path + ": " + std::strerror(errno));
}

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("cannot write", path);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status MakeDirs(const std::string& dir) {
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    partial = dir.substr(0, pos);
    if (partial.empty()) continue;
    if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
      return IoError("cannot create directory", partial);
  }
  return Status::Ok();
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view content) {
  std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("cannot create", tmp);
  Status s = WriteAll(fd, content, tmp);
  if (s.ok() && fsync(fd) != 0) s = IoError("cannot fsync", tmp);
  if (close(fd) != 0 && s.ok()) s = IoError("cannot close", tmp);
  // A partly written temporary file (disk full) is removed, giving its space back; `path` was not
  // touched.
  if (!s.ok()) {
    unlink(tmp.c_str());
    return s;
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    Error e = IoError("cannot rename " + tmp + " to", path);
    unlink(tmp.c_str());
    return e;
  }
  std::string dir = DirName(path);
  int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return IoError("cannot open directory", dir);
  int rc = fsync(dfd);
  close(dfd);
  if (rc != 0) return IoError("cannot fsync directory", dir);
  return Status::Ok();
}

Result<std::optional<Checkpoint>> ReadCheckpoint(const std::string& dir) {
  std::string path = dir + "/" + kCheckpointFile;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<Checkpoint>();
    return IoError("cannot open", path);
  }
  std::string text;
  char buf[65536];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) != 0) {
    if (n < 0) {
      if (errno == EINTR) continue;
      Error e = IoError("cannot read", path);
      close(fd);
      return e;
    }
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  auto c = FromJson(text);
  if (!c.ok()) {
    Error e = std::move(c).error();
    e.AddContext("in " + path);
    return Error(e.kind(), e.message() +
                               " (the pipe state is damaged: restore the file from a backup, or start "
                               "over with an empty --state directory and chsync resync)");
  }
  return std::optional<Checkpoint>(std::move(*c));
}

Result<std::unique_ptr<StateDir>> StateDir::Open(const std::string& dir) {
  CHSYNC_RETURN_IF_ERROR(MakeDirs(dir));
  // A state directory chsync cannot write to fails now, not after a snapshot (access() reports a
  // read-only file system to root too).
  if (access(dir.c_str(), W_OK) != 0) {
    return Error(ErrorKind::kIo, "state directory " + dir + " is not writable (" + std::strerror(errno) +
                                     "): chsync saves its checkpoint there; make it writable (or "
                                     "remount its file system read-write) and run chsync again");
  }
  std::string lock_path = dir + "/lock";
  // Read-only: flock needs no write access, and the lock stays out of the way when the file system
  // is remounted read-only under a running pipe (its next checkpoint then fails, clearly).
  int fd = open(lock_path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("cannot open", lock_path);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    close(fd);
    if (err == EWOULDBLOCK) {
      return Error(ErrorKind::kConfig,
                   "state directory " + dir +
                       " is in use by another chsync process: stop it first, or give this "
                       "pipe its own --state directory");
    }
    errno = err;
    return IoError("cannot lock", lock_path);
  }
  return std::unique_ptr<StateDir>(new StateDir(dir, fd));
}

StateDir::~StateDir() {
  close(lock_fd_);
}

Result<std::optional<Checkpoint>> StateDir::Load() const {
  return ReadCheckpoint(dir_);
}

Status StateDir::Save(const Checkpoint& checkpoint) {
  Status s = WriteFileAtomically(dir_ + "/" + kCheckpointFile, ToJson(checkpoint));
  if (s.ok()) return s;
  return StateSaveError(dir_, "the checkpoint", std::move(s).error());
}

Error StateSaveError(const std::string& dir, std::string_view what, const Error& e) {
  const bool disk = e.message().find(std::strerror(ENOSPC)) != std::string::npos ||
                    e.message().find(std::strerror(EDQUOT)) != std::string::npos;
  const bool read_only = e.message().find(std::strerror(EROFS)) != std::string::npos;
  std::string what_to_do = disk        ? "free space on the file system of " + dir
                           : read_only ? "make the file system of " + dir + " writable again"
                                       : "fix the state directory " + dir;
  return Error(e.kind(), "cannot save " + std::string(what) + ": " + e.message() +
                             ". The last saved checkpoint (" + dir + "/" + kCheckpointFile +
                             ") is intact: " + what_to_do +
                             ", then run chsync again; it goes on from that checkpoint without loss");
}

}  // namespace chsync::pipe
