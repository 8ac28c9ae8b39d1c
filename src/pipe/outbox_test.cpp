#include "pipe/outbox.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "binlog/event.h"
#include "common/test_util.h"
#include "config/config.h"
#include "schema/tracker.h"

namespace chsync::pipe {
namespace {

using namespace std::chrono_literals;

/// A ClickHouse lane that keeps the INSERT statements it acknowledges, and refuses (code 53,
/// TYPE_MISMATCH: about the table alone) those that name `refuse`.
class FakeLane : public clickhouse::Connection {
 public:
  std::string Describe() const override { return "fake"; }
  bool embedded() const override { return false; }
  std::vector<std::string> Inserted() {
    std::lock_guard<std::mutex> lock(mutex_);
    return inserted_;
  }
  std::string refuse;

 protected:
  Result<std::string> Run(std::string_view sql, std::string_view, std::string_view,
                          const clickhouse::RequestOptions&) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!refuse.empty() && sql.find(refuse) != std::string_view::npos)
      return Error(ErrorKind::kServer, "Code: 53. Type mismatch", 53);
    inserted_.emplace_back(sql);
    return std::string();
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> inserted_;
};

/// An outbox over tables shop.a and shop.b (one Int64 column each) and one fake lane, with the
/// applier's state (committed position, GTIDs, boundaries) kept here.
class OutboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(LoadConfigText("source: mysql://u@127.0.0.1:3306\ndest: http://127.0.0.1:8123\n"
                               "tables: shop.*\nbatch:\n  max_rows: 3\n  max_age_ms: 1000\n",
                               "test.yaml", config_)
                    .ok());
    ASSERT_TRUE(set_.Configure().ok());
    ASSERT_TRUE(checkpointer_.Open(dir_.path()).ok());
    auto versions = Versions::Load(dir_.path());
    ASSERT_TRUE(versions.ok()) << versions.error().message();
    versions_.emplace(std::move(*versions));
    schema::Tracker tracker;
    for (const char* name : {"a", "b"}) {
      ASSERT_TRUE(
          tracker.ApplySql(std::string("CREATE TABLE ") + name + " (id BIGINT PRIMARY KEY)", "shop", {})
              .ok());
      auto table = std::make_unique<TableState>();
      table->dest.source = *tracker.Find("shop", name);
      auto writer = clickhouse::TableWriter::Create(table->dest.source, destination_.caps(), {"shop"});
      ASSERT_TRUE(writer.ok()) << writer.error().message();
      table->writer.emplace(std::move(*writer));
      set_.tables()[std::string("shop.") + name] = std::move(table);
    }
    auto lane = std::make_unique<FakeLane>();
    lane->set_retry_policy(clickhouse::RetryPolicy{.max_attempts = 1});
    lane_ = lane.get();
    std::vector<std::unique_ptr<clickhouse::Connection>> lanes;
    lanes.push_back(std::move(lane));
    outbox_.Open(std::move(lanes));
    committed_.file = "binlog.000001";
    committed_.position = 4;
  }
  void TearDown() override { outbox_.Close(); }

  /// Appends `rows` inserted rows to table `name`, as the applier does.
  void Append(const std::string& name, int rows) {
    TableState& table = *set_.tables().at("shop." + name);
    const size_t bytes = table.writer->bytes();
    for (int i = 0; i < rows; ++i) {
      std::vector<clickhouse::Cell> cells{int64_t{next_id_++}};
      ASSERT_TRUE(table.writer->Append(cells, 1, false).ok());
    }
    table.changes.inserts += static_cast<uint64_t>(rows);
    outbox_.NoteAppended(table.writer->bytes() - bytes, static_cast<size_t>(rows));
    ASSERT_TRUE(outbox_.FlushIfFull("shop." + name, table).ok());
  }
  /// The INSERTs ClickHouse acknowledged, once the flusher sent what it was given.
  std::vector<std::string> Sent() {
    EXPECT_TRUE(outbox_.flusher()->Drain().ok());
    return lane_->Inserted();
  }
  /// The boundaries observe statement `sql` (XA START, XA END).
  void Observe(std::string_view sql) {
    binlog::Event event;
    event.file = "binlog.000001";
    event.position = 100;
    binlog::QueryEvent query;
    query.query = sql;
    event.body = query;
    (void)boundaries_.Observe(event, 200);
  }

  test::TempDir dir_;
  PipeConfig config_;
  std::atomic<bool> cancel_{false};
  Destination destination_{config_, cancel_};
  TableSet set_{config_, destination_};
  Holds holds_{config_.policies};
  Checkpointer checkpointer_{holds_.board()};
  std::optional<Versions> versions_;
  SourcePosition committed_;
  GtidProgress gtids_;
  TransactionBoundaries boundaries_;
  Outbox outbox_{{config_, set_, destination_, holds_, checkpointer_, versions_},
                 {committed_, gtids_, boundaries_}};
  FakeLane* lane_ = nullptr;
  int64_t next_id_ = 1;
};

