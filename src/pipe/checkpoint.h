#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace chsync::pipe {

/// Where replication resumes: the start of the first event not yet applied, always at a
/// transaction boundary.
struct SourcePosition {
  std::string file;       ///< binlog file name, e.g. "binlog.000042"
  uint64_t position = 0;  ///< byte offset in that file (64-bit: files may exceed 4 GiB)
  std::string gtid_set;   ///< MySQL GTID set or MariaDB GTID position at that point; may be empty

  bool operator==(const SourcePosition&) const = default;
};

/// How far the snapshot of one table got.
struct TableSnapshot {
  enum class State { kPending, kCopying, kDone };
  std::string database;
  std::string table;
  State state = State::kPending;
  /// Primary-key value of the last row of the last acknowledged chunk, as JSON text (an array of
  /// the key columns' values); empty before the first chunk.
  std::string last_key;
  uint64_t rows_copied = 0;

  bool operator==(const TableSnapshot&) const = default;
};

/// Everything a restart needs, saved only after ClickHouse acknowledged all it describes.
struct Checkpoint {
  /// Position from which streaming began (recorded before the snapshot read its first row).
  SourcePosition stream_start;
  /// Position to resume streaming from.
  SourcePosition resume;
  /// The tracked schemas as of `resume`, in schema::Tracker's text form.
  std::string schemas;
  std::vector<TableSnapshot> snapshot;
  /// Wall-clock time of the save, milliseconds since the epoch (for `chsync status`).
  uint64_t saved_at_ms = 0;

  bool operator==(const Checkpoint&) const = default;
};

/// Serializes to the JSON document stored on disk (stable key order, format version 1).
std::string ToJson(const Checkpoint& checkpoint);
/// Parses ToJson's output; errors (kCorrupt) name the field.
Result<Checkpoint> FromJson(std::string_view json);

}  // namespace chsync::pipe
