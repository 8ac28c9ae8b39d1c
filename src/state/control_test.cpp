#include "state/control.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "common/test_util.h"
#include "state/state_dir.h"

namespace chsync::pipe {
namespace {

using std::chrono::milliseconds;

using test::Exists;

/// A fresh directory for one test, and the folder of its control requests.
class TempDir : public test::TempDir {
 public:
  TempDir() : test::TempDir("chsync-control-test") {}
  std::string requests() const { return path() + "/requests"; }
};

std::string RequestJson(const std::string& id, const std::string& op, const std::string& table,
                        uint64_t at_ms) {
  return nlohmann::ordered_json{{"id", id}, {"op", op}, {"table", table}, {"at_ms", at_ms}}.dump();
}

std::vector<std::string> Ids(const std::vector<ControlRequest>& requests) {
  std::vector<std::string> ids;
  for (const ControlRequest& r : requests) ids.push_back(r.id);
  return ids;
}

TEST(ControlRequest, SubmitWritesOneJsonFileNamedByItsId) {
  TempDir dir;
  uint64_t before = static_cast<uint64_t>(
      std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  auto r = SubmitRequest(dir, "pause", "shop.orders");
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->op, "pause");
  EXPECT_EQ(r->table, "shop.orders");
  EXPECT_GE(r->at_ms, before);
  // "<ms>-<pid>-<counter>"
  std::string prefix = std::to_string(r->at_ms) + "-" + std::to_string(getpid()) + "-";
  EXPECT_EQ(r->id.rfind(prefix, 0), 0u) << r->id;

  std::string path = dir.requests() + "/" + r->id + ".req";
  ASSERT_TRUE(Exists(path));
  EXPECT_FALSE(Exists(path + ".tmp"));
  auto j = nlohmann::json::parse(test::ReadText(path));
  EXPECT_EQ(j.at("id"), r->id);
  EXPECT_EQ(j.at("op"), "pause");
  EXPECT_EQ(j.at("table"), "shop.orders");
  EXPECT_EQ(j.at("at_ms"), r->at_ms);

  auto pending = PendingRequests(dir);
  ASSERT_TRUE(pending.ok()) << pending.error().message();
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0], *r);
}

TEST(ControlRequest, SubmitIdsAreUnique) {
  TempDir dir;
  auto a = SubmitRequest(dir, "pause", "shop.t");
  auto b = SubmitRequest(dir, "resume", "shop.t");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->id, b->id);
}

TEST(ControlRequest, SubmitRefusesAnUnknownOp) {
  TempDir dir;
  auto r = SubmitRequest(dir, "drop", "shop.t");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kUsage);
  EXPECT_NE(r.error().message().find("drop"), std::string::npos) << r.error().message();
  EXPECT_FALSE(Exists(dir.requests()));
}

TEST(ControlRequest, SubmitRefusesATableThatIsNotDbDotTable) {
  TempDir dir;
  for (const char* table : {"", "orders", ".orders", "shop.", "shop.t\nx"}) {
    auto r = SubmitRequest(dir, "resync", table);
    ASSERT_FALSE(r.ok()) << table;
    EXPECT_EQ(r.error().kind(), ErrorKind::kUsage) << table;
    EXPECT_NE(r.error().message().find("DB.TABLE"), std::string::npos) << r.error().message();
  }
  EXPECT_FALSE(Exists(dir.requests()));
}

TEST(ControlRequest, QualifiedTables) {
  EXPECT_TRUE(IsQualifiedTable("shop.orders"));
  EXPECT_TRUE(IsQualifiedTable("shop.order.lines"));  // the table part may hold a dot
  EXPECT_TRUE(IsQualifiedTable("s.t"));
  EXPECT_FALSE(IsQualifiedTable("shop"));
  EXPECT_FALSE(IsQualifiedTable(".t"));
  EXPECT_FALSE(IsQualifiedTable("s."));
  EXPECT_FALSE(IsQualifiedTable("s.t\t"));
  EXPECT_TRUE(IsControlOp("resync"));
  EXPECT_TRUE(IsControlOp("pause"));
  EXPECT_TRUE(IsControlOp("resume"));
  EXPECT_FALSE(IsControlOp("Pause"));
  EXPECT_FALSE(IsControlOp(""));
}

