#include "clickhouse/gzip.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <random>

namespace chsync::clickhouse {
namespace {

/// What `gzip -d` gives back: inflates a single gzip member (window bits 15 + 16).
std::string Gunzip(std::string_view compressed) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 15 + 16), Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  zs.avail_in = static_cast<uInt>(compressed.size());
  std::string out;
  int rc = Z_OK;
  char buffer[1 << 16];
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buffer);
    zs.avail_out = sizeof(buffer);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buffer, sizeof(buffer) - zs.avail_out);
  }
  EXPECT_EQ(rc, Z_STREAM_END);
  EXPECT_EQ(zs.avail_in, 0u) << "bytes after the gzip member";
  inflateEnd(&zs);
  return out;
}

/// Bytes that compress somewhat but not to nothing, like RowBinary: runs of random bytes from a
/// small alphabet with repeated stretches.
std::string TestBytes(size_t size) {
  std::mt19937 rng(42);
  std::string data;
  data.reserve(size);
  while (data.size() < size) {
    if (data.size() > 1000 && rng() % 4 == 0) {
      size_t from = rng() % (data.size() - 500);
      data.append(data, from, std::min<size_t>(rng() % 500, size - data.size()));
    } else {
      data.push_back(static_cast<char>('a' + rng() % 40));
    }
  }
  return data;
}

TEST(Gzip, TenMebibytesInSmallChunksRoundTrip) {
  std::string data = TestBytes(10 << 20);
  auto compressed = Gzip(data, 64 << 10);
  ASSERT_TRUE(compressed.ok()) << compressed.error().message();
  EXPECT_GT(compressed->size(), size_t{64 << 10}) << "the output should span several chunks too";
  EXPECT_LT(compressed->size(), data.size());
  EXPECT_EQ(Gunzip(*compressed), data);
}

TEST(Gzip, InputThatIsAnExactMultipleOfTheChunk) {
  std::string data = TestBytes(4 * (64 << 10));
  auto compressed = Gzip(data, 64 << 10);
  ASSERT_TRUE(compressed.ok()) << compressed.error().message();
  EXPECT_EQ(Gunzip(*compressed), data);
}

TEST(Gzip, EmptyInputIsAValidEmptyGzip) {
  auto compressed = Gzip("", 64 << 10);
  ASSERT_TRUE(compressed.ok()) << compressed.error().message();
  EXPECT_FALSE(compressed->empty());
  EXPECT_EQ(Gunzip(*compressed), "");
}

TEST(Gzip, OneByteChunks) {
  std::string data = TestBytes(5000);
  auto compressed = Gzip(data, 1);
  ASSERT_TRUE(compressed.ok()) << compressed.error().message();
  EXPECT_EQ(Gunzip(*compressed), data);
}

TEST(Gzip, DefaultChunkRoundTrip) {
  std::string data = TestBytes(1 << 20);
  auto whole = Gzip(data);
  ASSERT_TRUE(whole.ok()) << whole.error().message();
  EXPECT_EQ(Gunzip(*whole), data);
}

}  // namespace
}  // namespace chsync::clickhouse
