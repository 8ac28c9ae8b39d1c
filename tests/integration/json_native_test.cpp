// `json: native` end to end (docs/types.md): JSON columns of the source become ClickHouse JSON
// columns through the snapshot, streaming (inserts, updates, deletes), ADD COLUMN and MODIFY COLUMN
// to and from JSON, and `chsync verify` names them as not compared; on a ClickHouse without a
// production-ready JSON type (18.16) the pipe refuses to start, naming the table, the column, the
// server's version and what to do.

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

constexpr int kServerIdBase = 37440000;

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class JsonNativeTest : public ::testing::TestWithParam<Dest> {
 protected:
  void SetUp() override { p_.Init("CHSYNC_TEST_MYSQL_FULL", GetParam(), "jsonn", kServerIdBase); }
  void TearDown() override { p_.Cleanup(); }

  /// Writes `yaml` (its "DB" replaced by the test database) to a config file; --config FILE.
  std::vector<std::string> Config(std::string yaml) {
    for (size_t at = yaml.find("DB."); at != std::string::npos; at = yaml.find("DB.", at)) {
      yaml.replace(at, 2, p_.db());
    }
    const std::string path = MakeTempDir("jsonn-config") + "/chsync.yaml";
    std::ofstream(path) << yaml;
    config_path_ = path;
    return {"--config", path};
  }

  /// The live rows of `table` as "id=expr" texts, by id.
  std::string Live(const std::string& table, const std::string& expr) {
    std::string out;
    for (const auto& row : p_.DestQuery("SELECT id, " + expr + " FROM " + p_.DestTable(table) +
                                        " FINAL WHERE _chsync_is_deleted = 0 ORDER BY id")) {
      if (!out.empty()) out += '\n';
      out += row.at(0).value_or("NULL") + "=" + row.at(1).value_or("NULL");
    }
    return out;
  }

  std::string config_path_;
  PipeTest p_;
};

// The JSON type exists on the embedded store (26.7) only; ClickHouse 18.16 refuses json: native.
class JsonNativeOnNewServer : public JsonNativeTest {};
class JsonNativeOnOldServer : public JsonNativeTest {};

TEST_P(JsonNativeOnNewServer, JsonColumnsBecomeClickHouseJsonThroughSnapshotStreamAndSchemaChanges) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, doc JSON, opt JSON NOT NULL, s TEXT)",
              "INSERT INTO t VALUES (1, '{\"a\": {\"b\": 1}, \"tags\": [\"x\", \"y\"]}', '{}', 'p'), "
              "(2, NULL, '{\"n\": -1.5e3, \"u\": \"h\\\\u00e9 \\\\u4e2d\"}', '{\"q\": 1}'), "
              "(3, '[1, 2]', '\"text\"', 'r')"});
  const std::vector<std::string> config = Config("json: native\n");
  ASSERT_RUN_OK(p_.Run(config), "the snapshot");
  // The columns are ClickHouse JSON; a NULL stays NULL (Nullable(JSON)); a document that is not an
  // object is kept under _value.
  const auto columns = p_.DestColumns("t");
  EXPECT_EQ(columns.at("doc").first, "Nullable(JSON)");
  EXPECT_EQ(columns.at("opt").first, "JSON");
  EXPECT_EQ(columns.at("s").first, "Nullable(String)");
  EXPECT_EQ(Live("t", "doc.a.b"), "1=1\n2=NULL\n3=NULL");
  EXPECT_EQ(Live("t", "toJSONString(doc)"),
            "1={\"a\":{\"b\":1},\"tags\":[\"x\",\"y\"]}\n2=NULL\n3={\"_value\":[1,2]}");
  EXPECT_EQ(Live("t", "toJSONString(opt)"), "1={}\n2={\"n\":-1500,\"u\":\"hé 中\"}\n3={\"_value\":\"text\"}");

  // Streaming: inserts of nested objects, numbers, unicode and an empty object, updates, a delete.
  p_.ExecAll(
      {"INSERT INTO t VALUES (4, '{\"deep\": {\"er\": {\"est\": [true, false, null]}}, \"big\": "
       "18446744073709551615}', '{\"k\": \"ü\"}', NULL)",
       "INSERT INTO t VALUES (5, '{}', '{\"x\": 0.25}', NULL)",
       "UPDATE t SET doc = JSON_SET(doc, '$.a.b', 2) WHERE id = 1",
       "UPDATE t SET doc = '{\"now\": \"set\"}' WHERE id = 2", "DELETE FROM t WHERE id = 3"});
  ASSERT_RUN_OK(p_.Run(config), "streaming");
  EXPECT_EQ(Live("t", "toJSONString(doc)"),
            "1={\"a\":{\"b\":2},\"tags\":[\"x\",\"y\"]}\n2={\"now\":\"set\"}\n"
            "4={\"big\":18446744073709551615,\"deep\":{\"er\":{\"est\":[true,false,null]}}}\n5={}");
  EXPECT_EQ(Live("t", "doc.a.b"), "1=2\n2=NULL\n4=NULL\n5=NULL");
  EXPECT_EQ(Live("t", "opt.k"), "1=NULL\n2=NULL\n4=ü\n5=NULL");

  // ADD COLUMN of a JSON column; MODIFY a text column into JSON and a JSON column into text.
  p_.ExecAll({"ALTER TABLE t ADD COLUMN extra JSON", "UPDATE t SET extra = '{\"added\": [1]}' WHERE id = 1",
              "UPDATE t SET s = '{\"was\": \"text\"}'",
              "ALTER TABLE t MODIFY s LONGTEXT CHECK (json_valid(s))",
              "ALTER TABLE t MODIFY opt TEXT NOT NULL",
              "INSERT INTO t (id, doc, opt, s, extra) VALUES (6, '{\"six\": 6}', '{\"o\": 6}', '{\"s\": 6}', "
              "'{\"e\": 6}')"});
  ASSERT_RUN_OK(p_.Run(config), "the schema changes");
  const auto after = p_.DestColumns("t");
  EXPECT_EQ(after.at("extra").first, "Nullable(JSON)");
  EXPECT_EQ(after.at("s").first, "Nullable(JSON)");
  EXPECT_EQ(after.at("opt").first, "String");
  EXPECT_EQ(Live("t", "toJSONString(extra)"), "1={\"added\":[1]}\n2=NULL\n4=NULL\n5=NULL\n6={\"e\":6}");
  EXPECT_EQ(Live("t", "s.was"), "1=text\n2=text\n4=text\n5=text\n6=NULL");
  // Copied again as text: MariaDB's text as stored.
  EXPECT_EQ(Live("t", "opt"),
            "1={}\n2={\"n\": -1.5e3, \"u\": \"h\\u00e9 \\u4e2d\"}\n4={\"k\": \"ü\"}\n"
            "5={\"x\": 0.25}\n6={\"o\": 6}");

  // verify: equal, the JSON columns named as not compared (ClickHouse keeps paths, not text).
  CommandResult v = testing::RunCommand(
      {testing::ChsyncBinary(), "verify", "--source", p_.source_url(), "--dest", p_.dest_url(), "--tables",
       p_.db() + ".*", "--state", p_.state(), "--config", config_path_},
      300'000);
  EXPECT_EQ(v.exit_code, 0) << v.Describe();
  EXPECT_TRUE(Has(v.out, p_.db() + ".t: equal")) << v.Describe();
  EXPECT_TRUE(Has(v.out, "doc (longtext): not compared")) << v.Describe();
}

