// How a new pipe starts (docs/configuration.md, "Start modes"): snapshot.mode initial copies every
// table then streams (Initialize), never streams only — from the end of the binlog now or from
// start_position, start_gtid or start_time (CdcStartPoint, start_point.h) — and only copies every
// table and exits (FinishLoadOnly). A checkpoint, once saved, decides where the pipe resumes.

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <string>
#include <vector>

#include "common/log.h"
#include "mysql/mysql_gtid_set.h"
#include "pipe/pipe.h"
#include "pipe/start_point.h"

namespace chsync::pipe {

namespace {

/// A statement for a message: one line, at most 200 characters.
std::string Shorten(std::string text) {
  std::replace_if(
      text.begin(), text.end(), [](char c) { return c == '\n' || c == '\r' || c == '\t'; }, ' ');
  if (text.size() > 200) text = text.substr(0, 197) + "...";
  return text;
}

}  // namespace

bool Pipe::CdcOnlyStart() const {
  return request_.config.snapshot_mode == PipeConfig::StartMode::kNever && !request_.resync;
}

Status Pipe::CheckStartMode(std::optional<Checkpoint>& existing) {
  if (!existing) return Status::Ok();
  const PipeConfig& c = request_.config;
  const bool only = c.snapshot_mode == PipeConfig::StartMode::kOnly;
  if (existing->load_only) {
    const bool copied =
        std::all_of(existing->snapshot.begin(), existing->snapshot.end(),
                    [](const TableSnapshot& s) { return s.state == TableSnapshot::State::kDone; });
    if (only && copied && !request_.resync) {
      log::Info("snapshot.mode only: the last copy in {} is complete; copying every table again",
                checkpointer_.path());
      existing.reset();
      return Status::Ok();
    }
    if (only || (request_.resync && request_.resync_table.empty())) return Status::Ok();
    return Error(
        ErrorKind::kConfig,
        fmt::format("{} holds a load-only copy (snapshot.mode only, taken at {}): nothing streams from "
                    "it, and the source has moved on since. Run with snapshot.mode only to copy again, "
                    "`chsync resync --state {}` to copy every table and stream from there, or use a new "
                    "--state",
                    checkpointer_.path(),
                    Coordinate(existing->stream_start.file, existing->stream_start.position),
                    checkpointer_.path()));
  }
  const bool start_given = !c.start_position.empty() || !c.start_gtid.empty() || !c.start_time.empty();
  if (c.snapshot_mode != PipeConfig::StartMode::kInitial || start_given) {
    log::Info(
        "the checkpoint in {} decides where the pipe resumes ({}): snapshot.mode {}{} applies to a new pipe "
        "only",
        checkpointer_.path(), Coordinate(existing->resume.file, existing->resume.position),
        StartModeName(c.snapshot_mode), start_given ? " and its start point" : "");
  }
  return Status::Ok();
}

Result<SourcePosition> Pipe::CdcStartPoint(const SourcePosition& now,
                                           const std::vector<schema::TableSchema>& schemas) {
  const PipeConfig& c = request_.config;
  const bool mariadb = source_.server().is_mariadb();
  const bool mysql_gtids = !mariadb && source_.server().gtid_mode == "ON";
  if (c.start_position.empty() && c.start_gtid.empty() && c.start_time.empty()) {
    log::Info("snapshot.mode never: no table is copied; streaming from the end of the binlog now, {}",
              Coordinate(now.file, now.position));
    return now;
  }
  if (mysql_gtids && c.start_gtid.empty()) {
    return Error(
        ErrorKind::kUnsupported,
        fmt::format("{} on a MySQL server with gtid_mode ON: chsync cannot tell the GTID set at a binlog "
                    "position, which every later restart starts from. Give start_gtid instead: the "
                    "set @@GLOBAL.gtid_executed had at the start point",
                    c.start_position.empty() ? "start_time" : "start_position"));
  }
  const DumpOpener open = [this] { return source_.OpenSession(); };
  const mysql::BinlogCoordinate end{now.file, now.position};
  mysql::BinlogCoordinate at;
  std::string gtid;
  std::string what;
  if (!c.start_gtid.empty()) {
    what = "start_gtid " + c.start_gtid;
    if (mariadb) {
      auto list = mysql::MariaDbGtidList::Parse(c.start_gtid);
      if (!list.ok())
        return Error(ErrorKind::kConfig,
                     "start_gtid '" + c.start_gtid + "': " + list.error().message() +
                         " (a MariaDB GTID position: DOMAIN-SERVER-SEQ, comma-separated)");
    } else if (!mysql_gtids) {
      return Error(ErrorKind::kConfig, "start_gtid needs GTIDs, and the source has gtid_mode " +
                                           source_.server().gtid_mode +
                                           ": give start_position or start_time");
    } else if (auto set = mysql::MysqlGtidSet::Parse(c.start_gtid); !set.ok()) {
      return Error(ErrorKind::kConfig, "start_gtid '" + c.start_gtid + "': " + set.error().message());
    }
    auto located = source_.LocateGtidStart(c.start_gtid, session_.server_id());
    if (!located.ok()) {
      return Error(ErrorKind::kConfig, fmt::format("{}: the source cannot stream from there: {}", what,
                                                   located.error().message()));
    }
    at = {located->file, located->position};
    gtid = c.start_gtid;
  } else {
    CHSYNC_ASSIGN_OR_RETURN(std::vector<BinlogFileSize> files, ListBinlogFiles(source_.control()));
    if (!c.start_position.empty()) {
      what = "start_position " + c.start_position;
      CHSYNC_ASSIGN_OR_RETURN(auto position, ParseStartPosition(c.start_position));
      auto file = std::find_if(files.begin(), files.end(),
                               [&](const BinlogFileSize& f) { return f.file == position.first; });
      if (file == files.end()) {
        return Error(ErrorKind::kConfig,
                     fmt::format("{}: the source has no binlog file {} (SHOW BINARY LOGS lists {} to {})",
                                 what, position.first, files.empty() ? "none" : files.front().file,
                                 files.empty() ? "none" : files.back().file));
      }
      at = {position.first, position.second};
      if (mysql::CompareCoordinates(at, end) > 0 ||
          (file->file != end.file && position.second > file->size)) {
        return Error(ErrorKind::kConfig, fmt::format("{} is past the end of the binlog ({} now)", what,
                                                     Coordinate(now.file, now.position)));
      }
    } else {
      CHSYNC_ASSIGN_OR_RETURN(int64_t time, ParseStartTime(c.start_time));
      what = "start_time " + c.start_time;
      CHSYNC_ASSIGN_OR_RETURN(std::optional<mysql::BinlogCoordinate> found,
                              FindStartByTime(open, session_.server_id(), files, end, time));
      if (!found) {
        log::Info("{}: no transaction began at or after {} before the end of the binlog now", what,
                  UtcText(time));
        found = end;
      }
      at = *found;
    }
    if (mariadb) {
      // The GTID position at the start, as the server computes it (reading the file from its start).
      auto pos = source_.control().QueryValue("SELECT BINLOG_GTID_POS(" + mysql::QuoteString(at.file) + ", " +
                                              std::to_string(at.position) + ")");
      if (!pos.ok()) return std::move(pos.error().AddContext(what + ": the GTID position there"));
      gtid = pos->value_or("");
    }
  }
  // Today's schemas are those at the start only if nothing between changed a replicated table.
  const TableSelected selected = [this](std::string_view database, std::string_view table) {
    return set_.selection().Matches(database, table);
  };
  if (mysql::CompareCoordinates(at, end) < 0) {
    std::vector<std::string> names;
    names.reserve(schemas.size());
    for (const schema::TableSchema& t : schemas) names.push_back(t.name);
    CHSYNC_ASSIGN_OR_RETURN(std::optional<FoundSchemaChange> change,
                            SchemaChangeAfter(open, session_.server_id(), at, end, selected, names));
    if (change) {
      return Error(
          ErrorKind::kConfig,
          fmt::format("{}{}: a statement after it changed the replicated table {}: `{}` at {}{}. chsync "
                      "knows the tables' schemas as they are now, which do not fit the rows written "
                      "before that statement. Start after it (a later start point), or use "
                      "snapshot.mode initial to copy the tables",
                      what, c.start_position.empty() ? " (" + Coordinate(at.file, at.position) + ")" : "",
                      change->table, Shorten(change->statement), change->position,
                      change->gtid.empty() ? "" : " (GTID " + change->gtid + ")"));
    }
  }
  log::Info("snapshot.mode never: no table is copied; streaming from {} ({}{})",
            Coordinate(at.file, at.position), what, gtid.empty() ? "" : ", GTID position " + gtid);
  return SourcePosition{at.file, at.position, gtid};
}

Status Pipe::FinishLoadOnly() {
  SetPhase("loaded");
  CHSYNC_RETURN_IF_ERROR(SaveCheckpoint());
  log::Info(
      "snapshot.mode only: every table is copied ({} tables, read from {} on); nothing is streamed. Run with "
      "snapshot.mode only again to copy again",
      checkpoint_.snapshot.size(),
      Coordinate(checkpoint_.stream_start.file, checkpoint_.stream_start.position));
  return Status::Ok();
}

}  // namespace chsync::pipe
