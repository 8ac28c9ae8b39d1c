// Crash safety of `chsync run`: while a workload keeps changing the source, the pipe is killed
// with SIGKILL at random moments (first during the snapshot, then while streaming) and restarted
// on the same state directory, at least 20 times. Once the workload stops, `chsync run
// --until-caught-up` must finish, and the destination's FINAL view must equal the source row for
// row (ARCHITECTURE.md, "Delivery guarantees"). Between starts a fourth table goes through schema
// changes (ADD, RENAME COLUMN, a widening, a primary-key change rebuilt online, a gh-ost swap), so
// kills also land while those are applied.
//
// The random schedule is printed; CHSYNC_CRASH_SEED=N replays one.
//
// Kills that land too rarely to count on are made on purpose at the end: a state directory set
// back to the checkpoint at the start of a RENAME TABLE that ClickHouse already applied, which is
// what a kill between the RENAME and the checkpoint after it leaves.

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/url.h"
#include "mysql/connection.h"
#include "test_env.h"

namespace chsync {
namespace {

using testing::ChsyncBinary;
using testing::MakeTempDir;
using testing::ProcessResult;
using testing::RequireEnv;
using testing::RunProcess;

constexpr int kKills = 20;
constexpr int kSnapshotKills = 4;  ///< the first kills come quickly, to land in the snapshot
constexpr int kMainSeedRows = 50000;
constexpr int kCompSeedRows = 20000;
constexpr int kNoKeySeedRows = 10000;

std::unique_ptr<mysql::Connection> OpenSource(const std::string& url) {
  auto parsed = ParseUrl(url);
  if (!parsed.ok()) {
    ADD_FAILURE() << "source URL: " << parsed.error().message();
    return nullptr;
  }
  auto options = mysql::OptionsFromUrl(*parsed);
  if (!options.ok()) {
    ADD_FAILURE() << "source URL: " << options.error().message();
    return nullptr;
  }
  auto conn = mysql::Connection::Open(*options);
  if (!conn.ok()) {
    ADD_FAILURE() << conn.error().message();
    return nullptr;
  }
  return std::move(conn).value();
}

std::string UniqueName(const std::string& prefix) {
  auto ticks = std::chrono::steady_clock::now().time_since_epoch().count();
  return prefix + "_" + std::to_string(getpid()) + "_" + std::to_string(ticks % 1000000007);
}

/// The last `max_bytes` of a file, for failure messages.
std::string Tail(const std::string& path, size_t max_bytes = 4000) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string all = ss.str();
  return all.size() <= max_bytes ? all : "…" + all.substr(all.size() - max_bytes);
}

/// A child process with stdin from /dev/null and stdout/stderr appended to `log_path`.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const std::string& log_path) {
    int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) {
      ADD_FAILURE() << "open " << log_path << ": " << std::strerror(errno);
      return;
    }
    pid_ = fork();
    if (pid_ < 0) {
      ADD_FAILURE() << "fork: " << std::strerror(errno);
      close(log_fd);
      return;
    }
    if (pid_ == 0) {
      dup2(log_fd, STDOUT_FILENO);
      dup2(log_fd, STDERR_FILENO);
      int devnull = open("/dev/null", O_RDONLY);
      if (devnull >= 0) dup2(devnull, STDIN_FILENO);
      std::vector<char*> args;
      for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    close(log_fd);
  }
  ~Child() { Kill(); }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  bool started() const { return pid_ > 0; }

  /// True while the process runs; once it has ended, `exit_code()` tells how.
  bool Running() {
    if (pid_ <= 0) return false;
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == 0) return true;
    Reap(status);
    return false;
  }

  /// SIGKILL and reap. No-op when the process has already ended.
  void Kill() {
    if (!Running()) return;
    kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    Reap(status);
  }

  /// Waits up to `timeout` for the process to end by itself; false (still running) on timeout.
  bool WaitFor(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (Running()) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  }

  /// "exit N" or "signal N", once ended.
  const std::string& how_ended() const { return how_ended_; }
  int exit_code() const { return exit_code_; }

 private:
  void Reap(int status) {
    if (WIFEXITED(status)) {
      exit_code_ = WEXITSTATUS(status);
      how_ended_ = "exit " + std::to_string(exit_code_);
    } else if (WIFSIGNALED(status)) {
      how_ended_ = "signal " + std::to_string(WTERMSIG(status));
    }
    pid_ = -1;
  }

  pid_t pid_ = -1;
  int exit_code_ = -1;
  std::string how_ended_;
};

/// ClickHouse TabSeparated field unescaping (\\, \t, \n, \', …).
std::string UnescapeTsv(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out.push_back(s[i]);
      continue;
    }
    char c = s[++i];
    switch (c) {
      case 't': out.push_back('\t'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case '0': out.push_back('\0'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      default: out.push_back(c); break;
    }
  }
  return out;
}

