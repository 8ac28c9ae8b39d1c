// Runs the logic tests in tests/data/ddl/*.test. Record format (records end at a blank line):
//
//   # comment                         (between records)
//   mode full|minimal                 tracker metadata mode (resets the tracker)
//   mariadb on|off                    tracker flavor (resets the tracker)
//   sql_mode MODES                    lexing modes for later statements ("" for none)
//   server mariadb|mysql VERSION|any  the server that ran later statements: which versioned
//                                     comments run (MariaDB skips /*!50700…99999)
//   database DB                       current database for later statements
//   reset                             empty tracker
//   parse            SQL … ---- exact ExplainStatement output
//   summary          SQL … ---- exact first line of ExplainStatement
//   each             lines "SQL ==> summary", one statement per line
//   columns          lines "COLUMN DEFINITION ==> column | translated default" (CREATE TABLE t (…),
//                    default translated with full metadata; "error: …" when it does not parse)
//   error            SQL … ---- substring of the parse error
//   apply            SQL … ---- exact change lines ("=> …") and notes ("note: …") after parse+apply
//   apply-error      SQL … ---- substring of the parse or apply error
//   script           SQL; SQL; … ---- per statement: its summary line, then its change lines
//   script-file F    as script, with the SQL read from file F beside the .test file
//   schema DB.T      ---- exact ExplainSchema output of the tracked table ("absent" when untracked)
//
// Set CHSYNC_DDL_PRINT=1 to print the actual output of failing records in a pasteable form.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "schema/default_translation.h"
#include "schema/explain.h"
#include "schema/parser.h"
#include "schema/tracker.h"

namespace chsync::schema {
namespace {

struct Record {
  std::string directive;
  std::string argument;
  std::string sql;
  std::string expected;
  int line = 0;
};

std::vector<Record> ReadRecords(const std::string& path, std::vector<std::string>& problems) {
  std::ifstream in(path);
  std::vector<Record> records;
  std::string line;
  int number = 0;
  Record current;
  enum { kIdle, kSql, kExpected } state = kIdle;
  auto flush = [&]() {
    if (!current.directive.empty()) records.push_back(current);
    current = Record{};
    state = kIdle;
  };
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (state == kIdle) {
      if (line.empty() || line[0] == '#') continue;
      size_t space = line.find(' ');
      current.directive = line.substr(0, space);
      current.argument = space == std::string::npos ? "" : line.substr(space + 1);
      current.line = number;
      const std::string& d = current.directive;
      if (d == "mode" || d == "mariadb" || d == "sql_mode" || d == "server" || d == "database" ||
          d == "reset") {
        flush();
        continue;
      }
      if (d == "schema" || d == "script-file") {
        state = kSql;
        continue;
      }
      if (d != "parse" && d != "summary" && d != "each" && d != "columns" && d != "error" && d != "apply" &&
          d != "apply-error" && d != "script") {
        problems.push_back(path + ":" + std::to_string(number) + ": unknown directive '" + d + "'");
        current = Record{};
        continue;
      }
      state = kSql;
      continue;
    }
    if (state == kSql) {
      if (line == "----") {
        state = kExpected;
        continue;
      }
      if (line.empty() && (current.directive == "each" || current.directive == "columns")) {
        flush();
        continue;
      }
      current.sql += line + "\n";
      continue;
    }
    if (line.empty()) {
      flush();
      continue;
    }
    current.expected += line + "\n";
  }
  flush();
  for (Record& r : records) {
    if (!r.sql.empty() && r.sql.back() == '\n') r.sql.pop_back();
  }
  return records;
}

class Runner {
 public:
  explicit Runner(std::string path) : path_(std::move(path)) {}

  void Run() {
    std::vector<std::string> problems;
    std::vector<Record> records = ReadRecords(path_, problems);
    for (const std::string& p : problems) ADD_FAILURE() << p;
    for (const Record& r : records) {
      ++count_;
      RunRecord(r);
    }
  }

  int count() const { return count_; }

