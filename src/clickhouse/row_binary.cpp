#include "clickhouse/row_binary.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "common/civil_date.h"

namespace chsync::clickhouse {
namespace {

static_assert(std::endian::native == std::endian::little, "RowBinary writing assumes a little-endian host");

template <typename T>
void PutFixed(T value, std::string& out) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

void PutVarUInt(uint64_t value, std::string& out) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void PutString(std::string_view s, std::string& out) {
  PutVarUInt(s.size(), out);
  out.append(s);
}

Error Bad(std::string what) {
  return Error(ErrorKind::kCorrupt, std::move(what));
}

const char* CellName(const Cell& cell) {
  switch (cell.index()) {
    case 0: return "NULL";
    case 1: return "signed integer";
    case 2: return "unsigned integer";
    case 3: return "floating-point number";
    case 4: return "decimal";
    case 5: return "string";
    case 6: return "date";
    case 7: return "datetime";
    case 8: return "timestamp";
    default: return "time";
  }
}

Error WrongInput(const MappedType& column, const Cell& cell) {
  return Bad(std::string("a ") + CellName(cell) + " value does not fit a " + column.type + " column");
}

/// The integer in `cell` as int64 range [lo, hi] (as a signed or unsigned input).
template <typename T>
Status PutInteger(const MappedType& column, const Cell& cell, std::string& out) {
  if (const auto* i = std::get_if<int64_t>(&cell)) {
    if (*i < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
        (*i > 0 && static_cast<uint64_t>(*i) > static_cast<uint64_t>(std::numeric_limits<T>::max()))) {
      return Bad(std::to_string(*i) + " is out of range for " + column.type);
    }
    PutFixed(static_cast<T>(*i), out);
    return Status::Ok();
  }
  if (const auto* u = std::get_if<uint64_t>(&cell)) {
    if (*u > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
      return Bad(std::to_string(*u) + " is out of range for " + column.type);
    }
    PutFixed(static_cast<T>(*u), out);
    return Status::Ok();
  }
  return WrongInput(column, cell);
}

/// A 256-bit two's complement integer as four little-endian 64-bit limbs.
using Wide = std::array<uint64_t, 4>;

/// Products of a limb and a factor (GCC and Clang's 128-bit integer; __extension__ marks it as one).
__extension__ typedef unsigned __int128 Uint128;

/// 10^0 … 10^18.
constexpr std::array<uint64_t, 19> kPowersOf10 = [] {
  std::array<uint64_t, 19> powers{};
  uint64_t p = 1;
  for (uint64_t& power : powers) {
    power = p;
    p *= 10;
  }
  return powers;
}();

/// Parses decimal text into value × 10^scale. Fails when it has more than `precision` digits
/// (after scaling) or more fraction digits than `scale` that are not zeros.
Status ParseDecimal(std::string_view text, uint32_t precision, uint32_t scale, Wide& value) {
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  size_t dot = s.find('.');
  std::string_view int_part = s.substr(0, dot);
  std::string_view frac_part = dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1);
  if (int_part.empty() && frac_part.empty())
    return Bad("'" + std::string(text) + "' is not a decimal number");
  while (!frac_part.empty() && frac_part.size() > scale && frac_part.back() == '0')
    frac_part.remove_suffix(1);
  if (frac_part.size() > scale) {
    return Bad("'" + std::string(text) + "' has more than " + std::to_string(scale) + " fraction digits");
  }
  while (int_part.size() > 1 && int_part.front() == '0') int_part.remove_prefix(1);
  if (int_part == "0") int_part = {};
  if (int_part.size() + scale > precision) {
    return Bad("'" + std::string(text) + "' has more than " + std::to_string(precision - scale) +
               " integer digits");
  }
  value = {0, 0, 0, 0};
  // Digits are gathered 18 at a time into one 64-bit number, which then joins the value
  // (value × 10^n + group): one wide multiplication per 18 digits instead of one per digit.
  uint64_t group = 0;
  unsigned group_digits = 0;
  auto flush = [&] {
    Uint128 carry = group;
    for (uint64_t& limb : value) {
      Uint128 product = static_cast<Uint128>(limb) * kPowersOf10[group_digits] + carry;
      limb = static_cast<uint64_t>(product);
      carry = product >> 64;
    }
    group = 0;
    group_digits = 0;
  };
  auto push = [&](char c) {
    group = group * 10 + static_cast<uint64_t>(c - '0');
    if (++group_digits == 18) flush();
  };
  for (std::string_view part : {int_part, frac_part}) {
    for (char c : part) {
      if (c < '0' || c > '9') return Bad("'" + std::string(text) + "' is not a decimal number");
      push(c);
    }
  }
  for (size_t i = frac_part.size(); i < scale; ++i) push('0');
  flush();
  if (negative) {
    uint64_t carry = 1;
    for (uint64_t& limb : value) {
      limb = ~limb;
      uint64_t sum = limb + carry;
      carry = (carry != 0 && sum == 0) ? 1 : 0;
      limb = sum;
    }
  }
  return Status::Ok();
}

Status PutDecimal(const MappedType& column, const Cell& cell, size_t bytes, std::string& out) {
  const auto* d = std::get_if<DecimalCell>(&cell);
  if (d == nullptr) return WrongInput(column, cell);
  Wide value;
  CHSYNC_RETURN_IF_ERROR(ParseDecimal(d->text, column.precision, column.scale, value));
  char raw[32];
  std::memcpy(raw, value.data(), sizeof(raw));
  out.append(raw, bytes);
  return Status::Ok();
}

int64_t Pow10(uint32_t n) {
  int64_t p = 1;
  while (n-- > 0) p *= 10;
  return p;
}

bool IsZeroDate(int32_t year, uint32_t month, uint32_t day) {
  return month == 0 || day == 0 || year == 0;
}

Status CheckDateParts(int32_t year, uint32_t month, uint32_t day) {
  if (year < 0 || year > 9999 || month > 12 || day > 31) {
    return Bad("date " + std::to_string(year) + "-" + std::to_string(month) + "-" + std::to_string(day) +
               " is not a valid calendar date");
  }
  return Status::Ok();
}

/// Seconds since the epoch (UTC) and microseconds of a DATETIME or TIMESTAMP input.
Result<std::pair<int64_t, uint32_t>> EpochOf(const MappedType& column, const Cell& cell) {
  if (const auto* e = std::get_if<EpochCell>(&cell)) return std::make_pair(e->seconds, e->microsecond);
  const auto* dt = std::get_if<DateTimeCell>(&cell);
  if (dt == nullptr) return WrongInput(column, cell);
  CHSYNC_RETURN_IF_ERROR(CheckDateParts(dt->year, dt->month, dt->day));
  if (dt->hour > 23 || dt->minute > 59 || dt->second > 59 || dt->microsecond > 999999) {
    return Bad("time of day " + std::to_string(dt->hour) + ":" + std::to_string(dt->minute) + ":" +
               std::to_string(dt->second) + "." + std::to_string(dt->microsecond) + " is not valid");
  }
  if (IsZeroDate(dt->year, dt->month, dt->day)) return std::make_pair(int64_t{0}, uint32_t{0});
  int64_t days = DaysFromCivil(dt->year, dt->month, dt->day);
  return std::make_pair(days * 86400 + int64_t{dt->hour} * 3600 + int64_t{dt->minute} * 60 + dt->second,
                        dt->microsecond);
}

void AppendTwoDigits(uint32_t v, std::string& out) {
  out.push_back(static_cast<char>('0' + (v / 10) % 10));
  out.push_back(static_cast<char>('0' + v % 10));
}

Result<std::string> TimeText(const MappedType& column, const Cell& cell) {
  const auto* t = std::get_if<TimeCell>(&cell);
  if (t == nullptr) return WrongInput(column, cell);
  if (t->minute > 59 || t->second > 59 || t->microsecond > 999999) return Bad("TIME value out of range");
  std::string s;
  if (t->negative) s += '-';
  if (t->hour < 10) s += '0';
  s += std::to_string(t->hour);
  s += ':';
  AppendTwoDigits(t->minute, s);
  s += ':';
  AppendTwoDigits(t->second, s);
  if (column.scale > 0) {
    char frac[7];
    std::snprintf(frac, sizeof(frac), "%06u", t->microsecond);
    s += '.';
    s.append(frac, std::min<uint32_t>(column.scale, 6));
  }
  return s;
}

Result<std::string_view> BytesOf(const MappedType& column, const Cell& cell, size_t expected) {
  const auto* s = std::get_if<std::string_view>(&cell);
  if (s == nullptr) return WrongInput(column, cell);
  if (expected != 0 && s->size() != expected) {
    return Bad(column.type + " value must be " + std::to_string(expected) + " bytes, got " +
               std::to_string(s->size()));
  }
  return *s;
}

/// Reads WKB (OGC well-known binary, either byte order per geometry) and writes WKT the way MySQL's
/// ST_AsText prints it. Every count is checked against the bytes left before it is used.
class WkbReader {
 public:
  explicit WkbReader(std::string_view bytes) : bytes_(bytes) {}

