#include "binlog/compression.h"

#include <zlib.h>
#include <zstd.h>

#include <bit>
#include <cstring>
#include <string>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define CHSYNC_CRC32_PCLMUL 1
#else
#define CHSYNC_CRC32_PCLMUL 0
#endif

namespace chsync::binlog {
namespace {

Error CorruptAt(uint64_t offset, const std::string& what) {
  return Error(ErrorKind::kCorrupt, what + " at offset " + std::to_string(offset));
}

Result<std::string_view> Inflate(std::string_view src, uint64_t len, uint64_t offset, uint64_t max_size,
                                 TextArena& arena, std::string_view what) {
  if (len > max_size) {
    return CorruptAt(offset, std::string(what) + " declares " + std::to_string(len) +
                                 " uncompressed bytes, above the limit of " + std::to_string(max_size));
  }
  if (len == 0) return std::string_view();
  char* dst = arena.Allocate(len);
  uLongf dst_len = static_cast<uLongf>(len);
  int rc = uncompress(reinterpret_cast<Bytef*>(dst), &dst_len, reinterpret_cast<const Bytef*>(src.data()),
                      static_cast<uLong>(src.size()));
  if (rc != Z_OK || dst_len != len) {
    return CorruptAt(offset, std::string(what) + ": zlib data does not inflate to the declared " +
                                 std::to_string(len) + " bytes (zlib code " + std::to_string(rc) + ")");
  }
  return std::string_view(dst, len);
}

// Raw deflate (no zlib header), as MariaDB's COMPRESSED columns store it.
Result<std::string_view> InflateRaw(std::string_view src, uint64_t len, uint64_t offset, uint64_t max_size,
                                    TextArena& arena) {
  if (len > max_size) {
    return CorruptAt(offset, "compressed column declares " + std::to_string(len) +
                                 " uncompressed bytes, above the limit of " + std::to_string(max_size));
  }
  if (len == 0) return std::string_view();
  char* dst = arena.Allocate(len);
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) return CorruptAt(offset, "zlib initialisation failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(src.data()));
  zs.avail_in = static_cast<uInt>(src.size());
  zs.next_out = reinterpret_cast<Bytef*>(dst);
  zs.avail_out = static_cast<uInt>(len);
  int rc = inflate(&zs, Z_FINISH);
  uint64_t got = zs.total_out;
  inflateEnd(&zs);
  if (rc != Z_STREAM_END || got != len) {
    return CorruptAt(offset, "compressed column: deflate data does not inflate to the declared " +
                                 std::to_string(len) + " bytes (zlib code " + std::to_string(rc) + ")");
  }
  return std::string_view(dst, len);
}

// CRC32 (the zlib/IEEE polynomial, bit-reflected) eight bytes at a time ("slicing-by-8"): table k
// holds the CRC of a byte followed by k zero bytes. On the raw register (the running value inverted).
struct Crc32Tables {
  uint32_t t[8][256];
};

constexpr Crc32Tables MakeCrc32Tables() {
  Crc32Tables tables{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit) c = (c & 1) != 0 ? 0xedb88320U ^ (c >> 1) : c >> 1;
    tables.t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (int k = 1; k < 8; ++k)
      tables.t[k][i] = (tables.t[k - 1][i] >> 8) ^ tables.t[0][tables.t[k - 1][i] & 0xff];
  }
  return tables;
}

constexpr Crc32Tables kCrc32 = MakeCrc32Tables();

uint32_t Crc32Sliced(const uint8_t* p, size_t size, uint32_t crc) {
  const auto& t = kCrc32.t;
  while (size >= 8) {
    uint32_t lo = 0;
    uint32_t hi = 0;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    if constexpr (std::endian::native == std::endian::big) {
      lo = __builtin_bswap32(lo);
      hi = __builtin_bswap32(hi);
    }
    lo ^= crc;
    crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
          t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
    p += 8;
    size -= 8;
  }
  while (size-- > 0) crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

#if CHSYNC_CRC32_PCLMUL
// CRC32 by carry-less multiplication (Intel, "Fast CRC Computation for Generic Polynomials Using
// PCLMULQDQ", 2009): four 128-bit lanes are folded forward 512 bits at a time, then into one lane
// (inputs under 64 bytes start with one lane), then 128 bits at a time, then reduced to 32 bits
// (Barrett). Works on the raw, reflected register: `crc` is zlib's running value inverted, and so is
// the result. REQUIRES: size >= 16 and a multiple of 16.
// One lane `x` carried forward by the distance the constants `k` encode, plus the data `next` there.
__attribute__((target("pclmul"))) inline __m128i Fold(__m128i x, __m128i k, __m128i next) {
  return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)),
                       next);
}

