#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace chsync::pipe {

/// What the pipe does about each kind of schema change, for one table. Every field has a
/// documented default (docs/schema-changes.md) and a `fail` alternative that stops the pipe with
/// the resync message; most also have an `ignore`-like one.
struct SchemaPolicy {
  /// RENAME COLUMN / CHANGE old new.
  ///   rename: the ClickHouse column is renamed (ALTER … RENAME COLUMN where ClickHouse can; else the
  ///           column keeps its name in ClickHouse and an ALIAS column with the new name is added)
  ///   ignore: the ClickHouse column keeps its old name; rows keep flowing into it
  enum class RenameColumn { kRename, kIgnore, kFail };
  /// MODIFY/CHANGE of a column's type.
  ///   follow: widened in place when every existing value converts exactly, otherwise the table is
  ///           rebuilt online (re-copied into a new table, swapped in when caught up)
  enum class TypeChange { kFollow, kFail };
  /// TRUNCATE TABLE.  propagate: emptied in ClickHouse too; ignore: ClickHouse keeps the rows.
  enum class Truncate { kPropagate, kIgnore, kFail };
  /// CREATE TABLE of a table matching --tables.  replicate: created and replicated from its first row.
  enum class CreateTable { kReplicate, kIgnore, kFail };
  /// DROP TABLE.  keep: the ClickHouse table stays with its rows; drop: dropped in ClickHouse too.
  enum class DropTable { kKeep, kDrop, kFail };
  /// RENAME TABLE / ALTER TABLE … RENAME (including gh-ost and pt-online-schema-change swaps).
  ///   follow: the ClickHouse table is renamed along (swaps land the migrated table in ClickHouse)
  enum class RenameTable { kFollow, kFail };
  /// DROP COLUMN.  keep: the column stays in ClickHouse (Nullable, NULL in later rows);
  ///   propagate: dropped in ClickHouse too.
  enum class DropColumn { kKeep, kPropagate, kFail };
  /// Position-shifting DDL without binlog_row_metadata=FULL (ordinal mode).
  ///   follow: replay the statement on the tracked schema and check every later TABLE_MAP against it
  enum class PositionShift { kFollow, kFail };
  /// A change of the ClickHouse sorting key (primary key added, dropped or changed).
  ///   rebuild: the table is rebuilt online
  enum class KeyChange { kRebuild, kFail };
  /// A table without a primary key or NOT NULL unique key (docs/types.md, "Keys"). ClickHouse
  /// sorts it by every column, so rows equal in every column would be one row there.
  ///   refuse:   the table is not replicated; it fails like a `fail` policy (parked under
  ///             on_table_error=park, with the reason and what to do)
  ///   distinct: replicated as the set of its distinct rows (identical rows collapse into one)
  enum class Keyless { kRefuse, kDistinct };
  /// A failure that concerns this table alone (a `fail` policy, an ALTER or an INSERT that
  /// ClickHouse refuses, binlog rows that no longer match its schema; docs/table-control.md).
  ///   park: the table is parked (its changes are no longer applied, the reason is recorded) and
  ///         every other table goes on; `chsync resume` / `resync --table` copies it again
  ///   stop: the pipe stops with the error (as before parking existed)
  enum class TableError { kPark, kStop };

  RenameColumn rename_column = RenameColumn::kRename;
  TypeChange type_change = TypeChange::kFollow;
  Truncate truncate = Truncate::kPropagate;
  CreateTable create_table = CreateTable::kReplicate;
  DropTable drop_table = DropTable::kKeep;
  RenameTable rename_table = RenameTable::kFollow;
  DropColumn drop_column = DropColumn::kKeep;
  PositionShift position_shift = PositionShift::kFollow;
  KeyChange key_change = KeyChange::kRebuild;
  Keyless keyless = Keyless::kRefuse;
  TableError on_table_error = TableError::kPark;

  bool operator==(const SchemaPolicy&) const = default;
};

/// The configured policies: defaults for every table, then per-table assignments applied in the
/// order given (later ones win).
class PolicySet {
 public:
  /// Applies one assignment: "KEY=VALUE" (all tables) or "PATTERN:KEY=VALUE" where PATTERN is a
  /// --tables-style DB.TABLE glob (`*` and `?`). KEY is one of the SchemaPolicy field names
  /// (rename_column, type_change, truncate, create_table, drop_table, rename_table, drop_column,
  /// position_shift, key_change, keyless, on_table_error) and VALUE one of its documented values. Errors
  /// (kConfig) name the assignment, the key and the values allowed.
  Status Assign(std::string_view assignment);
  /// Same with the parts already split (PATTERN empty for all tables); `origin` names the source
  /// of the setting in errors (e.g. "chsync.yaml:12" or "--schema-policy").
  Status Assign(std::string_view pattern, std::string_view key, std::string_view value,
                std::string_view origin);

  /// The policy in force for db.table.
  SchemaPolicy For(std::string_view database, std::string_view table) const;
  const SchemaPolicy& defaults() const { return defaults_; }

  /// Human-readable lines for `chsync status` and the start-up log: one line with every default
  /// ("defaults: rename_column=rename type_change=follow …"), then one per per-table assignment
  /// ("shop.orders: truncate=ignore").
  std::vector<std::string> Describe() const;

  bool operator==(const PolicySet&) const = default;

 private:
  struct Override {
    std::string pattern;
    std::string key;
    std::string value;
    bool operator==(const Override&) const = default;
  };
  SchemaPolicy defaults_;
  std::vector<Override> overrides_;
};

/// The name of a policy value as written in configuration ("rename", "fail", …).
std::string_view PolicyValueName(SchemaPolicy::RenameColumn v);
std::string_view PolicyValueName(SchemaPolicy::TypeChange v);
std::string_view PolicyValueName(SchemaPolicy::Truncate v);
std::string_view PolicyValueName(SchemaPolicy::CreateTable v);
std::string_view PolicyValueName(SchemaPolicy::DropTable v);
std::string_view PolicyValueName(SchemaPolicy::RenameTable v);
std::string_view PolicyValueName(SchemaPolicy::DropColumn v);
std::string_view PolicyValueName(SchemaPolicy::PositionShift v);
std::string_view PolicyValueName(SchemaPolicy::KeyChange v);
std::string_view PolicyValueName(SchemaPolicy::Keyless v);
std::string_view PolicyValueName(SchemaPolicy::TableError v);

}  // namespace chsync::pipe
