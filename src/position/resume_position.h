#pragma once

// Whether a stream session may open its dump at the checkpoint's file:position instead of its GTID
// position (docs/failover.md, "How a restart finds its place").
//
// A MariaDB finds a GTID by reading the binlog file that holds it from its start: 0.2 s for a
// 500 MB file, more for larger ones, at every start and every reconnect. A file:position is found
// at once, but it means something only in the binlog it was read from. So the position is used
// only when the server connected now is MariaDB, is the server the checkpoint was written on
// (SourceIdentity::SameServer with its @@server_id now), still lists the checkpoint's file, and
// has at that position either
//   - the GTID event of the transaction that follows the checkpoint's GTID position: the next
//     sequence number of a domain the position names (not only "a GTID the checkpoint does not
//     hold": a binlog written again, e.g. restored from a backup with its gtid_binlog_state, may
//     have a later transaction of the domain at that offset, and GTID would find the right one), or
//   - no event, the position being the end of the server's current binlog file (SHOW BINLOG
//     STATUS) with @@gtid_binlog_pos naming only GTIDs the checkpoint holds (the live end).
// Anything else is resumed by GTID, as before: another server, MySQL (not tested here), a file
// that was purged or reset, an error reading the event (a position inside an event after RESET
// MASTER: "Wrong offset or I/O error"), any other event there (the Rotate that ends a file the
// stream left, the Gtid_list that begins one), or another GTID there. The check
// (SHOW BINLOG EVENTS IN file FROM position LIMIT 1) reads one event at the position: the server
// does not read the file from its start for it.
//
// ChooseResume is the decision, a pure function of what was read; DecideResume reads it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mysql/binlog_stream.h"
#include "mysql/connection.h"
#include "mysql/source_set.h"
#include "state/checkpoint.h"

namespace chsync::pipe {

/// One row of SHOW BINLOG EVENTS: its Event_type and Info columns.
struct BinlogEventRow {
  std::string type;  ///< "Gtid", "Rotate", "Gtid_list", "Query", …
  std::string info;  ///< "BEGIN GTID 0-1-42", "GTID 0-1-43 cid=7", …
};

/// What the decision looks at: the checkpoint, the server connected now, and what that server
/// answered about its binlog (filled by DecideResume only when the first part allows a position).
struct ResumeFacts {
  bool mariadb = false;
  /// The server the checkpoint's positions were read from (unset: not recorded, or the
  /// checkpoint was just moved there from another server by GTID).
  std::optional<SourceIdentity> written_on;
  /// The server connected now (@@server_id of the session that opens the dump).
  SourceIdentity connected;
  /// The checkpoint's position (file, position, gtid_set).
  SourcePosition at;

  /// SHOW BINARY LOGS: the files the server has.
  std::vector<std::string> binary_logs;
  /// SHOW BINLOG EVENTS IN at.file FROM at.position LIMIT 1 failed: the server's message.
  std::string event_error;
  /// The event there; unset when there is none (the position is the file's end).
  std::optional<BinlogEventRow> event;
  /// The end of the server's current binlog (SHOW BINLOG STATUS).
  mysql::BinlogCoordinate live_end;
  /// @@gtid_binlog_pos: the last GTID of each domain in the server's binlog.
  std::string binlog_gtid_pos;
  /// Read only once the binlog was found written anew: the Info of the Gtid_list event that
  /// begins the server's earliest binlog file ("[0-11-40]"; "" when there is none).
  std::optional<std::string> first_gtid_list;
};

struct ResumeChoice {
  bool by_position = false;
  /// By position: what was checked ("GTID 0-101-170 checked there", "the end of its binlog");
  /// by GTID: why not, in a sentence; written anew: what proves it.
  std::string reason;
  /// The checkpoint's own server shows that its binlog is no longer the one the checkpoint's
  /// position was read in (RESET MASTER, a restore, a clone): its files are numbered below the
  /// checkpoint's, there is no event boundary at the position, or another transaction is there.
  /// A GTID start would then skip transactions whose numbers the new binlog reuses, so the stream
  /// never falls back to GTID silently: see `continues`.
  bool rewritten = false;
  /// Written anew, but its earliest file begins exactly where the checkpoint's GTID position ends
  /// (its Gtid_list holds every domain of the position at the position's sequence number or later:
  /// RESET MASTER with gtid_binlog_state set again): the pipe finds its place by GTID and row versions
  /// begin a new epoch. Otherwise it is a binlog gap (on_binlog_gap decides).
  bool continues = false;
  /// Why it does not continue.
  std::string continue_reason;
};

/// The GTID a MariaDB GTID event's Info column names: "BEGIN GTID 0-1-42", "GTID 0-1-42" (a
/// statement outside a transaction), "XA START X'61',X'',1 GTID 0-1-42", any of them followed by
/// " cid=N". nullopt when there is none.
std::optional<mysql::MariaDbGtidList::Gtid> GtidOfEventInfo(std::string_view info);

/// Why `gtid` is not the transaction that follows `position` ("" when it is): the next sequence
/// number of a domain `position` names. A domain it does not name, a GTID it holds already, or a
/// gap in the sequence (a binlog written again: restored from a backup, or reset) all mean "not
/// here".
std::string NotTheNextTransaction(const mysql::MariaDbGtidList& position,
                                  const mysql::MariaDbGtidList::Gtid& gtid);

/// Why the checkpoint and the server connected now alone rule out a position resume; "" when the
/// server's binlog must tell (the fields after `at` of `facts` are not read).
std::string PositionRuledOut(const ResumeFacts& facts);

/// Why a binlog written anew does not begin where `position` ends ("" when it does): `gtid_list` is
/// the Info of the Gtid_list event that begins the server's earliest binlog file.
std::string RewrittenBinlogGap(const mysql::MariaDbGtidList& position, std::string_view gtid_list);

/// RewrittenBinlogGap for the MariaDB server `conn` reaches (its earliest binlog file's Gtid_list):
/// "" when its binlog begins where `gtid_position` ends.
Result<std::string> RewrittenBinlogGapOn(mysql::Connection& conn, const std::string& gtid_position);

/// The decision, from every field of `facts` (see the file comment).
ResumeChoice ChooseResume(const ResumeFacts& facts);

/// Reads on `conn` (a session of the server the dump is about to read; nothing else runs on it
/// meanwhile) what ChooseResume needs, @@server_id first (into `facts.connected.server_id`), and
/// decides. A statement that fails means "by GTID", with the server's message as the reason: this
/// never fails. Logs the choice and its reason at debug level (a session's info line says the rest).
ResumeChoice DecideResume(mysql::Connection& conn, ResumeFacts facts);

}  // namespace chsync::pipe
