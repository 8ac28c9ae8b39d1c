#include "clickhouse/shard_router.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>

#include "common/civil_date.h"

namespace chsync::clickhouse {
namespace {

// CityHash64 v1.0.2 (Geoff Pike and Jyrki Alakuijala, 2011), the version ClickHouse's cityHash64
// keeps for compatibility; later CityHash releases return other values.
constexpr uint64_t kK0 = 0xc3a5c85c97cb3127ULL;
constexpr uint64_t kK1 = 0xb492b66fbe98f273ULL;
constexpr uint64_t kK2 = 0x9ae16a3b2f90404fULL;
constexpr uint64_t kK3 = 0xc949d7c7509e6557ULL;

uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;  // little-endian hosts only, as everywhere in chsync
}

uint32_t Load32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

uint64_t Rotate(uint64_t v, int shift) {
  return shift == 0 ? v : (v >> shift) | (v << (64 - shift));
}
uint64_t ShiftMix(uint64_t v) {
  return v ^ (v >> 47);
}

uint64_t Mix128(uint64_t low, uint64_t high) {
  constexpr uint64_t kMul = 0x9ddfea08eb382d69ULL;
  uint64_t a = (low ^ high) * kMul;
  a ^= a >> 47;
  uint64_t b = (high ^ a) * kMul;
  b ^= b >> 47;
  return b * kMul;
}

uint64_t Short(const char* s, size_t n) {  // n ≤ 16
  if (n > 8) {
    uint64_t a = Load64(s);
    uint64_t b = Load64(s + n - 8);
    int shift = static_cast<int>(n);  // 9..16: never 0
    uint64_t c = b + n;
    return Mix128(a, (c >> shift) | (c << (64 - shift))) ^ b;
  }
  if (n >= 4) {
    uint64_t a = Load32(s);
    return Mix128(n + (a << 3), Load32(s + n - 4));
  }
  if (n > 0) {
    auto a = static_cast<uint8_t>(s[0]);
    auto b = static_cast<uint8_t>(s[n >> 1]);
    auto c = static_cast<uint8_t>(s[n - 1]);
    uint32_t y = static_cast<uint32_t>(a) + (static_cast<uint32_t>(b) << 8);
    uint32_t z = static_cast<uint32_t>(n) + (static_cast<uint32_t>(c) << 2);
    return ShiftMix(y * kK2 ^ z * kK3) * kK2;
  }
  return kK2;
}

uint64_t Medium(const char* s, size_t n) {  // 17..32
  uint64_t a = Load64(s) * kK1;
  uint64_t b = Load64(s + 8);
  uint64_t c = Load64(s + n - 8) * kK2;
  uint64_t d = Load64(s + n - 16) * kK0;
  return Mix128(Rotate(a - b, 43) + Rotate(c, 30) + d, a + Rotate(b ^ kK3, 20) - c + n);
}

uint64_t Long(const char* s, size_t n) {  // 33..64
  uint64_t z = Load64(s + 24);
  uint64_t a = Load64(s) + (n + Load64(s + n - 16)) * kK0;
  uint64_t b = Rotate(a + z, 52);
  uint64_t c = Rotate(a, 37);
  a += Load64(s + 8);
  c += Rotate(a, 7);
  a += Load64(s + 16);
  uint64_t vf = a + z;
  uint64_t vs = b + Rotate(a, 31) + c;
  a = Load64(s + 16) + Load64(s + n - 32);
  z = Load64(s + n - 8);
  b = Rotate(a + z, 52);
  c = Rotate(a, 37);
  a += Load64(s + n - 24);
  c += Rotate(a, 7);
  a += Load64(s + n - 16);
  uint64_t wf = a + z;
  uint64_t ws = b + Rotate(a, 31) + c;
  uint64_t r = ShiftMix((vf + ws) * kK2 + (wf + vs) * kK0);
  return ShiftMix(r * kK0 + vs) * kK2;
}

struct Pair {
  uint64_t first;
  uint64_t second;
};

Pair Weak32(const char* s, uint64_t a, uint64_t b) {
  uint64_t w = Load64(s);
  uint64_t x = Load64(s + 8);
  uint64_t y = Load64(s + 16);
  uint64_t z = Load64(s + 24);
  a += w;
  b = Rotate(b + a + z, 21);
  uint64_t c = a;
  a += x;
  a += y;
  b += Rotate(a, 44);
  return {a + z, b + c};
}

// --- the text of key values, as ClickHouse 18.16 prints them inside a tuple (docs/cluster-notes.md)

bool IsStringEncoding(Encoding e) {
  switch (e) {
    case Encoding::kString:
    case Encoding::kDecimalText:
    case Encoding::kTimeText:
    case Encoding::kDateTimeText:
    case Encoding::kSetText:
    case Encoding::kWkt:
    case Encoding::kIPv4Text:
    case Encoding::kIPv6Text: return true;
    default: return false;
  }
}

bool Printable(const MappedType& t) {
  if (IsStringEncoding(t.encoding)) return true;
  switch (t.encoding) {
    case Encoding::kInt8:
    case Encoding::kInt16:
    case Encoding::kInt32:
    case Encoding::kInt64:
    case Encoding::kUInt8:
    case Encoding::kUInt16:
    case Encoding::kUInt32:
    case Encoding::kUInt64:
    case Encoding::kDecimal32:
    case Encoding::kDecimal64:
    case Encoding::kDate:
    case Encoding::kEnum8:
    case Encoding::kEnum16:
    case Encoding::kUuid: return true;
    case Encoding::kDateTime: return t.type.find("'UTC'") != std::string::npos;
    default: return false;
  }
}

void AppendQuoted(std::string_view bytes, std::string& out) {
  out.push_back('\'');
  for (char c : bytes) {
    switch (c) {
      case '\0': out += "\\0"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\\': out += "\\\\"; break;
      case '\'': out += "\\'"; break;
      default: out.push_back(c);
    }
  }
  out.push_back('\'');
}

void AppendTwo(uint32_t v, std::string& out) {
  out.push_back(static_cast<char>('0' + v / 10 % 10));
  out.push_back(static_cast<char>('0' + v % 10));
}

void AppendDate(int64_t days, KeyStyle style, std::string& out) {
  if (days == 0 && !style.zero_date_is_epoch) {
    out += "0000-00-00";
    return;
  }
  CivilDate d = CivilFromDays(days);
  out += std::to_string(d.year);
  out.push_back('-');
  AppendTwo(d.month, out);
  out.push_back('-');
  AppendTwo(d.day, out);
}

void AppendDecimal(int64_t value, uint32_t scale, KeyStyle style, std::string& out) {
  uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  uint64_t power = 1;
  for (uint32_t i = 0; i < scale; ++i) power *= 10;
  if (value < 0) out.push_back('-');
  out += std::to_string(magnitude / power);
  if (scale == 0) return;
  std::string fraction = std::to_string(magnitude % power);
  fraction.insert(0, scale - fraction.size(), '0');
  if (style.trim_decimal_zeros) {
    while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
    if (fraction.empty()) return;
  }
  out.push_back('.');
  out += fraction;
}

template <typename T>
T Fixed(std::string_view bytes) {
  T v;
  std::memcpy(&v, bytes.data(), sizeof(T));
  return v;
}

/// The text of one non-NULL value of `t` from its RowBinary encoding (EncodeCell's output, without
/// the Nullable flag).
Status AppendValue(const MappedType& t, std::string_view v, KeyStyle style, std::string& out) {
  auto need = [&](size_t n) -> Status {
    if (v.size() < n) return Error(ErrorKind::kInternal, "short encoding of a " + t.type + " key value");
    return Status::Ok();
  };
  if (IsStringEncoding(t.encoding)) {
    uint64_t length = 0;
    size_t at = 0;
    for (int shift = 0; at < v.size(); shift += 7) {
      auto b = static_cast<uint8_t>(v[at++]);
      length |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0 || shift > 56) break;
    }
    CHSYNC_RETURN_IF_ERROR(need(at + length));
    AppendQuoted(v.substr(at, length), out);
    return Status::Ok();
  }
  switch (t.encoding) {
    case Encoding::kInt8:
      CHSYNC_RETURN_IF_ERROR(need(1));
      out += std::to_string(Fixed<int8_t>(v));
      break;
    case Encoding::kInt16:
      CHSYNC_RETURN_IF_ERROR(need(2));
      out += std::to_string(Fixed<int16_t>(v));
      break;
    case Encoding::kInt32:
      CHSYNC_RETURN_IF_ERROR(need(4));
      out += std::to_string(Fixed<int32_t>(v));
      break;
    case Encoding::kInt64:
      CHSYNC_RETURN_IF_ERROR(need(8));
      out += std::to_string(Fixed<int64_t>(v));
      break;
    case Encoding::kUInt8:
      CHSYNC_RETURN_IF_ERROR(need(1));
      out += std::to_string(Fixed<uint8_t>(v));
      break;
    case Encoding::kUInt16:
      CHSYNC_RETURN_IF_ERROR(need(2));
      out += std::to_string(Fixed<uint16_t>(v));
      break;
    case Encoding::kUInt32:
      CHSYNC_RETURN_IF_ERROR(need(4));
      out += std::to_string(Fixed<uint32_t>(v));
      break;
    case Encoding::kUInt64:
      CHSYNC_RETURN_IF_ERROR(need(8));
      out += std::to_string(Fixed<uint64_t>(v));
      break;
    case Encoding::kDecimal32:
      CHSYNC_RETURN_IF_ERROR(need(4));
      AppendDecimal(Fixed<int32_t>(v), t.scale, style, out);
      break;
    case Encoding::kDecimal64:
      CHSYNC_RETURN_IF_ERROR(need(8));
      AppendDecimal(Fixed<int64_t>(v), t.scale, style, out);
      break;
    case Encoding::kDate:
      CHSYNC_RETURN_IF_ERROR(need(2));
      out.push_back('\'');
      AppendDate(Fixed<uint16_t>(v), style, out);
      out.push_back('\'');
      break;
    case Encoding::kDateTime: {
      CHSYNC_RETURN_IF_ERROR(need(4));
      uint32_t seconds = Fixed<uint32_t>(v);
      out.push_back('\'');
      if (seconds == 0 && !style.zero_date_is_epoch) {
        out += "0000-00-00 00:00:00";
      } else {
        AppendDate(seconds / 86400, style, out);
        uint32_t in_day = seconds % 86400;
        out.push_back(' ');
        AppendTwo(in_day / 3600, out);
        out.push_back(':');
        AppendTwo(in_day / 60 % 60, out);
        out.push_back(':');
        AppendTwo(in_day % 60, out);
      }
      out.push_back('\'');
      break;
    }
    case Encoding::kEnum8:
    case Encoding::kEnum16: {
      int64_t n = 0;
      if (t.encoding == Encoding::kEnum8) {
        CHSYNC_RETURN_IF_ERROR(need(1));
        auto byte = Fixed<uint8_t>(v);  // Int8: the enum's value
        n = byte < 128 ? byte : static_cast<int64_t>(byte) - 256;
      } else {
        CHSYNC_RETURN_IF_ERROR(need(2));
        n = Fixed<int16_t>(v);
      }
      const std::optional<std::string> zero = n == 0 ? EnumZeroLabel(t.labels, t.nullable) : std::nullopt;
      if (zero) {
        AppendQuoted(*zero, out);
      } else if (n >= 1 && static_cast<size_t>(n) <= t.labels.size()) {
        AppendQuoted(t.labels[static_cast<size_t>(n) - 1], out);
      } else {
        return Error(ErrorKind::kInternal,
                     "enum value " + std::to_string(n) + " is not a member of " + t.type);
      }
      break;
    }
    case Encoding::kUuid: {
      CHSYNC_RETURN_IF_ERROR(need(16));
      // Encoded as two little-endian halves (row_binary.cpp); the text is the RFC 4122 byte order.
      static constexpr char kHex[] = "0123456789abcdef";
      out.push_back('\'');
      for (int i = 0; i < 16; ++i) {
        auto b = static_cast<uint8_t>(i < 8 ? v[static_cast<size_t>(7 - i)] : v[static_cast<size_t>(23 - i)]);
        if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
        out.push_back(kHex[b >> 4]);
        out.push_back(kHex[b & 15]);
      }
      out.push_back('\'');
      break;
    }
    default: return Error(ErrorKind::kInternal, "no key text for " + t.type);
  }
  return Status::Ok();
}

