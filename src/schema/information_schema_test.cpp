// LoadSchemas on rows shaped as each server family returns them (the live MariaDB case is in
// information_schema_integration_test.cpp; MySQL rows here follow MySQL 8.0's information_schema).

#include "schema/information_schema.h"

#include <gtest/gtest.h>

#include "schema/explain.h"
#include "schema/tracker.h"

namespace chsync::schema {
namespace {

using Row = std::vector<std::optional<std::string>>;
constexpr std::nullopt_t kNull = std::nullopt;

TextRows Tables(std::vector<Row> rows) {
  return TextRows{{"TABLE_SCHEMA", "TABLE_NAME", "ENGINE", "TABLE_COLLATION"}, std::move(rows)};
}
TextRows Columns(std::vector<Row> rows) {
  return TextRows{{"TABLE_SCHEMA", "TABLE_NAME", "COLUMN_NAME", "ORDINAL_POSITION", "COLUMN_DEFAULT",
                   "IS_NULLABLE", "COLUMN_TYPE", "CHARACTER_SET_NAME", "COLLATION_NAME", "EXTRA",
                   "COLUMN_COMMENT", "GENERATION_EXPRESSION"},
                  std::move(rows)};
}
TextRows Statistics(std::vector<Row> rows) {
  return TextRows{{"TABLE_SCHEMA", "TABLE_NAME", "INDEX_NAME", "NON_UNIQUE", "SEQ_IN_INDEX", "COLUMN_NAME"},
                  std::move(rows)};
}

std::string Load(const TextRows& t, const TextRows& c, const TextRows& s, bool mariadb) {
  auto loaded = LoadSchemas(t, c, s, InformationSchemaFlavor{mariadb});
  if (!loaded.ok()) return "error: " + loaded.error().message();
  Tracker::Options options;
  options.mariadb = mariadb;
  Tracker tracker(options);
  std::string out;
  for (TableSchema& table : *loaded) {
    std::string db = table.database, name = table.name;
    tracker.SetTable(std::move(table));
    out += ExplainSchema(*tracker.Find(db, name));
  }
  return out;
}

TEST(InformationSchemaTest, MySql80Rows) {
  TextRows tables = Tables({{"shop", "t", "InnoDB", "utf8mb4_0900_ai_ci"}});
  TextRows columns = Columns({
      {"shop", "t", "id", "1", kNull, "NO", "bigint unsigned", kNull, kNull, "auto_increment", "", ""},
      {"shop", "t", "name", "2", "", "NO", "varchar(20)", "utf8mb4", "utf8mb4_0900_ai_ci", "", "the name",
       ""},
      {"shop", "t", "price", "3", "1.50", "YES", "decimal(10,2)", kNull, kNull, "", "", ""},
      {"shop", "t", "flag", "4", "1", "NO", "tinyint(1)", kNull, kNull, "", "", ""},
      {"shop", "t", "at", "5", "CURRENT_TIMESTAMP(3)", "NO", "datetime(3)", kNull, kNull,
       "DEFAULT_GENERATED on update CURRENT_TIMESTAMP(3)", "", ""},
      {"shop", "t", "ref", "6", "uuid()", "YES", "char(36)", "utf8mb4", "utf8mb4_0900_ai_ci",
       "DEFAULT_GENERATED", "", ""},
      {"shop", "t", "st", "7", "new", "NO", "enum('new','it''s')", "utf8mb4", "utf8mb4_0900_ai_ci", "", "",
       ""},
      {"shop", "t", "b", "8", "b'101'", "YES", "bit(3)", kNull, kNull, "", "", ""},
      {"shop", "t", "g", "9", kNull, "YES", "int", kNull, kNull, "VIRTUAL GENERATED", "", "(`id` * 2)"},
      {"shop", "t", "h", "10", kNull, "YES", "int", kNull, kNull, "INVISIBLE", "", ""},
      {"shop", "t", "bin", "11", "0x6162", "YES", "varbinary(4)", kNull, kNull, "", "", ""},
      {"shop", "t", "ts", "12", "CURRENT_TIMESTAMP", "YES", "timestamp", kNull, kNull, "", "", ""},
      {"view", "v", "x", "1", kNull, "YES", "int", kNull, kNull, "", "", ""},
  });
  TextRows stats = Statistics({
      {"shop", "t", "PRIMARY", "0", "1", "id"},
      {"shop", "t", "idx", "1", "1", "price"},
      {"shop", "t", "uk", "0", "1", "name"},
      {"shop", "t", "uk", "0", "2", "st"},
      {"shop", "t", "fx", "0", "1", kNull},
  });
  EXPECT_EQ(Load(tables, columns, stats, false),
            "table shop.t engine=InnoDB charset=utf8mb4 collation=utf8mb4_0900_ai_ci\n"
            "  1 id bigint unsigned not_null auto_increment\n"
            "  2 name varchar(20) charset=utf8mb4 collation=utf8mb4_0900_ai_ci not_null default='' "
            "comment='the name'\n"
            "  3 price decimal(10,2) default=1.50\n"
            "  4 flag tinyint width=1 not_null default=1\n"
            "  5 at datetime(3) not_null default=CURRENT_TIMESTAMP(3) on_update=CURRENT_TIMESTAMP\n"
            "  6 ref char(36) charset=utf8mb4 collation=utf8mb4_0900_ai_ci default=(uuid())\n"
            "  7 st enum('new','it''s') charset=utf8mb4 collation=utf8mb4_0900_ai_ci not_null default='new'\n"
            "  8 b bit(3) default=b'101'\n"
            "  9 g int generated=virtual((`id` * 2))\n"
            "  10 h int default=NULL invisible\n"
            "  11 bin varbinary(4) default=x'6162'\n"
            "  12 ts timestamp default=CURRENT_TIMESTAMP\n"
            "  primary (id)\n"
            "  unique fx ((expression))\n"
            "  unique uk (name,st)\n");
}

TEST(InformationSchemaTest, MariaDbRowsQuoteLiterals) {
  TextRows tables = Tables({{"m", "t", "InnoDB", "latin1_swedish_ci"}});
  TextRows columns = Columns({
      {"m", "t", "id", "1", kNull, "NO", "int(11)", kNull, kNull, "", "", kNull},
      {"m", "t", "s", "2", "'it''s'", "YES", "varchar(5)", "latin1", "latin1_swedish_ci", "", "", kNull},
      {"m", "t", "n", "3", "NULL", "YES", "int(11)", kNull, kNull, "", "", kNull},
      {"m", "t", "at", "4", "current_timestamp()", "NO", "timestamp", kNull, kNull,
       "on update current_timestamp()", "", kNull},
      {"m", "t", "u", "5", "uuid()", "YES", "char(36)", "latin1", "latin1_swedish_ci", "", "", kNull},
      {"m", "t", "d", "6", "-3", "YES", "int(11)", kNull, kNull, "", "", kNull},
      {"m", "t", "j", "7", "NULL", "YES", "longtext", "utf8mb4", "utf8mb4_bin", "", "", kNull},
      {"m", "t", "p", "8", kNull, "YES", "int(11)", kNull, kNull, "STORED GENERATED", "", "`id` + 1"},
  });
  EXPECT_EQ(Load(tables, columns, Statistics({}), true),
            "table m.t engine=InnoDB charset=latin1 collation=latin1_swedish_ci\n"
            "  1 id int not_null\n"
            "  2 s varchar(5) charset=latin1 collation=latin1_swedish_ci default='it\\'s'\n"
            "  3 n int default=NULL\n"
            "  4 at timestamp not_null default=CURRENT_TIMESTAMP on_update=CURRENT_TIMESTAMP\n"
            "  5 u char(36) charset=latin1 collation=latin1_swedish_ci default=(uuid())\n"
            "  6 d int default=-3\n"
            "  7 j longtext charset=utf8mb4 collation=utf8mb4_bin default=NULL\n"
            "  8 p int generated=stored(`id` + 1)\n");
}

// MariaDB keeps a JSON column as LONGTEXT with the column's CHECK (json_valid(`col`)), named after
// the column in CHECK_CONSTRAINTS; a table's CONSTRAINT … CHECK and a check on a non-text column do
// not make a JSON column (the DDL does not recognise them either).
TEST(InformationSchemaTest, MariaDbJsonColumnsFromTheirColumnCheck) {
  std::vector<TableSchema> schemas(1);
  schemas[0].database = "m";
  schemas[0].name = "t";
  for (const auto& [name, type] :
       std::vector<std::pair<std::string, ColumnType>>{{"doc", ColumnType::kLongText},
                                                       {"a`b", ColumnType::kText},
                                                       {"tbl", ColumnType::kText},
                                                       {"n", ColumnType::kInt},
                                                       {"other", ColumnType::kText}}) {
    Column c;
    c.name = name;
    c.type = type;
    schemas[0].columns.push_back(c);
  }
  TextRows checks{{"CONSTRAINT_SCHEMA", "TABLE_NAME", "CONSTRAINT_NAME", "CHECK_CLAUSE"},
                  {{"m", "t", "doc", "json_valid(`doc`)"},
                   {"m", "t", "a`b", "json_valid(`a``b`)"},
                   {"m", "t", "CONSTRAINT_1", "json_valid(`tbl`)"},
                   {"m", "t", "n", "json_valid(`n`)"},
                   {"m", "t", "other", "`other` <> ''"},
                   {"m", "u", "doc", "json_valid(`doc`)"},
                   {"m", "t", kNull, "json_valid(`doc`)"}}};
  MarkJsonColumns(checks, schemas);
  std::vector<bool> marked;
  for (const Column& c : schemas[0].columns) marked.push_back(c.json_valid_check);
  EXPECT_EQ(marked, (std::vector<bool>{true, true, false, false, false}));
}

TEST(InformationSchemaTest, BadRowsAreErrorsNamingTheColumn) {
  TextRows tables = Tables({{"d", "t", "InnoDB", "latin1_swedish_ci"}});
  std::string out =
      Load(tables, Columns({{"d", "t", "c", "1", kNull, "YES", "mystery(3)", kNull, kNull, "", "", kNull}}),
           Statistics({}), false);
  EXPECT_NE(out.find("error: information_schema for d.t column `c`: column type 'mystery(3)' does not parse"),
            std::string::npos)
      << out;
  TextRows short_row = Columns({{"d", "t", "c"}});
  EXPECT_NE(Load(tables, short_row, Statistics({}), false).find("has 3 values, expected 12"),
            std::string::npos);
}

TextRows ForeignKeys(std::vector<Row> rows) {
  return TextRows{{"CONSTRAINT_SCHEMA", "TABLE_NAME", "CONSTRAINT_NAME", "COLUMN_NAME", "ORDINAL_POSITION",
                   "REFERENCED_TABLE_SCHEMA", "REFERENCED_TABLE_NAME", "REFERENCED_COLUMN_NAME",
                   "UPDATE_RULE", "DELETE_RULE"},
                  std::move(rows)};
}

/// The schema LoadSchemas builds from the rows, after SetTable, and the one the tracker builds from
/// `create` applied in database `db`: the two paths must agree.
void ExpectSameAsDdl(const TextRows& t, const TextRows& c, const TextRows& s, const TextRows& f, bool mariadb,
                     const std::string& db, const std::vector<std::string>& ddl, const std::string& table) {
  auto loaded = LoadSchemas(t, c, s, f, InformationSchemaFlavor{mariadb});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  Tracker::Options options;
  options.mariadb = mariadb;
  Tracker from_rows(options), from_ddl(options);
  for (TableSchema& schema : *loaded) from_rows.SetTable(std::move(schema));
  for (const std::string& sql : ddl) {
    auto r = from_ddl.ApplySql(sql, db);
    ASSERT_TRUE(r.ok()) << r.error().message();
  }
  const TableSchema* a = from_rows.Find(db, table);
  const TableSchema* b = from_ddl.Find(db, table);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(ExplainSchema(*a), ExplainSchema(*b));
  // Type spellings differ between the paths; the foreign keys compare whole.
  EXPECT_TRUE(a->foreign_keys == b->foreign_keys);
}

TEST(InformationSchemaTest, MySqlForeignKeysMatchTheTrackersDdl) {
  // Sakila's film_category and employees' dept_emp as MySQL 8.0 reports them: an omitted action is
  // NO ACTION; keys come ordered by name whatever order the DDL wrote them in.
  TextRows tables = Tables({{"sakila", "film_category", "InnoDB", "utf8mb4_0900_ai_ci"},
                            {"sakila", "dept_emp", "InnoDB", "utf8mb4_0900_ai_ci"}});
  TextRows columns = Columns({
      {"sakila", "film_category", "film_id", "1", kNull, "NO", "smallint unsigned", kNull, kNull, "", "", ""},
      {"sakila", "film_category", "category_id", "2", kNull, "NO", "tinyint unsigned", kNull, kNull, "", "",
       ""},
      {"sakila", "dept_emp", "emp_no", "1", kNull, "NO", "int", kNull, kNull, "", "", ""},
      {"sakila", "dept_emp", "dept_no", "2", kNull, "NO", "char(4)", "utf8mb4", "utf8mb4_0900_ai_ci", "", "",
       ""},
  });
  TextRows stats = Statistics({
      {"sakila", "film_category", "PRIMARY", "0", "1", "film_id"},
      {"sakila", "film_category", "PRIMARY", "0", "2", "category_id"},
      {"sakila", "dept_emp", "PRIMARY", "0", "1", "emp_no"},
      {"sakila", "dept_emp", "PRIMARY", "0", "2", "dept_no"},
  });
  TextRows fks = ForeignKeys({
      {"sakila", "dept_emp", "dept_emp_ibfk_1", "emp_no", "1", "sakila", "employees", "emp_no", "NO ACTION",
       "CASCADE"},
      {"sakila", "dept_emp", "dept_emp_ibfk_2", "dept_no", "1", "sakila", "departments", "dept_no",
       "NO ACTION", "CASCADE"},
      {"sakila", "film_category", "fk_film_category_category", "category_id", "1", "sakila", "category",
       "category_id", "CASCADE", "RESTRICT"},
      {"sakila", "film_category", "fk_film_category_film", "film_id", "1", "sakila", "film", "film_id",
       "CASCADE", "RESTRICT"},
  });
  ExpectSameAsDdl(tables, columns, stats, fks, false, "sakila",
                  {"CREATE TABLE film_category (film_id SMALLINT UNSIGNED NOT NULL, category_id TINYINT "
                   "UNSIGNED NOT NULL, PRIMARY KEY (film_id, category_id), "
                   "CONSTRAINT fk_film_category_film FOREIGN KEY (film_id) REFERENCES film (film_id) "
                   "ON DELETE RESTRICT ON UPDATE CASCADE, "
                   "CONSTRAINT fk_film_category_category FOREIGN KEY (category_id) REFERENCES category "
                   "(category_id) ON DELETE RESTRICT ON UPDATE CASCADE) ENGINE=InnoDB CHARSET utf8mb4 "
                   "COLLATE utf8mb4_0900_ai_ci"},
                  "film_category");
  ExpectSameAsDdl(tables, columns, stats, fks, false, "sakila",
                  {"CREATE TABLE dept_emp (emp_no INT NOT NULL, dept_no CHAR(4) NOT NULL, "
                   "FOREIGN KEY (emp_no) REFERENCES employees (emp_no) ON DELETE CASCADE, "
                   "FOREIGN KEY (dept_no) REFERENCES departments (dept_no) ON DELETE CASCADE, "
                   "PRIMARY KEY (emp_no, dept_no)) ENGINE=InnoDB CHARSET utf8mb4 COLLATE utf8mb4_0900_ai_ci"},
                  "dept_emp");
}

TEST(InformationSchemaTest, MariaDbForeignKeysMatchTheTrackersDdl) {
  // A two-column key and a cross-database parent, as MariaDB 10.11 reports them (an omitted action
  // is RESTRICT there).
  TextRows tables = Tables({{"m", "c", "InnoDB", "latin1_swedish_ci"}});
  TextRows columns = Columns({
      {"m", "c", "a", "1", "NULL", "YES", "int(11)", kNull, kNull, "", "", kNull},
      {"m", "c", "b", "2", "NULL", "YES", "int(11)", kNull, kNull, "", "", kNull},
  });
  TextRows fks = ForeignKeys({
      {"m", "c", "c_ibfk_1", "b", "1", "m", "p", "y", "RESTRICT", "RESTRICT"},
      {"m", "c", "pair", "a", "1", "other", "q", "x1", "CASCADE", "SET NULL"},
      {"m", "c", "pair", "b", "2", "other", "q", "x2", "CASCADE", "SET NULL"},
      {"x", "untracked", "f", "a", "1", "m", "p", "y", "RESTRICT", "RESTRICT"},
  });
  ExpectSameAsDdl(tables, columns, Statistics({}), fks, true, "m",
                  {"CREATE TABLE c (a INT, b INT REFERENCES p (y), CONSTRAINT pair FOREIGN KEY (a, b) "
                   "REFERENCES other.q (x1, x2) ON UPDATE CASCADE ON DELETE SET NULL) ENGINE=InnoDB "
                   "CHARSET latin1 COLLATE latin1_swedish_ci"},
                  "c");
}

TEST(InformationSchemaTest, BadForeignKeyRowsAreErrors) {
  TextRows tables = Tables({{"d", "t", "InnoDB", "latin1_swedish_ci"}});
  TextRows columns = Columns({{"d", "t", "a", "1", kNull, "YES", "int", kNull, kNull, "", "", kNull}});
  auto bad_rule = LoadSchemas(tables, columns, Statistics({}),
                              ForeignKeys({{"d", "t", "f", "a", "1", "d", "p", "a", "EXPLODE", "RESTRICT"}}),
                              InformationSchemaFlavor{});
  ASSERT_FALSE(bad_rule.ok());
  EXPECT_NE(bad_rule.error().message().find("d.t foreign key `f`: unknown UPDATE_RULE 'EXPLODE'"),
            std::string::npos)
      << bad_rule.error().message();
  auto short_row =
      LoadSchemas(tables, columns, Statistics({}), ForeignKeys({{"d", "t", "f"}}), InformationSchemaFlavor{});
  ASSERT_FALSE(short_row.ok());
  EXPECT_NE(short_row.error().message().find("has 3 values, expected 10"), std::string::npos);
}

TEST(InformationSchemaTest, QueriesEmbedNamesAsHex) {
  std::string q = ColumnsQuery({"shop", "it's"});
  EXPECT_NE(q.find("CONVERT(X'73686F70' USING utf8mb4), CONVERT(X'69742773' USING utf8mb4)"),
            std::string::npos)
      << q;
  EXPECT_NE(TablesQuery({}).find("IN (NULL)"), std::string::npos);
  std::string fk = ForeignKeysQuery({"shop"});
  EXPECT_NE(fk.find("rc.CONSTRAINT_SCHEMA IN (CONVERT(X'73686F70' USING utf8mb4))"), std::string::npos) << fk;
}

}  // namespace
}  // namespace chsync::schema
