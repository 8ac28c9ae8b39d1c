#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "clickhouse/capabilities.h"
#include "clickhouse/connection.h"
#include "clickhouse/ddl.h"
#include "clickhouse/table_writer.h"
#include "common/result.h"
#include "mysql/connection.h"
#include "schema/table_schema.h"
#include "state/checkpoint.h"

namespace chsync::pipe {

/// One table to copy.
struct SnapshotJob {
  /// The source table's schema as of the stream start: the snapshot reads exactly these columns,
  /// even when the table changed since (the stream applies those changes when it reaches them).
  schema::TableSchema schema;
  /// The destination table's layout (WriterSchema of the table's DestinationTable): the columns
  /// that get values first, then any kept columns (written as NULL).
  schema::TableSchema writer_schema;
  /// Destination database (the table has the source table's name).
  clickhouse::DdlTarget target;
  /// A table shared with other sources: the writer's source value and types (pipe/fan_in.h).
  clickhouse::WriterOptions writer_options;
  /// Where the copy is (from the checkpoint): kDone jobs are skipped, kCopying ones continue
  /// after last_key.
  TableSnapshot progress;
  /// information_schema TABLE_ROWS, for the progress display (an estimate).
  uint64_t row_estimate = 0;
  /// information_schema AVG_ROW_LENGTH (bytes a row takes on disk, an estimate; 0: unknown): with
  /// SnapshotOptions::chunk_max_bytes it bounds a chunk's rows.
  uint64_t avg_row_bytes = 0;
  /// What the table's types are mapped under (the pipe's capabilities with its table_options'
  /// json:); unset: SnapshotOptions::caps.
  std::optional<clickhouse::Capabilities> caps;
  /// The table's row filter (table_options' where:, a MySQL condition over its columns): only the
  /// rows it holds for are copied. Empty: every row.
  std::string where;
};

struct SnapshotOptions {
  /// Tables copied at once (each with its own source and destination connection).
  unsigned parallelism = 4;
  /// Rows per primary-key range chunk: each chunk is one SELECT (one short consistent read) and
  /// one INSERT.
  uint64_t chunk_rows = 100000;
  /// A chunk of a table whose rows are large holds fewer rows, so that it takes about this many
  /// bytes (from the table's AVG_ROW_LENGTH); 0: rows only. Two chunks of a table are in memory at
  /// once (one being read, one being inserted).
  uint64_t chunk_max_bytes = 0;
  mysql::ConnectOptions source;
  /// Destination URL and options: each worker opens its own Connection.
  std::string dest_url;
  clickhouse::ConnectOptions dest;
  clickhouse::Capabilities caps;
  /// Redraw a per-table progress display on stderr (a terminal); otherwise log a progress line
  /// every `log_interval`.
  bool terminal = false;
  std::chrono::milliseconds log_interval{10'000};
};

/// Rows per chunk of a table whose rows take `avg_row_bytes` (0: unknown): `chunk_rows`, fewer when
/// that many rows would take more than `chunk_max_bytes` (0: no bound), at least 1.
uint64_t ChunkRowsFor(uint64_t chunk_rows, uint64_t chunk_max_bytes, uint64_t avg_row_bytes);

/// Called after a chunk of a table was acknowledged by ClickHouse, with the table's new progress
/// (the caller saves it in the checkpoint). Calls are serialized (never concurrent). An error
/// stops the snapshot and is returned by RunSnapshot.
using ChunkDone = std::function<Status(size_t job_index, const TableSnapshot& progress)>;

/// Copies every job that is not kDone, `parallelism` tables at a time, chunk by chunk in key order
/// (tables without a usable key in one pass). Rows carry version 0 and _chsync_is_deleted = 0.
/// Within a table, reading the next chunk from the source overlaps the insert of the previous one.
/// Retries lost connections at either end with backoff; other errors stop all workers and the
/// first is returned, naming the table (and the key range). When `stop` becomes true, workers
/// finish their current chunk and RunSnapshot returns kOk with the remaining jobs unfinished
/// (progress says where each is). `jobs[i].progress` is updated as chunks complete.
Status RunSnapshot(std::vector<SnapshotJob>& jobs, const SnapshotOptions& options, const ChunkDone& on_chunk,
                   const std::atomic<bool>& stop);

}  // namespace chsync::pipe