/// What assumeNotNull() of a NULL of `t` prints: the zero value of the nested type (an enum's 0).
void AppendDefault(const MappedType& t, KeyStyle style, std::string& out) {
  if (t.encoding == Encoding::kEnum8 || t.encoding == Encoding::kEnum16) {
    // A NULL stores 0, whose label MapColumn writes into the type of every Nullable enum.
    AppendQuoted(EnumZeroLabel(t.labels, t.nullable).value_or(""), out);
  } else if (IsStringEncoding(t.encoding)) {
    out += "''";
  } else if (t.encoding == Encoding::kDecimal32 || t.encoding == Encoding::kDecimal64) {
    AppendDecimal(0, t.scale, style, out);
  } else if (t.encoding == Encoding::kDate) {
    out += style.zero_date_is_epoch ? "'1970-01-01'" : "'0000-00-00'";
  } else if (t.encoding == Encoding::kDateTime) {
    out += style.zero_date_is_epoch ? "'1970-01-01 00:00:00'" : "'0000-00-00 00:00:00'";
  } else if (t.encoding == Encoding::kUuid) {
    out += "'00000000-0000-0000-0000-000000000000'";
  } else {
    out += "0";
  }
}

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

/// A plain or backquoted identifier; empty when `s` is not one.
std::string Identifier(std::string_view s) {
  if (s.size() >= 2 && s.front() == '`' && s.back() == '`') {
    std::string out;
    for (size_t i = 1; i + 1 < s.size(); ++i) {
      if (s[i] == '\\' && i + 2 < s.size()) ++i;
      out.push_back(s[i]);
    }
    return out;
  }
  if (s.empty() || (s.front() >= '0' && s.front() <= '9')) return "";
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return "";
  }
  return std::string(s);
}

}  // namespace

