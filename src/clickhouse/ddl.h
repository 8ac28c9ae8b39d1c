#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clickhouse/capabilities.h"
#include "clickhouse/type_mapping.h"
#include "common/result.h"
#include "schema/table_schema.h"

namespace chsync::clickhouse {

/// Names of the metadata columns every destination table carries (ARCHITECTURE.md).
inline constexpr std::string_view kVersionColumn = "_chsync_version";
inline constexpr std::string_view kIsDeletedColumn = "_chsync_is_deleted";
inline constexpr std::string_view kSyncedAtColumn = "_chsync_synced_at";

/// Where statements go and how they are distributed.
struct DdlTarget {
  std::string database;  ///< destination database
  /// ON CLUSTER name; empty for a single server. With a cluster, tables use
  /// ReplicatedReplacingMergeTree at `replication_path` with replica `replica_name`.
  std::string cluster;
  /// Keeper path of replicated tables; "{db}" (or "{database}") and "{table}" are replaced by the
  /// destination names (literally: see ReplicationPath in clickhouse/cluster.h), then "/" +
  /// path_token is appended.
  std::string replication_path = "/clickhouse/tables/{shard}/{database}/{table}";
  std::string replica_name = "{replica}";
  /// Makes the path of each created table unique (see ReplicationPath); empty: nothing appended.
  std::string path_token;
  /// A cluster of more than one shard: the tables live in local_database on every shard, and
  /// `database` holds a Distributed table of the same name over them (docs/clusters.md). Every
  /// builder here but CreateDatabase and InsertPrefix addresses the local table.
  bool sharded = false;
  std::string local_database;

  /// Where the tables themselves are: local_database when sharded, else database.
  const std::string& StorageDatabase() const { return sharded ? local_database : database; }
  /// Tables are created with `SETTINGS fsync_after_insert = 1, fsync_part_directory = 1`, so that
  /// an INSERT ClickHouse acknowledged survives a power loss of its host (by default ClickHouse
  /// acknowledges once the part is in the page cache). Costs an fsync per inserted part. Needs
  /// caps.fsync_after_insert: CreateTable fails otherwise, never creates a table silently weaker.
  bool durable = false;
};

/// The MergeTree settings of a durable table (DdlTarget::durable), for any statement that creates
/// or alters one.
inline constexpr std::string_view kDurableSettings = "fsync_after_insert = 1, fsync_part_directory = 1";

/// The sorting key of a destination table, chosen by this rule (docs/types.md, "Keys"):
/// 1. the source's primary key, in key order;
/// 2. else the first UNIQUE key whose columns are all NOT NULL (what InnoDB itself would cluster by);
/// 3. else every column (a "full-row key"): identical rows collapse into one, and the pipe must
///    apply an UPDATE as a tombstone for the before-image plus a new row (as for a key change).
struct SortingKey {
  std::vector<std::string> columns;
  bool full_row = false;
};
SortingKey ChooseSortingKey(const schema::TableSchema& table);

/// CREATE DATABASE IF NOT EXISTS `db` [ON CLUSTER c] (target.database; create
/// target.StorageDatabase() too when it differs).
std::string CreateDatabase(const DdlTarget& target);
std::string CreateDatabase(std::string_view database, const DdlTarget& target);

/// The ENGINE of a ReplacingMergeTree table named `table` with engine arguments `arguments`:
/// "ReplacingMergeTree(arguments)" on one server, ReplicatedReplacingMergeTree at the table's
/// ReplicationPath with target.replica_name on a cluster.
std::string ReplacingEngine(std::string_view table, std::string_view arguments, const DdlTarget& target);

/// Storage options of one destination column (`table_options: … columns:`, docs/mapping.md).
struct ColumnOptions {
  /// The codecs inside CODEC( ), e.g. "ZSTD(3)" or "Delta, LZ4"; empty: the server's default
  /// compression. Needs caps.codec.
  std::string codec;
  /// The column is stored as LowCardinality(T), outside Nullable: LowCardinality(Nullable(String)).
  /// Only for columns stored as String (ClickHouse refuses LowCardinality of numbers, dates and
  /// enums without allow_suspicious_low_cardinality_types); needs caps.low_cardinality. RowBinary
  /// writes such a column exactly as T, so the encoder does not change.
  bool low_cardinality = false;

