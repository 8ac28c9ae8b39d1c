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

}  // namespace
}  // namespace chsync::mysql
