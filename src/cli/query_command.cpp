// `chsync query --dest URL "SQL"`: runs one statement on a ClickHouse destination (a server over
// HTTP or an embedded chDB store) and prints its output, TabSeparated by default. This is how
// users look into an embedded store; while `chsync run --http` writes to it, the query goes through
// that pipe (cli/observe.h). Exit 0 on success, 1 when the statement fails, 2 on bad usage.

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>

#include "cli/command.h"
#include "cli/live_pipe.h"
#include "clickhouse/cluster.h"
#include "clickhouse/connection.h"
#include "common/url.h"

namespace chsync::cli {
namespace {

struct QueryOptions {
  std::string dest;
  std::string sql;
  std::string format = "TabSeparated";
};

int RunQuery(const QueryOptions& o) {
  for (const std::string& text : clickhouse::SplitUrls(o.dest)) {
    auto url = ParseUrl(text);
    if (!url.ok()) {
      fmt::print(stderr, "chsync query: --dest: {}\n", url.error().message());
      return kExitUsage;
    }
  }
  std::string sql = o.sql;
  if (sql == "-") sql.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  if (sql.find_first_not_of(" \t\r\n;") == std::string::npos) {
    fmt::print(stderr, "chsync query: no statement given\n");
    return kExitUsage;
  }
  clickhouse::ConnectOptions options;
  // An interactive command reports at once; with several nodes, each is tried once.
  options.retry.max_attempts = static_cast<int>(std::max<size_t>(1, clickhouse::SplitUrls(o.dest).size()));
  // An embedded store that a running pipe holds is queried through that pipe (`run --http`).
  std::optional<std::string> live;
  if (auto url = ParseUrl(o.dest); url.ok() && url->scheme == "file") live = FindLivePipe(url->path);
  Result<std::string> out = Error(ErrorKind::kInternal, "no query ran");
  bool asked_pipe = false;
  if (live) {
    auto via = clickhouse::Connect(*live, options);
    if (via.ok()) {
      out = (*via)->Query(sql, o.format);
      // A pipe that stopped since it wrote its discovery file: open the store instead.
      asked_pipe = out.ok() || out.error().kind() != ErrorKind::kNetwork;
    }
  }
  if (!asked_pipe) {
    auto conn = clickhouse::Connect(o.dest, options);
    if (!conn.ok()) {
      fmt::print(stderr, "chsync query: {}\n", conn.error().message());
      if (live || conn.error().kind() == ErrorKind::kUsage) {
        return conn.error().kind() == ErrorKind::kUsage ? kExitUsage : kExitFailure;
      }
      if (auto url = ParseUrl(o.dest); url.ok() && url->scheme == "file") {
        fmt::print(
            stderr,
            "chsync query: if `chsync run` is writing to this store, start it with --http 127.0.0.1:PORT: "
            "`chsync query` then asks the running pipe (docs/operations.md)\n");
      }
      return kExitFailure;
    }
    out = (*conn)->Query(sql, o.format);
  }
  if (!out.ok()) {
    fmt::print(stderr, "chsync query: {}\n", out.error().message());
    return kExitFailure;
  }
  std::fwrite(out->data(), 1, out->size(), stdout);
  std::fflush(stdout);
  return kExitOk;
}

void AddQueryCommand(CLI::App& app, RunFunction& run) {
  auto options = std::make_shared<QueryOptions>();
  CLI::App* sub = app.add_subcommand(
      "query",
      "Run one SQL statement on a ClickHouse destination (server or embedded store) and print the result");
  sub->add_option(
         "--dest", options->dest,
         "destination: http(s)://USER@HOST:PORT (password in CHSYNC_DEST_PASSWORD) or file:PATH (embedded)")
      ->required();
  sub->add_option("sql", options->sql, "the statement ('-' reads it from stdin)")->required();
  sub->add_option("--format", options->format, "ClickHouse output format (default TabSeparated)");
  sub->callback([options, &run] { run = [options] { return RunQuery(*options); }; });
}

const CommandRegistration kRegistration{60, &AddQueryCommand};

}  // namespace
}  // namespace chsync::cli
