// RunSnapshot against the live MariaDB (CHSYNC_TEST_MYSQL_FULL) into both destinations: the
// ClickHouse 18.16 server and embedded chDB. Tables with an integer key, a composite key with a
// VARCHAR, no key at all, and no rows; copied in small chunks two tables at a time, then compared
// with the source by aggregates; and a copy stopped part-way and resumed from its saved progress.

#include "pipe/snapshot.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "clickhouse/capabilities.h"
#include "clickhouse/connection.h"
#include "clickhouse/ddl.h"
#include "clickhouse/sql_quoting.h"
#include "clickhouse/test_destinations.h"
#include "common/url.h"
#include "mysql/connection.h"
#include "schema/information_schema.h"
#include "schema/tracker.h"

namespace chsync::pipe {
namespace {

enum class Engine { kServer, kEmbedded };

constexpr uint64_t kChunkRows = 7000;
constexpr uint64_t kIntRows = 50000;
constexpr uint64_t kCompositeRows = 20000;
constexpr uint64_t kNoKeyRows = 15000;

/// A table of the test and how to compare it: the same aggregates on both sides, as text.
struct TableCheck {
  std::string name;
  uint64_t rows;
  std::string source_sql;       // FROM `{db}`.`name` appended
  std::string destination_sql;  // FROM `{db}`.`name` FINAL appended
};

std::vector<TableCheck> Checks() {
  return {
      {"t_int", kIntRows,
       "SELECT COUNT(*), COALESCE(SUM(id), 0), COUNT(DISTINCT v), COALESCE(SUM(LENGTH(v)), 0)",
       "SELECT count(), sum(id), uniqExact(v), sum(length(v))"},
      {"t_composite", kCompositeRows,
       "SELECT COUNT(*), COALESCE(SUM(n), 0), COUNT(DISTINCT region), COALESCE(SUM(LENGTH(payload)), 0)",
       "SELECT count(), sum(n), uniqExact(region), sum(length(payload))"},
      {"t_nokey", kNoKeyRows, "SELECT COUNT(*), COALESCE(SUM(a), 0), COUNT(DISTINCT b)",
       "SELECT count(), sum(a), uniqExact(b)"},
      {"t_empty", 0, "SELECT COUNT(*), COALESCE(SUM(id), 0)", "SELECT count(), sum(id)"},
  };
}

/// One on_chunk call.
struct Call {
  size_t job = 0;
  TableSnapshot progress;
};

class SnapshotTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    const char* source_url = std::getenv("CHSYNC_TEST_MYSQL_FULL");
    ASSERT_NE(source_url, nullptr) << "CHSYNC_TEST_MYSQL_FULL is not set: run through scripts/test";
    auto url = ParseUrl(source_url);
    ASSERT_TRUE(url.ok()) << url.error().message();
    auto options = mysql::OptionsFromUrl(*url);
    ASSERT_TRUE(options.ok()) << options.error().message();
    source_options_ = *options;
    auto conn = mysql::Connection::Open(source_options_);
    ASSERT_TRUE(conn.ok()) << conn.error().message();
    source_ = std::move(*conn);

    dest_url_ =
        GetParam() == Engine::kServer ? clickhouse::testing::ServerUrl() : clickhouse::testing::EmbeddedUrl();
    dest_ = clickhouse::testing::ConnectOrFail(dest_url_);
    ASSERT_NE(dest_, nullptr);
    auto version = dest_->Version();
    ASSERT_TRUE(version.ok()) << version.error().message();
    caps_ = clickhouse::FromVersion(*version);

    database_ = clickhouse::testing::UniqueDatabase("chsync_snap");
    target_.database = database_;
    ASSERT_NO_FATAL_FAILURE(CreateSource());
    ASSERT_NO_FATAL_FAILURE(LoadJobs());
    ASSERT_TRUE(dest_->Execute(clickhouse::CreateDatabase(target_)).ok());
    for (const SnapshotJob& job : jobs_) {
      auto ddl = clickhouse::CreateTable(job.schema, caps_, target_);
      ASSERT_TRUE(ddl.ok()) << ddl.error().message();
      Status s = dest_->Execute(*ddl);
      ASSERT_TRUE(s.ok()) << s.error().message();
    }
  }

