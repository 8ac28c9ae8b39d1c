#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "clickhouse/capabilities.h"
#include "common/result.h"
#include "schema/table_schema.h"

namespace chsync::clickhouse {

/// How the RowBinary encoder writes a value into a destination column (see row_binary.h for the
/// input each one takes). docs/types.md is the user-facing version of MapColumn's table.
enum class Encoding {
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat32,
  kFloat64,
  kDecimal32,    ///< Decimal(P ≤ 9, S): Int32 of the value × 10^S
  kDecimal64,    ///< Decimal(P ≤ 18, S)
  kDecimal128,   ///< Decimal(P ≤ 38, S)
  kDecimal256,   ///< Decimal(P ≤ 76, S)
  kDecimalText,  ///< String holding the exact decimal digits (server without Decimal256)
  kDate,         ///< Date: UInt16 days since 1970-01-01, clamped to 1970-01-01..2105-12-31
  kDate32,       ///< Date32: Int32 days since 1970-01-01, clamped to 1900-01-01..2299-12-31
  kDateTime,     ///< DateTime('UTC'): UInt32 seconds, clamped to 1970-01-01..2105-12-31 23:59:59
  kDateTime64,   ///< DateTime64(fsp, 'UTC'): Int64 ticks of 10^-fsp s
  /// String "YYYY-MM-DD HH:MM:SS.f…" with `scale` fraction digits: what DateTime64(scale) would
  /// show (TIMESTAMP as the UTC instant, DATETIME as written, zero dates as 1970-01-01 00:00:00),
  /// unclamped (server without DateTime64, datetime_fallback: string)
  kDateTimeText,
  kTimeText,  ///< String "[-]HH:MM:SS[.f…]" as MySQL prints a TIME
  kString,    ///< String: bytes as they are
  /// JSON (`json: native`): the document's JSON text, sent as a String (the INSERT sets
  /// input_format_binary_read_json_as_string); a document that is not an object (an array, a
  /// scalar, null) is sent as {"_value": document}, since ClickHouse's JSON holds objects only
  kJson,
  kEnum8,         ///< Enum8: Int8 of the MySQL 1-based index (0 = the empty error value)
  kEnum16,        ///< Enum16: Int16 of the index
  kSetText,       ///< String: the member labels joined by ',' (MySQL's text form)
  kWkt,           ///< String: WKT of a GEOMETRY (SRID + WKB in)
  kFloat32Array,  ///< Array(Float32): a VECTOR's little-endian float32 elements
  kUuid,          ///< UUID
  kIPv4,          ///< IPv4: UInt32
  kIPv6,          ///< IPv6: 16 bytes network order
  kIPv4Text,      ///< String "a.b.c.d" (server without IPv4)
  kIPv6Text,      ///< String in RFC 5952 form (server without IPv6)
};

/// A source column's ClickHouse type and encoding.
struct MappedType {
  /// The full ClickHouse type, e.g. "Nullable(Decimal(65, 30))", "Enum8('a' = 1, 'b' = 2)".
  std::string type;
  Encoding encoding = Encoding::kString;
  bool nullable = false;
  uint32_t precision = 0;  ///< decimals
  uint32_t scale = 0;      ///< decimals: S; DateTime64/TIME text: fractional digits
  /// ENUM/SET labels in declaration order (ENUM index i+1 is labels[i]; SET bit i is labels[i]).
  std::vector<std::string> labels;
  /// Set when the mapping is a fallback that loses type information (not values), for warnings:
  /// e.g. "DECIMAL(65,30) kept as String: Decimal256 needs ClickHouse 22.3 or later".
  std::string fallback_note;
};

/// Maps a MySQL/MariaDB column to ClickHouse for a server with `caps`. Nullable exactly when the
/// source column is. JSON columns (schema::Column::IsJson: MySQL's, and MariaDB's LONGTEXT with a
/// json_valid CHECK) map to String, or under caps.json_native to JSON; on a server without
/// json_type_ready that is kUnsupported, naming the column, the server's version and what to do. Fails
/// (kUnsupported) for kUnknown types and ENUMs with more labels than Enum16 holds (they map to String only by
/// an explicit choice, not silently).
Result<MappedType> MapColumn(const schema::Column& column, const Capabilities& caps);

/// The label of the value 0 in the Enum8/Enum16 of an ENUM with `labels` (MapColumn writes it into
/// the type): '' (MySQL's invalid value) when no label is ''; when one is, index 0 is written as
/// that label, and only a NULL stores 0 (the nested value of a Nullable's NULL), which gets a label
/// of spaces that no member has (" ": MySQL strips trailing spaces from members) so that
/// toString(assumeNotNull(c)), the sharding key of a keyless table, can print it; none for a NOT
/// NULL column that declares '' (0 is never stored).
std::optional<std::string> EnumZeroLabel(const std::vector<std::string>& labels, bool nullable);

/// The encoding of the metadata columns.
MappedType VersionColumnType();    ///< _chsync_version UInt64
MappedType IsDeletedColumnType();  ///< _chsync_is_deleted UInt8

}  // namespace chsync::clickhouse