/// One replicated table: how to render a row as canonical text on each side.
struct TableCheck {
  std::string table;
  std::string key;         ///< ClickHouse arguments of uniqExact that identify a row
  std::string mysql_text;  ///< MySQL expression: canonical text of a row
  std::string ch_text;     ///< ClickHouse expression: the same text
};

/// Canonical row texts for the three tables. Decimals compare as scaled integers (ClickHouse
/// versions differ in trailing zeros); DATETIME(6) compares to the microsecond where the
/// destination has DateTime64, else to the (truncated) second.
std::vector<TableCheck> Checks(bool datetime64) {
  std::string ts_format = datetime64 ? "'%Y-%m-%d %H:%i:%s.%f'" : "'%Y-%m-%d %H:%i:%s'";
  return {
      {"t_main", "id",
       "CONCAT_WS('|', id, a, IFNULL(b, 'NULL'), CAST(amount * 100 AS SIGNED), DATE_FORMAT(ts, " + ts_format +
           "), name, IFNULL(note, 'NULL'), IFNULL(qty, 'NULL'), flag)",
       "concat(toString(id), '|', toString(a), '|', ifNull(toString(b), 'NULL'), '|', "
       "toString(toInt64(amount * 100)), '|', toString(ts), '|', name, '|', ifNull(note, 'NULL'), '|', "
       "ifNull(toString(qty), 'NULL'), '|', toString(flag))"},
      {"t_comp", "k1, k2",
       "CONCAT_WS('|', k1, k2, v, IFNULL(CAST(price * 1000 AS SIGNED), 'NULL'), IFNULL(label, 'NULL'))",
       "concat(toString(k1), '|', k2, '|', toString(v), '|', ifNull(toString(toInt64(price * 1000)), "
       "'NULL'), "
       "'|', ifNull(label, 'NULL'))"},
      {"t_nokey", "concat(toString(a), '|', ifNull(b, 'NULL'), '|', toString(toInt64(c * 100)))",
       "CONCAT_WS('|', a, IFNULL(b, 'NULL'), CAST(c * 100 AS SIGNED))",
       "concat(toString(a), '|', ifNull(b, 'NULL'), '|', toString(toInt64(c * 100)))"},
      // t_evo after every step of kEvolution: `a` renamed to `a2`, `n` and `g` added.
      {"t_evo", "id", "CONCAT_WS('|', id, IFNULL(a2, 'NULL'), v, CAST(d * 100 AS SIGNED), n, g)",
       "concat(toString(id), '|', ifNull(toString(a2), 'NULL'), '|', v, '|', toString(toInt64(d * 100)), "
       "'|', "
       "toString(n), '|', toString(g))"},
  };
}

/// Schema changes of t_evo, one before each of the given starts of the pipe (so that kills land
/// around them): ALTERs propagated in place, a rename, a widening, a key change (an online
/// rebuild) and a gh-ost-style swap.
const std::map<int, std::vector<std::string>> kEvolution = {
    {5,
     {"ALTER TABLE t_evo ADD COLUMN n INT NOT NULL DEFAULT 5",
      "UPDATE t_evo SET n = id % 7 WHERE id % 3 = 0"}},
    {7, {"ALTER TABLE t_evo RENAME COLUMN a TO a2", "UPDATE t_evo SET a2 = a2 + 1 WHERE id % 5 = 0"}},
    {9,
     {"ALTER TABLE t_evo MODIFY d DECIMAL(14,2) NOT NULL DEFAULT 0",
      "UPDATE t_evo SET d = d * 1000 WHERE id % 11 = 0"}},
    {11,
     {"ALTER TABLE t_evo DROP PRIMARY KEY, ADD PRIMARY KEY (id, n)",
      "UPDATE t_evo SET v = 'k' WHERE id % 13 = 0"}},
    {14,
     {"CREATE TABLE _t_evo_gho LIKE t_evo", "ALTER TABLE _t_evo_gho ADD COLUMN g INT NOT NULL DEFAULT 9",
      "INSERT IGNORE INTO _t_evo_gho (id, a2, v, d, n) SELECT id, a2, v, d, n FROM t_evo",
      "RENAME TABLE t_evo TO _t_evo_del, _t_evo_gho TO t_evo", "DROP TABLE _t_evo_del",
      "UPDATE t_evo SET g = id % 4 WHERE id % 2 = 0"}},
};

/// A few row changes on t_evo that fit every stage of kEvolution.
std::vector<std::string> EvoChanges(int i) {
  std::string first = std::to_string(100000 + i * 10);
  return {"INSERT INTO t_evo (id, v, d) VALUES (" + first + ", 'new', 1.25), (" + first + " + 1, 'new', 2.5)",
          "UPDATE t_evo SET v = CONCAT(v, '+') WHERE id = " + std::to_string(10 + i * 37),
          "DELETE FROM t_evo WHERE id = " + std::to_string(20 + i * 41)};
}

/// The sustained mixed workload: transactions of inserts, updates (some changing the primary
/// key), deletes across the three tables, and now and then a large one (thousands of rows).
class Workload {
 public:
  Workload(std::unique_ptr<mysql::Connection> conn, std::string db, uint32_t seed)
      : conn_(std::move(conn)), db_(std::move(db)), rng_(seed) {}