 private:
  void Fail(const Record& r, const std::string& actual, const std::string& message) {
    ADD_FAILURE_AT(path_.c_str(), r.line) << message << "\n--- statement:\n"
                                          << r.sql << "--- expected:\n"
                                          << r.expected << "--- actual:\n"
                                          << actual;
    if (std::getenv("CHSYNC_DDL_PRINT") != nullptr) {
      std::cout << "=== " << path_ << ":" << r.line << "\n"
                << r.directive << (r.argument.empty() ? "" : " " + r.argument) << "\n"
                << r.sql << "----\n"
                << actual << "\n";
    }
  }

  std::string ApplyOutput(const ApplyResult& result) {
    std::string out;
    for (const SchemaChange& c : result.changes) out += "=> " + ExplainChange(c);
    for (const std::string& n : result.notes) out += "note: " + n + "\n";
    return out;
  }

  void RunRecord(const Record& r) {
    const std::string& d = r.directive;
    if (d == "mode") {
      options_.full_metadata = r.argument == "full";
      tracker_ = Tracker(options_);
    } else if (d == "mariadb") {
      options_.mariadb = r.argument == "on";
      tracker_ = Tracker(options_);
    } else if (d == "sql_mode") {
      LexOptions server = lex_;
      lex_ = LexOptionsFromSqlMode(r.argument);
      lex_.server_version = server.server_version;
      lex_.mariadb_comments = server.mariadb_comments;
      lex_.mariadb_server = server.mariadb_server;
    } else if (d == "server") {
      // "mariadb 101106", "mysql 80040", or "any" (every versioned comment runs).
      std::istringstream words(r.argument);
      std::string flavor;
      uint32_t version = 999998;
      words >> flavor >> version;
      lex_.server_version = flavor == "any" ? 999998 : version;
      lex_.mariadb_comments = flavor != "mysql";
      lex_.mariadb_server = flavor == "mariadb";
    } else if (d == "database") {
      database_ = r.argument;
    } else if (d == "reset") {
      tracker_ = Tracker(options_);
    } else if (d == "parse" || d == "summary") {
      auto st = ParseStatement(r.sql, lex_);
      if (!st.ok()) return Fail(r, "error: " + st.error().message() + "\n", "statement does not parse");
      std::string actual = ExplainStatement(*st);
      if (d == "summary") actual = actual.substr(0, actual.find('\n') + 1);
      if (actual != r.expected) Fail(r, actual, "parse output differs");
    } else if (d == "each" || d == "columns") {
      std::istringstream lines(r.sql);
      std::string line;
      int offset = 0;
      std::string actual_all;
      bool failed = false;
      while (std::getline(lines, line)) {
        ++offset;
        size_t sep = line.find(" ==> ");
        if (sep == std::string::npos) {
          ADD_FAILURE_AT(path_.c_str(), r.line + offset) << "each: line has no ' ==> '";
          continue;
        }
        std::string sql = line.substr(0, sep);
        std::string expected = line.substr(sep + 5);
        std::string actual;
        if (d == "each") {
          auto st = ParseStatement(sql, lex_);
          actual = st.ok() ? ExplainStatement(*st) : "error: " + st.error().message() + "\n";
          actual = actual.substr(0, actual.find('\n'));
        } else {
          auto st = ParseStatement("CREATE TABLE t (" + sql + ")", lex_);
          if (!st.ok()) {
            actual = "error: " + st.error().message();
          } else if (st->columns.size() != 1) {
            actual = "error: not one column";
          } else {
            const Column& c = st->columns[0].column;
            DefaultTranslation t = TranslateDefault(c, /*full_metadata=*/true);
            actual = ExplainColumn(c) + " | " + (t.propagated ? t.literal : "omitted: " + t.reason);
          }
        }
        actual_all += sql + " ==> " + actual + "\n";
        if (actual != expected) {
          failed = true;
          ADD_FAILURE_AT(path_.c_str(), r.line + offset)
              << sql << "\n  expected: " << expected << "\n  actual:   " << actual;
        }
      }
      if (failed && std::getenv("CHSYNC_DDL_PRINT") != nullptr)
        std::cout << "=== each\n" << actual_all << "\n";
    } else if (d == "error") {
      auto st = ParseStatement(r.sql, lex_);
      if (st.ok()) return Fail(r, ExplainStatement(*st), "statement parses but an error was expected");
      std::string expected = r.expected.substr(0, r.expected.size() - (r.expected.empty() ? 0 : 1));
      if (st.error().message().find(expected) == std::string::npos) {
        Fail(r, st.error().message() + "\n", "error message differs");
      }
    } else if (d == "apply" || d == "apply-error") {
      auto st = ParseStatement(r.sql, lex_);
      Result<ApplyResult> applied =
          st.ok() ? tracker_.Apply(*st, database_) : Result<ApplyResult>(st.error());
      if (st.ok() && st->kind == StatementKind::kSession && !st->database.empty()) database_ = st->database;
      if (d == "apply") {
        if (!applied.ok()) return Fail(r, "error: " + applied.error().message() + "\n", "statement fails");
        std::string actual = ApplyOutput(*applied);
        if (actual != r.expected) Fail(r, actual, "schema changes differ");
      } else {
        if (applied.ok())
          return Fail(r, ApplyOutput(*applied), "statement applies but an error was expected");
        std::string expected = r.expected.substr(0, r.expected.size() - (r.expected.empty() ? 0 : 1));
        if (applied.error().message().find(expected) == std::string::npos) {
          Fail(r, applied.error().message() + "\n", "error message differs");
        }
      }
    } else if (d == "script" || d == "script-file") {
      std::string sql = r.sql;
      if (d == "script-file") {
        std::filesystem::path file = std::filesystem::path(path_).parent_path() / r.argument;
        std::ifstream in(file, std::ios::binary);
        if (!in) return Fail(r, "", "cannot read " + file.string());
        std::ostringstream buffer;
        buffer << in.rdbuf();
        sql = buffer.str();
      }
      auto pieces = SplitStatements(sql, lex_);
      if (!pieces.ok()) return Fail(r, pieces.error().message() + "\n", "script does not split");
      std::string actual;
      for (const StatementText& piece : *pieces) {
        auto st = ParseStatement(piece.text, lex_);
        if (!st.ok()) {
          actual += "error: " + st.error().message() + "\n";
          continue;
        }
        std::string explained = ExplainStatement(*st);
        actual += explained.substr(0, explained.find('\n') + 1);
        if (st->kind == StatementKind::kSession && !st->database.empty()) database_ = st->database;
        auto applied = tracker_.Apply(*st, database_);
        if (!applied.ok()) {
          actual += "error: " + applied.error().message() + "\n";
          continue;
        }
        for (const SchemaChange& c : applied->changes) actual += "=> " + ExplainChange(c);
      }
      if (actual != r.expected) Fail(r, actual, "script output differs");
    } else if (d == "schema") {
      size_t dot = r.argument.find('.');
      std::string db = r.argument.substr(0, dot);
      std::string table = dot == std::string::npos ? "" : r.argument.substr(dot + 1);
      const TableSchema* t = tracker_.Find(db, table);
      std::string actual = t == nullptr ? "absent\n" : ExplainSchema(*t);
      if (actual != r.expected) Fail(r, actual, "tracked schema differs");
      if (t != nullptr) {
        // Every checked state also survives a serialization round trip.
        auto copy = Tracker::Deserialize(tracker_.Serialize());
        if (!copy.ok()) {
          Fail(r, copy.error().message() + "\n", "serialized state does not load");
        } else if (copy->Serialize() != tracker_.Serialize() || copy->Find(db, table) == nullptr ||
                   !(*copy->Find(db, table) == *t)) {
          Fail(r, copy->Serialize(), "state differs after a serialization round trip");
        }
      }
    }
  }

  std::string path_;
  Tracker::Options options_;
  Tracker tracker_;
  LexOptions lex_;
  std::string database_ = "test";
  int count_ = 0;
};

TEST(DdlLogicTest, AllFiles) {
  std::filesystem::path dir = std::filesystem::path(CHSYNC_SOURCE_DIR) / "tests" / "data" / "ddl";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".test") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty()) << "no .test files in " << dir;
  int total = 0;
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    Runner runner(file.string());
    runner.Run();
    total += runner.count();
  }
  std::cout << "ran " << total << " records from " << files.size() << " files\n";
}

}  // namespace
}  // namespace chsync::schema
