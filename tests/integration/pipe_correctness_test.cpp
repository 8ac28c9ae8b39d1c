// Issue 13 end to end: the ways the pipe could lose, misplace or refuse data, each a named test
// against real servers (scripts/test-servers), on both destinations where it applies.
//
//   XA transactions (MariaDB FULL): rows appear at XA COMMIT (or XA COMMIT … ONE PHASE) only, never
//   after XA ROLLBACK, also when the pipe is killed between PREPARE and COMMIT.
//   Compressed events (MariaDB with log_bin_compress): more rows than bytes in an event must not
//   give a later change a lower version.
//   Wide rows: 40 values of 16 MiB stream with a bounded peak RSS (batch.max_bytes).
//   ClickHouse down (the `clickhouse-fault` server, killed with SIGKILL): a DDL that could not be
//   applied is applied once it returns; SIGTERM while the flusher retries ends the run promptly and
//   loses nothing.
//   A state directory is refused against another source server.
//
// Each test uses its own source database, --state directory, --server-id and (embedded) store.
// The FaultClickHouse tests share one server that they kill: ctest runs them one at a time
// (RESOURCE_LOCK, pipe_correctness.cmake).

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "mysql/connection.h"
#include "pipe_compare.h"
#include "pipe_harness.h"
#include "test_env.h"

namespace chsync {
namespace {

using testing::BackgroundProcess;
using testing::CommandResult;
using testing::CompareOptions;
using testing::Dest;
using testing::DestColumnMap;
using testing::DestName;
using testing::MakeTempDir;
using testing::OpenSource;
using testing::PipeTest;
using testing::ReadFile;
using testing::RequireEnv;
using testing::RunCommand;
using testing::Tail;
using Clock = std::chrono::steady_clock;

/// Replication server ids of this binary (pipe_e2e_test uses 1000000 + …, schema_evolution_test
/// 3000000 + …, hires_temporal_e2e_test 5000000 + …).
constexpr int kServerIdBase = 7000000;

/// A run that should finish quickly still gets this long on a loaded machine.
constexpr int kRunTimeoutMs = 300'000;

std::string Str(int64_t v) {
  return std::to_string(v);
}

std::string Seconds(Clock::duration d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", std::chrono::duration<double>(d).count());
  return buf;
}

/// Polls `done` every `poll` until it is true (returns true) or `timeout` passed (false).
bool WaitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout,
               std::chrono::milliseconds poll = std::chrono::milliseconds(200)) {
  auto deadline = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(poll);
  }
  return true;
}

/// A binlog coordinate; ordered as the binlog is (file names are zero-padded).
struct BinlogPos {
  std::string file;
  uint64_t position = 0;
  bool operator<(const BinlogPos& o) const { return file != o.file ? file < o.file : position < o.position; }
  std::string Text() const { return file + ":" + Str(static_cast<int64_t>(position)); }
};

/// The source's current binlog end (SHOW MASTER STATUS); records a failure when it cannot tell.
std::optional<BinlogPos> MasterPosition(mysql::Connection& conn) {
  auto r = conn.Query("SHOW MASTER STATUS");
  if (!r.ok() || r->rows.empty() || r->rows[0].size() < 2 || !r->rows[0][0] || !r->rows[0][1]) {
    ADD_FAILURE() << "SHOW MASTER STATUS: " << (r.ok() ? "no binlog" : r.error().message());
    return std::nullopt;
  }
  return BinlogPos{*r->rows[0][0], std::stoull(*r->rows[0][1])};
}

/// The `resume` position of STATE/checkpoint.json (state/checkpoint.h), nullopt before the first
/// checkpoint or while the file is being replaced.
std::optional<BinlogPos> CheckpointResume(const std::string& state) {
  std::ifstream in(state + "/checkpoint.json");
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  auto j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.contains("resume") || !j["resume"].is_object()) return std::nullopt;
  const auto& r = j["resume"];
  if (!r.contains("file") || !r["file"].is_string() || !r.contains("position") ||
      !r["position"].is_number_unsigned()) {
    return std::nullopt;
  }
  return BinlogPos{r["file"].get<std::string>(), r["position"].get<uint64_t>()};
}

/// How many prepared XA transactions STATE/checkpoint.json lists (`pending_xa`), -1 when it has no
/// such list. For the test's log only: the format is state/checkpoint.h's to change.
int CheckpointPendingXa(const std::string& state) {
  std::ifstream in(state + "/checkpoint.json");
  std::stringstream text;
  text << in.rdbuf();
  auto j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.contains("pending_xa") || !j["pending_xa"].is_array()) return -1;
  return static_cast<int>(j["pending_xa"].size());
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

/// Writes a YAML configuration file into a fresh directory and returns its path.
std::string WriteConfig(const std::string& yaml) {
  std::string path = MakeTempDir("correctness-config") + "/chsync.yaml";
  std::ofstream(path) << yaml;
  return path;
}

/// A connection to `url` with `db` as its current database; nullptr (and a failure) when it fails.
std::unique_ptr<mysql::Connection> OpenIn(const std::string& url, const std::string& db) {
  auto conn = OpenSource(url);
  if (conn == nullptr) return nullptr;
  if (Status st = conn->Execute("USE " + db); !st.ok()) {
    ADD_FAILURE() << "USE " << db << ": " << st.error().message();
    return nullptr;
  }
  return conn;
}

bool ExecOn(mysql::Connection& conn, const std::string& sql) {
  Status st = conn.Execute(sql);
  if (!st.ok()) ADD_FAILURE() << "at the source: " << sql.substr(0, 300) << ": " << st.error().message();
  return st.ok();
}

/// An XA id unique to this test's database (XA ids are global to the server).
std::string Xid(const PipeTest& p, const std::string& name) {
  return "'" + p.db() + "-" + name + "'";
}

