#pragma once

#include <atomic>
#include <string>

#include "common/result.h"
#include "config/config.h"

namespace chsync::pipe {

/// What `chsync run` / `chsync resync` asked for, beyond the configuration.
struct RunRequest {
  PipeConfig config;
  /// After the snapshot, replicate until every change committed on the source before streaming
  /// began is applied and checkpointed, then return.
  bool until_caught_up = false;
  /// `chsync resync`: rebuild the tables, then continue as `run`.
  bool resync = false;
  /// With `resync`: only this table ("db.t"); empty: every replicated table.
  std::string resync_table;
  /// Show the snapshot progress as a redrawn display (stderr is a terminal).
  bool terminal = false;
  /// The configuration file (--config), read again for `tables:` when `reload` is set (SIGHUP);
  /// `tables_from_flag`: --tables was given, and wins over the file.
  std::string config_file;
  bool tables_from_flag = false;
  std::atomic<bool>* reload = nullptr;
};

/// The pipe: opens the state directory, takes (or resumes) the snapshot, then streams the binlog
/// into ClickHouse until `stop` becomes true (SIGINT/SIGTERM) or, with until_caught_up, until it
/// caught up; in both cases it flushes and checkpoints before returning Ok. Errors say what
/// failed, where (table, binlog file:position) and what to do; they are also recorded in the
/// state directory for `chsync status`. kUsage/kConfig errors mean bad flags or configuration.
Status RunPipe(const RunRequest& request, const std::atomic<bool>& stop);

}  // namespace chsync::pipe
