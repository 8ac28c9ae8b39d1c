#include "mysql/table_inventory.h"

#include "schema/information_schema.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <utility>

namespace chsync::mysql {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

using Key = std::pair<std::string, std::string>;

}  // namespace

std::string NoteForColumnType(std::string_view data_type, std::string_view column_type) {
  std::string t = Lower(data_type);
  if (t == "geometry" || t == "point" || t == "linestring" || t == "polygon" || t == "multipoint" ||
      t == "multilinestring" || t == "multipolygon" || t == "geometrycollection" || t == "geomcollection") {
    return "spatial type: replicated as WKT text (String); spatial functions are not available on it";
  }
  if (t == "time") {
    return "TIME spans -838:59:59 to 838:59:59 and has no equivalent ClickHouse type on every version: "
           "see docs/types.md for how it lands";
  }
  if (t == "bit") return "BIT: replicated as an unsigned integer (UInt64), not as a bit string";
  if (t == "set") return "SET: replicated as its comma-separated text value";
  if (t == "json") return "JSON: replicated as JSON text (String)";
  if (t == "vector") return "VECTOR: replicated as Array(Float32)";
  if (t == "year") return "";
  if (t == "decimal") {
    // DECIMAL(P,S) maps to ClickHouse Decimal(P,S); MySQL allows P ≤ 65, ClickHouse ≤ 76: nothing to say.
    return "";
  }
  (void)column_type;
  return "";
}

namespace {

bool Cascades(std::string_view rule) {
  return rule == "CASCADE" || rule == "SET NULL" || rule == "SET DEFAULT";
}

}  // namespace

std::string CascadingForeignKey::Describe() const {
  std::string rules;
  if (Cascades(on_delete)) rules = "ON DELETE " + on_delete;
  if (Cascades(on_update)) rules += (rules.empty() ? "" : ", ") + std::string("ON UPDATE ") + on_update;
  return database + "." + table + " (" + name + ") -> " + parent_database + "." + parent_table + ": " + rules;
}

std::string CascadesQuery() {
  return "SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, UNIQUE_CONSTRAINT_SCHEMA, "
         "REFERENCED_TABLE_NAME, "
         "DELETE_RULE, UPDATE_RULE FROM information_schema.REFERENTIAL_CONSTRAINTS "
         "WHERE DELETE_RULE IN ('CASCADE', 'SET NULL', 'SET DEFAULT') "
         "OR UPDATE_RULE IN ('CASCADE', 'SET NULL', 'SET DEFAULT') "
         "ORDER BY CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME";
}

std::vector<CascadingForeignKey> ParseCascades(const QueryResult& rows, const TableFilter& filter) {
  std::vector<CascadingForeignKey> out;
  for (const auto& row : rows.rows) {
    if (row.size() < 7) continue;
    CascadingForeignKey fk{row[0].value_or(""), row[1].value_or(""), row[2].value_or(""), row[3].value_or(""),
                           row[4].value_or(""), row[5].value_or(""), row[6].value_or("")};
    if (!Cascades(fk.on_delete) && !Cascades(fk.on_update)) continue;
    if (filter.Matches(fk.database, fk.table)) out.push_back(std::move(fk));
  }
  return out;
}

Result<std::vector<CascadingForeignKey>> CascadingForeignKeys(Connection& conn, const TableFilter& filter) {
  CHSYNC_ASSIGN_OR_RETURN(QueryResult rows, conn.Query(CascadesQuery()));
  return ParseCascades(rows, filter);
}

