#include "mysql/server_probe.h"

#include <gtest/gtest.h>

namespace chsync::mysql {
namespace {

TEST(ServerVersion, ParsesFlavouredStrings) {
  auto v = ServerVersion::Parse("10.11.19-MariaDB-0+deb12u1-log");
  EXPECT_EQ(v.major, 10);
  EXPECT_EQ(v.minor, 11);
  EXPECT_EQ(v.patch, 19);
  EXPECT_TRUE(v.AtLeast(10, 5, 2));
  EXPECT_FALSE(v.AtLeast(11));
  auto m = ServerVersion::Parse("8.0.26-google");
  EXPECT_TRUE(m.AtLeast(8, 0, 26));
  EXPECT_FALSE(m.AtLeast(8, 0, 27));
  EXPECT_EQ(ServerVersion::Parse("garbage").major, 0);
}

TEST(ParseGlobalPrivileges, MysqlAndMariadbSpellings) {
  auto p = ParseGlobalPrivileges({
      "GRANT SELECT, RELOAD, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO `repl`@`%` IDENTIFIED BY PASSWORD "
      "'*X'",
      "GRANT ALL PRIVILEGES ON `shop`.* TO `repl`@`%`",
      "GRANT REPLICATION_SLAVE_ADMIN ON *.* TO `repl`@`%`",
  });
  EXPECT_TRUE(p.count("SELECT"));
  EXPECT_TRUE(p.count("REPLICATION SLAVE"));
  EXPECT_TRUE(p.count("BINLOG MONITOR"));
  EXPECT_TRUE(p.count("REPLICATION SLAVE ADMIN"));
  EXPECT_FALSE(p.count("ALL PRIVILEGES")) << "a schema-level grant is not global";
}

TEST(ServerInfo, MissingReplicationPrivileges) {
  ServerInfo info;
  info.global_privileges = {"SELECT"};
  EXPECT_EQ(info.MissingReplicationPrivileges(),
            (std::vector<std::string>{"REPLICATION SLAVE", "REPLICATION CLIENT"}));
  info.global_privileges = {"SELECT", "REPLICATION SLAVE", "BINLOG MONITOR"};
  EXPECT_TRUE(info.MissingReplicationPrivileges().empty());
  info.global_privileges = ParseGlobalPrivileges({"GRANT ALL ON *.* TO 'root'@'localhost'"});
  EXPECT_TRUE(info.MissingReplicationPrivileges().empty());
}

TEST(ReplicaStatusStatement, ByFlavorAndVersion) {
  EXPECT_STREQ(ReplicaStatusStatement(true, ServerVersion::Parse("10.11.19-MariaDB")),
               "SHOW ALL SLAVES STATUS");
  EXPECT_STREQ(ReplicaStatusStatement(false, ServerVersion::Parse("8.0.22")), "SHOW REPLICA STATUS");
  EXPECT_STREQ(ReplicaStatusStatement(false, ServerVersion::Parse("8.4.3")), "SHOW REPLICA STATUS");
  EXPECT_STREQ(ReplicaStatusStatement(false, ServerVersion::Parse("8.0.21")), "SHOW SLAVE STATUS");
  EXPECT_STREQ(ReplicaStatusStatement(false, ServerVersion::Parse("5.7.44-log")), "SHOW SLAVE STATUS");
}

using Row = std::vector<std::optional<std::string>>;

QueryResult Result(std::vector<std::string> columns, std::vector<Row> rows) {
  QueryResult r;
  r.columns = std::move(columns);
  r.rows = std::move(rows);
  return r;
}

TEST(ParseReplicaStatus, NoRowMeansNoReplica) {
  EXPECT_TRUE(ParseReplicaStatus(Result({"Connection_name", "Master_Host"}, {})).empty());
  EXPECT_TRUE(ParseReplicaStatus(QueryResult{}).empty());
}

TEST(ParseReplicaStatus, MariadbAllSlavesStatus) {
  // The columns of MariaDB 10.11 SHOW ALL SLAVES STATUS that the parser reads, in the server's order
  // and spelling, with two named connections.
  QueryResult r =
      Result({"Connection_name", "Slave_SQL_State", "Slave_IO_State", "Master_Host", "Master_User",
              "Master_Port", "Slave_IO_Running", "Slave_SQL_Running", "Last_IO_Error", "Last_SQL_Error",
              "Seconds_Behind_Master", "Using_Gtid", "Gtid_IO_Pos"},
             {
                 Row{"", "Slave has read all relay log", "Waiting for master to send event", "127.0.0.1",
                     "repl", "3306", "Yes", "Yes", "", "", "0", "Slave_Pos", "0-1-42"},
                 Row{"east", "", "", "db-east.example", "repl", "3307", "Connecting", "No",
                     "error connecting to master", "", std::nullopt, "No", ""},
             });
  std::vector<ReplicaChannel> c = ParseReplicaStatus(r);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].name, "");
  EXPECT_EQ(c[0].PrimaryAddress(), "127.0.0.1:3306");
  EXPECT_EQ(c[0].io_running, "Yes");
  EXPECT_EQ(c[0].sql_running, "Yes");
  EXPECT_EQ(c[0].seconds_behind, 0u);
  EXPECT_EQ(c[0].using_gtid, "Slave_Pos");
  EXPECT_FALSE(c[0].auto_position.has_value());
  EXPECT_TRUE(c[0].ThreadsRunning());
  EXPECT_TRUE(c[0].UsesGtid());