uint64_t CityHash64(std::string_view bytes) {
  const char* s = bytes.data();
  size_t n = bytes.size();
  if (n <= 16) return Short(s, n);
  if (n <= 32) return Medium(s, n);
  if (n <= 64) return Long(s, n);

  uint64_t x = Load64(s);
  uint64_t y = Load64(s + n - 16) ^ kK1;
  uint64_t z = Load64(s + n - 56) ^ kK0;
  Pair v = Weak32(s + n - 64, n, y);
  Pair w = Weak32(s + n - 32, n * kK1, kK0);
  z += ShiftMix(v.second) * kK1;
  x = Rotate(z + x, 39) * kK1;
  y = Rotate(y, 33) * kK1;
  size_t left = (n - 1) & ~static_cast<size_t>(63);
  do {
    x = Rotate(x + y + v.first + Load64(s + 16), 37) * kK1;
    y = Rotate(y + v.second + Load64(s + 48), 42) * kK1;
    x ^= w.second;
    y ^= v.first;
    z = Rotate(z ^ w.first, 33);
    v = Weak32(s, v.second * kK1, x + w.first);
    w = Weak32(s + 32, z + w.second, y);
    std::swap(z, x);
    s += 64;
    left -= 64;
  } while (left != 0);
  return Mix128(Mix128(v.first, w.first) + ShiftMix(y) * kK1 + z, Mix128(v.second, w.second) + x);
}

