// Dates and times on a ClickHouse without DateTime64 (18.16, docs/types.md): with
// datetime_fallback: string, DATETIME(6) and TIMESTAMP(3) reach ClickHouse as String holding the
// source's exact text (snapshot rows and streamed rows alike); by default the fraction is dropped,
// dates outside Date/DateTime's range are clamped and the log counts them; `chsync check` warns
// about each such column without blocking.

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "pipe_compare.h"
#include "pipe_harness.h"
#include "test_env.h"

namespace chsync {
namespace {

using testing::ChsyncBinary;
using testing::CommandResult;
using testing::Dest;
using testing::MakeTempDir;
using testing::PipeTest;
using testing::RunCommand;

constexpr int kServerIdBase = 19700000;

class OldServerFidelityTest : public ::testing::Test {
 protected:
  void SetUp() override { p_.Init("CHSYNC_TEST_MYSQL_FULL", Dest::kServer, "oldfid", kServerIdBase); }
  void TearDown() override { p_.Cleanup(); }

  /// A config file holding `yaml`; --config FILE.
  std::vector<std::string> Config(const std::string& yaml) {
    const std::string path = MakeTempDir("oldfid-config") + "/chsync.yaml";
    std::ofstream(path) << yaml;
    return {"--config", path};
  }

  /// The table, with fractions, dates far outside 1970..2105 and a zero-free NULL.
  void CreateTable() {
    p_.ExecAll(
        {"SET time_zone = '+00:00'",
         "CREATE TABLE t (id INT PRIMARY KEY, dt DATETIME(6) NOT NULL, ts TIMESTAMP(3) NULL DEFAULT NULL, "
         "d DATE NOT NULL)",
         "INSERT INTO t VALUES (1, '2024-06-15 12:34:56.789123', '2024-06-15 12:34:56.789', '2024-06-15'), "
         "(2, '1000-01-01 00:00:00.000001', '1970-01-01 00:00:01.001', '1000-01-01'), "
         "(3, '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07.999', '9999-12-31'), "
         "(4, '2000-02-29 00:00:00.000000', NULL, '2000-02-29')"});
  }

  /// The ClickHouse text of dt and ts equals the source's, row by row.
  void ExpectExactText(const std::string& when) {
    const testing::TsvRows source =
        p_.SourceQuery("SELECT id, CAST(dt AS CHAR), CAST(ts AS CHAR) FROM t ORDER BY id");
    const testing::TsvRows dest = p_.DestQuery("SELECT toString(id), dt, ts FROM " + p_.DestTable("t") +
                                               " FINAL WHERE _chsync_is_deleted = 0 ORDER BY id");
    ASSERT_FALSE(source.empty()) << when;
    EXPECT_EQ(dest, source) << when;
  }

