#include "schema/explain.h"

#include <fmt/format.h>

namespace chsync::schema {
namespace {

std::string Name(const TableName& t) {
  return t.database.empty() ? t.name : t.database + "." + t.name;
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ",";
    out += items[i];
  }
  return out;
}

std::string DefaultText(const DefaultValue& d) {
  switch (d.kind) {
    case DefaultKind::kNone: return "";
    case DefaultKind::kNull: return "NULL";
    case DefaultKind::kString:
      return (d.introducer.empty() ? "" : "_" + d.introducer) + QuoteForDisplay(d.text);
    case DefaultKind::kBit: return "b'" + d.text + "'";
    case DefaultKind::kHex: return "x'" + d.text + "'";
    case DefaultKind::kExpression: return "(" + d.text + ")";
    default: return d.text;
  }
}

std::string ActionText(ForeignKey::Action action) {
  std::string out(ForeignKeyActionName(action));
  for (char& ch : out) {
    if (ch == ' ') ch = '_';
  }
  return out;
}

/// " -> parent (cols) on_delete=… on_update=… index=…" of a FOREIGN KEY as written.
std::string ReferencesText(const KeyDefinition& k) {
  std::string out = " -> " + Name(k.references);
  if (!k.referenced_columns.empty()) out += " (" + Join(k.referenced_columns) + ")";
  if (k.on_delete) out += " on_delete=" + ActionText(*k.on_delete);
  if (k.on_update) out += " on_update=" + ActionText(*k.on_update);
  if (!k.index_name.empty()) out += " index=" + k.index_name;
  return out;
}

std::string KeyText(const KeyDefinition& k) {
  std::string out = fmt::format("key {}", KeyTypeName(k.type));
  if (!k.name.empty() && k.type != KeyDefinition::Type::kPrimary) out += " " + k.name;
  if (k.type == KeyDefinition::Type::kCheck) return out + " (" + k.check + ")";
  out += " (" + Join(k.columns) + ")";
  if (k.type == KeyDefinition::Type::kForeign) out += ReferencesText(k);
  return out;
}

std::string PositionText(const ColumnPosition& p) {
  switch (p.kind) {
    case ColumnPosition::Kind::kFirst: return " first";
    case ColumnPosition::Kind::kAfter: return " after " + p.after;
    default: return "";
  }
}

std::string OptionsText(const TableOptions& o) {
  std::string out;
  if (!o.engine.empty()) out += " engine=" + o.engine;
  if (!o.charset.empty()) out += " charset=" + o.charset;
  if (!o.collation.empty()) out += " collation=" + o.collation;
  if (!o.comment.empty()) out += " comment=" + QuoteForDisplay(o.comment);
  return out;
}

std::string DefinitionText(const ColumnDefinition& d) {
  std::string out = ExplainColumn(d.column);
  if (d.primary_key) out += " primary_key";
  if (d.unique) out += " unique";
  if (d.serial) out += " serial";
  if (d.references) out += " references" + ReferencesText(*d.references).substr(3);
  return out;
}

std::string OperationText(const AlterOperation& op) {
  using K = AlterOperation::Kind;
  std::string out(AlterKindName(op.kind));
  if (op.if_exists) out += " if_exists";
  if (op.if_not_exists) out += " if_not_exists";
  switch (op.kind) {
    case K::kAddColumn: return out + " " + DefinitionText(op.definition) + PositionText(op.position);
    case K::kModifyColumn: return out + " " + DefinitionText(op.definition) + PositionText(op.position);
    case K::kChangeColumn:
      return out + " " + op.name + " -> " + DefinitionText(op.definition) + PositionText(op.position);
    case K::kRenameColumn:
    case K::kRenameKey: return out + " " + op.name + " -> " + op.new_name;
    case K::kDropColumn:
    case K::kDropKey:
    case K::kDropForeignKey:
    case K::kDropConstraint:
    case K::kDropDefault:
    case K::kSetVisible:
    case K::kSetInvisible: return out + " " + op.name;
    case K::kSetDefault:
      return out + " " + op.name + " " + std::string(DefaultKindName(op.default_value.kind)) + " " +
             DefaultText(op.default_value);
    case K::kAddKey: return out + " " + KeyText(op.key);
    case K::kRenameTable: return out + " " + Name(op.new_table);
    case K::kConvertCharset:
    case K::kTableOptions: return out + OptionsText(op.options);
    case K::kPartition: return out + (op.changes_data ? " changes_data" : "") + " " + op.text;
    default: return out + (op.text.empty() ? "" : " " + op.text);
  }
}

std::string TranslationText(const DefaultTranslation& t) {
  return t.propagated ? "default=" + t.literal : "default omitted (" + t.reason + ")";
}

}  // namespace

