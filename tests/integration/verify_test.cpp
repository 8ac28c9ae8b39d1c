// Issue 18: `chsync verify` end to end on both destinations (ClickHouse 18.16 over HTTP and an
// embedded chDB store). A table of every type chsync maps, replicated by `chsync run`, verifies
// equal; a change made in ClickHouse itself is found and named (key, column, both values); a table
// without a key compares as its distinct rows; and verify while the pipe runs with writes going on
// reports no difference (the lag is waited out, docs/verify.md). Issue 36: a table shared by two
// tenants, one of which widened its columns, verifies per tenant.

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "pipe_compare.h"
#include "pipe_harness.h"
#include "test_env.h"

namespace chsync {
namespace {

using testing::BackgroundProcess;
using testing::CommandResult;
using testing::Dest;
using testing::PipeTest;
using testing::WaitFor;

constexpr int kServerIdBase = 18000000;

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class VerifyTest : public ::testing::TestWithParam<Dest> {
 protected:
  void SetUp() override { p_.Init("CHSYNC_TEST_MYSQL_FULL", GetParam(), "verify", kServerIdBase); }
  void TearDown() override {
    if (run_) run_->SignalAndWait(SIGKILL, 10000);
    p_.Cleanup();
  }

  CommandResult Verify(const std::vector<std::string>& extra = {}, const std::string& tables = "") {
    std::vector<std::string> argv = {testing::ChsyncBinary(),
                                     "verify",
                                     "--source",
                                     p_.source_url(),
                                     "--dest",
                                     p_.dest_url(),
                                     "--tables",
                                     tables.empty() ? p_.db() + ".*" : tables,
                                     "--state",
                                     p_.state()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return testing::RunCommand(argv, 300'000);
  }

  /// Starts `chsync run` in the background; with the embedded store with --http, through which
  /// verify and the test's queries then read the store.
  void StartRun() {
    std::vector<std::string> flags = {"--batch-age-ms", "100"};
    if (GetParam() == Dest::kEmbedded) {
      flags.push_back("--http");
      flags.push_back("127.0.0.1:" + std::to_string(testing::FreeLoopbackPort()));
    }
    auto started =
        BackgroundProcess::Start(p_.RunArgs(p_.db() + ".*", false, flags), p_.state() + "/run.log");
    ASSERT_TRUE(started.has_value());
    run_.emplace(std::move(*started));
    if (GetParam() == Dest::kEmbedded) {
      const std::string announced = p_.dest_url().substr(std::string("file:").size()) + ".chsync-http";
      auto announced_by_it = [&] {
        std::ifstream in(announced);
        std::string url;
        long pid = 0;
        return static_cast<bool>(in >> url >> pid) && pid == run_->pid();
      };
      ASSERT_TRUE(WaitFor([&] { return announced_by_it() || !run_->Running(); }, 60)) << run_->Log();
      ASSERT_TRUE(run_->Running()) << run_->Log();
    }
  }

  /// Every type chsync maps, with edge values: NULLs, zero and out-of-range dates, fractions,
  /// binary bytes, 4-byte UTF-8, latin1 text, JSON, ENUM/SET, BIT, GEOMETRY, UUID, INET.
  void CreateTypesTable() {
    p_.ExecAll({
        "SET SESSION sql_mode = ''",
        "CREATE TABLE types (id INT PRIMARY KEY, ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, mi MEDIUMINT, "
        "bi BIGINT, bu BIGINT UNSIGNED, b1 TINYINT(1), f FLOAT, d DOUBLE, dec1 DECIMAL(10,2), "
        "dec2 DECIMAL(38,10), dec3 DECIMAL(65,30), bt BIT(10), y YEAR, dt DATE, dtm DATETIME, dtm3 "
        "DATETIME(3), "
        "ts TIMESTAMP(6) NULL, tm TIME(2), c CHAR(10), vc VARCHAR(50), tx TEXT, "
        "lat VARCHAR(20) CHARACTER SET latin1, bin BINARY(4), vb VARBINARY(20), bl BLOB, e "
        "ENUM('a','b','c'), "
        "st SET('x','y','z'), j JSON, g POINT, u UUID, i4 INET4, i6 INET6, n INT NULL)",
        "INSERT INTO types VALUES "
        "(1, -128, 255, -32768, -8388608, -9223372036854775808, 18446744073709551615, 1, 1.5, 0.1, "
        "12345678.90, "
        "-1234567890123456789012345678.0123456789, 1.5, b'1010101010', 2024, '2024-02-29', '2024-01-02 "
        "03:04:05', "
        "'2024-01-02 03:04:05.123', '2024-01-02 03:04:05.123456', '-838:59:59', 'pad  ', 'tail  ', 'τεχτ 😀', "
        "'café', 'ab', X'00FF', X'DEADBEEF00', 'b', 'x,z', '{\"a\": [1, 2.5, null]}', POINT(1, -2.5), "
        "'61f0c404-5cb3-11e7-907b-a6006ad3dba0', '10.0.0.1', '2001:db8::1', NULL)",
        "INSERT INTO types VALUES "
        "(2, 0, 0, 0, 0, 0, 0, 0, -2.25, -1e10, -0.50, 0, 0, b'0', 0, '0000-00-00', '0000-00-00 00:00:00', "
        "'1000-01-01 00:00:00.5', NULL, '01:02:03.5', '', '', '', '', '', '', '', '', '', '[]', NULL, NULL, "
        "NULL, "
        "'::ffff:1.2.3.4', 7)",
        "INSERT INTO types (id) VALUES (3)",
        "INSERT INTO types (id, dt, dtm, vc, e) VALUES (4, '9999-12-31', '9999-12-31 23:59:59', 'late', 'c')",
    });
  }

  PipeTest p_;
  std::optional<BackgroundProcess> run_;
};

// Every mapped type replicated by `chsync run` verifies equal; inexact types are named.
TEST_P(VerifyTest, EveryTypeVerifiesEqualAfterRun) {
  ASSERT_TRUE(p_.connected());
  CreateTypesTable();
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "replicating the types table");
  CommandResult v = Verify();
  EXPECT_EQ(v.exit_code, 0) << v.Describe();
  EXPECT_TRUE(Has(v.out, p_.db() + ".types: equal")) << v.Describe();
  EXPECT_TRUE(Has(v.out, "d (double): approximate")) << v.Describe();
  EXPECT_TRUE(Has(v.out, "g (point): approximate")) << v.Describe();
  if (p_.DestVersion() < 2001) {
    EXPECT_TRUE(Has(v.out, "dtm3 (datetime(3)): lossy")) << v.Describe();
  }
}

// Changes made in ClickHouse itself (a newer version of a row, a tombstone, a row the source lacks)
// are found, narrowed to their rows and named with both values; on a text key too.
TEST_P(VerifyTest, ChangesMadeInClickHouseAreNamed) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, amount DECIMAL(10,2), name VARCHAR(20))",
              "INSERT INTO t SELECT seq, seq / 4, CONCAT('n', seq) FROM seq_1_to_5000",
              "CREATE TABLE codes (code VARCHAR(10) PRIMARY KEY, v INT)",
              "INSERT INTO codes SELECT CONCAT('c', seq), seq FROM seq_1_to_300"});
  ASSERT_RUN_OK(p_.Run(), "replicating");
  ASSERT_EQ(Verify({"--chunk-rows", "1000"}).exit_code, 0);

  const std::string t = p_.DestTable("t");
  p_.DestQuery(
      "INSERT INTO " + t +
      " (id, amount, name, _chsync_version, _chsync_is_deleted) VALUES "
      "(1234, 308.50, 'changed', 18446744073709551000, 0), (77, 19.25, 'n77', 18446744073709551000, 1), "
      "(90000, 1, 'extra', 1, 0)");
  p_.DestQuery("INSERT INTO " + p_.DestTable("codes") +
               " (code, v, _chsync_version, _chsync_is_deleted) VALUES "
               "('c42', -42, 18446744073709551000, 0)");
  CommandResult v = Verify({"--chunk-rows", "1000"});
  EXPECT_EQ(v.exit_code, 1) << v.Describe();
  EXPECT_TRUE(Has(v.out, "id=1234: name: source 'n1234', destination 'changed'")) << v.Describe();
  EXPECT_TRUE(Has(v.out, "id=77: missing in the destination")) << v.Describe();
  EXPECT_TRUE(Has(v.out, "id=90000: in the destination only")) << v.Describe();
  EXPECT_TRUE(Has(v.out, "code='c42': v: source 42, destination -42")) << v.Describe();
  EXPECT_TRUE(Has(v.out, p_.db() + ".t: DIFFERENT")) << v.Describe();
  EXPECT_TRUE(Has(v.out, "2 of 2 table(s) differ")) << v.Describe();
}

