#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace chsync::pipe {

/// One schema change the pipe saw and what it did about it.
struct SchemaChangeRecord {
  uint64_t at_ms = 0;                ///< when the pipe applied it (wall clock, ms since the epoch)
  std::string position;              ///< "binlog.000003:1234"
  std::string table;                 ///< "db.t"
  std::string statement;             ///< the source statement (shortened)
  std::vector<std::string> actions;  ///< what was done / omitted and why

  bool operator==(const SchemaChangeRecord&) const = default;
};

/// What a running (or stopped) pipe tells `chsync status`, beyond the checkpoint: kept in
/// `DIR/status.json`, rewritten atomically at each checkpoint and when the pipe stops.
struct RunStatus {
  std::string phase;  ///< "snapshot", "streaming", "stopped", "failed"
  int pid = 0;
  uint64_t updated_at_ms = 0;
  std::string position;       ///< last applied and checkpointed position
  std::string gtid_position;  ///< its GTIDs: MariaDB's position, MySQL's executed set ("" without)
  /// The server read from: "server_id 11 at 127.0.0.1:3306".
  std::string source;
  /// Times this process copied every table again after a binlog gap (on_binlog_gap: resync).
  uint64_t binlog_gap_resyncs = 0;
  /// Source commit time (binlog event timestamp, seconds) of the last applied transaction; 0 when none.
  uint64_t last_event_time = 0;
  uint64_t rows_applied = 0;  ///< rows written by the stream since this process started
  uint64_t transactions = 0;  ///< transactions applied since this process started
  std::string last_error;     ///< the error that stopped the pipe, if any
  /// Where rows go: "http://host:8123/", or "cluster sharded (…), writing to http://host:8123/".
  std::string destination;
  std::vector<SchemaChangeRecord> schema_changes;  ///< the most recent ones, oldest first (≤ 100)
  /// The schema-change policies in force (PolicySet::Describe): the defaults, then per-table ones.
  std::vector<std::string> policies;
  /// Cascading foreign keys of replicated tables, which chsync does not follow
  /// (mysql::CascadingForeignKey::Describe), read when the pipe started.
  std::vector<std::string> cascades;

  bool operator==(const RunStatus&) const = default;
};

std::string RunStatusToJson(const RunStatus& status);
Result<RunStatus> RunStatusFromJson(std::string_view json);

/// Reads DIR/status.json; nullopt when there is none.
Result<std::optional<RunStatus>> ReadRunStatus(const std::string& dir);
/// Writes DIR/status.json atomically.
Status WriteRunStatus(const std::string& dir, const RunStatus& status);

}  // namespace chsync::pipe
