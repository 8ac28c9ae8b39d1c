// `chsync check` against the real servers that scripts/test starts.

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "common/url.h"
#include "mysql/connection.h"
#include "test_env.h"

namespace chsync {
namespace {

using testing::ChsyncBinary;
using testing::MakeTempDir;
using testing::ProcessResult;
using testing::RequireEnv;
using testing::RunProcess;

ProcessResult Check(const std::string& source, const std::string& dest, const std::string& tables = "",
                    const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv = {ChsyncBinary(), "check", "--source", source, "--dest", dest};
  if (!tables.empty()) {
    argv.push_back("--tables");
    argv.push_back(tables);
  }
  argv.insert(argv.end(), extra.begin(), extra.end());
  return RunProcess(argv);
}

/// Runs statements as the all-privileged test user on the server at `url`.
void Admin(const std::string& url, const std::vector<std::string>& statements) {
  auto parsed = ParseUrl(url);
  ASSERT_TRUE(parsed.ok());
  auto options = mysql::OptionsFromUrl(*parsed);
  ASSERT_TRUE(options.ok());
  auto conn = mysql::Connection::Open(*options);
  ASSERT_TRUE(conn.ok()) << conn.error().message();
  for (const std::string& s : statements) {
    Status st = (*conn)->Execute(s);
    ASSERT_TRUE(st.ok()) << s << ": " << st.error().message();
  }
}

/// The URL with its user and password replaced.
std::string WithUser(const std::string& url, const std::string& user, const std::string& password) {
  auto parsed = ParseUrl(url);
  return parsed->scheme + "://" + user + ":" + password + "@" + parsed->Address();
}

TEST(CheckCommand, FullMetadataMariadbToClickhouseServerPasses) {
  std::string source = RequireEnv("CHSYNC_TEST_MYSQL_FULL");
  std::string dest = RequireEnv("CHSYNC_TEST_CLICKHOUSE");
  Admin(source, {"CREATE DATABASE IF NOT EXISTS check_ok",
                 "CREATE TABLE IF NOT EXISTS check_ok.orders (id INT PRIMARY KEY, note VARCHAR(20))",
                 "CREATE TABLE IF NOT EXISTS check_ok.events (a INT, b BIT(3), g GEOMETRY, j JSON)"});
  ProcessResult r =
      Check(source, dest, "check_ok.*", {"--schema-policy", "check_ok.events:keyless=distinct"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("MariaDB"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("10.11."), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("server_id                  101"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("binlog_format              ROW"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("binlog_row_image           FULL"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("FULL: columns matched by name"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("SHOW BINLOG STATUS"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("binlog.0"), std::string::npos)
      << r.output;  // binlog.000001, or .000123 after flushes
  EXPECT_NE(r.output.find("REPLICATION SLAVE, REPLICATION CLIENT: granted"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("check_ok.orders  primary key (id)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("check_ok.events  NO PRIMARY KEY"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("column g geometry: spatial type"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("column b bit(3): BIT"), std::string::npos) << r.output;
  EXPECT_NE(
      r.output.find("warning   check_ok.events without a primary key or NOT NULL unique key, replicated as "
                    "the set of its distinct rows (keyless=distinct)"),
      std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("ClickHouse server over HTTP"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("18.16.1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("OK: a pipe can run"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("chsync-pw"), std::string::npos) << "source password printed";
  EXPECT_EQ(r.output.find("ch-pw"), std::string::npos) << "destination password printed";
}

// Issue 33, case 6: a table without a primary key or NOT NULL unique key is refused by default, so
// check says so as blocking, with what to do. A NOT NULL unique key is a key; a NULL-able one is not.
TEST(CheckCommand, ATableWithoutAKeyIsBlockingUnlessKeylessDistinct) {
  std::string source = RequireEnv("CHSYNC_TEST_MYSQL_FULL");
  std::string dest = RequireEnv("CHSYNC_TEST_CLICKHOUSE");
  Admin(source, {"CREATE DATABASE IF NOT EXISTS check_keyless",
                 "CREATE TABLE IF NOT EXISTS check_keyless.log (a INT, b VARCHAR(20))",
                 "CREATE TABLE IF NOT EXISTS check_keyless.nullable_unique (a INT, UNIQUE KEY ua (a))",
                 "CREATE TABLE IF NOT EXISTS check_keyless.unique_key (a INT NOT NULL, UNIQUE KEY ua (a))"});
  ProcessResult r = Check(source, dest, "check_keyless.*");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("BLOCKING  check_keyless.log has no primary key or NOT NULL unique key"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("BLOCKING  check_keyless.nullable_unique has no primary key"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("check_keyless.unique_key has no"), std::string::npos) << r.output;
  EXPECT_NE(
      r.output.find("ALTER TABLE check_keyless.log ADD COLUMN _id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT "
                    "PRIMARY KEY INVISIBLE"),
      std::string::npos)
      << r.output;
  ProcessResult distinct = Check(source, dest, "check_keyless.*", {"--schema-policy", "keyless=distinct"});
  EXPECT_EQ(distinct.exit_code, 0) << distinct.output;
  EXPECT_NE(
      distinct.output.find("warning   check_keyless.log, check_keyless.nullable_unique without a primary "
                           "key or NOT NULL unique key, replicated as the set of their distinct rows"),
      std::string::npos)
      << distinct.output;
}

TEST(CheckCommand, ReportsOldClickhouseCapabilities) {
  ProcessResult r = Check(RequireEnv("CHSYNC_TEST_MYSQL_FULL"), RequireEnv("CHSYNC_TEST_CLICKHOUSE"));
  // ClickHouse 18.16 predates DateTime64 (20.1) and ReplacingMergeTree(ver, is_deleted) (23.2).
  EXPECT_NE(r.output.find("datetime64                 no"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("replacing_is_deleted       no"), std::string::npos) << r.output;
}

TEST(CheckCommand, EmbeddedClickhouseReportsVersionAndCapabilities) {
  RequireEnv("CHSYNC_CHDB_LIB");
  std::string store = MakeTempDir("check-store");
  // Every table of a server other tests share may include tables without a key: one of its own.
  Admin(RequireEnv("CHSYNC_TEST_MYSQL_FULL"),
        {"CREATE DATABASE IF NOT EXISTS check_embedded",
         "CREATE TABLE IF NOT EXISTS check_embedded.t (id INT PRIMARY KEY)"});
  ProcessResult r = Check(RequireEnv("CHSYNC_TEST_MYSQL_FULL"), "file:" + store, "check_embedded.*");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("embedded ClickHouse (chDB)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("version                    26.7"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("datetime64                 yes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("replacing_is_deleted       yes"), std::string::npos) << r.output;
}

TEST(CheckCommand, StatementFormatIsBlockingAndNamed) {
  ProcessResult r = Check(RequireEnv("CHSYNC_TEST_MYSQL_STATEMENT"), RequireEnv("CHSYNC_TEST_CLICKHOUSE"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("BLOCKING  binlog_format is STATEMENT: set binlog_format=ROW"), std::string::npos)
      << r.output;
}

TEST(CheckCommand, MinimalMetadataPassesInOrdinalMode) {
  std::string source = RequireEnv("CHSYNC_TEST_MYSQL_MINIMAL");
  Admin(source, {"CREATE DATABASE IF NOT EXISTS check_minimal",
                 "CREATE TABLE IF NOT EXISTS check_minimal.t (id INT PRIMARY KEY, v VARCHAR(10))"});
  ProcessResult r = Check(source, RequireEnv("CHSYNC_TEST_CLICKHOUSE"), "check_minimal.*");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("MINIMAL: ordinal mode, columns matched by position"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("warning   binlog_row_metadata is MINIMAL"), std::string::npos) << r.output;
}

TEST(CheckCommand, UserWithoutReplicationPrivilegesIsBlocked) {
  std::string source = WithUser(RequireEnv("CHSYNC_TEST_MYSQL_FULL"), "norepl", "norepl-pw");
  ProcessResult r = Check(source, RequireEnv("CHSYNC_TEST_CLICKHOUSE"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("BLOCKING  user 'norepl' lacks REPLICATION SLAVE: GRANT REPLICATION SLAVE ON *.*"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("lacks BINLOG MONITOR"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("norepl-pw"), std::string::npos) << "password printed";
}

TEST(CheckCommand, TableWithoutSelectIsBlocked) {
  std::string admin = RequireEnv("CHSYNC_TEST_MYSQL_FULL");
  Admin(admin, {"CREATE DATABASE IF NOT EXISTS check_secret",
                "CREATE TABLE IF NOT EXISTS check_secret.salaries (id INT PRIMARY KEY)",
                "CREATE DATABASE IF NOT EXISTS check_public",
                "CREATE TABLE IF NOT EXISTS check_public.items (id INT PRIMARY KEY)",
                "CREATE USER IF NOT EXISTS 'partial'@'%' IDENTIFIED BY 'partial-pw'",
                "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'partial'@'%'",
                "GRANT SELECT ON check_public.* TO 'partial'@'%'",
                "GRANT INSERT ON check_secret.* TO 'partial'@'%'"});
  ProcessResult r = Check(WithUser(admin, "partial", "partial-pw"), RequireEnv("CHSYNC_TEST_CLICKHOUSE"),
                          "check_public.*,check_secret.*");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("BLOCKING  user 'partial' cannot read check_secret.salaries"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("cannot read check_public.items"), std::string::npos) << r.output;
}

// Issue 33, case 9: foreign keys whose cascades change replicated rows without row events are named.
TEST(CheckCommand, CascadingForeignKeysAreNamed) {
  const std::string admin = RequireEnv("CHSYNC_TEST_MYSQL_FULL");
  Admin(admin,
        {"DROP DATABASE IF EXISTS check_fk", "CREATE DATABASE check_fk",
         "CREATE TABLE check_fk.category (id INT PRIMARY KEY, name VARCHAR(20))",
         "CREATE TABLE check_fk.film_category (film_id INT, category_id INT, PRIMARY KEY (film_id, "
         "category_id), CONSTRAINT fk_fc_category FOREIGN KEY (category_id) REFERENCES "
         "check_fk.category (id) ON DELETE CASCADE ON UPDATE CASCADE)",
         "CREATE TABLE check_fk.note (id INT PRIMARY KEY, category_id INT, CONSTRAINT fk_note FOREIGN KEY "
         "(category_id) REFERENCES check_fk.category (id))"});
  ProcessResult r = Check(admin, RequireEnv("CHSYNC_TEST_CLICKHOUSE"), "check_fk.*");
  // Both tables replicated on one server: followed, no warning.
  EXPECT_NE(r.output.find("1 followed in ClickHouse"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("cascading foreign key"), std::string::npos) << r.output;
  // The child without its parent: named as not followed.
  r = Check(admin, RequireEnv("CHSYNC_TEST_CLICKHOUSE"), "check_fk.film_category");
  EXPECT_NE(r.output.find("warning   1 cascading foreign key changes replicated tables inside the storage "
                          "engine"),
            std::string::npos)
      << r.output;
  EXPECT_NE(
      r.output.find("check_fk.film_category (fk_fc_category) -> check_fk.category: ON DELETE CASCADE, ON "
                    "UPDATE CASCADE: not followed, its parent table is not replicated"),
      std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("fk_note"), std::string::npos) << "a RESTRICT key is no cascade\n" << r.output;
  // Not selected: nothing to say.
  r = Check(admin, RequireEnv("CHSYNC_TEST_CLICKHOUSE"), "check_fk.category");
  EXPECT_EQ(r.output.find("cascading"), std::string::npos) << r.output;
  Admin(admin, {"DROP DATABASE check_fk"});
}

TEST(CheckCommand, NoMatchingTableIsBlocked) {
  ProcessResult r = Check(RequireEnv("CHSYNC_TEST_MYSQL_FULL"), RequireEnv("CHSYNC_TEST_CLICKHOUSE"),
                          "no_such_db_anywhere.*");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no table matches --tables 'no_such_db_anywhere.*'"), std::string::npos)
      << r.output;
}

TEST(CheckCommand, WrongSourcePasswordIsClearAndSecret) {
  std::string source = WithUser(RequireEnv("CHSYNC_TEST_MYSQL_FULL"), "chsync", "wrong-secret-1");
  ProcessResult r = Check(source, RequireEnv("CHSYNC_TEST_CLICKHOUSE"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("Access denied for user 'chsync'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("check the user name and password of --source"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("wrong-secret-1"), std::string::npos) << "password printed";
}

TEST(CheckCommand, WrongDestinationPasswordIsClearAndSecret) {
  std::string dest = WithUser(RequireEnv("CHSYNC_TEST_CLICKHOUSE"), "default", "wrong-secret-2");
  ProcessResult r = Check(RequireEnv("CHSYNC_TEST_MYSQL_FULL"), dest);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("check the user name and password of --dest"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("193"), std::string::npos) << "the server's error code: " << r.output;
  EXPECT_EQ(r.output.find("wrong-secret-2"), std::string::npos) << "password printed";
}

TEST(CheckCommand, ClosedPortsNameTheAddress) {
  // Port 1 on loopback: nothing listens there.
  ProcessResult r = Check("mysql://chsync:secret-3@127.0.0.1:1", "http://default:secret-4@127.0.0.1:1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("source 127.0.0.1:1 unreachable"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("check that the server runs"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("destination http://127.0.0.1:1"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("secret-3"), std::string::npos) << "password printed";
  EXPECT_EQ(r.output.find("secret-4"), std::string::npos) << "password printed";
}

/// The value that `chsync check` printed for `key` on a report line ("  KEY<padded to 26> VALUE"),
/// "" when there is no such line.
std::string ReportValue(const std::string& output, const std::string& key) {
  std::string line = "\n  " + key + std::string(key.size() < 26 ? 26 - key.size() : 0, ' ') + " ";
  size_t at = output.find(line);
  if (at == std::string::npos) return "";
  size_t begin = at + line.size();
  size_t end = output.find('\n', begin);
  return output.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

/// A value of the server at `url` (`SELECT @@…`), as the all-privileged test user.
std::string ServerValue(const std::string& url, const std::string& sql) {
  auto parsed = ParseUrl(url);
  EXPECT_TRUE(parsed.ok());
  if (!parsed.ok()) return "";
  auto options = mysql::OptionsFromUrl(*parsed);
  EXPECT_TRUE(options.ok());
  if (!options.ok()) return "";
  auto conn = mysql::Connection::Open(*options);
  EXPECT_TRUE(conn.ok()) << conn.error().message();
  if (!conn.ok()) return "";
  auto value = (*conn)->QueryValue(sql);
  EXPECT_TRUE(value.ok()) << sql << ": " << value.error().message();
  return value.ok() ? value->value_or("") : "";
}

TEST(CheckCommand, GtidSectionOfStandaloneMariadb) {
  std::string source = RequireEnv("CHSYNC_TEST_MYSQL_FULL");
  Admin(source, {"CREATE DATABASE IF NOT EXISTS check_gtid",
                 "CREATE TABLE IF NOT EXISTS check_gtid.t (id INT PRIMARY KEY)",
                 "REPLACE INTO check_gtid.t VALUES (1)"});
  std::string binlog_pos = ServerValue(source, "SELECT @@GLOBAL.gtid_binlog_pos");
  std::string domain = ServerValue(source, "SELECT @@GLOBAL.gtid_domain_id");
  std::string strict = ServerValue(source, "SELECT @@GLOBAL.gtid_strict_mode");
  ASSERT_FALSE(binlog_pos.empty()) << "a transaction was just logged";
  ProcessResult r = Check(source, RequireEnv("CHSYNC_TEST_CLICKHOUSE"), "check_gtid.*");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  size_t section = r.output.find("\nGTID\n");
  ASSERT_NE(section, std::string::npos) << r.output;
  EXPECT_LT(section, r.output.find("\nTables  ")) << "the GTID section follows the source's";
  EXPECT_EQ(ReportValue(r.output, "gtid_domain_id"), domain) << r.output;
  // Other tests write to the same server meanwhile: the position printed is at least the one read
  // before, in the same domain and from this server_id (101).
  std::string printed = ReportValue(r.output, "gtid_binlog_pos");
  EXPECT_EQ(printed.rfind(domain + "-101-", 0), 0u) << r.output;
  EXPECT_NE(printed.find(binlog_pos.substr(0, binlog_pos.rfind('-') + 1)), std::string::npos) << r.output;
  EXPECT_EQ(ReportValue(r.output, "gtid_strict_mode"), strict == "1" ? "ON" : "OFF") << r.output;
  if (strict != "1") {
    EXPECT_NE(r.output.find("warning   gtid_strict_mode is OFF on " + ParseUrl(source)->Address() +
                            ": failover by GTID needs gtid_strict_mode=ON on every server of the topology so "
                            "sequence numbers grow within a domain"),
              std::string::npos)
        << r.output;
  }
  EXPECT_EQ(ReportValue(r.output, "replica"), "no (SHOW ALL SLAVES STATUS shows no replication channel)")
      << r.output;
  EXPECT_EQ(r.output.find("usable as a source"), std::string::npos) << r.output;
}

TEST(CheckCommand, ReplicaStatusRefusedIsAWarningThatNamesTheGrant) {
  // REPLICATION SLAVE and BINLOG MONITOR are all a pipe needs, but SHOW ALL SLAVES STATUS also
  // needs SLAVE MONITOR: check then cannot tell whether the source is a replica.
  std::string admin = RequireEnv("CHSYNC_TEST_MYSQL_FULL");
  Admin(admin, {"CREATE DATABASE IF NOT EXISTS check_public",
                "CREATE TABLE IF NOT EXISTS check_public.items (id INT PRIMARY KEY)",
                "CREATE USER IF NOT EXISTS 'nomonitor'@'%' IDENTIFIED BY 'nomonitor-pw'",
                "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'nomonitor'@'%'",
                "GRANT SELECT ON check_public.* TO 'nomonitor'@'%'"});
  ProcessResult r = Check(WithUser(admin, "nomonitor", "nomonitor-pw"), RequireEnv("CHSYNC_TEST_CLICKHOUSE"),
                          "check_public.*");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(ReportValue(r.output, "replica").find("unknown: SHOW ALL SLAVES STATUS failed"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("SLAVE MONITOR privilege"), std::string::npos)
      << "the server's message: " << r.output;
  EXPECT_NE(r.output.find("warning   cannot tell whether " + ParseUrl(admin)->Address() + " is a replica"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("GRANT SLAVE MONITOR ON *.* TO 'nomonitor'@'…'"), std::string::npos) << r.output;
  EXPECT_NE(ReportValue(r.output, "gtid_binlog_pos"), "") << "the variables need no privilege: " << r.output;
}

/// Needs the GTID replica pair of scripts/test-servers (CHSYNC_TEST_MYSQL_PRIMARY and
/// CHSYNC_TEST_MYSQL_REPLICA): fails without them.
TEST(CheckCommand, ReplicaIsReportedUsable) {
  std::string primary = RequireEnv("CHSYNC_TEST_MYSQL_PRIMARY");
  std::string replica = RequireEnv("CHSYNC_TEST_MYSQL_REPLICA");
  ASSERT_FALSE(primary.empty() || replica.empty());
  // A transaction of our own on the primary, and the replica's GTID position once it applied it.
  Admin(primary, {"CREATE DATABASE IF NOT EXISTS check_replica",
                  "CREATE TABLE IF NOT EXISTS check_replica.t (id INT PRIMARY KEY, at DATETIME(6))",
                  "REPLACE INTO check_replica.t VALUES (1, NOW(6))"});
  std::string applied = ServerValue(primary, "SELECT @@GLOBAL.gtid_binlog_pos");
  ASSERT_FALSE(applied.empty());
  std::string slave_pos;
  for (int i = 0; i < 300 && slave_pos != applied; ++i) {
    slave_pos = ServerValue(replica, "SELECT @@GLOBAL.gtid_slave_pos");
    if (slave_pos != applied) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(slave_pos, applied) << "the replica did not apply the primary's transaction within 30 s";
  ProcessResult r = Check(replica, RequireEnv("CHSYNC_TEST_CLICKHOUSE"), "check_replica.*");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::string of = ReportValue(r.output, "replica of");
  EXPECT_EQ(of.rfind(ParseUrl(primary)->Address() + ", IO thread Yes, SQL thread Yes, ", 0), 0u) << r.output;
  EXPECT_EQ(ReportValue(r.output, "log_slave_updates"), "ON: its binlog has the replicated transactions")
      << r.output;
  EXPECT_NE(ReportValue(r.output, "  Using_Gtid"), "No") << r.output;
  EXPECT_EQ(ReportValue(r.output, "usable as a source"),
            "yes: it replicates by GTID and keeps up with its primary")
      << r.output;
  EXPECT_EQ(ReportValue(r.output, "gtid_slave_pos"), applied) << r.output;
  EXPECT_EQ(ReportValue(r.output, "gtid_binlog_pos"), applied) << "log_slave_updates: " << r.output;
  EXPECT_EQ(r.output.find("BLOCKING  " + ParseUrl(replica)->Address() + " is a replica"), std::string::npos)
      << r.output;

  // The whole topology at once, as `chsync run --source PRIMARY,REPLICA` takes it: a section each.
  ProcessResult both =
      Check(primary + "," + replica, RequireEnv("CHSYNC_TEST_CLICKHOUSE"), "check_replica.*");
  EXPECT_EQ(both.exit_code, 0) << both.output;
  EXPECT_NE(both.output.find("@" + ParseUrl(primary)->Address()), std::string::npos) << both.output;
  EXPECT_NE(both.output.find("@" + ParseUrl(replica)->Address()), std::string::npos) << both.output;
  EXPECT_NE(both.output.find("replica                    no"), std::string::npos)
      << "the primary is no replica:\n"
      << both.output;
}

TEST(CheckCommand, BadUsageExitsTwo) {
  EXPECT_EQ(RunProcess({ChsyncBinary(), "check", "--source", "mysql://u:p@h:1"}).exit_code, 2);
  ProcessResult bad_url =
      RunProcess({ChsyncBinary(), "check", "--source", "nonsense", "--dest", "file:/tmp/x"});
  EXPECT_EQ(bad_url.exit_code, 2);
  EXPECT_NE(bad_url.output.find("--source"), std::string::npos) << bad_url.output;
  ProcessResult bad_dest =
      RunProcess({ChsyncBinary(), "check", "--source", "mysql://u:p@h:1", "--dest", "ftp://x"});
  EXPECT_EQ(bad_dest.exit_code, 2);
  EXPECT_NE(bad_dest.output.find("--dest must be"), std::string::npos) << bad_dest.output;
  ProcessResult bad_tables = RunProcess(
      {ChsyncBinary(), "check", "--source", "mysql://u:p@h:1", "--dest", "file:/tmp/x", "--tables", "db."});
  EXPECT_EQ(bad_tables.exit_code, 2);
  EXPECT_NE(bad_tables.output.find("invalid table pattern 'db.'"), std::string::npos) << bad_tables.output;
}

}  // namespace
}  // namespace chsync
