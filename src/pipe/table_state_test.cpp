#include "pipe/table_state.h"

#include <gtest/gtest.h>

#include <thread>

#include "clickhouse/connection.h"

namespace chsync::pipe {
namespace {

TEST(ConcernsOneTable, TableLevelFailuresPark) {
  EXPECT_TRUE(ConcernsOneTable(Error(ErrorKind::kUnsupported, "truncate=fail")));
  EXPECT_TRUE(ConcernsOneTable(Error(ErrorKind::kServer, "No such column v", 16)));
  EXPECT_TRUE(ConcernsOneTable(Error(ErrorKind::kServer, "Cannot parse input", 27)));
  EXPECT_TRUE(ConcernsOneTable(Error(ErrorKind::kServer, "Table doesn't exist", 60)));
  EXPECT_TRUE(ConcernsOneTable(Error(ErrorKind::kServer, "Illegal type", 44)));
}

TEST(ConcernsOneTable, PipeLevelFailuresDoNot) {
  EXPECT_FALSE(ConcernsOneTable(Error(ErrorKind::kNetwork, "connection refused")));
  EXPECT_FALSE(ConcernsOneTable(Error(ErrorKind::kCorrupt, "bad event")));
  EXPECT_FALSE(ConcernsOneTable(Error(ErrorKind::kAuth, "wrong password")));
  EXPECT_FALSE(ConcernsOneTable(Error(ErrorKind::kServer, "Memory limit exceeded", 241)));
  EXPECT_FALSE(ConcernsOneTable(Error(ErrorKind::kServer, "Too many parts", 252)));
  EXPECT_FALSE(ConcernsOneTable(Error(ErrorKind::kServer, "readonly", 164)));
  EXPECT_FALSE(ConcernsOneTable(Error(ErrorKind::kServer, "Authentication failed", 516)));
  EXPECT_FALSE(ConcernsOneTable(clickhouse::CancelledError("stopping")));
  EXPECT_FALSE(ConcernsOneTable(Error(ErrorKind::kInternal, "bug")));
}

HeldTable Held(const std::string& table) {
  return {table, "parked", "ClickHouse refused its INSERT", "row", "binlog.000001:4", 1};
}

TEST(ParkBoard, TheStreamTakesEachParkedTableOnce) {
  ParkBoard board;
  EXPECT_TRUE(board.Park(Held("db.a")));
  EXPECT_FALSE(board.Park(Held("db.a")));
  EXPECT_TRUE(board.Parked("db.a"));
  EXPECT_FALSE(board.Parked("db.b"));
  ASSERT_EQ(board.Owed().size(), 1u);
  std::vector<HeldTable> taken = board.TakeNew();
  ASSERT_EQ(taken.size(), 1u);
  EXPECT_EQ(taken[0].table, "db.a");
  EXPECT_TRUE(board.TakeNew().empty());
  EXPECT_EQ(board.Owed().size(), 1u) << "taken over, its rows are still owed";
  EXPECT_TRUE(board.Parked("db.a")) << "taken over, the flusher still skips its batches";
  board.Forget("db.a");
  EXPECT_FALSE(board.Parked("db.a"));
  EXPECT_TRUE(board.Owed().empty()) << "copied again: nothing owed";
}

// Issue 33, case 2: the stream builds a checkpoint (no table held), the flusher parks db.a whose
// INSERT ClickHouse refused, the stream takes the park over before the flusher saves that
// checkpoint. The checkpoint lies past db.a's refused rows: it must hold db.a.
TEST(ParkBoard, ACheckpointBuiltBeforeATakeOverStillHoldsThePark) {
  ParkBoard board;
  std::vector<HeldTable> built;  // the checkpoint's own list, made before the park
  ASSERT_TRUE(board.Park(Held("db.a")));
  ASSERT_EQ(board.TakeNew().size(), 1u);  // PollControl: HoldTable
  std::vector<HeldTable> saved = built;
  MergeHeld(saved, board.Owed());  // what the flusher's save merges
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(saved[0].table, "db.a");
}

TEST(ParkBoard, ParksFromManyThreads) {
  ParkBoard board;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&board, t] {
      for (int i = 0; i < 100; ++i) board.Park(Held("db.t" + std::to_string((i + t) % 50)));
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(board.TakeNew().size(), 50u);
}

TEST(MergeHeld, KeepsTheFirstEntryOfATable) {
  std::vector<HeldTable> held{{"db.a", "paused", "chsync pause", "", "binlog.000001:4", 1}};
  MergeHeld(held, {Held("db.a"), Held("db.b")});
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[0].state, "paused");
  EXPECT_EQ(held[1].table, "db.b");
}

}  // namespace
}  // namespace chsync::pipe
