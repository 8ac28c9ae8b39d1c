#include "policy/ddl_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "clickhouse/capabilities.h"
#include "schema/tracker.h"

namespace chsync::pipe {
namespace {

const clickhouse::Capabilities kOld = clickhouse::FromVersion({18, 16, 1, 0});
const clickhouse::Capabilities kNew = clickhouse::FromVersion({26, 7, 3, 1});
constexpr const char* kPosition = "binlog.000003:1234";

std::string Joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

/// Feeds statements through a real schema tracker, as the pipe does, and plans each one for the
/// table shop.t, carrying the destination from plan to plan.
class Source {
 public:
  explicit Source(const clickhouse::Capabilities& caps, bool ordinal_mode = false)
      : tracker_(schema::Tracker::Options{.full_metadata = !ordinal_mode}) {
    context_.ordinal_mode = ordinal_mode;
    context_.caps = caps;
    context_.target.database = "shop";
    context_.position = kPosition;
  }

  Result<TablePlan> Run(const std::string& sql) {
    auto applied = tracker_.ApplySql(sql, "shop");
    if (!applied.ok()) {
      ADD_FAILURE() << sql << ": " << applied.error().message();
      return applied.error();
    }
    context_.statement = sql;
    auto plan = PlanTableChanges(applied->changes, dest_, tracker_.Find("shop", "t"), context_);
    if (plan.ok()) {
      dest_ = plan->after;
    } else if (const schema::TableSchema* table = tracker_.Find("shop", "t")) {
      dest_ = NewDestination(*table, context_.caps);  // what `chsync resync --table shop.t` leaves
    }
    return plan;
  }

  /// Runs `sql`, which must plan; returns the plan.
  TablePlan Ok(const std::string& sql) {
    auto plan = Run(sql);
    if (!plan.ok()) {
      ADD_FAILURE() << sql << ": " << plan.error().message();
      return {};
    }
    return *plan;
  }

  /// Runs `sql`, which must stop the pipe; returns the message.
  std::string Stops(const std::string& sql) {
    auto plan = Run(sql);
    if (plan.ok()) {
      ADD_FAILURE() << sql << " planned: " << Joined(plan->statements) << Joined(plan->log_lines);
      return "";
    }
    EXPECT_EQ(plan.error().kind(), ErrorKind::kUnsupported) << plan.error().message();
    return plan.error().message();
  }

  /// Runs `sql`, which must ask for an online rebuild; returns the plan.
  TablePlan Rebuilds(const std::string& sql) {
    TablePlan plan = Ok(sql);
    EXPECT_TRUE(plan.rebuild) << sql << " planned: " << Joined(plan.statements) << Joined(plan.log_lines);
    EXPECT_TRUE(plan.statements.empty()) << Joined(plan.statements);
    EXPECT_NE(Joined(plan.log_lines).find("is rebuilt online"), std::string::npos) << Joined(plan.log_lines);
    return plan;
  }

  const DestinationTable& dest() const { return dest_; }
  SchemaPolicy& policy() { return context_.policy; }
  /// The table's `table_options:` for the plans that follow.
  void SetMapping(const MappingSet& set) { context_.mapping = set.For("shop", "t"); }
  /// The source columns the ClickHouse table's own keys read, as the pipe finds them.
  void SetClickHouseKeyColumns(std::vector<std::string> columns) {
    context_.clickhouse_key_columns = std::move(columns);
  }

