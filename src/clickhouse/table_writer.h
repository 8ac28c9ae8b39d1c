#pragma once

#include <span>
#include <string>
#include <vector>

#include "clickhouse/capabilities.h"
#include "clickhouse/connection.h"
#include "clickhouse/ddl.h"
#include "clickhouse/row_binary.h"
#include "common/result.h"
#include "schema/table_schema.h"

namespace chsync::clickhouse {

/// Collects the rows for one destination table and sends them as one RowBinary INSERT: the source
/// columns in schema order, then _chsync_version and _chsync_is_deleted (_chsync_synced_at takes
/// its DEFAULT). Build a new TableWriter when the table's schema changes. Not thread-safe.
class TableWriter {
 public:
  /// Fails (kUnsupported) when a column cannot be mapped for `caps`.
  static Result<TableWriter> Create(const schema::TableSchema& table, const Capabilities& caps,
                                    const DdlTarget& target);

  /// Appends one row: `values[i]` for table.columns[i] (see Cell for what each type takes).
  /// On error nothing is appended; the error names the column.
  Status Append(std::span<const Cell> values, uint64_t version, bool is_deleted);

  size_t rows() const { return encoder_.rows(); }
  size_t bytes() const { return encoder_.data().size(); }
  /// The mapped type of each source column, in schema order.
  const std::vector<MappedType>& types() const { return types_; }
  /// "INSERT INTO `db`.`t` (…) FORMAT RowBinary".
  const std::string& insert_prefix() const { return prefix_; }

  /// Sends the collected rows as one INSERT and clears them on success. On failure the rows stay,
  /// so the caller can retry the same batch (IsRetryable) or give up; the batch is either stored
  /// whole or not at all as long as it has at most 1,048,576 rows (ClickHouse's
  /// max_insert_block_size). No rows: nothing is sent.
  Status Flush(Connection& connection, const RequestOptions& request = {});

  /// Moves the collected rows out (RowBinary for insert_prefix()) to be sent by someone else,
  /// leaving the writer empty.
  std::string TakeData() { return encoder_.TakeData(); }

 private:
  TableWriter(std::vector<MappedType> types, std::string prefix);

  std::vector<MappedType> types_;
  std::string prefix_;
  RowBinaryEncoder encoder_;
  std::vector<Cell> row_;
};

}  // namespace chsync::clickhouse
