// `table_options:` end to end (docs/mapping.md): the ClickHouse table options of a config file in
// the tables the pipe creates (snapshot, ADD COLUMN while streaming), and the start-up checks that
// refuse a bad mapping (exit 2) before any table is created; excluded and renamed columns through
// snapshot, streaming, DDL and a table rename, in both row-metadata modes; destination database and
// table names through DDL, renames, a table swap and a change of the file.

#include <gtest/gtest.h>

#include <fstream>
#include <set>
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

// Issue 33, case 3 (seen: 3 live rows for 2 keys, then exit 2 at the next start). The key of
// the ClickHouse table, not the configuration's text, decides which updates move a row: a column of
// ORDER BY renamed at the source keeps its ClickHouse name, and an update of it after the rename must
// still replace the old row; a restart must accept the options that name the ClickHouse column.
TEST_P(TableOptionsTest, AnOrderByColumnRenamedAtTheSourceStillMovesItsRows) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, region VARCHAR(10) NOT NULL, v INT)",
              "INSERT INTO t VALUES (1, 'eu', 1), (2, 'us', 2)"});
  const std::vector<std::string> config = Config("table_options:\n  DB.t:\n    order_by: \"(region, id)\"\n");
  CommandResult r = p_.Run(config);
  ASSERT_RUN_OK(r, "the snapshot");
  p_.ExecAll({"ALTER TABLE t RENAME COLUMN region TO area", "UPDATE t SET area = 'apac' WHERE id = 1",
              "UPDATE t SET v = 20 WHERE id = 2"});
  r = p_.Run(config);
  ASSERT_RUN_OK(r, "after the rename");
  EXPECT_EQ(p_.DestCount("t"), "2") << "one live row per key";
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after an update of the renamed ORDER BY column");
  p_.ExecAll({"UPDATE t SET area = 'eu' WHERE id = 2"});
  r = p_.Run(config);
  ASSERT_RUN_OK(r, "a restart after the rename");
  EXPECT_EQ(p_.DestCount("t"), "2") << "one live row per key";
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after a restart");
}

/// Issue 33, case 3: a Nullable column that ORDER BY reads as isNull(c), assumeNotNull(c), dropped at
/// the source. Kept in ClickHouse, it would be NULL in every later row, and an updated row would
/// stand twice in FINAL (its old version under the old value, its new one under NULL). The table is
/// parked instead, rows owed; with the column out of order_by, a resync brings it back.
TEST_P(TableOptionsTest, AnOrderByColumnDroppedAtTheSourceParksTheTable) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, region VARCHAR(10), v INT)",
              "CREATE TABLE other (id INT PRIMARY KEY, v INT)",
              "INSERT INTO t VALUES (1, 'eu', 1), (2, NULL, 2)", "INSERT INTO other VALUES (1, 1)"});
  const std::vector<std::string> config =
      Config("table_options:\n  DB.t:\n    order_by: \"(isNull(region), assumeNotNull(region), id)\"\n");
  ASSERT_RUN_OK(p_.Run(config), "the snapshot");
  p_.ExecAll({"ALTER TABLE t DROP COLUMN region", "UPDATE t SET v = 10 WHERE id = 1",
              "UPDATE other SET v = 10 WHERE id = 1"});
  CommandResult r = p_.Run(config);
  ASSERT_RUN_OK(r, "after the drop");
  EXPECT_NE(r.err.find("drops column `region`, which the ClickHouse table's ORDER BY or PARTITION BY reads"),
            std::string::npos)
      << r.Describe();
  CommandResult status = p_.ChsyncStatus();
  EXPECT_NE(status.out.find(p_.db() + ".t  parked"), std::string::npos) << status.Describe();
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.DestTable("t") + " FINAL WHERE _chsync_is_deleted = 0"),
            "2")
      << "one live row per key";
  EXPECT_EQUAL_TO_SOURCE(p_, "other", "while t is parked");

  const std::vector<std::string> fixed = Config("table_options:\n  DB.t:\n    order_by: id\n");
  std::vector<std::string> resync = p_.RunArgs(p_.db() + ".*", /*until_caught_up=*/true, fixed);
  resync[1] = "resync";
  resync.insert(resync.end(), {"--table", p_.db() + ".t"});
  ASSERT_RUN_OK(testing::RunCommand(resync, 300000), "the resync without region in order_by");
  p_.Exec("UPDATE t SET v = 20 WHERE id = 2");
  ASSERT_RUN_OK(p_.Run(fixed), "after the resync");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after the resync");
}

