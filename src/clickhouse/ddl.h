#pragma once

#include <optional>
#include <string>
#include <string_view>
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

/// CREATE TABLE IF NOT EXISTS for `table` (named table.name in target.database): the mapped source
/// columns, the metadata columns, ReplacingMergeTree(_chsync_version[, _chsync_is_deleted]) (the
/// second argument where caps.replacing_is_deleted), ORDER BY ChooseSortingKey. Nullable key
/// columns enter the key as isNull(c), assumeNotNull(c); `SETTINGS kDurableSettings` where
/// target.durable. Fails (kUnsupported) when a column cannot be mapped, a source column uses a
/// metadata column's name, or target.durable is set and the server lacks caps.fsync_after_insert.
Result<std::string> CreateTable(const schema::TableSchema& table, const Capabilities& caps,
                                const DdlTarget& target);

/// ALTER TABLE `db`.`t` [ON CLUSTER c] MODIFY SETTING fsync_after_insert = 1, fsync_part_directory = 1:
/// makes a table created before DdlTarget::durable was set durable for the inserts that follow
/// (parts already written are not fsynced by it). REQUIRES caps.fsync_after_insert (on older servers
/// ClickHouse rejects the settings, or accepts them without effect).
std::string MakeDurable(std::string_view table, const DdlTarget& target);

/// ALTER TABLE … ADD COLUMN for `column`, positioned AFTER `after` (empty: FIRST where the server
/// supports it, else at the end), with its DEFAULT when schema's parsed default is a portable
/// literal (DefaultExpression).
Result<std::string> AddColumn(std::string_view table, const schema::Column& column, std::string_view after,
                              const Capabilities& caps, const DdlTarget& target);

/// ALTER TABLE … MODIFY COLUMN `c` <type of `column` as now declared>, e.g. to make it Nullable or
/// to extend an Enum's labels.
Result<std::string> ModifyColumn(std::string_view table, const schema::Column& column,
                                 const Capabilities& caps, const DdlTarget& target);

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

/// "INSERT INTO `db`.`t` (`a`, `b`) FORMAT RowBinary".
std::string InsertPrefix(std::string_view database, std::string_view table,
                         const std::vector<std::string>& columns);

}  // namespace chsync::clickhouse
