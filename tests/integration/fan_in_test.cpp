// Issue 36: many source tables into one ClickHouse table (docs/mapping.md, "Many sources into one
// table"). 200 tenant databases with the same tables merge into one ClickHouse table per name, each
// row saying its tenant in `_source`: the snapshot, a writer, a migration rolled out tenant by
// tenant (ADD COLUMN … DEFAULT, a widening) while it writes, the same key deleted in one tenant and
// updated in another, a TRUNCATE of one tenant's table, and `chsync verify` per source table.

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "mysql/connection.h"
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

constexpr int kServerIdBase = 36000000;
constexpr int kTenants = 200;

class FanInTest : public ::testing::TestWithParam<Dest> {
 protected:
  void SetUp() override { p_.Init("CHSYNC_TEST_MYSQL_FULL", GetParam(), "fanin", kServerIdBase); }
  void TearDown() override {
    if (run_) run_->SignalAndWait(SIGKILL, 10000);
    for (int i = 1; i <= tenants_; ++i) (void)p_.conn().Execute("DROP DATABASE IF EXISTS " + Tenant(i));
    p_.Cleanup();
  }

  std::string Tenant(int i) const { return p_.db() + "_t" + std::to_string(i); }

  /// The configuration: every tenant's users and orders into <db>.users and <db>.orders.
  std::vector<std::string> Config() {
    const std::string path = testing::MakeTempDir("fanin-config") + "/chsync.yaml";
    std::ofstream(path) << "table_options:\n"
                        << "  \"" << p_.db() << "_t*.users\":\n    dest: " << p_.db()
                        << ".users\n    source_column: _source\n"
                        << "  \"" << p_.db() << "_t*.orders\":\n    dest: " << p_.db()
                        << ".orders\n    source_column: _source\n";
    config_ = path;
    return {"--config", path};
  }

  std::vector<std::string> Args(bool until_caught_up) {
    std::vector<std::string> extra = Config();
    return p_.RunArgs(p_.db() + "_t*.*", until_caught_up, extra);
  }

  /// Each tenant's rows of `table` as the source has them and as the shared table has them.
  struct Rows {
    std::map<std::string, std::vector<std::string>> source;
    std::map<std::string, std::vector<std::string>> dest;
  };
  Rows Read(const std::string& table, const std::string& mysql_row, const std::string& clickhouse_row) {
    Rows rows;
    for (int i = 1; i <= tenants_; ++i) {
      auto& list = rows.source[Tenant(i)];
      for (const auto& r :
           p_.SourceQuery("SELECT " + mysql_row + " FROM " + Tenant(i) + "." + table + " ORDER BY id"))
        list.push_back(r[0].value_or("NULL"));
    }
    for (const auto& r : p_.DestQuery("SELECT _source, " + clickhouse_row + " FROM " + p_.db() + "." + table +
                                      " FINAL WHERE _chsync_is_deleted = 0 ORDER BY _source, id")) {
      rows.dest[r[0].value_or("")].push_back(r[1].value_or("NULL"));
    }
    for (int i = 1; i <= tenants_; ++i) rows.dest[Tenant(i)];  // a tenant with no rows
    return rows;
  }

  std::string UsersDiff() {
    Rows r =
        Read("users", "CONCAT_WS('|', id, name, CAST(balance * 10000 AS SIGNED), IFNULL(tier, 'none'))",
             "concat(toString(id), '|', name, '|', toString(toInt64(balance * 10000)), '|', toString(tier))");
    return Diff(r);
  }
  std::string OrdersDiff() {
    Rows r = Read("orders", "CONCAT_WS('|', id, user_id, amount)",
                  "concat(toString(id), '|', toString(user_id), '|', toString(amount))");
    return Diff(r);
  }
  static std::string Diff(const Rows& r) {
    for (const auto& [tenant, rows] : r.source) {
      auto it = r.dest.find(tenant);
      std::vector<std::string> dest = it == r.dest.end() ? std::vector<std::string>{} : it->second;
      if (rows != dest) {
        std::string out = tenant + ": source has " + std::to_string(rows.size()) + " rows, ClickHouse " +
                          std::to_string(dest.size());
        for (size_t k = 0; k < std::max(rows.size(), dest.size()) && k < 5; ++k) {
          out += "\n  " + (k < rows.size() ? rows[k] : "-") + "  vs  " + (k < dest.size() ? dest[k] : "-");
        }
        return out;
      }
    }
    if (r.dest.size() != r.source.size()) return "ClickHouse has rows of sources that are not tenants";
    return "";
  }

  /// "" when every tenant's users (id, v) equal its rows of the shared table.
  std::string SmallUsersDiff() {
    return Diff(Read("users", "CONCAT_WS('|', id, v)", "concat(toString(id), '|', toString(v))"));
  }

