// The tracker against the live MariaDB (CHSYNC_TEST_MYSQL_FULL): after each real DDL statement,
// the schema the tracker derives (from the schema loaded before the statements plus the same
// statements) equals a fresh load from information_schema: columns, order, types, defaults, keys,
// foreign keys (names the server generates, actions, renames of parents and children).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "common/url.h"
#include "mysql/connection.h"
#include "schema/explain.h"
#include "schema/information_schema.h"
#include "schema/tracker.h"

namespace chsync::schema {
namespace {

constexpr const char* kDatabase = "schema_tracker_it";

std::unique_ptr<mysql::Connection> Connect() {
  const char* url = std::getenv("CHSYNC_TEST_MYSQL_FULL");
  if (url == nullptr) {
    ADD_FAILURE() << "CHSYNC_TEST_MYSQL_FULL is not set: run through scripts/test (or source the test env)";
    return nullptr;
  }
  auto parsed = ParseUrl(url);
  if (!parsed.ok()) {
    ADD_FAILURE() << parsed.error().message();
    return nullptr;
  }
  auto options = mysql::OptionsFromUrl(*parsed);
  if (!options.ok()) {
    ADD_FAILURE() << options.error().message();
    return nullptr;
  }
  auto conn = mysql::Connection::Open(*options);
  if (!conn.ok()) {
    ADD_FAILURE() << conn.error().message();
    return nullptr;
  }
  return std::move(*conn);
}

Result<TextRows> Rows(mysql::Connection& conn, const std::string& sql) {
  CHSYNC_ASSIGN_OR_RETURN(mysql::QueryResult r, conn.Query(sql));
  return TextRows{std::move(r.columns), std::move(r.rows)};
}

Result<std::vector<TableSchema>> Load(mysql::Connection& conn, bool mariadb) {
  std::vector<std::string> dbs{kDatabase};
  CHSYNC_ASSIGN_OR_RETURN(TextRows tables, Rows(conn, TablesQuery(dbs)));
  CHSYNC_ASSIGN_OR_RETURN(TextRows columns, Rows(conn, ColumnsQuery(dbs)));
  CHSYNC_ASSIGN_OR_RETURN(TextRows statistics, Rows(conn, StatisticsQuery(dbs)));
  CHSYNC_ASSIGN_OR_RETURN(TextRows foreign_keys, Rows(conn, ForeignKeysQuery(dbs)));
  CHSYNC_ASSIGN_OR_RETURN(
      std::vector<TableSchema> schemas,
      LoadSchemas(tables, columns, statistics, foreign_keys, InformationSchemaFlavor{mariadb}));
  if (mariadb) {
    // MariaDB's JSON columns, as the pipe reads them (mysql::MarkMariaDbJson): their own CHECK.
    CHSYNC_ASSIGN_OR_RETURN(TextRows checks, Rows(conn, CheckConstraintsQuery(dbs)));
    MarkJsonColumns(checks, schemas);
  }
  return schemas;
}

/// What information_schema can tell, in comparable form: expression texts are compared by kind
/// only (servers re-print them), collations only when both sides know them, unique keys by name.
std::string Comparable(const TableSchema& t, const TableSchema& other) {
  std::string out = "table " + t.QualifiedName() + "\n";
  for (size_t i = 0; i < t.columns.size(); ++i) {
    Column c = t.columns[i];
    const Column* o = other.GetColumn(c.name);
    if (c.default_value.kind == DefaultKind::kExpression) c.default_value.text = "…";
    if (o == nullptr || o->collation.empty()) c.collation.clear();
    if (o == nullptr || o->charset.empty()) c.charset.clear();
    c.type_spelling.clear();
    c.generation_expression.clear();
    c.comment.clear();
    out += "  " + ExplainColumn(c) + "\n";
  }
  out += "  primary (";
  for (const std::string& k : t.primary_key) out += k + ",";
  out += ")\n";
  std::vector<Key> keys = t.unique_keys;
  std::sort(keys.begin(), keys.end(),
            [](const Key& a, const Key& b) { return ToLower(a.name) < ToLower(b.name); });
  for (const Key& k : keys) {
    out += "  unique " + ToLower(k.name) + " (";
    for (const std::string& c : k.columns) out += c + ",";
    out += ")\n";
  }
  for (const ForeignKey& f : t.foreign_keys) {
    out += "  foreign " + f.name + " (";
    for (const std::string& c : f.columns) out += c + ",";
    out += ") -> " + f.parent_database + "." + f.parent_table + " (";
    for (const std::string& c : f.parent_columns) out += c + ",";
    out += ") " + std::string(ForeignKeyActionName(f.on_delete)) + " / " +
           std::string(ForeignKeyActionName(f.on_update)) + "\n";
  }
  return out;
}

TEST(InformationSchemaIntegrationTest, TrackerMatchesServerAfterEachStatement) {
  std::unique_ptr<mysql::Connection> conn = Connect();
  ASSERT_NE(conn, nullptr);
  bool mariadb = conn->server_version().find("MariaDB") != std::string::npos;
  ASSERT_TRUE(conn->Execute(std::string("DROP DATABASE IF EXISTS ") + kDatabase).ok());
  ASSERT_TRUE(conn->Execute(std::string("CREATE DATABASE ") + kDatabase +
                            " DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci")
                  .ok());
  ASSERT_TRUE(conn->Execute(std::string("USE ") + kDatabase).ok());
  ASSERT_TRUE(conn->Execute("SET SESSION sql_mode = 'STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION'").ok());
  ASSERT_TRUE(
      conn->Execute("CREATE TABLE base (id INT NOT NULL PRIMARY KEY, v VARCHAR(10) DEFAULT 'b')").ok());

  Tracker::Options options;
  options.mariadb = mariadb;
  Tracker tracker(options);
  tracker.SetDatabaseDefaults(kDatabase, "utf8mb4", "utf8mb4_general_ci");
  auto initial = Load(*conn, mariadb);
  ASSERT_TRUE(initial.ok()) << initial.error().message();
  ASSERT_EQ(initial->size(), 1u);
  for (TableSchema& t : *initial) tracker.SetTable(std::move(t));

  std::vector<std::string> statements = {
      "CREATE TABLE t1 (id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, name VARCHAR(50) NOT NULL "
      "DEFAULT '', "
      "price DECIMAL(10,2) DEFAULT 1.5, qty INT DEFAULT -3, flag BOOL DEFAULT TRUE, "
      "created DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3), "
      "status ENUM('new','done') NOT NULL DEFAULT 'new', tags SET('a','b','c') DEFAULT 'a,c', note TEXT, "
      "bits BIT(4) DEFAULT b'1010', UNIQUE KEY uk_name (name)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 "
      "COLLATE=utf8mb4_unicode_ci",
      "ALTER TABLE t1 ADD COLUMN a1 INT DEFAULT 7 AFTER id, ADD COLUMN z1 VARCHAR(10) DEFAULT 'it''s' FIRST",
      "ALTER TABLE t1 DROP COLUMN qty, MODIFY price DECIMAL(12,3) NOT NULL DEFAULT 0, CHANGE note notes "
      "MEDIUMTEXT",
      "ALTER TABLE t1 RENAME COLUMN notes TO remarks, ALTER COLUMN a1 SET DEFAULT 42, ALTER COLUMN name DROP "
      "DEFAULT",
      "ALTER TABLE t1 MODIFY flag TINYINT(1) NOT NULL DEFAULT 0 AFTER z1",
      "CREATE TABLE t2 LIKE t1",
      "ALTER TABLE t2 ADD UNIQUE (a1), DROP INDEX uk_name, ADD c2 CHAR(3) CHARACTER SET latin1 DEFAULT 'x'",
      "ALTER TABLE t2 DROP PRIMARY KEY, ADD PRIMARY KEY (id, a1)",
      "RENAME TABLE t1 TO t1_old, t2 TO t1",
      "ALTER TABLE t1 CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
      "CREATE TABLE t3 (a INT, b DOUBLE DEFAULT 2.5, c JSON, d TIMESTAMP NULL DEFAULT NULL, "
      "e DATE DEFAULT '2020-01-02', f YEAR DEFAULT 2024, g VARBINARY(8), h INT AS (a * 2) VIRTUAL, "
      "i VARCHAR(20) AS (CONCAT('x', a)) STORED, j INT INVISIBLE DEFAULT 3, k SERIAL) CHARSET latin1",
      "ALTER TABLE t3 ADD COLUMN l INT FIRST, DROP COLUMN g, ADD m VARCHAR(5) DEFAULT 'q' AFTER l",
      "ALTER TABLE t3 MODIFY e DATE NOT NULL DEFAULT '2021-03-04', ADD INDEX idx_b (b), "
      "ADD n DATETIME DEFAULT '2022-05-06 07:08:09', ADD o CHAR(36) DEFAULT (UUID())",
      "TRUNCATE TABLE t3",
      "DROP TABLE t1_old",
      "CREATE TABLE t4 (x INT NOT NULL, y INT NOT NULL, UNIQUE KEY (x, y))",
      "ALTER TABLE t4 ADD UNIQUE KEY (x), ADD p INT AFTER x, ADD q INT AFTER p",
      "ALTER TABLE t4 ADD PRIMARY KEY (y), DROP INDEX x",
      "CREATE UNIQUE INDEX uq_q ON t4 (q)",
      "DROP INDEX x_2 ON t4",
      "ALTER TABLE t4 CHANGE q q2 BIGINT UNSIGNED NOT NULL DEFAULT 9, ALTER p SET DEFAULT -1",
      "ALTER TABLE base ADD w INT NOT NULL DEFAULT '12', ADD u VARCHAR(4) NOT NULL, MODIFY v VARCHAR(20) "
      "FIRST",
      "ALTER TABLE base ENGINE=InnoDB, DEFAULT CHARSET=latin1, ADD lat VARCHAR(3)",
  };
  // Foreign keys: generated names (MariaDB numbers them in the order written, ALTER takes one more
  // than the highest), renames of children (their <table>_ibfk_<n> names follow) and of parents.
  const std::string create_child =
      "CREATE TABLE c1 (a INT, b INT, d INT, e INT REFERENCES p1 (id), FOREIGN KEY (a) REFERENCES p1 (id), "
      "FOREIGN KEY myidx (b) REFERENCES p1 (id) ON UPDATE CASCADE ON DELETE SET NULL, "
      "CONSTRAINT c1_ibfk_7 FOREIGN KEY (d) REFERENCES p1 (k) ON DELETE NO ACTION ON UPDATE SET DEFAULT, "
      "FOREIGN KEY (e) REFERENCES p1 (id) ON DELETE CASCADE) ENGINE=InnoDB";
  const std::string create_self_referencing =
      "CREATE TABLE emp (id INT PRIMARY KEY, manager_id INT, CONSTRAINT fk_manager FOREIGN KEY (manager_id) "
      "REFERENCES emp (id) ON DELETE SET NULL) ENGINE=InnoDB";
  const std::vector<std::string> foreign_key_statements = {
      "CREATE TABLE p1 (id INT PRIMARY KEY, k INT, UNIQUE KEY (k)) ENGINE=InnoDB",
      create_child,
      "ALTER TABLE c1 ADD FOREIGN KEY (a) REFERENCES p1 (k)",
      "RENAME TABLE c1 TO c2",
      "RENAME TABLE p1 TO p2",
      "ALTER TABLE p2 CHANGE id idd INT",
      "ALTER TABLE c2 RENAME COLUMN a TO aa, DROP FOREIGN KEY c2_ibfk_3",
      "CREATE TABLE l1 LIKE c2",
      "ALTER TABLE c2 RENAME TO c3",
      create_self_referencing,
      "ALTER TABLE emp RENAME COLUMN id TO emp_id",
      "RENAME TABLE emp TO staff",
      "ALTER TABLE staff ADD COLUMN mentor INT REFERENCES staff (emp_id)",
      "SET SESSION foreign_key_checks = 0",
      "DROP TABLE p2",
  };
  statements.insert(statements.end(), foreign_key_statements.begin(), foreign_key_statements.end());
  for (const std::string& sql : statements) {
    SCOPED_TRACE(sql);
    Status executed = conn->Execute(sql);
    ASSERT_TRUE(executed.ok()) << executed.error().message();
    auto applied = tracker.ApplySql(sql, kDatabase);
    ASSERT_TRUE(applied.ok()) << applied.error().message();
    auto loaded = Load(*conn, mariadb);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message();
    std::vector<std::string> loaded_names;
    for (TableSchema& t : *loaded) {
      loaded_names.push_back(t.name);
      Tracker scratch(options);
      TableSchema name_only{t.database, t.name};
      scratch.SetTable(std::move(t));
      const TableSchema* fresh = scratch.Find(name_only.database, name_only.name);
      const TableSchema* tracked = tracker.Find(name_only.database, name_only.name);
      ASSERT_NE(tracked, nullptr) << "the tracker lost " << name_only.name;
      EXPECT_EQ(Comparable(*tracked, *fresh), Comparable(*fresh, *tracked))
          << "tracked (left) vs information_schema (right)";
    }
    std::vector<std::string> tracked_names;
    for (const TableSchema* t : tracker.Tables()) {
      if (t->database == kDatabase) tracked_names.push_back(t->name);
    }
    EXPECT_EQ(tracked_names, loaded_names);
  }
  // The state survives a serialization round trip unchanged.
  auto copy = Tracker::Deserialize(tracker.Serialize());
  ASSERT_TRUE(copy.ok()) << copy.error().message();
  EXPECT_EQ(copy->Serialize(), tracker.Serialize());
}

}  // namespace
}  // namespace chsync::schema
