// The applier (pipe/applier.h) against the real ClickHouse server of scripts/test-servers: a binlog
// file captured from MariaDB 10.11 (XA transactions prepared, committed, rolled back and committed
// in one phase, ordinary transactions between a PREPARE and its COMMIT, a two-phase ALTER committed
// and one rolled back; tests/data/binlog/captures/README.md) applied event by event as the stream
// does, with a fake pipe as its host. What is checked is what a user sees: the rows in ClickHouse,
// the checkpoint saved, the XA rows files in the state directory, the tables parked.

#include "pipe/applier.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "binlog/file_reader.h"
#include "clickhouse/ddl.h"
#include "common/test_util.h"
#include "pipe/names.h"
#include "pipe_compare.h"
#include "policy/ddl_policy.h"
#include "test_env.h"

namespace chsync::pipe {
namespace {

namespace fs = std::filesystem;
using testing::QueryDestination;
using testing::RequireEnv;

const std::string kCapture = CHSYNC_SOURCE_DIR "/tests/data/binlog/captures/mariadb-10.11.19-xa.bin";

/// The pipe as the applier sees it: a table's writer made as the pipe makes it, parks and copies
/// noted (a park holds the table, as the pipe's does).
class FakeHost : public ApplierHost {
 public:
  FakeHost(const PipeConfig& config, TableSet& set, Destination& destination)
      : config_(config), set_(set), destination_(destination) {}

  struct Park {
    std::string table, reason, statement, position;
  };
  std::vector<Park> parks;
  std::vector<std::string> copies;
  int between = 0;
  int checkpoints = 0;

  Status ParkTable(TableState& table, const std::string& key, const Error& error,
                   const std::string& statement, const std::string& position) override {
    parks.push_back({key, error.message(), statement, position});
    table.held = HeldTable{key, "parked", error.message(), statement, position, 1};
    return Status::Ok();
  }
  Status StartRebuild(TableState&, const std::string&, const std::string& reason, bool) override {
    copies.push_back(reason);
    return Status::Ok();
  }
  Status CancelRebuild(TableState&) override { return Status::Ok(); }
  Status RebuildWriter(TableState& table) override {
    schema::TableSchema layout = WriterSchema(table.dest);
    const TableSet::Placement place = set_.PlaceFor(table.dest.source.database, table.dest.source.name);
    layout.name = place.table;
    CHSYNC_ASSIGN_OR_RETURN(clickhouse::TableWriter writer,
                            clickhouse::TableWriter::Create(layout, destination_.caps(), place.target));
    std::vector<clickhouse::MappedType> types(
        writer.types().begin(),
        writer.types().begin() + static_cast<std::ptrdiff_t>(table.dest.source.columns.size()));
    CHSYNC_ASSIGN_OR_RETURN(RowConverter converter,
                            RowConverter::Create(table.dest.source, std::move(types)));
    table.writer.emplace(std::move(writer));
    table.converter.emplace(std::move(converter));
    table.key_indexes.clear();
    table.full_row = clickhouse::ChooseSortingKey(table.dest.source).full_row;
    const schema::TableSchema& source = table.dest.source;
    for (const std::string& c : set_.MappingFor(source.database, source.name).KeyColumns(source))
      table.key_indexes.push_back(source.FindColumn(c));
    table.table_map.reset();
    return Status::Ok();
  }
  Status BetweenTransactions() override {
    ++between;
    return Status::Ok();
  }
  void NoteCascades() override {}
  PolicyContext ContextFor(std::string_view database, std::string_view table) const override {
    PolicyContext context;
    context.caps = destination_.caps();
    context.policy = config_.policies.For(database, table);
    context.mapping = set_.MappingFor(database, table);
    context.target = destination_.TargetIn(context.mapping.dest_database);
    context.clickhouse_key_columns = set_.KeyColumns(TableKey(database, table));
    return context;
  }
  Result<std::vector<schema::TableSchema>> LoadSourceSchemas(
      const std::vector<std::string>&, const std::function<bool(const schema::TableSchema&)>&) override {
    return std::vector<schema::TableSchema>{};
  }
  void BeforeCheckpoint() override { ++checkpoints; }

 private:
  const PipeConfig& config_;
  TableSet& set_;
  Destination& destination_;
};

/// Everything an Applier works on, set up as the pipe sets it up for table bx_xa.t (as it was
/// before the captured file: id INT PRIMARY KEY, v VARCHAR(10)), replicated into ClickHouse
/// database `database_`.
class ApplierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    database_ = "applier_" + std::to_string(getpid()) + "_" + std::to_string(std::rand() % 100000);
    request_.config.dest = RequireEnv("CHSYNC_TEST_CLICKHOUSE");
    request_.config.source = RequireEnv("CHSYNC_TEST_MYSQL_FULL");
    request_.config.dest_database = database_;
    request_.config.tables = "bx_xa.*";
    request_.config.state = state_.path();
    // The captured file, named as a server names its binlog files.
    fs::create_directories(binlogs_.path());
    fs::copy_file(kCapture, binlogs_.path() + "/binlog.000001");

