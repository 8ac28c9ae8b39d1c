#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"
#include "pipe/schema_policy.h"

namespace chsync::pipe {

/// Everything `chsync run`/`resync` needs, from a configuration file (YAML) and flags. Flags win
/// over the file. A complete example with every key is in docs/configuration.md.
struct PipeConfig {
  std::string source;         ///< mysql://USER[:PASSWORD]@HOST[:PORT]
  std::string dest;           ///< http(s)://USER[:PASSWORD]@HOST[:PORT] or file:PATH
  std::string tables;         ///< --tables patterns; empty: every non-system table
  std::string state;          ///< the state directory
  std::string dest_database;  ///< empty: named like each source database
  uint32_t server_id = 0;     ///< replica id; 0: derived from the state directory path

  unsigned snapshot_parallelism = 4;      ///< tables/chunks copied at once
  uint64_t snapshot_chunk_rows = 100000;  ///< rows per primary-key range chunk

  uint64_t batch_max_rows = 100000;  ///< flush a table's batch at this many rows…
  uint64_t batch_max_age_ms = 1000;  ///< …or when its oldest row waited this long
  /// …or when its rows take this many bytes; also the bound of all tables' unsent rows together,
  /// and (twice it) of the batches queued for ClickHouse: what bounds the pipe's memory.
  uint64_t batch_max_bytes = 32ull << 20;

  /// How often one ClickHouse statement or insert is tried before the pipe gives it up, and the
  /// longest back-off between tries. When it gives up, the pipe reads again from its last
  /// checkpoint, with the schema state saved there, after its own back-off (capped the same way).
  int retry_attempts = 12;
  uint64_t retry_max_backoff_ms = 30000;
  /// Exit after this long without a saved checkpoint while failures repeat; 0: keep trying.
  uint64_t retry_give_up_after_ms = 0;

  /// Create ClickHouse tables that fsync every inserted part (fsync_after_insert, ClickHouse ≥ 21.1), so
  /// that a checkpoint never runs ahead of what a power loss of the ClickHouse host would keep.
  bool durable_inserts = false;

  std::string log_level = "info";  ///< debug, info, warn, error

  /// What to do about each kind of schema change, per table (`schema_changes:`, --schema-policy).
  PolicySet policies;
};

/// Reads a YAML configuration file into `config` (keys present in the file override the defaults).
/// Unknown keys, wrong types and out-of-range values are kConfig errors naming the file, line and key.
Status LoadConfigFile(const std::string& path, PipeConfig& config);

/// Same as LoadConfigFile on YAML text; `origin` names it in errors.
Status LoadConfigText(std::string_view yaml, const std::string& origin, PipeConfig& config);

/// Checks a merged configuration: required settings present, values in range. kConfig errors
/// say which setting and how to give it (flag and file key).
Status Validate(const PipeConfig& config);

}  // namespace chsync::pipe
