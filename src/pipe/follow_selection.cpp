// Tables added to and removed from the selection while the pipe runs (docs/table-control.md): by
// `chsync tables add|remove` (a request, carried out once), by SIGHUP (the configuration file's
// `tables:` read again), and at a restart under another selection.
//
// A table that enters the selection is copied online, as a rebuild is (rebuild.cpp): its schema and
// a binlog position are read together from the source (SourceLink::StablePoint), the copy goes into
// a new ClickHouse table while the stream writes the table's changes after that position there too,
// and the copy replaces the ClickHouse table when it is done. The stream skips the table's rows and
// statements before the position (TableState::stream_from), which the copy holds. The checkpoint
// that records the table records the copy's progress too: a crash during the copy continues it.
//
// A table that leaves the selection stops being applied where the stream is; what was read before
// goes out first, and its ClickHouse table is kept as it is.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "clickhouse/server_error.h"
#include "common/log.h"
#include "mysql/table_filter.h"
#include "pipe/pipe.h"

namespace chsync::pipe {

Status Pipe::ReloadSelection() {
  if (request_.config_file.empty()) {
    log::Warn("SIGHUP: no configuration file (--config) to read `tables:` from; the selection stays {}",
              set_.selection().Describe());
    return Status::Ok();
  }
  if (request_.tables_from_flag) {
    log::Warn("SIGHUP: --tables was given on the command line and wins over the file; the selection stays {}",
              set_.selection().Describe());
    return Status::Ok();
  }
  std::ifstream in(request_.config_file);
  std::stringstream text;
  text << in.rdbuf();
  PipeConfig reread;
  Status loaded = Status::Ok();
  if (!in) {
    loaded = Error(ErrorKind::kIo, "cannot read " + request_.config_file);
  } else {
    loaded = LoadConfigText(text.str(), request_.config_file, reread);
  }
  if (loaded.ok()) {
    if (auto parsed = Selection::Make(reread.tables, checkpoint_.selection_changes); !parsed.ok()) {
      loaded = std::move(parsed.error().AddContext("tables"));
    }
  }
  if (!loaded.ok()) {
    // A bad edit must not stop a running pipe: it goes on with what it has.
    log::Err("SIGHUP: {}; the selection stays {}", loaded.error().message(), set_.selection().Describe());
    return Status::Ok();
  }
  // Where an entry was given (its line) may move with the edit of `tables:`; what it says may not.
  auto said = [](const MappingSet& set) {
    std::vector<TableOptions> entries = set.entries();
    for (TableOptions& e : entries) e.origin.clear();
    return entries;
  };
  if (said(reread.mappings) != said(request_.config.mappings)) {
    // Tables it adds would be copied under the table_options read at the start, not under the new
    // ones (a filter, an exclusion, a history table left out for good): a restart reads both.
    log::Err(
        "SIGHUP: `table_options:` in {} changed too, and they take effect only at a start: restart "
        "chsync (systemctl restart) to follow the new `tables:` with them; the selection stays {}",
        request_.config_file, set_.selection().Describe());
    return Status::Ok();
  }
  if (reread.tables == tables_spec_) {
    log::Info("SIGHUP: `tables:` in {} is unchanged ({})", request_.config_file,
              reread.tables.empty() ? "every table" : reread.tables);
    return Status::Ok();
  }
  log::Info("SIGHUP: `tables:` in {} changed from '{}' to '{}' (other keys take effect at the next start)",
            request_.config_file, tables_spec_, reread.tables);
  tables_spec_ = reread.tables;
  CHSYNC_ASSIGN_OR_RETURN(Selection selection, Selection::Make(tables_spec_, checkpoint_.selection_changes));
  set_.Select(std::move(selection));
  selection_due_ = true;
  return Status::Ok();
}

Result<std::vector<std::string>> Pipe::FollowSelection() {
  std::vector<std::string> lines;
  std::vector<std::string> leaving;
  for (const auto& [key, table] : set_.tables()) {
    const schema::TableSchema& source = table->dest.source;
    if (!set_.ShouldReplicate(source.database, source.name)) leaving.push_back(key);
  }
  if (!leaving.empty()) {
    // What was read of them before goes out first: they stop here, not earlier.
    CHSYNC_RETURN_IF_ERROR(applier_.FlushAll());
    CHSYNC_RETURN_IF_ERROR(applier_.flusher()->Drain());
  }
  const std::string position = applier_.committed_at();
  for (const std::string& key : leaving) {
    auto it = set_.tables().find(key);
    TableState& table = *it->second;
    if (table.rebuild) CHSYNC_RETURN_IF_ERROR(CancelRebuild(table));
    applier_.DropPending(table);
    const schema::TableSchema& source = table.dest.source;
    const Placement place = set_.PlaceFor(source.database, source.name);
    std::erase_if(checkpoint_.unselected, [&](const UnselectedTable& u) { return u.table == key; });
    checkpoint_.unselected.push_back({key, place.Qualified(), position, NowMs()});
    std::erase_if(checkpoint_.snapshot, [&](const TableSnapshot& s) {
      return s.database == source.database && s.table == source.name;
    });
    std::string line = fmt::format(
        "removed from the selection at {}: its changes are no longer applied; its ClickHouse table {} is "
        "kept",
        position, place.Qualified());
    history_.Record(key, place.target.database, position,
                    "(table selection: " + set_.selection().Describe() + ")", {line}, "");
    lines.push_back(fmt::format("{} {}", key, line));
    holds_.Unparked(key);  // a park the flusher left on the board goes with the table
    set_.tables().erase(it);
  }

  // Every base table of the source the selection names and the pipe does not replicate yet.
  CHSYNC_ASSIGN_OR_RETURN(
      mysql::QueryResult listed,
      source_.control().Query("SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE "
                              "TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_SCHEMA, TABLE_NAME"));
  for (const auto& row : listed.rows) {
    if (row.size() < 2 || !row[0] || !row[1]) continue;
    const std::string& database = *row[0];
    const std::string& name = *row[1];
    if (mysql::IsSystemSchema(database) || !set_.selection().Matches(database, name)) continue;
    const std::string key = TableKey(database, name);
    if (set_.tables().contains(key) || set_.dropped().contains(key)) continue;
    CHSYNC_ASSIGN_OR_RETURN(std::string line, AddSelectedTable(database, name));
    if (!line.empty()) lines.push_back(fmt::format("{} {}", key, line));
  }
  if (lines.empty()) lines.push_back("no table added or removed");
  return lines;
}

Result<std::string> Pipe::AddSelectedTable(const std::string& database, const std::string& name) {
  const std::string key = TableKey(database, name);
  auto keep = [&](const schema::TableSchema& t) { return t.database == database && t.name == name; };
  std::vector<schema::TableSchema> schemas;
  CHSYNC_ASSIGN_OR_RETURN(SourcePosition from, source_.StablePoint({database}, keep, schemas));
  if (schemas.empty()) return std::string();  // dropped meanwhile: the stream reaches its DROP
  schema::TableSchema& schema = schemas[0];
  // What makes the table impossible to place is the configuration's to fix: said, and the pipe
  // goes on with the others.
  const EffectiveMapping mapping = set_.MappingFor(database, name);
  Status placeable = set_.CheckPlaceFree(database, name);
  if (placeable.ok()) {
    placeable =
        CheckForPipe(mapping, schema, destination_.caps(), destination_.TargetIn(mapping.dest_database));
  }
  if (!placeable.ok()) {
    log::Err("table {} entered the selection but is not replicated: {}", key, placeable.error().message());
    return "not added: " + placeable.error().message();
  }
  tracker_.SetTable(schema);
  checkpoint_.schemas = tracker_.Serialize();
  std::erase_if(checkpoint_.unselected, [&](const UnselectedTable& u) { return u.table == key; });
  std::erase_if(checkpoint_.snapshot,
                [&](const TableSnapshot& s) { return s.database == database && s.table == name; });
  // Done by the snapshot's count: the copy below is the table's rebuild, whose progress the
  // checkpoint records; the stream skips what the copy holds (before `from`).
  checkpoint_.snapshot.push_back({database, name, TableSnapshot::State::kDone, "", 0, from});
  auto state = std::make_unique<TableState>();
  state->dest = set_.FreshDestination(schema);
  state->stream_from = from;
  TableState& table = *state;
  set_.tables()[key] = std::move(state);
  const std::string at = Coordinate(from.file, from.position);
  if (std::optional<std::string> refused =
          KeylessRefusal(schema, request_.config.policies.For(database, name))) {
    CHSYNC_RETURN_IF_ERROR(RebuildWriter(table));
    CHSYNC_RETURN_IF_ERROR(ParkTable(table, key, Error(ErrorKind::kUnsupported, *refused), "", at));
    return "added and parked: " + *refused;
  }
  holds_.Unparked(key);
  Status started =
      StartRebuild(table, applier_.committed_at(), "added to the table selection", /*resume=*/false);
  if (!started.ok()) {
    if (table.rebuild) {
      table.rebuild->Stop();
      const std::string temp = table.rebuild->state.temp_table;
      table.rebuild.reset();
      const Placement place = set_.PlaceFor(database, name);
      // A shared table (pipe/fan_in.h) is its own rebuild's copy: never dropped.
      if (temp != place.table) (void)destination_.DropDestination(place.target, temp);
    }
    set_.tables().erase(key);
    std::erase_if(checkpoint_.snapshot,
                  [&](const TableSnapshot& s) { return s.database == database && s.table == name; });
    // A passing failure: the pipe reads again from its checkpoint, and the change is followed then.
    if (started.error().kind() == ErrorKind::kNetwork || clickhouse::IsRetryable(started.error())) {
      return started.error();
    }
    // The table's own problem (an option this destination refuses): said, and the others go on.
    log::Err("table {} entered the selection but is not replicated: {}", key, started.error().message());
    return "not added: " + started.error().message();
  }
  log::Info("table {} entered the selection: copying it online from {}; other tables stream on", key, at);
  PublishTables();
  return fmt::format("added: copying it online from {} into {}", at,
                     set_.PlaceFor(database, name).Qualified());
}

}  // namespace chsync::pipe
