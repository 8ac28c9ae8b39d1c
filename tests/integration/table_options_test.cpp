// `table_options:` end to end (docs/mapping.md): the ClickHouse table options of a config file in
// the tables the pipe creates (snapshot, ADD COLUMN while streaming), and the start-up checks that
// refuse a bad or not yet applied mapping (exit 2) before any table is created.

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

constexpr int kServerIdBase = 17600000;

class TableOptionsTest : public ::testing::TestWithParam<Dest> {
 protected:
  void SetUp() override { p_.Init("CHSYNC_TEST_MYSQL_FULL", GetParam(), "topt", kServerIdBase); }
  void TearDown() override { p_.Cleanup(); }

  /// ClickHouse 26.7 (the embedded store): CODEC, TTL and LowCardinality are available.
  bool Modern() const { return p_.DestVersion() >= 1903; }

  /// Writes `yaml` (its "DB" replaced by the test database) to a config file; --config FILE.
  std::vector<std::string> Config(std::string yaml) {
    for (size_t at = yaml.find("DB."); at != std::string::npos; at = yaml.find("DB.", at)) {
      yaml.replace(at, 2, p_.db());
    }
    const std::string path = MakeTempDir("topt-config") + "/chsync.yaml";
    std::ofstream(path) << yaml;
    return {"--config", path};
  }

  void CreateTable() {
    p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, g INT NOT NULL, s VARCHAR(20), d DATE NOT NULL)",
                "INSERT INTO t SELECT seq, seq % 250, CONCAT('s', seq % 3), '2024-01-01' + INTERVAL seq DAY "
                "FROM seq_1_to_500"});
  }

  /// Runs with `yaml`, which must be refused at start-up (exit 2) with a message holding `wanted`,
  /// before any ClickHouse table exists.
  void ExpectRefused(const std::string& yaml, const std::vector<std::string>& wanted) {
    CommandResult r = p_.Run(Config(yaml));
    EXPECT_EQ(r.exit_code, 2) << r.Describe();
    for (const std::string& w : wanted)
      EXPECT_NE(r.err.find(w), std::string::npos) << w << ":\n" << r.Describe();
    EXPECT_TRUE(p_.DestTables().empty()) << "no table may be created before the options are checked";
  }

  PipeTest p_;
};

TEST_P(TableOptionsTest, OptionsShapeTheTablesThePipeCreates) {
  ASSERT_TRUE(p_.connected());
  CreateTable();
  const bool modern = Modern();
  std::string yaml =
      "table_options:\n"
      "  DB.t:\n"
      "    order_by: \"(id, g)\"\n"
      "    partition_by: \"intDiv(g, 100)\"\n"
      "    settings: {index_granularity: 1024}\n";
  if (modern) {
    yaml +=
        "    ttl: \"d + toIntervalYear(100)\"\n"
        "    columns:\n"
        "      s: {low_cardinality: true, codec: \"ZSTD(3)\"}\n"
        "  \"DB.t*\":\n"  // a column added later: a pattern entry (an exact one requires the column)
        "    columns:\n"
        "      c: {low_cardinality: true, codec: \"LZ4HC(9)\"}\n";
  }
  const std::vector<std::string> config = Config(yaml);
  CommandResult r = p_.Run(config);
  ASSERT_RUN_OK(r, "(snapshot) with table_options");

  // Streaming: an UPDATE that moves rows within ORDER BY and across partitions, a DELETE, and an
  // ADD COLUMN of a configured column.
  p_.ExecAll({"UPDATE t SET g = g + 120 WHERE id <= 40", "DELETE FROM t WHERE id BETWEEN 41 AND 60",
              "INSERT INTO t SELECT seq, seq % 250, 'new', '2025-01-01' FROM seq_501_to_600",
              "ALTER TABLE t ADD COLUMN c VARCHAR(8) NOT NULL DEFAULT 'x'",
              "UPDATE t SET c = CONCAT('c', id % 2), g = g + 1 WHERE id % 7 = 0"});
  r = p_.Run(config);
  ASSERT_RUN_OK(r, "(streaming) with table_options");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after streaming with table_options");

  const std::string table_filter = "database = '" + p_.db() + "' AND name = 't'";
  EXPECT_EQ(p_.DestValue("SELECT sorting_key FROM system.tables WHERE " + table_filter), "id, g");
  EXPECT_EQ(p_.DestValue("SELECT partition_key FROM system.tables WHERE " + table_filter), "intDiv(g, 100)");
  const std::string engine = p_.DestValue("SELECT engine_full FROM system.tables WHERE " + table_filter);
  EXPECT_NE(engine.find("index_granularity = 1024"), std::string::npos) << engine;
  if (modern) {
    EXPECT_NE(engine.find("TTL d + toIntervalYear(100)"), std::string::npos) << engine;
    auto column = [&](const std::string& name, const std::string& field) {
      return p_.DestValue("SELECT " + field + " FROM system.columns WHERE database = '" + p_.db() +
                          "' AND table = 't' AND name = '" + name + "'");
    };
    EXPECT_EQ(column("s", "type"), "LowCardinality(Nullable(String))");
    EXPECT_EQ(column("s", "compression_codec"), "CODEC(ZSTD(3))");
    EXPECT_EQ(column("c", "type"), "LowCardinality(String)");
    EXPECT_EQ(column("c", "compression_codec"), "CODEC(LZ4HC(9))");
  }
}

TEST_P(TableOptionsTest, OptionsTheServerLacksAreRefused) {
  ASSERT_TRUE(p_.connected());
  if (Modern()) GTEST_SKIP() << "ClickHouse 26.7 has CODEC, TTL and LowCardinality";
  CreateTable();
  ExpectRefused("table_options:\n  DB.t:\n    columns:\n      s: {codec: \"ZSTD(3)\"}\n",
                {"CODEC", "18.16", "table " + p_.db() + ".t"});
  ExpectRefused("table_options:\n  DB.t:\n    ttl: \"d + toIntervalYear(100)\"\n", {"TTL", "18.16"});
}

TEST_P(TableOptionsTest, BadMappingsAreRefusedAtStartUp) {
  ASSERT_TRUE(p_.connected());
  CreateTable();
  ExpectRefused("table_options:\n  DB.t:\n    order_by: \"(g, d)\"\n", {p_.db() + ".t", "id"});
  ExpectRefused("table_options:\n  DB.t:\n    columns:\n      nope: {codec: \"ZSTD(3)\"}\n",
                {p_.db() + ".t", "nope"});
  ExpectRefused("table_options:\n  DB.t:\n    exclude_columns: [s]\n",
                {p_.db() + ".t", "exclude_columns", "not available yet"});
}

INSTANTIATE_TEST_SUITE_P(Destinations, TableOptionsTest, ::testing::Values(Dest::kServer, Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& info) {
                           return testing::DestName(info.param);
                         });

}  // namespace
}  // namespace chsync
