#include "cli/observe.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "cli/version.h"
#include "clickhouse/connection.h"
#include "common/log.h"
#include "common/url.h"
#include "http/listen_address.h"
#include "http/read_only.h"
#include "http/server.h"
#include "http/status_page.h"
#include "metrics/pipe_metrics.h"
#include "state/run_status.h"

namespace chsync::cli {
namespace {

constexpr auto kSampleEvery = std::chrono::seconds(10);
constexpr size_t kHistoryPoints = 360;  // one hour at kSampleEvery

uint64_t NowMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

double SumOf(const std::vector<metrics::Registry::Sample>& samples) {
  double sum = 0;
  for (const auto& s : samples) sum += s.value;
  return sum;
}

/// The embedded store path of a `file:PATH` destination; empty for a server.
std::string StorePath(const std::string& dest) {
  auto url = ParseUrl(dest);
  if (!url.ok() || url->scheme != "file") return "";
  return url->path;
}

}  // namespace

struct Observer::Impl {
  pipe::PipeConfig config;
  std::unique_ptr<http::Server> server;
  std::string discovery_file;

  // Lag and throughput history for the status page's charts.
  std::mutex history_mutex;
  std::deque<http::Point> lag_series, rate_series;
  double last_rows = -1;
  uint64_t last_rows_ms = 0;

  std::mutex stop_mutex;
  std::condition_variable stop_cv;
  bool stopping = false;
  std::thread sampler;

  // The destination, opened on the first query; one query at a time.
  std::mutex query_mutex;
  std::unique_ptr<clickhouse::Connection> dest;

  void Sample() {
    metrics::Registry& registry = pipe::Metrics().registry;
    uint64_t now = NowMs();
    double lag = registry.Value("chsync_replication_lag_seconds");
    double rows = SumOf(registry.Samples("chsync_row_changes_total"));
    std::lock_guard lock(history_mutex);
    if (!std::isnan(lag)) lag_series.push_back({now, lag});
    if (last_rows >= 0 && now > last_rows_ms) {
      rate_series.push_back({now, (rows - last_rows) * 1000.0 / static_cast<double>(now - last_rows_ms)});
    }
    last_rows = rows;
    last_rows_ms = now;
    while (lag_series.size() > kHistoryPoints) lag_series.pop_front();
    while (rate_series.size() > kHistoryPoints) rate_series.pop_front();
  }

  void SampleLoop() {
    std::unique_lock lock(stop_mutex);
    while (!stopping) {
      lock.unlock();
      Sample();
      lock.lock();
      stop_cv.wait_for(lock, kSampleEvery, [this] { return stopping; });
    }
  }

  http::ReadyState Ready() const {
    pipe::RunStatus status = pipe::LiveRunStatus();
    if (status.phase != "streaming") {
      return {false, fmt::format("not streaming: {}\n", status.phase.empty() ? "starting" : status.phase)};
    }
    double lag = pipe::Metrics().registry.Value("chsync_replication_lag_seconds");
    if (std::isnan(lag) || lag > config.http_ready_max_lag_s) {
      return {false, fmt::format("streaming, but {:.1f} s behind the source (ready at most {:.1f} s)\n", lag,
                                 config.http_ready_max_lag_s)};
    }
    return {true, "ready\n"};
  }

  std::string StatusPage() {
    metrics::Registry& registry = pipe::Metrics().registry;
    pipe::RunStatus status = pipe::LiveRunStatus();
    http::StatusPageData page;
    page.title = config.state.empty() ? "chsync" : fmt::format("chsync · {}", config.state);
    page.phase = status.phase.empty() ? "starting" : status.phase;
    page.source = status.source;
    page.destination = status.destination;
    page.position = status.position;
    page.gtid_position = status.gtid_position;
    page.lag_seconds = registry.Value("chsync_replication_lag_seconds");
    page.seconds_since_last_event = registry.Value("chsync_seconds_since_last_event");
    page.rows_applied = status.rows_applied;
    page.transactions = status.transactions;
    page.started_at_ms = static_cast<uint64_t>(registry.Value("chsync_process_start_time_seconds") * 1000);
    page.updated_at_ms = status.updated_at_ms;
    page.last_error = status.last_error;
    page.retention_headroom_bytes = registry.Value("chsync_binlog_retention_headroom_bytes");
    page.retention_headroom_seconds = registry.Value("chsync_binlog_retention_headroom_seconds");
    {
      std::lock_guard lock(history_mutex);
      page.lag_series.assign(lag_series.begin(), lag_series.end());
      page.rate_series.assign(rate_series.begin(), rate_series.end());
      // The charts end with the values of this moment, not of the last sample (up to 10 s old).
      uint64_t now = NowMs();
      if (std::isfinite(page.lag_seconds)) page.lag_series.push_back({now, page.lag_seconds});
      if (last_rows >= 0 && now >= last_rows_ms + 1000) {
        double rows = SumOf(registry.Samples("chsync_row_changes_total"));
        page.rate_series.push_back(
            {now, (rows - last_rows) * 1000.0 / static_cast<double>(now - last_rows_ms)});
      }
    }
    // One row per label of the table metrics (a ClickHouse table, or a source table with
    // http.metrics_per_source_table), in the most urgent state of its source tables.
    std::map<std::string, http::TableRow> tables;
    for (const auto& s : registry.Samples("chsync_row_changes_total")) {
      if (s.labels.empty()) continue;
      tables[s.labels[0]].rows_applied += static_cast<uint64_t>(s.value);
    }
    for (const auto& s : registry.Samples("chsync_snapshot_rows_copied")) {
      if (!s.labels.empty()) tables[s.labels[0]].snapshot_copied = static_cast<uint64_t>(s.value);
    }
    for (const auto& s : registry.Samples("chsync_snapshot_rows_estimated")) {
      if (!s.labels.empty()) tables[s.labels[0]].snapshot_estimated = static_cast<uint64_t>(s.value);
    }
    std::map<std::string, uint64_t> states;
    for (const pipe::LiveTable& live : pipe::LiveTables()) {
      http::TableRow& row = tables[pipe::Metrics().TableLabel(live.name)];
      ++row.sources;
      if (row.state.empty() || http::TableStateRank(live.state) < http::TableStateRank(row.state)) {
        row.state = live.state;
      }
      ++states[live.state];
      if (live.state == "parked" || live.state == "paused") page.held.push_back({live.name, live.state});
    }
    page.table_states.assign(states.begin(), states.end());
    for (auto& [name, row] : tables) {
      row.name = name;
      if (row.state.empty()) row.state = page.phase == "snapshot" ? "snapshot" : "streaming";
      page.tables.push_back(row);
    }
    for (const auto& change : status.schema_changes) {
      page.schema_changes.push_back(
          {change.at_ms, change.position, change.table, change.statement, change.actions});
    }
    return http::RenderStatusPage(page);
  }

