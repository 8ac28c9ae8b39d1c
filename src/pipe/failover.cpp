// Several source servers: choosing the one to read from, moving a checkpoint from one server of a
// replication topology to another by GTID, and binlog gaps (docs/failover.md).

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "common/log.h"
#include "pipe/pipeline_internal.h"
#include "position/resume_position.h"

namespace chsync::pipe {

struct Pipe::Candidate {
  mysql::ConnectOptions options;
  std::unique_ptr<mysql::Connection> control;
  mysql::ServerInfo server;
  SourceIdentity identity;
  /// The server lacks transactions the pipe applied (why), or "".
  std::string gtid_gap;
};

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

std::string Describe(const SourceIdentity& id) {
  std::string out = "server_id " + std::to_string(id.server_id);
  if (!id.server_uuid.empty()) out += " (" + id.server_uuid + ")";
  if (!id.address.empty()) out += " at " + id.address;
  return out;
}

}  // namespace

std::string Pipe::DescribeSource() const {
  return Describe(source_identity_);
}

bool Pipe::ResumeByGtid() const {
  if (committed_.gtid_set.empty()) return false;
  return server_.is_mariadb() || server_.gtid_mode == "ON";
}

Error Pipe::BinlogGap(const std::string& what) {
  binlog_gap_ = true;
  const bool resync = request_.config.on_binlog_gap == PipeConfig::BinlogGap::kResync;
  return Error(ErrorKind::kServer,
               what + (resync ? ""
                              : ". Keep binlogs longer (or give --source a server that still has them), and "
                                "run `chsync resync` to copy the tables again, or set on_binlog_gap: resync "
                                "to let chsync do that itself"));
}

Status Pipe::TryCandidate(size_t index, const std::optional<Checkpoint>& saved, Candidate& c) {
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
  if (c.gtid_gap.empty() && !lineage_->sent_gtids().empty() &&
      lineage_->sent_gtids() != saved->resume.gtid_set) {
    CHSYNC_RETURN_IF_ERROR(
        CheckCandidateGtids(c, lineage_->sent_gtids(), was, "whose rows chsync already sent to ClickHouse"));
  }
  return Status::Ok();
}

