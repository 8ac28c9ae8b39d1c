#include "binlog/value.h"

#include <charconv>
#include <cstring>
#include <iterator>

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
// Writes all six digits (callers have the room) and keeps `fsp` of them.
char* Fraction(char* p, uint32_t micros, uint8_t fsp) {
  if (fsp == 0) return p;
  if (fsp > 6) fsp = 6;
  size_t v = micros % 1000000;
  *p++ = '.';
  std::memcpy(p, kPairs + 2 * (v / 10000), 2);
  std::memcpy(p + 2, kPairs + 2 * (v / 100 % 100), 2);
  std::memcpy(p + 4, kPairs + 2 * (v % 100), 2);
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

constexpr double kPow10[] = {1e0, 1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,
                             1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17};

// Decimal digits of `v`, by comparisons rather than divisions.
int DigitCount(uint64_t v) {
  int n = 1;
  for (uint64_t bound = 10; n < 20 && v >= bound; bound *= 10) ++n;
  return n;
}

// `v` (below 10^width) in exactly `width` digits, zero-padded.
char* ExactDigits(char* p, uint64_t v, int width) {
  char* q = p + width;
  while (q - p >= 2) {
    q -= 2;
    std::memcpy(q, kPairs + 2 * (v % 100), 2);
    v /= 100;
  }
  if (q > p) *--q = static_cast<char>('0' + v);
  return p + width;
}

// std::to_chars(double)'s text for the doubles that are short decimals in fixed notation
// (0.501, 1234.25, 17), without its general shortest-digits search; nullptr for the rest.
//
// With the largest K (at most 17) that keeps |d| * 10^K below 2^50, 10^-K is more than four
// units in the last place of d: at most one K-decimal reads back as d, and m = round(|d| * 10^K)
// finds it when there is one (m / 10^K == |d|: IEEE division rounds correctly, as parsing
// m·10^-K does). Every shorter decimal that reads back as d is that same number, so m without
// its trailing zeros (k ≤ K decimals) gives exactly the shortest round-trip digits. Fixed
// notation is then used unless scientific would be shorter (to_chars' rule), left to to_chars.
char* ShortFixedDouble(char* p, double d) {
  double a = d < 0 ? -d : d;
  if (!(a >= 1e-5 && a < 1e15)) return nullptr;  // also NaN, infinities and zeros
  int k = static_cast<int>(std::size(kPow10)) - 1;
  while (a * kPow10[k] >= 0x1p50) --k;  // ends by k = 0: a < 1e15 < 2^50
  // Below 2^52 adding 0.5 is exact; a tie is no concern (neither neighbour would read back as d).
  auto m = static_cast<uint64_t>(a * kPow10[k] + 0.5);  // NOLINT(bugprone-incorrect-roundings)
  if (static_cast<double>(m) / kPow10[k] != a) return nullptr;
  if (k >= 8 && m % 100000000 == 0) {
    m /= 100000000;
    k -= 8;
  }
  if (k >= 4 && m % 10000 == 0) {
    m /= 10000;
    k -= 4;
  }
  if (k >= 2 && m % 100 == 0) {
    m /= 100;
    k -= 2;
  }
  if (k >= 1 && m % 10 == 0) {
    m /= 10;
    k -= 1;
  }
  // The stripping above leaves at most one trailing zero per step size; finish one at a time.
  while (k > 0 && m % 10 == 0) {
    m /= 10;
    --k;
  }
  int digits = DigitCount(m);
  int significant = digits;
  if (k == 0) {
    for (uint64_t t = m; t % 10 == 0; t /= 10) --significant;
  }
  int fixed = k == 0 ? digits : digits > k ? digits + 1 : k + 2;
  int scientific = significant + (significant > 1 ? 1 : 0) + 4;
  if (scientific < fixed) return nullptr;
  if (d < 0) *p++ = '-';
  if (k == 0) return ExactDigits(p, m, digits);
  auto pow = static_cast<uint64_t>(kPow10[k]);
  p = ExactDigits(p, m / pow, digits > k ? digits - k : 1);
  *p++ = '.';
  return ExactDigits(p, m % pow, k);
}

char* Number(char* p, double v) {
  if (char* end = ShortFixedDouble(p, v)) return end;
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
        // Rows of one event mostly share their day: remember the last one converted.
        static thread_local int64_t cached_days = -1;
        static thread_local int cached_y = 0;
        static thread_local unsigned cached_m = 0, cached_d = 0;
        if (secs / 86400 != cached_days) {
          cached_days = secs / 86400;
          CivilFromDays(cached_days, cached_y, cached_m, cached_d);
        }
        int y = cached_y;
        unsigned m = cached_m, d = cached_d;
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
