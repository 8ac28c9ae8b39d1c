#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace chsync::schema {

/// A MySQL/MariaDB column type, after resolving synonyms (INT1 → kTinyInt, BOOL → kTinyInt with
/// length 1, SERIAL → unsigned kBigInt, NATIONAL CHAR → kChar, LONG VARCHAR → kMediumText,
/// DOUBLE PRECISION/REAL → kDouble, NUMERIC/DEC/FIXED → kDecimal, …). The spelling the source used
/// stays in Column::type_spelling.
enum class ColumnType {
  kUnknown,
  kTinyInt,
  kSmallInt,
  kMediumInt,
  kInt,
  kBigInt,
  kDecimal,
  kFloat,
  kDouble,
  kBit,
  kDate,
  kDateTime,
  kTimestamp,
  kTime,
  kYear,
  kChar,
  kVarChar,
  kBinary,
  kVarBinary,
  kTinyBlob,
  kBlob,
  kMediumBlob,
  kLongBlob,
  kTinyText,
  kText,
  kMediumText,
  kLongText,
  kEnum,
  kSet,
  kJson,
  kGeometry,
  kPoint,
  kLineString,
  kPolygon,
  kMultiPoint,
  kMultiLineString,
  kMultiPolygon,
  kGeometryCollection,
  kVector,  ///< MySQL 9: VECTOR(n), n = length (dimensions)
  kUuid,    ///< MariaDB ≥ 10.7
  kInet4,   ///< MariaDB ≥ 10.10
  kInet6,   ///< MariaDB ≥ 10.5
};

/// Canonical lower-case MySQL name of `type` ("tinyint", "varchar", "geometrycollection", …).
std::string_view ColumnTypeName(ColumnType type);
/// Inverse of ColumnTypeName (case-insensitive, canonical names only, no synonyms); kUnknown if none.
ColumnType ColumnTypeFromName(std::string_view name);

/// True for kTinyInt … kBigInt.
bool IsIntegerType(ColumnType type);
/// True for CHAR/VARCHAR/TEXT kinds/ENUM/SET: types that carry a character set.
bool IsCharacterType(ColumnType type);
/// True for kDateTime, kTimestamp, kTime (types with fractional seconds).
bool HasFsp(ColumnType type);

/// What a DEFAULT clause said, as parsed (not translated; see default_translation.h).
enum class DefaultKind {
  kNone,    ///< no DEFAULT clause (and no implicit one recorded)
  kNull,    ///< DEFAULT NULL
  kNumber,  ///< integer, decimal or float literal; text as written with its sign ("-5", "+7", "1e5", "1.50")
  kBool,    ///< TRUE/FALSE; text "TRUE" or "FALSE"
  kString,  ///< string literal; text is the decoded value (escapes resolved, adjacent parts joined)
  kBit,     ///< b'0101' / 0b0101; text the binary digits
  kHex,     ///< X'41' / 0x41; text the hex digits (upper-case)
  kCurrentTimestamp,  ///< CURRENT_TIMESTAMP[(n)], NOW([n]), LOCALTIME…; text canonical "CURRENT_TIMESTAMP" or
                      ///< "CURRENT_TIMESTAMP(6)"
  kExpression,  ///< DEFAULT (expr) or another function call; text is the expression's source text
};

std::string_view DefaultKindName(DefaultKind kind);

/// A column's default as parsed.
struct DefaultValue {
  DefaultKind kind = DefaultKind::kNone;
  /// See DefaultKind for what the text holds per kind; empty for kNone/kNull.
  std::string text;
  /// Charset introducer of a string literal (`_utf8mb4'x'` → "utf8mb4"), or empty.
  std::string introducer;

  bool operator==(const DefaultValue&) const = default;
};

enum class GeneratedKind { kNone, kVirtual, kStored };

/// One column. Numeric attributes hold the effective value MySQL stores (DECIMAL → 10,0; CHAR → 1;
/// BIT → 1; DATETIME → fsp 0), so a parsed column compares equal to one loaded from
/// information_schema; integer display widths are informational only (MySQL ≥ 8.0.19 drops them).
struct Column {
  std::string name;
  /// The type keyword(s) as the source spelled them, e.g. "INT1", "DOUBLE PRECISION", "int".
  std::string type_spelling;
  /// Character set and collation of character columns; empty when not stated (the tracker fills
  /// the charset from the table's default).
  std::string charset;
  std::string collation;
  DefaultValue default_value;
  /// ENUM/SET values in declaration order, decoded.
  std::vector<std::string> enum_values;
  /// Source text of the generation expression when generated != kNone.
  std::string generation_expression;
  std::string comment;

  /// CHAR/VARCHAR/BINARY/VARBINARY length in characters/bytes, BIT width, VECTOR dimensions,
  /// integer display width (if given), YEAR width (if given).
  std::optional<uint32_t> length;
  /// DECIMAL/FLOAT/DOUBLE precision (M of (M,D)), when known.
  std::optional<uint32_t> precision;
  /// DECIMAL/FLOAT/DOUBLE scale (D of (M,D)), when known.
  std::optional<uint32_t> scale;
  /// Fractional seconds precision of TIME/DATETIME/TIMESTAMP (0–6); nullopt for other types.
  std::optional<uint32_t> fsp;

