#include "common/byte_reader.h"

#include <gtest/gtest.h>

namespace chsync {
namespace {

TEST(ByteReader, ReadsLittleAndBigEndian) {
  const uint8_t bytes[] = {0x01, 0x02, 0x03, 0x04, 0x05};
  ByteReader r(bytes, sizeof bytes);
  EXPECT_EQ(*r.ReadU16(), 0x0201);
  EXPECT_EQ(*r.ReadUintBE(3), 0x030405u);
  EXPECT_TRUE(r.empty());
}

TEST(ByteReader, TruncatedReadFailsWithOffsetAndKeepsCursor) {
  const uint8_t bytes[] = {0x01, 0x02, 0x03};
  ByteReader r(bytes, sizeof bytes, 1000);
  ASSERT_TRUE(r.Skip(1).ok());
  auto v = r.ReadU32("row length");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().kind(), ErrorKind::kCorrupt);
  EXPECT_EQ(v.error().message(), "truncated row length at offset 1001: needs 4 bytes, 2 left");
  EXPECT_EQ(r.position(), 1u);
}

TEST(ByteReader, HugeLengthDoesNotOverflow) {
  const uint8_t bytes[] = {0x01};
  ByteReader r(bytes, sizeof bytes);
  ASSERT_TRUE(r.Skip(1).ok());
  EXPECT_FALSE(r.ReadBytes(SIZE_MAX).ok());
  EXPECT_FALSE(r.Need(SIZE_MAX, "x").ok());
}

TEST(ByteReader, PackedIntegers) {
  const uint8_t bytes[] = {0xFA, 0xFC, 0x34, 0x12, 0xFD, 0x01, 0x02, 0x03, 0xFE,
                           1,    0,    0,    0,    0,    0,    0,    0x80, 0xFB};
  ByteReader r(bytes, sizeof bytes);
  EXPECT_EQ(*r.ReadPackedInt(), 0xFAu);
  EXPECT_EQ(*r.ReadPackedInt(), 0x1234u);
  EXPECT_EQ(*r.ReadPackedInt(), 0x030201u);
  EXPECT_EQ(*r.ReadPackedInt(), 0x8000000000000001ull);
  auto bad = r.ReadPackedInt();
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("prefix 0xfb"), std::string::npos);
}

TEST(ByteReader, SubReaderKeepsFileOffsets) {
  const uint8_t bytes[] = {9, 8, 7, 6};
  ByteReader r(bytes, sizeof bytes, 100);
  ASSERT_TRUE(r.Skip(1).ok());
  auto sub = r.Sub(2);
  ASSERT_TRUE(sub.ok());
  EXPECT_EQ(sub->offset(), 101u);
  EXPECT_EQ(*sub->ReadU8(), 8);
  EXPECT_EQ(sub->remaining(), 1u);
  EXPECT_EQ(r.remaining(), 1u);
  EXPECT_FALSE(r.Sub(2).ok());
}

}  // namespace
}  // namespace chsync
