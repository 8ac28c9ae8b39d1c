#include "pipe/rebuilds.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace chsync::pipe {
namespace {

/// Waits (up to 10 s) until `rebuild`'s copy says it finished.
bool WaitFinished(const Rebuilder& rebuild) {
  for (int i = 0; i < 1000 && !rebuild.finished; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return rebuild.finished;
}

TEST(RebuildsTest, ACopysProgressAndOutcomeReachTheStreamAndItsEndIsSeenUntilSwappedIn) {
  TableStates tables;
  tables["shop.orders"] = std::make_unique<TableState>();
  tables["shop.items"] = std::make_unique<TableState>();
  Rebuilds rebuilds;
  EXPECT_FALSE(rebuilds.AnyFinished(tables));

  std::atomic<bool> go{false};
  auto& orders = *tables["shop.orders"];
  orders.rebuild = std::make_unique<Rebuilder>();
  rebuilds.Launch(*orders.rebuild, [&](const auto& on_chunk, const std::atomic<bool>&) -> Status {
    TableSnapshot progress{"shop", "orders", TableSnapshot::State::kCopying, "5", 5, std::nullopt};
    CHSYNC_RETURN_IF_ERROR(on_chunk(progress));
    while (!go) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    progress.state = TableSnapshot::State::kDone;
    progress.rows_copied = 9;
    return on_chunk(progress);
  });
  // Running: not finished, and its progress is there for a checkpoint.
  for (int i = 0; i < 1000; ++i) {
    std::lock_guard<std::mutex> lock(orders.rebuild->mutex);
    if (orders.rebuild->state.progress.rows_copied == 5) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  {
    std::lock_guard<std::mutex> lock(orders.rebuild->mutex);
    EXPECT_EQ(orders.rebuild->state.progress.rows_copied, 5u);
  }
  EXPECT_FALSE(rebuilds.AnyFinished(tables));
  go = true;
  ASSERT_TRUE(WaitFinished(*orders.rebuild));
  EXPECT_TRUE(rebuilds.AnyFinished(tables));
  EXPECT_TRUE(rebuilds.AnyFinished(tables)) << "it stays finished until swapped in";
  orders.rebuild->thread.join();
  EXPECT_TRUE(orders.rebuild->result.ok());
  EXPECT_EQ(orders.rebuild->state.progress.state, TableSnapshot::State::kDone);
  // Swapped in (the rebuild goes): no copy finished any more.
  orders.rebuild.reset();
  EXPECT_FALSE(rebuilds.AnyFinished(tables));
  // Asked once per transaction, it walks the tables only when a copy ended since it last said no:
  // a Rebuilder marked finished by anything but a copy is not looked at.
  auto& items = *tables["shop.items"];
  items.rebuild = std::make_unique<Rebuilder>();
  items.rebuild->finished = true;
  EXPECT_FALSE(rebuilds.AnyFinished(tables));
}

TEST(RebuildsTest, StoppingWaitsForEveryCopyAndAFailureIsKept) {
  TableStates tables;
  Rebuilds rebuilds;
  for (const char* name : {"db.a", "db.b"}) {
    tables[name] = std::make_unique<TableState>();
    tables[name]->rebuild = std::make_unique<Rebuilder>();
  }
  rebuilds.Launch(*tables["db.a"]->rebuild, [](const auto&, const std::atomic<bool>& stop) -> Status {
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return Status::Ok();  // stopped: unfinished, not an error
  });
  rebuilds.Launch(*tables["db.b"]->rebuild, [](const auto&, const std::atomic<bool>&) -> Status {
    return Error(ErrorKind::kServer, "Unknown column 'x'", 1054);
  });
  ASSERT_TRUE(WaitFinished(*tables["db.b"]->rebuild));
  EXPECT_TRUE(rebuilds.AnyFinished(tables));
  Rebuilds::StopAll(tables);
  EXPECT_FALSE(tables["db.a"]->rebuild->thread.joinable());
  EXPECT_TRUE(tables["db.a"]->rebuild->finished);
  EXPECT_TRUE(tables["db.a"]->rebuild->result.ok());
  ASSERT_FALSE(tables["db.b"]->rebuild->result.ok());
  EXPECT_EQ(tables["db.b"]->rebuild->result.error().server_code(), 1054);
}

// Many tables added at once each get a copy: no more than the limit run together, every one gets
// its turn, and one stopped while waiting copies nothing.
TEST(RebuildsTest, NoMoreCopiesRunAtOnceThanTheLimitAndEachGetsItsTurn) {
  TableStates tables;
  Rebuilds rebuilds;
  rebuilds.SetParallelism(2);
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  std::atomic<int> copied{0};
  for (int i = 0; i < 6; ++i) {
    const std::string key = "db.t" + std::to_string(i);
    tables[key] = std::make_unique<TableState>();
    tables[key]->rebuild = std::make_unique<Rebuilder>();
    rebuilds.Launch(*tables[key]->rebuild, [&](const auto&, const std::atomic<bool>&) -> Status {
      const int now = ++running;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      --running;
      ++copied;
      return Status::Ok();
    });
  }
  for (auto& [key, table] : tables) ASSERT_TRUE(WaitFinished(*table->rebuild)) << key;
  EXPECT_EQ(copied, 6);
  EXPECT_LE(most, 2);
  EXPECT_EQ(most, 2) << "two copies ran side by side";

  // One waits behind a copy that runs until stopped; stopped, it never copies.
  TableStates more;
  Rebuilds one;
  one.SetParallelism(1);
  for (const char* name : {"db.x", "db.y"}) {
    more[name] = std::make_unique<TableState>();
    more[name]->rebuild = std::make_unique<Rebuilder>();
  }
  std::atomic<bool> y_copied{false};
  one.Launch(*more["db.x"]->rebuild, [](const auto&, const std::atomic<bool>& stop) -> Status {
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return Status::Ok();
  });
  one.Launch(*more["db.y"]->rebuild, [&](const auto&, const std::atomic<bool>&) -> Status {
    y_copied = true;
    return Status::Ok();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(more["db.y"]->rebuild->finished) << "it waits for its turn";
  more["db.y"]->rebuild->Stop();
  EXPECT_TRUE(more["db.y"]->rebuild->finished);
  EXPECT_FALSE(more["db.y"]->rebuild->result.ok());
  EXPECT_FALSE(y_copied);
  Rebuilds::StopAll(more);
}

}  // namespace
}  // namespace chsync::pipe
