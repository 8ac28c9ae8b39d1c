#pragma once

// Row versions only grow (docs/delivery.md, "Row versions"): the one owner of that guarantee.
//
// A row version is `counted sequence << 44 | offset` (row_version.h), the counted sequence being
// the binlog file's number plus the position's `sequence_base`. Within one lineage of binlog files
// — one server, numbering on from the file the pipe began in — that grows with binlog order and a
// replay numbers every row as the first pass did. Across a change of lineage it does not: another
// server behind the same URL (a proxy, a VIP, DNS), a failover to a replica whose files are
// numbered lower, RESET MASTER, a server restored from a backup. There the pipe begins a new
// *epoch*: a new sequence base under which the first file counts one above every sequence ever
// counted, so that every later version is above every version ever sent to ClickHouse.
//
// "Ever sent" must survive a kill -9 that came after rows past the saved checkpoint were
// acknowledged (batches of an open transaction, the rows sent at SIGTERM, rotations): the
// checkpoint alone is not enough. So the high-water mark of counted sequences is kept in its own
// file, `STATE/lineage.json`, and made durable (write temp, fsync, rename, fsync directory) before
// the first row of a higher sequence is numbered — once per binlog file, not per row.
//
// Within an epoch nothing changes: a replay from a checkpoint under the same base numbers rows as
// before. A crash after a new epoch began but before a checkpoint recorded it begins another
// epoch on the next run, above the first one's: versions still grow.
//
// Not thread-safe: the stream's thread numbers rows.

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace chsync::pipe {

class Lineage {
 public:
  static constexpr std::string_view kFile = "lineage.json";

  /// Reads DIR/lineage.json (a high-water mark of 0 when there is none: a new state directory, or
  /// one from before this file existed). A damaged file is kCorrupt, naming it.
  static Result<Lineage> Load(const std::string& dir);

  /// The counted sequence of binlog `file` under `base`, made durable as the high-water mark first
  /// when it is above it. kUnsupported when it falls outside 1..kMaxFileSequence (the message says
  /// that a resync into fresh tables is needed); kIo (from the state directory) when the mark
  /// cannot be saved.
  Result<uint32_t> Count(std::string_view file, int64_t base);

  /// The base of a new epoch beginning in binlog `file`: under it, `file` counts one above the
  /// high-water mark. Not saved: the first row numbered under it raises the mark (Count).
  Result<int64_t> EpochBase(std::string_view file) const;

  /// Raises the mark to at least `counted` (made durable when it moves): a state directory from
  /// before lineage.json takes its checkpoint's sequence.
  Status Raise(uint32_t counted);

  /// The highest counted sequence any row was numbered under.
  uint32_t high_water() const { return high_water_; }

  /// Before rows are queued for ClickHouse: `gtids` (the GTIDs of every transaction read so far,
  /// the open one too) is made durable unless it is what was saved last. A move to another server
  /// then checks that server against the transactions whose rows may be in ClickHouse, not only
  /// against the saved checkpoint's (docs/failover.md: a new primary that lacks them is refused).
  /// One fsync per batch, none when no transaction began since the last.
  Status NoteSent(const std::string& gtids);
  /// What NoteSent saved last ("" when nothing was sent since the state directory began, or it is
  /// from before this field).
  const std::string& sent_gtids() const { return sent_gtids_; }

 private:
  explicit Lineage(std::string path) : path_(std::move(path)) {}
  Status Save(uint32_t mark, const std::string& sent);

  std::string path_;
  uint32_t high_water_ = 0;
  std::string sent_gtids_;
};

}  // namespace chsync::pipe