  /// Rows of `tenant` in the shared users table, every version (not FINAL).
  /// `tenants` tenant databases, each with `users` of `columns`, filled by `fill` (its "{t}" is the
  /// tenant's number), copied by one run.
  void MakeTenants(int tenants, const std::string& columns, const std::string& fill) {
    tenants_ = tenants;
    for (int i = 1; i <= tenants_; ++i) {
      std::string rows = fill;
      if (size_t at = rows.find("{t}"); at != std::string::npos) rows.replace(at, 3, std::to_string(i));
      p_.ExecAll({"CREATE DATABASE " + Tenant(i), "CREATE TABLE " + Tenant(i) + ".users (" + columns + ")",
                  "INSERT INTO " + Tenant(i) + ".users " + rows});
    }
    CommandResult r = testing::RunCommand(Args(true), 300'000);
    ASSERT_EQ(r.exit_code, 0) << r.Describe();
  }

  /// Starts the pipe with the delay point `point` (CHSYNC_DELAY_AT) of `ms`, asks it to copy
  /// `tenant`'s users again, and returns once the copy is held at the point.
  void ResyncHeldAt(int tenant, const std::string& point, const std::string& ms,
                    const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = Args(false);
    args.insert(args.end(), extra.begin(), extra.end());
    setenv("CHSYNC_DELAY_AT", point.c_str(), 1);
    setenv("CHSYNC_DELAY_MS", ms.c_str(), 1);
    auto started =
        testing::StartPipeInBackground(p_, args, p_.state() + "/run" + std::to_string(++runs_) + ".log");
    unsetenv("CHSYNC_DELAY_AT");
    unsetenv("CHSYNC_DELAY_MS");
    ASSERT_TRUE(started.has_value());
    run_.emplace(std::move(*started));
    ASSERT_TRUE(WaitFor([&] { return run_->Log().find("streaming from") != std::string::npos; }, 120))
        << testing::Tail(run_->Log());
    CommandResult resync = testing::RunCommand(
        {testing::ChsyncBinary(), "resync", "--state", p_.state(), "--table", Tenant(tenant) + ".users"},
        300'000);
    ASSERT_EQ(resync.exit_code, 0) << resync.Describe() << testing::Tail(run_->Log());
    const std::string held = "delay point " + point.substr(0, point.find('#'));
    ASSERT_TRUE(WaitFor([&] { return run_->Log().find(held) != std::string::npos; }, 60))
        << testing::Tail(run_->Log());
  }

  std::string RawRows(int tenant) {
    return p_.DestValue("SELECT count() FROM " + p_.db() + ".users WHERE _source = '" + Tenant(tenant) + "'");
  }

  PipeTest p_;
  std::optional<BackgroundProcess> run_;
  std::string config_;
  int tenants_ = kTenants;
  int runs_ = 0;
};

TEST_P(FanInTest, TwoHundredTenantsMergeIntoOneTablePerNameThroughWritesAMigrationAndATruncate) {
  for (int i = 1; i <= kTenants; ++i) {
    const std::string t = Tenant(i);
    p_.ExecAll(
        {"CREATE DATABASE " + t,
         "CREATE TABLE " + t +
             ".users (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL, "
             "balance DECIMAL(10,2) NOT NULL)",
         "CREATE TABLE " + t + ".orders (id INT PRIMARY KEY, user_id INT NOT NULL, amount INT NOT NULL)",
         "INSERT INTO " + t + ".users SELECT seq, CONCAT('u', seq, '@" + std::to_string(i) +
             "'), seq + 0.25 FROM seq_1_to_4",
         "INSERT INTO " + t + ".orders SELECT seq, 1 + seq % 4, seq * " + std::to_string(i) +
             " FROM seq_1_to_3"});
  }
  CommandResult r = testing::RunCommand(Args(true), 600'000);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  // Two ClickHouse tables, not 400; every tenant's rows under its name, equal keys kept apart.
  EXPECT_EQ(p_.DestTables(), (std::set<std::string>{"orders", "users"}));
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.db() + ".users FINAL"), std::to_string(4 * kTenants));
  EXPECT_EQ(p_.DestValue("SELECT uniqExact(_source) FROM " + p_.db() + ".orders"), std::to_string(kTenants));
  EXPECT_EQ(p_.DestValue("SELECT sorting_key FROM system.tables WHERE database = '" + p_.db() +
                         "' AND name = 'users'"),
            "_source, id");

  // Streaming under a writer while the migration is rolled out tenant by tenant.
  auto started = testing::StartPipeInBackground(p_, Args(false), p_.state() + "/run.log");
  ASSERT_TRUE(started.has_value());
  run_.emplace(std::move(*started));
  for (int i = 1; i <= kTenants; ++i) {
    const std::string t = Tenant(i);
    const std::string n = std::to_string(i);
    p_.ExecAll(
        {"INSERT INTO " + t + ".users VALUES (10, 'new" + n + "', 1.5)",
         "UPDATE " + t + ".orders SET amount = amount + 1 WHERE id = 2",
         // Tenant by tenant: a column with a default, then a wider DECIMAL.
         "ALTER TABLE " + t + ".users ADD COLUMN tier INT NOT NULL DEFAULT 3",
         "ALTER TABLE " + t + ".users MODIFY balance DECIMAL(14,4) NOT NULL",
         "INSERT INTO " + t + ".users (id, name, balance, tier) VALUES (11, 'wide" + n + "', 12345.6789, 7)",
         "INSERT INTO " + t + ".orders VALUES (9, 10, " + n + ")"});
    if (i % 50 == 0) {
      // Rows still written by the tenants not migrated yet, into the widened column.
      p_.Exec("UPDATE " + Tenant(kTenants) + ".users SET balance = balance + 1 WHERE id = 1");
    }
  }
  // One key, two tenants: deleted in one, updated in the other.
  p_.ExecAll({"DELETE FROM " + Tenant(1) + ".users WHERE id = 1",
              "UPDATE " + Tenant(2) + ".users SET name = 'renamed' WHERE id = 1",
              "TRUNCATE TABLE " + Tenant(3) + ".orders",
              "INSERT INTO " + Tenant(3) + ".orders VALUES (50, 1, 5)"});

  auto users_equal = [&] {
    std::string d = UsersDiff();
    return d.empty();
  };
  // The first tenant's ADD COLUMN added it; the 199 others changed nothing.
  EXPECT_TRUE(WaitFor(
      [&] {
        return p_.DestValue("SELECT count() FROM system.columns WHERE database = '" + p_.db() +
                            "' AND table = 'users' AND name = 'tier'") == "1";
      },
      120));
  EXPECT_TRUE(WaitFor([&] { return OrdersDiff().empty(); }, 180)) << OrdersDiff();
  EXPECT_TRUE(WaitFor(users_equal, 180)) << UsersDiff();
  EXPECT_EQ(p_.DestValue("SELECT type FROM system.columns WHERE database = '" + p_.db() +
                         "' AND table = 'users' AND name = 'balance'"),
            "Decimal(14, 4)");
  // Tenant 3's TRUNCATE took its rows alone.
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.db() +
                         ".orders FINAL WHERE _chsync_is_deleted = 0 AND "
                         "_source = '" +
                         Tenant(3) + "'"),
            "1");
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.db() +
                         ".orders FINAL WHERE _chsync_is_deleted = 0 AND "
                         "_source = '" +
                         Tenant(4) + "'"),
            "4");
  EXPECT_EQ(run_->SignalAndWait(SIGTERM, 60000), 0) << testing::Tail(run_->Log());
  run_.reset();

  // chsync verify: every tenant's table against its rows of the shared table.
  CommandResult v = testing::RunCommand(
      {testing::ChsyncBinary(), "verify", "--source", p_.source_url(), "--dest", p_.dest_url(), "--tables",
       p_.db() + "_t1*.*", "--state", p_.state(), "--config", config_},
      600'000);
  EXPECT_EQ(v.exit_code, 0) << v.Describe();
  EXPECT_NE(v.out.find(Tenant(1) + ".users: equal"), std::string::npos) << v.Describe();
  EXPECT_NE(v.out.find("whose _source is '" + Tenant(1) + "'"), std::string::npos) << v.Describe();
}

