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
