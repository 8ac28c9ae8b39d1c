#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "schema/default_translation.h"
#include "schema/lexer.h"
#include "schema/statement.h"
#include "schema/table_schema.h"

namespace chsync::schema {

/// One typed schema change produced by applying a statement.
struct SchemaChange {
  enum class Kind {
    kTableCreated,  ///< `schema` is the new table
    kTableDropped,  ///< `table` is gone
    kTableRenamed,  ///< `old_table` → `table`
    kTableTruncated,
    kTableReplaced,         ///< a rename moved another table onto `table` (gh-ost/pt-osc swap); the column
                            ///< changes that follow (same `table`) compare old and new by column name
    kColumnAdded,           ///< `column` (definition), `position`, `default_translation`
    kColumnDropped,         ///< `column` is the dropped definition
    kColumnRenamed,         ///< `old_column_name` → `column.name`
    kColumnModified,        ///< `old_column` → `column` (type, nullability, charset, visibility, …)
    kColumnMoved,           ///< `column` now at `position`
    kDefaultChanged,        ///< SET/DROP DEFAULT or a MODIFY that changed only the default (not propagated)
    kKeysChanged,           ///< primary key or unique keys differ; `schema` holds the new table
    kTableOptionsChanged,   ///< engine or default charset/collation
    kPartitionDataChanged,  ///< TRUNCATE/DROP/EXCHANGE PARTITION removed or swapped rows; `note` says which
  };
  Kind kind = Kind::kTableCreated;
  TableName table;      ///< the table after the change (fully qualified)
  TableName old_table;  ///< kTableRenamed
  Column column;        ///< column changes: the column after the change (before it for kColumnDropped)
  std::optional<Column> old_column;  ///< kColumnModified/kDefaultChanged: before the change
  std::string old_column_name;       ///< kColumnRenamed
  /// kColumnAdded/kColumnMoved: 1-based position after the statement, and the column before it
  /// (empty when first).
  uint32_t position = 0;
  std::string after_column;
  /// kColumnAdded: the added column's default translated for ClickHouse.
  DefaultTranslation default_translation;
  /// True when the change moves an existing column to another ordinal position or removes one
  /// (DROP COLUMN; ADD/MODIFY/CHANGE … FIRST/AFTER that actually moves columns). ADD … AFTER the
  /// last column shifts nothing and is not flagged.
  bool shifts_positions = false;
  /// ordinal mode && shifts_positions: rows can no longer be matched by position; the seeds' rule
  /// is to fail and resynchronise the table.
  bool requires_resync = false;
  /// kTableCreated/kKeysChanged/kTableReplaced: the table as of after the statement.
  std::optional<TableSchema> schema;
  std::string note;
};

std::string_view SchemaChangeKindName(SchemaChange::Kind kind);

/// What a TABLE_MAP event says about a table (the decoder's view, kept minimal so schema/ does
/// not depend on binlog/).
struct TableMapColumns {
  std::string database;
  std::string table;
  /// Binlog column type codes (MYSQL_TYPE_*), one per column, as written in the event.
  std::vector<uint8_t> types;
  /// Column names (binlog_row_metadata=FULL); empty otherwise.
  std::vector<std::string> names;
  /// Each column's TABLE_MAP metadata exactly as binlog::ColumnInfo::metadata holds it (STRING,
  /// ENUM, SET, NEWDECIMAL: first byte << 8 | second byte; VARCHAR, BIT: little-endian; one-byte
  /// kinds: that byte; none: 0), one per column. Empty when unknown: metadata is then not checked.
  std::vector<uint16_t> metadata;
};

/// The result of applying one statement.
struct ApplyResult {
  std::vector<SchemaChange> changes;
  /// Things the pipe may log: statements ignored knowingly, untracked tables, …
  std::vector<std::string> notes;
};

/// The schemas of tables as of a binlog position. Starts from information_schema (SetTable) and
/// changes only through DDL (Apply). Tracks every table it is given or sees created, so a
/// gh-ost/pt-osc shadow table is known when it is renamed over the original; the pipe filters
/// changes by table. Table names compare exactly (lower_case_table_names=0), column and index
/// names case-insensitively. Not thread-safe.
class Tracker {
 public:
  struct Options {
    /// binlog_row_metadata=FULL: columns are matched by name. Otherwise ordinal mode.
    bool full_metadata = true;
    /// Source is MariaDB (JSON is LONGTEXT with utf8mb4_bin there).
    bool mariadb = false;
  };

