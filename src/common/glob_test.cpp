#include "common/glob.h"

#include <gtest/gtest.h>

namespace chsync {
namespace {

TEST(GlobMatch, Patterns) {
  EXPECT_TRUE(GlobMatch("*", "anything"));
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_TRUE(GlobMatch("ord*", "orders"));
  EXPECT_TRUE(GlobMatch("ord?rs", "orders"));
  EXPECT_TRUE(GlobMatch("*_gho", "_t_gho"));
  EXPECT_TRUE(GlobMatch("a*b*c", "aXXbYYc"));
  EXPECT_FALSE(GlobMatch("a*b*c", "aXXbYY"));
  EXPECT_FALSE(GlobMatch("orders", "Orders"));
  EXPECT_FALSE(GlobMatch("t", "tt"));
  EXPECT_FALSE(GlobMatch("", "x"));
}

TEST(SplitTablePattern, PartsAndQuotes) {
  std::string_view db;
  std::string_view table;
  ASSERT_TRUE(SplitTablePattern("shop.orders", db, table));
  EXPECT_EQ(db, "shop");
  EXPECT_EQ(table, "orders");
  ASSERT_TRUE(SplitTablePattern("`my.shop`.`order items`", db, table));
  EXPECT_EQ(db, "my.shop");
  EXPECT_EQ(table, "order items");
  ASSERT_TRUE(SplitTablePattern("shop.*", db, table));
  EXPECT_EQ(table, "*");
  EXPECT_FALSE(SplitTablePattern("orders", db, table));
  EXPECT_FALSE(SplitTablePattern("shop.", db, table));
  EXPECT_FALSE(SplitTablePattern(".orders", db, table));
  EXPECT_FALSE(SplitTablePattern("`unclosed.orders", db, table));
}

}  // namespace
}  // namespace chsync
