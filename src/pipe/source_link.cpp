// The pipe's link to its source (source_link.h): choosing the server to read among --source's,
// and checking, on every session, that the connection reached that server.

#include "pipe/source_link.h"

#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <utility>

#include "binlog/decoder.h"
#include "common/log.h"
#include "common/url.h"
#include "mysql/mysql_gtid_set.h"
#include "mysql/table_filter.h"
#include "mysql/table_inventory.h"
#include "pipe/names.h"
#include "schema/tracker.h"

namespace chsync::pipe {

namespace {

/// Why `server` cannot feed a pipe at all ("" when it can).
std::string BinlogSettingsProblem(const mysql::ServerInfo& server, const std::string& address) {
  if (!server.log_bin) return "binary logging is off on " + address + ": start the server with log_bin";
  if (server.binlog_format != "ROW")
    return "binlog_format is " + server.binlog_format + " on " + address + ": set binlog_format=ROW";
  if (server.binlog_row_image != "FULL") {
    return "binlog_row_image is " + server.binlog_row_image + " on " + address +
           ": set binlog_row_image=FULL";
  }
  return "";
}

}  // namespace

std::string SourceLink::Describe(const SourceIdentity& id) {
  std::string out = "server_id " + std::to_string(id.server_id);
  if (!id.server_uuid.empty()) out += " (" + id.server_uuid + ")";
  if (!id.address.empty()) out += " at " + id.address;
  return out;
}

Status SourceLink::TryCandidate(size_t index, const std::optional<Checkpoint>& saved,
                                const std::string& sent_gtids, Candidate& c) {
  auto url = ParseUrl(sources_.url(index));
  if (!url.ok()) return std::move(url.error().AddContext("--source"));
  auto options = mysql::OptionsFromUrl(*url);
  if (!options.ok()) return std::move(options.error().AddContext("--source"));
  c.options = *options;
  CHSYNC_ASSIGN_OR_RETURN(c.control, mysql::Connection::Open(c.options));
  CHSYNC_ASSIGN_OR_RETURN(c.server, mysql::Probe(*c.control));
  const std::string address = c.options.Address();
  if (std::string problem = BinlogSettingsProblem(c.server, address); !problem.empty()) {
    return Error(ErrorKind::kConfig, problem + " (see `chsync check`)");
  }
  if (saved) {
    // The tracked schemas of a pipe in ordinal mode (MINIMAL) differ from those of FULL metadata.
    const bool full = c.server.binlog_row_metadata.has_value() && *c.server.binlog_row_metadata == "FULL";
    auto tracker = schema::Tracker::Deserialize(saved->schemas);
    if (tracker.ok() && tracker->ordinal_mode() == full) {
      return Error(ErrorKind::kConfig,
                   fmt::format("binlog_row_metadata is {} on {}, but this pipe runs with {}: set "
                               "the same binlog_row_metadata on every server of the topology",
                               full ? "FULL" : "MINIMAL", address, full ? "MINIMAL" : "FULL"));
    }
  }
  c.identity = {c.server.server_id, "", address};
  if (!c.server.is_mariadb()) {
    CHSYNC_ASSIGN_OR_RETURN(std::optional<std::string> uuid, c.control->QueryValue("SELECT @@server_uuid"));
    c.identity.server_uuid = uuid.value_or("");
  }
  if (!saved || !saved->source || saved->source->SameServer(c.identity)) return Status::Ok();

  // Another server than the one the checkpoint was saved on: it must hold every transaction the
  // pipe applied, which only GTIDs can tell — and every transaction whose rows may have reached
  // ClickHouse after that checkpoint (lineage.h), or ClickHouse would keep rows it never had.
  const std::string was = Describe(*saved->source);
  CHSYNC_RETURN_IF_ERROR(CheckCandidateGtids(c, saved->resume.gtid_set, was, "chsync already applied"));
  if (c.gtid_gap.empty() && !sent_gtids.empty() && sent_gtids != saved->resume.gtid_set) {
    CHSYNC_RETURN_IF_ERROR(
        CheckCandidateGtids(c, sent_gtids, was, "whose rows chsync already sent to ClickHouse"));
  }
  return Status::Ok();
}

Status SourceLink::CheckCandidateGtids(Candidate& c, const std::string& applied, const std::string& was,
                                       const std::string& what) {
  const std::string address = c.options.Address();
  if (applied.empty()) {
    return Error(ErrorKind::kConfig, "the checkpoint was saved on " + was +
                                         " and records no GTID position, so chsync cannot tell "
                                         "where to resume on " +
                                         address +
                                         ": point --source back at that server, or run `chsync "
                                         "resync` to copy every table again from this one");
  }
  std::string missing;
  if (c.server.is_mariadb()) {
    auto list = mysql::MariaDbGtidList::Parse(applied);
    if (!list.ok())
      return Error(ErrorKind::kCorrupt, "the checkpoint's GTID position: " + list.error().message());
    CHSYNC_ASSIGN_OR_RETURN(std::optional<std::string> state,
                            c.control->QueryValue("SELECT @@GLOBAL.gtid_binlog_state"));
    missing = mysql::MariaDbMissing(*list, state.value_or(""));
  } else {
    if (c.server.gtid_mode != "ON") {
      c.gtid_gap = address + " has gtid_mode " + c.server.gtid_mode + ": it cannot say whether it has the " +
                   "transactions chsync applied from " + was + " (GTID set " + applied + ")";
      return Status::Ok();
    }
    auto ours = mysql::MysqlGtidSet::Parse(applied);
    if (!ours.ok()) return Error(ErrorKind::kCorrupt, "the checkpoint's GTID set: " + ours.error().message());
    CHSYNC_ASSIGN_OR_RETURN(std::optional<std::string> executed,
                            c.control->QueryValue("SELECT @@GLOBAL.gtid_executed"));
    auto theirs = mysql::MysqlGtidSet::Parse(executed.value_or(""));
    if (!theirs.ok())
      return Error(ErrorKind::kServer, "gtid_executed of " + address + ": " + theirs.error().message());
    std::string set = mysql::MySqlMissing(*ours, *theirs);
    if (!set.empty()) missing = "missing " + set;
  }
  if (!missing.empty()) {
    c.gtid_gap = address + " lacks transactions " + what + " from " + was + ": " + missing +
                 ". Wait until it has replicated them, or choose a server that has them";
  }
  return Status::Ok();
}

void SourceLink::Take(size_t index, Candidate& c) {
  gtid_gap_ = c.gtid_gap;
  current_ = index;
  options_ = c.options;
  control_ = std::move(c.control);
  server_ = std::move(c.server);
  identity_ = c.identity;
}

Status SourceLink::Select(const std::vector<size_t>& order, const std::optional<Checkpoint>& saved,
                          const std::string& sent_gtids, bool accept_gap, const GapError& gap) {
  std::string reasons;
  bool all_network = true;
  std::optional<std::pair<size_t, Candidate>> gapped;  // usable only by copying everything again
  for (size_t index : order) {
    Candidate c;
    Status s = TryCandidate(index, saved, sent_gtids, c);
    if (s.ok() && c.gtid_gap.empty()) {
      Take(index, c);
      return Status::Ok();
    }
    std::string why = s.ok() ? c.gtid_gap : s.error().message();
    if (!s.ok() && s.error().kind() != ErrorKind::kNetwork) all_network = false;
    if (s.ok()) {
      all_network = false;
      if (!gapped) gapped.emplace(index, std::move(c));
    }
    if (sources_.size() > 1) log::Warn("source {} cannot take this pipe: {}", index + 1, why);
    reasons += (reasons.empty() ? "" : "; ") + why;
  }
  if (gapped && accept_gap) {
    // on_binlog_gap=resync: a server without the pipe's transactions serves a fresh copy.
    Take(gapped->first, gapped->second);
    return Status::Ok();
  }
  const std::string what =
      sources_.size() == 1 ? reasons : "no --source server can serve this pipe: " + reasons;
  if (gapped) return gap(what);
  return Error(all_network ? ErrorKind::kNetwork : ErrorKind::kConfig, what);
}

Result<mysql::BinlogCoordinate> SourceLink::LocateGtidStart(const std::string& gtid_set, uint32_t server_id) {
  CHSYNC_ASSIGN_OR_RETURN(std::unique_ptr<mysql::Connection> conn, mysql::Connection::Open(options_));
  mysql::BinlogStreamOptions options;
  options.server_id = server_id;
  options.gtid_set = gtid_set;
  options.heartbeat_ms = 200;
  CHSYNC_ASSIGN_OR_RETURN(std::unique_ptr<mysql::BinlogStream> stream,
                          mysql::BinlogStream::Open(std::move(conn), options));
  binlog::DecoderOptions decoder_options;
  decoder_options.checksum_before_format =
      stream->checksum() == "CRC32" ? binlog::ChecksumAlgorithm::kCrc32 : binlog::ChecksumAlgorithm::kNone;
  decoder_options.decode_rows_of = [](const binlog::TableMap&) { return false; };
  binlog::Decoder decoder(decoder_options);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    CHSYNC_ASSIGN_OR_RETURN(mysql::StreamEvent ev, stream->Next());
    if (decoder.file() != ev.at.file) decoder.SetFile(ev.at.file);
    auto decoded = decoder.Decode(ev.bytes, ev.at.position);
    if (!decoded.ok()) return std::move(decoded.error().AddContext("binlog event at " + ev.at.ToString()));
    // The first transaction the server sends is the first one after gtid_set…
    if (std::holds_alternative<binlog::MariaGtidEvent>(decoded->body) ||
        (std::holds_alternative<binlog::GtidEvent>(decoded->body) && !ev.artificial)) {
      return ev.at.coordinate();
    }
    // …and when it has none yet, it waits at the end of its binlog and says where that is.
    if (const auto* hb = std::get_if<binlog::HeartbeatEvent>(&decoded->body)) {
      return mysql::BinlogCoordinate{std::string(hb->log_file), decoded->header.log_pos};
    }
  }
  return Error(ErrorKind::kNetwork,
               "the source sent neither a transaction nor a heartbeat for 30 s after GTID " + gtid_set);
}

