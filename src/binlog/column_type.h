#pragma once

#include <cstdint>
#include <string_view>

namespace chsync::binlog {

/// A column type as TABLE_MAP events carry it (MySQL's enum_field_types, plus MariaDB's own).
/// ENUM and SET normally arrive on the wire as kString with the real type in the metadata;
/// ColumnInfo::real_type holds the resolved one.
enum class ColumnType : uint8_t {
  kDecimal = 0,  ///< pre-5.0 DECIMAL; not written by any server we read
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
  kTypedArray = 20,
  kMariaBlobCompressed = 140,     ///< MariaDB BLOB/TEXT ... COMPRESSED
  kMariaVarcharCompressed = 141,  ///< MariaDB VARCHAR ... COMPRESSED
  kVector = 242,                  ///< MySQL 9 VECTOR
  kInvalid = 243,
  kBool = 244,
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

/// "LONG", "VARCHAR", …; "UNKNOWN" for a code not listed in ColumnType.
std::string_view ColumnTypeName(ColumnType type);

/// How many metadata bytes a TABLE_MAP event carries for a column of this wire type, or -1 when
/// the type is unknown (the rest of the metadata block can then not be parsed).
int ColumnMetadataSize(ColumnType type);

/// Integer and floating types that the SIGNEDNESS optional metadata has one bit for.
bool IsNumericType(ColumnType real_type);
/// Types that DEFAULT_CHARSET / COLUMN_CHARSET optional metadata covers (CHAR, VARCHAR, TEXT/BLOB,
/// and MySQL 9 VECTOR, which servers list with the binary collation).
bool IsCharacterType(ColumnType real_type);
bool IsEnumOrSetType(ColumnType real_type);

}  // namespace chsync::binlog
