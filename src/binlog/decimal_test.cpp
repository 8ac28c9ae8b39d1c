#include "binlog/decimal.h"

#include <gtest/gtest.h>

#include <string>

namespace chsync::binlog {
namespace {

std::string Hex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

Result<std::string> Decode(std::string_view hex, unsigned precision, unsigned scale) {
  std::string bytes = Hex(hex);
  ByteReader r(bytes, 100);
  std::string out;
  Status s = ReadDecimal(r, precision, scale, out);
  if (!s.ok()) return s.error();
  if (!r.empty()) return Error(ErrorKind::kInternal, "bytes left over");
  return out;
}

TEST(DecimalTest, BinarySizes) {
  EXPECT_EQ(DecimalBinarySize(14, 4), 7u);
  EXPECT_EQ(DecimalBinarySize(10, 5), 6u);
  EXPECT_EQ(DecimalBinarySize(65, 30), 30u);
  EXPECT_EQ(DecimalBinarySize(1, 0), 1u);
  EXPECT_EQ(DecimalBinarySize(0, 0), 0u);
  EXPECT_EQ(DecimalBinarySize(66, 0), 0u);
  EXPECT_EQ(DecimalBinarySize(10, 11), 0u);
}

// The example in MySQL's strings/decimal.cc: 1234567890.1234 as DECIMAL(14,4).
TEST(DecimalTest, DocumentedExamplePositiveAndNegative) {
  EXPECT_EQ(*Decode("810DFB38D204D2", 14, 4), "1234567890.1234");
  EXPECT_EQ(*Decode("7EF204C72DFB2D", 14, 4), "-1234567890.1234");
}

TEST(DecimalTest, KeepsScaleDigitsAndLeadingZero) {
  // 0.10000 as DECIMAL(10,5): int part 00000 (3 bytes of 5 digits), fraction 10000 (3 bytes).
  EXPECT_EQ(*Decode("800000002710", 10, 5), "0.10000");
  EXPECT_EQ(*Decode("800000000000", 10, 5), "0.00000");
  EXPECT_EQ(*Decode("80000000010000", 14, 4), "1.0000");
}

TEST(DecimalTest, IntegerOnlyHasNoPoint) {
  EXPECT_EQ(*Decode("8007", 3, 0), "7");
}

TEST(DecimalTest, MaximumPrecision) {
  // DECIMAL(65,30) holding 35 nines . 30 nines: 8 leading digits, 3 groups, 3 groups, 3 digits.
  std::string hex =
      "85F5E0FF"
      "3B9AC9FF"
      "3B9AC9FF"
      "3B9AC9FF"
      "3B9AC9FF"
      "3B9AC9FF"
      "3B9AC9FF"
      "03E7";
  auto v = Decode(hex, 65, 30);
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_EQ(*v, std::string(35, '9') + "." + std::string(30, '9'));
}

TEST(DecimalTest, DigitGroupAboveNineNinesIsCorrupt) {
  auto v = Decode("FFFFFFFF", 9, 0);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().kind(), ErrorKind::kCorrupt);
  EXPECT_NE(v.error().message().find("offset 100"), std::string::npos) << v.error().message();
}

TEST(DecimalTest, TruncatedValueIsCorrupt) {
  auto v = Decode("810DFB", 14, 4);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message().find("truncated DECIMAL"), std::string::npos) << v.error().message();
}

}  // namespace
}  // namespace chsync::binlog
