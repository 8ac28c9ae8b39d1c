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

}  // namespace
}  // namespace chsync
