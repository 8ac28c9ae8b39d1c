#pragma once

// The replicated tables: which source tables the pipe replicates (--tables, and the tables an
// online schema migration tool makes for them), where each goes in ClickHouse under its
// table_options (docs/mapping.md), the tables while the pipe runs (their destination, writer and
// key) and the ones dropped at the source whose ClickHouse table is kept. It creates a table's
// ClickHouse table, or adopts the user's; the statements go through the Destination.

#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clickhouse/ddl.h"
#include "common/result.h"
#include "config/config.h"
#include "config/selection.h"
#include "mysql/table_filter.h"
#include "pipe/destination.h"
#include "pipe/live_tables.h"
#include "policy/ddl_policy.h"
#include "policy/mapping.h"
#include "schema/table_schema.h"
#include "schema/tracker.h"
#include "state/checkpoint.h"

namespace chsync::pipe {

/// `name` as `_…_<base>_<suffix>` (an online schema migration tool's table) with suffix one of
/// `suffixes` ("gho", "new", …): the base table's name, or "".
std::string MigrationBase(std::string_view name, std::initializer_list<std::string_view> suffixes);

class TableSet {
 public:
  /// Where source table database.table is in ClickHouse: its table_options' dest_database and
  /// dest_table, else the pipe's destination database and the source name (docs/mapping.md). A
  /// function of the source name: a table renamed at the source moves to its new name's place.
  struct Placement {
    clickhouse::DdlTarget target;
    std::string table;
    /// "db.table", for messages and the checkpoint.
    std::string Qualified() const { return target.database + "." + table; }
  };

  /// `config` (tables, table_options, dest_database) and `destination` outlive this object.
  TableSet(const PipeConfig& config, Destination& destination) : config_(config), destination_(destination) {}

  /// Parses config.tables (every table when empty).
  Status Configure();
  /// Which tables are selected: config.tables, then the changes of `chsync tables add|remove`.
  const Selection& selection() const { return selection_; }
  /// The selection from now on (the pipe adds and removes tables to follow it).
  void Select(Selection selection) { selection_ = std::move(selection); }

  /// The replicated tables while the pipe runs, by "db.t".
  TableStates& tables() { return tables_; }
  const TableStates& tables() const { return tables_; }
  /// Replicated tables dropped at the source (their ClickHouse table is kept), by "db.t".
  std::map<std::string, DestinationTable>& dropped() { return dropped_; }
  const std::map<std::string, DestinationTable>& dropped() const { return dropped_; }

  /// Whether db.name is replicated: it matches --tables, or it is the shadow table of an online
  /// schema migration tool (gh-ost `_t_gho`, pt-online-schema-change `_t_new`) of a replicated t.
  bool ShouldReplicate(std::string_view database, std::string_view name) const;
  /// Whether db.name is a table an online schema migration tool leaves behind for a replicated
  /// table (`_t_del`, `_t_old`, `_t_ghc`, a shadow): dropped in ClickHouse when dropped at the source.
  bool IsMigrationLeftover(std::string_view database, std::string_view name) const;

  Placement PlaceFor(std::string_view database, std::string_view table) const;
  /// The table_options in force for source table database.table (MappingSet::For with the pipe's
  /// destination database); an online schema migration's table of a replicated table (gh-ost
  /// `_t_gho`, pt-online-schema-change `_t_new`, `_t_del`, `_t_old`) gets its base table's.
  EffectiveMapping MappingFor(std::string_view database, std::string_view table) const;
  /// kConfig when another replicated table than database.table (and `moving`, a table being
  /// renamed onto that name) has the ClickHouse place database.table would have.
  Status CheckPlaceFree(std::string_view database, std::string_view table,
                        std::string_view moving = "") const;
  /// The sorting key columns of the ClickHouse table of replicated table `key`, as the table was
  /// read from ClickHouse (none for a table not replicated now).
  std::vector<std::string> KeyColumns(std::string_view key) const;

  /// The destination of tracked table `tracked` under its table_options (NewDestination with the
  /// mapping): what CreateDestination creates.
  DestinationTable FreshDestination(const schema::TableSchema& tracked,
                                    const std::vector<std::string>& also_excluded = {}) const;
  /// `adopt: true` (docs/mapping.md): whether ClickHouse has the table of `tracked` (false: chsync
  /// creates it); kConfig naming every difference when it is not what chsync would create under
  /// `mapping`, or (`must_be_empty`, before the first copy) when it holds rows.
  Result<bool> CheckAdopted(const schema::TableSchema& tracked, const EffectiveMapping& mapping,
                            const std::vector<std::string>& also_excluded, bool must_be_empty);
  /// Creates the ClickHouse table of tracked table `tracked` (`name`: under that name, an online
  /// rebuild's temp table) as FreshDestination lays it out, after checking its table_options;
  /// `replace` drops a table of that name first. `carried`: the table's destination so far, whose
  /// exclusions carry over (EffectiveMapping::AcceptRenamedAway). An adopted table is checked and
  /// kept (emptied with `replace`), not created.
  Status CreateDestination(const schema::TableSchema& tracked, bool replace, const std::string& name = "",
                           const DestinationTable* carried = nullptr);

  /// The policies, placement and key of source table database.table (or, with `table` empty, of
  /// its database), for planning a schema change; `ordinal_mode`: the source sends no column names.
  PolicyContext ContextFor(std::string_view source_database, std::string_view table, bool ordinal_mode) const;
  /// The checkpoint's rows were routed as the destination routes now (RoutingChange), else kConfig
  /// with how to reshard. `recorded`: the checkpoint's routing, recorded when it has none (a
  /// checkpoint older than the field) or a key text is found now; `tracker`: the tracked schemas.
  Status CheckRouting(std::optional<Routing>& recorded, const schema::Tracker& tracker) const;
  /// Sharded: every table's Distributed table is chsync's (DistributedDiffers), else kConfig naming
  /// the table and the difference. A missing one is made again, and the table's writer with
  /// `rebuild_writer` (its rows routed anew).
  Status CheckDistributedTables(const std::function<Status(TableState&)>& rebuild_writer);

 private:
  const PipeConfig& config_;
  Destination& destination_;
  Selection selection_;
  TableStates tables_;
  std::map<std::string, DestinationTable> dropped_;
};

}  // namespace chsync::pipe
