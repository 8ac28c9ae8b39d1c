#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "clickhouse/type_mapping.h"
#include "common/result.h"

namespace chsync::clickhouse {

/// SQL NULL.
struct NullCell {};
/// A DECIMAL's exact text: optional sign, digits, optional '.' and fraction digits ("-12.3400").
struct DecimalCell {
  std::string_view text;
};
/// A calendar date as MySQL stores it; 0000-00-00 (or any zero month/day) is the zero date.
struct DateCell {
  int32_t year = 0;
  uint32_t month = 0;
  uint32_t day = 0;
};
/// A DATETIME as written (no time zone); stored as the same wall-clock time in UTC.
struct DateTimeCell {
  int32_t year = 0;
  uint32_t month = 0;
  uint32_t day = 0;
  uint32_t hour = 0;
  uint32_t minute = 0;
  uint32_t second = 0;
  uint32_t microsecond = 0;
};
/// A TIMESTAMP: seconds since the Unix epoch in UTC plus microseconds.
struct EpochCell {
  int64_t seconds = 0;
  uint32_t microsecond = 0;
};
/// A TIME: sign, hours (may exceed 23), minutes, seconds, microseconds.
struct TimeCell {
  bool negative = false;
  uint32_t hour = 0;
  uint32_t minute = 0;
  uint32_t second = 0;
  uint32_t microsecond = 0;
};

/// One input value. Which alternative each Encoding takes:
///   integers (Int*/UInt*, BIT, YEAR): int64_t or uint64_t (range-checked against the column);
///   Float32/Float64: double;  Decimal*/kDecimalText: DecimalCell;
///   Date/Date32: DateCell;  DateTime/DateTime64: DateTimeCell (DATETIME) or EpochCell (TIMESTAMP);
///   kTimeText: TimeCell;  kString: std::string_view, bytes untouched;
///   Enum8/Enum16: uint64_t 1-based index (0 = the empty error value);  kSetText: uint64_t bitmap;
///   kWkt: std::string_view of 4-byte little-endian SRID + WKB (as MySQL stores GEOMETRY);
///   kFloat32Array: std::string_view of little-endian float32 elements;
///   kUuid: std::string_view of the 16 bytes in RFC 4122 order;
///   kIPv4/kIPv4Text: 4 bytes, kIPv6/kIPv6Text: 16 bytes, network order (as MariaDB stores them).
/// NullCell goes only into Nullable columns (and into Array(Float32), as the empty array).
using Cell = std::variant<NullCell, int64_t, uint64_t, double, DecimalCell, std::string_view, DateCell,
                          DateTimeCell, EpochCell, TimeCell>;

/// How many values an encoder clamped into its ClickHouse type's range (docs/types.md): dates into
/// Date (1970-01-01..2105-12-31) or Date32 (1900-01-01..2299-12-31), DATETIME/TIMESTAMP values into
/// DateTime. Zero dates (written as 1970-01-01) are not counted.
struct ClampCounts {
  uint64_t dates = 0;
  uint64_t datetimes = 0;

  bool empty() const { return dates == 0 && datetimes == 0; }
  ClampCounts& operator+=(const ClampCounts& other) {
    dates += other.dates;
    datetimes += other.datetimes;
    return *this;
  }
};

/// Builds a RowBinary body for one INSERT with a fixed column list: exact for every mapped type
/// (decimals from their digits, DateTime64 as ticks, enums by index, bytes untouched). Values
/// outside a ClickHouse type's range are handled as docs/types.md says (dates clamp, zero dates
/// become 1970-01-01); values that cannot be represented at all are errors.
class RowBinaryEncoder {
 public:
  /// `columns[i]` describes the i-th column of the INSERT's column list.
  explicit RowBinaryEncoder(std::vector<MappedType> columns) : columns_(std::move(columns)) {}

  /// Appends one row (`row.size()` must equal the column count). On error nothing is appended
  /// and the error (kCorrupt, naming the column index and the problem) says what did not fit.
  Status AppendRow(std::span<const Cell> row);

  std::string_view data() const { return data_; }
  size_t rows() const { return rows_; }
  size_t columns() const { return columns_.size(); }
  /// Reserves room for `bytes` of encoded rows (avoids regrowing a large batch).
  void Reserve(size_t bytes) { data_.reserve(bytes); }
  /// Moves the encoded rows out and empties the encoder, which reserves a quarter more than it
  /// held (the next batch of a similar size then never regrows, copying itself, on its last rows).
  std::string TakeData() {
    std::string out;
    out.swap(data_);
    data_.reserve(out.size() + out.size() / 4);
    rows_ = 0;
    return out;
  }
  /// Empties the buffer, keeping its capacity.
  void Clear() {
    data_.clear();
    rows_ = 0;
  }
  /// The values clamped in the rows appended since the last call (rows refused are not counted),
  /// and starts counting again from zero. TakeData() and Clear() leave the counts alone.
  ClampCounts TakeClamped() { return std::exchange(clamped_, ClampCounts{}); }

 private:
  std::vector<MappedType> columns_;
  std::string data_;
  size_t rows_ = 0;
  ClampCounts clamped_;
};

/// Appends one value of `column` to `out`; on error `out` may hold a partial value. A value
/// clamped into the type's range is counted in `*clamped` when given.
Status EncodeCell(const MappedType& column, const Cell& cell, std::string& out,
                  ClampCounts* clamped = nullptr);

/// WKT ("POINT(1 2)") of a MySQL GEOMETRY value (4-byte SRID + WKB). Fails (kCorrupt) on
/// truncated or malformed WKB, naming the byte offset.
Result<std::string> GeometryToWkt(std::string_view srid_and_wkb);

/// What a kJson column receives for the JSON text `document`, in a form ClickHouse's JSON type
/// reads: the document when it is an object, white space outside strings dropped; otherwise (an
/// array, a scalar, null) {"_value":document}, since ClickHouse's JSON holds objects only. A number
/// ClickHouse cannot hold (an integer beyond Int64/UInt64, a float beyond Float64) becomes a string
/// of its digits. Text that is not strict JSON (MariaDB's json_valid passes `1.`, `-`, `"\x"`), a
/// lone UTF-16 surrogate or nesting deeper than 900 becomes {"_text":"the text"}.
std::string JsonObjectText(std::string_view document);

}  // namespace chsync::clickhouse