std::string QuoteForDisplay(std::string_view text) {
  std::string out = "'";
  for (char ch : text) {
    auto u = static_cast<unsigned char>(ch);
    switch (ch) {
      case '\\': out += "\\\\"; break;
      case '\'': out += "\\'"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\0': out += "\\0"; break;
      default:
        if (u < 0x20 || u == 0x7f) {
          out += fmt::format("\\x{:02x}", u);
        } else {
          out += ch;
        }
    }
  }
  return out + "'";
}

std::string ExplainColumn(const Column& c) {
  std::string out = c.name + " " + c.TypeText();
  if (IsIntegerType(c.type) && c.length) out += fmt::format(" width={}", *c.length);
  if (!c.type_spelling.empty() && !EqualsIgnoreCase(c.type_spelling, ColumnTypeName(c.type))) {
    std::string spelling = c.type_spelling;
    for (char& ch : spelling) {
      if (ch == ' ') ch = '_';
    }
    out += " spelling=" + spelling;
  }
  if (!c.charset.empty()) out += " charset=" + c.charset;
  if (!c.collation.empty()) out += " collation=" + c.collation;
  if (!c.nullable) out += " not_null";
  if (c.default_value.kind != DefaultKind::kNone) out += " default=" + DefaultText(c.default_value);
  if (c.on_update_current_timestamp) out += " on_update=CURRENT_TIMESTAMP";
  if (c.auto_increment) out += " auto_increment";
  if (c.generated != GeneratedKind::kNone) {
    out += fmt::format(" generated={}({})", c.generated == GeneratedKind::kStored ? "stored" : "virtual",
                       c.generation_expression);
  }
  if (c.invisible) out += " invisible";
  if (c.json_valid_check) out += " json_valid_check";
  if (!c.comment.empty()) out += " comment=" + QuoteForDisplay(c.comment);
  return out;
}

std::string ExplainStatement(const Statement& st) {
  std::string out(StatementKindName(st.kind));
  switch (st.kind) {
    case StatementKind::kCreateTable:
      out += " " + Name(st.table);
      if (st.temporary) out += " temporary";
      if (st.if_not_exists) out += " if_not_exists";
      if (st.or_replace) out += " or_replace";
      if (st.as_select) out += " as_select";
      out += OptionsText(st.options) + "\n";
      for (const ColumnDefinition& d : st.columns) out += "  column " + DefinitionText(d) + "\n";
      for (const KeyDefinition& k : st.keys) out += "  " + KeyText(k) + "\n";
      return out;
    case StatementKind::kCreateTableLike:
      out += " " + Name(st.table) + " like " + Name(st.like);
      if (st.temporary) out += " temporary";
      if (st.if_not_exists) out += " if_not_exists";
      return out + "\n";
    case StatementKind::kAlterTable:
      out += " " + Name(st.table) + (st.if_exists ? " if_exists" : "") + "\n";
      for (const AlterOperation& op : st.operations) out += "  " + OperationText(op) + "\n";
      return out;
    case StatementKind::kDropTable: {
      std::vector<std::string> names;
      for (const TableName& t : st.tables) names.push_back(Name(t));
      out += " " + Join(names);
      if (st.temporary) out += " temporary";
      if (st.if_exists) out += " if_exists";
      return out + "\n";
    }
    case StatementKind::kRenameTable: {
      std::vector<std::string> pairs;
      for (const auto& [from, to] : st.renames) pairs.push_back(Name(from) + "->" + Name(to));
      return out + " " + Join(pairs) + "\n";
    }
    case StatementKind::kTruncateTable: return out + " " + Name(st.table) + "\n";
    case StatementKind::kCreateIndex:
      return out + " " + Name(st.table) + (st.if_not_exists ? " if_not_exists" : "") + "\n  " +
             KeyText(st.key) + "\n";
    case StatementKind::kDropIndex:
      return out + " " + Name(st.table) + " " + st.key.name + (st.if_exists ? " if_exists" : "") + "\n";
    case StatementKind::kCreateDatabase:
    case StatementKind::kAlterDatabase:
    case StatementKind::kDropDatabase: return out + " " + st.database + OptionsText(st.options) + "\n";
    case StatementKind::kEmpty: return out + "\n";
    default: return out + " " + st.description + "\n";
  }
}

