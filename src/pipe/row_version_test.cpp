#include "pipe/row_version.h"

#include <gtest/gtest.h>

namespace chsync::pipe {
namespace {

TEST(RowVersion, IncreasesWithOffsetAndAcrossFiles) {
  uint64_t a = *RowVersion({42, 4});
  uint64_t b = *RowVersion({42, 5});
  uint64_t end_of_file = *RowVersion({42, kMaxOffset});
  uint64_t next_file = *RowVersion({43, 4});
  EXPECT_LT(a, b);
  EXPECT_LT(end_of_file, next_file);
  EXPECT_GT(a, 0u) << "stream rows always beat snapshot rows (version 0)";
  EXPECT_EQ(*RowVersion({1, 0}), uint64_t{1} << 44);
}

TEST(RowVersion, OutOfRangeCoordinatesAreErrors) {
  EXPECT_FALSE(RowVersion({0, 4}).ok());
  EXPECT_FALSE(RowVersion({kMaxFileSequence + 1, 4}).ok());
  EXPECT_TRUE(RowVersion({kMaxFileSequence, kMaxOffset}).ok());
  auto too_far = RowVersion({1, kMaxOffset + 1});
  ASSERT_FALSE(too_far.ok());
  EXPECT_EQ(too_far.error().kind(), ErrorKind::kUnsupported);
}

TEST(BinlogFileSequence, ParsesSuffixes) {
  EXPECT_EQ(*BinlogFileSequence("binlog.000042"), 42u);
  EXPECT_EQ(*BinlogFileSequence("mysql-bin.1000000"), 1000000u);
  EXPECT_EQ(*BinlogFileSequence("host.name-bin.000001"), 1u);
  EXPECT_FALSE(BinlogFileSequence("binlog").ok());
  EXPECT_FALSE(BinlogFileSequence("binlog.").ok());
  EXPECT_FALSE(BinlogFileSequence("binlog.12a").ok());
  EXPECT_FALSE(BinlogFileSequence("binlog.99999999999").ok());
}

}  // namespace
}  // namespace chsync::pipe
