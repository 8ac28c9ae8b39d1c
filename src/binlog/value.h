#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "binlog/column_type.h"

namespace chsync::binlog {

/// What a decoded column value holds. The exact representation of every MySQL/MariaDB type:
/// no value is ever routed through double or a lossy text form.
enum class ValueKind : uint8_t {
  kAbsent,     ///< the column is not in this row image (binlog_row_image=MINIMAL/NOBLOB)
  kNull,       ///< SQL NULL
  kInt,        ///< signed integer (TINY…LONGLONG, signed per metadata or by default): `i`
  kUint,       ///< unsigned integer (UNSIGNED per SIGNEDNESS metadata): `u`
  kFloat,      ///< FLOAT: `f`
  kDouble,     ///< DOUBLE: `d`
  kDecimal,    ///< NEWDECIMAL: `text` is the exact value ("-12.3400"), scale digits kept
  kYear,       ///< YEAR: `u` is the year (0 for the zero year)
  kDate,       ///< DATE / NEWDATE: `date` (all zero for the zero date)
  kTime,       ///< TIME / TIME2 / MariaDB hires TIME: `time` (hours may exceed 23), `fsp`
  kDateTime,   ///< DATETIME / DATETIME2 / MariaDB hires DATETIME: `datetime`, `fsp`
  kTimestamp,  ///< TIMESTAMP / TIMESTAMP2: `timestamp` (UTC seconds since the epoch), `fsp`
  kBit,        ///< BIT(n): `u` holds the bits, `fsp` holds n (1–64)
  kEnum,       ///< ENUM: `u` is the 1-based index (0 = the empty error value)
  kSet,        ///< SET: `u` is the member bitmap (bit 0 = first member)
  kString,     ///< CHAR/VARCHAR/BINARY/VARBINARY/TEXT/BLOB (and MariaDB JSON): raw bytes in `text`
               ///< in the column's charset (ColumnInfo::charset); MariaDB compressed columns are
               ///< already inflated
  kJson,       ///< MySQL JSON: `text` is JSON text in MySQL's own form ({"a": 1, "b": [true, null]})
  kGeometry,   ///< GEOMETRY: `text` is the 4-byte little-endian SRID followed by WKB
  kVector,     ///< VECTOR: `text` holds the float32 little-endian elements
  kJsonDiff,   ///< PARTIAL_UPDATE_ROWS JSON column whose before-image is not in the event
               ///< (binlog_row_image=MINIMAL): `text` is a JSON array of the operations to apply
               ///< to the current value, [{"op": "replace", "path": "$.a", "value": 1}, …]
               ///< (op is replace, insert or remove; remove has no value)
};

/// A calendar date; the zero date is 0000-00-00 and invalid parts are kept as stored.
struct Date {
  uint16_t year;
  uint8_t month;
  uint8_t day;
};

/// A TIME value: sign, hours (up to 838 and beyond for corrupt input), minutes, seconds, micros.
struct Time {
  bool negative;
  uint32_t hour;
  uint8_t minute;
  uint8_t second;
  uint32_t microsecond;
};

/// A DATETIME value as written, no time zone.
struct DateTime {
  uint16_t year;
  uint8_t month;
  uint8_t day;
  uint8_t hour;
  uint8_t minute;
  uint8_t second;
  uint32_t microsecond;
};

/// A TIMESTAMP value: seconds since the Unix epoch in UTC (0 = the zero timestamp).
struct Timestamp {
  uint32_t seconds;
  uint32_t microsecond;
};

/// One decoded column value.
///
/// Cheap to produce and copy (no heap): strings are views into the event bytes or into the
/// Decoder's scratch storage (DECIMAL/JSON text, inflated MariaDB compressed columns, zstd
/// transaction payloads). Lifetime: valid until the next Decoder::Decode() call on the decoder
/// that produced it, and while the event bytes passed to that call live. Copy what must outlive.
struct Value {
  ValueKind kind = ValueKind::kAbsent;
  /// The column's real type (ENUM/SET resolved from a STRING wire type).
  ColumnType type = ColumnType::kNull;
  /// Fractional-second digits of temporal values (0–6); number of bits for kBit.
  uint8_t fsp = 0;
  union {
    int64_t i = 0;
    uint64_t u;
    float f;
    double d;
    Date date;
    Time time;
    DateTime datetime;
    Timestamp timestamp;
  };
  /// kDecimal/kString/kJson/kGeometry/kVector payload (see ValueKind).
  std::string_view text;

  bool is_null() const { return kind == ValueKind::kNull; }
  bool is_absent() const { return kind == ValueKind::kAbsent; }
};

/// Appends MySQL's text form of `v` (what SELECT shows): integers, FLOAT/DOUBLE shortest
/// round-trip digits, DECIMAL/JSON text as is, "2024-06-15 12:34:56.789" with `fsp` digits,
/// "-01:02:03.500", YEAR as 4 digits, BIT as an integer, ENUM/SET as their numbers, strings and
/// blobs as raw bytes, VECTOR as "[1.5,2.5]", GEOMETRY as raw bytes. NULL → "NULL",
/// absent → "" (callers print absence themselves).
void AppendValueText(const Value& v, std::string& out);

/// Whether `kind` is a number, NULL or a temporal kind: one whose text form has a bounded length.
bool IsFixedValueKind(ValueKind kind);

/// The most bytes WriteFixedValueText writes.
inline constexpr size_t kMaxFixedValueText = 48;

/// Writes AppendValueText's form of `v` at `p` and returns the end. REQUIRES:
/// IsFixedValueKind(v.kind) and kMaxFixedValueText bytes at `p`.
char* WriteFixedValueText(const Value& v, char* p);

}  // namespace chsync::binlog
