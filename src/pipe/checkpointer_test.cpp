#include "pipe/checkpointer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "common/test_util.h"
#include "state/control.h"
#include "state/xa_store.h"

namespace chsync::pipe {
namespace {

using test::TempDir;

Checkpoint At(uint64_t position) {
  Checkpoint c;
  c.resume = SourcePosition{"binlog.000001", position, "0-1-" + std::to_string(position), 0, 0};
  return c;
}

struct Fixture {
  TempDir dir;
  ParkBoard board;
  Checkpointer checkpointer{board};
  std::string request;
  std::string rows_file = XaRowsFileName(1, 150);

  Fixture() {
    EXPECT_TRUE(checkpointer.Open(dir.path()).ok());
    EXPECT_TRUE(checkpointer.Save(At(100)).ok());
    auto submitted = SubmitRequest(dir.path(), "pause", "shop.orders");
    EXPECT_TRUE(submitted.ok());
    if (submitted.ok()) request = submitted->id;
    EXPECT_TRUE(WriteXaRows(dir.path(), rows_file, {XaBatch{"shop.orders", "INSERT", "rows", 1, 0, 0}}).ok());
  }
  uint64_t SavedPosition() const {
    auto loaded = checkpointer.Load();
    return loaded.ok() && loaded->has_value() ? (*loaded)->resume.position : 0;
  }
  bool RequestWaits() const {
    auto pending = PendingRequests(dir.path());
    return pending.ok() && !pending->empty() && pending->front().id == request;
  }
  bool RowsFileThere() const { return std::filesystem::exists(dir.path() + "/" + rows_file); }
};

TEST(CheckpointerTest, WhatACheckpointMakesObsoleteGoesOnlyOnceItIsSaved) {
  Fixture f;
  f.checkpointer.Obsolete(f.rows_file);
  Checkpoint made = At(200);
  f.checkpointer.Carried(f.request, "done: shop.orders paused", made.requests_done);
  EXPECT_TRUE(f.checkpointer.outcomes_waiting());
  EXPECT_EQ(made.requests_done, std::vector<std::string>{f.request});
  auto save = f.checkpointer.Deferred(made, RunStatus{}, true, nullptr);
  // Made, not saved (the flusher waits for ClickHouse): a kill -9 now leaves the old checkpoint,
  // the request to carry out again and the XA rows to send again.
  EXPECT_FALSE(f.checkpointer.outcomes_waiting());
  EXPECT_EQ(f.SavedPosition(), 100u);
  EXPECT_TRUE(f.RequestWaits());
  // Polled again meanwhile: not to be carried out again, and not answered from memory either.
  auto waiting = f.checkpointer.Waiting(made.requests_done);
  ASSERT_TRUE(waiting.ok());
  EXPECT_TRUE(waiting->empty());
  EXPECT_TRUE(f.RequestWaits());
  EXPECT_TRUE(f.RowsFileThere());
  EXPECT_EQ(f.checkpointer.saved(), 0u);

  Status s = save();
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(f.SavedPosition(), 200u);
  EXPECT_FALSE(f.RequestWaits());
  EXPECT_FALSE(f.RowsFileThere());
  EXPECT_EQ(f.checkpointer.saved(), 1u);
  auto outcome = WaitForOutcome(f.dir.path(), f.request, std::chrono::milliseconds(1000));
  ASSERT_TRUE(outcome.ok() && outcome->has_value());
  EXPECT_EQ(**outcome, "done: shop.orders paused");
  auto status = ReadRunStatus(f.dir.path());
  ASSERT_TRUE(status.ok() && status->has_value());
  EXPECT_GT((*status)->updated_at_ms, 0u);

  // The next checkpoint takes nothing of the first's.
  ASSERT_TRUE(f.checkpointer.Deferred(At(300), RunStatus{}, true, nullptr)().ok());
  EXPECT_EQ(f.SavedPosition(), 300u);
  EXPECT_EQ(f.checkpointer.saved(), 2u);
}

TEST(CheckpointerTest, ATableParkedAfterTheCheckpointWasMadeIsInItWhenSaved) {
  Fixture f;
  auto save = f.checkpointer.Deferred(At(200), RunStatus{}, true, nullptr);
  // The flusher's thread parks the table (ClickHouse refused its INSERT, queued before the
  // checkpoint) while the checkpoint waits: the checkpoint lies past the refused rows.
  ASSERT_TRUE(f.board.Park({"shop.orders", "parked", "refused", "INSERT", "binlog.000001:150", 1}));
  ASSERT_TRUE(save().ok());
  auto loaded = f.checkpointer.Load();
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  ASSERT_EQ((*loaded)->held.size(), 1u);
  EXPECT_EQ((*loaded)->held[0].table, "shop.orders");
  EXPECT_EQ((*loaded)->held[0].state, "parked");
  // Taken over by the stream and then in its own list: not twice.
  f.board.TakeNew();
  Checkpoint next = At(300);
  next.held.push_back({"shop.orders", "parked", "refused", "INSERT", "binlog.000001:150", 1});
  ASSERT_TRUE(f.checkpointer.Deferred(next, RunStatus{}, true, nullptr)().ok());
  loaded = f.checkpointer.Load();
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  EXPECT_EQ((*loaded)->held.size(), 1u);
}

TEST(CheckpointerTest, ASaveThatFailsKeepsTheRequestsAndTheRowsFiles) {
  Fixture f;
  f.checkpointer.Obsolete(f.rows_file);
  Checkpoint made = At(200);
  f.checkpointer.Carried(f.request, "done: shop.orders paused", made.requests_done);
  auto save = f.checkpointer.Deferred(made, RunStatus{}, true, nullptr);
  // The disk refuses the checkpoint's temporary file.
  std::filesystem::create_directory(f.dir.path() + "/checkpoint.json.tmp");
  Status s = save();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(f.SavedPosition(), 100u);
  EXPECT_TRUE(f.RequestWaits());
  EXPECT_TRUE(f.RowsFileThere());
  EXPECT_EQ(f.checkpointer.saved(), 0u);
  // The pipe reads again from the saved checkpoint, which does not hold the request: it is
  // carried out again from there.
  f.checkpointer.ForgetCarried();
  f.checkpointer.ForgetObsolete();
  auto loaded = f.checkpointer.Load();
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  auto waiting = f.checkpointer.Waiting((*loaded)->requests_done);
  ASSERT_TRUE(waiting.ok());
  ASSERT_EQ(waiting->size(), 1u);
  EXPECT_EQ(waiting->front().id, f.request);
}

TEST(CheckpointerTest, ARequestTheLoadedCheckpointHoldsIsAnsweredNotCarriedOutAgain) {
  // A crash came after the checkpoint holding the request was saved, before its answer was written.
  Fixture f;
  Checkpoint saved = At(200);
  saved.requests_done.push_back(f.request);
  ASSERT_TRUE(f.checkpointer.Save(saved).ok());
  f.checkpointer.ForgetCarried();
  auto waiting = f.checkpointer.Waiting(saved.requests_done);
  ASSERT_TRUE(waiting.ok());
  EXPECT_TRUE(waiting->empty());
  EXPECT_FALSE(f.RequestWaits());
  auto outcome = WaitForOutcome(f.dir.path(), f.request, std::chrono::milliseconds(1000));
  ASSERT_TRUE(outcome.ok() && outcome->has_value());
  EXPECT_EQ(**outcome, "done: carried out before chsync restarted");
}

// A request was carried out, then the pipe failed before a checkpoint recording it was made (its
// rows could not be queued: ClickHouse down). It reads again from the saved checkpoint, which lacks
// the request and its effect: the next checkpoint (a forced one, at a DDL, before the request is
// carried out again) must not answer it "done", or it would never be carried out.
TEST(CheckpointerTest, AReloadDropsTheAnswersOfRequestsItsCheckpointLacks) {
  Fixture f;
  std::vector<std::string> done;
  f.checkpointer.Carried(f.request, "done: shop.orders paused", done);
  f.checkpointer.ForgetCarried();
  EXPECT_FALSE(f.checkpointer.outcomes_waiting());
  ASSERT_TRUE(f.checkpointer.Deferred(At(200), RunStatus{}, true, nullptr)().ok());
  EXPECT_TRUE(f.RequestWaits());
  auto waiting = f.checkpointer.Waiting({});
  ASSERT_TRUE(waiting.ok());
  ASSERT_EQ(waiting->size(), 1u);
  EXPECT_EQ(waiting->front().id, f.request);
}

TEST(CheckpointerTest, TheCheckpointRemembersTheLastHundredRequests) {
  Fixture f;
  std::vector<std::string> done;
  for (int i = 0; i < 150; ++i) f.checkpointer.Carried("r" + std::to_string(i), "done: x", done);
  ASSERT_EQ(done.size(), kMaxRequestsDone);
  EXPECT_EQ(done.front(), "r50");
  EXPECT_EQ(done.back(), "r149");
}

}  // namespace
}  // namespace chsync::pipe