TEST(ControlRequest, NoRequestsDirectoryIsAnEmptyList) {
  TempDir dir;
  auto pending = PendingRequests(dir);
  ASSERT_TRUE(pending.ok()) << pending.error().message();
  EXPECT_TRUE(pending->empty());
  auto missing = PendingRequests(std::string(dir) + "/does-not-exist");
  ASSERT_TRUE(missing.ok());
  EXPECT_TRUE(missing->empty());
}

TEST(ControlRequest, PendingListsTheSubmittedOnesInOrder) {
  TempDir dir;
  std::vector<std::string> submitted;
  for (const char* op : {"pause", "resume", "resync", "pause"}) {
    auto r = SubmitRequest(dir, op, "shop.t");
    ASSERT_TRUE(r.ok());
    submitted.push_back(r->id);
  }
  auto pending = PendingRequests(dir);
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ(Ids(*pending), submitted);
}

TEST(ControlRequest, PendingIsOldestFirstWithCountersComparedAsNumbers) {
  TempDir dir;
  ASSERT_EQ(mkdir(dir.requests().c_str(), 0755), 0);
  // Written out of order; the same millisecond and process: counter 10 comes after 9.
  for (const auto& [id, at] :
       std::vector<std::pair<std::string, uint64_t>>{{"1764680000200-7-1", 1764680000200},
                                                     {"1764680000100-7-10", 1764680000100},
                                                     {"1764680000100-7-9", 1764680000100},
                                                     {"1764680000050-99-1", 1764680000050}}) {
    test::WriteText(dir.requests() + "/" + id + ".req", RequestJson(id, "pause", "shop.t", at));
  }
  auto pending = PendingRequests(dir);
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ(Ids(*pending), (std::vector<std::string>{"1764680000050-99-1", "1764680000100-7-9",
                                                     "1764680000100-7-10", "1764680000200-7-1"}));
}

TEST(ControlRequest, AFileThatDoesNotParseIsSetAsideAndLoggedOnce) {
  TempDir dir;
  auto good = SubmitRequest(dir, "resync", "shop.t");
  ASSERT_TRUE(good.ok());
  const std::string r = dir.requests() + "/";
  test::WriteText(r + "1-1-1.req", "{not json");
  test::WriteText(r + "1-1-2.req", RequestJson("1-1-99", "pause", "shop.t", 1));  // id is not the file's name
  test::WriteText(r + "1-1-3.req", RequestJson("1-1-3", "drop", "shop.t", 1));
  test::WriteText(r + "1-1-4.req", RequestJson("1-1-4", "pause", "shop", 1));
  test::WriteText(r + "1-1-5.req", R"({"id":"1-1-5","op":"pause","table":"shop.t"})");  // no at_ms
  test::WriteText(r + "1-1-6.req", "[1,2]");
  test::WriteText(r + "x.y.req", RequestJson("x.y", "pause", "shop.t", 1));          // not an id
  test::WriteText(r + "1-1-7.req.tmp", RequestJson("1-1-7", "pause", "shop.t", 1));  // a submit cut short
  test::WriteText(r + "notes.txt", "hello");

  testing::internal::CaptureStderr();
  auto first = PendingRequests(dir);
  auto second = PendingRequests(dir);
  std::string log = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(Ids(*first), std::vector<std::string>{good->id});
  EXPECT_EQ(Ids(*second), std::vector<std::string>{good->id});

  for (const char* name : {"1-1-1", "1-1-2", "1-1-3", "1-1-4", "1-1-5", "1-1-6", "x.y"}) {
    EXPECT_FALSE(Exists(r + name + ".req")) << name;
    EXPECT_TRUE(Exists(r + name + ".req.bad")) << name;
  }
  EXPECT_TRUE(Exists(r + "1-1-7.req.tmp"));
  EXPECT_TRUE(Exists(r + "notes.txt"));

  size_t warnings = 0;
  for (size_t at = log.find("is not a valid request"); at != std::string::npos;
       at = log.find("is not a valid request", at + 1)) {
    ++warnings;
  }
  EXPECT_EQ(warnings, 7u) << log;
  EXPECT_NE(log.find("1-1-1.req"), std::string::npos) << log;
  EXPECT_NE(log.find("unknown op 'drop'"), std::string::npos) << log;
  EXPECT_NE(log.find("is not the file's name"), std::string::npos) << log;
}

