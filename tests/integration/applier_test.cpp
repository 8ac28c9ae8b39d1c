// The applier (pipe/applier.h) against the real ClickHouse server of scripts/test-servers: a binlog
// file captured from MariaDB 10.11 (XA transactions prepared, committed, rolled back and committed
// in one phase, ordinary transactions between a PREPARE and its COMMIT, a two-phase ALTER committed
// and one rolled back; tests/data/binlog/captures/README.md) applied event by event as the stream
// does, with a fake pipe as its host. What is checked is what a user sees: the rows in ClickHouse,
// the checkpoint saved, the XA rows files in the state directory, the tables parked.

#include "pipe/applier.h"
#include "pipe/binlog_session.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "binlog/file_reader.h"
#include "clickhouse/ddl.h"
#include "common/test_util.h"
#include "common/url.h"
#include "mysql/connection.h"
#include "pipe/names.h"
#include "pipe/schema_applier.h"
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
    request_.config.tables = source_db_ + ".*";
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

    ASSERT_TRUE(tracker_.ApplySql("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))", source_db_, {}).ok());
    const schema::TableSchema* t = tracker_.Find(source_db_, "t");
    ASSERT_NE(t, nullptr);
    std::string error;
    ASSERT_TRUE(QueryDestination(request_.config.dest, "CREATE DATABASE " + database_, &error).has_value())
        << error;
    Status created = set_.CreateDestination(*t, /*replace=*/false);
    ASSERT_TRUE(created.ok()) << created.error().message();
    auto table = std::make_unique<TableState>();
    table->dest = set_.FreshDestination(*t);
    ASSERT_TRUE(host_.RebuildWriter(*table).ok());
    set_.tables()[source_db_ + ".t"] = std::move(table);

    checkpoint_.resume.file = "binlog.000001";
    checkpoint_.resume.position = 4;
    applier_ = std::make_unique<Applier>(
        ApplierParts{request_, source_, tracker_, checkpoint_, status_, set_, destination_, checkpointer_,
                     cascades_, holds_, versions_, retention_, history_},
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

  /// The source database of table t (the captured file's).
  std::string source_db_ = "bx_xa";
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
  SchemaHistory history_{status_, destination_};
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

// SchemaApplier (pipe/schema_applier.h) over the same parts: a statement's changes land in
// ClickHouse and the table set follows.
TEST_F(ApplierTest, AStatementsSchemaChangesLandInClickHouseAndTheTableSetFollows) {
  SchemaApplier schema({request_.config, source_, tracker_, checkpoint_, set_, destination_, checkpointer_,
                        holds_, versions_, history_},
                       host_);
  uint64_t position = 1000;
  auto apply = [&](const std::string& sql) {
    binlog::Event event;
    event.file = "binlog.000001";
    event.position = position += 100;
    auto applied = tracker_.ApplySql(sql, source_db_, {});
    ASSERT_TRUE(applied.ok()) << applied.error().message();
    ASSERT_TRUE(schema.Concerns(event, *applied)) << sql;
    Status done = schema.Apply({event, sql, /*strict_mode=*/true, 0}, *applied);
    ASSERT_TRUE(done.ok()) << sql << ": " << done.error().message();
  };
  auto columns = [&](const std::string& table) {
    std::string error;
    auto rows = QueryDestination(request_.config.dest, "DESCRIBE TABLE " + database_ + "." + table, &error);
    EXPECT_TRUE(rows.has_value()) << error;
    std::string out;
    for (const auto& row : rows.value_or(testing::TsvRows{})) {
      const std::string name = row[0].value_or("NULL");
      if (!name.starts_with("_chsync")) out += (out.empty() ? "" : " ") + name;
    }
    return out;
  };

  ASSERT_NO_FATAL_FAILURE(apply("ALTER TABLE t ADD COLUMN x INT"));
  EXPECT_EQ(columns("t"), "id v x");
  const TableState& t = *set_.tables().at(source_db_ + ".t");
  EXPECT_GE(t.dest.source.FindColumn("x"), 0) << "the table's destination follows";
  EXPECT_NE(std::find(t.writer->names().begin(), t.writer->names().end(), "x"), t.writer->names().end())
      << "its writer was made again";
  ASSERT_FALSE(status_.schema_changes.empty());
  EXPECT_EQ(status_.schema_changes.back().table, source_db_ + ".t");
  EXPECT_EQ(status_.schema_changes.back().position, "binlog.000001:1100");

  // A table created under a replicated name: made in ClickHouse, replicated from its first row.
  ASSERT_NO_FATAL_FAILURE(apply("CREATE TABLE t2 (id INT PRIMARY KEY, s VARCHAR(5))"));
  EXPECT_EQ(columns("t2"), "id s");
  ASSERT_TRUE(set_.tables().contains(source_db_ + ".t2"));
  auto copied = [&](const std::string& name) {
    return std::any_of(checkpoint_.snapshot.begin(), checkpoint_.snapshot.end(), [&](const TableSnapshot& s) {
      return s.table == name && s.state == TableSnapshot::State::kDone;
    });
  };
  EXPECT_TRUE(copied("t2")) << "nothing to copy: the checkpoint counts it done";

  // Dropped at the source: no longer replicated, its ClickHouse table and rows kept.
  ASSERT_NO_FATAL_FAILURE(apply("DROP TABLE t2"));
  EXPECT_FALSE(set_.tables().contains(source_db_ + ".t2"));
  EXPECT_TRUE(set_.dropped().contains(source_db_ + ".t2"));
  EXPECT_FALSE(copied("t2"));
  EXPECT_EQ(columns("t2"), "id s") << "DROP TABLE keeps the ClickHouse table";

  // Every change is in the schema log of the ClickHouse database.
  std::string error;
  auto logged =
      QueryDestination(request_.config.dest,
                       "SELECT position FROM " + database_ + "._chsync_schema_log ORDER BY position", &error);
  ASSERT_TRUE(logged.has_value()) << error;
  ASSERT_EQ(logged->size(), 3u);
  EXPECT_EQ((*logged)[0][0].value_or(""), "binlog.000001:1100");
  EXPECT_EQ((*logged)[2][0].value_or(""), "binlog.000001:1300");
  EXPECT_TRUE(host_.parks.empty());
}

// BinlogSession (pipe/binlog_session.h) over the same applier, reading the real MariaDB.

/// The pipe as a session sees it: what it was asked, in order.
class FakeSessionHost : public SessionHost {
 public:
  std::vector<std::string> calls;
  std::string gap;
  Status PollControl() override {
    calls.push_back("control");
    return Status::Ok();
  }
  Status BetweenTransactions() override {
    calls.push_back("between");
    return Status::Ok();
  }
  Status PollRebuilds(bool wait) override {
    calls.push_back(wait ? "rebuilds wait" : "rebuilds");
    return Status::Ok();
  }
  Error BinlogGap(const std::string& what) override {
    gap = what;
    return Error(ErrorKind::kServer, "gap: " + what);
  }
};

/// Table t of a database of its own on the MariaDB server with binlog_row_metadata=FULL, replicated
/// from the end of that server's binlog.
class BinlogSessionTest : public ApplierTest {
 protected:
  BinlogSessionTest() {
    source_db_ = "sess_" + std::to_string(getpid()) + "_" + std::to_string(std::rand() % 100000);
  }

  void SetUp() override {
    auto url = ParseUrl(RequireEnv("CHSYNC_TEST_MYSQL_FULL"));
    ASSERT_TRUE(url.ok());
    auto options = mysql::OptionsFromUrl(*url);
    ASSERT_TRUE(options.ok());
    auto conn = mysql::Connection::Open(*options);
    ASSERT_TRUE(conn.ok()) << conn.error().message();
    mysql_ = std::move(*conn);
    ASSERT_NO_FATAL_FAILURE(Exec("CREATE DATABASE " + source_db_));
    ASSERT_NO_FATAL_FAILURE(Exec("CREATE TABLE " + source_db_ + ".t (id INT PRIMARY KEY, v VARCHAR(10))"));
    ASSERT_NO_FATAL_FAILURE(ApplierTest::SetUp());
    // The checkpoint: the end of the binlog now, with the GTID position there.
    auto at = mysql::CurrentBinlogPosition(*mysql_);
    ASSERT_TRUE(at.ok()) << at.error().message();
    auto gtid = GtidAt(*at);
    ASSERT_FALSE(gtid.empty());
    checkpoint_.resume = SourcePosition{at->file, at->position, gtid};
    Status started = applier_->Start(checkpoint_.resume);
    ASSERT_TRUE(started.ok()) << started.error().message();
    session_ = std::make_unique<BinlogSession>(
        SessionParts{request_, stop_, source_, set_, tracker_, *applier_, versions_}, session_host_);
    session_->set_server_id(static_cast<uint32_t>(4000000 + getpid() % 100000));
  }

  void TearDown() override {
    if (mysql_ != nullptr) (void)mysql_->Execute("DROP DATABASE IF EXISTS " + source_db_);
    ApplierTest::TearDown();
  }

  void Exec(const std::string& sql) {
    Status s = mysql_->Execute(sql);
    ASSERT_TRUE(s.ok()) << sql << ": " << s.error().message();
  }

  /// The GTID position at `at` (other tests write to the same server meanwhile).
  std::string GtidAt(const mysql::BinlogCoordinate& at) {
    auto gtid =
        mysql_->QueryValue("SELECT BINLOG_GTID_POS('" + at.file + "', " + std::to_string(at.position) + ")");
    EXPECT_TRUE(gtid.ok() && gtid->has_value());
    return gtid.ok() && gtid->has_value() ? **gtid : "";
  }

  /// The end of the source's binlog now.
  mysql::BinlogCoordinate End() {
    auto at = mysql::CurrentBinlogPosition(*mysql_);
    EXPECT_TRUE(at.ok());
    return at.ok() ? *at : mysql::BinlogCoordinate{};
  }

  std::unique_ptr<mysql::Connection> mysql_;
  std::atomic<bool> stop_{false};
  FakeSessionHost session_host_;
  std::unique_ptr<BinlogSession> session_;
};

TEST_F(BinlogSessionTest, ASessionReadsFromTheCheckpointUntilCaughtUpAndEndsWithTheCopies) {
  Exec("INSERT INTO " + source_db_ + ".t VALUES (1, 'a'), (2, 'b'), (3, 'c')");
  Exec("UPDATE " + source_db_ + ".t SET v = 'b2' WHERE id = 2");
  Exec("DELETE FROM " + source_db_ + ".t WHERE id = 3");
  Exec("ALTER TABLE " + source_db_ + ".t ADD COLUMN w INT");
  Exec("INSERT INTO " + source_db_ + ".t VALUES (4, 'd', 40)");
  const mysql::BinlogCoordinate end = End();
  bool done = false;
  Status ran = session_->Run(end, done);
  ASSERT_TRUE(ran.ok()) << ran.error().message();
  EXPECT_TRUE(done) << "caught up with the end of the binlog";
  ASSERT_TRUE(Drain().ok());
  EXPECT_EQ(Rows("id, v, w"), (std::vector<std::string>{"1 a NULL", "2 b2 NULL", "4 d 40"}));
  EXPECT_FALSE(session_->source_failed());
  EXPECT_TRUE(session_->lineage_break().empty());
  EXPECT_TRUE(session_host_.gap.empty());
  // Requests first, copies waited for last (the applier asks the pipe between its transactions).
  ASSERT_GE(session_host_.calls.size(), 2U);
  EXPECT_EQ(session_host_.calls.front(), "control");
  EXPECT_EQ(session_host_.calls.back(), "rebuilds wait");
  // Its checkpoint is at the end of what it read, with the GTIDs read.
  auto saved = checkpointer_.Load();
  ASSERT_TRUE(saved.ok() && saved->has_value());
  EXPECT_EQ((*saved)->resume.file, end.file);
  EXPECT_EQ((*saved)->resume.position, end.position);
  EXPECT_EQ((*saved)->resume.gtid_set, GtidAt(end));
  EXPECT_GT(host_.between, 0);

  // A stopped session reads nothing more, and saves where it is.
  Exec("INSERT INTO " + source_db_ + ".t VALUES (5, 'e', 50)");
  stop_ = true;
  done = false;
  ran = session_->Run(End(), done);
  ASSERT_TRUE(ran.ok()) << ran.error().message();
  EXPECT_FALSE(done);
  EXPECT_EQ(Rows("id"), (std::vector<std::string>{"1", "2", "4"}));
  saved = checkpointer_.Load();
  ASSERT_TRUE(saved.ok() && saved->has_value());
  EXPECT_EQ((*saved)->resume.position, end.position) << "saved where it stopped";
}

TEST_F(BinlogSessionTest, APositionTheServerNoLongerHasIsABinlogGap) {
  // A checkpoint in a binlog file the server never had, without GTIDs: read by position.
  Status started = applier_->Start(SourcePosition{"mariadb-bin.999999", 4, ""});
  ASSERT_TRUE(started.ok()) << started.error().message();
  bool done = false;
  Status ran = session_->Run(End(), done);
  ASSERT_FALSE(ran.ok());
  EXPECT_NE(ran.error().message().find("gap:"), std::string::npos) << ran.error().message();
  EXPECT_NE(session_host_.gap.find("mariadb-bin.999999:4"), std::string::npos) << session_host_.gap;
  EXPECT_FALSE(session_->source_failed()) << "the server answered: it is not down";
}

}  // namespace
}  // namespace chsync::pipe
