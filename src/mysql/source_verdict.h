#pragma once

#include <string>
#include <vector>

#include "mysql/managed_provider.h"
#include "mysql/server_probe.h"

namespace chsync::mysql {

/// One problem `chsync check` reports about a source's settings: blocking ones fail the verdict.
struct SourceFinding {
  bool blocking = false;
  std::string text;  ///< what is wrong, and how to change it where this server runs
};

/// What `chsync check` concludes from what a source server says about itself.
struct SourceVerdict {
  ProviderGuess provider;
  /// The "binlog retention" line: how long the server keeps its binlogs, and from which setting.
  std::string retention;
  /// The findings on binary logging, privileges and GTIDs, in the order check reports them.
  std::vector<SourceFinding> findings;
};

/// The decisions of `chsync check` on a source's settings, a pure function of what the server
/// said (`info`, filled by Probe or replayed by ReadVariables): server_id, binary log, binlog_format,
/// binlog_row_image and binlog_row_metadata, binlog retention, the replication privileges of `user`,
/// gtid_mode (gtid_strict_mode on MariaDB), and a replica's log_replica_updates. Each finding says
/// how to fix it where the server runs: SET GLOBAL and my.cnf on a self-managed server; on Amazon
/// RDS and Aurora, Google Cloud SQL and Azure Database for MySQL (DetectProvider of
/// info.variables) the provider's parameter groups, flags or server parameters, never SET GLOBAL,
/// which their users may not run. `address` ("host:port") names the server in the texts.
SourceVerdict JudgeSource(const ServerInfo& info, const std::string& address, const std::string& user);

}  // namespace chsync::mysql
