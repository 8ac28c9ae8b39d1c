// Runs the built `chsync explain-ddl --clickhouse-version` (registered by src/cli/explain_ddl.cmake)
// and checks what it says the pipe would do in ClickHouse.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "common/test_util.h"

namespace {

using chsync::test::CommandRun;
using chsync::test::Has;

CommandRun ExplainDdl(const std::string& args, const std::string& sql) {
  // Per process: ctest runs this file's tests in parallel.
  std::string tag = std::to_string(getpid());
  std::string sql_path = testing::TempDir() + "chsync_explain_ddl_policy_" + tag + ".sql";
  std::string err_path = testing::TempDir() + "chsync_explain_ddl_policy_stderr_" + tag + ".txt";
  std::ofstream(sql_path) << sql;
  return chsync::test::RunCommand(std::string(CHSYNC_BINARY) + " explain-ddl " + args + " " + sql_path,
                                  err_path);
}

const char* const kScript =
    "CREATE TABLE shop.t (id INT PRIMARY KEY, n INT NOT NULL);\n"
    "ALTER TABLE shop.t ADD COLUMN note VARCHAR(10) NOT NULL DEFAULT 'x';\n"
    "ALTER TABLE shop.t ADD COLUMN at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP;\n"
    "ALTER TABLE shop.t DROP COLUMN n;\n"
    "ALTER TABLE shop.t RENAME COLUMN note TO remark;\n"
    "ALTER TABLE shop.t MODIFY COLUMN id BIGINT;\n"
    "ALTER TABLE shop.t ADD COLUMN _chsync_version INT;\n"
    "ALTER TABLE shop.other ADD COLUMN x INT;\n";

TEST(ExplainDdlPolicyTest, PrintsStatementsLogLinesAndStops) {
  CommandRun r = ExplainDdl("--clickhouse-version 26.7", kScript);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "clickhouse: CREATE DATABASE IF NOT EXISTS `shop`\n")) << r.out;
  EXPECT_TRUE(Has(r.out, "clickhouse: CREATE TABLE IF NOT EXISTS `shop`.`t`")) << r.out;
  EXPECT_TRUE(Has(r.out,
                  "clickhouse: ALTER TABLE `shop`.`t` ADD COLUMN IF NOT EXISTS `note` String DEFAULT 'x' "
                  "AFTER `n`\n"))
      << r.out;
  EXPECT_TRUE(Has(r.out,
                  "log: ADD COLUMN `at` datetime DEFAULT CURRENT_TIMESTAMP: default omitted (function call "
                  "CURRENT_TIMESTAMP); column added"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "clickhouse: ALTER TABLE `shop`.`t` MODIFY COLUMN `n` Nullable(Int32)\n")) << r.out;
  EXPECT_TRUE(Has(r.out, "clickhouse: ALTER TABLE `shop`.`t` RENAME COLUMN IF EXISTS `note` TO `remark`\n"))
      << r.out;
  EXPECT_TRUE(Has(r.out, "rebuild: changes column `id` from int to bigint")) << r.out;
  EXPECT_TRUE(Has(r.out, "stop: table shop.t: `ALTER TABLE shop.t ADD COLUMN _chsync_version INT` at "))
      << r.out;
  EXPECT_TRUE(Has(r.out, "run `chsync resync --table shop.t`\n")) << r.out;
  // shop.other was never created in the input: its schema is unknown, nothing is planned.
  EXPECT_FALSE(Has(r.out, "`shop`.`other`")) << r.out;
}

TEST(ExplainDdlPolicyTest, OldServerAndOrdinalMode) {
  CommandRun r = ExplainDdl("--clickhouse-version 18.16 --metadata minimal", kScript);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // 18.16: no ADD COLUMN IF NOT EXISTS.
  EXPECT_TRUE(
      Has(r.out, "clickhouse: ALTER TABLE `shop`.`t` ADD COLUMN `note` String DEFAULT 'x' AFTER `n`\n"))
      << r.out;
  // Ordinal mode follows the DROP (position_shift=follow).
  EXPECT_TRUE(Has(r.out, "clickhouse: ALTER TABLE `shop`.`t` MODIFY COLUMN `n` Nullable(Int32)\n")) << r.out;
  // 18.16 cannot rename columns: an ALIAS gives the column its new name.
  EXPECT_TRUE(Has(r.out, "clickhouse: ALTER TABLE `shop`.`t` ADD COLUMN `remark` String ALIAS `note`\n"))
      << r.out;
}

TEST(ExplainDdlPolicyTest, WithoutTheVersionTheOutputIsUnchanged) {
  CommandRun r = ExplainDdl("", kScript);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(Has(r.out, "clickhouse: ")) << r.out;
  EXPECT_FALSE(Has(r.out, "log: ")) << r.out;
  EXPECT_FALSE(Has(r.out, "stop: ")) << r.out;
  EXPECT_TRUE(Has(r.out, "=> column_dropped shop.t n")) << r.out;
}

TEST(ExplainDdlPolicyTest, RejectsAVersionThatDoesNotParse) {
  CommandRun r = ExplainDdl("--clickhouse-version latest", kScript);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Has(r.err, "--clickhouse-version latest")) << r.err;
}

TEST(ExplainDdlPolicyTest, ConfigShowsTheEffectiveMappingAndShapesThePlans) {
  const std::string config =
      testing::TempDir() + "chsync_explain_ddl_config_" + std::to_string(getpid()) + ".yaml";
  std::ofstream(config) << "schema_changes:\n  drop_column: fail\n"
                           "table_options:\n  shop.t:\n    exclude_columns: [email]\n"
                           "    rename_columns: {n: amount}\n    order_by: \"(id)\"\n";
  CommandRun r = ExplainDdl("--clickhouse-version 26.7 --config " + config,
                            "CREATE TABLE shop.t (id INT PRIMARY KEY, n INT NOT NULL, email VARCHAR(40));\n"
                            "ALTER TABLE shop.t MODIFY email TEXT;\n"
                            "ALTER TABLE shop.t DROP COLUMN n;\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "mapping: shop.t → shop.t; excluded: email; renamed: n→amount")) << r.out;
  EXPECT_TRUE(Has(r.out, "from table_options: shop.t")) << r.out;
  EXPECT_TRUE(Has(r.out, "`amount` Int32")) << r.out;
  EXPECT_FALSE(Has(r.out, "`email`")) << r.out;
  // The file's policy: drop_column=fail stops.
  EXPECT_TRUE(Has(r.out, "stop: table shop.t: `ALTER TABLE shop.t DROP COLUMN n`")) << r.out;
  EXPECT_TRUE(Has(r.out, "drop_column=fail")) << r.out;

  std::ofstream(config) << "table_options:\n  shop.t:\n    order_by: [\n";
  r = ExplainDdl("--clickhouse-version 26.7 --config " + config, "SELECT 1;\n");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Has(r.err, "--config")) << r.err;
  r = ExplainDdl("--config " + config, "SELECT 1;\n");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(Has(r.err, "--config needs --clickhouse-version")) << r.err;
}

}  // namespace
