// The replicated tables (table_set.h): which ones, where each is in ClickHouse, and the creation of
// its table there.

#include "pipe/table_set.h"

#include <string>
#include <vector>

#include "clickhouse/ddl.h"
#include "clickhouse/sql_quoting.h"
#include "common/log.h"
#include "pipe/fan_in.h"
#include "pipe/names.h"
#include "policy/adopt.h"
#include "schema/tracker.h"

namespace chsync::pipe {

std::string MigrationBase(std::string_view name, std::initializer_list<std::string_view> suffixes) {
  if (name.size() < 3 || name.front() != '_') return "";
  size_t begin = name.find_first_not_of('_');
  if (begin == std::string_view::npos) return "";
  for (std::string_view suffix : suffixes) {
    if (name.size() > begin + suffix.size() + 1 && name.ends_with(suffix) &&
        name[name.size() - suffix.size() - 1] == '_') {
      return std::string(name.substr(begin, name.size() - suffix.size() - 1 - begin));
    }
  }
  return "";
}

Status TableSet::Configure() {
  auto selection = Selection::Make(config_.tables, {});
  if (!selection.ok()) return std::move(selection.error().AddContext("--tables"));
  selection_ = std::move(selection).value();
  return Status::Ok();
}

std::vector<std::string> TableSet::KeyColumns(std::string_view key) const {
  std::vector<std::string> out;
  auto it = tables_.find(key);
  if (it == tables_.end()) return out;
  const schema::TableSchema& source = it->second->dest.source;
  for (int i : it->second->key_indexes) {
    if (i >= 0 && static_cast<size_t>(i) < source.columns.size())
      out.push_back(source.columns[static_cast<size_t>(i)].name);
  }
  return out;
}

TableSet::Placement TableSet::PlaceFor(std::string_view database, std::string_view table) const {
  EffectiveMapping mapping = MappingFor(database, table);
  return {destination_.TargetIn(std::move(mapping.dest_database)), std::move(mapping.dest_table)};
}

Status TableSet::CheckPlaceFree(std::string_view database, std::string_view table,
                                std::string_view moving) const {
  const Placement place = PlaceFor(database, table);
  const std::string key = TableKey(database, table);
  const EffectiveMapping mine = MappingFor(database, table);
  for (const auto& [other, state] : tables_) {
    if (other == key || other == moving) continue;
    const EffectiveMapping theirs_mapping = MappingFor(state->dest.source.database, state->dest.source.name);
    if (mine.Shared() && theirs_mapping.Shared()) {
      // Sources of one shared table are kept apart by their source value: two tables of one database
      // would mix their rows, unless one is the other's online-migration shadow.
      const bool shadow = MigrationBase(table, {"gho", "new"}) == state->dest.source.name ||
                          MigrationBase(state->dest.source.name, {"gho", "new"}) == table;
      if (mine.dest_database != theirs_mapping.dest_database ||
          mine.dest_table != theirs_mapping.dest_table || mine.source_value != theirs_mapping.source_value ||
          shadow)
        continue;
      return Error(
          ErrorKind::kConfig,
          fmt::format("{} and {} would both be replicated into the shared ClickHouse table {}.{} with "
                      "{} = '{}': a shared table keeps its sources apart by database (and source_name), "
                      "so two tables of one database cannot share it; give one of them another dest",
                      key, other, mine.dest_database, mine.dest_table, mine.source_column,
                      mine.source_value));
    }
    const Placement theirs = PlaceFor(state->dest.source.database, state->dest.source.name);
    if (theirs.target.database == place.target.database && theirs.table == place.table) {
      return Error(ErrorKind::kConfig,
                   fmt::format("{} would be replicated into the ClickHouse table {}, which holds the "
                               "replicated table {}: give one of them another dest in table_options",
                               key, place.Qualified(), other));
    }
  }
  return Status::Ok();
}

DestinationTable TableSet::FreshDestination(const schema::TableSchema& tracked,
                                            const std::vector<std::string>& also_excluded) const {
  const EffectiveMapping mapping = MappingFor(tracked.database, tracked.name);
  return NewDestination(tracked, mapping.Caps(destination_.caps()), mapping, also_excluded);
}

Result<bool> TableSet::CheckAdopted(const schema::TableSchema& tracked, const EffectiveMapping& mapping,
                                    const std::vector<std::string>& also_excluded, bool must_be_empty) {
  const Placement place = PlaceFor(tracked.database, tracked.name);
  const clickhouse::DdlTarget& target = place.target;
  const std::string dest = place.Qualified();
  const clickhouse::Capabilities caps = mapping.Caps(destination_.caps());
  if (!target.cluster.empty()) {
    return Error(ErrorKind::kConfig, "table_options for " + tracked.QualifiedName() +
                                         ": adopt is not available with dest_cluster yet (remove adopt: "
                                         "chsync creates the cluster's tables)");
  }
  CHSYNC_ASSIGN_OR_RETURN(std::string table_answer,
                          destination_.connection().Query(ExistingTableQuery(target.database, place.table)));
  CHSYNC_ASSIGN_OR_RETURN(std::string columns_answer, destination_.connection().Query(ExistingColumnsQuery(
                                                          target.database, place.table, caps)));
  auto existing = ParseExistingTable(table_answer, columns_answer, caps);
  if (!existing.ok() && existing.error().kind() == ErrorKind::kNotFound) {
    log::Info("{}: table_options adopt it, but ClickHouse has no table {}: chsync creates it",
              tracked.QualifiedName(), dest);
    return false;
  }
  if (!existing.ok()) return std::move(existing).error();
  clickhouse::CreateOptions options = mapping.CreateOptions();
  options.table.clear();
  CHSYNC_ASSIGN_OR_RETURN(
      clickhouse::TableLayout wanted,
      clickhouse::DestinationLayout(NewDestination(tracked, caps, mapping, also_excluded).source, caps,
                                    target, options));
  const AdoptionReport report = CompareForAdoption(wanted, *existing);
  CHSYNC_RETURN_IF_ERROR(CheckAdoption(report, tracked.QualifiedName(), dest));
  for (const std::string& note : report.notes)
    log::Info("adopting {} for {}: {}", dest, tracked.QualifiedName(), note);
  if (must_be_empty) {
    CHSYNC_ASSIGN_OR_RETURN(std::string rows, destination_.RowCount(target, place.table));
    while (!rows.empty() && (rows.back() == '\n' || rows.back() == '\r')) rows.pop_back();
    if (rows != "0") {
      return Error(
          ErrorKind::kConfig,
          fmt::format("cannot adopt the ClickHouse table {} for {}: it holds {} rows, and chsync copies "
                      "the source into an empty table (rows it did not write might not exist at the "
                      "source); empty it (TRUNCATE TABLE {}) or drop it",
                      dest, tracked.QualifiedName(), rows, dest));
    }
  }
  return true;
}

Status TableSet::CreateDestination(const schema::TableSchema& tracked, bool replace, const std::string& name,
                                   const DestinationTable* carried) {
  // The table's `table_options:`, checked before anything is dropped.
  EffectiveMapping mapping = MappingFor(tracked.database, tracked.name);
  if (carried != nullptr) mapping.AcceptRenamedAway(carried->excluded, carried->clickhouse_names);
  clickhouse::DdlTarget target = destination_.TargetIn(mapping.dest_database);
  CHSYNC_RETURN_IF_ERROR(CheckForPipe(mapping, tracked, destination_.caps(), target));
  const clickhouse::Capabilities caps = mapping.Caps(destination_.caps());
  schema::TableSchema table =
      NewDestination(tracked, caps, mapping,
                     carried != nullptr ? carried->excluded : std::vector<std::string>{})
          .source;
  table.name = name.empty() ? mapping.dest_table : name;
  if (mapping.Shared()) {
    // One table for many sources: never replaced; emptied of this source's rows alone.
    schema::TableSchema layout =
        WriterSchema(NewDestination(tracked, destination_.caps(), mapping,
                                    carried != nullptr ? carried->excluded : std::vector<std::string>{}));
    auto ensured = EnsureShared(destination_, target, mapping.dest_table, layout, mapping);
    if (!ensured.ok()) return std::move(ensured).error();
    return replace ? ClearSourceRows(destination_, target, mapping.dest_table, mapping) : Status::Ok();
  }
  if (!mapping.IsDefault()) {
    for (const std::string& line : mapping.Describe())
      log::Info("creating {}: {}", table.QualifiedName(), line);
  }
  if (mapping.adopt && name.empty()) {
    // The user's table is used as it is (emptied when the table is copied again), never replaced;
    // an online rebuild's new table (`name`) is created as chsync lays it out.
    CHSYNC_ASSIGN_OR_RETURN(
        bool adopted,
        CheckAdopted(tracked, mapping, carried != nullptr ? carried->excluded : std::vector<std::string>{},
                     /*must_be_empty=*/false));
    if (adopted) {
      log::Info("{}: using the ClickHouse table {}.{} (adopt)", tracked.QualifiedName(), target.database,
                table.name);
      return replace ? destination_.TruncateDestination(target, table.name) : Status::Ok();
    }
  }
  clickhouse::CreateOptions options = mapping.CreateOptions();
  options.table.clear();  // named by `table`
  CHSYNC_RETURN_IF_ERROR(destination_.Ddl(clickhouse::CreateDatabase(target)));
  if (target.sharded)
    CHSYNC_RETURN_IF_ERROR(destination_.Ddl(clickhouse::CreateDatabase(target.StorageDatabase(), target)));
  if (replace) CHSYNC_RETURN_IF_ERROR(destination_.DropDestination(target, table.name));
  CHSYNC_ASSIGN_OR_RETURN(std::string create, clickhouse::CreateTable(table, caps, target, options));
  CHSYNC_RETURN_IF_ERROR(destination_.Ddl(create));
  return destination_.EnsureDistributed(target, table.name, /*recreate=*/false);
}

EffectiveMapping TableSet::MappingFor(std::string_view database, std::string_view table) const {
  const PipeConfig& config = config_;
  const std::string base = MigrationBase(table, {"gho", "ghc", "del", "old", "new"});
  if (base.empty() || !(tables_.contains(TableKey(database, base)) || selection_.Matches(database, base))) {
    EffectiveMapping m = config.mappings.For(database, table, config.dest_database);
    if (!config.source_name.empty()) m.source_value = config.source_name + "/" + m.source_value;
    return m;
  }
  // A table an online schema migration tool made for a replicated table (its shadow, the old table it
  // renames away) takes the base table's options, so that excluded columns never reach ClickHouse
  // through the shadow and the swap brings ORDER BY, renames and codecs along; its ClickHouse name is
  // made from the base's as the tool made its own (`_orders_v2_gho` for `_orders_gho`).
  EffectiveMapping m = config.mappings.For(database, base, config.dest_database);
  if (!config.source_name.empty()) m.source_value = config.source_name + "/" + m.source_value;
  const size_t begin = table.find_first_not_of('_');
  m.source_table = std::string(table);
  // A shared table's migration writes into the shared table itself, under the base's source (the
  // shadow's rows are the base's rows), and its swap only moves which source table feeds it.
  if (!m.Shared()) {
    m.dest_table =
        std::string(table.substr(0, begin)) + m.dest_table + std::string(table.substr(begin + base.size()));
  }
  // The migration may drop or rename a column the base's entries name: not an error in its copy.
  for (NamedColumn& n : m.excluded) n.exact = false;
  for (auto& [n, to] : m.renamed) n.exact = false;
  for (auto& [n, options] : m.columns) n.exact = false;
  return m;
}

bool TableSet::ShouldReplicate(std::string_view database, std::string_view name) const {
  if (selection_.Matches(database, name)) {
    // gh-ost's changelog and sentry and the old table a migration renames away, beside a base
    // whose ClickHouse table is shared (pipe/fan_in.h), hold none of the base's rows: they would be
    // merged under its source value. Only the shadow (`_t_gho`, `_t_new`) writes there.
    const std::string base = MigrationBase(name, {"ghc", "del", "old"});
    return base.empty() ||
           !((tables_.contains(TableKey(database, base)) || selection_.Matches(database, base)) &&
             config_.mappings.For(database, base, config_.dest_database).Shared());
  }
  std::string base = MigrationBase(name, {"gho", "new"});
  return !base.empty() && tables_.contains(TableKey(database, base));
}

bool TableSet::IsMigrationLeftover(std::string_view database, std::string_view name) const {
  std::string base = MigrationBase(name, {"gho", "ghc", "del", "old", "new"});
  return !base.empty() && (tables_.contains(TableKey(database, base)) || selection_.Matches(database, base));
}

PolicyContext TableSet::ContextFor(std::string_view source_database, std::string_view table,
                                   bool ordinal_mode) const {
  PolicyContext context;
  context.ordinal_mode = ordinal_mode;
  context.policy = config_.policies.For(source_database, table);
  context.mapping = MappingFor(source_database, table);
  context.caps = context.mapping.Caps(destination_.caps());
  context.target = table.empty() ? destination_.TargetFor(source_database)
                                 : destination_.TargetIn(context.mapping.dest_database);
  context.clickhouse_key_columns = KeyColumns(TableKey(source_database, table));
  return context;
}

Status TableSet::CheckDistributedTables(const std::function<Status(TableState&)>& rebuild_writer) {
  if (!destination_.sharded()) return Status::Ok();
  for (const auto& [key, table] : tables_) {
    const Placement place = PlaceFor(table->dest.source.database, table->dest.source.name);
    CHSYNC_ASSIGN_OR_RETURN(std::optional<Destination::TableKeys> keys,
                            destination_.ReadTableKeys(place.target, place.table));
    if (!keys) continue;  // no local table yet: chsync creates both
    CHSYNC_ASSIGN_OR_RETURN(std::string engine, destination_.DistributedEngine(place.target, place.table));
    if (engine.empty()) {
      // Dropped by someone (or by a crash between two steps): made again, and its rows routed.
      CHSYNC_RETURN_IF_ERROR(destination_.EnsureDistributed(place.target, place.table, /*recreate=*/false));
      CHSYNC_RETURN_IF_ERROR(rebuild_writer(*table));
      continue;
    }
    const auto differs = clickhouse::DistributedDiffers(
        engine, place.target.cluster, place.target.local_database, place.table, keys->sorting_key);
    if (differs) return destination_.ForeignDistributedError(place.target, place.table, differs->what);
  }
  return Status::Ok();
}

Status TableSet::CheckRouting(std::optional<Routing>& recorded, const schema::Tracker& tracker) const {
  if (!recorded) {
    // A checkpoint older than the field: what routes now is all there is to go by.
    log::Info("recording the destination's routing: {}", DescribeRouting(destination_.routing_now()));
    recorded = destination_.routing_now();
    return Status::Ok();
  }
  // How keys print matters only for sharding keys that hold a decimal or a date (21.9 changed
  // their text); keys of integers and strings hash alike on every version.
  bool key_text_matters = false;
  for (const schema::TableSchema* t : tracker.Tables()) {
    if (!selection_.Matches(t->database, t->name)) continue;
    std::vector<std::string> key = clickhouse::ChooseSortingKey(*t).columns;
    for (std::string& c : MappingFor(t->database, t->name).KeyColumns(*t)) key.push_back(std::move(c));
    for (const std::string& name : key) {
      const schema::Column* c = t->GetColumn(name);
      using T = schema::ColumnType;
      if (c != nullptr && (c->type == T::kDecimal || c->type == T::kDate || c->type == T::kDateTime ||
                           c->type == T::kTimestamp)) {
        key_text_matters = true;
      }
    }
  }
  if (std::optional<std::string> change =
          RoutingChange(*recorded, destination_.routing_now(), key_text_matters)) {
    return Error(
        ErrorKind::kConfig,
        *change +
            ": new versions of a key would go to another shard than its rows in ClickHouse, and FINAL "
            "(which merges each shard alone) would show both. Either restore the cluster (its shards and "
            "shard_weight in remote_servers, the ClickHouse version, --dest-cluster), or run `chsync resync` "
            "with the same flags to copy every table again under the new routing (docs/clusters.md, "
            "\"Routing is recorded\")");
  }
  // Same routing; a key text found now replaces one no style matched before.
  if (destination_.routing_now().key_text != "unknown") recorded = destination_.routing_now();
  return Status::Ok();
}

}  // namespace chsync::pipe
