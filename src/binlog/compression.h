#pragma once

#include <cstdint>
#include <string_view>

#include "binlog/text_arena.h"
#include "common/result.h"

namespace chsync::binlog {

/// CRC32 (zlib / IEEE polynomial) of `bytes`, as binlog checksums use.
uint32_t Crc32(std::string_view bytes);

/// The header of MariaDB's compressed binlog data (see InflateMariaEvent).
struct MariaCompressedHeader {
  uint64_t uncompressed_size = 0;  ///< as declared; not checked against any limit
  size_t header_size = 0;          ///< 1 + the length's byte count; the zlib stream follows
};

/// Reads only the header of MariaDB's compressed binlog data: the byte 0x80|n, then the
/// uncompressed length in n (1–4) big-endian bytes. Nothing is inflated or allocated. A bad
/// header byte or a truncated length is a kCorrupt error naming `offset` (where `src` starts).
Result<MariaCompressedHeader> ReadMariaCompressedHeader(std::string_view src, uint64_t offset);

/// Inflates MariaDB's compressed binlog data (QUERY_COMPRESSED query text, *_ROWS_COMPRESSED row
/// data): a header byte 0x80|n, the uncompressed length in n (1–4) big-endian bytes, then a
/// zlib stream. The declared length is checked against `max_size` before allocating, and the
/// result must have exactly that length. `offset` is where `src` starts in the file.
Result<std::string_view> InflateMariaEvent(std::string_view src, uint64_t offset, uint64_t max_size,
                                           TextArena& arena);

/// Inflates a MariaDB COMPRESSED column value (VARCHAR/TEXT/BLOB ... COMPRESSED): a header byte
/// (0 = the rest is stored as is; else the low 3 bits give the byte count of the original
/// length, which follows, and bit 7 means raw deflate without the zlib wrapper), then the data.
Result<std::string_view> InflateMariaColumn(std::string_view src, uint64_t offset, uint64_t max_size,
                                            TextArena& arena);

/// Decompresses a zstd frame of exactly `expected_size` bytes (checked against `max_size`).
Result<std::string_view> ZstdDecompress(std::string_view src, uint64_t expected_size, uint64_t offset,
                                        uint64_t max_size, TextArena& arena);

}  // namespace chsync::binlog
