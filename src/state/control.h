#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace chsync::pipe {

/// Control requests: how other processes (`chsync resync --table`, `chsync pause`, `chsync resume`)
/// ask a running pipe to act on one table (docs/table-control.md).
///
/// A request travels as files in DIR/requests (DIR being the pipe's --state directory):
///
///     <id>.req   the request, a JSON object {"id","op","table","at_ms"}; written by SubmitRequest
///     <id>.done  its outcome, one line: "done: …" or "refused: …"; written by CompleteRequest,
///                read and removed by WaitForOutcome
///     <id>.bad   a .req file that did not parse, set aside by PendingRequests
///
/// Every file is written whole (temp file, fsync, rename, fsync of the directory), so a crash at any
/// instant leaves either no file or the whole file. What makes a request happen once is the pipe's
/// side: it records the request's id in its checkpoint (Checkpoint::requests_done) together with the
/// request's effect, and calls CompleteRequest only after that checkpoint is saved. A request whose
/// id the pipe finds in its checkpoint was carried out before a crash: the pipe completes it again
/// without applying it. These functions are safe to call from several processes and threads at
/// once; all their state is on disk.

/// One request, as submitted.
struct ControlRequest {
  std::string id;      ///< unique and ordered by submission time: "<ms>-<pid>-<counter>", e.g.
                       ///< "1764680000123-4242-1"; safe as a file name
  std::string op;      ///< "resync", "pause", "resume", "tables-add" or "tables-remove"
  std::string table;   ///< "db.t" as the user wrote it (tables-*: a DB.TABLE pattern, * and ?)
  uint64_t at_ms = 0;  ///< when it was submitted (wall clock, ms since the epoch)

  bool operator==(const ControlRequest&) const = default;
};

/// Whether `op` is one a request may carry: "resync", "pause", "resume", "tables-add" or
/// "tables-remove" (`chsync tables add|remove`).
bool IsControlOp(std::string_view op);

/// Whether `table` is DB.TABLE: a database and a table name, both non-empty, separated by the first
/// '.', with no control characters.
bool IsQualifiedTable(std::string_view table);

/// Writes DIR/requests/<id>.req atomically, creating DIR/requests as needed, and returns the request.
/// kUsage for an unknown op or a table that is not DB.TABLE; kIo when the file cannot be written.
Result<ControlRequest> SubmitRequest(const std::string& state_dir, std::string_view op,
                                     std::string_view table);

/// The requests waiting in DIR/requests (files *.req), oldest first (by submission time, then by
/// id). A file that does not parse is renamed to <name>.bad and logged (log::Warn) once, and not
/// returned. No DIR/requests directory: an empty list. Also removes outcome files (*.done) that no
/// one collected within kOutcomeKeep.
Result<std::vector<ControlRequest>> PendingRequests(const std::string& state_dir);

/// How long an uncollected outcome file stays in DIR/requests.
inline constexpr std::chrono::hours kOutcomeKeep{24 * 7};

/// The pipe finished request `id`: writes DIR/requests/<id>.done (atomically) holding `outcome`
/// ("done: …" or "refused: …", one line), then removes <id>.req.
///
/// Safe to call twice, and the call for a request found already carried out after a crash (its id
/// in the checkpoint, its .req file still there): an existing .done file is kept as it is (the first
/// outcome wins), and when <id>.req is already gone nothing is written (the outcome was delivered,
/// or is still waiting to be).
Status CompleteRequest(const std::string& state_dir, const std::string& id, std::string_view outcome);

/// Waits (polling every ~100 ms) until DIR/requests/<id>.done exists, then returns its text (without
/// the trailing newline) and removes the file. nullopt after `timeout`, or as soon as `*stop` becomes
/// true; the request then stays queued. kIo when the file exists but cannot be read.
Result<std::optional<std::string>> WaitForOutcome(const std::string& state_dir, const std::string& id,
                                                  std::chrono::milliseconds timeout,
                                                  const std::atomic<bool>* stop = nullptr);

/// Whether some process holds DIR's lock (DIR/lock, taken by StateDir::Open): a `chsync run` is
/// running on DIR. Tries LOCK_EX|LOCK_NB on a file descriptor of its own and releases it at once:
/// the pipe that holds the lock is not disturbed (only a chsync starting on DIR in that same instant
/// would find it in use). A process that holds the lock itself through StateDir::Open gets true as
/// well. False when DIR/lock does not exist.
bool PipeRunning(const std::string& state_dir);

}  // namespace chsync::pipe
