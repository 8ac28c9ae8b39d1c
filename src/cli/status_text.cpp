#include "cli/status_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <iterator>
#include <map>
#include <set>
#include <utility>

#include "common/glob.h"

namespace chsync::cli {
namespace {

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

/// One per-table list: lines of the tables `--table` selects, cut after `shown` unless a pattern
/// was given; Close() says how many were left out.
class TableList {
 public:
  TableList(std::string& out, const StatusTextOptions& options) : out_(out), options_(options) {}

  bool Selected(const std::string& table) const {
    if (options_.tables.empty()) return true;
    return std::any_of(options_.tables.begin(), options_.tables.end(),
                       [&](const std::string& pattern) { return GlobMatch(pattern, table); });
  }
  /// Adds `lines` for `table` unless it is not selected or the list is full.
  void Add(const std::string& table, const std::string& lines) {
    if (!Selected(table)) return;
    if (options_.tables.empty() && options_.shown != 0 && listed_ >= options_.shown) {
      ++left_out_;
      return;
    }
    ++listed_;
    out_ += lines;
  }
  /// Ends a list: the next one starts with `shown` lines of its own.
  void Close(std::string_view what) {
    listed_ = 0;
    if (left_out_ == 0) return;
    fmt::format_to(std::back_inserter(out_),
                   "  … and {} more {} (`chsync status --state {} --all` lists every one, `--table PATTERN` "
                   "the ones matching)\n",
                   left_out_, what, options_.state_dir);
    left_out_ = 0;
  }

