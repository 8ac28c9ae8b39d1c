// Several source servers (the choice among them is SourceLink's): moving a checkpoint from one server of a
// replication topology to another by GTID, and binlog gaps (docs/failover.md).

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "common/log.h"
#include "pipe/pipe.h"
#include "position/resume_position.h"

namespace chsync::pipe {

Status Pipe::SelectSource(const std::vector<size_t>& order, const std::optional<Checkpoint>& saved,
                          bool accept_gap) {
  return source_.Select(order, saved, versions_->lineage().sent_gtids(), accept_gap,
                        [this](const std::string& what) { return BinlogGap(what); });
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

Status Pipe::CheckSourceIdentity() {
  session_.set_positions_read_on(checkpoint_.source);  // as loaded, before a move below
  // A state directory from before lineage.json: its checkpoint's file is the highest known.
  if (!checkpoint_.resume.file.empty()) {
    auto counted = versions_->lineage().Count(checkpoint_.resume.file, checkpoint_.resume.sequence_base);
    if (!counted.ok()) return std::move(counted).error();
  }
  if (!checkpoint_.source) {
    // A checkpoint from before chsync recorded the server: from now on it does.
    checkpoint_.source = source_.identity();
    return Status::Ok();
  }
  const bool same_server = checkpoint_.source->SameServer(source_.identity());
  if (same_server && session_.lineage_break().empty()) {
    checkpoint_.source->address = source_.identity().address;
    return Status::Ok();
  }
  if (!same_server && !source_.gtid_gap().empty()) return BinlogGap(source_.gtid_gap());
  if (checkpoint_.resume.gtid_set.empty()) {
    if (same_server) {
      return BinlogGap("the binlog of " + source_.Describe() + " is no longer the one this pipe read (" +
                       session_.lineage_break() +
                       "), and the checkpoint records no GTID position to find its place in it");
    }
    return Error(ErrorKind::kConfig,
                 "the source " + source_.Describe() + " is not the server this pipe's positions are on (" +
                     SourceLink::Describe(*checkpoint_.source) +
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
    if (!source_.server().is_mariadb()) {
      return BinlogGap(
          "the binlog of " + source_.Describe() + " was written anew (" + session_.lineage_break() +
          "), and chsync cannot tell on MySQL whether it goes on from the checkpoint's GTID set " +
          old.gtid_set);
    }
    CHSYNC_ASSIGN_OR_RETURN(std::string gap, RewrittenBinlogGapOn(source_.control(), old.gtid_set));
    if (!gap.empty()) {
      return BinlogGap("the binlog this pipe read is gone from " + source_.Describe() +
                       ": it was written anew (" + session_.lineage_break() +
                       "), and it does not begin where the checkpoint's GTID position " + old.gtid_set +
                       " ends (" + gap + ")");
    }
  }
  auto located = source_.LocateGtidStart(old.gtid_set, session_.server_id());
  if (!located.ok()) {
    if (located.error().server_code() == 1236) {
      return BinlogGap("moving to " + source_.Describe() + " after GTID " + old.gtid_set + ": " +
                       located.error().message());
    }
    return std::move(located).error();
  }
  SourcePosition moved{located->file, located->position, old.gtid_set, 0, 0};
  // Row versions keep growing: a new epoch, whose first file counts one above every file any row
  // was ever numbered in (lineage.h), whatever the files' names say.
  CHSYNC_ASSIGN_OR_RETURN(moved.sequence_base, versions_->lineage().EpochBase(located->file));
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
    CHSYNC_ASSIGN_OR_RETURN(mysql::BinlogCoordinate from,
                            source_.LocateGtidStart(t.stream_from->gtid_set, session_.server_id()));
    t.stream_from = SourcePosition{from.file, from.position, t.stream_from->gtid_set, 0, moved.sequence_base};
  }
  if (same_server) {
    log::Warn(
        "the binlog of {} was written anew ({}): the transactions after GTID {} begin at {} there (the pipe "
        "had read {}); row versions go on in a new epoch, above every version written before",
        source_.Describe(), session_.lineage_break(), old.gtid_set, located->ToString(),
        Coordinate(old.file, old.position));
  } else {
    log::Warn(
        "moving the pipe from {} to {}: the transactions after GTID {} begin at {} there (the pipe had read "
        "{} on the previous server); row versions go on in a new epoch, above every version written before",
        SourceLink::Describe(*checkpoint_.source), source_.Describe(), old.gtid_set, located->ToString(),
        Coordinate(old.file, old.position));
  }
  session_.ClearLineageBreak();
  // Found by GTID: the first session reads by GTID too (another server's never matches).
  if (same_server) session_.set_positions_read_on(std::nullopt);
  checkpoint_.resume = moved;  // stream_start stays: where streaming began, on the first server
  checkpoint_.source = source_.identity();
  checkpoint_.saved_at_ms = NowMs();
  return checkpointer_.Save(checkpoint_);
}

Status Pipe::FailOver(std::optional<mysql::BinlogCoordinate>& target, bool accept_gap) {
  const std::string was = source_.Describe();
  Rebuilds::StopAll(set_.tables());
  applier_.StopFlusher();
  CHSYNC_ASSIGN_OR_RETURN(std::optional<Checkpoint> saved, checkpointer_.Load());
  const size_t before = source_.current();
  CHSYNC_RETURN_IF_ERROR(SelectSource(source_.FailoverOrder(), saved, accept_gap));
  if (source_.current() != before) {
    log::Warn("source {} stopped answering; reading from {} (--source server {}) from now on", was,
              source_.Describe(), source_.current() + 1);
  }
  status_.source = source_.Describe();
  CHSYNC_RETURN_IF_ERROR(ReloadFromCheckpoint());
  if (target) {
    CHSYNC_ASSIGN_OR_RETURN(mysql::BinlogCoordinate now, mysql::CurrentBinlogPosition(source_.control()));
    target = now;
  }
  return Status::Ok();
}

Status Pipe::FollowMovedSource() {
  const std::string was = source_.Describe();
  Rebuilds::StopAll(set_.tables());
  applier_.StopFlusher();
  CHSYNC_ASSIGN_OR_RETURN(std::optional<Checkpoint> saved, checkpointer_.Load());
  CHSYNC_RETURN_IF_ERROR(SelectSource({source_.current()}, saved, /*accept_gap=*/false));
  source_.ForgetMove();
  log::Warn("{} now leads to {} (it led to {})", source_.options().Address(), source_.Describe(), was);
  status_.source = source_.Describe();
  if (retention_ != nullptr) retention_->SetSource(source_.options());
  return Status::Ok();
}

}  // namespace chsync::pipe