  http::QueryResult Query(const http::QueryRequest& request) {
    if (!http::IsReadOnlyStatement(request.sql)) {
      return {false,
              "Code: 164. DB::Exception: chsync serves read-only queries (SELECT, SHOW, DESCRIBE, EXISTS, "
              "EXPLAIN, WITH); stop the pipe to change the store. (READONLY)\n",
              164, 403};
    }
    std::lock_guard lock(query_mutex);
    if (dest == nullptr) {
      clickhouse::ConnectOptions options;
      options.retry.max_attempts = 1;
      auto opened = clickhouse::Connect(config.dest, options);
      if (!opened.ok()) {
        return {false, fmt::format("Code: 210. DB::Exception: {}\n", opened.error().message()), 210, 500};
      }
      dest = std::move(*opened);
    }
    clickhouse::RequestOptions options;
    if (!request.database.empty()) options.settings.emplace_back("database", request.database);
    auto out = dest->Query(request.sql,
                           request.default_format.empty() ? "TabSeparated" : request.default_format, options);
    if (!out.ok()) {
      int code = out.error().server_code() != 0 ? out.error().server_code() : 1000;
      std::string text = out.error().message();
      return {false, fmt::format("Code: {}. DB::Exception: {}\n", code, text), code, 500};
    }
    return {true, std::move(*out), 0, 200};
  }
};

Result<std::unique_ptr<Observer>> Observer::Start(const pipe::PipeConfig& config) {
  auto address = http::ParseListenAddress(config.http_listen);
  if (!address.ok()) {
    return Error(ErrorKind::kConfig,
                 fmt::format("--http {}: {}", config.http_listen, address.error().message()));
  }
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  Impl* self = impl.get();
  http::Handlers handlers;
  pipe::Metrics().SetBuildCommit(BuildCommit());
  handlers.metrics = [] { return pipe::Metrics().registry.Render(); };
  handlers.ready = [self] { return self->Ready(); };
  handlers.status_page = [self] { return self->StatusPage(); };
  handlers.query = [self](const http::QueryRequest& request) { return self->Query(request); };
  auto server = http::Server::Start(*address, std::move(handlers));
  if (!server.ok()) {
    return Error(ErrorKind::kConfig,
                 fmt::format("--http {}: {}", config.http_listen, server.error().message()));
  }
  impl->server = std::move(*server);
  impl->sampler = std::thread([self] { self->SampleLoop(); });

  std::unique_ptr<Observer> observer(new Observer(std::move(impl)));
  log::Info("serving metrics, health, the status page and read-only queries at {}", observer->url());

  std::string store = StorePath(config.dest);
  if (!store.empty()) {
    std::string file = DiscoveryFilePath(store);
    std::string tmp = file + ".tmp";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
      // A wildcard address is reached on loopback.
      std::string url = observer->url();
      for (const char* any : {"0.0.0.0", "[::]"}) {
        if (size_t at = url.find(any); at != std::string::npos)
          url.replace(at, std::strlen(any), "127.0.0.1");
      }
      std::string text = fmt::format("{}\n{}\n", url, ::getpid());
      bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
      ::close(fd);
      if (written && ::rename(tmp.c_str(), file.c_str()) == 0) observer->impl_->discovery_file = file;
    }
    if (observer->impl_->discovery_file.empty()) {
      log::Warn("could not write {} ({}); `chsync query --dest file:{}` will not find this pipe", file,
                std::strerror(errno), store);
    }
  }
  return observer;
}

Observer::Observer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Observer::~Observer() {
  {
    std::lock_guard lock(impl_->stop_mutex);
    impl_->stopping = true;
  }
  impl_->stop_cv.notify_all();
  if (impl_->sampler.joinable()) impl_->sampler.join();
  impl_->server->Stop();
  if (!impl_->discovery_file.empty()) ::unlink(impl_->discovery_file.c_str());
}

std::string Observer::url() const {
  const http::ListenAddress& address = impl_->server->address();
  bool v6 = address.host.find(':') != std::string::npos;
  return v6 ? fmt::format("http://[{}]:{}/", address.host, impl_->server->port())
            : fmt::format("http://{}:{}/", address.host, impl_->server->port());
}

}  // namespace chsync::cli
