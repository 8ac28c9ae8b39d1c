#pragma once

// End-to-end helpers for `chsync run` tests: "the FINAL view equals the source, value for value",
// and running chsync as a child process (in the foreground with separate stdout/stderr, or in the
// background until it is signalled).
//
// The destination is always read through `chsync query` (never by loading chDB into the test
// process), so the same code reads a ClickHouse server and an embedded store. An embedded store
// admits one process at a time: read it only while no `chsync run` holds it.

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mysql/connection.h"

namespace chsync::testing {

/// What a finished child process left, its streams kept apart.
struct CommandResult {
  int exit_code = -1;      ///< -1 when it did not exit normally (killed by a signal)
  int signal = 0;          ///< the signal that ended it, when exit_code is -1
  bool timed_out = false;  ///< killed (SIGKILL) because it outlived the timeout
  std::string out;         ///< stdout
  std::string err;         ///< stderr

  /// "exit N" plus both streams, for assertion messages.
  std::string Describe() const;
};

/// Runs `argv` (argv[0] is a path), waits for it, and returns its exit code and both streams.
/// With `timeout_ms` > 0 a child still running after that long is killed (SIGKILL, timed_out).
CommandResult RunCommand(const std::vector<std::string>& argv, int timeout_ms = 0);

/// A child process running in the background with stdout and stderr appended to `log_path`.
class BackgroundProcess {
 public:
  /// Starts `argv`; records a test failure and returns nullopt when fork/exec fails.
  static std::optional<BackgroundProcess> Start(const std::vector<std::string>& argv,
                                                const std::string& log_path);
  BackgroundProcess(BackgroundProcess&& other) noexcept;
  BackgroundProcess& operator=(BackgroundProcess&&) = delete;
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;
  /// Kills (SIGKILL) and reaps the child if it is still running.
  ~BackgroundProcess();

  /// True while the child has not exited (reaps it when it has).
  bool Running();
  /// Sends `sig` and waits up to `timeout_ms` for the child to exit. Returns its exit code, -1
  /// when it died of a signal, or -2 when it was still running at the deadline (then it is
  /// killed with SIGKILL).
  int SignalAndWait(int sig, int timeout_ms);
  /// The exit code once the child exited (see SignalAndWait), -2 while running.
  int exit_code() const { return exit_code_; }
  /// Everything the child wrote so far.
  std::string Log() const;
  pid_t pid() const { return pid_; }

