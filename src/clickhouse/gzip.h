#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/result.h"

namespace chsync::clickhouse {

/// The most bytes Gzip hands zlib in one call, in or out. zlib counts a call's input and output
/// in `uInt` (32 bits), so a larger count would be silently cut.
inline constexpr size_t kGzipMaxChunk = size_t{1} << 30;

/// Gzip of `data` (RFC 1952, fastest level), which every ClickHouse HTTP server accepts with
/// `Content-Encoding: gzip`. Input of any size is fed to zlib in pieces of at most `max_chunk`
/// bytes (capped at the largest `uInt`), and the output is written in pieces of at most that
/// size too; the result is one gzip member whatever the chunking. Empty `data` gives a valid
/// gzip of nothing. REQUIRES: max_chunk > 0. Fails (kInternal) only when zlib itself does.
Result<std::string> Gzip(std::string_view data, size_t max_chunk = kGzipMaxChunk);

}  // namespace chsync::clickhouse