  void Start() {
    thread_ = std::thread([this] { Loop(); });
  }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  ~Workload() { Stop(); }

  std::string error() {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }
  int64_t transactions() const { return transactions_; }
  int64_t statements() const { return statements_; }

 private:
  int Rand(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  void Loop() {
    if (Status st = conn_->Execute("USE `" + db_ + "`"); !st.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      error_ = st.error().message();
      return;
    }
    while (!stop_) {
      std::vector<std::string> txn = ++count_ % 40 == 0 ? LargeTransaction() : SmallTransaction();
      Status st = conn_->Execute("START TRANSACTION");
      std::string failed = "START TRANSACTION";
      for (size_t i = 0; st.ok() && i < txn.size(); ++i) {
        st = conn_->Execute(txn[i]);
        failed = txn[i];
      }
      if (st.ok()) {
        st = conn_->Execute("COMMIT");
        failed = "COMMIT";
      }
      if (!st.ok()) {
        std::lock_guard<std::mutex> lock(mu_);
        error_ = failed.substr(0, 300) + ": " + st.error().message();
        return;
      }
      ++transactions_;
      statements_ += static_cast<int64_t>(txn.size());
      std::this_thread::sleep_for(std::chrono::milliseconds(Rand(2, 15)));
    }
  }

  std::string T(const char* table) const { return "`" + db_ + "`." + table; }

  std::string MainValues(int n) {
    std::string v;
    for (int i = 0; i < n; ++i) {
      int id = next_main_++;
      if (i > 0) v += ",";
      v += "(" + std::to_string(id) + "," + std::to_string(Rand(-1000000, 1000000)) + "," +
           (Rand(0, 6) == 0 ? "NULL" : std::to_string(int64_t{id} * 7777777)) + "," +
           std::to_string(Rand(0, 99999)) + "." + std::to_string(Rand(10, 99)) +
           ",'2024-03-01 00:00:00' + INTERVAL " + std::to_string(Rand(0, 9999999)) + " SECOND + INTERVAL " +
           std::to_string(Rand(0, 999999)) + " MICROSECOND,'w" + std::to_string(id) + " Ünïcode ''q'''," +
           (Rand(0, 2) == 0 ? "NULL" : "'note " + std::to_string(Rand(0, 999)) + "'") + "," +
           (Rand(0, 3) == 0 ? "NULL" : std::to_string(Rand(-32768, 32767))) + "," +
           std::to_string(Rand(0, 255)) + ")";
    }
    return v;
  }

  std::vector<std::string> SmallTransaction() {
    std::vector<std::string> txn;
    int ops = Rand(1, 12);
    for (int i = 0; i < ops; ++i) {
      int main_id = Rand(1, next_main_ - 1);
      int k1 = Rand(1, 6000);
      int a = Rand(1, next_nokey_ - 1);
      switch (Rand(0, 11)) {
        case 0:
        case 1: txn.push_back("INSERT INTO " + T("t_main") + " VALUES " + MainValues(Rand(1, 20))); break;
        case 2:
          txn.push_back(
              "UPDATE " + T("t_main") +
              " SET a = a + 1, amount = amount + 0.01, ts = ts + INTERVAL 1001 MICROSECOND, "
              "note = IF(note IS NULL, 'set', NULL), qty = IF(qty IS NULL, 7, NULL) WHERE id BETWEEN " +
              std::to_string(main_id) + " AND " + std::to_string(main_id + Rand(0, 30)));
          break;
        case 3:
          txn.push_back("UPDATE " + T("t_main") + " SET id = " + std::to_string(next_main_++) +
                        ", name = CONCAT(name, '>') WHERE id = " + std::to_string(main_id));
          break;
        case 4:
          txn.push_back("DELETE FROM " + T("t_main") + " WHERE id BETWEEN " + std::to_string(main_id) +
                        " AND " + std::to_string(main_id + Rand(0, 10)));
          break;
        case 5:
          txn.push_back("INSERT INTO " + T("t_comp") + " VALUES (" + std::to_string(k1) + ",'w" +
                        std::to_string(next_comp_++) + "'," + std::to_string(Rand(0, 1000000)) + "," +
                        (Rand(0, 4) == 0 ? "NULL" : std::to_string(Rand(0, 999999)) + ".125") +
                        ",'label é')");
          break;
        case 6:
          txn.push_back(
              "UPDATE " + T("t_comp") +
              " SET v = v + 1, price = IF(price IS NULL, 1.5, price + 2.5) WHERE k1 = " + std::to_string(k1));
          break;
        case 7:
          txn.push_back("UPDATE " + T("t_comp") + " SET k1 = " + std::to_string(Rand(1, 6000)) + ", k2 = 'm" +
                        std::to_string(next_comp_++) + "' WHERE k1 = " + std::to_string(k1) +
                        " ORDER BY k2 LIMIT 1");
          break;
        case 8:
          txn.push_back("DELETE FROM " + T("t_comp") + " WHERE k1 = " + std::to_string(k1) +
                        " ORDER BY k2 LIMIT 2");
          break;
        case 9:
          txn.push_back("INSERT INTO " + T("t_nokey") + " VALUES (" + std::to_string(next_nokey_++) + ",'n" +
                        std::to_string(Rand(0, 99)) + "'," + std::to_string(Rand(0, 99999)) + ".5)");
          break;
        case 10:
          txn.push_back("UPDATE " + T("t_nokey") +
                        " SET c = c + 1.25, b = IF(b IS NULL, 'back', NULL) WHERE a = " + std::to_string(a));
          break;
        default: txn.push_back("DELETE FROM " + T("t_nokey") + " WHERE a = " + std::to_string(a)); break;
      }
    }
    return txn;
  }

  std::vector<std::string> LargeTransaction() {
    int from = Rand(1, std::max(1, next_main_ - 4000));
    std::string range = std::to_string(from) + " AND " + std::to_string(from + Rand(2000, 4000));
    switch (Rand(0, 3)) {
      case 0: {
        int first = next_main_;
        int n = Rand(2000, 5000);
        next_main_ += n;
        return {"INSERT INTO " + T("t_main") + " SELECT seq, seq % 1000, seq * 3, seq / 100, " +
                "'2025-01-01 00:00:00' + INTERVAL seq SECOND + INTERVAL seq % 999983 MICROSECOND, " +
                "CONCAT('bulk ', seq), IF(seq % 3 = 0, NULL, 'bulk note'), seq % 30000, seq % 256 FROM seq_" +
                std::to_string(first) + "_to_" + std::to_string(first + n - 1)};
      }
      case 1:
        return {"UPDATE " + T("t_main") +
                    " SET b = IFNULL(b, 0) + 1, amount = amount + 1.10 WHERE id BETWEEN " + range,
                "UPDATE " + T("t_nokey") + " SET c = c + 0.75 WHERE a BETWEEN " + range};
      case 2:
        return {"DELETE FROM " + T("t_main") + " WHERE id BETWEEN " + range,
                "DELETE FROM " + T("t_comp") + " WHERE k1 BETWEEN " + std::to_string(from % 5000) + " AND " +
                    std::to_string(from % 5000 + 300)};
      default:
        return {"UPDATE " + T("t_comp") +
                " SET v = v - 1, label = CONCAT(IFNULL(label, ''), '+') WHERE k1 BETWEEN " +
                std::to_string(from % 5000) + " AND " + std::to_string(from % 5000 + 700)};
    }
  }

  std::unique_ptr<mysql::Connection> conn_;
  std::string db_;
  std::mt19937 rng_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::string error_;
  std::atomic<int64_t> transactions_{0};
  std::atomic<int64_t> statements_{0};
  int64_t count_ = 0;
  int next_main_ = kMainSeedRows + 1;
  int next_comp_ = 1;
  int next_nokey_ = kNoKeySeedRows + 1;
};

void CreateAndSeed(mysql::Connection& conn, const std::string& db) {
  const std::vector<std::string> statements = {
      "CREATE DATABASE `" + db + "`",
      "USE `" + db + "`",  // the seq_1_to_N tables of the Sequence engine exist in every database
      "CREATE TABLE `" + db +
          "`.t_main (id INT PRIMARY KEY, a INT NOT NULL, b BIGINT NULL, amount DECIMAL(12,2) NOT NULL, "
          "ts DATETIME(6) NOT NULL, name VARCHAR(64) NOT NULL, note VARCHAR(100) NULL, qty SMALLINT NULL, "
          "flag TINYINT UNSIGNED NOT NULL)",
      "CREATE TABLE `" + db +
          "`.t_comp (k1 INT NOT NULL, k2 VARCHAR(20) NOT NULL, v INT NOT NULL, price DECIMAL(10,3) NULL, "
          "label VARCHAR(200) NULL, PRIMARY KEY (k1, k2))",
      "CREATE TABLE `" + db +
          "`.t_nokey (a INT NOT NULL, b VARCHAR(30) NULL, c DECIMAL(10,2) NOT NULL, KEY (a))",
      "INSERT INTO `" + db +
          "`.t_main SELECT seq, CAST(seq * 31 % 100003 AS SIGNED) - 50000, IF(seq % 7 = 0, NULL, seq * "
          "1000003), " +
          "(seq % 100000) / 100, '2020-01-01 00:00:00' + INTERVAL seq * 61 SECOND + INTERVAL seq * 7919 % "
          "1000000 " +
          "MICROSECOND, CONCAT('name ', seq, ' café ''q'''), IF(seq % 3 = 0, NULL, CONCAT('note ', seq % "
          "97)), " +
          "IF(seq % 5 = 0, NULL, CAST(seq % 65536 AS SIGNED) - 32768), seq % 256 FROM seq_1_to_" +
          std::to_string(kMainSeedRows),
      "INSERT INTO `" + db + "`.t_comp SELECT (seq - 1) DIV 4 + 1, CONCAT('k', seq % 4), seq, " +
          "IF(seq % 9 = 0, NULL, seq / 8), IF(seq % 11 = 0, NULL, CONCAT('lbl ', seq)) FROM seq_1_to_" +
          std::to_string(kCompSeedRows),
      "INSERT INTO `" + db + "`.t_nokey SELECT seq, IF(seq % 13 = 0, NULL, CONCAT('b', seq % 50)), seq / 4 " +
          "FROM seq_1_to_" + std::to_string(kNoKeySeedRows),
      "CREATE TABLE `" + db +
          "`.t_evo (id INT PRIMARY KEY, a INT NULL, v VARCHAR(40) NOT NULL, d DECIMAL(8,2) NOT NULL DEFAULT "
          "0)",
      "INSERT INTO `" + db +
          "`.t_evo SELECT seq, IF(seq % 9 = 0, NULL, seq * 2), CONCAT('v', seq), seq / 8 " +
          "FROM seq_1_to_3000",
  };
  for (const std::string& s : statements) {
    Status st = conn.Execute(s);
    ASSERT_TRUE(st.ok()) << s << ": " << st.error().message();
  }
}

/// Rows of `chsync query` output (TabSeparated), each split into unescaped fields.
std::vector<std::vector<std::string>> QueryDest(const std::string& dest, const std::string& sql) {
  ProcessResult r = RunProcess({ChsyncBinary(), "query", "--dest", dest, sql});
  if (r.exit_code != 0) {
    ADD_FAILURE() << "chsync query failed (exit " << r.exit_code << "): " << sql.substr(0, 300) << "…\n"
                  << r.output.substr(0, 3000);
    return {};
  }
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> fields;
    size_t start = 0;
    for (size_t tab = line.find('\t'); tab != std::string::npos; tab = line.find('\t', start)) {
      fields.push_back(UnescapeTsv(std::string_view(line).substr(start, tab - start)));
      start = tab + 1;
    }
    fields.push_back(UnescapeTsv(std::string_view(line).substr(start)));
    rows.push_back(std::move(fields));
  }
  return rows;
}

