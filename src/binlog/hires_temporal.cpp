#include "binlog/hires_temporal.h"

#include <string>

namespace chsync::binlog {
namespace {

constexpr uint64_t kPow10[7] = {1, 10, 100, 1000, 10000, 100000, 1000000};
constexpr size_t kTimeBytes[7] = {3, 4, 4, 5, 5, 5, 6};
constexpr size_t kDateTimeBytes[7] = {5, 6, 6, 7, 7, 7, 8};
constexpr size_t kFractionBytes[7] = {0, 1, 1, 2, 2, 3, 3};
/// 838:59:59 plus one second: the TIME value stored as zero, in seconds.
constexpr uint64_t kTimeZeroPointSeconds = 839ULL * 3600;

Status DecodeTime(ByteReader& r, unsigned dec, Value& out) {
  CHSYNC_ASSIGN_OR_RETURN(uint64_t packed, r.ReadUintBE(kTimeBytes[dec], "hires TIME value"));
  // In units of 10^-dec seconds; at most 6 bytes, so the difference fits in int64_t.
  const uint64_t zero_point = kTimeZeroPointSeconds * kPow10[dec];
  const bool negative = packed < zero_point;
  const uint64_t magnitude = negative ? zero_point - packed : packed - zero_point;
  const uint64_t seconds = magnitude / kPow10[dec];
  out.kind = ValueKind::kTime;
  out.fsp = static_cast<uint8_t>(dec);
  out.time.negative = negative;
  out.time.microsecond = static_cast<uint32_t>((magnitude % kPow10[dec]) * kPow10[6 - dec]);
  out.time.second = static_cast<uint8_t>(seconds % 60);
  out.time.minute = static_cast<uint8_t>(seconds / 60 % 60);
  out.time.hour = static_cast<uint32_t>(seconds / 3600);
  return Status::Ok();
}

Status DecodeDateTime(ByteReader& r, unsigned dec, Value& out) {
  CHSYNC_ASSIGN_OR_RETURN(uint64_t packed, r.ReadUintBE(kDateTimeBytes[dec], "hires DATETIME value"));
  // Split before scaling: eight bytes times 10^(6-dec) could overflow.
  uint64_t rest = packed / kPow10[dec];
  out.kind = ValueKind::kDateTime;
  out.fsp = static_cast<uint8_t>(dec);
  DateTime& t = out.datetime;
  t.microsecond = static_cast<uint32_t>((packed % kPow10[dec]) * kPow10[6 - dec]);
  t.second = static_cast<uint8_t>(rest % 60);
  rest /= 60;
  t.minute = static_cast<uint8_t>(rest % 60);
  rest /= 60;
  t.hour = static_cast<uint8_t>(rest % 24);
  rest /= 24;
  t.day = static_cast<uint8_t>(rest % 32);
  rest /= 32;
  t.month = static_cast<uint8_t>(rest % 13);
  t.year = static_cast<uint16_t>(rest / 13);
  return Status::Ok();
}

Status DecodeTimestamp(ByteReader& r, unsigned dec, Value& out) {
  CHSYNC_ASSIGN_OR_RETURN(uint64_t seconds, r.ReadUintBE(4, "hires TIMESTAMP seconds"));
  CHSYNC_ASSIGN_OR_RETURN(uint64_t fraction, r.ReadUintBE(kFractionBytes[dec], "hires TIMESTAMP fraction"));
  if (fraction >= kPow10[dec]) {
    return r.Corrupt("hires TIMESTAMP(" + std::to_string(dec) + ") fraction " + std::to_string(fraction) +
                     " has more than " + std::to_string(dec) + " digits");
  }
  out.kind = ValueKind::kTimestamp;
  out.fsp = static_cast<uint8_t>(dec);
  out.timestamp =
      Timestamp{static_cast<uint32_t>(seconds), static_cast<uint32_t>(fraction * kPow10[6 - dec])};
  return Status::Ok();
}

}  // namespace

bool IsOldTemporalType(ColumnType wire_type) {
  return wire_type == ColumnType::kTime || wire_type == ColumnType::kDateTime ||
         wire_type == ColumnType::kTimestamp;
}

size_t HiresValueSize(ColumnType wire_type, unsigned dec) {
  if (dec < 1 || dec > 6) return 0;
  switch (wire_type) {
    case ColumnType::kTime: return kTimeBytes[dec];
    case ColumnType::kDateTime: return kDateTimeBytes[dec];
    case ColumnType::kTimestamp: return 4 + kFractionBytes[dec];
    default: return 0;
  }
}

Status DecodeHiresTemporal(ByteReader& r, ColumnType wire_type, unsigned dec, Value& out) {
  if (dec < 1 || dec > 6) {
    return r.Corrupt("hires " + std::string(ColumnTypeName(wire_type)) + " precision " + std::to_string(dec) +
                     " is not 1-6");
  }
  switch (wire_type) {
    case ColumnType::kTime: return DecodeTime(r, dec, out);
    case ColumnType::kDateTime: return DecodeDateTime(r, dec, out);
    case ColumnType::kTimestamp: return DecodeTimestamp(r, dec, out);
    default:
      return r.Corrupt("column type " + std::string(ColumnTypeName(wire_type)) + " has no hires format");
  }
}

Status SetHiresPrecision(TableMap& map, std::span<const uint8_t> fsp) {
  if (fsp.size() != map.columns.size()) {
    return Error(ErrorKind::kConfig, "TABLE_MAP of " + map.database + "." + map.table + " has " +
                                         std::to_string(map.columns.size()) + " columns but " +
                                         std::to_string(fsp.size()) + " precisions were given");
  }
  for (size_t i = 0; i < fsp.size(); ++i) {
    ColumnInfo& c = map.columns[i];
    if (!IsOldTemporalType(c.type)) continue;
    if (fsp[i] > 6) {
      return Error(ErrorKind::kConfig, "column " + std::to_string(i + 1) + " of " + map.database + "." +
                                           map.table + " has fractional-second precision " +
                                           std::to_string(fsp[i]) + " above 6");
    }
    c.metadata = fsp[i];
  }
  return Status::Ok();
}

}  // namespace chsync::binlog
