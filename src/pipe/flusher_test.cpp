#include "pipe/flusher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace chsync::pipe {
namespace {

using namespace std::chrono_literals;

/// What the fake lanes saw, shared by all of them.
struct Journal {
  std::mutex mutex;
  std::condition_variable changed;
  std::set<std::string> stored;  ///< the data of every acknowledged insert
  int in_flight = 0;
  int most_in_flight = 0;
  /// Inserts whose data starts with "hold" wait until this many inserts are in flight at once
  /// (or 10 s: then the test fails on most_in_flight).
  int hold_for = 0;
};

class FakeLane : public clickhouse::Connection {
 public:
  FakeLane(Journal& journal, std::string name) : journal_(journal), name_(std::move(name)) {}
  std::string Describe() const override { return name_; }
  bool embedded() const override { return false; }
  /// The insert with this data fails (kServer, not retried).
  std::string fail_on;

 protected:
  Result<std::string> Run(std::string_view, std::string_view data, std::string_view,
                          const clickhouse::RequestOptions&) override {
    std::unique_lock<std::mutex> lock(journal_.mutex);
    ++journal_.in_flight;
    journal_.most_in_flight = std::max(journal_.most_in_flight, journal_.in_flight);
    journal_.changed.notify_all();
    if (data.starts_with("hold")) {
      journal_.changed.wait_for(lock, 10s, [&] { return journal_.most_in_flight >= journal_.hold_for; });
    } else if (data.starts_with("slow")) {
      journal_.changed.wait_for(lock, 100ms, [] { return false; });
    }
    --journal_.in_flight;
    if (data == fail_on) return Error(ErrorKind::kServer, "refused " + std::string(data));
    journal_.stored.insert(std::string(data));
    return std::string();
  }

 private:
  Journal& journal_;
  std::string name_;
};

std::vector<std::unique_ptr<clickhouse::Connection>> Lanes(Journal& journal, size_t n,
                                                           std::vector<FakeLane*>* out = nullptr) {
  std::vector<std::unique_ptr<clickhouse::Connection>> lanes;
  for (size_t i = 0; i < n; ++i) {
    auto lane = std::make_unique<FakeLane>(journal, "lane " + std::to_string(i));
    lane->set_retry_policy(clickhouse::RetryPolicy{.max_attempts = 1});
    if (out != nullptr) out->push_back(lane.get());
    lanes.push_back(std::move(lane));
  }
  return lanes;
}

TEST(FlusherTest, LanesSendAtTheSameTime) {
  Journal journal;
  journal.hold_for = 2;
  Flusher flusher(Lanes(journal, 3), 4, 1 << 20);
  ASSERT_TRUE(flusher.Insert("INSERT", "hold 1", 1).ok());
  ASSERT_TRUE(flusher.Insert("INSERT", "hold 2", 2).ok());
  ASSERT_TRUE(flusher.Drain().ok());
  EXPECT_EQ(journal.most_in_flight, 2);
  EXPECT_EQ(journal.stored, (std::set<std::string>{"hold 1", "hold 2"}));
}

TEST(FlusherTest, ATaskRunsAfterEveryLanesEarlierBatchesInOrder) {
  Journal journal;
  Flusher flusher(Lanes(journal, 3), 4, 1 << 20);
  std::vector<std::pair<int, std::set<std::string>>> seen;
  std::mutex seen_mutex;
  auto task = [&](int n) {
    return [&, n]() -> Status {
      std::set<std::string> now;
      {
        std::lock_guard<std::mutex> lock(journal.mutex);
        now = journal.stored;
      }
      std::lock_guard<std::mutex> lock(seen_mutex);
      seen.emplace_back(n, std::move(now));
      return Status::Ok();
    };
  };
  // Lane 1 is slow before the first task, lane 2 before the second: each task must still wait
  // for both, and the first must run before the second.
  ASSERT_TRUE(flusher.Insert("INSERT", "slow a", 1).ok());
  ASSERT_TRUE(flusher.Insert("INSERT", "b", 2).ok());
  ASSERT_TRUE(flusher.Insert("INSERT", "c", 0).ok());
  ASSERT_TRUE(flusher.After(task(1)).ok());
  ASSERT_TRUE(flusher.Insert("INSERT", "d", 1).ok());
  ASSERT_TRUE(flusher.Insert("INSERT", "slow e", 2).ok());
  ASSERT_TRUE(flusher.After(task(2)).ok());
  ASSERT_TRUE(flusher.Drain().ok());
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].first, 1);
  for (const char* before : {"slow a", "b", "c"}) EXPECT_TRUE(seen[0].second.contains(before)) << before;
  EXPECT_EQ(seen[1].first, 2);
  for (const char* before : {"slow a", "b", "c", "d", "slow e"}) {
    EXPECT_TRUE(seen[1].second.contains(before)) << before;
  }
}