/// Compares the destination's FINAL view with the source, table by table: row count, no
/// duplicate key, and the canonical text of every row. One `chsync query` reads every table
/// (an embedded store loads its engine once per process).
void ExpectDestinationEqualsSource(mysql::Connection& source, const std::string& dest, const std::string& db,
                                   bool datetime64) {
  const std::vector<TableCheck> checks = Checks(datetime64);
  std::string sql;
  for (const TableCheck& check : checks) {
    std::string from = " FROM `" + db + "`." + check.table + " FINAL WHERE _chsync_is_deleted = 0";
    if (!sql.empty()) sql += " UNION ALL ";
    sql += "SELECT '" + check.table + "', 'count', concat(toString(count()), ' ', toString(uniqExact(" +
           check.key + ")))" + from + " UNION ALL SELECT '" + check.table + "', 'row', " + check.ch_text +
           from;
  }
  std::vector<std::vector<std::string>> dest_rows = QueryDest(dest, sql);
  ASSERT_FALSE(dest_rows.empty());

  for (const TableCheck& check : checks) {
    SCOPED_TRACE(db + "." + check.table);
    auto src = source.Query("SELECT " + check.mysql_text + " FROM `" + db + "`." + check.table);
    ASSERT_TRUE(src.ok()) << src.error().message();
    std::vector<std::string> expected;
    expected.reserve(src->rows.size());
    for (const auto& row : src->rows) expected.push_back(row.at(0).value_or("<NULL>"));

    std::string counts = "<missing>";
    std::vector<std::string> actual;
    for (const std::vector<std::string>& row : dest_rows) {
      ASSERT_EQ(row.size(), 3u) << "unexpected output line from chsync query";
      if (row[0] != check.table) continue;
      if (row[1] == "count") {
        counts = row[2];
      } else {
        actual.push_back(row[2]);
      }
    }
    EXPECT_EQ(counts, std::to_string(expected.size()) + " " + std::to_string(expected.size()))
        << "destination `count() uniqExact(key)` vs source row count";

    std::sort(expected.begin(), expected.end());
    std::sort(actual.begin(), actual.end());
    std::vector<std::string> missing;
    std::vector<std::string> extra;
    std::set_difference(expected.begin(), expected.end(), actual.begin(), actual.end(),
                        std::back_inserter(missing));
    std::set_difference(actual.begin(), actual.end(), expected.begin(), expected.end(),
                        std::back_inserter(extra));
    auto sample = [](const std::vector<std::string>& v) {
      std::string s;
      for (size_t i = 0; i < v.size() && i < 10; ++i) s += "\n    " + v[i];
      return s;
    };
    EXPECT_TRUE(missing.empty() && extra.empty())
        << expected.size() << " source rows, " << actual.size() << " destination rows; " << missing.size()
        << " source rows missing or different at the destination:" << sample(missing) << "\n  "
        << extra.size() << " destination rows not at the source:" << sample(extra);
  }
}

