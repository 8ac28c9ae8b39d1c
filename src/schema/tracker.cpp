#include "schema/tracker.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "schema/parser.h"

namespace chsync::schema {
namespace {

using ChangeKind = SchemaChange::Kind;

Error TableError(const TableSchema& table, std::string message) {
  return Error(ErrorKind::kConfig,
               fmt::format("table {}: {}; the tracked schema is out of date, resync the table",
                           table.QualifiedName(), message));
}

uint64_t BytesPerCharOf(std::string_view charset) {
  if (charset == "utf8mb4" || charset == "utf16" || charset == "utf32" || charset.empty()) return 4;
  if (charset == "utf8mb3") return 3;
  if (charset == "ucs2") return 2;
  return 1;
}

/// Canonical integer text of a decimal string, or nullopt when it is not an integer.
std::optional<std::string> CanonicalInteger(std::string_view text) {
  bool negative = false;
  size_t i = 0;
  while (i < text.size() && text[i] == ' ') ++i;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  std::string digits;
  size_t count = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++count) {
    if (!(digits.empty() && text[i] == '0')) digits += text[i];
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    for (; i < text.size(); ++i) {
      if (text[i] != '0') return std::nullopt;
    }
  }
  if (count == 0 || i != text.size()) return std::nullopt;
  if (digits.empty()) return std::string("0");
  return negative ? "-" + digits : digits;
}

/// Canonical DECIMAL(p,s) text of a plain decimal literal ("1.5" → "1.50" at scale 2), or nullopt.
std::optional<std::string> CanonicalDecimal(std::string_view text, uint32_t scale) {
  bool negative = false;
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  std::string integer, fraction;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (!(integer.empty() && text[i] == '0')) integer += text[i];
  }
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) fraction += text[i];
  }
  if (i != text.size()) return std::nullopt;
  while (fraction.size() > scale && fraction.back() == '0') fraction.pop_back();
  if (fraction.size() > scale) return std::nullopt;
  fraction.resize(scale, '0');
  if (integer.empty()) integer = "0";
  bool zero =
      integer == "0" && std::all_of(fraction.begin(), fraction.end(), [](char c) { return c == '0'; });
  std::string out = (negative && !zero) ? "-" : "";
  out += integer;
  if (scale > 0) out += "." + fraction;
  return out;
}

bool IsNumericType(ColumnType t) {
  return IsIntegerType(t) || t == ColumnType::kDecimal || t == ColumnType::kFloat ||
         t == ColumnType::kDouble || t == ColumnType::kYear;
}

ColumnType TextTypeForBytes(uint64_t bytes) {
  if (bytes <= 255) return ColumnType::kTinyText;
  if (bytes <= 65535) return ColumnType::kText;
  if (bytes <= 16777215) return ColumnType::kMediumText;
  return ColumnType::kLongText;
}

uint64_t TextTypeBytes(ColumnType t) {
  switch (t) {
    case ColumnType::kTinyText: return 255;
    case ColumnType::kText: return 65535;
    case ColumnType::kMediumText: return 16777215;
    default: return 4294967295ULL;
  }
}

/// Everything but name/ordinal equal.
bool SameDefinition(const Column& a, const Column& b) {
  Column x = a, y = b;
  x.name.clear();
  y.name.clear();
  x.ordinal_position = y.ordinal_position = 0;
  return x == y;
}

bool OnlyDefaultDiffers(const Column& a, const Column& b) {
  Column x = a;
  x.name = b.name;
  x.ordinal_position = b.ordinal_position;
  x.default_value = b.default_value;
  return x == b && !(a.default_value == b.default_value);
}

TableName Qualified(const TableName& name, const std::string& db) {
  TableName out = name;
  if (out.database.empty()) out.database = db;
  return out;
}

std::string Describe(const TableName& name) {
  return name.database + "." + name.name;
}

/// Primary-key columns are NOT NULL whatever their definition says: MySQL and MariaDB make them
/// so when the key is added, and keep them so through a MODIFY/CHANGE that omits NOT NULL.
void MakePrimaryKeyNotNull(TableSchema& table) {
  for (const std::string& name : table.primary_key) {
    Column* c = table.GetColumn(name);
    if (c == nullptr) continue;
    c->nullable = false;
    if (c->default_value.kind == DefaultKind::kNull) c->default_value = DefaultValue{};
  }
}

/// Applies the table's key definitions (CREATE TABLE or ADD) to `table`.
Status AddKey(TableSchema& table, const KeyDefinition& key) {
  if (!key.unresolved_period.empty()) {
    return TableError(table, fmt::format("a key WITHOUT OVERLAPS over period `{}` also holds the period's "
                                         "columns, and the tracker does not know them",
                                         key.unresolved_period));
  }
  for (const std::string& col : key.columns) {
    if (!col.empty() && col[0] == '(') continue;  // functional key part
    if (table.FindColumn(col) < 0) {
      return TableError(table, fmt::format("key column `{}` does not exist", col));
    }
  }
  if (key.type == KeyDefinition::Type::kPrimary) {
    if (!table.primary_key.empty()) return TableError(table, "a second PRIMARY KEY was defined");
    for (const std::string& col : key.columns) {
      Column* c = table.GetColumn(col);
      if (c != nullptr) table.primary_key.push_back(c->name);
    }
    MakePrimaryKeyNotNull(table);
    return Status::Ok();
  }
  if (key.type != KeyDefinition::Type::kUnique) return Status::Ok();
  Key unique;
  unique.name = key.name;
  for (const std::string& col : key.columns) {
    const Column* c = table.GetColumn(col);
    unique.columns.push_back(c != nullptr ? c->name : col);
  }
  auto taken = [&](const std::string& name) {
    return EqualsIgnoreCase(name, "PRIMARY") ||
           std::any_of(table.unique_keys.begin(), table.unique_keys.end(),
                       [&](const Key& k) { return EqualsIgnoreCase(k.name, name); });
  };
  if (unique.name.empty()) {
    // MySQL names an unnamed key after its first column, then _2, _3, … when taken.
    std::string base = unique.columns.empty() ? "key" : unique.columns.front();
    unique.name = base;
    for (int n = 2; taken(unique.name); ++n) unique.name = fmt::format("{}_{}", base, n);
  } else if (taken(unique.name)) {
    return TableError(table, fmt::format("duplicate key name `{}`", unique.name));
  }
  table.unique_keys.push_back(std::move(unique));
  return Status::Ok();
}

/// Removes `column` from every key; drops keys left empty.
void RemoveColumnFromKeys(TableSchema& table, const std::string& column) {
  auto strip = [&](std::vector<std::string>& cols) {
    cols.erase(std::remove_if(cols.begin(), cols.end(),
                              [&](const std::string& c) { return EqualsIgnoreCase(c, column); }),
               cols.end());
  };
  strip(table.primary_key);
  for (Key& k : table.unique_keys) strip(k.columns);
  table.unique_keys.erase(std::remove_if(table.unique_keys.begin(), table.unique_keys.end(),
                                         [](const Key& k) { return k.columns.empty(); }),
                          table.unique_keys.end());
}

