#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "schema/table_schema.h"

namespace chsync::schema {

/// Rows of a text-protocol query, NULL as nullopt: the same shape as mysql::QueryResult, so the
/// caller copies `columns` and `rows` across (schema/ does not depend on mysql/).
struct TextRows {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
};

/// Which server wrote the rows: MariaDB quotes literal defaults in COLUMN_DEFAULT ('abc', NULL as
/// the text "NULL", current_timestamp()); MySQL 5.7–9.x does not, and marks expression defaults
/// with DEFAULT_GENERATED in EXTRA (8.0.13+).
struct InformationSchemaFlavor {
  bool mariadb = false;
};

/// The three queries, restricted to `databases` (names embedded as hex literals, so any bytes
/// and any sql_mode are safe). Column order is what LoadSchemas expects.
std::string TablesQuery(const std::vector<std::string>& databases);
std::string ColumnsQuery(const std::vector<std::string>& databases);
std::string StatisticsQuery(const std::vector<std::string>& databases);
/// The foreign keys of the tables in `databases` (REFERENTIAL_CONSTRAINTS joined with
/// KEY_COLUMN_USAGE), one row per column: CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME,
/// COLUMN_NAME, ORDINAL_POSITION, REFERENCED_TABLE_SCHEMA, REFERENCED_TABLE_NAME,
/// REFERENCED_COLUMN_NAME, UPDATE_RULE, DELETE_RULE.
std::string ForeignKeysQuery(const std::vector<std::string>& databases);

/// MariaDB only: the CHECK constraints of the tables in `databases` (CONSTRAINT_SCHEMA, TABLE_NAME,
/// CONSTRAINT_NAME, CHECK_CLAUSE), from which MarkJsonColumns finds MariaDB's JSON columns.
std::string CheckConstraintsQuery(const std::vector<std::string>& databases);
/// Sets Column::json_valid_check on each text column of `schemas` that a row of
/// CheckConstraintsQuery checks with json_valid(`column`) (what MariaDB keeps of a JSON column:
/// LONGTEXT and that CHECK). Rows naming no known table or column are ignored.
void MarkJsonColumns(const TextRows& checks, std::vector<TableSchema>& schemas);

/// Builds the schemas of the base tables in `tables` from the rows of TablesQuery, ColumnsQuery,
/// StatisticsQuery and ForeignKeysQuery. Tables come out ordered by (database, name); unique keys
/// by index name and foreign keys by constraint name (information_schema does not keep declaration
/// order). Hand each to Tracker::SetTable, which normalises it. Errors (kCorrupt) name the table
/// and column (or constraint) whose row does not parse.
Result<std::vector<TableSchema>> LoadSchemas(const TextRows& tables, const TextRows& columns,
                                             const TextRows& statistics, const TextRows& foreign_keys,
                                             const InformationSchemaFlavor& flavor);
/// As above without foreign keys: every TableSchema::foreign_keys comes out empty. For callers
/// that do not need them (tests, checks of columns and keys).
Result<std::vector<TableSchema>> LoadSchemas(const TextRows& tables, const TextRows& columns,
                                             const TextRows& statistics,
                                             const InformationSchemaFlavor& flavor);

}  // namespace chsync::schema