    ASSERT_TRUE(source_.Configure(request_.config.source).ok());
    auto gap = [](const std::string& what) { return Error(ErrorKind::kServer, what); };
    Status selected = source_.Select(source_.Order(), std::nullopt, "", false, gap);
    ASSERT_TRUE(selected.ok()) << selected.error().message();
    auto opened = destination_.Open();
    ASSERT_TRUE(opened.ok()) << opened.error().message();
    ASSERT_TRUE(set_.Configure().ok());
    ASSERT_TRUE(checkpointer_.Open(state_.path()).ok());
    auto versions = Versions::Load(state_.path());
    ASSERT_TRUE(versions.ok()) << versions.error().message();
    versions_.emplace(std::move(*versions));

    ASSERT_TRUE(tracker_.ApplySql("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))", "bx_xa", {}).ok());
    const schema::TableSchema* t = tracker_.Find("bx_xa", "t");
    ASSERT_NE(t, nullptr);
    std::string error;
    ASSERT_TRUE(QueryDestination(request_.config.dest, "CREATE DATABASE " + database_, &error).has_value())
        << error;
    Status created = set_.CreateDestination(*t, /*replace=*/false);
    ASSERT_TRUE(created.ok()) << created.error().message();
    auto table = std::make_unique<TableState>();
    table->dest = set_.FreshDestination(*t);
    ASSERT_TRUE(host_.RebuildWriter(*table).ok());
    set_.tables()["bx_xa.t"] = std::move(table);

    checkpoint_.resume.file = "binlog.000001";
    checkpoint_.resume.position = 4;
    applier_ = std::make_unique<Applier>(
        ApplierParts{request_, source_, tracker_, checkpoint_, status_, set_, destination_, checkpointer_,
                     cascades_, holds_, versions_, retention_},
        host_);
    Status started = applier_->Start(checkpoint_.resume);
    ASSERT_TRUE(started.ok()) << started.error().message();
  }

  void TearDown() override {
    if (applier_ != nullptr) applier_->StopFlusher();
    std::string error;
    (void)QueryDestination(request_.config.dest, "DROP DATABASE IF EXISTS " + database_, &error);
  }

  /// Applies the captured file's events in order, calling `after(event)` after each.
  void ApplyCapture(const std::function<void(const binlog::Event&)>& after = {}) {
    auto reader = binlog::FileReader::Open(binlogs_.path() + "/binlog.000001", {});
    ASSERT_TRUE(reader.ok()) << reader.error().message();
    applier_->BeginSession();
    while (true) {
      auto ev = (*reader)->Next();
      ASSERT_TRUE(ev.ok()) << ev.error().message();
      if (!*ev) break;
      const binlog::Event& event = **ev;
      versions_->BeginEvent(event, event.file);
      Status applied = applier_->HandleEvent(event, event.end_position());
      ASSERT_TRUE(applied.ok()) << "at " << event.position << ": " << applied.error().message();
      if (after) after(event);
    }
  }

  /// The table's rows in ClickHouse as "id v [w]" lines, merged (FINAL) and without deleted ones.
  std::vector<std::string> Rows(const std::string& columns = "id, v") {
    std::string error;
    auto rows = QueryDestination(
        request_.config.dest,
        "SELECT " + columns + " FROM " + database_ + ".t FINAL WHERE _chsync_is_deleted = 0 ORDER BY id",
        &error);
    EXPECT_TRUE(rows.has_value()) << error;
    std::vector<std::string> out;
    if (!rows) return out;
    for (const auto& row : *rows) {
      std::string line;
      for (const auto& cell : row) line += (line.empty() ? "" : " ") + cell.value_or("NULL");
      out.push_back(line);
    }
    return out;
  }

  /// The XA rows files in the state directory.
  std::vector<std::string> XaFiles() {
    std::vector<std::string> out;
    for (const auto& entry : fs::directory_iterator(state_.path())) {
      const std::string name = entry.path().filename().string();
      if (name.starts_with("xa-") && name.ends_with(".rows")) out.push_back(name);
    }
    return out;
  }

  Status Drain() { return applier_->flusher()->Drain(); }

  std::string database_;
  test::TempDir state_;
  test::TempDir binlogs_;
  RunRequest request_;
  std::atomic<bool> cancel_{false};
  SourceLink source_;
  Destination destination_{request_.config, cancel_};
  TableSet set_{request_.config, destination_};
  schema::Tracker tracker_{{/*full_metadata=*/true, /*mariadb=*/true}};
  Checkpoint checkpoint_;
  RunStatus status_;
  CascadeFollower cascades_;
  Holds holds_{request_.config.policies};
  Checkpointer checkpointer_{holds_.board()};
  std::optional<Versions> versions_;
  std::unique_ptr<RetentionSampler> retention_;
  FakeHost host_{request_.config, set_, destination_};
  std::unique_ptr<Applier> applier_;
};

