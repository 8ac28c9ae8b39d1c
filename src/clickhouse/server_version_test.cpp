#include "clickhouse/server_version.h"

#include <gtest/gtest.h>

namespace chsync::clickhouse {
namespace {

TEST(ServerVersionTest, ParsesThreePartVersion) {
  auto v = ParseServerVersion("18.16.1\n");
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_EQ(v->major, 18);
  EXPECT_EQ(v->minor, 16);
  EXPECT_EQ(v->patch, 1);
  EXPECT_EQ(v->build, 0);
  EXPECT_EQ(v->ToString(), "18.16.1");
}

TEST(ServerVersionTest, ParsesFourPartVersionWithSuffix) {
  auto v = ParseServerVersion("26.7.3.1-stable");
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_EQ((ServerVersion{26, 7, 3, 1}), *v);
  EXPECT_EQ(v->ToString(), "26.7.3.1");
}

TEST(ServerVersionTest, ComparesNumericallyNotAsText) {
  EXPECT_LT(*ParseServerVersion("23.2"), *ParseServerVersion("23.10.1"));
  EXPECT_LT(*ParseServerVersion("9.9.9"), *ParseServerVersion("18.16.1"));
  EXPECT_EQ(*ParseServerVersion("23.2"), (ServerVersion{23, 2, 0, 0}));
}

TEST(ServerVersionTest, RejectsTextWithoutVersion) {
  for (const char* bad : {"", "abc", "18", "Code: 62"}) {
    auto v = ParseServerVersion(bad);
    EXPECT_FALSE(v.ok()) << bad;
  }
}

}  // namespace
}  // namespace chsync::clickhouse
