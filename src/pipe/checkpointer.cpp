#include "pipe/checkpointer.h"

#include <algorithm>

#include "common/crash_point.h"
#include "common/log.h"
#include "metrics/pipe_metrics.h"
#include "pipe/clock.h"
#include "state/xa_store.h"

namespace chsync::pipe {

Status Checkpointer::Open(const std::string& dir) {
  CHSYNC_ASSIGN_OR_RETURN(state_, StateDir::Open(dir));
  return Status::Ok();
}

Status Checkpointer::Record(const Checkpoint& checkpoint, RunStatus status, bool mariadb,
                            RetentionSampler* retention) {
  CHSYNC_RETURN_IF_ERROR(state_->Save(checkpoint));
  Report(checkpoint, std::move(status), mariadb, retention);
  return Status::Ok();
}

void Checkpointer::Report(const Checkpoint& checkpoint, RunStatus status, bool mariadb,
                          RetentionSampler* retention) const {
  Metrics().NoteCheckpoint(checkpoint.resume.file, checkpoint.resume.position, checkpoint.resume.gtid_set,
                           mariadb, checkpoint.saved_at_ms, status.last_event_time);
  if (retention != nullptr) retention->SetCheckpoint(checkpoint.resume.file, checkpoint.resume.position);
  status.updated_at_ms = checkpoint.saved_at_ms;
  PublishRunStatus(status);
  Status written = WriteRunStatus(state_->path(), status);
  if (!written.ok()) log::Warn("cannot write the status file: {}", written.error().message());
}

Result<std::vector<ControlRequest>> Checkpointer::Waiting(const std::vector<std::string>& done) {
  CHSYNC_ASSIGN_OR_RETURN(std::vector<ControlRequest> requests, PendingRequests(state_->path()));
  std::vector<ControlRequest> out;
  for (ControlRequest& request : requests) {
    if (std::find(done.begin(), done.end(), request.id) == done.end()) {
      out.push_back(std::move(request));
      continue;
    }
    // Carried out by this process: the save of the checkpoint that holds it completes it (issue
    // 33, case 7: completed from memory while that save waited, a kill -9 lost it). Else it came
    // with the loaded checkpoint: carried out before a restart that came between its checkpoint
    // and its completion.
    if (!carried_out_here_.contains(request.id)) {
      CHSYNC_RETURN_IF_ERROR(
          CompleteRequest(state_->path(), request.id, "done: carried out before chsync restarted"));
    }
  }
  return out;
}

void Checkpointer::Carried(std::string id, std::string outcome, std::vector<std::string>& done) {
  done.push_back(id);
  if (done.size() > kMaxRequestsDone) done.erase(done.begin());
  carried_out_here_.insert(id);
  request_outcomes_.emplace_back(std::move(id), std::move(outcome));
}

std::function<Status()> Checkpointer::Deferred(Checkpoint checkpoint, RunStatus status, bool mariadb,
                                               RetentionSampler* retention) {
  auto save = [this, checkpoint = std::move(checkpoint), status = std::move(status),
               obsolete = std::move(obsolete_xa_files_), outcomes = std::move(request_outcomes_), mariadb,
               retention]() mutable -> Status {
    CrashPoint("checkpoint");  // the rows before it are in ClickHouse, the checkpoint is not saved
    checkpoint.saved_at_ms = NowMs();
    // Tables the flusher parked, whether or not the stream took them over after it built this
    // checkpoint: their batches before it were refused, so the checkpoint must not come without them.
    MergeHeld(checkpoint.held, board_.Owed());
    if (!outcomes.empty()) DelayPoint("checkpoint.save.request");
    if (!outcomes.empty() && FailPoint("checkpoint.save.request")) {
      return Error(ErrorKind::kIo, "the checkpoint could not be saved (CHSYNC_FAIL_AT)");
    }
    CHSYNC_RETURN_IF_ERROR(state_->Save(checkpoint));
    ++saved_;
    for (const std::string& file : obsolete) RemoveXaRows(state_->path(), file);
    for (const auto& [id, outcome] : outcomes) {
      Status completed = CompleteRequest(state_->path(), id, outcome);
      if (!completed.ok()) log::Warn("request {}: {}", id, completed.error().message());
    }
    Report(checkpoint, std::move(status), mariadb, retention);
    return Status::Ok();
  };
  obsolete_xa_files_.clear();
  request_outcomes_.clear();
  return save;
}

}  // namespace chsync::pipe
