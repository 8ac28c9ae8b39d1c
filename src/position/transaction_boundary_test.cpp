#include "position/transaction_boundary.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "binlog/file_reader.h"

namespace chsync::pipe {
namespace {

const std::string kFixtures = CHSYNC_SOURCE_DIR "/../shared/fixtures/binlog/";

using Kind = Boundary::Kind;

binlog::Event Query(std::string_view sql) {
  binlog::Event e;
  binlog::QueryEvent q;
  q.query = sql;
  e.body = q;
  return e;
}

binlog::Event MariaGtid(uint8_t flags2, std::string_view gtrid = "", std::string_view bqual = "",
                        uint32_t format_id = 1) {
  binlog::Event e;
  binlog::MariaGtidEvent g;
  g.flags2 = flags2;
  if ((flags2 & (64 | 128)) != 0) {
    g.xa_format_id = format_id;
    g.xa_gtrid = gtrid;
    g.xa_bqual = bqual;
  }
  e.body = g;
  return e;
}

binlog::Event XaPrepare(bool one_phase, std::string_view gtrid) {
  binlog::Event e;
  binlog::XaPrepareEvent x;
  x.one_phase = one_phase;
  x.format_id = 1;
  x.gtrid = gtrid;
  e.body = x;
  return e;
}

binlog::Event Xid() {
  binlog::Event e;
  e.body = binlog::XidEvent{};
  return e;
}

struct Walk {
  std::vector<Boundary> boundaries;
  /// (event position, resume) of every boundary with a resume position.
  std::vector<std::pair<uint64_t, uint64_t>> resumes;
  std::vector<std::pair<uint64_t, uint64_t>> events;  ///< [start, end) of every outer event
};

/// Reads a binlog file as the pipe does: each outer event, then the events inside a payload.
Walk WalkFile(const std::string& path) {
  Walk w;
  auto reader = binlog::FileReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.error().message();
  if (!reader.ok()) return w;
  TransactionBoundaries t;
  while (true) {
    auto ev = (*reader)->Next();
    EXPECT_TRUE(ev.ok()) << ev.error().message();
    if (!ev.ok() || !*ev) break;
    const binlog::Event& e = **ev;
    const uint64_t end = e.end_position();
    w.events.emplace_back(e.position, end);
    auto observe = [&](const binlog::Event& one) {
      Boundary b = t.Observe(one, end);
      if (b.resume != 0) w.resumes.emplace_back(one.position, b.resume);
      w.boundaries.push_back(b);
    };
    observe(e);
    if (const auto* payload = std::get_if<binlog::TransactionPayloadEvent>(&e.body)) {
      for (const binlog::Event& inner : payload->events) observe(inner);
    }
  }
  return w;
}

TEST(TransactionBoundaries, ResumeAfterACompressedTransactionIsThePayloadsEnd) {
  // MySQL 8.0.32 with binlog_transaction_compression=ON: the XID sits inside the payload at
  // 274..431; resuming at 274 + XID size (301) would ask the server for a point inside an event.
  Walk w =
      WalkFile(kFixtures + "blackbeam/rust_mysql_common/test-data/binlogs/transaction_compression.000001");
  ASSERT_FALSE(w.resumes.empty());
  bool saw_payload_commit = false;
  for (const auto& [at, resume] : w.resumes) {
    bool on_boundary = false;
    for (const auto& [start, end] : w.events) on_boundary = on_boundary || resume == end;
    EXPECT_TRUE(on_boundary) << "resume " << resume << " (event at " << at << ") is not an event end";
    if (at == 274) {
      EXPECT_EQ(resume, 431u);
      saw_payload_commit = true;
    }
  }
  EXPECT_TRUE(saw_payload_commit);
}

TEST(TransactionBoundaries, EveryResumeInACompressedFileIsAnOuterEventEnd) {
  for (const char* file : {"osheroff/mysql-binlog-connector-java/src/test/resources/mysql-bin.compressed",
                           "blackbeam/rust_mysql_common/test-data/binlogs/transaction_compression.000001"}) {
    Walk w = WalkFile(kFixtures + file);
    size_t commits = 0;
    for (const auto& [at, resume] : w.resumes) {
      ++commits;
      bool on_boundary = false;
      for (const auto& [start, end] : w.events) on_boundary = on_boundary || (resume == end && at == start);
      EXPECT_TRUE(on_boundary) << file << ": resume " << resume << " is inside an event";
    }
    EXPECT_GT(commits, 0u) << file;
  }
}

TEST(TransactionBoundaries, MariaDbXaCaptureWalksBothPhases) {
  // A real MariaDB 10.11 binlog (tests/data/binlog/captures/README.md has its statements): XA
  // transactions prepared, interleaved with ordinary ones, committed, rolled back, one phase.
  Walk w = WalkFile(CHSYNC_SOURCE_DIR "/tests/data/binlog/captures/mariadb-10.11.19-xa.bin");
  std::vector<std::string> seen;
  for (const Boundary& b : w.boundaries) {
    switch (b.kind) {
      case Kind::kXaBegin: seen.push_back("begin " + b.xid); break;
      case Kind::kXaPrepare: seen.push_back("prepare " + b.xid); break;
      case Kind::kXaCommit: seen.push_back("commit " + b.xid); break;
      case Kind::kXaRollback: seen.push_back("rollback " + b.xid); break;
      case Kind::kCommit: seen.push_back("commit"); break;
      default: break;
    }
  }
  const std::string a = "X'61',X'',1", b = "X'62',X'',1", g = XaIdText(7, "gtrid-xyz", "bq");
  const std::vector<std::string> expected_start = {
      "begin " + a,    "prepare " + a, "commit",        // the ordinary insert in between
      "commit " + a,   "begin " + b,   "prepare " + b,  //
      "rollback " + b, "commit",                        // XA COMMIT 'c' ONE PHASE: an ordinary commit
      "begin " + g,    "prepare " + g, "commit",       "commit " + g};
  ASSERT_GE(seen.size(), expected_start.size());
  EXPECT_EQ(std::vector<std::string>(seen.begin(),
                                     seen.begin() + static_cast<std::ptrdiff_t>(expected_start.size())),
            expected_start);
  for (const auto& [at, resume] : w.resumes) {
    bool on_boundary = false;
    for (const auto& [start, end] : w.events) on_boundary = on_boundary || (resume == end && at == start);
    EXPECT_TRUE(on_boundary) << "resume " << resume << " is not the end of the event at " << at;
  }
}

TEST(TransactionBoundaries, PlainTransactionsAndDdl) {
  TransactionBoundaries t;
  EXPECT_EQ(t.Observe(Query("BEGIN"), 100).kind, Kind::kBegin);
  EXPECT_TRUE(t.in_transaction());
  Boundary inside = t.Observe(Query("INSERT INTO t VALUES (1)"), 150);
  EXPECT_EQ(inside.kind, Kind::kStatement);
  EXPECT_EQ(inside.resume, 0u) << "a statement inside a transaction is no place to resume";
  Boundary commit = t.Observe(Xid(), 200);
  EXPECT_EQ(commit.kind, Kind::kCommit);
  EXPECT_EQ(commit.resume, 200u);
  EXPECT_FALSE(t.in_transaction());
  Boundary ddl = t.Observe(Query("ALTER TABLE t ADD c INT"), 300);
  EXPECT_EQ(ddl.kind, Kind::kStatement);
  EXPECT_EQ(ddl.resume, 300u);
  EXPECT_EQ(t.Observe(Query("START TRANSACTION"), 350).kind, Kind::kBegin);
  EXPECT_EQ(t.Observe(Query("COMMIT"), 400).kind, Kind::kCommit);
  t.Observe(Query("BEGIN"), 410);
  Boundary rollback = t.Observe(Query("ROLLBACK"), 420);
  EXPECT_EQ(rollback.kind, Kind::kCommit) << "a logged ROLLBACK keeps non-transactional changes";
}

TEST(TransactionBoundaries, MariaDbXaBothOutcomes) {
  // As MariaDB 10.11 logs them: GTID (FL_PREPARED_XA) … rows … XA END, XA_PREPARE; later a GTID
  // (FL_COMPLETED_XA) and the XA COMMIT or XA ROLLBACK statement.
  TransactionBoundaries t;
  Boundary begin = t.Observe(MariaGtid(64 | 4, "a"), 727);
  EXPECT_EQ(begin.kind, Kind::kXaBegin);
  EXPECT_EQ(begin.xid, "X'61',X'',1");
  EXPECT_EQ(begin.resume, 0u);
  ASSERT_TRUE(t.open_xa());
  EXPECT_EQ(t.Observe(Query("XA END X'61',X'',1"), 960).kind, Kind::kNone);
  EXPECT_EQ(t.Observe(Query("XA END X'61',X'',1"), 960).resume, 0u);
  Boundary prepared = t.Observe(XaPrepare(false, "a"), 997);
  EXPECT_EQ(prepared.kind, Kind::kXaPrepare);
  EXPECT_EQ(prepared.xid, "X'61',X'',1");
  EXPECT_EQ(prepared.resume, 997u);
  EXPECT_FALSE(t.in_transaction());
  // An ordinary transaction in between.
  EXPECT_EQ(t.Observe(MariaGtid(4 | 8), 1039).kind, Kind::kBegin);
  EXPECT_EQ(t.Observe(Xid(), 1229).kind, Kind::kCommit);
  t.Observe(MariaGtid(128 | 1, "a"), 1272);
  Boundary commit = t.Observe(Query("XA COMMIT X'61',X'',1"), 1357);
  EXPECT_EQ(commit.kind, Kind::kXaCommit);
  EXPECT_EQ(commit.xid, "X'61',X'',1");
  EXPECT_EQ(commit.resume, 1357u);

  t.Observe(MariaGtid(64 | 4, "b"), 1402);
  EXPECT_EQ(t.Observe(XaPrepare(false, "b"), 1672).kind, Kind::kXaPrepare);
  t.Observe(MariaGtid(128 | 1, "b"), 1715);
  Boundary rollback = t.Observe(Query("XA ROLLBACK X'62',X'',1"), 1802);
  EXPECT_EQ(rollback.kind, Kind::kXaRollback);
  EXPECT_EQ(rollback.xid, "X'62',X'',1");
}

TEST(TransactionBoundaries, MySqlXaStatementsDoNotEndTheGroup) {
  // MySQL: GTID, XA START, rows, XA END, XA_PREPARE; XA COMMIT later. Before, each XA statement
  // was a "standalone statement" that forced a checkpoint in the middle of the group.
  TransactionBoundaries t;
  Boundary start = t.Observe(Query("XA START X'78',X'',1"), 100);
  EXPECT_EQ(start.kind, Kind::kXaBegin);
  EXPECT_EQ(start.resume, 0u);
  EXPECT_EQ(t.Observe(Query("XA END X'78',X'',1"), 200).resume, 0u);
  EXPECT_EQ(t.Observe(XaPrepare(false, "x"), 300).kind, Kind::kXaPrepare);
  EXPECT_EQ(t.Observe(Query("XA COMMIT X'78',X'',1"), 400).kind, Kind::kXaCommit);
  // One phase: XA_PREPARE with the flag commits the open group.
  t.Observe(Query("XA START X'79',X'',1"), 500);
  Boundary one_phase = t.Observe(XaPrepare(true, "y"), 600);
  EXPECT_EQ(one_phase.kind, Kind::kCommit);
  EXPECT_EQ(one_phase.resume, 600u);
  EXPECT_FALSE(t.in_transaction());
  // Issue 33, case 7: the rows set aside for the group (a group larger than one batch) count with
  // this commit; an ordinary commit sets nothing aside.
  EXPECT_TRUE(one_phase.ends_open_xa);
  t.Observe(Query("BEGIN"), 700);
  EXPECT_FALSE(t.Observe(Xid(), 800).ends_open_xa);
}

TEST(TransactionBoundaries, XaIdForms) {
  EXPECT_EQ(ParseXaId("X'61',X'',1"), "X'61',X'',1");
  EXPECT_EQ(ParseXaId("'a'"), "X'61',X'',1");
  EXPECT_EQ(ParseXaId("'gtrid-xyz','bq',7"), XaIdText(7, "gtrid-xyz", "bq"));
  EXPECT_EQ(ParseXaId("0x6162 , 'c' , 42 ONE PHASE"), XaIdText(42, "ab", "c"));
  EXPECT_EQ(ParseXaId("'it''s'"), XaIdText(1, "it's", ""));
  EXPECT_FALSE(ParseXaId(""));
  EXPECT_FALSE(ParseXaId("X'6'"));
  EXPECT_FALSE(ParseXaId("'unterminated"));
  EXPECT_FALSE(ParseXaId("'a',"));
  EXPECT_FALSE(ParseXaId("'a','b',99999999999"));
  EXPECT_EQ(XaIdText(1, std::string_view("\x00\xff", 2), ""), "X'00ff',X'',1");
}

}  // namespace
}  // namespace chsync::pipe
