// `chsync status --state DIR`: where a pipe is (position, lag, tables, snapshot progress), its
// last error, the schema-change policies in force and the schema changes it saw, from the state
// directory (no server is contacted).
// Exit 0 when the state could be read, 1 when there is none or it is damaged, 2 on bad usage.

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <memory>
#include <string>

#include "cli/command.h"
#include "state/checkpoint.h"
#include "state/run_status.h"
#include "state/state_dir.h"

namespace chsync::cli {
namespace {

struct StatusOptions {
  std::string state;
};

/// True when a pipe holds the directory's lock (it is running).
bool PipeRunning(const std::string& dir) {
  int fd = open((dir + "/lock").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool held = flock(fd, LOCK_EX | LOCK_NB) != 0;
  if (!held) flock(fd, LOCK_UN);
  close(fd);
  return held;
}

uint64_t NowMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

std::string Ago(uint64_t then_ms, uint64_t now_ms) {
  if (then_ms == 0) return "never";
  double seconds = now_ms >= then_ms ? static_cast<double>(now_ms - then_ms) / 1000.0 : 0.0;
  return fmt::format("{:.1f} s ago", seconds);
}

std::string UtcTime(uint64_t ms) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%d %H:%M:%S", &tm);
  return buffer;
}

const char* StateName(pipe::TableSnapshot::State s) {
  switch (s) {
    case pipe::TableSnapshot::State::kPending: return "pending";
    case pipe::TableSnapshot::State::kCopying: return "copying";
    case pipe::TableSnapshot::State::kDone: return "done";
  }
  return "?";
}

int RunStatusCommand(const StatusOptions& o) {
  auto checkpoint = pipe::ReadCheckpoint(o.state);
  if (!checkpoint.ok()) {
    fmt::print(stderr, "chsync status: {}\n", checkpoint.error().message());
    return kExitFailure;
  }
  if (!checkpoint->has_value()) {
    fmt::print(stderr, "chsync status: no pipe has saved a checkpoint in {} yet\n", o.state);
    return kExitFailure;
  }
  const pipe::Checkpoint& c = **checkpoint;
  auto status = pipe::ReadRunStatus(o.state);
  pipe::RunStatus run;
  if (status.ok() && status->has_value()) run = **status;
  uint64_t now = NowMs();
  bool running = PipeRunning(o.state);

  fmt::print("state          {}\n", o.state);
  fmt::print("pipe           {}{}\n", running ? "running" : "not running",
             run.phase.empty() ? "" : fmt::format(" (last phase: {}, pid {})", run.phase, run.pid));
  if (c.source) {
    // The server the checkpoint's positions are on, which is the one the pipe reads from.
    std::string source = "server_id " + std::to_string(c.source->server_id);
    if (!c.source->server_uuid.empty()) source += " (" + c.source->server_uuid + ")";
    if (!c.source->address.empty()) source += " at " + c.source->address;
    fmt::print("source         {}\n", source);
  }
  fmt::print("position       {}:{}{}\n", c.resume.file, c.resume.position,
             c.resume.gtid_set.empty() ? "" : " (GTID " + c.resume.gtid_set + ")");
  if (run.binlog_gap_resyncs != 0) {
    fmt::print("binlog gaps    {} (every table copied again, on_binlog_gap: resync)\n",
               run.binlog_gap_resyncs);
  }
  fmt::print("stream start   {}:{}\n", c.stream_start.file, c.stream_start.position);
  if (c.load_only) {
    // snapshot.mode only: nothing streams from this checkpoint (docs/configuration.md).
    const bool copied = std::all_of(c.snapshot.begin(), c.snapshot.end(), [](const pipe::TableSnapshot& t) {
      return t.state == pipe::TableSnapshot::State::kDone;
    });
    fmt::print("load only      {}\n",
               copied ? "the copy is complete (snapshot.mode only): nothing streams from here; a run with "
                        "snapshot.mode only copies again"
                      : "copying (snapshot.mode only); nothing streams from here");
  }
  if (!run.destination.empty()) fmt::print("destination    {}\n", run.destination);
  fmt::print("checkpoint     saved {}\n", Ago(c.saved_at_ms, now));
  if (run.last_event_time != 0) {
    uint64_t event_ms = run.last_event_time * 1000;
    fmt::print(
        "lag            {:.1f} s at the last checkpoint (last applied transaction committed at {} UTC)\n",
        run.updated_at_ms > event_ms ? static_cast<double>(run.updated_at_ms - event_ms) / 1000.0 : 0.0,
        UtcTime(event_ms));
  }
  if (run.transactions != 0 || run.rows_applied != 0) {
    fmt::print("applied        {} rows in {} transactions by the last process\n", run.rows_applied,
               run.transactions);
  }
  if (!c.selection.empty()) fmt::print("selection      {}\n", c.selection);
  size_t done = 0;
  for (const pipe::TableSnapshot& t : c.snapshot)
    done += t.state == pipe::TableSnapshot::State::kDone ? 1 : 0;
  fmt::print("tables         {} ({} copied{})\n", c.snapshot.size(), done,
             done == c.snapshot.size() ? "" : fmt::format(", {} to copy", c.snapshot.size() - done));
  for (const pipe::TableSnapshot& t : c.snapshot) {
    fmt::print(
        "  {}.{}  snapshot {}, {} rows copied{}\n", t.database, t.table, StateName(t.state), t.rows_copied,
        t.stream_from ? fmt::format(", resynced from {}:{}", t.stream_from->file, t.stream_from->position)
                      : "");
  }
  for (const pipe::DestinationState& d : c.destinations) {
    if (d.kept_columns.empty()) continue;
    std::string list;
    for (const std::string& column : d.kept_columns) list += (list.empty() ? "" : ", ") + column;
    fmt::print("  {}  columns dropped at the source, kept (NULL in later rows): {}\n", d.table, list);
  }
  for (const pipe::DestinationState& d : c.destinations) {
    for (const auto& [source, destination] : d.clickhouse_names) {
      fmt::print("  {}  column {} is {} in ClickHouse\n", d.table, source, destination);
    }
  }
  for (const pipe::RebuildState& r : c.rebuilds) {
    fmt::print("  {}.{}  rebuilding online into {}: {} rows copied (since {}: {})\n", r.database, r.table,
               r.temp_table, r.progress.rows_copied, r.position, r.reason);
  }
  if (!c.held.empty()) {
    size_t parked = 0;
    for (const pipe::HeldTable& h : c.held) parked += h.state == "parked" ? 1 : 0;
    fmt::print(
        "held tables    {} ({} parked, {} paused): their changes are not applied; `chsync resume --state "
        "{} --table DB.TABLE` copies one again\n",
        c.held.size(), parked, c.held.size() - parked, o.state);
  }
  for (const pipe::HeldTable& h : c.held) {
    fmt::print("  {}  {} since {} UTC at {}: {}\n", h.table, h.state, UtcTime(h.at_ms), h.position, h.reason);
    if (!h.statement.empty()) fmt::print("      {}\n", h.statement.substr(0, 300));
  }
  if (!c.unselected.empty()) {
    fmt::print(
        "unselected     {}: removed from the selection, their changes are not applied; their ClickHouse "
        "tables are kept (`chsync tables add --state {} DB.TABLE` copies one again)\n",
        c.unselected.size(), o.state);
  }
  for (const pipe::UnselectedTable& u : c.unselected) {
    fmt::print("  {}  removed since {} UTC at {}; ClickHouse table {} kept\n", u.table, UtcTime(u.at_ms),
               u.position, u.clickhouse_table);
  }
  fmt::print("last error     {}\n", run.last_error.empty() ? "none" : run.last_error);
  if (!run.policies.empty()) {
    fmt::print("schema policies\n");
    for (const std::string& line : run.policies) fmt::print("  {}\n", line);
  }
  if (!run.cascades.empty()) {
    fmt::print(
        "cascading foreign keys (where one is not followed: `chsync resync --table CHILD` after a "
        "cascade)\n");
    for (const std::string& line : run.cascades) fmt::print("  {}\n", line);
  }
  fmt::print("schema changes {}\n", run.schema_changes.size());
  for (const pipe::SchemaChangeRecord& r : run.schema_changes) {
    fmt::print("  {} UTC  {}  {}: {}\n", UtcTime(r.at_ms), r.position, r.table, r.statement);
    for (const std::string& action : r.actions) fmt::print("      {}\n", action);
  }
  return kExitOk;
}

void AddStatusCommand(CLI::App& app, RunFunction& run) {
  auto options = std::make_shared<StatusOptions>();
  CLI::App* sub = app.add_subcommand(
      "status",
      "Show a pipe's position, lag, tables, last error, schema policies and schema changes from its "
      "state directory");
  sub->add_option("--state", options->state, "the pipe's state directory")->required();
  sub->callback([options, &run] { run = [options] { return RunStatusCommand(*options); }; });
}

const CommandRegistration kRegistration{55, &AddStatusCommand};

}  // namespace
}  // namespace chsync::cli