Result<std::vector<KeyPart>> ParseSortingKey(std::string_view sorting_key) {
  std::vector<KeyPart> parts;
  std::string_view rest = sorting_key;
  while (!rest.empty()) {
    // Split at the next comma outside backquotes and parentheses.
    size_t end = 0;
    int depth = 0;
    bool quoted = false;
    for (; end < rest.size(); ++end) {
      char c = rest[end];
      if (quoted) {
        if (c == '\\')
          ++end;
        else if (c == '`')
          quoted = false;
      } else if (c == '`') {
        quoted = true;
      } else if (c == '(') {
        ++depth;
      } else if (c == ')') {
        --depth;
      } else if (c == ',' && depth == 0) {
        break;
      }
    }
    std::string_view item = TrimSpaces(rest.substr(0, end));
    rest = end < rest.size() ? rest.substr(end + 1) : std::string_view();
    KeyPart part;
    std::string_view inner = item;
    for (auto [prefix, kind] :
         {std::pair{std::string_view("isNull("), KeyPart::Kind::kIsNull},
          std::pair{std::string_view("assumeNotNull("), KeyPart::Kind::kAssumeNotNull}}) {
      if (item.starts_with(prefix) && item.ends_with(")")) {
        part.kind = kind;
        inner = TrimSpaces(item.substr(prefix.size(), item.size() - prefix.size() - 1));
      }
    }
    part.column = Identifier(inner);
    if (part.column.empty()) {
      return Error(ErrorKind::kUnsupported, "sorting key part '" + std::string(item) + "' of '" +
                                                std::string(sorting_key) + "' is not a column");
    }
    parts.push_back(std::move(part));
  }
  if (parts.empty()) return Error(ErrorKind::kUnsupported, "empty sorting key");
  return parts;
}