TEST(ControlRequest, CompleteWritesTheOutcomeThenRemovesTheRequest) {
  TempDir dir;
  auto r = SubmitRequest(dir, "pause", "shop.t");
  ASSERT_TRUE(r.ok());
  std::string req = dir.requests() + "/" + r->id + ".req";
  std::string done = dir.requests() + "/" + r->id + ".done";
  ASSERT_TRUE(CompleteRequest(dir, r->id, "done: shop.t paused at binlog.000003:1234").ok());
  EXPECT_FALSE(Exists(req));
  EXPECT_EQ(test::ReadText(done), "done: shop.t paused at binlog.000003:1234\n");
  auto pending = PendingRequests(dir);
  ASSERT_TRUE(pending.ok());
  EXPECT_TRUE(pending->empty());
}

TEST(ControlRequest, CompleteTwiceKeepsTheFirstOutcome) {
  TempDir dir;
  auto r = SubmitRequest(dir, "pause", "shop.t");
  ASSERT_TRUE(r.ok());
  std::string done = dir.requests() + "/" + r->id + ".done";
  ASSERT_TRUE(CompleteRequest(dir, r->id, "done: paused").ok());
  ASSERT_TRUE(CompleteRequest(dir, r->id, "done: paused (again)").ok());
  EXPECT_EQ(test::ReadText(done), "done: paused\n");

  // Collected by the submitter; a third call writes nothing that no one would ever collect.
  auto outcome = WaitForOutcome(dir, r->id, milliseconds(0));
  ASSERT_TRUE(outcome.ok());
  ASSERT_TRUE(outcome->has_value());
  EXPECT_EQ(**outcome, "done: paused");
  EXPECT_FALSE(Exists(done));
  ASSERT_TRUE(CompleteRequest(dir, r->id, "done: paused").ok());
  EXPECT_FALSE(Exists(done));
}

TEST(ControlRequest, CompleteAfterACrashBetweenOutcomeAndRemoval) {
  // The pipe wrote the outcome, then died before removing the request. After the restart it finds
  // the id in its checkpoint and completes the request again, without carrying it out.
  TempDir dir;
  auto r = SubmitRequest(dir, "resync", "shop.t");
  ASSERT_TRUE(r.ok());
  std::string req = dir.requests() + "/" + r->id + ".req";
  std::string done = dir.requests() + "/" + r->id + ".done";
  test::WriteText(done, "done: shop.t copied again (120 rows)\n");
  auto pending = PendingRequests(dir);
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(Ids(*pending), std::vector<std::string>{r->id});
  ASSERT_TRUE(CompleteRequest(dir, r->id, "done: carried out before a restart").ok());
  EXPECT_FALSE(Exists(req));
  EXPECT_EQ(test::ReadText(done), "done: shop.t copied again (120 rows)\n");
}

TEST(ControlRequest, CompleteAfterACrashBeforeTheOutcome) {
  // The checkpoint holds the id, but the pipe died before writing the outcome.
  TempDir dir;
  auto r = SubmitRequest(dir, "pause", "shop.t");
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(CompleteRequest(dir, r->id, "done: shop.t was paused before a restart").ok());
  EXPECT_FALSE(Exists(dir.requests() + "/" + r->id + ".req"));
  EXPECT_EQ(test::ReadText(dir.requests() + "/" + r->id + ".done"),
            "done: shop.t was paused before a restart\n");
}

TEST(ControlRequest, CompleteRefusesAnIdThatIsNotAFileName) {
  TempDir dir;
  Status s = CompleteRequest(dir, "../checkpoint", "done: x");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kUsage);
}