/// XA START … XA PREPARE `xid` with `statements` on a connection of its own, which then
/// disconnects: MariaDB lets another connection finish a prepared XA transaction only once the one
/// that prepared it is gone (as after a transaction manager's crash).
bool XaPrepare(const PipeTest& p, const std::string& xid, const std::vector<std::string>& statements) {
  auto conn = OpenIn(p.source_url(), p.db());
  if (conn == nullptr) return false;
  bool ok = ExecOn(*conn, "XA START " + xid);
  for (const std::string& s : statements) ok = ok && ExecOn(*conn, s);
  ok = ok && ExecOn(*conn, "XA END " + xid) && ExecOn(*conn, "XA PREPARE " + xid);
  return ok;
}

/// `XA COMMIT xid` or `XA ROLLBACK xid` from a new connection. Retries while the server has not
/// yet detached the transaction from the preparing connection (XAER_NOTA, 1397).
bool XaFinish(const PipeTest& p, const std::string& verb, const std::string& xid) {
  auto conn = OpenIn(p.source_url(), p.db());
  if (conn == nullptr) return false;
  const std::string sql = "XA " + verb + " " + xid;
  auto deadline = Clock::now() + std::chrono::seconds(30);
  for (;;) {
    Status st = conn->Execute(sql);
    if (st.ok()) return true;
    if (st.error().server_code() != 1397 || Clock::now() > deadline) {
      ADD_FAILURE() << sql << ": " << st.error().message();
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

/// Live rows of the destination's FINAL view of `table` that match `where`.
std::string DestCountWhere(const PipeTest& p, const std::string& table, const std::string& where) {
  return p.DestValue("SELECT count() FROM " + p.DestTable(table) +
                     " FINAL WHERE _chsync_is_deleted = 0 AND (" + where + ")");
}

/// Source rows of `table` that match `where`.
std::string SourceCountWhere(const PipeTest& p, const std::string& table, const std::string& where) {
  return p.SourceValue("SELECT COUNT(*) FROM " + table + " WHERE " + where);
}

class PipeCorrectnessTest : public ::testing::TestWithParam<Dest> {
 protected:
  void TearDown() override { p_.Cleanup(); }

  /// A pipe from the source in `source_env` into this test's destination.
  void Init(const std::string& source_env, const std::string& prefix) {
    p_.Init(source_env, GetParam(), prefix, kServerIdBase);
  }

  /// Table x (id INT PRIMARY KEY, v VARCHAR(20), n INT) with rows 1..100, copied by a first run.
  void CreateAndCopyX() {
    p_.ExecAll({"CREATE TABLE x (id INT PRIMARY KEY, v VARCHAR(20) NOT NULL, n INT NOT NULL)",
                "INSERT INTO x SELECT seq, CONCAT('v', seq), seq FROM seq_1_to_100"});
    CommandResult r = p_.Run();
    ASSERT_RUN_OK(r, "(snapshot)");
    EXPECT_EQUAL_TO_SOURCE(p_, "x", "after the snapshot");
  }

  PipeTest p_;
};

// ---------------------------------------------------------------------------------------------
// XA transactions (issue 13, item 3).

TEST_P(PipeCorrectnessTest, XaCommitAppearsRollbackNever) {
  Init("CHSYNC_TEST_MYSQL_FULL", "xa");
  ASSERT_TRUE(p_.connected());
  ASSERT_NO_FATAL_FAILURE(CreateAndCopyX());

  // XA 'a' prepared on its own connection, ordinary transactions on another, then XA COMMIT from a
  // third one.
  const std::string a = Xid(p_, "a");
  ASSERT_TRUE(XaPrepare(p_, a,
                        {"INSERT INTO x SELECT seq, 'xa-a', seq FROM seq_1001_to_1010",
                         "UPDATE x SET v = 'xa-a' WHERE id <= 10", "DELETE FROM x WHERE id = 11"}));
  p_.ExecAll({"INSERT INTO x SELECT seq, 'plain', seq FROM seq_2001_to_2010",
              "UPDATE x SET n = n + 1 WHERE id BETWEEN 20 AND 30", "DELETE FROM x WHERE id = 31"});
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "after XA PREPARE 'a' and ordinary transactions");
  EXPECT_EQ(DestCountWhere(p_, "x", "id BETWEEN 1001 AND 1010 OR v = 'xa-a'"), "0")
      << "rows of a prepared, not yet committed XA transaction are in ClickHouse";
  EXPECT_EQ(DestCountWhere(p_, "x", "id = 11"), "1")
      << "a delete of a prepared, not yet committed XA transaction reached ClickHouse";
  EXPECT_EQ(DestCountWhere(p_, "x", "id BETWEEN 2001 AND 2010"), "10")
      << "ordinary transactions after an XA PREPARE are missing";
  EXPECT_EQ(DestCountWhere(p_, "x", "id = 31"), "0");

  ASSERT_TRUE(XaFinish(p_, "COMMIT", a));
  p_.ExecAll({"INSERT INTO x SELECT seq, 'plain', seq FROM seq_2011_to_2020"});
  r = p_.Run();
  ASSERT_RUN_OK(r, "after XA COMMIT 'a'");
  EXPECT_EQ(DestCountWhere(p_, "x", "v = 'xa-a'"), "20") << "rows of XA 'a' missing after its XA COMMIT";
  EXPECT_EQ(DestCountWhere(p_, "x", "id = 11"), "0") << "the delete of XA 'a' missing after its XA COMMIT";
  EXPECT_EQUAL_TO_SOURCE(p_, "x", "after XA COMMIT 'a'");

  // XA 'b' prepared, then rolled back from another connection.
  const std::string b = Xid(p_, "b");
  ASSERT_TRUE(
      XaPrepare(p_, b,
                {"INSERT INTO x SELECT seq, 'xa-b', seq FROM seq_3001_to_3005",
                 "UPDATE x SET v = 'xa-b' WHERE id BETWEEN 40 AND 45", "DELETE FROM x WHERE id = 50"}));
  p_.Exec("UPDATE x SET n = n * 2 WHERE id BETWEEN 60 AND 70");
  r = p_.Run();
  ASSERT_RUN_OK(r, "after XA PREPARE 'b'");
  EXPECT_EQ(DestCountWhere(p_, "x", "v = 'xa-b' OR id BETWEEN 3001 AND 3005"), "0")
      << "rows of a prepared, not yet committed XA transaction are in ClickHouse";
  ASSERT_TRUE(XaFinish(p_, "ROLLBACK", b));
  r = p_.Run();
  ASSERT_RUN_OK(r, "after XA ROLLBACK 'b'");
  EXPECT_EQ(DestCountWhere(p_, "x", "v = 'xa-b' OR id BETWEEN 3001 AND 3005"), "0")
      << "rows of a rolled-back XA transaction are in ClickHouse";
  EXPECT_EQ(DestCountWhere(p_, "x", "id = 50"), "1")
      << "the delete of a rolled-back XA transaction was applied";
  EXPECT_EQUAL_TO_SOURCE(p_, "x", "after XA ROLLBACK 'b'");

  // One phase; rolled back before PREPARE; two prepared at once, finished in the other order, with
  // ordinary transactions in between.
  const std::string c = Xid(p_, "c");
  const std::string d = Xid(p_, "d");
  p_.ExecAll({"XA START " + c, "INSERT INTO x SELECT seq, 'xa-c', seq FROM seq_4001_to_4005",
              "UPDATE x SET v = 'xa-c' WHERE id = 80", "XA END " + c, "XA COMMIT " + c + " ONE PHASE",
              "XA START " + d, "INSERT INTO x SELECT seq, 'xa-d', seq FROM seq_5001_to_5005",
              "UPDATE x SET v = 'xa-d' WHERE id = 81", "XA END " + d, "XA ROLLBACK " + d});
  const std::string e = Xid(p_, "e");
  const std::string f = Xid(p_, "f");
  ASSERT_TRUE(XaPrepare(p_, e, {"INSERT INTO x SELECT seq, 'xa-e', seq FROM seq_6001_to_6005"}));
  p_.Exec("INSERT INTO x VALUES (2100, 'plain', 1)");
  ASSERT_TRUE(XaPrepare(p_, f,
                        {"INSERT INTO x SELECT seq, 'xa-f', seq FROM seq_7001_to_7005",
                         "UPDATE x SET v = 'xa-f' WHERE id = 90"}));
  p_.Exec("UPDATE x SET n = -1 WHERE id = 2100");
  ASSERT_TRUE(XaFinish(p_, "ROLLBACK", f));
  p_.Exec("DELETE FROM x WHERE id = 2001");
  ASSERT_TRUE(XaFinish(p_, "COMMIT", e));
  r = p_.Run();
  ASSERT_RUN_OK(r, "after the last XA transactions");
  EXPECT_EQ(DestCountWhere(p_, "x", "v = 'xa-c'"), "6") << "rows of XA COMMIT … ONE PHASE missing";
  EXPECT_EQ(DestCountWhere(p_, "x", "v IN ('xa-d', 'xa-f')"), "0") << "rows of a rolled-back XA are there";
  EXPECT_EQ(DestCountWhere(p_, "x", "v = 'xa-e'"), "5") << "rows of XA 'e' missing after its XA COMMIT";
  EXPECT_EQUAL_TO_SOURCE(p_, "x", "at the end");
}

TEST_P(PipeCorrectnessTest, XaPreparedSurvivesPipeKill) {
  Init("CHSYNC_TEST_MYSQL_FULL", "xakill");
  ASSERT_TRUE(p_.connected());
  ASSERT_NO_FATAL_FAILURE(CreateAndCopyX());

  const std::string log = MakeTempDir("correctness-log") + "/run.log";
  const char* const outcomes[] = {"COMMIT", "ROLLBACK"};
  for (int round = 0; round < 2; ++round) {
    const std::string outcome = outcomes[round];
    SCOPED_TRACE("XA " + outcome + " after the kill");
    const int base = 10000 * (round + 1);
    const std::string xid = Xid(p_, "k" + Str(round));
    const std::string where = "id BETWEEN " + Str(base + 1) + " AND " + Str(base + 20);

    // A streaming pipe reads the PREPARE and the ordinary transactions after it…
    auto run = BackgroundProcess::Start(p_.RunArgs(p_.db() + ".*", false, {"--batch-age-ms", "100"}), log);
    ASSERT_TRUE(run.has_value());
    ASSERT_TRUE(XaPrepare(
        p_, xid,
        {"INSERT INTO x SELECT seq, 'xa', seq FROM seq_" + Str(base + 1) + "_to_" + Str(base + 20),
         "UPDATE x SET v = 'xa' WHERE id BETWEEN " + Str(round * 10 + 1) + " AND " + Str(round * 10 + 5),
         "DELETE FROM x WHERE id = " + Str(95 + round)}));
    std::optional<BinlogPos> after_prepare = MasterPosition(p_.conn());
    ASSERT_TRUE(after_prepare.has_value());
    p_.ExecAll(
        {"INSERT INTO x SELECT seq, 'plain', seq FROM seq_" + Str(base + 101) + "_to_" + Str(base + 120),
         "UPDATE x SET n = n + 100 WHERE id BETWEEN 30 AND 40"});
    // …and saves a checkpoint past the PREPARE (the ordinary transactions after it are applied).
    std::optional<BinlogPos> resume;
    bool past = WaitUntil(
        [&] {
          resume = CheckpointResume(p_.state());
          return !run->Running() || (resume.has_value() && !(*resume < *after_prepare));
        },
        std::chrono::seconds(120));
    ASSERT_TRUE(run->Running()) << "chsync run exited (" << run->exit_code() << "):\n" << Tail(run->Log());
    ASSERT_TRUE(past) << "within 120 s the checkpoint did not move past the XA PREPARE (ends before "
                      << after_prepare->Text() << "; resume " << (resume ? resume->Text() : "none") << "):\n"
                      << Tail(run->Log());
    // …and is killed before the XA transaction is finished.
    EXPECT_EQ(run->SignalAndWait(SIGKILL, 10'000), -1);
    std::printf("killed with the checkpoint at %s (XA PREPARE ended before %s; pending_xa: %d)\n",
                resume->Text().c_str(), after_prepare->Text().c_str(), CheckpointPendingXa(p_.state()));

    ASSERT_TRUE(XaFinish(p_, outcome, xid));
    p_.Exec("INSERT INTO x SELECT seq, 'after', seq FROM seq_" + Str(base + 201) + "_to_" + Str(base + 210));
    // The chsync started after the kill counts the XA transaction's row changes when it commits
    // (they wait in its rows file with its rows): its one delete, the only one here, shows in
    // chsync_row_changes_total; after XA ROLLBACK nothing does.
    const int port = testing::FreeLoopbackPort();
    auto resumed = BackgroundProcess::Start(
        p_.RunArgs(p_.db() + ".*", false, {"--batch-age-ms", "100", "--http", "127.0.0.1:" + Str(port)}),
        log);
    ASSERT_TRUE(resumed.has_value());
    const std::string deletes = "chsync_row_changes_total{table=\"" + p_.db() + ".x\",kind=\"delete\"}";
    std::optional<BinlogPos> written = MasterPosition(p_.conn());
    ASSERT_TRUE(written.has_value());
    // A checkpoint past the last write: everything before it was acknowledged, and counted.
    const bool applied = WaitUntil(
        [&] {
          std::optional<BinlogPos> at = CheckpointResume(p_.state());
          return !resumed->Running() || (at.has_value() && !(*at < *written));
        },
        std::chrono::seconds(120));
    ASSERT_TRUE(applied && resumed->Running()) << Tail(resumed->Log());
    const std::string metrics =
        RunCommand({"/usr/bin/curl", "-sS", "--max-time", "5", "http://127.0.0.1:" + Str(port) + "/metrics"})
            .out;
    if (outcome == "COMMIT") {
      EXPECT_NE(metrics.find(deletes + " 1\n"), std::string::npos) << metrics;
    } else {
      EXPECT_EQ(metrics.find(deletes + " 1"), std::string::npos) << metrics;
    }
    EXPECT_EQ(resumed->SignalAndWait(SIGINT, 20'000), 0) << Tail(resumed->Log());
    CommandResult r = p_.Run();
    ASSERT_RUN_OK(r, "after the kill and XA " + outcome);
    EXPECT_EQ(DestCountWhere(p_, "x", where), round == 0 ? "20" : "0")
        << "rows of the XA transaction after XA " << outcome;
    EXPECT_EQ(DestCountWhere(p_, "x", "v = 'xa'"), SourceCountWhere(p_, "x", "v = 'xa'"));
    EXPECT_EQ(p_.DestCount("x"), SourceCountWhere(p_, "x", "TRUE"));
    EXPECT_EQUAL_TO_SOURCE(p_, "x", "after the kill and XA " + outcome);
  }
}

// ---------------------------------------------------------------------------------------------
// Rows of compressed events (issue 13, item 4).

/// Rows events of `db.table` in [from, to) of the binlog (SHOW BINLOG EVENTS): how many, how many
/// of them compressed, and the largest compressed one's size.
struct RowsEvents {
  int events = 0;
  int compressed = 0;
  uint64_t max_compressed_size = 0;
};

RowsEvents CountRowsEvents(mysql::Connection& conn, const BinlogPos& from, const BinlogPos& to,
                           const std::string& db, const std::string& table) {
  RowsEvents out;
  EXPECT_EQ(from.file, to.file) << "the binlog rotated during the statement; cannot count its events";
  auto r = conn.Query("SHOW BINLOG EVENTS IN '" + from.file + "' FROM " +
                      Str(static_cast<int64_t>(from.position)));
  if (!r.ok()) {
    ADD_FAILURE() << "SHOW BINLOG EVENTS: " << r.error().message();
    return out;
  }
  const int pos_col = r->ColumnIndex("Pos");
  const int type_col = r->ColumnIndex("Event_type");
  const int end_col = r->ColumnIndex("End_log_pos");
  const int info_col = r->ColumnIndex("Info");
  if (pos_col < 0 || type_col < 0 || end_col < 0 || info_col < 0) {
    ADD_FAILURE() << "SHOW BINLOG EVENTS without the expected columns";
    return out;
  }
  std::string table_id;  // of db.table in the last Table_map ("table_id: 35 (db.t)")
  for (const auto& row : r->rows) {
    uint64_t pos = std::stoull(row[pos_col].value_or("0"));
    if (pos >= to.position) break;
    const std::string type = row[type_col].value_or("");
    const std::string info = row[info_col].value_or("");
    auto id_of = [&] {
      size_t at = info.find("table_id: ");
      if (at == std::string::npos) return std::string();
      at += 10;
      size_t end = info.find_first_not_of("0123456789", at);
      return info.substr(at, end - at);
    };
    if (type == "Table_map") {
      if (info.find("(" + db + "." + table + ")") != std::string::npos) table_id = id_of();
      continue;
    }
    if (type.find("_rows") == std::string::npos || table_id.empty() || id_of() != table_id) continue;
    ++out.events;
    if (type.find("compressed") != std::string::npos) {
      ++out.compressed;
      out.max_compressed_size =
          std::max<uint64_t>(out.max_compressed_size, std::stoull(row[end_col].value_or("0")) - pos);
    }
  }
  return out;
}

TEST_P(PipeCorrectnessTest, IdenticalCompressedRowsKeepTheirOrder) {
  Init("CHSYNC_TEST_MYSQL_COMPRESS", "compress");
  ASSERT_TRUE(p_.connected());
  ASSERT_EQ(p_.SourceValue("SELECT @@log_bin_compress"), "1")
      << "CHSYNC_TEST_MYSQL_COMPRESS must be a MariaDB with log_bin_compress=ON (scripts/test-servers)";
  p_.ExecAll({"CREATE TABLE k (a INT, b VARCHAR(100) DEFAULT 'xxxxxxxxxx')",
              "CREATE TABLE p (id INT PRIMARY KEY, v INT)"});
  CommandResult r = p_.Run({"--schema-policy", "keyless=distinct"});
  ASSERT_RUN_OK(r, "(snapshot of the empty tables)");

  // 5000 identical rows in one statement: MariaDB compresses every ~8 KiB rows event of ~455 rows
  // into ~90 bytes, so an event holds more rows than bytes.
  std::optional<BinlogPos> before = MasterPosition(p_.conn());
  p_.Exec("INSERT INTO k (a) SELECT 1 FROM seq_1_to_5000");
  std::optional<BinlogPos> after = MasterPosition(p_.conn());
  ASSERT_TRUE(before.has_value() && after.has_value());
  RowsEvents events = CountRowsEvents(p_.conn(), *before, *after, p_.db(), "k");
  ASSERT_GT(events.compressed, 0) << "no compressed rows event (Write_rows_compressed_v1) for k in "
                                  << before->Text() << ".." << after->Text()
                                  << ": the test would prove nothing";
  EXPECT_EQ(events.compressed, events.events) << "some rows events of k are not compressed";
  EXPECT_GT(5000 / events.compressed, static_cast<int>(events.max_compressed_size))
      << "the compressed events of k hold fewer rows (" << 5000 / events.compressed
      << " each) than bytes (up to " << events.max_compressed_size << "): the test would prove nothing";
  std::printf("k: 5000 rows in %d compressed events of at most %llu bytes\n", events.compressed,
              static_cast<unsigned long long>(events.max_compressed_size));

  // Changes right after such events, whose versions must still sort above theirs. k is keyless (a
  // full-row key, docs/types.md "Keys"): equal rows are one row in ClickHouse, so a change of all
  // copies is the only change whose outcome ClickHouse can show.
  p_.ExecAll({
      "DELETE FROM k WHERE a = 1",                      // 5000 tombstones of (1, x)…
      "INSERT INTO k (a) VALUES (1)",                   // …then (1, x) again: it must stay
      "INSERT INTO k (a) SELECT 2 FROM seq_1_to_5000",  //
      "UPDATE k SET a = 3 WHERE a = 2",                 // tombstones of (2, x), rows (3, x)…
      "INSERT INTO k (a) VALUES (2)",                   // …then (2, x) again: it must stay
      "INSERT INTO k (a) SELECT 4 FROM seq_1_to_5000",  //
      "DELETE FROM k WHERE a = 4",                      // (4, x) must be gone
      "INSERT INTO k (a, b) SELECT 5, 'y' FROM seq_1_to_5000",
      "UPDATE k SET b = 'z' WHERE a = 5",
  });
  // A keyed table: 5000 rows in one statement, then updates and deletes, and deleted keys back.
  p_.ExecAll({
      "INSERT INTO p SELECT seq, 7 FROM seq_1_to_5000",
      "UPDATE p SET v = v + 1 WHERE id % 2 = 0",
      "DELETE FROM p WHERE id % 3 = 0",
      "INSERT INTO p SELECT seq, -1 FROM seq_1_to_5000 WHERE seq % 9 = 0",
      "UPDATE p SET v = 100 WHERE id = 4998",
      "DELETE FROM p WHERE id = 4999",
  });
  r = p_.Run({"--schema-policy", "keyless=distinct"});
  ASSERT_RUN_OK(r, "across the compressed events");
  EXPECT_EQUAL_TO_SOURCE(p_, "p", "after 5000-row compressed statements and later changes");

  // k as a set of distinct rows: the source's distinct rows are the destination's rows.
  std::multiset<std::string> source_rows;
  for (const auto& row : p_.SourceQuery("SELECT DISTINCT CONCAT(a, '|', b) FROM k")) {
    source_rows.insert(row.at(0).value_or("NULL"));
  }
  std::multiset<std::string> dest_rows;
  for (const auto& row : p_.DestQuery("SELECT concat(toString(a), '|', b) FROM " + p_.DestTable("k") +
                                      " FINAL WHERE _chsync_is_deleted = 0")) {
    dest_rows.insert(row.at(0).value_or("NULL"));
  }
  const std::multiset<std::string> expected = {"1|xxxxxxxxxx", "2|xxxxxxxxxx", "3|xxxxxxxxxx", "5|z"};
  EXPECT_EQ(source_rows, expected);
  EXPECT_EQ(dest_rows, source_rows)
      << "the distinct rows of keyless table k in ClickHouse differ from the source: a change right after "
         "a compressed event with more rows than bytes lost to an older row";
}

// ---------------------------------------------------------------------------------------------
// Wide rows, bounded memory (issue 13, item 5).

/// A finished run of chsync and the peak resident set size the kernel measured for it.
struct MeasuredRun {
  int exit_code = -1;  ///< -1: killed by a signal; -2: timed out (then killed)
  long max_rss_kib = 0;
  std::string log;
};

/// Runs `argv` with its output in a file and waits (wait4) for it, up to `timeout`.
MeasuredRun RunMeasured(const std::vector<std::string>& argv, std::chrono::seconds timeout) {
  MeasuredRun out;
  const std::string log = MakeTempDir("correctness-rss") + "/run.log";
  pid_t pid = fork();
  if (pid < 0) {
    ADD_FAILURE() << "fork: " << std::strerror(errno);
    return out;
  }
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    int in = open("/dev/null", O_RDONLY);
    if (in >= 0) dup2(in, STDIN_FILENO);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  auto deadline = Clock::now() + timeout;
  int status = 0;
  rusage usage{};
  for (;;) {
    pid_t r = wait4(pid, &status, WNOHANG, &usage);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) {
      ADD_FAILURE() << "wait4: " << std::strerror(errno);
      return out;
    }
    if (Clock::now() > deadline) {
      kill(pid, SIGKILL);
      while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
      }
      out.exit_code = -2;
      out.max_rss_kib = usage.ru_maxrss;
      out.log = ReadFile(log);
      return out;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  out.max_rss_kib = usage.ru_maxrss;
  out.log = ReadFile(log);
  return out;
}

TEST_P(PipeCorrectnessTest, WideRowsStreamWithBoundedMemory) {
  Init("CHSYNC_TEST_MYSQL_FULL", "wide");
  ASSERT_TRUE(p_.connected());
  constexpr int kRows = 40;
  constexpr int64_t kValueBytes = 16 * 1024 * 1024;  // = max_allowed_packet's default: no global change
  // 40 × 16 MiB = 640 MiB stream through the pipe. With batches bounded at 32 MiB, what is held at
  // once is a few batches and one event's copies (event, decoded value, RowBinary, gzip, one batch
  // in flight and one queued: well under 300 MiB); holding all rows (or one 10-row transaction
  // plus its copies) needs more. The bound is on the growth above the same command's peak on a
  // near-empty stream (an embedded destination loads chDB into the process).
  //
  // Embedded: chDB runs inside chsync, and its own working set on 16 MiB rows is larger than
  // chsync's batches and does not depend on them: each 32 MiB insert holds about 3× its size while
  // it forms a part, and each background merge (up to 2 at once seen, of about 6 parts) holds one
  // row of every part it merges (100–340 MiB per merge); its allocator keeps freed memory for a few
  // seconds. Measured: +618 to +767 MiB over 5 runs; only settings that stop merges altogether
  // bring it under 384. Its bound is therefore 1024 MiB, which chsync holding the whole stream, or
  // one 10-row transaction with its copies, still exceeds (at least ~480 MiB more). The server
  // variant checks chsync's own bound.
  const long kMaxGrowthMiB = GetParam() == Dest::kEmbedded ? 1024 : 384;

  p_.ExecAll({"CREATE TABLE w (id INT PRIMARY KEY, b LONGBLOB NOT NULL, note VARCHAR(20))",
              "CREATE TABLE small (id INT PRIMARY KEY, v INT)", "INSERT INTO small VALUES (1, 1)"});
  const std::string config = WriteConfig("batch:\n  max_bytes: 33554432\n");
  const std::vector<std::string> flags = {"--config", config,           "--batch-rows",
                                          "100000",   "--batch-age-ms", "600000"};
  CommandResult r = p_.Run(flags);
  ASSERT_RUN_OK(r, "(snapshot of the empty table)");

  // The baseline: the same command over a stream of a few small rows.
  p_.Exec("INSERT INTO small SELECT seq, seq FROM seq_2_to_100");
  MeasuredRun baseline = RunMeasured(p_.RunArgs(p_.db() + ".*", true, flags), std::chrono::seconds(300));
  ASSERT_EQ(baseline.exit_code, 0) << "baseline run:\n" << Tail(baseline.log);

  // 40 rows of 16 MiB, in 4 transactions of 10 single-row INSERTs, streamed (after the snapshot).
  for (int t = 0; t < kRows / 10; ++t) {
    p_.Exec("BEGIN");
    for (int i = 1; i <= 10; ++i) {
      const std::string id = Str(t * 10 + i);
      ASSERT_TRUE(p_.Exec("INSERT INTO w VALUES (" + id + ", CONCAT(MD5(" + id + "), REPEAT(CHAR(65 + " + id +
                          " % 26), " + Str(kValueBytes - 32) + ")), 'n" + id + "')"));
    }
    p_.Exec("COMMIT");
  }
  ASSERT_EQ(p_.SourceValue("SELECT CONCAT(COUNT(*), ' ', MIN(LENGTH(b))) FROM w"),
            Str(kRows) + " " + Str(kValueBytes));

  MeasuredRun wide = RunMeasured(p_.RunArgs(p_.db() + ".*", true, flags), std::chrono::seconds(900));
  ASSERT_EQ(wide.exit_code, 0) << "chsync run over 40 rows of 16 MiB:\n" << Tail(wide.log);
  const long growth_mib = (wide.max_rss_kib - baseline.max_rss_kib) / 1024;
  std::printf("peak RSS: %ld MiB for a near-empty stream, %ld MiB for 40 rows of 16 MiB (+%ld MiB)\n",
              baseline.max_rss_kib / 1024, wide.max_rss_kib / 1024, growth_mib);
  EXPECT_LT(growth_mib, kMaxGrowthMiB)
      << "chsync held too much of the 640 MiB stream at once (peak " << wide.max_rss_kib / 1024
      << " MiB, baseline " << baseline.max_rss_kib / 1024 << " MiB) with batch.max_bytes 32 MiB";

  CompareOptions without_blob;
  without_blob.ignore_columns = {"b"};
  std::string report = p_.Compare("w", without_blob);
  EXPECT_TRUE(report.empty()) << report;
  std::vector<std::string> source;
  for (const auto& row :
       p_.SourceQuery("SELECT CONCAT(id, ' ', LENGTH(b), ' ', MD5(b)) FROM w ORDER BY id")) {
    source.push_back(row.at(0).value_or("NULL"));
  }
  std::vector<std::string> dest;
  for (const auto& row :
       p_.DestQuery("SELECT concat(toString(id), ' ', toString(length(b)), ' ', lower(hex(MD5(b)))) FROM " +
                    p_.DestTable("w") + " FINAL WHERE _chsync_is_deleted = 0 ORDER BY id")) {
    dest.push_back(row.at(0).value_or("NULL"));
  }
  EXPECT_EQ(source.size(), static_cast<size_t>(kRows));
  EXPECT_EQ(dest, source) << "id, length and MD5 of the 16 MiB values differ";
}

// ---------------------------------------------------------------------------------------------
// Another source server (issue 13, "Also").

TEST_P(PipeCorrectnessTest, ResumeAgainstAnotherServerIsRefused) {
  Init("CHSYNC_TEST_MYSQL_FULL", "resume");
  ASSERT_TRUE(p_.connected());
  p_.ExecAll(
      {"CREATE TABLE t (id INT PRIMARY KEY, v INT)", "INSERT INTO t SELECT seq, seq FROM seq_1_to_100"});
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "(snapshot)");
  p_.Exec("INSERT INTO t SELECT seq, seq FROM seq_101_to_150");
  r = p_.Run();
  ASSERT_RUN_OK(r, "(streaming)");
  ASSERT_EQ(p_.DestCount("t"), "150");
  const std::string checkpoint = ReadFile(p_.state() + "/checkpoint.json");
  ASSERT_FALSE(checkpoint.empty());

  // Another server with the same database and table, other rows, and binlog events of its own.
  const std::string other_url = RequireEnv("CHSYNC_TEST_MYSQL_COMPRESS");
  std::unique_ptr<mysql::Connection> other = OpenSource(other_url);
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(ExecOn(*other, "CREATE DATABASE " + p_.db()));
  struct DropOther {
    mysql::Connection& conn;
    std::string db;
    ~DropOther() { (void)conn.Execute("DROP DATABASE IF EXISTS " + db); }
  } drop_other{*other, p_.db()};
  ASSERT_TRUE(ExecOn(*other, "USE " + p_.db()));
  ASSERT_TRUE(ExecOn(*other, "CREATE TABLE t (id INT PRIMARY KEY, v INT)"));
  ASSERT_TRUE(ExecOn(*other, "INSERT INTO t SELECT seq, -seq FROM seq_1_to_3000"));
  ASSERT_TRUE(ExecOn(*other, "UPDATE t SET v = v - 1"));

  std::vector<std::string> argv = p_.RunArgs(p_.db() + ".*", true, {});
  auto source_flag = std::find(argv.begin(), argv.end(), "--source");
  ASSERT_NE(source_flag, argv.end());
  *(source_flag + 1) = other_url;
  r = RunCommand(argv, kRunTimeoutMs);
  EXPECT_FALSE(r.timed_out) << r.Describe();
  EXPECT_NE(r.exit_code, 0) << "chsync run must refuse a state directory of another source server:\n"
                            << r.Describe();
  const std::string err = Lower(r.err + r.out);
  EXPECT_TRUE(err.find("server_uuid") != std::string::npos || err.find("server_id") != std::string::npos ||
              err.find("server id") != std::string::npos || err.find("server uuid") != std::string::npos)
      << "the message must say that the server (server_uuid / server_id) differs:\n"
      << r.Describe();
  EXPECT_NE(err.find("resync"), std::string::npos) << "the message must say what to do (resync):\n"
                                                   << r.Describe();

  EXPECT_EQ(ReadFile(p_.state() + "/checkpoint.json"), checkpoint)
      << "the refused run changed the checkpoint";
  EXPECT_EQ(p_.DestCount("t"), "150") << "the refused run changed the destination";
  EXPECT_EQ(DestCountWhere(p_, "t", "v < 0"), "0") << "rows of the other server reached the destination";
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after a refused run against another server");
}

INSTANTIATE_TEST_SUITE_P(Destinations, PipeCorrectnessTest, ::testing::Values(Dest::kServer, Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& i) { return DestName(i.param); });

// ---------------------------------------------------------------------------------------------
// ClickHouse down (issue 13, items 2 and 5): the `clickhouse-fault` server, killed with SIGKILL and
// started again. ClickHouse server only (an embedded store cannot go away).

class FaultClickHouse : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(testing::StartFaultClickHouse()) << "the fault ClickHouse must answer before the test";
    p_.Init("CHSYNC_TEST_MYSQL_FULL", Dest::kServer, "fault", kServerIdBase, "CHSYNC_TEST_CLICKHOUSE_FAULT");
  }
  void TearDown() override {
    // A failed test may have left the server down: the next one needs it.
    testing::StartFaultClickHouse();
    p_.Cleanup();
  }

  /// Waits (up to 120 s) until the destination's FINAL view of `table` has `rows` rows, while
  /// `run` keeps running; an embedded store is never read here.
  bool WaitForDestCount(BackgroundProcess& run, const std::string& table, const std::string& rows) {
    std::string error;
    return WaitUntil(
               [&] {
                 if (!run.Running()) return true;
                 auto got = testing::QueryDestination(
                     p_.dest_url(),
                     "SELECT count() FROM " + p_.DestTable(table) + " FINAL WHERE _chsync_is_deleted = 0",
                     &error);
                 return got.has_value() && !got->empty() && !got->front().empty() && got->front()[0] == rows;
               },
               std::chrono::seconds(120), std::chrono::milliseconds(300)) &&
           run.Running();
  }

  PipeTest p_;
};

TEST_F(FaultClickHouse, FailedDdlIsAppliedAfterClickHouseReturns) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL, s VARCHAR(20))",
              "INSERT INTO t SELECT seq, seq, CONCAT('s', seq) FROM seq_1_to_1000"});
  // Retries of the ClickHouse connection shortened, so that ClickHouse stays down well past them.
  const std::string config = WriteConfig("retry:\n  attempts: 2\n  max_backoff_ms: 200\n");
  const std::string log = MakeTempDir("correctness-log") + "/run.log";
  auto run = BackgroundProcess::Start(
      p_.RunArgs(p_.db() + ".*", false, {"--config", config, "--batch-age-ms", "200"}), log);
  ASSERT_TRUE(run.has_value());
  ASSERT_TRUE(WaitForDestCount(*run, "t", "1000")) << "the snapshot did not arrive:\n" << Tail(run->Log());
  p_.Exec("INSERT INTO t SELECT seq, seq, 'stream' FROM seq_1001_to_1100");
  ASSERT_TRUE(WaitForDestCount(*run, "t", "1100")) << "streamed rows did not arrive:\n" << Tail(run->Log());

  ASSERT_TRUE(testing::KillFaultClickHouse());
  auto down = Clock::now();
  p_.ExecAll({
      "ALTER TABLE t ADD COLUMN c INT",
      "INSERT INTO t (id, v, s, c) SELECT seq, seq, 'c', seq * 10 FROM seq_1101_to_1200",
      "UPDATE t SET c = -id WHERE id <= 50",
      "ALTER TABLE t MODIFY v BIGINT NOT NULL",
      "INSERT INTO t (id, v, s, c) SELECT seq, 3000000000 + seq, 'big', seq FROM seq_1201_to_1300",
      "UPDATE t SET v = v + 5000000000 WHERE id BETWEEN 100 AND 150",
  });
  // ClickHouse stays down ~15 s, far past 2 attempts of at most 200 ms; rows keep coming.
  bool ran_throughout = true;
  for (int i = 0; Clock::now() - down < std::chrono::seconds(15); ++i) {
    if (i % 4 == 0)
      p_.Exec("INSERT INTO t VALUES (" + Str(2000 + i) + ", " + Str(4000000000LL + i) + ", 'down', " +
              Str(i) + ")");
    ran_throughout = ran_throughout && run->Running();
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  EXPECT_TRUE(ran_throughout) << "chsync run exited (" << run->exit_code()
                              << ") while ClickHouse was down: it must keep retrying:\n"
                              << Tail(run->Log());
  ASSERT_TRUE(testing::StartFaultClickHouse());
  std::printf("ClickHouse was down for %s\n", Seconds(Clock::now() - down).c_str());

  // Back: the running pipe goes on by itself.
  const std::string rows = SourceCountWhere(p_, "t", "TRUE");
  if (run->Running()) {
    EXPECT_TRUE(WaitForDestCount(*run, "t", rows))
        << "the running pipe did not deliver the rows within 120 s of ClickHouse's return:\n"
        << Tail(run->Log());
    EXPECT_EQ(run->SignalAndWait(SIGTERM, 30'000), 0) << "chsync run must exit 0 on SIGTERM:\n"
                                                      << Tail(run->Log());
  }
  CommandResult r = p_.Run({"--config", config});
  ASSERT_RUN_OK(r, "after ClickHouse came back");

  DestColumnMap columns = p_.DestColumns("t");
  ASSERT_TRUE(columns.count("c"))
      << "column c (ADD COLUMN while ClickHouse was down) is missing in ClickHouse";
  EXPECT_EQ(columns["c"].first, "Nullable(Int32)");
  EXPECT_EQ(columns["v"].first, "Int64")
      << "MODIFY v BIGINT (while ClickHouse was down) did not reach ClickHouse";
  EXPECT_EQ(p_.DestCount("t"), rows);
  EXPECT_EQ(DestCountWhere(p_, "t", "c IS NOT NULL"), SourceCountWhere(p_, "t", "c IS NOT NULL"))
      << "values of column c are missing";
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after a DDL while ClickHouse was down past the retries");
}

TEST_F(FaultClickHouse, SigtermWhileClickHouseDownExitsAndLosesNothing) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(30), n INT)",
              "INSERT INTO t SELECT seq, CONCAT('v', seq), seq FROM seq_1_to_500"});
  // Default retries: 12 attempts with back-off up to 30 s, minutes in all.
  const std::string log = MakeTempDir("correctness-log") + "/run.log";
  auto run = BackgroundProcess::Start(p_.RunArgs(p_.db() + ".*", false, {"--batch-age-ms", "200"}), log);
  ASSERT_TRUE(run.has_value());
  ASSERT_TRUE(WaitForDestCount(*run, "t", "500")) << "the snapshot did not arrive:\n" << Tail(run->Log());

  ASSERT_TRUE(testing::KillFaultClickHouse());
  p_.ExecAll({"INSERT INTO t SELECT seq, CONCAT('w', seq), seq FROM seq_501_to_2000",
              "UPDATE t SET n = n + 1 WHERE id % 5 = 0", "DELETE FROM t WHERE id % 11 = 0"});
  // A few seconds for the flusher to fail and retry (batches are flushed every 200 ms).
  bool ran_throughout = true;
  auto retry_start = Clock::now();
  while (Clock::now() - retry_start < std::chrono::seconds(6)) {
    ran_throughout = ran_throughout && run->Running();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_TRUE(ran_throughout) << "chsync run exited (" << run->exit_code()
                              << ") seconds after ClickHouse went down, with retries left:\n"
                              << Tail(run->Log());

  auto sent = Clock::now();
  int code = run->SignalAndWait(SIGTERM, 20'000);
  auto took = Clock::now() - sent;
  std::printf("SIGTERM while ClickHouse was down: exit %d after %s\n", code, Seconds(took).c_str());
  EXPECT_NE(code, -2)
      << "chsync run did not exit within 20 s of SIGTERM while ClickHouse was down (killed):\n"
      << Tail(run->Log());
  EXPECT_TRUE(code == 0 || code == 1) << "exit " << code << " after SIGTERM:\n" << Tail(run->Log());

  ASSERT_TRUE(testing::StartFaultClickHouse());
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "after ClickHouse came back");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after SIGTERM while ClickHouse was down and a restart");
}

}  // namespace
}  // namespace chsync