std::string KeyStyleName(const KeyStyle& style) {
  if (!style.zero_date_is_epoch && !style.trim_decimal_zeros) return "18.16";
  if (style.zero_date_is_epoch && style.trim_decimal_zeros) return "21.9+";
  return style.zero_date_is_epoch ? "zero dates as 1970-01-01, decimals at their scale"
                                  : "zero dates as zeros, decimals trimmed";
}

Result<ShardRouter> ShardRouter::Create(std::string_view sorting_key, std::span<const std::string> columns,
                                        std::span<const MappedType> types, std::vector<uint32_t> weights,
                                        KeyStyle style) {
  CHSYNC_ASSIGN_OR_RETURN(std::vector<KeyPart> key, ParseSortingKey(sorting_key));
  std::vector<Part> parts;
  for (const KeyPart& k : key) {
    auto it = std::find(columns.begin(), columns.end(), k.column);
    if (it == columns.end() || static_cast<size_t>(it - columns.begin()) >= types.size()) {
      return Error(ErrorKind::kUnsupported, "key column " + k.column + " is not written by chsync");
    }
    size_t index = static_cast<size_t>(it - columns.begin());
    const MappedType& t = types[index];
    if (!Printable(t)) {
      return Error(ErrorKind::kUnsupported, "key column " + k.column + " of type " + t.type +
                                                " (its text in the sharding key is not reproduced here)");
    }
    parts.push_back({k.kind, index});
  }
  uint64_t total = 0;
  for (uint32_t w : weights) total += w;
  if (total == 0) return Error(ErrorKind::kUnsupported, "every shard has weight 0");
  return ShardRouter(std::move(parts), std::vector<MappedType>(types.begin(), types.end()),
                     std::move(weights), style);
}

ShardRouter::ShardRouter(std::vector<Part> parts, std::vector<MappedType> types,
                         std::vector<uint32_t> weights, KeyStyle style)
    : parts_(std::move(parts)), types_(std::move(types)), weights_(std::move(weights)), style_(style) {
  // The Distributed engine maps hash % total weight to shards by cumulative weight, in shard order.
  uint32_t sum = 0;
  for (uint32_t w : weights_) slot_shards_.push_back(sum += w);
}

