// One session of the binlog stream (binlog_session.h).

#include "pipe/binlog_session.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <variant>

#include "binlog/hires_temporal.h"
#include "common/log.h"
#include "metrics/pipe_metrics.h"
#include "mysql/binlog_read_ahead.h"
#include "pipe/names.h"
#include "position/resume_position.h"
#include "position/row_version.h"

namespace chsync::pipe {

BinlogSession::BinlogSession(SessionParts parts, SessionHost& host)
    : request_(parts.request),
      stop_(parts.stop),
      source_(parts.source),
      set_(parts.set),
      tracker_(parts.tracker),
      applier_(parts.applier),
      versions_(parts.versions),
      host_(host) {}

Status BinlogSession::Run(const std::optional<mysql::BinlogCoordinate>& target, bool& done) {
  // Where the last complete transaction ended (moves as the applier applies events).
  const SourcePosition& committed = applier_.committed();
  source_failed_ = true;  // until the server answered
  // Every session checks which server it reached (SourceLink::OpenSession).
  CHSYNC_ASSIGN_OR_RETURN(std::unique_ptr<mysql::Connection> conn, source_.OpenSession());
  mysql::BinlogStreamOptions options;
  options.server_id = server_id_;
  options.start = {committed.file, committed.position};
  // A MariaDB finds a GTID by reading its binlog file from the start; the checkpoint's server finds
  // a position at once, once checked (resume_position.h).
  ResumeChoice choice;
  if (source_.ResumeByGtid(committed.gtid_set) && !position_refused_) {
    ResumeFacts facts;
    facts.mariadb = source_.server().is_mariadb();
    facts.written_on = positions_read_on_;
    facts.connected.address = source_.options().Address();
    facts.at = committed;
    choice = DecideResume(*conn, std::move(facts));
  }
  if (choice.rewritten) {
    source_failed_ = false;
    if (!choice.continues) {
      return host_.BinlogGap(
          "the binlog this pipe read is gone from " + source_.Describe() +
          ": it was written anew since the checkpoint (" + choice.reason +
          "), and it does not begin where the checkpoint's GTID position " + committed.gtid_set + " ends (" +
          choice.continue_reason +
          "), so the transactions after that position cannot be told from others numbered alike");
    }
    lineage_break_ = choice.reason;
    return Error(ErrorKind::kNetwork, "the binlog of " + source_.Describe() + " was written anew (" +
                                          choice.reason +
                                          "), beginning where the checkpoint's GTID position ends");
  }
  check_first_gtid_ = choice.by_position;
  const bool by_gtid = source_.ResumeByGtid(committed.gtid_set) && !choice.by_position;
  // Where a GTID start lands must not be before the checkpoint: on the same server that means its
  // binlog begins anew (RESET MASTER with the GTID state restored, a server cloned again).
  check_landing_ = by_gtid;
  if (by_gtid) options.gtid_set = committed.gtid_set;
  if (by_gtid != last_by_gtid_ || !said_start_) {
    if (by_gtid) {
      log::Info("reading {} from GTID {} (binlog {} there)", source_.Describe(), committed.gtid_set,
                Coordinate(committed.file, committed.position));
    } else if (choice.by_position) {
      log::Info("reading {} from {} (the checkpoint's server, GTID position {}; checked there: {})",
                source_.Describe(), Coordinate(committed.file, committed.position), committed.gtid_set,
                choice.reason);
    } else {
      log::Info("reading {} from {} by file:position ({})", source_.Describe(),
                Coordinate(committed.file, committed.position),
                committed.gtid_set.empty() ? "the checkpoint has no GTID position"
                                           : "the server has gtid_mode " + source_.server().gtid_mode);
    }
    said_start_ = true;
    last_by_gtid_ = by_gtid;
  }
  // By position the server re-sends the file's format description marked artificial (log_pos 0):
  // it never moves the committed position, so only a GTID start has one to skip.
  skip_first_format_ = by_gtid;
  // Running until caught up, a heartbeat is what says the end was reached when the last event was
  // already read: ask for it soon (the server sends it only when it has nothing else).
  options.heartbeat_ms =
      target ? 100
             : static_cast<uint32_t>(std::clamp<uint64_t>(request_.config.batch_max_age_ms / 2, 100, 1000));
  // A fiftieth of the batch age (10 ms by default, at most that): rows wait for the batch age
  // anyway, and fewer wake-ups at the live end cost less CPU.
  options.live_pause =
      std::chrono::milliseconds(std::min<uint64_t>(request_.config.batch_max_age_ms / 50, 10));
  CHSYNC_ASSIGN_OR_RETURN(std::unique_ptr<mysql::BinlogStream> opened,
                          mysql::BinlogStream::Open(std::move(conn), options));
  // Running until caught up, the binlog is read on a thread of its own, so that the socket reads
  // overlap the decoding below (a catch-up of one-row transactions 20% faster); streaming
  // without an end, on this thread (read ahead, the streaming benchmark's lag p50 was 30-90 ms
  // higher).
  auto stream = std::make_unique<mysql::BinlogReadAhead>(std::move(opened), /*ahead=*/target.has_value());
  binlog::DecoderOptions decoder_options;
  decoder_options.checksum_before_format =
      stream->checksum() == "CRC32" ? binlog::ChecksumAlgorithm::kCrc32 : binlog::ChecksumAlgorithm::kNone;
  // Rows of tables that are not replicated are skipped without decoding their values.
  decoder_options.decode_rows_of = [this](const binlog::TableMap& map) {
    auto it = set_.tables().Find(map);
    return it != set_.tables().end() && !it->second->held;
  };
  // MariaDB 5.3 hires TIME(n)/DATETIME(n)/TIMESTAMP(n) columns (created with
  // mysql56_temporal_format=OFF) arrive without their precision: it comes from the tracked schema.
  // A map that does not fit the schema is left alone; MapColumns reports it.
  decoder_options.complete_table_map = [this](binlog::TableMap& map) -> Status {
    bool old_temporal = false;
    for (const binlog::ColumnInfo& c : map.columns) {
      old_temporal = old_temporal || (binlog::IsOldTemporalType(c.type) && c.metadata == 0);
    }
    if (!old_temporal || !set_.tables().contains(TableKey(map.database, map.table))) return Status::Ok();
    const schema::TableSchema* tracked = tracker_.Find(map.database, map.table);
    if (tracked == nullptr || tracked->columns.size() != map.columns.size()) return Status::Ok();
    std::vector<uint8_t> fsp;
    fsp.reserve(tracked->columns.size());
    for (const schema::Column& c : tracked->columns) fsp.push_back(static_cast<uint8_t>(c.fsp.value_or(0)));
    return binlog::SetHiresPrecision(map, fsp);
  };
  decoder_ = std::make_unique<binlog::Decoder>(decoder_options);
  applier_.BeginSession();
  for (auto& [key, table] : set_.tables()) table->table_map.reset();

  // Requests that waited while no pipe ran (or since the last session) are carried out first.
  CHSYNC_RETURN_IF_ERROR(host_.PollControl());
  auto caught_up = [&](const mysql::BinlogCoordinate& at) {
    if (!target || at.file.empty()) return false;
    // Asked after every event: in the target's file, the positions alone decide.
    if (at.file == target->file) return at.position >= target->position;
    return mysql::CompareCoordinates(at, *target) >= 0;
  };
  // Caught up: rebuilds started before the target finish first (their tables are stale until then).
  auto finish = [&]() -> Status {
    CHSYNC_RETURN_IF_ERROR(host_.PollRebuilds(/*wait=*/true));
    CHSYNC_RETURN_IF_ERROR(applier_.FlushAndCheckpoint());
    done = true;
    const uint64_t seen = Metrics().EventsSeen();
    CHSYNC_RETURN_IF_ERROR(applier_.flusher()->Drain());
    Metrics().MarkCaughtUp(seen);  // the end of the binlog, everything before it acknowledged
    return Status::Ok();
  };
  while (true) {
    if (stop_) {
      CHSYNC_RETURN_IF_ERROR(applier_.FlushAndCheckpoint());
      return applier_.flusher()->Drain();
    }
    auto ev = stream->Next();
    if (!ev.ok()) {
      if (ev.error().server_code() == 1236) {
        source_failed_ = false;
        return host_.BinlogGap(ev.error().message() + ". The position this pipe must resume from (" +
                               Coordinate(committed.file, committed.position) +
                               (committed.gtid_set.empty() ? std::string() : ", GTID " + committed.gtid_set) +
                               ") is gone from " + source_.Describe());
      }
      return ev.error();
    }
    source_failed_ = false;
    if (decoder_->file() != ev->at.file) decoder_->SetFile(ev->at.file);
    auto decoded = decoder_->Decode(ev->bytes, ev->at.position);
    if (!decoded.ok()) {
      return std::move(decoded.error().AddContext("binlog event at " + ev->at.ToString()));
    }
    if (const auto* g = std::get_if<binlog::MariaGtidEvent>(&decoded->body);
        g != nullptr && check_first_gtid_) {
      check_first_gtid_ = false;
      std::string why = NotTheNextTransaction(applier_.gtids().mariadb_list(),
                                              {g->domain_id, decoded->header.server_id, g->seq_no});
      if (!why.empty()) {
        position_refused_ = true;
        // Retryable: the session ends, and the next one reads from the checkpoint by GTID.
        return Error(ErrorKind::kNetwork,
                     fmt::format("the first transaction read by position from {}: {}, so the position is not "
                                 "trusted; reading by GTID from now on",
                                 Coordinate(committed.file, committed.position), why));
      }
    }
    const auto* hb = std::get_if<binlog::HeartbeatEvent>(&decoded->body);
    if (check_landing_) CHSYNC_RETURN_IF_ERROR(CheckLanding(*decoded, *ev, hb));
    Metrics().NoteEventRead(ev->bytes.size(), hb != nullptr);
    if (hb != nullptr) {
      const bool in_transaction = applier_.in_transaction();
      if (!in_transaction && applier_.PendingRows() > 0)
        CHSYNC_RETURN_IF_ERROR(applier_.FlushAndCheckpoint());
      if (!in_transaction) {
        // The server had nothing more to send: once what was read is acknowledged, the lag is 0.
        CHSYNC_RETURN_IF_ERROR(applier_.flusher()->After([seen = Metrics().EventsSeen()] {
          Metrics().MarkCaughtUp(seen);
          return Status::Ok();
        }));
      }
      if (!in_transaction) CHSYNC_RETURN_IF_ERROR(host_.BetweenTransactions());
      if (!in_transaction && target && hb->log_file == stream->next_coordinate().file &&
          caught_up({std::string(hb->log_file), decoded->header.log_pos})) {
        return finish();
      }
      continue;
    }
    versions_->BeginEvent(*decoded, ev->at.file);
    Status handled = applier_.HandleEvent(*decoded, decoded->end_position());
    if (!handled.ok()) return handled;
    bool fake_rotate = ev->artificial && ev->type == static_cast<uint8_t>(binlog::EventType::kRotate);
    const bool format =
        !ev->artificial && std::holds_alternative<binlog::FormatDescriptionEvent>(decoded->body);
    if (format && skip_first_format_) {
      // Started by GTID: the server sends its file's format description, then the transactions
      // after the GTIDs, skipping those before. The file's start is not a place to resume from.
      skip_first_format_ = false;
    } else if (!applier_.in_transaction() && format) {
      applier_.NoteFileStart(ev->at.file, decoded->end_position());
    }
    if (!applier_.in_transaction() && !fake_rotate && caught_up(stream->next_coordinate())) return finish();
  }
}

Status BinlogSession::CheckLanding(const binlog::Event& event, const mysql::StreamEvent& ev,
                                   const binlog::HeartbeatEvent* hb) {
  // Where the last complete transaction ended (moves as the applier applies events).
  const SourcePosition& committed = applier_.committed();
  const bool gtid = std::holds_alternative<binlog::MariaGtidEvent>(event.body) ||
                    (std::holds_alternative<binlog::GtidEvent>(event.body) && !ev.artificial);
  if (!gtid && hb == nullptr) return Status::Ok();
  check_landing_ = false;
  std::string why;
  if (gtid) {
    // The first transaction the server sends is the first one after the checkpoint's GTIDs.
    if (mysql::CompareCoordinates(ev.at.coordinate(), {committed.file, committed.position}) < 0) {
      why = fmt::format("the first transaction after GTID {} is at {}, before the checkpoint's {}",
                        committed.gtid_set, ev.at.ToString(), Coordinate(committed.file, committed.position));
    }
  } else {
    // Nothing after the checkpoint's GTIDs yet: the server waits at the end of its binlog. Only the
    // file tells (the server may say where it is in a file it skips through).
    auto at = BinlogFileSequence(hb->log_file);
    auto ours = BinlogFileSequence(committed.file);
    if (at.ok() && ours.ok() && *at < *ours) {
      why = fmt::format("its binlog ends in {}, before the checkpoint's {}", hb->log_file,
                        Coordinate(committed.file, committed.position));
    }
  }
  if (why.empty()) return Status::Ok();
  lineage_break_ = why;
  return Error(ErrorKind::kNetwork, "the binlog of " + source_.Describe() + " was written anew: " + why);
}

}  // namespace chsync::pipe