struct CrashRunOptions {
  std::string source;
  std::string dest;
  /// Extra wait before each kill: an embedded destination loads libchdb (~1 s) before working.
  std::chrono::milliseconds startup{0};
  bool datetime64 = false;
  /// More `chsync run` arguments (a destination cluster).
  std::vector<std::string> extra;
  /// Destinations compared with the source at the end besides `dest` (each node of a cluster).
  std::vector<std::string> also_compare;
};

void RunCrashScenario(const CrashRunOptions& o) {
  uint32_t seed = std::random_device{}();
  if (const char* s = std::getenv("CHSYNC_CRASH_SEED"); s != nullptr && *s != '\0') {
    seed = static_cast<uint32_t>(std::strtoul(s, nullptr, 10));
  }
  std::printf("crash schedule seed %u (CHSYNC_CRASH_SEED=%u replays it)\n", seed, seed);
  std::mt19937 rng(seed);

  const std::string db = UniqueName("crash");
  const std::string state = MakeTempDir("crash-state");
  const std::string log = MakeTempDir("crash-log") + "/chsync.log";
  ASSERT_FALSE(state.empty());
  std::unique_ptr<mysql::Connection> admin = OpenSource(o.source);
  ASSERT_NE(admin, nullptr);
  ASSERT_NO_FATAL_FAILURE(CreateAndSeed(*admin, db));

  std::unique_ptr<mysql::Connection> workload_conn = OpenSource(o.source);
  ASSERT_NE(workload_conn, nullptr);
  Workload workload(std::move(workload_conn), db, seed + 1);
  workload.Start();

  const std::string server_id = std::to_string(100000 + getpid() % 1000000);
  std::vector<std::string> argv = {ChsyncBinary(), "run", "--source", o.source, "--dest", o.dest, "--tables",
                                   db + ".*", "--state", state, "--server-id", server_id,
                                   "--snapshot-chunk-rows", "2000", "--snapshot-parallelism", "2",
                                   "--batch-rows", "5000", "--batch-age-ms", "200",
                                   // t_nokey has no key: its distinct rows are compared
                                   "--schema-policy", db + ".t_nokey:keyless=distinct"};
  argv.insert(argv.end(), o.extra.begin(), o.extra.end());

  auto start = std::chrono::steady_clock::now();
  int kills = 0;
  ASSERT_TRUE(admin->Execute("USE `" + db + "`").ok());
  for (int i = 0; i < kKills; ++i) {
    std::vector<std::string> evo = EvoChanges(i);
    if (auto step = kEvolution.find(i); step != kEvolution.end()) {
      evo.insert(evo.begin(), step->second.begin(), step->second.end());
    }
    for (const std::string& sql : evo) {
      Status st = admin->Execute(sql);
      ASSERT_TRUE(st.ok()) << sql << ": " << st.error().message();
    }
    std::ofstream(log, std::ios::app) << "\n=== crash test: start " << i + 1 << " ===\n";
    Child child(argv, log);
    ASSERT_TRUE(child.started());
    int max_ms = i < kSnapshotKills ? 900 : 2000;
    auto delay = o.startup + std::chrono::milliseconds(std::uniform_int_distribution<int>(200, max_ms)(rng));
    bool ended = child.WaitFor(delay);
    ASSERT_FALSE(ended) << "chsync run ended by itself (" << child.how_ended() << ") before kill " << i + 1
                        << "; log tail:\n"
                        << Tail(log);
    child.Kill();
    ++kills;
    // Where the kill landed, for the log (`chsync status` reads the state directory).
    ProcessResult status = RunProcess({ChsyncBinary(), "status", "--state", state});
    std::string phase;
    std::istringstream lines(status.output);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("pipe ", 0) == 0 || line.rfind("tables ", 0) == 0) phase += " | " + line;
    }
    std::printf("kill %d after %lld ms%s\n", kills, static_cast<long long>(delay.count()), phase.c_str());
    std::string w = workload.error();
    ASSERT_TRUE(w.empty()) << "workload failed: " << w;
  }
  auto kill_phase = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  workload.Stop();
  ASSERT_TRUE(workload.error().empty()) << "workload failed: " << workload.error();
  std::printf("%d kills in %.1f s; workload committed %lld transactions (%lld statements)\n", kills,
              kill_phase, static_cast<long long>(workload.transactions()),
              static_cast<long long>(workload.statements()));
  EXPECT_GE(kills, 20);

  std::ofstream(log, std::ios::app) << "\n=== crash test: --until-caught-up ===\n";
  std::vector<std::string> final_argv = argv;
  final_argv.push_back("--until-caught-up");
  Child final_run(final_argv, log);
  ASSERT_TRUE(final_run.started());
  bool ended = final_run.WaitFor(std::chrono::seconds(150));
  ASSERT_TRUE(ended) << "chsync run --until-caught-up still running after 150 s; log tail:\n" << Tail(log);
  // Compared even after a bad exit: the message then tells whether the data had converged.
  EXPECT_EQ(final_run.how_ended(), "exit 0") << "chsync run --until-caught-up; log tail:\n" << Tail(log);
  std::printf("caught up %.1f s after the workload stopped\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() - kill_phase);

  ExpectDestinationEqualsSource(*admin, o.dest, db, o.datetime64);
  for (const std::string& dest : o.also_compare) {
    SCOPED_TRACE("through " + dest);
    ExpectDestinationEqualsSource(*admin, dest, db, o.datetime64);
  }
  if (::testing::Test::HasFailure()) std::printf("chsync log: %s\n", log.c_str());
}