 private:
  BackgroundProcess(pid_t pid, std::string log_path) : pid_(pid), log_path_(std::move(log_path)) {}
  pid_t pid_ = -1;
  bool reaped_ = false;
  int exit_code_ = -2;
  std::string log_path_;
};

/// A TabSeparated result parsed: fields unescaped, NULL (`\N`) as nullopt.
using TsvRows = std::vector<std::vector<std::optional<std::string>>>;

/// Parses ClickHouse TabSeparated output.
TsvRows ParseTabSeparated(const std::string& text);

/// Runs `chsync query --dest URL SQL` and parses its output. On failure records nothing and
/// returns nullopt with the reason in `*error`.
std::optional<TsvRows> QueryDestination(const std::string& dest_url, const std::string& sql,
                                        std::string* error);

/// The ClickHouse server's major.minor as a number (18.16 → 1816, 26.7 → 2607), or -1 (with
/// `*error` set) when the destination cannot be asked.
int DestinationVersion(const std::string& dest_url, std::string* error);

/// How a source column is compared: the canonical SQL expressions on both sides and the text
/// normalisation applied to what they return.
enum class CompareKind {
  kInteger,   ///< integers, BIT (as its unsigned value), YEAR (as a number, zero year 0)
  kFloat,     ///< FLOAT: the same IEEE single on both sides
  kDouble,    ///< DOUBLE: the same IEEE double on both sides
  kDecimal,   ///< DECIMAL: numerically canonical text (no trailing fraction zeros, no "-0")
  kDate,      ///< DATE: zero dates and out-of-range dates as docs/types.md maps them
  kDateTime,  ///< DATETIME/TIMESTAMP (fsp): UTC text; fraction dropped on servers before 20.1
  kText,      ///< TIME, UUID, INET4/INET6: the text the source prints
  kGeometry,  ///< GEOMETRY: WKT (ST_AsText at the source), numbers compared as IEEE doubles and
              ///< spaces after commas ignored (MariaDB prints `1e20`, `0.00000015`)
  kBytes,     ///< CHAR/VARCHAR/TEXT/JSON/SET/ENUM: the text as UTF-8 (converted by the server
              ///< from the column's character set); BINARY/BLOB: the bytes; hex on both sides
};

/// One source column as the comparison sees it (from information_schema.COLUMNS).
struct SourceColumn {
  std::string name;
  std::string data_type;    ///< DATA_TYPE, lower case ("int", "datetime", "inet6", …)
  std::string column_type;  ///< COLUMN_TYPE ("int(10) unsigned", "enum('a','b')", …)
  bool nullable = true;
  int fsp = 0;          ///< DATETIME_PRECISION for temporal columns
  std::string charset;  ///< CHARACTER_SET_NAME ("" for non-text, "binary" for bytes)
  CompareKind kind = CompareKind::kText;
  std::string source_expr;  ///< MariaDB expression of the canonical value
  std::string dest_expr;    ///< ClickHouse expression of the canonical value
};

/// A table read on one side: canonical rows keyed by their key columns' canonical values.
struct CanonicalTable {
  std::vector<SourceColumn> columns;
  std::vector<size_t> key_columns;  ///< indexes into `columns`
  /// key text → the rows with that key (more than one is a duplicate); each row holds one
  /// canonical value per column of `columns`, nullopt for NULL.
  std::map<std::string, std::vector<std::vector<std::optional<std::string>>>> rows;
  size_t row_count = 0;
};

struct CompareOptions {
  /// Destination database; the source database name when empty (as `chsync run` does without
  /// --dest-database).
  std::string dest_database;
  /// Destination table; the source table's name when empty.
  std::string dest_table;
  /// Source columns left out of the comparison (a test checks them itself).
  std::vector<std::string> ignore_columns;
  /// Most differences listed in the report (all are counted).
  size_t max_differences = 12;
};

/// The columns of `db.table` at the source, with their comparison kind and canonical expressions,
/// and the indexes of the key columns (primary key, else the first UNIQUE key whose columns are
/// all NOT NULL, else every column, as docs/types.md "Keys" says). `dest_version` is
/// DestinationVersion()'s result (it decides the DateTime and Date rules).
bool DescribeSourceTable(mysql::Connection& source, const std::string& db, const std::string& table,
                         int dest_version, std::vector<SourceColumn>* columns,
                         std::vector<size_t>* key_columns, std::string* error);

/// Reads the source table (time_zone '+00:00') with canonical values.
std::optional<CanonicalTable> ReadSourceTable(mysql::Connection& source, const std::string& db,
                                              const std::string& table,
                                              const std::vector<SourceColumn>& columns,
                                              const std::vector<size_t>& key_columns, int dest_version,
                                              std::string* error);

/// Reads `SELECT … FROM dest_db.table FINAL WHERE _chsync_is_deleted = 0` with canonical values.
std::optional<CanonicalTable> ReadDestinationTable(const std::string& dest_url, const std::string& dest_db,
                                                   const std::string& table,
                                                   const std::vector<SourceColumn>& columns,
                                                   const std::vector<size_t>& key_columns, int dest_version,
                                                   std::string* error);

/// Compares the source table `db.table` with its destination's current state, value for value,
/// over the columns the source has now. Returns "" when they are equal; otherwise a report that
/// starts with "db.table:" and lists the first differences: keys missing at the destination,
/// extra keys, duplicated keys and columns whose values differ (source value, destination value).
/// A failure to read either side is reported the same way (never "equal").
std::string CompareTable(mysql::Connection& source, const std::string& dest_url, const std::string& db,
                         const std::string& table, const CompareOptions& options = {});

}  // namespace chsync::testing
