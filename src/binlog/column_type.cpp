#include "binlog/column_type.h"

namespace chsync::binlog {

std::string_view ColumnTypeName(ColumnType type) {
  switch (type) {
    case ColumnType::kDecimal: return "DECIMAL";
    case ColumnType::kTiny: return "TINY";
    case ColumnType::kShort: return "SHORT";
    case ColumnType::kLong: return "LONG";
    case ColumnType::kFloat: return "FLOAT";
    case ColumnType::kDouble: return "DOUBLE";
    case ColumnType::kNull: return "NULL";
    case ColumnType::kTimestamp: return "TIMESTAMP";
    case ColumnType::kLongLong: return "LONGLONG";
    case ColumnType::kInt24: return "INT24";
    case ColumnType::kDate: return "DATE";
    case ColumnType::kTime: return "TIME";
    case ColumnType::kDateTime: return "DATETIME";
    case ColumnType::kYear: return "YEAR";
    case ColumnType::kNewDate: return "NEWDATE";
    case ColumnType::kVarchar: return "VARCHAR";
    case ColumnType::kBit: return "BIT";
    case ColumnType::kTimestamp2: return "TIMESTAMP2";
    case ColumnType::kDateTime2: return "DATETIME2";
    case ColumnType::kTime2: return "TIME2";
    case ColumnType::kTypedArray: return "TYPED_ARRAY";
    case ColumnType::kMariaVarcharCompressed: return "VARCHAR_COMPRESSED";
    case ColumnType::kMariaBlobCompressed: return "BLOB_COMPRESSED";
    case ColumnType::kVector: return "VECTOR";
    case ColumnType::kInvalid: return "INVALID";
    case ColumnType::kBool: return "BOOL";
    case ColumnType::kJson: return "JSON";
    case ColumnType::kNewDecimal: return "NEWDECIMAL";
    case ColumnType::kEnum: return "ENUM";
    case ColumnType::kSet: return "SET";
    case ColumnType::kTinyBlob: return "TINY_BLOB";
    case ColumnType::kMediumBlob: return "MEDIUM_BLOB";
    case ColumnType::kLongBlob: return "LONG_BLOB";
    case ColumnType::kBlob: return "BLOB";
    case ColumnType::kVarString: return "VAR_STRING";
    case ColumnType::kString: return "STRING";
    case ColumnType::kGeometry: return "GEOMETRY";
  }
  return "UNKNOWN";
}

int ColumnMetadataSize(ColumnType type) {
  switch (type) {
    case ColumnType::kDecimal:
    case ColumnType::kTiny:
    case ColumnType::kShort:
    case ColumnType::kLong:
    case ColumnType::kNull:
    case ColumnType::kTimestamp:
    case ColumnType::kLongLong:
    case ColumnType::kInt24:
    case ColumnType::kDate:
    case ColumnType::kTime:
    case ColumnType::kDateTime:
    case ColumnType::kYear:
    case ColumnType::kNewDate:
    case ColumnType::kBool: return 0;
    case ColumnType::kFloat:
    case ColumnType::kDouble:
    case ColumnType::kTimestamp2:
    case ColumnType::kDateTime2:
    case ColumnType::kTime2:
    case ColumnType::kMariaBlobCompressed:
    case ColumnType::kVector:
    case ColumnType::kJson:
    case ColumnType::kTinyBlob:
    case ColumnType::kMediumBlob:
    case ColumnType::kLongBlob:
    case ColumnType::kBlob:
    case ColumnType::kGeometry: return 1;
    case ColumnType::kVarchar:
    case ColumnType::kBit:
    case ColumnType::kMariaVarcharCompressed:
    case ColumnType::kNewDecimal:
    case ColumnType::kEnum:
    case ColumnType::kSet:
    case ColumnType::kVarString:
    case ColumnType::kString: return 2;
    case ColumnType::kTypedArray:
    case ColumnType::kInvalid: return -1;
  }
  return -1;
}

bool IsNumericType(ColumnType t) {
  switch (t) {
    case ColumnType::kTiny:
    case ColumnType::kShort:
    case ColumnType::kInt24:
    case ColumnType::kLong:
    case ColumnType::kLongLong:
    case ColumnType::kNewDecimal:
    case ColumnType::kFloat:
    case ColumnType::kDouble: return true;
    default: return false;
  }
}

bool IsCharacterType(ColumnType t) {
  switch (t) {
    case ColumnType::kString:
    case ColumnType::kVarString:
    case ColumnType::kVarchar:
    case ColumnType::kBlob:
    case ColumnType::kTinyBlob:
    case ColumnType::kMediumBlob:
    case ColumnType::kLongBlob:
    case ColumnType::kMariaVarcharCompressed:
    case ColumnType::kMariaBlobCompressed:
    case ColumnType::kVector: return true;
    default: return false;
  }
}

bool IsEnumOrSetType(ColumnType t) {
  return t == ColumnType::kEnum || t == ColumnType::kSet;
}

}  // namespace chsync::binlog
