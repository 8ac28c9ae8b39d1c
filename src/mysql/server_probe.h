#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "mysql/connection.h"

namespace chsync::mysql {

enum class Flavor { kMySQL, kMariaDB, kPercona, kAurora };
std::string_view FlavorName(Flavor flavor);

/// A server version as three numbers, parsed from VERSION() ("10.11.19-MariaDB-0+deb12u1-log").
struct ServerVersion {
  int major = 0, minor = 0, patch = 0;
  static ServerVersion Parse(std::string_view text);
  bool AtLeast(int ma, int mi = 0, int pa = 0) const;
  std::string ToString() const;
};

/// One replication channel of a server that is itself a replica: a row of SHOW REPLICA STATUS
/// (MySQL ≥ 8.0.22), SHOW SLAVE STATUS (older MySQL) or SHOW ALL SLAVES STATUS (MariaDB). Columns
/// are read by name in either spelling (Source_Host or Master_Host, Replica_IO_Running or
/// Slave_IO_Running, …); a column the server does not have leaves its field empty or unset.
struct ReplicaChannel {
  std::string name;          ///< MariaDB Connection_name, MySQL Channel_Name; "" for the default one
  std::string primary_host;  ///< Source_Host / Master_Host
  uint16_t primary_port = 0;
  std::string io_running;   ///< Yes, No or Connecting
  std::string sql_running;  ///< Yes or No
  /// Seconds_Behind_Source / Seconds_Behind_Master; unset when NULL (a thread is not running).
  std::optional<uint64_t> seconds_behind;
  /// MariaDB Using_Gtid: Slave_Pos, Current_Pos or No; unset on MySQL.
  std::optional<std::string> using_gtid;
  /// MySQL Auto_Position (1: positioned by GTID); unset on MariaDB.
  std::optional<bool> auto_position;
  std::string last_io_error;   ///< Last_IO_Error, "" when none
  std::string last_sql_error;  ///< Last_SQL_Error, "" when none

  /// "host:port" of the primary, IPv6 hosts in brackets.
  std::string PrimaryAddress() const;
  /// Both the IO and the SQL thread run (Yes): the replica keeps up with its primary.
  bool ThreadsRunning() const;
  /// The channel positions by GTID: Using_Gtid Slave_Pos or Current_Pos, or Auto_Position=1.
  bool UsesGtid() const;
};

/// The channels in the result of a replica status statement, one per row; empty when the server
/// is no replica (the statement returns no row). Rows without a primary host are skipped.
std::vector<ReplicaChannel> ParseReplicaStatus(const QueryResult& result);

/// What the preflight and the pipe need to know about a source server. Filled by Probe().
struct ServerInfo {
  Flavor flavor = Flavor::kMySQL;
  std::string version_string;   ///< VERSION()
  std::string version_comment;  ///< @@version_comment
  ServerVersion version;
  bool is_mariadb() const { return flavor == Flavor::kMariaDB; }

  uint32_t server_id = 0;
  bool log_bin = false;
  std::string binlog_format;     ///< ROW, MIXED, STATEMENT
  std::string binlog_row_image;  ///< FULL, MINIMAL, NOBLOB
  /// binlog_row_metadata: MINIMAL or FULL; unset on servers that do not have the variable.
  std::optional<std::string> binlog_row_metadata;
  /// Whether this flavor and version has binlog_row_metadata (MySQL ≥ 8.0.1, MariaDB ≥ 10.5).
  bool row_metadata_supported = false;
  /// binlog_row_value_options (MySQL ≥ 8.0.3); unset elsewhere.
  std::optional<std::string> binlog_row_value_options;
  std::string binlog_checksum;  ///< NONE or CRC32

