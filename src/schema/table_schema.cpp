#include "schema/table_schema.h"

#include <algorithm>
#include <array>
#include <utility>

namespace chsync::schema {
namespace {

constexpr std::array<std::pair<ColumnType, std::string_view>, 42> kTypeNames{{
    {ColumnType::kUnknown, "unknown"},
    {ColumnType::kTinyInt, "tinyint"},
    {ColumnType::kSmallInt, "smallint"},
    {ColumnType::kMediumInt, "mediumint"},
    {ColumnType::kInt, "int"},
    {ColumnType::kBigInt, "bigint"},
    {ColumnType::kDecimal, "decimal"},
    {ColumnType::kFloat, "float"},
    {ColumnType::kDouble, "double"},
    {ColumnType::kBit, "bit"},
    {ColumnType::kDate, "date"},
    {ColumnType::kDateTime, "datetime"},
    {ColumnType::kTimestamp, "timestamp"},
    {ColumnType::kTime, "time"},
    {ColumnType::kYear, "year"},
    {ColumnType::kChar, "char"},
    {ColumnType::kVarChar, "varchar"},
    {ColumnType::kBinary, "binary"},
    {ColumnType::kVarBinary, "varbinary"},
    {ColumnType::kTinyBlob, "tinyblob"},
    {ColumnType::kBlob, "blob"},
    {ColumnType::kMediumBlob, "mediumblob"},
    {ColumnType::kLongBlob, "longblob"},
    {ColumnType::kTinyText, "tinytext"},
    {ColumnType::kText, "text"},
    {ColumnType::kMediumText, "mediumtext"},
    {ColumnType::kLongText, "longtext"},
    {ColumnType::kEnum, "enum"},
    {ColumnType::kSet, "set"},
    {ColumnType::kJson, "json"},
    {ColumnType::kGeometry, "geometry"},
    {ColumnType::kPoint, "point"},
    {ColumnType::kLineString, "linestring"},
    {ColumnType::kPolygon, "polygon"},
    {ColumnType::kMultiPoint, "multipoint"},
    {ColumnType::kMultiLineString, "multilinestring"},
    {ColumnType::kMultiPolygon, "multipolygon"},
    {ColumnType::kGeometryCollection, "geometrycollection"},
    {ColumnType::kVector, "vector"},
    {ColumnType::kUuid, "uuid"},
    {ColumnType::kInet4, "inet4"},
    {ColumnType::kInet6, "inet6"},
}};

char Lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

void AppendQuoted(std::string& out, std::string_view value) {
  out += '\'';
  for (char c : value) {
    if (c == '\'') out += '\'';
    out += c;
  }
  out += '\'';
}

}  // namespace

std::string_view ColumnTypeName(ColumnType type) {
  for (const auto& [t, name] : kTypeNames) {
    if (t == type) return name;
  }
  return "unknown";
}

ColumnType ColumnTypeFromName(std::string_view name) {
  for (const auto& [t, n] : kTypeNames) {
    if (EqualsIgnoreCase(n, name)) return t;
  }
  return ColumnType::kUnknown;
}

bool IsIntegerType(ColumnType type) {
  return type == ColumnType::kTinyInt || type == ColumnType::kSmallInt || type == ColumnType::kMediumInt ||
         type == ColumnType::kInt || type == ColumnType::kBigInt;
}

bool IsCharacterType(ColumnType type) {
  switch (type) {
    case ColumnType::kChar:
    case ColumnType::kVarChar:
    case ColumnType::kTinyText:
    case ColumnType::kText:
    case ColumnType::kMediumText:
    case ColumnType::kLongText:
    case ColumnType::kEnum:
    case ColumnType::kSet: return true;
    default: return false;
  }
}

bool HasFsp(ColumnType type) {
  return type == ColumnType::kDateTime || type == ColumnType::kTimestamp || type == ColumnType::kTime;
}

std::string_view DefaultKindName(DefaultKind kind) {
  switch (kind) {
    case DefaultKind::kNone: return "none";
    case DefaultKind::kNull: return "null";
    case DefaultKind::kNumber: return "number";
    case DefaultKind::kBool: return "bool";
    case DefaultKind::kString: return "string";
    case DefaultKind::kBit: return "bit";
    case DefaultKind::kHex: return "hex";
    case DefaultKind::kCurrentTimestamp: return "current_timestamp";
    case DefaultKind::kExpression: return "expression";
  }
  return "none";
}

std::string Column::TypeText() const {
  std::string out(ColumnTypeName(type));
  switch (type) {
    case ColumnType::kDecimal:
      out += "(" + std::to_string(precision.value_or(10)) + "," + std::to_string(scale.value_or(0)) + ")";
      break;
    case ColumnType::kFloat:
    case ColumnType::kDouble:
      if (precision && scale) out += "(" + std::to_string(*precision) + "," + std::to_string(*scale) + ")";
      break;
    case ColumnType::kBit:
    case ColumnType::kChar:
    case ColumnType::kVarChar:
    case ColumnType::kBinary:
    case ColumnType::kVarBinary:
    case ColumnType::kVector:
      if (length) out += "(" + std::to_string(*length) + ")";
      break;
    case ColumnType::kDateTime:
    case ColumnType::kTimestamp:
    case ColumnType::kTime:
      if (fsp && *fsp > 0) out += "(" + std::to_string(*fsp) + ")";
      break;
    case ColumnType::kEnum:
    case ColumnType::kSet: {
      out += "(";
      for (size_t i = 0; i < enum_values.size(); ++i) {
        if (i > 0) out += ",";
        AppendQuoted(out, enum_values[i]);
      }
      out += ")";
      break;
    }
    default: break;
  }
  if (is_unsigned) out += " unsigned";
  if (zerofill) out += " zerofill";
  return out;
}

int TableSchema::FindColumn(std::string_view column) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (EqualsIgnoreCase(columns[i].name, column)) return static_cast<int>(i);
  }
  return -1;
}

