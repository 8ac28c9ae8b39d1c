// `chsync explain-ddl`: reads MySQL/MariaDB statements (stdin or files, `;`-separated, quotes,
// comments and DELIMITER respected), and prints for each what it parsed to and the schema
// changes it makes, applying them in order to a schema tracker that starts empty. With
// --clickhouse-version, also what the pipe would do in ClickHouse (policy/ddl_policy.h) for tables
// created earlier in the input: the statements it would run, its log lines, or the message it would
// stop with. With --config, the plans follow the file's schema_changes: policies and table_options:
// (excluded and renamed columns, ORDER BY, …), and each table created shows its effective mapping.
// Exit 0 when every statement parsed and applied (a stop is an outcome, not a failure), 1
// otherwise (each failure named with its position), 2 on bad usage or a bad configuration file.

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "clickhouse/capabilities.h"
#include "clickhouse/server_version.h"
#include "clickhouse/sql_quoting.h"
#include "config/config.h"
#include "policy/ddl_policy.h"
#include "schema/explain.h"
#include "schema/parser.h"
#include "schema/tracker.h"

namespace chsync::cli {
namespace {

struct ExplainDdlOptions {
  std::vector<std::string> files;
  std::string metadata = "full";
  std::string clickhouse_version;
  std::string sql_mode;
  std::string database;
  std::string config_file;
  bool mariadb = false;
};

bool ReadAll(const std::string& path, std::string& out) {
  if (path == "-") {
    out.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    return true;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  out = buffer.str();
  return true;
}

std::string Preview(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (out.size() >= 100) {
      out += "…";
      break;
    }
    out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  }
  return out;
}

/// The ClickHouse side of explain-ddl: the destination of every table created earlier in the input,
/// planned statement by statement as the pipe would.
class DestinationModel {
 public:
  DestinationModel(const clickhouse::Capabilities& caps, bool ordinal_mode, pipe::PipeConfig config)
      : caps_(caps), ordinal_mode_(ordinal_mode), config_(std::move(config)) {}

  /// Prints the plan of each table that `changes` touch: "clickhouse: SQL", "log: line" or
  /// "stop: message". After a stop the table is treated as resynchronised (its destination
  /// rebuilt from the schema after the statement), so later statements still show their plans.
  void Print(const std::vector<schema::SchemaChange>& changes, const schema::Tracker& tracker,
             const std::string& position, const std::string& statement) {
    // Table renames move the ClickHouse table along (a swap's new table with it, so the column
    // differences that follow a kTableReplaced need nothing more).
    std::set<Key> replaced;
    for (const schema::SchemaChange& change : changes) {
      if (change.kind == schema::SchemaChange::Kind::kTableReplaced)
        replaced.insert(Key{change.table.database, change.table.name});
      if (change.kind != schema::SchemaChange::Kind::kTableRenamed) continue;
      Key from{change.old_table.database, change.old_table.name};
      Key to{change.table.database, change.table.name};
      auto known = tables_.find(from);
      if (known == tables_.end()) continue;
      fmt::print("clickhouse: RENAME TABLE {}.{} TO {}.{}\n", clickhouse::QuoteIdentifier(from.first),
                 clickhouse::QuoteIdentifier(from.second), clickhouse::QuoteIdentifier(to.first),
                 clickhouse::QuoteIdentifier(to.second));
      pipe::DestinationTable moved = std::move(known->second);
      tables_.erase(known);
      if (const schema::TableSchema* after = tracker.Find(to.first, to.second)) moved.source = *after;
      tables_[to] = std::move(moved);
    }
    std::vector<std::pair<Key, std::vector<schema::SchemaChange>>> groups;
    for (const schema::SchemaChange& change : changes) {
      Key key{change.table.database, change.table.name};
      if (change.kind == schema::SchemaChange::Kind::kTableRenamed ||
          change.kind == schema::SchemaChange::Kind::kTableReplaced || replaced.contains(key)) {
        continue;
      }
      if (groups.empty() || groups.back().first != key)
        groups.emplace_back(key, std::vector<schema::SchemaChange>{});
      groups.back().second.push_back(change);
    }
    for (auto& [key, group] : groups) {
      Key from = key;
      bool created = false;
      for (const schema::SchemaChange& change : group) {
        created = created || change.kind == schema::SchemaChange::Kind::kTableCreated;
      }
      auto known = tables_.find(from);
      if (known == tables_.end() && !created) continue;  // not created in the input: schema unknown
      pipe::DestinationTable before = known == tables_.end() ? pipe::DestinationTable{} : known->second;
      if (known != tables_.end()) tables_.erase(known);
      const schema::TableSchema* after = tracker.Find(key.first, key.second);
      pipe::PolicyContext context;
      context.ordinal_mode = ordinal_mode_;
      context.position = position;
      context.statement = statement;
      context.caps = caps_;
      context.policy = config_.policies.For(key.first, key.second);
      context.mapping = config_.mappings.For(key.first, key.second, config_.dest_database);
      context.target.database = context.mapping.dest_database;
      if (created && !context.mapping.IsDefault()) {
        for (const std::string& line : context.mapping.Describe()) fmt::print("mapping: {}\n", line);
      }
      auto plan = pipe::PlanTableChanges(group, before, after, context);
      if (!plan.ok()) {
        fmt::print("stop: {}\n", plan.error().message());
        if (after != nullptr) tables_[key] = pipe::NewDestination(*after, caps_, context.mapping);
        continue;
      }
      if (plan->rebuild) fmt::print("rebuild: {}\n", plan->rebuild_reason);
      for (const std::string& sql : plan->statements) fmt::print("clickhouse: {}\n", sql);
      for (const std::string& line : plan->log_lines) fmt::print("log: {}\n", line);
      if (!plan->park_reason.empty()) fmt::print("park: {}\n", plan->park_reason);
      // A dropped table's destination is kept (a CREATE of the same name moves it aside).
      tables_[key] = std::move(plan->after);
    }
  }

