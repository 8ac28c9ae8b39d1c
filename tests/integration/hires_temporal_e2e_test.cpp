// `chsync run` end to end with MariaDB 5.3 "hires" temporal columns: TIME(n), DATETIME(n) and
// TIMESTAMP(n) created while the global mysql56_temporal_format is OFF, whose TABLE_MAP carries
// the old type codes without their precision. Rows copied by the snapshot and rows streamed from
// the binlog (inserts, updates, deletes) must reach both destinations (ClickHouse 18.16 over HTTP
// and an embedded chDB store) equal to the source, with full metadata and in ordinal mode.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mysql/connection.h"
#include "pipe_compare.h"
#include "pipe_harness.h"
#include "test_env.h"

namespace chsync {
namespace {

using testing::CommandResult;
using testing::Dest;
using testing::DestName;
using testing::PipeTest;

/// Replication server ids of this binary (pipe_e2e_test uses 1000000 + …, schema_evolution 3000000).
constexpr int kServerIdBase = 5000000;

const char* const kCreate =
    "CREATE TABLE hires (id INT PRIMARY KEY, "
    "t0 TIME, t1 TIME(1), t3 TIME(3), t6 TIME(6), "
    "d0 DATETIME, d2 DATETIME(2), d4 DATETIME(4), d6 DATETIME(6), "
    "s0 TIMESTAMP NULL, s1 TIMESTAMP(1) NULL, s5 TIMESTAMP(5) NULL, s6 TIMESTAMP(6) NULL, "
    "tail VARCHAR(20))";

/// One row: the same TIME, DATETIME and TIMESTAMP literal for each precision (the server truncates).
std::string Row(int id, const std::string& time, const std::string& datetime, const std::string& timestamp) {
  std::string values = std::to_string(id);
  for (int i = 0; i < 4; ++i) values += "," + time;
  for (int i = 0; i < 4; ++i) values += "," + datetime;
  for (int i = 0; i < 4; ++i) values += "," + timestamp;
  return "INSERT INTO hires VALUES (" + values + ",'row " + std::to_string(id) + "')";
}

/// Rows `base`+1… with edge values: negative fractional TIMEs, the limits, zero dates, NULLs.
std::vector<std::string> EdgeRows(int base) {
  return {
      Row(base + 1, "'12:34:56.123456'", "'2024-06-15 12:34:56.123456'", "'2024-06-15 12:34:56.123456'"),
      Row(base + 2, "'-00:00:00.000001'", "'0000-00-00 00:00:00.000000'", "'0000-00-00 00:00:00'"),
      Row(base + 3, "'838:59:59.999999'", "'2299-12-31 23:59:59.999999'", "'2038-01-19 03:14:07.999999'"),
      Row(base + 4, "'-838:59:59.999999'", "'1900-01-01 00:00:00.000001'", "'1970-01-01 00:00:01.000001'"),
      Row(base + 5, "NULL", "NULL", "NULL"),
      Row(base + 6, "'-12:00:00.5'", "'2000-02-29 23:59:59.5'", "'2000-02-29 23:59:59.5'"),
      Row(base + 7, "'-00:00:01.987654'", "'1999-12-31 00:00:00.000009'", "'1999-12-31 00:00:00.000009'"),
  };
}

/// Creates kCreate in the test database with mysql56_temporal_format OFF. The variable is global
/// and the server shared: the window is one statement long, the old value is restored on every
/// path, and tests that toggle it take turns through a server lock.
void CreateOldFormatTable(PipeTest& p) {
  mysql::Connection& c = p.conn();
  auto locked = c.QueryValue("SELECT GET_LOCK('chsync_mysql56_temporal_format', 120)");
  ASSERT_TRUE(locked.ok() && locked->value_or("0") == "1") << "could not take the server lock";
  auto before = c.QueryValue("SELECT @@GLOBAL.mysql56_temporal_format");
  ASSERT_TRUE(before.ok()) << before.error().message();
  Status off = c.Execute("SET GLOBAL mysql56_temporal_format = OFF");
  Status created = off.ok() ? c.Execute(kCreate) : Status::Ok();
  Status restored = c.Execute("SET GLOBAL mysql56_temporal_format = " + before->value_or("ON"));
  (void)c.QueryValue("SELECT RELEASE_LOCK('chsync_mysql56_temporal_format')");
  ASSERT_TRUE(off.ok()) << off.error().message();
  ASSERT_TRUE(created.ok()) << created.error().message();
  ASSERT_TRUE(restored.ok()) << restored.error().message();
  // The server really used its old formats (else this test would prove nothing).
  auto show = c.Query("SHOW CREATE TABLE hires");
  ASSERT_TRUE(show.ok()) << show.error().message();
  const std::string text = show->rows.at(0).at(1).value_or("");
  for (const char* column : {"`t6` time(6) /* mariadb-5.3 */", "`d2` datetime(2) /* mariadb-5.3 */",
                             "`s5` timestamp(5) /* mariadb-5.3 */"}) {
    EXPECT_NE(text.find(column), std::string::npos) << text;
  }
}

void SnapshotThenStream(PipeTest& p) {
  ASSERT_TRUE(p.connected());
  p.ExecAll({"SET SESSION sql_mode = ''", "SET SESSION time_zone = '+00:00'"});
  ASSERT_NO_FATAL_FAILURE(CreateOldFormatTable(p));
  p.ExecAll(EdgeRows(0));

  CommandResult first = p.Run();
  ASSERT_EQ(first.exit_code, 0) << first.Describe();
  std::string report = p.Compare("hires");
  EXPECT_TRUE(report.empty()) << "after the snapshot: " << report;

  std::vector<std::string> changes = EdgeRows(100);
  changes.insert(
      changes.end(),
      {"UPDATE hires SET t1 = '-100:59:58.6', t3 = '-100:59:58.654', t6 = '-100:59:58.654321', "
       "d2 = '1987-07-07 07:07:07.07', d6 = '1987-07-07 07:07:07.070707', "
       "s5 = '2001-09-09 01:46:40.99999', s6 = '2001-09-09 01:46:40.999999', "
       "tail = 'updated' WHERE id IN (1, 105, 106)",
       "UPDATE hires SET t0 = NULL, t6 = NULL, d4 = NULL, s1 = NULL WHERE id IN (3, 103)",
       "UPDATE hires SET id = id + 1000 WHERE id IN (4, 104)", "DELETE FROM hires WHERE id IN (2, 102, 7)"});
  p.ExecAll(changes);
  CommandResult second = p.Run();
  ASSERT_EQ(second.exit_code, 0) << second.Describe();
  report = p.Compare("hires");
  EXPECT_TRUE(report.empty()) << "after streaming: " << report;
  EXPECT_EQ(p.DestCount("hires"), p.SourceValue("SELECT COUNT(*) FROM hires"));
}

class HiresTemporalE2eTest : public ::testing::TestWithParam<Dest> {
 protected:
  void TearDown() override { p_.Cleanup(); }
  PipeTest p_;
};

TEST_P(HiresTemporalE2eTest, FullMetadataSnapshotThenStreamEqualsSource) {
  p_.Init("CHSYNC_TEST_MYSQL_FULL", GetParam(), "e2e_hires", kServerIdBase);
  SnapshotThenStream(p_);
}

TEST_P(HiresTemporalE2eTest, OrdinalModeSnapshotThenStreamEqualsSource) {
  p_.Init("CHSYNC_TEST_MYSQL_MINIMAL", GetParam(), "e2e_hires_min", kServerIdBase);
  SnapshotThenStream(p_);
}

INSTANTIATE_TEST_SUITE_P(Destinations, HiresTemporalE2eTest,
                         ::testing::Values(Dest::kServer, Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& i) { return DestName(i.param); });

}  // namespace
}  // namespace chsync
