#include "state/run_status.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace chsync::pipe {
namespace {

RunStatus Sample() {
  RunStatus s;
  s.phase = "streaming";
  s.pid = 4242;
  s.updated_at_ms = 1764430000123;
  s.position = "binlog.000003:1234";
  s.last_event_time = 1764430000;
  s.rows_applied = 1000000;
  s.transactions = 12;
  s.last_error = "table shop.t: \"quoted\" \\ error";
  s.schema_changes.push_back({1764430000000,
                              "binlog.000003:1000",
                              "shop.t",
                              "ALTER TABLE t ADD COLUMN c INT DEFAULT 5",
                              {"ADD COLUMN `c` int DEFAULT 5: column added as Nullable(Int32) DEFAULT 5"}});
  s.policies = {"defaults: rename_column=rename truncate=ignore", "shop.orders: drop_table=drop"};
  s.cascades = {"sakila.film_category (fk_film_category_category) -> sakila.category: ON UPDATE CASCADE"};
  return s;
}

TEST(RunStatus, RoundTripsEveryField) {
  RunStatus s = Sample();
  auto back = RunStatusFromJson(RunStatusToJson(s));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, s);
}

TEST(RunStatus, FileWithoutPoliciesFromAnEarlierVersionReads) {
  RunStatus s = Sample();
  std::string json = RunStatusToJson(s);
  size_t at = json.find(",\n  \"policies\"");
  ASSERT_NE(at, std::string::npos) << json;
  json = json.substr(0, at) + "\n}\n";
  auto back = RunStatusFromJson(json);
  ASSERT_TRUE(back.ok()) << back.error().message() << "\n" << json;
  EXPECT_TRUE(back->policies.empty());
  s.policies.clear();
  s.cascades.clear();  // later than policies too
  EXPECT_EQ(*back, s);
}

TEST(RunStatus, StatementsWithInvalidUtf8StillSerialize) {
  RunStatus s = Sample();
  s.schema_changes[0].statement = "ALTER TABLE `caf\xe9` ADD COLUMN c INT";
  auto back = RunStatusFromJson(RunStatusToJson(s));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->schema_changes[0].statement.substr(0, 15), "ALTER TABLE `ca");
  EXPECT_NE(back->schema_changes[0].statement, s.schema_changes[0].statement);
}

TEST(RunStatus, DamagedFileIsAnErrorNamingIt) {
  std::string dir = ::testing::TempDir() + "chsync-run-status-" + std::to_string(getpid());
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  auto none = ReadRunStatus(dir);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  ASSERT_TRUE(WriteRunStatus(dir, Sample()).ok());
  auto read = ReadRunStatus(dir);
  ASSERT_TRUE(read.ok() && read->has_value());
  EXPECT_EQ(**read, Sample());
  ASSERT_EQ(std::system(("echo '{\"phase\": 3' > " + dir + "/status.json").c_str()), 0);
  auto damaged = ReadRunStatus(dir);
  ASSERT_FALSE(damaged.ok());
  EXPECT_NE(damaged.error().message().find("status.json"), std::string::npos);
}

}  // namespace
}  // namespace chsync::pipe