void RenameColumnInKeys(TableSchema& table, const std::string& from, const std::string& to) {
  auto rename = [&](std::vector<std::string>& cols) {
    for (std::string& c : cols) {
      if (EqualsIgnoreCase(c, from)) c = to;
    }
  };
  rename(table.primary_key);
  for (Key& k : table.unique_keys) rename(k.columns);
  for (ForeignKey& f : table.foreign_keys) {
    rename(f.columns);
    // A self-referencing key names its own columns as the parent's too.
    if (f.parent_database == table.database && f.parent_table == table.name) rename(f.parent_columns);
  }
}

/// The action the server stores for one written (or not) in a FOREIGN KEY clause, as
/// information_schema reports it: an omitted action is RESTRICT on MariaDB and NO ACTION on MySQL 8
/// (its data dictionary's default); MariaDB's InnoDB stores SET DEFAULT as RESTRICT.
ForeignKey::Action StoredAction(const std::optional<ForeignKey::Action>& written, bool mariadb) {
  if (!written) return mariadb ? ForeignKey::Action::kRestrict : ForeignKey::Action::kNoAction;
  if (mariadb && *written == ForeignKey::Action::kSetDefault) return ForeignKey::Action::kRestrict;
  return *written;
}

/// n of a name `<table>_ibfk_<n>` the server generated (or a user wrote so), else 0.
uint64_t GeneratedForeignKeyNumber(std::string_view name, std::string_view table) {
  std::string prefix = std::string(table) + "_ibfk_";
  if (name.size() <= prefix.size() || !EqualsIgnoreCase(name.substr(0, prefix.size()), prefix)) return 0;
  uint64_t n = 0;
  for (char ch : name.substr(prefix.size())) {
    if (ch < '0' || ch > '9' || n > 1000000000) return 0;
    n = n * 10 + static_cast<uint64_t>(ch - '0');
  }
  return n;
}

/// The number the next unnamed FOREIGN KEY added by ALTER TABLE takes: both servers take one more
/// than the highest `<table>_ibfk_<n>` the table has.
uint64_t NextForeignKeyNumber(const TableSchema& table) {
  uint64_t highest = 0;
  for (const ForeignKey& f : table.foreign_keys) {
    highest = std::max(highest, GeneratedForeignKeyNumber(f.name, table.name));
  }
  return highest + 1;
}

/// Adds the FOREIGN KEY `key` to `table` (the child). `parent` is the referenced table when tracked
/// (its spelling of the referenced columns is kept, as information_schema shows it), else nullptr.
/// An unnamed key takes `<table>_ibfk_<next_number>` and advances it; MariaDB names it after the
/// `FOREIGN KEY index_name` when one is written, MySQL ≥ 8.0.16 does not.
Status AddForeignKey(TableSchema& table, const KeyDefinition& key, const TableSchema* parent, bool mariadb,
                     uint64_t& next_number) {
  ForeignKey fk;
  fk.name = key.name;
  if (fk.name.empty() && mariadb) fk.name = key.index_name;
  if (fk.name.empty()) fk.name = fmt::format("{}_ibfk_{}", table.name, next_number++);
  for (const ForeignKey& other : table.foreign_keys) {
    if (EqualsIgnoreCase(other.name, fk.name)) {
      return TableError(table, fmt::format("duplicate foreign key name `{}`", fk.name));
    }
  }
  for (const std::string& col : key.columns) {
    const Column* c = table.GetColumn(col);
    if (c == nullptr)
      return TableError(table, fmt::format("foreign key `{}` column `{}` does not exist", fk.name, col));
    fk.columns.push_back(c->name);
  }
  fk.parent_database = key.references.database.empty() ? table.database : key.references.database;
  fk.parent_table = key.references.name;
  fk.parent_columns = key.referenced_columns;
  if (fk.parent_columns.empty() && parent != nullptr) fk.parent_columns = parent->primary_key;
  if (parent != nullptr) {
    for (std::string& col : fk.parent_columns) {
      const Column* c = parent->GetColumn(col);
      if (c != nullptr) col = c->name;
    }
  }
  fk.on_delete = StoredAction(key.on_delete, mariadb);
  fk.on_update = StoredAction(key.on_update, mariadb);
  table.foreign_keys.push_back(std::move(fk));
  SortForeignKeys(table.foreign_keys);
  return Status::Ok();
}

/// InnoDB renames a child's `<old>_ibfk_<n>` keys (generated or written so) with the child.
void RenameGeneratedForeignKeys(TableSchema& table, const std::string& old_name) {
  std::string prefix = old_name + "_ibfk_";
  for (ForeignKey& f : table.foreign_keys) {
    if (f.name.size() > prefix.size() && f.name.compare(0, prefix.size(), prefix) == 0) {
      f.name = table.name + "_ibfk_" + f.name.substr(prefix.size());
    }
  }
  SortForeignKeys(table.foreign_keys);
}

SchemaChange ColumnChange(ChangeKind kind, const TableName& table, const Column& column) {
  SchemaChange c;
  c.kind = kind;
  c.table = table;
  c.column = column;
  return c;
}

TableName NameOf(const TableSchema& t) {
  return TableName{t.database, t.name};
}

/// InnoDB points every child's foreign keys at a renamed parent (RENAME TABLE, ALTER … RENAME).
void FollowParentRename(std::map<std::pair<std::string, std::string>, TableSchema>& tables,
                        const TableName& from, const TableName& to) {
  for (auto& [key, child] : tables) {
    for (ForeignKey& f : child.foreign_keys) {
      if (f.parent_database == from.database && f.parent_table == from.name) {
        f.parent_database = to.database;
        f.parent_table = to.name;
      }
    }
  }
}

}  // namespace

std::string_view SchemaChangeKindName(SchemaChange::Kind kind) {
  switch (kind) {
    case ChangeKind::kTableCreated: return "table_created";
    case ChangeKind::kTableDropped: return "table_dropped";
    case ChangeKind::kTableRenamed: return "table_renamed";
    case ChangeKind::kTableTruncated: return "table_truncated";
    case ChangeKind::kTableReplaced: return "table_replaced";
    case ChangeKind::kColumnAdded: return "column_added";
    case ChangeKind::kColumnDropped: return "column_dropped";
    case ChangeKind::kColumnRenamed: return "column_renamed";
    case ChangeKind::kColumnModified: return "column_modified";
    case ChangeKind::kColumnMoved: return "column_moved";
    case ChangeKind::kDefaultChanged: return "default_changed";
    case ChangeKind::kKeysChanged: return "keys_changed";
    case ChangeKind::kTableOptionsChanged: return "table_options_changed";
    case ChangeKind::kPartitionDataChanged: return "partition_data_changed";
  }
  return "unknown";
}

