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

TEST(MariaCompressedHeaderTest, ReadsTheDeclaredLengthOfOneToFourBytes) {
  struct Case {
    std::string bytes;
    uint64_t size;
    size_t header;
  };
  for (const Case& c :
       {Case{std::string("\x81\x2a", 2), 42, 2}, Case{std::string("\x82\x01\x00zz", 5), 256, 3},
        Case{std::string("\x83\x01\x02\x03", 4), 0x010203, 4},
        Case{std::string("\x84\xff\xff\xff\xff", 5), 0xffffffffu, 5}}) {
    auto h = ReadMariaCompressedHeader(c.bytes, 100);
    ASSERT_TRUE(h.ok()) << h.error().message();
    EXPECT_EQ(h->uncompressed_size, c.size);
    EXPECT_EQ(h->header_size, c.header);
  }
}

TEST(MariaCompressedHeaderTest, BadHeaderByteIsCorrupt) {
  for (const std::string& bytes :
       {std::string("\x01\x2a", 2), std::string("\x80\x2a", 2), std::string("\x85\0\0\0\0\0", 6)}) {
    auto h = ReadMariaCompressedHeader(bytes, 100);
    ASSERT_FALSE(h.ok());
    EXPECT_EQ(h.error().kind(), ErrorKind::kCorrupt);
    EXPECT_NE(h.error().message().find("header byte"), std::string::npos) << h.error().message();
    EXPECT_NE(h.error().message().find("at offset 100"), std::string::npos) << h.error().message();
  }
}

TEST(MariaCompressedHeaderTest, EmptyOrTruncatedLengthIsCorrupt) {
  EXPECT_FALSE(ReadMariaCompressedHeader("", 7).ok());
  auto h = ReadMariaCompressedHeader(std::string("\x84\x01\x02\x03", 4), 7);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.error().message().find("truncated compressed-data length at offset 7"), std::string::npos)
      << h.error().message();
}

}  // namespace
}  // namespace chsync::binlog