TEST_F(OutboxTest, ATablesRowsGoOutAtABatchAndAllOfThemWhenDue) {
  Append("a", 2);
  Append("b", 1);
  EXPECT_TRUE(Sent().empty()) << "under batch_max_rows (3), nothing is sent";
  EXPECT_EQ(outbox_.PendingRows(), 3u);
  const auto now = std::chrono::steady_clock::now();
  outbox_.StartClock(now);
  EXPECT_TRUE(outbox_.Due(now)) << "3 rows pending in all: a batch's worth";
  EXPECT_TRUE(outbox_.Due(now + 2s)) << "older than batch_max_age_ms";

  Append("a", 1);  // shop.a now holds 3 rows: a batch of its own
  std::vector<std::string> sent = Sent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_NE(sent[0].find("`shop`.`a`"), std::string::npos) << sent[0];
  EXPECT_EQ(outbox_.PendingRows(), 1u) << "shop.b's row waits";

  ASSERT_TRUE(outbox_.FlushAll().ok());
  sent = Sent();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_NE(sent[1].find("`shop`.`b`"), std::string::npos) << sent[1];
  EXPECT_EQ(outbox_.PendingRows(), 0u);

  // A table held meanwhile: its unsent rows are dropped (its copy on resume has them).
  Append("b", 2);
  outbox_.DropPending(*set_.tables().at("shop.b"));
  EXPECT_EQ(outbox_.PendingRows(), 0u);
  ASSERT_TRUE(outbox_.FlushAll().ok());
  EXPECT_EQ(Sent().size(), 2u);
  EXPECT_FALSE(outbox_.Due(std::chrono::steady_clock::now() + 2s)) << "nothing pending is never due";
}

TEST_F(OutboxTest, AnOpenXaTransactionsRowsWaitForItsEnd) {
  Observe("XA START 'x1'");
  Append("a", 3);  // a batch: set aside, not sent
  Append("b", 1);
  ASSERT_TRUE(outbox_.FlushAll().ok());
  EXPECT_TRUE(Sent().empty()) << "the first phase's rows are never sent before its end";
  Observe("XA END 'x1'");

  // XA PREPARE: the rows (set aside and in the writers) are taken for the rows file, each table's
  // row changes counted in its first batch.
  std::vector<XaBatch> prepared = outbox_.TakePrepared();
  ASSERT_EQ(prepared.size(), 2u);
  EXPECT_EQ(prepared[0].table, "shop.a");
  EXPECT_EQ(prepared[0].inserts, 3u);
  EXPECT_EQ(prepared[1].table, "shop.b");
  EXPECT_EQ(prepared[1].inserts, 1u);
  EXPECT_EQ(outbox_.PendingRows(), 0u);
  EXPECT_TRUE(Sent().empty());

  // XA COMMIT: sent, except the rows of a table held since (its copy on resume has them).
  set_.tables().at("shop.b")->held = HeldTable{"shop.b", "paused", "", "", "binlog.000001:4", 0};
  ASSERT_TRUE(outbox_.SendPrepared(std::move(prepared)).ok());
  std::vector<std::string> sent = Sent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_NE(sent[0].find("`shop`.`a`"), std::string::npos) << sent[0];
}

TEST_F(OutboxTest, ARolledBackXaTransactionsRowsAreDroppedAndAOnePhaseOnesSent) {
  Observe("XA START 'x2'");
  Append("a", 3);
  Append("b", 1);
  Observe("XA END 'x2'");
  Observe("XA ROLLBACK 'x2'");
  outbox_.DiscardSetAside();
  EXPECT_EQ(outbox_.PendingRows(), 0u);
  ASSERT_TRUE(outbox_.SendWriters().ok());
  EXPECT_TRUE(Sent().empty()) << "a rolled-back transaction's rows never reach ClickHouse";

  Observe("XA START 'x3'");
  Append("a", 3);
  EXPECT_TRUE(Sent().empty());
  Observe("XA END 'x3'");
  Observe("XA COMMIT 'x3' ONE PHASE");
  ASSERT_TRUE(outbox_.SendSetAside().ok());
  std::vector<std::string> sent = Sent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_NE(sent[0].find("`shop`.`a`"), std::string::npos);
}

TEST_F(OutboxTest, AnInsertClickHouseRefusesParksItsTableAtTheCommittedPosition) {
  lane_->refuse = "`shop`.`a`";
  committed_.position = 4321;
  Append("a", 3);
  Append("b", 1);
  ASSERT_TRUE(outbox_.FlushAll().ok());
  std::vector<std::string> sent = Sent();
  ASSERT_EQ(sent.size(), 1u) << "shop.b's rows go on";
  EXPECT_NE(sent[0].find("`shop`.`b`"), std::string::npos);
  std::vector<HeldTable> parked = holds_.TakeParkedByFlusher();
  ASSERT_EQ(parked.size(), 1u);
  EXPECT_EQ(parked[0].table, "shop.a");
  EXPECT_EQ(parked[0].state, "parked");
  EXPECT_EQ(parked[0].position, "binlog.000001:4321");
}

TEST_F(OutboxTest, TheGtidsOfRowsAreDurableBeforeTheyAreQueued) {
  // A move to another server checks it against every transaction whose rows may be in ClickHouse:
  // the open one's too, saved before its first batch goes out.
  gtids_.NoteMariaDb(0, 1, 7);
  Append("a", 3);
  ASSERT_EQ(Sent().size(), 1u);
  auto reloaded = Versions::Load(dir_.path());
  ASSERT_TRUE(reloaded.ok()) << reloaded.error().message();
  EXPECT_EQ(reloaded->lineage().sent_gtids(), "0-1-7");

  gtids_.NoteMariaDb(0, 1, 8);
  Observe("XA START 'x4'");
  Append("a", 3);
  Observe("XA END 'x4'");
  Observe("XA COMMIT 'x4' ONE PHASE");
  ASSERT_TRUE(outbox_.SendSetAside().ok());
  ASSERT_EQ(Sent().size(), 2u);
  reloaded = Versions::Load(dir_.path());
  ASSERT_TRUE(reloaded.ok());
  EXPECT_EQ(reloaded->lineage().sent_gtids(), "0-1-8");
}

}  // namespace
}  // namespace chsync::pipe
