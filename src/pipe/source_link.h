#pragma once

// The pipe's link to its source: the servers of --source, the one it reads now, and that server's
// identity (docs/failover.md). It owns the guarantee that the pipe knows which server it reads:
// a server is taken only when it can serve the pipe (binary logging as chsync needs it, every
// transaction the pipe applied and sent), and every connection that opens a binlog session is
// checked against the server taken — on every reconnect, not only on a failover — so that a
// proxy, a VIP or a DNS name that now leads elsewhere is found before a byte of its binlog is read.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "mysql/binlog_stream.h"
#include "mysql/connection.h"
#include "mysql/server_probe.h"
#include "mysql/source_set.h"
#include "schema/table_schema.h"
#include "schema/tracker.h"
#include "state/checkpoint.h"

namespace chsync::pipe {

class SourceLink {
 public:
  /// Makes the error of a binlog gap from what is missing (the pipe's on_binlog_gap decides what
  /// it says and does).
  using GapError = std::function<Error(const std::string& what)>;

  /// Parses --source: one URL or several, each checked.
  Status Configure(const std::string& source);

  /// Connects to the first server of `order` (indexes of --source's servers) that can serve the
  /// pipe: binary logging as chsync needs it and, when `saved` is another server's checkpoint,
  /// every transaction the pipe applied and every one whose rows it sent (`sent_gtids`, by GTID).
  /// It becomes the server read. When none can, the error names each server and why; a server that
  /// lacks the pipe's GTIDs is taken only with `accept_gap`, else that is `gap` (a binlog gap).
  Status Select(const std::vector<size_t>& order, const std::optional<Checkpoint>& saved,
                const std::string& sent_gtids, bool accept_gap, const GapError& gap);
  /// A connection to the server read, for a binlog session. kNetwork, with moved() set, when it
  /// reached another server than the one taken.
  Result<std::unique_ptr<mysql::Connection>> OpenSession();
  /// @@server_id (and @@server_uuid on MySQL) of the server `conn` reached.
  Result<SourceIdentity> ReadIdentity(mysql::Connection& conn) const;
  /// Where, on the server read, the first transaction after `gtid_set` begins (or the end of its
  /// binlog when it has none yet), read by a dump as replica `server_id`. kServer 1236 when the
  /// server no longer has it.
  Result<mysql::BinlogCoordinate> LocateGtidStart(const std::string& gtid_set, uint32_t server_id);
  /// MariaDB's @@GLOBAL.gtid_binlog_pos on the server read; nullopt when it cannot be read.
  std::optional<std::string> MariaBinlogGtid();

  /// Whether a stream at `gtid_set` starts by GTID rather than by file:position on this server.
  bool ResumeByGtid(const std::string& gtid_set) const;
  /// "server_id 11 at 127.0.0.1:3306" of the server read, or of `id`.
  std::string Describe() const { return Describe(identity_); }
  static std::string Describe(const SourceIdentity& id);

  // The server read's catalog, through control().
  /// The source's schemas of the tables of `databases` that `keep` keeps, as the source has them now.
  Result<std::vector<schema::TableSchema>> LoadSchemas(
      const std::vector<std::string>& databases, const std::function<bool(const schema::TableSchema&)>& keep);
  /// The end of the binlog now, and in `schemas` the schemas of the tables `keep` keeps there: read
  /// again until no DDL ran while the position was read (kServer after 10 tries).
  Result<SourcePosition> StablePoint(const std::vector<std::string>& databases,
                                     const std::function<bool(const schema::TableSchema&)>& keep,
                                     std::vector<schema::TableSchema>& schemas);
  /// The databases of the server, system schemas left out.
  Result<std::vector<std::string>> Databases();
  /// Each database's default character set and collation, into `tracker`.
  Status LoadDatabaseDefaults(schema::Tracker& tracker);

  /// The servers of --source, and which one is read.
  size_t size() const { return sources_.size(); }
  size_t current() const { return current_; }
  /// Every server, in the order given.
  std::vector<size_t> Order() const;
  /// The order in which the others are tried when the server read stops answering.
  std::vector<size_t> FailoverOrder() const { return sources_.FailoverOrder(current_); }

  const mysql::ConnectOptions& options() const { return options_; }
  /// The connection for the pipe's queries (schemas, positions, estimates) to the server read.
  mysql::Connection& control() { return *control_; }
  const mysql::ServerInfo& server() const { return server_; }
  /// The server read was chosen though it lacks the pipe's GTIDs (on_binlog_gap=resync): why.
  const std::string& gtid_gap() const { return gtid_gap_; }
  void ClearGtidGap() { gtid_gap_.clear(); }
  const SourceIdentity& identity() const { return identity_; }
  /// Whether the server sends the tables' column names (binlog_row_metadata=FULL).
  bool full_metadata() const;
  /// A session reached another server than the one taken (OpenSession): probe again (Select)
  /// before the next.
  bool moved() const { return moved_; }
  void ForgetMove() { moved_ = false; }

 private:
  struct Candidate {
    mysql::ConnectOptions options;
    std::unique_ptr<mysql::Connection> control;
    mysql::ServerInfo server;
    SourceIdentity identity;
    /// The server lacks transactions the pipe applied (why), or "".
    std::string gtid_gap;
  };
  Status TryCandidate(size_t index, const std::optional<Checkpoint>& saved, const std::string& sent_gtids,
                      Candidate& candidate);
  /// Sets candidate.gtid_gap when its server lacks any of `applied` (GTIDs read on `was`); `what`
  /// says which transactions they are ("chsync already applied").
  static Status CheckCandidateGtids(Candidate& candidate, const std::string& applied, const std::string& was,
                                    const std::string& what);
  void Take(size_t index, Candidate& candidate);

  mysql::SourceSet sources_;
  size_t current_ = 0;
  mysql::ConnectOptions options_;
  std::unique_ptr<mysql::Connection> control_;
  mysql::ServerInfo server_;
  SourceIdentity identity_;
  std::string gtid_gap_;
  bool moved_ = false;
};

}  // namespace chsync::pipe