  /// MySQL: gtid_mode (OFF, ON, …). MariaDB: always "ON" (MariaDB GTIDs need no switch).
  std::string gtid_mode;
  /// MySQL: gtid_executed. MariaDB: gtid_binlog_pos.
  std::string gtid_position;
  /// MySQL: enforce_gtid_consistency (OFF, ON, WARN); unset on MariaDB.
  std::optional<std::string> enforce_gtid_consistency;
  /// MySQL: gtid_purged, the GTIDs no longer in any binlog (newlines removed); unset on MariaDB.
  std::optional<std::string> gtid_purged;
  /// MariaDB: gtid_strict_mode; unset on MySQL.
  std::optional<bool> gtid_strict_mode;
  /// MariaDB: gtid_domain_id; unset on MySQL.
  std::optional<uint32_t> gtid_domain_id;
  /// MariaDB: gtid_binlog_state, the last GTID per domain and server id in the binlogs.
  std::optional<std::string> gtid_binlog_state;
  /// MariaDB: gtid_slave_pos, the last GTID per domain this server applied as a replica.
  std::optional<std::string> gtid_slave_pos;
  /// Whether a replica writes the transactions it applies to its own binlog: log_replica_updates
  /// (MySQL ≥ 8.0.26) or log_slave_updates; unset when the server has neither variable.
  std::optional<bool> log_replica_updates;
  std::string log_replica_updates_variable;  ///< the variable it came from, for the report

  /// The statement this version uses for the replica status.
  std::string replica_status_statement;
  /// The server's replication channels: empty when it is no replica, unset when the statement was
  /// refused (replica_status_error says why).
  std::optional<std::vector<ReplicaChannel>> replica_channels;
  std::optional<Error> replica_status_error;
  /// True when the server replicates from a primary (known, and at least one channel).
  bool is_replica() const { return replica_channels.has_value() && !replica_channels->empty(); }

  /// Automatic binlog purge age in seconds; 0 when binlogs are never purged automatically.
  uint64_t binlog_retention_seconds = 0;
  std::string binlog_retention_source;  ///< the variable it came from, for the report

  /// The statement this version uses for the binlog position.
  std::string binlog_status_statement;
  std::string binlog_file;  ///< current binlog file, empty when the statement failed
  uint64_t binlog_position = 0;
  std::optional<Error> binlog_status_error;

  /// Global privileges granted (from SHOW GRANTS), upper case, e.g. "REPLICATION SLAVE", "ALL PRIVILEGES".
  std::set<std::string> global_privileges;
  bool HasPrivilege(std::string_view name) const;
  /// Names of the replication privileges we need and the user lacks.
  std::vector<std::string> MissingReplicationPrivileges() const;

  /// The global variables Probe read, by name, as the server gave them: what DetectProvider
  /// (mysql/managed_provider.h) recognises a managed service by.
  std::map<std::string, std::string> variables;
  /// Amazon RDS and Aurora: the value of 'binlog retention hours' in CALL
  /// mysql.rds_show_configuration ("NULL" when never set); unset when it was not read.
  std::optional<std::string> rds_binlog_retention_hours;
};

/// The statement that shows the binlog write position on this server: SHOW BINLOG STATUS (MariaDB
/// ≥ 10.5.2), SHOW BINARY LOG STATUS (MySQL ≥ 8.2, where SHOW MASTER STATUS is gone from 8.4),
/// SHOW MASTER STATUS before.
const char* BinlogStatusStatement(bool mariadb, const ServerVersion& version);

/// The statement that shows a server's replication channels: SHOW ALL SLAVES STATUS (MariaDB, every
/// named connection), SHOW REPLICA STATUS (MySQL ≥ 8.0.22), SHOW SLAVE STATUS before.
const char* ReplicaStatusStatement(bool mariadb, const ServerVersion& version);

/// Fills the fields of `info` that come from SHOW GLOBAL VARIABLES (`variables`, by name; "version"
/// is VERSION()), and keeps them in info.variables. Pure: what Probe does with the server's answer,
/// and what tests replay a server's variable set through.
void ReadVariables(const std::map<std::string, std::string>& variables, ServerInfo& info);

/// Reads everything in ServerInfo over `conn`. Only a lost connection fails the probe; a statement
/// the server refuses leaves its fields empty or unset (binlog_status_error and
/// replica_status_error say why).
Result<ServerInfo> Probe(Connection& conn);

/// `text` as a number when it is digits only; nullopt for "", "-1", "12x" or an overflow.
std::optional<uint64_t> WholeNumber(std::string_view text);

/// Parses the global privileges from SHOW GRANTS lines ("GRANT SELECT, REPLICATION SLAVE ON *.* TO …").
std::set<std::string> ParseGlobalPrivileges(const std::vector<std::string>& grant_lines);

}  // namespace chsync::mysql