void Tracker::NormalizeColumn(Column& c, const TableSchema& table, bool mariadb) {
  if (mariadb && c.type == ColumnType::kJson) {
    c.type = ColumnType::kLongText;
    c.charset = "utf8mb4";
    c.collation = "utf8mb4_bin";
    c.json_valid_check = true;
  }
  // Only MariaDB's text holds a JSON document this way (MySQL has its JSON type, and chsync reads no
  // CHECK of MySQL's from information_schema); a json_valid CHECK on anything else means nothing.
  if (!mariadb) c.json_valid_check = false;
  switch (c.type) {
    case ColumnType::kChar:
    case ColumnType::kVarChar:
    case ColumnType::kTinyText:
    case ColumnType::kText:
    case ColumnType::kMediumText:
    case ColumnType::kLongText: break;
    default: c.json_valid_check = false;
  }
  if (IsIntegerType(c.type) || c.type == ColumnType::kYear) {
    if (!(c.type == ColumnType::kTinyInt && c.length == 1u)) c.length.reset();
  }
  if (IsCharacterType(c.type)) {
    if (c.charset.empty()) {
      c.charset = table.charset;
      if (c.collation.empty()) c.collation = table.collation;
    }
    if (c.collation.empty() && c.charset == table.charset) c.collation = table.collation;
  } else {
    c.charset.clear();
    c.collation.clear();
  }
  c.charset = CanonicalCharset(c.charset);
  c.collation = CanonicalCollation(c.collation);
  if (c.generated != GeneratedKind::kNone || c.auto_increment) {
    if (c.default_value.kind == DefaultKind::kNull) c.default_value = DefaultValue{};
  }
  DefaultValue& d = c.default_value;
  if (d.kind == DefaultKind::kNone && c.nullable && c.generated == GeneratedKind::kNone &&
      !c.auto_increment) {
    d.kind = DefaultKind::kNull;
  }
  d.introducer.clear();
  if (d.kind == DefaultKind::kBool && IsNumericType(c.type)) {
    d.kind = DefaultKind::kNumber;
    d.text = d.text == "TRUE" ? "1" : "0";
  }
  if ((d.kind == DefaultKind::kNumber || d.kind == DefaultKind::kString) && IsIntegerType(c.type)) {
    if (auto canonical = CanonicalInteger(d.text)) {
      d.kind = DefaultKind::kNumber;
      d.text = *canonical;
    }
  } else if ((d.kind == DefaultKind::kNumber || d.kind == DefaultKind::kString) &&
             c.type == ColumnType::kDecimal) {
    if (auto canonical = CanonicalDecimal(d.text, c.scale.value_or(0))) {
      d.kind = DefaultKind::kNumber;
      d.text = *canonical;
    }
  } else if (d.kind == DefaultKind::kNumber && !IsNumericType(c.type) && c.type != ColumnType::kBit) {
    d.kind = DefaultKind::kString;
  }
  if (d.kind == DefaultKind::kString && c.type == ColumnType::kDateTime && d.text.size() == 10) {
    d.text += " 00:00:00";
  }
  if (c.type == ColumnType::kTimestamp || c.type == ColumnType::kDateTime) {
    if (!c.fsp) c.fsp = 0;
  }
}

void Tracker::SetTable(TableSchema table) {
  table.charset = CanonicalCharset(table.charset);
  table.collation = CanonicalCollation(table.collation);
  if (table.charset.empty() && !table.collation.empty()) table.charset = CharsetOfCollation(table.collation);
  for (Column& c : table.columns) NormalizeColumn(c, table, options_.mariadb);
  table.RenumberColumns();
  SortForeignKeys(table.foreign_keys);
  TableKey key{table.database, table.name};
  tables_[key] = std::move(table);
}

void Tracker::SetDatabaseDefaults(const std::string& database, const std::string& charset,
                                  const std::string& collation) {
  database_defaults_[database] = {CanonicalCharset(charset), CanonicalCollation(collation)};
}

const TableSchema* Tracker::Find(std::string_view database, std::string_view table) const {
  auto it = tables_.find(TableKey{std::string(database), std::string(table)});
  return it == tables_.end() ? nullptr : &it->second;
}

std::vector<const TableSchema*> Tracker::Tables() const {
  std::vector<const TableSchema*> out;
  for (const auto& [key, table] : tables_) out.push_back(&table);
  return out;
}

Result<ApplyResult> Tracker::ApplySql(std::string_view sql, std::string_view current_database,
                                      const LexOptions& options) {
  CHSYNC_ASSIGN_OR_RETURN(Statement st, ParseStatement(sql, options));
  return Apply(st, current_database);
}

Result<ApplyResult> Tracker::Apply(const Statement& st, std::string_view current_database) {
  ApplyResult out;
  std::string db(current_database);
  // Work on a copy so a failing statement leaves the state unchanged.
  Tracker saved = *this;
  Status status;
  switch (st.kind) {
    case StatementKind::kCreateTable: status = ApplyCreate(st, db, out); break;
    case StatementKind::kCreateTableLike: status = ApplyCreateLike(st, db, out); break;
    case StatementKind::kAlterTable: status = ApplyAlter(st, db, out); break;
    case StatementKind::kDropTable: status = ApplyDrop(st, db, out); break;
    case StatementKind::kRenameTable: status = ApplyRename(st, db, out); break;
    case StatementKind::kCreateIndex:
    case StatementKind::kDropIndex: status = ApplyIndex(st, db, out); break;
    case StatementKind::kTruncateTable: {
      TableName name = Qualified(st.table, db);
      if (Find(name.database, name.name) != nullptr) {
        SchemaChange c;
        c.kind = ChangeKind::kTableTruncated;
        c.table = name;
        out.changes.push_back(std::move(c));
      } else {
        out.notes.push_back(fmt::format("TRUNCATE of untracked table {}", Describe(name)));
      }
      break;
    }
    case StatementKind::kCreateDatabase:
      if (!st.options.charset.empty() || !st.options.collation.empty()) {
        std::string cs =
            st.options.charset.empty() ? CharsetOfCollation(st.options.collation) : st.options.charset;
        SetDatabaseDefaults(st.database, cs, st.options.collation);
      }
      break;
    case StatementKind::kAlterDatabase: {
      std::string name = st.database.empty() ? db : st.database;
      if (!st.options.charset.empty() || !st.options.collation.empty()) {
        std::string cs =
            st.options.charset.empty() ? CharsetOfCollation(st.options.collation) : st.options.charset;
        SetDatabaseDefaults(name, cs, st.options.collation);
      }
      break;
    }
    case StatementKind::kDropDatabase: {
      for (auto it = tables_.begin(); it != tables_.end();) {
        if (it->first.first == st.database) {
          SchemaChange c;
          c.kind = ChangeKind::kTableDropped;
          c.table = NameOf(it->second);
          out.changes.push_back(std::move(c));
          it = tables_.erase(it);
        } else {
          ++it;
        }
      }
      database_defaults_.erase(st.database);
      break;
    }
    default: out.notes.push_back(fmt::format("{} does not change table schemas", st.description)); break;
  }
  if (!status.ok()) {
    *this = std::move(saved);
    return std::move(status).error();
  }
  for (SchemaChange& c : out.changes) c.requires_resync = ordinal_mode() && c.shifts_positions;
  return out;
}

