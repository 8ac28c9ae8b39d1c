#include "binlog/value.h"

#include <charconv>
#include <cstring>

namespace chsync::binlog {
namespace {

constexpr char kPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// Writes `v` in decimal with at least `width` digits, zero-padded (printf's %0<width>u).
inline char* Digits(char* p, uint64_t v, int width) {
  if (width == 2 && v < 100) {
    std::memcpy(p, kPairs + 2 * v, 2);
    return p + 2;
  }
  if (width == 4 && v < 10000) {
    std::memcpy(p, kPairs + 2 * (v / 100), 2);
    std::memcpy(p + 2, kPairs + 2 * (v % 100), 2);
    return p + 4;
  }
  int n = 1;
  for (uint64_t t = v; t >= 10; t /= 10) ++n;
  if (n < width) n = width;
  char* end = p + n;
  char* q = end;
  while (v >= 10) {
    q -= 2;
    std::memcpy(q, kPairs + 2 * (v % 100), 2);
    v /= 100;
  }
  if (q > p) *--q = static_cast<char>('0' + v);  // the last digit, or a zero of the padding
  while (q > p) *--q = '0';
  return end;
}

// '.' and the first `fsp` (at most 6) of the six digits of `micros`; nothing when fsp is 0.
char* Fraction(char* p, uint32_t micros, uint8_t fsp) {
  if (fsp == 0) return p;
  if (fsp > 6) fsp = 6;
  size_t v = micros % 1000000;
  char six[8];
  std::memcpy(six, kPairs + 2 * (v / 10000), 2);
  std::memcpy(six + 2, kPairs + 2 * (v / 100 % 100), 2);
  std::memcpy(six + 4, kPairs + 2 * (v % 100), 2);
  *p++ = '.';
  std::memcpy(p, six, fsp);
  return p + fsp;
}

// "hh:mm:ss" with at least two digits each.
char* Clock(char* p, uint64_t hour, uint64_t minute, uint64_t second) {
  p = Digits(p, hour, 2);
  *p++ = ':';
  p = Digits(p, minute, 2);
  *p++ = ':';
  return Digits(p, second, 2);
}

// "yyyy-mm-dd" with at least four, two and two digits.
char* Day(char* p, uint64_t year, uint64_t month, uint64_t day) {
  p = Digits(p, year, 4);
  *p++ = '-';
  p = Digits(p, month, 2);
  *p++ = '-';
  return Digits(p, day, 2);
}

// Days since 1970-01-01 to a civil date (proleptic Gregorian).
void CivilFromDays(int64_t z, int& y, unsigned& m, unsigned& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t yy = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = static_cast<int>(yy + (m <= 2));
}

template <typename T>
void AppendNumber(T v, std::string& out) {
  char buf[40];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

template <typename T>
char* Number(char* p, T v) {
  return std::to_chars(p, p + kMaxFixedValueText, v).ptr;
}

}  // namespace

bool IsFixedValueKind(ValueKind kind) {
  switch (kind) {
    case ValueKind::kNull:
    case ValueKind::kInt:
    case ValueKind::kUint:
    case ValueKind::kBit:
    case ValueKind::kEnum:
    case ValueKind::kSet:
    case ValueKind::kFloat:
    case ValueKind::kDouble:
    case ValueKind::kYear:
    case ValueKind::kDate:
    case ValueKind::kTime:
    case ValueKind::kDateTime:
    case ValueKind::kTimestamp: return true;
    default: return false;
  }
}

char* WriteFixedValueText(const Value& v, char* p) {
  switch (v.kind) {
    case ValueKind::kNull: {
      static constexpr std::string_view kNull = "NULL";
      std::memcpy(p, kNull.data(), kNull.size());
      return p + kNull.size();
    }
    case ValueKind::kInt: return Number(p, v.i);
    case ValueKind::kUint:
    case ValueKind::kBit:
    case ValueKind::kEnum:
    case ValueKind::kSet: return Number(p, v.u);
    case ValueKind::kFloat: return Number(p, v.f);
    case ValueKind::kDouble: return Number(p, v.d);
    case ValueKind::kYear: return Digits(p, v.u, 4);
    case ValueKind::kDate: return Day(p, v.date.year, v.date.month, v.date.day);
    case ValueKind::kTime:
      if (v.time.negative) *p++ = '-';
      p = Clock(p, v.time.hour, v.time.minute, v.time.second);
      return Fraction(p, v.time.microsecond, v.fsp);
    case ValueKind::kDateTime: {
      const DateTime& t = v.datetime;
      p = Day(p, t.year, t.month, t.day);
      *p++ = ' ';
      p = Clock(p, t.hour, t.minute, t.second);
      return Fraction(p, t.microsecond, v.fsp);
    }
    case ValueKind::kTimestamp: {
      if (v.timestamp.seconds == 0 && v.timestamp.microsecond == 0) {
        static constexpr std::string_view kZero = "0000-00-00 00:00:00";
        std::memcpy(p, kZero.data(), kZero.size());
        p += kZero.size();
      } else {
        int64_t secs = v.timestamp.seconds;
        int y;
        unsigned m, d;
        CivilFromDays(secs / 86400, y, m, d);
        auto rem = static_cast<uint64_t>(secs % 86400);
        p = Day(p, static_cast<uint64_t>(y), m, d);
        *p++ = ' ';
        p = Clock(p, rem / 3600, rem / 60 % 60, rem % 60);
      }
      return Fraction(p, v.timestamp.microsecond, v.fsp);
    }
    default: return p;
  }
}

void AppendValueText(const Value& v, std::string& out) {
  if (IsFixedValueKind(v.kind)) {
    char buf[kMaxFixedValueText];
    out.append(buf, WriteFixedValueText(v, buf));
    return;
  }
  switch (v.kind) {
    case ValueKind::kDecimal:
    case ValueKind::kString:
    case ValueKind::kJson:
    case ValueKind::kJsonDiff:
    case ValueKind::kGeometry: out.append(v.text); return;
    case ValueKind::kVector: {
      out.push_back('[');
      for (size_t i = 0; i + 4 <= v.text.size(); i += 4) {
        if (i > 0) out.push_back(',');
        uint32_t bits = 0;
        for (size_t k = 0; k < 4; ++k) bits |= uint32_t{static_cast<uint8_t>(v.text[i + k])} << (8 * k);
        float f;
        std::memcpy(&f, &bits, 4);
        AppendNumber(f, out);
      }
      out.push_back(']');
      return;
    }
    default: return;
  }
}

}  // namespace chsync::binlog