  EXPECT_EQ(c[1].name, "east");
  EXPECT_EQ(c[1].PrimaryAddress(), "db-east.example:3307");
  EXPECT_EQ(c[1].io_running, "Connecting");
  EXPECT_FALSE(c[1].seconds_behind.has_value()) << "NULL while the threads do not run";
  EXPECT_EQ(c[1].last_io_error, "error connecting to master");
  EXPECT_FALSE(c[1].ThreadsRunning());
  EXPECT_FALSE(c[1].UsesGtid()) << "Using_Gtid No";
}

TEST(ParseReplicaStatus, MysqlReplicaStatus) {
  // MySQL 8.0.22+ spelling (SHOW REPLICA STATUS).
  QueryResult r = Result({"Replica_IO_State", "Source_Host", "Source_User", "Source_Port",
                          "Replica_IO_Running", "Replica_SQL_Running", "Last_SQL_Error",
                          "Seconds_Behind_Source", "Last_IO_Error", "Auto_Position", "Channel_Name"},
                         {Row{"Waiting for source to send event", "::1", "repl", "3306", "Yes", "No",
                              "Error 'Duplicate entry' on query", std::nullopt, "", "1", ""}});
  std::vector<ReplicaChannel> c = ParseReplicaStatus(r);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].PrimaryAddress(), "[::1]:3306");
  EXPECT_EQ(c[0].sql_running, "No");
  EXPECT_EQ(c[0].last_sql_error, "Error 'Duplicate entry' on query");
  EXPECT_FALSE(c[0].seconds_behind.has_value());
  EXPECT_EQ(c[0].auto_position, true);
  EXPECT_FALSE(c[0].using_gtid.has_value());
  EXPECT_TRUE(c[0].UsesGtid());
  EXPECT_FALSE(c[0].ThreadsRunning());
}

TEST(ParseReplicaStatus, MysqlSlaveStatusByFilePosition) {
  // MySQL 5.7 and 8.0 before 8.0.22 (SHOW SLAVE STATUS), positioned by file and offset.
  QueryResult r = Result({"Slave_IO_State", "Master_Host", "Master_Port", "Slave_IO_Running",
                          "Slave_SQL_Running", "Seconds_Behind_Master", "Auto_Position", "Channel_Name"},
                         {Row{"", "primary.example", "3306", "Yes", "Yes", "17", "0", "ch1"}});
  std::vector<ReplicaChannel> c = ParseReplicaStatus(r);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].name, "ch1");
  EXPECT_EQ(c[0].seconds_behind, 17u);
  EXPECT_EQ(c[0].auto_position, false);
  EXPECT_FALSE(c[0].UsesGtid());
  EXPECT_TRUE(c[0].ThreadsRunning());
}

TEST(ParseReplicaStatus, BadValuesLeaveFieldsEmpty) {
  QueryResult r = Result({"Master_Host", "Master_Port", "Seconds_Behind_Master"},
                         {Row{"", "3306", "0"}, Row{std::nullopt, "3306", "0"}, Row{"h", "99999", "-1"},
                          Row{"h2", std::nullopt, "12x"}});
  std::vector<ReplicaChannel> c = ParseReplicaStatus(r);
  ASSERT_EQ(c.size(), 2u) << "rows without a primary host are no channel";
  EXPECT_EQ(c[0].primary_port, 0) << "port out of range";
  EXPECT_FALSE(c[0].seconds_behind.has_value());
  EXPECT_EQ(c[1].primary_port, 0);
  EXPECT_FALSE(c[1].seconds_behind.has_value());
  EXPECT_TRUE(c[1].io_running.empty()) << "no such column";
  EXPECT_FALSE(c[1].using_gtid.has_value());
  EXPECT_FALSE(c[1].auto_position.has_value());
  EXPECT_FALSE(c[1].UsesGtid());
  EXPECT_FALSE(c[1].ThreadsRunning());
}

TEST(ReplicaChannel, UsesGtidByUsingGtidOrAutoPosition) {
  struct Case {
    std::optional<std::string> using_gtid;
    std::optional<bool> auto_position;
    bool uses_gtid;
  };
  const Case cases[] = {
      {"Slave_Pos", std::nullopt, true},   {"Current_Pos", std::nullopt, true}, {"No", std::nullopt, false},
      {"", std::nullopt, false},           {std::nullopt, true, true},          {std::nullopt, false, false},
      {std::nullopt, std::nullopt, false},
  };
  for (const Case& t : cases) {
    ReplicaChannel c;
    c.using_gtid = t.using_gtid;
    c.auto_position = t.auto_position;
    EXPECT_EQ(c.UsesGtid(), t.uses_gtid) << t.using_gtid.value_or("(unset)") << " / "
                                         << (t.auto_position ? (*t.auto_position ? "1" : "0") : "(unset)");
  }
}

TEST(ServerInfo, IsReplicaOnlyWhenKnownAndAChannelExists) {
  ServerInfo info;
  EXPECT_FALSE(info.is_replica()) << "refused: unknown";
  info.replica_channels.emplace();
  EXPECT_FALSE(info.is_replica());
  info.replica_channels->push_back(ReplicaChannel{});
  EXPECT_TRUE(info.is_replica());
}

}  // namespace
}  // namespace chsync::mysql
