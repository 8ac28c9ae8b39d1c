#include "position/resume_position.h"

#include <charconv>
#include <chrono>
#include <thread>
#include <utility>

#include "common/crash_point.h"
#include "common/log.h"
#include "position/row_version.h"

namespace chsync::pipe {

namespace {

std::string Where(const SourcePosition& at) {
  return at.file + ":" + std::to_string(at.position);
}

std::string Describe(const SourceIdentity& id) {
  std::string out = "server_id " + std::to_string(id.server_id);
  if (!id.server_uuid.empty()) out += " (" + id.server_uuid + ")";
  return out;
}

std::string GtidText(const mysql::MariaDbGtidList::Gtid& g) {
  return std::to_string(g.domain) + "-" + std::to_string(g.server_id) + "-" + std::to_string(g.seq);
}

/// Reads an unsigned decimal number of type T from the front of `text` (advancing it).
template <typename T>
bool TakeNumber(std::string_view& text, T& out) {
  const char* end = text.data() + text.size();
  auto [next, ec] = std::from_chars(text.data(), end, out);
  if (ec != std::errc() || next == text.data()) return false;
  text.remove_prefix(static_cast<size_t>(next - text.data()));
  return true;
}

/// "D-S-N" at the front of `text`, followed by its end or a space.
std::optional<mysql::MariaDbGtidList::Gtid> TakeGtid(std::string_view text) {
  mysql::MariaDbGtidList::Gtid g;
  if (!TakeNumber(text, g.domain) || !text.starts_with('-')) return std::nullopt;
  text.remove_prefix(1);
  if (!TakeNumber(text, g.server_id) || !text.starts_with('-')) return std::nullopt;
  text.remove_prefix(1);
  if (!TakeNumber(text, g.seq)) return std::nullopt;
  if (!text.empty() && text.front() != ' ') return std::nullopt;
  return g;
}

}  // namespace

std::optional<mysql::MariaDbGtidList::Gtid> GtidOfEventInfo(std::string_view info) {
  constexpr std::string_view kWord = "GTID ";
  for (size_t at = info.find(kWord); at != std::string_view::npos; at = info.find(kWord, at + 1)) {
    if (at != 0 && info[at - 1] != ' ') continue;
    if (auto gtid = TakeGtid(info.substr(at + kWord.size()))) return gtid;
  }
  return std::nullopt;
}

std::string NotTheNextTransaction(const mysql::MariaDbGtidList& position,
                                  const mysql::MariaDbGtidList::Gtid& gtid) {
  auto it = position.domains().find(gtid.domain);
  if (it == position.domains().end()) {
    return "GTID " + GtidText(gtid) + " is of domain " + std::to_string(gtid.domain) +
           ", which the checkpoint's GTID position " + position.ToString() + " does not name";
  }
  if (it->second.seq >= gtid.seq) {
    return "GTID " + GtidText(gtid) + " is one the checkpoint's GTID position " + position.ToString() +
           " holds already";
  }
  if (gtid.seq != it->second.seq + 1) {
    return "GTID " + GtidText(gtid) + " does not follow the checkpoint's " + GtidText(it->second) +
           " in its domain (sequence " + std::to_string(it->second.seq + 1) + " would)";
  }
  return "";
}

std::string PositionRuledOut(const ResumeFacts& facts) {
  if (!facts.mariadb) {
    return "the source is MySQL, which chsync resumes by GTID only (a position resume is checked on "
           "MariaDB only)";
  }
  if (facts.at.gtid_set.empty()) return "the checkpoint has no GTID position";
  if (!mysql::MariaDbGtidList::Parse(facts.at.gtid_set).ok()) {
    return "the checkpoint's GTID position '" + facts.at.gtid_set + "' is not a MariaDB GTID list";
  }
  if (facts.at.file.empty() || facts.at.position < 4) return "the checkpoint has no binlog position";
  if (!facts.written_on) return "the checkpoint does not name the server its binlog position was read on";
  if (!facts.written_on->SameServer(facts.connected)) {
    return "the checkpoint's binlog position was read on " + Describe(*facts.written_on) + ", not on " +
           Describe(facts.connected) + " connected now";
  }
  return "";
}

std::string RewrittenBinlogGap(const mysql::MariaDbGtidList& position, std::string_view gtid_list) {
  std::string_view inner = gtid_list;
  if (inner.starts_with('[') && inner.ends_with(']')) inner = inner.substr(1, inner.size() - 2);
  auto list = mysql::MariaDbGtidList::Parse(inner);
  if (!list.ok())
    return "the Gtid_list that begins its earliest binlog file is '" + std::string(gtid_list) + "'";
  for (const auto& [domain, ours] : position.domains()) {
    auto it = list->domains().find(domain);
    if (it == list->domains().end() || it->second.seq < ours.seq) {
      return "its earliest binlog file begins after GTID position [" + std::string(inner) + "], which " +
             (it == list->domains().end()
                  ? "does not name domain " + std::to_string(domain)
                  : "is before the checkpoint's " + GtidText(ours) + " in domain " + std::to_string(domain));
    }
  }
  return "";
}

/// ChooseResume without the rule for several domains.
ResumeChoice ChooseResumeOnOneServer(const ResumeFacts& facts);

namespace {

/// The binlog was proven written anew: `why`. Whether it continues where `facts.at` ends.
ResumeChoice Rewritten(const ResumeFacts& facts, const mysql::MariaDbGtidList& state, std::string why) {
  ResumeChoice choice{false, std::move(why)};
  choice.rewritten = true;
  if (!facts.first_gtid_list) {
    choice.continue_reason = "its earliest binlog file was not read";
    return choice;
  }
  choice.continue_reason = RewrittenBinlogGap(state, *facts.first_gtid_list);
  choice.continues = choice.continue_reason.empty();
  return choice;
}

/// Event types that lie inside a transaction: never at a position between two of them.
bool InsideTransaction(std::string_view type) {
  return type == "Query" || type == "Table_map" || type == "Xid" || type == "Annotate_rows" ||
         type.starts_with("Write_rows") || type.starts_with("Update_rows") || type.starts_with("Delete_rows");
}

}  // namespace

ResumeChoice ChooseResume(const ResumeFacts& facts) {
  ResumeChoice choice = ChooseResumeOnOneServer(facts);
  if (!choice.by_position) return choice;
  // After a move by GTID the position is where the first transaction the server sent begins; a
  // server that wrote the domains in another order may hold transactions of another domain that the
  // pipe applied after it, skipped by a GTID start and replayed by a position start (issue 33,
  // case 1). One domain has one order everywhere.
  auto list = mysql::MariaDbGtidList::Parse(facts.at.gtid_set);
  if (list.ok() && list->domains().size() > 1) {
    return {false, "the checkpoint's GTID position names " + std::to_string(list->domains().size()) +
                       " domains, whose transactions a binlog position cannot tell apart from those applied "
                       "already"};
  }
  return choice;
}

ResumeChoice ChooseResumeOnOneServer(const ResumeFacts& facts) {
  if (std::string why = PositionRuledOut(facts); !why.empty()) return {false, why};
  const std::string where = Where(facts.at);
  // PositionRuledOut checked that it parses.
  const mysql::MariaDbGtidList state = mysql::MariaDbGtidList::Parse(facts.at.gtid_set).value();
  bool listed = false;
  for (const std::string& name : facts.binary_logs) listed = listed || name == facts.at.file;
  if (!listed) {
    // Purged files leave later ones; a binlog begun anew numbers every file below the checkpoint's.
    auto ours = BinlogFileSequence(facts.at.file);
    bool all_below = ours.ok() && !facts.binary_logs.empty();
    for (const std::string& name : facts.binary_logs) {
      auto sequence = BinlogFileSequence(name);
      all_below = all_below && sequence.ok() && *sequence < *ours;
    }
    if (all_below) {
      return Rewritten(facts, state,
                       "its binlog files end at " + facts.binary_logs.back() +
                           ", numbered below the checkpoint's " + facts.at.file);
    }
    return {false, "binlog file " + facts.at.file +
                       " is not in the server's SHOW BINARY LOGS (purged, or the binlog was reset)"};
  }
  if (!facts.event_error.empty()) {
    // The server found no event boundary at the position: the file holds other bytes than the
    // ones the checkpoint was read from.
    if (facts.event_error.find("Wrong offset") != std::string::npos) {
      return Rewritten(facts, state, "there is no event boundary at " + where + ": " + facts.event_error);
    }
    return {false, "reading the event at " + where + ": " + facts.event_error};
  }
  if (facts.event) {
    if (InsideTransaction(facts.event->type)) {
      return Rewritten(
          facts, state,
          "the event at " + where + " is a " + facts.event->type + " event, inside a transaction");
    }
    if (facts.event->type != "Gtid") {
      return {false, "the event at " + where + " is a " + facts.event->type +
                         " event, not the GTID event that begins a transaction"};
    }
    auto gtid = GtidOfEventInfo(facts.event->info);
    if (!gtid) return {false, "the GTID event at " + where + " names no GTID ('" + facts.event->info + "')"};
    if (std::string why = NotTheNextTransaction(state, *gtid); !why.empty()) {
      // One the checkpoint holds already cannot follow it in the binlog it was read from. A later
      // one of its domain may (`SET gtid_seq_no` skips numbers), and a domain it does not name may
      // begin there: GTID finds the place, as before.
      auto it = state.domains().find(gtid->domain);
      if (it != state.domains().end() && gtid->seq <= it->second.seq) {
        return Rewritten(facts, state, "the transaction at " + where + ": " + why);
      }
      return {false, "the transaction at " + where + ": " + why};
    }
    return {true, "the next transaction is " + GtidText(*gtid)};
  }
  // No event there: only the end of the server's binlog is a place to wait at. The end of a file
  // the server rotated away from is not taken (its Rotate event would be there anyway).
  if (facts.live_end.file == facts.at.file && facts.live_end.position < facts.at.position) {
    return Rewritten(
        facts, state,
        "the server's binlog ends at " + facts.live_end.ToString() + ", before the checkpoint's " + where);
  }
  if (facts.live_end.file != facts.at.file || facts.live_end.position != facts.at.position) {
    return {false, "there is no event at " + where + ", and the server's binlog ends at " +
                       facts.live_end.ToString()};
  }
  // Every GTID of the server's binlog state must be the checkpoint's own: a binlog reset and
  // written again to the same length ends at the same place with other transactions.
  auto server = mysql::MariaDbGtidList::Parse(facts.binlog_gtid_pos);
  if (!server.ok()) return {false, "@@gtid_binlog_pos '" + facts.binlog_gtid_pos + "' does not parse"};
  for (const auto& [domain, gtid] : server->domains()) {
    auto it = state.domains().find(domain);
    if (it == state.domains().end()) {
      return {false, "the server's binlog ends at " + where + ", but its last GTID in domain " +
                         std::to_string(domain) + " is " + GtidText(gtid) + ", a domain the checkpoint's (" +
                         facts.at.gtid_set + ") does not name"};
    }
    if (!(it->second == gtid)) {
      return Rewritten(facts, state,
                       "the server's binlog ends at " + where + ", but its last GTID in domain " +
                           std::to_string(domain) + " is " + GtidText(gtid) + ", not the checkpoint's (" +
                           facts.at.gtid_set + ")");
    }
  }
  return {true, "the end of its binlog"};
}

ResumeChoice DecideResume(mysql::Connection& conn, ResumeFacts facts) {
  auto decided = [&facts](ResumeChoice choice) {
    if (choice.by_position) {
      log::Debug("resuming {} by position: {}", Where(facts.at), choice.reason);
    } else {
      log::Debug("resuming {} by GTID rather than by position: {}", Where(facts.at), choice.reason);
    }
    return choice;
  };
  auto failed = [&](const std::string& what, const Error& error) {
    return decided({false, what + " failed: " + error.message()});
  };
  if (!facts.mariadb) return decided(ChooseResume(facts));
  auto id = conn.QueryValue("SELECT @@server_id");
  if (!id.ok()) return failed("SELECT @@server_id", id.error());
  std::string_view id_text = id->value_or("");
  if (!TakeNumber(id_text, facts.connected.server_id) || !id_text.empty()) {
    return decided({false, "@@server_id is '" + id->value_or("NULL") + "'"});
  }
  if (std::string why = PositionRuledOut(facts); !why.empty()) return decided({false, why});

  auto logs = conn.Query("SHOW BINARY LOGS");
  if (!logs.ok()) return failed("SHOW BINARY LOGS", logs.error());
  const int name = logs->ColumnIndex("Log_name");
  for (const auto& row : logs->rows) {
    if (name >= 0 && row[static_cast<size_t>(name)])
      facts.binary_logs.push_back(*row[static_cast<size_t>(name)]);
  }
  bool listed = false;
  for (const std::string& file : facts.binary_logs) listed = listed || file == facts.at.file;
  // The event at the position, or, with none there, the binlog's end and GTID state: two reads a
  // commit can fall between. The GTID state is read first (a commit enters it before the end moves
  // past it), and a different end is read again, with the event it brought: a busy server is not a
  // binlog written anew (seen in CI on a shared server).
  for (int attempt = 0; listed && attempt < 5; ++attempt) {
    facts.event.reset();
    facts.event_error.clear();
    facts.live_end = {};
    facts.binlog_gtid_pos.clear();
    // One event read where the position points, not the file from its start: 0.04-0.13 ms in the
    // server (SHOW PROFILES) 4 bytes, 154 MB and 430 MB into a 430 MB file, where BINLOG_GTID_POS
    // took 45 ms for the 154 MB before its position.
    auto event = conn.Query("SHOW BINLOG EVENTS IN " + mysql::QuoteString(facts.at.file) + " FROM " +
                            std::to_string(facts.at.position) + " LIMIT 1");
    if (!event.ok()) {
      facts.event_error = event.error().message();
      break;
    }
    if (!event->rows.empty()) {
      const int type = event->ColumnIndex("Event_type");
      const int info = event->ColumnIndex("Info");
      if (type < 0 || info < 0)
        return decided({false, "SHOW BINLOG EVENTS has no Event_type or Info column"});
      const auto& row = event->rows.front();
      facts.event = BinlogEventRow{row[static_cast<size_t>(type)].value_or(""),
                                   row[static_cast<size_t>(info)].value_or("")};
      break;
    }
    auto pos = conn.QueryValue("SELECT @@GLOBAL.gtid_binlog_pos");
    if (!pos.ok()) return failed("SELECT @@GLOBAL.gtid_binlog_pos", pos.error());
    facts.binlog_gtid_pos = pos->value_or("");
    DelayPoint("resume.binlog_end");
    auto end = mysql::CurrentBinlogPosition(conn);
    if (!end.ok()) return failed("reading the binlog's end", end.error());
    facts.live_end = std::move(end).value();
    if (facts.live_end.file == facts.at.file && facts.live_end.position == facts.at.position) {
      if (ChooseResume(facts).by_position) break;
      // A commit between the two reads; the next attempt waits for it to settle.
      std::this_thread::sleep_for(std::chrono::milliseconds(20 << attempt));
    }
  }
  ResumeChoice choice = ChooseResume(facts);
  if (choice.rewritten && !facts.binary_logs.empty()) {
    // Whether the binlog begun anew continues where the checkpoint's GTIDs end: the Gtid_list
    // event at the start of its earliest file says what it claims came before.
    auto first =
        conn.Query("SHOW BINLOG EVENTS IN " + mysql::QuoteString(facts.binary_logs.front()) + " LIMIT 4");
    if (!first.ok()) return failed("SHOW BINLOG EVENTS IN " + facts.binary_logs.front(), first.error());
    const int type = first->ColumnIndex("Event_type");
    const int info = first->ColumnIndex("Info");
    facts.first_gtid_list = "";
    for (const auto& row : first->rows) {
      if (type >= 0 && info >= 0 && row[static_cast<size_t>(type)].value_or("") == "Gtid_list") {
        facts.first_gtid_list = row[static_cast<size_t>(info)].value_or("");
      }
    }
    choice = ChooseResume(facts);
  }
  if (choice.rewritten) {
    log::Warn("the binlog of server_id {} was written anew since the checkpoint: {}",
              facts.connected.server_id, choice.reason);
  }
  return decided(choice);
}

Result<std::string> RewrittenBinlogGapOn(mysql::Connection& conn, const std::string& gtid_position) {
  auto position = mysql::MariaDbGtidList::Parse(gtid_position);
  if (!position.ok()) return "the checkpoint's GTID position '" + gtid_position + "' does not parse";
  CHSYNC_ASSIGN_OR_RETURN(mysql::QueryResult logs, conn.Query("SHOW BINARY LOGS"));
  const int name = logs.ColumnIndex("Log_name");
  if (name < 0 || logs.rows.empty() || !logs.rows.front()[static_cast<size_t>(name)]) {
    return std::string("the server lists no binlog file");
  }
  const std::string first = *logs.rows.front()[static_cast<size_t>(name)];
  CHSYNC_ASSIGN_OR_RETURN(mysql::QueryResult events,
                          conn.Query("SHOW BINLOG EVENTS IN " + mysql::QuoteString(first) + " LIMIT 4"));
  const int type = events.ColumnIndex("Event_type");
  const int info = events.ColumnIndex("Info");
  std::string list;
  for (const auto& row : events.rows) {
    if (type >= 0 && info >= 0 && row[static_cast<size_t>(type)].value_or("") == "Gtid_list") {
      list = row[static_cast<size_t>(info)].value_or("");
    }
  }
  return RewrittenBinlogGap(*position, list);
}

}  // namespace chsync::pipe