  bool operator==(const ColumnOptions&) const = default;
};

/// What the configuration changes in a destination table (policy/mapping.h builds it from
/// `table_options:`, and checks it against the source table first). The default changes nothing.
/// Column names here are those of the schema handed to CreateTable (the source names); a lookup
/// by ClickHouse name finds the same column, so a schema whose columns carry their ClickHouse
/// names already (pipe::WriterSchema) works too. Names compare case-insensitively, as MySQL's do.
struct CreateOptions {
  /// The ClickHouse table's name; empty: the source table's (table.name). CreateTable and
  /// DestinationLayout only: the ALTER builders name their table themselves.
  std::string table;
  /// Columns stored under another name: (column, ClickHouse name).
  std::vector<std::pair<std::string, std::string>> column_names;
  /// Per-column storage options: (column, options).
  std::vector<std::pair<std::string, ColumnOptions>> columns;
  /// The elements of ORDER BY (ClickHouse expressions over ClickHouse column names), written as
  /// ORDER BY (e1, e2, …), instead of ChooseSortingKey's columns; empty: chsync's key. REQUIRES
  /// that they hold the sorting key (pipe::Validate checks it).
  std::vector<std::string> order_by;
  std::string partition_by;  ///< PARTITION BY expression; empty: none
  std::string ttl;           ///< table TTL (expression and actions); empty: none. Needs caps.ttl
  /// MergeTree settings as (name, value as ClickHouse literal text: 4096, 'hot'), after
  /// kDurableSettings where target.durable (naming one of those then is an error).
  std::vector<std::pair<std::string, std::string>> settings;
  /// Many source tables into one table (docs/mapping.md, "Many sources into one table"): the
  /// String column, first of the table and of its ORDER BY, that holds which source a row came
  /// from. The table's columns are then stored as SharedStorageType says (clickhouse/merged_type.h),
  /// and AddColumn adds a column at the end.
  std::string source_column;

  /// The ClickHouse name of `column` (a column name of the schema, or already a ClickHouse name).
  std::string ClickHouseName(std::string_view column) const;
  /// The options of `column` (either name), or nullptr.
  const ColumnOptions* Column(std::string_view column) const;

  bool operator==(const CreateOptions&) const = default;
};

/// A destination table as CreateTable creates it, in the terms ClickHouse reports an existing
/// table by (system.columns, system.tables): for rendering the CREATE TABLE and for comparing an
/// existing table with it (policy/adopt.h).
struct TableLayout {
  struct Column {
    std::string name;                ///< ClickHouse name
    std::string type;                ///< the full type: LowCardinality(Nullable(String))
    std::string default_expression;  ///< DEFAULT expression; empty: none
    std::string codec;               ///< the codecs inside CODEC( ); empty: none
    std::string source;              ///< the schema's column it holds; empty for metadata columns
    bool operator==(const Column&) const = default;
  };
  std::string database;  ///< target.StorageDatabase()
  std::string table;     ///< ClickHouse name
  /// The schema's columns in order, then _chsync_version, _chsync_is_deleted, _chsync_synced_at.
  std::vector<Column> columns;
  /// The engine as system.tables.engine names it: ReplacingMergeTree, or
  /// ReplicatedReplacingMergeTree on a cluster (its path and replica arguments come first).
  std::string engine;
  /// The engine's column arguments: _chsync_version[, _chsync_is_deleted] (unquoted names).
  std::vector<std::string> engine_columns;
  /// The elements of ORDER BY as written: {"`id`"}, {"isNull(`a`)", "assumeNotNull(`a`)"}, …
  std::vector<std::string> order_by;
  std::string partition_by;
  std::string ttl;
  std::vector<std::pair<std::string, std::string>> settings;  ///< kDurableSettings' first when durable