Status Tracker::ApplyCreate(const Statement& st, const std::string& db, ApplyResult& out) {
  TableName name = Qualified(st.table, db);
  if (st.temporary) {
    out.notes.push_back(fmt::format("temporary table {} is not tracked", Describe(name)));
    return Status::Ok();
  }
  if (name.database.empty()) {
    return Error(ErrorKind::kConfig,
                 fmt::format("CREATE TABLE {} without a database and no default database", name.name));
  }
  bool exists = Find(name.database, name.name) != nullptr;
  if (exists && st.if_not_exists) {
    out.notes.push_back(
        fmt::format("CREATE TABLE IF NOT EXISTS {}: already tracked, unchanged", Describe(name)));
    return Status::Ok();
  }
  if (st.as_select) {
    // Row-based binlogs log CREATE … SELECT as a plain CREATE TABLE; a statement form here means
    // columns come from a query we do not evaluate.
    return Error(
        ErrorKind::kUnsupported,
        fmt::format("CREATE TABLE {} … SELECT: the columns come from a query; reload this table's schema "
                    "from information_schema",
                    Describe(name)));
  }
  TableSchema table;
  table.database = name.database;
  table.name = name.name;
  table.engine = st.options.engine;
  table.charset = st.options.charset;
  table.collation = st.options.collation;
  if (table.charset.empty() && !table.collation.empty()) table.charset = CharsetOfCollation(table.collation);
  if (table.charset.empty()) {
    auto it = database_defaults_.find(name.database);
    if (it != database_defaults_.end()) {
      table.charset = it->second.first;
      if (table.collation.empty()) table.collation = it->second.second;
    }
  }
  for (const ColumnDefinition& def : st.columns) {
    if (table.FindColumn(def.column.name) >= 0) {
      return TableError(table, fmt::format("duplicate column name `{}`", def.column.name));
    }
    table.columns.push_back(def.column);
  }
  for (Column& c : table.columns) NormalizeColumn(c, table, options_.mariadb);
  table.RenumberColumns();
  for (const KeyDefinition& key : st.keys) CHSYNC_RETURN_IF_ERROR(AddKey(table, key));
  // Unnamed foreign keys are numbered in the order written; column-level ones (which only MariaDB
  // creates) are taken first, as the parser keeps columns and keys apart: a table mixing both
  // after a column's REFERENCES may be numbered otherwise than the server did.
  auto parent_of = [&](const KeyDefinition& key) -> const TableSchema* {
    TableName parent = Qualified(key.references, name.database);
    return parent == name ? &table : Find(parent.database, parent.name);
  };
  uint64_t next_number = 1;
  if (options_.mariadb) {
    for (const ColumnDefinition& def : st.columns) {
      if (!def.references) continue;
      CHSYNC_RETURN_IF_ERROR(
          AddForeignKey(table, *def.references, parent_of(*def.references), true, next_number));
    }
  }
  for (const KeyDefinition& key : st.keys) {
    if (key.type != KeyDefinition::Type::kForeign) continue;
    CHSYNC_RETURN_IF_ERROR(AddForeignKey(table, key, parent_of(key), options_.mariadb, next_number));
  }
  SchemaChange c;
  c.kind = ChangeKind::kTableCreated;
  c.table = name;
  c.schema = table;
  if (exists)
    c.note = st.or_replace ? "CREATE OR REPLACE replaced the tracked table"
                           : "replaced a tracked table of the same name";
  out.changes.push_back(std::move(c));
  tables_[TableKey{name.database, name.name}] = std::move(table);
  return Status::Ok();
}

Status Tracker::ApplyCreateLike(const Statement& st, const std::string& db, ApplyResult& out) {
  TableName name = Qualified(st.table, db);
  TableName like = Qualified(st.like, db);
  if (st.temporary) {
    out.notes.push_back(fmt::format("temporary table {} is not tracked", Describe(name)));
    return Status::Ok();
  }
  if (Find(name.database, name.name) != nullptr && st.if_not_exists) {
    out.notes.push_back(
        fmt::format("CREATE TABLE IF NOT EXISTS {}: already tracked, unchanged", Describe(name)));
    return Status::Ok();
  }
  const TableSchema* source = Find(like.database, like.name);
  if (source == nullptr) {
    out.notes.push_back(
        fmt::format("CREATE TABLE {} LIKE untracked table {}: not tracked", Describe(name), Describe(like)));
    return Status::Ok();
  }
  TableSchema table = *source;
  table.database = name.database;
  table.name = name.name;
  // CREATE TABLE … LIKE copies no foreign keys (MySQL and MariaDB).
  table.foreign_keys.clear();
  SchemaChange c;
  c.kind = ChangeKind::kTableCreated;
  c.table = name;
  c.schema = table;
  c.note = "copied from " + Describe(like);
  out.changes.push_back(std::move(c));
  tables_[TableKey{name.database, name.name}] = std::move(table);
  return Status::Ok();
}

