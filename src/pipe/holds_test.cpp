#include "pipe/holds.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace chsync::pipe {
namespace {

schema::TableSchema Table(const std::string& database, const std::string& name) {
  schema::TableSchema table;
  table.database = database;
  table.name = name;
  return table;
}

// shop.* parks a table whose statement or rows fail; audit.* stops the pipe instead.
PolicySet Policies() {
  PolicySet policies;
  EXPECT_TRUE(policies.Assign("audit.*:on_table_error=stop").ok());
  return policies;
}

const Error kRefused(ErrorKind::kUnsupported, "ClickHouse cannot hold that type");
const Error kUnreachable(ErrorKind::kNetwork, "connection refused");

TEST(HoldsTest, OnlyAFailureOfOneTableParksItAndOnlyWhereThePolicySaysPark) {
  const PolicySet policies = Policies();
  Holds holds(policies);
  std::optional<HeldTable> held =
      holds.ParkFor(Table("shop", "orders"), "shop.orders", kRefused, "ALTER TABLE orders …", "b.000001:42");
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->table, "shop.orders");
  EXPECT_EQ(held->state, "parked");
  EXPECT_EQ(held->reason, kRefused.message());
  EXPECT_EQ(held->statement, "ALTER TABLE orders …");
  EXPECT_EQ(held->position, "b.000001:42");
  EXPECT_GT(held->at_ms, 0U);
  // A statement is kept to its first 1000 bytes.
  held =
      holds.ParkFor(Table("shop", "orders"), "shop.orders", kRefused, std::string(5000, 'x'), "b.000001:42");
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->statement.size(), 1000U);

  // The network concerns every table: the pipe retries, nothing is parked.
  EXPECT_FALSE(holds.ParkFor(Table("shop", "orders"), "shop.orders", kUnreachable, "", "b.000001:42"));
  // on_table_error=stop: the pipe stops on it.
  EXPECT_FALSE(holds.ParkFor(Table("audit", "log"), "audit.log", kRefused, "", "b.000001:42"));
}

TEST(HoldsTest, ARefusedInsertParksItsTableOnceAndDropsItsLaterBatches) {
  const PolicySet policies = Policies();
  Holds holds(policies);
  FlushBatchInfo first;
  first.rows = 7;
  holds.AttachParking(first, "shop.orders", "b.000002:900", "/var/lib/chsync");
  ASSERT_TRUE(first.skip && first.rejected);
  EXPECT_FALSE(first.skip());

  // ClickHouse unreachable: not absorbed (the flusher retries or stops), nothing parked.
  EXPECT_FALSE(first.rejected(kUnreachable));
  EXPECT_FALSE(first.skip());
  EXPECT_TRUE(holds.TakeParkedByFlusher().empty());

  // Refused for good: parked, and every later batch of the table is dropped unsent.
  EXPECT_TRUE(first.rejected(kRefused));
  FlushBatchInfo later;
  holds.AttachParking(later, "shop.orders", "b.000002:950", "/var/lib/chsync");
  EXPECT_TRUE(later.skip());
  EXPECT_TRUE(later.rejected(kRefused));  // absorbed, but the first park stays
  std::vector<HeldTable> parked = holds.TakeParkedByFlusher();
  ASSERT_EQ(parked.size(), 1U);
  EXPECT_EQ(parked[0].table, "shop.orders");
  EXPECT_EQ(parked[0].position, "b.000002:900");
  EXPECT_EQ(parked[0].statement, "INSERT of 7 rows (changes up to b.000002:900)");
  EXPECT_NE(parked[0].reason.find(kRefused.message()), std::string::npos);
  EXPECT_TRUE(holds.TakeParkedByFlusher().empty()) << "taken over once";

  // Owed (in every checkpoint) until the copy that ends it starts.
  ASSERT_EQ(holds.board().Owed().size(), 1U);
  holds.Unparked("shop.orders");
  EXPECT_TRUE(holds.board().Owed().empty());
  EXPECT_FALSE(later.skip());

  // on_table_error=stop: a refused INSERT stops the pipe (nothing attached).
  FlushBatchInfo audit;
  holds.AttachParking(audit, "audit.log", "b.000002:990", "/var/lib/chsync");
  EXPECT_FALSE(audit.skip);
  EXPECT_FALSE(audit.rejected);
}