  Tracker() = default;
  explicit Tracker(Options options) : options_(options) {}

  const Options& options() const { return options_; }
  bool ordinal_mode() const { return !options_.full_metadata; }

  /// Adds or replaces a table (e.g. loaded from information_schema). Normalises it as Apply would.
  void SetTable(TableSchema table);
  /// Default charset/collation of a database, used for tables created without one.
  void SetDatabaseDefaults(const std::string& database, const std::string& charset,
                           const std::string& collation);
  /// The tracked table or nullptr.
  const TableSchema* Find(std::string_view database, std::string_view table) const;
  /// All tracked tables ordered by (database, name).
  std::vector<const TableSchema*> Tables() const;

  /// Opaque binlog position this state corresponds to (set by the pipe, serialized with it).
  const std::string& position() const { return position_; }
  void set_position(std::string position) { position_ = std::move(position); }

  /// Applies one parsed statement executed with `current_database` as the default database.
  /// Statements that do not shape tables return no changes. On error (the statement contradicts
  /// the tracked schema: unknown column, duplicate column, …) the state is unchanged and the
  /// error says which table and what; the tracked schema is then out of date and the table
  /// needs a resync.
  Result<ApplyResult> Apply(const Statement& statement, std::string_view current_database);
  /// Parses `sql` (a QUERY event's text) with `options` and applies it.
  Result<ApplyResult> ApplySql(std::string_view sql, std::string_view current_database,
                               const LexOptions& options = {});

  /// Checks a TABLE_MAP against the tracked schema: column count, each column's wire type, and
  /// names when present. Untracked tables are kNotFound; mismatches kConfig naming the column.
  Status CheckTableMap(const TableMapColumns& map) const;

  /// Stable text form (line-based, bytes escaped); equal states serialize identically.
  std::string Serialize() const;
  /// Inverse of Serialize; errors name the line.
  static Result<Tracker> Deserialize(std::string_view text);

  /// Normalises a column the way the tracker stores it (charset inherited from `table`, integer
  /// display widths dropped except TINYINT(1), nullable without default → DEFAULT NULL, numeric
  /// defaults canonical, …). Exposed so loaded and tracked schemas compare equal.
  static void NormalizeColumn(Column& column, const TableSchema& table, bool mariadb);

 private:
  using TableKey = std::pair<std::string, std::string>;

  Status ApplyCreate(const Statement& st, const std::string& db, ApplyResult& out);
  Status ApplyCreateLike(const Statement& st, const std::string& db, ApplyResult& out);
  Status ApplyAlter(const Statement& st, const std::string& db, ApplyResult& out);
  Status ApplyDrop(const Statement& st, const std::string& db, ApplyResult& out);
  Status ApplyRename(const Statement& st, const std::string& db, ApplyResult& out);
  Status ApplyIndex(const Statement& st, const std::string& db, ApplyResult& out);

  Options options_;
  std::map<TableKey, TableSchema> tables_;
  std::map<std::string, std::pair<std::string, std::string>> database_defaults_;
  std::string position_;
};

/// Column-level changes between two versions of a table, matching columns by name (used for
/// table swaps). Added columns carry their translated default.
std::vector<SchemaChange> DiffByName(const TableSchema& before, const TableSchema& after, bool full_metadata);

}  // namespace chsync::schema
