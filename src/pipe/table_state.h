#pragma once

// Parked and paused tables (docs/table-control.md): which failures concern one table alone, and
// the board on which the flusher's threads park a table whose INSERT ClickHouse refused.

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "state/checkpoint.h"

namespace chsync::pipe {

/// Whether `error`, met while applying one table's statement or rows, concerns that table alone
/// (a `fail` policy or a schema chsync cannot follow: kUnsupported; ClickHouse refusing the
/// table's ALTER or INSERT with a code that is not about the server as a whole). Network failures,
/// retryable ClickHouse codes, a cancelled request, refused credentials or a read-only user, and
/// corrupt events are not: they stop or retry the whole pipe as before.
bool ConcernsOneTable(const Error& error);

/// Tables parked by the flusher's threads (an INSERT refused), shared with the stream's thread,
/// which adopts them into its tables. Thread-safe.
class ParkBoard {
 public:
  /// Parks `held.table` unless it is already on the board; false when it was.
  bool Park(HeldTable held);
  bool Parked(const std::string& table) const;
  /// The tables parked since the last call (the stream's thread takes them over).
  std::vector<HeldTable> TakeNew();
  /// Every table on the board, taken over by the stream or not, until it is forgotten (copied
  /// again): what a checkpoint saved now must hold besides the stream's own. A park taken over
  /// after the stream built a checkpoint is not in that checkpoint's own list, yet the checkpoint
  /// lies past the refused rows (issue 33, case 2).
  std::vector<HeldTable> Owed() const;
  /// Forgets `table` (unparked by a request, after the stream took it over).
  void Forget(const std::string& table);
  void Clear();

 private:
  mutable std::mutex mutex_;
  std::map<std::string, HeldTable> parked_;
  std::map<std::string, bool> taken_;
};

/// `extra` merged into `held` (a table already there keeps its entry).
void MergeHeld(std::vector<HeldTable>& held, const std::vector<HeldTable>& extra);

}  // namespace chsync::pipe
