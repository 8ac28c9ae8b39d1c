#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "schema/table_schema.h"

namespace chsync::schema {

/// What a statement is. Only the table-shaping kinds carry parsed detail; the others are
/// classified so the pipe can ignore them knowingly.
enum class StatementKind {
  kEmpty,  ///< only whitespace/comments
  kCreateTable,
  kCreateTableLike,  ///< CREATE TABLE a LIKE b
  kAlterTable,
  kDropTable,
  kRenameTable,
  kTruncateTable,
  kCreateIndex,
  kDropIndex,
  kCreateDatabase,
  kAlterDatabase,
  kDropDatabase,
  kView,         ///< CREATE/ALTER/DROP VIEW
  kRoutine,      ///< CREATE/ALTER/DROP PROCEDURE/FUNCTION/TRIGGER/EVENT/PACKAGE
  kSequence,     ///< MariaDB CREATE/ALTER/DROP SEQUENCE
  kAccount,      ///< GRANT, REVOKE, CREATE/ALTER/DROP/RENAME USER/ROLE, SET PASSWORD
  kTransaction,  ///< BEGIN, COMMIT, ROLLBACK, SAVEPOINT, START TRANSACTION, XA
  kDml,          ///< INSERT, UPDATE, DELETE, REPLACE, LOAD DATA, SELECT, CALL, DO, WITH
  kSession,      ///< SET, USE
  kAdmin,        ///< FLUSH, ANALYZE, OPTIMIZE, REPAIR, CHECK, INSTALL, KILL, PURGE, ...
  kOther,        ///< anything else that lexes (description holds its leading keywords)
};

std::string_view StatementKindName(StatementKind kind);

/// A possibly qualified table name. `database` empty means the session's current database.
struct TableName {
  std::string database;
  std::string name;

