// The pipe's binlog side: sessions of the binlog stream (binlog_session.h) one after the other, each
// applying events where the last left off (applier.h); after a failure the pipe reads again from
// its saved checkpoint, on another server of --source when the one read stays down.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "clickhouse/server_error.h"
#include "common/log.h"
#include "pipe/pipe.h"

namespace chsync::pipe {

Status Pipe::Stream() {
  SetPhase("streaming");
  if (retention_ == nullptr) {
    retention_ = std::make_unique<RetentionSampler>(source_.options());
  } else {
    retention_->SetSource(source_.options());
  }
  std::optional<mysql::BinlogCoordinate> target;
  if (request_.until_caught_up || checkpoint_.load_only) {
    CHSYNC_ASSIGN_OR_RETURN(mysql::BinlogCoordinate now, mysql::CurrentBinlogPosition(source_.control()));
    target = now;
    log::Info("streaming from {} until {}", Coordinate(checkpoint_.resume.file, checkpoint_.resume.position),
              now.ToString());
  } else {
    log::Info("streaming from {}", Coordinate(checkpoint_.resume.file, checkpoint_.resume.position));
  }
  CHSYNC_RETURN_IF_ERROR(StartStreamState());
  NoteCascades();

  int failures = 0;
  auto last_progress = std::chrono::steady_clock::now();
  const auto max_backoff = std::chrono::milliseconds(request_.config.retry_max_backoff_ms);
  const auto failover_after = std::chrono::milliseconds(request_.config.failover_after_ms);
  // Since when the source server has not answered (unset: it answers).
  std::chrono::steady_clock::time_point source_down_since{};
  bool source_down = false;
  while (true) {
    const uint64_t saved_before = checkpointer_.saved();
    bool done = false;
    Status s = session_.Run(target, done);
    if (s.ok()) s = applier_.flusher()->Drain();
    if (s.ok()) return done ? Status::Ok() : Stopped();
    if (stop_) return StoppedUnacknowledged(s.error());
    const bool retryable = s.error().kind() == ErrorKind::kNetwork || clickhouse::IsRetryable(s.error());
    if (!retryable) return s;
    if (checkpointer_.saved() != saved_before) {
      failures = 0;
      last_progress = std::chrono::steady_clock::now();
    }
    if (!session_.source_failed()) {
      source_down = false;
    } else if (!source_down) {
      source_down = true;
      source_down_since = std::chrono::steady_clock::now();
    } else if (source_.size() > 1 && std::chrono::steady_clock::now() - source_down_since >= failover_after) {
      // The server has not come back: another of the topology takes over, if one can. A replica
      // that is behind may catch up in a moment: one without the pipe's transactions is taken
      // (and every table copied again) only with on_binlog_gap=resync, after twice the wait.
      const bool resync = request_.config.on_binlog_gap == PipeConfig::BinlogGap::kResync;
      const bool accept_gap =
          resync && std::chrono::steady_clock::now() - source_down_since >= 2 * failover_after;
      Status moved = FailOver(target, accept_gap);
      if (moved.ok()) {
        retention_->SetSource(source_.options());
        source_down = false;
        failures = 0;
        last_progress = std::chrono::steady_clock::now();
        continue;
      }
      if (binlog_gap_ && accept_gap) return moved;
      binlog_gap_ = false;
      log::Warn("no other source server can take over yet: {}", moved.error().message());
    }
    const auto stalled = std::chrono::steady_clock::now() - last_progress;
    if (request_.config.retry_give_up_after_ms != 0 &&
        stalled >= std::chrono::milliseconds(request_.config.retry_give_up_after_ms)) {
      return std::move(s.error().AddContext(
          fmt::format("no checkpoint for {} s (retry.give_up_after_ms)",
                      std::chrono::duration_cast<std::chrono::seconds>(stalled).count())));
    }
    ++failures;
    auto wait = std::min<std::chrono::milliseconds>(
        max_backoff, std::chrono::milliseconds(int64_t{250} << std::min(failures, 12)));
    log::Warn("{}; reading again from the last checkpoint ({}) in {} ms", s.error().message(),
              Coordinate(checkpoint_.resume.file, checkpoint_.resume.position), wait.count());
    auto until = std::chrono::steady_clock::now() + wait;
    while (!stop_ && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (stop_) return StoppedUnacknowledged(s.error());
    if (source_.moved()) {
      // The URL leads to another server now: it is probed as a failover candidate would be (it must
      // hold every transaction the pipe applied), and the reload below moves the checkpoint there.
      Status followed = FollowMovedSource();
      if (!followed.ok() && followed.error().kind() != ErrorKind::kNetwork) return followed;
    }
    // The failure may have come halfway through a statement (the tracker already changed, the
    // ClickHouse ALTER not yet run) or with rows not acknowledged: nothing in memory is trusted.
    // The reload reads the tables' keys from ClickHouse, which may still be down: waited for too.
    Status reloaded = ReloadFromCheckpoint();
    while (!reloaded.ok() && !stop_ && clickhouse::IsRetryable(reloaded.error())) {
      const auto since = std::chrono::steady_clock::now() - last_progress;
      if (request_.config.retry_give_up_after_ms != 0 &&
          since >= std::chrono::milliseconds(request_.config.retry_give_up_after_ms)) {
        break;
      }
      log::Warn("{}; loading the last checkpoint again in {} ms", reloaded.error().message(), wait.count());
      const auto again = std::chrono::steady_clock::now() + wait;
      while (!stop_ && std::chrono::steady_clock::now() < again) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      if (!stop_) reloaded = ReloadFromCheckpoint();
    }
    if (stop_) return StoppedUnacknowledged(reloaded.ok() ? s.error() : reloaded.error());
    CHSYNC_RETURN_IF_ERROR(reloaded);
  }
}

Status Pipe::StartStreamState() {
  return applier_.Start(checkpoint_.resume);
}

Status Pipe::ReloadFromCheckpoint() {
  Rebuilds::StopAll(set_.tables());
  applier_.StopFlusher();         // what it still held was never acknowledged: it is read again
  checkpointer_.ForgetCarried();  // those saved are in the checkpoint loaded below; the others run again
  set_.tables().clear();
  set_.dropped().clear();
  CHSYNC_RETURN_IF_ERROR(LoadState());
  CHSYNC_RETURN_IF_ERROR(BuildTables());
  applier_.MarkSchemasSaved();
  return StartStreamState();
}

Status Pipe::StoppedUnacknowledged(const Error& error) {
  Rebuilds::StopAll(set_.tables());
  status_.updated_at_ms = NowMs();
  SetPhase("stopped");
  (void)WriteRunStatus(checkpointer_.path(), status_);
  log::Warn(
      "stopped before ClickHouse acknowledged everything read ({}); the next run reads again from the "
      "last saved checkpoint",
      error.message());
  return Status::Ok();
}

}  // namespace chsync::pipe
