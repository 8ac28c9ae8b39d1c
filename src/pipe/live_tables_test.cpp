#include "pipe/live_tables.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace chsync::pipe {
namespace {

std::shared_ptr<const binlog::TableMap> MapOf(const std::string& database, const std::string& table) {
  auto map = std::make_shared<binlog::TableMap>();
  map->database = database;
  map->table = table;
  return map;
}

TEST(LiveTablesTest, FindsATableByNameAndByItsTableMap) {
  TableStates tables;
  tables["shop.orders"] = std::make_unique<TableState>();
  tables["shop.items"] = std::make_unique<TableState>();
  EXPECT_EQ(tables.Find("shop", "orders")->first, "shop.orders");
  EXPECT_EQ(tables.Find("shop", "order"), tables.end());
  EXPECT_EQ(tables.Find("shop.orders", ""), tables.end());

  auto orders = MapOf("shop", "orders");
  EXPECT_EQ(tables.Find(*orders, orders)->first, "shop.orders");
  EXPECT_EQ(tables.Find(*orders)->first, "shop.orders");
  auto other = MapOf("shop", "users");
  EXPECT_EQ(tables.Find(*other, other), tables.end());
}

TEST(LiveTablesTest, AnErasureForgetsEveryTableFoundByItsMap) {
  TableStates tables;
  tables["shop.orders"] = std::make_unique<TableState>();
  tables["shop.items"] = std::make_unique<TableState>();
  auto orders = MapOf("shop", "orders");
  auto items = MapOf("shop", "items");
  ASSERT_NE(tables.Find(*orders, orders), tables.end());
  ASSERT_NE(tables.Find(*items, items), tables.end());

  // A table dropped (or renamed away) at the source: the iterator remembered for its map is gone,
  // and a lookup through that map must not hand it out.
  tables.erase("shop.orders");
  EXPECT_EQ(tables.Find(*orders, orders), tables.end());
  EXPECT_EQ(tables.Find(*items, items)->first, "shop.items");
  // Added again under the same map (a re-created table): found anew.
  tables["shop.orders"] = std::make_unique<TableState>();
  EXPECT_EQ(tables.Find(*orders, orders)->first, "shop.orders");
  tables.clear();
  EXPECT_EQ(tables.Find(*items, items), tables.end());
  EXPECT_EQ(tables.Find(*orders, orders), tables.end());
}

TEST(LiveTablesTest, ATableNotFoundIsAskedAgainNextTime) {
  TableStates tables;
  auto users = MapOf("shop", "users");
  EXPECT_EQ(tables.Find(*users, users), tables.end());
  // Created by the stream (CREATE TABLE, a rename into the selection): no erasure in between.
  tables["shop.users"] = std::make_unique<TableState>();
  EXPECT_EQ(tables.Find(*users, users)->first, "shop.users");
}

TEST(LiveTablesTest, ManyMapsRotateThroughTheRememberedOnes) {
  TableStates tables;
  std::vector<std::shared_ptr<const binlog::TableMap>> maps;
  for (int i = 0; i < 40; ++i) {
    const std::string name = "t" + std::to_string(i);
    tables["db." + name] = std::make_unique<TableState>();
    maps.push_back(MapOf("db", name));
  }
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 40; ++i) {
      auto it = tables.Find(*maps[static_cast<size_t>(i)], maps[static_cast<size_t>(i)]);
      ASSERT_NE(it, tables.end());
      EXPECT_EQ(it->first, "db.t" + std::to_string(i));
    }
  }
}

}  // namespace
}  // namespace chsync::pipe
