// A statement's schema changes carried to ClickHouse (schema_applier.h).

#include "pipe/schema_applier.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "common/log.h"
#include "metrics/pipe_metrics.h"
#include "mysql/binlog_stream.h"
#include "pipe/fan_in.h"
#include "pipe/history.h"
#include "pipe/names.h"
#include "policy/ddl_policy.h"
#include "schema/parser.h"

namespace chsync::pipe {
namespace {

/// Whether a copy into a table ran to its end (stopped or failed copies did not).
bool CopyFinished(Rebuilder& rebuild) {
  if (!rebuild.finished || !rebuild.result.ok()) return false;
  std::lock_guard<std::mutex> lock(rebuild.mutex);
  return rebuild.state.progress.state == TableSnapshot::State::kDone;
}

}  // namespace

Error ResyncError(const std::string& table, const std::string& what, const binlog::Event& event) {
  return Error(ErrorKind::kUnsupported,
               fmt::format("table {}: {} (binlog position {}). Run `chsync resync --table {}` with the same "
                           "--source, --dest and --state to copy the table again",
                           table, what, Coordinate(event.file, event.position), table));
}

void SchemaApplier::AddUntrackedRenames(std::string_view sql, std::string_view database,
                                        const schema::LexOptions& lex, schema::ApplyResult& applied) const {
  // The tracker reports renames of the tables it tracks only. A table it never saw (created
  // before the pipe started, outside --tables) renamed onto a replicated name must be copied.
  if (sql.size() < 6 || !schema::EqualsIgnoreCase(sql.substr(0, 6), "RENAME")) return;
  auto statement = schema::ParseStatement(sql, lex);
  if (!statement.ok() || statement->kind != schema::StatementKind::kRenameTable) return;
  for (const auto& [from, to] : statement->renames) {
    schema::TableName source{from.database.empty() ? std::string(database) : from.database, from.name};
    schema::TableName target{to.database.empty() ? std::string(database) : to.database, to.name};
    bool reported =
        std::any_of(applied.changes.begin(), applied.changes.end(), [&](const schema::SchemaChange& c) {
          return c.kind == schema::SchemaChange::Kind::kTableRenamed &&
                 c.old_table.database == source.database && c.old_table.name == source.name;
        });
    if (reported || !parts_.set.ShouldReplicate(target.database, target.name)) continue;
    schema::SchemaChange change;
    change.kind = schema::SchemaChange::Kind::kTableRenamed;
    change.old_table = source;
    change.table = target;
    applied.changes.push_back(std::move(change));
  }
}

bool SchemaApplier::Concerns(const binlog::Event& event, const schema::ApplyResult& applied) const {
  TableSet& set = parts_.set;
  for (const schema::SchemaChange& change : applied.changes) {
    for (const schema::TableName* name : {&change.table, &change.old_table}) {
      if (name->name.empty()) continue;
      std::string key = TableKey(name->database, name->name);
      auto it = set.tables().find(key);
      if ((it != set.tables().end() && !CopiedAfter(*it->second, event)) || set.dropped().contains(key) ||
          set.ShouldReplicate(name->database, name->name) ||
          set.IsMigrationLeftover(name->database, name->name)) {
        return true;
      }
    }
  }
  return false;
}

bool SchemaApplier::CopiedAfter(const TableState& table, const binlog::Event& event) {
  return table.stream_from &&
         mysql::CompareCoordinates({std::string(event.file), event.position},
                                   {table.stream_from->file, table.stream_from->position}) < 0;
}

Status SchemaApplier::Apply(const StatementAt& at, const schema::ApplyResult& applied) {
  TableSet& set = parts_.set;
  Checkpoint& checkpoint = parts_.checkpoint;
  Destination& destination = parts_.destination;
  const binlog::Event& event = at.event;
  const std::string& statement = at.text;
  const std::string position = Coordinate(event.file, event.position);
  std::vector<schema::SchemaChange> rest;
  std::set<std::string> replaced;
  bool renames = false;
  for (const schema::SchemaChange& change : applied.changes) {
    if (change.kind == schema::SchemaChange::Kind::kTableRenamed) renames = true;
    if (change.kind == schema::SchemaChange::Kind::kTableReplaced)
      replaced.insert(TableKey(change.table.database, change.table.name));
  }
  if (renames) CHSYNC_RETURN_IF_ERROR(ApplyRenames(at, applied.changes));
  for (const schema::SchemaChange& change : applied.changes) {
    if (change.kind == schema::SchemaChange::Kind::kTableRenamed ||
        change.kind == schema::SchemaChange::Kind::kTableReplaced ||
        replaced.contains(TableKey(change.table.database, change.table.name))) {
      continue;  // the ClickHouse table moved along with the source table (ApplyTableRenames)
    }
    rest.push_back(change);
  }

  std::vector<std::string> order;
  std::map<std::string, std::vector<schema::SchemaChange>> groups;
  for (const schema::SchemaChange& change : rest) {
    std::string key = TableKey(change.table.database, change.table.name);
    if (!groups.contains(key)) order.push_back(key);
    groups[key].push_back(change);
  }
  for (const std::string& key : order) {
    const std::vector<schema::SchemaChange>& changes = groups[key];
    auto it = set.tables().find(key);
    TableState* table = it == set.tables().end() ? nullptr : it->second.get();
    const schema::TableName& name = changes.front().table;
    bool created = std::any_of(changes.begin(), changes.end(), [](const schema::SchemaChange& c) {
      return c.kind == schema::SchemaChange::Kind::kTableCreated;
    });
    bool dropping = std::any_of(changes.begin(), changes.end(), [](const schema::SchemaChange& c) {
      return c.kind == schema::SchemaChange::Kind::kTableDropped;
    });
    auto was_dropped = set.dropped().find(key);
    const bool leftover = set.IsMigrationLeftover(name.database, name.name);
    if (table == nullptr && was_dropped == set.dropped().end() &&
        !(created && set.ShouldReplicate(name.database, name.name))) {
      if (dropping && leftover && !set.MappingFor(name.database, name.name).Shared()) {
        // A migration tool's table that ClickHouse may hold (renamed out of the replication).
        const TableSet::Placement place = set.PlaceFor(name.database, name.name);
        Status s = destination.DropDestination(place.target, place.table);
        if (!s.ok()) return s;
      }
      continue;
    }
    if (table != nullptr && CopiedAfter(*table, event)) continue;
    if (table != nullptr && table->held && !dropping) {
      // Its copy on resume takes the schema as it is then.
      log::Info("{} is {}: the statement at {} is not applied to its ClickHouse table", key,
                table->held->state, position);
      continue;
    }
    DestinationTable before = table != nullptr                     ? table->dest
                              : was_dropped != set.dropped().end() ? was_dropped->second
                                                                   : DestinationTable{};
    if (created)
      before = DestinationTable{};  // a new table: what ClickHouse holds under its name is moved aside
    const schema::TableSchema* after = parts_.tracker.Find(name.database, name.name);
    if (created) CHSYNC_RETURN_IF_ERROR(set.CheckPlaceFree(name.database, name.name));
    PolicyContext context = set.ContextFor(name.database, name.name, !parts_.source.full_metadata());
    context.position = position;
    context.statement = statement;
    context.strict_mode = at.strict_mode;
    context.migration_leftover = dropping && leftover;
    if (context.mapping.Shared()) {
      CHSYNC_RETURN_IF_ERROR(ApplyShared(at, changes, key, table, context));
      continue;
    }
    const bool rebuilding = table != nullptr && table->rebuild != nullptr;
    Result<TablePlan> planned = PlanTableChanges(changes, before, after, context);
    if (!planned.ok()) {
      Metrics().NoteSchemaChange(SchemaChangeKind(statement), "failed");
      // A table created, dropped or (ApplyTableRenames) renamed leaves nothing to park: those stop.
      if (table == nullptr || dropping) return std::move(planned).error();
      CHSYNC_RETURN_IF_ERROR(host_.ParkTable(*table, key, planned.error(), statement, position));
      continue;
    }
    TablePlan plan = std::move(planned).value();
    if (rebuilding) {
      // The rebuild copies the table as it was; start it again under the new schema.
      CHSYNC_RETURN_IF_ERROR(host_.CancelRebuild(*table));
      if (!plan.dropped && !plan.ignored && after != nullptr) {
        plan.statements.clear();
        plan.skip_if_column_exists.clear();
        plan.skip_if_column_missing.clear();
        plan.rebuild = true;
        plan.rebuild_reason = "the table changed again while it was being rebuilt";
        plan.after = set.FreshDestination(*after, plan.after.excluded);
        plan.log_lines.push_back("the rebuild in progress starts again under the new schema");
      }
    }
    if (plan.created) {
      CHSYNC_ASSIGN_OR_RETURN(uint32_t sequence, parts_.versions->Sequence(event.file, at.sequence_base));
      CHSYNC_RETURN_IF_ERROR(destination.MakeRoom(context.target, context.mapping.dest_table,
                                                  fmt::format("{}_{}", sequence, event.position)));
    }
    if (Status ran = destination.RunPlan(plan, context.target, context.mapping.dest_table); !ran.ok()) {
      // ClickHouse refused the table's ALTER: the table parks (when that concerns it alone).
      if (table == nullptr || plan.dropped || plan.created) return ran;
      Metrics().NoteSchemaChange(SchemaChangeKind(statement), "failed");
      CHSYNC_RETURN_IF_ERROR(host_.ParkTable(*table, key, ran.error(), statement, position));
      continue;
    }
    parts_.history.Record(key, context.target.database, position, statement, plan.log_lines,
                          SchemaChangeAction(plan));
    if (plan.ignored) continue;
    if (plan.dropped) {
      if (table != nullptr) CHSYNC_RETURN_IF_ERROR(host_.CancelRebuild(*table));
      set.dropped()[key] = plan.after;
      set.tables().erase(key);
      parts_.holds.Unparked(key);  // its rows are no longer owed: the table is gone
      std::erase_if(checkpoint.snapshot, [&](const TableSnapshot& s) {
        return s.database == name.database && s.table == name.name;
      });
      continue;
    }
    set.dropped().erase(key);
    if (table == nullptr) {
      auto state = std::make_unique<TableState>();
      table = state.get();
      set.tables()[key] = std::move(state);
      // Replicated from its first row: nothing to copy.
      std::erase_if(checkpoint.snapshot, [&](const TableSnapshot& s) {
        return s.database == name.database && s.table == name.name;
      });
      checkpoint.snapshot.push_back(
          {name.database, name.name, TableSnapshot::State::kDone, "", 0, std::nullopt});
    }
    // `history: true`: a column renamed in the ClickHouse table is renamed in its history table too
    // (pipe/history.h); the writer made below adds and changes the history table's other columns.
    Status renamed = Status::Ok();
    for (const schema::SchemaChange& c : changes) {
      if (!renamed.ok() || !context.mapping.history || c.kind != schema::SchemaChange::Kind::kColumnRenamed)
        continue;
      renamed = RenameHistoryColumn(destination, context.target, HistoryTableName(context.mapping.dest_table),
                                    before.ClickHouseName(c.old_column_name),
                                    plan.after.ClickHouseName(c.column.name));
    }
    table->dest = plan.after;
    Status applied_here = !renamed.ok() ? renamed
                          : plan.rebuild
                              ? host_.StartRebuild(*table, position, plan.rebuild_reason, /*resume=*/false)
                              : host_.RebuildWriter(*table);
    if (!applied_here.ok()) {
      CHSYNC_RETURN_IF_ERROR(host_.ParkTable(*table, key, applied_here.error(), statement, position));
    } else if (!plan.park_reason.empty()) {
      // A table chsync will not replicate (keyless=refuse): made, then parked at its first statement.
      CHSYNC_RETURN_IF_ERROR(host_.ParkTable(*table, key, Error(ErrorKind::kUnsupported, plan.park_reason),
                                             statement, position));
    }
  }
  return Status::Ok();
}

Status SchemaApplier::ApplyShared(const StatementAt& at, const std::vector<schema::SchemaChange>& changes,
                                  const std::string& key, TableState* table, const PolicyContext& context) {
  using Kind = schema::SchemaChange::Kind;
  TableSet& set = parts_.set;
  const binlog::Event& event = at.event;
  const std::string position = Coordinate(event.file, event.position);
  const schema::TableName& name = changes.front().table;
  const EffectiveMapping& mapping = context.mapping;
  const std::string shared = context.target.database + "." + mapping.dest_table;
  auto has = [&](Kind kind) {
    return std::any_of(changes.begin(), changes.end(),
                       [&](const schema::SchemaChange& c) { return c.kind == kind; });
  };
  // The statement's version: above every row before it, below every row after it (row_version.h).
  auto version = [&]() -> Result<uint64_t> {
    return parts_.versions->OfStatement(event.file, at.sequence_base, event);
  };
  std::vector<std::string> lines;
  if (has(Kind::kTableDropped)) {
    if (table != nullptr) {
      CHSYNC_RETURN_IF_ERROR(LeaveShared(at, key, *table, mapping, context.target, lines));
      set.dropped()[key] = table->dest;
      set.tables().erase(key);
    }
    parts_.holds.Unparked(key);
    std::erase_if(parts_.checkpoint.snapshot, [&](const TableSnapshot& s) {
      return s.database == name.database && s.table == name.name;
    });
    if (lines.empty()) {
      lines.push_back(fmt::format("DROP TABLE {}: the shared table {} keeps its rows ({} = '{}')", key,
                                  shared, mapping.source_column, mapping.source_value));
    }
    parts_.history.Record(key, context.target.database, position, at.text, lines,
                          lines.front().starts_with("DROP TABLE") ? "kept" : "deleted");
    return Status::Ok();
  }
  const schema::TableSchema* after = parts_.tracker.Find(name.database, name.name);
  if (after == nullptr) return Status::Ok();
  const bool created = has(Kind::kTableCreated);
  if (table == nullptr) {
    if (!created && !set.dropped().contains(key)) return Status::Ok();
    auto state = std::make_unique<TableState>();
    table = state.get();
    set.tables()[key] = std::move(state);
    set.dropped().erase(key);
    std::erase_if(parts_.checkpoint.snapshot, [&](const TableSnapshot& s) {
      return s.database == name.database && s.table == name.name;
    });
    parts_.checkpoint.snapshot.push_back(
        {name.database, name.name, TableSnapshot::State::kDone, "", 0, std::nullopt});
  }
  // A copy in progress read the table as it was: it starts again under the new schema.
  const bool was_copying = table->rebuild != nullptr;
  if (was_copying) CHSYNC_RETURN_IF_ERROR(host_.CancelRebuild(*table));
  table->dest = parts_.set.FreshDestination(*after, table->dest.excluded);
  Status done = Status::Ok();
  if (has(Kind::kKeysChanged)) {
    done = Error(ErrorKind::kUnsupported,
                 fmt::format("its key changed, and the shared table {} is sorted by ({}, the key its sources "
                             "had): give the table another dest in table_options, then resync it",
                             shared, mapping.source_column));
  } else if (has(Kind::kPartitionDataChanged)) {
    done = host_.StartRebuild(*table, position, "a partition statement changed its rows", /*resume=*/false);
    lines.push_back(fmt::format("{}: this source's rows of {} are copied again", key, shared));
  } else {
    // A table created anew (not an online migration's shadow, whose rows are the base's) or
    // truncated: its earlier rows in the shared table go.
    const bool shadow = !MigrationBase(name.name, {"gho", "ghc", "del", "old", "new"}).empty();
    if ((has(Kind::kTableTruncated) && mapping.deletes != DeleteMode::kIgnore) || (created && !shadow)) {
      auto at_version = version();
      done = at_version.ok() ? DeleteSourceRows(parts_.destination, context.target, mapping.dest_table,
                                                mapping, *at_version)
                             : Status(std::move(at_version).error());
      lines.push_back(fmt::format("{}: its rows in the shared table {} are deleted ({} = '{}')", key, shared,
                                  mapping.source_column, mapping.source_value));
    }
    if (done.ok()) {
      done = was_copying ? host_.StartRebuild(*table, position, "the table changed while it was being copied",
                                              /*resume=*/false)
                         : host_.RebuildWriter(*table);
    }
    if (done.ok() && has(Kind::kColumnModified)) {
      lines.push_back(fmt::format("{}: the shared table {} holds its columns", key, shared));
      // A column widened for this source changes what the others' writers must send.
      std::map<std::string, std::string> now;  // ClickHouse column → its type, as just read
      for (size_t i = 0; i < table->shared.types.size() && i < table->writer->names().size(); ++i) {
        if (table->shared.types[i]) now[table->writer->names()[i]] = table->shared.types[i]->type;
      }
      auto stale = [&](const TableState& other) {
        for (size_t i = 0; i < other.shared.types.size() && i < other.writer->names().size(); ++i) {
          auto it = now.find(other.writer->names()[i]);
          if (other.shared.types[i] && it != now.end() && it->second != other.shared.types[i]->type)
            return true;
        }
        return false;
      };
      for (auto& [other, state] : set.tables()) {
        if (other == key || state->held || !state->writer) continue;
        if (set.PlaceFor(state->dest.source.database, state->dest.source.name).Qualified() != shared)
          continue;
        if (!stale(*state)) continue;
        if (Status s = host_.RebuildWriter(*state); !s.ok())
          CHSYNC_RETURN_IF_ERROR(host_.ParkTable(*state, other, s.error(), at.text, position));
      }
    }
  }
  if (!done.ok()) {
    Metrics().NoteSchemaChange(SchemaChangeKind(at.text), "failed");
    return host_.ParkTable(*table, key, done.error(), at.text, position);
  }
  parts_.history.Record(key, context.target.database, position, at.text, lines, "propagated");
  return Status::Ok();
}

Status SchemaApplier::LeaveShared(const StatementAt& at, const std::string& key, TableState& table,
                                  const EffectiveMapping& mapping, const clickhouse::DdlTarget& target,
                                  std::vector<std::string>& lines) {
  if (table.rebuild == nullptr) return Status::Ok();
  table.rebuild->Stop();
  if (CopyFinished(*table.rebuild)) return host_.CancelRebuild(table);
  const uint64_t copied = [&] {
    std::lock_guard<std::mutex> lock(table.rebuild->mutex);
    return table.rebuild->state.progress.rows_copied;
  }();
  CHSYNC_RETURN_IF_ERROR(host_.CancelRebuild(table));
  CHSYNC_ASSIGN_OR_RETURN(uint64_t version,
                          parts_.versions->OfStatement(at.event.file, at.sequence_base, at.event));
  CHSYNC_RETURN_IF_ERROR(DeleteSourceRows(parts_.destination, target, mapping.dest_table, mapping, version));
  const std::string line = fmt::format(
      "{} left the shared table {}.{} while it was being copied again ({} rows copied): the part copied is "
      "deleted ({} = '{}'), because the rest of the table can no longer be read",
      key, target.database, mapping.dest_table, copied, mapping.source_column, mapping.source_value);
  log::Warn("{} (at {})", line, Coordinate(at.event.file, at.event.position));
  lines.push_back(line);
  return Status::Ok();
}

Status SchemaApplier::ApplyRenames(const StatementAt& at, const std::vector<schema::SchemaChange>& changes) {
  TableSet& set = parts_.set;
  Checkpoint& checkpoint = parts_.checkpoint;
  const std::string position = Coordinate(at.event.file, at.event.position);
  const binlog::Event& event = at.event;
  const std::string& statement = at.text;
  // Renaming again what a crash let rename already would move the wrong table: after `RENAME TABLE t
  // TO _t_del, _t_gho TO t`, `t` is the former `_t_gho`. Each ClickHouse step is recorded in the
  // journal once done, and skipped when the statement is replayed; the bookkeeping around the steps
  // is done on every pass. The checkpoint at the statement's start is saved (Apply):
  // the steps of statements before it are never replayed.
  CHSYNC_RETURN_IF_ERROR(parts_.destination.BeginJournaled(parts_.checkpointer.path(), checkpoint.resume.file,
                                                           checkpoint.resume.position));
  for (size_t index = 0; index < changes.size(); ++index) {
    const schema::SchemaChange& change = changes[index];
    if (change.kind != schema::SchemaChange::Kind::kTableRenamed) continue;
    const schema::TableName& from = change.old_table;
    const schema::TableName& to = change.table;
    const std::string from_key = TableKey(from.database, from.name);
    const std::string to_key = TableKey(to.database, to.name);
    // Each name's place in ClickHouse: the ClickHouse table moves to the new name's place.
    const TableSet::Placement from_place = set.PlaceFor(from.database, from.name);
    const TableSet::Placement to_place = set.PlaceFor(to.database, to.name);
    const clickhouse::DdlTarget& from_target = from_place.target;
    const clickhouse::DdlTarget& to_target = to_place.target;
    const bool replicate_to = set.ShouldReplicate(to.database, to.name);
    auto it = set.tables().find(from_key);
    std::vector<std::string> lines;
    const EffectiveMapping from_mapping = set.MappingFor(from.database, from.name);
    const EffectiveMapping to_mapping = set.MappingFor(to.database, to.name);
    if (from_mapping.Shared() || to_mapping.Shared()) {
      // A shared table (pipe/fan_in.h) is never renamed: only which source table feeds it changes.
      const schema::TableSchema* schema = parts_.tracker.Find(to.database, to.name);
      if (it != set.tables().end() && replicate_to && schema != nullptr && to_mapping.Shared() &&
          from_place.Qualified() == to_place.Qualified() &&
          from_mapping.source_value == to_mapping.source_value) {
        // An online migration's swap (`_t_gho` → `t`): the same rows under the same source.
        std::unique_ptr<TableState> state = std::move(it->second);
        set.tables().erase(it);
        parts_.holds.Unparked(from_key);
        const bool cut_short = cut_short_.erase(to_key) > 0;
        const bool was_copying = cut_short || (state->rebuild != nullptr && !CopyFinished(*state->rebuild));
        CHSYNC_RETURN_IF_ERROR(host_.CancelRebuild(*state));
        state->dest = set.FreshDestination(*schema, state->dest.excluded);
        state->stream_from.reset();
        std::erase_if(checkpoint.snapshot, [&](const TableSnapshot& s) {
          return (s.database == from.database && s.table == from.name) ||
                 (s.database == to.database && s.table == to.name);
        });
        checkpoint.snapshot.push_back(
            {to.database, to.name, TableSnapshot::State::kDone, "", 0, std::nullopt});
        TableState& moved = *state;
        set.tables()[to_key] = std::move(state);
        set.dropped().erase(to_key);
        set.dropped().erase(from_key);
        if (moved.held) {
          moved.held->table = to_key;
        } else if (was_copying) {
          // Its copy into the shared table was cut short: copied again, under the new name.
          Status started =
              host_.StartRebuild(moved, position, "renamed from " + from_key + " while it was copied",
                                 /*resume=*/false);
          if (!started.ok()) {
            if (started.error().kind() != ErrorKind::kUnsupported) return started;
            CHSYNC_RETURN_IF_ERROR(host_.ParkTable(moved, to_key, started.error(), statement, position));
          }
        } else {
          CHSYNC_RETURN_IF_ERROR(host_.RebuildWriter(moved));
        }
        lines.push_back(fmt::format("RENAME TABLE {} TO {}: {} now feeds the shared table {}{}", from_key,
                                    to_key, to_key, to_place.Qualified(),
                                    was_copying ? " (its copy, cut short by the rename, starts again)" : ""));
        parts_.history.Record(to_key, to_target.database, position, statement, lines, "propagated");
        continue;
      }
      if (it != set.tables().end()) {
        // The old name's rows stay where they are (as for a DROP TABLE), but for a copy cut short.
        std::unique_ptr<TableState> state = std::move(it->second);
        set.tables().erase(it);
        parts_.holds.Unparked(from_key);
        const bool own_leftover = to.database == from.database &&
                                  MigrationBase(to.name, {"gho", "ghc", "del", "old", "new"}) == from.name;
        if (from_mapping.Shared() && own_leftover && state->rebuild != nullptr &&
            !CopyFinished(*state->rebuild)) {
          // An online migration's cut-over: the shadow, whose rows this source's are, takes the name
          // next, and is copied again then (its rows written before the copy began were removed).
          cut_short_.insert(from_key);
          log::Info("{}: its copy stops at {}, renamed to {}; the table renamed onto {} is copied again",
                    from_key, position, to_key, from_key);
        } else if (from_mapping.Shared()) {
          std::vector<std::string> left;
          CHSYNC_RETURN_IF_ERROR(LeaveShared(at, from_key, *state, from_mapping, from_target, left));
          if (!left.empty())
            parts_.history.Record(from_key, from_target.database, position, statement, left, "deleted");
        }
        CHSYNC_RETURN_IF_ERROR(host_.CancelRebuild(*state));
        set.dropped()[from_key] = state->dest;
        std::erase_if(checkpoint.snapshot, [&](const TableSnapshot& s) {
          return s.database == from.database && s.table == from.name;
        });
      }
      if (!replicate_to) continue;
      const PolicyContext to_context = set.ContextFor(to.database, to.name, !parts_.source.full_metadata());
      if (schema == nullptr) {
        if (to_context.policy.create_table == SchemaPolicy::CreateTable::kIgnore) continue;
        // Renamed from a table the tracker never saw (not replicated): its schema as the source has
        // it now.
        auto keep = [&](const schema::TableSchema& t) {
          return t.database == to.database && t.name == to.name;
        };
        CHSYNC_ASSIGN_OR_RETURN(std::vector<schema::TableSchema> loaded,
                                parts_.source.LoadSchemas({to.database}, keep));
        if (loaded.empty()) {
          return ResyncError(
              to_key, "replaced by " + from_key + ", which chsync did not track and cannot find", event);
        }
        parts_.tracker.SetTable(loaded[0]);
        schema = parts_.tracker.Find(to.database, to.name);
      }
      // The new name's rows are copied (into the shared table: its source's rows are replaced).
      if (!to_mapping.Shared()) {
        CHSYNC_RETURN_IF_ERROR(set.CheckPlaceFree(to.database, to.name));
        CHSYNC_ASSIGN_OR_RETURN(uint32_t sequence, parts_.versions->Sequence(event.file, at.sequence_base));
        CHSYNC_RETURN_IF_ERROR(parts_.destination.RunStepOnce(
            DdlStep{std::string(event.file), event.position, fmt::format("{}/room", index)}, [&] {
              return parts_.destination.MakeRoom(to_target, to_place.table,
                                                 fmt::format("{}_{}", sequence, event.position));
            }));
      }
      cut_short_.erase(to_key);  // copied below in any case
      auto fresh = std::make_unique<TableState>();
      fresh->dest = set.FreshDestination(*schema);
      TableState& added = *fresh;
      set.tables()[to_key] = std::move(fresh);
      set.dropped().erase(to_key);
      std::erase_if(checkpoint.snapshot,
                    [&](const TableSnapshot& s) { return s.database == to.database && s.table == to.name; });
      checkpoint.snapshot.push_back({to.database, to.name, TableSnapshot::State::kDone, "", 0, std::nullopt});
      if (std::optional<std::string> refused = KeylessRefusal(*schema, to_context.policy)) {
        CHSYNC_RETURN_IF_ERROR(
            host_.ParkTable(added, to_key, Error(ErrorKind::kUnsupported, *refused), statement, position));
        continue;
      }
      if (Status started = host_.StartRebuild(added, position, "renamed from " + from_key, /*resume=*/false);
          !started.ok()) {
        // A table its shared table cannot take (another key, a type no merged column holds).
        if (started.error().kind() != ErrorKind::kUnsupported) return started;
        CHSYNC_RETURN_IF_ERROR(host_.ParkTable(added, to_key, started.error(), statement, position));
        continue;
      }
      lines.push_back(fmt::format("RENAME TABLE {} TO {}: {} is copied into {}", from_key, to_key, to_key,
                                  to_place.Qualified()));
      parts_.history.Record(to_key, to_target.database, position, statement, lines, "rebuilt");
      continue;
    }
    if (it != set.tables().end()) {
      PolicyContext context = set.ContextFor(from.database, from.name, !parts_.source.full_metadata());
      if (context.policy.rename_table == SchemaPolicy::RenameTable::kFail) {
        Metrics().NoteSchemaChange("rename_table", "failed");
        return ResyncError(
            from_key, fmt::format("renamed to {} (rename_table=fail): \"{}\"", to_key, statement), event);
      }
      if (replicate_to) CHSYNC_RETURN_IF_ERROR(set.CheckPlaceFree(to.database, to.name, from_key));
      std::unique_ptr<TableState> state = std::move(it->second);
      set.tables().erase(it);
      parts_.holds.Unparked(from_key);  // a park moves with the table's own state (state->held)
      const bool rebuilding = state->rebuild != nullptr;
      CHSYNC_RETURN_IF_ERROR(host_.CancelRebuild(*state));
      CHSYNC_ASSIGN_OR_RETURN(uint32_t sequence, parts_.versions->Sequence(event.file, at.sequence_base));
      if (set.dropped().contains(to_key) || replicate_to) {
        CHSYNC_RETURN_IF_ERROR(parts_.destination.RunStepOnce(
            DdlStep{std::string(event.file), event.position, fmt::format("{}/room", index)}, [&] {
              return parts_.destination.MakeRoom(to_target, to_place.table,
                                                 fmt::format("{}_{}", sequence, event.position));
            }));
      }
      CHSYNC_RETURN_IF_ERROR(parts_.destination.RunStepOnce(
          DdlStep{std::string(event.file), event.position, fmt::format("{}/rename", index)}, [&] {
            return parts_.destination.RenameDestination(from_target, from_place.table, to_target,
                                                        to_place.table);
          }));
      std::erase_if(checkpoint.snapshot, [&](const TableSnapshot& s) {
        return s.database == from.database && s.table == from.name;
      });
      const schema::TableSchema* schema = parts_.tracker.Find(to.database, to.name);
      if (replicate_to && schema != nullptr) {
        // Excluded and renamed columns stay as they were (the mapping follows the table); columns the
        // new name's table_options exclude besides are left out by copying the table again.
        const std::vector<std::string> was_excluded = state->dest.excluded;
        const DestinationTable renamed = set.FreshDestination(*schema, was_excluded);
        const bool excludes_more = renamed.excluded.size() > was_excluded.size();
        state->dest.source = renamed.source;
        state->dest.excluded = renamed.excluded;
        state->stream_from.reset();
        checkpoint.snapshot.push_back(
            {to.database, to.name, TableSnapshot::State::kDone, "", 0, std::nullopt});
        lines.push_back(fmt::format("RENAME TABLE {} TO {}: ClickHouse table {} renamed to {}", from_key,
                                    to_key, from_place.Qualified(), to_place.Qualified()));
        TableState& moved = *state;
        set.tables()[to_key] = std::move(state);
        set.dropped().erase(to_key);
        std::optional<std::string> refused =
            moved.held ? std::nullopt
                       : KeylessRefusal(*schema, parts_.config.policies.For(to.database, to.name));
        if (refused) {
          // Replicated under its old name's keyless=distinct, refused under the new one's.
          CHSYNC_RETURN_IF_ERROR(
              host_.ParkTable(moved, to_key, Error(ErrorKind::kUnsupported, *refused), statement, position));
        } else if (rebuilding || excludes_more) {
          CHSYNC_RETURN_IF_ERROR(
              host_.StartRebuild(moved, position,
                                 rebuilding ? "renamed while it was being rebuilt"
                                            : "the table_options of its new name exclude more columns",
                                 false));
        } else {
          CHSYNC_RETURN_IF_ERROR(host_.RebuildWriter(moved));
        }
      } else {
        state->dest.source.database = to.database;
        state->dest.source.name = to.name;
        set.dropped()[to_key] = state->dest;
        lines.push_back(
            fmt::format("RENAME TABLE {} TO {}: ClickHouse table renamed to {}; {} does not match "
                        "--tables, so it is no "
                        "longer replicated (its ClickHouse table keeps the rows it has)",
                        from_key, to_key, to_place.Qualified(), to_key));
      }
      parts_.history.Record(from_key, from_target.database, position, statement, lines,
                            rebuilding ? "rebuilt" : "propagated");
      continue;
    }
    set.dropped().erase(from_key);
    if (!replicate_to) continue;
    // A table chsync did not replicate moved onto a replicated name: its rows must be copied.
    CHSYNC_RETURN_IF_ERROR(set.CheckPlaceFree(to.database, to.name));
    PolicyContext context = set.ContextFor(to.database, to.name, !parts_.source.full_metadata());
    if (context.policy.create_table == SchemaPolicy::CreateTable::kIgnore) continue;
    if (context.policy.rename_table == SchemaPolicy::RenameTable::kFail) {
      Metrics().NoteSchemaChange("rename_table", "failed");
      return ResyncError(
          to_key, fmt::format("replaced by {} (rename_table=fail): \"{}\"", from_key, statement), event);
    }
    const schema::TableSchema* schema = parts_.tracker.Find(to.database, to.name);
    if (schema == nullptr) {
      // Renamed from a table the tracker never saw (created before the pipe started and not
      // replicated): its schema as the source has it now.
      auto keep = [&](const schema::TableSchema& t) {
        return t.database == to.database && t.name == to.name;
      };
      CHSYNC_ASSIGN_OR_RETURN(std::vector<schema::TableSchema> loaded,
                              parts_.source.LoadSchemas({to.database}, keep));
      if (loaded.empty()) {
        return ResyncError(to_key, "replaced by " + from_key + ", which chsync did not track and cannot find",
                           event);
      }
      parts_.tracker.SetTable(loaded[0]);
      schema = parts_.tracker.Find(to.database, to.name);
    }
    CHSYNC_ASSIGN_OR_RETURN(uint32_t sequence, parts_.versions->Sequence(event.file, at.sequence_base));
    // Run again after the rebuild below swapped its copy in (and a crash came), it would move the
    // copy aside.
    CHSYNC_RETURN_IF_ERROR(parts_.destination.RunStepOnce(
        DdlStep{std::string(event.file), event.position, fmt::format("{}/room", index)}, [&] {
          return parts_.destination.MakeRoom(to_target, to_place.table,
                                             fmt::format("{}_{}", sequence, event.position));
        }));
    auto state = std::make_unique<TableState>();
    state->dest = set.FreshDestination(*schema);
    TableState& added = *state;
    set.tables()[to_key] = std::move(state);
    set.dropped().erase(to_key);
    std::erase_if(checkpoint.snapshot,
                  [&](const TableSnapshot& s) { return s.database == to.database && s.table == to.name; });
    checkpoint.snapshot.push_back({to.database, to.name, TableSnapshot::State::kDone, "", 0, std::nullopt});
    std::string reason = "renamed from " + from_key + ", whose rows chsync did not replicate";
    if (std::optional<std::string> refused = KeylessRefusal(*schema, context.policy)) {
      // Not copied: parked at once, its rows owed until it has a key (or keyless: distinct).
      CHSYNC_RETURN_IF_ERROR(
          host_.ParkTable(added, to_key, Error(ErrorKind::kUnsupported, *refused), statement, position));
      continue;
    }
    CHSYNC_RETURN_IF_ERROR(host_.StartRebuild(added, position, reason, /*resume=*/false));
    lines.push_back(
        fmt::format("RENAME TABLE {} TO {}: {} is copied into ClickHouse (rebuilt online) because {}",
                    from_key, to_key, to_key, reason));
    parts_.history.Record(to_key, to_target.database, position, statement, lines, "rebuilt");
  }
  return Status::Ok();
}

}  // namespace chsync::pipe