  void TearDown() override {
    if (source_ != nullptr) {
      EXPECT_TRUE(source_->Execute("DROP DATABASE IF EXISTS " + Quoted()).ok());
    }
    if (dest_ != nullptr) {
      EXPECT_TRUE(dest_->Execute("DROP DATABASE IF EXISTS " + clickhouse::QuoteIdentifier(database_)).ok());
    }
  }

  std::string Quoted() const { return mysql::QuoteIdentifier(database_); }

  void Run(const std::string& sql) {
    Status s = source_->Execute(sql);
    ASSERT_TRUE(s.ok()) << sql << ": " << s.error().message();
  }

  void CreateSource() {
    const std::string db = Quoted();
    ASSERT_NO_FATAL_FAILURE(Run("CREATE DATABASE " + db));
    // 0..99999 from five copies of the ten digits.
    ASSERT_NO_FATAL_FAILURE(Run("CREATE TABLE " + db + ".digits (d INT)"));
    ASSERT_NO_FATAL_FAILURE(
        Run("INSERT INTO " + db + ".digits VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9)"));
    ASSERT_NO_FATAL_FAILURE(Run("CREATE TABLE " + db + ".seq (n INT PRIMARY KEY)"));
    ASSERT_NO_FATAL_FAILURE(
        Run("INSERT INTO " + db + ".seq SELECT a.d + 10*b.d + 100*c.d + 1000*e.d + 10000*f.d FROM " + db +
            ".digits a, " + db + ".digits b, " + db + ".digits c, " + db + ".digits e, " + db + ".digits f"));

    ASSERT_NO_FATAL_FAILURE(Run("CREATE TABLE " + db +
                                ".t_int (id INT NOT NULL PRIMARY KEY, v VARCHAR(32), amount DECIMAL(12,2), "
                                "created DATETIME)"));
    ASSERT_NO_FATAL_FAILURE(Run("INSERT INTO " + db +
                                ".t_int SELECT n + 1, CONCAT('value-', n % 1000), n / 100, "
                                "'2024-01-01 00:00:00' + INTERVAL n SECOND FROM " +
                                db + ".seq WHERE n < " + std::to_string(kIntRows)));

    ASSERT_NO_FATAL_FAILURE(Run("CREATE TABLE " + db +
                                ".t_composite (region VARCHAR(20) NOT NULL, n INT NOT NULL, payload TEXT, "
                                "PRIMARY KEY (region, n))"));
    ASSERT_NO_FATAL_FAILURE(Run("INSERT INTO " + db +
                                ".t_composite SELECT CONCAT('región-', n % 7), n, REPEAT('x', n % 50) FROM " +
                                db + ".seq WHERE n < " + std::to_string(kCompositeRows)));

    ASSERT_NO_FATAL_FAILURE(Run("CREATE TABLE " + db + ".t_nokey (a INT, b VARCHAR(10))"));
    ASSERT_NO_FATAL_FAILURE(Run("INSERT INTO " + db + ".t_nokey SELECT n, CONCAT('b', n % 100) FROM " + db +
                                ".seq WHERE n < " + std::to_string(kNoKeyRows)));

    ASSERT_NO_FATAL_FAILURE(Run("CREATE TABLE " + db + ".t_empty (id INT NOT NULL PRIMARY KEY, x INT)"));
    ASSERT_NO_FATAL_FAILURE(Run("DROP TABLE " + db + ".digits, " + db + ".seq"));
  }