Status Tracker::ApplyAlter(const Statement& st, const std::string& db, ApplyResult& out) {
  using K = AlterOperation::Kind;
  TableName name = Qualified(st.table, db);
  // MariaDB's CONVERT PARTITION p TO TABLE x creates x with the table's definition (`tracked`, the
  // table after the statement; nullptr when untracked) and CONVERT TABLE x TO PARTITION p drops x.
  // Rows move without row events: x's arrival is reported as a partition data change too. An
  // unqualified x is in the current database, as the server resolves it.
  auto convert_tables = [&](const TableSchema* tracked) {
    std::optional<TableSchema> source;
    if (tracked != nullptr) source = *tracked;
    for (const AlterOperation& op : st.operations) {
      if (op.converted_table == AlterOperation::ConvertedTable::kNone) continue;
      TableName other = Qualified(op.new_table, db.empty() ? name.database : db);
      TableKey other_key{other.database, other.name};
      if (op.converted_table == AlterOperation::ConvertedTable::kDropped) {
        if (tables_.erase(other_key) == 0) {
          out.notes.push_back(fmt::format("CONVERT TABLE of untracked table {}", Describe(other)));
          continue;
        }
        SchemaChange c;
        c.kind = ChangeKind::kTableDropped;
        c.table = other;
        c.note = "converted into a partition of " + Describe(name);
        out.changes.push_back(std::move(c));
        continue;
      }
      if (!source) {
        out.notes.push_back(fmt::format("CONVERT PARTITION of untracked table {}: {} is not tracked",
                                        Describe(name), Describe(other)));
        continue;
      }
      TableSchema table = *source;
      table.database = other.database;
      table.name = other.name;
      table.foreign_keys.clear();  // partitioned InnoDB tables have none; the copy gets none either
      SchemaChange created;
      created.kind = ChangeKind::kTableCreated;
      created.table = other;
      created.schema = table;
      created.note =
          fmt::format("converted from a partition of {}{}", Describe(name),
                      tables_.count(other_key) != 0 ? "; replaced a tracked table of the same name" : "");
      out.changes.push_back(std::move(created));
      SchemaChange moved;
      moved.kind = ChangeKind::kPartitionDataChanged;
      moved.table = other;
      moved.note = op.text;
      out.changes.push_back(std::move(moved));
      tables_[other_key] = std::move(table);
    }
  };
  auto it = tables_.find(TableKey{name.database, name.name});
  if (it == tables_.end()) {
    out.notes.push_back(fmt::format("ALTER TABLE of untracked table {}", Describe(name)));
    for (const AlterOperation& op : st.operations) {
      if (op.kind == K::kRenameTable)
        FollowParentRename(tables_, name, Qualified(op.new_table, name.database));
    }
    convert_tables(nullptr);
    return Status::Ok();
  }
  const TableSchema before = it->second;
  TableSchema table = before;

  // Table-level options first (the new default charset applies to MODIFY without a charset).
  for (const AlterOperation& op : st.operations) {
    if (op.kind == K::kTableOptions) {
      if (!op.options.engine.empty()) table.engine = op.options.engine;
      if (!op.options.charset.empty()) {
        table.charset = op.options.charset;
        table.collation = op.options.collation;
      } else if (!op.options.collation.empty()) {
        table.collation = op.options.collation;
        table.charset = CharsetOfCollation(op.options.collation);
      }
    } else if (op.kind == K::kConvertCharset) {
      table.charset = op.options.charset;
      table.collation = op.options.collation;
    }
  }

  // Columns, the way MySQL's prepare_alter_table builds the new list: walk the old columns
  // (dropping, replacing by CHANGE/MODIFY/RENAME in place unless they carry FIRST/AFTER,
  // applying ALTER COLUMN), then place ADDed and repositioned definitions in clause order.
  struct Pending {
    const AlterOperation* op;
    Column column;
    int origin = -1;  ///< index in `before.columns`, -1 for added
    bool found = false;
  };
  std::vector<Pending> pending;  // ADD/CHANGE/MODIFY/RENAME in clause order
  std::vector<const AlterOperation*> drops;
  std::vector<const AlterOperation*> alters;  // SET/DROP DEFAULT, SET VISIBLE/INVISIBLE
  for (const AlterOperation& op : st.operations) {
    switch (op.kind) {
      case K::kAddColumn:
        if (op.if_not_exists && before.FindColumn(op.definition.column.name) >= 0) {
          out.notes.push_back(
              fmt::format("ADD COLUMN IF NOT EXISTS `{}`: exists, skipped", op.definition.column.name));
          break;
        }
        pending.push_back({&op, op.definition.column});
        break;
      case K::kModifyColumn:
      case K::kChangeColumn:
      case K::kRenameColumn:
        if (op.if_exists && before.FindColumn(op.name) < 0) {
          out.notes.push_back(
              fmt::format("{} IF EXISTS `{}`: no such column, skipped", AlterKindName(op.kind), op.name));
          break;
        }
        pending.push_back({&op, op.definition.column});
        break;
      case K::kDropColumn:
        if (op.if_exists && before.FindColumn(op.name) < 0) {
          out.notes.push_back(fmt::format("DROP COLUMN IF EXISTS `{}`: no such column, skipped", op.name));
          break;
        }
        drops.push_back(&op);
        break;
      case K::kSetDefault:
      case K::kDropDefault:
      case K::kSetVisible:
      case K::kSetInvisible: alters.push_back(&op); break;
      default: break;
    }
  }

  struct Entry {
    Column column;
    int origin;
  };
  std::vector<Entry> list;
  std::vector<bool> drop_used(drops.size(), false);
  std::vector<bool> alter_used(alters.size(), false);
  for (size_t i = 0; i < before.columns.size(); ++i) {
    const Column& old = before.columns[i];
    bool dropped = false;
    for (size_t d = 0; d < drops.size(); ++d) {
      if (EqualsIgnoreCase(drops[d]->name, old.name)) {
        drop_used[d] = true;
        dropped = true;
      }
    }
    if (dropped) continue;
    Pending* change = nullptr;
    for (Pending& p : pending) {
      if (p.op->kind != K::kAddColumn && !p.found && EqualsIgnoreCase(p.op->name, old.name)) {
        change = &p;
        break;
      }
    }
    if (change != nullptr) {
      change->found = true;
      change->origin = static_cast<int>(i);
      if (change->op->kind == K::kRenameColumn) {
        change->column = old;
        change->column.name = change->op->new_name;
      } else {
        NormalizeColumn(change->column, table, options_.mariadb);
      }
      if (change->op->position.kind == ColumnPosition::Kind::kDefault)
        list.push_back({change->column, change->origin});
      continue;
    }
    Column kept = old;
    for (size_t a = 0; a < alters.size(); ++a) {
      const AlterOperation& op = *alters[a];
      if (!EqualsIgnoreCase(op.name, old.name)) continue;
      alter_used[a] = true;
      if (op.kind == K::kSetDefault) {
        kept.default_value = op.default_value;
      } else if (op.kind == K::kDropDefault) {
        kept.default_value = DefaultValue{};
      } else {
        kept.invisible = op.kind == K::kSetInvisible;
      }
      NormalizeColumn(kept, table, options_.mariadb);
    }
    list.push_back({kept, static_cast<int>(i)});
  }
  for (size_t d = 0; d < drops.size(); ++d) {
    if (!drop_used[d])
      return TableError(before, fmt::format("cannot DROP `{}`: no such column", drops[d]->name));
  }
  for (size_t a = 0; a < alters.size(); ++a) {
    if (!alter_used[a] && !alters[a]->if_exists) {
      return TableError(before, fmt::format("ALTER COLUMN `{}`: no such column", alters[a]->name));
    }
  }
  for (Pending& p : pending) {
    const AlterOperation& op = *p.op;
    if (op.kind != K::kAddColumn && !p.found) {
      return TableError(before, fmt::format("{} `{}`: no such column", AlterKindName(op.kind), op.name));
    }
    if (op.kind == K::kAddColumn) {
      NormalizeColumn(p.column, table, options_.mariadb);
      if (op.position.kind == ColumnPosition::Kind::kDefault) list.push_back({p.column, -1});
    }
    if (op.position.kind == ColumnPosition::Kind::kFirst) {
      list.insert(list.begin(), Entry{p.column, p.origin});
    } else if (op.position.kind == ColumnPosition::Kind::kAfter) {
      auto at = std::find_if(list.begin(), list.end(), [&](const Entry& e) {
        return EqualsIgnoreCase(e.column.name, op.position.after);
      });
      if (at == list.end()) {
        return TableError(before, fmt::format("AFTER `{}`: no such column", op.position.after));
      }
      list.insert(at + 1, Entry{p.column, p.origin});
    }
  }
  // Duplicate names.
  for (size_t i = 0; i < list.size(); ++i) {
    for (size_t j = i + 1; j < list.size(); ++j) {
      if (EqualsIgnoreCase(list[i].column.name, list[j].column.name)) {
        return TableError(before, fmt::format("duplicate column name `{}`", list[j].column.name));
      }
    }
  }

  // CONVERT TO CHARACTER SET: every character column, TEXT types widened to keep their length.
  for (const AlterOperation& op : st.operations) {
    if (op.kind != K::kConvertCharset) continue;
    for (Entry& e : list) {
      Column& c = e.column;
      if (!IsCharacterType(c.type)) continue;
      uint64_t old_bpc = BytesPerCharOf(c.charset), new_bpc = BytesPerCharOf(op.options.charset);
      if (c.type == ColumnType::kTinyText || c.type == ColumnType::kText ||
          c.type == ColumnType::kMediumText) {
        uint64_t chars = TextTypeBytes(c.type) / old_bpc;
        ColumnType widened = TextTypeForBytes(chars * new_bpc);
        if (TextTypeBytes(widened) > TextTypeBytes(c.type)) {
          c.type = widened;
          c.type_spelling = std::string(ColumnTypeName(widened));
        }
      }
      c.charset = op.options.charset;
      c.collation = op.options.collation.empty() ? table.collation : op.options.collation;
    }
  }

  table.columns.clear();
  for (Entry& e : list) table.columns.push_back(e.column);
  table.RenumberColumns();

  // Keys: drops first, then dropped/renamed columns, then additions (MySQL's order).
  for (const AlterOperation& op : st.operations) {
    if (op.kind == K::kDropPrimaryKey) {
      if (table.primary_key.empty()) return TableError(before, "DROP PRIMARY KEY: the table has none");
      table.primary_key.clear();
    } else if (op.kind == K::kDropKey) {
      if (EqualsIgnoreCase(op.name, "PRIMARY")) {
        table.primary_key.clear();
        continue;
      }
      table.unique_keys.erase(std::remove_if(table.unique_keys.begin(), table.unique_keys.end(),
                                             [&](const Key& k) { return EqualsIgnoreCase(k.name, op.name); }),
                              table.unique_keys.end());
    } else if (op.kind == K::kRenameKey) {
      for (Key& k : table.unique_keys) {
        if (EqualsIgnoreCase(k.name, op.name)) k.name = op.new_name;
      }
    }
  }
  std::vector<std::pair<std::string, std::string>> column_renames;
  for (const Column& old : before.columns) {
    auto at = std::find_if(list.begin(), list.end(), [&](const Entry& e) {
      return e.origin >= 0 && EqualsIgnoreCase(before.columns[static_cast<size_t>(e.origin)].name, old.name);
    });
    if (at == list.end()) {
      RemoveColumnFromKeys(table, old.name);
    } else if (at->column.name != old.name) {
      RenameColumnInKeys(table, old.name, at->column.name);
      column_renames.emplace_back(old.name, at->column.name);
    }
  }
  // Children elsewhere name the renamed columns as their parent columns: InnoDB renames them there.
  for (auto& [key, child] : tables_) {
    if (key == TableKey{name.database, name.name}) continue;
    for (ForeignKey& f : child.foreign_keys) {
      if (f.parent_database != name.database || f.parent_table != name.name) continue;
      for (std::string& col : f.parent_columns) {
        for (const auto& [from, to] : column_renames) {
          if (EqualsIgnoreCase(col, from)) col = to;
        }
      }
    }
  }
  // Foreign keys: drops, then additions (ADD … FOREIGN KEY, and MariaDB's ADD COLUMN … REFERENCES).
  for (const AlterOperation& op : st.operations) {
    if (op.kind != K::kDropForeignKey) continue;
    auto fk = std::find_if(table.foreign_keys.begin(), table.foreign_keys.end(),
                           [&](const ForeignKey& f) { return EqualsIgnoreCase(f.name, op.name); });
    if (fk == table.foreign_keys.end()) {
      // A state saved before foreign keys were tracked has none: not an error.
      out.notes.push_back(fmt::format("DROP FOREIGN KEY `{}`: not tracked on {}", op.name, Describe(name)));
      continue;
    }
    table.foreign_keys.erase(fk);
  }
  uint64_t next_fk_number = NextForeignKeyNumber(table);
  for (const AlterOperation& op : st.operations) {
    const KeyDefinition* key = nullptr;
    if (op.kind == K::kAddKey && op.key.type == KeyDefinition::Type::kForeign) {
      key = &op.key;
    } else if (op.kind == K::kAddColumn && op.definition.references && options_.mariadb &&
               std::any_of(pending.begin(), pending.end(), [&](const Pending& p) { return p.op == &op; })) {
      key = &*op.definition.references;
    }
    if (key == nullptr) continue;
    if (op.if_not_exists && !key->name.empty() &&
        std::any_of(table.foreign_keys.begin(), table.foreign_keys.end(),
                    [&](const ForeignKey& f) { return EqualsIgnoreCase(f.name, key->name); })) {
      continue;
    }
    TableName parent = Qualified(key->references, name.database);
    const TableSchema* parent_schema = parent == name ? &table : Find(parent.database, parent.name);
    CHSYNC_RETURN_IF_ERROR(AddForeignKey(table, *key, parent_schema, options_.mariadb, next_fk_number));
  }
  for (const AlterOperation& op : st.operations) {
    if (op.kind == K::kAddKey) {
      if (op.if_not_exists && op.key.type == KeyDefinition::Type::kUnique &&
          std::any_of(table.unique_keys.begin(), table.unique_keys.end(),
                      [&](const Key& k) { return EqualsIgnoreCase(k.name, op.key.name); })) {
        continue;
      }
      if (op.if_not_exists && op.key.type == KeyDefinition::Type::kPrimary && !table.primary_key.empty()) {
        out.notes.push_back("ADD PRIMARY KEY IF NOT EXISTS: the table has one, skipped");
        continue;
      }
      CHSYNC_RETURN_IF_ERROR(AddKey(table, op.key));
    }
  }
  MakePrimaryKeyNotNull(table);

  // Changes, in clause order.
  TableName final_name = name;
  for (const AlterOperation& op : st.operations) {
    if (op.kind == K::kRenameTable) final_name = Qualified(op.new_table, name.database);
  }
  // Old ordinal → new ordinal for surviving columns, to see what shifts.
  auto new_index_of_origin = [&](int origin) -> int {
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i].origin == origin) return static_cast<int>(i);
    }
    return -1;
  };
  // Whether some surviving column now sits at another ordinal than before.
  bool positions_shift = false;
  for (size_t i = 0; i < before.columns.size(); ++i) {
    int now = new_index_of_origin(static_cast<int>(i));
    if (now >= 0 && now != static_cast<int>(i)) positions_shift = true;
  }

  auto column_after = [&](const std::string& column_name) -> std::pair<uint32_t, std::string> {
    int idx = table.FindColumn(column_name);
    if (idx <= 0) return {static_cast<uint32_t>(idx + 1), ""};
    return {static_cast<uint32_t>(idx + 1), table.columns[static_cast<size_t>(idx - 1)].name};
  };

  for (const AlterOperation& op : st.operations) {
    switch (op.kind) {
      case K::kAddColumn: {
        auto p = std::find_if(pending.begin(), pending.end(), [&](const Pending& x) { return x.op == &op; });
        if (p == pending.end()) break;
        const Column* now = table.GetColumn(p->column.name);
        SchemaChange c =
            ColumnChange(ChangeKind::kColumnAdded, final_name, now != nullptr ? *now : p->column);
        std::tie(c.position, c.after_column) = column_after(p->column.name);
        c.default_translation = TranslateDefault(op.definition.column, options_.full_metadata);
        c.shifts_positions = op.position.kind != ColumnPosition::Kind::kDefault && positions_shift;
        if (op.position.kind != ColumnPosition::Kind::kDefault && !c.shifts_positions) {
          c.note = "placed after the last column: no existing column moves";
        }
        out.changes.push_back(std::move(c));
        break;
      }
      case K::kDropColumn: {
        int idx = before.FindColumn(op.name);
        if (idx < 0) break;
        SchemaChange c =
            ColumnChange(ChangeKind::kColumnDropped, final_name, before.columns[static_cast<size_t>(idx)]);
        c.shifts_positions = true;
        if (static_cast<size_t>(idx) + 1 == before.columns.size()) c.note = "was the last column";
        out.changes.push_back(std::move(c));
        break;
      }
      case K::kModifyColumn:
      case K::kChangeColumn:
      case K::kRenameColumn: {
        auto p = std::find_if(pending.begin(), pending.end(), [&](const Pending& x) { return x.op == &op; });
        if (p == pending.end() || p->origin < 0) break;
        const Column& old = before.columns[static_cast<size_t>(p->origin)];
        const Column* now = table.GetColumn(p->column.name);
        if (now == nullptr) break;
        if (old.name != now->name) {
          SchemaChange c = ColumnChange(ChangeKind::kColumnRenamed, final_name, *now);
          c.old_column_name = old.name;
          out.changes.push_back(std::move(c));
        }
        if (!SameDefinition(old, *now)) {
          SchemaChange c = ColumnChange(
              OnlyDefaultDiffers(old, *now) ? ChangeKind::kDefaultChanged : ChangeKind::kColumnModified,
              final_name, *now);
          c.old_column = old;
          out.changes.push_back(std::move(c));
        }
        if (op.position.kind != ColumnPosition::Kind::kDefault) {
          SchemaChange c = ColumnChange(ChangeKind::kColumnMoved, final_name, *now);
          std::tie(c.position, c.after_column) = column_after(now->name);
          c.shifts_positions = positions_shift;
          if (!positions_shift) c.note = "no column changed position";
          out.changes.push_back(std::move(c));
        }
        break;
      }
      case K::kSetDefault:
      case K::kDropDefault:
      case K::kSetVisible:
      case K::kSetInvisible: {
        int idx = before.FindColumn(op.name);
        const Column* now = table.GetColumn(op.name);
        if (idx < 0 || now == nullptr) break;
        const Column& old = before.columns[static_cast<size_t>(idx)];
        if (SameDefinition(old, *now)) break;
        SchemaChange c = ColumnChange(op.kind == K::kSetDefault || op.kind == K::kDropDefault
                                          ? ChangeKind::kDefaultChanged
                                          : ChangeKind::kColumnModified,
                                      final_name, *now);
        c.old_column = old;
        out.changes.push_back(std::move(c));
        break;
      }
      case K::kConvertCharset:
        for (const Column& now : table.columns) {
          int idx = before.FindColumn(now.name);
          if (idx < 0) continue;
          const Column& old = before.columns[static_cast<size_t>(idx)];
          if (!IsCharacterType(old.type) || SameDefinition(old, now)) continue;
          // Already reported by a MODIFY/CHANGE of the same column?
          bool reported = std::any_of(out.changes.begin(), out.changes.end(), [&](const SchemaChange& ch) {
            return ch.kind == ChangeKind::kColumnModified && EqualsIgnoreCase(ch.column.name, now.name);
          });
          if (reported) continue;
          SchemaChange c = ColumnChange(ChangeKind::kColumnModified, final_name, now);
          c.old_column = old;
          c.note = "CONVERT TO CHARACTER SET " + op.options.charset;
          out.changes.push_back(std::move(c));
        }
        break;
      case K::kPartition:
        if (op.changes_data) {
          SchemaChange c;
          c.kind = ChangeKind::kPartitionDataChanged;
          c.table = final_name;
          c.note = op.text;
          out.changes.push_back(std::move(c));
        }
        break;
      default: break;
    }
  }
  // Columns a new primary key made NOT NULL, unless a MODIFY/CHANGE above reported them.
  for (size_t i = 0; i < table.columns.size(); ++i) {
    const Column& now = table.columns[i];
    if (list[i].origin < 0) continue;
    const Column& old = before.columns[static_cast<size_t>(list[i].origin)];
    if (!old.nullable || now.nullable) continue;
    bool reported = std::any_of(out.changes.begin(), out.changes.end(), [&](const SchemaChange& ch) {
      return (ch.kind == ChangeKind::kColumnModified || ch.kind == ChangeKind::kDefaultChanged) &&
             EqualsIgnoreCase(ch.column.name, now.name);
    });
    if (reported) continue;
    SchemaChange c = ColumnChange(ChangeKind::kColumnModified, final_name, now);
    c.old_column = old;
    c.note = "a PRIMARY KEY column is NOT NULL";
    out.changes.push_back(std::move(c));
  }
  if (table.primary_key != before.primary_key || table.unique_keys != before.unique_keys) {
    SchemaChange c;
    c.kind = ChangeKind::kKeysChanged;
    c.table = final_name;
    c.schema = table;
    out.changes.push_back(std::move(c));
  }
  if (table.engine != before.engine || table.charset != before.charset ||
      table.collation != before.collation) {
    SchemaChange c;
    c.kind = ChangeKind::kTableOptionsChanged;
    c.table = final_name;
    c.note = fmt::format("engine {} charset {} collation {}", table.engine, table.charset, table.collation);
    out.changes.push_back(std::move(c));
  }
  if (!(final_name == name)) {
    if (Find(final_name.database, final_name.name) != nullptr) {
      return TableError(before, fmt::format("RENAME TO {}: that table exists", Describe(final_name)));
    }
    SchemaChange c;
    c.kind = ChangeKind::kTableRenamed;
    c.table = final_name;
    c.old_table = name;
    out.changes.push_back(std::move(c));
    tables_.erase(it);
    table.database = final_name.database;
    table.name = final_name.name;
    RenameGeneratedForeignKeys(table, name.name);
    tables_[TableKey{final_name.database, final_name.name}] = std::move(table);
    FollowParentRename(tables_, name, final_name);
  } else {
    it->second = std::move(table);
  }
  convert_tables(Find(final_name.database, final_name.name));
  return Status::Ok();
}

