#include "state/checkpoint.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace chsync::pipe {
namespace {

Checkpoint Sample() {
  Checkpoint c;
  c.stream_start = {"binlog.000007", 5000000000ull, "0-1-42"};
  c.resume = {"binlog.000009", 4, "0-1-99,1-2-3", 12345, -6};
  c.source = SourceIdentity{101, "3e11fa47-71ca-11e1-9e33-c80aa9429562", "db2.internal:3306"};
  c.pending_xa.push_back({"X'61',X'',1", "binlog.000009:682", "xa-000009-682.rows"});
  c.schemas = "table shop.orders\ncolumn id int\n\"quoted\" \\ text\n";
  c.snapshot.push_back({"shop", "orders", TableSnapshot::State::kDone, "[5000]", 5000});
  c.snapshot.push_back({"shop", "items", TableSnapshot::State::kCopying, "[\"SKU-1\",3]", 12});
  c.snapshot.push_back({"shop", "carts", TableSnapshot::State::kPending, "", 0,
                        SourcePosition{"binlog.000009", 1234, "0-1-98"}});
  c.destinations.push_back({"shop.orders",
                            {"legacy_note", "old_total"},
                            {{"note", "'none'"}, {"qty", ""}},
                            {{"customer", "client"}},
                            {"customer"},
                            {"email", "ssn"}});
  // A source of a shared table: where its rows are, and the source value they carry.
  c.destinations.push_back(
      {"tenant_7.users", {}, {}, {}, {}, {}, "analytics", "users", "_source", "eu-1/tenant_7"});
  c.rebuilds.push_back({"shop", "items", "items__chsync_rebuild",
                        TableSnapshot{"shop", "items", TableSnapshot::State::kCopying, "[17]", 17},
                        "binlog.000009:777", "primary key changed"});
  c.held.push_back({"shop.carts", "parked", "ClickHouse refused its ALTER (code 44)",
                    "ALTER TABLE carts MODIFY note JSON", "binlog.000009:900", 1764430000001});
  c.held.push_back({"shop.items", "paused", "chsync pause", "", "binlog.000009:950", 1764430000002});
  c.requests_done = {"1764430000000-77-1", "1764430000001-77-2"};
  c.selection = "shop.*, !shop.tmp_*; then add crm.users";
  c.selection_changes.push_back({"add", "crm.users", 1764430000003});
  c.selection_changes.push_back({"remove", "shop.audit_*", 1764430000004});
  c.unselected.push_back({"shop.audit_2024", "analytics.audit_2024", "binlog.000009:990", 1764430000004});
  c.routing = Routing{"sharded", {2, 1}, "18.16"};
  c.saved_at_ms = 1764430000123;
  c.load_only = true;
  return c;
}

TEST(Checkpoint, RoundTripsEveryField) {
  Checkpoint c = Sample();
  auto back = FromJson(ToJson(c));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, c);
}

TEST(Checkpoint, OlderCheckpointsWithoutTheNewFieldsStillLoad) {
  Checkpoint c = Sample();
  c.resume.version_shift = 0;
  c.source.reset();
  c.pending_xa.clear();
  c.held.clear();
  c.requests_done.clear();
  c.selection.clear();
  c.selection_changes.clear();
  c.unselected.clear();
  c.load_only = false;
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(ToJson(c));
  ASSERT_FALSE(j.contains("held"));
  ASSERT_FALSE(j.contains("requests_done"));
  ASSERT_FALSE(j.contains("selection"));
  ASSERT_FALSE(j.contains("unselected"));
  ASSERT_FALSE(j.contains("load_only"));
  j.erase("pending_xa");
  ASSERT_FALSE(j.contains("source"));
  ASSERT_FALSE(j["resume"].contains("version_shift"));
  auto back = FromJson(j.dump());
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, c);
}