  /// Schemas as the pipe loads them: information_schema, normalised by the tracker.
  void LoadJobs() {
    auto rows = [&](const std::string& sql) -> Result<schema::TextRows> {
      CHSYNC_ASSIGN_OR_RETURN(mysql::QueryResult r, source_->Query(sql));
      return schema::TextRows{std::move(r.columns), std::move(r.rows)};
    };
    std::vector<std::string> dbs{database_};
    auto tables = rows(schema::TablesQuery(dbs));
    auto columns = rows(schema::ColumnsQuery(dbs));
    auto statistics = rows(schema::StatisticsQuery(dbs));
    ASSERT_TRUE(tables.ok() && columns.ok() && statistics.ok());
    const bool mariadb = source_->server_version().find("MariaDB") != std::string::npos;
    auto schemas =
        schema::LoadSchemas(*tables, *columns, *statistics, schema::InformationSchemaFlavor{mariadb});
    ASSERT_TRUE(schemas.ok()) << schemas.error().message();
    schema::Tracker::Options tracker_options;
    tracker_options.mariadb = mariadb;
    schema::Tracker tracker(tracker_options);
    for (schema::TableSchema& t : *schemas) tracker.SetTable(std::move(t));
    for (const TableCheck& check : Checks()) {
      const schema::TableSchema* t = tracker.Find(database_, check.name);
      ASSERT_NE(t, nullptr) << check.name;
      SnapshotJob job;
      job.schema = *t;
      job.writer_schema = *t;
      job.target = target_;
      job.progress.database = database_;
      job.progress.table = check.name;
      job.row_estimate = check.rows;
      jobs_.push_back(std::move(job));
    }
  }

  SnapshotOptions Options() const {
    SnapshotOptions options;
    options.parallelism = 2;
    options.chunk_rows = kChunkRows;
    options.chunk_max_bytes = chunk_max_bytes_;
    options.source = source_options_;
    options.dest_url = dest_url_;
    options.caps = caps_;
    options.log_interval = std::chrono::milliseconds(500);
    return options;
  }

  /// Runs the snapshot, recording the on_chunk calls; `hook` may request a stop.
  Status Snapshot(std::vector<Call>& calls, std::atomic<bool>& stop,
                  const std::function<void(const Call&)>& hook = nullptr) {
    std::mutex mu;
    std::atomic<bool> concurrent{false};
    bool inside = false;
    Status s = RunSnapshot(
        jobs_, Options(),
        [&](size_t job, const TableSnapshot& progress) -> Status {
          {
            std::lock_guard lock(mu);
            if (inside) concurrent = true;
            inside = true;
            calls.push_back({job, progress});
          }
          if (hook) hook(calls.back());
          std::lock_guard lock(mu);
          inside = false;
          return Status::Ok();
        },
        stop);
    EXPECT_FALSE(concurrent.load()) << "on_chunk calls overlapped";
    return s;
  }

  std::string SourceAggregates(const TableCheck& check) {
    auto r =
        source_->Query(check.source_sql + " FROM " + Quoted() + "." + mysql::QuoteIdentifier(check.name));
    EXPECT_TRUE(r.ok()) << r.error().message();
    if (!r.ok() || r->rows.size() != 1) return "";
    std::string out;
    for (const auto& v : r->rows[0]) out += (out.empty() ? "" : "\t") + v.value_or("NULL");
    return out;
  }