TEST(ControlRequest, WaitReturnsTheOutcomeWrittenMeanwhile) {
  TempDir dir;
  auto r = SubmitRequest(dir, "pause", "shop.t");
  ASSERT_TRUE(r.ok());
  std::thread pipe([&] {
    std::this_thread::sleep_for(milliseconds(250));
    auto pending = PendingRequests(dir);
    ASSERT_TRUE(pending.ok());
    ASSERT_EQ(pending->size(), 1u);
    EXPECT_TRUE(CompleteRequest(dir, (*pending)[0].id, "refused: shop.t is not replicated").ok());
  });
  auto outcome = WaitForOutcome(dir, r->id, milliseconds(10000));
  pipe.join();
  ASSERT_TRUE(outcome.ok()) << outcome.error().message();
  ASSERT_TRUE(outcome->has_value());
  EXPECT_EQ(**outcome, "refused: shop.t is not replicated");
  EXPECT_FALSE(Exists(dir.requests() + "/" + r->id + ".done"));  // collected
}

TEST(ControlRequest, WaitGivesUpAfterTheTimeoutAndTheRequestStaysQueued) {
  TempDir dir;
  auto r = SubmitRequest(dir, "pause", "shop.t");
  ASSERT_TRUE(r.ok());
  auto start = std::chrono::steady_clock::now();
  auto outcome = WaitForOutcome(dir, r->id, milliseconds(300));
  auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(outcome.ok());
  EXPECT_FALSE(outcome->has_value());
  EXPECT_GE(waited, milliseconds(300));
  EXPECT_LT(waited, milliseconds(3000));
  EXPECT_TRUE(Exists(dir.requests() + "/" + r->id + ".req"));
}

TEST(ControlRequest, WaitEndsWhenStopIsSet) {
  TempDir dir;
  auto r = SubmitRequest(dir, "pause", "shop.t");
  ASSERT_TRUE(r.ok());
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(200));
    stop = true;
  });
  auto start = std::chrono::steady_clock::now();
  auto outcome = WaitForOutcome(dir, r->id, milliseconds(60000), &stop);
  auto waited = std::chrono::steady_clock::now() - start;
  stopper.join();
  ASSERT_TRUE(outcome.ok());
  EXPECT_FALSE(outcome->has_value());
  EXPECT_LT(waited, milliseconds(5000));
}

TEST(ControlRequest, AnUncollectedOutcomeIsRemovedAfterAWeek) {
  TempDir dir;
  ASSERT_EQ(mkdir(dir.requests().c_str(), 0755), 0);
  std::string old_done = dir.requests() + "/1-1-1.done";
  std::string old_tmp = dir.requests() + "/1-1-2.req.tmp";
  std::string fresh_done = dir.requests() + "/1-1-3.done";
  test::WriteText(old_done, "done: x\n");
  test::WriteText(old_tmp, "{");
  test::WriteText(fresh_done, "done: y\n");
  auto eight_days_ago = std::chrono::system_clock::now() - std::chrono::hours(24 * 8);
  timespec times[2];
  times[0].tv_sec = times[1].tv_sec = std::chrono::system_clock::to_time_t(eight_days_ago);
  times[0].tv_nsec = times[1].tv_nsec = 0;
  ASSERT_EQ(utimensat(AT_FDCWD, old_done.c_str(), times, 0), 0);
  ASSERT_EQ(utimensat(AT_FDCWD, old_tmp.c_str(), times, 0), 0);
  ASSERT_TRUE(PendingRequests(dir).ok());
  EXPECT_FALSE(Exists(old_done));
  EXPECT_FALSE(Exists(old_tmp));
  EXPECT_TRUE(Exists(fresh_done));
}

TEST(ControlRequest, PipeRunningWhileAStateDirHoldsTheLock) {
  TempDir dir;
  EXPECT_FALSE(PipeRunning(dir));  // no lock file
  EXPECT_FALSE(PipeRunning(std::string(dir) + "/does-not-exist"));
  {
    auto state = StateDir::Open(dir);
    ASSERT_TRUE(state.ok()) << state.error().message();
    EXPECT_TRUE(PipeRunning(dir));
    EXPECT_TRUE(PipeRunning(dir));
    // Asking did not take the lock from its holder.
    auto second = StateDir::Open(dir);
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.error().kind(), ErrorKind::kConfig);
  }
  EXPECT_FALSE(PipeRunning(dir));  // the lock file stays, unlocked
  EXPECT_TRUE(Exists(std::string(dir) + "/lock"));
  // Asking left it free.
  auto again = StateDir::Open(dir);
  EXPECT_TRUE(again.ok());
}

}  // namespace
}  // namespace chsync::pipe