TEST(PipeCrash, KilledRepeatedlyIntoClickhouseServerConverges) {
  CrashRunOptions o;
  o.source = RequireEnv("CHSYNC_TEST_MYSQL_FULL");
  o.dest = RequireEnv("CHSYNC_TEST_CLICKHOUSE");
  ASSERT_FALSE(o.source.empty() || o.dest.empty());
  o.datetime64 = false;  // ClickHouse 18.16: DATETIME(6) arrives as DateTime, whole seconds
  RunCrashScenario(o);
}

TEST(PipeCrash, KilledRepeatedlyIntoShardedClusterConverges) {
  // Two shards of one replica each: shard-local Replicated tables and Distributed tables over them
  // (docs/clusters.md); the kills also land in ON CLUSTER statements and their waits.
  CrashRunOptions o;
  o.source = RequireEnv("CHSYNC_TEST_MYSQL_FULL");
  o.dest = RequireEnv("CHSYNC_TEST_CLICKHOUSE_NODES");
  ASSERT_FALSE(o.source.empty() || o.dest.empty());
  o.extra = {"--dest-cluster", "sharded", "--dest-replication-path",
             "/clickhouse/tables/{sharded_shard}/{database}/{table}"};
  o.also_compare = {RequireEnv("CHSYNC_TEST_CLICKHOUSE_NODE1"), RequireEnv("CHSYNC_TEST_CLICKHOUSE_NODE2")};
  RunCrashScenario(o);
}

