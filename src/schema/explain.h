#pragma once

#include <string>

#include "schema/statement.h"
#include "schema/table_schema.h"
#include "schema/tracker.h"

namespace chsync::schema {

/// Human-readable, stable descriptions used by `chsync explain-ddl` and the logic tests under
/// tests/data/ddl/. Each returns one or more lines, each ending in '\n'. The first line of
/// ExplainStatement is a one-line summary ("create_table shop.t", "alter_table t", "dml INSERT").

/// What a statement parsed to: a summary line, then one indented line per column, key and
/// ALTER clause.
std::string ExplainStatement(const Statement& statement);
/// One line for a schema change.
std::string ExplainChange(const SchemaChange& change);
/// One line for a column: name, type, then attributes that differ from MySQL's defaults.
std::string ExplainColumn(const Column& column);
/// A table: "table db.t engine=… charset=…", its columns, primary key and unique keys.
std::string ExplainSchema(const TableSchema& table);
/// `text` in single quotes with \\, \', \n, \t, \r, \0 and other control bytes escaped.
std::string QuoteForDisplay(std::string_view text);

}  // namespace chsync::schema