TEST(FlusherTest, AFailedLaneStopsEveryLaneAndNoLaterTaskRuns) {
  Journal journal;
  std::vector<FakeLane*> fakes;
  Flusher flusher(Lanes(journal, 3, &fakes), 4, 1 << 20);
  fakes[2]->fail_on = "slow bad";
  bool ran = false;
  ASSERT_TRUE(flusher.Insert("INSERT", "slow ok", 1).ok());
  ASSERT_TRUE(flusher.Insert("INSERT", "slow bad", 2).ok());
  // Usually queued while both lanes still send; if lane 2 has failed already, the call says so.
  Status queued = flusher.After([&] {
    ran = true;
    return Status::Ok();
  });
  Status drained = flusher.Drain();
  ASSERT_FALSE(drained.ok());
  EXPECT_NE(drained.error().message().find("refused slow bad"), std::string::npos)
      << drained.error().message();
  if (!queued.ok()) {
    EXPECT_EQ(queued.error().message(), drained.error().message());
  }
  EXPECT_FALSE(ran) << "a checkpoint after rows a shard refused";
  EXPECT_FALSE(flusher.Insert("INSERT", "later", 1).ok());
  EXPECT_FALSE(journal.stored.contains("later"));
}

TEST(FlusherTest, ARejectedBatchThatIsAbsorbedLetsTheRestGoOn) {
  Journal journal;
  std::vector<FakeLane*> fakes;
  Flusher flusher(Lanes(journal, 1, &fakes), 4, 1 << 20);
  fakes[0]->fail_on = "t2 bad";
  std::atomic<bool> parked{false};
  std::string refused;
  auto batch = [&](bool absorb) {
    Flusher::BatchInfo info;
    if (absorb) {
      info.skip = [&] { return parked.load(); };
      info.rejected = [&](const Error& e) {
        refused = e.message();
        parked = true;
        return true;
      };
    }
    return info;
  };
  bool ran = false;
  ASSERT_TRUE(flusher.Insert("INSERT", "t1 a", 0).ok());
  ASSERT_TRUE(flusher.Insert("INSERT", "t2 bad", 0, batch(true)).ok());
  ASSERT_TRUE(flusher.Insert("INSERT", "t2 later", 0, batch(true)).ok());
  ASSERT_TRUE(flusher.Insert("INSERT", "t1 b", 0).ok());
  ASSERT_TRUE(flusher
                  .After([&] {
                    ran = true;
                    return Status::Ok();
                  })
                  .ok());
  ASSERT_TRUE(flusher.Drain().ok());
  EXPECT_TRUE(ran) << "the checkpoint after an absorbed refusal runs";
  EXPECT_EQ(refused, "refused t2 bad");
  EXPECT_EQ(journal.stored, (std::set<std::string>{"t1 a", "t1 b"}))
      << "the parked table's later batch is dropped, the other table's rows are sent";
  // A refusal nobody absorbs still stops the flusher.
  fakes[0]->fail_on = "t3 bad";
  ASSERT_TRUE(flusher.Insert("INSERT", "t3 bad", 0, batch(false)).ok());
  EXPECT_FALSE(flusher.Drain().ok());
}

TEST(FlusherTest, DescribeNamesTheShardLanes) {
  Journal journal;
  Flusher one(Lanes(journal, 1), 4, 1 << 20);
  EXPECT_EQ(one.Describe(), "lane 0");
  Flusher three(Lanes(journal, 3), 4, 1 << 20);
  EXPECT_EQ(three.Describe(), "shard 1 lane 1, shard 2 lane 2");
}

}  // namespace
}  // namespace chsync::pipe