TEST(PipeCrash, KilledRepeatedlyIntoEmbeddedStoreConverges) {
  CrashRunOptions o;
  o.source = RequireEnv("CHSYNC_TEST_MYSQL_FULL");
  ASSERT_FALSE(RequireEnv("CHSYNC_CHDB_LIB").empty());
  std::string dir = MakeTempDir("crash-store");
  ASSERT_FALSE(dir.empty());
  o.dest = "file:" + dir + "/store";
  o.startup = std::chrono::milliseconds(1200);
  o.datetime64 = true;
  RunCrashScenario(o);
}

/// A pipe over one database of the source, run with `--until-caught-up` on demand, whose state
/// directory the test can set back to an earlier checkpoint: the state a SIGKILL leaves when it
/// lands after ClickHouse acknowledged a statement's steps and before the checkpoint after it.
class ReplayPipe {
 public:
  ReplayPipe(std::string source, std::string dest, std::string db)
      : source_(std::move(source)),
        dest_(std::move(dest)),
        db_(std::move(db)),
        state_(MakeTempDir("replay-state")) {}

  /// `chsync run --until-caught-up`; its exit code and output.
  ProcessResult CatchUp() const {
    return RunProcess({ChsyncBinary(), "run", "--source", source_, "--dest", dest_, "--tables", db_ + ".*",
                       "--state", state_, "--server-id", std::to_string(200000 + getpid() % 1000000),
                       "--until-caught-up"});
  }
  std::string SaveCheckpoint() const { return Read(state_ + "/checkpoint.json"); }
  void RestoreCheckpoint(const std::string& saved) const {
    std::ofstream(state_ + "/checkpoint.json", std::ios::binary | std::ios::trunc) << saved;
  }
  /// The ClickHouse tables of the database, sorted, one string.
  std::string Tables() const {
    std::string names;
    for (const auto& row : QueryDest(dest_, "SELECT name FROM system.tables WHERE database = '" + db_ +
                                                "' AND name != '_chsync_schema_log' ORDER BY name")) {
      names += (names.empty() ? "" : " ") + row.at(0);
    }
    return names;
  }
  /// `id|v|…` of each row of the FINAL view of `table`, sorted by id, one string.
  std::string Rows(const std::string& table, const std::string& text) const {
    std::string sql = "SELECT ";
    sql.append(text).append(" FROM `").append(db_).append("`.").append(table);
    sql.append(" FINAL WHERE _chsync_is_deleted = 0 ORDER BY id");
    std::string rows;
    for (const auto& row : QueryDest(dest_, sql)) rows.append(row.at(0)).append("\n");
    return rows;
  }

 private:
  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::string source_;
  std::string dest_;
  std::string db_;
  std::string state_;
};

