#pragma once

// The schema applier: a statement's schema changes carried to ClickHouse. For each table the
// statement concerns, the plan its policies make (PlanTableChanges) runs on the destination and
// the table set follows — a table created, dropped, renamed (each step of a RENAME journaled, so a
// crash between two steps replays neither twice), or copied again online — and the change is
// recorded (SchemaHistory). What is the pipe's to do (park a table, start or stop a copy, make a
// table's writer) it asks of the ApplierHost.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "binlog/event.h"
#include "common/result.h"
#include "pipe/applier_host.h"
#include "pipe/checkpointer.h"
#include "pipe/destination.h"
#include "pipe/holds.h"
#include "pipe/pipeline.h"
#include "pipe/schema_history.h"
#include "pipe/source_link.h"
#include "pipe/table_set.h"
#include "position/versions.h"
#include "schema/lexer.h"
#include "schema/tracker.h"
#include "state/checkpoint.h"

namespace chsync::pipe {

/// The pipe's collaborators the schema applier works on (each outlives it).
struct SchemaParts {
  /// The policies (a renamed table's keyless refusal).
  const PipeConfig& config;
  SourceLink& source;
  schema::Tracker& tracker;
  /// Its list of copied tables, and the statement's position for the journal.
  Checkpoint& checkpoint;
  TableSet& set;
  Destination& destination;
  const Checkpointer& checkpointer;
  Holds& holds;
  std::optional<Versions>& versions;
  SchemaHistory& history;
};

/// The statement whose changes are applied.
struct StatementAt {
  const binlog::Event& event;
  /// Its text, trimmed.
  const std::string& text;
  /// It ran in strict mode (its sql_mode, not ALTER IGNORE).
  bool strict_mode = true;
  /// The committed position's sequence base (Versions::Sequence), for the names of tables moved aside.
  int64_t sequence_base = 0;
};

/// The error of a table whose changes chsync cannot follow: what happened, where (`event`'s binlog
/// position), and the `chsync resync` that copies it again.
Error ResyncError(const std::string& table, const std::string& what, const binlog::Event& event);

class SchemaApplier {
 public:
  SchemaApplier(SchemaParts parts, ApplierHost& host) : parts_(parts), host_(host) {}

  /// Adds a kTableRenamed change for each table of a RENAME TABLE statement `sql` that the tracker
  /// does not track (so reported nothing about) and that lands on a replicated name.
  void AddUntrackedRenames(std::string_view sql, std::string_view database, const schema::LexOptions& lex,
                           schema::ApplyResult& applied) const;
  /// Whether `applied` concerns a replicated table (not copied again after `event`), one about to
  /// be, one dropped whose ClickHouse table is kept, or a migration tool's leftover.
  bool Concerns(const binlog::Event& event, const schema::ApplyResult& applied) const;
  /// Applies the changes of `statement`. The caller first sends every row before it and saves a
  /// checkpoint at its start (a crash while they run then replays just the statement), and saves
  /// the tracked schemas with the next checkpoint: a table renamed from one chsync never tracked is
  /// read from the source into the tracker here.
  Status Apply(const StatementAt& statement, const schema::ApplyResult& applied);

 private:
  /// The kTableRenamed changes of a statement, in order: ClickHouse tables renamed along.
  Status ApplyRenames(const StatementAt& statement, const std::vector<schema::SchemaChange>& changes);
  /// The changes of one source table of a shared ClickHouse table (table_options' source_column,
  /// pipe/fan_in.h): the shared table gains what the source brings and loses nothing; a DROP TABLE
  /// keeps the source's rows, a TRUNCATE (or a table created anew) deletes them alone.
  Status ApplyShared(const StatementAt& at, const std::vector<schema::SchemaChange>& changes,
                     const std::string& key, TableState* table, const PolicyContext& context);
  /// A source table of a shared table leaves it at `at` (dropped, or renamed to a name that does not
  /// feed it): its copy in progress stops, and when that copy had not finished, the part of it in
  /// the shared table is deleted at the statement's version (the source's earlier rows went when the
  /// copy began, and the rest can no longer be read). `lines` gains what was done. Finished copies
  /// and tables not being copied keep their rows (a DROP TABLE is kept).
  Status LeaveShared(const StatementAt& at, const std::string& key, TableState& table,
                     const EffectiveMapping& mapping, const clickhouse::DdlTarget& target,
                     std::vector<std::string>& lines);
  /// Whether `table` was copied again from a point after `event` (its copy holds the change).
  static bool CopiedAfter(const TableState& table, const binlog::Event& event);

  SchemaParts parts_;
  ApplierHost& host_;
  /// Shared source tables whose copy an online migration's cut-over stopped when it renamed them
  /// to their leftover name (`t` → `_t_del`): the shadow renamed onto the name is copied again.
  /// Kept in memory across the statements of a two-step cut-over (a restart between them loses it).
  std::set<std::string> cut_short_;
};

}  // namespace chsync::pipe
