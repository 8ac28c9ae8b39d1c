// `chsync explain-ddl`: reads MySQL/MariaDB statements (stdin or files, `;`-separated, quotes,
// comments and DELIMITER respected), and prints for each what it parsed to and the schema
// changes it makes, applying them in order to a schema tracker that starts empty. Exit 0 when
// every statement parsed and applied, 1 otherwise (each failure named with its position), 2 on
// bad usage.

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command.h"
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

int RunExplainDdl(const ExplainDdlOptions& o) {
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
      "ClickHouse version to target; accepted but not used yet: ClickHouse statements are not printed "
      "until the ClickHouse statement builder is wired in");
  sub->add_option("--sql-mode", options->sql_mode,
                  "sql_mode the statements ran under (ANSI_QUOTES, NO_BACKSLASH_ESCAPES)");
  sub->add_option("--database", options->database,
                  "default database for unqualified table names (USE also sets it)");
  sub->add_flag("--mariadb", options->mariadb, "the statements come from MariaDB (JSON is LONGTEXT)");
  sub->callback([options, &run] { run = [options] { return RunExplainDdl(*options); }; });
}

const CommandRegistration kRegistration{40, &AddExplainDdlCommand};

}  // namespace
}  // namespace chsync::cli
