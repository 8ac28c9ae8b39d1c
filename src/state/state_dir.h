#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/result.h"
#include "state/checkpoint.h"

namespace chsync::pipe {

/// The `--state DIR` of a pipe: its checkpoint, kept crash-safe, and a lock that keeps a second
/// chsync off the same directory.
///
/// Save() writes `checkpoint.json.tmp`, fsyncs it, renames it over `checkpoint.json` and fsyncs
/// the directory, so that after a crash at any instant the file holds either the previous
/// checkpoint or the new one, whole. Not thread-safe.
class StateDir {
 public:
  /// Creates DIR if needed and takes an exclusive lock (`DIR/lock`, flock). Fails with kConfig
  /// when another process holds it, naming the directory.
  static Result<std::unique_ptr<StateDir>> Open(const std::string& dir);
  ~StateDir();
  StateDir(const StateDir&) = delete;
  StateDir& operator=(const StateDir&) = delete;

  /// The saved checkpoint, or nullopt when none was ever saved. A damaged file is an error (kCorrupt)
  /// that names the path: chsync never silently starts over.
  Result<std::optional<Checkpoint>> Load() const;
  Status Save(const Checkpoint& checkpoint);

  const std::string& path() const { return dir_; }

 private:
  StateDir(std::string dir, int lock_fd) : dir_(std::move(dir)), lock_fd_(lock_fd) {}
  std::string dir_;
  int lock_fd_;
};

/// Reads a checkpoint without taking the lock (for `chsync status` while a pipe runs).
Result<std::optional<Checkpoint>> ReadCheckpoint(const std::string& dir);

/// Writes `content` to `path` crash-safely (temp file, fsync, rename, fsync of the directory).
Status WriteFileAtomically(const std::string& path, std::string_view content);

/// `e`, met writing `what` ("the checkpoint") into state directory `dir`, as the user sees it: the
/// last saved checkpoint is intact, and what to do (free space, make it writable) before running
/// chsync again.
Error StateSaveError(const std::string& dir, std::string_view what, const Error& e);

}  // namespace chsync::pipe
