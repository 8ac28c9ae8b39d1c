#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schema/tracker.h"

namespace chsync::schema {
namespace {

/// Binlog type codes (MYSQL_TYPE_* in the server's field_types.h).
enum WireType : uint8_t {
  kDecimalOld = 0,
  kTiny = 1,
  kShort = 2,
  kLong = 3,
  kFloat = 4,
  kDouble = 5,
  kNull = 6,
  kTimestamp = 7,
  kLongLong = 8,
  kInt24 = 9,
  kDate = 10,
  kTime = 11,
  kDateTime = 12,
  kYear = 13,
  kNewDate = 14,
  kVarchar = 15,
  kBit = 16,
  kTimestamp2 = 17,
  kDateTime2 = 18,
  kTime2 = 19,
  kVector = 242,
  kJson = 245,
  kNewDecimal = 246,
  kEnum = 247,
  kSet = 248,
  kTinyBlob = 249,
  kMediumBlob = 250,
  kLongBlob = 251,
  kBlob = 252,
  kVarString = 253,
  kString = 254,
  kGeometry = 255,
};

/// The wire types a column of `type` may appear as in a TABLE_MAP (ENUM/SET travel as STRING
/// with the real type in the metadata; all BLOB/TEXT kinds as BLOB; MariaDB JSON as BLOB).
std::vector<uint8_t> AcceptedWireTypes(ColumnType type) {
  switch (type) {
    case ColumnType::kTinyInt: return {kTiny};
    case ColumnType::kSmallInt: return {kShort};
    case ColumnType::kMediumInt: return {kInt24};
    case ColumnType::kInt: return {kLong};
    case ColumnType::kBigInt: return {kLongLong};
    case ColumnType::kDecimal: return {kNewDecimal, kDecimalOld};
    case ColumnType::kFloat: return {kFloat};
    case ColumnType::kDouble: return {kDouble};
    case ColumnType::kBit: return {kBit};
    case ColumnType::kDate: return {kDate, kNewDate};
    case ColumnType::kDateTime: return {kDateTime, kDateTime2};
    case ColumnType::kTimestamp: return {kTimestamp, kTimestamp2};
    case ColumnType::kTime: return {kTime, kTime2};
    case ColumnType::kYear: return {kYear};
    case ColumnType::kChar:
    case ColumnType::kBinary:
    case ColumnType::kUuid:
    case ColumnType::kInet4:
    case ColumnType::kInet6: return {kString, kVarString};
    case ColumnType::kVarChar:
    case ColumnType::kVarBinary: return {kVarchar, kVarString};
    case ColumnType::kTinyBlob:
    case ColumnType::kBlob:
    case ColumnType::kMediumBlob:
    case ColumnType::kLongBlob:
    case ColumnType::kTinyText:
    case ColumnType::kText:
    case ColumnType::kMediumText:
    case ColumnType::kLongText: return {kBlob, kTinyBlob, kMediumBlob, kLongBlob};
    case ColumnType::kEnum: return {kString, kEnum};
    case ColumnType::kSet: return {kString, kSet};
    case ColumnType::kJson: return {kJson, kBlob};
    case ColumnType::kGeometry:
    case ColumnType::kPoint:
    case ColumnType::kLineString:
    case ColumnType::kPolygon:
    case ColumnType::kMultiPoint:
    case ColumnType::kMultiLineString:
    case ColumnType::kMultiPolygon:
    case ColumnType::kGeometryCollection: return {kGeometry};
    case ColumnType::kVector: return {kVector, kVarchar};
    case ColumnType::kUnknown: return {};
  }
  return {};
}

/// Maximum bytes per character of a character column: its charset, else its collation's.
std::optional<uint32_t> ColumnMaxBytesPerChar(const Column& c) {
  if (auto n = CharsetMaxBytes(CanonicalCharset(c.charset))) return n;
  if (!c.collation.empty()) return CharsetMaxBytes(CharsetOfCollation(c.collation));
  return std::nullopt;
}

/// STRING metadata as servers pack it (Field_string::do_save_field_metadata): the real type with
/// bits 8–9 of the byte length folded into its bits 4–5, then the low byte of the length.
uint16_t StringMetadata(uint32_t bytes) {
  auto real = static_cast<uint8_t>(kString ^ ((bytes & 0x300) >> 4));
  return static_cast<uint16_t>((real << 8) | (bytes & 0xff));
}

/// Bytes per row of a SET with `members` members (get_set_pack_length).
uint32_t SetPackLength(size_t members) {
  size_t bytes = (members + 7) / 8;
  return bytes > 4 ? 8 : static_cast<uint32_t>(bytes);
}

/// The metadata a server writes in a TABLE_MAP for column `c` sent as wire type `wire` (already
/// accepted for the column's type), packed as binlog::ColumnInfo::metadata holds it. nullopt
/// where it cannot be computed reliably, and the column's metadata is then not checked:
/// - CHAR/VARCHAR whose character set (and collation) is not known, or not in CharsetMaxBytes;
/// - ENUM/SET without known members;
/// - the legacy VAR_STRING wire type (pre-5.0 VARCHAR), and ENUM/SET sent as their own wire types
///   (servers send them as STRING), whose packing we have never seen written;
/// - MySQL 9 VECTOR (its TABLE_MAP metadata is not documented);
/// - TINY/MEDIUM/LONG_BLOB wire types (servers send every BLOB/TEXT kind as BLOB).
std::optional<uint16_t> ExpectedMetadata(const Column& c, uint8_t wire) {
  switch (wire) {
    case kDecimalOld:
    case kTiny:
    case kShort:
    case kLong:
    case kNull:
    case kTimestamp:
    case kLongLong:
    case kInt24:
    case kDate:
    case kTime:
    case kDateTime:
    case kYear:
    case kNewDate: return 0;
    case kFloat: return 4;
    case kDouble: return 8;
    case kTimestamp2:
    case kDateTime2:
    case kTime2: return static_cast<uint16_t>(c.fsp.value_or(0));
    case kNewDecimal: return static_cast<uint16_t>((c.precision.value_or(10) << 8) | c.scale.value_or(0));
    case kBit: {
      uint32_t bits = c.length.value_or(1);
      return static_cast<uint16_t>(((bits / 8) << 8) | (bits % 8));
    }
    case kVarchar: {
      if (!c.length) return std::nullopt;
      if (c.type == ColumnType::kVarBinary) return static_cast<uint16_t>(*c.length);
      if (c.type != ColumnType::kVarChar) return std::nullopt;
      std::optional<uint32_t> per_char = ColumnMaxBytesPerChar(c);
      if (!per_char) return std::nullopt;
      return static_cast<uint16_t>(*c.length * *per_char);
    }
    case kString:
      switch (c.type) {
        case ColumnType::kEnum:
          if (c.enum_values.empty()) return std::nullopt;
          return static_cast<uint16_t>((kEnum << 8) | (c.enum_values.size() < 256 ? 1 : 2));
        case ColumnType::kSet:
          if (c.enum_values.empty()) return std::nullopt;
          return static_cast<uint16_t>((kSet << 8) | SetPackLength(c.enum_values.size()));
        case ColumnType::kBinary: return StringMetadata(c.length.value_or(1));
        case ColumnType::kUuid:
        case ColumnType::kInet6: return StringMetadata(16);
        case ColumnType::kInet4: return StringMetadata(4);
        case ColumnType::kChar: {
          std::optional<uint32_t> per_char = ColumnMaxBytesPerChar(c);
          if (!per_char) return std::nullopt;
          return StringMetadata(c.length.value_or(1) * *per_char);
        }
        default: return std::nullopt;
      }
    case kBlob:
      switch (c.type) {
        case ColumnType::kTinyBlob:
        case ColumnType::kTinyText: return 1;
        case ColumnType::kBlob:
        case ColumnType::kText: return 2;
        case ColumnType::kMediumBlob:
        case ColumnType::kMediumText: return 3;
        case ColumnType::kLongBlob:
        case ColumnType::kLongText:
        case ColumnType::kJson: return 4;
        default: return std::nullopt;
      }
    case kJson:
    case kGeometry: return 4;
    default: return std::nullopt;
  }
}

/// Whether `metadata` of an old-type TIME/DATETIME/TIMESTAMP column is its declared precision:
/// MariaDB's 5.3 "hires" TIME(n)/DATETIME(n)/TIMESTAMP(n) (tables created with
/// mysql56_temporal_format=OFF) arrive with no metadata at all (0), and the decoder's owner records
/// the tracked precision there (binlog::SetHiresPrecision) so that the values can be decoded.
bool IsHiresPrecision(const Column& c, uint8_t wire, uint16_t metadata) {
  if (wire != kTime && wire != kDateTime && wire != kTimestamp) return false;
  return c.fsp.value_or(0) > 0 && metadata == *c.fsp;
}

/// The column's type for messages, with the character set its byte lengths depend on.
std::string TypeWithCharset(const Column& c) {
  if ((c.type == ColumnType::kChar || c.type == ColumnType::kVarChar) && !c.charset.empty()) {
    return c.TypeText() + " CHARACTER SET " + c.charset;
  }
  return c.TypeText();
}

/// Metadata in words, for messages ("max 40 bytes", "DECIMAL(12,2)", "fsp 3", …).
std::string DescribeMetadata(uint8_t wire, uint16_t metadata) {
  auto high = static_cast<uint8_t>(metadata >> 8);
  auto low = static_cast<uint8_t>(metadata & 0xff);
  switch (wire) {
    case kFloat:
    case kDouble:
    case kBlob:
    case kJson:
    case kGeometry: return fmt::format("{} (pack length {})", metadata, metadata);
    case kTimestamp:
    case kDateTime:
    case kTime:
    case kTimestamp2:
    case kDateTime2:
    case kTime2: return fmt::format("{} (fsp {})", metadata, metadata);
    case kNewDecimal: return fmt::format("0x{:04x} (precision {}, scale {})", metadata, high, low);
    case kBit: return fmt::format("0x{:04x} ({} bits)", metadata, high * 8 + low);
    case kVarchar: return fmt::format("{} (max {} bytes)", metadata, metadata);
    case kString: {
      if (high == kEnum) return fmt::format("0x{:04x} (ENUM, {} bytes)", metadata, low);
      if (high == kSet) return fmt::format("0x{:04x} (SET, {} bytes)", metadata, low);
      uint32_t bytes = low;
      if ((high & 0x30) != 0x30) bytes |= static_cast<uint32_t>((high & 0x30) ^ 0x30) << 4;
      return fmt::format("0x{:04x} (fixed length, {} bytes)", metadata, bytes);
    }
    default: return fmt::format("{}", metadata);
  }
}

}  // namespace

std::optional<uint32_t> CharsetMaxBytes(std::string_view charset) {
  struct Entry {
    std::string_view name;
    uint32_t max_bytes;
  };
  static constexpr Entry kCharsets[] = {
      {"armscii8", 1}, {"ascii", 1},   {"big5", 2},   {"binary", 1},  {"cp1250", 1},  {"cp1251", 1},
      {"cp1256", 1},   {"cp1257", 1},  {"cp850", 1},  {"cp852", 1},   {"cp866", 1},   {"cp932", 2},
      {"dec8", 1},     {"eucjpms", 3}, {"euckr", 2},  {"gb18030", 4}, {"gb2312", 2},  {"gbk", 2},
      {"geostd8", 1},  {"greek", 1},   {"hebrew", 1}, {"hp8", 1},     {"keybcs2", 1}, {"koi8r", 1},
      {"koi8u", 1},    {"latin1", 1},  {"latin2", 1}, {"latin5", 1},  {"latin7", 1},  {"macce", 1},
      {"macroman", 1}, {"sjis", 2},    {"swe7", 1},   {"tis620", 1},  {"ucs2", 2},    {"ujis", 3},
      {"utf16", 4},    {"utf16le", 4}, {"utf32", 4},  {"utf8mb3", 3}, {"utf8mb4", 4},
  };
  for (const Entry& e : kCharsets) {
    if (e.name == charset) return e.max_bytes;
  }
  return std::nullopt;
}

Status Tracker::CheckTableMap(const TableMapColumns& map) const {
  const TableSchema* table = Find(map.database, map.table);
  std::string name = map.database + "." + map.table;
  if (table == nullptr) {
    return Error(
        ErrorKind::kNotFound,
        fmt::format("TABLE_MAP for {}: the table is not tracked; load its schema before its rows", name));
  }
  if (map.types.size() != table->columns.size()) {
    return Error(
        ErrorKind::kConfig,
        fmt::format(
            "TABLE_MAP for {} has {} columns but the tracked schema has {}; the tracked schema is out "
            "of date (a DDL was missed), resync the table",
            name, map.types.size(), table->columns.size()));
  }
  if (!map.names.empty() && map.names.size() != map.types.size()) {
    return Error(ErrorKind::kCorrupt, fmt::format("TABLE_MAP for {} names {} columns but has {} types", name,
                                                  map.names.size(), map.types.size()));
  }
  if (!map.metadata.empty() && map.metadata.size() != map.types.size()) {
    return Error(ErrorKind::kCorrupt, fmt::format("TABLE_MAP for {} has metadata of {} columns but {} types",
                                                  name, map.metadata.size(), map.types.size()));
  }
  for (size_t i = 0; i < map.types.size(); ++i) {
    const Column& c = table->columns[i];
    std::vector<uint8_t> accepted = AcceptedWireTypes(c.type);
    bool ok = false;
    for (uint8_t t : accepted) ok = ok || t == map.types[i];
    if (!ok) {
      return Error(
          ErrorKind::kConfig,
          fmt::format("TABLE_MAP for {}: column {} (`{}`) has binlog type {} but the tracked schema says {}; "
                      "the tracked schema is out of date, resync the table",
                      name, i + 1, c.name, map.types[i], c.TypeText()));
    }
    if (!map.names.empty() && !EqualsIgnoreCase(map.names[i], c.name)) {
      return Error(
          ErrorKind::kConfig,
          fmt::format(
              "TABLE_MAP for {}: column {} is `{}` but the tracked schema has `{}` there; the tracked "
              "schema is out of date, resync the table",
              name, i + 1, map.names[i], c.name));
    }
    if (!map.metadata.empty()) {
      std::optional<uint16_t> expected = ExpectedMetadata(c, map.types[i]);
      if (expected && *expected != map.metadata[i] && !IsHiresPrecision(c, map.types[i], map.metadata[i])) {
        return Error(
            ErrorKind::kConfig,
            fmt::format("TABLE_MAP for {}: column {} (`{}`) has metadata {} but the tracked schema's {} "
                        "would be written as {}; the tracked schema is out of date, resync the table",
                        name, i + 1, c.name, DescribeMetadata(map.types[i], map.metadata[i]),
                        TypeWithCharset(c), DescribeMetadata(map.types[i], *expected)));
      }
    }
  }
  return Status::Ok();
}

}  // namespace chsync::schema
