// Runs the built `chsync pause`, `chsync resume` and `chsync resync --table` (registered by
// src/cli/table_control.cmake) against a state directory. A "running pipe" is this test holding the
// directory's lock with StateDir::Open and answering requests from a thread, as the pipe does.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/test_util.h"
#include "state/control.h"
#include "state/state_dir.h"

namespace chsync::pipe {
namespace {

using std::chrono::milliseconds;

using test::CommandRun;
using test::Has;
using test::TempDir;

/// A state directory with a saved checkpoint, as a pipe leaves it.
void SaveCheckpoint(const std::string& dir) {
  auto state = StateDir::Open(dir);
  ASSERT_TRUE(state.ok()) << state.error().message();
  Checkpoint c;
  c.resume = {"binlog.000001", 4, ""};
  ASSERT_TRUE((*state)->Save(c).ok());
}

CommandRun Chsync(const std::string& args, const std::string& scratch) {
  return test::RunCommand(std::string(CHSYNC_BINARY) + " " + args, scratch + "/stderr.txt");
}

/// Holds the state directory's lock as `chsync run` does and, when `outcome` is not empty, answers
/// every request with it.
class FakePipe {
 public:
  FakePipe(const std::string& dir, std::string outcome) : dir_(dir), outcome_(std::move(outcome)) {
    auto state = StateDir::Open(dir);
    EXPECT_TRUE(state.ok()) << state.error().message();
    if (state.ok()) state_ = std::move(*state);
    if (!outcome_.empty()) thread_ = std::thread([this] { Answer(); });
  }
  ~FakePipe() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  FakePipe(const FakePipe&) = delete;
  FakePipe& operator=(const FakePipe&) = delete;

  std::vector<ControlRequest> seen() {
    std::lock_guard<std::mutex> lock(mutex_);
    return seen_;
  }

 private:
  void Answer() {
    while (!stop_) {
      auto pending = PendingRequests(dir_);
      EXPECT_TRUE(pending.ok());
      if (pending.ok()) {
        for (const ControlRequest& r : *pending) {
          {
            std::lock_guard<std::mutex> lock(mutex_);
            seen_.push_back(r);
          }
          EXPECT_TRUE(CompleteRequest(dir_, r.id, outcome_).ok());
        }
      }
      std::this_thread::sleep_for(milliseconds(50));
    }
  }

  std::string dir_;
  std::string outcome_;
  std::unique_ptr<StateDir> state_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<ControlRequest> seen_;
  std::thread thread_;
};

TEST(TableControlCli, WithoutARunningPipeTheRequestIsQueued) {
  TempDir scratch;
  std::string state = std::string(scratch) + "/state";
  SaveCheckpoint(state);
  CommandRun r = Chsync("pause --state " + state + " --table shop.orders", scratch);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Has(r.out, "no chsync run holds " + state + ": the request waits in " + state +
                             "/requests and the next `chsync run` on it carries it out"))
      << r.out;
  auto pending = PendingRequests(state);
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].op, "pause");
  EXPECT_EQ((*pending)[0].table, "shop.orders");
  EXPECT_TRUE(std::filesystem::exists(state + "/requests/" + (*pending)[0].id + ".req"));
}

TEST(TableControlCli, ATableThatIsNotDbDotTableIsBadUsage) {
  TempDir scratch;
  std::string state = std::string(scratch) + "/state";
  SaveCheckpoint(state);
  CommandRun r = Chsync("resume --state " + state + " --table orders", scratch);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(Has(r.err, "--table must be DB.TABLE, not 'orders'")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(state + "/requests"));
}

TEST(TableControlCli, AStateDirectoryThatIsNotAPipesIsBadUsage) {
  TempDir scratch;
  CommandRun missing = Chsync("pause --state " + std::string(scratch) + "/nowhere --table shop.t", scratch);
  EXPECT_EQ(missing.exit_code, 2) << missing.out << missing.err;
  EXPECT_TRUE(Has(missing.err, "does not exist")) << missing.err;

  std::string empty = std::string(scratch) + "/empty";
  std::filesystem::create_directory(empty);
  CommandRun no_checkpoint = Chsync("pause --state " + empty + " --table shop.t", scratch);
  EXPECT_EQ(no_checkpoint.exit_code, 2) << no_checkpoint.out << no_checkpoint.err;
  EXPECT_TRUE(Has(no_checkpoint.err, "holds no checkpoint.json")) << no_checkpoint.err;
  EXPECT_FALSE(std::filesystem::exists(empty + "/requests"));

  CommandRun no_state = Chsync("pause --table shop.t", scratch);
  EXPECT_EQ(no_state.exit_code, 2) << no_state.out << no_state.err;
}

TEST(TableControlCli, ARunningPipeAnswersDone) {
  TempDir scratch;
  std::string state = std::string(scratch) + "/state";
  SaveCheckpoint(state);
  FakePipe pipe(state, "done: shop.orders paused at binlog.000001:4");
  CommandRun r = Chsync("pause --state " + state + " --table shop.orders --wait-s 30", scratch);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "done: shop.orders paused at binlog.000001:4\n");
  std::vector<ControlRequest> seen = pipe.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].op, "pause");
  EXPECT_EQ(seen[0].table, "shop.orders");
  EXPECT_FALSE(std::filesystem::exists(state + "/requests/" + seen[0].id + ".req"));
  EXPECT_FALSE(std::filesystem::exists(state + "/requests/" + seen[0].id + ".done"));  // collected
}

TEST(TableControlCli, ARunningPipeRefuses) {
  TempDir scratch;
  std::string state = std::string(scratch) + "/state";
  SaveCheckpoint(state);
  FakePipe pipe(state, "refused: shop.orders is not paused or parked");
  CommandRun r = Chsync("resume --state " + state + " --table shop.orders --wait-s 30", scratch);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.out, "refused: shop.orders is not paused or parked\n");
}

TEST(TableControlCli, ResyncOfOneTableGoesToTheRunningPipe) {
  TempDir scratch;
  std::string state = std::string(scratch) + "/state";
  SaveCheckpoint(state);
  FakePipe pipe(state, "done: shop.orders copied again online (12 rows)");
  // No --source or --dest: the running pipe has them.
  CommandRun r = Chsync("resync --state " + state + " --table shop.orders --wait-s 30", scratch);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "done: shop.orders copied again online (12 rows)\n");
  std::vector<ControlRequest> seen = pipe.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].op, "resync");
  EXPECT_EQ(seen[0].table, "shop.orders");
}

TEST(TableControlCli, ResyncOfEveryTableWhileAPipeRunsIsRefused) {
  TempDir scratch;
  std::string state = std::string(scratch) + "/state";
  SaveCheckpoint(state);
  FakePipe pipe(state, "");
  CommandRun r = Chsync("resync --state " + state, scratch);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(Has(r.err, "stop it first")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(state + "/requests"));
}

TEST(TableControlCli, NoAnswerInTimeLeavesTheRequestQueued) {
  TempDir scratch;
  std::string state = std::string(scratch) + "/state";
  SaveCheckpoint(state);
  FakePipe pipe(state, "");  // holds the lock, never answers
  CommandRun r = Chsync("pause --state " + state + " --table shop.orders --wait-s 1", scratch);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(Has(r.err, "no answer within 1 s")) << r.err;
  EXPECT_TRUE(
      Has(r.err, "stays queued in " + state +
                     "/requests and the running pipe carries it out at its next transaction boundary"))
      << r.err;
  auto pending = PendingRequests(state);
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].op, "pause");
}

}  // namespace
}  // namespace chsync::pipe
