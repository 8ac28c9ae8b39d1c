#pragma once

#include <map>
#include <string>
#include <vector>

#include "clickhouse/capabilities.h"
#include "clickhouse/ddl.h"
#include "common/result.h"
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
  /// One line per change for the log and the schema-change history: what was done, what was
  /// omitted and why (e.g. "ADD COLUMN `c` DEFAULT now(): default omitted (function call, not a
  /// portable literal); column added").
  std::vector<std::string> log_lines;
  /// The destination after the plan: the tracked source schema after the statement, kept columns.
  DestinationTable after;
  /// kTableCreated: the table is new (statements hold its CREATE TABLE).
  bool created = false;
  /// kTableDropped: the source table is gone; the destination is kept (statements empty).
  bool dropped = false;
};

/// Plans the ClickHouse side of `changes` (all of them about the table `before` describes, from
/// one statement, as Tracker::Apply returned them), following the seeds' table
/// (../shared/seeds/README.md) and docs/schema-changes.md:
///   - ADD COLUMN: propagated; with a DEFAULT that translates safely, the ClickHouse column gets it
///     (rows already there read it); an omitted default is logged with its reason.
///   - DROP COLUMN: not propagated; the column stays in ClickHouse, made Nullable first when it was
///     not, and later rows carry NULL (it moves to kept_columns).
///   - SET/DROP DEFAULT, MODIFY that changes only the default: not propagated, logged.
///   - Ordinal mode: a change with shifts_positions stops the pipe.
///   - Anything not handled yet (rename, a type change that does not fit, a key change, …) stops the
///     pipe rather than corrupting data.
/// `after_source` is the tracked schema after the statement (nullptr when the table was dropped).
/// Stopping is an error (kUnsupported) whose message names the table, quotes the statement and
/// its position, and says what to do (`chsync resync --table db.t`).
Result<TablePlan> PlanTableChanges(const std::vector<schema::SchemaChange>& changes,
                                   const DestinationTable& before, const schema::TableSchema* after_source,
                                   const PolicyContext& context);

/// The CREATE DATABASE and CREATE TABLE statements for a table that is new to the destination.
Result<std::vector<std::string>> PlanCreateTable(const schema::TableSchema& table,
                                                 const PolicyContext& context);

/// The destination of a table created with clickhouse::CreateTable(table, caps, …) (e.g. by the
/// snapshot): the source schema, no kept columns, and the defaults CreateTable gave the columns.
DestinationTable NewDestination(const schema::TableSchema& table, const clickhouse::Capabilities& caps);

/// The destination layout TableWriter should use for `table`: the source columns followed by the
/// kept columns (as Nullable String placeholders: the writer only ever writes NULL into them).
schema::TableSchema WriterSchema(const DestinationTable& table);

}  // namespace chsync::pipe