// A table without a key: counts and checksums of its distinct rows (ClickHouse keeps one of
// identical rows); a row only ClickHouse has is named.
TEST_P(VerifyTest, KeylessTable) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE nokey (a INT, b VARCHAR(10))",
              "INSERT INTO nokey VALUES (1, 'x'), (1, 'x'), (2, NULL), (NULL, 'y')"});
  ASSERT_RUN_OK(p_.Run({"--schema-policy", "keyless=distinct"}), "replicating");
  CommandResult equal = Verify();
  EXPECT_EQ(equal.exit_code, 0) << equal.Describe();
  p_.DestQuery("INSERT INTO " + p_.DestTable("nokey") +
               " (a, b, _chsync_version, _chsync_is_deleted) VALUES "
               "(3, 'only', 5, 0)");
  CommandResult v = Verify();
  EXPECT_EQ(v.exit_code, 1) << v.Describe();
  EXPECT_TRUE(Has(v.out, "row (a=3, b='only'): in the destination only")) << v.Describe();
}

// `table_options:` of the pipe's configuration: excluded columns are not compared, renamed ones
// are read under their ClickHouse names.
TEST_P(VerifyTest, MappedColumnsFollowTheConfiguration) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE m (id INT PRIMARY KEY, secret VARCHAR(20), cust INT, v INT)",
              "INSERT INTO m SELECT seq, 'pw', seq * 10, seq FROM seq_1_to_100"});
  const std::string config = testing::MakeTempDir("verify-config") + "/chsync.yaml";
  {
    std::ofstream out(config);
    out << "table_options:\n  \"" << p_.db() << ".m\":\n    exclude_columns: [secret]\n"
        << "    rename_columns: {cust: customer}\n";
  }
  ASSERT_RUN_OK(p_.Run({"--config", config}), "replicating with table_options");
  CommandResult equal = Verify({"--config", config});
  EXPECT_EQ(equal.exit_code, 0) << equal.Describe();
  EXPECT_TRUE(Has(equal.out, "secret: excluded from replication, not compared")) << equal.Describe();
  p_.DestQuery("INSERT INTO " + p_.DestTable("m") +
               " (id, customer, v, _chsync_version, _chsync_is_deleted) "
               "VALUES (2, 21, 2, 18446744073709551000, 0)");
  CommandResult v = Verify({"--config", config});
  EXPECT_EQ(v.exit_code, 1) << v.Describe();
  EXPECT_TRUE(Has(v.out, "id=2: cust: source 20, destination 21")) << v.Describe();
}