  Status Geometry(std::string& out, int depth, bool with_tag) {
    if (depth > 32) return Fail("geometry nested deeper than 32 levels");
    uint8_t order = 0;
    CHSYNC_RETURN_IF_ERROR(Byte(order));
    if (order > 1) return Fail("byte order marker " + std::to_string(order) + " is neither 0 nor 1");
    little_ = order == 1;
    uint32_t type = 0;
    CHSYNC_RETURN_IF_ERROR(U32(type));
    static constexpr const char* kNames[] = {
        "",           "POINT",           "LINESTRING",   "POLYGON",
        "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION"};
    if (type < 1 || type > 7) return Fail("unknown WKB geometry type " + std::to_string(type));
    if (with_tag) out += kNames[type];
    switch (type) {
      case 1:
        out += '(';
        CHSYNC_RETURN_IF_ERROR(Point(out));
        out += ')';
        return Status::Ok();
      case 2: return PointList(out);
      case 3: return Rings(out);
      default: break;
    }
    uint32_t count = 0;
    CHSYNC_RETURN_IF_ERROR(Count(count, 9));
    if (count == 0) {
      out += " EMPTY";
      return Status::Ok();
    }
    out += '(';
    for (uint32_t i = 0; i < count; ++i) {
      if (i > 0) out += ',';
      if (type == 7) {
        CHSYNC_RETURN_IF_ERROR(Geometry(out, depth + 1, true));
      } else {
        // MULTIPOINT((1 1),(2 2)), MULTILINESTRING((…),(…)), MULTIPOLYGON(((…)),((…)))
        CHSYNC_RETURN_IF_ERROR(Geometry(out, depth + 1, false));
      }
    }
    out += ')';
    return Status::Ok();
  }

