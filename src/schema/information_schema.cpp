#include "schema/information_schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>

#include "schema/parser.h"

namespace chsync::schema {
namespace {

std::string InList(const std::vector<std::string>& databases) {
  std::string out;
  for (size_t i = 0; i < databases.size(); ++i) {
    if (i > 0) out += ", ";
    out += "CONVERT(X'";
    for (unsigned char c : databases[i]) out += fmt::format("{:02X}", c);
    out += "' USING utf8mb4)";
  }
  if (databases.empty()) out = "NULL";
  return out;
}

bool ContainsIgnoreCase(std::string_view haystack, std::string_view needle) {
  std::string h = ToLower(haystack), n = ToLower(needle);
  return h.find(n) != std::string::npos;
}

Status CheckWidth(const TextRows& rows, size_t width, std::string_view query) {
  for (const auto& row : rows.rows) {
    if (row.size() < width) {
      return Error(ErrorKind::kCorrupt,
                   fmt::format("{} row has {} values, expected {}", query, row.size(), width));
    }
  }
  return Status::Ok();
}

bool IsTemporal(ColumnType t) {
  return t == ColumnType::kDateTime || t == ColumnType::kTimestamp || t == ColumnType::kDate ||
         t == ColumnType::kTime;
}

/// MySQL's unquoted COLUMN_DEFAULT, read in the context of the column.
DefaultValue MySqlDefault(const Column& c, const std::string& text, std::string_view extra) {
  DefaultValue d;
  bool generated = ContainsIgnoreCase(extra, "DEFAULT_GENERATED");
  if ((generated || IsTemporal(c.type)) && (ContainsIgnoreCase(text.substr(0, 17), "CURRENT_TIMESTAMP") ||
                                            ContainsIgnoreCase(text.substr(0, 3), "now"))) {
    auto parsed = ParseDefaultText(text);
    if (parsed.ok()) return *parsed;
  }
  if (generated) {
    d.kind = DefaultKind::kExpression;
    d.text = text;
    if (d.text.size() >= 2 && d.text.front() == '(' && d.text.back() == ')')
      d.text = d.text.substr(1, d.text.size() - 2);
    return d;
  }
  if (c.type == ColumnType::kBit && text.size() >= 3 && (text[0] == 'b' || text[0] == 'B') &&
      text[1] == '\'') {
    d.kind = DefaultKind::kBit;
    d.text = text.substr(2, text.size() - 3);
    return d;
  }
  if (text.size() > 2 && text[0] == '0' && text[1] == 'x' &&
      (c.type == ColumnType::kBinary || c.type == ColumnType::kVarBinary || c.type == ColumnType::kBlob ||
       c.type == ColumnType::kTinyBlob || c.type == ColumnType::kMediumBlob ||
       c.type == ColumnType::kLongBlob)) {
    d.kind = DefaultKind::kHex;
    d.text = text.substr(2);
    for (char& ch : d.text) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return d;
  }
  bool numeric = IsIntegerType(c.type) || c.type == ColumnType::kDecimal || c.type == ColumnType::kFloat ||
                 c.type == ColumnType::kDouble || c.type == ColumnType::kYear || c.type == ColumnType::kBit;
  d.kind = numeric ? DefaultKind::kNumber : DefaultKind::kString;
  d.text = text;
  return d;
}

}  // namespace

std::string TablesQuery(const std::vector<std::string>& databases) {
  return "SELECT TABLE_SCHEMA, TABLE_NAME, ENGINE, TABLE_COLLATION FROM information_schema.TABLES "
         "WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA IN (" +
         InList(databases) + ") ORDER BY TABLE_SCHEMA, TABLE_NAME";
}

std::string ColumnsQuery(const std::vector<std::string>& databases) {
  return "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, COLUMN_DEFAULT, IS_NULLABLE, "
         "COLUMN_TYPE, CHARACTER_SET_NAME, COLLATION_NAME, EXTRA, COLUMN_COMMENT, GENERATION_EXPRESSION "
         "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA IN (" +
         InList(databases) + ") ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION";
}

std::string StatisticsQuery(const std::vector<std::string>& databases) {
  return "SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, NON_UNIQUE, SEQ_IN_INDEX, COLUMN_NAME "
         "FROM information_schema.STATISTICS WHERE TABLE_SCHEMA IN (" +
         InList(databases) + ") ORDER BY TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX";
}

std::string ForeignKeysQuery(const std::vector<std::string>& databases) {
  // The join compares names as utf8mb4 bytes: MySQL 8's views give the two tables' name columns
  // different collations (an illegal mix when compared as they are), and both views read the same
  // dictionary rows, so the bytes match. REFERENCED_TABLE_NAME IS NOT NULL drops the rows of a
  // PRIMARY/UNIQUE key that shares the foreign key's name (MariaDB allows it).
  auto same = [](std::string_view column) {
    return fmt::format(
        "CONVERT(kcu.{0} USING utf8mb4) COLLATE utf8mb4_bin = "
        "CONVERT(rc.{0} USING utf8mb4) COLLATE utf8mb4_bin",
        column);
  };
  return "SELECT kcu.CONSTRAINT_SCHEMA, kcu.TABLE_NAME, kcu.CONSTRAINT_NAME, kcu.COLUMN_NAME, "
         "kcu.ORDINAL_POSITION, kcu.REFERENCED_TABLE_SCHEMA, kcu.REFERENCED_TABLE_NAME, "
         "kcu.REFERENCED_COLUMN_NAME, rc.UPDATE_RULE, rc.DELETE_RULE "
         "FROM information_schema.REFERENTIAL_CONSTRAINTS rc JOIN information_schema.KEY_COLUMN_USAGE kcu "
         "ON " +
         same("CONSTRAINT_SCHEMA") + " AND " + same("TABLE_NAME") + " AND " + same("CONSTRAINT_NAME") +
         " WHERE rc.CONSTRAINT_SCHEMA IN (" + InList(databases) +
         ") AND kcu.REFERENCED_TABLE_NAME IS NOT NULL "
         "ORDER BY kcu.CONSTRAINT_SCHEMA, kcu.TABLE_NAME, kcu.CONSTRAINT_NAME, kcu.ORDINAL_POSITION";
}

std::string CheckConstraintsQuery(const std::vector<std::string>& databases) {
  return "SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, CHECK_CLAUSE "
         "FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA IN (" +
         InList(databases) + ")";
}

void MarkJsonColumns(const TextRows& checks, std::vector<TableSchema>& schemas) {
  for (const auto& row : checks.rows) {
    if (row.size() < 4 || !row[0] || !row[1] || !row[2] || !row[3]) continue;
    for (TableSchema& t : schemas) {
      if (t.database != *row[0] || t.name != *row[1]) continue;
      for (Column& c : t.columns) {
        // A column's own CHECK is named after the column (a table's CONSTRAINT … CHECK is not
        // recognised from the DDL either). MariaDB prints it as json_valid(`name`), backquotes
        // doubled inside.
        if (!EqualsIgnoreCase(*row[2], c.name)) continue;
        if (!IsCharacterType(c.type) || c.type == ColumnType::kEnum || c.type == ColumnType::kSet) continue;
        std::string quoted;
        for (char ch : c.name) quoted += ch == '`' ? std::string("``") : std::string(1, ch);
        if (EqualsIgnoreCase(*row[3], "json_valid(`" + quoted + "`)")) c.json_valid_check = true;
      }
    }
  }
}

Result<std::vector<TableSchema>> LoadSchemas(const TextRows& tables, const TextRows& columns,
                                             const TextRows& statistics,
                                             const InformationSchemaFlavor& flavor) {
  return LoadSchemas(tables, columns, statistics, TextRows{}, flavor);
}

Result<std::vector<TableSchema>> LoadSchemas(const TextRows& tables, const TextRows& columns,
                                             const TextRows& statistics, const TextRows& foreign_keys,
                                             const InformationSchemaFlavor& flavor) {
  CHSYNC_RETURN_IF_ERROR(CheckWidth(tables, 4, "information_schema.TABLES"));
  CHSYNC_RETURN_IF_ERROR(CheckWidth(foreign_keys, 10, "information_schema.KEY_COLUMN_USAGE"));
  CHSYNC_RETURN_IF_ERROR(CheckWidth(columns, 12, "information_schema.COLUMNS"));
  CHSYNC_RETURN_IF_ERROR(CheckWidth(statistics, 6, "information_schema.STATISTICS"));
  std::map<std::pair<std::string, std::string>, TableSchema> out;
  for (const auto& row : tables.rows) {
    TableSchema t;
    t.database = row[0].value_or("");
    t.name = row[1].value_or("");
    t.engine = row[2].value_or("");
    t.collation = CanonicalCollation(row[3].value_or(""));
    t.charset = t.collation.empty() ? "" : CharsetOfCollation(t.collation);
    out[{t.database, t.name}] = std::move(t);
  }
  for (const auto& row : columns.rows) {
    auto it = out.find({row[0].value_or(""), row[1].value_or("")});
    if (it == out.end()) continue;  // a view, or a table created between the queries
    TableSchema& t = it->second;
    std::string name = row[2].value_or("");
    auto where = [&](const Error& e) {
      return Error(e.kind(), fmt::format("information_schema for {}.{} column `{}`: {}", t.database, t.name,
                                         name, e.message()));
    };
    auto parsed = ParseColumnType(row[6].value_or(""));
    if (!parsed.ok()) return where(parsed.error());
    Column c = std::move(*parsed);
    c.name = name;
    c.nullable = row[5].value_or("YES") == "YES";
    if (row[7]) c.charset = CanonicalCharset(*row[7]);
    if (row[8]) c.collation = CanonicalCollation(*row[8]);
    std::string extra = row[9].value_or("");
    c.auto_increment = ContainsIgnoreCase(extra, "auto_increment");
    c.on_update_current_timestamp = ContainsIgnoreCase(extra, "on update");
    c.invisible = ContainsIgnoreCase(extra, "INVISIBLE");
    if (ContainsIgnoreCase(extra, "STORED GENERATED") || ContainsIgnoreCase(extra, "PERSISTENT")) {
      c.generated = GeneratedKind::kStored;
    } else if (ContainsIgnoreCase(extra, "VIRTUAL")) {
      c.generated = GeneratedKind::kVirtual;
    }
    if (c.generated != GeneratedKind::kNone) c.generation_expression = row[11].value_or("");
    c.comment = row[10].value_or("");
    const std::optional<std::string>& def = row[4];
    if (c.generated != GeneratedKind::kNone) {
      // No default on generated columns (MariaDB reports NULL for them).
    } else if (flavor.mariadb) {
      if (def) {
        auto d = ParseDefaultText(*def);
        if (!d.ok()) return where(d.error());
        c.default_value = *d;
      }
    } else if (def) {
      c.default_value = MySqlDefault(c, *def, extra);
    } else if (c.nullable) {
      c.default_value.kind = DefaultKind::kNull;
    }
    t.columns.push_back(std::move(c));
  }
  for (const auto& row : statistics.rows) {
    auto it = out.find({row[0].value_or(""), row[1].value_or("")});
    if (it == out.end()) continue;
    TableSchema& t = it->second;
    std::string index = row[2].value_or("");
    bool unique = row[3].value_or("1") == "0";
    std::string column = row[5] ? *row[5] : "(expression)";
    if (index == "PRIMARY") {
      t.primary_key.push_back(column);
    } else if (unique) {
      if (t.unique_keys.empty() || t.unique_keys.back().name != index)
        t.unique_keys.push_back(Key{index, {}});
      t.unique_keys.back().columns.push_back(column);
    }
  }
  // Rows come ordered by (schema, table, constraint, ordinal); a key's rows are consecutive. The
  // ORDER BY's collation may not be byte order: a key is continued only by its own name.
  for (const auto& row : foreign_keys.rows) {
    auto it = out.find({row[0].value_or(""), row[1].value_or("")});
    if (it == out.end()) continue;
    TableSchema& t = it->second;
    std::string name = row[2].value_or("");
    auto rule = [&](size_t index, std::string_view what) -> Result<ForeignKey::Action> {
      std::string text = row[index].value_or("");
      std::optional<ForeignKey::Action> action = ForeignKeyActionFromName(text);
      if (!action) {
        return Error(ErrorKind::kCorrupt,
                     fmt::format("information_schema for {}.{} foreign key `{}`: unknown {} '{}'", t.database,
                                 t.name, name, what, text));
      }
      return *action;
    };
    auto existing = std::find_if(t.foreign_keys.begin(), t.foreign_keys.end(),
                                 [&](const ForeignKey& f) { return f.name == name; });
    if (existing == t.foreign_keys.end()) {
      ForeignKey fk;
      fk.name = name;
      fk.parent_database = row[5].value_or("");
      fk.parent_table = row[6].value_or("");
      CHSYNC_ASSIGN_OR_RETURN(fk.on_update, rule(8, "UPDATE_RULE"));
      CHSYNC_ASSIGN_OR_RETURN(fk.on_delete, rule(9, "DELETE_RULE"));
      t.foreign_keys.push_back(std::move(fk));
      existing = t.foreign_keys.end() - 1;
    }
    existing->columns.push_back(row[3].value_or(""));
    existing->parent_columns.push_back(row[7].value_or(""));
  }
  std::vector<TableSchema> result;
  for (auto& [key, t] : out) {
    SortForeignKeys(t.foreign_keys);
    t.RenumberColumns();
    std::stable_sort(t.unique_keys.begin(), t.unique_keys.end(),
                     [](const Key& a, const Key& b) { return a.name < b.name; });
    result.push_back(std::move(t));
  }
  return result;
}

}  // namespace chsync::schema
