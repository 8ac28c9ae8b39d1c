#pragma once

// What the applier (and its schema applier) ask of the pipe that runs them: what is the pipe's to
// do — parking a table, starting or stopping a copy, making a table's writer, carrying out
// requests between transactions.

#include <string>

#include "common/result.h"
#include "pipe/live_tables.h"

namespace chsync::pipe {

/// What the applier asks of the pipe that runs it.
class ApplierHost {
 public:
  virtual ~ApplierHost() = default;
  /// A failure of one table's statement or rows: parks the table (Ok) when the failure concerns it
  /// alone and its on_table_error is park (Holds::ParkFor); otherwise returns `error`.
  virtual Status ParkTable(TableState& table, const std::string& key, const Error& error,
                           const std::string& statement, const std::string& position) = 0;
  /// Starts (or, with `resume`, continues) the online copy of `table` under its dest.source.
  virtual Status StartRebuild(TableState& table, const std::string& position, const std::string& reason,
                              bool resume) = 0;
  /// Stops `table`'s online copy, if any, and drops its table.
  virtual Status CancelRebuild(TableState& table) = 0;
  /// Makes `table`'s converter and writer for its dest (and reads its key from ClickHouse).
  virtual Status RebuildWriter(TableState& table) = 0;
  /// Between transactions: the requests waiting, and the copies that finished.
  virtual Status BetweenTransactions() = 0;
  /// The cascading foreign keys may have changed: found again when needed.
  virtual void NoteCascades() = 0;
  /// A checkpoint is being made: the tables' destinations into it, the status's destination and tables.
  virtual void BeforeCheckpoint() = 0;
};

}  // namespace chsync::pipe