  size_t remaining() const { return bytes_.size() - pos_; }
  size_t position() const { return pos_; }

 private:
  Status Fail(const std::string& what) const {
    return Bad("GEOMETRY value: " + what + " at WKB byte " + std::to_string(pos_));
  }
  Status Byte(uint8_t& v) {
    if (remaining() < 1) return Fail("truncated");
    v = static_cast<uint8_t>(bytes_[pos_++]);
    return Status::Ok();
  }
  Status U32(uint32_t& v) {
    if (remaining() < 4) return Fail("truncated");
    uint8_t b[4];
    std::memcpy(b, bytes_.data() + pos_, 4);
    pos_ += 4;
    v = little_ ? (b[0] | b[1] << 8 | b[2] << 16 | static_cast<uint32_t>(b[3]) << 24)
                : (b[3] | b[2] << 8 | b[1] << 16 | static_cast<uint32_t>(b[0]) << 24);
    return Status::Ok();
  }
  /// A count of items of at least `min_item_bytes` each, checked against the bytes left.
  Status Count(uint32_t& count, size_t min_item_bytes) {
    CHSYNC_RETURN_IF_ERROR(U32(count));
    if (count > remaining() / min_item_bytes) {
      return Fail("count " + std::to_string(count) + " exceeds the " + std::to_string(remaining()) +
                  " bytes left");
    }
    return Status::Ok();
  }
  Status Double(std::string& out) {
    if (remaining() < 8) return Fail("truncated");
    uint8_t b[8];
    std::memcpy(b, bytes_.data() + pos_, 8);
    pos_ += 8;
    if (!little_) std::reverse(b, b + 8);
    double d;
    std::memcpy(&d, b, 8);
    char buf[32];
    auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), d);
    out.append(buf, ptr);
    return Status::Ok();
  }
  Status Point(std::string& out) {
    CHSYNC_RETURN_IF_ERROR(Double(out));
    out += ' ';
    return Double(out);
  }
  Status PointList(std::string& out) {
    uint32_t count = 0;
    CHSYNC_RETURN_IF_ERROR(Count(count, 16));
    if (count == 0) {
      out += " EMPTY";
      return Status::Ok();
    }
    out += '(';
    for (uint32_t i = 0; i < count; ++i) {
      if (i > 0) out += ',';
      CHSYNC_RETURN_IF_ERROR(Point(out));
    }
    out += ')';
    return Status::Ok();
  }
  Status Rings(std::string& out) {
    uint32_t count = 0;
    CHSYNC_RETURN_IF_ERROR(Count(count, 4));
    if (count == 0) {
      out += " EMPTY";
      return Status::Ok();
    }
    out += '(';
    for (uint32_t i = 0; i < count; ++i) {
      if (i > 0) out += ',';
      CHSYNC_RETURN_IF_ERROR(PointList(out));
    }
    out += ')';
    return Status::Ok();
  }

  std::string_view bytes_;
  size_t pos_ = 0;
  bool little_ = true;
};

