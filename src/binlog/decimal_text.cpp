#include "binlog/decimal_text.h"

#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>

#include "binlog/decimal.h"

namespace chsync::binlog {
namespace {

constexpr unsigned kDigitsPerGroup = 9;
constexpr unsigned kBytesForDigits[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
constexpr uint32_t kPow10[10] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};
/// Sign, 65 digits, the point and a leading "0".
constexpr size_t kMaxText = 72;

// The `n` (1..4) bytes at `p` as a big-endian integer; four bytes are readable at `p`.
uint32_t TakeBE(const uint8_t* p, unsigned n) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap32(v);
  return v >> (32 - 8 * n);
}

constexpr char kPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// The two digits of `v` (below 100).
const char* Pair(uint32_t v) {
  return kPairs + 2 * static_cast<size_t>(v);
}

// `v` (below 10^width) in exactly `width` digits, zero-padded.
char* Padded(char* p, uint32_t v, unsigned width) {
  char* q = p + width;
  for (unsigned left = width; left >= 2; left -= 2) {
    q -= 2;
    std::memcpy(q, Pair(v % 100), 2);
    v /= 100;
  }
  if (q > p) *--q = static_cast<char>('0' + v);
  return p + width;
}

}  // namespace

Result<std::string_view> ReadDecimalText(ByteReader& r, unsigned precision, unsigned scale,
                                         TextArena& arena) {
  size_t size = DecimalBinarySize(precision, scale);
  if (size == 0 || size > r.remaining()) {
    // The error ReadDecimal reports.
    std::string text;
    CHSYNC_RETURN_IF_ERROR(ReadDecimal(r, precision, scale, text));
    return arena.Copy(text);
  }
  // The value (at most 30 bytes) with its sign bit flipped and, when negative, its bits
  // inverted, in a buffer long enough for TakeBE to read four bytes anywhere in the value (what
  // follows the value is shifted out).
  uint8_t b[40] = {};
  const uint8_t* raw = r.current();
  bool negative = (raw[0] & 0x80) == 0;
  if (r.remaining() >= 32) {
    std::memcpy(b, raw, 32);
  } else {
    std::memcpy(b, raw, size);
  }
  uint64_t flip = negative ? ~uint64_t{0} : 0;
  for (size_t i = 0; i < 32; i += 8) {
    uint64_t w;
    std::memcpy(&w, b + i, 8);
    w ^= flip;
    std::memcpy(b + i, &w, 8);
  }
  b[0] ^= 0x80;
  unsigned intg = precision - scale;
  unsigned intg0 = intg / kDigitsPerGroup, intg0x = intg % kDigitsPerGroup;
  unsigned frac0 = scale / kDigitsPerGroup, frac0x = scale % kDigitsPerGroup;
  char* start = arena.Allocate(kMaxText);
  char* p = start;
  if (negative) *p++ = '-';
  char* digits = p;
  size_t pos = 0;
  bool valid = true;
  auto emit_int = [&](uint32_t v, unsigned width) {
    if (p == digits) {
      if (v != 0) p = std::to_chars(p, p + 10, v).ptr;
    } else {
      p = Padded(p, v, width);
    }
  };
  if (intg0x > 0) {
    unsigned n = kBytesForDigits[intg0x];
    uint32_t v = TakeBE(b + pos, n);
    pos += n;
    valid &= v < kPow10[intg0x];
    emit_int(v, intg0x);
  }
  for (unsigned g = 0; g < intg0; ++g) {
    uint32_t v = TakeBE(b + pos, 4);
    pos += 4;
    valid &= v < kPow10[9];
    emit_int(v, kDigitsPerGroup);
  }
  if (p == digits) *p++ = '0';
  if (scale > 0) {
    *p++ = '.';
    for (unsigned g = 0; g < frac0; ++g) {
      uint32_t v = TakeBE(b + pos, 4);
      pos += 4;
      valid &= v < kPow10[9];
      p = Padded(p, v, kDigitsPerGroup);
    }
    if (frac0x > 0) {
      uint32_t v = TakeBE(b + pos, kBytesForDigits[frac0x]);
      valid &= v < kPow10[frac0x];
      p = Padded(p, v, frac0x);
    }
  }
  if (!valid) {
    // Digits out of range (a corrupt value): ReadDecimal's error.
    arena.Shrink(start, 0);
    std::string text;
    CHSYNC_RETURN_IF_ERROR(ReadDecimal(r, precision, scale, text));
    return arena.Copy(text);
  }
  arena.Shrink(start, static_cast<size_t>(p - start));
  CHSYNC_RETURN_IF_ERROR(r.Skip(size, "DECIMAL value"));
  return std::string_view(start, static_cast<size_t>(p - start));
}

}  // namespace chsync::binlog
