#include <fmt/format.h>

#include <charconv>

#include "schema/tracker.h"

// Text form, one record per line, fields `key=value` separated by single spaces; values escape
// every byte outside 0x21–0x7e and the bytes '%', '=', ',' as %XX. Defaults are not written.
//
//   chsync-schema 1
//   mode full_metadata=1 mariadb=0
//   position <value>
//   database name=<db> charset=<cs> collation=<co>
//   table database=<db> name=<t> engine=<e> charset=<cs> collation=<co>
//   column name=<c> type=<type> spelling=<s> length=<n> precision=<n> scale=<n> fsp=<n> unsigned=1 …
//   primary_key columns=<a>,<b>
//   unique name=<k> columns=<a>,<b>
//   foreign name=<f> columns=<a> parent_database=<db> parent_table=<t> parent_columns=<x>
//           on_delete=<action> on_update=<action>     (one line; action as ForeignKeyActionName,
//                                                      RESTRICT not written)
//   end
//
// Lines are added, never changed: a state written before `foreign` lines existed loads with no
// foreign keys.

namespace chsync::schema {
namespace {

constexpr std::string_view kHeader = "chsync-schema 1";

std::string Escape(std::string_view value) {
  std::string out;
  for (char ch : value) {
    auto u = static_cast<unsigned char>(ch);
    if (u <= 0x20 || u >= 0x7f || ch == '%' || ch == '=' || ch == ',') {
      out += fmt::format("%{:02X}", u);
    } else {
      out += ch;
    }
  }
  return out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

Result<std::string> Unescape(std::string_view value, size_t line) {
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '%') {
      out += value[i];
      continue;
    }
    int hi = i + 1 < value.size() ? HexValue(value[i + 1]) : -1;
    int lo = i + 2 < value.size() ? HexValue(value[i + 2]) : -1;
    if (hi < 0 || lo < 0)
      return Error(ErrorKind::kCorrupt, fmt::format("schema state line {}: bad %-escape", line));
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

std::string JoinList(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    out += Escape(items[i]);
  }
  return out;
}

Result<std::vector<std::string>> SplitList(std::string_view value, size_t line) {
  std::vector<std::string> out;
  if (value.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t comma = value.find(',', start);
    std::string_view part =
        value.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    CHSYNC_ASSIGN_OR_RETURN(std::string item, Unescape(part, line));
    out.push_back(std::move(item));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

void Field(std::string& out, std::string_view key, std::string_view value) {
  if (value.empty()) return;
  out += ' ';
  out += key;
  out += '=';
  out += Escape(value);
}

void Field(std::string& out, std::string_view key, const std::optional<uint32_t>& value) {
  if (value) out += fmt::format(" {}={}", key, *value);
}

void Flag(std::string& out, std::string_view key, bool value) {
  if (value) out += fmt::format(" {}=1", key);
}

struct Record {
  std::string kind;
  std::vector<std::pair<std::string, std::string>> fields;  // unescaped values
  std::vector<std::pair<std::string, std::string>> raw;     // escaped values (for lists)
};

Result<Record> ParseRecord(std::string_view line_text, size_t line) {
  Record r;
  size_t space = line_text.find(' ');
  r.kind = std::string(line_text.substr(0, space));
  while (space != std::string_view::npos) {
    size_t start = space + 1;
    space = line_text.find(' ', start);
    std::string_view field =
        line_text.substr(start, space == std::string_view::npos ? std::string_view::npos : space - start);
    size_t eq = field.find('=');
    if (eq == std::string_view::npos) {
      return Error(ErrorKind::kCorrupt,
                   fmt::format("schema state line {}: field '{}' has no '='", line, field));
    }
    CHSYNC_ASSIGN_OR_RETURN(std::string value, Unescape(field.substr(eq + 1), line));
    r.fields.emplace_back(std::string(field.substr(0, eq)), std::move(value));
    r.raw.emplace_back(std::string(field.substr(0, eq)), std::string(field.substr(eq + 1)));
  }
  return r;
}

Result<uint32_t> ParseU32(const std::string& value, size_t line) {
  uint32_t v = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || ptr != value.data() + value.size()) {
    return Error(ErrorKind::kCorrupt, fmt::format("schema state line {}: '{}' is not a number", line, value));
  }
  return v;
}

Result<DefaultKind> ParseDefaultKind(const std::string& name, size_t line) {
  for (DefaultKind k : {DefaultKind::kNone, DefaultKind::kNull, DefaultKind::kNumber, DefaultKind::kBool,
                        DefaultKind::kString, DefaultKind::kBit, DefaultKind::kHex,
                        DefaultKind::kCurrentTimestamp, DefaultKind::kExpression}) {
    if (DefaultKindName(k) == name) return k;
  }
  return Error(ErrorKind::kCorrupt,
               fmt::format("schema state line {}: unknown default kind '{}'", line, name));
}

Result<Column> ParseColumn(const Record& r, size_t line) {
  Column c;
  for (size_t i = 0; i < r.fields.size(); ++i) {
    const auto& [key, value] = r.fields[i];
    if (key == "name")
      c.name = value;
    else if (key == "type") {
      c.type = ColumnTypeFromName(value);
      if (c.type == ColumnType::kUnknown) {
        return Error(ErrorKind::kCorrupt,
                     fmt::format("schema state line {}: unknown column type '{}'", line, value));
      }
    } else if (key == "spelling")
      c.type_spelling = value;
    else if (key == "length") {
      CHSYNC_ASSIGN_OR_RETURN(c.length, ParseU32(value, line));
    } else if (key == "precision") {
      CHSYNC_ASSIGN_OR_RETURN(c.precision, ParseU32(value, line));
    } else if (key == "scale") {
      CHSYNC_ASSIGN_OR_RETURN(c.scale, ParseU32(value, line));
    } else if (key == "fsp") {
      CHSYNC_ASSIGN_OR_RETURN(c.fsp, ParseU32(value, line));
    } else if (key == "unsigned")
      c.is_unsigned = value == "1";
    else if (key == "zerofill")
      c.zerofill = value == "1";
    else if (key == "charset")
      c.charset = value;
    else if (key == "collation")
      c.collation = value;
    else if (key == "not_null")
      c.nullable = value != "1";
    else if (key == "default_kind") {
      CHSYNC_ASSIGN_OR_RETURN(c.default_value.kind, ParseDefaultKind(value, line));
    } else if (key == "default")
      c.default_value.text = value;
    else if (key == "introducer")
      c.default_value.introducer = value;
    else if (key == "on_update")
      c.on_update_current_timestamp = value == "1";
    else if (key == "auto_increment")
      c.auto_increment = value == "1";
    else if (key == "values") {
      CHSYNC_ASSIGN_OR_RETURN(c.enum_values, SplitList(r.raw[i].second, line));
    } else if (key == "values_empty")
      c.enum_values.assign(1, "");
    else if (key == "generated")
      c.generated = value == "stored" ? GeneratedKind::kStored : GeneratedKind::kVirtual;
    else if (key == "expression")
      c.generation_expression = value;
    else if (key == "invisible")
      c.invisible = value == "1";
    else if (key == "json_valid_check")
      c.json_valid_check = value == "1";
    else if (key == "comment")
      c.comment = value;
    else
      return Error(ErrorKind::kCorrupt,
                   fmt::format("schema state line {}: unknown column field '{}'", line, key));
  }
  return c;
}

Result<ForeignKey> ParseForeignKey(const Record& r, size_t line) {
  ForeignKey f;
  for (size_t i = 0; i < r.fields.size(); ++i) {
    const auto& [key, value] = r.fields[i];
    if (key == "name") {
      f.name = value;
    } else if (key == "columns") {
      CHSYNC_ASSIGN_OR_RETURN(f.columns, SplitList(r.raw[i].second, line));
    } else if (key == "parent_database") {
      f.parent_database = value;
    } else if (key == "parent_table") {
      f.parent_table = value;
    } else if (key == "parent_columns") {
      CHSYNC_ASSIGN_OR_RETURN(f.parent_columns, SplitList(r.raw[i].second, line));
    } else if (key == "on_delete" || key == "on_update") {
      std::optional<ForeignKey::Action> action = ForeignKeyActionFromName(value);
      if (!action) {
        return Error(ErrorKind::kCorrupt,
                     fmt::format("schema state line {}: unknown foreign key action '{}'", line, value));
      }
      (key == "on_delete" ? f.on_delete : f.on_update) = *action;
    } else {
      return Error(ErrorKind::kCorrupt,
                   fmt::format("schema state line {}: unknown foreign key field '{}'", line, key));
    }
  }
  return f;
}

}  // namespace

std::string Tracker::Serialize() const {
  std::string out(kHeader);
  out += '\n';
  out += fmt::format("mode full_metadata={} mariadb={}\n", options_.full_metadata ? 1 : 0,
                     options_.mariadb ? 1 : 0);
  if (!position_.empty()) out += "position value=" + Escape(position_) + "\n";
  for (const auto& [db, defaults] : database_defaults_) {
    out += "database";
    Field(out, "name", db);
    Field(out, "charset", defaults.first);
    Field(out, "collation", defaults.second);
    out += '\n';
  }
  for (const auto& [key, t] : tables_) {
    out += "table";
    Field(out, "database", t.database);
    Field(out, "name", t.name);
    Field(out, "engine", t.engine);
    Field(out, "charset", t.charset);
    Field(out, "collation", t.collation);
    out += '\n';
    for (const Column& c : t.columns) {
      out += "column";
      Field(out, "name", c.name);
      Field(out, "type", ColumnTypeName(c.type));
      Field(out, "spelling", c.type_spelling);
      Field(out, "length", c.length);
      Field(out, "precision", c.precision);
      Field(out, "scale", c.scale);
      Field(out, "fsp", c.fsp);
      Flag(out, "unsigned", c.is_unsigned);
      Flag(out, "zerofill", c.zerofill);
      Field(out, "charset", c.charset);
      Field(out, "collation", c.collation);
      Flag(out, "not_null", !c.nullable);
      if (c.default_value.kind != DefaultKind::kNone)
        Field(out, "default_kind", DefaultKindName(c.default_value.kind));
      Field(out, "default", c.default_value.text);
      Field(out, "introducer", c.default_value.introducer);
      Flag(out, "on_update", c.on_update_current_timestamp);
      Flag(out, "auto_increment", c.auto_increment);
      if (c.enum_values.size() == 1 && c.enum_values[0].empty()) {
        out += " values_empty=1";
      } else if (!c.enum_values.empty()) {
        out += " values=" + JoinList(c.enum_values);
      }
      if (c.generated != GeneratedKind::kNone) {
        Field(out, "generated", c.generated == GeneratedKind::kStored ? "stored" : "virtual");
      }
      Field(out, "expression", c.generation_expression);
      Flag(out, "invisible", c.invisible);
      Flag(out, "json_valid_check", c.json_valid_check);
      Field(out, "comment", c.comment);
      out += '\n';
    }
    if (!t.primary_key.empty()) out += "primary_key columns=" + JoinList(t.primary_key) + "\n";
    for (const Key& k : t.unique_keys) {
      out += "unique";
      Field(out, "name", k.name);
      out += " columns=" + JoinList(k.columns) + "\n";
    }
    for (const ForeignKey& f : t.foreign_keys) {
      out += "foreign";
      Field(out, "name", f.name);
      out += " columns=" + JoinList(f.columns);
      Field(out, "parent_database", f.parent_database);
      Field(out, "parent_table", f.parent_table);
      out += " parent_columns=" + JoinList(f.parent_columns);
      if (f.on_delete != ForeignKey::Action::kRestrict)
        Field(out, "on_delete", ForeignKeyActionName(f.on_delete));
      if (f.on_update != ForeignKey::Action::kRestrict)
        Field(out, "on_update", ForeignKeyActionName(f.on_update));
      out += '\n';
    }
    out += "end\n";
  }
  return out;
}

Result<Tracker> Tracker::Deserialize(std::string_view text) {
  Tracker tracker;
  size_t line_no = 0;
  size_t pos = 0;
  std::optional<TableSchema> table;
  bool header = false;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    if (line.empty()) continue;
    if (!header) {
      if (line != kHeader) {
        return Error(ErrorKind::kCorrupt, fmt::format("schema state: expected '{}' on line 1, found '{}'",
                                                      kHeader, line.substr(0, 40)));
      }
      header = true;
      continue;
    }
    CHSYNC_ASSIGN_OR_RETURN(Record r, ParseRecord(line, line_no));
    auto get = [&](std::string_view key) -> std::string {
      for (const auto& [k, v] : r.fields) {
        if (k == key) return v;
      }
      return "";
    };
    auto need_table = [&]() -> Status {
      if (!table) {
        return Error(ErrorKind::kCorrupt,
                     fmt::format("schema state line {}: '{}' outside a table", line_no, r.kind));
      }
      return Status::Ok();
    };
    if (r.kind == "mode") {
      tracker.options_.full_metadata = get("full_metadata") == "1";
      tracker.options_.mariadb = get("mariadb") == "1";
    } else if (r.kind == "position") {
      tracker.position_ = get("value");
    } else if (r.kind == "database") {
      tracker.database_defaults_[get("name")] = {get("charset"), get("collation")};
    } else if (r.kind == "table") {
      if (table)
        return Error(ErrorKind::kCorrupt, fmt::format("schema state line {}: table inside a table", line_no));
      table.emplace();
      table->database = get("database");
      table->name = get("name");
      table->engine = get("engine");
      table->charset = get("charset");
      table->collation = get("collation");
    } else if (r.kind == "column") {
      CHSYNC_RETURN_IF_ERROR(need_table());
      CHSYNC_ASSIGN_OR_RETURN(Column c, ParseColumn(r, line_no));
      table->columns.push_back(std::move(c));
    } else if (r.kind == "primary_key") {
      CHSYNC_RETURN_IF_ERROR(need_table());
      for (const auto& [k, v] : r.raw) {
        if (k == "columns") {
          CHSYNC_ASSIGN_OR_RETURN(table->primary_key, SplitList(v, line_no));
        }
      }
    } else if (r.kind == "unique") {
      CHSYNC_RETURN_IF_ERROR(need_table());
      Key key;
      key.name = get("name");
      for (const auto& [k, v] : r.raw) {
        if (k == "columns") {
          CHSYNC_ASSIGN_OR_RETURN(key.columns, SplitList(v, line_no));
        }
      }
      table->unique_keys.push_back(std::move(key));
    } else if (r.kind == "foreign") {
      CHSYNC_RETURN_IF_ERROR(need_table());
      CHSYNC_ASSIGN_OR_RETURN(ForeignKey fk, ParseForeignKey(r, line_no));
      table->foreign_keys.push_back(std::move(fk));
    } else if (r.kind == "end") {
      CHSYNC_RETURN_IF_ERROR(need_table());
      table->RenumberColumns();
      SortForeignKeys(table->foreign_keys);
      std::pair<std::string, std::string> key{table->database, table->name};
      tracker.tables_[key] = std::move(*table);
      table.reset();
    } else {
      return Error(ErrorKind::kCorrupt,
                   fmt::format("schema state line {}: unknown record '{}'", line_no, r.kind));
    }
  }
  if (!header) return Error(ErrorKind::kCorrupt, "schema state is empty");
  if (table) return Error(ErrorKind::kCorrupt, "schema state ends inside a table (missing 'end')");
  return tracker;
}

}  // namespace chsync::schema
