// The GTID primary/replica pair of scripts/test-servers works as failover tests need it:
// replication, a promotion after the primary was killed, a restarted primary, and Reset() after
// each of these.

#include "replication_pair.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "mysql/connection.h"
#include "test_env.h"

namespace chsync::testing {
namespace {

std::string UniqueDatabase() {
  static int counter = 0;
  auto ticks = std::chrono::steady_clock::now().time_since_epoch().count() % 1000000;
  return "pair_" + std::to_string(getpid()) + "_" + std::to_string(ticks) + "_" + std::to_string(++counter);
}

/// Runs `sql`; records a failure naming the server when it fails.
bool Exec(mysql::Connection& conn, const std::string& sql) {
  Status s = conn.Execute(sql);
  EXPECT_TRUE(s.ok()) << sql << " on " << conn.options().Address() << ": " << s.error().message();
  return s.ok();
}

std::string Value(mysql::Connection& conn, const std::string& sql) {
  auto v = conn.QueryValue(sql);
  EXPECT_TRUE(v.ok()) << sql << " on " << conn.options().Address() << ": " << v.error().message();
  return v.ok() ? v->value_or("NULL") : "";
}

/// Calls `done` every 50 ms until it returns true (true) or `seconds` have passed (false).
bool WaitFor(int seconds, const std::function<bool()>& done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

/// One column of SHOW SLAVE STATUS ("" when there is no row or no such column).
std::string SlaveColumn(mysql::Connection& conn, const std::string& name) {
  auto status = conn.Query("SHOW SLAVE STATUS");
  EXPECT_TRUE(status.ok()) << "SHOW SLAVE STATUS: " << status.error().message();
  if (!status.ok() || status->rows.empty()) return "";
  int i = status->ColumnIndex(name);
  return i < 0 ? "" : status->rows[0][i].value_or("");
}

/// The sequence number of a one-GTID position "0-SERVER-SEQ" of domain 0 and `server_id`, -1 when
/// it is something else.
long long Domain0Seq(const std::string& pos, int server_id) {
  const std::string prefix = "0-" + std::to_string(server_id) + "-";
  if (pos.rfind(prefix, 0) != 0 || pos.find(',') != std::string::npos) return -1;
  try {
    return std::stoll(pos.substr(prefix.size()));
  } catch (const std::exception&) {
    return -1;
  }
}

class ReplicationPairTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pair_.Reset();
    ASSERT_FALSE(HasFailure()) << "the pair could not be reset";
    db_ = UniqueDatabase();
    table_ = db_ + ".t";
  }

  /// A fresh database and table on the primary, with rows 1..3, caught up on the replica.
  void CreateTable(mysql::Connection& primary) {
    ASSERT_TRUE(Exec(primary, "CREATE DATABASE " + db_));
    ASSERT_TRUE(
        Exec(primary, "CREATE TABLE " + table_ + " (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB"));
    ASSERT_TRUE(Exec(primary, "INSERT INTO " + table_ + " VALUES (1, 'a'), (2, 'b'), (3, 'c')"));
    ASSERT_TRUE(pair_.WaitReplicaCaughtUp(30));
  }

  std::string Rows(mysql::Connection& conn) {
    return Value(conn, "SELECT GROUP_CONCAT(id, '=', v ORDER BY id) FROM " + table_);
  }

  void TearDown() override {
    // Dropped on the primary, so that the replica drops it too; after a failed test Reset() of
    // the next one puts the pair right again and the database stays.
    if (HasFailure() || db_.empty()) return;
    auto primary = pair_.ConnectPrimary();
    if (primary != nullptr && Exec(*primary, "DROP DATABASE IF EXISTS " + db_)) pair_.WaitReplicaCaughtUp(30);
  }