  bool operator==(const TableName&) const = default;
};

/// FIRST / AFTER x of ADD/MODIFY/CHANGE.
struct ColumnPosition {
  enum class Kind { kDefault, kFirst, kAfter };
  Kind kind = Kind::kDefault;
  std::string after;  ///< column name when kind == kAfter
};

/// A key or constraint definition.
struct KeyDefinition {
  enum class Type { kPrimary, kUnique, kIndex, kFulltext, kSpatial, kVector, kForeign, kCheck };
  Type type = Type::kIndex;
  /// Index name (or constraint symbol for FOREIGN/CHECK); empty when not given.
  std::string name;
  /// Key columns in key order; a functional key part ((expr)) is recorded as its expression text
  /// in parentheses.
  std::vector<std::string> columns;
  TableName references;  ///< FOREIGN KEY target; an empty database means the child's database
  /// FOREIGN KEY: the referenced columns as written (empty when the clause omits them), and the
  /// actions as written (nullopt when not written: the server's default, which differs by server).
  std::vector<std::string> referenced_columns;
  std::optional<ForeignKey::Action> on_delete;
  std::optional<ForeignKey::Action> on_update;
  /// FOREIGN KEY [index_name] (…): the index name. MariaDB also names the constraint so when no
  /// CONSTRAINT symbol is given; MySQL ≥ 8.0.16 generates the constraint's name instead.
  std::string index_name;
  std::string check;  ///< CHECK expression text
  /// MariaDB's `PRIMARY KEY|UNIQUE (…, p WITHOUT OVERLAPS)` over a period the statement does not
  /// define: the period's name. The server adds the period's end and start columns to the key;
  /// when the statement defines the period (CREATE TABLE, or ALTER TABLE … ADD PERIOD) they are
  /// appended to `columns` and this is empty.
  std::string unresolved_period;
};

std::string_view KeyTypeName(KeyDefinition::Type type);

/// A column definition with the key attributes written on it (`id INT PRIMARY KEY`, `UNIQUE`).
struct ColumnDefinition {
  Column column;
  bool primary_key = false;
  bool unique = false;
  /// Type-level facts MySQL leaves to the tracker: SERIAL / SERIAL DEFAULT VALUE add a UNIQUE key.
  bool serial = false;
  /// `c INT REFERENCES p (id) …` written on the column: a kForeign key over this column. MariaDB
  /// ≥ 10.5 creates the foreign key; MySQL parses the clause and ignores it.
  std::optional<KeyDefinition> references;
};

/// ENGINE / charset / collation from table options; other options are accepted and not kept.
struct TableOptions {
  std::string engine;
  std::string charset;
  std::string collation;
  std::string comment;
};

/// One clause of ALTER TABLE.
struct AlterOperation {
  enum class Kind {
    kAddColumn,
    kDropColumn,
    kModifyColumn,
    kChangeColumn,
    kRenameColumn,
    kSetDefault,
    kDropDefault,
    kSetVisible,
    kSetInvisible,
    kAddKey,
    kDropPrimaryKey,
    kDropKey,  ///< DROP INDEX/KEY name
    kDropForeignKey,
    kDropConstraint,  ///< DROP CHECK / DROP CONSTRAINT name
    kRenameKey,
    kRenameTable,
    kConvertCharset,
    kTableOptions,  ///< ENGINE=, [DEFAULT] CHARSET=, COMMENT=, … (in `options`)
    kAlgorithm,
    kLock,
    kPartition,  ///< any partition clause, skipped; `text` holds it
    kOther,      ///< ENABLE/DISABLE KEYS, FORCE, ORDER BY, ALTER INDEX … VISIBLE, …; `text` holds it
  };
  Kind kind = Kind::kOther;
  /// kAdd/Modify/ChangeColumn: the new definition (for CHANGE, its name is the new name).
  ColumnDefinition definition;
  /// The existing column (DROP/MODIFY/CHANGE/RENAME/ALTER COLUMN) or key (DROP/RENAME KEY).
  std::string name;
  /// New name for RENAME COLUMN/KEY.
  std::string new_name;
  ColumnPosition position;
  KeyDefinition key;
  bool if_exists = false;
  bool if_not_exists = false;
  /// kRenameTable: the new name. kPartition with `converted_table`: the other table.
  TableName new_table;
  DefaultValue default_value;  ///< kSetDefault
  TableOptions options;        ///< kTableOptions, kConvertCharset (charset/collation)
  /// kPartition/kOther/kAlgorithm/kLock: the clause's source text.
  std::string text;
  /// kPartition only: the clause removes or swaps rows (TRUNCATE/DROP/EXCHANGE PARTITION …).
  bool changes_data = false;
  /// kPartition only, MariaDB's CONVERT: CONVERT PARTITION p TO TABLE x moves p's rows into x, a new
  /// table with this table's definition (kCreated); CONVERT TABLE x TO PARTITION p … moves x's rows
  /// into the new partition p and drops x (kDropped). `new_table` names x; rows move without row
  /// events either way (`changes_data`).
  enum class ConvertedTable { kNone, kCreated, kDropped };
  ConvertedTable converted_table = ConvertedTable::kNone;
};

std::string_view AlterKindName(AlterOperation::Kind kind);

/// One parsed statement. Fields are filled per kind as documented.
struct Statement {
  StatementKind kind = StatementKind::kOther;
  /// Leading keywords in upper case, e.g. "CREATE TABLE", "GRANT", "CREATE INDEX".
  std::string description;
  /// Byte offset and length of the statement in the text given to the parser.
  size_t offset = 0;
  size_t length = 0;

  /// CREATE TABLE/LIKE, ALTER, CREATE/DROP INDEX, TRUNCATE: the table.
  TableName table;
  bool temporary = false;
  bool if_not_exists = false;
  bool if_exists = false;
  bool or_replace = false;  ///< MariaDB CREATE OR REPLACE TABLE

  /// kCreateTable.
  std::vector<ColumnDefinition> columns;
  std::vector<KeyDefinition> keys;
  TableOptions options;
  /// CREATE TABLE … [AS] SELECT: extra columns come from a query the parser does not evaluate.
  bool as_select = false;
  /// kCreateTableLike: the source table.
  TableName like;

  /// kAlterTable, in the order written.
  std::vector<AlterOperation> operations;

  /// kDropTable: the tables in order. kTruncateTable: one table (also in `table`).
  std::vector<TableName> tables;
  /// kRenameTable: (from, to) pairs applied left to right.
  std::vector<std::pair<TableName, TableName>> renames;

  /// kCreateIndex: the key; kDropIndex: key.name.
  KeyDefinition key;
  /// kCreate/Alter/DropDatabase: the database. kSession USE: the database.
  std::string database;
};

}  // namespace chsync::schema
