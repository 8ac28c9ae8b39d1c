#include "clickhouse/type_mapping.h"

#include <algorithm>

#include "clickhouse/sql_quoting.h"

namespace chsync::clickhouse {
namespace {

using schema::ColumnType;

MappedType Plain(std::string type, Encoding encoding) {
  MappedType m;
  m.type = std::move(type);
  m.encoding = encoding;
  return m;
}

MappedType Integer(bool is_unsigned, int bits) {
  switch (bits) {
    case 8: return is_unsigned ? Plain("UInt8", Encoding::kUInt8) : Plain("Int8", Encoding::kInt8);
    case 16: return is_unsigned ? Plain("UInt16", Encoding::kUInt16) : Plain("Int16", Encoding::kInt16);
    case 32: return is_unsigned ? Plain("UInt32", Encoding::kUInt32) : Plain("Int32", Encoding::kInt32);
    default: return is_unsigned ? Plain("UInt64", Encoding::kUInt64) : Plain("Int64", Encoding::kInt64);
  }
}

std::string TypeForMessage(const schema::Column& column) {
  return "column " + column.name + " " + column.TypeText();
}

Result<MappedType> MapDecimal(const schema::Column& column, const Capabilities& caps) {
  uint32_t precision = column.precision.value_or(10);
  uint32_t scale = column.scale.value_or(0);
  if (precision == 0 || precision > 76 || scale > precision) {
    return Error(ErrorKind::kUnsupported, TypeForMessage(column) + ": DECIMAL(" + std::to_string(precision) +
                                              "," + std::to_string(scale) + ") has no ClickHouse Decimal");
  }
  MappedType m;
  m.precision = precision;
  m.scale = scale;
  if (precision > 38 && !caps.decimal256) {
    m.type = "String";
    m.encoding = Encoding::kDecimalText;
    m.fallback_note = "DECIMAL(" + std::to_string(precision) + "," + std::to_string(scale) +
                      ") kept as exact text in a String: Decimal with more than 38 digits needs ClickHouse " +
                      FirstVersionWith("decimal256").ToString() + " or later";
    return m;
  }
  m.type = "Decimal(" + std::to_string(precision) + ", " + std::to_string(scale) + ")";
  m.encoding = precision <= 9    ? Encoding::kDecimal32
               : precision <= 18 ? Encoding::kDecimal64
               : precision <= 38 ? Encoding::kDecimal128
                                 : Encoding::kDecimal256;
  return m;
}

Result<MappedType> MapEnum(const schema::Column& column) {
  MappedType m;
  m.labels = column.enum_values;
  size_t count = m.labels.size();
  if (count == 0) {
    return Error(ErrorKind::kUnsupported, TypeForMessage(column) + ": ENUM without labels");
  }
  if (count > 32767) {
    return Error(ErrorKind::kUnsupported, TypeForMessage(column) + ": ENUM with " + std::to_string(count) +
                                              " labels does not fit ClickHouse Enum16 (at most 32767)");
  }
  m.encoding = count <= 127 ? Encoding::kEnum8 : Encoding::kEnum16;
  std::string body;
  // MySQL stores an invalid value as index 0 with the empty label; keep it representable unless
  // the column declares '' itself (then index 0 cannot be told apart and maps to that label). A
  // NULL stores 0 too, which toString() (and so a Distributed table's sharding key) must print.
  if (std::optional<std::string> zero = EnumZeroLabel(m.labels, column.nullable)) {
    body += QuoteString(*zero) + " = 0";
  }
  for (size_t i = 0; i < count; ++i) {
    if (!body.empty()) body += ", ";
    body += QuoteString(m.labels[i]) + " = " + std::to_string(i + 1);
  }
  m.type = std::string(m.encoding == Encoding::kEnum8 ? "Enum8(" : "Enum16(") + body + ")";
  return m;
}

Result<MappedType> MapJson(const schema::Column& column, const Capabilities& caps) {
  if (caps.json_type_ready) return Plain("JSON", Encoding::kJson);
  return Error(ErrorKind::kUnsupported,
               TypeForMessage(column) +
                   ": json: native needs the ClickHouse JSON type, production-ready from ClickHouse " +
                   FirstVersionWith("json_type_ready").ToString() + ", and this server is " +
                   (caps.version.major == 0 ? std::string("older") : caps.version.ToString()) +
                   ": set json: string (the document's text in a String), for the pipe or this table in "
                   "table_options, or upgrade ClickHouse");
}

Result<MappedType> MapBase(const schema::Column& column, const Capabilities& caps) {
  const bool u = column.is_unsigned;
  if (caps.json_native && column.IsJson()) return MapJson(column, caps);
  switch (column.type) {
    case ColumnType::kTinyInt: return Integer(u, 8);
    case ColumnType::kSmallInt: return Integer(u, 16);
    case ColumnType::kMediumInt:
    case ColumnType::kInt: return Integer(u, 32);
    case ColumnType::kBigInt: return Integer(u, 64);
    case ColumnType::kFloat: return Plain("Float32", Encoding::kFloat32);
    case ColumnType::kDouble: return Plain("Float64", Encoding::kFloat64);
    case ColumnType::kDecimal: return MapDecimal(column, caps);
    case ColumnType::kBit: return Plain("UInt64", Encoding::kUInt64);
    case ColumnType::kYear: return Plain("UInt16", Encoding::kUInt16);
    case ColumnType::kDate:
      if (caps.date32) return Plain("Date32", Encoding::kDate32);
      {
        MappedType m = Plain("Date", Encoding::kDate);
        m.fallback_note =
            "DATE as Date (1970-01-01..2105-12-31, earlier and later dates clamped): Date32 needs "
            "ClickHouse " +
            FirstVersionWith("date32").ToString() + " or later";
        return m;
      }
    case ColumnType::kDateTime:
    case ColumnType::kTimestamp: {
      uint32_t fsp = column.fsp.value_or(0);
      if (caps.datetime64) {
        MappedType m = Plain("DateTime64(" + std::to_string(fsp) + ", 'UTC')", Encoding::kDateTime64);
        m.scale = fsp;
        return m;
      }
      if (fsp > 0 && caps.datetime_fallback_text) {
        MappedType m = Plain("String", Encoding::kDateTimeText);
        m.scale = fsp;
        m.fallback_note = column.TypeText() + " kept as exact text 'YYYY-MM-DD HH:MM:SS." +
                          std::string(fsp, 'f') +
                          "' in a String (datetime_fallback: string): DateTime64 needs ClickHouse " +
                          FirstVersionWith("datetime64").ToString() + " or later";
        return m;
      }
      MappedType m = Plain("DateTime('UTC')", Encoding::kDateTime);
      m.fallback_note =
          "DATETIME/TIMESTAMP as DateTime (whole seconds, 1970..2105, clamped): DateTime64 needs "
          "ClickHouse " +
          FirstVersionWith("datetime64").ToString() + " or later";
      return m;
    }
    case ColumnType::kTime: {
      MappedType m = Plain("String", Encoding::kTimeText);
      m.scale = column.fsp.value_or(0);
      return m;
    }
    case ColumnType::kChar:
    case ColumnType::kVarChar:
    case ColumnType::kBinary:
    case ColumnType::kVarBinary:
    case ColumnType::kTinyBlob:
    case ColumnType::kBlob:
    case ColumnType::kMediumBlob:
    case ColumnType::kLongBlob:
    case ColumnType::kTinyText:
    case ColumnType::kText:
    case ColumnType::kMediumText:
    case ColumnType::kLongText:
    case ColumnType::kJson: return Plain("String", Encoding::kString);
    case ColumnType::kEnum: return MapEnum(column);
    case ColumnType::kSet: {
      MappedType m = Plain("String", Encoding::kSetText);
      m.labels = column.enum_values;
      return m;
    }
    case ColumnType::kGeometry:
    case ColumnType::kPoint:
    case ColumnType::kLineString:
    case ColumnType::kPolygon:
    case ColumnType::kMultiPoint:
    case ColumnType::kMultiLineString:
    case ColumnType::kMultiPolygon:
    case ColumnType::kGeometryCollection: return Plain("String", Encoding::kWkt);
    case ColumnType::kVector: return Plain("Array(Float32)", Encoding::kFloat32Array);
    case ColumnType::kUuid: return Plain("UUID", Encoding::kUuid);
    case ColumnType::kInet4:
      if (caps.ip_types) return Plain("IPv4", Encoding::kIPv4);
      return Plain("String", Encoding::kIPv4Text);
    case ColumnType::kInet6:
      if (caps.ip_types) return Plain("IPv6", Encoding::kIPv6);
      return Plain("String", Encoding::kIPv6Text);
    case ColumnType::kUnknown: break;
  }
  return Error(ErrorKind::kUnsupported,
               TypeForMessage(column) + ": no ClickHouse type for '" + column.type_spelling + "'");
}

}  // namespace

Result<MappedType> MapColumn(const schema::Column& column, const Capabilities& caps) {
  CHSYNC_ASSIGN_OR_RETURN(MappedType m, MapBase(column, caps));
  // ClickHouse cannot wrap Array in Nullable: a NULL VECTOR becomes the empty array.
  if (column.nullable && m.encoding != Encoding::kFloat32Array) {
    m.nullable = true;
    m.type = "Nullable(" + m.type + ")";
  }
  return m;
}

std::optional<std::string> EnumZeroLabel(const std::vector<std::string>& labels, bool nullable) {
  if (std::find(labels.begin(), labels.end(), "") == labels.end()) return "";
  if (!nullable) return std::nullopt;
  // MySQL strips trailing spaces from ENUM members, so " " is never one.
  std::string spaces = " ";
  while (std::find(labels.begin(), labels.end(), spaces) != labels.end()) spaces += ' ';
  return spaces;
}

MappedType VersionColumnType() {
  return Plain("UInt64", Encoding::kUInt64);
}

MappedType IsDeletedColumnType() {
  return Plain("UInt8", Encoding::kUInt8);
}

}  // namespace chsync::clickhouse
