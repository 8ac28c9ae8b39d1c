// `chsync verify --source URL --dest URL [--tables …] [--state DIR] [--chunk-rows N]`: compares each
// table at the source with its ClickHouse FINAL view, chunk by chunk, each database computing the
// counts and checksums itself, and prints the rows that differ (verify/verifier.h, docs/verify.md).
// With --state (the pipe's state directory, read without its lock) a differing chunk is read again
// once the running pipe has passed the position it was read at, so lag is not a difference.
// Exit 0 when every table is equal, 1 when one differs (or verify failed), 2 on bad usage.

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli/command.h"
#include "cli/live_pipe.h"
#include "clickhouse/cluster.h"
#include "clickhouse/connection.h"
#include "common/url.h"
#include "config/config.h"
#include "mysql/connection.h"
#include "mysql/source_set.h"
#include "verify/verifier.h"

namespace chsync::cli {
namespace {

std::atomic<bool> g_verify_stop{false};

extern "C" void OnVerifyStopSignal(int /*signal*/) {
  g_verify_stop.store(true);
}

struct VerifyFlags {
  std::string config_file;
  std::optional<std::string> source, dest, tables, state, dest_database;
  uint64_t chunk_rows = 100'000;
  unsigned wait_s = 60;
  size_t max_rows = 20;
  unsigned parallel = 2;
};

int RunVerify(const VerifyFlags& f) {
  pipe::PipeConfig config;
  if (!f.config_file.empty()) {
    Status loaded = pipe::LoadConfigFile(f.config_file, config);
    if (!loaded.ok()) {
      fmt::print(stderr, "chsync verify: {}\n", loaded.error().message());
      return kExitUsage;
    }
  }
  if (f.source) config.source = *f.source;
  if (f.dest) config.dest = *f.dest;
  if (Status ssh = pipe::ApplySshKeys(config); !ssh.ok()) {  // source_ssh: and dest_ssh:
    fmt::print(stderr, "chsync {}: {}\n", "verify", ssh.error().message());
    return kExitUsage;
  }
  if (f.tables) config.tables = *f.tables;
  if (f.state) config.state = *f.state;
  if (f.dest_database) config.dest_database = *f.dest_database;
  if (config.source.empty() || config.dest.empty()) {
    fmt::print(stderr, "chsync verify: give --source and --dest, or --config FILE with source: and dest:\n");
    return kExitUsage;
  }
  // Several --source servers (a primary and its replicas): the first one is compared.
  auto set = mysql::SourceSet::Parse(config.source);
  if (!set.ok() || set->urls().empty()) {
    fmt::print(stderr, "chsync verify: --source: {}\n", set.ok() ? "no URL" : set.error().message());
    return kExitUsage;
  }
  auto source_url = ParseUrl(set->urls().front());
  if (!source_url.ok()) {
    fmt::print(stderr, "chsync verify: --source: {}\n", source_url.error().message());
    return kExitUsage;
  }
  auto source_options = mysql::OptionsFromUrl(*source_url);
  if (!source_options.ok()) {
    fmt::print(stderr, "chsync verify: --source: {}\n", source_options.error().message());
    return kExitUsage;
  }
  for (const std::string& text : clickhouse::SplitUrls(config.dest)) {
    auto url = ParseUrl(text);
    if (!url.ok()) {
      fmt::print(stderr, "chsync verify: --dest: {}\n", url.error().message());
      return kExitUsage;
    }
  }
  std::string dest_text = config.dest;
  // An embedded store that a running pipe holds is read through that pipe (`run --http`).
  if (auto url = ParseUrl(config.dest); url.ok() && url->scheme == "file") {
    if (auto live = FindLivePipe(url->path)) dest_text = *live;
  }

  struct sigaction action {};
  action.sa_handler = OnVerifyStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  source_options->read_timeout_s = 3600;  // one chunk's checksum is one long query
  auto source = mysql::Connection::Open(*source_options);
  if (!source.ok()) {
    fmt::print(stderr, "chsync verify: {}\n", source.error().message());
    return source.error().kind() == ErrorKind::kUsage ? kExitUsage : kExitFailure;
  }
  clickhouse::ConnectOptions dest_options;
  dest_options.retry.max_attempts = 3;
  dest_options.cancel = &g_verify_stop;
  auto dest = clickhouse::Connect(dest_text, dest_options);
  if (!dest.ok()) {
    fmt::print(stderr, "chsync verify: {}\n", dest.error().message());
    if (auto url = ParseUrl(config.dest); url.ok() && url->scheme == "file" && dest_text == config.dest) {
      fmt::print(
          stderr,
          "chsync verify: if `chsync run` is writing to this store, start it with --http 127.0.0.1:PORT: "
          "`chsync verify` then reads the store through the running pipe (docs/verify.md)\n");
    }
    return dest.error().kind() == ErrorKind::kUsage ? kExitUsage : kExitFailure;
  }

  verify::VerifyOptions options;
  options.tables = config.tables;
  options.dest_database = config.dest_database;
  options.state = config.state;
  options.mappings = config.mappings.empty() ? nullptr : &config.mappings;
  options.source_name = config.source_name;
  options.datetime_fallback_text = config.datetime_fallback == pipe::PipeConfig::DateTimeFallback::kString;
  options.json_native = config.json == pipe::PipeConfig::JsonMode::kNative;
  options.chunk_rows = f.chunk_rows;
  options.wait_s = f.wait_s;
  options.max_rows_shown = f.max_rows;
  options.progress = isatty(STDERR_FILENO) != 0;
  options.stop = &g_verify_stop;
  options.parallel = f.parallel;
  options.open_dest = [dest_text, dest_options] { return clickhouse::Connect(dest_text, dest_options); };
  auto result = verify::Verify(**source, **dest, options);
  if (!result.ok()) {
    fmt::print(stderr, "chsync verify: {}\n", result.error().message());
    return result.error().kind() == ErrorKind::kUsage ? kExitUsage : kExitFailure;
  }
  size_t differing = 0;
  for (const auto& t : result->tables) differing += t.equal ? 0 : 1;
  if (differing == 0) {
    fmt::print("verify: {} table(s) equal\n", result->tables.size());
    return kExitOk;
  }
  fmt::print("verify: {} of {} table(s) differ:", differing, result->tables.size());
  for (const auto& t : result->tables) {
    if (!t.equal) fmt::print(" {} ({} rows)", t.source, t.differing_rows);
  }
  fmt::print("\n");
  return kExitFailure;
}

void AddVerifyCommand(CLI::App& app, RunFunction& run) {
  auto f = std::make_shared<VerifyFlags>();
  CLI::App* sub = app.add_subcommand(
      "verify", "Compare the source tables with their ClickHouse copies (counts, checksums, differing rows)");
  sub->add_option(
      "--source", f->source,
      "mysql://USER:PASSWORD@HOST:PORT (password also from CHSYNC_SOURCE_PASSWORD); with several, "
      "the first is compared");
  sub->add_option("--dest", f->dest,
                  "http(s)://USER:PASSWORD@HOST:PORT or file:PATH (embedded store; while `chsync run --http` "
                  "holds it, read through that pipe); password also from CHSYNC_DEST_PASSWORD");
  sub->add_option("--tables", f->tables, "tables to compare: 'db.*,db2.t,!db.tmp_*' (default: all)");
  sub->add_option(
      "--state", f->state,
      "the pipe's state directory: its column mapping, and lag told from differences while it runs");
  sub->add_option("--config", f->config_file, "the pipe's YAML configuration file (flags override it)");
  sub->add_option("--dest-database", f->dest_database,
                  "destination database for every table (default: named like each source database)");
  sub->add_option("--chunk-rows", f->chunk_rows, "source rows per compared chunk (default 100000)")
      ->check(CLI::Range(uint64_t{100}, uint64_t{100000000}));
  sub->add_option("--wait-s", f->wait_s,
                  "with --state and a running pipe: how long a differing chunk waits for the pipe to pass it "
                  "(default 60)")
      ->check(CLI::Range(0u, 86400u));
  sub->add_option(
         "--parallel", f->parallel,
         "chunks checked at once, each with its own connections (default 2; 1 for an embedded store)")
      ->check(CLI::Range(1u, 2u));
  sub->add_option("--max-rows", f->max_rows, "differing rows listed per table (default 20; all are counted)")
      ->check(CLI::Range(size_t{0}, size_t{1000000}));
  sub->callback([f, &run] { run = [f] { return RunVerify(*f); }; });
}

const CommandRegistration kRegistration{57, &AddVerifyCommand};

}  // namespace
}  // namespace chsync::cli