TEST(Checkpoint, RejectsDamagedDocuments) {
  EXPECT_EQ(FromJson("").error().kind(), ErrorKind::kCorrupt);
  EXPECT_EQ(FromJson("{\"format\": 1").error().kind(), ErrorKind::kCorrupt);
  auto missing = FromJson("{\"format\": 1, \"saved_at_ms\": 1}");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("stream_start"), std::string::npos) << missing.error().message();
  std::string text = ToJson(Sample());
  text.replace(text.find("\"done\""), 6, "\"later\"");
  auto bad_state = FromJson(text);
  ASSERT_FALSE(bad_state.ok());
  EXPECT_NE(bad_state.error().message().find("'later'"), std::string::npos);
  std::string held = ToJson(Sample());
  held.replace(held.find("\"paused\""), 8, "\"frozen\"");
  auto bad_held = FromJson(held);
  ASSERT_FALSE(bad_held.ok());
  EXPECT_NE(bad_held.error().message().find("'frozen' of shop.items"), std::string::npos)
      << bad_held.error().message();
  auto wrong_type = FromJson("{\"format\": 1, \"saved_at_ms\": \"x\"}");
  EXPECT_EQ(wrong_type.error().kind(), ErrorKind::kCorrupt);
}

TEST(Checkpoint, ReadsCheckpointsWrittenBeforeRenamesAndRebuilds) {
  Checkpoint c = Sample();
  c.rebuilds.clear();
  c.destinations[0].clickhouse_names.clear();
  c.destinations[0].aliases.clear();
  c.destinations[0].excluded.clear();
  // What an earlier chsync wrote: none of these keys.
  nlohmann::json j = nlohmann::json::parse(ToJson(c));
  j.erase("rebuilds");
  for (auto& d : j["destinations"]) {
    d.erase("clickhouse_names");
    d.erase("aliases");
  }
  auto back = FromJson(j.dump());
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, c);
}

TEST(Checkpoint, NewerFormatIsRefused) {
  std::string text = ToJson(Sample());
  text.replace(text.find("\"format\": 1"), 11, "\"format\": 2");
  auto r = FromJson(text);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kUnsupported);
}

TEST(Checkpoint, RoutingChangesThatMoveKeysToOtherShardsAreNamed) {
  const Routing two{"sharded", {1, 1}, "18.16"};
  EXPECT_EQ(RoutingChange(two, two), std::nullopt);
  // Another replica or host of a shard changes nothing that routes.
  EXPECT_EQ(RoutingChange(two, Routing{"sharded", {1, 1}, "18.16"}), std::nullopt);
  EXPECT_EQ(
      RoutingChange(two, Routing{"sharded", {1, 1, 1}, "18.16"}).value_or(""),
      "the rows in ClickHouse were routed over 2 shards of cluster 'sharded' (weights 1, 1), keys printed "
      "as ClickHouse 18.16 prints them, and the destination is now 3 shards of cluster 'sharded' "
      "(weights 1, 1, 1), keys printed as ClickHouse 18.16 prints them");
  EXPECT_NE(RoutingChange(two, Routing{"sharded", {2, 1}, "18.16"}), std::nullopt);
  EXPECT_NE(RoutingChange(two, Routing{"sharded", {1, 1}, "21.9+"}), std::nullopt);  // an upgrade
  // … which changes nothing where no sharding key holds a decimal or a date.
  EXPECT_EQ(RoutingChange(two, Routing{"sharded", {1, 1}, "21.9+"}, /*key_text_matters=*/false),
            std::nullopt);
  EXPECT_NE(RoutingChange(two, Routing{"sharded", {2, 1}, "18.16"}, /*key_text_matters=*/false),
            std::nullopt);
  EXPECT_NE(RoutingChange(two, Routing{"other", {1, 1}, "18.16"}), std::nullopt);
  EXPECT_NE(RoutingChange(two, Routing{"", {1}, ""}), std::nullopt);  // all rows to one server now
  EXPECT_NE(RoutingChange(Routing{"", {1}, ""}, two), std::nullopt);
  // A style no release of chsync's knows compares with any: nothing to tell them apart by.
  EXPECT_EQ(RoutingChange(two, Routing{"sharded", {1, 1}, "unknown"}), std::nullopt);
  // Nothing is hashed on one shard: a replicated cluster renamed or a server moved routes nothing.
  EXPECT_EQ(RoutingChange(Routing{"replicated", {1}, ""}, Routing{"", {1}, ""}), std::nullopt);
  EXPECT_EQ(DescribeRouting(Routing{"", {1}, ""}), "one server");
}

}  // namespace
}  // namespace chsync::pipe
