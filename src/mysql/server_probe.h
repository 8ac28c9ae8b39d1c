#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
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
};

/// The statement that shows the binlog write position on this server: SHOW BINLOG STATUS (MariaDB
/// ≥ 10.5.2), SHOW BINARY LOG STATUS (MySQL ≥ 8.2, where SHOW MASTER STATUS is gone from 8.4),
/// SHOW MASTER STATUS before.
const char* BinlogStatusStatement(bool mariadb, const ServerVersion& version);

/// Reads everything in ServerInfo over `conn`. Only a lost connection fails the probe; a statement
/// the server refuses leaves its fields empty (binlog_status_error says why).
Result<ServerInfo> Probe(Connection& conn);

/// Parses the global privileges from SHOW GRANTS lines ("GRANT SELECT, REPLICATION SLAVE ON *.* TO …").
std::set<std::string> ParseGlobalPrivileges(const std::vector<std::string>& grant_lines);

}  // namespace chsync::mysql