  ReplicationPair pair_;
  std::string db_;
  std::string table_;
};

TEST_F(ReplicationPairTest, ReplicatesThenFailsOverThenResets) {
  auto primary = pair_.ConnectPrimary();
  auto replica = pair_.ConnectReplica();
  ASSERT_TRUE(primary != nullptr && replica != nullptr);
  ASSERT_NO_FATAL_FAILURE(CreateTable(*primary));
  EXPECT_EQ(Rows(*replica), "1=a,2=b,3=c");

  // log_slave_updates: the replica writes the primary's transactions to its own binlog, with
  // their GTIDs, so that it can serve as a primary later.
  std::string primary_pos = Value(*primary, "SELECT @@gtid_binlog_pos");
  EXPECT_EQ(Value(*replica, "SELECT @@gtid_binlog_pos"), primary_pos);
  long long seq = Domain0Seq(primary_pos, 11);
  ASSERT_GT(seq, 0) << "primary @@gtid_binlog_pos '" << primary_pos << "' is not one GTID 0-11-N";

  ASSERT_TRUE(pair_.KillPrimary());
  primary.reset();
  ASSERT_TRUE(pair_.Promote());
  EXPECT_EQ(
      Value(*replica, "SELECT COUNT(*) FROM information_schema.processlist WHERE command LIKE 'Slave%'"), "0")
      << "replication threads still run on the promoted replica";
  ASSERT_TRUE(Exec(*replica, "INSERT INTO " + table_ + " VALUES (4, 'd')"));
  EXPECT_EQ(Value(*replica, "SELECT @@gtid_binlog_pos"), "0-12-" + std::to_string(seq + 1))
      << "the promoted replica continues domain 0 with its own server_id";
  EXPECT_EQ(Rows(*replica), "1=a,2=b,3=c,4=d");

  pair_.Reset();
  ASSERT_FALSE(HasFailure());
  primary = pair_.ConnectPrimary();
  replica = pair_.ConnectReplica();
  ASSERT_TRUE(primary != nullptr && replica != nullptr);
  EXPECT_EQ(Value(*primary, "SELECT @@gtid_binlog_pos"), "");
  EXPECT_EQ(Value(*replica, "SELECT @@gtid_slave_pos"), "");
  // Reset() keeps the rows: the primary never saw row 4, the replica keeps it.
  EXPECT_EQ(Rows(*primary), "1=a,2=b,3=c");
  ASSERT_TRUE(Exec(*primary, "INSERT INTO " + table_ + " VALUES (5, 'e')"));
  ASSERT_TRUE(pair_.WaitReplicaCaughtUp(30));
  EXPECT_EQ(Rows(*replica), "1=a,2=b,3=c,4=d,5=e");
  EXPECT_EQ(Value(*replica, "SELECT @@gtid_slave_pos"), "0-11-1");
  EXPECT_EQ(Value(*replica, "SELECT @@gtid_binlog_pos"), "0-11-1");
}

TEST_F(ReplicationPairTest, ReplicaReconnectsToARestartedPrimary) {
  auto primary = pair_.ConnectPrimary();
  ASSERT_TRUE(primary != nullptr);
  ASSERT_NO_FATAL_FAILURE(CreateTable(*primary));
  ASSERT_TRUE(pair_.KillPrimary());
  ASSERT_TRUE(pair_.StartPrimary());
  primary = pair_.ConnectPrimary();
  ASSERT_TRUE(primary != nullptr);
  ASSERT_TRUE(Exec(*primary, "INSERT INTO " + table_ + " VALUES (4, 'd')"));
  // The replica retries its connection every second (MASTER_CONNECT_RETRY=1).
  auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(pair_.WaitReplicaCaughtUp(30));
  auto replica = pair_.ConnectReplica();
  ASSERT_TRUE(replica != nullptr);
  EXPECT_EQ(Rows(*replica), "1=a,2=b,3=c,4=d");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
}

TEST_F(ReplicationPairTest, ResetRepairsAReplicaThatMissedPurgedBinlogs) {
  auto primary = pair_.ConnectPrimary();
  ASSERT_TRUE(primary != nullptr);
  ASSERT_NO_FATAL_FAILURE(CreateTable(*primary));
  ASSERT_TRUE(pair_.KillReplica());
  ASSERT_TRUE(Exec(*primary, "INSERT INTO " + table_ + " VALUES (4, 'd')"));
  ASSERT_TRUE(Exec(*primary, "FLUSH BINARY LOGS"));
  std::string file = Value(*primary, "SHOW MASTER STATUS");  // File: the binlog written now
  ASSERT_FALSE(file.empty());
  // PURGE keeps (with a warning) a file that InnoDB crash recovery may still need, until the
  // binlog checkpoint has moved past it.
  auto purged = [&] {
    return Exec(*primary, "PURGE BINARY LOGS TO '" + file + "'") &&
           Value(*primary, "SHOW BINARY LOGS") == file;
  };
  ASSERT_TRUE(WaitFor(10, purged)) << "binlogs before " << file
                                   << " still there 10 s after PURGE BINARY LOGS";
  // The restarted replica asks for a GTID the primary no longer has: its IO thread stops with
  // error 1236 (ER_MASTER_FATAL_ERROR_READING_BINLOG), and only Reset() helps.
  ASSERT_TRUE(pair_.StartReplica());
  auto replica = pair_.ConnectReplica();
  ASSERT_TRUE(replica != nullptr);
  EXPECT_TRUE(WaitFor(10, [&] { return SlaveColumn(*replica, "Last_IO_Errno") == "1236"; }))
      << "Last_IO_Errno " << SlaveColumn(*replica, "Last_IO_Errno") << ": "
      << SlaveColumn(*replica, "Last_IO_Error");

  pair_.Reset();
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(Exec(*primary, "INSERT INTO " + table_ + " VALUES (5, 'e')"));
  ASSERT_TRUE(pair_.WaitReplicaCaughtUp(30));
  // Row 4 was in the purged binlog: Reset() starts replication afresh and copies no rows.
  EXPECT_EQ(Rows(*replica), "1=a,2=b,3=c,5=e");
}

TEST(GtidPosContains, ComparesSequenceNumbersPerDomain) {
  struct Case {
    const char* pos;
    const char* other;
    bool contains;
  };
  const Case cases[] = {
      {"", "", true},
      {"0-11-5", "", true},
      {"", "0-11-1", false},
      {"0-11-5", "0-11-5", true},
      {"0-11-5", "0-11-4", true},
      {"0-11-4", "0-11-5", false},
      {"0-12-6", "0-11-5", true},  // GTID order within a domain is by sequence number only
      {"0-11-5,1-11-2", "1-11-2", true},
      {"0-11-5", "0-11-5,1-11-1", false},
      {"0-11-5, 1-11-3", "1-11-2,0-11-1", true},
      {"0-11-x", "", false},
      {"0-11-5", "0-11", false},
      {"0-11-5,0-12-6", "", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(GtidPosContains(c.pos, c.other), c.contains)
        << "'" << c.pos << "' contains '" << c.other << "'";
  }
}

}  // namespace
}  // namespace chsync::testing