/// Excluded and renamed columns through a snapshot, streaming, ADD COLUMN of an excluded name, a
/// RENAME COLUMN of an excluded column and a RENAME TABLE: the kept columns equal the source, and
/// no excluded value reaches ClickHouse (not as a column, not in any stored value).
void ExpectColumnsMapped(PipeTest& p, const std::vector<std::string>& run_extra) {
  p.ExecAll(
      {"CREATE TABLE t (id INT PRIMARY KEY, cust_id INT NOT NULL, email VARCHAR(64), s VARCHAR(20), "
       "ssn CHAR(11) NOT NULL DEFAULT '')",
       "INSERT INTO t SELECT seq, seq % 40, CONCAT('secret-mail-', seq), CONCAT('s', seq % 3), "
       "CONCAT('secret-', seq) FROM seq_1_to_300"});
  const std::string yaml =
      "table_options:\n"
      "  DB.t:\n"
      "    exclude_columns: [email, ssn]\n"
      "    rename_columns: {cust_id: customer_id}\n"
      "  \"DB.*\":\n"  // a pattern entry: phone is added later
      "    exclude_columns: [phone]\n";
  std::string text = yaml;
  for (size_t at = text.find("DB."); at != std::string::npos; at = text.find("DB.", at))
    text.replace(at, 2, p.db());
  const std::string path = MakeTempDir("topt-map") + "/chsync.yaml";
  std::ofstream(path) << text;
  std::vector<std::string> config{"--config", path};
  config.insert(config.end(), run_extra.begin(), run_extra.end());

  auto columns_of = [&](const std::string& table) {
    std::set<std::string> names;
    for (const auto& row : p.DestQuery("SELECT name FROM system.columns WHERE database = '" + p.db() +
                                       "' AND table = '" + table + "' AND name NOT LIKE '\\_chsync\\_%'")) {
      if (!row.empty() && row[0]) names.insert(*row[0]);
    }
    return names;
  };
  auto expect_equal = [&](const std::string& source_table, const std::string& dest_table,
                          const std::string& when) {
    testing::CompareOptions options;
    options.ignore_columns = {"email", "ssn", "ssn_old", "cust_id", "phone"};
    EXPECT_EQ(p.Compare(dest_table == source_table ? source_table : dest_table, options), "") << when;
    std::string source;
    for (const auto& row : p.SourceQuery("SELECT id, cust_id FROM " + source_table + " ORDER BY id"))
      source += row[0].value_or("NULL") + ":" + row[1].value_or("NULL") + ",";
    std::string dest;
    for (const auto& row : p.DestQuery("SELECT id, customer_id FROM " + p.DestTable(dest_table) +
                                       " FINAL WHERE _chsync_is_deleted = 0 ORDER BY id"))
      dest += row[0].value_or("NULL") + ":" + row[1].value_or("NULL") + ",";
    EXPECT_EQ(dest, source) << when << ": cust_id must arrive as customer_id";
  };
  // No stored value of any column holds an excluded value.
  auto expect_no_secret = [&](const std::string& table, const std::string& when) {
    for (const auto& row : p.DestQuery("SELECT name FROM system.columns WHERE database = '" + p.db() +
                                       "' AND table = '" + table + "'")) {
      const std::string column = row[0].value_or("");
      EXPECT_EQ(p.DestValue("SELECT count() FROM " + p.DestTable(table) + " WHERE position(toString(`" +
                            column + "`), 'secret') > 0"),
                "0")
          << when << ": column " << column;
    }
  };

  CommandResult r = p.Run(config);
  ASSERT_RUN_OK(r, "(snapshot) with excluded and renamed columns");
  EXPECT_EQ(columns_of("t"), (std::set<std::string>{"id", "customer_id", "s"}));
  expect_equal("t", "t", "after the snapshot");
  expect_no_secret("t", "after the snapshot");

  p.ExecAll(
      {"INSERT INTO t SELECT seq, seq % 40, CONCAT('secret-mail-', seq), 'new', CONCAT('secret-', seq) "
       "FROM seq_301_to_400",
       "UPDATE t SET email = CONCAT('secret-changed-', id), cust_id = cust_id + 100 WHERE id % 5 = 0",
       "UPDATE t SET ssn = 'secret-only' WHERE id % 7 = 0",  // a change of excluded columns only
       "DELETE FROM t WHERE id BETWEEN 10 AND 20",
       "ALTER TABLE t ADD COLUMN phone VARCHAR(20) NOT NULL DEFAULT 'secret-phone'",
       "UPDATE t SET phone = CONCAT('secret-p', id) WHERE id % 3 = 0",
       "ALTER TABLE t RENAME COLUMN ssn TO ssn_old", "UPDATE t SET ssn_old = 'secret-agn' WHERE id < 50",
       "ALTER TABLE t ADD COLUMN note VARCHAR(10) NOT NULL DEFAULT 'n'",
       "ALTER TABLE t MODIFY email VARCHAR(200)", "UPDATE t SET note = 'm', s = 'u' WHERE id % 4 = 0"});
  r = p.Run(config);
  ASSERT_RUN_OK(r, "(streaming) with excluded and renamed columns");
  EXPECT_EQ(columns_of("t"), (std::set<std::string>{"id", "customer_id", "s", "note"}));
  expect_equal("t", "t", "after streaming");
  expect_no_secret("t", "after streaming");

  p.ExecAll({"RENAME TABLE t TO t2",
             "UPDATE t2 SET email = 'secret-renamed', ssn_old = 'secret-r', "
             "phone = 'secret-r', cust_id = 7 WHERE id % 2 = 0",
             "INSERT INTO t2 (id, cust_id, email, s) VALUES (1000, 9, 'secret-new', 'x')"});
  r = p.Run(config);
  ASSERT_RUN_OK(r, "(streaming) after RENAME TABLE");
  EXPECT_EQ(columns_of("t2"), (std::set<std::string>{"id", "customer_id", "s", "note"}));
  expect_equal("t2", "t2", "after RENAME TABLE");
  expect_no_secret("t2", "after RENAME TABLE");
  // The statements chsync sent never carried an excluded value either (the server's query log,
  // where it keeps one).
  const std::string logged =
      p.DestValue("SELECT count() FROM system.tables WHERE database = 'system' AND name = 'query_log'");
  if (logged == "1") {
    EXPECT_EQ(p.DestValue("SELECT count() FROM system.query_log WHERE position(query, 'secret-') > 0 AND "
                          "position(query, 'query_log') = 0 AND position(query, 'toString') = 0"),
              "0");
  }
}

