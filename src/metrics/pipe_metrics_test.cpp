#include "metrics/pipe_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace chsync::pipe {
namespace {

double StateValue(std::string_view state) {
  return Metrics().registry.Value("chsync_pipe_state", {std::string(state)});
}

TEST(PipeMetricsTest, StateGaugeHasAllFourStatesAndOneIsSet) {
  RunStatus status;
  for (std::string_view phase : PipeMetrics::kStates) {
    status.phase = std::string(phase);
    PublishRunStatus(status);
    for (std::string_view other : PipeMetrics::kStates) {
      EXPECT_EQ(StateValue(other), other == phase ? 1 : 0) << "phase " << phase << ", state " << other;
    }
    EXPECT_EQ(LiveRunStatus().phase, phase);
  }
  status.phase = "";  // before a pipe ran: every state present, none set
  PublishRunStatus(status);
  for (std::string_view state : PipeMetrics::kStates) EXPECT_EQ(StateValue(state), 0) << state;
}

TEST(PipeMetricsTest, LiveRunStatusKeepsWhatWasPublished) {
  RunStatus status;
  status.phase = "streaming";
  status.position = "binlog.000042:1234";
  status.rows_applied = 7;
  PublishRunStatus(status);
  EXPECT_EQ(LiveRunStatus(), status);
}

TEST(PipeMetricsTest, SchemaChangeKindByStatement) {
  struct Case {
    const char* statement;
    const char* kind;
  };
  const std::vector<Case> cases = {
      {"ALTER TABLE t ADD COLUMN c INT", "add_column"},
      {"ALTER TABLE db.t ADD c INT DEFAULT 3 AFTER b", "add_column"},
      {"ALTER TABLE t DROP COLUMN c", "drop_column"},
      {"ALTER TABLE t DROP c", "drop_column"},
      {"ALTER TABLE t MODIFY COLUMN c BIGINT", "modify_column"},
      {"ALTER TABLE t ALTER COLUMN c SET DEFAULT 5", "modify_column"},
      {"ALTER TABLE t CHANGE c c BIGINT", "modify_column"},
      {"ALTER TABLE t CHANGE c d INT", "rename_column"},
      {"ALTER TABLE t RENAME COLUMN c TO d", "rename_column"},
      {"ALTER TABLE t RENAME TO u", "rename_table"},
      {"ALTER TABLE t ADD INDEX i (c), ADD COLUMN e INT", "add_column"},
      {"ALTER TABLE t ADD INDEX i (c)", "other"},
      {"ALTER TABLE t ENGINE = InnoDB", "other"},
      {"CREATE TABLE t (id INT PRIMARY KEY)", "create_table"},
      {"CREATE TABLE u LIKE t", "create_table"},
      {"DROP TABLE t", "drop_table"},
      {"DROP TABLE IF EXISTS t, u", "drop_table"},
      {"RENAME TABLE t TO _t_del, _t_gho TO t", "rename_table"},
      {"TRUNCATE TABLE t", "truncate"},
      {"TRUNCATE t", "truncate"},
      {"(rebuild started at binlog.000001:4: the key changed)", "other"},
      {"this is not SQL", "other"},
      {"", "other"},
  };
  for (const Case& c : cases) EXPECT_EQ(SchemaChangeKind(c.statement), c.kind) << c.statement;
}

TEST(PipeMetricsTest, SchemaChangeActionByPlan) {
  struct Case {
    const char* name;
    TablePlan plan;
    const char* action;
  };
  TablePlan propagated;
  propagated.statements = {"ALTER TABLE `db`.`t` ADD COLUMN `c` Int32"};
  propagated.log_lines = {"ADD COLUMN `c`: column added"};
  TablePlan omitted = propagated;
  omitted.log_lines = {"ADD COLUMN `c` DEFAULT now(): default omitted (function call); column added"};
  TablePlan kept;
  kept.log_lines = {"DROP COLUMN `c`: not propagated; the column stays in ClickHouse"};
  TablePlan rebuilt;
  rebuilt.rebuild = true;
  TablePlan ignored;
  ignored.ignored = true;
  const std::vector<Case> cases = {
      {"statements ran", propagated, "propagated"},
      {"default omitted", omitted, "omitted_default"},
      {"no statements", kept, "kept"},
      {"rebuild", rebuilt, "rebuilt"},
      {"create_table=ignore", ignored, "kept"},
  };
  for (const Case& c : cases) EXPECT_EQ(SchemaChangeAction(c.plan), c.action) << c.name;
}

TEST(PipeMetricsTest, ClickHouseErrorCodes) {
  EXPECT_EQ(ClickHouseErrorCode(Error(ErrorKind::kServer, "too many parts", 252)), "252");
  EXPECT_EQ(ClickHouseErrorCode(Error(ErrorKind::kNetwork, "connection refused")), "network");
  EXPECT_EQ(ClickHouseErrorCode(Error(ErrorKind::kAuth, "wrong password", 516)), "516");

  PipeMetrics& m = Metrics();
  const double errors = m.clickhouse_errors.With({"252"}).value();
  const double retries = m.clickhouse_retries.With({"252"}).value();
  m.ObserveClickHouseFailure(Error(ErrorKind::kServer, "too many parts", 252), /*retrying=*/true);
  m.ObserveClickHouseFailure(Error(ErrorKind::kServer, "too many parts", 252), /*retrying=*/false);
  m.ObserveClickHouseFailure(Error(ErrorKind::kNetwork, "cancelled: stopped"), /*retrying=*/false);
  EXPECT_EQ(m.clickhouse_errors.With({"252"}).value() - errors, 2);
  EXPECT_EQ(m.clickhouse_retries.With({"252"}).value() - retries, 1);
}

TEST(PipeMetricsTest, RowChangesCountOnlyWhenCounted) {
  PendingRowChanges changes;
  changes.counters = Metrics().RowCounters("metrics_unit.t");
  changes.inserts = 3;
  changes.updates = 2;
  PendingRowChanges more;
  more.deletes = 1;
  changes.Absorb(more);
  EXPECT_TRUE(more.empty());
  EXPECT_EQ(changes.rows(), 6U);
  EXPECT_EQ(Metrics().registry.Value("chsync_row_changes_total", {"metrics_unit.t", "insert"}), 0);
  changes.Count();
  EXPECT_TRUE(changes.empty());
  EXPECT_EQ(Metrics().registry.Value("chsync_row_changes_total", {"metrics_unit.t", "insert"}), 3);
  EXPECT_EQ(Metrics().registry.Value("chsync_row_changes_total", {"metrics_unit.t", "update"}), 2);
  EXPECT_EQ(Metrics().registry.Value("chsync_row_changes_total", {"metrics_unit.t", "delete"}), 1);
  PendingRowChanges uncounted;  // no counters: nothing to count into
  uncounted.inserts = 1;
  uncounted.Count();
}

TEST(PipeMetricsTest, LagIsZeroWhileCaughtUpAndGrowsAfterAnEvent) {
  PipeMetrics& m = Metrics();
  m.NoteEventRead(100, /*heartbeat=*/false);
  m.MarkCaughtUp(m.EventsSeen());
  EXPECT_EQ(m.registry.Value("chsync_replication_lag_seconds"), 0);
  EXPECT_GE(m.registry.Value("chsync_seconds_since_last_event"), 0);
  m.NoteEventRead(100, /*heartbeat=*/false);  // read, not acknowledged
  const double lag = m.registry.Value("chsync_replication_lag_seconds");
  EXPECT_FALSE(std::isnan(lag));
  EXPECT_GE(lag, 0);
  EXPECT_LT(lag, 60);                      // bounded by the time since it was last caught up
  m.NoteEventRead(0, /*heartbeat=*/true);  // a heartbeat alone does not make it caught up
  EXPECT_FALSE(std::isnan(m.registry.Value("chsync_replication_lag_seconds")));
  m.MarkCaughtUp(m.EventsSeen());
  EXPECT_EQ(m.registry.Value("chsync_replication_lag_seconds"), 0);
}

TEST(PipeMetricsTest, CheckpointGauges) {
  PipeMetrics& m = Metrics();
  m.NoteCheckpoint("binlog.000042", 1234, "0-1-42,1-2-9", /*mariadb=*/true, 1'700'000'000'000, 0);
  EXPECT_EQ(m.registry.Value("chsync_checkpoint_file_sequence"), 42);
  EXPECT_EQ(m.registry.Value("chsync_checkpoint_offset_bytes"), 1234);
  EXPECT_EQ(m.registry.Value("chsync_last_checkpoint_time_seconds"), 1'700'000'000);
  EXPECT_EQ(m.registry.Value("chsync_checkpoint_gtid_sequence", {"0", "1"}), 42);
  EXPECT_EQ(m.registry.Value("chsync_checkpoint_gtid_sequence", {"1", "2"}), 9);
  // Another checkpoint: domains no longer there go.
  m.NoteCheckpoint("binlog.000043", 4, "0-1-50", true, 1'700'000'001'000, 0);
  EXPECT_EQ(m.registry.Value("chsync_checkpoint_gtid_sequence", {"0", "1"}), 50);
  EXPECT_TRUE(std::isnan(m.registry.Value("chsync_checkpoint_gtid_sequence", {"1", "2"})));
  // MySQL: the source uuid as the domain, the last transaction number.
  m.NoteCheckpoint("binlog.000043", 4, "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:11-18", false,
                   1'700'000'001'000, 0);
  EXPECT_EQ(m.registry.Value("chsync_checkpoint_gtid_sequence", {"3e11fa47-71ca-11e1-9e33-c80aa9429562", ""}),
            18);
  EXPECT_TRUE(std::isnan(m.registry.Value("chsync_checkpoint_gtid_sequence", {"0", "1"})));
}

TEST(PipeMetricsTest, TablesByState) {
  Metrics().SetTables(
      {{"db.a", "streaming"}, {"db.b", "streaming"}, {"db.c", "snapshot"}, {"db.d", "rebuilding"}});
  EXPECT_EQ(Metrics().registry.Value("chsync_tables", {"streaming"}), 2);
  EXPECT_EQ(Metrics().registry.Value("chsync_tables", {"snapshot"}), 1);
  EXPECT_EQ(Metrics().registry.Value("chsync_tables", {"rebuilding"}), 1);
  EXPECT_EQ(Metrics().registry.Value("chsync_tables", {"dropped"}), 0);
  ASSERT_EQ(LiveTables().size(), 4U);
  EXPECT_EQ(LiveTables()[2].name, "db.c");
  Metrics().SetTables({});
  EXPECT_EQ(Metrics().registry.Value("chsync_tables", {"streaming"}), 0);
}

TEST(PipeMetricsTest, HeldTablesAreOneUntilTheyStreamAgain) {
  Metrics().SetTables({{"db.a", "parked"}, {"db.b", "paused"}, {"db.c", "streaming"}});
  EXPECT_EQ(Metrics().registry.Value("chsync_tables", {"parked"}), 1);
  EXPECT_EQ(Metrics().registry.Value("chsync_tables", {"paused"}), 1);
  EXPECT_EQ(Metrics().registry.Value("chsync_table_held", {"db.a", "parked"}), 1);
  EXPECT_EQ(Metrics().registry.Value("chsync_table_held", {"db.b", "paused"}), 1);
  Metrics().SetTables({{"db.a", "rebuilding"}, {"db.b", "paused"}, {"db.c", "streaming"}});
  EXPECT_EQ(Metrics().registry.Value("chsync_table_held", {"db.a", "parked"}), 0) << "resumed: copied again";
  EXPECT_EQ(Metrics().registry.Value("chsync_table_held", {"db.b", "paused"}), 1);
  EXPECT_EQ(Metrics().registry.Value("chsync_tables", {"parked"}), 0);
  Metrics().SetTables({});
}

TEST(TableLabelTest, TheClickHouseTableUnlessPerSourceTableOrUnknown) {
  struct Case {
    std::string_view source, dest;
    bool per_source_table;
    std::string_view label;
  };
  for (const Case& c :
       {Case{"tenant_0001.users", "bench.users", false, "bench.users"},
        Case{"tenant_0001.users", "bench.users", true, "tenant_0001.users"},
        Case{"shop.orders", "shop.orders", false, "shop.orders"},
        Case{"shop.orders", "", false, "shop.orders"}, Case{"shop.orders", "", true, "shop.orders"}}) {
    EXPECT_EQ(ChooseTableLabel(c.source, c.dest, c.per_source_table), c.label)
        << c.source << " -> " << c.dest << (c.per_source_table ? " per source table" : "");
  }
}

/// Series of the `table` label in a rendered family.
size_t SeriesOf(const std::string& text, std::string_view family) {
  size_t count = 0;
  for (size_t at = text.find(std::string(family) + "{"); at != std::string::npos;
       at = text.find(std::string(family) + "{", at + 1)) {
    if (at == 0 || text[at - 1] == '\n') ++count;
  }
  return count;
}

TEST(TableLabelTest, ManySourceTablesOfOneClickHouseTableShareOneLabelSet) {
  PipeMetrics m;
  std::vector<LiveTable> live;
  for (int i = 1; i <= 50; ++i) {
    const std::string source = "tenant_" + std::to_string(i) + ".users";
    m.NoteTableDest(source, "bench.users");
    TableRowCounters counters = m.RowCounters(source);
    counters.inserts->Add(2);
    m.SetSnapshotRows(source, 3, 4);
    live.push_back({source, i <= 3 ? "parked" : "streaming"});
  }
  m.SetTables(live);
  EXPECT_EQ(m.TableLabel("tenant_7.users"), "bench.users");
  EXPECT_EQ(m.registry.Value("chsync_row_changes_total", {"bench.users", "insert"}), 100);
  EXPECT_EQ(m.registry.Value("chsync_snapshot_rows_copied", {"bench.users"}), 150);
  EXPECT_EQ(m.registry.Value("chsync_snapshot_rows_estimated", {"bench.users"}), 200);
  EXPECT_EQ(m.registry.Value("chsync_table_held", {"bench.users", "parked"}), 3);
  const std::string text = m.registry.Render();
  EXPECT_EQ(SeriesOf(text, "chsync_row_changes_total"), 3U) << text;  // insert, update, delete
  EXPECT_EQ(SeriesOf(text, "chsync_snapshot_rows_copied"), 1U) << text;
  EXPECT_EQ(SeriesOf(text, "chsync_table_held"), 1U) << text;

  // A copy started again counts its rows afresh; a table that moves takes its progress along.
  m.SetSnapshotRows("tenant_1.users", 0);
  EXPECT_EQ(m.registry.Value("chsync_snapshot_rows_copied", {"bench.users"}), 147);
  m.NoteTableDest("tenant_2.users", "other.users");
  EXPECT_EQ(m.registry.Value("chsync_snapshot_rows_copied", {"bench.users"}), 144);
  EXPECT_EQ(m.registry.Value("chsync_snapshot_rows_copied", {"other.users"}), 3);
  EXPECT_EQ(m.registry.Value("chsync_snapshot_rows_estimated", {"other.users"}), 4);
}

TEST(TableLabelTest, PerSourceTableGivesEachSourceTableItsOwn) {
  PipeMetrics m;
  m.SetPerSourceTable(true);
  for (int i = 1; i <= 5; ++i) {
    const std::string source = "tenant_" + std::to_string(i) + ".users";
    m.NoteTableDest(source, "bench.users");
    m.RowCounters(source).inserts->Add(1);
  }
  EXPECT_EQ(m.TableLabel("tenant_3.users"), "tenant_3.users");
  EXPECT_EQ(m.registry.Value("chsync_row_changes_total", {"tenant_3.users", "insert"}), 1);
  EXPECT_EQ(SeriesOf(m.registry.Render(), "chsync_row_changes_total"), 15U);
}

TEST(PipeMetricsTest, ClampedValuesCountPerTableAndKind) {
  ReportClamped("db.clamp", clickhouse::ClampCounts{3, 0}, false);
  ReportClamped("db.clamp", clickhouse::ClampCounts{1, 2}, false);
  ReportClamped("db.clamp", clickhouse::ClampCounts{}, false);  // nothing clamped: nothing to do
  EXPECT_EQ(Metrics().registry.Value("chsync_values_clamped_total", {"db.clamp", "date"}), 4);
  EXPECT_EQ(Metrics().registry.Value("chsync_values_clamped_total", {"db.clamp", "datetime"}), 2);
  EXPECT_NE(
      Metrics().registry.Render().find("chsync_values_clamped_total{table=\"db.clamp\",kind=\"date\"} 4"),
      std::string::npos);
}

TEST(PipeMetricsTest, RendersEveryFamily) {
  std::string text = Metrics().registry.Render();
  for (const char* name : {"chsync_build_info",
                           "chsync_process_start_time_seconds",
                           "chsync_pipe_state",
                           "chsync_replication_lag_seconds",
                           "chsync_seconds_since_last_event",
                           "chsync_last_checkpoint_time_seconds",
                           "chsync_checkpoint_file_sequence",
                           "chsync_checkpoint_offset_bytes",
                           "chsync_checkpoint_gtid_sequence",
                           "chsync_row_changes_total",
                           "chsync_values_clamped_total",
                           "chsync_binlog_events_total",
                           "chsync_binlog_bytes_read_total",
                           "chsync_transactions_total",
                           "chsync_batch_rows",
                           "chsync_batch_bytes",
                           "chsync_insert_duration_seconds",
                           "chsync_clickhouse_errors_total",
                           "chsync_clickhouse_retries_total",
                           "chsync_schema_changes_total",
                           "chsync_snapshot_rows_copied",
                           "chsync_snapshot_rows_estimated",
                           "chsync_tables",
                           "chsync_binlog_bytes_behind",
                           "chsync_binlog_retention_headroom_bytes",
                           "chsync_binlog_retention_headroom_seconds",
                           "chsync_binlog_write_rate_bytes_per_second"}) {
    EXPECT_NE(text.find(std::string("# TYPE ") + name + " "), std::string::npos) << name;
  }
  EXPECT_NE(text.find("chsync_build_info{version=\"0.1.0\",commit=\"unknown\"} 1"), std::string::npos)
      << text;
}

TEST(PipeMetricsTest, BuildInfoNamesTheCommitOnce) {
  Metrics().SetBuildCommit("88a52ff1c2d3");
  std::string text = Metrics().registry.Render();
  EXPECT_NE(text.find("chsync_build_info{version=\"0.1.0\",commit=\"88a52ff1c2d3\"} 1"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("commit=\"unknown\""), std::string::npos) << text;  // one series, not two
  Metrics().SetBuildCommit("unknown");
}

}  // namespace
}  // namespace chsync::pipe