std::string ExplainChange(const SchemaChange& c) {
  using K = SchemaChange::Kind;
  std::string out = std::string(SchemaChangeKindName(c.kind)) + " " + Name(c.table);
  switch (c.kind) {
    case K::kTableRenamed:
    case K::kTableReplaced: out += " from " + Name(c.old_table); break;
    case K::kColumnAdded:
      out += " " + ExplainColumn(c.column) + fmt::format(" position={}", c.position);
      if (!c.after_column.empty()) out += " after=" + c.after_column;
      out += " " + TranslationText(c.default_translation);
      break;
    case K::kColumnDropped: out += " " + c.column.name; break;
    case K::kColumnRenamed: out += " " + c.old_column_name + " -> " + c.column.name; break;
    case K::kColumnModified:
    case K::kDefaultChanged:
      out += " " + (c.old_column ? ExplainColumn(*c.old_column) : "?") + " => " + ExplainColumn(c.column);
      break;
    case K::kColumnMoved:
      out += " " + c.column.name + fmt::format(" position={}", c.position);
      if (!c.after_column.empty()) out += " after=" + c.after_column;
      break;
    case K::kKeysChanged:
      if (c.schema) {
        out += " primary=(" + Join(c.schema->primary_key) + ")";
        for (const Key& k : c.schema->unique_keys) out += " unique " + k.name + "(" + Join(k.columns) + ")";
      }
      break;
    default: break;
  }
  if (c.shifts_positions) out += " shifts_positions";
  if (c.requires_resync) out += " requires_resync";
  if (!c.note.empty() && c.kind != K::kTableOptionsChanged && c.kind != K::kPartitionDataChanged) {
    out += " (" + c.note + ")";
  } else if (!c.note.empty()) {
    out += " " + c.note;
  }
  return out + "\n";
}

std::string ExplainSchema(const TableSchema& t) {
  std::string out = "table " + t.QualifiedName();
  if (!t.engine.empty()) out += " engine=" + t.engine;
  if (!t.charset.empty()) out += " charset=" + t.charset;
  if (!t.collation.empty()) out += " collation=" + t.collation;
  out += "\n";
  for (const Column& c : t.columns) out += fmt::format("  {} {}\n", c.ordinal_position, ExplainColumn(c));
  if (!t.primary_key.empty()) out += "  primary (" + Join(t.primary_key) + ")\n";
  for (const Key& k : t.unique_keys) out += "  unique " + k.name + " (" + Join(k.columns) + ")\n";
  for (const ForeignKey& f : t.foreign_keys) {
    out += fmt::format("  foreign {} ({}) -> {}.{} ({}) on_delete={} on_update={}\n", f.name, Join(f.columns),
                       f.parent_database, f.parent_table, Join(f.parent_columns), ActionText(f.on_delete),
                       ActionText(f.on_update));
  }
  return out;
}

}  // namespace chsync::schema
