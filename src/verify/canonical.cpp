#include "verify/canonical.h"

#include <cstdint>
#include <optional>

#include "clickhouse/merged_type.h"
#include "clickhouse/sql_quoting.h"
#include "clickhouse/type_mapping.h"
#include "mysql/connection.h"

namespace chsync::verify {
namespace {

using clickhouse::Encoding;

/// A text cell with its byte length in front: "3:abc".
std::string SourceText(const std::string& v) {
  return "CONCAT(LENGTH(" + v + "), ':', " + v + ")";
}
std::string DestText(const std::string& v) {
  return "concat(toString(length(" + v + ")), ':', " + v + ")";
}

/// A date or datetime as chsync writes it into a column that holds [lo, hi]: zero dates (and those
/// with a zero month or day) as 1970-01-01, values outside clamped; `format` prints the rest.
std::string SourceClampedDate(const std::string& c, const std::string& lo, const std::string& hi,
                              const std::string& zero, const std::string& format) {
  return "CASE WHEN MONTH(" + c + ") = 0 OR DAYOFMONTH(" + c + ") = 0 THEN '" + zero + "' WHEN " + c +
         " < '" + lo + "' THEN '" + lo + "' WHEN " + c + " > '" + hi + "' THEN '" + hi + "' ELSE " + format +
         " END";
}

/// Decimal text without trailing fraction zeros (and without a '.' left alone). MySQL's TRIM
/// would eat an integer's zeros too: only for a column with a fraction.
std::string SourceTrimmedDecimal(const std::string& text) {
  return "TRIM(TRAILING '.' FROM TRIM(TRAILING '0' FROM " + text + "))";
}
/// The same at ClickHouse: the expression only strips zeros after a '.', for any text.
std::string DestTrimmedDecimal(const std::string& text) {
  return "replaceRegexpOne(replaceRegexpOne(" + text + ", '(\\\\.[0-9]*?)0+$', '\\\\1'), '\\\\.$', '')";
}

}  // namespace

std::string_view ExactnessName(Exactness exactness) {
  switch (exactness) {
    case Exactness::kExact: return "exact";
    case Exactness::kApproximate: return "approximate";
    case Exactness::kLossy: return "lossy";
    case Exactness::kNotCompared: return "not compared";
  }
  return "?";
}

Result<ColumnCanon> CanonicalColumn(const schema::Column& column, std::string_view dest_name,
                                    const clickhouse::Capabilities& caps, const SourceFlavor& flavor,
                                    std::string_view dest_type) {
  CHSYNC_ASSIGN_OR_RETURN(clickhouse::MappedType mapped, clickhouse::MapColumn(column, caps));
  ColumnCanon out;
  out.source_name = column.name;
  out.dest_name = std::string(dest_name);
  const std::string s = mysql::QuoteIdentifier(column.name);
  const std::string d_raw = clickhouse::QuoteIdentifier(dest_name);
  // A shared column may be Nullable for another source's sake: NULL is tested where it can be.
  const clickhouse::StoredTypeParts dest = clickhouse::ParseStoredType(dest_type);
  const bool dest_nullable = mapped.nullable || dest.nullable;
  // The ClickHouse value expression works on the non-Nullable value; NULL is handled below.
  const std::string d = dest_nullable ? "assumeNotNull(" + d_raw + ")" : d_raw;
  // Text in another character set than UTF-8 is converted as the snapshot reads it (UTF-8 and
  // ASCII text already has the bytes chsync wrote; converting it would only cost time).
  const bool binary = !schema::IsCharacterType(column.type) || column.charset == "binary";
  const bool utf8 = column.charset == "utf8mb4" || column.charset == "utf8mb3" || column.charset == "utf8" ||
                    column.charset == "ascii";
  const std::string text = binary || utf8 ? s : "CONVERT(" + s + " USING utf8mb4)";
  std::string sv;  // source value
  std::string dv;  // destination value
  switch (mapped.encoding) {
    case Encoding::kInt8:
    case Encoding::kInt16:
    case Encoding::kInt32:
    case Encoding::kInt64:
    case Encoding::kUInt8:
    case Encoding::kUInt16:
    case Encoding::kUInt32:
    case Encoding::kUInt64:
      // BIT and YEAR print as bits and 4 digits; + 0 gives the number chsync stores.
      sv = column.type == schema::ColumnType::kBit || column.type == schema::ColumnType::kYear
               ? "(" + s + " + 0)"
               : s;
      dv = "toString(" + d + ")";
      break;
    case Encoding::kFloat32:
    case Encoding::kFloat64:
      // Both print a double as its shortest round-trip decimal; they choose exponent notation at
      // different magnitudes (MariaDB from 1e15 and below 1e-4 or so, ClickHouse from 1e21).
      sv = mapped.encoding == Encoding::kFloat32 ? "CAST(" + s + " AS DOUBLE)" : "(" + s + " + 0e0)";
      dv = mapped.encoding == Encoding::kFloat32 ? "toString(toFloat64(" + d + "))" : "toString(" + d + ")";
      out.exactness = Exactness::kApproximate;
      out.note =
          "FLOAT/DOUBLE compared by decimal text; very large or very small magnitudes may print "
          "differently on each side";
      break;
    case Encoding::kDecimal32:
    case Encoding::kDecimal64:
    case Encoding::kDecimal128:
    case Encoding::kDecimal256: {
      // A shared column another source widened holds this column's values at a larger scale.
      uint32_t scale = mapped.scale;
      const bool widened = dest.decimal_scale && *dest.decimal_scale > mapped.scale &&
                           *dest.decimal_precision - *dest.decimal_scale >= mapped.precision - mapped.scale;
      if (widened) scale = *dest.decimal_scale;
      std::string text_of = "toString(" + d + ")";
      if (mapped.encoding == Encoding::kDecimal128 && caps.version.major != 0 &&
          caps.version < clickhouse::ServerVersion{20, 1}) {
        // ClickHouse 18.16's toString of a Decimal128 whose integer part passes about 10^21 puts
        // NUL bytes among the digits (its TSV output is right). Print it in two parts below 10^18
        // each: exact for |value| < 9.2e36.
        const std::string e18 = "toDecimal128(1000000000000000000, 0)";
        const std::string neg = "(" + d + " < toDecimal128(0, 0))";
        const std::string abs = "if(" + neg + ", -" + d + ", " + d + ")";
        const std::string hi = "toInt64(" + abs + " / " + e18 + ")";
        const std::string lo = "(" + abs + " - toDecimal128(" + hi + ", 0) * " + e18 + ")";
        text_of = "concat(if(" + neg + ", '-', ''), if(" + hi + " = 0, toString(" + lo +
                  "), concat(toString(" + hi + "), substring(toString(" + lo + " + " + e18 + "), 2))))";
      }
      // MySQL prints exactly S fraction digits. ClickHouse's toString does too before 21.9, and
      // drops trailing zeros after it; toDecimalString (23.3) prints S digits again. Between
      // (or for an unknown version) both sides drop them; and for a widened column, whose S
      // digits are not the source's, on every version (at the destination's scale: printed at
      // the source's it would hide digits the source cannot have).
      const clickhouse::ServerVersion v = caps.version;
      const bool known = v.major != 0;
      if (scale > 0 && known && v >= clickhouse::ServerVersion{23, 3}) {
        text_of = "toDecimalString(" + d + ", " + std::to_string(scale) + ")";
      }
      if (widened || (scale > 0 && !(known && (v < clickhouse::ServerVersion{21, 9} ||
                                               v >= clickhouse::ServerVersion{23, 3})))) {
        sv = mapped.scale > 0 ? SourceTrimmedDecimal("CAST(" + s + " AS CHAR)") : "CAST(" + s + " AS CHAR)";
        dv = DestTrimmedDecimal(text_of);
      } else {
        sv = "CAST(" + s + " AS CHAR)";
        dv = text_of;
      }
      break;
    }
    case Encoding::kDecimalText:
      sv = "CAST(" + s + " AS CHAR)";
      dv = d;
      break;
    case Encoding::kDate:
      sv = SourceClampedDate(s, "1970-01-01", "2105-12-31", "1970-01-01",
                             "DATE_FORMAT(" + s + ", '%Y-%m-%d')");
      dv = "if(toUInt16(" + d + ") = 0, '1970-01-01', toString(" + d + "))";
      break;
    case Encoding::kDate32:
      sv = SourceClampedDate(s, "1900-01-01", "2299-12-31", "1970-01-01",
                             "DATE_FORMAT(" + s + ", '%Y-%m-%d')");
      dv = "toString(" + d + ")";
      break;
    case Encoding::kDateTime:
      sv = SourceClampedDate(s, "1970-01-01 00:00:00", "2105-12-31 23:59:59", "1970-01-01 00:00:00",
                             "DATE_FORMAT(" + s + ", '%Y-%m-%d %H:%i:%s')");
      dv = "if(toUInt32(" + d + ") = 0, '1970-01-01 00:00:00', toString(" + d + "))";
      if (column.fsp.value_or(0) > 0) {
        out.exactness = Exactness::kLossy;
        out.note =
            "fractions of seconds are dropped on ClickHouse before 20.1 (no DateTime64): compared "
            "to the second";
      }
      break;
    case Encoding::kDateTimeText:  // the text DateTime64 would show, toString of a String is itself
    case Encoding::kDateTime64: {
      // A shared DateTime64 another source widened prints more digits: the source prints its
      // value at that precision too.
      uint32_t scale = mapped.scale;
      if (mapped.encoding == Encoding::kDateTime64 && dest.datetime64_scale &&
          *dest.datetime64_scale > mapped.scale && *dest.datetime64_scale <= 6) {
        scale = *dest.datetime64_scale;
      }
      std::string zero = "1970-01-01 00:00:00";
      if (scale > 0) zero += "." + std::string(scale, '0');
      const std::string text_of =
          scale == mapped.scale ? "CAST(" + s + " AS CHAR)"
                                : "CAST(CAST(" + s + " AS DATETIME(" + std::to_string(scale) + ")) AS CHAR)";
      sv = "CASE WHEN MONTH(" + s + ") = 0 OR DAYOFMONTH(" + s + ") = 0 THEN '" + zero + "' ELSE " + text_of +
           " END";
      dv = "toString(" + d + ")";
      break;
    }
    case Encoding::kTimeText:
      sv = "CAST(" + s + " AS CHAR)";
      dv = d;
      break;
    case Encoding::kString:
      sv = SourceText(text);
      dv = DestText(d);
      out.prefixed = true;
      if (column.type == schema::ColumnType::kJson && !flavor.mariadb) {
        out.exactness = Exactness::kApproximate;
        out.note =
            "MySQL JSON compared by MySQL's text of it, which may space or order keys unlike "
            "chsync's";
      }
      break;
    case Encoding::kSetText:
      sv = SourceText(text);
      dv = DestText(d);
      out.prefixed = true;
      break;
    case Encoding::kEnum8:
    case Encoding::kEnum16:
      sv = "(" + s + " + 0)";
      dv = "toString(toInt16(" + d + "))";
      break;
    case Encoding::kWkt:
      sv = SourceText("ST_AsText(" + s + ")");
      dv = DestText(d);
      out.prefixed = true;
      out.exactness = Exactness::kApproximate;
      out.note = "GEOMETRY compared as WKT text; the server's and chsync's number formatting may differ";
      break;
    case Encoding::kJson:
      sv = "'?'";
      dv = "'?'";
      out.exactness = Exactness::kNotCompared;
      out.note =
          "JSON stored as ClickHouse JSON (json: native) is not compared (only the row's presence): "
          "ClickHouse keeps a document's paths, not its text (keys sorted, nulls and empty objects "
          "dropped, numbers retyped)";
      break;
    case Encoding::kFloat32Array:
      sv = "'?'";
      dv = "'?'";
      out.exactness = Exactness::kNotCompared;
      out.note = "VECTOR values are not compared (only the row's presence)";
      break;
    case Encoding::kUuid:
    case Encoding::kIPv4:
    case Encoding::kIPv6:
      sv = "CAST(" + s + " AS CHAR)";
      dv = "toString(" + d + ")";
      break;
    case Encoding::kIPv4Text:
    case Encoding::kIPv6Text:
      sv = "CAST(" + s + " AS CHAR)";
      dv = d;
      break;
  }
  out.source_sql = mapped.nullable ? "IF(" + s + " IS NULL, 'N', " + sv + ")" : sv;
  out.dest_sql = dest_nullable ? "if(isNull(" + d_raw + "), 'N', " + dv + ")" : dv;
  return out;
}

std::string SourceConcat(const std::vector<std::string>& cells) {
  if (cells.size() == 1) return "CONCAT(" + cells[0] + ")";
  std::string out = "CONCAT(";
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) out += ", ',', ";
    out += cells[i];
  }
  return out + ")";
}