/// `text` as a JSON string: quoted, with `"`, `\` and control characters escaped.
void AppendJsonString(std::string_view text, std::string& out) {
  out += '"';
  for (char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (byte < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof(escape), "\\u%04x", byte);
      out += escape;
    } else {
      out += ch;
    }
  }
  out += '"';
}

/// Copies a JSON document (RFC 8259) for ClickHouse's JSON type, which refuses what MySQL and
/// MariaDB keep: a number that is an integer outside Int64/UInt64 or a float beyond Float64 is
/// written as a string of its digits ("123456789012345678901234567890"); everything else is copied
/// byte for byte. Document() is false for text that is not strict JSON (MariaDB's json_valid is
/// laxer), a lone UTF-16 surrogate escape (which ClickHouse refuses) or nesting deeper than
/// ClickHouse reads.
class JsonRewriter {
 public:
  explicit JsonRewriter(std::string_view text) : text_(text) {}

  bool Document(std::string& out) {
    SkipSpace();
    is_object_ = pos_ < text_.size() && text_[pos_] == '{';
    if (!Value(out, 0)) return false;
    SkipSpace();
    return pos_ == text_.size();
  }
  bool is_object() const { return is_object_; }

 private:
  /// ClickHouse's input_format_json_max_depth is 1000; MySQL allows 100 levels, MariaDB 32.
  static constexpr int kMaxDepth = 900;

  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool Literal(std::string_view word, std::string& out) {
    if (text_.substr(pos_, word.size()) != word) return false;
    out += word;
    pos_ += word.size();
    return true;
  }
  bool Value(std::string& out, int depth) {
    if (depth > kMaxDepth || pos_ >= text_.size()) return false;
    switch (text_[pos_]) {
      case '{': return Container(out, depth, '}', true);
      case '[': return Container(out, depth, ']', false);
      case '"': return String(out);
      case 't': return Literal("true", out);
      case 'f': return Literal("false", out);
      case 'n': return Literal("null", out);
      default: return Number(out);
    }
  }
  bool Container(std::string& out, int depth, char close, bool object) {
    out += text_[pos_++];
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == close) {
      out += text_[pos_++];
      return true;
    }
    while (true) {
      SkipSpace();
      if (object) {
        if (pos_ >= text_.size() || text_[pos_] != '"' || !String(out)) return false;
        SkipSpace();
        if (pos_ >= text_.size() || text_[pos_] != ':') return false;
        out += text_[pos_++];
        SkipSpace();
      }
      if (!Value(out, depth + 1)) return false;
      SkipSpace();
      if (pos_ >= text_.size()) return false;
      const char next = text_[pos_++];
      out += next;
      if (next == close) return true;
      if (next != ',') return false;
    }
  }
  /// Four hex digits at `at`, or -1.
  int Hex4(size_t at) const {
    if (at > text_.size() || text_.size() - at < 4) return -1;
    int value = 0;
    for (size_t i = at; i < at + 4; ++i) {
      const char ch = text_[i];
      int digit = 0;
      if (ch >= '0' && ch <= '9')
        digit = ch - '0';
      else if (ch >= 'a' && ch <= 'f')
        digit = ch - 'a' + 10;
      else if (ch >= 'A' && ch <= 'F')
        digit = ch - 'A' + 10;
      else
        return -1;
      value = value * 16 + digit;
    }
    return value;
  }
  bool String(std::string& out) {
    const size_t start = pos_++;
    while (pos_ < text_.size()) {
      const char ch = text_[pos_];
      if (ch == '"') {
        ++pos_;
        out += text_.substr(start, pos_ - start);
        return true;
      }
      if (static_cast<unsigned char>(ch) < 0x20) return false;
      if (ch != '\\') {
        ++pos_;
        continue;
      }
      if (pos_ + 1 >= text_.size()) return false;
      const char escaped = text_[pos_ + 1];
      if (escaped != 'u') {
        if (std::string_view("\"\\/bfnrt").find(escaped) == std::string_view::npos) return false;
        pos_ += 2;
        continue;
      }
      const int unit = Hex4(pos_ + 2);
      if (unit < 0 || (unit >= 0xDC00 && unit <= 0xDFFF)) return false;
      pos_ += 6;
      if (unit >= 0xD800 && unit <= 0xDBFF) {  // a high surrogate: a low one must follow
        if (text_.substr(pos_, 2) != "\\u") return false;
        const int low = Hex4(pos_ + 2);
        if (low < 0xDC00 || low > 0xDFFF) return false;
        pos_ += 6;
      }
    }
    return false;
  }
  bool Digits() {
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    return pos_ > start;
  }
  bool Number(std::string& out) {
    const size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '0') {
      ++pos_;
    } else if (!Digits()) {
      return false;
    }
    bool integer = true;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      if (!Digits()) return false;
      integer = false;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (!Digits()) return false;
      integer = false;
    }
    const std::string_view number = text_.substr(start, pos_ - start);
    bool fits = true;
    if (integer) {
      const char* end = number.data() + number.size();
      if (number[0] == '-') {
        int64_t v = 0;
        fits = std::from_chars(number.data(), end, v).ec == std::errc();
      } else {
        uint64_t v = 0;
        fits = std::from_chars(number.data(), end, v).ec == std::errc();
      }
    } else {
      const std::string copy(number);  // strtod needs a terminated string
      errno = 0;
      const double v = std::strtod(copy.c_str(), nullptr);
      fits = !(errno == ERANGE && std::isinf(v));
    }
    if (fits) {
      out += number;
    } else {
      out += '"';
      out += number;
      out += '"';
    }
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
  bool is_object_ = false;
};

