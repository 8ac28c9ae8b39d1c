#include <fmt/format.h>

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

}  // namespace

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
  }
  return Status::Ok();
}

}  // namespace chsync::schema