Status ShardRouter::AppendText(const Part& part, const Cell& cell, std::string& out) {
  const MappedType& t = types_[part.index];
  if (part.kind == KeyPart::Kind::kColumn && !t.nullable) {
    // The usual keys, printed straight from the value (the encoder checks its range afterwards).
    bool integer = t.encoding >= Encoding::kInt8 && t.encoding <= Encoding::kUInt64;
    char digits[24];
    if (integer && std::holds_alternative<int64_t>(cell)) {
      auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), std::get<int64_t>(cell));
      out.append(digits, end);
      return Status::Ok();
    }
    if (integer && std::holds_alternative<uint64_t>(cell)) {
      auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), std::get<uint64_t>(cell));
      out.append(digits, end);
      return Status::Ok();
    }
    if (t.encoding == Encoding::kString && std::holds_alternative<std::string_view>(cell)) {
      AppendQuoted(std::get<std::string_view>(cell), out);
      return Status::Ok();
    }
  }
  encoded_.clear();
  CHSYNC_RETURN_IF_ERROR(EncodeCell(t, cell, encoded_));
  std::string_view v = encoded_;
  bool is_null = false;
  if (t.nullable) {
    if (v.empty()) return Error(ErrorKind::kInternal, "empty encoding of a Nullable key value");
    is_null = v[0] != 0;
    v.remove_prefix(1);
  }
  switch (part.kind) {
    case KeyPart::Kind::kIsNull: out.push_back(is_null ? '1' : '0'); return Status::Ok();
    case KeyPart::Kind::kAssumeNotNull:
      if (is_null) {
        AppendDefault(t, style_, out);
        return Status::Ok();
      }
      return AppendValue(t, v, style_, out);
    case KeyPart::Kind::kColumn:
      if (is_null) {
        out += "NULL";
        return Status::Ok();
      }
      return AppendValue(t, v, style_, out);
  }
  return Status::Ok();
}

Result<std::string> ShardRouter::KeyText(std::span<const Cell> row) {
  std::string out = "(";
  for (size_t i = 0; i < parts_.size(); ++i) {
    if (parts_[i].index >= row.size()) return Error(ErrorKind::kInternal, "row shorter than its key");
    if (i > 0) out.push_back(',');
    CHSYNC_RETURN_IF_ERROR(AppendText(parts_[i], row[parts_[i].index], out));
  }
  out.push_back(')');
  return out;
}

Result<size_t> ShardRouter::Route(std::span<const Cell> row) {
  text_.assign(1, '(');
  for (size_t i = 0; i < parts_.size(); ++i) {
    if (parts_[i].index >= row.size()) return Error(ErrorKind::kInternal, "row shorter than its key");
    if (i > 0) text_.push_back(',');
    CHSYNC_RETURN_IF_ERROR(AppendText(parts_[i], row[parts_[i].index], text_));
  }
  text_.push_back(')');
  uint64_t slot = CityHash64(text_) % slot_shards_.back();
  size_t shard = 0;
  while (slot >= slot_shards_[shard]) ++shard;
  return shard;
}

