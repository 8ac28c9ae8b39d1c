#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "binlog/value.h"
#include "common/result.h"
#include "mysql/connection.h"

namespace chsync::mysql {

/// One primary-key column value carried from one snapshot chunk to the next, and through the
/// checkpoint (KeyToJson/KeyFromJson).
struct KeyValue {
  enum class Kind { kInt, kUint, kDouble, kText, kTemporal };
  Kind kind = Kind::kInt;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  /// kText: the value's bytes (DECIMAL digits, strings as the server sent them).
  /// kTemporal: "YYYY-MM-DD HH:MM:SS.ffffff", "YYYY-MM-DD" or "[-]HHH:MM:SS.ffffff".
  std::string text;

  bool operator==(const KeyValue&) const = default;
};
using Key = std::vector<KeyValue>;

/// JSON text of a key (stable; strings hex-encoded so that any bytes survive).
std::string KeyToJson(const Key& key);
/// Parses KeyToJson's output; kCorrupt naming what is wrong.
Result<Key> KeyFromJson(std::string_view json);

/// What to read from one table.
struct SnapshotQuery {
  std::string database;
  std::string table;
  /// Columns in destination order.
  std::vector<std::string> columns;
  /// How to read a column.
  enum class Read {
    kValue,      ///< the value itself
    kEnumIndex,  ///< an ENUM's 1-based index (`c`+0), as the binlog carries it: ValueKind::kEnum
    kSetBits,    ///< a SET's member bitmap (`c`+0), as the binlog carries it: ValueKind::kSet
    /// The column's 16 stored bytes, CAST(`c` AS BINARY(16)): a MariaDB UUID (RFC 4122 byte
    /// order) or INET6 (network order) as the binlog carries it (kString), not its text form.
    kBytes16,
    /// The 4 stored bytes of a MariaDB INET4 (network order), CAST(`c` AS BINARY(4)).
    kBytes4,
  };
  /// Per column (same size as `columns`, or empty: all kValue).
  std::vector<Read> reads;
  /// Primary-key columns in key order; each must be in `columns`. Empty: the table has no key and
  /// is read in one pass (it cannot be resumed part-way).
  std::vector<std::string> key_columns;
  /// Rows per chunk (ignored without a key).
  uint64_t chunk_rows = 100000;
  /// A condition the rows read must meet (a row filter, SQL text), or empty: every row.
  std::string where;
};

/// A row as decoded values, one per column of the query. Views inside are valid only during the
/// callback.
using RowCallback = std::function<Status(const std::vector<binlog::Value>& row)>;

/// Reads a table in primary-key order, chunk by chunk (keyset pagination: each chunk is one
/// statement, so one short consistent read, starting after the last key of the previous chunk).
/// Values come through the binary protocol, exact for every type (FLOAT/DOUBLE bits, DECIMAL
/// digits, fractional seconds), as binlog::Value like the stream's rows: integers signed or
/// unsigned per the column, DECIMAL as text, DATE/DATETIME/TIME as fields, TIMESTAMP as UTC epoch
/// seconds (the session time zone is set to UTC), BIT as its bits, ENUM/SET per `reads`,
/// strings and blobs as bytes (text converted to utf8mb4 by the server), JSON as text, GEOMETRY as
/// SRID + WKB.
///
/// Not thread-safe; one reader per connection at a time.
class SnapshotReader {
 public:
  /// Prepares the statements. Errors name the table.
  static Result<std::unique_ptr<SnapshotReader>> Open(Connection& conn, SnapshotQuery query);
  ~SnapshotReader();
  SnapshotReader(const SnapshotReader&) = delete;
  SnapshotReader& operator=(const SnapshotReader&) = delete;

  struct Chunk {
    uint64_t rows = 0;
    /// Key of the last row read (pass it to the next ReadChunk); empty when no row was read.
    Key last_key;
    /// True when this chunk read fewer rows than chunk_rows: the table is done.
    bool last = false;
  };

  /// Reads the rows whose key is greater than `after` (the first chunk when `after` is empty),
  /// at most chunk_rows of them (all rows for a table without key), calling `on_row` for each.
  /// An error returned by `on_row` stops the read and is returned.
  Result<Chunk> ReadChunk(const Key& after, const RowCallback& on_row);

 private:
  struct Impl;
  explicit SnapshotReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace chsync::mysql
