#pragma once

// The MariaDB 10.11 primary and replica of scripts/test-servers (mysql-primary, server_id 11, and
// mysql-replica, server_id 12, replicating with MASTER_USE_GTID=slave_pos, log_slave_updates and
// gtid_strict_mode, GTID domain 0), for failover tests.

#include <memory>
#include <string>

#include "mysql/connection.h"

namespace chsync::testing {

/// Kills, starts, promotes and resets the pair. The servers come from the environment that
/// scripts/test sets: CHSYNC_TEST_MYSQL_PRIMARY and CHSYNC_TEST_MYSQL_REPLICA (URLs),
/// …_START and …_PIDFILE of each, and CHSYNC_TEST_MYSQL_PAIR_RESET; a missing variable fails
/// the test (RequireEnv).
///
/// REQUIRES: the test holds ctest's RESOURCE_LOCK mysql_pair (replication_pair.cmake): the pair
/// is shared, and every operation here changes it for every test that uses it.
///
/// Each method opens its own connections (the servers may have been killed in between) and
/// records a gtest failure (ADD_FAILURE) when it fails; those returning bool return false then.
class ReplicationPair {
 public:
  ReplicationPair();

  /// Back to a clean primary → replica state whatever a test did (servers killed, replica
  /// promoted, binlogs purged): starts what does not run, empties both binlogs and the replica's
  /// GTID position, and starts replication again; returns once both replica threads run.
  /// Databases stay (tests use unique database names). Call it first in every test.
  void Reset();

  /// SIGKILL through the pid file; returns once the process is gone (true also when it was not
  /// running).
  bool KillPrimary();
  /// Starts it again with the same data directory; returns once it accepts connections (true
  /// also when it was running). A replica that still replicates reconnects within a second.
  bool StartPrimary();
  bool KillReplica();
  /// A replica restarted before Promote() resumes replicating by itself.
  bool StartReplica();

  /// Makes the replica a primary: waits (up to 30 s) until it has applied every transaction its
  /// IO thread received (Gtid_IO_Pos), then STOP SLAVE and RESET SLAVE ALL. Its own transactions
  /// from then on carry server_id 12 in domain 0, continuing the sequence.
  bool Promote();

  /// Waits until the replica's @@gtid_slave_pos contains the primary's @@gtid_binlog_pos (every
  /// domain at least at the primary's sequence number); after `seconds` fails the test naming both.
  bool WaitReplicaCaughtUp(int seconds = 30);

  /// Connections as the chsync user (nullptr and a failure recorded when the server is down).
  std::unique_ptr<mysql::Connection> ConnectPrimary() const;
  std::unique_ptr<mysql::Connection> ConnectReplica() const;

  const std::string& primary_url() const { return primary_url_; }
  const std::string& replica_url() const { return replica_url_; }

 private:
  std::string primary_url_;
  std::string replica_url_;
};

/// "domain-server-seq,…" (a GTID position: @@gtid_binlog_pos, @@gtid_slave_pos) contains `other`
/// when, for every domain of `other`, it has the same domain with at least its sequence number
/// (the comparison MASTER_GTID_WAIT makes). False when either is malformed.
bool GtidPosContains(const std::string& pos, const std::string& other);

}  // namespace chsync::testing
