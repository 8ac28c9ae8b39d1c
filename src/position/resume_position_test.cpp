#include "position/resume_position.h"

#include <gtest/gtest.h>

namespace chsync::pipe {
namespace {

/// A checkpoint at binlog.000003:1234 after 0-101-169, written on server_id 101 and read again
/// there: the GTID event of 0-101-170 waits at the position.
ResumeFacts Good() {
  ResumeFacts f;
  f.mariadb = true;
  f.written_on = SourceIdentity{101, "", "127.0.0.1:3306"};
  f.connected = SourceIdentity{101, "", "127.0.0.1:3306"};
  f.at = SourcePosition{"binlog.000003", 1234, "0-101-169", 0, 0};
  f.binary_logs = {"binlog.000002", "binlog.000003", "binlog.000004"};
  f.event = BinlogEventRow{"Gtid", "BEGIN GTID 0-101-170"};
  return f;
}

/// The same checkpoint at the end of the server's binlog.
ResumeFacts AtTheLiveEnd() {
  ResumeFacts f = Good();
  f.binary_logs = {"binlog.000002", "binlog.000003"};
  f.event.reset();
  f.live_end = {"binlog.000003", 1234, ""};
  f.binlog_gtid_pos = "0-101-169";
  return f;
}

void ExpectGtid(const ResumeFacts& f, const std::string& reason_part) {
  ResumeChoice c = ChooseResume(f);
  EXPECT_FALSE(c.by_position) << c.reason;
  EXPECT_NE(c.reason.find(reason_part), std::string::npos) << c.reason;
}

TEST(GtidOfEventInfo, ReadsEveryFormOfTheGtidEvent) {
  using G = mysql::MariaDbGtidList::Gtid;
  EXPECT_EQ(GtidOfEventInfo("BEGIN GTID 0-101-170"), (G{0, 101, 170}));
  EXPECT_EQ(GtidOfEventInfo("GTID 2-7-18446744073709551615"), (G{2, 7, 18446744073709551615ULL}));
  EXPECT_EQ(GtidOfEventInfo("BEGIN GTID 0-1-5 cid=42"), (G{0, 1, 5}));
  EXPECT_EQ(GtidOfEventInfo("XA START X'61',X'',1 GTID 0-1-9"), (G{0, 1, 9}));
  EXPECT_EQ(GtidOfEventInfo("XA START X'4754494420',X'',1 GTID 0-1-9"), (G{0, 1, 9}));
}

TEST(GtidOfEventInfo, NamesNothingInOtherText) {
  EXPECT_FALSE(GtidOfEventInfo(""));
  EXPECT_FALSE(GtidOfEventInfo("COMMIT /* xid=178 */"));
  EXPECT_FALSE(GtidOfEventInfo("BEGIN GTID 0-101"));
  EXPECT_FALSE(GtidOfEventInfo("BEGIN GTID 0-101-17x"));
  EXPECT_FALSE(GtidOfEventInfo("BEGIN GTID -1-101-17"));
  EXPECT_FALSE(GtidOfEventInfo("GTID 4294967296-1-1"));  // a domain is 32 bits
  EXPECT_FALSE(GtidOfEventInfo("NOTGTID 0-1-1"));
}

TEST(NotTheNextTransaction, OnlyTheNextSequenceNumberOfANamedDomain) {
  using G = mysql::MariaDbGtidList::Gtid;
  auto list = mysql::MariaDbGtidList::Parse("0-101-169,3-5-10");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(NotTheNextTransaction(*list, G{0, 101, 170}), "");
  EXPECT_EQ(NotTheNextTransaction(*list, G{0, 102, 170}), "") << "a promoted replica writes on in the domain";
  EXPECT_EQ(NotTheNextTransaction(*list, G{3, 5, 11}), "");
  EXPECT_NE(NotTheNextTransaction(*list, G{0, 101, 169}).find("holds already"), std::string::npos);
  EXPECT_NE(NotTheNextTransaction(*list, G{0, 101, 5}).find("holds already"), std::string::npos);
  EXPECT_NE(NotTheNextTransaction(*list, G{0, 101, 172}).find("does not follow the checkpoint's 0-101-169"),
            std::string::npos);
  EXPECT_NE(NotTheNextTransaction(*list, G{1, 101, 1}).find("of domain 1, which"), std::string::npos);
}

TEST(ChooseResume, ThePositionWhenTheNextTransactionIsNew) {
  ResumeChoice c = ChooseResume(Good());
  EXPECT_TRUE(c.by_position) << c.reason;
  EXPECT_EQ(c.reason, "the next transaction is 0-101-170");

  ResumeFacts f = Good();
  f.event = BinlogEventRow{"Gtid", "GTID 0-101-170"};  // a statement outside a transaction
  EXPECT_TRUE(ChooseResume(f).by_position);
  f.event = BinlogEventRow{"Gtid", "XA START X'61',X'',1 GTID 0-101-170 cid=3"};
  EXPECT_TRUE(ChooseResume(f).by_position);
  // The address is not part of a server's identity (a pipe may reach it under another name).
  f.connected.address = "db.example:3306";
  EXPECT_TRUE(ChooseResume(f).by_position);
}

TEST(ChooseResume, ThePositionAtTheLiveEnd) {
  ResumeChoice c = ChooseResume(AtTheLiveEnd());
  EXPECT_TRUE(c.by_position) << c.reason;
  EXPECT_EQ(c.reason, "the end of its binlog");
  ResumeFacts f = AtTheLiveEnd();
  f.binlog_gtid_pos = "";  // nothing written since a RESET MASTER: nothing to miss either
  EXPECT_TRUE(ChooseResume(f).by_position);
}

TEST(ChooseResume, MySqlByGtid) {
  ResumeFacts f = Good();
  f.mariadb = false;
  f.at.gtid_set = "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-42";
  ExpectGtid(f, "MySQL");
}

TEST(ChooseResume, ACheckpointWithoutGtidsOrPositionIsNotCheckedHere) {
  ResumeFacts f = Good();
  f.at.gtid_set = "";
  ExpectGtid(f, "no GTID position");
  f = Good();
  f.at.gtid_set = "0-101";
  ExpectGtid(f, "is not a MariaDB GTID list");
  f = Good();
  f.at.file = "";
  ExpectGtid(f, "no binlog position");
}

TEST(ChooseResume, AnotherServerByGtid) {
  ResumeFacts f = Good();
  f.connected.server_id = 102;
  ExpectGtid(f, "read on server_id 101, not on server_id 102");
  f = Good();
  f.written_on.reset();  // a checkpoint from before chsync recorded its server
  ExpectGtid(f, "does not name the server");
  f = Good();
  f.written_on->server_uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
  ExpectGtid(f, "not on server_id 101");
}

TEST(ChooseResume, AFileNoLongerListedByGtid) {
  ResumeFacts f = Good();
  f.binary_logs = {"binlog.000004", "binlog.000005"};  // purged
  ExpectGtid(f, "binlog file binlog.000003 is not in the server's SHOW BINARY LOGS");
  f.binary_logs = {};
  ExpectGtid(f, "SHOW BINARY LOGS");
}

TEST(ChooseResume, AnUnreadableEventByGtid) {
  ResumeFacts f = Good();
  f.event.reset();
  f.event_error = "Error when executing command SHOW BINLOG EVENTS: Wrong offset or I/O error";
  ExpectGtid(f, "Wrong offset or I/O error");
}

TEST(ChooseResume, AnyOtherEventByGtid) {
  ResumeFacts f = Good();
  f.event = BinlogEventRow{"Rotate", "binlog.000004;pos=4"};  // the end of a file the stream left
  ExpectGtid(f, "is a Rotate event");
  f.event = BinlogEventRow{"Gtid_list", "[0-101-169]"};  // the start of a file
  ExpectGtid(f, "is a Gtid_list event");
  f.event = BinlogEventRow{"Query", "BEGIN"};
  ExpectGtid(f, "is a Query event");
  f.event = BinlogEventRow{"Gtid", "BEGIN"};
  ExpectGtid(f, "names no GTID");
}

TEST(ChooseResume, ATransactionAlreadyAppliedByGtid) {
  ResumeFacts f = Good();
  f.event = BinlogEventRow{"Gtid", "BEGIN GTID 0-101-169"};
  ExpectGtid(f, "holds already");
  f.event = BinlogEventRow{"Gtid", "BEGIN GTID 0-101-3"};  // the binlog was reset and written again
  ExpectGtid(
      f, "binlog.000003:1234: GTID 0-101-3 is one the checkpoint's GTID position 0-101-169 holds already");
}

TEST(ChooseResume, ALaterTransactionThanTheNextByGtid) {
  // A binlog written again (restored with its gtid_binlog_state) may hold a later transaction of
  // the domain at the same offset: by GTID the server finds 0-101-170 wherever it is.
  ResumeFacts f = Good();
  f.event = BinlogEventRow{"Gtid", "BEGIN GTID 0-101-175"};
  ExpectGtid(f, "does not follow the checkpoint's 0-101-169");
  f.event = BinlogEventRow{"Gtid", "BEGIN GTID 1-101-1"};  // a domain the checkpoint does not name
  ExpectGtid(f, "of domain 1");
}

TEST(ChooseResume, NoEventAnywhereButTheLiveEndByGtid) {
  ResumeFacts f = AtTheLiveEnd();
  f.live_end = {"binlog.000004", 256, ""};  // the end of a file the server rotated away from
  ExpectGtid(f, "the server's binlog ends at binlog.000004:256");
  f = AtTheLiveEnd();
  f.live_end = {"binlog.000003", 1500, ""};
  ExpectGtid(f, "ends at binlog.000003:1500");
}

TEST(ChooseResume, TheLiveEndWithOtherGtidsByGtid) {
  ResumeFacts f = AtTheLiveEnd();
  f.binlog_gtid_pos = "0-101-12";  // reset and written again to the same length
  ExpectGtid(f, "its last GTID in domain 0 is 0-101-12");
  f.binlog_gtid_pos = "0-101-169,1-101-4";
  ExpectGtid(f, "domain 1");
  f.binlog_gtid_pos = "0-102-169";
  ExpectGtid(f, "domain 0");
  f.binlog_gtid_pos = "garbage";
  ExpectGtid(f, "does not parse");
}

/// Issue 33: the checkpoint's own server proves that its binlog was written anew. Before, each of
/// these fell back to GTID silently, and a GTID start skips the transactions whose sequence
/// numbers the new binlog reissued (seen: 93 of 140 rows).
void ExpectRewritten(const ResumeFacts& f, const std::string& reason_part) {
  ResumeChoice c = ChooseResume(f);
  EXPECT_FALSE(c.by_position) << c.reason;
  EXPECT_TRUE(c.rewritten) << c.reason;
  EXPECT_FALSE(c.continues) << "its earliest file was not read";
  EXPECT_NE(c.reason.find(reason_part), std::string::npos) << c.reason;
}

TEST(ChooseResume, ABinlogWrittenAnewIsNeverAFallbackToGtid) {
  ResumeFacts f = Good();
  f.binary_logs = {"binlog.000001", "binlog.000002"};  // RESET MASTER, then one rotation
  ExpectRewritten(f, "its binlog files end at binlog.000002, numbered below the checkpoint's binlog.000003");
  f = Good();
  f.event.reset();
  f.event_error = "Error when executing command SHOW BINLOG EVENTS: Wrong offset or I/O error";
  ExpectRewritten(f, "there is no event boundary at binlog.000003:1234");
  f = Good();
  f.event = BinlogEventRow{"Write_rows_v1", "table_id: 33 flags: STMT_END_F"};
  ExpectRewritten(f, "is a Write_rows_v1 event, inside a transaction");
  f.event = BinlogEventRow{"Query", "BEGIN"};
  ExpectRewritten(f, "is a Query event");
  f.event = BinlogEventRow{"Gtid", "BEGIN GTID 0-101-3"};
  ExpectRewritten(f, "holds already");
  f = AtTheLiveEnd();
  f.live_end = {"binlog.000003", 900, ""};  // the file is shorter than the checkpoint's position
  ExpectRewritten(
      f, "the server's binlog ends at binlog.000003:900, before the checkpoint's binlog.000003:1234");
  f = AtTheLiveEnd();
  f.binlog_gtid_pos = "0-101-12";  // reset and written again to the same length
  ExpectRewritten(f, "its last GTID in domain 0 is 0-101-12");
  f.binlog_gtid_pos = "0-102-169";
  ExpectRewritten(f, "domain 0");
}

TEST(ChooseResume, ABinlogWrittenAnewContinuesOnlyWhereItsFirstFileSaysTheCheckpointEnds) {
  ResumeFacts f = Good();
  f.binary_logs = {"binlog.000001"};
  f.at.gtid_set = "0-101-169,1-7-4";
  // RESET MASTER; SET GLOBAL gtid_binlog_state = …: the new first file begins at the state.
  f.first_gtid_list = "[0-101-169,1-7-4]";
  ResumeChoice c = ChooseResume(f);
  EXPECT_TRUE(c.rewritten);
  EXPECT_TRUE(c.continues) << c.continue_reason;
  f.first_gtid_list = "[1-7-9,0-101-200]";  // later: the GTID start itself says what is gone
  EXPECT_TRUE(ChooseResume(f).continues);
  // RESET MASTER alone: nothing before the first file, so 0-101-1… are other transactions.
  f.first_gtid_list = "[]";
  c = ChooseResume(f);
  EXPECT_TRUE(c.rewritten);
  EXPECT_FALSE(c.continues);
  EXPECT_NE(c.continue_reason.find("does not name domain 0"), std::string::npos) << c.continue_reason;
  f.first_gtid_list = "[0-101-100,1-7-4]";
  c = ChooseResume(f);
  EXPECT_FALSE(c.continues);
  EXPECT_NE(c.continue_reason.find("is before the checkpoint's 0-101-169 in domain 0"), std::string::npos)
      << c.continue_reason;
  f.first_gtid_list = "";  // no Gtid_list event at all
  EXPECT_FALSE(ChooseResume(f).continues);
  f.first_gtid_list = "[garbage]";
  EXPECT_FALSE(ChooseResume(f).continues);
}

TEST(ChooseResume, PurgesRotationsAndNewDomainsAreNoRewrite) {
  ResumeFacts f = Good();
  // A later transaction of the domain: `SET gtid_seq_no` skips numbers in a healthy binlog too.
  f.event = BinlogEventRow{"Gtid", "BEGIN GTID 0-101-175"};
  ExpectGtid(f, "does not follow the checkpoint's 0-101-169");
  EXPECT_FALSE(ChooseResume(f).rewritten);
  f = Good();
  f.binary_logs = {"binlog.000004", "binlog.000005"};  // purged: later files remain
  EXPECT_FALSE(ChooseResume(f).rewritten);
  f = Good();
  f.event = BinlogEventRow{"Rotate", "binlog.000004;pos=4"};
  EXPECT_FALSE(ChooseResume(f).rewritten);
  f.event = BinlogEventRow{"Gtid_list", "[0-101-169]"};
  EXPECT_FALSE(ChooseResume(f).rewritten);
  f.event = BinlogEventRow{"Gtid", "BEGIN GTID 1-101-1"};  // the first transaction of a new domain
  EXPECT_FALSE(ChooseResume(f).rewritten);
  f = AtTheLiveEnd();
  f.binlog_gtid_pos = "0-101-169,1-101-4";  // a domain the checkpoint does not name
  EXPECT_FALSE(ChooseResume(f).rewritten);
  f = Good();
  f.event.reset();
  f.event_error = "Lost connection to server during query";
  EXPECT_FALSE(ChooseResume(f).rewritten);
  f = Good();
  f.connected.server_id = 102;  // another server: a move by GTID, not a rewrite
  f.binary_logs = {"binlog.000001"};
  EXPECT_FALSE(ChooseResume(f).rewritten);
}

// Issue 33, case 1: a multi-domain position after a move may lie before transactions of another
// domain the pipe applied (the new server wrote the domains in another order): only a GTID start
// skips them.
TEST(ChooseResume, SeveralDomainsAlwaysByGtid) {
  ResumeFacts f = Good();
  f.at.gtid_set = "0-101-169,1-7-4";
  ExpectGtid(f, "names 2 domains");
  f.event = BinlogEventRow{"Gtid", "BEGIN GTID 1-7-5"};  // another domain's next
  ExpectGtid(f, "names 2 domains");
  EXPECT_FALSE(ChooseResume(f).rewritten);
  // A binlog written anew is still found with several domains.
  f.binary_logs = {"binlog.000001"};
  EXPECT_TRUE(ChooseResume(f).rewritten);
}

}  // namespace
}  // namespace chsync::pipe
