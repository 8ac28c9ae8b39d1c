#pragma once

// How long until the source purges the binlog file a checkpoint needs.
//
// The estimate and what it assumes:
//  - A server purges a binlog file by age once it is older than expire_seconds
//    (binlog_expire_logs_seconds, else expire_logs_days × 86400), the age counted from the file's
//    last write (its modification time), that is from the moment the next file began. MariaDB and
//    MySQL both check only when a file is rotated (and at startup or FLUSH BINARY LOGS), so the
//    real purge comes at the first rotation after that moment: the headroom here is a lower bound.
//  - The server does not expose file times over SQL, so a closed file's age is estimated from the
//    bytes written since it was closed (the sizes of the files after it) divided by the recent
//    write rate. A write rate that changes over hours makes the age, and so the headroom, wrong in
//    proportion; a quiet server makes files look younger than they are.
//  - Not counted: purges by total size (MariaDB's max_binlog_total_size / binlog_space_limit),
//    PURGE BINARY LOGS run by hand, and the server keeping a file a connected replica still reads.
//    A checkpoint file that is already gone is reported as such (checkpoint_file_present false).
//
// ReadRetention is I/O; RetentionEstimator is pure arithmetic over readings, tested by tables.

#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "common/result.h"
#include "mysql/connection.h"

namespace chsync::mysql {

struct BinaryLogFile {
  std::string name;
  uint64_t size = 0;
};

/// What the server says about its binlogs, read in one go.
struct RetentionReading {
  std::vector<BinaryLogFile> files;  ///< SHOW BINARY LOGS, oldest first
  /// binlog_expire_logs_seconds, else expire_logs_days*86400; 0: never expires by age (also when
  /// MySQL's binlog_expire_logs_auto_purge is OFF).
  uint64_t expire_seconds = 0;
  uint64_t read_at_ms = 0;  ///< wall clock when read (milliseconds since 1970)
};

/// Reads SHOW BINARY LOGS and the expiry variables (MariaDB 10.11 and MySQL 8 names; a variable the
/// server lacks counts as unset). Fails when either statement fails (a server without binary
/// logging, a user without the privilege for SHOW BINARY LOGS), with the server's message.
Result<RetentionReading> ReadRetention(Connection& conn);

/// expire_seconds from SHOW GLOBAL VARIABLES rows (Variable_name, Value): binlog_expire_logs_seconds
/// when above 0, else expire_logs_days × 86400 (fractions of a day allowed, as MariaDB has them),
/// and 0 when binlog_expire_logs_auto_purge is OFF.
uint64_t ExpireSecondsFromVariables(const QueryResult& variables);

/// Orders binlog file names by their numeric extension ("binlog.000009" < "binlog.000010" <
/// "binlog.1000000"): negative, 0 or positive like strcmp. Names with different base names or
/// without a numeric extension compare as text.
int CompareBinlogNames(const std::string& a, const std::string& b);

struct RetentionHeadroom {
  /// Bytes from the checkpoint to the end of the newest file. When the checkpoint's file is gone:
  /// the sizes of every file still there (a lower bound).
  uint64_t bytes_behind = 0;
  /// Estimated from successive readings; 0 until two readings.
  double write_rate_bytes_per_s = 0;
  /// Bytes the server may still write before the checkpoint's file is old enough to be purged:
  /// expire_seconds × rate minus the bytes written since that file was closed (the next file's
  /// start). NaN when the file never expires (expire 0) or no rate yet (or the server wrote nothing
  /// during the window). Negative: overdue. 0 when the file is gone already.
  double headroom_bytes = std::numeric_limits<double>::quiet_NaN();
  /// The same in seconds: expire_seconds minus the estimated age of the checkpoint's file (bytes
  /// written since it was closed / rate). Checkpoint in the newest (open) file: age 0, headroom =
  /// expire_seconds. NaN when unknown (expire 0, no readings, no rate for a closed file). 0 when
  /// the file is gone already.
  double headroom_seconds = std::numeric_limits<double>::quiet_NaN();
  bool checkpoint_file_present = true;  ///< false: the file is gone already (purged)
};

/// Keeps the last readings (total bytes over time) to estimate the write rate (bytes per second
/// over the last ~5 minutes of readings), and computes the headroom for a checkpoint.
///
/// The total is every byte the server wrote since the first reading: for each file the growth since
/// the previous reading, and the whole size of a file newer than the newest file seen before. A
/// file that was purged contributes nothing further and a file that shrank (RESET BINARY LOGS AND
/// GTIDS, RESET MASTER) counts as new, so the total never decreases and the rate is never negative.
/// A reading whose clock is behind the previous one restarts the rate window. Not thread-safe.
class RetentionEstimator {
 public:
  /// The window the write rate is measured over: readings older than this before the newest are
  /// dropped, except the newest of them (the window's start).
  static constexpr uint64_t kRateWindowMs = uint64_t{5} * 60 * 1000;

  void Add(const RetentionReading& reading);
  /// The headroom of a checkpoint at `checkpoint_offset` in `checkpoint_file`, from the newest
  /// reading. Without readings everything is unknown (NaN) and the file counts as present.
  RetentionHeadroom For(const std::string& checkpoint_file, uint64_t checkpoint_offset) const;

  /// Bytes per second over the window; 0 until two readings that are apart in time.
  double WriteRate() const;

 private:
  struct Sample {
    uint64_t at_ms = 0;
    uint64_t total_bytes = 0;
  };
  std::deque<Sample> samples_;  ///< oldest first
  RetentionReading latest_;
  bool have_reading_ = false;
  uint64_t total_bytes_ = 0;
};

}  // namespace chsync::mysql
