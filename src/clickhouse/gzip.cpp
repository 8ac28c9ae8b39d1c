#include "clickhouse/gzip.h"

#include <zlib.h>

#include <algorithm>
#include <cassert>
#include <limits>

namespace chsync::clickhouse {

Result<std::string> Gzip(std::string_view data, size_t max_chunk) {
  assert(max_chunk > 0);
  max_chunk = std::min<size_t>(max_chunk, std::numeric_limits<uInt>::max());
  z_stream zs{};
  if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Error(ErrorKind::kInternal, "zlib deflateInit2 failed");
  }
  // deflateBound is enough for a single pass; the loop below still grows the buffer if the
  // pieces ever need more.
  std::string out(deflateBound(&zs, static_cast<uLong>(data.size())), '\0');
  size_t in_pos = 0;
  size_t out_pos = 0;
  int rc = Z_OK;
  int flush = Z_NO_FLUSH;
  while (flush != Z_FINISH) {
    const size_t in_n = std::min(max_chunk, data.size() - in_pos);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + in_pos));
    zs.avail_in = static_cast<uInt>(in_n);
    in_pos += in_n;
    flush = in_pos == data.size() ? Z_FINISH : Z_NO_FLUSH;
    // Until zlib has taken the whole piece (and, when finishing, written the trailer).
    do {
      if (out_pos == out.size()) out.resize(out.size() + std::max<size_t>(out.size() / 2, 1 << 16));
      const size_t out_n = std::min(max_chunk, out.size() - out_pos);
      zs.next_out = reinterpret_cast<Bytef*>(out.data() + out_pos);
      zs.avail_out = static_cast<uInt>(out_n);
      rc = deflate(&zs, flush);
      out_pos += out_n - zs.avail_out;
      if (rc == Z_STREAM_ERROR) break;
    } while (zs.avail_out == 0 && rc != Z_STREAM_END);
    if (rc == Z_STREAM_ERROR || zs.avail_in != 0) break;
  }
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) return Error(ErrorKind::kInternal, "zlib deflate failed");
  out.resize(out_pos);
  out.shrink_to_fit();  // the compressed copy lives while the request is sent
  return out;
}

}  // namespace chsync::clickhouse
