// The pipe's metrics as a running pipe keeps them: RunPipe in this process, from the FULL source
// into the ClickHouse server, while the test changes rows at the source and reads
// pipe::Metrics() (process-wide: the table is new, and counts are compared per table or as deltas).

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>

#include "clickhouse/connection.h"
#include "common/result.h"
#include "config/config.h"
#include "metrics/pipe_metrics.h"
#include "pipe/pipeline.h"
#include "pipe_harness.h"

namespace chsync {
namespace {

using testing::Dest;
using testing::PipeTest;

constexpr int kServerIdBase = 17000000;

/// Polls until `ok()` holds or `seconds` pass.
template <typename F>
bool WaitFor(F ok, int seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ok()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return ok();
}

double Value(std::string_view name, const metrics::LabelValues& labels = {}) {
  return pipe::Metrics().registry.Value(name, labels);
}

/// A counter's value, 0 before it has a child for `labels`.
double Count(std::string_view name, const metrics::LabelValues& labels = {}) {
  double v = Value(name, labels);
  return std::isnan(v) ? 0 : v;
}

class PipeMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override { p_.Init("CHSYNC_TEST_MYSQL_FULL", Dest::kServer, "metrics", kServerIdBase); }
  void TearDown() override {
    StopPipe();
    p_.Cleanup();
    if (auto conn = clickhouse::Connect(p_.dest_url()); conn.ok()) {
      (void)(*conn)->Execute("DROP DATABASE IF EXISTS " + p_.db());
    }
  }

  void StartPipe() {
    request_.config.source = p_.source_url();
    request_.config.dest = p_.dest_url();
    request_.config.tables = p_.db() + ".*";
    request_.config.state = p_.state();
    request_.config.server_id = static_cast<uint32_t>(std::stoul(testing::UniqueServerId(kServerIdBase)));
    request_.config.batch_max_age_ms = 200;
    request_.config.retry_attempts = 3;
    thread_ = std::thread([this] { result_ = pipe::RunPipe(request_, stop_); });
  }
  void StopPipe() {
    if (!thread_.joinable()) return;
    stop_ = true;
    thread_.join();
  }

  /// Live rows of `table` ("db.t") in ClickHouse (asked directly: no `chsync` binary needed).
  std::string DestCount(const std::string& table) const {
    auto conn = clickhouse::Connect(p_.dest_url());
    if (!conn.ok()) return conn.error().message();
    auto out = (*conn)->Query("SELECT count() FROM " + table + " FINAL WHERE _chsync_is_deleted = 0");
    if (!out.ok()) return out.error().message();
    std::string text = *out;
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  }

  PipeTest p_;
  pipe::RunRequest request_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  Status result_ = Status::Ok();
};

TEST_F(PipeMetricsTest, CountsWhatTheSourceDid) {
  ASSERT_TRUE(p_.connected());
  ASSERT_TRUE(p_.Exec("CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)"));
  const std::string table = p_.db() + ".t";
  const double events_before = Count("chsync_binlog_events_total");
  const uint64_t batches_before = pipe::Metrics().batch_rows_all.count();
  const double add_column_before = Count("chsync_schema_changes_total", {"add_column", "propagated"});

  StartPipe();
  ASSERT_TRUE(WaitFor([] { return pipe::LiveRunStatus().phase == "streaming"; }, 120))
      << "phase " << pipe::LiveRunStatus().phase << ", error " << pipe::LiveRunStatus().last_error;
  EXPECT_EQ(Value("chsync_pipe_state", {"streaming"}), 1);
  EXPECT_EQ(Value("chsync_pipe_state", {"snapshot"}), 0);

  for (int chunk = 0; chunk < 3; ++chunk) {
    std::string sql = "INSERT INTO t (id, v) VALUES ";
    for (int i = 1; i <= 100; ++i) {
      int id = chunk * 100 + i;
      sql += (i == 1 ? "(" : ", (") + std::to_string(id) + ", " + std::to_string(id) + ")";
    }
    ASSERT_TRUE(p_.Exec(sql));
  }
  ASSERT_TRUE(p_.Exec("UPDATE t SET v = v + 1 WHERE id <= 40"));
  ASSERT_TRUE(p_.Exec("DELETE FROM t WHERE id > 275"));

  auto counts_reached = [&] {
    return Value("chsync_row_changes_total", {table, "insert"}) == 300 &&
           Value("chsync_row_changes_total", {table, "update"}) == 40 &&
           Value("chsync_row_changes_total", {table, "delete"}) == 25;
  };
  EXPECT_TRUE(WaitFor(counts_reached, 60))
      << "insert " << Value("chsync_row_changes_total", {table, "insert"}) << ", update "
      << Value("chsync_row_changes_total", {table, "update"}) << ", delete "
      << Value("chsync_row_changes_total", {table, "delete"});
  EXPECT_TRUE(WaitFor([] { return Value("chsync_replication_lag_seconds") == 0; }, 30))
      << "lag " << Value("chsync_replication_lag_seconds");
  EXPECT_GT(Value("chsync_binlog_events_total") - events_before, 0);
  EXPECT_GT(Value("chsync_binlog_bytes_read_total"), 0);
  EXPECT_GT(Value("chsync_transactions_total"), 0);
  EXPECT_GT(pipe::Metrics().batch_rows_all.count() - batches_before, 0U);
  EXPECT_GT(Value("chsync_checkpoint_file_sequence"), 0);
  EXPECT_GT(Value("chsync_last_checkpoint_time_seconds"), 0);
  EXPECT_LT(Value("chsync_seconds_since_last_event"), 30);
  EXPECT_EQ(Value("chsync_tables", {"streaming"}), 1);
  EXPECT_EQ(DestCount(table), "275");

  ASSERT_TRUE(p_.Exec("ALTER TABLE t ADD COLUMN c INT"));
  EXPECT_TRUE(WaitFor(
      [&] {
        return Count("chsync_schema_changes_total", {"add_column", "propagated"}) - add_column_before == 1;
      },
      60))
      << pipe::Metrics().registry.Render();
  ASSERT_TRUE(p_.Exec("INSERT INTO t (id, v, c) VALUES (1000, 1, 1)"));
  EXPECT_TRUE(WaitFor([&] { return Value("chsync_row_changes_total", {table, "insert"}) == 301; }, 60));
  EXPECT_TRUE(WaitFor([] { return Value("chsync_replication_lag_seconds") == 0; }, 30));
  EXPECT_EQ(Value("chsync_pipe_state", {"streaming"}), 1);

  // Retention: the sampler reads the source's binlog list right away.
  EXPECT_TRUE(WaitFor([] { return !std::isnan(Value("chsync_binlog_bytes_behind")); }, 30));
  EXPECT_GE(Value("chsync_binlog_bytes_behind"), 0);

  StopPipe();
  EXPECT_TRUE(result_.ok()) << result_.error().message();
  EXPECT_EQ(Value("chsync_pipe_state", {"stopped"}), 1);
  EXPECT_EQ(Value("chsync_pipe_state", {"streaming"}), 0);
  EXPECT_EQ(pipe::LiveRunStatus().phase, "stopped");
}

/// The `table` label of /metrics: the ClickHouse table by default, the source table on request
/// (http.metrics_per_source_table), so that the series follow the destination's tables.
class MetricsLabelTest : public ::testing::TestWithParam<Dest> {
 protected:
  void SetUp() override { p_.Init("CHSYNC_TEST_MYSQL_FULL", GetParam(), "mlabel", kServerIdBase + 500000); }
  void TearDown() override { p_.Cleanup(); }