Status SourceLink::Configure(const std::string& source) {
  CHSYNC_ASSIGN_OR_RETURN(sources_, mysql::SourceSet::Parse(source));
  for (const std::string& one : sources_.urls()) {
    auto url = ParseUrl(one);
    if (!url.ok()) return std::move(url.error().AddContext("--source"));
    auto options = mysql::OptionsFromUrl(*url);
    if (!options.ok()) return std::move(options.error().AddContext("--source"));
  }
  return Status::Ok();
}

std::vector<size_t> SourceLink::Order() const {
  std::vector<size_t> order(sources_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  return order;
}

Result<std::unique_ptr<mysql::Connection>> SourceLink::OpenSession() {
  CHSYNC_ASSIGN_OR_RETURN(std::unique_ptr<mysql::Connection> conn, mysql::Connection::Open(options_));
  // Every session checks which server it reached, on the connection that opens the dump: a proxy,
  // a VIP or a DNS name may lead to another server than the last session's (lineage.h).
  CHSYNC_ASSIGN_OR_RETURN(SourceIdentity reached, ReadIdentity(*conn));
  if (!reached.SameServer(identity_)) {
    moved_ = true;
    return Error(
        ErrorKind::kNetwork,
        fmt::format("{} now leads to server_id {}{}, not to {} read so far: its binlog is another "
                    "one, so the pipe finds its place there by GTID",
                    options_.Address(), reached.server_id,
                    reached.server_uuid.empty() ? "" : " (" + reached.server_uuid + ")", Describe()));
  }
  return conn;
}

Result<SourceIdentity> SourceLink::ReadIdentity(mysql::Connection& conn) const {
  SourceIdentity id;
  id.address = options_.Address();
  CHSYNC_ASSIGN_OR_RETURN(std::optional<std::string> server_id, conn.QueryValue("SELECT @@server_id"));
  std::string_view text = server_id.value_or("");
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id.server_id);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return Error(ErrorKind::kServer,
                 "@@server_id of " + id.address + " is '" + server_id.value_or("NULL") + "'");
  }
  if (!server_.is_mariadb()) {
    CHSYNC_ASSIGN_OR_RETURN(std::optional<std::string> uuid, conn.QueryValue("SELECT @@server_uuid"));
    id.server_uuid = uuid.value_or("");
  }
  return id;
}

