#pragma once

// What `chsync verify` asks each database for one table: the compared columns, the chunks and the
// SQL of every question (summaries of a chunk, of its sub-buckets, and its rows). Pure: the
// table's schema, its mapping and the destination's capabilities in, SQL text out (docs/verify.md).
//
// Chunks. A table whose ClickHouse sorting key starts with an integer column is cut in ranges of
// that column ([lo, hi), about --chunk-rows source rows each), which both databases read through
// their primary index. Any other key (text, whose order depends on the source's collation, dates,
// …) is cut in buckets of a hash of the key's canonical text, computed alike on both sides; one
// GROUP BY per side summarises all of them. A table without a key that ClickHouse could sort by
// (a full-row key) is compared as the set of its distinct rows, as ClickHouse keeps them.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clickhouse/capabilities.h"
#include "common/result.h"
#include "schema/table_schema.h"
#include "verify/canonical.h"

namespace chsync::verify {

/// What a pipe does to a table's columns (from its checkpoint or its configuration).
struct ColumnMapping {
  std::vector<std::string> excluded;  ///< source columns not replicated (case-insensitive)
  /// Source column → ClickHouse column (case-insensitive source names).
  std::map<std::string, std::string> renamed;
  /// The table's row filter (table_options' where:, MySQL text), or empty: the source side reads
  /// only the rows it holds for.
  std::string where;
  /// A ClickHouse table shared by several sources (table_options' source_column): the column and
  /// this source's value in it; only those rows are compared. Empty: the whole table.
  std::string source_column;
  std::string source_value;
  /// ClickHouse column → its type at the destination (system.columns), when known: a shared
  /// table's column can be wider than this source's (CanonicalColumn's dest_type).
  std::map<std::string, std::string> dest_types;
};

/// Everything asked about one table.
struct TablePlan {
  std::string source_name;  ///< "db.t" (for messages)
  std::string dest_name;    ///< "db.t" at the destination
  /// Quoted for MySQL: `db`.`t`; with a row filter, the derived table of its rows
  /// ((SELECT * FROM `db`.`t` WHERE (filter)) _chsync_vf).
  std::string source_table;
  std::string dest_table;  ///< quoted for ClickHouse
  /// A ClickHouse condition every question to the destination carries (a shared table: this
  /// source's rows: its counts, chunk and bucket summaries, rows and versions); empty: none.
  std::string dest_filter;
  std::vector<ColumnCanon> columns;  ///< compared columns, in source order
  std::vector<size_t> key;           ///< indexes into `columns` of the sorting key, in key order
  bool full_row = false;             ///< no key: the whole row is the key
  /// The key's first column is an integer: chunks are ranges of it (else hash buckets).
  bool ranged = false;
  std::string range_source_column;  ///< quoted, when ranged
  std::string range_dest_column;
  /// Columns excluded from the comparison by the mapping, and columns not compared exactly, one
  /// line each: "c (DOUBLE): approximate: …".
  std::vector<std::string> notes;

  // SQL fragments, derived from the above.
  std::string source_row_text, dest_row_text;
  std::string source_key_text, dest_key_text;
};

/// The plan of `table` (its source schema) as the pipe replicated it: `mapping`'s excluded
/// columns are left out, renamed ones read from their ClickHouse names; `dest_database` and
/// `dest_table` name the ClickHouse table. kUnsupported when a column cannot be mapped.
Result<TablePlan> PlanTable(const schema::TableSchema& table, const ColumnMapping& mapping,
                            std::string_view dest_database, std::string_view dest_table,
                            const clickhouse::Capabilities& caps, const SourceFlavor& flavor);

/// One chunk: a range [lo, hi) of the key's first column (either end open when unset) for a
/// ranged plan, else bucket `bucket` of `buckets` (one bucket of one: the whole table).
struct Chunk {
  std::optional<std::string> lo, hi;  ///< integer text
  uint64_t bucket = 0;
  uint64_t buckets = 1;

  /// "id in [1000, 2000)", "bucket 3 of 16", "whole table": for messages.
  std::string Describe(std::string_view column) const;
};

/// The WHERE condition (without WHERE) of `chunk` on each side; "1" for the whole table.
std::string SourceChunkCondition(const TablePlan& plan, const Chunk& chunk);
std::string DestChunkCondition(const TablePlan& plan, const Chunk& chunk);

/// Next range boundary: the key's first column at `rows` rows from `lo` (from the start when
/// unset), or no row when fewer remain. Ranged plans only.
std::string SourceNextBoundarySql(const TablePlan& plan, const std::optional<std::string>& lo, uint64_t rows);
/// The smallest value of the key's first column above `value` (when a boundary repeats its start).
std::string SourceNextValueSql(const TablePlan& plan, const std::string& value);

/// One row: COUNT and the sum of the row hashes (MySQL: exact DECIMAL; ClickHouse: UInt64 that
/// wraps; compare them modulo 2^64, ParseSum).
std::string SourceSummarySql(const TablePlan& plan, const Chunk& chunk);
/// The destination's FINAL view without deleted rows.
std::string DestSummarySql(const TablePlan& plan, const Chunk& chunk);
/// Rows (bucket, count, sum) of every hash bucket of `buckets`, for plans that are not ranged.
std::string SourceBucketSummarySql(const TablePlan& plan, uint64_t buckets);
std::string DestBucketSummarySql(const TablePlan& plan, uint64_t buckets);
/// Rows (sub-bucket, count, sum) of `chunk` cut in `subs` sub-buckets by another hash of the key.
std::string SourceSubBucketSql(const TablePlan& plan, const Chunk& chunk, uint64_t subs);
std::string DestSubBucketSql(const TablePlan& plan, const Chunk& chunk, uint64_t subs);
/// The cells of every row of `chunk` in the sub-buckets `which` of `subs` (every row when
/// `which` is empty): one column per plan column. The destination's live rows only (FINAL, not
/// deleted).
std::string SourceRowsSql(const TablePlan& plan, const Chunk& chunk, uint64_t subs,
                          const std::vector<uint64_t>& which);
std::string DestRowsSql(const TablePlan& plan, const Chunk& chunk, uint64_t subs,
                        const std::vector<uint64_t>& which);
/// (key text, latest _chsync_version) of every key of those sub-buckets in the destination,
/// deleted or not, merged or not: whether the pipe wrote a key after a given position.
std::string DestVersionsSql(const TablePlan& plan, const Chunk& chunk, uint64_t subs,
                            const std::vector<uint64_t>& which);

/// A count and a hash sum, compared modulo 2^64.
struct Summary {
  uint64_t count = 0;
  uint64_t sum = 0;

  bool operator==(const Summary&) const = default;
};

/// An unsigned decimal (MySQL's SUM, any length) modulo 2^64; "" and NULL (no rows) are 0.
/// kCorrupt for anything else.
Result<uint64_t> ParseSum(std::string_view text);
/// An unsigned decimal that fits 64 bits; kCorrupt otherwise.
Result<uint64_t> ParseCount(std::string_view text);

/// Buckets whose summaries differ (present on one side only counts as differing), ascending.
std::vector<uint64_t> DifferingBuckets(const std::map<uint64_t, Summary>& source,
                                       const std::map<uint64_t, Summary>& dest);

/// How many sub-buckets to cut a differing chunk of `rows` rows into: about 32 rows each, 1 to 4096.
uint64_t SubBucketsFor(uint64_t rows);

}  // namespace chsync::verify