/// Date and DateTime are used only for servers without Date32/DateTime64, whose date tables end
/// in 2105 (18.16 prints 2106-02-08 and later as 1970 dates): 2105-12-31 is the last safe day.
const int64_t kLastOldDay = DaysFromCivil(2105, 12, 31);

}  // namespace

std::string JsonObjectText(std::string_view document) {
  JsonRewriter rewriter(document);
  std::string value;
  if (!rewriter.Document(value)) {
    // Not JSON that ClickHouse reads (MariaDB's json_valid lets `1.`, `-` and `"\x"` pass): the
    // text itself, as a string.
    std::string out = "{\"_text\":";
    AppendJsonString(document, out);
    out += '}';
    return out;
  }
  if (rewriter.is_object()) return value;
  return "{\"_value\":" + value + "}";
}

Result<std::string> GeometryToWkt(std::string_view srid_and_wkb) {
  if (srid_and_wkb.size() < 4) return Bad("GEOMETRY value shorter than its 4-byte SRID");
  WkbReader reader(srid_and_wkb.substr(4));
  std::string out;
  CHSYNC_RETURN_IF_ERROR(reader.Geometry(out, 0, true));
  if (reader.remaining() != 0) {
    return Bad("GEOMETRY value: " + std::to_string(reader.remaining()) +
               " bytes left after the geometry at WKB byte " + std::to_string(reader.position()));
  }
  return out;
}

