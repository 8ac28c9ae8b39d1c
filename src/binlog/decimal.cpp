#include "binlog/decimal.h"

#include <cstdint>

namespace chsync::binlog {
namespace {

constexpr unsigned kDigitsPerGroup = 9;
constexpr unsigned kBytesForDigits[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
constexpr uint32_t kPow10[10] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};

uint32_t TakeBE(const uint8_t* p, unsigned n) {
  uint32_t v = 0;
  for (unsigned i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

void AppendPadded(uint32_t v, unsigned width, std::string& out) {
  char buf[10];
  for (unsigned i = width; i > 0; --i) {
    buf[i - 1] = static_cast<char>('0' + v % 10);
    v /= 10;
  }
  out.append(buf, width);
}

}  // namespace

size_t DecimalBinarySize(unsigned precision, unsigned scale) {
  if (precision == 0 || precision > 65 || scale > 30 || scale > precision) return 0;
  unsigned intg = precision - scale;
  return (intg / kDigitsPerGroup) * 4 + kBytesForDigits[intg % kDigitsPerGroup] +
         (scale / kDigitsPerGroup) * 4 + kBytesForDigits[scale % kDigitsPerGroup];
}

Status ReadDecimal(ByteReader& r, unsigned precision, unsigned scale, std::string& out) {
  size_t size = DecimalBinarySize(precision, scale);
  if (size == 0) {
    return r.Corrupt("invalid DECIMAL(" + std::to_string(precision) + "," + std::to_string(scale) +
                     ") metadata");
  }
  uint64_t start = r.offset();
  CHSYNC_ASSIGN_OR_RETURN(std::string_view raw, r.ReadBytes(size, "DECIMAL value"));
  uint8_t b[32];
  for (size_t i = 0; i < size; ++i) b[i] = static_cast<uint8_t>(raw[i]);
  bool negative = (b[0] & 0x80) == 0;
  b[0] ^= 0x80;
  if (negative) {
    for (size_t i = 0; i < size; ++i) b[i] = static_cast<uint8_t>(~b[i]);
  }
  unsigned intg = precision - scale;
  unsigned intg0 = intg / kDigitsPerGroup, intg0x = intg % kDigitsPerGroup;
  unsigned frac0 = scale / kDigitsPerGroup, frac0x = scale % kDigitsPerGroup;
  auto bad = [&]() {
    return Error(ErrorKind::kCorrupt, "invalid DECIMAL digits at offset " + std::to_string(start));
  };
  size_t pos = 0;
  if (negative) out.push_back('-');
  size_t digits_start = out.size();
  bool leading = true;
  auto emit_int = [&](uint32_t v, unsigned width) {
    if (leading) {
      if (v == 0) return;
      out.append(std::to_string(v));
      leading = false;
    } else {
      AppendPadded(v, width, out);
    }
  };
  if (intg0x > 0) {
    unsigned n = kBytesForDigits[intg0x];
    uint32_t v = TakeBE(b + pos, n);
    pos += n;
    if (v >= kPow10[intg0x]) return bad();
    emit_int(v, intg0x);
  }
  for (unsigned g = 0; g < intg0; ++g) {
    uint32_t v = TakeBE(b + pos, 4);
    pos += 4;
    if (v >= kPow10[9]) return bad();
    emit_int(v, kDigitsPerGroup);
  }
  if (out.size() == digits_start) out.push_back('0');
  if (scale > 0) {
    out.push_back('.');
    for (unsigned g = 0; g < frac0; ++g) {
      uint32_t v = TakeBE(b + pos, 4);
      pos += 4;
      if (v >= kPow10[9]) return bad();
      AppendPadded(v, kDigitsPerGroup, out);
    }
    if (frac0x > 0) {
      unsigned n = kBytesForDigits[frac0x];
      uint32_t v = TakeBE(b + pos, n);
      if (v >= kPow10[frac0x]) return bad();
      AppendPadded(v, frac0x, out);
    }
  }
  return Status::Ok();
}

}  // namespace chsync::binlog
