#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "binlog/event.h"
#include "binlog/value.h"
#include "common/byte_reader.h"
#include "common/result.h"

/// MariaDB's own fractional-second temporal formats from before MySQL 5.6's TIME2/DATETIME2/
/// TIMESTAMP2 ("mariadb-5.3" in SHOW CREATE TABLE). MariaDB still writes them for columns created
/// while the global mysql56_temporal_format is OFF.
///
/// Such a column travels in TABLE_MAP as the old type code (TIME 11, DATETIME 12, TIMESTAMP 7)
/// with NO metadata byte, exactly like the classic second-precision formats: the event does not
/// say how many fractional digits (`dec`, 1–6) the column has, and so how many bytes its values
/// take. Whoever knows the column's declared precision (the tracked schema) records it in
/// ColumnInfo::metadata with SetHiresPrecision(); a TIME/DATETIME/TIMESTAMP column whose metadata
/// is then nonzero is decoded in the hires layout below, one whose metadata is 0 in the classic
/// one (TIME: 3-byte little-endian HHMMSS; DATETIME: 8-byte little-endian YYYYMMDDHHMMSS;
/// TIMESTAMP: 4-byte little-endian seconds). TIME(0)/DATETIME(0)/TIMESTAMP(0) created with the
/// variable OFF are the classic formats.
///
/// Hires layouts (all big-endian; `shift(x)` = x / 10^(6-dec), `unshift(x)` = x * 10^(6-dec)):
///
/// | type          | bytes for dec 1..6 | content                                              |
/// |---------------|--------------------|------------------------------------------------------|
/// | TIME(dec)     | 4 4 5 5 5 6        | shift(signed microseconds) + shift(839 h in µs)      |
/// | DATETIME(dec) | 6 6 7 7 7 8        | shift(((((Y*13+M)*32+D)*24+h)*60+m)*60+s) µs + µs)   |
/// | TIMESTAMP(dec)| 4 + (1 1 2 2 3 3)  | UTC seconds, then shift(microseconds)                |
///
/// A TIME value below the zero point (839:00:00) is negative; its magnitude is split into
/// hours (up to 838), minutes, seconds and microseconds. The zero DATETIME is all zero bytes,
/// the zero TIMESTAMP zero seconds and fraction.
namespace chsync::binlog {

/// The old temporal wire types that may carry hires values: TIMESTAMP (7), TIME (11), DATETIME (12).
bool IsOldTemporalType(ColumnType wire_type);

/// Bytes one hires value of `wire_type` (an IsOldTemporalType) takes with `dec` fractional digits;
/// 0 when `dec` is not 1–6 or the type is not an old temporal type.
size_t HiresValueSize(ColumnType wire_type, unsigned dec);

/// Decodes one hires value of `wire_type` with `dec` (1–6) fractional digits from `r` into `out`
/// (kind kTime/kDateTime/kTimestamp, `fsp` = dec). A `dec` above 6, a wire type that is not an
/// old temporal type, too few bytes, or a TIMESTAMP fraction out of range give a kCorrupt error.
Status DecodeHiresTemporal(ByteReader& r, ColumnType wire_type, unsigned dec, Value& out);

/// Records each old-temporal column's declared precision in its ColumnInfo::metadata so that rows
/// events decode it as hires: `fsp[i]` is the fractional-second digits column i was declared with
/// (0 for second precision or a non-temporal column). Columns of other wire types are left as they
/// are. Errors (kConfig) when `fsp` has not one entry per column or an entry is above 6.
Status SetHiresPrecision(TableMap& map, std::span<const uint8_t> fsp);

}  // namespace chsync::binlog