TEST_P(TableOptionsTest, ExcludedAndRenamedColumnsEndToEnd) {
  ASSERT_TRUE(p_.connected());
  ExpectColumnsMapped(p_, {});
}

/// chsync's CREATE TABLE for the source's `ddl` (as `chsync explain-ddl` prints it), for a test to
/// create the table itself the way a user would.
std::string ChsyncCreateTable(const PipeTest& p, const std::string& ddl, int dest_version) {
  const std::string dir = MakeTempDir("topt-adopt");
  std::ofstream(dir + "/t.sql") << ddl << ";\n";
  const std::string version = std::to_string(dest_version / 100) + "." + std::to_string(dest_version % 100);
  CommandResult r = testing::RunCommand({testing::ChsyncBinary(), "explain-ddl", "--clickhouse-version",
                                         version, "--database", p.db(), dir + "/t.sql"},
                                        60000);
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  const size_t at = r.out.find("clickhouse: CREATE TABLE");
  if (at == std::string::npos) return "";
  size_t end = r.out.find("\nlog:", at);
  return r.out.substr(at + std::string("clickhouse: ").size(),
                      end == std::string::npos ? end : end - at - 12);
}

TEST_P(TableOptionsTest, AdoptsATableTheUserCreatedOrNamesEveryDifference) {
  ASSERT_TRUE(p_.connected());
  const std::string ddl = "CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20), n INT NOT NULL)";
  p_.ExecAll({ddl, "INSERT INTO t SELECT seq, CONCAT('s', seq), seq * 2 FROM seq_1_to_200"});
  const std::string create = ChsyncCreateTable(p_, ddl, p_.DestVersion());
  ASSERT_NE(create.find("`n` Int32"), std::string::npos) << create;
  p_.DestQuery("CREATE DATABASE IF NOT EXISTS `" + p_.db() + "`");
  const std::vector<std::string> config = Config("table_options:\n  DB.t:\n    adopt: true\n");

  // A wrong type: refused before anything is copied, naming the table and the column.
  std::string wrong = create;
  wrong.replace(wrong.find("`n` Int32"), 9, "`n` Int64");
  p_.DestQuery(wrong);
  CommandResult r = p_.Run(config);
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  for (const std::string& w :
       {std::string("cannot adopt"), p_.db() + ".t", std::string("column n"), std::string("Int64")}) {
    EXPECT_NE(r.err.find(w), std::string::npos) << w << ":\n" << r.Describe();
  }
  p_.DestQuery("DROP TABLE " + p_.DestTable("t"));

  // The right table with a column of the user's own (with a DEFAULT), holding a row: refused too.
  std::string mine = create;
  mine.replace(mine.find("`n` Int32"), 9, "`n` Int32,\n  `loaded_by` String DEFAULT 'etl'");
  p_.DestQuery(mine);
  p_.DestQuery("INSERT INTO " + p_.DestTable("t") + " (id, n) VALUES (999, 1)");
  r = p_.Run(config);
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  EXPECT_NE(r.err.find("holds 1 rows"), std::string::npos) << r.Describe();
  p_.DestQuery("TRUNCATE TABLE " + p_.DestTable("t"));

  // Empty: adopted, copied into and streamed into; the user's column stays.
  ASSERT_RUN_OK(p_.Run(config), "(snapshot) adopting the table");
  p_.ExecAll({"UPDATE t SET n = n + 1 WHERE id % 3 = 0", "DELETE FROM t WHERE id < 5",
              "ALTER TABLE t ADD COLUMN c VARCHAR(5) NOT NULL DEFAULT 'x'",
              "INSERT INTO t VALUES (500, 'z', 1, 'y')"});
  ASSERT_RUN_OK(p_.Run(config), "(streaming) into the adopted table");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "in the adopted table");
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.DestTable("t") +
                         " FINAL WHERE loaded_by = 'etl' AND "
                         "_chsync_is_deleted = 0"),
            p_.SourceValue("SELECT count(*) FROM t"));
}

