#include "pipe/table_set.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>

namespace chsync::pipe {
namespace {

class TableSetTest : public ::testing::Test {
 protected:
  /// A set over the configuration `yaml` (source and dest are given).
  std::unique_ptr<TableSet> Make(const std::string& yaml) {
    config_ = PipeConfig{};
    Status loaded = LoadConfigText("source: mysql://u@127.0.0.1:3306\ndest: http://127.0.0.1:8123\n" + yaml,
                                   "test.yaml", config_);
    EXPECT_TRUE(loaded.ok()) << loaded.error().message();
    destination_ = std::make_unique<Destination>(config_, cancel_);
    auto set = std::make_unique<TableSet>(config_, *destination_);
    Status configured = set->Configure();
    EXPECT_TRUE(configured.ok()) << configured.error().message();
    return set;
  }

  PipeConfig config_;
  std::atomic<bool> cancel_{false};
  std::unique_ptr<Destination> destination_;
};

TEST_F(TableSetTest, TablesGoWhereTheirOptionsSayAndMigrationTablesFollowTheirBase) {
  auto set = Make(
      "tables: shop.orders,shop.items\n"
      "dest_database: analytics\n"
      "table_options:\n"
      "  shop.orders:\n"
      "    dest: sales.orders_v2\n"
      "    exclude_columns: [email]\n");
  EXPECT_EQ(set->PlaceFor("shop", "orders").Qualified(), "sales.orders_v2");
  EXPECT_EQ(set->PlaceFor("shop", "items").Qualified(), "analytics.items");

  // gh-ost's shadow of a replicated table: replicated once the base is (it runs), under the base's
  // options and a name made from the base's destination name.
  EXPECT_FALSE(set->ShouldReplicate("shop", "_orders_gho"));
  set->tables()["shop.orders"] = std::make_unique<TableState>();
  EXPECT_TRUE(set->ShouldReplicate("shop", "_orders_gho"));
  EXPECT_TRUE(set->ShouldReplicate("shop", "_orders_new")) << "pt-online-schema-change's";
  EXPECT_EQ(set->PlaceFor("shop", "_orders_gho").Qualified(), "sales._orders_v2_gho");
  const EffectiveMapping shadow = set->MappingFor("shop", "_orders_gho");
  ASSERT_EQ(shadow.excluded.size(), 1u);
  EXPECT_FALSE(shadow.excluded[0].exact) << "the migration may drop the column in its copy";
  // What a migration leaves behind is not replicated, but is dropped along.
  EXPECT_FALSE(set->ShouldReplicate("shop", "_orders_del"));
  EXPECT_TRUE(set->IsMigrationLeftover("shop", "_orders_del"));
  EXPECT_TRUE(set->IsMigrationLeftover("shop", "_orders_old"));
  // Tables of other databases, and names that only look alike, are neither.
  EXPECT_FALSE(set->ShouldReplicate("crm", "orders"));
  EXPECT_FALSE(set->ShouldReplicate("crm", "_orders_gho"));
  EXPECT_FALSE(set->IsMigrationLeftover("crm", "_orders_del"));
  EXPECT_FALSE(set->IsMigrationLeftover("shop", "orders_del"));
}

TEST_F(TableSetTest, TwoTablesNeverShareAClickHouseTable) {
  auto set = Make(
      "tables: shop.*\n"
      "table_options:\n"
      "  shop.orders:\n"
      "    dest: shop.archive\n");
  auto add = [&](const std::string& database, const std::string& table) {
    auto state = std::make_unique<TableState>();
    state->dest.source.database = database;
    state->dest.source.name = table;
    set->tables()[database + "." + table] = std::move(state);
  };
  add("shop", "archive");
  // shop.orders would land in shop.archive, which holds the replicated shop.archive.
  Status s = set->CheckPlaceFree("shop", "orders");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
  EXPECT_NE(
      s.error().message().find("shop.orders would be replicated into the ClickHouse table shop.archive"),
      std::string::npos)
      << s.error().message();
  // …unless shop.archive is the table being renamed onto that name.
  EXPECT_TRUE(set->CheckPlaceFree("shop", "orders", "shop.archive").ok());
  EXPECT_TRUE(set->CheckPlaceFree("shop", "items").ok());
}

TEST_F(TableSetTest, KeyColumnsAreTheClickHouseTablesNotTheConfigurations) {
  // The configuration says (total, id); the ClickHouse table, made before it changed, is sorted by
  // (customer, id): rows go by the table's key.
  auto set = Make(
      "tables: shop.*\n"
      "table_options:\n"
      "  shop.orders:\n"
      "    order_by: \"(total, id)\"\n");
  auto state = std::make_unique<TableState>();
  state->dest.source.database = "shop";
  state->dest.source.name = "orders";
  for (const char* name : {"id", "customer", "total"}) {
    schema::Column c;
    c.name = name;
    state->dest.source.columns.push_back(c);
  }
  // Read from the ClickHouse table: ORDER BY (customer, id).
  state->key_indexes = {1, 0};
  set->tables()["shop.orders"] = std::move(state);
  EXPECT_EQ(set->MappingFor("shop", "orders").order_by, "(total, id)");
  EXPECT_EQ(set->KeyColumns("shop.orders"), (std::vector<std::string>{"customer", "id"}));
  EXPECT_TRUE(set->KeyColumns("shop.items").empty());
}

TEST_F(TableSetTest, ABadTablesPatternIsRefusedNamingTheFlag) {
  config_ = PipeConfig{};
  config_.tables = ".orders";
  Destination destination(config_, cancel_);
  TableSet set(config_, destination);
  Status s = set.Configure();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("--tables"), std::string::npos) << s.error().message();
}

TEST_F(TableSetTest, AStatementIsPlannedUnderItsTablesPolicyPlaceAndKey) {
  auto set = Make(
      "tables: shop.*\n"
      "dest_database: analytics\n"
      "schema_changes:\n"
      "  drop_column: propagate\n"
      "  tables:\n"
      "    shop.orders: {drop_column: keep}\n"
      "table_options:\n"
      "  shop.orders:\n"
      "    dest: sales.orders_v2\n");
  PolicyContext orders = set->ContextFor("shop", "orders", /*ordinal_mode=*/false);
  EXPECT_EQ(orders.policy.drop_column, SchemaPolicy::DropColumn::kKeep);
  EXPECT_EQ(orders.target.database, "sales");
  EXPECT_EQ(orders.mapping.dest_table, "orders_v2");
  EXPECT_FALSE(orders.ordinal_mode);
  PolicyContext items = set->ContextFor("shop", "items", /*ordinal_mode=*/true);
  EXPECT_EQ(items.policy.drop_column, SchemaPolicy::DropColumn::kPropagate);
  EXPECT_EQ(items.target.database, "analytics");
  EXPECT_TRUE(items.ordinal_mode) << "the source sends no column names";
  // The key is the ClickHouse table's, as read when its writer was made (none before).
  EXPECT_TRUE(orders.clickhouse_key_columns.empty());
  auto state = std::make_unique<TableState>();
  for (const char* name : {"id", "region", "total"}) {
    schema::Column column;
    column.name = name;
    state->dest.source.columns.push_back(column);
  }
  state->key_indexes = {1, 0};
  set->tables()["shop.orders"] = std::move(state);
  EXPECT_EQ(set->ContextFor("shop", "orders", false).clickhouse_key_columns,
            (std::vector<std::string>{"region", "id"}));
}

}  // namespace
}  // namespace chsync::pipe