std::string SourceRows(mysql::Connection& source, const std::string& table, const std::string& text) {
  auto rows = source.Query("SELECT " + text + " FROM " + table + " ORDER BY id");
  EXPECT_TRUE(rows.ok()) << rows.error().message();
  std::string out;
  if (!rows.ok()) return out;
  for (const auto& row : rows->rows) out.append(row.at(0).value_or("<NULL>")).append("\n");
  return out;
}

void ExecuteAll(mysql::Connection& conn, const std::vector<std::string>& statements) {
  for (const std::string& sql : statements) {
    Status st = conn.Execute(sql);
    ASSERT_TRUE(st.ok()) << sql << ": " << st.error().message();
  }
}

TEST(PipeCrash, SwapReplayedAfterItReachedClickhouseIsNotAppliedAgain) {
  // A gh-ost swap that ClickHouse fully applied, then a kill before the checkpoint after it: the
  // next run replays the RENAME from the checkpoint at its start. Renaming `t` to `_t_del` again
  // would move the new table (the former `_t_gho`) there, and the DROP after it would drop it.
  const std::string source_url = RequireEnv("CHSYNC_TEST_MYSQL_FULL");
  const std::string dest = RequireEnv("CHSYNC_TEST_CLICKHOUSE");
  ASSERT_FALSE(source_url.empty() || dest.empty());
  std::unique_ptr<mysql::Connection> source = OpenSource(source_url);
  ASSERT_NE(source, nullptr);
  const std::string db = UniqueName("replay_swap");
  ASSERT_NO_FATAL_FAILURE(ExecuteAll(
      *source, {"CREATE DATABASE `" + db + "`", "USE `" + db + "`",
                "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20) NOT NULL)",
                "INSERT INTO t SELECT seq, CONCAT('v', seq) FROM seq_1_to_50", "CREATE TABLE _t_gho LIKE t",
                "ALTER TABLE _t_gho ADD COLUMN g INT NOT NULL DEFAULT 9",
                "INSERT INTO _t_gho (id, v) SELECT id, v FROM t"}));
  ReplayPipe pipe(source_url, dest, db);
  ProcessResult run = pipe.CatchUp();
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string before_swap = pipe.SaveCheckpoint();

  ASSERT_NO_FATAL_FAILURE(ExecuteAll(*source, {"RENAME TABLE t TO _t_del, _t_gho TO t"}));
  run = pipe.CatchUp();
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(pipe.Tables(), "_t_del t");
  pipe.RestoreCheckpoint(before_swap);

  ASSERT_NO_FATAL_FAILURE(ExecuteAll(*source, {"DROP TABLE _t_del", "INSERT INTO t VALUES (51, 'new', 4)",
                                               "UPDATE t SET g = id % 4 WHERE id % 2 = 0"}));
  run = pipe.CatchUp();
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("not run again"), std::string::npos) << run.output;
  EXPECT_EQ(pipe.Tables(), "t");  // nothing moved aside
  const std::string text = "CONCAT_WS('|', id, v, g)";
  EXPECT_EQ(pipe.Rows("t", "concat(toString(id), '|', v, '|', toString(g))"), SourceRows(*source, "t", text));
}

TEST(PipeCrash, RenameReplayedAfterItReachedClickhouseIsNotAppliedAgain) {
  // `RENAME TABLE t TO t2` applied in ClickHouse, then a kill before the checkpoint after it: on the
  // replay, `t2` is the renamed table itself, not one to move out of the way.
  const std::string source_url = RequireEnv("CHSYNC_TEST_MYSQL_FULL");
  const std::string dest = RequireEnv("CHSYNC_TEST_CLICKHOUSE");
  ASSERT_FALSE(source_url.empty() || dest.empty());
  std::unique_ptr<mysql::Connection> source = OpenSource(source_url);
  ASSERT_NE(source, nullptr);
  const std::string db = UniqueName("replay_rename");
  ASSERT_NO_FATAL_FAILURE(
      ExecuteAll(*source, {"CREATE DATABASE `" + db + "`", "USE `" + db + "`",
                           "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20) NOT NULL)",
                           "INSERT INTO t SELECT seq, CONCAT('v', seq) FROM seq_1_to_50"}));
  ReplayPipe pipe(source_url, dest, db);
  ProcessResult run = pipe.CatchUp();
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string before_rename = pipe.SaveCheckpoint();

  ASSERT_NO_FATAL_FAILURE(ExecuteAll(*source, {"RENAME TABLE t TO t2"}));
  run = pipe.CatchUp();
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(pipe.Tables(), "t2");
  pipe.RestoreCheckpoint(before_rename);

  ASSERT_NO_FATAL_FAILURE(
      ExecuteAll(*source, {"INSERT INTO t2 VALUES (51, 'new')", "DELETE FROM t2 WHERE id = 7"}));
  run = pipe.CatchUp();
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(pipe.Tables(), "t2");  // nothing moved aside
  EXPECT_EQ(pipe.Rows("t2", "concat(toString(id), '|', v)"),
            SourceRows(*source, "t2", "CONCAT_WS('|', id, v)"));
}

}  // namespace
}  // namespace chsync
