#pragma once

// `chsync verify`: compares source tables with their ClickHouse FINAL views chunk by chunk, each
// database computing counts and hash sums of the canonical rows itself (plan.h), narrows differing
// chunks to rows (diff.h), and, given the pipe's state directory, tells the pipe's lag from real
// differences (docs/verify.md). The I/O edge of verify/: it talks to both databases and reads the
// checkpoint (without the state directory's lock, which a running pipe holds).

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "clickhouse/connection.h"
#include "common/result.h"
#include "mysql/connection.h"
#include "policy/mapping.h"
#include "verify/diff.h"

namespace chsync::verify {

struct VerifyOptions {
  std::string tables;         ///< --tables patterns; empty: every non-system table
  std::string dest_database;  ///< empty: named like each source database
  std::string state;          ///< the pipe's state directory; empty: no lag handling, no checkpoint mapping
  /// The pipe's source_name: the value a shared table's source_column holds is "NAME/database".
  std::string source_name;
  const pipe::MappingSet* mappings = nullptr;  ///< table_options of the pipe's configuration, if given
  /// The pipe's datetime_fallback is `string`: on a server without DateTime64, DATETIME/TIMESTAMP
  /// with a fraction are kept as text (clickhouse::Capabilities::datetime_fallback_text).
  bool datetime_fallback_text = false;
  /// The pipe's `json:` is `native` (clickhouse::Capabilities::json_native; table_options' json
  /// applies over it per table).
  bool json_native = false;
  uint64_t chunk_rows = 100'000;
  /// How long a differing chunk waits, in all, for a running pipe to pass the position it was read
  /// at and for its rows to settle.
  unsigned wait_s = 60;
  size_t max_rows_shown = 20;  ///< differing rows printed per table (all are counted)
  bool progress = false;       ///< a progress line on `progress_out` (a terminal)
  std::FILE* out = stdout;     ///< differences and figures
  std::FILE* progress_out = stderr;
  const std::atomic<bool>* stop = nullptr;
  /// Chunks checked at once (1 or 2), each lane with its own pair of connections: a second source
  /// connection like `source`'s and a destination connection from `open_dest`. One lane when
  /// `open_dest` is unset or the destination is embedded (one process owns a chDB store).
  unsigned parallel = 2;
  std::function<Result<std::unique_ptr<clickhouse::Connection>>()> open_dest;
};

/// What was found for one table.
struct TableResult {
  std::string source;  ///< db.t
  std::string dest;    ///< db.t at the destination
  bool equal = true;
  uint64_t source_rows = 0, dest_rows = 0;
  uint64_t chunks = 0, differing_chunks = 0;
  /// Chunks that differed when first read and were equal once the pipe had caught up (lag).
  uint64_t caught_up_chunks = 0;
  uint64_t differing_rows = 0;
  /// Differences that stayed possibly the pipe's lag until the wait ended.
  uint64_t unsettled_rows = 0;
  /// Time spent in each database's queries (summed over lanes), and the table's wall time.
  double source_seconds = 0, dest_seconds = 0, wall_seconds = 0;
  std::vector<std::string> notes;
};

struct VerifyResult {
  std::vector<TableResult> tables;
  bool equal() const;
};

/// Compares every table `options.tables` selects at `source` with its table at `dest`, printing
/// differences, notes and figures to options.out as it goes. Errors: the connection or query that
/// failed (a table whose destination is missing is a difference, not an error).
Result<VerifyResult> Verify(mysql::Connection& source, clickhouse::Connection& dest,
                            const VerifyOptions& options);

}  // namespace chsync::verify
