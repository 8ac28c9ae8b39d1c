#include "clickhouse/capabilities.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace chsync::clickhouse {
namespace {

TEST(CapabilitiesTest, ClickHouse1816HasOnlyTheOldFeatures) {
  Capabilities c = FromVersion({18, 16, 1, 0});
  EXPECT_TRUE(c.uuid);
  EXPECT_TRUE(c.add_column_after);
  EXPECT_TRUE(c.modify_to_nullable);
  EXPECT_FALSE(c.datetime64);
  EXPECT_FALSE(c.now64);
  EXPECT_FALSE(c.date32);
  EXPECT_FALSE(c.bool_type);
  EXPECT_FALSE(c.replacing_is_deleted);
  EXPECT_FALSE(c.low_cardinality);
  EXPECT_FALSE(c.rename_column);
  EXPECT_FALSE(c.add_column_if_not_exists);
  EXPECT_FALSE(c.ip_types);
  EXPECT_FALSE(c.decimal256);
  EXPECT_FALSE(c.fsync_after_insert);
  EXPECT_FALSE(c.codec);
  EXPECT_FALSE(c.ttl);
  EXPECT_EQ(c.version, (ServerVersion{18, 16, 1, 0}));
}

TEST(CapabilitiesTest, ClickHouse267HasEverything) {
  Capabilities c = FromVersion({26, 7, 3, 1});
  for (const auto& [name, yes] : ListCapabilities(c)) EXPECT_TRUE(yes) << name;
}

TEST(CapabilitiesTest, BoundariesAreTheFirstReleases) {
  struct Case {
    ServerVersion before;
    ServerVersion at;
    bool Capabilities::*field;
  };
  const Case cases[] = {
      {{20, 0, 9, 0}, {20, 1, 0, 0}, &Capabilities::datetime64},
      {{21, 11, 99, 0}, {21, 12, 1, 0}, &Capabilities::bool_type},
      {{21, 8, 15, 7}, {21, 9, 2, 17}, &Capabilities::date32},
      {{23, 1, 7, 30}, {23, 2, 1, 2537}, &Capabilities::replacing_is_deleted},
      {{20, 3, 21, 2}, {20, 4, 2, 9}, &Capabilities::rename_column},
      // 20.6 to 20.12 accept the settings but ignore them (fixed by PR #18845 in 21.1).
      {{20, 12, 8, 5}, {21, 1, 2, 15}, &Capabilities::fsync_after_insert},
      {{18, 16, 1, 0}, {19, 1, 6, 0}, &Capabilities::codec},
      {{19, 5, 4, 0}, {19, 6, 2, 11}, &Capabilities::ttl},
  };
  for (const Case& c : cases) {
    EXPECT_FALSE(FromVersion(c.before).*(c.field)) << c.before.ToString();
    EXPECT_TRUE(FromVersion(c.at).*(c.field)) << c.at.ToString();
  }
}

TEST(CapabilitiesTest, ListHasUniqueNamesAndFirstVersions) {
  auto list = ListCapabilities(FromVersion({23, 2, 0, 0}));
  std::set<std::string> names;
  for (const auto& [name, yes] : list) {
    EXPECT_TRUE(names.insert(std::string(name)).second) << name;
    ServerVersion since = FirstVersionWith(name);
    EXPECT_GE(since, (ServerVersion{18, 16, 0, 0})) << name;
    EXPECT_EQ(yes, (ServerVersion{23, 2, 0, 0}) >= since) << name;
  }
  EXPECT_EQ(FirstVersionWith("replacing_is_deleted"), (ServerVersion{23, 2, 0, 0}));
  EXPECT_EQ(FirstVersionWith("no_such_feature"), (ServerVersion{}));
}

TEST(CapabilitiesTest, JsonTypeReadyFrom25_3AndNeverChosenByTheServer) {
  EXPECT_FALSE(FromVersion({25, 2, 0, 0}).json_type_ready);
  EXPECT_TRUE(FromVersion({25, 3, 0, 0}).json_type_ready);
  EXPECT_TRUE(FromVersion({24, 8, 0, 0}).json_type);
  EXPECT_FALSE(FromVersion({26, 7, 0, 0}).json_native) << "json: native is the user's choice";
  EXPECT_EQ(FirstVersionWith("json_type_ready").ToString(), "25.3.0");
}

}  // namespace
}  // namespace chsync::clickhouse