  std::string DestinationQuery(const std::string& sql) {
    auto r = dest_->Query(sql);
    EXPECT_TRUE(r.ok()) << sql << ": " << r.error().message();
    if (!r.ok()) return "";
    std::string out = *r;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

  std::string DestinationAggregates(const TableCheck& check) {
    return DestinationQuery(check.destination_sql + " FROM " + clickhouse::QuoteIdentifier(database_) + "." +
                            clickhouse::QuoteIdentifier(check.name) + " FINAL");
  }

  mysql::ConnectOptions source_options_;
  std::unique_ptr<mysql::Connection> source_;
  std::string dest_url_;
  std::unique_ptr<clickhouse::Connection> dest_;
  clickhouse::Capabilities caps_;
  std::string database_;
  clickhouse::DdlTarget target_;
  std::vector<SnapshotJob> jobs_;
  uint64_t chunk_max_bytes_ = 0;
};

TEST_P(SnapshotTest, CopiesEveryTableChunkByChunk) {
  std::vector<Call> calls;
  std::atomic<bool> stop{false};
  Status s = Snapshot(calls, stop);
  ASSERT_TRUE(s.ok()) << s.error().message();

  const std::vector<TableCheck> checks = Checks();
  for (size_t i = 0; i < checks.size(); ++i) {
    SCOPED_TRACE(checks[i].name);
    const TableCheck& check = checks[i];
    EXPECT_EQ(jobs_[i].progress.state, TableSnapshot::State::kDone);
    EXPECT_EQ(jobs_[i].progress.rows_copied, check.rows);
    std::string source = SourceAggregates(check);
    EXPECT_EQ(source.substr(0, source.find('\t')), std::to_string(check.rows));
    EXPECT_EQ(DestinationAggregates(check), source);

    std::vector<TableSnapshot> table_calls;
    for (const Call& c : calls) {
      if (c.job == i) table_calls.push_back(c.progress);
    }
    ASSERT_FALSE(table_calls.empty());
    EXPECT_EQ(table_calls.back().state, TableSnapshot::State::kDone);
    EXPECT_EQ(table_calls.back().rows_copied, check.rows);
    if (check.name == "t_nokey") {
      // A table without key is recorded only once complete.
      EXPECT_EQ(table_calls.size(), 1u);
      EXPECT_EQ(table_calls[0].last_key, "");
      continue;
    }
    // One call per chunk: full chunks, then the short (possibly empty) one that ends the table.
    EXPECT_EQ(table_calls.size(), check.rows / kChunkRows + 1);
    for (size_t k = 0; k + 1 < table_calls.size(); ++k) {
      EXPECT_EQ(table_calls[k].state, TableSnapshot::State::kCopying);
      EXPECT_EQ(table_calls[k].rows_copied, (k + 1) * kChunkRows);
      EXPECT_FALSE(table_calls[k].last_key.empty());
      EXPECT_NE(table_calls[k].last_key, table_calls[k + 1].last_key);
    }
  }
  // t_int's keys are 1..50000: the first chunk ends at 7000.
  for (const Call& c : calls) {
    if (c.job == 0) {
      EXPECT_EQ(c.progress.last_key, R"([{"i":7000}])");
      break;
    }
  }
}

// Rows the source says are large make chunks of fewer rows, each about chunk_max_bytes: memory
// stays bounded whatever the rows' size, and every chunk is a resumable step.
TEST_P(SnapshotTest, LargeRowsMakeChunksOfFewerRows) {
  ASSERT_EQ(Checks()[0].name, "t_int");
  jobs_[0].avg_row_bytes = 1000;
  chunk_max_bytes_ = 2'000'000;  // 2000 rows of t_int per chunk instead of kChunkRows
  std::vector<Call> calls;
  std::atomic<bool> stop{false};
  Status s = Snapshot(calls, stop);
  ASSERT_TRUE(s.ok()) << s.error().message();
  const TableCheck check = Checks()[0];
  EXPECT_EQ(DestinationAggregates(check), SourceAggregates(check));
  std::vector<TableSnapshot> table_calls;
  for (const Call& c : calls) {
    if (c.job == 0) table_calls.push_back(c.progress);
  }
  ASSERT_EQ(table_calls.size(), check.rows / 2000 + 1);
  EXPECT_EQ(table_calls[0].last_key, R"([{"i":2000}])");
  EXPECT_EQ(table_calls[0].rows_copied, 2000u);
  EXPECT_EQ(table_calls.back().state, TableSnapshot::State::kDone);
  // The other tables keep kChunkRows.
  for (const Call& c : calls) {
    if (c.job == 1 && c.progress.state == TableSnapshot::State::kCopying) {
      EXPECT_EQ(c.progress.rows_copied % kChunkRows, 0u);
    }
  }
}

TEST(ChunkRowsFor, BoundsRowsByBytes) {
  EXPECT_EQ(ChunkRowsFor(100000, 0, 500), 100000u);         // no byte bound
  EXPECT_EQ(ChunkRowsFor(100000, 32 << 20, 0), 100000u);    // row size unknown
  EXPECT_EQ(ChunkRowsFor(100000, 32 << 20, 100), 100000u);  // small rows: the row count decides
  EXPECT_EQ(ChunkRowsFor(100000, 32 << 20, 66137), 507u);   // 40 KiB TEXT+BLOB rows as InnoDB counts them
  EXPECT_EQ(ChunkRowsFor(100000, 32 << 20, 64 << 20), 1u);  // a row larger than the bound: one per chunk
  EXPECT_EQ(ChunkRowsFor(0, 0, 0), 1u);
}

TEST_P(SnapshotTest, ResumesAfterAStopWithoutCopyingAgain) {
  std::vector<Call> first_calls;
  std::atomic<bool> stop{false};
  int int_chunks = 0;
  Status s = Snapshot(first_calls, stop, [&](const Call& c) {
    if (c.job == 0 && ++int_chunks == 2) stop = true;
  });
  ASSERT_TRUE(s.ok()) << s.error().message();
  const TableSnapshot after_stop = jobs_[0].progress;
  EXPECT_EQ(after_stop.state, TableSnapshot::State::kCopying);
  // The chunk being inserted and at most one already read finish after the stop.
  EXPECT_GE(after_stop.rows_copied, 2 * kChunkRows);
  EXPECT_LE(after_stop.rows_copied, 3 * kChunkRows);
  EXPECT_EQ(after_stop.last_key, "[{\"i\":" + std::to_string(after_stop.rows_copied) + "}]");
  std::vector<TableSnapshot> saved;
  for (const SnapshotJob& job : jobs_) saved.push_back(job.progress);

  // A new run from the saved progress (as a restart reads it from the checkpoint).
  for (size_t i = 0; i < jobs_.size(); ++i) jobs_[i].progress = saved[i];
  std::vector<Call> second_calls;
  stop = false;
  s = Snapshot(second_calls, stop);
  ASSERT_TRUE(s.ok()) << s.error().message();

  std::vector<TableSnapshot> int_calls;
  for (const Call& c : second_calls) {
    if (c.job == 0) int_calls.push_back(c.progress);
    // Tables finished in the first run are not copied again.
    EXPECT_NE(saved[c.job].state, TableSnapshot::State::kDone) << c.progress.table;
  }
  ASSERT_FALSE(int_calls.empty());
  EXPECT_EQ(int_calls.front().rows_copied, after_stop.rows_copied + kChunkRows);
  EXPECT_EQ(int_calls.size(), (kIntRows - after_stop.rows_copied) / kChunkRows + 1);
  EXPECT_EQ(jobs_[0].progress.state, TableSnapshot::State::kDone);
  EXPECT_EQ(jobs_[0].progress.rows_copied, kIntRows);

  const std::vector<TableCheck> checks = Checks();
  for (size_t i = 0; i < checks.size(); ++i) {
    SCOPED_TRACE(checks[i].name);
    EXPECT_EQ(jobs_[i].progress.state, TableSnapshot::State::kDone);
    EXPECT_EQ(DestinationAggregates(checks[i]), SourceAggregates(checks[i]));
  }
  // Every row exactly once, before any merge too: the resumed copy started after the saved key.
  const std::string table = clickhouse::QuoteIdentifier(database_) + ".`t_int`";
  EXPECT_EQ(DestinationQuery("SELECT count(), uniqExact(id) FROM " + table),
            std::to_string(kIntRows) + "\t" + std::to_string(kIntRows));
}

TEST_P(SnapshotTest, ErrorNamesTheTable) {
  ASSERT_TRUE(dest_
                  ->Execute("DROP TABLE " + clickhouse::QuoteIdentifier(database_) + "." +
                            clickhouse::QuoteIdentifier("t_composite"))
                  .ok());
  std::vector<Call> calls;
  std::atomic<bool> stop{false};
  Status s = Snapshot(calls, stop);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("snapshot of " + database_ + ".t_composite, first chunk"),
            std::string::npos)
      << s.error().message();
  EXPECT_NE(jobs_[1].progress.state, TableSnapshot::State::kDone);
}

INSTANTIATE_TEST_SUITE_P(Destinations, SnapshotTest, ::testing::Values(Engine::kServer, Engine::kEmbedded),
                         [](const ::testing::TestParamInfo<Engine>& param) {
                           return param.param == Engine::kServer ? "ClickHouse18" : "Embedded";
                         });

}  // namespace
}  // namespace chsync::pipe
