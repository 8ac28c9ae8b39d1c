#include "pipe/schema_applier.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "common/test_util.h"
#include "config/config.h"

namespace chsync::pipe {
namespace {

/// The pipe as the schema applier sees it; nothing here is asked of it.
class NoHost : public ApplierHost {
 public:
  Status ParkTable(TableState&, const std::string&, const Error& error, const std::string&,
                   const std::string&) override {
    return error;
  }
  Status StartRebuild(TableState&, const std::string&, const std::string&, bool) override {
    return Status::Ok();
  }
  Status CancelRebuild(TableState&) override { return Status::Ok(); }
  Status RebuildWriter(TableState&) override { return Status::Ok(); }
  Status BetweenTransactions() override { return Status::Ok(); }
  void NoteCascades() override {}
  void BeforeCheckpoint() override {}
};

/// Which statements concern the replicated tables (shop.orders replicated, shop.audit not), decided
/// without a server.
class SchemaApplierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(LoadConfigText("source: mysql://u@127.0.0.1:3306\ndest: http://127.0.0.1:8123\n"
                               "tables: shop.orders,shop.items\n",
                               "test.yaml", config_)
                    .ok());
    ASSERT_TRUE(set_.Configure().ok());
    for (const char* sql :
         {"CREATE TABLE orders (id INT PRIMARY KEY)", "CREATE TABLE audit (id INT PRIMARY KEY)"})
      ASSERT_TRUE(tracker_.ApplySql(sql, "shop", {}).ok());
    auto orders = std::make_unique<TableState>();
    orders->dest.source = *tracker_.Find("shop", "orders");
    set_.tables()["shop.orders"] = std::move(orders);
  }

  /// What the tracker reports for `sql`, with the renames it could not report added.
  schema::ApplyResult Apply(std::string_view sql) {
    auto applied = tracker_.ApplySql(sql, "shop", {});
    EXPECT_TRUE(applied.ok()) << applied.error().message();
    if (!applied.ok()) return {};
    schema_.AddUntrackedRenames(sql, "shop", {}, *applied);
    return *applied;
  }
  static binlog::Event At(uint64_t position) {
    binlog::Event event;
    event.file = "binlog.000002";
    event.position = position;
    return event;
  }

  PipeConfig config_;
  std::atomic<bool> cancel_{false};
  SourceLink source_;
  schema::Tracker tracker_{{/*full_metadata=*/true, /*mariadb=*/true}};
  Checkpoint checkpoint_;
  RunStatus status_;
  Destination destination_{config_, cancel_};
  TableSet set_{config_, destination_};
  Holds holds_{config_.policies};
  Checkpointer checkpointer_{holds_.board()};
  std::optional<Versions> versions_;
  SchemaHistory history_{status_, destination_};
  NoHost host_;
  SchemaApplier schema_{{config_, source_, tracker_, checkpoint_, set_, destination_, checkpointer_, holds_,
                         versions_, history_},
                        host_};
};

TEST_F(SchemaApplierTest, AStatementConcernsTheReplicatedTablesOnly) {
  EXPECT_TRUE(schema_.Concerns(At(100), Apply("ALTER TABLE orders ADD COLUMN note TEXT")));
  EXPECT_FALSE(schema_.Concerns(At(200), Apply("ALTER TABLE audit ADD COLUMN note TEXT")))
      << "shop.audit does not match --tables";
  EXPECT_TRUE(schema_.Concerns(At(300), Apply("CREATE TABLE items (id INT PRIMARY KEY)")))
      << "a table created under a replicated name is replicated from its first row";
  EXPECT_TRUE(schema_.Concerns(At(400), Apply("CREATE TABLE _orders_gho (id INT PRIMARY KEY)")))
      << "gh-ost's shadow of a replicated table";

  // Dropped at the source, its ClickHouse table kept: a table created again under its name concerns it.
  set_.dropped()["shop.gone"] = DestinationTable{};
  EXPECT_TRUE(schema_.Concerns(At(1600), Apply("CREATE TABLE gone (id INT PRIMARY KEY)")));
}

TEST_F(SchemaApplierTest, ARenameOfAnUntrackedTableOntoAReplicatedNameIsAChange) {
  // shop.legacy was never tracked (created before the pipe started, outside --tables): the tracker
  // reports nothing of it, yet its rows now belong to replicated shop.items.
  auto applied = tracker_.ApplySql("RENAME TABLE legacy TO items", "shop", {});
  ASSERT_TRUE(applied.ok());
  EXPECT_TRUE(applied->changes.empty());
  schema_.AddUntrackedRenames("RENAME TABLE legacy TO items", "shop", {}, *applied);
  ASSERT_EQ(applied->changes.size(), 1u);
  EXPECT_EQ(applied->changes[0].kind, schema::SchemaChange::Kind::kTableRenamed);
  EXPECT_EQ(applied->changes[0].old_table.name, "legacy");
  EXPECT_EQ(applied->changes[0].table.database, "shop");
  EXPECT_EQ(applied->changes[0].table.name, "items");
  EXPECT_TRUE(schema_.Concerns(At(100), *applied));

  // Onto a name that is not replicated: nothing to copy.
  schema::ApplyResult other = Apply("RENAME TABLE legacy2 TO archive");
  EXPECT_TRUE(other.changes.empty());
  // A tracked table's rename is reported once, by the tracker.
  schema::ApplyResult tracked = Apply("RENAME TABLE audit TO items_old, orders TO orders_v1");
  EXPECT_EQ(tracked.changes.size(), 2u);
}

}  // namespace
}  // namespace chsync::pipe
