// Issue 16 end to end: `chsync run --http` watched the way an operator watches it. A real
// Prometheus (Debian's) scrapes /metrics and must hold the row counts the test wrote; the lag
// goes to 0 once caught up; /healthz and /readyz answer as a Kubernetes probe expects; a headless
// Chromium renders the status page; `chsync query` and curl query the embedded store while the
// pipe holds it, read-only.

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
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
using testing::DestName;
using testing::MakeTempDir;
using testing::PipeTest;
using testing::RunCommand;

constexpr int kServerIdBase = 16000000;

int FreePort() {
  return testing::FreeLoopbackPort();
}

struct HttpReply {
  int status = 0;
  std::string body;
};

/// One request with curl (what an operator would type); status 0 when curl failed.
HttpReply Curl(const std::string& url, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv = {"/usr/bin/curl", "-sS", "--max-time", "20", "-w", "\n%{http_code}"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back(url);
  CommandResult r = RunCommand(argv, 30'000);
  HttpReply reply;
  size_t nl = r.out.rfind('\n');
  if (r.exit_code != 0 || nl == std::string::npos) return reply;
  reply.body = r.out.substr(0, nl);
  reply.status = std::atoi(r.out.c_str() + nl + 1);
  return reply;
}

/// Polls until `ok()` holds or `seconds` pass.
template <typename F>
bool WaitFor(F ok, int seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ok()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return ok();
}

/// Debian's Prometheus, scraping one target every second, on a port of its own.
class PrometheusServer {
 public:
  bool Start(const std::string& target) {
    dir_ = MakeTempDir("prometheus");
    port_ = FreePort();
    std::ofstream(dir_ + "/prometheus.yml") << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                                            << "scrape_configs:\n  - job_name: chsync\n    static_configs:\n"
                                            << "      - targets: ['" << target << "']\n";
    auto started = BackgroundProcess::Start(
        {"/usr/bin/prometheus", "--config.file=" + dir_ + "/prometheus.yml",
         "--storage.tsdb.path=" + dir_ + "/data", "--web.listen-address=127.0.0.1:" + std::to_string(port_)},
        dir_ + "/prometheus.log");
    if (!started) return false;
    process_.emplace(std::move(*started));
    return WaitFor([&] { return Curl(Url() + "-/ready").status == 200; }, 60);
  }
  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }
  /// The value of an instant query that returns one series; nullopt when it returns none.
  std::optional<double> Query(const std::string& promql) const {
    HttpReply r = Curl(Url() + "api/v1/query", {"-G", "--data-urlencode", "query=" + promql});
    auto j = nlohmann::json::parse(r.body, nullptr, false);
    if (j.is_discarded() || j.value("status", "") != "success") return std::nullopt;
    const auto& result = j["data"]["result"];
    if (!result.is_array() || result.size() != 1) return std::nullopt;
    return std::stod(result[0]["value"][1].get<std::string>());
  }
  std::string Log() const { return process_ ? process_->Log() : ""; }

 private:
  std::string dir_;
  int port_ = 0;
  std::optional<BackgroundProcess> process_;
};

class ObserveTest : public ::testing::TestWithParam<Dest> {
 protected:
  void SetUp() override { p_.Init("CHSYNC_TEST_MYSQL_FULL", GetParam(), "observe", kServerIdBase); }
  void TearDown() override { p_.Cleanup(); }

  /// Starts `chsync run --http` over the test database; the URL it serves, or "" on failure.
  std::string StartRun() {
    port_ = FreePort();
    auto started = BackgroundProcess::Start(
        p_.RunArgs(p_.db() + ".*", false, {"--http", "127.0.0.1:" + std::to_string(port_)}),
        MakeTempDir("observe-log") + "/run.log");
    if (!started) return "";
    run_.emplace(std::move(*started));
    std::string url = "http://127.0.0.1:" + std::to_string(port_) + "/";
    if (!WaitFor([&] { return Curl(url + "healthz").status == 200 || !run_->Running(); }, 60)) return "";
    return run_->Running() ? url : "";
  }

  PipeTest p_;
  int port_ = 0;
  std::optional<BackgroundProcess> run_;
};

TEST_P(ObserveTest, PrometheusScrapesWhatThePipeApplied) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"USE " + p_.db(), "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))"});
  std::string url = StartRun();
  ASSERT_FALSE(url.empty()) << (run_ ? run_->Log() : "no process");
  const std::string table = p_.db() + ".t";

  PrometheusServer prometheus;
  ASSERT_TRUE(prometheus.Start("127.0.0.1:" + std::to_string(port_))) << prometheus.Log();
  // Streaming (the empty table copied): the rows below come through the binlog.
  ASSERT_TRUE(WaitFor([&] { return Curl(url + "readyz").status == 200; }, 90)) << run_->Log();

  p_.ExecAll({"INSERT INTO t SELECT seq, CONCAT('v', seq) FROM seq_1_to_300",
              "UPDATE t SET v = 'changed' WHERE id <= 40", "DELETE FROM t WHERE id > 275"});
  auto series = [&](const std::string& kind) {
    return "chsync_row_changes_total{table=\"" + table + "\",kind=\"" + kind + "\"}";
  };
  // Prometheus must have scraped the counts (not only chsync serving them).
  bool scraped = WaitFor(
      [&] {
        return prometheus.Query(series("insert")) == 300.0 && prometheus.Query(series("update")) == 40.0 &&
               prometheus.Query(series("delete")) == 25.0;
      },
      90);
  std::string metrics = Curl(url + "metrics").body;
  EXPECT_TRUE(scraped) << "Prometheus saw insert=" << prometheus.Query(series("insert")).value_or(-1)
                       << " update=" << prometheus.Query(series("update")).value_or(-1)
                       << " delete=" << prometheus.Query(series("delete")).value_or(-1) << "\n"
                       << metrics;
  EXPECT_EQ(prometheus.Query("up{job=\"chsync\"}"), 1.0);
  EXPECT_TRUE(WaitFor([&] { return prometheus.Query("chsync_replication_lag_seconds") == 0.0; }, 60))
      << "lag did not reach 0 once caught up:\n"
      << Curl(url + "metrics").body;
  EXPECT_EQ(prometheus.Query("chsync_pipe_state{state=\"streaming\"}"), 1.0);
  EXPECT_GT(prometheus.Query("chsync_binlog_events_total").value_or(0), 0.0);
  EXPECT_GT(prometheus.Query("chsync_insert_duration_seconds_count").value_or(0), 0.0);
  // chsync_build_info names the commit `chsync --version` names.
  CommandResult version = RunCommand({testing::ChsyncBinary(), "--version"});
  const size_t commit_at = version.out.find("(commit ");
  ASSERT_NE(commit_at, std::string::npos) << version.Describe();
  const std::string commit =
      version.out.substr(commit_at + 8, version.out.find(')', commit_at) - commit_at - 8);
  EXPECT_NE(metrics.find("chsync_build_info{version=\"0.1.0\",commit=\"" + commit + "\"} 1"),
            std::string::npos)
      << "commit " << commit << "\n"
      << metrics;

  // Every metric has HELP and TYPE lines (what promtool checks).
  std::istringstream lines(metrics);
  std::string line, last_family;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::string name = line.substr(0, line.find_first_of("{ "));
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      if (name.size() > strlen(suffix) && name.ends_with(suffix) &&
          metrics.find("# TYPE " + name + " ") == std::string::npos) {
        name.resize(name.size() - strlen(suffix));
      }
    }
    EXPECT_NE(metrics.find("# HELP " + name + " "), std::string::npos) << name;
    EXPECT_NE(metrics.find("# TYPE " + name + " "), std::string::npos) << name;
  }

  // promtool (Prometheus' own checker) accepts the exposition text.
  std::string dir = MakeTempDir("observe-metrics");
  std::ofstream(dir + "/metrics.txt") << metrics;
  CommandResult lint =
      RunCommand({"/bin/sh", "-c", "/usr/bin/promtool check metrics < " + dir + "/metrics.txt"});
  EXPECT_EQ(lint.exit_code, 0) << lint.Describe();

  // The documentation, the alert rules and the dashboard name only metrics chsync exports.
  CommandResult rules = RunCommand({"/usr/bin/promtool", "check", "rules",
                                    std::string(CHSYNC_SOURCE_DIR) + "/docs/prometheus-alerts.yml"});
  EXPECT_EQ(rules.exit_code, 0) << rules.Describe();
  for (const char* doc :
       {"docs/operations.md", "docs/prometheus-alerts.yml", "docs/grafana-dashboard.json"}) {
    std::ifstream in(std::string(CHSYNC_SOURCE_DIR) + "/" + doc);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_FALSE(text.empty()) << doc;
    std::regex name_re("chsync_[a-z_]+");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), name_re); it != std::sregex_iterator();
         ++it) {
      std::string name = it->str();
      if (name.rfind("chsync_test", 0) == 0 || name == "chsync_is_deleted" || name == "chsync_version")
        continue;
      for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        if (name.ends_with(suffix)) name.resize(name.size() - strlen(suffix));
      }
      EXPECT_NE(metrics.find("# TYPE " + name + " "), std::string::npos) << doc << " names " << name;
    }
  }

  EXPECT_EQ(run_->SignalAndWait(SIGTERM, 60'000), 0) << run_->Log();
  EXPECT_EQ(p_.Compare("t"), "");
}

TEST_P(ObserveTest, ProbesStatusPageAndLiveQueries) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"USE " + p_.db(), "CREATE TABLE orders (id INT PRIMARY KEY, amount DECIMAL(10,2))",
              "INSERT INTO orders SELECT seq, seq / 4 FROM seq_1_to_1000"});
  std::string url = StartRun();
  ASSERT_FALSE(url.empty()) << (run_ ? run_->Log() : "no process");

  EXPECT_EQ(Curl(url + "healthz").status, 200);
  EXPECT_TRUE(WaitFor([&] { return Curl(url + "readyz").status == 200; }, 90))
      << Curl(url + "readyz").body << run_->Log();
  EXPECT_EQ(Curl(url + "no-such-page").status, 404);
  EXPECT_EQ(Curl(url + "metrics", {"-X", "DELETE"}).status, 405);

  p_.ExecAll({"INSERT INTO orders VALUES (1001, 12.50)", "ALTER TABLE orders ADD COLUMN note VARCHAR(20)",
              "UPDATE orders SET note = 'vip' WHERE id = 1001"});
  const std::string count_sql =
      "SELECT count(), sum(amount) FROM " + p_.DestTable("orders") + " FINAL WHERE _chsync_is_deleted = 0";

  // `chsync query` finds the running pipe (embedded: the store is locked by it) and asks it.
  std::string error;
  EXPECT_TRUE(WaitFor(
      [&] {
        auto rows = testing::QueryDestination(p_.dest_url(), count_sql, &error);
        return rows && rows->size() == 1 && (*rows)[0][0] == "1001";
      },
      60))
      << error;
  // curl speaks ClickHouse's HTTP interface to it: GET with ?query=, POST with the body.
  HttpReply got = Curl(url, {"-G", "--data-urlencode", "query=SELECT 1 + 1"});
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.body, "2\n");
  HttpReply posted = Curl(url + "?default_format=JSONEachRow", {"--data-binary", "SELECT 7 AS x"});
  EXPECT_EQ(posted.status, 200);
  EXPECT_EQ(posted.body, "{\"x\":7}\n");
  // Read-only: a write is refused with ClickHouse's READONLY code, the pipe goes on.
  HttpReply write = Curl(url, {"--data-binary", "DROP TABLE " + p_.DestTable("orders")});
  EXPECT_EQ(write.status, 403);
  EXPECT_NE(write.body.find("Code: 164"), std::string::npos) << write.body;
  // A failing query returns ClickHouse's error text and code.
  HttpReply bad = Curl(url, {"--data-binary", "SELECT no_such_column FROM system.one"});
  EXPECT_EQ(bad.status, 500);
  EXPECT_NE(bad.body.find("Code: 47"), std::string::npos) << bad.body;
  EXPECT_TRUE(run_->Running()) << run_->Log();

  // The status page, rendered by a real browser.
  std::string dir = MakeTempDir("observe-page");
  CommandResult dom = RunCommand({"/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu",
                                  "--virtual-time-budget=3000", "--dump-dom", url},
                                 120'000);
  ASSERT_EQ(dom.exit_code, 0) << dom.Describe();
  EXPECT_NE(dom.out.find(p_.db() + ".orders"), std::string::npos) << dom.out;
  EXPECT_NE(dom.out.find("streaming"), std::string::npos);
  EXPECT_NE(dom.out.find("ADD COLUMN note"), std::string::npos) << "schema-change log missing";
  EXPECT_NE(dom.out.find("<svg"), std::string::npos) << "no chart";
  EXPECT_NE(dom.out.find("<polyline"), std::string::npos) << "the lag chart has no data";
  CommandResult shot = RunCommand({"/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu",
                                   "--window-size=1280,1600", "--screenshot=" + dir + "/status.png", url},
                                  120'000);
  ASSERT_EQ(shot.exit_code, 0) << shot.Describe();
  std::ifstream png(dir + "/status.png", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(png)), std::istreambuf_iterator<char>());
  EXPECT_GT(bytes.size(), 10000u) << "screenshot too small: a blank page?";
  EXPECT_EQ(bytes.substr(1, 3), "PNG");

  EXPECT_EQ(run_->SignalAndWait(SIGTERM, 60'000), 0) << run_->Log();
  // Stopped: `chsync query` opens the store itself again.
  auto rows = testing::QueryDestination(p_.dest_url(), count_sql, &error);
  ASSERT_TRUE(rows.has_value()) << error;
  EXPECT_EQ((*rows)[0][0], "1001");
  EXPECT_EQ(p_.Compare("orders"), "");
}

INSTANTIATE_TEST_SUITE_P(Destinations, ObserveTest, ::testing::Values(Dest::kServer, Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& i) { return DestName(i.param); });

TEST(ObserveTest, BadListenAddressIsAClearUsageError) {
  std::string state = MakeTempDir("observe-bad");
  CommandResult r = RunCommand({testing::ChsyncBinary(), "run", "--source", "mysql://u@127.0.0.1:1", "--dest",
                                "file:" + state + "/store", "--state", state, "--http", "127.0.0.1:notaport"},
                               30'000);
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  EXPECT_NE(r.err.find("--http"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace chsync
