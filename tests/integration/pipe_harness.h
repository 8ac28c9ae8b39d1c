#pragma once

// What the end-to-end tests of `chsync run` share: the two destinations, unique names, and
// PipeTest, one source database replicated into one destination with its own state directory.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "mysql/connection.h"
#include "pipe_compare.h"
#include "test_env.h"

/// The destination's FINAL view of `table` equals the source (else the comparison's report).
#define EXPECT_EQUAL_TO_SOURCE(pipe, table, when)                                                          \
  do {                                                                                                     \
    std::string report = (pipe).Compare(table);                                                            \
    EXPECT_TRUE(report.empty()) << "ClickHouse table " << (table) << " differs from the source " << (when) \
                                << ":\n"                                                                   \
                                << report;                                                                 \
  } while (false)

#define ASSERT_RUN_OK(r, when) \
  ASSERT_EQ((r).exit_code, 0) << "chsync run " << (when) << ":\n" << (r).Describe()

namespace chsync::testing {

/// ClickHouse 18.16 over HTTP, or an embedded chDB store.
enum class Dest { kServer, kEmbedded };

std::string DestName(Dest d);
void PrintTo(Dest d, std::ostream* os);

/// A name unique to this process and call, usable as a MariaDB and a ClickHouse database name.
std::string UniqueName(const std::string& prefix);

/// A replication server id no other test process uses at the same time: `base` + a part from the
/// process id + a counter (each test binary uses its own base).
std::string UniqueServerId(int base);

/// A connection to the source at `url`; records a failure and returns nullptr when it fails.
std::unique_ptr<mysql::Connection> OpenSource(const std::string& url);

/// Name → (type, default_kind) of a destination table's columns (system.columns).
using DestColumnMap = std::map<std::string, std::pair<std::string, std::string>>;

/// Asks `done` every 250 ms until it says true or `seconds` pass: its last answer.
bool WaitFor(const std::function<bool()>& done, int seconds);

class PipeTest;
/// Starts `chsync run` (`argv`, as PipeTest::RunArgs gives it) in the background, its output in
/// `log_path`. With the embedded store, --http on a free loopback port is added and the start waits
/// until the pipe holds the store and has announced the address beside it, so that the test's
/// queries reach the store through the running pipe. Records a failure and returns nullopt when it
/// does not start.
std::optional<BackgroundProcess> StartPipeInBackground(const PipeTest& pipe, std::vector<std::string> argv,
                                                       const std::string& log_path);

/// One pipe: a source database replicated into a destination with its own state directory.
class PipeTest {
 public:
  /// Source from the environment variable `source_env`; a fresh database named after `prefix`
  /// (created at the source and made the connection's current one); server ids from
  /// `server_id_base`. A kServer destination is the ClickHouse server whose URL is in `server_env`.
  void Init(const std::string& source_env, Dest dest, const std::string& prefix, int server_id_base,
            const std::string& server_env = "CHSYNC_TEST_CLICKHOUSE");
  /// Drops the test database at the source and (ClickHouse server) at the destination.
  void Cleanup();

  /// `chsync run` gets `--source urls` (e.g. "PRIMARY,REPLICA") instead of the Init source.
  void SetRunSources(const std::string& urls) { run_sources_ = urls; }
  /// From now on statements and comparisons go to the server at `url` (a promoted replica), in
  /// the test database; records a failure when it cannot connect.
  void ConnectSource(const std::string& url);

  /// Runs a statement at the source (in the test database); records a failure when it fails.
  bool Exec(const std::string& sql);
  void ExecAll(const std::vector<std::string>& statements);
  /// Runs statements at the source without writing them to the binlog (sql_log_bin = 0): their
  /// rows reach ClickHouse only if the table is copied from the source again.
  void ExecHidden(const std::vector<std::string>& statements);

  /// `chsync run` arguments for `tables`.
  std::vector<std::string> RunArgs(const std::string& tables, bool until_caught_up,
                                   const std::vector<std::string>& extra) const;
  /// `chsync run --until-caught-up` over every table of the test database.
  CommandResult Run(const std::vector<std::string>& extra = {}) const;
  /// `chsync run --until-caught-up --tables TABLES`.
  CommandResult RunTables(const std::string& tables, const std::vector<std::string>& extra = {}) const;
  CommandResult ChsyncStatus() const;

  /// "" when the destination's FINAL view of `table` equals the source.
  std::string Compare(const std::string& table, const CompareOptions& options = {}) const;
  /// Whether every one of `tables` equals the source within `seconds` (a running pipe catching up).
  bool AllEqualWithin(const std::vector<std::string>& tables, int seconds) const;
  /// Compare, asked again every 300 ms until it is "" or `seconds` pass (a running pipe catching
  /// up): the last answer.
  std::string CompareWithin(const std::string& table, int seconds) const;

  /// Rows of a destination query; records a failure and returns {} when it fails.
  TsvRows DestQuery(const std::string& sql) const;
  /// The first field of a one-row destination query ("" when there is none).
  std::string DestValue(const std::string& sql) const;
  /// Source rows as text (NULL as nullopt); records a failure and returns {} when it fails.
  std::vector<std::vector<std::optional<std::string>>> SourceQuery(const std::string& sql) const;
  std::string SourceValue(const std::string& sql) const;

  /// `db`.`table` at the destination.
  std::string DestTable(const std::string& table) const;
  /// Live rows of the destination's FINAL view of `table`.
  std::string DestCount(const std::string& table) const;
  /// Tables of the destination database, without chsync's own (`_chsync_*`).
  std::set<std::string> DestTables() const;
  DestColumnMap DestColumns(const std::string& table) const;
  /// The destination server's version as major*100+minor (1816, 2607), -1 when unknown.
  int DestVersion() const;

  mysql::Connection& conn() { return *conn_; }
  bool connected() const { return conn_ != nullptr; }
  const std::string& db() const { return db_; }
  const std::string& dest_url() const { return dest_url_; }
  const std::string& source_url() const { return source_url_; }
  const std::string& state() const { return state_; }
  Dest dest() const { return dest_; }

 private:
  std::string source_url_;
  std::string run_sources_;
  std::string dest_url_;
  Dest dest_ = Dest::kServer;
  std::string db_;
  std::string state_;
  std::string server_id_;
  /// CHSYNC_TEST_E2E_CLUSTER: the test cluster `chsync run` writes to (by hand only).
  std::string cluster_;
  std::unique_ptr<mysql::Connection> conn_;
};

/// FLUSH BINARY LOGS, then PURGE BINARY LOGS TO the new file: false unless only the current file is
/// left. Right after FLUSH the server may keep the previous file until InnoDB's binlog checkpoint
/// passes, so it tries again (for up to 10 s).
bool PurgeAllButCurrent(PipeTest& p);

/// A cluster of two shards, one node each (`nodes`, shard order): every row of
/// `database`_local.`table` is on the shard its Distributed table's sharding expression names
/// (what routing in chsync must keep), and no key is on both shards. Failures are recorded.
void ExpectRowsOnTheirShards(const std::vector<std::string>& nodes, const std::string& database,
                             const std::string& table);

}  // namespace chsync::testing