  ColumnType type = ColumnType::kUnknown;
  GeneratedKind generated = GeneratedKind::kNone;
  /// 1-based position in the table.
  uint32_t ordinal_position = 0;

  bool is_unsigned = false;
  bool zerofill = false;
  bool nullable = true;
  /// ON UPDATE CURRENT_TIMESTAMP[(n)].
  bool on_update_current_timestamp = false;
  bool auto_increment = false;
  bool invisible = false;
  /// MariaDB's JSON: a LONGTEXT declared JSON (which MariaDB stores as LONGTEXT with a
  /// CHECK (json_valid(col))) or given that column CHECK; the server keeps only the CHECK, so this
  /// is how chsync still knows the column holds JSON documents (mapped as MySQL's JSON is).
  bool json_valid_check = false;

  /// A JSON column: MySQL's JSON type or MariaDB's (json_valid_check).
  bool IsJson() const { return type == ColumnType::kJson || json_valid_check; }

  /// Type as MySQL's COLUMN_TYPE shows it, e.g. "decimal(10,2) unsigned", "varchar(255)",
  /// "enum('a','b')", "datetime(6)"; integer display widths omitted.
  std::string TypeText() const;

  bool operator==(const Column&) const = default;
};

/// A named index over columns in key order.
struct Key {
  std::string name;
  std::vector<std::string> columns;

  bool operator==(const Key&) const = default;
};

/// A FOREIGN KEY of a table (the child): its `columns` reference `parent_columns` of the parent table,
/// in the same order. The actions are what InnoDB does to the child's rows when the parent's row is
/// deleted or its referenced columns change; the binlog carries no rows for them.
struct ForeignKey {
  enum class Action { kRestrict, kNoAction, kCascade, kSetNull, kSetDefault };
  /// The constraint's name (CONSTRAINT symbol, or the name the server generated).
  std::string name;
  std::vector<std::string> columns;
  std::string parent_database;
  std::string parent_table;
  std::vector<std::string> parent_columns;
  Action on_delete = Action::kRestrict;
  Action on_update = Action::kRestrict;

  bool operator==(const ForeignKey&) const = default;
};

/// "CASCADE", "SET NULL", "RESTRICT", "NO ACTION", "SET DEFAULT".
std::string_view ForeignKeyActionName(ForeignKey::Action action);
/// Inverse of ForeignKeyActionName (exact, as information_schema's UPDATE_RULE/DELETE_RULE spell it).
std::optional<ForeignKey::Action> ForeignKeyActionFromName(std::string_view name);
/// Orders `keys` by name (byte order; names are unique per table), the order TableSchema keeps.
void SortForeignKeys(std::vector<ForeignKey>& keys);

/// One table's schema.
struct TableSchema {
  std::string database;
  std::string name;
  /// In table order; columns[i].ordinal_position == i + 1.
  std::vector<Column> columns;
  /// Primary key columns in key order; empty when the table has no primary key.
  std::vector<std::string> primary_key;
  /// UNIQUE keys (not the primary key), in declaration order.
  std::vector<Key> unique_keys;
  /// FOREIGN KEYs of this table (as the child), ordered by name (SortForeignKeys): information_schema
  /// keeps no declaration order (MySQL 8's SHOW CREATE TABLE lists them by name too), and a table
  /// loaded from it must compare equal to the same table built from DDL.
  std::vector<ForeignKey> foreign_keys;
  std::string engine;
  /// Default character set and collation of the table; may be empty when unknown.
  std::string charset;
  std::string collation;

  /// Index of the column named `column` (case-insensitive, as MySQL compares column names), or -1.
  int FindColumn(std::string_view column) const;
  const Column* GetColumn(std::string_view column) const;
  Column* GetColumn(std::string_view column);

  /// Sets ordinal_position of every column from its index.
  void RenumberColumns();

  /// "db.name" (no quoting), for messages.
  std::string QualifiedName() const;

  bool operator==(const TableSchema&) const = default;
};

/// Case-insensitive ASCII equality, as MySQL compares column and index names.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

/// ASCII lower-case copy.
std::string ToLower(std::string_view text);

/// A character set name as servers report it: lower case, "utf8" → "utf8mb3".
std::string CanonicalCharset(std::string_view charset);
/// A collation name as servers report it: lower case, "utf8_…" → "utf8mb3_…".
std::string CanonicalCollation(std::string_view collation);
/// The character set of a collation ("utf8mb4_general_ci" → "utf8mb4", "binary" → "binary").
std::string CharsetOfCollation(std::string_view collation);
/// Maximum bytes per character of a character set (MAXLEN in information_schema.CHARACTER_SETS,
/// MySQL 5.7–9.x and MariaDB; canonical name), or nullopt for one chsync does not know.
std::optional<uint32_t> CharsetMaxBytes(std::string_view charset);

}  // namespace chsync::schema