TEST_F(ApplierTest, XaTransactionsAndATwoPhaseAlterLandAsTheSourceCommittedThem) {
  bool checked_prepare = false;
  SourcePosition before_transaction = applier_->committed();
  bool checked_inside = false;
  ASSERT_NO_FATAL_FAILURE(ApplyCapture([&](const binlog::Event& event) {
    // Inside a transaction the checkpoint cannot be there: committed() stays where the last one ended.
    if (applier_->in_transaction()) {
      EXPECT_EQ(applier_->committed().position, before_transaction.position) << "at " << event.position;
      checked_inside = true;
    } else {
      before_transaction = applier_->committed();
    }
    // XA PREPARE 'a': its rows wait in a file of the state directory, none in ClickHouse; the
    // checkpoint saved with it names the file.
    if (!checked_prepare && std::holds_alternative<binlog::XaPrepareEvent>(event.body)) {
      checked_prepare = true;
      ASSERT_TRUE(Drain().ok());
      EXPECT_EQ(XaFiles().size(), 1U) << "the prepared rows are kept in the state directory";
      EXPECT_TRUE(Rows().empty()) << "prepared rows are not in ClickHouse before XA COMMIT";
      auto saved = checkpointer_.Load();
      ASSERT_TRUE(saved.ok() && saved->has_value());
      ASSERT_EQ((*saved)->pending_xa.size(), 1U);
      EXPECT_EQ((*saved)->pending_xa[0].rows_file, XaFiles()[0]);
    }
  }));
  EXPECT_TRUE(checked_prepare);
  EXPECT_TRUE(checked_inside);
  ASSERT_TRUE(applier_->FlushAndCheckpoint().ok());
  ASSERT_TRUE(Drain().ok());

  // The source's table after the file: 'b' rolled back, X'00ff41' deleted 4, 1 and 10 updated;
  // 20 and 21 came after ALTER … ADD COLUMN w (whose START ALTER waited for its COMMIT ALTER).
  EXPECT_EQ(Rows("id, v, w"),
            (std::vector<std::string>{"1 a1u NULL", "2 a2 NULL", "5 g NULL", "6 gc NULL", "10 plain2 NULL",
                                      "11 gcplain NULL", "12 gcplain2 NULL", "20 dup 1", "21 dup 1"}));
  EXPECT_TRUE(host_.parks.empty()) << host_.parks[0].table << ": " << host_.parks[0].reason;
  EXPECT_GT(host_.between, 10) << "the pipe is asked between transactions";
  EXPECT_GT(host_.checkpoints, 0);

  // The checkpoint saved last is where the last transaction ended, with nothing prepared left,
  // the tracked schema with w, and no rows file left behind.
  auto saved = checkpointer_.Load();
  ASSERT_TRUE(saved.ok() && saved->has_value());
  EXPECT_EQ((*saved)->resume.file, "binlog.000001");
  EXPECT_EQ((*saved)->resume.position, applier_->committed().position);
  EXPECT_GT(applier_->committed().position, 4U);
  EXPECT_EQ((*saved)->resume.gtid_set, "0-101-53");
  EXPECT_TRUE((*saved)->pending_xa.empty());
  EXPECT_NE((*saved)->schemas.find("column name=w "), std::string::npos) << (*saved)->schemas;
  EXPECT_TRUE(XaFiles().empty()) << XaFiles()[0];
}

TEST_F(ApplierTest, ARowChangeWrittenAsAStatementParksTheTablesItNames) {
  ASSERT_NO_FATAL_FAILURE(ApplyCapture());
  // A session in STATEMENT format: the binlog has the text, not the rows.
  binlog::Event event;
  event.file = "binlog.000001";
  event.position = applier_->committed().position;
  event.header.event_size = 60;
  binlog::QueryEvent query;
  query.database = "bx_xa";
  query.query = "UPDATE t SET v = 'lost' WHERE id = 2";
  event.body = query;
  ASSERT_TRUE(applier_->HandleEvent(event, event.end_position()).ok());
  ASSERT_EQ(host_.parks.size(), 1U);
  EXPECT_EQ(host_.parks[0].table, "bx_xa.t");
  EXPECT_NE(host_.parks[0].reason.find("STATEMENT format"), std::string::npos) << host_.parks[0].reason;
  EXPECT_EQ(host_.parks[0].position, "binlog.000001:" + std::to_string(event.position));
  // A statement that names another table parks nothing.
  query.query = "UPDATE other SET v = 'x'";
  event.body = query;
  event.position += 60;
  set_.tables()["bx_xa.t"]->held.reset();
  ASSERT_TRUE(applier_->HandleEvent(event, event.end_position()).ok());
  EXPECT_EQ(host_.parks.size(), 1U);
}

}  // namespace
}  // namespace chsync::pipe
