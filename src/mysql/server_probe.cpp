#include "mysql/server_probe.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <map>

namespace chsync::mysql {
namespace {

std::string Upper(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return out;
}

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

uint64_t ToU64(const std::string& s) {
  uint64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

bool IsOn(const std::string& s) {
  return Upper(s) == "ON" || s == "1";
}

std::string WithoutNewlines(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), '\n'), s.end());
  return s;
}

/// The value of the first of `names` that the result has as a column, in `row`; nullopt when it
/// has none of them or the value is NULL.
std::optional<std::string> Column(const QueryResult& result,
                                  const std::vector<std::optional<std::string>>& row,
                                  std::initializer_list<std::string_view> names) {
  for (std::string_view name : names) {
    int i = result.ColumnIndex(name);
    if (i >= 0 && static_cast<size_t>(i) < row.size()) return row[static_cast<size_t>(i)];
  }
  return std::nullopt;
}

}  // namespace

std::string_view FlavorName(Flavor flavor) {
  switch (flavor) {
    case Flavor::kMySQL: return "MySQL";
    case Flavor::kMariaDB: return "MariaDB";
    case Flavor::kPercona: return "Percona Server for MySQL";
    case Flavor::kAurora: return "Amazon Aurora MySQL";
  }
  return "unknown";
}

ServerVersion ServerVersion::Parse(std::string_view text) {
  ServerVersion v;
  int* parts[] = {&v.major, &v.minor, &v.patch};
  const char* p = text.data();
  const char* end = text.data() + text.size();
  for (int i = 0; i < 3 && p < end; ++i) {
    auto [next, ec] = std::from_chars(p, end, *parts[i]);
    if (ec != std::errc()) break;
    p = next;
    if (p < end && *p == '.')
      ++p;
    else
      break;
  }
  return v;
}

bool ServerVersion::AtLeast(int ma, int mi, int pa) const {
  if (major != ma) return major > ma;
  if (minor != mi) return minor > mi;
  return patch >= pa;
}

std::string ServerVersion::ToString() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

bool ServerInfo::HasPrivilege(std::string_view name) const {
  return global_privileges.count("ALL PRIVILEGES") > 0 || global_privileges.count(std::string(name)) > 0;
}

std::vector<std::string> ServerInfo::MissingReplicationPrivileges() const {
  std::vector<std::string> missing;
  // MariaDB 10.5.1 renamed REPLICATION SLAVE to REPLICATION REPLICA (alias) and split REPLICATION
  // CLIENT into BINLOG MONITOR (which SHOW BINLOG STATUS needs) and SLAVE MONITOR.
  if (!HasPrivilege("REPLICATION SLAVE") && !HasPrivilege("REPLICATION REPLICA")) {
    missing.emplace_back("REPLICATION SLAVE");
  }
  bool client = HasPrivilege("REPLICATION CLIENT") || HasPrivilege("BINLOG MONITOR") || HasPrivilege("SUPER");
  if (!client) missing.emplace_back("REPLICATION CLIENT");
  return missing;
}

std::string ReplicaChannel::PrimaryAddress() const {
  std::string h = primary_host.find(':') != std::string::npos ? "[" + primary_host + "]" : primary_host;
  return h + ":" + std::to_string(primary_port);
}

bool ReplicaChannel::ThreadsRunning() const {
  return io_running == "Yes" && sql_running == "Yes";
}

bool ReplicaChannel::UsesGtid() const {
  if (using_gtid) return *using_gtid == "Slave_Pos" || *using_gtid == "Current_Pos";
  return auto_position.value_or(false);
}

std::vector<ReplicaChannel> ParseReplicaStatus(const QueryResult& result) {
  std::vector<ReplicaChannel> out;
  for (const auto& row : result.rows) {
    ReplicaChannel c;
    c.primary_host = Column(result, row, {"Source_Host", "Master_Host"}).value_or("");
    if (c.primary_host.empty()) continue;
    c.name = Column(result, row, {"Channel_Name", "Connection_name"}).value_or("");
    uint64_t port = ToU64(Column(result, row, {"Source_Port", "Master_Port"}).value_or("0"));
    c.primary_port = port <= UINT16_MAX ? static_cast<uint16_t>(port) : 0;
    c.io_running = Column(result, row, {"Replica_IO_Running", "Slave_IO_Running"}).value_or("");
    c.sql_running = Column(result, row, {"Replica_SQL_Running", "Slave_SQL_Running"}).value_or("");
    c.seconds_behind =
        WholeNumber(Column(result, row, {"Seconds_Behind_Source", "Seconds_Behind_Master"}).value_or(""));
    if (result.ColumnIndex("Using_Gtid") >= 0)
      c.using_gtid = Column(result, row, {"Using_Gtid"}).value_or("");
    if (result.ColumnIndex("Auto_Position") >= 0) {
      c.auto_position = Column(result, row, {"Auto_Position"}).value_or("0") == "1";
    }
    c.last_io_error = Column(result, row, {"Last_IO_Error"}).value_or("");
    c.last_sql_error = Column(result, row, {"Last_SQL_Error"}).value_or("");
    out.push_back(std::move(c));
  }
  return out;
}

