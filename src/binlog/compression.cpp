#include "binlog/compression.h"

#include <zlib.h>
#include <zstd.h>

#include <string>

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

}  // namespace

uint32_t Crc32(std::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  return static_cast<uint32_t>(
      crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

Result<std::string_view> InflateMariaEvent(std::string_view src, uint64_t offset, uint64_t max_size,
                                           TextArena& arena) {
  if (src.empty()) return CorruptAt(offset, "empty compressed data");
  auto head = static_cast<uint8_t>(src[0]);
  size_t lenlen = head & 0x07;
  if ((head & 0x80) == 0 || lenlen == 0 || lenlen > 4) {
    return CorruptAt(offset, "invalid compressed-data header byte " + std::to_string(head));
  }
  if (src.size() < 1 + lenlen) return CorruptAt(offset, "truncated compressed-data length");
  uint64_t len = 0;
  for (size_t i = 0; i < lenlen; ++i) len = (len << 8) | static_cast<uint8_t>(src[1 + i]);
  return Inflate(src.substr(1 + lenlen), len, offset, max_size, arena, "compressed event");
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
