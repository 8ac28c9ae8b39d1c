#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "binlog/compression.h"
#include "binlog/decimal.h"
#include "binlog/decimal_text.h"
#include "binlog/event_parsers.h"
#include "binlog/hires_temporal.h"
#include "binlog/json_binary.h"
#include "binlog/json_diff.h"

namespace chsync::binlog::internal {
namespace {

constexpr uint32_t kBinaryCollation = 63;
constexpr uint64_t kDummyTableId4 = 0x00ffffff;
constexpr uint64_t kDummyTableId6 = 0xffffffffffffULL;

int64_t SignExtend(uint64_t v, unsigned bytes) {
  unsigned shift = 64 - 8 * bytes;
  return static_cast<int64_t>(v << shift) >> shift;
}

Status Integer(ByteReader& r, const ColumnInfo& c, unsigned bytes, Value& out) {
  CHSYNC_ASSIGN_OR_RETURN(uint64_t v, r.ReadUintLE(bytes, "integer value"));
  if (c.is_unsigned.value_or(false)) {
    out.kind = ValueKind::kUint;
    out.u = v;
  } else {
    out.kind = ValueKind::kInt;
    out.i = SignExtend(v, bytes);
  }
  return Status::Ok();
}

Result<uint32_t> Fraction(ByteReader& r, unsigned fsp) {
  switch (fsp) {
    case 0: return uint32_t{0};
    case 1:
    case 2: {
      CHSYNC_ASSIGN_OR_RETURN(uint64_t v, r.ReadUintBE(1, "fractional seconds"));
      return static_cast<uint32_t>(v * 10000);
    }
    case 3:
    case 4: {
      CHSYNC_ASSIGN_OR_RETURN(uint64_t v, r.ReadUintBE(2, "fractional seconds"));
      return static_cast<uint32_t>(v * 100);
    }
    default: {
      CHSYNC_ASSIGN_OR_RETURN(uint64_t v, r.ReadUintBE(3, "fractional seconds"));
      return static_cast<uint32_t>(v);
    }
  }
}

Status CheckFsp(const ByteReader& r, const ColumnInfo& c) {
  if (c.metadata > 6)
    return r.Corrupt("fractional-second precision " + std::to_string(c.metadata) + " above 6");
  return Status::Ok();
}

Status Time2(ByteReader& r, unsigned fsp, Value& out) {
  int64_t packed = 0;
  constexpr int64_t kIntOfs = 0x800000;
  if (fsp >= 5) {
    CHSYNC_ASSIGN_OR_RETURN(uint64_t v, r.ReadUintBE(6, "TIME2 value"));
    packed = static_cast<int64_t>(v) - 0x800000000000LL;
  } else {
    CHSYNC_ASSIGN_OR_RETURN(uint64_t ip, r.ReadUintBE(3, "TIME2 value"));
    int64_t intpart = static_cast<int64_t>(ip) - kIntOfs;
    int64_t frac = 0;
    if (fsp >= 3) {
      CHSYNC_ASSIGN_OR_RETURN(uint64_t f, r.ReadUintBE(2, "TIME2 fraction"));
      frac = static_cast<int64_t>(f);
      if (intpart < 0 && frac != 0) {
        ++intpart;
        frac -= 0x10000;
      }
      frac *= 100;
    } else if (fsp >= 1) {
      CHSYNC_ASSIGN_OR_RETURN(uint64_t f, r.ReadUintBE(1, "TIME2 fraction"));
      frac = static_cast<int64_t>(f);
      if (intpart < 0 && frac != 0) {
        ++intpart;
        frac -= 0x100;
      }
      frac *= 10000;
    }
    packed = intpart * (int64_t{1} << 24) + frac;
  }
  out.kind = ValueKind::kTime;
  out.time.negative = packed < 0;
  uint64_t v = packed < 0 ? uint64_t(0) - static_cast<uint64_t>(packed) : static_cast<uint64_t>(packed);
  uint64_t hms = v >> 24;
  out.time.microsecond = static_cast<uint32_t>(v % (1u << 24));
  out.time.hour = static_cast<uint32_t>((hms >> 12) % (1u << 10));
  out.time.minute = static_cast<uint8_t>((hms >> 6) % 64);
  out.time.second = static_cast<uint8_t>(hms % 64);
  return Status::Ok();
}

/// The five integer bytes of a DATETIME2 (big-endian, biased by 2^39) and its microseconds.
inline DateTime UnpackDateTime2(uint64_t raw, uint32_t micros) {
  int64_t v = static_cast<int64_t>(raw) - 0x8000000000LL;
  uint64_t a = v < 0 ? static_cast<uint64_t>(-v) : static_cast<uint64_t>(v);
  uint64_t ymd = a >> 17, ym = ymd >> 5, hms = a % (1u << 17);
  return DateTime{static_cast<uint16_t>(ym / 13),
                  static_cast<uint8_t>(ym % 13),
                  static_cast<uint8_t>(ymd % 32),
                  static_cast<uint8_t>(hms >> 12),
                  static_cast<uint8_t>((hms >> 6) % 64),
                  static_cast<uint8_t>(hms % 64),
                  micros};
}

Result<uint64_t> LengthPrefix(ByteReader& r, unsigned bytes) {
  if (bytes < 1 || bytes > 4) return r.Corrupt("invalid length-prefix size " + std::to_string(bytes));
  return r.ReadUintLE(bytes, "value length");
}

Status Bytes(ByteReader& r, unsigned prefix, Value& out, ValueKind kind) {
  CHSYNC_ASSIGN_OR_RETURN(uint64_t len, LengthPrefix(r, prefix));
  CHSYNC_ASSIGN_OR_RETURN(out.text, r.ReadBytes(len, "string value"));
  out.kind = kind;
  return Status::Ok();
}

}  // namespace

Status DecodeValue(ByteReader& r, const ColumnInfo& c, ValueContext& ctx, Value& out) {
  out.type = c.real_type;
  out.fsp = 0;
  switch (c.real_type) {
    case ColumnType::kTiny: return Integer(r, c, 1, out);
    case ColumnType::kShort: return Integer(r, c, 2, out);
    case ColumnType::kInt24: return Integer(r, c, 3, out);
    case ColumnType::kLong: return Integer(r, c, 4, out);
    case ColumnType::kLongLong: return Integer(r, c, 8, out);
    case ColumnType::kFloat: {
      CHSYNC_ASSIGN_OR_RETURN(uint64_t v, r.ReadUintLE(4, "FLOAT value"));
      auto bits = static_cast<uint32_t>(v);
      std::memcpy(&out.f, &bits, 4);
      out.kind = ValueKind::kFloat;
      return Status::Ok();
    }
    case ColumnType::kDouble: {
      CHSYNC_ASSIGN_OR_RETURN(uint64_t v, r.ReadUintLE(8, "DOUBLE value"));
      std::memcpy(&out.d, &v, 8);
      out.kind = ValueKind::kDouble;
      return Status::Ok();
    }
    case ColumnType::kNewDecimal: {
      CHSYNC_ASSIGN_OR_RETURN(out.text, ReadDecimalText(r, c.metadata >> 8, c.metadata & 0xff, ctx.arena));
      out.kind = ValueKind::kDecimal;
      return Status::Ok();
    }
    case ColumnType::kYear: {
      CHSYNC_ASSIGN_OR_RETURN(uint8_t v, r.ReadU8("YEAR value"));
      out.kind = ValueKind::kYear;
      out.u = v == 0 ? 0 : 1900u + v;
      return Status::Ok();
    }
    case ColumnType::kDate:
    case ColumnType::kNewDate: {
      CHSYNC_ASSIGN_OR_RETURN(uint64_t v, r.ReadUintLE(3, "DATE value"));
      out.kind = ValueKind::kDate;
      out.date = Date{static_cast<uint16_t>(v >> 9), static_cast<uint8_t>((v >> 5) & 15),
                      static_cast<uint8_t>(v & 31)};
      return Status::Ok();
    }
    case ColumnType::kTime: {
      // Nonzero metadata: a MariaDB 5.3 hires TIME(1-6) (see binlog/hires_temporal.h).
      if (c.metadata != 0) return DecodeHiresTemporal(r, c.real_type, c.metadata, out);
      CHSYNC_ASSIGN_OR_RETURN(uint64_t raw, r.ReadUintLE(3, "TIME value"));
      int64_t v = SignExtend(raw, 3);
      out.kind = ValueKind::kTime;
      out.time.negative = v < 0;
      uint64_t a = v < 0 ? static_cast<uint64_t>(-v) : static_cast<uint64_t>(v);
      out.time.hour = static_cast<uint32_t>(a / 10000);
      out.time.minute = static_cast<uint8_t>((a / 100) % 100);
      out.time.second = static_cast<uint8_t>(a % 100);
      out.time.microsecond = 0;
      return Status::Ok();
    }
    case ColumnType::kDateTime: {
      if (c.metadata != 0) return DecodeHiresTemporal(r, c.real_type, c.metadata, out);
      CHSYNC_ASSIGN_OR_RETURN(uint64_t v, r.ReadUintLE(8, "DATETIME value"));
      uint64_t d = v / 1000000, t = v % 1000000;
      out.kind = ValueKind::kDateTime;
      out.datetime = DateTime{static_cast<uint16_t>(d / 10000 % 10000),
                              static_cast<uint8_t>(d / 100 % 100),
                              static_cast<uint8_t>(d % 100),
                              static_cast<uint8_t>(t / 10000),
                              static_cast<uint8_t>(t / 100 % 100),
                              static_cast<uint8_t>(t % 100),
                              0};
      return Status::Ok();
    }
    case ColumnType::kTimestamp: {
      if (c.metadata != 0) return DecodeHiresTemporal(r, c.real_type, c.metadata, out);
      CHSYNC_ASSIGN_OR_RETURN(uint64_t v, r.ReadUintLE(4, "TIMESTAMP value"));
      out.kind = ValueKind::kTimestamp;
      out.timestamp = Timestamp{static_cast<uint32_t>(v), 0};
      return Status::Ok();
    }
    case ColumnType::kTimestamp2: {
      CHSYNC_RETURN_IF_ERROR(CheckFsp(r, c));
      CHSYNC_ASSIGN_OR_RETURN(uint64_t secs, r.ReadUintBE(4, "TIMESTAMP2 value"));
      CHSYNC_ASSIGN_OR_RETURN(uint32_t frac, Fraction(r, c.metadata));
      out.kind = ValueKind::kTimestamp;
      out.fsp = static_cast<uint8_t>(c.metadata);
      out.timestamp = Timestamp{static_cast<uint32_t>(secs), frac};
      return Status::Ok();
    }
    case ColumnType::kDateTime2: {
      CHSYNC_RETURN_IF_ERROR(CheckFsp(r, c));
      CHSYNC_ASSIGN_OR_RETURN(uint64_t raw, r.ReadUintBE(5, "DATETIME2 value"));
      CHSYNC_ASSIGN_OR_RETURN(uint32_t frac, Fraction(r, c.metadata));
      out.kind = ValueKind::kDateTime;
      out.fsp = static_cast<uint8_t>(c.metadata);
      out.datetime = UnpackDateTime2(raw, frac);
      return Status::Ok();
    }
    case ColumnType::kTime2: {
      CHSYNC_RETURN_IF_ERROR(CheckFsp(r, c));
      out.fsp = static_cast<uint8_t>(c.metadata);
      return Time2(r, c.metadata, out);
    }
    case ColumnType::kBit: {
      unsigned bits = (c.metadata >> 8) * 8 + (c.metadata & 0xff);
      unsigned bytes = (c.metadata >> 8) + ((c.metadata & 0xff) ? 1 : 0);
      if (bits == 0 || bits > 64 || bytes > 8)
        return r.Corrupt("invalid BIT metadata " + std::to_string(c.metadata));
      CHSYNC_ASSIGN_OR_RETURN(out.u, r.ReadUintBE(bytes, "BIT value"));
      out.kind = ValueKind::kBit;
      out.fsp = static_cast<uint8_t>(bits);
      return Status::Ok();
    }
    case ColumnType::kEnum:
    case ColumnType::kSet: {
      unsigned bytes = c.metadata & 0xff;
      if (bytes < 1 || bytes > 8 || (c.real_type == ColumnType::kEnum && bytes > 2)) {
        return r.Corrupt("invalid ENUM/SET storage size " + std::to_string(bytes));
      }
      CHSYNC_ASSIGN_OR_RETURN(out.u, r.ReadUintLE(bytes, "ENUM/SET value"));
      out.kind = c.real_type == ColumnType::kEnum ? ValueKind::kEnum : ValueKind::kSet;
      return Status::Ok();
    }
    case ColumnType::kString: {
      CHSYNC_RETURN_IF_ERROR(Bytes(r, c.max_length > 255 ? 2 : 1, out, ValueKind::kString));
      // BINARY(n) values arrive with trailing 0x00 bytes stripped; restore them when the
      // metadata says the column is binary.
      if (c.charset == kBinaryCollation && out.text.size() < c.max_length) {
        char* p = ctx.arena.Allocate(c.max_length);
        std::memcpy(p, out.text.data(), out.text.size());
        std::memset(p + out.text.size(), 0, c.max_length - out.text.size());
        out.text = std::string_view(p, c.max_length);
      }
      return Status::Ok();
    }
    case ColumnType::kVarchar:
    case ColumnType::kVarString: return Bytes(r, c.max_length > 255 ? 2 : 1, out, ValueKind::kString);
    case ColumnType::kTinyBlob:
    case ColumnType::kMediumBlob:
    case ColumnType::kLongBlob:
    case ColumnType::kBlob: return Bytes(r, c.metadata, out, ValueKind::kString);
    case ColumnType::kGeometry: return Bytes(r, c.metadata, out, ValueKind::kGeometry);
    case ColumnType::kVector: return Bytes(r, c.metadata, out, ValueKind::kVector);
    case ColumnType::kJson: {
      uint64_t at = r.offset();
      CHSYNC_RETURN_IF_ERROR(Bytes(r, c.metadata, out, ValueKind::kJson));
      ctx.scratch.clear();
      CHSYNC_RETURN_IF_ERROR(JsonBinaryToText(out.text, at + c.metadata, ctx.scratch));
      out.text = ctx.arena.Copy(ctx.scratch);
      // A non-null pointer for an empty value, so that callers can tell it from "no text".
      if (out.text.data() == nullptr)
        out.text = std::string_view("", 0);  // NOLINT(bugprone-string-constructor)
      return Status::Ok();
    }
    case ColumnType::kMariaVarcharCompressed:
    case ColumnType::kMariaBlobCompressed: {
      unsigned prefix =
          c.real_type == ColumnType::kMariaBlobCompressed ? c.metadata : (c.max_length > 255 ? 2 : 1);
      uint64_t at = r.offset();
      CHSYNC_RETURN_IF_ERROR(Bytes(r, prefix, out, ValueKind::kString));
      CHSYNC_ASSIGN_OR_RETURN(
          out.text, InflateMariaColumn(out.text, at + prefix, ctx.max_uncompressed_size, ctx.arena));
      return Status::Ok();
    }
    case ColumnType::kNull: out.kind = ValueKind::kNull; return Status::Ok();
    default:
      return Error(ErrorKind::kUnsupported, "cannot decode column type " +
                                                std::string(ColumnTypeName(c.real_type)) + " (" +
                                                std::to_string(static_cast<int>(c.real_type)) +
                                                ") at offset " + std::to_string(r.offset()));
  }
}

namespace {

struct ImageLayout {
  std::string_view present;  // columns-present bitmap
  size_t present_count = 0;
};

bool Bit(std::string_view bitmap, size_t i) {
  return (static_cast<uint8_t>(bitmap[i / 8]) >> (i % 8)) & 1;
}

Result<ImageLayout> ReadBitmap(ByteReader& r, size_t columns, std::string_view what) {
  ImageLayout l;
  CHSYNC_ASSIGN_OR_RETURN(l.present, r.ReadBytes((columns + 7) / 8, what));
  for (size_t i = 0; i < columns; ++i) l.present_count += Bit(l.present, i);
  return l;
}

// The `n` (1..8) bytes at `p` as a little-endian integer; `left` bytes are readable at `p`.
uint64_t LoadLE(const uint8_t* p, unsigned n, size_t left) {
  if (std::endian::native == std::endian::little && left >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return n >= 8 ? v : v & ((uint64_t{1} << (8 * n)) - 1);
  }
  uint64_t v = 0;
  for (unsigned i = 0; i < n; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

// The same, big-endian.
uint64_t LoadBE(const uint8_t* p, unsigned n, size_t left) {
  if (std::endian::native == std::endian::little && left >= 8 && n >= 1) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return __builtin_bswap64(v) >> (64 - 8 * n);
  }
  uint64_t v = 0;
  for (unsigned i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

// What DecodeValue makes of a value of the common column types (integers, FLOAT, DOUBLE,
// VARCHAR, BLOB/TEXT, DATETIME2, TIMESTAMP2, ENUM) whose bytes are all there, without going
// through its checked reads; false, having read nothing, for everything else (other types, bad
// metadata, too few bytes), which DecodeValue then decodes or reports.
bool FastValue(ByteReader& r, const ColumnInfo& c, Value& out) {
  const uint8_t* p = r.current();
  const size_t left = r.remaining();
  auto integer = [&](unsigned bytes) {
    if (left < bytes) return false;
    uint64_t v = LoadLE(p, bytes, left);
    if (c.is_unsigned.value_or(false)) {
      out.kind = ValueKind::kUint;
      out.u = v;
    } else {
      out.kind = ValueKind::kInt;
      out.i = SignExtend(v, bytes);
    }
    r.Advance(bytes);
    return true;
  };
  auto bytes = [&](unsigned prefix) {
    if (prefix < 1 || prefix > 4 || left < prefix) return false;
    uint64_t len = LoadLE(p, prefix, left);
    if (len > left - prefix) return false;
    out.kind = ValueKind::kString;
    out.text = std::string_view(reinterpret_cast<const char*>(p + prefix), len);
    r.Advance(prefix + len);
    return true;
  };
  // Fractional seconds of `fsp` digits at `q` (`q_left` bytes readable) as microseconds, and
  // their byte count.
  auto fraction = [](const uint8_t* q, size_t q_left, unsigned fsp, uint32_t& micros) -> unsigned {
    switch (fsp) {
      case 0: micros = 0; return 0;
      case 1:
      case 2: micros = static_cast<uint32_t>(q[0]) * 10000; return 1;
      case 3:
      case 4: micros = static_cast<uint32_t>(LoadBE(q, 2, q_left)) * 100; return 2;
      default: micros = static_cast<uint32_t>(LoadBE(q, 3, q_left)); return 3;
    }
  };
  out.fsp = 0;
  switch (c.real_type) {
    case ColumnType::kTiny: return integer(1);
    case ColumnType::kShort: return integer(2);
    case ColumnType::kInt24: return integer(3);
    case ColumnType::kLong: return integer(4);
    case ColumnType::kLongLong: return integer(8);
    case ColumnType::kFloat: {
      if (left < 4) return false;
      std::memcpy(&out.f, p, 4);
      out.kind = ValueKind::kFloat;
      r.Advance(4);
      return true;
    }
    case ColumnType::kDouble: {
      if (left < 8) return false;
      std::memcpy(&out.d, p, 8);
      out.kind = ValueKind::kDouble;
      r.Advance(8);
      return true;
    }
    case ColumnType::kVarchar:
    case ColumnType::kVarString: return bytes(c.max_length > 255 ? 2 : 1);
    case ColumnType::kTinyBlob:
    case ColumnType::kMediumBlob:
    case ColumnType::kLongBlob:
    case ColumnType::kBlob: return bytes(c.metadata);
    case ColumnType::kTimestamp2: {
      unsigned fsp = c.metadata;
      unsigned size = 4 + (fsp + 1) / 2;
      if (fsp > 6 || left < size) return false;
      uint32_t micros;
      fraction(p + 4, left - 4, fsp, micros);
      out.kind = ValueKind::kTimestamp;
      out.fsp = static_cast<uint8_t>(fsp);
      out.timestamp = Timestamp{static_cast<uint32_t>(LoadBE(p, 4, left)), micros};
      r.Advance(size);
      return true;
    }
    case ColumnType::kDateTime2: {
      unsigned fsp = c.metadata;
      unsigned size = 5 + (fsp + 1) / 2;
      if (fsp > 6 || left < size) return false;
      uint32_t micros;
      fraction(p + 5, left - 5, fsp, micros);
      out.kind = ValueKind::kDateTime;
      out.fsp = static_cast<uint8_t>(fsp);
      out.datetime = UnpackDateTime2(LoadBE(p, 5, left), micros);
      r.Advance(size);
      return true;
    }
    case ColumnType::kEnum: {
      unsigned size = c.metadata & 0xff;
      if (size < 1 || size > 2 || left < size) return false;
      out.kind = ValueKind::kEnum;
      out.u = LoadLE(p, size, left);
      r.Advance(size);
      return true;
    }
    default: return false;
  }
}

// Decodes one row image into `values` (one slot per column). `partial_json` (may be empty)
// marks JSON columns whose after-image is a diff against `before`.
Status DecodeImage(ByteReader& r, const TableMap& t, const ImageLayout& l, ValueContext& ctx, Value* values,
                   std::string_view partial_json, const Value* before) {
  CHSYNC_ASSIGN_OR_RETURN(std::string_view nulls, r.ReadBytes((l.present_count + 7) / 8, "row null bitmap"));
  size_t n = 0;
  size_t json_index = 0;
  for (size_t i = 0; i < t.columns.size(); ++i) {
    const ColumnInfo& c = t.columns[i];
    Value& v = values[i];
    v.type = c.real_type;
    bool is_json = c.real_type == ColumnType::kJson;
    size_t this_json = is_json ? json_index++ : 0;
    if (!Bit(l.present, i)) {
      v.kind = ValueKind::kAbsent;
      continue;
    }
    bool null = Bit(nulls, n++);
    if (null) {
      v.kind = ValueKind::kNull;
      continue;
    }
    if (is_json && !partial_json.empty() && this_json / 8 < partial_json.size() &&
        Bit(partial_json, this_json)) {
      Status s = ApplyJsonDiff(r, c, before ? &before[i] : nullptr, ctx, v);
      if (!s.ok()) return std::move(s).error().AddContext("column " + std::to_string(i + 1));
      continue;
    }
    if (FastValue(r, c, v)) continue;
    Status s = DecodeValue(r, c, ctx, v);
    if (!s.ok()) {
      std::string name = c.name.empty() ? "@" + std::to_string(i + 1) : c.name;
      return std::move(s).error().AddContext("column " + name + " (" +
                                             std::string(ColumnTypeName(c.real_type)) + ")");
    }
  }
  return Status::Ok();
}

}  // namespace

Status ParseRows(ByteReader r, EventType type, uint8_t post_header_len,
                 const std::function<std::shared_ptr<const TableMap>(uint64_t)>& find_table,
                 ValueContext& ctx, RowsEvent& out) {
  auto code = static_cast<uint8_t>(type);
  switch (type) {
    case EventType::kPreGaWriteRows:
    case EventType::kPreGaUpdateRows:
    case EventType::kPreGaDeleteRows: out.version = 0; break;
    case EventType::kWriteRowsV1:
    case EventType::kUpdateRowsV1:
    case EventType::kDeleteRowsV1:
    case EventType::kMariaWriteRowsCompressedV1:
    case EventType::kMariaUpdateRowsCompressedV1:
    case EventType::kMariaDeleteRowsCompressedV1: out.version = 1; break;
    default: out.version = 2;
  }
  switch (type) {
    case EventType::kPreGaWriteRows:
    case EventType::kWriteRowsV1:
    case EventType::kWriteRowsV2:
    case EventType::kMariaWriteRowsCompressedV1:
    case EventType::kMariaWriteRowsCompressed: out.kind = RowsKind::kWrite; break;
    case EventType::kPreGaUpdateRows:
    case EventType::kUpdateRowsV1:
    case EventType::kUpdateRowsV2:
    case EventType::kMariaUpdateRowsCompressedV1:
    case EventType::kMariaUpdateRowsCompressed: out.kind = RowsKind::kUpdate; break;
    case EventType::kPartialUpdateRows: out.kind = RowsKind::kPartialUpdate; break;
    default: out.kind = RowsKind::kDelete;
  }
  out.compressed = code >= 166 && code <= 171;
  size_t id_bytes = post_header_len == 6 ? 4 : 6;
  if (post_header_len < id_bytes + 2) {
    return r.Corrupt("rows event post-header length " + std::to_string(post_header_len) + " too small");
  }
  CHSYNC_ASSIGN_OR_RETURN(out.table_id, r.ReadUintLE(id_bytes, "table id"));
  CHSYNC_ASSIGN_OR_RETURN(out.flags, r.ReadU16("rows flags"));
  size_t post_used = id_bytes + 2;
  if (out.version == 2 && post_header_len >= post_used + 2) {
    uint64_t extra_at = r.offset();
    CHSYNC_ASSIGN_OR_RETURN(uint16_t extra_len, r.ReadU16("extra data length"));
    post_used += 2;
    if (extra_len < 2) return r.Corrupt("rows extra-data length " + std::to_string(extra_len) + " below 2");
    CHSYNC_ASSIGN_OR_RETURN(out.extra_data, r.ReadBytes(extra_len - 2u, "rows extra data"));
    ByteReader x(out.extra_data, extra_at + 2);
    while (!x.empty()) {
      CHSYNC_ASSIGN_OR_RETURN(uint8_t tag, x.ReadU8("extra data type"));
      if (tag == 0) {  // NDB info: length byte counts itself and the format byte
        CHSYNC_ASSIGN_OR_RETURN(uint8_t len, x.ReadU8("NDB info length"));
        if (len < 2) return x.Corrupt("NDB info length below 2");
        CHSYNC_RETURN_IF_ERROR(x.Skip(len - 2u, "NDB info"));
      } else if (tag == 1) {  // partition info
        CHSYNC_ASSIGN_OR_RETURN(uint16_t part, x.ReadU16("partition id"));
        out.partition_id = part;
        if (out.kind == RowsKind::kUpdate || out.kind == RowsKind::kPartialUpdate) {
          CHSYNC_ASSIGN_OR_RETURN(uint16_t src, x.ReadU16("source partition id"));
          out.source_partition_id = src;
        }
      } else {
        return x.Corrupt("unknown rows extra-data type " + std::to_string(tag));
      }
    }
  }
  if (post_header_len > post_used)
    CHSYNC_RETURN_IF_ERROR(r.Skip(post_header_len - post_used, "rows post-header"));

  CHSYNC_ASSIGN_OR_RETURN(uint64_t columns, r.ReadPackedInt("column count"));
  out.column_count = static_cast<uint32_t>(columns);
  out.table = find_table(out.table_id);
  if (!out.table) {
    if ((out.table_id == kDummyTableId4 || out.table_id == kDummyTableId6) && columns == 0)
      return Status::Ok();
    return Error(ErrorKind::kCorrupt, "rows event for table id " + std::to_string(out.table_id) +
                                          " without a preceding TABLE_MAP");
  }
  const TableMap& t = *out.table;
  if (columns != t.columns.size()) {
    return r.Corrupt("rows event has " + std::to_string(columns) + " columns but TABLE_MAP " + t.database +
                     "." + t.table + " (id " + std::to_string(t.table_id) + ") has " +
                     std::to_string(t.columns.size()));
  }
  bool two_images = out.kind == RowsKind::kUpdate || out.kind == RowsKind::kPartialUpdate;
  if (ctx.decode_rows_of != nullptr && *ctx.decode_rows_of && !(*ctx.decode_rows_of)(t)) {
    out.skipped = true;
    if (out.compressed) {
      // Only the compression header after the bitmaps, for inflated_size; nothing is inflated.
      CHSYNC_RETURN_IF_ERROR(r.Skip((two_images ? 2 : 1) * ((columns + 7) / 8), "columns bitmaps"));
      uint64_t at = r.offset();
      CHSYNC_ASSIGN_OR_RETURN(MariaCompressedHeader h, ReadMariaCompressedHeader(r.ReadRest(), at));
      out.inflated_size = h.uncompressed_size;
    }
    return Status::Ok();
  }
  CHSYNC_ASSIGN_OR_RETURN(ImageLayout first, ReadBitmap(r, columns, "columns-present bitmap"));
  ImageLayout second = first;
  if (two_images) {
    CHSYNC_ASSIGN_OR_RETURN(second, ReadBitmap(r, columns, "after-image columns bitmap"));
  }
  if (out.kind == RowsKind::kDelete || two_images) out.partial_before_image = first.present_count < columns;
  if (out.kind == RowsKind::kWrite) out.partial_after_image = first.present_count < columns;
  if (two_images) out.partial_after_image = second.present_count < columns;

  ByteReader rows = r;
  if (out.compressed) {
    uint64_t at = r.offset();
    CHSYNC_ASSIGN_OR_RETURN(std::string_view inflated,
                            InflateMariaEvent(r.ReadRest(), at, ctx.max_uncompressed_size, ctx.arena));
    out.inflated_size = inflated.size();  // the declared size: InflateMariaEvent checks it
    rows = ByteReader(inflated, at);
  }

  size_t json_columns = 0;
  for (const auto& c : t.columns) json_columns += c.real_type == ColumnType::kJson;

  // Layout per row in `values`: before image (if any) then after image, each `columns` wide.
  size_t per_row = columns * (two_images ? 2 : 1);
  struct Span {
    size_t before, after;
  };
  std::vector<Span> spans;
  // out.values grows ahead in steps (value-initialised in bulk, not row by row); `used` of them
  // hold rows, and the rest is cut off at the end.
  size_t used = 0;
  while (!rows.empty()) {
    size_t row_start = rows.position();
    size_t base = used;
    if (out.values.size() - used < per_row)
      out.values.resize(std::max(used + per_row, 2 * out.values.size()));
    used += per_row;
    Value* vals = out.values.data() + base;
    Span s{SIZE_MAX, SIZE_MAX};
    if (out.kind == RowsKind::kWrite) {
      CHSYNC_RETURN_IF_ERROR(DecodeImage(rows, t, first, ctx, vals, {}, nullptr));
      s.after = base;
    } else if (out.kind == RowsKind::kDelete) {
      CHSYNC_RETURN_IF_ERROR(DecodeImage(rows, t, first, ctx, vals, {}, nullptr));
      s.before = base;
    } else {
      CHSYNC_RETURN_IF_ERROR(DecodeImage(rows, t, first, ctx, vals, {}, nullptr));
      std::string_view partial;
      if (out.kind == RowsKind::kPartialUpdate) {
        CHSYNC_ASSIGN_OR_RETURN(uint64_t options, rows.ReadPackedInt("partial update value options"));
        if (options & 1) {
          CHSYNC_ASSIGN_OR_RETURN(partial, rows.ReadBytes((json_columns + 7) / 8, "partial JSON bitmap"));
        }
      }
      CHSYNC_RETURN_IF_ERROR(DecodeImage(rows, t, second, ctx, vals + columns, partial, vals));
      s.before = base;
      s.after = base + columns;
    }
    spans.push_back(s);
    if (spans.size() == 1 && rows.position() > row_start && !rows.empty()) {
      // Size the stores from the first row, so long events do not regrow them row by row (an
      // event of one row, the most common, allocates nothing more).
      size_t estimate = rows.remaining() / (rows.position() - row_start) + 2;
      out.values.resize(std::max(out.values.size(), used + estimate * per_row));
      spans.reserve(estimate + 1);
    }
    // Every row consumes bytes (at least its null bitmap), which bounds the rows, and so the
    // values allocated, by the event size; a row of no bytes would never end.
    if (rows.position() == row_start) return rows.Corrupt("row image with no columns and no bytes");
  }
  out.values.resize(used);
  out.rows.reserve(spans.size());
  for (const Span& s : spans) {
    RowChange rc;
    if (s.before != SIZE_MAX) rc.before = RowImage(out.values.data() + s.before, columns);
    if (s.after != SIZE_MAX) rc.after = RowImage(out.values.data() + s.after, columns);
    out.rows.push_back(rc);
  }
  return Status::Ok();
}

}  // namespace chsync::binlog::internal
