#include "state/xa_store.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <string>

namespace chsync::pipe {
namespace {

std::vector<XaBatch> Sample() {
  return {{"shop.orders", "INSERT INTO `shop`.`orders` (`id`) FORMAT RowBinary",
           std::string("\x01\x00\x00\x00", 4), 20, 5, 1},
          {"shop.items", "INSERT INTO `shop`.`items` (`id`) FORMAT RowBinary", ""}};
}

// A file written before the change counts (version 1) is read, with no counts.
TEST(XaStore, ReadsFilesWithoutChangeCounts) {
  std::string v1 = "chsync-xa 1\n";
  for (std::string_view field :
       {"shop.orders", "INSERT INTO `shop`.`orders` (`id`) FORMAT RowBinary", "row"}) {
    for (int i = 0; i < 8; ++i) v1 += static_cast<char>(i == 0 ? field.size() : 0);
    v1 += field;
  }
  uLong crc =
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(v1.data()), static_cast<uInt>(v1.size()));
  for (int i = 0; i < 4; ++i) v1 += static_cast<char>((crc >> (8 * i)) & 0xff);
  auto back = DecodeXaRows(v1, "test");
  ASSERT_TRUE(back.ok()) << back.error().message();
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].table, "shop.orders");
  EXPECT_EQ((*back)[0].data, "row");
  EXPECT_EQ((*back)[0].inserts + (*back)[0].updates + (*back)[0].deletes, 0u);
}

TEST(XaStore, RoundTrips) {
  auto back = DecodeXaRows(EncodeXaRows(Sample()), "test");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, Sample());
  auto empty = DecodeXaRows(EncodeXaRows({}), "test");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(XaStore, DamagedFilesAreErrorsNeverCrashes) {
  std::string good = EncodeXaRows(Sample());
  for (size_t cut = 0; cut < good.size(); ++cut) {
    auto r = DecodeXaRows(std::string_view(good).substr(0, cut), "test");
    EXPECT_FALSE(r.ok()) << "cut at " << cut;
  }
  for (size_t i = 0; i < good.size(); ++i) {
    std::string flipped = good;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x10);
    auto r = DecodeXaRows(flipped, "test");
    ASSERT_FALSE(r.ok()) << "flip at " << i;
    EXPECT_EQ(r.error().kind(), ErrorKind::kCorrupt);
    EXPECT_NE(r.error().message().find("resync"), std::string::npos);
  }
}

TEST(XaStore, FilesInTheStateDirectory) {
  char tmpl[] = "/tmp/chsync-xa-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  std::string name = XaRowsFileName(3, 682);
  EXPECT_EQ(name, "xa-3-682.rows");
  ASSERT_TRUE(WriteXaRows(dir, name, Sample()).ok());
  auto back = ReadXaRows(dir, name);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, Sample());
  RemoveXaRows(dir, name);
  auto gone = ReadXaRows(dir, name);
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.error().message().find(name), std::string::npos);
  RemoveXaRows(dir, name);  // twice: no error
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace chsync::pipe