std::string DestConcat(const std::vector<std::string>& cells) {
  if (cells.size() == 1) return "toString(" + cells[0] + ")";
  std::string out = "concat(";
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) out += ", ',', ";
    out += cells[i];
  }
  return out + ")";
}

std::string SourceHash64(std::string_view text_sql) {
  return "CAST(CONV(SUBSTR(SHA1(" + std::string(text_sql) + "), 1, 16), 16, 10) AS UNSIGNED)";
}

std::string DestHash64(std::string_view text_sql) {
  return "reinterpretAsUInt64(reverse(substring(SHA1(" + std::string(text_sql) + "), 1, 8)))";
}

std::string SourceHash32Low(std::string_view text_sql) {
  return "CAST(CONV(SUBSTR(SHA1(" + std::string(text_sql) + "), 17, 8), 16, 10) AS UNSIGNED)";
}

std::string DestHash32Low(std::string_view text_sql) {
  return "reinterpretAsUInt32(reverse(substring(SHA1(" + std::string(text_sql) + "), 9, 4)))";
}

std::string DisplayCell(std::string_view cell, bool prefixed) {
  if (cell == "N") return "NULL";
  if (!prefixed) return std::string(cell);
  size_t colon = cell.find(':');
  if (colon != std::string_view::npos && colon > 0 && cell.find_first_not_of("0123456789") == colon) {
    return std::string(cell.substr(colon + 1));
  }
  return std::string(cell);
}

}  // namespace chsync::verify