 private:
  std::string& out_;
  const StatusTextOptions& options_;
  size_t listed_ = 0;
  size_t left_out_ = 0;
};

}  // namespace

std::string StatusText(const pipe::Checkpoint& c, const pipe::RunStatus& run, const StatusTextOptions& o) {
  std::string out;
  // One line: its label (padded to the values' column) and its value.
  auto print = [&out](std::string_view label, std::string_view value) {
    out.append(label).append(value) += '\n';
  };
  print("state          ", o.state_dir);
  print("pipe           ",
        std::string(o.running ? "running" : "not running") +
            (run.phase.empty() ? "" : fmt::format(" (last phase: {}, pid {})", run.phase, run.pid)));
  if (c.source) {
    // The server the checkpoint's positions are on, which is the one the pipe reads from.
    std::string source = "server_id " + std::to_string(c.source->server_id);
    if (!c.source->server_uuid.empty()) source += " (" + c.source->server_uuid + ")";
    if (!c.source->address.empty()) source += " at " + c.source->address;
    print("source         ", source);
  }
  print("position       ", fmt::format("{}:{}{}", c.resume.file, c.resume.position,
                                       c.resume.gtid_set.empty() ? "" : " (GTID " + c.resume.gtid_set + ")"));
  if (run.binlog_gap_resyncs != 0) {
    print("binlog gaps    ",
          fmt::format("{} (every table copied again, on_binlog_gap: resync)", run.binlog_gap_resyncs));
  }
  print("stream start   ", fmt::format("{}:{}", c.stream_start.file, c.stream_start.position));
  const size_t done = static_cast<size_t>(std::count_if(
      c.snapshot.begin(), c.snapshot.end(),
      [](const pipe::TableSnapshot& t) { return t.state == pipe::TableSnapshot::State::kDone; }));
  if (c.load_only) {
    // snapshot.mode only: nothing streams from this checkpoint (docs/configuration.md).
    print("load only      ",
          done == c.snapshot.size()
              ? "the copy is complete (snapshot.mode only): nothing streams from here; a run "
                "with snapshot.mode only copies again"
              : "copying (snapshot.mode only); nothing streams from here");
  }
  if (!run.destination.empty()) print("destination    ", run.destination);
  print("checkpoint     ", "saved " + Ago(c.saved_at_ms, o.now_ms));
  if (run.last_event_time != 0) {
    uint64_t event_ms = run.last_event_time * 1000;
    print("lag            ",
          fmt::format(
              "{:.1f} s at the last checkpoint (last applied transaction committed at {} UTC)",
              run.updated_at_ms > event_ms ? static_cast<double>(run.updated_at_ms - event_ms) / 1000.0 : 0.0,
              UtcTime(event_ms)));
  }
  if (run.transactions != 0 || run.rows_applied != 0) {
    print("applied        ",
          fmt::format("{} rows in {} transactions by the last process", run.rows_applied, run.transactions));
  }
  if (!c.selection.empty()) print("selection      ", c.selection);

  // The counts first: what each source table is doing.
  std::map<std::string, const pipe::HeldTable*> held;
  for (const pipe::HeldTable& h : c.held) held.emplace(h.table, &h);
  std::set<std::string> rebuilding;
  for (const pipe::RebuildState& r : c.rebuilds) rebuilding.insert(r.database + "." + r.table);
  size_t streaming = 0;
  size_t copying = 0;
  for (const pipe::TableSnapshot& t : c.snapshot) {
    const std::string key = t.database + "." + t.table;
    if (held.contains(key) || rebuilding.contains(key)) continue;
    if (t.state == pipe::TableSnapshot::State::kDone) {
      ++streaming;
    } else {
      ++copying;
    }
  }
  const size_t parked = static_cast<size_t>(std::count_if(
      c.held.begin(), c.held.end(), [](const pipe::HeldTable& h) { return h.state == "parked"; }));
  std::set<std::string> clickhouse_tables;
  for (const pipe::DestinationState& d : c.destinations) {
    if (!d.clickhouse_table.empty())
      clickhouse_tables.insert(d.clickhouse_database + "." + d.clickhouse_table);
  }
  print("tables         ",
        fmt::format("{} ({} copied{}){}", c.snapshot.size(), done,
                    done == c.snapshot.size() ? "" : fmt::format(", {} to copy", c.snapshot.size() - done),
                    clickhouse_tables.empty() || clickhouse_tables.size() == c.destinations.size()
                        ? ""
                        : fmt::format(" into {} ClickHouse tables", clickhouse_tables.size())));
  std::string counts = fmt::format("{} streaming", streaming);
  for (const auto& [count, what] : {std::pair{parked, "parked"}, std::pair{c.held.size() - parked, "paused"},
                                    std::pair{copying, "copying"}, std::pair{rebuilding.size(), "rebuilding"},
                                    std::pair{c.unselected.size(), "unselected"}}) {
    if (count != 0) counts += fmt::format(", {} {}", count, what);
  }
  print("by state       ", counts);

  // Then the tables that need attention: held, rebuilt, being copied; then the others.
  TableList list(out, o);
  if (!c.held.empty()) {
    print("held tables    ",
          fmt::format("{} ({} parked, {} paused): their changes are not applied; `chsync resume --state {} "
                      "--table DB.TABLE` copies one again",
                      c.held.size(), parked, c.held.size() - parked, o.state_dir));
  }
  for (const pipe::HeldTable& h : c.held) {
    std::string lines = fmt::format("  {}  {} since {} UTC at {}: {}\n", h.table, h.state, UtcTime(h.at_ms),
                                    h.position, h.reason);
    if (!h.statement.empty()) lines += fmt::format("      {}\n", h.statement.substr(0, 300));
    list.Add(h.table, lines);
  }
  list.Close("held tables");
  for (const pipe::RebuildState& r : c.rebuilds) {
    list.Add(r.database + "." + r.table,
             fmt::format("  {}.{}  rebuilding online into {}: {} rows copied (since {}: {})\n", r.database,
                         r.table, r.temp_table, r.progress.rows_copied, r.position, r.reason));
  }
  auto snapshot_line = [](const pipe::TableSnapshot& t) {
    return fmt::format(
        "  {}.{}  snapshot {}, {} rows copied{}\n", t.database, t.table, StateName(t.state), t.rows_copied,
        t.stream_from ? fmt::format(", resynced from {}:{}", t.stream_from->file, t.stream_from->position)
                      : "");
  };
  for (const pipe::TableSnapshot& t : c.snapshot) {
    if (t.state != pipe::TableSnapshot::State::kDone) list.Add(t.database + "." + t.table, snapshot_line(t));
  }
  for (const pipe::TableSnapshot& t : c.snapshot) {
    if (t.state == pipe::TableSnapshot::State::kDone) list.Add(t.database + "." + t.table, snapshot_line(t));
  }
  for (const pipe::DestinationState& d : c.destinations) {
    if (d.kept_columns.empty()) continue;
    std::string names;
    for (const std::string& column : d.kept_columns) names += (names.empty() ? "" : ", ") + column;
    list.Add(d.table, fmt::format("  {}  columns dropped at the source, kept (NULL in later rows): {}\n",
                                  d.table, names));
  }
  for (const pipe::DestinationState& d : c.destinations) {
    for (const auto& [source, destination] : d.clickhouse_names) {
      list.Add(d.table, fmt::format("  {}  column {} is {} in ClickHouse\n", d.table, source, destination));
    }
  }
  list.Close("table lines");
  if (!c.unselected.empty()) {
    print("unselected     ",
          fmt::format(
              "{}: removed from the selection, their changes are not applied; their ClickHouse tables are "
              "kept (`chsync tables add --state {} DB.TABLE` copies one again)",
              c.unselected.size(), o.state_dir));
  }
  for (const pipe::UnselectedTable& u : c.unselected) {
    list.Add(u.table, fmt::format("  {}  removed since {} UTC at {}; ClickHouse table {} kept\n", u.table,
                                  UtcTime(u.at_ms), u.position, u.clickhouse_table));
  }
  list.Close("unselected tables");

  print("last error     ", run.last_error.empty() ? "none" : run.last_error);
  if (!run.policies.empty()) {
    out += "schema policies\n";
    for (const std::string& line : run.policies) print("  ", line);
  }
  if (!run.cascades.empty()) {
    out +=
        "cascading foreign keys (where one is not followed: `chsync resync --table CHILD` after a "
        "cascade)\n";
    for (const std::string& line : run.cascades) print("  ", line);
  }
  print("schema changes ", std::to_string(run.schema_changes.size()));
  for (const pipe::SchemaChangeRecord& r : run.schema_changes) {
    fmt::format_to(std::back_inserter(out), "  {} UTC  {}  {}: {}\n", UtcTime(r.at_ms), r.position, r.table,
                   r.statement);
    for (const std::string& action : r.actions) print("      ", action);
  }
  return out;
}

}  // namespace chsync::cli