Status Tracker::ApplyDrop(const Statement& st, const std::string& db, ApplyResult& out) {
  for (const TableName& t : st.tables) {
    TableName name = Qualified(t, db);
    auto it = tables_.find(TableKey{name.database, name.name});
    if (it == tables_.end() || st.temporary) {
      out.notes.push_back(fmt::format("DROP of untracked table {}", Describe(name)));
      continue;
    }
    tables_.erase(it);
    SchemaChange c;
    c.kind = ChangeKind::kTableDropped;
    c.table = name;
    out.changes.push_back(std::move(c));
  }
  return Status::Ok();
}

Status Tracker::ApplyRename(const Statement& st, const std::string& db, ApplyResult& out) {
  // Names whose table went away earlier in this statement: a table renamed onto one of them is
  // a swap (gh-ost, pt-osc), reported with the column differences.
  std::map<TableKey, TableSchema> vacated;
  for (const auto& [from_raw, to_raw] : st.renames) {
    TableName from = Qualified(from_raw, db);
    TableName to = Qualified(to_raw, db);
    auto it = tables_.find(TableKey{from.database, from.name});
    if (tables_.count(TableKey{to.database, to.name}) != 0) {
      return Error(ErrorKind::kConfig,
                   fmt::format("RENAME TABLE {} TO {}: the target is a tracked table that exists; "
                               "the tracked schema is out of date, resync",
                               Describe(from), Describe(to)));
    }
    if (it == tables_.end()) {
      out.notes.push_back(fmt::format("RENAME of untracked table {}", Describe(from)));
      FollowParentRename(tables_, from, to);
      continue;
    }
    TableSchema table = std::move(it->second);
    tables_.erase(it);
    vacated[TableKey{from.database, from.name}] = table;
    table.database = to.database;
    table.name = to.name;
    SchemaChange c;
    c.kind = ChangeKind::kTableRenamed;
    c.table = to;
    c.old_table = from;
    out.changes.push_back(std::move(c));
    auto previous = vacated.find(TableKey{to.database, to.name});
    if (previous != vacated.end()) {
      SchemaChange r;
      r.kind = ChangeKind::kTableReplaced;
      r.table = to;
      r.old_table = from;
      r.schema = table;
      r.note = fmt::format("{} now holds the table that was {}", Describe(to), Describe(from));
      out.changes.push_back(std::move(r));
      TableSchema old = previous->second;
      old.database = to.database;
      old.name = to.name;
      for (SchemaChange& d : DiffByName(old, table, options_.full_metadata)) {
        d.requires_resync = false;
        out.changes.push_back(std::move(d));
      }
    }
    RenameGeneratedForeignKeys(table, from.name);
    tables_[TableKey{to.database, to.name}] = std::move(table);
    FollowParentRename(tables_, from, to);
  }
  return Status::Ok();
}