TEST_P(JsonNativeOnNewServer, PerTableChoiceOverThePipes) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE a (id INT PRIMARY KEY, doc JSON)",
              "CREATE TABLE b (id INT PRIMARY KEY, doc JSON)", "INSERT INTO a VALUES (1, '{\"k\": 1}')",
              "INSERT INTO b VALUES (1, '{\"k\":  1}')"});
  ASSERT_RUN_OK(p_.Run(Config("table_options:\n  DB.a:\n    json: native\n")), "the snapshot");
  EXPECT_EQ(p_.DestColumns("a").at("doc").first, "Nullable(JSON)");
  EXPECT_EQ(p_.DestColumns("b").at("doc").first, "Nullable(String)");
  EXPECT_EQ(Live("a", "doc.k"), "1=1");
  EXPECT_EQ(Live("b", "doc"), "1={\"k\":  1}");
  // Documents MariaDB's json_valid passes but ClickHouse's JSON cannot hold as they are: numbers
  // beyond Int64/UInt64/Float64 become strings of their digits, text that is not strict JSON is
  // kept as a string under _text; the pipe goes on.
  p_.ExecAll({"INSERT INTO a VALUES (2, '[2]')", "INSERT INTO b VALUES (2, '[2]')",
              "INSERT INTO a VALUES (3, '{\"big\": 123456789012345678901234567890, \"f\": 1e400}')",
              "INSERT INTO a VALUES (4, '{\"a\": 1.}')",
              "INSERT INTO a VALUES (5, '[1, 2, {\"c\": null}]')"});
  ASSERT_RUN_OK(p_.Run(Config("table_options:\n  DB.a:\n    json: native\n")), "streaming");
  EXPECT_EQ(
      Live("a", "toJSONString(doc)"),
      "1={\"k\":1}\n2={\"_value\":[2]}\n3={\"big\":\"123456789012345678901234567890\",\"f\":\"1e400\"}\n"
      "4={\"_text\":\"{\\\"a\\\": 1.}\"}\n5={\"_value\":[1,2,{}]}");
  EXPECT_EQ(Live("b", "doc"), "1={\"k\":  1}\n2=[2]");
}

TEST_P(JsonNativeOnOldServer, RefusedWhereTheServerLacksTheJsonType) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, doc JSON)", "INSERT INTO t VALUES (1, '{}')"});
  CommandResult r = p_.Run(Config("json: native\n"));
  EXPECT_NE(r.exit_code, 0) << r.Describe();
  const std::string text = r.out + r.err;
  EXPECT_TRUE(Has(text, "table " + p_.db() + ".t: column doc")) << r.Describe();
  EXPECT_TRUE(Has(text, "json: native needs the ClickHouse JSON type, production-ready from ClickHouse 25.3"))
      << r.Describe();
  EXPECT_TRUE(Has(text, "this server is 18.16")) << r.Describe();
  EXPECT_TRUE(Has(text, "set json: string")) << r.Describe();
  EXPECT_TRUE(p_.DestTables().empty() || !p_.DestTables().contains("t")) << "no table was created";
  // json: string (the default) replicates the table as text on the same server.
  ASSERT_RUN_OK(p_.Run(Config("json: string\n")), "with json: string");
  EXPECT_EQ(Live("t", "doc"), "1={}");
}

INSTANTIATE_TEST_SUITE_P(Destinations, JsonNativeOnNewServer, ::testing::Values(Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& info) {
                           return testing::DestName(info.param);
                         });
INSTANTIATE_TEST_SUITE_P(Destinations, JsonNativeOnOldServer, ::testing::Values(Dest::kServer),
                         [](const ::testing::TestParamInfo<Dest>& info) {
                           return testing::DestName(info.param);
                         });

}  // namespace
}  // namespace chsync