namespace {

/// "YYYY-MM-DD HH:MM:SS[.f…]" with `fsp` fraction digits of a DATETIME (as written) or a TIMESTAMP
/// (its UTC instant); zero dates as 1970-01-01 00:00:00, as DateTime64 shows them.
Result<std::string> DateTimeText(const MappedType& column, const Cell& cell) {
  int64_t year = 1970;
  uint32_t month = 1, day = 1, hour = 0, minute = 0, second = 0, micro = 0;
  if (const auto* dt = std::get_if<DateTimeCell>(&cell)) {
    // Validates the parts (EpochOf's checks), then prints them as written.
    auto checked = EpochOf(column, cell);
    if (!checked.ok()) return checked.error();
    if (!IsZeroDate(dt->year, dt->month, dt->day)) {
      year = dt->year;
      month = dt->month;
      day = dt->day;
      hour = dt->hour;
      minute = dt->minute;
      second = dt->second;
      micro = dt->microsecond;
    }
  } else if (const auto* e = std::get_if<EpochCell>(&cell)) {
    if (e->microsecond > 999999)
      return Bad("microsecond part " + std::to_string(e->microsecond) + " out of range");
    // TIMESTAMP's range is 1970..2038; anything within years 0..9999 prints the same way.
    static constexpr int64_t kFirst = DaysFromCivil(0, 1, 1) * 86400;
    static constexpr int64_t kLast = DaysFromCivil(9999, 12, 31) * 86400 + 86399;
    if (e->seconds < kFirst || e->seconds > kLast) {
      return Bad("timestamp " + std::to_string(e->seconds) + " is outside years 0000..9999");
    }
    int64_t days = e->seconds >= 0 ? e->seconds / 86400 : -((-e->seconds + 86399) / 86400);
    int64_t in_day = e->seconds - days * 86400;
    CivilDate date = CivilFromDays(days);
    year = date.year;
    month = date.month;
    day = date.day;
    hour = static_cast<uint32_t>(in_day / 3600);
    minute = static_cast<uint32_t>(in_day / 60 % 60);
    second = static_cast<uint32_t>(in_day % 60);
    micro = e->microsecond;
  } else {
    return WrongInput(column, cell);
  }
  char text[40];
  int n = std::snprintf(text, sizeof(text), "%04d-%02u-%02u %02u:%02u:%02u", static_cast<int>(year), month,
                        day, hour, minute, second);
  std::string s(text, static_cast<size_t>(n));
  uint32_t fsp = std::min<uint32_t>(column.scale, 6);
  if (fsp > 0) {
    char frac[8];
    std::snprintf(frac, sizeof(frac), "%06u", micro);
    s += '.';
    s.append(frac, fsp);
  }
  return s;
}

}  // namespace