Status Tracker::ApplyIndex(const Statement& st, const std::string& db, ApplyResult& out) {
  TableName name = Qualified(st.table, db);
  auto it = tables_.find(TableKey{name.database, name.name});
  if (it == tables_.end()) {
    out.notes.push_back(fmt::format("{} on untracked table {}", st.description, Describe(name)));
    return Status::Ok();
  }
  TableSchema table = it->second;
  if (st.kind == StatementKind::kCreateIndex) {
    if (st.if_not_exists &&
        std::any_of(table.unique_keys.begin(), table.unique_keys.end(),
                    [&](const Key& k) { return EqualsIgnoreCase(k.name, st.key.name); })) {
      return Status::Ok();
    }
    CHSYNC_RETURN_IF_ERROR(AddKey(table, st.key));
  } else if (EqualsIgnoreCase(st.key.name, "PRIMARY")) {
    table.primary_key.clear();
  } else {
    table.unique_keys.erase(
        std::remove_if(table.unique_keys.begin(), table.unique_keys.end(),
                       [&](const Key& k) { return EqualsIgnoreCase(k.name, st.key.name); }),
        table.unique_keys.end());
  }
  if (table.primary_key != it->second.primary_key || table.unique_keys != it->second.unique_keys ||
      !(table.columns == it->second.columns)) {
    SchemaChange c;
    c.kind = ChangeKind::kKeysChanged;
    c.table = name;
    c.schema = table;
    out.changes.push_back(std::move(c));
  }
  it->second = std::move(table);
  return Status::Ok();
}