// While `chsync run` streams and writes go on at the source, verify waits out the lag and reports
// no difference.
TEST_P(VerifyTest, WhileThePipeRunsWithWritesGoingOn) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE live (id INT PRIMARY KEY, v INT, s VARCHAR(20))",
              "INSERT INTO live SELECT seq, seq, 's' FROM seq_1_to_20000"});
  StartRun();
  // The destination table exists once the pipe streams (the snapshot comes first).
  ASSERT_TRUE(WaitFor([&] { return Has(run_->Log(), "streaming from") || !run_->Running(); }, 120))
      << run_->Log();
  ASSERT_TRUE(WaitFor([&] { return p_.DestCount("live") == "20000"; }, 60)) << run_->Log();

  std::atomic<bool> stop{false};
  std::thread writer([&] {
    auto conn = testing::OpenSource(p_.source_url());
    if (!conn) return;
    (void)conn->Execute("USE `" + p_.db() + "`");
    for (int i = 0; !stop.load() && i < 400; ++i) {
      (void)conn->Execute("UPDATE live SET v = v + 1 WHERE id % 97 = " + std::to_string(i % 97));
      (void)conn->Execute("INSERT INTO live VALUES (" + std::to_string(30000 + i) + ", 1, 'new')");
      (void)conn->Execute("DELETE FROM live WHERE id = " + std::to_string(1 + i * 13));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  CommandResult v = Verify({"--chunk-rows", "2000", "--wait-s", "60"});
  stop = true;
  writer.join();
  EXPECT_EQ(v.exit_code, 0) << v.Describe() << run_->Log();
  EXPECT_TRUE(Has(v.out, p_.db() + ".live: equal")) << v.Describe();

  // A row the source never had, written in ClickHouse with an old version, is still found while
  // the pipe runs: it is no change the pipe has yet to apply. (A running pipe serves its embedded
  // store read-only: stop it for the write, then run it again.)
  if (GetParam() == Dest::kEmbedded) {
    ASSERT_EQ(run_->SignalAndWait(SIGTERM, 30000), 0) << run_->Log();
    run_.reset();
  }
  p_.DestQuery("INSERT INTO " + p_.DestTable("live") +
               " (id, v, s, _chsync_version, _chsync_is_deleted) VALUES "
               "(999999, 1, 'bogus', 1, 0)");
  if (GetParam() == Dest::kEmbedded) StartRun();
  CommandResult found = Verify({"--chunk-rows", "2000", "--wait-s", "20"});
  EXPECT_EQ(found.exit_code, 1) << found.Describe();
  EXPECT_TRUE(Has(found.out, "id=999999: in the destination only")) << found.Describe();
}

// Issue 36: two tenants' tables into one shared table (table_options' source_column), verified
// per tenant. Tenant 2 widens its columns (DECIMAL(10,2) to DECIMAL(20,6), DATETIME to
// DATETIME(6), INT NOT NULL to BIGINT NULL, FLOAT to DOUBLE) and the shared table's columns
// follow, while tenant 1 keeps the narrower ones: tenant 1's 1.50 is 1.500000 in ClickHouse, and
// equal. Every question
// to the destination asks for one tenant's rows only, on an integer key (ranges) and on a text
// key (hash buckets). A row changed behind the binlog's back then differs in its tenant alone.
class VerifySharedTableTest : public ::testing::TestWithParam<Dest> {
 protected:
  void SetUp() override { p_.Init("CHSYNC_TEST_MYSQL_FULL", GetParam(), "vshared", kServerIdBase); }
  void TearDown() override {
    for (int i = 1; i <= 2; ++i) (void)p_.conn().Execute("DROP DATABASE IF EXISTS " + Tenant(i));
    p_.Cleanup();
  }

  std::string Tenant(int i) const { return p_.db() + "_t" + std::to_string(i); }

  /// Every tenant's users and codes into <db>.users and <db>.codes.
  std::string WriteConfig() {
    std::string path = testing::MakeTempDir("vshared-config") + "/chsync.yaml";
    std::ofstream out(path);
    out << "table_options:\n";
    for (const char* table : {"users", "codes"}) {
      out << "  \"" << p_.db() << "_t*." << table << "\":\n    dest: " << p_.db() << "." << table
          << "\n    source_column: _source\n";
    }
    return path;
  }

  CommandResult RunPipe(const std::string& config) {
    return testing::RunCommand(p_.RunArgs(p_.db() + "_t*.*", true, {"--config", config}), 120'000);
  }

  CommandResult VerifyTenants(const std::string& config) {
    return testing::RunCommand(
        {testing::ChsyncBinary(), "verify", "--source", p_.source_url(), "--dest", p_.dest_url(), "--tables",
         p_.db() + "_t*.*", "--state", p_.state(), "--config", config, "--wait-s", "5"},
        120'000);
  }

  std::string DestType(const std::string& table, const std::string& column) {
    return p_.DestValue("SELECT type FROM system.columns WHERE database = '" + p_.db() + "' AND table = '" +
                        table + "' AND name = '" + column + "'");
  }

  PipeTest p_;
};

TEST_P(VerifySharedTableTest, EachTenantOfASharedTableVerifiesByValueThroughAWidening) {
  ASSERT_TRUE(p_.connected());
  for (int i = 1; i <= 2; ++i) {
    const std::string t = Tenant(i);
    p_.ExecAll(
        {"CREATE DATABASE " + t,
         "CREATE TABLE " + t +
             ".users (id INT PRIMARY KEY, amount DECIMAL(10,2) NOT NULL, at DATETIME NOT NULL, "
             "n INT NOT NULL, f FLOAT NOT NULL)",
         "CREATE TABLE " + t + ".codes (code VARCHAR(10) PRIMARY KEY, amount DECIMAL(10,2), at DATETIME)",
         "INSERT INTO " + t +
             ".users SELECT seq, seq + 0.5, '2024-01-02 03:04:05' + INTERVAL seq MINUTE, seq * " +
             std::to_string(i) + ", seq + 0.1 FROM seq_1_to_40",
         "INSERT INTO " + t +
             ".codes SELECT CONCAT('c', seq), seq / 4, '2024-03-04 05:06:07' + INTERVAL seq HOUR "
             "FROM seq_1_to_40"});
  }
  const std::string config = WriteConfig();
  ASSERT_RUN_OK(RunPipe(config), "copying both tenants");
  const std::string t2 = Tenant(2);
  p_.ExecAll({"ALTER TABLE " + t2 +
                  ".users MODIFY amount DECIMAL(20,6) NOT NULL, MODIFY at DATETIME(6) NOT NULL, "
                  "MODIFY n BIGINT NULL, MODIFY f DOUBLE NOT NULL",
              "ALTER TABLE " + t2 + ".codes MODIFY amount DECIMAL(20,6), MODIFY at DATETIME(6)",
              "INSERT INTO " + t2 +
                  ".users VALUES (100, 1.123456, '2024-05-06 07:08:09.123456', 9000000000, 2.75), "
                  "(101, 0, '2024-05-06 07:08:09.5', NULL, 0)",
              "INSERT INTO " + t2 + ".codes VALUES ('wide', 12345.678901, '2024-05-06 07:08:09.5')",
              "INSERT INTO " + Tenant(1) + ".users VALUES (100, 99.99, '2024-05-06 07:08:09', 7, 0.3)"});
  ASSERT_RUN_OK(RunPipe(config), "streaming the widening");
  ASSERT_EQ(DestType("users", "amount"), "Decimal(20, 6)");
  ASSERT_EQ(DestType("codes", "amount"), "Nullable(Decimal(20, 6))");
  ASSERT_EQ(DestType("users", "n"), "Nullable(Int64)");
  if (p_.DestVersion() >= 2001) {
    ASSERT_EQ(DestType("users", "at"), "DateTime64(6, 'UTC')");
  }

  CommandResult equal = VerifyTenants(config);
  EXPECT_EQ(equal.exit_code, 0) << equal.Describe();
  for (int i = 1; i <= 2; ++i) {
    for (const char* table : {".users: equal", ".codes: equal"}) {
      EXPECT_TRUE(Has(equal.out, Tenant(i) + table)) << equal.Describe();
    }
  }
  EXPECT_TRUE(Has(equal.out, "whose _source is '" + Tenant(1) + "'")) << equal.Describe();

  p_.ExecHidden({"UPDATE " + Tenant(1) + ".users SET amount = 7.25 WHERE id = 7",
                 "UPDATE " + Tenant(1) + ".codes SET at = '2001-01-01 00:00:00' WHERE code = 'c7'"});
  CommandResult differs = VerifyTenants(config);
  EXPECT_EQ(differs.exit_code, 1) << differs.Describe();
  EXPECT_TRUE(Has(differs.out, Tenant(1) + ".users: DIFFERENT")) << differs.Describe();
  EXPECT_TRUE(Has(differs.out, Tenant(1) + ".codes: DIFFERENT")) << differs.Describe();
  EXPECT_TRUE(Has(differs.out, "id=7: amount: source 7.25, destination 7.5")) << differs.Describe();
  EXPECT_TRUE(Has(differs.out, "code='c7': at:")) << differs.Describe();
  EXPECT_TRUE(Has(differs.out, t2 + ".users: equal")) << differs.Describe();
  EXPECT_TRUE(Has(differs.out, t2 + ".codes: equal")) << differs.Describe();
  EXPECT_TRUE(Has(differs.out, "2 of 4 table(s) differ")) << differs.Describe();
}

INSTANTIATE_TEST_SUITE_P(Destinations, VerifySharedTableTest,
                         ::testing::Values(Dest::kServer, Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& i) { return testing::DestName(i.param); });

INSTANTIATE_TEST_SUITE_P(Destinations, VerifyTest, ::testing::Values(Dest::kServer, Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& i) { return testing::DestName(i.param); });

}  // namespace
}  // namespace chsync
