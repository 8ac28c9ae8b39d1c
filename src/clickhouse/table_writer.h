#pragma once

#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "clickhouse/capabilities.h"
#include "clickhouse/connection.h"
#include "clickhouse/ddl.h"
#include "clickhouse/row_binary.h"
#include "clickhouse/shard_router.h"
#include "common/result.h"
#include "schema/table_schema.h"

namespace chsync::clickhouse {

/// What a writer adds to the rows it is given (the default: nothing).
struct WriterOptions {
  /// Many source tables into one destination table (docs/mapping.md, "Many sources into one
  /// table"): the column that holds `source_value` in every row this writer sends.
  std::string source_column;
  std::string source_value;
  /// Per column of the schema: the type the destination table's column has when it is not the
  /// one MapColumn gives the source column (a merged table's column widened for another source);
  /// empty, or nullopt for a column: MapColumn's.
  std::vector<std::optional<MappedType>> types;
};

/// Collects the rows for one destination table and sends them as one RowBinary INSERT: the source
/// columns in schema order, then _chsync_version and _chsync_is_deleted (_chsync_synced_at takes
/// its DEFAULT). Build a new TableWriter when the table's schema changes. Not thread-safe.
class TableWriter {
 public:
  /// Fails (kUnsupported) when a column cannot be mapped for `caps`.
  /// `options`: a source column's value to add to every row, and destination types to encode
  /// into (see WriterOptions).
  static Result<TableWriter> Create(const schema::TableSchema& table, const Capabilities& caps,
                                    const DdlTarget& target, const WriterOptions& options = {});

  /// Appends one row: `values[i]` for table.columns[i] (see Cell for what each type takes).
  /// On error nothing is appended; the error names the column.
  Status Append(std::span<const Cell> values, uint64_t version, bool is_deleted);

  /// From now on, collects each row for its shard (`router`) to be sent to that shard's table
  /// (the same table name in `local_database`, on every shard; local_prefix() inserts into it);
  /// see TakeShardData(). Rows collected so far stay where they are.
  void RouteTo(ShardRouter router, std::string_view local_database);
  bool routed() const { return router_.has_value(); }
  const std::string& local_prefix() const { return local_prefix_; }

  size_t rows() const;
  /// A column is ClickHouse JSON (Encoding::kJson): the INSERT carries the settings for it.
  bool HasJson() const;
  size_t bytes() const;
  /// Makes room for `bytes` of encoded rows (unrouted writers), so that filling a large batch does
  /// not regrow and copy its buffer on the way; the room stays across Flush.
  void Reserve(size_t bytes) {
    if (encoders_.size() == 1) encoders_[0].Reserve(bytes);
  }
  /// The rows of the largest INSERT the collected rows make: rows(), or when routed the most that
  /// one shard has (what batch limits measure: the size of a part on the server).
  size_t batch_rows() const;
  /// The values clamped into their ClickHouse type's range in the rows appended since the last call
  /// (RowBinaryEncoder::TakeClamped, over every shard's encoder).
  ClampCounts TakeClamped() {
    ClampCounts total;
    for (RowBinaryEncoder& e : encoders_) total += e.TakeClamped();
    return total;
  }
  /// The mapped type of each source column, in schema order.
  const std::vector<MappedType>& types() const { return types_; }
  /// "`db`.`t`": the table the rows go to; and the INSERT's columns: the table's columns in schema
  /// order, then the version and the deletion flag.
  const std::string& qualified() const { return qualified_; }
  const std::vector<std::string>& names() const { return names_; }
  /// "INSERT INTO `db`.`t` (…) FORMAT RowBinary".
  const std::string& insert_prefix() const { return prefix_; }

  /// Sends the collected rows as one INSERT and clears them on success. On failure the rows stay,
  /// so the caller can retry the same batch (IsRetryable) or give up; the batch is either stored
  /// whole or not at all as long as it has at most 1,048,576 rows (ClickHouse's
  /// max_insert_block_size). No rows: nothing is sent.
  Status Flush(Connection& connection, const RequestOptions& request = {});

  /// Moves the collected rows out (RowBinary for insert_prefix(); when routed, every shard's rows
  /// one after another, which the Distributed table routes the same way), leaving the writer empty.
  std::string TakeData();
  /// When routed(): each shard that has rows with its rows (RowBinary for local_prefix()), in
  /// shard order, leaving the writer empty.
  std::vector<std::pair<size_t, std::string>> TakeShardData();

 private:
  TableWriter(std::vector<MappedType> types, std::string table, std::vector<std::string> names, bool source);

  std::vector<MappedType> types_;
  std::string table_;
  std::string qualified_;
  std::vector<std::string> names_;  ///< of the INSERT's columns
  std::string prefix_;
  std::string local_prefix_;
  std::optional<ShardRouter> router_;
  std::vector<RowBinaryEncoder> encoders_;  ///< one, or one per shard when routed
  std::vector<Cell> row_;
  std::string source_value_;  ///< WriterOptions::source_value, sent after _chsync_is_deleted
  bool has_source_ = false;
};

}  // namespace chsync::clickhouse