std::vector<SchemaChange> DiffByName(const TableSchema& before, const TableSchema& after,
                                     bool full_metadata) {
  std::vector<SchemaChange> out;
  TableName name = NameOf(after);
  for (const Column& old : before.columns) {
    if (after.FindColumn(old.name) < 0) {
      SchemaChange c = ColumnChange(ChangeKind::kColumnDropped, name, old);
      c.shifts_positions = true;
      out.push_back(std::move(c));
    }
  }
  for (size_t i = 0; i < after.columns.size(); ++i) {
    const Column& now = after.columns[i];
    const Column* old = before.GetColumn(now.name);
    if (old == nullptr) {
      SchemaChange c = ColumnChange(ChangeKind::kColumnAdded, name, now);
      c.position = static_cast<uint32_t>(i + 1);
      c.after_column = i == 0 ? "" : after.columns[i - 1].name;
      c.default_translation = TranslateDefault(now, full_metadata);
      c.shifts_positions = i + 1 != after.columns.size();
      out.push_back(std::move(c));
    } else if (!SameDefinition(*old, now) || old->name != now.name) {
      SchemaChange c = ColumnChange(
          OnlyDefaultDiffers(*old, now) ? ChangeKind::kDefaultChanged : ChangeKind::kColumnModified, name,
          now);
      c.old_column = *old;
      out.push_back(std::move(c));
    }
  }
  // Relative order of the columns both versions share.
  std::vector<std::string> shared_before, shared_after;
  for (const Column& c : before.columns) {
    if (after.FindColumn(c.name) >= 0) shared_before.push_back(ToLower(c.name));
  }
  for (const Column& c : after.columns) {
    if (before.FindColumn(c.name) >= 0) shared_after.push_back(ToLower(c.name));
  }
  if (shared_before != shared_after) {
    for (size_t i = 0; i < after.columns.size(); ++i) {
      const Column& now = after.columns[i];
      int old_index = before.FindColumn(now.name);
      if (old_index >= 0 && static_cast<size_t>(old_index) != i) {
        SchemaChange c = ColumnChange(ChangeKind::kColumnMoved, name, now);
        c.position = static_cast<uint32_t>(i + 1);
        c.after_column = i == 0 ? "" : after.columns[i - 1].name;
        c.shifts_positions = true;
        out.push_back(std::move(c));
      }
    }
  }
  if (before.primary_key != after.primary_key || before.unique_keys != after.unique_keys) {
    SchemaChange c;
    c.kind = ChangeKind::kKeysChanged;
    c.table = name;
    c.schema = after;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace chsync::schema