Result<std::vector<TableInfo>> InspectTables(Connection& conn, const TableFilter& filter) {
  CHSYNC_ASSIGN_OR_RETURN(
      QueryResult tables,
      conn.Query("SELECT TABLE_SCHEMA, TABLE_NAME, IFNULL(ENGINE,''), IFNULL(TABLE_ROWS,0) "
                 "FROM information_schema.TABLES WHERE TABLE_TYPE = 'BASE TABLE' "
                 "ORDER BY TABLE_SCHEMA, TABLE_NAME"));
  std::vector<TableInfo> out;
  std::map<Key, size_t> index;
  for (const auto& row : tables.rows) {
    if (row.size() < 4 || !row[0] || !row[1]) continue;
    if (!filter.Matches(*row[0], *row[1])) continue;
    TableInfo info;
    info.database = *row[0];
    info.name = *row[1];
    info.engine = row[2].value_or("");
    const std::string& rows = row[3].value_or("0");
    std::from_chars(rows.data(), rows.data() + rows.size(), info.row_estimate);
    index[{info.database, info.name}] = out.size();
    out.push_back(std::move(info));
  }
  if (out.empty()) return out;

  CHSYNC_ASSIGN_OR_RETURN(
      QueryResult keys,
      conn.Query("SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME FROM information_schema.STATISTICS "
                 "WHERE INDEX_NAME = 'PRIMARY' ORDER BY TABLE_SCHEMA, TABLE_NAME, SEQ_IN_INDEX"));
  for (const auto& row : keys.rows) {
    if (row.size() < 3 || !row[0] || !row[1] || !row[2]) continue;
    auto it = index.find({*row[0], *row[1]});
    if (it != index.end()) out[it->second].primary_key.push_back(*row[2]);
  }

  CHSYNC_ASSIGN_OR_RETURN(
      QueryResult columns,
      conn.Query("SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE "
                 "FROM information_schema.COLUMNS ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION"));
  for (const auto& row : columns.rows) {
    if (row.size() < 5 || !row[0] || !row[1]) continue;
    auto it = index.find({*row[0], *row[1]});
    if (it == index.end()) continue;
    std::string note = NoteForColumnType(row[3].value_or(""), row[4].value_or(""));
    if (!note.empty())
      out[it->second].notes.push_back({row[2].value_or(""), row[4].value_or(""), std::move(note)});
  }

  for (TableInfo& t : out) {
    if (!t.engine.empty() && Lower(t.engine) != "innodb") {
      t.notes.push_back({"", "",
                         "engine " + t.engine +
                             " is not transactional: a statement that fails halfway "
                             "leaves the rows it changed, and chsync replicates exactly those"});
    }
    Status s = conn.Execute("SELECT 1 FROM " + QuoteIdentifier(t.database) + "." + QuoteIdentifier(t.name) +
                            " LIMIT 0");
    if (!s.ok()) {
      if (s.error().kind() == ErrorKind::kNetwork) return std::move(s).error();
      t.select_ok = false;
      t.select_error = s.error().message();
    }
  }
  return out;
}

Result<std::vector<schema::TableSchema>> LoadTableSchemas(Connection& conn,
                                                          const std::vector<std::string>& databases,
                                                          bool mariadb) {
  auto rows = [&](const std::string& sql) -> Result<schema::TextRows> {
    CHSYNC_ASSIGN_OR_RETURN(QueryResult r, conn.Query(sql));
    return schema::TextRows{std::move(r.columns), std::move(r.rows)};
  };
  CHSYNC_ASSIGN_OR_RETURN(schema::TextRows tables, rows(schema::TablesQuery(databases)));
  CHSYNC_ASSIGN_OR_RETURN(schema::TextRows columns, rows(schema::ColumnsQuery(databases)));
  CHSYNC_ASSIGN_OR_RETURN(schema::TextRows statistics, rows(schema::StatisticsQuery(databases)));
  CHSYNC_ASSIGN_OR_RETURN(schema::TextRows foreign_keys, rows(schema::ForeignKeysQuery(databases)));
  CHSYNC_ASSIGN_OR_RETURN(std::vector<schema::TableSchema> schemas,
                          schema::LoadSchemas(tables, columns, statistics, foreign_keys, {mariadb}));
  if (mariadb) CHSYNC_RETURN_IF_ERROR(MarkMariaDbJson(conn, databases, schemas));
  return schemas;
}

Status MarkMariaDbJson(Connection& conn, const std::vector<std::string>& databases,
                       std::vector<schema::TableSchema>& schemas) {
  auto checks = conn.Query(schema::CheckConstraintsQuery(databases));
  if (!checks.ok()) {
    // A server without CHECK_CONSTRAINTS (before 10.2) has no JSON columns either.
    if (checks.error().kind() == ErrorKind::kNetwork) return std::move(checks).error();
    return Status::Ok();
  }
  schema::MarkJsonColumns(schema::TextRows{std::move(checks->columns), std::move(checks->rows)}, schemas);
  return Status::Ok();
}

}  // namespace chsync::mysql