const Column* TableSchema::GetColumn(std::string_view column) const {
  int i = FindColumn(column);
  return i < 0 ? nullptr : &columns[static_cast<size_t>(i)];
}

Column* TableSchema::GetColumn(std::string_view column) {
  int i = FindColumn(column);
  return i < 0 ? nullptr : &columns[static_cast<size_t>(i)];
}

void TableSchema::RenumberColumns() {
  for (size_t i = 0; i < columns.size(); ++i) columns[i].ordinal_position = static_cast<uint32_t>(i + 1);
}

std::string TableSchema::QualifiedName() const {
  return database.empty() ? name : database + "." + name;
}

std::string_view ForeignKeyActionName(ForeignKey::Action action) {
  switch (action) {
    case ForeignKey::Action::kRestrict: return "RESTRICT";
    case ForeignKey::Action::kNoAction: return "NO ACTION";
    case ForeignKey::Action::kCascade: return "CASCADE";
    case ForeignKey::Action::kSetNull: return "SET NULL";
    case ForeignKey::Action::kSetDefault: return "SET DEFAULT";
  }
  return "RESTRICT";
}

std::optional<ForeignKey::Action> ForeignKeyActionFromName(std::string_view name) {
  for (ForeignKey::Action a :
       {ForeignKey::Action::kRestrict, ForeignKey::Action::kNoAction, ForeignKey::Action::kCascade,
        ForeignKey::Action::kSetNull, ForeignKey::Action::kSetDefault}) {
    if (ForeignKeyActionName(a) == name) return a;
  }
  return std::nullopt;
}

void SortForeignKeys(std::vector<ForeignKey>& keys) {
  std::stable_sort(keys.begin(), keys.end(),
                   [](const ForeignKey& a, const ForeignKey& b) { return a.name < b.name; });
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

std::string ToLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = Lower(c);
  return out;
}

std::string CanonicalCharset(std::string_view charset) {
  std::string out = ToLower(charset);
  if (out == "utf8") out = "utf8mb3";
  return out;
}

std::string CanonicalCollation(std::string_view collation) {
  std::string out = ToLower(collation);
  if (out.rfind("utf8_", 0) == 0) out = "utf8mb3_" + out.substr(5);
  return out;
}

std::string CharsetOfCollation(std::string_view collation) {
  std::string canonical = CanonicalCollation(collation);
  size_t underscore = canonical.find('_');
  return underscore == std::string::npos ? canonical : canonical.substr(0, underscore);
}

}  // namespace chsync::schema