std::set<std::string> ParseGlobalPrivileges(const std::vector<std::string>& grant_lines) {
  std::set<std::string> out;
  for (const std::string& line : grant_lines) {
    std::string upper = Upper(line);
    if (upper.rfind("GRANT ", 0) != 0) continue;
    size_t on = upper.find(" ON *.* TO ");
    if (on == std::string::npos) {
      // MySQL 8 dynamic privileges: "GRANT BINLOG_ADMIN,… ON *.* TO" is covered above; a role grant
      // ("GRANT `r`@`%` TO …") or a schema-level grant names no global privilege.
      continue;
    }
    std::string list = upper.substr(6, on - 6);
    size_t start = 0;
    while (start <= list.size()) {
      size_t comma = list.find(',', start);
      std::string item =
          Trim(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (!item.empty()) {
        if (item == "ALL") item = "ALL PRIVILEGES";
        std::replace(item.begin(), item.end(), '_', ' ');
        out.insert(item);
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

const char* BinlogStatusStatement(bool mariadb, const ServerVersion& version) {
  if (mariadb) return version.AtLeast(10, 5, 2) ? "SHOW BINLOG STATUS" : "SHOW MASTER STATUS";
  return version.AtLeast(8, 2) ? "SHOW BINARY LOG STATUS" : "SHOW MASTER STATUS";
}

const char* ReplicaStatusStatement(bool mariadb, const ServerVersion& version) {
  if (mariadb) return "SHOW ALL SLAVES STATUS";
  return version.AtLeast(8, 0, 22) ? "SHOW REPLICA STATUS" : "SHOW SLAVE STATUS";
}

void ReadVariables(const std::map<std::string, std::string>& variables, ServerInfo& info) {
  info.variables = variables;
  std::map<std::string, std::string> v = variables;
  info.version_string = v["version"];
  info.version_comment = v["version_comment"];
  info.version = ServerVersion::Parse(info.version_string);
  std::string vlower = Upper(info.version_string + " " + info.version_comment);
  if (vlower.find("MARIADB") != std::string::npos) {
    info.flavor = Flavor::kMariaDB;
  } else if (v.count("aurora_version")) {
    info.flavor = Flavor::kAurora;
  } else if (vlower.find("PERCONA") != std::string::npos) {
    info.flavor = Flavor::kPercona;
  }
  info.server_id = static_cast<uint32_t>(ToU64(v["server_id"]));
  info.log_bin = Upper(v["log_bin"]) == "ON" || v["log_bin"] == "1";
  info.binlog_format = Upper(v["binlog_format"]);
  info.binlog_row_image = Upper(v["binlog_row_image"]);
  if (v.count("binlog_row_metadata")) info.binlog_row_metadata = Upper(v["binlog_row_metadata"]);
  if (v.count("binlog_row_value_options")) info.binlog_row_value_options = v["binlog_row_value_options"];
  info.binlog_checksum = Upper(v["binlog_checksum"]);
  info.row_metadata_supported =
      info.is_mariadb() ? info.version.AtLeast(10, 5) : info.version.AtLeast(8, 0, 1);

  if (info.is_mariadb()) {
    info.gtid_mode = "ON";
    info.gtid_position = v["gtid_binlog_pos"];
    if (v.count("gtid_strict_mode")) info.gtid_strict_mode = IsOn(v["gtid_strict_mode"]);
    if (v.count("gtid_domain_id")) info.gtid_domain_id = static_cast<uint32_t>(ToU64(v["gtid_domain_id"]));
    if (v.count("gtid_binlog_state")) info.gtid_binlog_state = v["gtid_binlog_state"];
    if (v.count("gtid_slave_pos")) info.gtid_slave_pos = v["gtid_slave_pos"];
  } else {
    info.gtid_mode = v.count("gtid_mode") ? Upper(v["gtid_mode"]) : "OFF";
    info.gtid_position = WithoutNewlines(v["gtid_executed"]);
    if (v.count("enforce_gtid_consistency"))
      info.enforce_gtid_consistency = Upper(v["enforce_gtid_consistency"]);
    if (v.count("gtid_purged")) info.gtid_purged = WithoutNewlines(v["gtid_purged"]);
  }
  for (const char* name : {"log_replica_updates", "log_slave_updates"}) {
    if (v.count(name)) {
      info.log_replica_updates = IsOn(v[name]);
      info.log_replica_updates_variable = name;
      break;
    }
  }

  uint64_t seconds = v.count("binlog_expire_logs_seconds") ? ToU64(v["binlog_expire_logs_seconds"]) : 0;
  double days = v.count("expire_logs_days") ? std::strtod(v["expire_logs_days"].c_str(), nullptr) : 0;
  if (seconds > 0) {
    info.binlog_retention_seconds = seconds;
    info.binlog_retention_source = "binlog_expire_logs_seconds";
  } else if (days > 0) {
    info.binlog_retention_seconds = static_cast<uint64_t>(days * 86400);
    info.binlog_retention_source = "expire_logs_days";
  } else {
    info.binlog_retention_source =
        v.count("binlog_expire_logs_seconds") ? "binlog_expire_logs_seconds" : "expire_logs_days";
  }
}

Result<ServerInfo> Probe(Connection& conn) {
  ServerInfo info;
  CHSYNC_ASSIGN_OR_RETURN(
      QueryResult vars,
      conn.Query("SHOW GLOBAL VARIABLES WHERE Variable_name IN ("
                 "'version','version_comment','server_id','log_bin','binlog_format',"
                 "'binlog_row_image','binlog_row_metadata','binlog_row_value_options',"
                 "'binlog_checksum','gtid_mode','gtid_executed','gtid_binlog_pos',"
                 "'binlog_expire_logs_seconds','expire_logs_days','aurora_version',"
                 "'enforce_gtid_consistency','gtid_purged','gtid_strict_mode',"
                 "'gtid_domain_id','gtid_binlog_state','gtid_slave_pos',"
                 "'log_replica_updates','log_slave_updates','basedir','datadir','hostname',"
                 "'innodb_read_only','aad_auth_only') OR Variable_name LIKE 'cloudsql\\_%'"));
  std::map<std::string, std::string> v;
  for (const auto& row : vars.rows) {
    if (row.size() >= 2 && row[0]) v[*row[0]] = row[1].value_or("");
  }
  if (!v.count("version")) v["version"] = conn.server_version();
  ReadVariables(v, info);

  info.binlog_status_statement = BinlogStatusStatement(info.is_mariadb(), info.version);
  auto status = conn.Query(info.binlog_status_statement);
  if (status.ok()) {
    if (!status->rows.empty() && status->rows[0].size() >= 2) {
      info.binlog_file = status->rows[0][0].value_or("");
      info.binlog_position = ToU64(status->rows[0][1].value_or("0"));
    }
  } else if (status.error().kind() == ErrorKind::kNetwork) {
    return std::move(status).error();
  } else {
    info.binlog_status_error = status.error();
  }

  info.replica_status_statement = ReplicaStatusStatement(info.is_mariadb(), info.version);
  auto replica = conn.Query(info.replica_status_statement);
  if (replica.ok()) {
    info.replica_channels = ParseReplicaStatus(*replica);
  } else if (replica.error().kind() == ErrorKind::kNetwork) {
    return std::move(replica).error();
  } else {
    info.replica_status_error = replica.error();
  }

  auto grants = conn.Query("SHOW GRANTS");
  if (grants.ok()) {
    std::vector<std::string> lines;
    for (const auto& row : grants->rows) {
      if (!row.empty() && row[0]) lines.push_back(*row[0]);
    }
    info.global_privileges = ParseGlobalPrivileges(lines);
  } else if (grants.error().kind() == ErrorKind::kNetwork) {
    return std::move(grants).error();
  }
  return info;
}

std::optional<uint64_t> WholeNumber(std::string_view text) {
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [next, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || next != end) return std::nullopt;
  return v;
}

}  // namespace chsync::mysql