__attribute__((target("pclmul,sse4.1"))) uint32_t Crc32Folded(const uint8_t* p, size_t size, uint32_t crc) {
  // x^(512+32) and x^(512-32) mod P, x^(128+32) and x^(128-32) mod P, x^64 mod P, P and floor(x^64/P),
  // all bit-reflected (P = 0x104C11DB7).
  const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
  const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
  const __m128i k5 = _mm_set_epi64x(0, 0x0163cd6124);
  const __m128i poly = _mm_set_epi64x(0x01f7011641, 0x01db710641);
  const __m128i mask32 = _mm_setr_epi32(-1, 0, -1, 0);
  auto load = [](const uint8_t* at) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at)); };
  __m128i x1 = _mm_xor_si128(load(p), _mm_cvtsi32_si128(static_cast<int>(crc)));
  if (size >= 64) {
    __m128i x2 = load(p + 16);
    __m128i x3 = load(p + 32);
    __m128i x4 = load(p + 48);
    p += 64;
    size -= 64;
    while (size >= 64) {
      x1 = Fold(x1, k1k2, load(p));
      x2 = Fold(x2, k1k2, load(p + 16));
      x3 = Fold(x3, k1k2, load(p + 32));
      x4 = Fold(x4, k1k2, load(p + 48));
      p += 64;
      size -= 64;
    }
    x1 = Fold(x1, k3k4, x2);
    x1 = Fold(x1, k3k4, x3);
    x1 = Fold(x1, k3k4, x4);
  } else {
    p += 16;
    size -= 16;
  }
  while (size >= 16) {
    x1 = Fold(x1, k3k4, load(p));
    p += 16;
    size -= 16;
  }
  // 128 → 64 bits, then 64 → 32 bits.
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), _mm_clmulepi64_si128(x1, k3k4, 0x10));
  x1 = _mm_xor_si128(_mm_srli_si128(x1, 4), _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k5, 0x00));
  // Barrett reduction.
  __m128i t = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), poly, 0x10);
  t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), poly, 0x00);
  return static_cast<uint32_t>(_mm_extract_epi32(_mm_xor_si128(x1, t), 1));
}
#endif

}  // namespace

uint32_t Crc32(std::string_view bytes) {
  // Binlog events are mostly small (a GTID event has 38 bytes, a one-row event a few hundred), so
  // no call goes to zlib, whose crc32 takes short inputs a byte at a time.
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t size = bytes.size();
  uint32_t crc = 0xffffffffU;
#if CHSYNC_CRC32_PCLMUL
  static const bool kHasPclmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  if (kHasPclmul && size >= 16) {
    size_t folded = size & ~size_t{15};
    crc = Crc32Folded(data, folded, crc);
    data += folded;
    size -= folded;
  }
#endif
  return ~Crc32Sliced(data, size, crc);
}

Result<MariaCompressedHeader> ReadMariaCompressedHeader(std::string_view src, uint64_t offset) {
  if (src.empty()) return CorruptAt(offset, "empty compressed data");
  auto head = static_cast<uint8_t>(src[0]);
  size_t lenlen = head & 0x07;
  if ((head & 0x80) == 0 || lenlen == 0 || lenlen > 4) {
    return CorruptAt(offset, "invalid compressed-data header byte " + std::to_string(head));
  }
  if (src.size() - 1 < lenlen) return CorruptAt(offset, "truncated compressed-data length");
  MariaCompressedHeader h;
  for (size_t i = 0; i < lenlen; ++i)
    h.uncompressed_size = (h.uncompressed_size << 8) | static_cast<uint8_t>(src[1 + i]);
  h.header_size = 1 + lenlen;
  return h;
}

Result<std::string_view> InflateMariaEvent(std::string_view src, uint64_t offset, uint64_t max_size,
                                           TextArena& arena) {
  CHSYNC_ASSIGN_OR_RETURN(MariaCompressedHeader h, ReadMariaCompressedHeader(src, offset));
  return Inflate(src.substr(h.header_size), h.uncompressed_size, offset, max_size, arena, "compressed event");
}

Result<std::string_view> InflateMariaColumn(std::string_view src, uint64_t offset, uint64_t max_size,
                                            TextArena& arena) {
  if (src.empty()) return std::string_view();
  auto head = static_cast<uint8_t>(src[0]);
  if (head == 0) return src.substr(1);
  size_t lenlen = head & 0x07;
  if (lenlen == 0 || lenlen > 4) {
    return CorruptAt(offset, "invalid compressed-column header byte " + std::to_string(head));
  }
  if (src.size() < 1 + lenlen) return CorruptAt(offset, "truncated compressed-column length");
  uint64_t len = 0;
  for (size_t i = 0; i < lenlen; ++i) len = (len << 8) | static_cast<uint8_t>(src[1 + i]);
  if (head & 0x80) return InflateRaw(src.substr(1 + lenlen), len, offset, max_size, arena);
  return Inflate(src.substr(1 + lenlen), len, offset, max_size, arena, "compressed column");
}

Result<std::string_view> ZstdDecompress(std::string_view src, uint64_t expected_size, uint64_t offset,
                                        uint64_t max_size, TextArena& arena) {
  if (expected_size > max_size) {
    return CorruptAt(offset, "TRANSACTION_PAYLOAD declares " + std::to_string(expected_size) +
                                 " uncompressed bytes, above the limit of " + std::to_string(max_size));
  }
  if (expected_size == 0) return std::string_view();
  char* dst = arena.Allocate(expected_size);
  size_t got = ZSTD_decompress(dst, expected_size, src.data(), src.size());
  if (ZSTD_isError(got)) {
    return CorruptAt(offset, std::string("zstd: ") + ZSTD_getErrorName(got));
  }
  if (got != expected_size) {
    return CorruptAt(offset, "zstd payload inflated to " + std::to_string(got) + " bytes, declared " +
                                 std::to_string(expected_size));
  }
  return std::string_view(dst, expected_size);
}

}  // namespace chsync::binlog