  /// Runs a pipe over the test's database until caught up (in this process), with `yaml` on top.
  void RunUntilCaughtUp(const std::string& yaml) {
    pipe::RunRequest request;
    request.config.source = p_.source_url();
    request.config.dest = p_.dest_url();
    request.config.tables = p_.db() + ".*";
    request.config.state = p_.state();
    request.config.server_id =
        static_cast<uint32_t>(std::stoul(testing::UniqueServerId(kServerIdBase + 500000)));
    request.config.batch_max_age_ms = 200;
    request.until_caught_up = true;
    Status loaded = pipe::LoadConfigText(yaml, "pipe.yaml", request.config);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message();
    std::atomic<bool> stop{false};
    Status s = pipe::RunPipe(request, stop);
    ASSERT_TRUE(s.ok()) << s.error().message();
  }

  /// The distinct `table` labels of chsync_row_changes_total that name this test's tables.
  std::set<std::string> RowChangeLabels() const {
    std::set<std::string> labels;
    for (const auto& sample : pipe::Metrics().registry.Samples("chsync_row_changes_total")) {
      if (!sample.labels.empty() && sample.labels[0].starts_with(p_.db() + "."))
        labels.insert(sample.labels[0]);
    }
    return labels;
  }

  PipeTest p_;
};

TEST_P(MetricsLabelTest, TablesAreLabelledByTheirClickHouseTableUnlessPerSourceTable) {
  ASSERT_TRUE(p_.connected());
  for (const char* name : {"a", "b", "c"}) {
    ASSERT_TRUE(p_.Exec(std::string("CREATE TABLE ") + name + " (id INT PRIMARY KEY, v INT NOT NULL)"));
    ASSERT_TRUE(p_.Exec(std::string("INSERT INTO ") + name + " VALUES (1, 1), (2, 2)"));
  }
  const std::string options = "table_options:\n  \"" + p_.db() + ".a\": {dest: " + p_.db() + ".renamed_a}\n";
  RunUntilCaughtUp(options);
  ASSERT_TRUE(p_.Exec("INSERT INTO a VALUES (3, 3)"));
  ASSERT_TRUE(p_.Exec("UPDATE b SET v = 9 WHERE id = 1"));
  RunUntilCaughtUp(options);

  const std::string a = p_.db() + ".a";
  const std::string renamed = p_.db() + ".renamed_a";
  EXPECT_EQ(RowChangeLabels(), (std::set<std::string>{renamed, p_.db() + ".b", p_.db() + ".c"}));
  EXPECT_EQ(Count("chsync_row_changes_total", {renamed, "insert"}), 1);
  EXPECT_EQ(Count("chsync_row_changes_total", {p_.db() + ".b", "update"}), 1);
  EXPECT_TRUE(std::isnan(Value("chsync_snapshot_rows_copied", {a})));
  EXPECT_EQ(Value("chsync_snapshot_rows_copied", {renamed}), 2);

  // On request, the source table's own name; the next changes count there.
  ASSERT_TRUE(p_.Exec("INSERT INTO a VALUES (4, 4)"));
  RunUntilCaughtUp(options + "http: {metrics_per_source_table: true}\n");
  EXPECT_EQ(Count("chsync_row_changes_total", {a, "insert"}), 1);
  EXPECT_EQ(Count("chsync_row_changes_total", {renamed, "insert"}), 1) << "unchanged";
}

INSTANTIATE_TEST_SUITE_P(Destinations, MetricsLabelTest, ::testing::Values(Dest::kServer, Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& i) { return testing::DestName(i.param); });

}  // namespace
}  // namespace chsync
