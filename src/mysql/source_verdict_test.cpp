// `chsync check`'s decisions on a source's settings (JudgeSource), replayed over the variable sets
// that servers of each managed provider report, and over plain MySQL and MariaDB whose texts must
// stay as they were. CHSYNC_PRINT_VERDICTS=1 prints each verdict as `chsync check` does (the
// output shown in docs/managed-mysql.md).

#include "mysql/source_verdict.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "mysql/managed_provider.h"

namespace chsync::mysql {
namespace {

using Variables = std::map<std::string, std::string>;

/// The global variables of an Amazon RDS for MySQL 8.0.41 instance without automated backups, as
/// its performance_schema.global_variables listed them (a dump in a public repository; the
/// variables Probe reads, plus the paths that show RDS).
const Variables kRds = {
    {"version", "8.0.41"},
    {"version_comment", "Source distribution"},
    {"basedir", "/rdsdbbin/mysql-8.0.41.R2/"},
    {"datadir", "/rdsdbdata/db/"},
    {"hostname", "ip-10-1-0-99"},
    {"server_id", "1806218587"},
    {"log_bin", "OFF"},
    {"binlog_format", "ROW"},
    {"binlog_row_image", "FULL"},
    {"binlog_row_metadata", "MINIMAL"},
    {"binlog_row_value_options", ""},
    {"binlog_checksum", "CRC32"},
    {"binlog_expire_logs_seconds", "2592000"},
    {"expire_logs_days", "0"},
    {"gtid_mode", "OFF_PERMISSIVE"},
    {"enforce_gtid_consistency", "OFF"},
    {"gtid_executed", ""},
    {"gtid_purged", ""},
    {"log_replica_updates", "ON"},
    {"log_slave_updates", "ON"},
    {"innodb_read_only", "OFF"},
};

/// Aurora MySQL version 2 (MySQL 5.7.12 compatible): its binaries under /rdsdbbin/oscar-… (the path
/// in Aurora's own error messages) and aurora_version; binlog_format OFF in the DB cluster parameter
/// group, so no binary log.
const Variables kAurora = {
    {"version", "5.7.12-log"},
    {"version_comment", "MySQL Community Server (GPL)"},
    {"aurora_version", "2.10.2"},
    {"basedir", "/rdsdbbin/oscar-5.7.mysql_aurora.2.10.2.0.4.0/"},
    {"datadir", "/rdsdbdata/db/"},
    {"server_id", "1234567"},
    {"log_bin", "OFF"},
    {"binlog_format", "OFF"},
    {"binlog_row_image", "FULL"},
    {"binlog_checksum", "CRC32"},
    {"expire_logs_days", "0"},
    {"gtid_mode", "OFF"},
    {"enforce_gtid_consistency", "OFF"},
    {"gtid_executed", ""},
    {"log_slave_updates", "OFF"},
    {"innodb_read_only", "OFF"},
};

/// Google Cloud SQL for MySQL 8.0 without point-in-time recovery: no binary log; the
/// cloudsql_iam_authentication flag (one of Cloud SQL's own database flags) is what shows Cloud
/// SQL. The version strings are placeholders: detection does not read them.
const Variables kCloudSql = {
    {"version", "8.0.41"},
    {"version_comment", "(placeholder)"},
    {"cloudsql_iam_authentication", "OFF"},
    {"server_id", "2114542345"},
    {"log_bin", "OFF"},
    {"binlog_format", "ROW"},
    {"binlog_row_image", "FULL"},
    {"binlog_row_metadata", "MINIMAL"},
    {"binlog_checksum", "CRC32"},
    {"binlog_expire_logs_seconds", "2592000"},
    {"gtid_mode", "ON"},
    {"enforce_gtid_consistency", "ON"},
    {"gtid_executed", "a1b2c3d4-0000-11ee-8000-42010a800002:1-1200"},
    {"log_replica_updates", "ON"},
};

/// Azure Database for MySQL flexible server 8.0: binary log always on, ROW format, the Microsoft
/// Entra switch aad_auth_only, generated invisible primary keys on by default, innodb_tmpdir on the
/// temporary disk (/mnt/temp), binlog_row_image MINIMAL and an hour of binlog retention as set by
/// its user. Version strings are placeholders.
const Variables kAzure = {
    {"version", "8.0.40"},
    {"version_comment", "(placeholder)"},
    {"aad_auth_only", "OFF"},
    {"sql_generate_invisible_primary_key", "ON"},
    {"innodb_tmpdir", "/mnt/temp"},
    {"lower_case_table_names", "1"},
    {"server_id", "3298721893"},
    {"log_bin", "ON"},
    {"binlog_format", "ROW"},
    {"binlog_row_image", "MINIMAL"},
    {"binlog_row_metadata", "MINIMAL"},
    {"binlog_checksum", "CRC32"},
    {"binlog_expire_logs_seconds", "3600"},
    {"gtid_mode", "ON"},
    {"enforce_gtid_consistency", "ON"},
    {"gtid_executed", "0b6a3c1e-1111-11ee-9000-6045bd7f0001:1-88"},
    {"log_replica_updates", "OFF"},
};

ServerInfo Replay(const Variables& variables, bool privileged = true) {
  ServerInfo info;
  ReadVariables(variables, info);
  if (privileged) info.global_privileges = {"REPLICATION SLAVE", "REPLICATION CLIENT", "SELECT"};
  info.replica_channels.emplace();  // no replica unless a test says so
  return info;
}

/// The findings as `chsync check` prints them under "Verdict", blocking ones first.
std::string Rendered(const SourceVerdict& v) {
  std::string out = std::string("  provider: ") + std::string(ProviderName(v.provider.provider)) +
                    (v.provider.evidence.empty() ? "" : " (" + v.provider.evidence + ")") +
                    "\n  binlog retention: " + v.retention + "\n";
  for (bool blocking : {true, false}) {
    for (const SourceFinding& f : v.findings) {
      if (f.blocking == blocking) out += (blocking ? "  BLOCKING  " : "  warning   ") + f.text + "\n";
    }
  }
  return out;
}

SourceVerdict Judge(const std::string& name, const ServerInfo& info) {
  SourceVerdict v = JudgeSource(info, "db.example:3306", "chsync");
  if (const char* print = std::getenv("CHSYNC_PRINT_VERDICTS"); print != nullptr && *print == '1') {
    std::printf("--- %s\n%s", name.c_str(), Rendered(v).c_str());
  }
  return v;
}

int Blocking(const SourceVerdict& v) {
  int n = 0;
  for (const SourceFinding& f : v.findings) n += f.blocking ? 1 : 0;
  return n;
}

/// Whether any finding contains `text`, and none advises SET GLOBAL (managed providers only).
bool Says(const SourceVerdict& v, const std::string& text) {
  for (const SourceFinding& f : v.findings) {
    if (f.text.find(text) != std::string::npos) return true;
  }
  return false;
}

void NeverSetGlobal(const SourceVerdict& v) {
  for (const SourceFinding& f : v.findings) {
    EXPECT_EQ(f.text.find("SET GLOBAL"), std::string::npos) << f.text;
    EXPECT_EQ(f.text.find("my.cnf"), std::string::npos) << f.text;
  }
}

TEST(DetectProvider, EachProviderByWhatItsServersSay) {
  EXPECT_EQ(DetectProvider(kRds).provider, Provider::kRds);
  EXPECT_EQ(DetectProvider(kRds).evidence, "basedir=/rdsdbbin/mysql-8.0.41.R2/");
  // Aurora's basedir is under /rdsdbbin too: aurora_version decides first.
  EXPECT_EQ(DetectProvider(kAurora).provider, Provider::kAurora);
  EXPECT_EQ(DetectProvider(kAurora).evidence, "aurora_version=2.10.2");
  EXPECT_EQ(DetectProvider(kCloudSql).provider, Provider::kCloudSql);
  EXPECT_EQ(DetectProvider(kCloudSql).evidence, "cloudsql_iam_authentication=OFF");
  EXPECT_EQ(DetectProvider(kAzure).provider, Provider::kAzure);
  EXPECT_EQ(DetectProvider({{"datadir", "/rdsdbdata/db/"}}).provider, Provider::kRds);
  EXPECT_EQ(DetectProvider({{"basedir", "/usr/"}, {"datadir", "/var/lib/mysql/"}}).provider,
            Provider::kSelfManaged);
  // A path that merely contains the word is not RDS.
  EXPECT_EQ(DetectProvider({{"basedir", "/opt/rdsdbbin-copy/"}}).provider, Provider::kSelfManaged);
}

TEST(BinlogRetentionHours, ReadsTheRowOfRdsShowConfiguration) {
  QueryResult r;
  r.columns = {"name", "value", "description"};
  r.rows.push_back({std::string("binlog retention hours"), std::nullopt, std::string("…")});
  r.rows.push_back({std::string("source delay"), std::string("0"), std::string("…")});
  EXPECT_EQ(BinlogRetentionHours(r), "NULL");
  r.rows[0][1] = "24";
  EXPECT_EQ(BinlogRetentionHours(r), "24");
  r.rows.erase(r.rows.begin());
  EXPECT_EQ(BinlogRetentionHours(r), std::nullopt);
}

TEST(SourceVerdict, RdsWithoutAutomatedBackupsHasNoBinlogAndSaysHowToTurnItOn) {
  ServerInfo info = Replay(kRds);
  info.rds_binlog_retention_hours = "NULL";
  SourceVerdict v = Judge("Amazon RDS for MySQL 8.0.41, automated backups off", info);
  EXPECT_EQ(v.provider.provider, Provider::kRds);
  EXPECT_TRUE(Says(v, "aws rds modify-db-instance --db-instance-identifier ID --backup-retention-period 7"));
  EXPECT_TRUE(Says(v, "CALL mysql.rds_set_configuration('binlog retention hours', 72)"));
  EXPECT_EQ(Blocking(v), 2);  // no binlog, and none retained
  EXPECT_TRUE(Says(v, "gtid-mode OFF_PERMISSIVE, ON_PERMISSIVE and ON"));
  EXPECT_TRUE(Says(v, "ParameterName=binlog_row_metadata,ParameterValue=FULL"));
  // binlog_expire_logs_seconds (30 days here) is not what RDS purges by.
  EXPECT_EQ(v.retention.find("30 days"), std::string::npos);
  EXPECT_NE(v.retention.find("NULL"), std::string::npos);
  NeverSetGlobal(v);
}

TEST(SourceVerdict, RdsWithMixedFormatIsFixedInItsParameterGroup) {
  Variables vars = kRds;
  vars["log_bin"] = "ON";
  vars["binlog_format"] = "MIXED";
  ServerInfo info = Replay(vars);
  info.rds_binlog_retention_hours = "168";
  SourceVerdict v = Judge("Amazon RDS for MySQL 8.0.41, binlog_format MIXED, 168 retention hours", info);
  EXPECT_EQ(Blocking(v), 1);
  EXPECT_TRUE(Says(v,
                   "binlog_format is MIXED on db.example:3306 (Amazon RDS): set binlog_format=ROW in the "
                   "instance's DB parameter group"));
  EXPECT_TRUE(Says(v, "\"ParameterName=binlog_format,ParameterValue=ROW,ApplyMethod=immediate\""));
  EXPECT_EQ(v.retention, "168 hours ('binlog retention hours', mysql.rds_show_configuration)");
  NeverSetGlobal(v);
}

TEST(SourceVerdict, AuroraTurnsItsBinlogOnInTheClusterParameterGroupAndRebootsTheWriter) {
  ServerInfo info = Replay(kAurora);
  info.rds_binlog_retention_hours = "NULL";
  SourceVerdict v = Judge("Aurora MySQL 2.10.2, binlog_format OFF", info);
  EXPECT_EQ(v.provider.provider, Provider::kAurora);
  EXPECT_EQ(Blocking(v), 1);
  EXPECT_TRUE(
      Says(v,
           "aws rds modify-db-cluster-parameter-group --db-cluster-parameter-group-name GROUP "
           "--parameters \"ParameterName=binlog_format,ParameterValue=ROW,ApplyMethod=pending-reboot\""));
  EXPECT_TRUE(Says(v, "reboot the writer instance"));
  // Aurora's NULL retention is lazy, not none: a warning with the fix.
  EXPECT_TRUE(Says(v, "Aurora cleans binlogs up lazily"));
  NeverSetGlobal(v);
}

TEST(SourceVerdict, AnAuroraReaderIsSentToTheWriter) {
  Variables vars = kAurora;
  vars["innodb_read_only"] = "ON";
  ServerInfo info = Replay(vars);
  info.rds_binlog_retention_hours = "24";
  SourceVerdict v = Judge("Aurora MySQL 2.10.2, a reader instance", info);
  EXPECT_TRUE(Says(v, "is an Aurora reader instance (innodb_read_only=ON)"));
  EXPECT_TRUE(Says(v, "point --source at the cluster endpoint (the writer)"));
  NeverSetGlobal(v);
}

TEST(SourceVerdict, CloudSqlTurnsItsBinlogOnWithPointInTimeRecoveryAndSetsFlags) {
  SourceVerdict off = Judge("Cloud SQL for MySQL 8.0, point-in-time recovery off", Replay(kCloudSql));
  EXPECT_EQ(off.provider.provider, Provider::kCloudSql);
  EXPECT_EQ(Blocking(off), 1);
  EXPECT_TRUE(Says(off, "gcloud sql instances patch INSTANCE --enable-bin-log"));
  NeverSetGlobal(off);

  Variables vars = kCloudSql;
  vars["log_bin"] = "ON";
  vars["binlog_row_image"] = "MINIMAL";
  vars["binlog_expire_logs_seconds"] = "3600";
  SourceVerdict on =
      Judge("Cloud SQL for MySQL 8.0, binlog_row_image MINIMAL, an hour of binlogs", Replay(vars));
  EXPECT_EQ(Blocking(on), 1);
  EXPECT_TRUE(Says(on, "gcloud sql instances patch INSTANCE --database-flags=binlog_row_image=FULL"));
  EXPECT_TRUE(Says(on, "--database-flags=binlog_expire_logs_seconds=86400"));
  EXPECT_EQ(on.retention, "1 hours (binlog_expire_logs_seconds)");
  NeverSetGlobal(on);
}

TEST(SourceVerdict, AzureSetsServerParametersAndAReplicaNeedsLogReplicaUpdates) {
  ServerInfo info = Replay(kAzure);
  ReplicaChannel c;
  c.primary_host = "10.0.0.4";
  c.primary_port = 3306;
  c.io_running = c.sql_running = "Yes";
  c.auto_position = true;
  info.replica_channels = std::vector<ReplicaChannel>{c};
  SourceVerdict v = Judge("Azure Database for MySQL flexible server 8.0, a read replica", info);
  EXPECT_EQ(v.provider.provider, Provider::kAzure);
  EXPECT_EQ(Blocking(v), 2);
  EXPECT_TRUE(Says(v,
                   "az mysql flexible-server parameter set --resource-group GROUP --server-name SERVER "
                   "--name binlog_row_image --value FULL"));
  EXPECT_TRUE(Says(v, "--name log_replica_updates --value ON"));
  EXPECT_TRUE(Says(v, "or point --source at 10.0.0.4:3306"));
  EXPECT_TRUE(Says(v, "--name binlog_expire_logs_seconds --value 86400"));
  NeverSetGlobal(v);
}

TEST(SourceVerdict, APlainMysqlKeepsItsTexts) {
  Variables vars = {{"version", "8.0.36"},
                    {"version_comment", "MySQL Community Server - GPL"},
                    {"basedir", "/usr/"},
                    {"datadir", "/var/lib/mysql/"},
                    {"server_id", "0"},
                    {"log_bin", "ON"},
                    {"binlog_format", "MIXED"},
                    {"binlog_row_image", "FULL"},
                    {"binlog_row_metadata", "MINIMAL"},
                    {"binlog_expire_logs_seconds", "3600"},
                    {"gtid_mode", "OFF"},
                    {"enforce_gtid_consistency", "OFF"},
                    {"log_replica_updates", "ON"}};
  SourceVerdict v = Judge("self-managed MySQL 8.0.36", Replay(vars, false));
  EXPECT_FALSE(v.provider.managed());
  EXPECT_EQ(v.retention, "1 hours (binlog_expire_logs_seconds)");
  std::vector<SourceFinding> want = {
      {true, "server_id is 0: MySQL refuses replicas then; set server_id to a unique non-zero value"},
      {true,
       "binlog_format is MIXED: set binlog_format=ROW (SET GLOBAL binlog_format=ROW, and in my.cnf so that "
       "it survives a restart)"},
      {false,
       "binlog_row_metadata is MINIMAL: columns are matched by position, and DDL that moves columns "
       "(DROP COLUMN, ADD … FIRST/AFTER) needs a resync; set binlog_row_metadata=FULL to avoid it"},
      {false,
       "binlogs are purged after 1 hours: a pipe stopped longer than that must resync; keep at least a "
       "day (binlog_expire_logs_seconds=86400)"},
      {true, "user 'chsync' lacks REPLICATION SLAVE: GRANT REPLICATION SLAVE ON *.* TO 'chsync'@'…'"},
      {true, "user 'chsync' lacks REPLICATION CLIENT: GRANT REPLICATION CLIENT ON *.* TO 'chsync'@'…'"},
      {false,
       "gtid_mode is OFF on db.example:3306: chsync then resumes by binlog file:position and cannot follow "
       "a failover to another server; to resume by GTID, set on every server of the topology "
       "enforce_gtid_consistency=ON (first WARN, until the error log shows no violating statement), then "
       "gtid_mode=OFF_PERMISSIVE, ON_PERMISSIVE and ON, one step at a time (SET GLOBAL, and in my.cnf)"},
  };
  ASSERT_EQ(v.findings.size(), want.size()) << Rendered(v);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(v.findings[i].blocking, want[i].blocking) << i;
    EXPECT_EQ(v.findings[i].text, want[i].text) << i;
  }
}

TEST(SourceVerdict, APlainMariadbKeepsItsTexts) {
  Variables vars = {{"version", "10.11.6-MariaDB-0+deb12u1-log"},
                    {"version_comment", "Debian 12"},
                    {"server_id", "1"},
                    {"log_bin", "OFF"},
                    {"binlog_format", "MIXED"},
                    {"binlog_row_image", "FULL"},
                    {"binlog_row_metadata", "FULL"},
                    {"expire_logs_days", "0"},
                    {"gtid_strict_mode", "OFF"},
                    {"gtid_domain_id", "0"},
                    {"log_slave_updates", "OFF"}};
  ServerInfo info = Replay(vars);
  ReplicaChannel c;
  c.primary_host = "db-1";
  c.primary_port = 3306;
  info.replica_channels = std::vector<ReplicaChannel>{c};
  SourceVerdict v = Judge("self-managed MariaDB 10.11, a replica", info);
  EXPECT_EQ(v.retention, "binlogs are not purged automatically (expire_logs_days=0)");
  std::vector<SourceFinding> want = {
      {true, "binary log is off: start the server with log_bin (e.g. log_bin=mariadb-bin in my.cnf)"},
      {false,
       "gtid_strict_mode is OFF on db.example:3306: failover by GTID needs gtid_strict_mode=ON on every "
       "server of the topology so sequence numbers grow within a domain; set it on the primary and every "
       "replica (SET GLOBAL gtid_strict_mode=ON, and gtid_strict_mode=ON in my.cnf so that it survives a "
       "restart)"},
      {true,
       "db.example:3306 is a replica of db-1:3306 with log_slave_updates=OFF: its binlog lacks the "
       "replicated transactions, so a pipe reading from it would miss every change made on the primary; "
       "set log_slave_updates=ON in my.cnf and restart the replica (the variable is read-only at runtime), "
       "or point --source at db-1:3306"},
  };
  ASSERT_EQ(v.findings.size(), want.size()) << Rendered(v);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(v.findings[i].blocking, want[i].blocking) << i;
    EXPECT_EQ(v.findings[i].text, want[i].text) << i;
  }
}

}  // namespace
}  // namespace chsync::mysql
