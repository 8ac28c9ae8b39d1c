#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "clickhouse/capabilities.h"
#include "clickhouse/ddl.h"
#include "common/result.h"
#include "policy/mapping.h"
#include "policy/schema_policy.h"
#include "schema/table_schema.h"
#include "schema/tracker.h"

namespace chsync::pipe {

/// What the pipe knows of one replicated table's destination.
struct DestinationTable {
  /// The source table as tracked: the columns the stream's rows carry, in source order.
  schema::TableSchema source;
  /// Columns dropped at the source and kept in ClickHouse (Nullable there, NULL in later rows),
  /// in the order they were dropped.
  std::vector<std::string> kept_columns;
  /// The DEFAULT expression each ClickHouse column was created or added with, by column name ("" for
  /// none). A MODIFY COLUMN restates it: ClickHouse 18.16 drops a column's default on MODIFY, and rows
  /// written before the column was added would then read the type's default instead. Filled by the
  /// plans (CREATE TABLE, ADD COLUMN) and by NewDestination; for a column missing here, the default
  /// CreateTable gives the tracked source column is assumed.
  std::map<std::string, std::string> clickhouse_defaults;
  /// Source column → ClickHouse column, for source columns whose ClickHouse column has another
  /// name (renamed at the source while ClickHouse kept the old name: no RENAME COLUMN before 20.4,
  /// a sorting-key column, or rename_column=ignore). Keys are source names as tracked.
  std::map<std::string, std::string> clickhouse_names;
  /// ALIAS columns chsync added under a renamed column's new name (ClickHouse names).
  std::vector<std::string> aliases;
  /// Source columns left out of `source` and of ClickHouse (table_options' exclude_columns, docs/mapping.md),
  /// by their tracked names: a column renamed at the source stays excluded under its new name.
  std::vector<std::string> excluded;

  /// The ClickHouse name of source column `name`.
  std::string ClickHouseName(const std::string& name) const;
  /// Source column `name` is excluded (by this table's list or by `mapping`).
  bool Excluded(std::string_view name, const EffectiveMapping& mapping) const;

