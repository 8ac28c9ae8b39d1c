#include "mysql/source_verdict.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string_view>

namespace chsync::mysql {
namespace {

std::string Duration(uint64_t seconds) {
  if (seconds % 86400 == 0) return fmt::format("{} day{}", seconds / 86400, seconds == 86400 ? "" : "s");
  if (seconds % 3600 == 0) return fmt::format("{} hours", seconds / 3600);
  return fmt::format("{} seconds", seconds);
}

/// How to give the server variable `name` the value `value` on a managed provider, in its own
/// terms (never SET GLOBAL, which its users may not run). `reboot`: the change needs a restart.
std::string ManagedSet(Provider provider, std::string_view name, std::string_view value,
                       bool reboot = false) {
  switch (provider) {
    case Provider::kRds:
      return fmt::format(
          "set {0}={1} in the instance's DB parameter group (a custom group: the default one cannot be "
          "changed): aws rds modify-db-parameter-group --db-parameter-group-name GROUP --parameters "
          "\"ParameterName={0},ParameterValue={1},ApplyMethod={2}\"{3}",
          name, value, reboot ? "pending-reboot" : "immediate",
          reboot ? ", then reboot the instance (aws rds reboot-db-instance --db-instance-identifier ID)"
                 : "");
    case Provider::kAurora:
      return fmt::format(
          "set {0}={1} in the DB cluster parameter group (a custom group: the default one cannot be "
          "changed): "
          "aws rds modify-db-cluster-parameter-group --db-cluster-parameter-group-name GROUP --parameters "
          "\"ParameterName={0},ParameterValue={1},ApplyMethod=pending-reboot\", then reboot the writer "
          "instance (aws rds reboot-db-instance --db-instance-identifier WRITER)",
          name, value);
    case Provider::kCloudSql:
      return fmt::format(
          "set the database flag {0}={1}: gcloud sql instances patch INSTANCE --database-flags={0}={1} "
          "(the list replaces the flags set before: name those too; the instance may restart)",
          name, value);
    case Provider::kAzure:
      return fmt::format(
          "set the server parameter {0}={1}: az mysql flexible-server parameter set --resource-group GROUP "
          "--server-name SERVER --name {0} --value {1}{2}",
          name, value, reboot ? ", then restart the server (az mysql flexible-server restart)" : "");
    case Provider::kSelfManaged: break;
  }
  return fmt::format("SET GLOBAL {}={}, and in my.cnf", name, value);
}

std::string_view Where(const ProviderGuess& p) {
  return p.managed() ? ProviderName(p.provider) : std::string_view();
}

void BinaryLogFindings(const ServerInfo& info, const ProviderGuess& p, const std::string& address,
                       std::vector<SourceFinding>& out) {
  auto block = [&out](std::string text) { out.push_back({true, std::move(text)}); };
  auto warn = [&out](std::string text) { out.push_back({false, std::move(text)}); };
  if (info.server_id == 0 && !info.is_mariadb()) {
    block("server_id is 0: MySQL refuses replicas then; set server_id to a unique non-zero value");
  }
  if (!info.log_bin) {
    auto it = info.variables.find("innodb_read_only");
    const bool reader = it != info.variables.end() && (it->second == "ON" || it->second == "1");
    switch (p.provider) {
      case Provider::kSelfManaged:
        block(info.is_mariadb()
                  ? "binary log is off: start the server with log_bin (e.g. log_bin=mariadb-bin in my.cnf)"
                  : "binary log is off: start the server with log_bin (MySQL 8 enables it by default; "
                    "remove skip-log-bin / disable_log_bin)");
        break;
      case Provider::kRds:
        block(fmt::format(
            "binary log is off on {} (Amazon RDS): RDS writes binlogs only while automated backups are on; "
            "set a backup retention period above 0: aws rds modify-db-instance --db-instance-identifier ID "
            "--backup-retention-period 7 --apply-immediately",
            address));
        break;
      case Provider::kAurora:
        if (reader) {
          block(fmt::format(
              "{} is an Aurora reader instance (innodb_read_only=ON): Aurora writes binlogs on the writer "
              "only; point --source at the cluster endpoint (the writer)",
              address));
        } else {
          block(fmt::format(
              "binary log is off on {} (Amazon Aurora MySQL): Aurora turns it on by binlog_format; "
              "{}",
              address, ManagedSet(p.provider, "binlog_format", "ROW")));
        }
        break;
      case Provider::kCloudSql:
        block(fmt::format(
            "binary log is off on {} (Google Cloud SQL): Cloud SQL writes binlogs with point-in-time "
            "recovery; "
            "turn it on: gcloud sql instances patch INSTANCE --enable-bin-log (automated backups must be on: "
            "--backup-start-time=HH:MM)",
            address));
        break;
      case Provider::kAzure:
        block(fmt::format(
            "binary log is off on {}, which Azure Database for MySQL flexible server keeps always on: check "
            "that --source names the flexible server itself, not another server behind the same name",
            address));
        break;
    }
  }
  if (info.log_bin && info.binlog_format != "ROW") {
    const std::string now = info.binlog_format.empty() ? "unknown" : info.binlog_format;
    block(p.managed()
              ? fmt::format("binlog_format is {} on {} ({}): {}", now, address, Where(p),
                            ManagedSet(p.provider, "binlog_format", "ROW"))
              : fmt::format("binlog_format is {}: set binlog_format=ROW (SET GLOBAL binlog_format=ROW, "
                            "and in my.cnf so that it survives a restart)",
                            now));
  }
  if (info.log_bin && info.binlog_format == "ROW" && info.binlog_row_image != "FULL") {
    block(p.managed()
              ? fmt::format("binlog_row_image is {} on {} ({}): every change must carry whole rows; {}",
                            info.binlog_row_image, address, Where(p),
                            ManagedSet(p.provider, "binlog_row_image", "FULL"))
              : fmt::format("binlog_row_image is {}: set binlog_row_image=FULL so that every change carries "
                            "whole rows (SET GLOBAL binlog_row_image=FULL, and in my.cnf)",
                            info.binlog_row_image));
  }
  if (info.row_metadata_supported && info.binlog_row_metadata.value_or("MINIMAL") != "FULL") {
    std::string text =
        "binlog_row_metadata is MINIMAL: columns are matched by position, and DDL that moves columns "
        "(DROP COLUMN, ADD … FIRST/AFTER) needs a resync; ";
    text += p.managed() ? "to avoid it, " + ManagedSet(p.provider, "binlog_row_metadata", "FULL")
                        : "set binlog_row_metadata=FULL to avoid it";
    warn(std::move(text));
  }
}

/// The retention line and its findings. RDS and Aurora purge binlogs by their own 'binlog
/// retention hours', whatever binlog_expire_logs_seconds says.
std::string RetentionFindings(const ServerInfo& info, const ProviderGuess& p,
                              std::vector<SourceFinding>& out) {
  if (p.provider == Provider::kRds || p.provider == Provider::kAurora) {
    const bool aurora = p.provider == Provider::kAurora;
    const std::string set = "CALL mysql.rds_set_configuration('binlog retention hours', 72)";
    if (!info.rds_binlog_retention_hours) {
      out.push_back(
          {false, fmt::format("cannot read 'binlog retention hours' (CALL mysql.rds_show_configuration): "
                              "{} purges binlogs by it, not by binlog_expire_logs_seconds; check "
                              "it and keep at least a day: {}",
                              ProviderName(p.provider), set)});
      return "unknown: CALL mysql.rds_show_configuration gave no 'binlog retention hours'";
    }
    const std::string& hours = *info.rds_binlog_retention_hours;
    if (hours == "NULL" || hours.empty()) {
      if (aurora) {
        out.push_back({false,
                       "'binlog retention hours' is NULL: Aurora cleans binlogs up lazily, usually within "
                       "a day, and a pipe stopped longer than that must copy every table again; keep "
                       "at least a day: " +
                           set + " (at most 2160 hours)"});
        return "unset: 'binlog retention hours' is NULL, Aurora purges lazily (mysql.rds_show_configuration)";
      }
      out.push_back({true,
                     "'binlog retention hours' is NULL: Amazon RDS keeps no binlog once it is backed up, "
                     "so a pipe that stops for a moment finds the binlog it needs purged and must copy "
                     "every table again; keep at least a day: " +
                         set});
      return "none: 'binlog retention hours' is NULL, binlogs are purged at once "
             "(mysql.rds_show_configuration)";
    }
    std::optional<uint64_t> n = WholeNumber(hours);
    if (n && *n < 24) {
      out.push_back(
          {false, fmt::format("binlogs are purged after {} hours ('binlog retention hours'): a pipe "
                              "stopped longer than that must resync; keep at least a day: {}",
                              *n, set)});
    }
    return fmt::format("{} hours ('binlog retention hours', mysql.rds_show_configuration)", hours);
  }
  if (info.binlog_retention_seconds == 0) {
    return "binlogs are not purged automatically (" + info.binlog_retention_source + "=0)";
  }
  if (info.binlog_retention_seconds < 86400) {
    const bool days = info.binlog_retention_source == "expire_logs_days";
    out.push_back(
        {false,
         "binlogs are purged after " + Duration(info.binlog_retention_seconds) +
             ": a pipe stopped longer than that must resync; keep at least a day (" +
             (p.managed() ? ManagedSet(p.provider, days ? "expire_logs_days" : "binlog_expire_logs_seconds",
                                       days ? "1" : "86400")
                          : std::string("binlog_expire_logs_seconds=86400")) +
             ")"});
  }
  return Duration(info.binlog_retention_seconds) + " (" + info.binlog_retention_source + ")";
}

void GtidFindings(const ServerInfo& info, const ProviderGuess& p, const std::string& address,
                  std::vector<SourceFinding>& out) {
  if (info.is_mariadb()) {
    if (info.gtid_strict_mode.has_value() && !*info.gtid_strict_mode) {
      out.push_back(
          {false, "gtid_strict_mode is OFF on " + address +
                      ": failover by GTID needs gtid_strict_mode=ON on every server of the topology so "
                      "sequence numbers grow within a domain; set it on the primary and every replica (" +
                      (p.managed() ? ManagedSet(p.provider, "gtid_strict_mode", "ON")
                                   : std::string("SET GLOBAL gtid_strict_mode=ON, and gtid_strict_mode=ON "
                                                 "in my.cnf so that it survives a restart")) +
                      ")"});
    }
    return;
  }
  if (info.gtid_mode == "ON") return;
  const std::string mode = info.gtid_mode.empty() ? "(empty)" : info.gtid_mode;
  const std::string lead = fmt::format(
      "gtid_mode is {} on {}: chsync then resumes by binlog file:position and cannot follow a failover "
      "to another server; to resume by GTID, ",
      mode, address);
  const std::string enforce = info.enforce_gtid_consistency.value_or("") == "ON"
                                  ? " (already set here)"
                                  : " (first WARN, until the error log shows no violating statement)";
  switch (p.provider) {
    case Provider::kSelfManaged:
      out.push_back(
          {false, lead + "set on every server of the topology enforce_gtid_consistency=ON" + enforce +
                      ", then gtid_mode=OFF_PERMISSIVE, ON_PERMISSIVE and ON, one step at a time (SET "
                      "GLOBAL, and in my.cnf)"});
      return;
    case Provider::kRds:
      out.push_back(
          {false, lead +
                      "set in the DB parameter group of the instance and of its read replicas "
                      "enforce_gtid_consistency=ON" +
                      enforce +
                      ", then gtid-mode OFF_PERMISSIVE, ON_PERMISSIVE and ON, one step at a time, "
                      "rebooting after each (aws rds reboot-db-instance --db-instance-identifier ID)"});
      return;
    case Provider::kAurora:
      out.push_back({false, lead + "set in the DB cluster parameter group enforce_gtid_consistency=ON" +
                                enforce +
                                ", then gtid-mode OFF_PERMISSIVE, ON_PERMISSIVE and ON, one step at a time, "
                                "rebooting the writer after each (aws rds reboot-db-instance "
                                "--db-instance-identifier WRITER)"});
      return;
    case Provider::kCloudSql:
      out.push_back({false, lead + "look at the instance's flags (gcloud sql instances describe INSTANCE): "
                                   "gtid_mode is not a setting chsync knows Cloud SQL lets its users change, "
                                   "never SET GLOBAL there"});
      return;
    case Provider::kAzure:
      out.push_back(
          {false, lead + "set the server parameter enforce_gtid_consistency=ON" + enforce +
                      ", then gtid_mode OFF_PERMISSIVE, ON_PERMISSIVE and ON, one step at a time: az "
                      "mysql flexible-server parameter set --resource-group GROUP --server-name SERVER "
                      "--name gtid_mode --value ON_PERMISSIVE"});
      return;
  }
}

void ReplicaFindings(const ServerInfo& info, const ProviderGuess& p, const std::string& address,
                     std::vector<SourceFinding>& out) {
  if (!info.is_replica() || !info.log_replica_updates.has_value() || *info.log_replica_updates) return;
  const std::string variable =
      info.log_replica_updates_variable.empty() ? "log_slave_updates" : info.log_replica_updates_variable;
  std::vector<std::string> all;
  for (const ReplicaChannel& c : *info.replica_channels) all.push_back(c.PrimaryAddress());
  const std::string primaries = fmt::format("{}", fmt::join(all, ", "));
  const std::string lead = fmt::format(
      "{} is a replica of {} with {}=OFF: its binlog lacks the replicated transactions, so a pipe reading "
      "from it would miss every change made on the primary; ",
      address, primaries, variable);
  std::string fix;
  switch (p.provider) {
    case Provider::kSelfManaged:
      fix = fmt::format("set {}=ON in my.cnf and restart the replica (the variable is read-only at runtime)",
                        variable);
      break;
    case Provider::kRds:
      fix = fmt::format(
          "on the read replica, turn on automated backups (aws rds modify-db-instance "
          "--db-instance-identifier "
          "REPLICA --backup-retention-period 7 --apply-immediately) and {}",
          ManagedSet(p.provider, variable, "1", true));
      break;
    case Provider::kAurora: fix = ManagedSet(p.provider, variable, "1"); break;
    case Provider::kCloudSql:
    case Provider::kAzure: fix = "on the replica, " + ManagedSet(p.provider, variable, "ON", true); break;
  }
  out.push_back({true, lead + fix + ", or point --source at " + primaries});
}

}  // namespace

SourceVerdict JudgeSource(const ServerInfo& info, const std::string& address, const std::string& user) {
  SourceVerdict verdict;
  verdict.provider = DetectProvider(info.variables);
  const ProviderGuess& p = verdict.provider;
  BinaryLogFindings(info, p, address, verdict.findings);
  verdict.retention = RetentionFindings(info, p, verdict.findings);
  for (const std::string& missing : info.MissingReplicationPrivileges()) {
    std::string name = missing;
    if (info.is_mariadb() && missing == "REPLICATION CLIENT" && info.version.AtLeast(10, 5, 2))
      name = "BINLOG MONITOR";
    verdict.findings.push_back(
        {true, fmt::format("user '{}' lacks {}: GRANT {} ON *.* TO '{}'@'…'", user, name, name, user)});
  }
  GtidFindings(info, p, address, verdict.findings);
  ReplicaFindings(info, p, address, verdict.findings);
  return verdict;
}

}  // namespace chsync::mysql
