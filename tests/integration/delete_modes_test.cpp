// table_options' delete and history modes end to end (docs/mapping.md): `deletes: ignore` keeps
// the rows a DELETE or a TRUNCATE TABLE removes at the source, while an UPDATE still replaces its
// row (one that moves the row within the sorting key too).

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "pipe_compare.h"
#include "pipe_harness.h"
#include "test_env.h"

namespace chsync {
namespace {

using testing::CommandResult;
using testing::Dest;
using testing::MakeTempDir;
using testing::PipeTest;

constexpr int kServerIdBase = 21300000;

class DeleteModesTest : public ::testing::TestWithParam<Dest> {
 protected:
  void SetUp() override { p_.Init("CHSYNC_TEST_MYSQL_FULL", GetParam(), "dmode", kServerIdBase); }
  void TearDown() override { p_.Cleanup(); }

  /// Writes `yaml` (its "DB" replaced by the test database) to a config file; --config FILE.
  std::vector<std::string> Config(std::string yaml) {
    for (size_t at = yaml.find("DB."); at != std::string::npos; at = yaml.find("DB.", at)) {
      yaml.replace(at, 2, p_.db());
    }
    const std::string path = MakeTempDir("dmode-config") + "/chsync.yaml";
    std::ofstream(path) << yaml;
    return {"--config", path};
  }

  /// The live rows of ClickHouse table `table` (FINAL, not deleted) as "id:s" texts, by id.
  std::string LiveRows(const std::string& table) {
    std::string out;
    for (const auto& row : p_.DestQuery("SELECT id, s FROM " + p_.DestTable(table) +
                                        " FINAL WHERE _chsync_is_deleted = 0 ORDER BY id")) {
      if (!out.empty()) out += ' ';
      out += row.at(0).value_or("NULL") + ":" + row.at(1).value_or("NULL");
    }
    return out;
  }

  PipeTest p_;
};

TEST_P(DeleteModesTest, IgnoredDeletesKeepTheRowsAndUpdatesStillReplace) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20))",
              "CREATE TABLE u (id INT PRIMARY KEY, s VARCHAR(20))",
              "INSERT INTO t SELECT seq, CONCAT('a', seq) FROM seq_1_to_6",
              "INSERT INTO u SELECT seq, CONCAT('a', seq) FROM seq_1_to_6"});
  const std::vector<std::string> config = Config("table_options:\n  DB.t:\n    deletes: ignore\n");
  ASSERT_RUN_OK(p_.Run(config), "the snapshot");
  EXPECT_EQ(LiveRows("t"), "1:a1 2:a2 3:a3 4:a4 5:a5 6:a6");

  // Streaming: deletes, an update in place, an update of the key (the old key goes: an update, not a
  // delete), an update that changes nothing, inserts. u (soft deletes, the default) follows the source.
  for (const char* table : {"t", "u"}) {
    const std::string t = table;
    p_.ExecAll({"DELETE FROM " + t + " WHERE id <= 2", "UPDATE " + t + " SET s = 'b4' WHERE id = 4",
                "UPDATE " + t + " SET id = 50 WHERE id = 5", "UPDATE " + t + " SET s = s WHERE id = 6",
                "INSERT INTO " + t + " VALUES (7, 'a7')", "DELETE FROM " + t + " WHERE id = 7"});
  }
  CommandResult r = p_.Run(config);
  ASSERT_RUN_OK(r, "streaming deletes and updates");
  EXPECT_EQ(LiveRows("t"), "1:a1 2:a2 3:a3 4:b4 6:a6 7:a7 50:a5")
      << "deleted rows stay; the updated and the moved row replace theirs";
  EXPECT_EQUAL_TO_SOURCE(p_, "u", "a table with soft deletes beside");

  // TRUNCATE TABLE: the append-only table keeps its rows (logged), the other is emptied.
  p_.ExecAll({"TRUNCATE TABLE t", "TRUNCATE TABLE u", "INSERT INTO t VALUES (8, 'a8'), (3, 'c3')",
              "INSERT INTO u VALUES (8, 'a8')"});
  r = p_.Run(config);
  ASSERT_RUN_OK(r, "streaming a TRUNCATE");
  EXPECT_NE(r.err.find("not propagated (deletes: ignore, append-only)"), std::string::npos) << r.Describe();
  EXPECT_EQ(LiveRows("t"), "1:a1 2:a2 3:c3 4:b4 6:a6 7:a7 8:a8 50:a5");
  EXPECT_EQUAL_TO_SOURCE(p_, "u", "after its TRUNCATE");
}

TEST_P(DeleteModesTest, AnUnknownDeleteModeIsRefusedAtStart) {
  ASSERT_TRUE(p_.connected());
  p_.Exec("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20))");
  CommandResult r = p_.Run(Config("table_options:\n  DB.t:\n    deletes: hard\n"));
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  EXPECT_NE(r.err.find("deletes' must be soft"), std::string::npos) << r.Describe();
  EXPECT_TRUE(p_.DestTables().empty());
}

INSTANTIATE_TEST_SUITE_P(Destinations, DeleteModesTest, ::testing::Values(Dest::kServer, Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& info) {
                           return testing::DestName(info.param);
                         });

}  // namespace
}  // namespace chsync