 private:
  schema::Tracker tracker_;
  PolicyContext context_;
  DestinationTable dest_;
};

/// The resync message's parts every stop must have.
void ExpectResyncMessage(const std::string& message, const std::string& statement) {
  EXPECT_NE(message.find("shop.t"), std::string::npos) << message;
  EXPECT_NE(message.find("`" + statement + "`"), std::string::npos) << message;
  EXPECT_NE(message.find(kPosition), std::string::npos) << message;
  EXPECT_NE(message.find("run `chsync resync --table shop.t`"), std::string::npos) << message;
}

TEST(DdlPolicyTest, CreateTableCreatesDatabaseAndTable) {
  Source s(kNew);
  TablePlan plan = s.Ok("CREATE TABLE t (id INT PRIMARY KEY, b VARCHAR(10))");
  EXPECT_TRUE(plan.created);
  ASSERT_EQ(plan.statements.size(), 2U);
  EXPECT_EQ(plan.statements[0], "CREATE DATABASE IF NOT EXISTS `shop`");
  EXPECT_TRUE(plan.statements[1].starts_with("CREATE TABLE IF NOT EXISTS `shop`.`t`")) << plan.statements[1];
  EXPECT_NE(plan.statements[1].find("ORDER BY (`id`)"), std::string::npos) << plan.statements[1];
  EXPECT_EQ(plan.skip_if_column_exists, (std::vector<std::string>{"", ""}));
  ASSERT_EQ(plan.after.source.columns.size(), 2U);
  EXPECT_TRUE(plan.after.kept_columns.empty());
  EXPECT_NE(Joined(plan.log_lines).find("ORDER BY (id)"), std::string::npos) << Joined(plan.log_lines);
}

TEST(DdlPolicyTest, AddNullableColumnOnNewServer) {
  Source s(kNew);
  s.Ok("CREATE TABLE t (id INT PRIMARY KEY, b VARCHAR(10))");
  TablePlan plan = s.Ok("ALTER TABLE t ADD COLUMN c INT");
  ASSERT_EQ(plan.statements.size(), 1U);
  EXPECT_EQ(plan.statements[0],
            "ALTER TABLE `shop`.`t` ADD COLUMN IF NOT EXISTS `c` Nullable(Int32) AFTER `b`");
  EXPECT_EQ(plan.skip_if_column_exists, std::vector<std::string>{""});
  EXPECT_EQ(Joined(plan.log_lines), "ADD COLUMN `c` int: column added as Nullable(Int32)\n");
  ASSERT_EQ(s.dest().source.columns.size(), 3U);
  EXPECT_EQ(s.dest().source.columns[2].name, "c");
}

TEST(DdlPolicyTest, AddColumnOnOldServerNeedsTheExistenceCheck) {
  Source s(kOld);
  s.Ok("CREATE TABLE t (id INT PRIMARY KEY, b VARCHAR(10))");
  TablePlan plan = s.Ok("ALTER TABLE t ADD COLUMN c INT NOT NULL");
  ASSERT_EQ(plan.statements.size(), 1U);
  // 18.16 has no IF NOT EXISTS: the pipe checks system.columns for `c` before replaying it.
  EXPECT_EQ(plan.statements[0], "ALTER TABLE `shop`.`t` ADD COLUMN `c` Int32 AFTER `b`");
  EXPECT_EQ(plan.skip_if_column_exists, std::vector<std::string>{"c"});
}

TEST(DdlPolicyTest, AddColumnFirstWhereTheServerCan) {
  Source full(kNew);
  full.Ok("CREATE TABLE t (id INT PRIMARY KEY)");
  EXPECT_EQ(
      full.Ok("ALTER TABLE t ADD COLUMN a INT FIRST").statements,
      std::vector<std::string>{"ALTER TABLE `shop`.`t` ADD COLUMN IF NOT EXISTS `a` Nullable(Int32) FIRST"});
  Source old(kOld);
  old.Ok("CREATE TABLE t (id INT PRIMARY KEY)");
  EXPECT_EQ(old.Ok("ALTER TABLE t ADD COLUMN a INT FIRST").statements,
            std::vector<std::string>{"ALTER TABLE `shop`.`t` ADD COLUMN `a` Nullable(Int32)"});
}

TEST(DdlPolicyTest, AfterNamesOnlyColumnsClickHouseAlreadyHas) {
  Source s(kNew);
  s.Ok("CREATE TABLE t (id INT PRIMARY KEY)");
  TablePlan plan = s.Ok("ALTER TABLE t ADD COLUMN a INT FIRST, ADD COLUMN b INT FIRST");
  // Final order b, a, id: `a` comes after `b`, which does not exist yet when `a` is added.
  EXPECT_EQ(plan.statements,
            (std::vector<std::string>{
                "ALTER TABLE `shop`.`t` ADD COLUMN IF NOT EXISTS `a` Nullable(Int32)",
                "ALTER TABLE `shop`.`t` ADD COLUMN IF NOT EXISTS `b` Nullable(Int32) FIRST"}));
}

struct DefaultCase {
  std::string definition;       // the ADD COLUMN's column definition
  std::string clickhouse;       // expected "Type[ DEFAULT expr]" in the ALTER
  std::string omitted_because;  // non-empty: the default is omitted and the log line says this
};

void CheckDefaults(const clickhouse::Capabilities& caps, bool ordinal_mode,
                   const std::vector<DefaultCase>& cases) {
  for (const DefaultCase& c : cases) {
    SCOPED_TRACE(c.definition);
    Source s(caps, ordinal_mode);
    s.Ok("CREATE TABLE t (id INT PRIMARY KEY)");
    TablePlan plan = s.Ok("ALTER TABLE t ADD COLUMN " + c.definition);
    ASSERT_EQ(plan.statements.size(), 1U);
    std::string name = c.definition.substr(0, c.definition.find(' '));
    std::string prefix = std::string("ALTER TABLE `shop`.`t` ADD COLUMN ") +
                         (caps.add_column_if_not_exists ? "IF NOT EXISTS " : "") + "`" + name + "` ";
    EXPECT_EQ(plan.statements[0], prefix + c.clickhouse + " AFTER `id`");
    ASSERT_EQ(plan.log_lines.size(), 1U);
    const std::string& line = plan.log_lines[0];
    if (c.omitted_because.empty()) {
      EXPECT_NE(line.find("rows already in ClickHouse read this default"), std::string::npos) << line;
    } else {
      EXPECT_NE(line.find("default omitted (" + c.omitted_because), std::string::npos) << line;
      EXPECT_NE(line.find("column added"), std::string::npos) << line;
    }
  }
}

TEST(DdlPolicyTest, PropagatedDefaults) {
  std::vector<DefaultCase> cases = {
      {"i INT NOT NULL DEFAULT -5", "Int32 DEFAULT -5", ""},
      {"u BIGINT UNSIGNED DEFAULT 18446744073709551615", "Nullable(UInt64) DEFAULT 18446744073709551615", ""},
      {"d DECIMAL(10,2) NOT NULL DEFAULT 1.5", "Decimal(10, 2) DEFAULT CAST('1.50' AS Decimal(10, 2))", ""},
      {"f DOUBLE DEFAULT 2.5e3", "Nullable(Float64) DEFAULT CAST('2.5e3' AS Float64)", ""},
      {"fl FLOAT NOT NULL DEFAULT 0.1", "Float32 DEFAULT CAST('0.1' AS Float32)", ""},
      {"flag BOOL NOT NULL DEFAULT TRUE", "Int8 DEFAULT 1", ""},
      {"off TINYINT NOT NULL DEFAULT FALSE", "Int8 DEFAULT 0", ""},
      {"s VARCHAR(20) NOT NULL DEFAULT 'it''s'", "String DEFAULT 'it\\'s'", ""},
      {"day DATE NOT NULL DEFAULT '2024-01-31'", "Date32 DEFAULT CAST('2024-01-31' AS Date32)", ""},
      {"at DATETIME(3) NOT NULL DEFAULT '2024-01-31 10:00:00.250'",
       "DateTime64(3, 'UTC') DEFAULT CAST('2024-01-31 10:00:00.250' AS DateTime64(3, 'UTC'))", ""},
      {"y YEAR NOT NULL DEFAULT 99", "UInt16 DEFAULT 1999", ""},
      {"e ENUM('a','b') NOT NULL DEFAULT 'B'", "Enum8('' = 0, 'a' = 1, 'b' = 2) DEFAULT 'b'", ""},
      {"st SET('a','b') NOT NULL DEFAULT 'b,a'", "String DEFAULT 'a,b'", ""},
  };
  CheckDefaults(kNew, false, cases);
}

TEST(DdlPolicyTest, PropagatedDefaultsOnClickHouse1816) {
  CheckDefaults(
      kOld, false,
      {
          {"i INT NOT NULL DEFAULT 7", "Int32 DEFAULT 7", ""},
          {"d DECIMAL(10,2) DEFAULT 1.5", "Nullable(Decimal(10, 2)) DEFAULT CAST('1.50' AS Decimal(10, 2))",
           ""},
          {"at DATETIME NOT NULL DEFAULT '2024-01-31 10:00:00'",
           "DateTime('UTC') DEFAULT CAST('2024-01-31 10:00:00' AS DateTime('UTC'))", ""},
          {"flag BOOL NOT NULL DEFAULT TRUE", "Int8 DEFAULT 1", ""},
          {"s VARCHAR(20) DEFAULT 'x'", "Nullable(String) DEFAULT 'x'", ""},
          {"day DATE NOT NULL DEFAULT '2024-01-31'", "Date DEFAULT CAST('2024-01-31' AS Date)", ""},
          {"e ENUM('a','b') NOT NULL DEFAULT 'a'", "Enum8('' = 0, 'a' = 1, 'b' = 2) DEFAULT 'a'", ""},
      });
}

TEST(DdlPolicyTest, OmittedDefaultsStillAddTheColumn) {
  std::vector<DefaultCase> cases = {
      {"n INT DEFAULT NULL", "Nullable(Int32)", "NULL default"},
      {"bits BIT(8) NOT NULL DEFAULT b'101'", "UInt64", "bit literal"},
      {"hex VARBINARY(4) NOT NULL DEFAULT X'41'", "String", "hexadecimal literal"},
      {"ts DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP", "DateTime64(0, 'UTC')",
       "function call CURRENT_TIMESTAMP"},
      {"ts2 DATETIME(6) NOT NULL DEFAULT NOW(6)", "DateTime64(6, 'UTC')",
       "function call CURRENT_TIMESTAMP(6)"},
      {"id2 VARCHAR(36) NOT NULL DEFAULT (UUID())", "String", "expression default"},
      {"path VARCHAR(20) NOT NULL DEFAULT 'C:\\\\dir'", "String", "string contains a backslash"},
      {"tab VARCHAR(20) NOT NULL DEFAULT 'a\\tb'", "String", "string contains a control character"},
      {"old DATE NOT NULL DEFAULT '1000-01-01'", "Date32", "'1000-01-01' cannot be held exactly"},
  };
  CheckDefaults(kNew, false, cases);
}

TEST(DdlPolicyTest, EnumDefaultsNeedFullMetadata) {
  CheckDefaults(kNew, true,
                {{"e ENUM('a','b') NOT NULL DEFAULT 'a'", "Enum8('' = 0, 'a' = 1, 'b' = 2)",
                  "ENUM/SET defaults need binlog_row_metadata=FULL"},
                 {"i INT NOT NULL DEFAULT 3", "Int32 DEFAULT 3", ""}});
}

TEST(DdlPolicyTest, DropNullableColumnIsKept) {
  Source s(kNew);
  s.Ok("CREATE TABLE t (id INT PRIMARY KEY, b VARCHAR(10), c INT)");
  TablePlan plan = s.Ok("ALTER TABLE t DROP COLUMN b");
  EXPECT_TRUE(plan.statements.empty());
  EXPECT_EQ(plan.after.kept_columns, std::vector<std::string>{"b"});
  EXPECT_EQ(Joined(plan.log_lines),
            "DROP COLUMN `b`: not propagated; `b` stays in ClickHouse and is NULL in rows replicated from "
            "now on\n");
  schema::TableSchema writer = WriterSchema(plan.after);
  ASSERT_EQ(writer.columns.size(), 3U);
  EXPECT_EQ(writer.columns[1].name, "c");
  EXPECT_EQ(writer.columns[2].name, "b");
  EXPECT_TRUE(writer.columns[2].nullable);
  EXPECT_EQ(writer.columns[2].ordinal_position, 3U);
}

TEST(DdlPolicyTest, DropNotNullColumnMakesItNullable) {
  for (const auto& caps : {kOld, kNew}) {
    Source s(caps);
    s.Ok("CREATE TABLE t (id INT PRIMARY KEY, n INT NOT NULL, e ENUM('x','y') NOT NULL)");
    TablePlan plan = s.Ok("ALTER TABLE t DROP COLUMN n, DROP COLUMN e");
    EXPECT_EQ(plan.statements,
              (std::vector<std::string>{
                  "ALTER TABLE `shop`.`t` MODIFY COLUMN `n` Nullable(Int32)",
                  "ALTER TABLE `shop`.`t` MODIFY COLUMN `e` Nullable(Enum8('' = 0, 'x' = 1, 'y' = 2))"}));
    EXPECT_EQ(plan.after.kept_columns, (std::vector<std::string>{"n", "e"}));
    EXPECT_NE(Joined(plan.log_lines).find("`n` stays in ClickHouse, made Nullable(Int32)"), std::string::npos)
        << Joined(plan.log_lines);
  }
}

TEST(DdlPolicyTest, ModifyRestatesTheClickHouseDefault) {
  // ClickHouse 18.16 drops a column's DEFAULT on MODIFY COLUMN; rows written before the column was
  // added would then read 0 instead of 7. The MODIFY restates the default the column has there.
  for (const auto& caps : {kOld, kNew}) {
    Source s(caps);
    s.Ok("CREATE TABLE t (id INT PRIMARY KEY, n INT NOT NULL DEFAULT 7)");
    s.Ok(
        "ALTER TABLE t ADD COLUMN e ENUM('a','b') NOT NULL DEFAULT 'b', ADD COLUMN m INT NOT NULL DEFAULT 5, "
        "ADD COLUMN f INT NOT NULL DEFAULT (1 + 1)");
    // Source default changes are not propagated: ClickHouse keeps 5.
    s.Ok("ALTER TABLE t ALTER COLUMN m SET DEFAULT 6");
    EXPECT_EQ(
        s.Ok("ALTER TABLE t MODIFY COLUMN e ENUM('a','b','c') NOT NULL DEFAULT 'b'").statements,
        std::vector<std::string>{
            "ALTER TABLE `shop`.`t` MODIFY COLUMN `e` Enum8('' = 0, 'a' = 1, 'b' = 2, 'c' = 3) DEFAULT 'b'"});
    EXPECT_EQ(s.Ok("ALTER TABLE t DROP COLUMN n, DROP COLUMN m, DROP COLUMN f").statements,
              (std::vector<std::string>{"ALTER TABLE `shop`.`t` MODIFY COLUMN `n` Nullable(Int32) DEFAULT 7",
                                        "ALTER TABLE `shop`.`t` MODIFY COLUMN `m` Nullable(Int32) DEFAULT 5",
                                        "ALTER TABLE `shop`.`t` MODIFY COLUMN `f` Nullable(Int32)"}));
  }
}

TEST(DdlPolicyTest, ReaddingAKeptColumnRebuilds) {
  Source s(kNew);
  s.Ok("CREATE TABLE t (id INT PRIMARY KEY, b VARCHAR(10)) DEFAULT CHARSET=utf8mb4");
  s.Ok("ALTER TABLE t DROP COLUMN b");
  TablePlan plan = s.Rebuilds("ALTER TABLE t ADD COLUMN b INT");
  EXPECT_NE(plan.rebuild_reason.find("a dropped column it keeps"), std::string::npos) << plan.rebuild_reason;
  // The rebuilt table has the source's columns only.
  EXPECT_TRUE(plan.after.kept_columns.empty());
  ASSERT_EQ(plan.after.source.columns.size(), 2U);
  EXPECT_EQ(plan.after.source.columns[1].type, schema::ColumnType::kInt);
}

TEST(DdlPolicyTest, DefaultChangesAreLoggedNotPropagated) {
  Source s(kNew);
  s.Ok("CREATE TABLE t (id INT PRIMARY KEY, n INT NOT NULL DEFAULT 1)");
  for (const char* sql :
       {"ALTER TABLE t ALTER COLUMN n SET DEFAULT 2", "ALTER TABLE t ALTER COLUMN n DROP DEFAULT",
        "ALTER TABLE t MODIFY COLUMN n INT NOT NULL DEFAULT 5"}) {
    SCOPED_TRACE(sql);
    TablePlan plan = s.Ok(sql);
    EXPECT_TRUE(plan.statements.empty()) << Joined(plan.statements);
    ASSERT_EQ(plan.log_lines.size(), 1U);
    EXPECT_TRUE(plan.log_lines[0].starts_with("default of column `n` changed from ")) << plan.log_lines[0];
    EXPECT_NE(plan.log_lines[0].find("not propagated"), std::string::npos) << plan.log_lines[0];
  }
}

const std::vector<std::string> kShifting = {
    "ALTER TABLE t DROP COLUMN b",
    "ALTER TABLE t DROP COLUMN c",
    "ALTER TABLE t ADD COLUMN x INT FIRST",
    "ALTER TABLE t ADD COLUMN x INT AFTER id",
    "ALTER TABLE t MODIFY COLUMN c INT FIRST",
    "ALTER TABLE t MODIFY COLUMN b VARCHAR(10) AFTER c",
    "ALTER TABLE t CHANGE COLUMN c c INT AFTER id",
    "ALTER TABLE t CHANGE COLUMN b b VARCHAR(10) FIRST",
};

TEST(DdlPolicyTest, OrdinalModeFollowsEveryPositionShift) {
  for (const std::string& sql : kShifting) {
    SCOPED_TRACE(sql);
    Source s(kNew, /*ordinal_mode=*/true);
    s.Ok("CREATE TABLE t (id INT PRIMARY KEY, b VARCHAR(10), c INT) DEFAULT CHARSET=utf8mb4");
    TablePlan plan = s.Ok(sql);
    EXPECT_FALSE(plan.rebuild) << Joined(plan.log_lines);
    // The destination follows the tracked order, by which rows are matched to columns.
    std::vector<std::string> names;
    for (const schema::Column& c : s.dest().source.columns) names.push_back(c.name);
    if (sql.find("DROP COLUMN b") != std::string::npos) {
      EXPECT_EQ(names, (std::vector<std::string>{"id", "c"}));
    } else if (sql.find("ADD COLUMN x INT FIRST") != std::string::npos) {
      EXPECT_EQ(names, (std::vector<std::string>{"x", "id", "b", "c"}));
    } else if (sql.find("MODIFY COLUMN c INT FIRST") != std::string::npos) {
      EXPECT_EQ(names, (std::vector<std::string>{"c", "id", "b"}));
    }
  }
}

TEST(DdlPolicyTest, OrdinalModeStopsOnEveryPositionShiftWithPositionShiftFail) {
  for (const std::string& sql : kShifting) {
    SCOPED_TRACE(sql);
    Source s(kNew, /*ordinal_mode=*/true);
    s.policy().position_shift = SchemaPolicy::PositionShift::kFail;
    s.Ok("CREATE TABLE t (id INT PRIMARY KEY, b VARCHAR(10), c INT)");
    std::string message = s.Stops(sql);
    ExpectResyncMessage(message, sql);
    EXPECT_NE(message.find("positions can no longer be matched because binlog_row_metadata is not FULL "
                           "(position_shift=fail)"),
              std::string::npos)
        << message;
  }
}

TEST(DdlPolicyTest, OrdinalModeAddsAtTheEnd) {
  Source s(kNew, /*ordinal_mode=*/true);
  s.Ok("CREATE TABLE t (id INT PRIMARY KEY, b VARCHAR(10))");
  EXPECT_EQ(s.Ok("ALTER TABLE t ADD COLUMN c INT").statements.size(), 1U);
  EXPECT_EQ(s.Ok("ALTER TABLE t ADD COLUMN d INT AFTER c").statements,
            std::vector<std::string>{
                "ALTER TABLE `shop`.`t` ADD COLUMN IF NOT EXISTS `d` Nullable(Int32) AFTER `c`"});
  // A MODIFY that moves nothing is fine in ordinal mode too.
  EXPECT_TRUE(s.Ok("ALTER TABLE t MODIFY COLUMN d INT AFTER c").statements.empty());
}

TEST(DdlPolicyTest, NotNullToNullMakesTheColumnNullable) {
  for (const auto& caps : {kOld, kNew}) {
    Source s(caps);
    s.Ok("CREATE TABLE t (id INT PRIMARY KEY, n INT NOT NULL)");
    TablePlan plan = s.Ok("ALTER TABLE t MODIFY COLUMN n INT NULL");
    EXPECT_EQ(plan.statements,
              std::vector<std::string>{"ALTER TABLE `shop`.`t` MODIFY COLUMN `n` Nullable(Int32)"});
    EXPECT_NE(Joined(plan.log_lines).find("ClickHouse column changed to Nullable(Int32)"), std::string::npos)
        << Joined(plan.log_lines);
  }
}

TEST(DdlPolicyTest, SameClickHouseTypeNeedsNothing) {
  Source s(kNew);
  s.Ok("CREATE TABLE t (id INT PRIMARY KEY, b VARCHAR(10), st SET('a','b')) DEFAULT CHARSET=utf8mb4");
  for (const char* sql : {"ALTER TABLE t MODIFY COLUMN b VARCHAR(200)",
                          "ALTER TABLE t MODIFY COLUMN b TEXT CHARACTER SET latin1",
                          "ALTER TABLE t MODIFY COLUMN st SET('a','b','c')"}) {
    SCOPED_TRACE(sql);
    TablePlan plan = s.Ok(sql);
    EXPECT_TRUE(plan.statements.empty()) << Joined(plan.statements);
    EXPECT_NE(Joined(plan.log_lines).find("nothing to do in ClickHouse"), std::string::npos)
        << Joined(plan.log_lines);
  }
}

TEST(DdlPolicyTest, EnumLabelsAppendedAtTheEnd) {
  Source s(kOld);
  s.Ok("CREATE TABLE t (id INT PRIMARY KEY, e ENUM('a','b') NOT NULL)");
  TablePlan plan = s.Ok("ALTER TABLE t MODIFY COLUMN e ENUM('a','b','c') NOT NULL");
  EXPECT_EQ(plan.statements,
            std::vector<std::string>{
                "ALTER TABLE `shop`.`t` MODIFY COLUMN `e` Enum8('' = 0, 'a' = 1, 'b' = 2, 'c' = 3)"});
  // A label inserted before others renumbers them: the rows are copied again.
  TablePlan rebuilt = s.Rebuilds("ALTER TABLE t MODIFY COLUMN e ENUM('z','a','b','c') NOT NULL");
  EXPECT_NE(rebuilt.rebuild_reason.find("changes column `e`"), std::string::npos) << rebuilt.rebuild_reason;
}

TEST(DdlPolicyTest, WideningModifiesTheClickHouseColumn) {
  for (const auto& caps : {kOld, kNew}) {
    Source s(caps);
    s.Ok("CREATE TABLE t (id INT PRIMARY KEY, n INT, d DECIMAL(10,2) NOT NULL DEFAULT 1.5)");
    EXPECT_EQ(s.Ok("ALTER TABLE t MODIFY COLUMN n BIGINT").statements,
              std::vector<std::string>{"ALTER TABLE `shop`.`t` MODIFY COLUMN `n` Nullable(Int64)"});
    // The ClickHouse default the column was created with is restated (18.16 drops it on MODIFY).
    TablePlan plan = s.Ok("ALTER TABLE t MODIFY COLUMN d DECIMAL(12,2) NOT NULL DEFAULT 1.5");
    ASSERT_EQ(plan.statements.size(), 1U);
    EXPECT_TRUE(
        plan.statements[0].starts_with("ALTER TABLE `shop`.`t` MODIFY COLUMN `d` Decimal(12, 2) DEFAULT "))
        << plan.statements[0];
  }
}

TEST(DdlPolicyTest, TypeChangesThatRewriteValuesRebuildOrStop) {
  Source s(kNew);
  s.Ok("CREATE TABLE t (id INT PRIMARY KEY, ts DATETIME(6), m INT)");
  s.Rebuilds("ALTER TABLE t MODIFY COLUMN ts DATETIME");
  s.policy().type_change = SchemaPolicy::TypeChange::kFail;
  std::string sql = "ALTER TABLE t MODIFY COLUMN m BIGINT";
  std::string message = s.Stops(sql);
  ExpectResyncMessage(message, sql);
  EXPECT_NE(message.find("(type_change=fail)"), std::string::npos) << message;
}

TEST(DdlPolicyTest, KeyColumnTypeChangesRebuild) {
  Source s(kNew);
  s.Ok("CREATE TABLE t (id INT NOT NULL PRIMARY KEY, a INT)");
  TablePlan plan = s.Rebuilds("ALTER TABLE t MODIFY COLUMN id BIGINT NOT NULL");
  EXPECT_NE(plan.rebuild_reason.find("sorting-key column"), std::string::npos) << plan.rebuild_reason;
}

TEST(DdlPolicyTest, RenameColumnWhereClickHouseCan) {
  Source s(kNew);
  s.Ok("CREATE TABLE t (id INT PRIMARY KEY, a INT NOT NULL DEFAULT 4)");
  TablePlan plan = s.Ok("ALTER TABLE t RENAME COLUMN a TO b");
  EXPECT_EQ(plan.statements,
            std::vector<std::string>{"ALTER TABLE `shop`.`t` RENAME COLUMN IF EXISTS `a` TO `b`"});
  EXPECT_TRUE(s.dest().clickhouse_names.empty());
  EXPECT_EQ(s.dest().clickhouse_defaults.count("b"), 1U);
  EXPECT_EQ(WriterSchema(s.dest()).columns[1].name, "b");
  // CHANGE with the same type is a rename too.
  EXPECT_EQ(s.Ok("ALTER TABLE t CHANGE b c INT NOT NULL DEFAULT 4").statements,
            std::vector<std::string>{"ALTER TABLE `shop`.`t` RENAME COLUMN IF EXISTS `b` TO `c`"});
}

TEST(DdlPolicyTest, RenameColumnKeepsTheNameAndAddsAnAliasWhereClickHouseCannot) {
  Source s(kOld);
  s.Ok("CREATE TABLE t (id INT PRIMARY KEY, a INT)");
  TablePlan plan = s.Ok("ALTER TABLE t RENAME COLUMN a TO b");
  EXPECT_EQ(plan.statements,
            std::vector<std::string>{"ALTER TABLE `shop`.`t` ADD COLUMN `b` Nullable(Int32) ALIAS `a`"});
  EXPECT_EQ(plan.skip_if_column_exists, std::vector<std::string>{"b"});
  EXPECT_EQ(s.dest().ClickHouseName("b"), "a");
  // Rows still go to `a`.
  EXPECT_EQ(WriterSchema(s.dest()).columns[1].name, "a");
  // Renamed again: the old alias goes, a new one comes.
  // 18.16 has no DROP COLUMN IF EXISTS: the pipe checks system.columns before replaying it.
  TablePlan again = s.Ok("ALTER TABLE t RENAME COLUMN b TO c");
  EXPECT_EQ(again.statements,
            (std::vector<std::string>{"ALTER TABLE `shop`.`t` DROP COLUMN `b`",
                                      "ALTER TABLE `shop`.`t` ADD COLUMN `c` Nullable(Int32) ALIAS `a`"}));
  EXPECT_EQ(again.skip_if_column_missing, std::vector<std::string>{"b"});
  EXPECT_EQ(again.skip_if_column_exists, (std::vector<std::string>{"", "c"}));
  // Back to its ClickHouse name: just the alias goes.
  EXPECT_EQ(s.Ok("ALTER TABLE t RENAME COLUMN c TO a").statements,
            std::vector<std::string>{"ALTER TABLE `shop`.`t` DROP COLUMN `c`"});
  EXPECT_TRUE(s.dest().clickhouse_names.empty());
  EXPECT_TRUE(s.dest().aliases.empty());
  // Later changes to a renamed column use its ClickHouse name.
  s.Ok("ALTER TABLE t RENAME COLUMN a TO d");
  EXPECT_EQ(s.Ok("ALTER TABLE t MODIFY COLUMN d BIGINT").statements,
            std::vector<std::string>{"ALTER TABLE `shop`.`t` MODIFY COLUMN `a` Nullable(Int64)"});
}

TEST(DdlPolicyTest, RenameOfAKeyColumnKeepsItsClickHouseName) {
  Source s(kNew);
  s.Ok("CREATE TABLE t (id INT PRIMARY KEY, a INT)");
  TablePlan plan = s.Ok("ALTER TABLE t CHANGE id ident INT NOT NULL");
  EXPECT_EQ(plan.statements, std::vector<std::string>{
                                 "ALTER TABLE `shop`.`t` ADD COLUMN IF NOT EXISTS `ident` Int32 ALIAS `id`"});
  EXPECT_NE(Joined(plan.log_lines).find("cannot rename a sorting-key column"), std::string::npos)
      << Joined(plan.log_lines);
}

TEST(DdlPolicyTest, RenameColumnPolicies) {
  {
    Source s(kNew);
    s.policy().rename_column = SchemaPolicy::RenameColumn::kIgnore;
    s.Ok("CREATE TABLE t (id INT PRIMARY KEY, a INT)");
    TablePlan plan = s.Ok("ALTER TABLE t RENAME COLUMN a TO b");
    EXPECT_TRUE(plan.statements.empty());
    EXPECT_EQ(s.dest().ClickHouseName("b"), "a");
    EXPECT_NE(Joined(plan.log_lines).find("rename_column=ignore"), std::string::npos);
  }
  {
    Source s(kNew);
    s.policy().rename_column = SchemaPolicy::RenameColumn::kFail;
    s.Ok("CREATE TABLE t (id INT PRIMARY KEY, a INT)");
    std::string sql = "ALTER TABLE t RENAME COLUMN a TO b";
    std::string message = s.Stops(sql);
    ExpectResyncMessage(message, sql);
    EXPECT_NE(message.find("renames column `a` to `b` (rename_column=fail)"), std::string::npos) << message;
  }
}

TEST(DdlPolicyTest, TableRenamesAreNotPlannedPerTable) {
  schema::Tracker tracker;
  PolicyContext context{.position = kPosition, .caps = kNew};
  context.target.database = "shop";
  ASSERT_TRUE(tracker.ApplySql("CREATE TABLE t (id INT PRIMARY KEY)", "shop").ok());
  DestinationTable before;
  before.source = *tracker.Find("shop", "t");
  context.statement = "RENAME TABLE t TO u";
  auto applied = tracker.ApplySql(context.statement, "shop");
  ASSERT_TRUE(applied.ok());
  auto plan = PlanTableChanges(applied->changes, before, tracker.Find("shop", "u"), context);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().kind(), ErrorKind::kInternal);
}

TEST(DdlPolicyTest, DropColumnPropagated) {
  Source s(kOld);
  s.policy().drop_column = SchemaPolicy::DropColumn::kPropagate;
  s.Ok("CREATE TABLE t (id INT PRIMARY KEY, a INT NOT NULL, b INT)");
  TablePlan plan = s.Ok("ALTER TABLE t DROP COLUMN a");
  EXPECT_EQ(plan.statements, std::vector<std::string>{"ALTER TABLE `shop`.`t` DROP COLUMN `a`"});
  EXPECT_EQ(plan.skip_if_column_missing, std::vector<std::string>{"a"});
  EXPECT_TRUE(s.dest().kept_columns.empty());
  s.policy().drop_column = SchemaPolicy::DropColumn::kFail;
  std::string message = s.Stops("ALTER TABLE t DROP COLUMN b");
  EXPECT_NE(message.find("(drop_column=fail)"), std::string::npos) << message;
}

TEST(DdlPolicyTest, DropTableKeepsTheDestination) {
  Source s(kNew);
  s.Ok("CREATE TABLE t (id INT PRIMARY KEY)");
  TablePlan plan = s.Ok("DROP TABLE t");
  EXPECT_TRUE(plan.dropped);
  EXPECT_TRUE(plan.statements.empty());
  EXPECT_EQ(Joined(plan.log_lines),
            "DROP TABLE shop.t: not propagated; `shop`.`t` stays in ClickHouse with the rows it has\n");
}

TEST(DdlPolicyTest, TablePolicies) {
  {
    Source s(kNew);
    s.policy().drop_table = SchemaPolicy::DropTable::kDrop;
    s.Ok("CREATE TABLE t (id INT PRIMARY KEY)");
    TablePlan plan = s.Ok("DROP TABLE t");
    EXPECT_TRUE(plan.dropped);
    EXPECT_EQ(plan.statements, std::vector<std::string>{"DROP TABLE IF EXISTS `shop`.`t`"});
  }
  {
    Source s(kNew);
    s.policy().truncate = SchemaPolicy::Truncate::kIgnore;
    s.Ok("CREATE TABLE t (id INT PRIMARY KEY)");
    TablePlan plan = s.Ok("TRUNCATE TABLE t");
    EXPECT_TRUE(plan.statements.empty());
    EXPECT_NE(Joined(plan.log_lines).find("truncate=ignore"), std::string::npos);
    s.policy().truncate = SchemaPolicy::Truncate::kFail;
    EXPECT_NE(s.Stops("TRUNCATE TABLE t").find("(truncate=fail)"), std::string::npos);
  }
  {
    Source s(kNew);
    s.policy().create_table = SchemaPolicy::CreateTable::kIgnore;
    TablePlan plan = s.Ok("CREATE TABLE t (id INT PRIMARY KEY)");
    EXPECT_TRUE(plan.ignored);
    EXPECT_TRUE(plan.statements.empty());
  }
  {
    Source s(kNew);
    s.policy().drop_table = SchemaPolicy::DropTable::kFail;
    s.Ok("CREATE TABLE t (id INT PRIMARY KEY)");
    EXPECT_NE(s.Stops("DROP TABLE t").find("(drop_table=fail)"), std::string::npos);
  }
}

TEST(DdlPolicyTest, RecreatingADroppedTableCreatesIt) {
  Source s(kNew);
  s.Ok("CREATE TABLE t (id INT PRIMARY KEY, a INT)");
  s.Ok("DROP TABLE t");
  // The pipe moves the kept ClickHouse table aside first (MakeRoom).
  TablePlan plan = s.Ok("CREATE TABLE t (id BIGINT PRIMARY KEY, b TEXT)");
  EXPECT_TRUE(plan.created);
  ASSERT_EQ(plan.after.source.columns.size(), 2U);
  EXPECT_EQ(plan.after.source.columns[1].name, "b");
}

TEST(DdlPolicyTest, TruncateIsPropagated) {
  for (const auto& caps : {kOld, kNew}) {
    Source s(caps);
    s.Ok("CREATE TABLE t (id INT PRIMARY KEY)");
    EXPECT_EQ(s.Ok("TRUNCATE TABLE t").statements,
              std::vector<std::string>{"TRUNCATE TABLE IF EXISTS `shop`.`t`"});
  }
}

// `deletes: ignore` (append-only): a TRUNCATE TABLE leaves the ClickHouse rows, and says so; the
// truncate policy's fail still stops.
TEST(DdlPolicyTest, AnAppendOnlyTableKeepsItsRowsOnTruncate) {
  Source s(kNew);
  TableOptions options;
  options.pattern = "shop.t";
  options.origin = "chsync.yaml:2";
  options.deletes = DeleteMode::kIgnore;
  MappingSet set;
  ASSERT_TRUE(set.Add(options).ok());
  s.SetMapping(set);
  s.Ok("CREATE TABLE t (id INT PRIMARY KEY)");
  TablePlan plan = s.Ok("TRUNCATE TABLE t");
  EXPECT_TRUE(plan.statements.empty());
  EXPECT_NE(Joined(plan.log_lines).find("not propagated (deletes: ignore, append-only)"), std::string::npos)
      << Joined(plan.log_lines);
  s.policy().truncate = SchemaPolicy::Truncate::kFail;
  EXPECT_NE(s.Stops("TRUNCATE TABLE t").find("(truncate=fail)"), std::string::npos);
}

TEST(DdlPolicyTest, SortingKeyChangesRebuildOrStop) {
  Source s(kNew);
  s.Ok("CREATE TABLE t (id INT NOT NULL, b INT NOT NULL, c INT, PRIMARY KEY (id))");
  TablePlan rebuilt = s.Rebuilds("ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (id, b)");
  EXPECT_NE(rebuilt.rebuild_reason.find("changes the ClickHouse sorting key from (id) to (id, b)"),
            std::string::npos)
      << rebuilt.rebuild_reason;
  // After the rebuild the key is (id, b); a unique key that does not become the sorting key changes
  // nothing in ClickHouse.
  TablePlan plan = s.Ok("ALTER TABLE t ADD UNIQUE KEY ub (b)");
  EXPECT_TRUE(plan.statements.empty());
  EXPECT_NE(Joined(plan.log_lines).find("sorting key (id, b) is unchanged"), std::string::npos)
      << Joined(plan.log_lines);
  s.policy().key_change = SchemaPolicy::KeyChange::kFail;
  std::string sql = "ALTER TABLE t DROP COLUMN id";
  std::string message = s.Stops(sql);
  ExpectResyncMessage(message, sql);
  EXPECT_NE(message.find("changes the ClickHouse sorting key"), std::string::npos) << message;
  EXPECT_NE(message.find("(key_change=fail)"), std::string::npos) << message;
}

// Issue 33, case 6: identical rows of a table without a key collapsed in ClickHouse (5 source rows,
// 3 there). Such a table is refused by default: made, then parked with what to do.
TEST(DdlPolicyTest, ATableWithoutAKeyIsRefusedByDefault) {
  Source s(kNew);
  TablePlan created = s.Ok("CREATE TABLE t (a INT, b VARCHAR(10))");
  EXPECT_TRUE(created.created);
  EXPECT_NE(created.park_reason.find("shop.t has no primary key or NOT NULL unique key"), std::string::npos)
      << created.park_reason;
  EXPECT_NE(created.park_reason.find("(keyless=refuse)"), std::string::npos) << created.park_reason;
  EXPECT_NE(
      created.park_reason.find("ALTER TABLE shop.t ADD COLUMN _id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT "
                               "PRIMARY KEY INVISIBLE"),
      std::string::npos)
      << created.park_reason;
  EXPECT_NE(created.park_reason.find("keyless: distinct"), std::string::npos) << created.park_reason;

  Source distinct(kNew);
  distinct.policy().keyless = SchemaPolicy::Keyless::kDistinct;
  EXPECT_EQ(distinct.Ok("CREATE TABLE t (a INT, b VARCHAR(10))").park_reason, "");

  // A primary key, or a NOT NULL unique key, is a key: nothing refused.
  Source keyed(kNew);
  EXPECT_EQ(keyed.Ok("CREATE TABLE t (a INT PRIMARY KEY, b INT)").park_reason, "");
  Source unique(kNew);
  EXPECT_EQ(unique.Ok("CREATE TABLE t (a INT NOT NULL, b INT, UNIQUE KEY ua (a))").park_reason, "");
  Source nullable(kNew);
  EXPECT_NE(nullable.Ok("CREATE TABLE t (a INT, b INT, UNIQUE KEY ua (a))").park_reason, "")
      << "a unique key over a NULL-able column leaves the table without a key";
}

TEST(DdlPolicyTest, DroppingTheOnlyKeyIsRefusedByDefault) {
  Source s(kNew);
  s.Ok("CREATE TABLE t (id INT NOT NULL, b INT, PRIMARY KEY (id))");
  std::string sql = "ALTER TABLE t DROP PRIMARY KEY";
  std::string message = s.Stops(sql);
  EXPECT_TRUE(
      message.starts_with("table shop.t: `ALTER TABLE t DROP PRIMARY KEY` at binlog.000003:1234 leaves "
                          "the table without a key: shop.t has no primary key"))
      << message;
  EXPECT_EQ(message.find("run `chsync resync"), std::string::npos)
      << "a resync would be refused too; the message says what to do instead: " << message;
  EXPECT_NE(message.find("`chsync resume --state DIR --table shop.t` while the pipe runs"), std::string::npos)
      << message;
  Source distinct(kNew);
  distinct.policy().keyless = SchemaPolicy::Keyless::kDistinct;
  distinct.Ok("CREATE TABLE t (id INT NOT NULL, b INT, PRIMARY KEY (id))");
  TablePlan plan = distinct.Rebuilds(sql);
  EXPECT_NE(plan.rebuild_reason.find("sorted by every column"), std::string::npos) << plan.rebuild_reason;
}

TEST(DdlPolicyTest, TablesSortedByEveryColumnRebuildOnAddedAndDroppedColumns) {
  Source s(kNew);
  s.Ok("CREATE TABLE t (a INT, b INT)");
  // Issue 33, case 6: an added column must join the key (a, b), or rows that differ only in it
  // collapse. Before, it was added in place and stayed out of the key.
  TablePlan added = s.Rebuilds("ALTER TABLE t ADD COLUMN c INT");
  EXPECT_NE(added.rebuild_reason.find("sorted by every column"), std::string::npos) << added.rebuild_reason;
  TablePlan plan = s.Rebuilds("ALTER TABLE t DROP COLUMN a");
  EXPECT_NE(plan.rebuild_reason.find("sorted by every column"), std::string::npos) << plan.rebuild_reason;
}

TEST(DdlPolicyTest, ReservedColumnNamesStop) {
  Source s(kNew);
  s.Ok("CREATE TABLE t (id INT PRIMARY KEY)");
  std::string message = s.Stops("ALTER TABLE t ADD COLUMN _chsync_version INT");
  EXPECT_NE(message.find("reserves for its own metadata"), std::string::npos) << message;
}

TEST(DdlPolicyTest, NothingIsPlannedWhenOneChangeStops) {
  Source s(kNew);
  s.Ok("CREATE TABLE t (id INT PRIMARY KEY, a INT, n INT NOT NULL)");
  // The DROP alone would modify `n`; with the refused rename in the same statement nothing runs.
  s.policy().rename_column = SchemaPolicy::RenameColumn::kFail;
  s.Stops("ALTER TABLE t DROP COLUMN n, RENAME COLUMN a TO b");
  EXPECT_TRUE(s.dest().kept_columns.empty());
}

TEST(DdlPolicyTest, EveryStatementIsSafeToRunAgain) {
  // On a server with IF [NOT] EXISTS every statement guards itself; on 18.16 the ADDs carry the
  // column whose existence the pipe checks before replaying them.
  for (const auto& caps : {kOld, kNew}) {
    Source s(caps);
    std::vector<std::string> all;
    std::vector<std::string> skips;
    for (const char* sql :
         {"CREATE TABLE t (id INT PRIMARY KEY, n INT NOT NULL, e ENUM('a') NOT NULL)",
          "ALTER TABLE t ADD COLUMN x INT DEFAULT 3, ADD COLUMN y DATE", "ALTER TABLE t DROP COLUMN n",
          "ALTER TABLE t MODIFY COLUMN e ENUM('a','b') NOT NULL", "TRUNCATE TABLE t"}) {
      TablePlan plan = s.Ok(sql);
      ASSERT_EQ(plan.statements.size(), plan.skip_if_column_exists.size());
      all.insert(all.end(), plan.statements.begin(), plan.statements.end());
      skips.insert(skips.end(), plan.skip_if_column_exists.begin(), plan.skip_if_column_exists.end());
    }
    for (size_t i = 0; i < all.size(); ++i) {
      SCOPED_TRACE(all[i]);
      const std::string& sql = all[i];
      if (sql.find(" ADD COLUMN ") != std::string::npos) {
        EXPECT_EQ(sql.find("ADD COLUMN IF NOT EXISTS") != std::string::npos, caps.add_column_if_not_exists);
        EXPECT_EQ(skips[i].empty(), caps.add_column_if_not_exists);
      } else if (sql.starts_with("CREATE")) {
        EXPECT_NE(sql.find(" IF NOT EXISTS "), std::string::npos);
      } else if (sql.starts_with("TRUNCATE")) {
        EXPECT_NE(sql.find(" IF EXISTS "), std::string::npos);
      } else {
        // MODIFY COLUMN to the type the column already has is a no-op in ClickHouse.
        EXPECT_NE(sql.find(" MODIFY COLUMN "), std::string::npos);
        EXPECT_TRUE(skips[i].empty());
      }
    }
  }
}

/// shop.t with ORDER BY (id, b), PARTITION BY, SETTINGS, LowCardinality (CODEC too) for s and
/// LowCardinality for a column c added later.
MappingSet OptionsForT(bool codec) {
  TableOptions options;
  options.pattern = "shop.t";
  options.origin = "chsync.yaml:3";
  options.order_by = "(id, b)";
  options.partition_by = "b % 4";
  options.settings = {{"index_granularity", "1024"}};
  options.columns = {{"s", ColumnEntry{codec ? std::optional<std::string>("ZSTD(3)") : std::nullopt, true}}};
  MappingSet set;
  EXPECT_TRUE(set.Add(options).ok());
  // A column added later is configured by a pattern entry (an exact one requires the column).
  TableOptions later;
  later.pattern = "shop.t*";
  later.origin = "chsync.yaml:9";
  later.columns = {{"c", ColumnEntry{std::nullopt, true}}};
  EXPECT_TRUE(set.Add(later).ok());
  return set;
}

TEST(DdlPolicyTest, TableOptionsShapeCreateAddAndModify) {
  Source s(kNew);
  s.SetMapping(OptionsForT(/*codec=*/true));
  TablePlan plan = s.Ok("CREATE TABLE t (id INT PRIMARY KEY, b INT NOT NULL, s VARCHAR(10), n INT)");
  ASSERT_EQ(plan.statements.size(), 2U);
  const std::string& create = plan.statements[1];
  EXPECT_NE(create.find("`s` LowCardinality(Nullable(String)) CODEC(ZSTD(3))"), std::string::npos) << create;
  EXPECT_NE(create.find("PARTITION BY b % 4"), std::string::npos) << create;
  EXPECT_NE(create.find("ORDER BY (id, b)"), std::string::npos) << create;
  EXPECT_NE(create.find("SETTINGS index_granularity = 1024"), std::string::npos) << create;

  plan = s.Ok("ALTER TABLE t ADD COLUMN c VARCHAR(5) NOT NULL DEFAULT 'x'");
  ASSERT_EQ(plan.statements.size(), 1U);
  EXPECT_EQ(
      plan.statements[0],
      "ALTER TABLE `shop`.`t` ADD COLUMN IF NOT EXISTS `c` LowCardinality(String) DEFAULT 'x' AFTER `n`");

  // A MODIFY restates LowCardinality and CODEC, the DEFAULT before the CODEC.
  plan = s.Ok("ALTER TABLE t MODIFY s VARCHAR(10) NOT NULL DEFAULT 'q'");
  plan = s.Ok("ALTER TABLE t MODIFY s VARCHAR(10) NULL");
  for (const std::string& sql : plan.statements) {
    EXPECT_NE(sql.find("LowCardinality("), std::string::npos) << sql;
    EXPECT_TRUE(sql.ends_with(" CODEC(ZSTD(3))")) << sql;
  }
  // b is in ORDER BY: its type cannot change in place.
  plan = s.Rebuilds("ALTER TABLE t MODIFY b BIGINT NOT NULL");
}

TEST(DdlPolicyTest, ADroppedColumnTheClickHouseKeyReadsStopsTheTable) {
  // Issue 33, case 3: kept, it would be NULL in later rows (isNull(n), assumeNotNull(n) in the key
  // for a Nullable one), so a changed row's new version would stand beside its old one.
  for (const char* column : {"b", "n"}) {
    SCOPED_TRACE(column);
    Source s(kNew);
    TableOptions options;
    options.pattern = "shop.t";
    options.order_by = std::string(column) == "n" ? "(id, isNull(n), assumeNotNull(n))" : "(id, b)";
    MappingSet set;
    ASSERT_TRUE(set.Add(options).ok());
    s.SetMapping(set);
    s.Ok("CREATE TABLE t (id INT PRIMARY KEY, b INT NOT NULL, n VARCHAR(5))");
    const std::string message = s.Stops(std::string("ALTER TABLE t DROP COLUMN ") + column);
    ExpectResyncMessage(message, std::string("ALTER TABLE t DROP COLUMN ") + column);
    EXPECT_NE(message.find(std::string("drops column `") + column +
                           "`, which the ClickHouse table's ORDER BY or PARTITION BY reads"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("if order_by or partition_by in table_options name"), std::string::npos)
        << message;
  }
  // The table was made under an ORDER BY that table_options no longer name: its own keys count.
  Source s(kNew);
  s.Ok("CREATE TABLE t (id INT PRIMARY KEY, region VARCHAR(5), note VARCHAR(5))");
  s.SetClickHouseKeyColumns({"id", "region"});
  s.Stops("ALTER TABLE t DROP COLUMN region");
  EXPECT_TRUE(s.Ok("ALTER TABLE t DROP COLUMN note").statements.empty());  // kept, as any other

  // table_options name a column the table was not made with in its ORDER BY: the table's keys say.
  Source edited(kNew);
  TableOptions options;
  options.pattern = "shop.t";
  options.order_by = "(id, b)";
  MappingSet set;
  ASSERT_TRUE(set.Add(options).ok());
  edited.SetMapping(set);
  edited.Ok("CREATE TABLE t (id INT PRIMARY KEY, b INT NOT NULL, n VARCHAR(5))");
  edited.SetClickHouseKeyColumns({"id"});
  EXPECT_FALSE(edited.Ok("ALTER TABLE t DROP COLUMN b").rebuild);
}

TEST(DdlPolicyTest, TableOptionsTheServerLacksStopTheCreateAndDestTableNamesTheTable) {
  Source s(kOld);
  s.SetMapping(OptionsForT(/*codec=*/true));
  auto plan = s.Run("CREATE TABLE t (id INT PRIMARY KEY, b INT NOT NULL, s VARCHAR(10))");
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.error().message().find("LowCardinality needs ClickHouse 19.3"), std::string::npos)
      << plan.error().message();
  EXPECT_NE(plan.error().message().find("18.16"), std::string::npos) << plan.error().message();

  Source t(kNew);
  TableOptions options;
  options.pattern = "shop.t";
  options.origin = "chsync.yaml:7";
  options.dest_table = "t_v2";
  MappingSet set;
  ASSERT_TRUE(set.Add(options).ok());
  t.SetMapping(set);
  // The plans name the ClickHouse table by dest_table: created, altered, truncated and dropped there.
  TablePlan created = t.Ok("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10))");
  ASSERT_FALSE(created.statements.empty());
  EXPECT_TRUE(created.statements.back().starts_with("CREATE TABLE IF NOT EXISTS `shop`.`t_v2`"))
      << created.statements.back();
  EXPECT_NE(Joined(created.log_lines).find("created in ClickHouse as `shop`.`t_v2`"), std::string::npos)
      << Joined(created.log_lines);
  TablePlan added = t.Ok("ALTER TABLE t ADD COLUMN n INT, DROP COLUMN s");
  for (const std::string& sql : added.statements)
    EXPECT_TRUE(sql.starts_with("ALTER TABLE `shop`.`t_v2` ")) << sql;
  EXPECT_FALSE(added.statements.empty()) << Joined(added.log_lines);
  TablePlan truncated = t.Ok("TRUNCATE TABLE t");
  ASSERT_EQ(truncated.statements.size(), 1U);
  EXPECT_NE(truncated.statements[0].find("`shop`.`t_v2`"), std::string::npos) << truncated.statements[0];
}

/// shop.t with `email` and `ssn` excluded, and `cust` stored as `customer`.
MappingSet ExcludingAndRenaming() {
  TableOptions options;
  options.pattern = "shop.t";
  options.origin = "chsync.yaml:3";
  options.exclude_columns = {"email"};
  options.rename_columns = {{"cust", "customer"}};
  TableOptions pattern;
  pattern.pattern = "shop.*";
  pattern.origin = "chsync.yaml:7";
  pattern.exclude_columns = {"ssn", "phone"};
  MappingSet set;
  EXPECT_TRUE(set.Add(options).ok());
  EXPECT_TRUE(set.Add(pattern).ok());
  return set;
}

TEST(DdlPolicyTest, ExcludedColumnsStayOutOfEveryPlan) {
  Source s(kNew);
  s.SetMapping(ExcludingAndRenaming());
  TablePlan plan =
      s.Ok("CREATE TABLE t (id INT PRIMARY KEY, cust INT NOT NULL, email VARCHAR(40), ssn CHAR(11))");
  ASSERT_EQ(plan.statements.size(), 2U);
  const std::string& create = plan.statements[1];
  EXPECT_EQ(create.find("email"), std::string::npos) << create;
  EXPECT_EQ(create.find("ssn"), std::string::npos) << create;
  EXPECT_NE(create.find("`customer` Int32"), std::string::npos) << create;
  EXPECT_EQ(create.find("`cust`"), std::string::npos) << create;
  EXPECT_EQ(plan.after.source.columns.size(), 2U);
  EXPECT_EQ(plan.after.excluded, (std::vector<std::string>{"email", "ssn"}));
  EXPECT_EQ(plan.after.ClickHouseName("cust"), "customer");

  // An excluded name added, changed, moved or dropped: nothing in ClickHouse.
  for (const char* sql :
       {"ALTER TABLE t ADD COLUMN phone VARCHAR(20)", "ALTER TABLE t MODIFY email VARCHAR(200) NOT NULL",
        "ALTER TABLE t MODIFY ssn CHAR(11) FIRST", "ALTER TABLE t ALTER email SET DEFAULT 'x'",
        "ALTER TABLE t DROP COLUMN phone"}) {
    plan = s.Ok(sql);
    EXPECT_TRUE(plan.statements.empty()) << sql << ": " << Joined(plan.statements);
    EXPECT_FALSE(plan.rebuild) << sql;
  }
  EXPECT_EQ(s.dest().source.FindColumn("phone"), -1);

  // Renamed at the source, an excluded column stays excluded under its new name.
  plan = s.Ok("ALTER TABLE t RENAME COLUMN ssn TO ssn_old");
  EXPECT_TRUE(plan.statements.empty()) << Joined(plan.statements);
  EXPECT_NE(std::find(plan.after.excluded.begin(), plan.after.excluded.end(), "ssn_old"),
            plan.after.excluded.end());
  plan = s.Ok("ALTER TABLE t MODIFY ssn_old VARCHAR(40)");
  EXPECT_TRUE(plan.statements.empty()) << Joined(plan.statements);

  // A column renamed onto an excluded name leaves the replication like a dropped column: its
  // ClickHouse column stays, and later rows hold NULL there.
  s.Ok("ALTER TABLE t ADD COLUMN tmp VARCHAR(40)");
  plan = s.Ok("ALTER TABLE t RENAME COLUMN tmp TO phone");
  EXPECT_EQ(s.dest().source.FindColumn("phone"), -1);
  EXPECT_EQ(s.dest().source.FindColumn("tmp"), -1);
  EXPECT_NE(std::find(plan.after.kept_columns.begin(), plan.after.kept_columns.end(), "tmp"),
            plan.after.kept_columns.end());

  // The other columns follow as always, renamed ones under their ClickHouse names.
  plan = s.Ok("ALTER TABLE t MODIFY cust BIGINT NOT NULL");
  ASSERT_EQ(plan.statements.size(), 1U);
  EXPECT_NE(plan.statements[0].find("MODIFY COLUMN `customer` Int64"), std::string::npos)
      << plan.statements[0];
  plan = s.Ok("ALTER TABLE t RENAME COLUMN cust TO cust_id");
  EXPECT_TRUE(plan.statements.empty()) << Joined(plan.statements);
  EXPECT_EQ(plan.after.ClickHouseName("cust_id"), "customer");
  EXPECT_NE(Joined(plan.log_lines).find("rename_columns"), std::string::npos) << Joined(plan.log_lines);
}

TEST(DdlPolicyTest, AnExcludedColumnInANewPrimaryKeyParksTheTable) {
  Source s(kNew);
  s.SetMapping(ExcludingAndRenaming());
  s.Ok(
      "CREATE TABLE t (id INT NOT NULL, cust INT NOT NULL, email VARCHAR(40), UNIQUE KEY u (id), "
      "UNIQUE KEY e (email))");
  ASSERT_EQ(s.dest().source.unique_keys.size(), 1U) << "a unique key over an excluded column is left out";
  EXPECT_EQ(s.dest().source.unique_keys[0].columns, (std::vector<std::string>{"id"}));
  std::string message = s.Stops("ALTER TABLE t ADD PRIMARY KEY (id, email)");
  EXPECT_NE(message.find("excluded column `email`"), std::string::npos) << message;
}

TEST(DdlPolicyTest, ARenamedColumnAddedLaterTakesItsClickHouseName) {
  Source s(kNew);
  TableOptions options;
  options.pattern = "shop.*";  // a pattern entry: the column may come later
  options.origin = "chsync.yaml:3";
  options.rename_columns = {{"cust", "customer"}};
  MappingSet set;
  ASSERT_TRUE(set.Add(options).ok());
  s.SetMapping(set);
  s.Ok("CREATE TABLE t (id INT PRIMARY KEY)");
  TablePlan plan = s.Ok("ALTER TABLE t ADD COLUMN cust INT NOT NULL DEFAULT 3");
  ASSERT_EQ(plan.statements.size(), 1U);
  EXPECT_EQ(plan.statements[0],
            "ALTER TABLE `shop`.`t` ADD COLUMN IF NOT EXISTS `customer` Int32 DEFAULT 3 AFTER `id`");
  EXPECT_EQ(plan.after.ClickHouseName("cust"), "customer");
  EXPECT_EQ(WriterSchema(plan.after).columns[1].name, "customer");
}

TEST(DdlPolicyTest, NewDestinationUnderAMapping) {
  schema::Tracker tracker({.full_metadata = true});
  ASSERT_TRUE(
      tracker.ApplySql("CREATE TABLE t (id INT PRIMARY KEY, cust INT, email TEXT, ssn TEXT, n INT)", "shop")
          .ok());
  const MappingSet set = ExcludingAndRenaming();
  DestinationTable d = NewDestination(*tracker.Find("shop", "t"), kNew, set.For("shop", "t"), {"n"});
  std::vector<std::string> names;
  for (const schema::Column& c : d.source.columns) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"id", "cust"}));
  EXPECT_EQ(d.source.columns[1].ordinal_position, 2U);
  EXPECT_EQ(d.excluded, (std::vector<std::string>{"n", "email", "ssn"}));
  EXPECT_EQ(d.ClickHouseName("cust"), "customer");
  EXPECT_TRUE(d.clickhouse_defaults.contains("customer"));
  EXPECT_FALSE(d.clickhouse_defaults.contains("cust"));
}

