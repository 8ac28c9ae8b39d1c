// Start modes end to end (docs/configuration.md, "Start modes"): snapshot.mode never from the end of
// the binlog now, from a position, from a GTID and from a time — exactly the changes after the
// start point reach ClickHouse —, refused when a schema change of a replicated table lies between
// the start point and now; snapshot.mode only copies, exits 0 with tables equal to the source, and
// a later run under another mode refuses the state directory.

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "pipe_compare.h"
#include "pipe_harness.h"
#include "test_env.h"

namespace chsync {
namespace {

using testing::CommandResult;
using testing::Dest;
using testing::PipeTest;

constexpr int kServerIdBase = 17900000;

class StartModesTest : public ::testing::TestWithParam<Dest> {
 protected:
  void SetUp() override { p_.Init("CHSYNC_TEST_MYSQL_FULL", GetParam(), "start", kServerIdBase); }
  void TearDown() override { p_.Cleanup(); }

  void CreateTable() { p_.Exec("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20) NOT NULL)"); }
  /// Rows first..last with v = 'a<id>'.
  void Insert(int first, int last) {
    p_.Exec("INSERT INTO t SELECT seq, CONCAT('a', seq) FROM seq_" + std::to_string(first) + "_to_" +
            std::to_string(last));
  }
  /// "id=v,…" of the destination's live rows, by id.
  std::string DestRows() {
    std::string out;
    for (const auto& r : p_.DestQuery("SELECT id, v FROM " + p_.DestTable("t") +
                                      " FINAL WHERE _chsync_is_deleted = 0 ORDER BY id")) {
      if (r.size() != 2) continue;
      out += (out.empty() ? "" : ",") + r[0].value_or("NULL") + "=" + r[1].value_or("NULL");
    }
    return out;
  }
  /// `chsync run --until-caught-up --tables TABLES` with a state directory of its own.
  CommandResult RunInNewState(const std::string& tables, const std::vector<std::string>& extra) {
    std::vector<std::string> argv = p_.RunArgs(tables, true, extra);
    for (size_t i = 0; i + 1 < argv.size(); ++i) {
      if (argv[i] == "--state") argv[i + 1] = testing::MakeTempDir("start-state");
    }
    return testing::RunCommand(argv, 300'000);
  }
  /// FILE:POS of the end of the source's binlog now.
  std::string BinlogEnd() {
    auto rows = p_.SourceQuery("SHOW MASTER STATUS");
    if (rows.empty() || rows[0].size() < 2) return "";
    return rows[0][0].value_or("") + ":" + rows[0][1].value_or("");
  }

  PipeTest p_;
};

TEST_P(StartModesTest, NeverFromNowStreamsOnlyLaterChanges) {
  ASSERT_TRUE(p_.connected());
  CreateTable();
  Insert(1, 5);
  CommandResult first = p_.Run({"--snapshot-mode", "never"});
  ASSERT_RUN_OK(first, "from now");
  EXPECT_NE(first.err.find("no table is copied; streaming from the end of the binlog now"), std::string::npos)
      << first.Describe();
  EXPECT_EQ(p_.DestTables().count("t"), 1u) << "the table is created, empty";
  EXPECT_EQ(DestRows(), "");

  // Rows written before the start were never copied: an UPDATE of one brings its after image, a
  // DELETE of one removes nothing ClickHouse has.
  Insert(6, 7);
  p_.ExecAll({"UPDATE t SET v = 'b1' WHERE id = 1", "DELETE FROM t WHERE id = 2",
              "UPDATE t SET v = 'b6' WHERE id = 6", "DELETE FROM t WHERE id = 7"});
  CommandResult second = p_.Run({"--snapshot-mode", "never"});
  ASSERT_RUN_OK(second, "from the checkpoint");
  EXPECT_NE(second.err.find("decides where the pipe resumes"), std::string::npos)
      << "a restart says the checkpoint decides\n"
      << second.Describe();
  EXPECT_EQ(DestRows(), "1=b1,6=b6");
}

TEST_P(StartModesTest, NeverFromAPositionAGtidAndATime) {
  ASSERT_TRUE(p_.connected());
  CreateTable();
  Insert(1, 3);
  const std::string position = BinlogEnd();
  ASSERT_FALSE(position.empty());
  const std::string gtid = p_.SourceValue("SELECT @@GLOBAL.gtid_binlog_pos");
  ASSERT_FALSE(gtid.empty()) << "the FULL server writes GTIDs";
  Insert(4, 6);
  // The server's own clock, in UTC; the batches a second and more apart on both sides, and in
  // binlog files of their own (the lookup reads the files' first events, then one file).
  p_.Exec("FLUSH BINARY LOGS");
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const std::string time = p_.SourceValue("SELECT UTC_TIMESTAMP()");
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  p_.Exec("FLUSH BINARY LOGS");
  Insert(7, 9);

  struct Case {
    std::string flag, value, rows;
  };
  const std::vector<Case> cases = {
      {"--start-position", position, "4=a4,5=a5,6=a6,7=a7,8=a8,9=a9"},
      {"--start-gtid", gtid, "4=a4,5=a5,6=a6,7=a7,8=a8,9=a9"},
      {"--start-time", time, "7=a7,8=a8,9=a9"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.flag + " " + c.value);
    CommandResult r = RunInNewState(p_.db() + ".*", {"--snapshot-mode", "never", c.flag, c.value});
    ASSERT_RUN_OK(r, c.flag);
    EXPECT_EQ(DestRows(), c.rows) << r.Describe();
  }
}

TEST_P(StartModesTest, AStartBeforeASchemaChangeOfAReplicatedTableIsRefused) {
  ASSERT_TRUE(p_.connected());
  CreateTable();
  p_.Exec("CREATE TABLE other (id INT PRIMARY KEY)");
  Insert(1, 3);
  const std::string position = BinlogEnd();
  const std::string gtid = p_.SourceValue("SELECT @@GLOBAL.gtid_binlog_pos");
  p_.ExecAll({"ALTER TABLE other ADD COLUMN w INT", "INSERT INTO other VALUES (1, 1)"});
  Insert(4, 4);
  // A change of a table that is not replicated does not matter.
  CommandResult fine =
      p_.RunTables(p_.db() + ".t", {"--snapshot-mode", "never", "--start-position", position});
  ASSERT_RUN_OK(fine, "across a change of another table");
  EXPECT_EQ(DestRows(), "4=a4");

  p_.ExecAll({"ALTER TABLE t ADD COLUMN w INT", "INSERT INTO t VALUES (5, 'a5', 5)"});
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--start-position", position}, {"--start-gtid", gtid}}) {
    SCOPED_TRACE(flag);
    CommandResult refused = RunInNewState(p_.db() + ".t", {"--snapshot-mode", "never", flag, value});
    EXPECT_EQ(refused.exit_code, 2) << refused.Describe();
    EXPECT_NE(refused.err.find("changed the replicated table " + p_.db() +
                               ".t: `ALTER TABLE t ADD COLUMN w INT` at "),
              std::string::npos)
        << refused.Describe();
    EXPECT_NE(refused.err.find("(GTID 0-"), std::string::npos) << refused.Describe();
    EXPECT_NE(refused.err.find("snapshot.mode initial"), std::string::npos) << refused.Describe();
  }
  // From after it, the same pipe starts.
  CommandResult after =
      RunInNewState(p_.db() + ".t", {"--snapshot-mode", "never", "--start-position", BinlogEnd()});
  ASSERT_RUN_OK(after, "after the change");
}

TEST_P(StartModesTest, OnlyCopiesAndExitsAndAnotherModeRefusesTheState) {
  ASSERT_TRUE(p_.connected());
  CreateTable();
  Insert(1, 200);
  CommandResult r = p_.Run({"--snapshot-mode", "only"});
  ASSERT_RUN_OK(r, "load only");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after a load-only run");
  EXPECT_NE(r.err.find("snapshot.mode only: every table is copied"), std::string::npos) << r.Describe();
  CommandResult status = p_.ChsyncStatus();
  EXPECT_NE(status.out.find("load only      the copy is complete"), std::string::npos) << status.Describe();

  p_.ExecAll({"DELETE FROM t WHERE id <= 10", "UPDATE t SET v = 'b' WHERE id = 50"});
  Insert(201, 220);
  for (const char* mode : {"initial", "never"}) {
    CommandResult refused = p_.Run({"--snapshot-mode", mode});
    EXPECT_EQ(refused.exit_code, 2) << mode << ": " << refused.Describe();
    EXPECT_NE(refused.err.find("holds a load-only copy (snapshot.mode only"), std::string::npos)
        << refused.Describe();
  }
  EXPECT_EQ(p_.DestCount("t"), "200") << "a refused run changes nothing";

  CommandResult again = p_.Run({"--snapshot-mode", "only"});
  ASSERT_RUN_OK(again, "load only again");
  EXPECT_NE(again.err.find("copying every table again"), std::string::npos) << again.Describe();
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after a second load-only run");
  EXPECT_EQ(p_.DestCount("t"), "210");
}

INSTANTIATE_TEST_SUITE_P(Destinations, StartModesTest, ::testing::Values(Dest::kServer, Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& info) {
                           return testing::DestName(info.param);
                         });

}  // namespace
}  // namespace chsync