TEST(HoldsTest, RequestsAreReadAtMostOnceASecond) {
  const PolicySet policies;
  Holds holds(policies);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(holds.RequestsDue(t0));
  EXPECT_FALSE(holds.RequestsDue(t0 + std::chrono::milliseconds(999)));
  EXPECT_TRUE(holds.RequestsDue(t0 + std::chrono::milliseconds(1000)));
  EXPECT_FALSE(holds.RequestsDue(t0 + std::chrono::milliseconds(1500)));
}

TEST(HoldsTest, EachRequestOnEachStateOfATable) {
  TableStates tables;
  tables["shop.orders"] = std::make_unique<TableState>();  // streaming
  tables["shop.paused"] = std::make_unique<TableState>();
  tables["shop.paused"]->held = HeldTable{"shop.paused", "paused", "chsync pause", "", "b.000001:4", 1};
  tables["shop.parked"] = std::make_unique<TableState>();
  tables["shop.parked"]->held = HeldTable{"shop.parked", "parked", "bad type", "ALTER …", "b.000001:8", 1};
  tables["shop.copied"] = std::make_unique<TableState>();
  tables["shop.copied"]->rebuild = std::make_unique<Rebuilder>();
  using Action = RequestPlan::Action;

  RequestPlan plan = Holds::Plan("pause", "shop.nope", tables);
  EXPECT_EQ(plan.action, Action::kAnswer);
  EXPECT_EQ(plan.answer,
            "refused: shop.nope is not a table this pipe replicates (it replicates shop.copied, shop.orders, "
            "shop.parked, shop.paused)");
  TableStates none;
  EXPECT_EQ(Holds::Plan("pause", "shop.nope", none).answer,
            "refused: shop.nope is not a table this pipe replicates (it replicates none)");

  plan = Holds::Plan("pause", "shop.orders", tables);
  EXPECT_EQ(plan.action, Action::kPause);
  EXPECT_EQ(plan.table, tables["shop.orders"].get());
  EXPECT_EQ(Holds::Plan("pause", "shop.paused", tables).answer,
            "done: shop.paused was paused already (since b.000001:4)");
  EXPECT_EQ(Holds::Plan("pause", "shop.parked", tables).answer,
            "refused: shop.parked is parked (bad type); resume or resync it");

  EXPECT_EQ(Holds::Plan("resume", "shop.orders", tables).answer,
            "refused: shop.orders is not paused or parked (it is streaming)");
  EXPECT_EQ(Holds::Plan("resume", "shop.copied", tables).answer,
            "refused: shop.copied is not paused or parked (it is being copied)");
  for (const char* key : {"shop.paused", "shop.parked"}) {
    plan = Holds::Plan("resume", key, tables);
    EXPECT_EQ(plan.action, Action::kRecopy) << key;
    EXPECT_EQ(plan.table, tables[key].get());
    EXPECT_EQ(plan.reason, "chsync resume");
    EXPECT_EQ(plan.was, tables[key]->held->state);
  }
  for (const char* key : {"shop.orders", "shop.paused", "shop.parked", "shop.copied"}) {
    plan = Holds::Plan("resync", key, tables);
    EXPECT_EQ(plan.action, Action::kRecopy) << key;
    EXPECT_EQ(plan.reason, "chsync resync --table");
    EXPECT_EQ(plan.was, tables[key]->held ? tables[key]->held->state : "");
  }
  EXPECT_EQ(Holds::Plan("drop", "shop.orders", tables).answer, "refused: unknown request 'drop'");

  EXPECT_EQ(
      Holds::Paused("shop.orders", "b.000001:9"),
      "done: shop.orders paused at b.000001:9; its ClickHouse table keeps its rows, and `chsync resume` "
      "copies it again online");
  EXPECT_EQ(
      Holds::Recopying("shop.parked", "parked", "b.000001:9"),
      "done: shop.parked (parked) is being copied again online from b.000001:9; every other table keeps "
      "streaming");
  EXPECT_EQ(
      Holds::Recopying("shop.orders", "", "b.000001:9"),
      "done: shop.orders is being copied again online from b.000001:9; every other table keeps streaming");
}

}  // namespace
}  // namespace chsync::pipe