std::optional<std::string> SourceLink::MariaBinlogGtid() {
  auto gtid = control_->QueryValue("SELECT @@GLOBAL.gtid_binlog_pos");
  if (!gtid.ok() || !gtid->has_value()) return std::nullopt;
  return **gtid;
}

bool SourceLink::ResumeByGtid(const std::string& gtid_set) const {
  if (gtid_set.empty()) return false;
  return server_.is_mariadb() || server_.gtid_mode == "ON";
}

bool SourceLink::full_metadata() const {
  return server_.binlog_row_metadata.has_value() && *server_.binlog_row_metadata == "FULL";
}

Result<std::vector<schema::TableSchema>> SourceLink::LoadSchemas(
    const std::vector<std::string>& databases, const std::function<bool(const schema::TableSchema&)>& keep) {
  CHSYNC_ASSIGN_OR_RETURN(std::vector<schema::TableSchema> all,
                          mysql::LoadTableSchemas(control(), databases, server().is_mariadb()));
  std::vector<schema::TableSchema> out;
  for (schema::TableSchema& t : all) {
    if (keep(t)) out.push_back(std::move(t));
  }
  return out;
}

Result<SourcePosition> SourceLink::StablePoint(const std::vector<std::string>& databases,
                                               const std::function<bool(const schema::TableSchema&)>& keep,
                                               std::vector<schema::TableSchema>& schemas) {
  // The schemas must be the ones in force at the recorded position: read them before and after
  // reading the position, and try again when a DDL slipped in between.
  for (int attempt = 0; attempt < 10; ++attempt) {
    CHSYNC_ASSIGN_OR_RETURN(std::vector<schema::TableSchema> before, LoadSchemas(databases, keep));
    // MariaDB: the GTID position of the binlog's end, read on both sides of the position. When it
    // did not change, no transaction was written in between, so it names the same point (the
    // server writes a transaction's events and its GTID under the lock SHOW BINLOG STATUS takes).
    std::optional<std::string> gtid_before;
    if (server().is_mariadb()) gtid_before = MariaBinlogGtid();
    CHSYNC_ASSIGN_OR_RETURN(mysql::BinlogCoordinate at, mysql::CurrentBinlogPosition(control()));
    std::optional<std::string> gtid_after;
    if (server().is_mariadb()) gtid_after = MariaBinlogGtid();
    CHSYNC_ASSIGN_OR_RETURN(std::vector<schema::TableSchema> after, LoadSchemas(databases, keep));
    if (before == after) {
      SourcePosition position{at.file, at.position, ""};
      if (!server().is_mariadb() && server().gtid_mode == "ON") {
        position.gtid_set = at.gtid_set;  // Executed_Gtid_Set, read with the position
      } else if (server().is_mariadb() && gtid_before && gtid_before == gtid_after) {
        position.gtid_set = *gtid_before;
      } else if (server().is_mariadb()) {
        // Transactions were committed meanwhile: the server computes it from the position, reading
        // the binlog file from its start (0.1-0.5 s for a few hundred MB).
        log::Debug(
            "the GTID position moved while the binlog position was read; asking the server for the "
            "GTID position at {}",
            Coordinate(at.file, at.position));
        auto gtid = control().QueryValue("SELECT BINLOG_GTID_POS(" + mysql::QuoteString(at.file) + ", " +
                                         std::to_string(at.position) + ")");
        if (gtid.ok() && gtid->has_value()) position.gtid_set = **gtid;
      }
      schemas = std::move(after);
      return position;
    }
    log::Info("a schema change ran while the start position was read; reading it again");
  }
  return Error(ErrorKind::kServer,
               "the source schema kept changing while chsync read its start position; "
               "try again when no DDL is running");
}

Result<std::vector<std::string>> SourceLink::Databases() {
  CHSYNC_ASSIGN_OR_RETURN(mysql::QueryResult r,
                          control().Query("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA"));
  std::vector<std::string> out;
  for (const auto& row : r.rows) {
    if (!row[0]) continue;
    if (mysql::IsSystemSchema(*row[0])) continue;
    out.push_back(*row[0]);
  }
  return out;
}

Status SourceLink::LoadDatabaseDefaults(schema::Tracker& tracker) {
  CHSYNC_ASSIGN_OR_RETURN(
      mysql::QueryResult r,
      control().Query("SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM "
                      "information_schema.SCHEMATA"));
  for (const auto& row : r.rows) {
    if (!row[0] || !row[1] || !row[2]) continue;
    tracker.SetDatabaseDefaults(*row[0], *row[1], *row[2]);
  }
  return Status::Ok();
}

}  // namespace chsync::pipe