// ClickHouse 26.7 has CODEC, TTL and LowCardinality: the 18.16 server only.
class TableOptionsOldServerTest : public TableOptionsTest {};

TEST_P(TableOptionsOldServerTest, OptionsTheServerLacksAreRefused) {
  ASSERT_TRUE(p_.connected());
  ASSERT_FALSE(Modern()) << "a ClickHouse without CODEC and TTL (18.16)";
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
  ExpectRefused("table_options:\n  DB.t:\n    exclude_columns: [nope]\n", {p_.db() + ".t", "nope"});
  ExpectRefused("table_options:\n  DB.t:\n    exclude_columns: [id]\n", {p_.db() + ".t", "id"});
  ExpectRefused("table_options:\n  DB.t:\n    rename_columns: {s: g}\n", {p_.db() + ".t", "g"});
  p_.Exec("CREATE TABLE u (id INT PRIMARY KEY)");
  ExpectRefused("table_options:\n  DB.t:\n    dest_table: one\n  DB.u:\n    dest_table: one\n",
                {p_.db() + ".t", p_.db() + ".u", p_.db() + ".one", "both"});
}

TEST_P(TableOptionsTest, DestinationNamesFollowTheTableThroughDdlRenamesAndASwap) {
  ASSERT_TRUE(p_.connected());
  const std::string other = p_.db() + "_an";  // a second ClickHouse database
  struct DropOther {
    const PipeTest& p;
    std::string db;
    ~DropOther() {
      if (p.dest() == Dest::kServer) (void)p.DestQuery("DROP DATABASE IF EXISTS " + db);
    }
  } drop_other{p_, other};
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20), n INT NOT NULL, pii VARCHAR(30))",
              "INSERT INTO t SELECT seq, CONCAT('s', seq), seq * 2, CONCAT('secret-', seq) FROM seq_1_to_300",
              "CREATE TABLE u1 (id INT PRIMARY KEY, v VARCHAR(10))",
              "INSERT INTO u1 SELECT seq, CONCAT('v', seq) FROM seq_1_to_50"});
  auto config_for = [&](const std::string& t_dest) {
    std::string yaml = "table_options:\n  DB.t:\n    dest: " + other + "." + t_dest +
                       "\n    exclude_columns: [pii]\n  \"DB.u*\":\n    dest_table: \"{table}_ch\"\n";
    return Config(yaml);
  };
  auto expect_equal = [&](const std::string& table, const std::string& database, const std::string& dest,
                          const std::string& when) {
    testing::CompareOptions options;
    options.dest_database = database;
    options.dest_table = dest;
    options.ignore_columns = {"pii"};
    EXPECT_EQ(p_.Compare(table, options), "") << table << " → " << database << "." << dest << " " << when;
  };
  auto tables_in = [&](const std::string& database) {
    std::set<std::string> names;
    for (const auto& row : p_.DestQuery("SELECT name FROM system.tables WHERE database = '" + database +
                                        "' AND name NOT LIKE '\\_chsync\\_%'"))
      if (!row.empty() && row[0]) names.insert(*row[0]);
    return names;
  };

  std::vector<std::string> config = config_for("orders_v2");
  // `chsync check --config` shows each table's effective mapping, and what is wrong with one.
  auto check = [&](const std::vector<std::string>& with) {
    std::vector<std::string> args{
        testing::ChsyncBinary(), "check",    "--source",    p_.source_url(), "--dest",
        p_.dest_url(),           "--tables", p_.db() + ".*"};
    args.insert(args.end(), with.begin(), with.end());
    return testing::RunCommand(args, 60000);
  };
  CommandResult checked = check(config);
  EXPECT_EQ(checked.exit_code, 0) << checked.Describe();
  EXPECT_NE(checked.out.find(p_.db() + ".t → " + other + ".orders_v2"), std::string::npos)
      << checked.Describe();
  EXPECT_NE(checked.out.find(p_.db() + ".u1 → " + p_.db() + ".u1_ch"), std::string::npos)
      << checked.Describe();
  checked = check(Config("table_options:\n  DB.t:\n    exclude_columns: [nope]\n"));
  EXPECT_EQ(checked.exit_code, 1) << checked.Describe();
  EXPECT_NE(checked.out.find("nope"), std::string::npos) << checked.Describe();

  ASSERT_RUN_OK(p_.Run(config), "(snapshot) with dest and dest_table");
  EXPECT_EQ(tables_in(other), (std::set<std::string>{"orders_v2"}));
  EXPECT_EQ(tables_in(p_.db()), (std::set<std::string>{"u1_ch"}));
  expect_equal("t", other, "orders_v2", "after the snapshot");
  expect_equal("u1", p_.db(), "u1_ch", "after the snapshot");

  // Rows, a column added, a table created at the source and a rename, all while streaming.
  p_.ExecAll({"INSERT INTO t SELECT seq, 'new', seq, 'secret-new' FROM seq_301_to_350",
              "UPDATE t SET n = n + 1 WHERE id % 3 = 0", "DELETE FROM t WHERE id BETWEEN 10 AND 19",
              "ALTER TABLE t ADD COLUMN note VARCHAR(10) NOT NULL DEFAULT 'x'",
              "UPDATE t SET note = 'y' WHERE id % 4 = 0", "TRUNCATE TABLE u1",
              "INSERT INTO u1 VALUES (1, 'again')", "CREATE TABLE u2 (id INT PRIMARY KEY, w INT)",
              "INSERT INTO u2 SELECT seq, seq FROM seq_1_to_20", "RENAME TABLE u1 TO u3",
              "UPDATE u3 SET v = 'renamed'"});
  ASSERT_RUN_OK(p_.Run(config), "(streaming) with dest and dest_table");
  EXPECT_EQ(tables_in(p_.db()), (std::set<std::string>{"u2_ch", "u3_ch"}));
  expect_equal("t", other, "orders_v2", "after streaming");
  expect_equal("u2", p_.db(), "u2_ch", "after CREATE TABLE");
  expect_equal("u3", p_.db(), "u3_ch", "after RENAME TABLE u1 TO u3");
  EXPECT_EQ(p_.DestValue("SELECT count() FROM system.columns WHERE database = '" + other +
                         "' AND table = 'orders_v2' AND name = 'note'"),
            "1");

  // An online schema change the way pt-online-schema-change makes it: the shadow table's rows
  // become t's, and t's ClickHouse table stays where table_options put it. The shadow takes t's
  // options: its excluded column never reaches ClickHouse.
  p_.ExecAll({"CREATE TABLE _t_new LIKE t", "ALTER TABLE _t_new MODIFY s VARCHAR(40)",
              "INSERT INTO _t_new SELECT * FROM t", "RENAME TABLE t TO _t_old, _t_new TO t",
              "DROP TABLE _t_old", "INSERT INTO t VALUES (1000, 'after the swap', 1, 'secret-swap', 'z')"});
  CommandResult swapped = p_.Run(config);
  ASSERT_RUN_OK(swapped, "(streaming) after a table swap");
  EXPECT_EQ(tables_in(other), (std::set<std::string>{"orders_v2"}));
  expect_equal("t", other, "orders_v2", "after the swap");
  EXPECT_NE(swapped.err.find("_orders_v2_new"), std::string::npos) << swapped.Describe();
  EXPECT_EQ(p_.DestValue("SELECT count() FROM system.columns WHERE database IN ('" + other + "', '" +
                         p_.db() + "') AND name = 'pii'"),
            "0");
  if (p_.DestValue("SELECT count() FROM system.tables WHERE database = 'system' AND name = 'query_log'") ==
      "1") {
    EXPECT_EQ(p_.DestValue("SELECT count() FROM system.query_log WHERE position(query, 'secret-') > 0 AND "
                           "position(query, 'query_log') = 0"),
              "0");
  }

  // The file moved the table elsewhere: the restart renames its ClickHouse table there.
  config = config_for("orders_v3");
  p_.Exec("UPDATE t SET n = 0 WHERE id < 5");
  CommandResult r = p_.Run(config);
  ASSERT_RUN_OK(r, "after dest changed in the file");
  EXPECT_NE(r.err.find(other + ".orders_v3"), std::string::npos) << r.Describe();
  EXPECT_EQ(tables_in(other), (std::set<std::string>{"orders_v3"}));
  expect_equal("t", other, "orders_v3", "after dest changed in the file");
}

