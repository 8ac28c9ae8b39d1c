#include "pipe_harness.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <thread>

#include "common/url.h"

namespace chsync::testing {
namespace {

constexpr int kRunTimeoutMs = 240'000;

}  // namespace

std::string DestName(Dest d) {
  return d == Dest::kServer ? "ClickHouse18" : "Embedded";
}

void PrintTo(Dest d, std::ostream* os) {
  *os << DestName(d);
}

std::string UniqueName(const std::string& prefix) {
  static std::atomic<int> counter{0};
  auto ticks = std::chrono::steady_clock::now().time_since_epoch().count() % 1000000;
  return prefix + "_" + std::to_string(getpid()) + "_" + std::to_string(ticks) + "_" +
         std::to_string(++counter);
}

std::string UniqueServerId(int base) {
  static std::atomic<int> counter{0};
  return std::to_string(base + (getpid() % 100000) * 100 + (++counter % 100));
}

std::unique_ptr<mysql::Connection> OpenSource(const std::string& url) {
  auto parsed = ParseUrl(url);
  if (!parsed.ok()) {
    ADD_FAILURE() << "bad source URL: " << parsed.error().message();
    return nullptr;
  }
  auto options = mysql::OptionsFromUrl(*parsed);
  if (!options.ok()) {
    ADD_FAILURE() << options.error().message();
    return nullptr;
  }
  auto conn = mysql::Connection::Open(*options);
  if (!conn.ok()) {
    ADD_FAILURE() << "cannot connect to the source: " << conn.error().message();
    return nullptr;
  }
  return std::move(conn).value();
}

void PipeTest::Init(const std::string& source_env, Dest dest, const std::string& prefix, int server_id_base,
                    const std::string& server_env) {
  source_url_ = RequireEnv(source_env.c_str());
  if (dest == Dest::kServer) {
    dest_url_ = RequireEnv(server_env.c_str());
    // By hand, the end-to-end suites also run against a test cluster (docs/clusters.md):
    // CHSYNC_TEST_E2E_CLUSTER=sharded (or replicated) sends `chsync run` to both cluster nodes and
    // compares through node 1.
    const char* cluster = std::getenv("CHSYNC_TEST_E2E_CLUSTER");
    if (cluster != nullptr && *cluster != '\0' && server_env == "CHSYNC_TEST_CLICKHOUSE") {
      cluster_ = cluster;
      dest_url_ = RequireEnv("CHSYNC_TEST_CLICKHOUSE_NODE1");
    }
  } else {
    RequireEnv("CHSYNC_CHDB_LIB");
    dest_url_ = "file:" + MakeTempDir(prefix + "-store") + "/store";
  }
  dest_ = dest;
  db_ = UniqueName(prefix);
  state_ = MakeTempDir(prefix + "-state");
  server_id_ = UniqueServerId(server_id_base);
  conn_ = OpenSource(source_url_);
  if (conn_ != nullptr) {
    Exec("CREATE DATABASE " + db_);
    Exec("USE " + db_);
  }
}

void PipeTest::Cleanup() {
  if (conn_ != nullptr && !db_.empty()) (void)conn_->Execute("DROP DATABASE IF EXISTS " + db_);
  if (dest_ == Dest::kServer && !dest_url_.empty() && !db_.empty()) {
    std::string error;
    (void)QueryDestination(dest_url_, "DROP DATABASE IF EXISTS " + db_, &error);
    if (!cluster_.empty()) {
      for (const std::string& db : {db_, db_ + "_local"})
        (void)QueryDestination(dest_url_, "DROP DATABASE IF EXISTS `" + db + "` ON CLUSTER " + cluster_,
                               &error);
    }
  }
}

void PipeTest::ConnectSource(const std::string& url) {
  source_url_ = url;
  conn_ = OpenSource(url);
  if (conn_ != nullptr) Exec("USE " + db_);
}

bool PipeTest::Exec(const std::string& sql) {
  if (conn_ == nullptr) return false;
  Status st = conn_->Execute(sql);
  if (!st.ok()) {
    ADD_FAILURE() << "at the source: " << sql.substr(0, 500) << ": " << st.error().message();
    return false;
  }
  return true;
}

void PipeTest::ExecAll(const std::vector<std::string>& statements) {
  for (const std::string& s : statements) Exec(s);
}

void PipeTest::ExecHidden(const std::vector<std::string>& statements) {
  Exec("SET SESSION sql_log_bin = 0");
  ExecAll(statements);
  Exec("SET SESSION sql_log_bin = 1");
}

std::vector<std::string> PipeTest::RunArgs(const std::string& tables, bool until_caught_up,
                                           const std::vector<std::string>& extra) const {
  std::vector<std::string> argv = {
      ChsyncBinary(), "run",     "--source",    run_sources_.empty() ? source_url_ : run_sources_,
      "--dest",       dest_url_, "--tables",    tables,
      "--state",      state_,    "--server-id", server_id_};
  if (until_caught_up) argv.emplace_back("--until-caught-up");
  if (!cluster_.empty()) {
    argv[5] = RequireEnv("CHSYNC_TEST_CLICKHOUSE_NODES");
    argv.insert(argv.end(),
                {"--dest-cluster", cluster_, "--dest-replication-path",
                 "/clickhouse/tables/{" + std::string(cluster_ == "sharded" ? "sharded" : "replicated") +
                     "_shard}/{database}/{table}"});
  }
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

CommandResult PipeTest::Run(const std::vector<std::string>& extra) const {
  return RunCommand(RunArgs(db_ + ".*", true, extra), kRunTimeoutMs);
}

CommandResult PipeTest::RunTables(const std::string& tables, const std::vector<std::string>& extra) const {
  return RunCommand(RunArgs(tables, true, extra), kRunTimeoutMs);
}

CommandResult PipeTest::ChsyncStatus() const {
  return RunCommand({ChsyncBinary(), "status", "--state", state_}, 60'000);
}

std::string PipeTest::Compare(const std::string& table, const CompareOptions& options) const {
  if (conn_ == nullptr) return "no source connection";
  return CompareTable(*conn_, dest_url_, db_, table, options);
}

bool PipeTest::AllEqualWithin(const std::vector<std::string>& tables, int seconds) const {
  return WaitFor(
      [&] {
        for (const std::string& t : tables) {
          if (!Compare(t).empty()) return false;
        }
        return true;
      },
      seconds);
}

std::string PipeTest::CompareWithin(const std::string& table, int seconds) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  std::string report = Compare(table);
  while (!report.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    report = Compare(table);
  }
  return report;
}

TsvRows PipeTest::DestQuery(const std::string& sql) const {
  std::string error;
  auto rows = QueryDestination(dest_url_, sql, &error);
  if (!rows.has_value()) {
    ADD_FAILURE() << "at the destination: " << sql << ": " << error;
    return {};
  }
  return *rows;
}

std::string PipeTest::DestValue(const std::string& sql) const {
  auto rows = DestQuery(sql);
  if (rows.empty() || rows[0].empty()) return "";
  return rows[0][0].value_or("NULL");
}

std::vector<std::vector<std::optional<std::string>>> PipeTest::SourceQuery(const std::string& sql) const {
  if (conn_ == nullptr) return {};
  auto r = conn_->Query(sql);
  if (!r.ok()) {
    ADD_FAILURE() << "at the source: " << sql << ": " << r.error().message();
    return {};
  }
  return r->rows;
}

std::string PipeTest::SourceValue(const std::string& sql) const {
  auto rows = SourceQuery(sql);
  if (rows.empty() || rows[0].empty()) return "";
  return rows[0][0].value_or("NULL");
}

std::string PipeTest::DestTable(const std::string& table) const {
  return "`" + db_ + "`.`" + table + "`";
}

std::string PipeTest::DestCount(const std::string& table) const {
  return DestValue("SELECT count() FROM " + DestTable(table) + " FINAL WHERE _chsync_is_deleted = 0");
}

std::set<std::string> PipeTest::DestTables() const {
  std::set<std::string> out;
  for (const auto& r : DestQuery("SELECT name FROM system.tables WHERE database = '" + db_ + "'")) {
    std::string name = r.empty() ? "" : r[0].value_or("");
    if (name.rfind("_chsync_", 0) != 0) out.insert(name);
  }
  return out;
}

DestColumnMap PipeTest::DestColumns(const std::string& table) const {
  DestColumnMap out;
  for (const auto& r : DestQuery("SELECT name, type, default_kind FROM system.columns WHERE database = '" +
                                 db_ + "' AND table = '" + table + "'")) {
    if (r.size() == 3) out[r[0].value_or("")] = {r[1].value_or(""), r[2].value_or("")};
  }
  return out;
}

int PipeTest::DestVersion() const {
  std::string error;
  int v = DestinationVersion(dest_url_, &error);
  if (v < 0) ADD_FAILURE() << "destination version: " << error;
  return v;
}

bool PurgeAllButCurrent(PipeTest& p) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    p.Exec("FLUSH BINARY LOGS");
    auto rows = p.SourceQuery("SHOW BINARY LOGS");
    if (rows.empty()) return false;
    const std::string last = rows.back()[0].value_or("");
    p.Exec("PURGE BINARY LOGS TO '" + last + "'");
    if (p.SourceQuery("SHOW BINARY LOGS").size() == 1) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

void ExpectRowsOnTheirShards(const std::vector<std::string>& nodes, const std::string& database,
                             const std::string& table) {
  auto value = [&](const std::string& node, const std::string& sql) -> std::string {
    std::string error;
    auto rows = QueryDestination(node, sql, &error);
    if (!rows) {
      ADD_FAILURE() << "ClickHouse at " << node << ": " << sql << ": " << error;
      return "";
    }
    return rows->empty() || rows->front().empty() ? "" : rows->front().front().value_or("");
  };
  const std::string local = "`" + database + "_local`.`" + table + "`";
  const std::string key = value(nodes.at(0), "SELECT sorting_key FROM system.tables WHERE database = '" +
                                                 database + "_local' AND name = '" + table + "'");
  ASSERT_FALSE(key.empty()) << table;
  for (size_t n = 0; n < nodes.size(); ++n) {
    EXPECT_EQ(value(nodes[n], "SELECT count() FROM " + local + " WHERE cityHash64(toString(tuple(" + key +
                                  "))) % 2 != " + std::to_string(n)),
              "0")
        << "rows of " << table << " on shard " << n + 1 << " that belong to the other shard";
  }
  std::set<std::string> keys;
  size_t both = 0;
  for (const std::string& node : nodes) {
    std::string error;
    auto rows = QueryDestination(node, "SELECT DISTINCT toString(tuple(" + key + ")) FROM " + local, &error);
    ASSERT_TRUE(rows.has_value()) << error;
    for (const auto& row : *rows) both += keys.insert(row.at(0).value_or("")).second ? 0 : 1;
  }
  EXPECT_EQ(both, 0u) << table << ": keys with versions on both shards";
}

bool WaitFor(const std::function<bool()>& done, int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return done();
}

std::optional<BackgroundProcess> StartPipeInBackground(const PipeTest& pipe, std::vector<std::string> argv,
                                                       const std::string& log_path) {
  if (pipe.dest() == Dest::kEmbedded) {
    argv.push_back("--http");
    argv.push_back("127.0.0.1:" + std::to_string(FreeLoopbackPort()));
  }
  std::optional<BackgroundProcess> run = BackgroundProcess::Start(argv, log_path);
  if (!run || pipe.dest() != Dest::kEmbedded) return run;
  // Until the pipe holds the store and announces its --http address beside it, a query would open
  // the store itself and keep the pipe from opening it.
  const std::string announced = pipe.dest_url().substr(std::string("file:").size()) + ".chsync-http";
  auto announced_by_it = [&] {
    std::ifstream in(announced);
    std::string url;
    long pid = 0;
    return static_cast<bool>(in >> url >> pid) && pid == run->pid();
  };
  if (!WaitFor([&] { return announced_by_it() || !run->Running(); }, 60) || !run->Running()) {
    ADD_FAILURE() << "chsync run did not announce its --http address:\n" << run->Log();
    return std::nullopt;
  }
  return run;
}

}  // namespace chsync::testing
