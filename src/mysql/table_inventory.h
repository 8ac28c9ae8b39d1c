#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "mysql/connection.h"
#include "mysql/table_filter.h"
#include "schema/table_schema.h"

namespace chsync::mysql {

/// A remark about one column that a user should read before replicating it.
struct ColumnNote {
  std::string column;
  std::string column_type;  ///< information_schema COLUMN_TYPE, e.g. "bit(3)"
  std::string note;
};

/// What the preflight reports about one selected source table.
struct TableInfo {
  std::string database;
  std::string name;
  std::string engine;
  uint64_t row_estimate = 0;             ///< information_schema TABLE_ROWS (an estimate for InnoDB)
  std::vector<std::string> primary_key;  ///< in key order; empty when the table has none
  std::vector<ColumnNote> notes;
  bool select_ok = true;     ///< the user can SELECT from it
  std::string select_error;  ///< the server's message when it cannot
};

/// A foreign key whose ON DELETE or ON UPDATE changes its child table's rows inside the storage
/// engine (CASCADE, SET NULL, SET DEFAULT): the binlog carries no row event for what it changes.
struct CascadingForeignKey {
  std::string database;  ///< the child table
  std::string table;
  std::string name;
  std::string parent_database;
  std::string parent_table;
  std::string on_delete;  ///< DELETE_RULE as information_schema says it ("CASCADE", "RESTRICT", …)
  std::string on_update;

  /// "shop.film_category (fk_category) -> shop.category: ON UPDATE CASCADE".
  std::string Describe() const;
};

/// The cascading foreign keys whose child table matches `filter`, ordered by child and name.
Result<std::vector<CascadingForeignKey>> CascadingForeignKeys(Connection& conn, const TableFilter& filter);
/// The same from the rows of CascadesQuery() (child schema, child table, name, parent schema,
/// parent table, DELETE_RULE, UPDATE_RULE).
std::vector<CascadingForeignKey> ParseCascades(const QueryResult& rows, const TableFilter& filter);
std::string CascadesQuery();

/// Lists the base tables matching `filter` with their keys, row estimates and column notes, and
/// checks that the connected user can read each one.
Result<std::vector<TableInfo>> InspectTables(Connection& conn, const TableFilter& filter);

/// MariaDB: marks the columns of `schemas` that a json_valid CHECK makes MariaDB JSON columns
/// (schema::MarkJsonColumns over CHECK_CONSTRAINTS); only a lost connection is an error.
Status MarkMariaDbJson(Connection& conn, const std::vector<std::string>& databases,
                       std::vector<schema::TableSchema>& schemas);

/// The schemas of the base tables of `databases` as information_schema describes them
/// (schema::LoadSchemas over its four queries, foreign keys included), ordered by (database, name);
/// on MariaDB, its JSON columns marked (MarkMariaDbJson).
Result<std::vector<schema::TableSchema>> LoadTableSchemas(Connection& conn,
                                                          const std::vector<std::string>& databases,
                                                          bool mariadb);

/// The note for a column type (DATA_TYPE and COLUMN_TYPE from information_schema), or "" when the
/// type replicates without anything to say.
std::string NoteForColumnType(std::string_view data_type, std::string_view column_type);

}  // namespace chsync::mysql
