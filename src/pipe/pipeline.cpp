// The pipe's set-up, snapshot and checkpoints. The binlog stream's side is in stream.cpp (the
// sessions), binlog_session.cpp (one session) and applier.cpp (its events applied).

#include "pipe/pipeline.h"

#include <fmt/ranges.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "clickhouse/ddl.h"
#include "clickhouse/sql_quoting.h"
#include "common/log.h"
#include "mysql/server_probe.h"
#include "mysql/table_inventory.h"
#include "pipe/fan_in.h"
#include "pipe/history.h"
#include "pipe/pipe.h"
#include "schema/information_schema.h"

namespace chsync::pipe {

namespace {

/// The snapshot saves its progress at most this often (Pipe::Snapshot).
constexpr uint64_t kSnapshotSaveEveryMs = 1000;

/// A replica id from the state directory's path: stable across restarts, different for pipes
/// kept in different directories (two replicas with one id make the server drop one of them).
uint32_t ServerIdFromPath(const std::string& path) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : path) h = (h ^ c) * 1099511628211ull;
  return static_cast<uint32_t>(1000000 + h % 2000000000ull);
}

}  // namespace

Pipe::Pipe(const RunRequest& request, const std::atomic<bool>& stop)
    : request_(request), stop_(stop), destination_(request.config, cancel_) {
  // A stop (SIGTERM) lets ClickHouse acknowledge what was read for a few seconds, then cancels
  // every request and retry, so that no wait outlives it.
  stop_watch_ = std::thread([this] {
    std::optional<std::chrono::steady_clock::time_point> since;
    while (!quit_watch_) {
      if (stop_ && !since) since = std::chrono::steady_clock::now();
      if (since && std::chrono::steady_clock::now() - *since >= std::chrono::seconds(3)) cancel_ = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
}

Pipe::~Pipe() {
  cancel_ = true;
  quit_watch_ = true;
  stop_watch_.join();
  Rebuilds::StopAll(set_.tables());
  applier_.StopFlusher();
}

Status Pipe::Open() {
  const PipeConfig& c = request_.config;
  CHSYNC_RETURN_IF_ERROR(source_.Configure(c.source));
  CHSYNC_RETURN_IF_ERROR(set_.Configure());
  rebuilds_.SetParallelism(c.snapshot_parallelism);  // tables copied online at once
  session_.set_server_id(c.server_id != 0 ? c.server_id : ServerIdFromPath(c.state));

  CHSYNC_RETURN_IF_ERROR(checkpointer_.Open(c.state));
  CHSYNC_ASSIGN_OR_RETURN(Versions versions, Versions::Load(checkpointer_.path()));
  versions_.emplace(std::move(versions));
  // The servers in the order given; with a checkpoint, one that holds what the pipe applied.
  CHSYNC_ASSIGN_OR_RETURN(std::optional<Checkpoint> saved, checkpointer_.Load());
  const std::vector<size_t> order = source_.Order();
  // A source that does not answer at start (a handshake that times out or is reset, a server
  // still starting, a link cut) is waited for with back-off, as a reconnect would be; a refused
  // password or a server set up wrongly stops at once.
  const auto began = std::chrono::steady_clock::now();
  for (int failures = 1;; ++failures) {
    Status selected =
        SelectSource(order, request_.resync && request_.resync_table.empty() ? std::nullopt : saved,
                     c.on_binlog_gap == PipeConfig::BinlogGap::kResync);
    if (selected.ok()) break;
    if (selected.error().kind() != ErrorKind::kNetwork) return selected;
    const auto waited = std::chrono::steady_clock::now() - began;
    if (c.retry_give_up_after_ms != 0 && waited >= std::chrono::milliseconds(c.retry_give_up_after_ms)) {
      return std::move(selected.error().AddContext(
          fmt::format("the source did not answer for {} s (retry.give_up_after_ms)",
                      std::chrono::duration_cast<std::chrono::seconds>(waited).count())));
    }
    const auto wait = std::min<std::chrono::milliseconds>(
        std::chrono::milliseconds(c.retry_max_backoff_ms),
        std::chrono::milliseconds(int64_t{250} << std::min(failures, 12)));
    log::Warn("{}; trying the source again in {} ms", selected.error().message(), wait.count());
    const auto until = std::chrono::steady_clock::now() + wait;
    while (!stop_ && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (stop_) {
      stopped_at_start_ = true;
      return Status::Ok();
    }
  }
  status_.source = source_.Describe();

  CHSYNC_ASSIGN_OR_RETURN(clickhouse::ServerVersion version, destination_.Open());
  log::Info("source {} ({} {}), {} metadata; destination {} (ClickHouse {}.{})", source_.options().Address(),
            mysql::FlavorName(source_.server().flavor), source_.server().version_string,
            source_.full_metadata() ? "FULL row" : "MINIMAL row (ordinal mode)",
            destination_.connection().Describe(), version.major, version.minor);
  return Status::Ok();
}

std::string Pipe::DestinationLine() const {
  const std::string node = applier_.flusher() != nullptr ? applier_.flusher()->Describe()
                           : destination_.connected()    ? destination_.connection().Describe()
                                                         : "";
  return destination_.Describe(node);
}

Status Pipe::Initialize(bool copy) {
  // A fresh start: the position first, then the schemas in force there, then the tables.
  CHSYNC_ASSIGN_OR_RETURN(std::vector<std::string> databases, source_.Databases());
  auto keep = [this](const schema::TableSchema& t) { return set_.selection().Matches(t.database, t.name); };
  std::vector<schema::TableSchema> schemas;
  CHSYNC_ASSIGN_OR_RETURN(SourcePosition start, source_.StablePoint(databases, keep, schemas));
  if (schemas.empty()) {
    return Error(ErrorKind::kConfig, "no table on " + source_.options().Address() + " matches --tables '" +
                                         set_.selection().Describe() + "'");
  }
  if (!copy) {
    CHSYNC_ASSIGN_OR_RETURN(start, CdcStartPoint(start, schemas));
  }
  // XA transactions prepared now were written to the binlog before the start position, and the
  // snapshot cannot see their rows: if one commits later, its rows are in neither.
  if (auto prepared = source_.control().Query("XA RECOVER"); prepared.ok() && !prepared->rows.empty()) {
    log::Warn(
        "{} XA transaction(s) are prepared on the source and not yet committed: if they commit later, their "
        "rows reach ClickHouse only through `chsync resync --table DB.TABLE` for the tables they wrote "
        "(start the pipe when `XA RECOVER` lists none)",
        prepared->rows.size());
  }
  schema::Tracker tracker({source_.full_metadata(), source_.server().is_mariadb()});
  CHSYNC_RETURN_IF_ERROR(source_.LoadDatabaseDefaults(tracker));
  // Every table's `table_options:` are checked before any destination table is replaced.
  std::vector<std::pair<std::string, std::string>> names;
  names.reserve(schemas.size());
  for (const schema::TableSchema& t : schemas) names.emplace_back(t.database, t.name);
  CHSYNC_RETURN_IF_ERROR(request_.config.mappings.CheckDestinations(names, request_.config.dest_database));
  for (const schema::TableSchema& t : schemas) {
    const EffectiveMapping mapping = set_.MappingFor(t.database, t.name);
    CHSYNC_RETURN_IF_ERROR(
        CheckForPipe(mapping, t, destination_.caps(), destination_.TargetIn(mapping.dest_database)));
    if (mapping.adopt) {
      auto adoptable = set_.CheckAdopted(t, mapping, {}, /*must_be_empty=*/true);
      if (!adoptable.ok()) return std::move(adoptable).error();
    }
  }
  Checkpoint checkpoint;
  checkpoint.source = source_.identity();
  checkpoint.stream_start = start;
  checkpoint.resume = start;
  checkpoint.load_only = copy && request_.config.snapshot_mode == PipeConfig::StartMode::kOnly;
  // Every table is copied again: what was sent before says nothing of this server any longer.
  CHSYNC_RETURN_IF_ERROR(versions_->lineage().NoteSent(start.gtid_set));
  for (schema::TableSchema& t : schemas) {
    // Tables left by an earlier pipe (or a run that crashed before its first checkpoint) are
    // replaced: rows they hold may no longer exist at the source.
    if (Status created = set_.CreateDestination(t, /*replace=*/true); !created.ok()) {
      // A source its shared table cannot take (another key, a type no merged column holds) is
      // parked when the tables load, with this same error; the others are copied.
      if (!set_.MappingFor(t.database, t.name).Shared() || created.error().kind() != ErrorKind::kUnsupported)
        return created;
    }
    checkpoint.snapshot.push_back({t.database, t.name,
                                   copy ? TableSnapshot::State::kPending : TableSnapshot::State::kDone, "", 0,
                                   std::nullopt});
    tracker.SetTable(std::move(t));
  }
  checkpoint.schemas = tracker.Serialize();
  checkpoint.routing = destination_.routing_now();
  checkpoint.selection = set_.selection().Describe();
  checkpoint.selection_changes = set_.selection().changes();
  checkpoint.saved_at_ms = NowMs();
  CHSYNC_RETURN_IF_ERROR(checkpointer_.Save(checkpoint));
  log::Info("starting at {} ({} tables); destination tables created", Coordinate(start.file, start.position),
            checkpoint.snapshot.size());
  return Status::Ok();
}

Status Pipe::ResyncTable(const std::string& qualified) {
  size_t dot = qualified.find('.');
  if (dot == std::string::npos) {
    return Error(ErrorKind::kUsage, "--table must be DB.TABLE, not '" + qualified + "'");
  }
  std::string database = qualified.substr(0, dot);
  std::string name = qualified.substr(dot + 1);
  if (!set_.selection().Matches(database, name)) {
    return Error(ErrorKind::kUsage, "table " + qualified +
                                        " is not replicated (it does not match --tables '" +
                                        set_.selection().Describe() + "')");
  }
  auto keep = [&](const schema::TableSchema& t) { return t.database == database && t.name == name; };
  std::vector<schema::TableSchema> schemas;
  CHSYNC_ASSIGN_OR_RETURN(SourcePosition from, source_.StablePoint({database}, keep, schemas));
  if (schemas.empty())
    return Error(ErrorKind::kNotFound, "table " + qualified + " does not exist at the source");
  if (std::optional<std::string> refused =
          KeylessRefusal(schemas[0], request_.config.policies.For(database, name)))
    return Error(ErrorKind::kUnsupported, "not copied: " + *refused);
  // Columns excluded under an earlier name stay excluded in the new copy.
  DestinationTable carried;
  for (const DestinationState& d : checkpoint_.destinations) {
    if (d.table == qualified) carried.excluded = d.excluded;
  }
  CHSYNC_RETURN_IF_ERROR(set_.CreateDestination(schemas[0], /*replace=*/true, "", &carried));
  tracker_.SetTable(schemas[0]);
  bool found = false;
  for (TableSnapshot& s : checkpoint_.snapshot) {
    if (s.database == database && s.table == name) {
      s = {database, name, TableSnapshot::State::kPending, "", 0, from};
      found = true;
    }
  }
  if (!found) checkpoint_.snapshot.push_back({database, name, TableSnapshot::State::kPending, "", 0, from});
  std::erase_if(checkpoint_.destinations, [&](const DestinationState& d) { return d.table == qualified; });
  // A parked or paused table is held no longer: the copy, saved as pending with this checkpoint,
  // owes ClickHouse every row the hold kept out.
  const size_t was_held = checkpoint_.held.size();
  std::erase_if(checkpoint_.held, [&](const HeldTable& h) { return h.table == qualified; });
  if (checkpoint_.held.size() != was_held) log::Info("resync of {}: it is no longer held", qualified);
  // The copy's layout: the carried exclusions and what table_options exclude and rename now.
  const DestinationTable fresh = set_.FreshDestination(schemas[0], carried.excluded);
  checkpoint_.destinations.push_back({qualified,
                                      fresh.kept_columns,
                                      {fresh.clickhouse_defaults.begin(), fresh.clickhouse_defaults.end()},
                                      {fresh.clickhouse_names.begin(), fresh.clickhouse_names.end()},
                                      fresh.aliases,
                                      fresh.excluded});
  for (const RebuildState& r : checkpoint_.rebuilds) {
    const Placement place = set_.PlaceFor(database, name);
    // A shared table (pipe/fan_in.h) is its own rebuild's copy: never dropped.
    if (r.database == database && r.table == name && r.temp_table != place.table)
      CHSYNC_RETURN_IF_ERROR(destination_.DropDestination(place.target, r.temp_table));
  }
  std::erase_if(checkpoint_.rebuilds,
                [&](const RebuildState& r) { return r.database == database && r.table == name; });
  checkpoint_.schemas = tracker_.Serialize();
  checkpoint_.saved_at_ms = NowMs();
  CHSYNC_RETURN_IF_ERROR(checkpointer_.Save(checkpoint_));
  log::Info("resync of {}: copying it again from {}; its binlog events before that are skipped", qualified,
            Coordinate(from.file, from.position));
  return Status::Ok();
}

Status Pipe::LoadState() {
  CHSYNC_ASSIGN_OR_RETURN(std::optional<Checkpoint> loaded, checkpointer_.Load());
  if (!loaded) return Error(ErrorKind::kInternal, "no checkpoint in " + checkpointer_.path());
  checkpoint_ = std::move(*loaded);
  // Before anything is done with the checkpoint's positions (a reconnect, a resync of one table).
  CHSYNC_RETURN_IF_ERROR(CheckSourceIdentity());
  CHSYNC_ASSIGN_OR_RETURN(tracker_, schema::Tracker::Deserialize(checkpoint_.schemas));
  CHSYNC_RETURN_IF_ERROR(set_.CheckRouting(checkpoint_.routing, tracker_));
  // The selection: the configured tables, then the changes `chsync tables add|remove` made. When
  // it is not the one the checkpoint's tables follow (the configuration changed), the stream
  // follows it between its first transactions (FollowSelection).
  auto selection = Selection::Make(tables_spec_, checkpoint_.selection_changes);
  if (!selection.ok()) return std::move(selection.error().AddContext("--tables"));
  set_.Select(std::move(selection).value());
  if (checkpoint_.selection.empty())
    checkpoint_.selection = set_.selection().Describe();  // an older checkpoint
  if (checkpoint_.selection != set_.selection().Describe()) {
    log::Info(
        "the table selection changed since the last run: '{}' then, '{}' now; tables it adds are copied "
        "online and tables it removes stop being applied, once streaming begins",
        checkpoint_.selection, set_.selection().Describe());
    selection_due_ = true;
  }
  // Rows files of prepared XA transactions that the checkpoint no longer names ended before it
  // (a crash came between saving it and removing them).
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(checkpointer_.path(), ec)) {
    std::string name = entry.path().filename().string();
    if (!name.starts_with("xa-") || !name.ends_with(".rows")) continue;
    bool named = std::any_of(checkpoint_.pending_xa.begin(), checkpoint_.pending_xa.end(),
                             [&](const PendingXa& x) { return x.rows_file == name; });
    if (!named) RemoveXaRows(checkpointer_.path(), name);
  }
  if (tracker_.ordinal_mode() == source_.full_metadata()) {
    return Error(ErrorKind::kConfig,
                 std::string("binlog_row_metadata changed on the source since this pipe started (now ") +
                     (source_.full_metadata() ? "FULL" : "MINIMAL") + "): run `chsync resync` to start over");
  }
  return Status::Ok();
}

Result<bool> Pipe::FollowMovedDestination(const DestinationState& saved, const std::string& database,
                                          const std::string& table) {
  if (saved.clickhouse_table.empty()) return false;  // a checkpoint older than the field
  const Placement now = set_.PlaceFor(database, table);
  const EffectiveMapping mapping = set_.MappingFor(database, table);
  const std::string key = TableKey(database, table);
  const bool moved = now.target.database != saved.clickhouse_database || now.table != saved.clickhouse_table;
  if (!moved && mapping.Shared() && !saved.source_column.empty() &&
      (saved.source_column != mapping.source_column || saved.source_value != mapping.source_value)) {
    return Error(
        ErrorKind::kConfig,
        fmt::format("{}'s rows in the shared table {} carry {} = '{}', and the configuration now "
                    "gives them {} = '{}' (source_name or source_column changed): new rows would not "
                    "replace the old ones. Restore the setting, or remove its rows (ALTER TABLE {} "
                    "DELETE WHERE {} = '{}') and run `chsync resync --state {} --table {}`",
                    key, now.Qualified(), saved.source_column, saved.source_value, mapping.source_column,
                    mapping.source_value, now.Qualified(), saved.source_column, saved.source_value,
                    checkpointer_.path(), key));
  }
  if (!moved && !mapping.Shared() && !saved.source_column.empty()) {
    // Written as a table of its own, its rows would carry no source value, and its TRUNCATE or
    // resync would empty the whole shared table.
    return Error(ErrorKind::kConfig,
                 fmt::format("{}'s rows are in {}, shared by several sources ({} = '{}'), and table_options "
                             "no longer give it a source_column: give it one again, or another dest (it is "
                             "then copied there)",
                             key, now.Qualified(), saved.source_column, saved.source_value));
  }
  if (!moved) return false;
  const Placement was{destination_.TargetIn(saved.clickhouse_database), saved.clickhouse_table};
  for (const RebuildState& r : checkpoint_.rebuilds) {
    if (r.database == database && r.table == table) {
      return Error(ErrorKind::kConfig,
                   fmt::format("table_options now put {} in the ClickHouse table {}, but its rows are in {} "
                               "and it is being rebuilt there: restore its dest in table_options until the "
                               "rebuild has finished (chsync status shows it), then change it",
                               key, now.Qualified(), was.Qualified()));
    }
  }
  if (mapping.Shared() || !saved.source_column.empty()) {
    // Into a shared table, or out of one: the rows are copied to the new place (a shared table is
    // never renamed, and a table of its own never becomes one); the old place keeps its rows.
    log::Warn("{}: table_options now put it in {} ({}); it is copied there, and {} keeps the rows it has{}",
              key, now.Qualified(), mapping.Shared() ? "shared by several sources" : "a table of its own",
              was.Qualified(),
              saved.source_column.empty()
                  ? " (drop it when you no longer need it)"
                  : fmt::format(" under {} = '{}'", saved.source_column, saved.source_value));
    return true;
  }
  CHSYNC_ASSIGN_OR_RETURN(bool was_there, destination_.DestinationTableExists(was.target, was.table));
  CHSYNC_ASSIGN_OR_RETURN(bool now_there, destination_.DestinationTableExists(now.target, now.table));
  if (was_there && now_there) {
    return Error(ErrorKind::kConfig,
                 fmt::format("table_options now put {} in the ClickHouse table {}, which exists already, "
                             "while its rows are in {}: drop or rename {} in ClickHouse, or restore the "
                             "table's dest in table_options",
                             key, now.Qualified(), was.Qualified(), now.Qualified()));
  }
  // Not there and not at the new place either: a crash came after the rename below (or the user
  // moved it); the writer's first INSERT says so if it is gone.
  if (was_there) {
    CHSYNC_RETURN_IF_ERROR(destination_.RenameDestination(was.target, was.table, now.target, now.table));
    log::Warn("{}: table_options now put it in {}: its ClickHouse table {} was renamed to {}", key,
              now.Qualified(), was.Qualified(), now.Qualified());
  }
  return false;
}

Status Pipe::BuildTables() {
  set_.tables().clear();
  std::vector<std::pair<std::string, std::string>> names;
  for (const TableSnapshot& s : checkpoint_.snapshot) {
    if (tracker_.Find(s.database, s.table) != nullptr) names.emplace_back(s.database, s.table);
  }
  CHSYNC_RETURN_IF_ERROR(request_.config.mappings.CheckDestinations(names, request_.config.dest_database));
  // Each table's writer reads its ClickHouse table's keys (RebuildWriter): one query for all of them.
  std::set<std::string> databases;
  for (const auto& [database, table] : names)
    databases.insert(set_.PlaceFor(database, table).target.StorageDatabase());
  destination_.PrefetchTableKeys(databases);
  struct Forget {
    Destination& destination;
    ~Forget() { destination.ForgetTableKeys(); }
  } forget{destination_};
  std::map<std::string, Error> refused_shared;
  std::vector<std::string> recopy;  // moved into or out of a shared table by table_options
  for (const TableSnapshot& s : checkpoint_.snapshot) {
    const schema::TableSchema* schema = tracker_.Find(s.database, s.table);
    if (schema == nullptr) continue;  // dropped at the source; its destination is kept
    auto state = std::make_unique<TableState>();
    std::string key = TableKey(s.database, s.table);
    const DestinationState* saved = nullptr;
    for (const DestinationState& d : checkpoint_.destinations) {
      if (d.table == key) saved = &d;
    }
    EffectiveMapping checked = set_.MappingFor(s.database, s.table);
    if (saved != nullptr) {
      checked.AcceptRenamedAway(saved->excluded,
                                {saved->clickhouse_names.begin(), saved->clickhouse_names.end()});
    }
    // A row filter that no longer fits the table (a column it names dropped or renamed at the
    // source) parks the table at its next row (Applier::HandleRows), not the pipe.
    if (!FilterFor(checked, *schema).ok()) checked.where.clear();
    CHSYNC_RETURN_IF_ERROR(
        CheckForPipe(checked, *schema, destination_.caps(), destination_.TargetIn(checked.dest_database)));
    state->dest =
        set_.FreshDestination(*schema, saved != nullptr ? saved->excluded : std::vector<std::string>{});
    if (saved != nullptr) {
      // Its ClickHouse table holds what it was created with: an exclusion added to table_options
      // since then would leave the column's data there, and one taken away would leave the column
      // empty. Either needs a copy made afresh.
      for (const std::string& column : state->dest.excluded) {
        if (!std::any_of(saved->excluded.begin(), saved->excluded.end(),
                         [&](const std::string& e) { return schema::EqualsIgnoreCase(e, column); })) {
          return Error(
              ErrorKind::kConfig,
              fmt::format("table_options exclude column {} of {}, which this pipe has replicated so far: "
                          "its values are in ClickHouse; run `chsync resync --state {} --table {}` to copy "
                          "the table again without it",
                          column, key, checkpointer_.path(), key));
        }
      }
      for (const std::string& column : saved->excluded) {
        if (!checked.Excluded(column) && schema->FindColumn(column) >= 0) {
          log::Warn(
              "{}: column {} is no longer in exclude_columns but stays excluded until `chsync resync "
              "--table {}` copies the table with it",
              key, column, key);
        }
      }
      CHSYNC_ASSIGN_OR_RETURN(bool copy_again, FollowMovedDestination(*saved, s.database, s.table));
      if (copy_again) recopy.push_back(key);
      state->dest.kept_columns = saved->kept_columns;
      state->dest.clickhouse_defaults = {saved->defaults.begin(), saved->defaults.end()};
      state->dest.clickhouse_names = {saved->clickhouse_names.begin(), saved->clickhouse_names.end()};
      state->dest.aliases = saved->aliases;
    }
    state->stream_from = s.stream_from;
    for (const HeldTable& h : checkpoint_.held) {
      if (h.table == key) state->held = h;
    }
    Status writer = RebuildWriter(*state);
    if (!writer.ok() && !state->held) {
      // A source a shared table cannot take (a key or a type no merged column holds) parks below,
      // as a table the policy refuses; the others go on.
      if (!checked.Shared() || writer.error().kind() != ErrorKind::kUnsupported) return writer;
      refused_shared.insert_or_assign(key, writer.error());
    }  // a held table needs no writer until it is copied again
    if (writer.ok() && saved != nullptr && !state->full_row) {
      // The table's own keys decide which updates move a row (RebuildWriter); table_options that
      // name others take effect when the table is copied again.
      std::vector<std::string> configured = checked.KeyColumns(state->dest.source);
      std::vector<std::string> actual;
      for (int index : state->key_indexes) {
        if (index >= 0) actual.push_back(state->dest.source.columns[static_cast<size_t>(index)].name);
      }
      std::sort(configured.begin(), configured.end());
      std::sort(actual.begin(), actual.end());
      if (configured != actual) {
        log::Warn(
            "{}: table_options' ORDER BY / PARTITION BY name the columns {}, but its ClickHouse table is "
            "sorted "
            "and partitioned by {}: chsync follows the table; `chsync resync --state {} --table {}` copies "
            "it "
            "under the new options",
            key, fmt::join(configured, ", "), fmt::join(actual, ", "), checkpointer_.path(), key);
      }
    }
    if (state->held) {
      log::Warn(
          "table {} is {} since {} ({}): its changes are not applied; `chsync resume --state {} --table {}` "
          "copies it again",
          key, state->held->state, state->held->position, state->held->reason, checkpointer_.path(), key);
    }
    set_.tables()[key] = std::move(state);
  }
  for (const RebuildState& r : checkpoint_.rebuilds) {
    auto it = set_.tables().find(TableKey(r.database, r.table));
    if (it == set_.tables().end()) continue;
    it->second->rebuild = std::make_unique<Rebuilder>();
    it->second->rebuild->state = r;
    CHSYNC_RETURN_IF_ERROR(StartRebuild(*it->second, r.position, r.reason, /*resume=*/true));
  }
  for (const std::string& key : recopy) {
    auto it = set_.tables().find(key);
    if (it == set_.tables().end() || it->second->held || it->second->rebuild || refused_shared.contains(key))
      continue;  // a refused one parks below
    CHSYNC_RETURN_IF_ERROR(
        StartRebuild(*it->second, Coordinate(checkpoint_.resume.file, checkpoint_.resume.position),
                     "table_options put it in another ClickHouse table", /*resume=*/false));
  }
  // Tables the policy refuses (a table without a key under keyless=refuse) park now: a fresh start's,
  // and those an earlier chsync replicated as the set of their distinct rows. Their copy is owed by
  // the park (resume copies them), not by the snapshot.
  const std::string position = Coordinate(checkpoint_.resume.file, checkpoint_.resume.position);
  bool parked = false;
  for (auto& [key, table] : set_.tables()) {
    if (table->held) continue;
    const schema::TableSchema& source = table->dest.source;
    std::optional<Error> refused;
    if (auto it = refused_shared.find(key); it != refused_shared.end()) {
      refused = it->second;
    } else if (std::optional<std::string> keyless =
                   KeylessRefusal(source, request_.config.policies.For(source.database, source.name))) {
      refused = Error(ErrorKind::kUnsupported, *keyless);
    }
    if (!refused) continue;
    CHSYNC_RETURN_IF_ERROR(ParkTable(*table, key, *refused, "", position));
    for (TableSnapshot& s : checkpoint_.snapshot) {
      if (s.database == source.database && s.table == source.name) s.state = TableSnapshot::State::kDone;
    }
    parked = true;
  }
  // Saved at once: a reload before the next checkpoint would park (and announce) them again.
  if (parked) return SaveCheckpoint();
  return Status::Ok();
}

Status Pipe::RebuildWriter(TableState& table) {
  // Kept columns that came back at the source (a DDL replayed after a crash) are source columns again.
  std::erase_if(table.dest.kept_columns,
                [&](const std::string& c) { return table.dest.source.FindColumn(c) >= 0; });
  schema::TableSchema layout = WriterSchema(table.dest);
  Placement place = set_.PlaceFor(table.dest.source.database, table.dest.source.name);
  layout.name = table.rebuild ? table.rebuild->state.temp_table : place.table;
  const clickhouse::DdlTarget& target = place.target;
  const clickhouse::Capabilities caps =
      set_.MappingFor(table.dest.source.database, table.dest.source.name).Caps(destination_.caps());
  table.shared = clickhouse::WriterOptions{};
  if (EffectiveMapping shared = set_.MappingFor(table.dest.source.database, table.dest.source.name);
      shared.Shared()) {
    // The shared table holds this source's columns, wide enough (another source or pipe may have
    // widened them): the writer encodes into the types ClickHouse has.
    CHSYNC_ASSIGN_OR_RETURN(table.shared, EnsureShared(destination_, target, place.table, layout, shared));
  }
  CHSYNC_ASSIGN_OR_RETURN(clickhouse::TableWriter writer,
                          clickhouse::TableWriter::Create(layout, caps, target, table.shared));
  if (!destination_.shard_urls().empty() && target.sharded) destination_.RouteWriter(layout, target, writer);
  std::vector<clickhouse::MappedType> types(
      writer.types().begin(),
      writer.types().begin() + static_cast<std::ptrdiff_t>(table.dest.source.columns.size()));
  CHSYNC_ASSIGN_OR_RETURN(RowConverter converter, RowConverter::Create(table.dest.source, std::move(types)));
  table.writer.emplace(std::move(writer));
  table.converter.emplace(std::move(converter));
  table.filter.reset();
  table.filter_error.reset();
  if (auto filter =
          FilterFor(set_.MappingFor(table.dest.source.database, table.dest.source.name), table.dest.source);
      filter.ok()) {
    table.filter = std::move(filter).value();
  } else {
    table.filter_error = filter.error();
  }
  const EffectiveMapping mapping = set_.MappingFor(table.dest.source.database, table.dest.source.name);
  const std::string source_key = TableKey(table.dest.source.database, table.dest.source.name);
  Metrics().NoteTableDest(source_key, TableKey(mapping.dest_database, mapping.dest_table));
  if (table.changes.empty()) table.changes.counters = Metrics().RowCounters(source_key);
  table.ignore_deletes = mapping.deletes == DeleteMode::kIgnore;
  CHSYNC_RETURN_IF_ERROR(SetUpHistory(table, mapping.history, destination_, target, place.table));
  clickhouse::SortingKey key = clickhouse::ChooseSortingKey(table.dest.source);
  table.full_row = key.full_row;
  table.key_indexes.clear();
  if (!key.full_row) {
    // An UPDATE of a column the table's ORDER BY or PARTITION BY names moves the row too: the
    // ClickHouse table's own keys say which (a column renamed at the source keeps its ClickHouse
    // name there; table_options may have changed since the table was made). A table not made yet
    // takes them from table_options.
    const schema::TableSchema& source = table.dest.source;
    CHSYNC_ASSIGN_OR_RETURN(std::optional<TableKeys> keys, destination_.ReadTableKeys(target, layout.name));
    const std::vector<std::string> columns =
        keys ? KeySourceColumns(table.dest, keys->sorting_key, keys->partition_key)
             : set_.MappingFor(source.database, source.name).KeyColumns(source);
    for (const std::string& c : columns) table.key_indexes.push_back(source.FindColumn(c));
  }
  table.table_map.reset();
  cascades_.Invalidate();
  return Status::Ok();
}

void Pipe::SyncDestinations() {
  checkpoint_.destinations.clear();
  checkpoint_.rebuilds.clear();
  checkpoint_.held.clear();
  for (const auto& [key, table] : set_.tables()) {
    if (table->held) {
      checkpoint_.held.push_back(*table->held);
      checkpoint_.held.back().table = key;  // renamed at the source since it was held
    }
    checkpoint_.destinations.push_back(
        {key,
         table->dest.kept_columns,
         {table->dest.clickhouse_defaults.begin(), table->dest.clickhouse_defaults.end()},
         {table->dest.clickhouse_names.begin(), table->dest.clickhouse_names.end()},
         table->dest.aliases,
         table->dest.excluded});
    Placement place = set_.PlaceFor(table->dest.source.database, table->dest.source.name);
    checkpoint_.destinations.back().clickhouse_database = std::move(place.target.database);
    checkpoint_.destinations.back().clickhouse_table = std::move(place.table);
    if (EffectiveMapping mapping = set_.MappingFor(table->dest.source.database, table->dest.source.name);
        mapping.Shared()) {
      checkpoint_.destinations.back().source_column = mapping.source_column;
      checkpoint_.destinations.back().source_value = mapping.source_value;
    }
    if (table->rebuild) {
      std::lock_guard<std::mutex> lock(table->rebuild->mutex);
      checkpoint_.rebuilds.push_back(table->rebuild->state);
    }
  }
}

void Pipe::BeforeCheckpoint() {
  SyncDestinations();
  status_.destination = DestinationLine();
  PublishTables();
}

Status Pipe::SaveCheckpoint() {
  checkpoint_.saved_at_ms = NowMs();
  SyncDestinations();
  RunStatus status = status_;
  status.position = Coordinate(checkpoint_.resume.file, checkpoint_.resume.position);
  status.destination = DestinationLine();
  CHSYNC_RETURN_IF_ERROR(checkpointer_.Record(checkpoint_, status, source_.server().is_mariadb(), nullptr));
  status_.updated_at_ms = checkpoint_.saved_at_ms;
  status_.position = std::move(status.position);
  status_.destination = std::move(status.destination);
  PublishTables();
  return Status::Ok();
}

void Pipe::SetPhase(const std::string& phase) {
  status_.phase = phase;
  PublishRunStatus(status_);
}

void Pipe::PublishTables() {
  std::set<std::string> copying;
  for (const TableSnapshot& s : checkpoint_.snapshot) {
    if (s.state != TableSnapshot::State::kDone) copying.insert(TableKey(s.database, s.table));
  }
  std::vector<LiveTable> list;
  list.reserve(set_.tables().size() + set_.dropped().size());
  for (const auto& [key, table] : set_.tables()) {
    list.push_back({key, table->held                 ? table->held->state
                         : table->rebuild != nullptr ? "rebuilding"
                         : copying.contains(key)     ? "snapshot"
                                                     : "streaming"});
  }
  for (const auto& [key, table] : set_.dropped()) list.push_back({key, "dropped"});
  for (const UnselectedTable& u : checkpoint_.unselected) list.push_back({u.table, "unselected"});
  Metrics().SetTables(std::move(list));
}

Status Pipe::Snapshot() {
  std::vector<SnapshotJob> jobs;
  std::vector<size_t> checkpoint_index;
  for (size_t i = 0; i < checkpoint_.snapshot.size(); ++i) {
    const TableSnapshot& s = checkpoint_.snapshot[i];
    if (s.state == TableSnapshot::State::kDone) continue;
    auto it = set_.tables().find(TableKey(s.database, s.table));
    if (it == set_.tables().end()) continue;
    SnapshotJob job;
    job.schema = it->second->dest.source;
    job.writer_schema = WriterSchema(it->second->dest);
    job.where = set_.MappingFor(s.database, s.table).where;
    job.writer_options = it->second->shared;
    job.caps = set_.MappingFor(s.database, s.table).Caps(destination_.caps());
    Placement place = set_.PlaceFor(s.database, s.table);
    job.writer_schema.name = place.table;
    job.target = place.target;
    job.progress = s;
    jobs.push_back(std::move(job));
    checkpoint_index.push_back(i);
  }
  if (jobs.empty()) return Status::Ok();

  // Row estimates for the progress display; row sizes for the chunks' byte bound. Only the copied
  // tables' databases: MariaDB opens every table a query of information_schema.TABLES may return
  // (0.3 s for the ~200 tables of a test server, before every copy).
  std::set<std::string> databases;
  for (const SnapshotJob& job : jobs) databases.insert(job.schema.database);
  std::string in_list;
  for (const std::string& database : databases)
    in_list += (in_list.empty() ? "" : ", ") + mysql::QuoteString(database);
  auto estimates = source_.control().Query(
      "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_ROWS, AVG_ROW_LENGTH FROM information_schema.TABLES WHERE "
      "TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA IN (" +
      in_list + ")");
  if (estimates.ok()) {
    for (const auto& row : estimates->rows) {
      if (row.size() < 4 || !row[0] || !row[1] || !row[2]) continue;
      for (SnapshotJob& job : jobs) {
        if (job.schema.database == *row[0] && job.schema.name == *row[1]) {
          job.row_estimate = std::strtoull(row[2]->c_str(), nullptr, 10);
          if (row[3]) job.avg_row_bytes = std::strtoull(row[3]->c_str(), nullptr, 10);
        }
      }
    }
  }

  SetPhase("snapshot");
  PublishTables();
  SnapshotOptions options;
  options.parallelism = request_.config.snapshot_parallelism;
  options.chunk_rows = request_.config.snapshot_chunk_rows;
  options.chunk_max_bytes = request_.config.batch_max_bytes;
  options.source = source_.options();
  options.dest_url = request_.config.dest;
  options.dest = destination_.options();
  options.caps = destination_.caps();
  options.terminal = request_.terminal;
  std::mutex mutex;
  // Every acknowledged chunk is in checkpoint_ at once, but saved at most once a second: a save
  // writes every table's progress, and with thousands of small tables (a chunk each) saving per
  // chunk grew as the square of their number. A crash between saves copies those chunks again,
  // which is harmless (the same keys and versions; a keyless table is recorded only when done);
  // a stop saves them (Stopped), and so does the end of the copy.
  uint64_t saved_at = 0;
  bool unsaved = false;
  auto on_chunk = [&](size_t job_index, const TableSnapshot& progress) -> Status {
    std::lock_guard<std::mutex> lock(mutex);
    checkpoint_.snapshot[checkpoint_index[job_index]] = progress;
    const uint64_t now = NowMs();
    if (saved_at != 0 && now >= saved_at && now - saved_at < kSnapshotSaveEveryMs) {
      unsaved = true;
      return Status::Ok();
    }
    saved_at = now;
    unsaved = false;
    return SaveCheckpoint();
  };
  log::Info("snapshot of {} tables ({} at a time, {} rows per chunk)", jobs.size(), options.parallelism,
            options.chunk_rows);
  Status s = RunSnapshot(jobs, options, on_chunk, stop_);
  if (s.ok() && unsaved && !stop_) s = SaveCheckpoint();
  if (!s.ok() && s.error().server_code() == 1054) {
    // ER_BAD_FIELD_ERROR: a column the snapshot reads was dropped or renamed since it started.
    return Error(ErrorKind::kUnsupported,
                 s.error().message() +
                     ". A column was dropped or renamed at the source while the table was being copied: run "
                     "`chsync resync --table DB.TABLE` for that table to copy it under its new schema");
  }
  return s;
}

void Pipe::NoteCascades() {
  if (cascades_.Refresh(set_.tables(), tracker_, set_.tables().erasures(),
                        !request_.config.dest_cluster.empty())) {
    status_.cascades = cascades_.described();
  }
}

bool Pipe::SnapshotDone() const {
  return std::all_of(checkpoint_.snapshot.begin(), checkpoint_.snapshot.end(), [&](const TableSnapshot& s) {
    return s.state == TableSnapshot::State::kDone || !set_.tables().contains(TableKey(s.database, s.table));
  });
}

Status Pipe::Run() {
  status_.pid = static_cast<int>(getpid());
  status_.policies = request_.config.policies.Describe();
  for (const std::string& line : status_.policies) log::Info("schema policies: {}", line);
  CHSYNC_RETURN_IF_ERROR(Open());
  if (stopped_at_start_) {
    log::Info("stopped while waiting for the source; nothing was read");
    return Status::Ok();
  }
  // What the source says, to name the keys a tracked schema written by an older chsync lacks.
  if (auto keys = mysql::CascadingForeignKeys(source_.control(), mysql::TableFilter::All()); keys.ok()) {
    cascades_.SetSourceKeys(std::move(keys).value());
  } else {
    log::Warn("cannot read the source's foreign keys: {}", keys.error().message());
  }
  CHSYNC_ASSIGN_OR_RETURN(std::optional<Checkpoint> existing, checkpointer_.Load());
  if (existing) {
    // The tables `chsync tables add|remove` chose stay chosen, also by a pipe that starts over
    // (a resync of every table, a load-only copy taken again).
    auto selection = Selection::Make(tables_spec_, existing->selection_changes);
    if (!selection.ok()) return std::move(selection.error().AddContext("--tables"));
    set_.Select(std::move(selection).value());
  }
  if (request_.resync && request_.resync_table.empty()) {
    log::Info("resync of every table: starting over");
    existing.reset();
  }
  CHSYNC_RETURN_IF_ERROR(CheckStartMode(existing));
  if (!existing) {
    CHSYNC_RETURN_IF_ERROR(Initialize(/*copy=*/!CdcOnlyStart()));
  } else if (request_.resync) {
    CHSYNC_RETURN_IF_ERROR(LoadState());
    CHSYNC_RETURN_IF_ERROR(ResyncTable(request_.resync_table));
  }
  while (true) {
    Status s = CopyAndStream();
    if (s.ok() || stop_ || !binlog_gap_ || request_.config.on_binlog_gap != PipeConfig::BinlogGap::kResync) {
      return s;
    }
    // on_binlog_gap=resync: what the pipe must read next is gone; copy every table again from
    // here, as `chsync resync` would, and stream on from there.
    log::Warn("{}. on_binlog_gap is resync: copying every table again from {}", s.error().message(),
              source_.Describe());
    binlog_gap_ = false;
    source_.ClearGtidGap();
    Rebuilds::StopAll(set_.tables());
    applier_.StopFlusher();
    set_.tables().clear();
    set_.dropped().clear();
    CHSYNC_RETURN_IF_ERROR(Initialize());
    ++status_.binlog_gap_resyncs;
  }
}

Status Pipe::CopyAndStream() {
  CHSYNC_RETURN_IF_ERROR(LoadState());
  // The history first: BuildTables records the tables it parks.
  if (auto previous = ReadRunStatus(checkpointer_.path()); previous.ok() && previous->has_value()) {
    status_.schema_changes = (*previous)->schema_changes;
  }
  CHSYNC_RETURN_IF_ERROR(BuildTables());
  NoteCascades();  // named before a snapshot too
  CHSYNC_RETURN_IF_ERROR(
      set_.CheckDistributedTables([this](TableState& table) { return RebuildWriter(table); }));
  if (request_.config.durable_inserts) {
    // Tables created before durable_inserts was set get the settings too (a no-op when they have them).
    for (const auto& [key, table] : set_.tables()) {
      const Placement place = set_.PlaceFor(table->dest.source.database, table->dest.source.name);
      CHSYNC_ASSIGN_OR_RETURN(bool exists, destination_.DestinationTableExists(place.target, place.table));
      if (exists)
        CHSYNC_RETURN_IF_ERROR(destination_.Ddl(clickhouse::MakeDurable(place.table, place.target)));
    }
  }

  Status copied = Snapshot();
  if (stop_) return Stopped();  // every chunk in the checkpoint was acknowledged
  CHSYNC_RETURN_IF_ERROR(copied);
  if (!SnapshotDone()) return Error(ErrorKind::kInternal, "the snapshot ended with tables left to copy");
  if (checkpoint_.load_only) {
    // snapshot.mode only: the copy read each chunk at its own moment; the binlog from the start
    // point to its end now (Stream stops there) makes every table equal the source at one point.
    CHSYNC_RETURN_IF_ERROR(Stream());
    return stop_ ? Status::Ok() : FinishLoadOnly();
  }
  return Stream();
}

Status Pipe::Stopped() {
  Rebuilds::StopAll(set_.tables());
  SetPhase("stopped");
  return SaveCheckpoint();
}

Status Pipe::Fail(const Error& error) {
  cancel_ = true;
  Rebuilds::StopAll(set_.tables());
  applier_.StopFlusher();  // stops it: the status file has one writer at a time
  status_.last_error = error.message();
  status_.updated_at_ms = NowMs();
  SetPhase("failed");
  if (checkpointer_.opened()) (void)WriteRunStatus(checkpointer_.path(), status_);
  return error;
}

Status RunPipe(const RunRequest& request, const std::atomic<bool>& stop) {
  Metrics().SetPerSourceTable(request.config.http_metrics_per_source_table);
  Pipe pipe(request, stop);
  Status s = pipe.Run();
  if (!s.ok()) return pipe.Fail(s.error());
  return s;
}

}  // namespace chsync::pipe