Status Pipe::CheckCandidateGtids(Candidate& c, const std::string& applied, const std::string& was,
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

Status Pipe::SelectSource(const std::vector<size_t>& order, const std::optional<Checkpoint>& saved,
                          bool accept_gap) {
  std::string reasons;
  bool all_network = true;
  std::optional<std::pair<size_t, Candidate>> gapped;  // usable only by copying everything again
  auto adopt = [this](size_t index, Candidate& c) {
    gtid_gap_ = c.gtid_gap;
    current_source_ = index;
    source_options_ = c.options;
    control_ = std::move(c.control);
    server_ = std::move(c.server);
    source_identity_ = c.identity;
    full_metadata_ = server_.binlog_row_metadata.has_value() && *server_.binlog_row_metadata == "FULL";
  };
  for (size_t index : order) {
    Candidate c;
    Status s = TryCandidate(index, saved, c);
    if (s.ok() && c.gtid_gap.empty()) {
      adopt(index, c);
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
    adopt(gapped->first, gapped->second);
    return Status::Ok();
  }
  const std::string what =
      sources_.size() == 1 ? reasons : "no --source server can serve this pipe: " + reasons;
  if (gapped) return BinlogGap(what);
  return Error(all_network ? ErrorKind::kNetwork : ErrorKind::kConfig, what);
}

Result<mysql::BinlogCoordinate> Pipe::LocateGtidStart(const std::string& gtid_set) {
  CHSYNC_ASSIGN_OR_RETURN(std::unique_ptr<mysql::Connection> conn, mysql::Connection::Open(source_options_));
  mysql::BinlogStreamOptions options;
  options.server_id = server_id_;
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

Status Pipe::CheckSourceIdentity() {
  positions_read_on_ = checkpoint_.source;  // as loaded, before a move below
  // A state directory from before lineage.json: its checkpoint's file is the highest known.
  if (!checkpoint_.resume.file.empty()) {
    auto counted = lineage_->Count(checkpoint_.resume.file, checkpoint_.resume.sequence_base);
    if (!counted.ok()) return std::move(counted).error();
  }
  if (!checkpoint_.source) {
    // A checkpoint from before chsync recorded the server: from now on it does.
    checkpoint_.source = source_identity_;
    return Status::Ok();
  }
  const bool same_server = checkpoint_.source->SameServer(source_identity_);
  if (same_server && lineage_break_.empty()) {
    checkpoint_.source->address = source_identity_.address;
    return Status::Ok();
  }
  if (!same_server && !gtid_gap_.empty()) return BinlogGap(gtid_gap_);
  if (checkpoint_.resume.gtid_set.empty()) {
    if (same_server) {
      return BinlogGap("the binlog of " + DescribeSource() + " is no longer the one this pipe read (" +
                       lineage_break_ +
                       "), and the checkpoint records no GTID position to find its place in it");
    }
    return Error(ErrorKind::kConfig,
                 "the source " + DescribeSource() + " is not the server this pipe's positions are on (" +
                     Describe(*checkpoint_.source) +
                     "), and the checkpoint records no GTID position: point "
                     "--source back at that server, or run `chsync resync` to copy every table again from "
                     "this one");
  }
  // Move every position of the checkpoint onto this server's binlog: where the same transactions
  // begin there.
  const SourcePosition old = checkpoint_.resume;
  if (same_server) {
    // However the break was found (a GTID start that landed early, a position check), the binlog
    // must begin where the checkpoint's GTIDs end; else GTID numbers after them name other
    // transactions and a GTID start would skip those. MySQL's GTID sets are not checked so here.
    if (!server_.is_mariadb()) {
      return BinlogGap(
          "the binlog of " + DescribeSource() + " was written anew (" + lineage_break_ +
          "), and chsync cannot tell on MySQL whether it goes on from the checkpoint's GTID set " +
          old.gtid_set);
    }
    CHSYNC_ASSIGN_OR_RETURN(std::string gap, RewrittenBinlogGapOn(*control_, old.gtid_set));
    if (!gap.empty()) {
      return BinlogGap("the binlog this pipe read is gone from " + DescribeSource() +
                       ": it was written anew (" + lineage_break_ +
                       "), and it does not begin where the checkpoint's GTID position " + old.gtid_set +
                       " ends (" + gap + ")");
    }
  }
  auto located = LocateGtidStart(old.gtid_set);
  if (!located.ok()) {
    if (located.error().server_code() == 1236) {
      return BinlogGap("moving to " + DescribeSource() + " after GTID " + old.gtid_set + ": " +
                       located.error().message());
    }
    return std::move(located).error();
  }
  SourcePosition moved{located->file, located->position, old.gtid_set, 0, 0};
  // Row versions keep growing: a new epoch, whose first file counts one above every file any row
  // was ever numbered in (lineage.h), whatever the files' names say.
  CHSYNC_ASSIGN_OR_RETURN(moved.sequence_base, lineage_->EpochBase(located->file));
  for (TableSnapshot& t : checkpoint_.snapshot) {
    if (!t.stream_from) continue;
    if (mysql::CompareCoordinates({old.file, old.position}, {t.stream_from->file, t.stream_from->position}) >=
        0) {
      t.stream_from.reset();  // passed already: nothing of the table is skipped any longer
      continue;
    }
    if (t.stream_from->gtid_set.empty()) {
      return Error(ErrorKind::kConfig, "table " + TableKey(t.database, t.table) + " was copied again at " +
                                           Coordinate(t.stream_from->file, t.stream_from->position) +
                                           " without a GTID position there: run `chsync resync --table " +
                                           TableKey(t.database, t.table) + "` on the new source");
    }
    CHSYNC_ASSIGN_OR_RETURN(mysql::BinlogCoordinate from, LocateGtidStart(t.stream_from->gtid_set));
    t.stream_from = SourcePosition{from.file, from.position, t.stream_from->gtid_set, 0, moved.sequence_base};
  }
  if (same_server) {
    log::Warn(
        "the binlog of {} was written anew ({}): the transactions after GTID {} begin at {} there (the pipe "
        "had read {}); row versions go on in a new epoch, above every version written before",
        DescribeSource(), lineage_break_, old.gtid_set, located->ToString(),
        Coordinate(old.file, old.position));
  } else {
    log::Warn(
        "moving the pipe from {} to {}: the transactions after GTID {} begin at {} there (the pipe had read "
        "{} on the previous server); row versions go on in a new epoch, above every version written before",
        Describe(*checkpoint_.source), DescribeSource(), old.gtid_set, located->ToString(),
        Coordinate(old.file, old.position));
  }
  lineage_break_.clear();
  // Found by GTID: the first session reads by GTID too (another server's never matches).
  if (same_server) positions_read_on_.reset();
  checkpoint_.resume = moved;  // stream_start stays: where streaming began, on the first server
  checkpoint_.source = source_identity_;
  checkpoint_.saved_at_ms = NowMs();
  return state_->Save(checkpoint_);
}

Status Pipe::FailOver(std::optional<mysql::BinlogCoordinate>& target, bool accept_gap) {
  const std::string was = DescribeSource();
  StopRebuilds();
  flusher_.reset();
  CHSYNC_ASSIGN_OR_RETURN(std::optional<Checkpoint> saved, state_->Load());
  const size_t before = current_source_;
  CHSYNC_RETURN_IF_ERROR(SelectSource(sources_.FailoverOrder(current_source_), saved, accept_gap));
  if (current_source_ != before) {
    log::Warn("source {} stopped answering; reading from {} (--source server {}) from now on", was,
              DescribeSource(), current_source_ + 1);
  }
  status_.source = DescribeSource();
  CHSYNC_RETURN_IF_ERROR(ReloadFromCheckpoint());
  if (target) {
    CHSYNC_ASSIGN_OR_RETURN(mysql::BinlogCoordinate now, mysql::CurrentBinlogPosition(*control_));
    target = now;
  }
  return Status::Ok();
}

Status Pipe::FollowMovedSource() {
  const std::string was = DescribeSource();
  StopRebuilds();
  flusher_.reset();
  CHSYNC_ASSIGN_OR_RETURN(std::optional<Checkpoint> saved, state_->Load());
  CHSYNC_RETURN_IF_ERROR(SelectSource({current_source_}, saved, /*accept_gap=*/false));
  source_moved_ = false;
  log::Warn("{} now leads to {} (it led to {})", source_options_.Address(), DescribeSource(), was);
  status_.source = DescribeSource();
  if (retention_ != nullptr) retention_->SetSource(source_options_);
  return Status::Ok();
}

}  // namespace chsync::pipe
