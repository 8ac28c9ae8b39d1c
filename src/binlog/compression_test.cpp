#include "binlog/compression.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <string>

namespace chsync::binlog {
namespace {

uint32_t ZlibCrc32(std::string_view s) {
  return static_cast<uint32_t>(
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
}

TEST(Crc32Test, KnownValues) {
  EXPECT_EQ(Crc32(""), 0u);
  EXPECT_EQ(Crc32("123456789"), 0xcbf43926u);
  EXPECT_EQ(Crc32(std::string(100, 'a')), ZlibCrc32(std::string(100, 'a')));
}

// Every length around the 16- and 64-byte steps of the folding, at every alignment, agrees with
// zlib's table-driven CRC32.
TEST(Crc32Test, MatchesZlibAtEveryLengthAndAlignment) {
  std::mt19937 rng(42);
  std::string data(70000, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  for (size_t offset = 0; offset < 16; ++offset) {
    for (size_t len = 0; len <= 300; ++len) {
      std::string_view s(data.data() + offset, len);
      ASSERT_EQ(Crc32(s), ZlibCrc32(s)) << "offset " << offset << " length " << len;
    }
  }
  for (size_t len : {1023u, 4096u, 8191u, 65536u, 69984u}) {
    std::string_view s(data.data() + 3, len);
    EXPECT_EQ(Crc32(s), ZlibCrc32(s)) << "length " << len;
  }
}

}  // namespace
}  // namespace chsync::binlog
