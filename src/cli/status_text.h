#pragma once

// What `chsync status` prints (cli/status_command.cpp), as a pure function of the state directory's
// checkpoint and status file, so that a pipe of thousands of tables reads as well as one of three:
// the counts of tables by state first, then the held (parked, paused) tables, then the tables being
// copied, then the rest, each list cut after `shown` lines with the number left out.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "state/checkpoint.h"
#include "state/run_status.h"

namespace chsync::cli {

struct StatusTextOptions {
  std::string state_dir;  ///< the state directory, as given (shown, and named in hints)
  bool running = false;   ///< a pipe holds the directory's lock
  uint64_t now_ms = 0;    ///< "now", for the ages shown
  /// Lines of each per-table list before "… and N more" (0: no limit, `--all`).
  size_t shown = 20;
  /// `--table PATTERN` (globs over "db.t", any of them): only matching tables are listed, every one
  /// of them; the counts still cover every table.
  std::vector<std::string> tables;
};

/// The status text, lines ending in '\n'.
std::string StatusText(const pipe::Checkpoint& checkpoint, const pipe::RunStatus& run,
                       const StatusTextOptions& options);

}  // namespace chsync::cli