Status EncodeCell(const MappedType& column, const Cell& cell, std::string& out, ClampCounts* clamped) {
  const bool is_null = std::holds_alternative<NullCell>(cell);
  if (column.encoding == Encoding::kFloat32Array && is_null) {
    PutVarUInt(0, out);
    return Status::Ok();
  }
  if (column.nullable) {
    out.push_back(is_null ? 1 : 0);
    if (is_null) return Status::Ok();
  } else if (is_null) {
    return Bad("NULL for the non-Nullable " + column.type + " column");
  }
  switch (column.encoding) {
    case Encoding::kInt8: return PutInteger<int8_t>(column, cell, out);
    case Encoding::kInt16: return PutInteger<int16_t>(column, cell, out);
    case Encoding::kInt32: return PutInteger<int32_t>(column, cell, out);
    case Encoding::kInt64: return PutInteger<int64_t>(column, cell, out);
    case Encoding::kUInt8: return PutInteger<uint8_t>(column, cell, out);
    case Encoding::kUInt16: return PutInteger<uint16_t>(column, cell, out);
    case Encoding::kUInt32: return PutInteger<uint32_t>(column, cell, out);
    case Encoding::kUInt64: return PutInteger<uint64_t>(column, cell, out);
    case Encoding::kFloat32:
    case Encoding::kFloat64: {
      const auto* d = std::get_if<double>(&cell);
      if (d == nullptr) return WrongInput(column, cell);
      if (column.encoding == Encoding::kFloat32) {
        PutFixed(static_cast<float>(*d), out);
      } else {
        PutFixed(*d, out);
      }
      return Status::Ok();
    }
    case Encoding::kDecimal32: return PutDecimal(column, cell, 4, out);
    case Encoding::kDecimal64: return PutDecimal(column, cell, 8, out);
    case Encoding::kDecimal128: return PutDecimal(column, cell, 16, out);
    case Encoding::kDecimal256: return PutDecimal(column, cell, 32, out);
    case Encoding::kDecimalText: {
      const auto* d = std::get_if<DecimalCell>(&cell);
      if (d == nullptr) return WrongInput(column, cell);
      Wide check;
      CHSYNC_RETURN_IF_ERROR(ParseDecimal(d->text, column.precision, column.scale, check));
      PutString(d->text, out);
      return Status::Ok();
    }
    case Encoding::kDate:
    case Encoding::kDate32: {
      const auto* d = std::get_if<DateCell>(&cell);
      if (d == nullptr) return WrongInput(column, cell);
      CHSYNC_RETURN_IF_ERROR(CheckDateParts(d->year, d->month, d->day));
      int64_t days = IsZeroDate(d->year, d->month, d->day) ? 0 : DaysFromCivil(d->year, d->month, d->day);
      const int64_t given = days;
      if (column.encoding == Encoding::kDate) {
        days = std::clamp<int64_t>(days, 0, kLastOldDay);
        PutFixed(static_cast<uint16_t>(days), out);
      } else {
        static const int64_t kMin = DaysFromCivil(1900, 1, 1);
        static const int64_t kMax = DaysFromCivil(2299, 12, 31);
        days = std::clamp<int64_t>(days, kMin, kMax);
        PutFixed(static_cast<int32_t>(days), out);
      }
      if (days != given && clamped != nullptr) ++clamped->dates;
      return Status::Ok();
    }
    case Encoding::kDateTime: {
      CHSYNC_ASSIGN_OR_RETURN(auto epoch, EpochOf(column, cell));
      int64_t seconds = std::clamp<int64_t>(epoch.first, 0, kLastOldDay * 86400 + 86399);
      if (seconds != epoch.first && clamped != nullptr) ++clamped->datetimes;
      PutFixed(static_cast<uint32_t>(seconds), out);
      return Status::Ok();
    }
    case Encoding::kDateTimeText: {
      CHSYNC_ASSIGN_OR_RETURN(std::string text, DateTimeText(column, cell));
      PutString(text, out);
      return Status::Ok();
    }
    case Encoding::kDateTime64: {
      CHSYNC_ASSIGN_OR_RETURN(auto epoch, EpochOf(column, cell));
      if (epoch.second > 999999)
        return Bad("microsecond part " + std::to_string(epoch.second) + " out of range");
      uint32_t fsp = std::min<uint32_t>(column.scale, 6);
      int64_t ticks = epoch.first * Pow10(fsp) + static_cast<int64_t>(epoch.second) / Pow10(6 - fsp);
      PutFixed(ticks, out);
      return Status::Ok();
    }
    case Encoding::kTimeText: {
      CHSYNC_ASSIGN_OR_RETURN(std::string text, TimeText(column, cell));
      PutString(text, out);
      return Status::Ok();
    }
    case Encoding::kString: {
      CHSYNC_ASSIGN_OR_RETURN(std::string_view bytes, BytesOf(column, cell, 0));
      PutString(bytes, out);
      return Status::Ok();
    }
    case Encoding::kJson: {
      CHSYNC_ASSIGN_OR_RETURN(std::string_view bytes, BytesOf(column, cell, 0));
      PutString(JsonObjectText(bytes), out);
      return Status::Ok();
    }
    case Encoding::kEnum8:
    case Encoding::kEnum16: {
      const auto* index = std::get_if<uint64_t>(&cell);
      if (index == nullptr) return WrongInput(column, cell);
      if (*index > column.labels.size()) {
        return Bad("ENUM index " + std::to_string(*index) + " beyond the " +
                   std::to_string(column.labels.size()) + " labels of " + column.type);
      }
      uint64_t value = *index;
      if (value == 0) {
        // Index 0 is MySQL's empty error value; a declared '' label takes its place.
        for (size_t i = 0; i < column.labels.size(); ++i) {
          if (column.labels[i].empty()) value = i + 1;
        }
      }
      if (column.encoding == Encoding::kEnum8) {
        PutFixed(static_cast<int8_t>(value), out);
      } else {
        PutFixed(static_cast<int16_t>(value), out);
      }
      return Status::Ok();
    }
    case Encoding::kSetText: {
      const auto* bits = std::get_if<uint64_t>(&cell);
      if (bits == nullptr) return WrongInput(column, cell);
      if (column.labels.size() < 64 && (*bits >> column.labels.size()) != 0) {
        return Bad("SET bitmap has bits beyond its " + std::to_string(column.labels.size()) + " members");
      }
      std::string text;
      for (size_t i = 0; i < column.labels.size() && i < 64; ++i) {
        if ((*bits >> i) & 1) {
          if (!text.empty()) text += ',';
          text += column.labels[i];
        }
      }
      PutString(text, out);
      return Status::Ok();
    }
    case Encoding::kWkt: {
      CHSYNC_ASSIGN_OR_RETURN(std::string_view bytes, BytesOf(column, cell, 0));
      CHSYNC_ASSIGN_OR_RETURN(std::string wkt, GeometryToWkt(bytes));
      PutString(wkt, out);
      return Status::Ok();
    }
    case Encoding::kFloat32Array: {
      CHSYNC_ASSIGN_OR_RETURN(std::string_view bytes, BytesOf(column, cell, 0));
      if (bytes.size() % 4 != 0) {
        return Bad("VECTOR value of " + std::to_string(bytes.size()) +
                   " bytes is not a whole number of floats");
      }
      PutVarUInt(bytes.size() / 4, out);
      out.append(bytes);
      return Status::Ok();
    }
    case Encoding::kUuid: {
      CHSYNC_ASSIGN_OR_RETURN(std::string_view bytes, BytesOf(column, cell, 16));
      // ClickHouse's UUID is two little-endian UInt64 halves, the high half (bytes 0–7) first.
      for (int i = 7; i >= 0; --i) out.push_back(bytes[i]);
      for (int i = 15; i >= 8; --i) out.push_back(bytes[i]);
      return Status::Ok();
    }
    case Encoding::kIPv4: {
      CHSYNC_ASSIGN_OR_RETURN(std::string_view bytes, BytesOf(column, cell, 4));
      for (int i = 3; i >= 0; --i) out.push_back(bytes[i]);
      return Status::Ok();
    }
    case Encoding::kIPv6: {
      CHSYNC_ASSIGN_OR_RETURN(std::string_view bytes, BytesOf(column, cell, 16));
      out.append(bytes);
      return Status::Ok();
    }
    case Encoding::kIPv4Text:
    case Encoding::kIPv6Text: {
      const bool v4 = column.encoding == Encoding::kIPv4Text;
      CHSYNC_ASSIGN_OR_RETURN(std::string_view bytes, BytesOf(column, cell, v4 ? 4 : 16));
      char text[INET6_ADDRSTRLEN];
      unsigned char raw[16];
      std::memcpy(raw, bytes.data(), bytes.size());
      if (inet_ntop(v4 ? AF_INET : AF_INET6, raw, text, sizeof(text)) == nullptr)
        return Bad("invalid address");
      PutString(text, out);
      return Status::Ok();
    }
  }
  return Bad("unhandled encoding");
}

Status RowBinaryEncoder::AppendRow(std::span<const Cell> row) {
  if (row.size() != columns_.size()) {
    return Error(ErrorKind::kInternal, "row of " + std::to_string(row.size()) + " values for " +
                                           std::to_string(columns_.size()) + " columns");
  }
  const size_t mark = data_.size();
  ClampCounts clamped;
  for (size_t i = 0; i < row.size(); ++i) {
    Status s = EncodeCell(columns_[i], row[i], data_, &clamped);
    if (!s.ok()) {
      data_.resize(mark);
      s.error().AddContext("column " + std::to_string(i + 1) + " (" + columns_[i].type + ")");
      return s;
    }
  }
  ++rows_;
  clamped_ += clamped;
  return Status::Ok();
}

}  // namespace chsync::clickhouse