RoutingProbe MakeRoutingProbe() {
  struct Probe {
    MappedType type;
    Cell cell;
    std::string literal;  ///< a ClickHouse expression of the same value and type
    bool nullable_parts = false;
  };
  auto type = [](std::string name, Encoding e, uint32_t precision = 0, uint32_t scale = 0) {
    MappedType t;
    t.type = std::move(name);
    t.encoding = e;
    t.precision = precision;
    t.scale = scale;
    return t;
  };
  auto nullable = [](MappedType t) {
    t.nullable = true;
    t.type = "Nullable(" + t.type + ")";
    return t;
  };
  static constexpr char kEscapes[] = "a'b\\c\n\t\r\b\f\0x\"/\x7f\xff";
  static constexpr char kUuid[] = "\x61\xf0\xc4\x04\x5c\xb3\x11\xe7\x90\x7b\xa6\x00\x6a\xd3\xdb\xa0";
  MappedType enum8 = type("Enum8('' = 0, 'x' = 1, 'y' = 2)", Encoding::kEnum8);
  enum8.labels = {"x", "y"};
  std::vector<Probe> probes = {
      {type("Int64", Encoding::kInt64), std::numeric_limits<int64_t>::min(),
       "toInt64('-9223372036854775808')"},
      {type("UInt64", Encoding::kUInt64), std::numeric_limits<uint64_t>::max(),
       "toUInt64('18446744073709551615')"},
      {type("Int8", Encoding::kInt8), int64_t{-5}, "toInt8(-5)"},
      {type("String", Encoding::kString), std::string_view(kEscapes, sizeof(kEscapes) - 1),
       "unhex('6127625C630A090D080C0078222F7FFF')"},
      {type("Decimal(10, 2)", Encoding::kDecimal64, 10, 2), DecimalCell{"-0.05"}, "toDecimal64('-0.05', 2)"},
      {type("Decimal(5, 0)", Encoding::kDecimal32, 5, 0), DecimalCell{"12345"}, "toDecimal32('12345', 0)"},
      {type("Decimal(12, 3)", Encoding::kDecimal64, 12, 3), DecimalCell{"7.500"}, "toDecimal64('7.5', 3)"},
      {type("Decimal(6, 2)", Encoding::kDecimal32, 6, 2), DecimalCell{"-3.00"}, "toDecimal32('-3', 2)"},
      {type("Date", Encoding::kDate), DateCell{2026, 1, 2}, "toDate('2026-01-02')"},
      {type("Date", Encoding::kDate), DateCell{0, 0, 0}, "toDate(0)"},
      {type("DateTime('UTC')", Encoding::kDateTime), DateTimeCell{2026, 1, 2, 3, 4, 5, 0},
       "toDateTime('2026-01-02 03:04:05', 'UTC')"},
      {type("DateTime('UTC')", Encoding::kDateTime), EpochCell{0, 0}, "toDateTime(0, 'UTC')"},
      {enum8, uint64_t{2}, "CAST(2 AS Enum8('' = 0, 'x' = 1, 'y' = 2))"},
      {type("UUID", Encoding::kUuid), std::string_view(kUuid, 16),
       "toUUID('61f0c404-5cb3-11e7-907b-a6006ad3dba0')"},
      {nullable(type("String", Encoding::kString)), NullCell{}, "CAST(NULL AS Nullable(String))", true},
      {nullable(type("Int32", Encoding::kInt32)), int64_t{7}, "CAST(7 AS Nullable(Int32))", true},
      {nullable(type("Date", Encoding::kDate)), NullCell{}, "CAST(NULL AS Nullable(Date))", true},
      {nullable(type("Decimal(10, 2)", Encoding::kDecimal64, 10, 2)), NullCell{},
       "CAST(NULL AS Nullable(Decimal(10, 2)))", true},
  };
  std::vector<std::string> names;
  std::vector<MappedType> types;
  std::vector<Cell> row;
  std::string key;
  std::string literals;
  for (size_t i = 0; i < probes.size(); ++i) {
    const Probe& p = probes[i];
    names.push_back("c" + std::to_string(i));
    types.push_back(p.type);
    row.push_back(p.cell);
    std::string sep = key.empty() ? "" : ", ";
    if (p.nullable_parts) {
      key += sep + "isNull(" + names.back() + "), assumeNotNull(" + names.back() + ")";
      literals += sep + "isNull(" + p.literal + "), assumeNotNull(" + p.literal + ")";
    } else {
      key += sep + names.back();
      literals += sep + p.literal;
    }
  }
  RoutingProbe probe;
  probe.sql = "SELECT cityHash64(toString(tuple(" + literals + ")))";
  for (bool epoch : {false, true}) {
    for (bool trim : {false, true}) {
      KeyStyle style{epoch, trim};
      auto router = ShardRouter::Create(key, names, types, {1}, style);
      auto text = router.ok() ? router->KeyText(row) : Result<std::string>(router.error());
      if (text.ok()) probe.expected.emplace_back(style, CityHash64(*text));
    }
  }
  return probe;
}

std::optional<KeyStyle> RoutingProbe::Match(std::string_view answer) const {
  while (!answer.empty() && (answer.back() == '\n' || answer.back() == ' ')) answer.remove_suffix(1);
  uint64_t got = 0;
  auto [ptr, ec] = std::from_chars(answer.data(), answer.data() + answer.size(), got);
  if (ec != std::errc() || ptr != answer.data() + answer.size()) return std::nullopt;
  for (const auto& [style, value] : expected) {
    if (value == got) return style;
  }
  return std::nullopt;
}

}  // namespace chsync::clickhouse