  PipeTest p_;
};

TEST_F(OldServerFidelityTest, StringFallbackKeepsFractionsExactly) {
  ASSERT_TRUE(p_.connected());
  ASSERT_LT(p_.DestVersion(), 2001)
      << "this test needs a ClickHouse without DateTime64 (CHSYNC_TEST_CLICKHOUSE)";
  CreateTable();
  const std::vector<std::string> config = Config("datetime_fallback: string\n");
  CommandResult r = p_.Run(config);
  ASSERT_RUN_OK(r, "(snapshot) with datetime_fallback: string");
  const testing::DestColumnMap columns = p_.DestColumns("t");
  EXPECT_EQ(columns.at("dt").first, "String");
  EXPECT_EQ(columns.at("ts").first, "Nullable(String)");
  EXPECT_EQ(columns.at("d").first, "Date");
  ExpectExactText("after the snapshot");
  EXPECT_EQ(p_.DestValue("SELECT dt FROM " + p_.DestTable("t") + " FINAL WHERE id = 2"),
            "1000-01-01 00:00:00.000001");
  // The dates still clamp (Date), and the log counts them.
  EXPECT_NE(r.err.find("2 DATE values outside 1970-01-01..2105-12-31 clamped so far (ClickHouse Date)"),
            std::string::npos)
      << r.Describe();

  // Streamed rows: the same text as the snapshot's.
  p_.ExecAll(
      {"SET time_zone = '+00:00'",
       "INSERT INTO t VALUES (5, '2025-01-02 03:04:05.000006', '2025-01-02 03:04:05.007', '2025-01-02'), "
       "(6, '1500-07-08 09:10:11.121314', '2001-02-03 04:05:06.000', '1500-07-08')",
       "UPDATE t SET dt = '2024-06-15 12:34:56.000001', ts = '2030-01-01 00:00:00.999' WHERE id = 1",
       "DELETE FROM t WHERE id = 4"});
  r = p_.Run(config);
  ASSERT_RUN_OK(r, "(streaming) with datetime_fallback: string");
  ExpectExactText("after streaming");
  EXPECT_NE(r.err.find("1 DATE value outside 1970-01-01..2105-12-31 clamped so far"), std::string::npos)
      << r.Describe();

  // chsync check: with the file's choice it says the fraction is kept; without, it warns. Either
  // way the verdict is not blocked.
  std::vector<std::string> check = {ChsyncBinary(), "check",       "--source", p_.source_url(),
                                    "--dest",       p_.dest_url(), "--tables", p_.db() + ".*"};
  CommandResult plain = RunCommand(check);
  EXPECT_EQ(plain.exit_code, 0) << plain.Describe();
  EXPECT_NE(plain.out.find("warning   " + p_.db() +
                           ".t.dt DATETIME(6): ClickHouse 18.16 has no DateTime64 (20.1+): its fraction is "
                           "dropped; set datetime_fallback: string to keep it as text, or upgrade"),
            std::string::npos)
      << plain.Describe();
  EXPECT_NE(plain.out.find("warning   " + p_.db() + ".t.ts TIMESTAMP(3): ClickHouse 18.16 has no DateTime64"),
            std::string::npos)
      << plain.Describe();
  EXPECT_NE(plain.out.find("warning   " + p_.db() +
                           ".t: values outside the ClickHouse type's range will be clamped"),
            std::string::npos)
      << plain.Describe();
  check.insert(check.end(), config.begin(), config.end());
  CommandResult with_text = RunCommand(check);
  EXPECT_EQ(with_text.exit_code, 0) << with_text.Describe();
  EXPECT_NE(
      with_text.out.find(p_.db() + ".t.dt DATETIME(6): ClickHouse 18.16 has no DateTime64 (20.1+): kept "
                                   "exactly as text in a String (datetime_fallback: string)"),
      std::string::npos)
      << with_text.Describe();
  EXPECT_EQ(with_text.out.find("its fraction is dropped"), std::string::npos) << with_text.Describe();

  // chsync verify with the file compares the text columns exactly, and finds a changed fraction.
  std::vector<std::string> verify = {ChsyncBinary(), "verify",      "--source", p_.source_url(),
                                     "--dest",       p_.dest_url(), "--tables", p_.db() + ".*"};
  verify.insert(verify.end(), config.begin(), config.end());
  CommandResult verified = RunCommand(verify);
  EXPECT_EQ(verified.exit_code, 0) << verified.Describe();
  p_.DestQuery("INSERT INTO " + p_.DestTable("t") +
               " (id, dt, ts, d, _chsync_version, _chsync_is_deleted) SELECT id, "
               "'2025-01-02 03:04:05.000007', ts, d, _chsync_version + 1, 0 FROM " +
               p_.DestTable("t") + " FINAL WHERE id = 5");
  verified = RunCommand(verify);
  EXPECT_EQ(verified.exit_code, 1) << verified.Describe();
  EXPECT_NE(verified.out.find("dt: source"), std::string::npos) << verified.Describe();
}

TEST_F(OldServerFidelityTest, DefaultDropsFractionsAndCountsClampedValues) {
  ASSERT_TRUE(p_.connected());
  ASSERT_LT(p_.DestVersion(), 2001)
      << "this test needs a ClickHouse without DateTime64 (CHSYNC_TEST_CLICKHOUSE)";
  CreateTable();
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "(snapshot) by default");
  const testing::DestColumnMap columns = p_.DestColumns("t");
  EXPECT_EQ(columns.at("dt").first, "DateTime('UTC')");
  EXPECT_EQ(p_.DestValue("SELECT toString(dt) FROM " + p_.DestTable("t") + " FINAL WHERE id = 1"),
            "2024-06-15 12:34:56");
  EXPECT_EQ(p_.DestValue("SELECT toString(d) FROM " + p_.DestTable("t") + " FINAL WHERE id = 3"),
            "2105-12-31");
  // Rows 2 and 3: two dates and two DATETIMEs clamped (TIMESTAMPs always fit).
  EXPECT_NE(r.err.find(p_.db() +
                       ".t: 2 DATE values outside 1970-01-01..2105-12-31 clamped so far (ClickHouse Date); "
                       "2 DATETIME/TIMESTAMP values outside 1970-01-01 00:00:00..2105-12-31 23:59:59 clamped "
                       "so far (ClickHouse DateTime)"),
            std::string::npos)
      << r.Describe();

  p_.ExecAll({"INSERT INTO t VALUES (5, '0999-01-01 00:00:00.5', NULL, '2200-01-01')"});
  r = p_.Run();
  ASSERT_RUN_OK(r, "(streaming) by default");
  EXPECT_NE(r.err.find(p_.db() + ".t: 1 DATE value outside 1970-01-01..2105-12-31 clamped so far"),
            std::string::npos)
      << r.Describe();
  EXPECT_NE(r.err.find("1 DATETIME/TIMESTAMP value outside"), std::string::npos) << r.Describe();
}

}  // namespace
}  // namespace chsync