  bool operator==(const TableLayout&) const = default;
};

/// The layout of `table`'s destination table: the mapped source columns (renamed, LowCardinality
/// and CODEC as `options` say), the metadata columns, ReplacingMergeTree(_chsync_version[,
/// _chsync_is_deleted]) (the second argument where caps.replacing_is_deleted), ORDER BY
/// options.order_by or else ChooseSortingKey, where Nullable key columns enter the key as
/// isNull(c), assumeNotNull(c); kDurableSettings where target.durable, then options.settings.
/// Fails with kUnsupported when a column cannot be mapped, a source column (or a ClickHouse name)
/// is a metadata column's name, target.durable is set and the server lacks
/// caps.fsync_after_insert, or an option needs what the server lacks (CODEC: caps.codec; TTL:
/// caps.ttl; LowCardinality: caps.low_cardinality), the message naming the option and the server
/// version; with kConfig when options contradict the table (LowCardinality of a column not stored
/// as String, two columns under one ClickHouse name, a durable setting set again).
Result<TableLayout> DestinationLayout(const schema::TableSchema& table, const Capabilities& caps,
                                      const DdlTarget& target, const CreateOptions& options = {});

/// CREATE TABLE IF NOT EXISTS for `table` as DestinationLayout lays it out, named options.table
/// (else table.name) in target.StorageDatabase(): columns one per line, then ENGINE, PARTITION BY,
/// ORDER BY, TTL and SETTINGS in the order ClickHouse 18.16 requires. Fails as DestinationLayout.
Result<std::string> CreateTable(const schema::TableSchema& table, const Capabilities& caps,
                                const DdlTarget& target, const CreateOptions& options = {});

/// The type `mapped` is stored as, with `options` (nullptr: none): LowCardinality(…) around it when
/// asked. `what` names the column in errors ("table shop.orders: column status"). Fails as
/// DestinationLayout does for LowCardinality.
Result<std::string> DestinationType(const MappedType& mapped, const ColumnOptions* options,
                                    const Capabilities& caps, std::string_view what);

/// " CODEC(…)" for `options` (nullptr or no codec: ""), to follow a column's type and DEFAULT.
/// kUnsupported without caps.codec.
Result<std::string> CodecClause(const ColumnOptions* options, const Capabilities& caps,
                                std::string_view what);

/// ALTER TABLE `db`.`t` [ON CLUSTER c] MODIFY SETTING fsync_after_insert = 1, fsync_part_directory = 1:
/// makes a table created before DdlTarget::durable was set durable for the inserts that follow
/// (parts already written are not fsynced by it). REQUIRES caps.fsync_after_insert (on older servers
/// ClickHouse rejects the settings, or accepts them without effect).
std::string MakeDurable(std::string_view table, const DdlTarget& target);

/// ALTER TABLE … ADD COLUMN for `column`, positioned AFTER `after` (empty: FIRST where the server
/// supports it, else at the end), with its DEFAULT when schema's parsed default is a portable
/// literal (DefaultExpression). The column (and `after`) get their ClickHouse names and the column
/// its LowCardinality and CODEC from `options`, so that a column added later is stored as
/// configured; fails as DestinationLayout does for them.
Result<std::string> AddColumn(std::string_view table, const schema::Column& column, std::string_view after,
                              const Capabilities& caps, const DdlTarget& target,
                              const CreateOptions& options = {});

/// ALTER TABLE … MODIFY COLUMN `c` <type of `column` as now declared>, e.g. to make it Nullable or
/// to extend an Enum's labels. With `options`, under its ClickHouse name and with its LowCardinality
/// and CODEC restated (a MODIFY that leaves them out would drop them); `restated_default`, when
/// not empty, is written as DEFAULT before the CODEC (appending " DEFAULT …" to the statement is
/// only right without a codec).
Result<std::string> ModifyColumn(std::string_view table, const schema::Column& column,
                                 const Capabilities& caps, const DdlTarget& target,
                                 const CreateOptions& options = {}, std::string_view restated_default = "");

/// ALTER TABLE … RENAME COLUMN; kUnsupported on servers without it (before 20.4).
Result<std::string> RenameColumn(std::string_view table, std::string_view from, std::string_view to,
                                 const Capabilities& caps, const DdlTarget& target);

std::string DropTable(std::string_view table, const DdlTarget& target);
std::string TruncateTable(std::string_view table, const DdlTarget& target);
/// RENAME TABLE `db`.`from` TO `db`.`to`.
std::string RenameTable(std::string_view from, std::string_view to, const DdlTarget& target);

/// The ClickHouse DEFAULT expression for the column's parsed MySQL default when it is a portable
/// literal that the column's type can hold exactly (numbers, strings, TRUE/FALSE, b'…', X'…',
/// valid dates and datetimes); nullopt otherwise (CURRENT_TIMESTAMP, expressions, NULL, zero
/// dates): an omitted default is never guessed.
std::optional<std::string> DefaultExpression(const schema::Column& column, const MappedType& mapped);

/// "INSERT INTO `db`.`t` (`a`, `b`) FORMAT RowBinary". With `json` (a column is kJson), the
/// INSERT reads JSON values as their text (input_format_binary_read_json_as_string) and keeps the
/// first of two keys that name one path ({"a.b": 1, "a": {"b": 2}}: type_json_skip_duplicated_paths)
/// rather than refusing the row.
std::string InsertPrefix(std::string_view database, std::string_view table,
                         const std::vector<std::string>& columns, bool json = false);

}  // namespace chsync::clickhouse