INSTANTIATE_TEST_SUITE_P(Destinations, FanInTest, ::testing::Values(Dest::kServer, Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& info) {
                           return testing::DestName(info.param);
                         });

// One source table of a shared table copied again (`chsync resync --table`) replaces its own rows
// and no other source's; a source table dropped keeps its rows, created anew it starts empty; an
// online schema migration's swap (pt-online-schema-change) of one tenant goes on feeding the table.
// Rows encoded for a shared column's type before another source widened it reach ClickHouse as
// their values, converted: here the rows of a prepared XA transaction, which wait in a file of the
// state directory (encoded as DECIMAL(10,2)) while another tenant widens the column to
// DECIMAL(20,6), then commit. RowBinary carries no types: sent as they are, ClickHouse would read
// them as the new type.
TEST_P(FanInTest, RowsEncodedBeforeAnotherSourceWidenedTheColumnKeepTheirValues) {
  tenants_ = 2;
  for (int i = 1; i <= tenants_; ++i) {
    p_.ExecAll({"CREATE DATABASE " + Tenant(i),
                "CREATE TABLE " + Tenant(i) + ".users (id INT PRIMARY KEY, v INT, amount DECIMAL(10,2))",
                "INSERT INTO " + Tenant(i) + ".users SELECT seq, seq, seq + 0.25 FROM seq_1_to_3"});
  }
  CommandResult r = testing::RunCommand(Args(true), 300'000);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  auto diff = [&] {
    return Diff(Read("users", "CONCAT_WS('|', id, v, CAST(amount * 1000000 AS SIGNED))",
                     "concat(toString(id), '|', toString(v), '|', toString(toInt64(amount * 1000000)))"));
  };
  ASSERT_EQ(diff(), "");
  const std::string xid = "'" + p_.db() + "-x1'";
  {
    // Prepared on a connection that then goes away: another one may commit it.
    std::unique_ptr<mysql::Connection> conn = testing::OpenSource(p_.source_url());
    ASSERT_NE(conn, nullptr);
    for (const std::string& sql :
         {"XA START " + xid, "INSERT INTO " + Tenant(1) + ".users VALUES (4, 4, 12345678.91)",
          "UPDATE " + Tenant(1) + ".users SET amount = -99999999.99 WHERE id = 1", "XA END " + xid,
          "XA PREPARE " + xid}) {
      Status s = conn->Execute(sql);
      ASSERT_TRUE(s.ok()) << sql << ": " << s.error().message();
    }
  }
  r = testing::RunCommand(Args(true), 300'000);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  p_.ExecAll({"ALTER TABLE " + Tenant(2) + ".users MODIFY amount DECIMAL(20,6)",
              "INSERT INTO " + Tenant(2) + ".users VALUES (10, 10, 1.123456)"});
  r = testing::RunCommand(Args(true), 300'000);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  ASSERT_EQ(p_.DestValue("SELECT type FROM system.columns WHERE database = '" + p_.db() +
                         "' AND table = 'users' AND name = 'amount'"),
            "Nullable(Decimal(20, 6))");
  std::unique_ptr<mysql::Connection> conn = testing::OpenSource(p_.source_url());
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(WaitFor([&] { return conn->Execute("XA COMMIT " + xid).ok(); }, 30));
  r = testing::RunCommand(Args(true), 300'000);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(diff(), "");
  EXPECT_NE(r.err.find("converted by ClickHouse"), std::string::npos) << r.Describe();
}

