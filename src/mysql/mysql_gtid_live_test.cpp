// What a MariaDB server does with MySQL's GTID start, and what chsync tells the user. There is no
// MySQL server in the test setup, so the MySQL side of COM_BINLOG_DUMP_GTID is covered by the
// byte-level tests in mysql_gtid_set_test.cpp only.

#include <gtest/gtest.h>
#include <mariadb/mysql.h>
// mariadb_rpl.h needs the types of mysql.h first.
#include <mariadb/mariadb_rpl.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "common/url.h"
#include "mysql/binlog_stream.h"
#include "mysql/connection.h"
#include "mysql/live_test_connection.h"
#include "mysql/mysql_gtid_set.h"

namespace chsync::mysql {
namespace {

constexpr unsigned kErrorUnknownCommand = 1047;  // ER_UNKNOWN_COM_ERROR

std::unique_ptr<Connection> Connect() {
  return ConnectToTestServer();
}

TEST(MysqlGtidLive, MariaDbAnswersComBinlogDumpGtidWithUnknownCommand) {
  auto conn = Connect();
  ASSERT_NE(conn, nullptr);
  ASSERT_NE(conn->server_version().find("MariaDB"), std::string::npos) << conn->server_version();
  ASSERT_TRUE(conn->Execute("SET @master_binlog_checksum = @@global.binlog_checksum").ok());
  auto set = MysqlGtidSet::Parse("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5");
  ASSERT_TRUE(set.ok());
  std::string packet = BuildComBinlogDumpGtid(kBinlogThroughGtid, 4200301, "", 4, set->Encode());
  Status sent = SendReplicationCommand(*conn, packet);
  ASSERT_TRUE(sent.ok()) << sent.error().message();
  // The server's answer is one packet: an error, not a binlog stream.
  MYSQL* mysql = conn->handle();
  EXPECT_NE(mysql_read_query_result(mysql), 0);
  EXPECT_EQ(mysql_errno(mysql), kErrorUnknownCommand) << mysql_error(mysql);
  // It read exactly our packet: the connection is still in step and answers queries.
  auto one = conn->QueryValue("SELECT 1");
  ASSERT_TRUE(one.ok()) << one.error().message();
  EXPECT_EQ(one->value_or(""), "1");
}

// BinlogStream sends COM_BINLOG_DUMP_GTID itself and reads the answer with mariadb_rpl_fetch
// without mariadb_rpl_open. The same with a COM_BINLOG_DUMP that MariaDB serves shows that
// reading works that way: the fake ROTATE to the requested file, then its FORMAT_DESCRIPTION.
TEST(MysqlGtidLive, ConnectorCReadsTheStreamOfARequestWeSentOurselves) {
  auto conn = Connect();
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(conn->Execute("SET @master_binlog_checksum = @@global.binlog_checksum").ok());
  auto first = FirstBinlogFile(*conn);
  ASSERT_TRUE(first.ok()) << first.error().message();
  MARIADB_RPL* rpl = mariadb_rpl_init(conn->handle());
  ASSERT_NE(rpl, nullptr);
  // COM_BINLOG_DUMP: 0x12, position (4 bytes), flags (2), server_id (4), file name.
  std::string packet = {0x12, 4, 0, 0, 0, 0, 0};
  uint32_t server_id = 4200303;
  for (int i = 0; i < 4; ++i) packet.push_back(static_cast<char>((server_id >> (8 * i)) & 0xFF));
  packet += *first;
  Status sent = SendReplicationCommand(*conn, packet);
  ASSERT_TRUE(sent.ok()) << sent.error().message();
  MARIADB_RPL_EVENT* ev = mariadb_rpl_fetch(rpl, nullptr);
  ASSERT_NE(ev, nullptr) << mysql_error(conn->handle());
  EXPECT_EQ(ev->event_type, ROTATE_EVENT);
  EXPECT_EQ(std::string(ev->event.rotate.filename.str, ev->event.rotate.filename.length), *first);
  ev = mariadb_rpl_fetch(rpl, ev);
  ASSERT_NE(ev, nullptr) << mysql_error(conn->handle());
  EXPECT_EQ(ev->event_type, FORMAT_DESCRIPTION_EVENT);
  mariadb_free_rpl_event(ev);
  mariadb_rpl_close(rpl);
}

TEST(MysqlGtidLive, MySqlGtidSetAgainstMariaDbIsAUsageErrorThatSaysWhy) {
  BinlogStreamOptions options;
  options.server_id = 4200302;
  options.gtid_set = "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5:mytag:1";
  auto stream = BinlogStream::Open(Connect(), options);
  ASSERT_FALSE(stream.ok()) << "a MySQL GTID set started a stream on MariaDB";
  const Error& e = stream.error();
  EXPECT_EQ(e.kind(), ErrorKind::kUsage);
  EXPECT_NE(e.message().find("is a MySQL GTID set"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("is MariaDB"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("0-1-42"), std::string::npos) << e.message();
  EXPECT_EQ(e.message().find("chsync-pw"), std::string::npos) << "the password leaked into: " << e.message();
}

}  // namespace
}  // namespace chsync::mysql