// Issue 33, case 3: the key columns come from the ClickHouse table's own keys.
TEST(KeySourceColumns, FollowTheClickHouseTableNotTheConfiguration) {
  schema::TableSchema t;
  t.database = "db";
  t.name = "t";
  t.columns = {schema::Column{}, schema::Column{}, schema::Column{}, schema::Column{}};
  t.columns[0].name = "id";
  t.columns[1].name = "area";  // renamed at the source from region
  t.columns[2].name = "c";
  t.columns[2].nullable = true;
  t.columns[3].name = "v";
  t.primary_key = {"id"};
  DestinationTable dest;
  dest.source = t;
  dest.clickhouse_names["area"] = "region";
  using V = std::vector<std::string>;
  EXPECT_EQ(KeySourceColumns(dest, "region, id", ""), (V{"id", "area"}));
  EXPECT_EQ(KeySourceColumns(dest, "id", "toYYYYMM(region)"), (V{"id", "area"}));
  EXPECT_EQ(KeySourceColumns(dest, "isNull(c), assumeNotNull(c), id", ""), (V{"id", "c"}));
  EXPECT_EQ(KeySourceColumns(dest, "id", ""), (V{"id"})) << "the primary key always";
  EXPECT_EQ(KeySourceColumns(dest, "`v`, id", "tuple()"), (V{"id", "v"}));
  // The source name of a renamed column is not the ClickHouse column's.
  EXPECT_EQ(KeySourceColumns(dest, "area, id", ""), (V{"id"}));
}

}  // namespace
}  // namespace chsync::pipe
