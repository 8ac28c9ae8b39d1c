#pragma once

// One session of the binlog stream at a time: a dump opened on the server the pipe reads (checked
// to be that server, SourceLink::OpenSession) from where the applier's last complete transaction
// ended, by GTID or by file:position (resume_position.h), its events decoded and handed to the
// applier in order, until stopped, caught up (`chsync run --until-caught-up`) or failed.
//
// The owner of "a session starts where the checkpoint is, on the binlog the checkpoint's positions
// are in": a GTID start that lands before the checkpoint, a position start whose first GTID the
// checkpoint holds, or a binlog written anew since the checkpoint end the session (kNetwork) with
// what was seen (lineage_break(), the position refused), so that the next one starts right; what
// the server no longer has is a binlog gap (SessionHost::BinlogGap).

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "binlog/decoder.h"
#include "binlog/event.h"
#include "common/result.h"
#include "mysql/binlog_stream.h"
#include "pipe/applier.h"
#include "pipe/pipeline.h"
#include "pipe/source_link.h"
#include "pipe/table_set.h"
#include "position/versions.h"
#include "schema/tracker.h"
#include "state/checkpoint.h"

namespace chsync::pipe {

/// What a binlog session asks of the pipe that runs it.
class SessionHost {
 public:
  virtual ~SessionHost() = default;
  /// Carries out the requests waiting in the state directory (between transactions).
  virtual Status PollControl() = 0;
  /// Between transactions: PollControl, and the copies that finished swapped in.
  virtual Status BetweenTransactions() = 0;
  /// Swaps finished copies in; with `wait`, waits for every running one first.
  virtual Status PollRebuilds(bool wait) = 0;
  /// The error for a position the source no longer has (the pipe's on_binlog_gap decides).
  virtual Error BinlogGap(const std::string& what) = 0;
};

/// The pipe's collaborators a session works with (each outlives it).
struct SessionParts {
  const RunRequest& request;
  const std::atomic<bool>& stop;
  SourceLink& source;
  TableSet& set;
  const schema::Tracker& tracker;
  Applier& applier;
  std::optional<Versions>& versions;
};

class BinlogSession {
 public:
  BinlogSession(SessionParts parts, SessionHost& host);

  /// The replica server id dumps are opened with (--server-id, or one made from the state path).
  void set_server_id(uint32_t id) { server_id_ = id; }
  uint32_t server_id() const { return server_id_; }

  /// One session; returns Ok when stopped or, with `target`, caught up (`done` set).
  Status Run(const std::optional<mysql::BinlogCoordinate>& target, bool& done);

  /// The last session failed because the source did not answer (not ClickHouse).
  bool source_failed() const { return source_failed_; }
  /// Why a session found the server's binlog no longer the one the checkpoint's positions are in
  /// ("" when none did): the pipe then moves the checkpoint by GTID into a new epoch and clears it.
  const std::string& lineage_break() const { return lineage_break_; }
  void ClearLineageBreak() { lineage_break_.clear(); }
  /// The server the loaded checkpoint's positions were read on: a session may open its dump there
  /// by position (resume_position.h).
  void set_positions_read_on(std::optional<SourceIdentity> server) { positions_read_on_ = std::move(server); }

 private:
  /// A GTID-started session's first transaction (or heartbeat): kNetwork with lineage_break_ set
  /// when it lies before the checkpoint's position (the server's binlog begins anew).
  Status CheckLanding(const binlog::Event& event, const mysql::StreamEvent& ev,
                      const binlog::HeartbeatEvent* hb);

  // The collaborators (SessionParts), named as the pipe names them.
  const RunRequest& request_;
  const std::atomic<bool>& stop_;
  SourceLink& source_;
  TableSet& set_;
  const schema::Tracker& tracker_;
  Applier& applier_;
  std::optional<Versions>& versions_;
  SessionHost& host_;

  std::unique_ptr<binlog::Decoder> decoder_;
  uint32_t server_id_ = 0;
  bool source_failed_ = false;
  std::string lineage_break_;
  std::optional<SourceIdentity> positions_read_on_;
  /// A GTID-started session has not yet seen its first format description (which belongs to the
  /// start of the file, before the GTID position).
  bool skip_first_format_ = false;
  /// What the log said of how the stream starts (said once, and again when it changes).
  bool said_start_ = false;
  bool last_by_gtid_ = false;
  /// This session opened its dump by position: its first GTID must be one the checkpoint lacks.
  bool check_first_gtid_ = false;
  /// A session opened by GTID has not yet seen where it landed (CheckLanding).
  bool check_landing_ = false;
  /// A session opened by position read a GTID the checkpoint held: by GTID for the rest of the run.
  bool position_refused_ = false;
};

}  // namespace chsync::pipe