  bool operator==(const DestinationTable&) const = default;
};

/// Where a statement came from and what the destination can do.
struct PolicyContext {
  /// binlog_row_metadata is not FULL: rows are matched to columns by position.
  bool ordinal_mode = false;
  /// "binlog.000003:1234" and the statement's text, for messages and log lines.
  std::string position;
  std::string statement;
  clickhouse::Capabilities caps;
  clickhouse::DdlTarget target;
  /// The policies in force for the table.
  SchemaPolicy policy;
  /// The table's `table_options:` (docs/mapping.md). The plans apply its ClickHouse table options:
  /// CREATE TABLE gets ORDER BY, PARTITION BY, TTL, SETTINGS and the column options (after
  /// CheckForPipe), ADD COLUMN of a configured column its LowCardinality and CODEC, and MODIFY
  /// COLUMN restates them. Columns named by ORDER BY or PARTITION BY count as key columns.
  /// Excluded columns are left out of every plan (a column added under an excluded name stays out;
  /// one renamed stays excluded), renamed columns are created, added and altered under their
  /// ClickHouse names. The plans name the ClickHouse table by the mapping's dest_table (`target`
  /// holds its dest_database); an empty mapping (tests) names it like the source table.
  EffectiveMapping mapping;
  /// Source columns that the ClickHouse table's own ORDER BY and PARTITION BY read (system.tables,
  /// through KeySourceColumns): key columns as much as the mapping's, since table_options may have
  /// changed since the table was made. Empty when the pipe has not read them.
  std::vector<std::string> clickhouse_key_columns;
  /// The statement ran with STRICT_TRANS_TABLES or STRICT_ALL_TABLES (the source then refuses an
  /// ALTER that would truncate or clamp a value).
  bool strict_mode = true;
  /// The table is one an online schema migration tool left behind (gh-ost `_t_del`, `_t_ghc`,
  /// pt-online-schema-change `_t_old`, …): a DROP of it is propagated whatever drop_table says.
  bool migration_leftover = false;
};

/// What to do in ClickHouse about one statement's changes to one replicated table.
struct TablePlan {
  /// Statements to run in order. Each is safe to run again after a crash between it and the
  /// next checkpoint (IF NOT EXISTS / IF EXISTS where the server has them; the pipe also checks
  /// system.columns before re-running an ADD/MODIFY on a server without IF NOT EXISTS).
  std::vector<std::string> statements;
  /// One entry per statement: the column whose presence in ClickHouse (system.columns) means the
  /// statement already ran, so the pipe skips it when replaying; empty when the statement is safe
  /// to run again as it is. Set for ADD COLUMN on servers without ADD COLUMN IF NOT EXISTS (< 19.4).
  std::vector<std::string> skip_if_column_exists;
  /// Same for DROP COLUMN on servers without DROP COLUMN IF EXISTS: the column whose absence means
  /// the statement already ran (entries may be missing at the end: empty).
  std::vector<std::string> skip_if_column_missing;
  /// One line per change for the log and the schema-change history: what was done, what was
  /// omitted and why (e.g. "ADD COLUMN `c` DEFAULT now(): default omitted (function call, not a
  /// portable literal); column added").
  std::vector<std::string> log_lines;
  /// The destination after the plan: the tracked source schema after the statement, kept columns.
  DestinationTable after;
  /// kTableCreated: the table is new (statements hold its CREATE TABLE).
  bool created = false;
  /// kTableDropped: the source table is gone; the destination is kept (statements empty) unless
  /// the statements drop it.
  bool dropped = false;
  /// kTableCreated with create_table=ignore: the table is not replicated.
  bool ignored = false;
  /// The rows in ClickHouse can no longer be brought to the source's state by ALTERs (the sorting
  /// key changed, values were rewritten by the statement, …): the table must be copied again into
  /// a new ClickHouse table with `after`'s layout (statements empty). rebuild_reason says why.
  bool rebuild = false;
  std::string rebuild_reason;
  /// kTableCreated of a table the policy refuses to replicate (KeylessRefusal): the table is made
  /// as planned, then parked with this reason, so that every other table goes on.
  std::string park_reason;
};

/// Why `table` is not replicated under `policy`, when it is not: a table without a primary key or
/// NOT NULL unique key under keyless=refuse (ClickHouse would sort it by every column, and rows equal
/// in every column would be one row there; issue 33, case 6). The text says what to do.
std::optional<std::string> KeylessRefusal(const schema::TableSchema& table, const SchemaPolicy& policy);

/// Plans the ClickHouse side of `changes` (all of them about the table `before` describes, from
/// one statement, as Tracker::Apply returned them), following the seeds' table
/// (../shared/seeds/README.md) and docs/schema-changes.md:
///   - ADD COLUMN: propagated; with a DEFAULT that translates safely, the ClickHouse column gets it
///     (rows already there read it); an omitted default is logged with its reason.
///   - DROP COLUMN: not propagated; the column stays in ClickHouse, made Nullable first when it was
///     not, and later rows carry NULL (it moves to kept_columns).
///   - SET/DROP DEFAULT, MODIFY that changes only the default: not propagated, logged.
///   - RENAME/CHANGE column, type changes, TRUNCATE, CREATE/DROP TABLE, DROP COLUMN, position
///     shifts in ordinal mode and sorting-key changes follow `context.policy` (schema_policy.h);
///     where the rows in ClickHouse cannot be fixed by ALTERs the plan asks for a rebuild.
///   - Table renames are not planned here (the pipe renames ClickHouse tables itself).
/// `after_source` is the tracked schema after the statement (nullptr when the table was dropped).
/// Stopping is an error (kUnsupported) whose message names the table, quotes the statement and
/// its position, and says what to do (`chsync resync --table db.t`).
Result<TablePlan> PlanTableChanges(const std::vector<schema::SchemaChange>& changes,
                                   const DestinationTable& before, const schema::TableSchema* after_source,
                                   const PolicyContext& context);

/// The CREATE DATABASE and CREATE TABLE statements for a table that is new to the destination:
/// `table` (the whole tracked schema) checked against the context's mapping, and created without
/// the columns it excludes.
Result<std::vector<std::string>> PlanCreateTable(const schema::TableSchema& table,
                                                 const PolicyContext& context);

/// The destination of a table created with clickhouse::CreateTable(table, caps, …) (e.g. by the
/// snapshot): the source schema, no kept columns, and the defaults CreateTable gave the columns.
DestinationTable NewDestination(const schema::TableSchema& table, const clickhouse::Capabilities& caps);
/// The same under the table's `table_options:`: `table` (the tracked schema) without the columns
/// `mapping` or `also_excluded` exclude, which `excluded` records, and the renamed columns under
/// their ClickHouse names. CreateDestination creates such a table.
DestinationTable NewDestination(const schema::TableSchema& table, const clickhouse::Capabilities& caps,
                                const EffectiveMapping& mapping,
                                const std::vector<std::string>& also_excluded = {});
/// `table` without the columns named by `excluded` (case-insensitive), and without the unique keys
/// over them.
schema::TableSchema WithoutColumns(const schema::TableSchema& table,
                                   const std::vector<std::string>& excluded);

/// The source columns of `dest` whose change moves a row in its ClickHouse table: the columns that
/// identify its rows (ChooseSortingKey) and every column the table's own `sorting_key` and
/// `partition_key` (system.tables) name, by its ClickHouse name (a column renamed at the source
/// keeps its ClickHouse name: DestinationTable::ClickHouseName). An UPDATE that changes one of them
/// writes a tombstone for the old row (issue 33, case 3: the configuration's ORDER BY text is not
/// what the table is sorted by once a column was renamed or table_options changed).
std::vector<std::string> KeySourceColumns(const DestinationTable& dest, std::string_view sorting_key,
                                          std::string_view partition_key);

/// The destination layout TableWriter should use for `table`: the source columns (under their
/// ClickHouse names) followed by the kept columns (as Nullable String placeholders: the writer only ever
/// writes NULL into them).
schema::TableSchema WriterSchema(const DestinationTable& table);

}  // namespace chsync::pipe