// A source keyed otherwise than the shared table is held with a message, not merged: with the
// table sorted by (_source, id), tenant 2's rows (id, region) = (1, 1) and (1, 2) would collapse.
TEST_P(FanInTest, ASourceKeyedOtherwiseIsHeldNotMerged) {
  tenants_ = 4;
  // At the first start: tenant 4's table is held, tenant 1's copied.
  p_.ExecAll({"CREATE DATABASE " + Tenant(1), "CREATE DATABASE " + Tenant(2), "CREATE DATABASE " + Tenant(3),
              "CREATE DATABASE " + Tenant(4),
              "CREATE TABLE " + Tenant(1) + ".users (id INT PRIMARY KEY, v INT)",
              "INSERT INTO " + Tenant(1) + ".users VALUES (1, 10), (2, 20)",
              "CREATE TABLE " + Tenant(4) + ".users (id INT, region INT, v INT, PRIMARY KEY (id, region))",
              "INSERT INTO " + Tenant(4) + ".users VALUES (1, 1, 41), (1, 2, 42)"});
  CommandResult r = testing::RunCommand(Args(true), 300'000);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(r.err.find(Tenant(4) + ".users PARKED"), std::string::npos) << r.Describe();
  // While it streams: tenant 2's held, tenant 3's merged.
  p_.ExecAll({"CREATE TABLE " + Tenant(2) + ".users (id INT, region INT, v INT, PRIMARY KEY (id, region))",
              "INSERT INTO " + Tenant(2) + ".users VALUES (1, 1, 11), (1, 2, 12)",
              "CREATE TABLE " + Tenant(3) + ".users (id INT PRIMARY KEY, v INT)",
              "INSERT INTO " + Tenant(3) + ".users VALUES (1, 30)"});
  r = testing::RunCommand(Args(true), 300'000);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(r.err.find("would be sorted by"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find(Tenant(2) + ".users PARKED"), std::string::npos) << r.Describe();
  EXPECT_EQ(
      p_.DestValue("SELECT count() FROM " + p_.db() + ".users FINAL WHERE _source = '" + Tenant(2) + "'"),
      "0");
  EXPECT_EQ(p_.DestValue("SELECT groupArray(v) FROM (SELECT v FROM " + p_.db() +
                         ".users FINAL WHERE _chsync_is_deleted = 0 ORDER BY _source, id)"),
            "[10,20,30]");
}

// Pipes alter a shared table one at a time (ClickHouse has no conditional ALTER: a widening
// computed from a stale read could narrow another pipe's): while `users__chsync_altering` exists,
// another pipe holds the table, and this one waits to add its column. On the server alone: the
// test makes the lock itself, through a connection of its own.
class FanInServerTest : public FanInTest {};

TEST_P(FanInServerTest, AnAlterWaitsWhileAnotherPipeHoldsTheSharedTable) {
  tenants_ = 2;
  for (int i = 1; i <= tenants_; ++i) {
    p_.ExecAll({"CREATE DATABASE " + Tenant(i),
                "CREATE TABLE " + Tenant(i) + ".users (id INT PRIMARY KEY, v INT)",
                "INSERT INTO " + Tenant(i) + ".users SELECT seq, seq FROM seq_1_to_5"});
  }
  CommandResult r = testing::RunCommand(Args(true), 300'000);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  const std::string lock = p_.db() + ".users__chsync_altering";
  ASSERT_EQ(p_.DestValue("CREATE TABLE " + lock + " (held UInt8) ENGINE = Memory"), "");
  auto started = testing::StartPipeInBackground(p_, Args(false), p_.state() + "/run.log");
  ASSERT_TRUE(started.has_value());
  run_.emplace(std::move(*started));
  p_.ExecAll({"ALTER TABLE " + Tenant(1) + ".users ADD COLUMN c INT NOT NULL DEFAULT 3",
              "INSERT INTO " + Tenant(1) + ".users (id, v, c) VALUES (6, 6, 6)"});
  ASSERT_TRUE(WaitFor(
      [&] { return run_->Log().find("waiting for another pipe that alters") != std::string::npos; }, 60))
      << testing::Tail(run_->Log());
  const std::string columns = "SELECT count() FROM system.columns WHERE database = '" + p_.db() +
                              "' AND table = 'users' AND name = 'c'";
  EXPECT_EQ(p_.DestValue(columns), "0") << "altered while another pipe held the table";
  ASSERT_EQ(p_.DestValue("DROP TABLE " + lock), "");
  ASSERT_TRUE(WaitFor([&] { return p_.DestValue(columns) == "1"; }, 60)) << testing::Tail(run_->Log());
  EXPECT_TRUE(WaitFor(
      [&] {
        return p_.DestValue("SELECT count() FROM " + p_.db() + ".users FINAL WHERE id = 6 AND c = 6") == "1";
      },
      60))
      << testing::Tail(run_->Log());
  EXPECT_EQ(p_.DestValue("SELECT count() FROM system.tables WHERE database = '" + p_.db() +
                         "' AND name = 'users__chsync_altering'"),
            "0")
      << "the pipe left its lock";
  // A lock of this pipe's own (left by a kill in the middle of an ALTER) is taken back at once.
  std::array<char, 256> host{};
  ASSERT_EQ(gethostname(host.data(), host.size() - 1), 0);
  const std::string owner = std::string(host.data()) + ":" + std::filesystem::absolute(p_.state()).string();
  ASSERT_EQ(p_.DestValue("CREATE TABLE " + lock + " (owner String DEFAULT '" + owner + "') ENGINE = Memory"),
            "");
  p_.ExecAll({"ALTER TABLE " + Tenant(2) + ".users ADD COLUMN c2 INT NOT NULL DEFAULT 4",
              "INSERT INTO " + Tenant(2) + ".users (id, v, c2) VALUES (7, 7, 7)"});
  ASSERT_TRUE(WaitFor([&] { return run_->Log().find("is this pipe's") != std::string::npos; }, 60))
      << testing::Tail(run_->Log());
  EXPECT_TRUE(WaitFor(
      [&] {
        return p_.DestValue("SELECT count() FROM system.columns WHERE database = '" + p_.db() +
                            "' AND table = 'users' AND name = 'c2'") == "1";
      },
      60))
      << testing::Tail(run_->Log());
}

INSTANTIATE_TEST_SUITE_P(Server, FanInServerTest, ::testing::Values(Dest::kServer),
                         [](const ::testing::TestParamInfo<Dest>& info) {
                           return testing::DestName(info.param);
                         });

// A table the pipe does not replicate, renamed onto a shared source's name (a migration tool's
// shadow table swapped in): its rows replace that source's rows in the shared table, and its
// changes follow.
TEST_P(FanInTest, AnUntrackedTableRenamedOntoASourceFeedsTheSharedTable) {
  tenants_ = 2;
  for (int i = 1; i <= tenants_; ++i) {
    p_.ExecAll({"CREATE DATABASE " + Tenant(i),
                "CREATE TABLE " + Tenant(i) + ".users (id INT PRIMARY KEY, v INT)",
                "INSERT INTO " + Tenant(i) + ".users SELECT seq, seq FROM seq_1_to_5"});
  }
  p_.ExecAll({"CREATE TABLE " + Tenant(2) + ".users_next (id INT PRIMARY KEY, v INT)",
              "INSERT INTO " + Tenant(2) + ".users_next SELECT seq, seq * 100 FROM seq_3_to_8"});
  // Only the users tables are replicated: users_next is not tracked.
  std::vector<std::string> args = p_.RunArgs(p_.db() + "_t*.users", true, Config());
  CommandResult r = testing::RunCommand(args, 300'000);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  ASSERT_EQ(SmallUsersDiff(), "");
  p_.ExecAll({"RENAME TABLE " + Tenant(2) + ".users TO " + Tenant(2) + ".users_before, " + Tenant(2) +
                  ".users_next TO " + Tenant(2) + ".users",
              "UPDATE " + Tenant(2) + ".users SET v = -v WHERE id = 8"});
  r = testing::RunCommand(args, 300'000);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(SmallUsersDiff(), "");
  p_.ExecAll({"INSERT INTO " + Tenant(2) + ".users VALUES (9, 900)",
              "DELETE FROM " + Tenant(2) + ".users WHERE id = 3"});
  r = testing::RunCommand(args, 300'000);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(SmallUsersDiff(), "");
}

// gh-ost's migration of one tenant, as gh-ost runs it: its changelog table, the shadow `_users_gho`
// with a new column filled by chunks and by the changes gh-ost applies from the binlog, the
// cut-over `RENAME TABLE users TO _users_del, _users_gho TO users`, and the drops. The shared
// table gets the column; the tenant's rows stay equal to its table; the other tenant is untouched.
TEST_P(FanInTest, AGhostMigrationOfOneTenantKeepsTheSharedTableEqual) {
  tenants_ = 2;
  for (int i = 1; i <= tenants_; ++i) {
    p_.ExecAll({"CREATE DATABASE " + Tenant(i),
                "CREATE TABLE " + Tenant(i) + ".users (id INT PRIMARY KEY, v INT)",
                "INSERT INTO " + Tenant(i) + ".users SELECT seq, seq FROM seq_1_to_10"});
  }
  CommandResult r = testing::RunCommand(Args(true), 300'000);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  const std::string raw1 = RawRows(1);
  const std::string t2 = Tenant(2);
  p_.ExecAll(
      {"CREATE TABLE " + t2 +
           "._users_ghc (id BIGINT AUTO_INCREMENT PRIMARY KEY, last_update TIMESTAMP DEFAULT "
           "CURRENT_TIMESTAMP, hint VARCHAR(64) NOT NULL, value VARCHAR(4096) NOT NULL, UNIQUE KEY "
           "hint_uidx (hint))",
       "CREATE TABLE " + t2 + "._users_gho LIKE " + t2 + ".users",
       "ALTER TABLE " + t2 + "._users_gho ADD COLUMN w INT NOT NULL DEFAULT 0",
       "INSERT INTO " + t2 + "._users_ghc (hint, value) VALUES ('state', 'GhostTableMigrated')",
       "INSERT INTO " + t2 + "._users_gho (id, v) SELECT id, v FROM " + t2 + ".users WHERE id <= 5",
       "UPDATE " + t2 + ".users SET v = 77 WHERE id = 2",
       "REPLACE INTO " + t2 + "._users_gho (id, v) VALUES (2, 77)",
       "DELETE FROM " + t2 + ".users WHERE id = 9",
       "INSERT INTO " + t2 + "._users_gho (id, v) SELECT id, v FROM " + t2 + ".users WHERE id > 5",
       "INSERT INTO " + t2 + ".users VALUES (11, 11)",
       "REPLACE INTO " + t2 + "._users_gho (id, v) VALUES (11, 11)",
       "REPLACE INTO " + t2 + "._users_ghc (hint, value) VALUES ('state', 'AllEventsUpToLockProcessed')",
       "RENAME TABLE " + t2 + ".users TO " + t2 + "._users_del, " + t2 + "._users_gho TO " + t2 + ".users",
       "DROP TABLE " + t2 + "._users_ghc", "DROP TABLE " + t2 + "._users_del",
       "UPDATE " + t2 + ".users SET w = id WHERE id <= 3"});
  r = testing::RunCommand(Args(true), 300'000);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(SmallUsersDiff(), "");
  std::vector<std::string> source;
  for (const auto& row : p_.SourceQuery("SELECT CONCAT_WS('|', id, v, w) FROM " + t2 + ".users ORDER BY id"))
    source.push_back(row[0].value_or("NULL"));
  std::vector<std::string> dest;
  for (const auto& row :
       p_.DestQuery("SELECT concat(toString(id), '|', toString(v), '|', toString(w)) FROM " + p_.db() +
                    ".users FINAL WHERE _chsync_is_deleted = 0 AND _source = '" + t2 + "' ORDER BY id"))
    dest.push_back(row[0].value_or("NULL"));
  EXPECT_EQ(dest, source) << "tenant 2's rows with gh-ost's new column";
  EXPECT_EQ(RawRows(1), raw1) << "the migration of tenant 2 wrote rows of tenant 1";
  EXPECT_EQ(p_.DestValue("SELECT count() FROM system.tables WHERE database = '" + p_.db() +
                         "' AND name LIKE '%gh%'"),
            "0")
      << "gh-ost's tables were replicated on their own";
}

// A pipe that replicated each tenant into a table of its own, restarted with table_options that
// share one table: each tenant is copied into the shared table (the tables of their own keep their
// rows), and streams there. The source value its rows carry is recorded: a restart that would give
// them another (source_name changed) is refused, not left to write beside the old rows.
TEST_P(FanInTest, TablesOfTheirOwnBecomeOneSharedTableOnARestart) {
  tenants_ = 2;
  for (int i = 1; i <= tenants_; ++i) {
    p_.ExecAll(
        {"CREATE DATABASE " + Tenant(i), "CREATE TABLE " + Tenant(i) + ".users (id INT PRIMARY KEY, v INT)",
         "INSERT INTO " + Tenant(i) + ".users SELECT seq, seq * " + std::to_string(i) + " FROM seq_1_to_5"});
  }
  CommandResult r = testing::RunCommand(p_.RunArgs(p_.db() + "_t*.*", true, {}), 300'000);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  ASSERT_EQ(p_.DestValue("SELECT count() FROM " + Tenant(2) + ".users FINAL"), "5");
  p_.Exec("UPDATE " + Tenant(1) + ".users SET v = 100 WHERE id = 1");
  r = testing::RunCommand(Args(true), 300'000);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_NE(r.err.find("it is copied there"), std::string::npos) << r.Describe();
  EXPECT_EQ(SmallUsersDiff(), "");
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + Tenant(2) + ".users FINAL"), "5")
      << "its own table's rows stay";
  p_.ExecAll(
      {"UPDATE " + Tenant(2) + ".users SET v = -v", "INSERT INTO " + Tenant(1) + ".users VALUES (6, 6)"});
  r = testing::RunCommand(Args(true), 300'000);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(SmallUsersDiff(), "");
  // The same table under another source name: refused, with what to do.
  const std::string renamed = testing::MakeTempDir("fanin-config") + "/chsync.yaml";
  {
    std::ifstream in(config_);
    std::stringstream text;
    text << "source_name: eu-2\n" << in.rdbuf();
    std::ofstream(renamed) << text.str();
  }
  r = testing::RunCommand(p_.RunArgs(p_.db() + "_t*.*", true, {"--config", renamed}), 300'000);
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  EXPECT_NE(r.err.find("source_name or source_column changed"), std::string::npos) << r.Describe();
  EXPECT_EQ(SmallUsersDiff(), "");
  // Into the same table without a source_column: refused too (its TRUNCATE would empty the table).
  const std::string plain = testing::MakeTempDir("fanin-config") + "/chsync.yaml";
  std::ofstream(plain) << "table_options:\n  \"" << Tenant(1) << ".users\":\n    dest: " << p_.db()
                       << ".users\n";
  r = testing::RunCommand(p_.RunArgs(Tenant(1) + ".users", true, {"--config", plain}), 300'000);
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  EXPECT_NE(r.err.find("no longer give it a source_column"), std::string::npos) << r.Describe();
  EXPECT_EQ(SmallUsersDiff(), "");
}

TEST_P(FanInTest, OneSourceResyncedDroppedRecreatedAndSwappedLeavesTheOthersAlone) {
  tenants_ = 3;
  for (int i = 1; i <= tenants_; ++i) {
    p_.ExecAll(
        {"CREATE DATABASE " + Tenant(i), "CREATE TABLE " + Tenant(i) + ".users (id INT PRIMARY KEY, v INT)",
         "INSERT INTO " + Tenant(i) + ".users SELECT seq, seq * " + std::to_string(i) + " FROM seq_1_to_20"});
  }
  CommandResult r = testing::RunCommand(Args(true), 300'000);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  ASSERT_EQ(SmallUsersDiff(), "");
  const std::string raw1 = RawRows(1);

  // Rows changed behind the binlog's back in tenant 2: only a copy brings them.
  p_.ExecHidden({"UPDATE " + Tenant(2) + ".users SET v = 999 WHERE id <= 5",
                 "DELETE FROM " + Tenant(2) + ".users WHERE id = 20"});
  ASSERT_NE(SmallUsersDiff(), "");
  auto started = testing::StartPipeInBackground(p_, Args(false), p_.state() + "/run.log");
  ASSERT_TRUE(started.has_value());
  run_.emplace(std::move(*started));
  // The request goes to the running pipe: once it holds the state directory and streams.
  ASSERT_TRUE(WaitFor([&] { return run_->Log().find("streaming from") != std::string::npos; }, 120))
      << testing::Tail(run_->Log());
  CommandResult resync = testing::RunCommand(
      {testing::ChsyncBinary(), "resync", "--state", p_.state(), "--table", Tenant(2) + ".users"}, 300'000);
  ASSERT_EQ(resync.exit_code, 0) << resync.Describe() << testing::Tail(run_->Log());
  EXPECT_TRUE(WaitFor([&] { return SmallUsersDiff().empty(); }, 120)) << SmallUsersDiff();
  EXPECT_EQ(RawRows(1), raw1) << "the copy of tenant 2 wrote rows of tenant 1";

  // Tenant 3's table dropped: its rows stay. Created anew: only the new rows.
  p_.Exec("DROP TABLE " + Tenant(3) + ".users");
  p_.Exec("INSERT INTO " + Tenant(1) + ".users VALUES (100, 1)");
  EXPECT_TRUE(WaitFor(
      [&] { return p_.DestValue("SELECT count() FROM " + p_.db() + ".users FINAL WHERE id = 100") == "1"; },
      60));
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.db() +
                         ".users FINAL WHERE _chsync_is_deleted = 0 AND _source = '" + Tenant(3) + "'"),
            "20");
  p_.ExecAll({"CREATE TABLE " + Tenant(3) + ".users (id INT PRIMARY KEY, v INT)",
              "INSERT INTO " + Tenant(3) + ".users VALUES (1, 31), (2, 32)"});

  // pt-online-schema-change on tenant 1: a shadow with a new column, filled, swapped in, dropped.
  const std::string t1 = Tenant(1);
  p_.ExecAll(
      {"CREATE TABLE " + t1 + "._users_new LIKE " + t1 + ".users",
       "ALTER TABLE " + t1 + "._users_new ADD COLUMN w INT",
       "INSERT INTO " + t1 + "._users_new (id, v) SELECT id, v FROM " + t1 + ".users",
       "RENAME TABLE " + t1 + ".users TO " + t1 + "._users_old, " + t1 + "._users_new TO " + t1 + ".users",
       "DROP TABLE " + t1 + "._users_old", "UPDATE " + t1 + ".users SET w = id, v = v + 1 WHERE id <= 3",
       "DELETE FROM " + t1 + ".users WHERE id = 4"});
  EXPECT_TRUE(WaitFor([&] { return SmallUsersDiff().empty(); }, 120))
      << SmallUsersDiff() << testing::Tail(run_->Log());
  EXPECT_EQ(p_.DestValue("SELECT sum(w) FROM " + p_.db() +
                         ".users FINAL WHERE _chsync_is_deleted = 0 AND _source = '" + t1 + "'"),
            "6");
  EXPECT_EQ(p_.DestTables(), (std::set<std::string>{"users"}));
  EXPECT_EQ(run_->SignalAndWait(SIGTERM, 60000), 0) << testing::Tail(run_->Log());
  run_.reset();
}

// A source table dropped, or renamed to a name that feeds another table, while `chsync resync` copies
// it into the shared table: its earlier rows went when the copy began, and the rest can no longer be
// read, so the part copied is deleted rather than left as if it were the table. The copy is held
// 10 s before its second chunk (CHSYNC_DELAY_AT) so that the statement lands during it.
TEST_P(FanInTest, ASourceDroppedOrRenamedAwayWhileItIsCopiedAgainLeavesNoPartOfTheCopy) {
  ASSERT_NO_FATAL_FAILURE(
      MakeTenants(3, "id INT PRIMARY KEY, v INT", "SELECT seq, seq * {t} FROM seq_1_to_5000"));
  ASSERT_EQ(SmallUsersDiff(), "");
  auto live = [&](int tenant) {
    return p_.DestValue("SELECT count() FROM " + p_.db() +
                        ".users FINAL WHERE _chsync_is_deleted = 0 AND _source = '" + Tenant(tenant) + "'");
  };
  int marker = 100000;
  // Resyncs `tenant` under a pipe whose copies wait before their second chunk, runs `statement`
  // once the first chunk is in ClickHouse, and stops the pipe once it passed the statement.
  auto cut_short = [&](int tenant, const std::string& statement) {
    ResyncHeldAt(tenant, "snapshot.chunk#2", "10000", {"--snapshot-chunk-rows", "1000"});
    if (::testing::Test::HasFatalFailure()) return;
    ASSERT_TRUE(WaitFor([&] { return live(tenant) != "0"; }, 30)) << "the copy's first chunk did not land";
    p_.Exec(statement);
    ++marker;
    p_.Exec("INSERT INTO " + Tenant(1) + ".users VALUES (" + std::to_string(marker) + ", 1)");
    EXPECT_TRUE(WaitFor(
        [&] {
          return p_.DestValue("SELECT count() FROM " + p_.db() +
                              ".users FINAL WHERE id = " + std::to_string(marker)) == "1";
        },
        60))
        << testing::Tail(run_->Log());
    EXPECT_EQ(run_->SignalAndWait(SIGTERM, 60000), 0) << testing::Tail(run_->Log());
  };

  cut_short(2, "DROP TABLE " + Tenant(2) + ".users");
  EXPECT_NE(run_->Log().find("left the shared table"), std::string::npos) << testing::Tail(run_->Log());
  run_.reset();
  EXPECT_EQ(live(2), "0") << "a part of tenant 2's copy is left as if it were its table";

  cut_short(3, "RENAME TABLE " + Tenant(3) + ".users TO " + Tenant(3) + ".users_archive");
  run_.reset();
  EXPECT_EQ(live(3), "0") << "a part of tenant 3's copy is left as if it were its table";
  // Its rows live on under the new name, in a table of its own.
  EXPECT_EQ(
      p_.DestValue("SELECT count() FROM " + p_.db() + "_t3.users_archive FINAL WHERE _chsync_is_deleted = 0"),
      "5000");
  // The other tenant is untouched: equal to its source (markers included).
  CommandResult caught_up = testing::RunCommand(Args(true), 300'000);
  ASSERT_EQ(caught_up.exit_code, 0) << caught_up.Describe();
  EXPECT_EQ(p_.DestValue("SELECT concat(toString(count()), '/', toString(sum(v))) FROM " + p_.db() +
                         ".users FINAL WHERE _chsync_is_deleted = 0 AND _source = '" + Tenant(1) + "'"),
            p_.SourceValue("SELECT CONCAT(COUNT(*), '/', SUM(v)) FROM " + Tenant(1) + ".users"));
}

// gh-ost cuts over while `chsync resync` copies the same tenant: the base renamed to its leftover
// name (`users` → `_users_del`) stops the copy without deleting the rows (the shadow's rows are this
// source's too), and the shadow renamed onto `users` is copied again.
TEST_P(FanInTest, AGhostCutOverDuringAResyncOfThatTenantKeepsItsRows) {
  ASSERT_NO_FATAL_FAILURE(
      MakeTenants(2, "id INT PRIMARY KEY, v INT", "SELECT seq, seq * {t} FROM seq_1_to_5000"));
  const std::string t2 = Tenant(2);
  ASSERT_NO_FATAL_FAILURE(ResyncHeldAt(2, "snapshot.chunk#2", "10000", {"--snapshot-chunk-rows", "1000"}));
  p_.ExecAll(
      {"CREATE TABLE " + t2 + "._users_gho LIKE " + t2 + ".users",
       "INSERT INTO " + t2 + "._users_gho SELECT * FROM " + t2 + ".users",
       "UPDATE " + t2 + ".users SET v = 77 WHERE id = 2", "REPLACE INTO " + t2 + "._users_gho VALUES (2, 77)",
       "RENAME TABLE " + t2 + ".users TO " + t2 + "._users_del, " + t2 + "._users_gho TO " + t2 + ".users",
       "DROP TABLE " + t2 + "._users_del", "UPDATE " + t2 + ".users SET v = 5 WHERE id = 3",
       "INSERT INTO " + Tenant(1) + ".users VALUES (100000, 1)"});
  EXPECT_TRUE(WaitFor(
      [&] {
        return p_.DestValue("SELECT count() FROM " + p_.db() + ".users FINAL WHERE id = 100000") == "1";
      },
      60))
      << testing::Tail(run_->Log());
  EXPECT_TRUE(WaitFor([&] { return SmallUsersDiff().empty(); }, 120))
      << SmallUsersDiff() << testing::Tail(run_->Log());
  EXPECT_EQ(run_->SignalAndWait(SIGTERM, 60000), 0) << testing::Tail(run_->Log());
  run_.reset();
}

// One pipe copies a tenant again (`chsync resync`) while its stream widens the shared table for
// another tenant: the copy's INSERT checked the types and is held 8 s before it runs
// (CHSYNC_DELAY_AT); the widening waits for it (clickhouse::TypeGate) instead of changing the
// column under rows encoded for the old type. On 18.16 the resync's DELETE also left an empty part,
// on which the widening failed half-way and left the table unreadable (Destination::MergeEmptyParts).
TEST_P(FanInTest, AWideningWaitsForACopysInsertOfTheOldTypes) {
  ASSERT_NO_FATAL_FAILURE(MakeTenants(2, "id INT PRIMARY KEY, amount DECIMAL(10,2)",
                                      "SELECT seq, seq + 0.25 FROM seq_1_to_3000"));
  // Rows changed behind the binlog's back in tenant 2: the copy brings them.
  p_.ExecHidden({"UPDATE " + Tenant(2) + ".users SET amount = amount + 7.5 WHERE id % 3 = 0"});
  ASSERT_NO_FATAL_FAILURE(ResyncHeldAt(2, "typed_insert.checked", "8000"));
  p_.ExecAll({"ALTER TABLE " + Tenant(1) + ".users MODIFY amount DECIMAL(20,6)",
              "INSERT INTO " + Tenant(1) + ".users VALUES (100000, 1.123456)"});
  auto diff = [&] {
    return Diff(Read("users", "CONCAT_WS('|', id, CAST(amount * 1000000 AS SIGNED))",
                     "concat(toString(id), '|', toString(toInt64(assumeNotNull(amount) * 1000000)))"));
  };
  EXPECT_TRUE(WaitFor([&] { return diff().empty(); }, 120)) << diff() << testing::Tail(run_->Log());
  EXPECT_EQ(p_.DestValue("SELECT type FROM system.columns WHERE database = '" + p_.db() +
                         "' AND table = 'users' AND name = 'amount'"),
            "Nullable(Decimal(20, 6))");
  EXPECT_NE(run_->Log().find("its column types change once the 1 INSERT(s) into it that checked them end"),
            std::string::npos)
      << "the widening came after the copy's INSERT: this run did not test them meeting\n"
      << testing::Tail(run_->Log());
  EXPECT_EQ(run_->Log().find("converting.mrk"), std::string::npos)
      << "ClickHouse failed the widening on an emptied part:\n"
      << testing::Tail(run_->Log());
  EXPECT_EQ(run_->Log().find("changed during an INSERT"), std::string::npos)
      << "the widening ran while the copy's rows of the old type were sent:\n"
      << testing::Tail(run_->Log());
  EXPECT_EQ(run_->SignalAndWait(SIGTERM, 60000), 0) << testing::Tail(run_->Log());
  run_.reset();
}

// Two MariaDB servers (shards with one schema), two chsync processes, one ClickHouse table: each
// pipe has its own source_name, the same ADD COLUMN is issued on both servers at the same moment,
// and each pipe is killed (-9) mid-stream and started again. ClickHouse 18.16 only: an embedded
// store belongs to the one process that opened it, so two processes cannot share one.
class FanInTwoPipesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_.Init("CHSYNC_TEST_MYSQL_FULL", Dest::kServer, "fanin2a", kServerIdBase + 500000);
    b_.Init("CHSYNC_TEST_MYSQL_COMPRESS", Dest::kServer, "fanin2b", kServerIdBase + 600000);
  }
  void TearDown() override {
    for (auto* run : {&run_a_, &run_b_}) {
      if (*run) (*run)->SignalAndWait(SIGKILL, 10000);
    }
    std::string error;
    (void)testing::QueryDestination(a_.dest_url(), "DROP DATABASE IF EXISTS " + Shared(), &error);
    a_.Cleanup();
    b_.Cleanup();
  }

  std::string Shared() const { return a_.db() + "_shared"; }

  std::vector<std::string> Args(const PipeTest& p, const std::string& name) {
    const std::string path = testing::MakeTempDir("fanin2-config") + "/chsync.yaml";
    std::ofstream(path) << "source_name: " << name << "\n"
                        << "table_options:\n  \"" << p.db() << ".users\":\n    dest: " << Shared()
                        << ".users\n    source_column: _source\n";
    return p.RunArgs(p.db() + ".*", false, {"--config", path});
  }

  void Start(std::optional<BackgroundProcess>& run, const PipeTest& p, const std::string& name) {
    run.reset();
    auto started = testing::StartPipeInBackground(p, Args(p, name),
                                                  p.state() + "/run" + std::to_string(++runs_) + ".log");
    ASSERT_TRUE(started.has_value());
    run.emplace(std::move(*started));
  }

  /// "" when the shared table's rows of `value` equal `p`'s users (with columns c1 and c2 once
  /// `added`).
  std::string Diff(PipeTest& p, const std::string& value, bool added) {
    std::vector<std::string> source;
    for (const auto& r :
         p.SourceQuery(added ? "SELECT CONCAT_WS('|', id, v, IFNULL(c1, 'N'), IFNULL(c2, 'N')) "
                               "FROM users ORDER BY id"
                             : "SELECT CONCAT_WS('|', id, v) FROM users ORDER BY id"))
      source.push_back(r[0].value_or("NULL"));
    std::string error;
    auto rows = testing::QueryDestination(
        a_.dest_url(),
        std::string("SELECT ") +
            (added ? "concat(toString(id), '|', toString(v), '|', ifNull(toString(c1), 'N'), '|', "
                     "ifNull(toString(c2), 'N'))"
                   : "concat(toString(id), '|', toString(v))") +
            " FROM " + Shared() + ".users FINAL WHERE _chsync_is_deleted = 0 AND _source = '" + value +
            "' ORDER BY id",
        &error);
    if (!rows) return value + ": " + error;
    std::vector<std::string> dest;
    for (const auto& r : *rows) dest.push_back(r[0].value_or("NULL"));
    if (source == dest) return "";
    return value + ": source " + std::to_string(source.size()) + " rows, ClickHouse " +
           std::to_string(dest.size());
  }

  /// Writes on both servers: inserts, updates of keys both have, deletes.
  void Write(int round) {
    const std::string n = std::to_string(round);
    for (PipeTest* p : {&a_, &b_}) {
      p->ExecAll({"INSERT INTO users (id, v) VALUES (" + std::to_string(1000 + round) + ", " + n + ")",
                  "UPDATE users SET v = v + 1 WHERE id = " + std::to_string(1 + round % 50),
                  "DELETE FROM users WHERE id = " + std::to_string(60 + round)});
    }
  }

  PipeTest a_;
  PipeTest b_;
  std::optional<BackgroundProcess> run_a_;
  std::optional<BackgroundProcess> run_b_;
  int runs_ = 0;
};

TEST_F(FanInTwoPipesTest, TwoServersTwoPipesOneTableConcurrentAddColumnAndKills) {
  for (PipeTest* p : {&a_, &b_}) {
    p->ExecAll({"CREATE TABLE users (id INT PRIMARY KEY, v INT NOT NULL)",
                "INSERT INTO users SELECT seq, seq FROM seq_1_to_100"});
  }
  Start(run_a_, a_, "eu");
  Start(run_b_, b_, "us");
  const std::string eu = "eu/" + a_.db();
  const std::string us = "us/" + b_.db();
  ASSERT_TRUE(WaitFor([&] { return Diff(a_, eu, false).empty() && Diff(b_, us, false).empty(); }, 120))
      << Diff(a_, eu, false) << " " << Diff(b_, us, false) << testing::Tail(run_a_->Log())
      << testing::Tail(run_b_->Log());
  // Keys 1…100 exist twice: once per source, never replacing each other.
  EXPECT_EQ(a_.DestValue("SELECT count() FROM " + Shared() + ".users FINAL WHERE id <= 100"), "200");

  // The same ADD COLUMN on both servers at the same moment, twice, while both write.
  for (const std::string column : {"c1", "c2"}) {
    std::thread other([&] { b_.Exec("ALTER TABLE users ADD COLUMN " + column + " INT DEFAULT 5"); });
    a_.Exec("ALTER TABLE users ADD COLUMN " + column + " INT DEFAULT 5");
    other.join();
    for (int round = 0; round < 5; ++round) Write(round + (column == "c1" ? 0 : 5));
  }
  // kill -9 of each pipe in turn, mid-stream, with writes before and after; then started again.
  run_a_->SignalAndWait(SIGKILL, 10000);
  for (int round = 10; round < 15; ++round) Write(round);
  a_.Exec("UPDATE users SET c1 = 7 WHERE id <= 10");
  Start(run_a_, a_, "eu");
  run_b_->SignalAndWait(SIGKILL, 10000);
  for (int round = 15; round < 20; ++round) Write(round);
  b_.Exec("UPDATE users SET c2 = 9 WHERE id > 90");
  Start(run_b_, b_, "us");

  EXPECT_TRUE(WaitFor([&] { return Diff(a_, eu, true).empty() && Diff(b_, us, true).empty(); }, 180))
      << Diff(a_, eu, true) << " " << Diff(b_, us, true) << testing::Tail(run_a_->Log())
      << testing::Tail(run_b_->Log());
  EXPECT_EQ(a_.DestValue("SELECT count() FROM system.columns WHERE database = '" + Shared() +
                         "' AND table = 'users' AND name IN ('c1', 'c2')"),
            "2");
  EXPECT_EQ(run_a_->SignalAndWait(SIGTERM, 60000), 0) << testing::Tail(run_a_->Log());
  EXPECT_EQ(run_b_->SignalAndWait(SIGTERM, 60000), 0) << testing::Tail(run_b_->Log());
}

}  // namespace
}  // namespace chsync
