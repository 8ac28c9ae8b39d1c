#include "policy/type_change.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include "clickhouse/type_mapping.h"

namespace chsync::pipe {
namespace {

using schema::Column;
using schema::ColumnType;
using Kind = TypeChangeVerdict::Kind;

/// What the source's ALTER did to the values already in the column.
enum class SourceValues {
  kKept,     ///< every value is what it was (a widening, or a narrowing the strict source checked)
  kChanged,  ///< the source may have rounded, truncated, clamped, padded or re-encoded values
};

/// The base verdict on the source side, with the reason in words.
struct SourceEffect {
  SourceValues values = SourceValues::kChanged;
  std::string reason;
  /// Set when ClickHouse cannot be trusted to convert every old value of the column with MODIFY
  /// COLUMN (it would throw for a value only older versions of a row hold, or convert them to text
  /// differently): the table must be rebuilt even though the source kept the values.
  bool modify_unsafe = false;
};

SourceEffect Kept(std::string reason) {
  return {SourceValues::kKept, std::move(reason), false};
}

SourceEffect Changed(std::string reason) {
  return {SourceValues::kChanged, std::move(reason), false};
}

/// A narrowing: the strict source refused the ALTER if any value did not fit (checked on MariaDB
/// 10.11: "Out of range value", "Data too long", "Data truncated"), so a statement that ran
/// changed no value; a non-strict one clamped or truncated with a warning.
SourceEffect Narrowing(bool strict_mode, std::string_view what) {
  if (strict_mode) {
    return Kept(std::string(what) + " narrows, but the statement ran in strict mode, so every value fitted");
  }
  return Changed(std::string(what) +
                 " narrows outside strict mode: the source clamped or truncated the values "
                 "that did not fit");
}

struct IntRange {
  int64_t min = 0;
  uint64_t max = 0;
};

std::optional<IntRange> IntegerRange(const Column& c) {
  const bool u = c.is_unsigned;
  switch (c.type) {
    case ColumnType::kTinyInt: return u ? IntRange{0, 255} : IntRange{-128, 127};
    case ColumnType::kSmallInt: return u ? IntRange{0, 65535} : IntRange{-32768, 32767};
    case ColumnType::kMediumInt: return u ? IntRange{0, 16777215} : IntRange{-8388608, 8388607};
    case ColumnType::kInt: return u ? IntRange{0, 4294967295ULL} : IntRange{-2147483648LL, 2147483647};
    case ColumnType::kBigInt:
      return u ? IntRange{0, UINT64_MAX} : IntRange{INT64_MIN, static_cast<uint64_t>(INT64_MAX)};
    default: return std::nullopt;
  }
}

bool IsTextType(ColumnType t) {
  switch (t) {
    case ColumnType::kChar:
    case ColumnType::kVarChar:
    case ColumnType::kTinyText:
    case ColumnType::kText:
    case ColumnType::kMediumText:
    case ColumnType::kLongText: return true;
    default: return false;
  }
}

bool IsBinaryType(ColumnType t) {
  switch (t) {
    case ColumnType::kBinary:
    case ColumnType::kVarBinary:
    case ColumnType::kTinyBlob:
    case ColumnType::kBlob:
    case ColumnType::kMediumBlob:
    case ColumnType::kLongBlob: return true;
    default: return false;
  }
}

bool IsSpatialType(ColumnType t) {
  switch (t) {
    case ColumnType::kGeometry:
    case ColumnType::kPoint:
    case ColumnType::kLineString:
    case ColumnType::kPolygon:
    case ColumnType::kMultiPoint:
    case ColumnType::kMultiLineString:
    case ColumnType::kMultiPolygon:
    case ColumnType::kGeometryCollection: return true;
    default: return false;
  }
}

/// Byte capacity of the BLOB/TEXT kinds.
std::optional<uint64_t> LobBytes(ColumnType t) {
  switch (t) {
    case ColumnType::kTinyText:
    case ColumnType::kTinyBlob: return 255;
    case ColumnType::kText:
    case ColumnType::kBlob: return 65535;
    case ColumnType::kMediumText:
    case ColumnType::kMediumBlob: return 16777215;
    case ColumnType::kLongText:
    case ColumnType::kLongBlob: return 4294967295ULL;
    default: return std::nullopt;
  }
}

/// The character set of a column: its charset, else its collation's; "" when neither is known.
std::string EffectiveCharset(const Column& c) {
  if (!c.charset.empty()) return schema::CanonicalCharset(c.charset);
  if (!c.collation.empty()) return schema::CharsetOfCollation(schema::CanonicalCollation(c.collation));
  return "";
}

/// Character sets whose text chsync stores in ClickHouse exactly as the server converts it to
/// UTF-8 (docs/types.md, "Character sets and bytes": compared byte for byte with MariaDB 10.11),
/// with their maximum bytes per character. big5, sjis, ujis, ucs2 and gb18030 have known
/// differences or were not compared, and are left out: a change from them rebuilds.
std::optional<uint32_t> ExactCharsetMaxBytes(std::string_view charset) {
  static constexpr std::string_view kExact[] = {
      "utf8mb4", "utf8mb3", "ascii",  "latin1",   "latin2", "latin5", "latin7",  "cp1250",
      "cp1251",  "cp1256",  "cp1257", "greek",    "hebrew", "koi8r",  "koi8u",   "tis620",
      "cp850",   "cp852",   "cp866",  "macroman", "macce",  "hp8",    "dec8",    "armscii8",
      "gbk",     "gb2312",  "cp932",  "eucjpms",  "euckr",  "utf16",  "utf16le",
  };
  for (std::string_view name : kExact) {
    if (name == charset) return schema::CharsetMaxBytes(charset);
  }
  return std::nullopt;
}

/// Character sets that hold every Unicode character: converting into them never loses a character.
bool IsUnicodeCharset(std::string_view charset) {
  return charset == "utf8mb4" || charset == "utf16" || charset == "utf16le" || charset == "utf32";
}

/// At most this many characters fit in the text column (TEXT kinds: their byte capacity, as a
/// character takes at least one byte).
uint64_t MaxChars(const Column& c) {
  if (auto bytes = LobBytes(c.type)) return *bytes;
  return c.length.value_or(1);
}

/// At most this many bytes fit in the text column, `per_char` bytes per character.
uint64_t MaxBytes(const Column& c, uint32_t per_char) {
  if (auto bytes = LobBytes(c.type)) return *bytes;
  return static_cast<uint64_t>(c.length.value_or(1)) * per_char;
}

SourceEffect ClassifyText(const Column& o, const Column& n, bool strict_mode) {
  if (n.type == ColumnType::kChar && o.type != ColumnType::kChar) {
    // MariaDB strips trailing spaces when it converts into CHAR ('a  ' → 'a'); ClickHouse holds them.
    return Changed("a change into CHAR strips the values' trailing spaces at the source");
  }
  // CHAR → VARCHAR/TEXT: the source converts the value as read (trailing spaces already stripped,
  // as chsync stored it): nothing changes.
  const std::string oc = EffectiveCharset(o);
  const std::string nc = EffectiveCharset(n);
  if (oc.empty() || nc.empty()) return Changed("the character set of the column is not known");
  if (oc == "binary" || nc == "binary") return Changed("a change between text and bytes");
  if (oc == nc) {
    // Same bytes per character on both sides.
    const uint32_t per_char = ExactCharsetMaxBytes(oc).value_or(4);
    if (MaxChars(n) >= MaxChars(o) && MaxBytes(n, per_char) >= MaxBytes(o, per_char)) {
      return Kept("the new type holds every value of the old one, in the same character set");
    }
    return Narrowing(strict_mode, "the length");
  }
  const std::optional<uint32_t> old_exact = ExactCharsetMaxBytes(oc);
  const std::optional<uint32_t> new_exact = ExactCharsetMaxBytes(nc);
  if (!old_exact || !new_exact) {
    return Changed("character set " + oc + " → " + nc +
                   ": chsync's UTF-8 of one of them is not known to equal the server's");
  }
  // The source converts the text into the new character set; ClickHouse holds its UTF-8, which
  // stays the same when every character converts (always into a Unicode set; else the strict
  // source refuses the ALTER: "Incorrect string value"; outside strict mode it writes '?').
  const uint64_t old_chars = MaxChars(o);
  const bool fits = MaxChars(n) >= old_chars && MaxBytes(n, *new_exact) >= old_chars * *new_exact;
  if (IsUnicodeCharset(nc) && fits) {
    return Kept("character set " + oc + " → " + nc +
                ": every character converts, ClickHouse holds the same UTF-8");
  }
  if (strict_mode) {
    return Kept("character set " + oc + " → " + nc +
                ": the statement ran in strict mode, so every character converted and every value fitted");
  }
  return Changed("character set " + oc + " → " + nc +
                 " outside strict mode: characters the new set lacks became '?', or values were truncated");
}

SourceEffect ClassifyBinary(const Column& o, const Column& n, bool strict_mode) {
  if (n.type == ColumnType::kBinary) {
    if (o.type == ColumnType::kBinary && o.length == n.length) return Kept("same BINARY length");
    // The source pads to the new length with 0x00 (checked: BINARY(4) 'ab\0\0' → BINARY(6) 'ab\0\0\0\0').
    return Changed("a change into BINARY(n) pads or cuts the values' 0x00 padding at the source");
  }
  const uint64_t new_bytes = MaxChars(n);
  if (o.type == ColumnType::kBinary) {
    // The padded bytes are kept as they are (checked: BINARY(4) → VARBINARY(6) keeps 'ab\0\0').
    if (new_bytes >= o.length.value_or(1)) return Kept("BINARY → a longer byte type keeps the padded bytes");
    return Changed("BINARY → a shorter byte type cuts the padded values");
  }
  if (new_bytes >= MaxChars(o)) return Kept("the new type holds every value of the old one");
  return Narrowing(strict_mode, "the length");
}

SourceEffect ClassifyInteger(const Column& o, const Column& n, bool strict_mode) {
  const IntRange a = *IntegerRange(o);
  const IntRange b = *IntegerRange(n);
  if (b.min <= a.min && b.max >= a.max)
    return Kept("every value of the old integer type fits in the new one");
  // ClickHouse converts integers by wrapping (no error): values that only old row versions hold
  // cannot make MODIFY fail. Checked on 18.16 (Int64 3000000000 → Int32 -1294967296).
  return Narrowing(strict_mode, "the integer range");
}

SourceEffect ClassifyDecimal(const Column& o, const Column& n, bool strict_mode) {
  const uint32_t p = o.precision.value_or(10);
  const uint32_t s = o.scale.value_or(0);
  const uint32_t p2 = n.precision.value_or(10);
  const uint32_t s2 = n.scale.value_or(0);
  if (s2 < s) {
    // Rounded even in strict mode (a note, not an error): 1.25 → 1.3.
    return Changed("the scale shrinks: the source rounded the values");
  }
  const bool to_unsigned = n.is_unsigned && !o.is_unsigned;
  const bool integer_digits_kept = p2 - s2 >= p - s;
  if (integer_digits_kept && !to_unsigned) return Kept("every value of the old DECIMAL fits in the new one");
  SourceEffect e = Narrowing(strict_mode, "the DECIMAL range");
  // ClickHouse throws "Decimal convert overflow" when MODIFY meets a value that does not fit, and
  // older row versions may hold one: never MODIFY into fewer integer digits.
  if (!integer_digits_kept) e.modify_unsafe = true;
  return e;
}

SourceEffect ClassifyFloat(const Column& o, const Column& n, bool strict_mode) {
  if (n.scale.has_value() && (o.type != n.type || n.scale != o.scale || n.precision != o.precision)) {
    return Changed("FLOAT/DOUBLE(M,D) rounds the values to the new digits");
  }
  if (o.type == ColumnType::kDouble && n.type == ColumnType::kFloat) {
    return Changed("DOUBLE → FLOAT rounds the values");
  }
  if (n.is_unsigned && !o.is_unsigned) return Narrowing(strict_mode, "the sign");
  if (o.type == ColumnType::kFloat && n.type == ColumnType::kDouble) {
    // Checked: MariaDB converts FLOAT 0.1 to DOUBLE 0.10000000149011612, as toFloat64 does.
    return Kept("FLOAT → DOUBLE keeps each value exactly");
  }
  return Kept("same floating-point type");
}

SourceEffect ClassifyTemporal(const Column& o, const Column& n) {
  if (o.type != n.type) return Changed("the date/time type changes");
  const uint32_t f = o.fsp.value_or(0);
  const uint32_t f2 = n.fsp.value_or(0);
  if (o.type == ColumnType::kTime && f != f2) {
    return Changed("TIME is stored as text with its fractional digits, which change");
  }
  if (f2 < f) return Changed("fewer fractional-second digits: the source truncated or rounded the values");
  return Kept(f2 > f ? "more fractional-second digits keep every value" : "same date/time type");
}

bool DeclaresEmpty(const std::vector<std::string>& labels) {
  return std::any_of(labels.begin(), labels.end(), [](const std::string& l) { return l.empty(); });
}

bool IsPrefix(const std::vector<std::string>& prefix, const std::vector<std::string>& of) {
  return prefix.size() <= of.size() && std::equal(prefix.begin(), prefix.end(), of.begin());
}

SourceEffect ClassifyEnumOrSet(const Column& o, const Column& n) {
  const bool is_enum = o.type == ColumnType::kEnum;
  if (!IsPrefix(o.enum_values, n.enum_values)) {
    // ENUM: the source converts by label, so indexes move; SET: members are printed in the new
    // declaration order ('a,b' → 'b,a'); removed labels become ''.
    return Changed(is_enum ? "ENUM labels removed, changed or reordered: the indexes of values change"
                           : "SET members removed, changed or reordered: the values' text changes");
  }
  if (is_enum && DeclaresEmpty(o.enum_values) != DeclaresEmpty(n.enum_values)) {
    return Changed("an appended '' label changes what ENUM index 0 means");
  }
  return Kept(o.enum_values.size() == n.enum_values.size() ? "same labels" : "labels appended at the end");
}

SourceEffect ClassifySource(const Column& o, const Column& n, bool strict_mode) {
  if (o.generated != n.generated || o.generation_expression != n.generation_expression) {
    return Changed("the generation expression changes");
  }
  const ColumnType a = o.type;
  const ColumnType b = n.type;
  if (IntegerRange(o) && IntegerRange(n)) return ClassifyInteger(o, n, strict_mode);
  if (IsTextType(a) && IsTextType(b)) return ClassifyText(o, n, strict_mode);
  if (IsBinaryType(a) && IsBinaryType(b)) return ClassifyBinary(o, n, strict_mode);
  if (a == ColumnType::kDecimal && b == ColumnType::kDecimal) return ClassifyDecimal(o, n, strict_mode);
  if ((a == ColumnType::kFloat || a == ColumnType::kDouble) &&
      (b == ColumnType::kFloat || b == ColumnType::kDouble)) {
    return ClassifyFloat(o, n, strict_mode);
  }
  if (schema::HasFsp(a) || schema::HasFsp(b)) return ClassifyTemporal(o, n);
  if (a == ColumnType::kBit && b == ColumnType::kBit) {
    if (n.length.value_or(1) >= o.length.value_or(1)) return Kept("every BIT value fits in the wider BIT");
    return Narrowing(strict_mode, "the BIT width");
  }
  if ((a == ColumnType::kEnum && b == ColumnType::kEnum) ||
      (a == ColumnType::kSet && b == ColumnType::kSet)) {
    return ClassifyEnumOrSet(o, n);
  }
  if (IsSpatialType(a) && IsSpatialType(b)) {
    if (a == b || b == ColumnType::kGeometry) return Kept("every geometry keeps its WKT");
    return Changed("a change into a narrower geometry type");
  }
  if (a == ColumnType::kVector && b == ColumnType::kVector) {
    if (o.length == n.length) return Kept("same VECTOR dimensions");
    return Changed("the VECTOR dimensions change");
  }
  if (a == b) {
    switch (a) {
      case ColumnType::kDate:
      case ColumnType::kYear:
      case ColumnType::kJson:
      case ColumnType::kUuid:
      case ColumnType::kInet4:
      case ColumnType::kInet6: return Kept("same type");
      default: break;
    }
  }
  return Changed("the type changes from " + std::string(schema::ColumnTypeName(a)) + " to " +
                 std::string(schema::ColumnTypeName(b)));
}

TypeChangeVerdict Verdict(Kind kind, const Column& o, const Column& n, const std::string& why) {
  return {kind, o.TypeText() + (o.nullable ? "" : " NOT NULL") + " → " + n.TypeText() +
                    (n.nullable ? "" : " NOT NULL") + ": " + why};
}

}  // namespace

TypeChangeVerdict ClassifyTypeChange(const schema::Column& old_column, const schema::Column& new_column,
                                     bool strict_mode, const clickhouse::Capabilities& caps) {
  const Column& o = old_column;
  const Column& n = new_column;
  Result<clickhouse::MappedType> old_mapped = clickhouse::MapColumn(o, caps);
  Result<clickhouse::MappedType> new_mapped = clickhouse::MapColumn(n, caps);
  if (!old_mapped.ok() || !new_mapped.ok()) {
    return Verdict(Kind::kRebuild, o, n,
                   "no ClickHouse type: " + (old_mapped.ok() ? new_mapped : old_mapped).error().message());
  }
  const clickhouse::MappedType& om = *old_mapped;
  const clickhouse::MappedType& nm = *new_mapped;

  if (o.nullable && !n.nullable) {
    // Outside strict mode the source turned NULLs into zero values. In strict mode it refused the
    // ALTER while a NULL existed, but ClickHouse's MODIFY to a non-Nullable type throws "Cannot
    // convert NULL value to non-Nullable type" for NULLs that older row versions still hold.
    if (!strict_mode) {
      return Verdict(Kind::kRebuild, o, n,
                     "NOT NULL outside strict mode: the source turned NULLs into zero values");
    }
    if (om.type != nm.type) {
      return Verdict(
          Kind::kRebuild, o, n,
          "NOT NULL: ClickHouse cannot MODIFY Nullable to non-Nullable while any row version holds NULL");
    }
  }

  if ((om.encoding == clickhouse::Encoding::kJson) != (nm.encoding == clickhouse::Encoding::kJson)) {
    // ClickHouse's MODIFY between JSON and String writes its own text of a document (keys sorted,
    // nulls dropped), and fails on text that is not a JSON object, leaving the table unreadable.
    return Verdict(Kind::kRebuild, o, n,
                   "a change to or from ClickHouse JSON (json: native): MODIFY would not write what "
                   "chsync writes");
  }
  SourceEffect effect = ClassifySource(o, n, strict_mode);
  if (effect.values == SourceValues::kChanged) return Verdict(Kind::kRebuild, o, n, effect.reason);
  if (om.type == nm.type) {
    if (om.encoding != nm.encoding || om.scale != nm.scale) {
      // Same ClickHouse type, different text form (TIME digits, decimal text scale).
      return Verdict(Kind::kRebuild, o, n, "the values' stored text changes");
    }
    return Verdict(Kind::kUnchanged, o, n, effect.reason);
  }
  if (effect.modify_unsafe) {
    return Verdict(Kind::kRebuild, o, n, effect.reason + "; ClickHouse cannot convert every old row version");
  }
  if (om.encoding == clickhouse::Encoding::kDecimalText ||
      nm.encoding == clickhouse::Encoding::kDecimalText) {
    return Verdict(Kind::kRebuild, o, n,
                   effect.reason +
                       "; DECIMAL kept as text on this ClickHouse: MODIFY would not write the digits "
                       "chsync writes");
  }
  if ((om.encoding == clickhouse::Encoding::kDateTimeText ||
       nm.encoding == clickhouse::Encoding::kDateTimeText) &&
      (om.encoding != nm.encoding || om.scale != nm.scale)) {
    return Verdict(Kind::kRebuild, o, n,
                   effect.reason +
                       "; DATETIME kept as text on this ClickHouse (datetime_fallback: string): MODIFY "
                       "would not write the text chsync writes");
  }
  if (nm.nullable && !om.nullable && !caps.modify_to_nullable) {
    return Verdict(Kind::kRebuild, o, n,
                   effect.reason + "; this ClickHouse cannot MODIFY a column to Nullable");
  }
  return Verdict(Kind::kModify, o, n, effect.reason + "; MODIFY COLUMN " + om.type + " → " + nm.type);
}

std::string_view TypeChangeKindName(TypeChangeVerdict::Kind kind) {
  switch (kind) {
    case TypeChangeVerdict::Kind::kUnchanged: return "kUnchanged";
    case TypeChangeVerdict::Kind::kModify: return "kModify";
    case TypeChangeVerdict::Kind::kRebuild: return "kRebuild";
  }
  return "?";
}

}  // namespace chsync::pipe