TEST_P(TableOptionsTest, AnExclusionAddedLaterIsRefusedUntilTheTableIsCopiedAgain) {
  ASSERT_TRUE(p_.connected());
  CreateTable();
  ASSERT_RUN_OK(p_.Run(), "without table_options");
  const std::vector<std::string> config =
      Config("table_options:\n  DB.t:\n    exclude_columns: [s]\n    rename_columns: {d: day}\n");
  CommandResult r = p_.Run(config);
  EXPECT_EQ(r.exit_code, 2) << r.Describe();
  EXPECT_NE(r.err.find("resync"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find(p_.db() + ".t"), std::string::npos) << r.Describe();
  // As the message says: the table copied again without the column, and the pipe runs on.
  std::vector<std::string> resync = p_.RunArgs(p_.db() + ".*", /*until_caught_up=*/true, config);
  resync[1] = "resync";
  resync.insert(resync.end(), {"--table", p_.db() + ".t"});
  r = testing::RunCommand(resync, 300000);
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  p_.Exec("UPDATE t SET s = 'later' WHERE id < 10");
  ASSERT_RUN_OK(p_.Run(config), "after the resync");
  EXPECT_EQ(p_.DestValue("SELECT count() FROM system.columns WHERE database = '" + p_.db() +
                         "' AND table = 't' AND name = 's'"),
            "0");
  EXPECT_EQ(p_.DestValue("SELECT count() FROM system.columns WHERE database = '" + p_.db() +
                         "' AND table = 't' AND name = 'day'"),
            "1");
  testing::CompareOptions options;
  options.ignore_columns = {"s", "d"};
  EXPECT_EQ(p_.Compare("t", options), "");
  EXPECT_EQ(p_.DestValue("SELECT sum(toUInt32(day)) FROM " + p_.DestTable("t") +
                         " FINAL WHERE _chsync_is_deleted = 0"),
            p_.DestValue("SELECT sum(toUInt32(toDate('2024-01-01') + number + 1)) FROM numbers(500)"));
}

/// Ordinal mode (binlog_row_metadata=MINIMAL): rows are matched by position, and the excluded
/// columns' positions are skipped.
class OrdinalTableOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    p_.Init("CHSYNC_TEST_MYSQL_MINIMAL", Dest::kServer, "toptmin", kServerIdBase + 500000);
  }
  void TearDown() override { p_.Cleanup(); }
  PipeTest p_;
};

TEST_F(OrdinalTableOptionsTest, ExcludedAndRenamedColumnsEndToEnd) {
  ASSERT_TRUE(p_.connected());
  ExpectColumnsMapped(p_, {});
}

INSTANTIATE_TEST_SUITE_P(Destinations, TableOptionsTest, ::testing::Values(Dest::kServer, Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& info) {
                           return testing::DestName(info.param);
                         });
INSTANTIATE_TEST_SUITE_P(Destinations, TableOptionsOldServerTest, ::testing::Values(Dest::kServer),
                         [](const ::testing::TestParamInfo<Dest>& info) {
                           return testing::DestName(info.param);
                         });

}  // namespace
}  // namespace chsync