 private:
  using Key = std::pair<std::string, std::string>;

  clickhouse::Capabilities caps_;
  bool ordinal_mode_;
  pipe::PipeConfig config_;
  std::map<Key, pipe::DestinationTable> tables_;
};

int RunExplainDdl(const ExplainDdlOptions& o) {
  std::optional<DestinationModel> destination;
  if (!o.clickhouse_version.empty()) {
    auto version = clickhouse::ParseServerVersion(o.clickhouse_version);
    if (!version.ok()) {
      fmt::print(stderr,
                 "chsync explain-ddl: --clickhouse-version {}: expected a version such as 23.8 or 18.16.1\n",
                 o.clickhouse_version);
      return kExitUsage;
    }
    pipe::PipeConfig config;
    if (!o.config_file.empty()) {
      if (Status loaded = pipe::LoadConfigFile(o.config_file, config); !loaded.ok()) {
        fmt::print(stderr, "chsync explain-ddl: --config: {}\n", loaded.error().message());
        return kExitUsage;
      }
    }
    clickhouse::Capabilities caps = clickhouse::FromVersion(*version);
    caps.datetime_fallback_text = config.datetime_fallback == pipe::PipeConfig::DateTimeFallback::kString;
    caps.json_native = config.json == pipe::PipeConfig::JsonMode::kNative;
    destination.emplace(caps, o.metadata != "full", std::move(config));
  } else if (!o.config_file.empty()) {
    fmt::print(stderr, "chsync explain-ddl: --config needs --clickhouse-version (the plans it shapes)\n");
    return kExitUsage;
  }
  schema::LexOptions lex = schema::LexOptionsFromSqlMode(o.sql_mode);
  schema::Tracker::Options tracker_options;
  tracker_options.full_metadata = o.metadata == "full";
  tracker_options.mariadb = o.mariadb;
  schema::Tracker tracker(tracker_options);
  std::string database = o.database;
  std::vector<std::string> files = o.files.empty() ? std::vector<std::string>{"-"} : o.files;
  int failures = 0;
  size_t number = 0;
  for (const std::string& file : files) {
    std::string script;
    if (!ReadAll(file, script)) {
      fmt::print(stderr, "chsync explain-ddl: cannot read {}\n", file);
      return kExitFailure;
    }
    std::string label = file == "-" ? "stdin" : file;
    auto pieces = schema::SplitStatements(script, lex);
    if (!pieces.ok()) {
      fmt::print(stderr, "chsync explain-ddl: {}: {}\n", label, pieces.error().message());
      return kExitFailure;
    }
    for (const schema::StatementText& piece : *pieces) {
      ++number;
      fmt::print("-- statement {} ({}:{}): {}\n", number, label, piece.line, Preview(piece.text));
      auto st = schema::ParseStatement(piece.text, lex);
      if (!st.ok()) {
        ++failures;
        fmt::print("error: {}\n\n", st.error().message());
        fmt::print(stderr, "chsync explain-ddl: statement {} at {}:{} (byte {}) does not parse: {}\n", number,
                   label, piece.line, piece.offset, st.error().message());
        continue;
      }
      fmt::print("{}", schema::ExplainStatement(*st));
      if (st->kind == schema::StatementKind::kSession && !st->database.empty()) database = st->database;
      auto applied = tracker.Apply(*st, database);
      if (!applied.ok()) {
        ++failures;
        fmt::print("error: {}\n\n", applied.error().message());
        fmt::print(stderr, "chsync explain-ddl: statement {} at {}:{}: {}\n", number, label, piece.line,
                   applied.error().message());
        continue;
      }
      for (const schema::SchemaChange& change : applied->changes)
        fmt::print("=> {}", schema::ExplainChange(change));
      if (destination) {
        destination->Print(applied->changes, tracker, fmt::format("{}:{}", label, piece.line),
                           std::string(piece.text));
      }
      for (const std::string& note : applied->notes) fmt::print("note: {}\n", note);
      fmt::print("\n");
    }
  }
  if (failures > 0) {
    fmt::print(stderr, "chsync explain-ddl: {} of {} statements failed\n", failures, number);
    return kExitFailure;
  }
  return kExitOk;
}

void AddExplainDdlCommand(CLI::App& app, RunFunction& run) {
  auto options = std::make_shared<ExplainDdlOptions>();
  CLI::App* sub = app.add_subcommand(
      "explain-ddl",
      "Parse MySQL DDL statements and print what they parse to and the schema changes they make");
  sub->add_option("files", options->files,
                  "SQL files, ';'-separated statements (default: stdin; '-' is stdin)");
  sub->add_option("--metadata", options->metadata,
                  "full (binlog_row_metadata=FULL, columns matched by name) or minimal (ordinal mode: flags "
                  "position-shifting changes as requiring a resync)")
      ->check(CLI::IsMember({"full", "minimal"}));
  sub->add_option(
      "--clickhouse-version", options->clickhouse_version,
      "ClickHouse version to target (e.g. 18.16, 26.7): also print what the pipe would do in ClickHouse for "
      "tables created earlier in the input: the statements it would run ('clickhouse:'), its log lines "
      "('log:'), or the message it would stop with ('stop:'; the table is then treated as resynchronised)");
  sub->add_option("--sql-mode", options->sql_mode,
                  "sql_mode the statements ran under (ANSI_QUOTES, NO_BACKSLASH_ESCAPES)");
  sub->add_option("--database", options->database,
                  "default database for unqualified table names (USE also sets it)");
  sub->add_flag("--mariadb", options->mariadb, "the statements come from MariaDB (JSON is LONGTEXT)");
  sub->add_option("--config", options->config_file,
                  "a chsync configuration file: plan with its schema_changes: policies and table_options: "
                  "(printed as 'mapping:' for each table created), as `chsync run --config` would");
  sub->callback([options, &run] { run = [options] { return RunExplainDdl(*options); }; });
}

const CommandRegistration kRegistration{40, &AddExplainDdlCommand};

}  // namespace
}  // namespace chsync::cli
