// Issue 33, case 9: InnoDB's foreign-key cascades change child rows without binlog row events;
// chsync follows them in ClickHouse from the parent's row changes (src/pipe/cascades.h,
// docs/delivery.md "Foreign-key cascades"). Against MariaDB FULL on both destinations: the Sakila
// category/film_category ON UPDATE CASCADE, an employees-like ON DELETE CASCADE over several child
// tables, SET NULL on delete and update, a multi-row key shift, a session with foreign_key_checks
// off, a kill -9 between a cascade's new rows and its tombstones, and keys chsync names as not
// followed.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

#include "pipe_compare.h"
#include "pipe_harness.h"
#include "test_env.h"

namespace chsync {
namespace {

using testing::CommandResult;
using testing::Dest;
using testing::PipeTest;

constexpr int kServerIdBase = 20900000;

class CascadesTest : public ::testing::TestWithParam<Dest> {
 protected:
  void SetUp() override { p_.Init("CHSYNC_TEST_MYSQL_FULL", GetParam(), "cascade", kServerIdBase); }
  void TearDown() override { p_.Cleanup(); }

  /// Sakila's category and film_category (ON DELETE RESTRICT ON UPDATE CASCADE), 16 categories and
  /// 1,000 films in them.
  void Sakila() {
    for (const char* sql : std::initializer_list<const char*>{
             "CREATE TABLE category (category_id TINYINT UNSIGNED NOT NULL AUTO_INCREMENT, name VARCHAR(25) "
             "NOT "
             "NULL, PRIMARY KEY (category_id))",
             "CREATE TABLE film_category (film_id SMALLINT UNSIGNED NOT NULL, category_id TINYINT UNSIGNED "
             "NOT "
             "NULL, last_update TIMESTAMP NOT NULL DEFAULT '2006-02-15 05:07:09', PRIMARY KEY (film_id, "
             "category_id), KEY fk_film_category_category (category_id), CONSTRAINT "
             "fk_film_category_category "
             "FOREIGN KEY (category_id) REFERENCES category (category_id) ON DELETE RESTRICT ON UPDATE "
             "CASCADE)",
             "INSERT INTO category (category_id, name) SELECT seq, CONCAT('cat', seq) FROM seq_1_to_16",
             "INSERT INTO film_category (film_id, category_id) SELECT seq, 1 + seq % 16 FROM seq_1_to_1000"})
      p_.Exec(sql);
  }

  /// employees with dept_emp, salaries and titles, each ON DELETE CASCADE (the employees sample
  /// database's keys), 300 employees.
  void Employees() {
    for (
        const char* sql : std::initializer_list<const char*>{
            "CREATE TABLE employees (emp_no INT NOT NULL, last_name VARCHAR(16) NOT NULL, PRIMARY KEY "
            "(emp_no))",
            "CREATE TABLE departments (dept_no CHAR(4) NOT NULL, dept_name VARCHAR(40) NOT NULL, PRIMARY KEY "
            "(dept_no))",
            "CREATE TABLE dept_emp (emp_no INT NOT NULL, dept_no CHAR(4) NOT NULL, from_date DATE NOT NULL, "
            "PRIMARY KEY (emp_no, dept_no), FOREIGN KEY (emp_no) REFERENCES employees (emp_no) ON DELETE "
            "CASCADE, FOREIGN KEY (dept_no) REFERENCES departments (dept_no) ON DELETE CASCADE)",
            "CREATE TABLE salaries (emp_no INT NOT NULL, salary INT NOT NULL, from_date DATE NOT NULL, "
            "PRIMARY "
            "KEY (emp_no, from_date), FOREIGN KEY (emp_no) REFERENCES employees (emp_no) ON DELETE CASCADE)",
            "CREATE TABLE titles (emp_no INT NOT NULL, title VARCHAR(50) NOT NULL, from_date DATE NOT NULL, "
            "PRIMARY KEY (emp_no, title, from_date), FOREIGN KEY (emp_no) REFERENCES employees (emp_no) ON "
            "DELETE CASCADE)",
            "INSERT INTO employees SELECT 10000 + seq, CONCAT('n', seq) FROM seq_1_to_300",
            "INSERT INTO departments VALUES ('d001', 'Marketing'), ('d002', 'Finance'), ('d003', 'Sales')",
            "INSERT INTO dept_emp SELECT 10000 + seq, CONCAT('d00', 1 + seq % 3), '2000-01-01' FROM "
            "seq_1_to_300",
            "INSERT INTO salaries SELECT 10000 + (seq % 300) + 1, seq, '1990-01-01' + INTERVAL (seq DIV 300) "
            "YEAR FROM seq_0_to_1499",
            "INSERT INTO titles SELECT 10000 + seq, IF(seq % 2, 'Engineer', 'Staff'), '1995-06-01' FROM "
            "seq_1_to_300"})
      p_.Exec(sql);
  }

  void ExpectAllEqual(const std::vector<std::string>& tables, const std::string& when) {
    for (const std::string& t : tables) {
      std::string what = when;
      what += " (" + t + ")";
      EXPECT_EQUAL_TO_SOURCE(p_, t, what);
    }
  }

  PipeTest p_;
};

TEST_P(CascadesTest, SakilasCategoryIdUpdateCascadesIntoFilmCategory) {
  ASSERT_TRUE(p_.connected());
  Sakila();
  CommandResult r = p_.Run();
  ASSERT_RUN_OK(r, "the snapshot");
  EXPECT_NE(r.err.find("film_category (fk_film_category_category) -> " + p_.db() +
                       ".category: ON UPDATE CASCADE: followed"),
            std::string::npos)
      << r.Describe();
  // The case: 62 films of category 16 move to 100 without a row event of film_category.
  p_.ExecAll(
      {"UPDATE category SET category_id = 100 WHERE category_id = 16",
       // Several rows of one event, each key taking another's old value.
       "UPDATE category SET category_id = category_id + 1 WHERE category_id BETWEEN 10 AND 15 ORDER BY "
       "category_id DESC",
       // A later change of a cascaded row wins over the cascade's.
       "UPDATE film_category SET last_update = '2020-01-01 00:00:00' WHERE category_id = 100 AND film_id < "
       "100",
       "UPDATE category SET name = 'renamed' WHERE category_id = 3"});
  r = p_.Run();
  ASSERT_RUN_OK(r, "after the cascading updates");
  ExpectAllEqual({"category", "film_category"}, "after the cascading updates");
  // Category 10's films moved to 11: none is left under 10 in ClickHouse either.
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.DestTable("film_category") +
                         " FINAL WHERE category_id = 10 AND _chsync_is_deleted = 0"),
            "0");
  EXPECT_EQ(p_.DestValue("SELECT count() FROM " + p_.DestTable("film_category") +
                         " FINAL WHERE category_id = 100 AND _chsync_is_deleted = 0"),
            "62");
}

TEST_P(CascadesTest, DeletedEmployeesTakeTheirRowsInEveryChildTable) {
  ASSERT_TRUE(p_.connected());
  Employees();
  ASSERT_RUN_OK(p_.Run(), "the snapshot");
  p_.ExecAll({// The case: 50 employees in one statement.
              "DELETE FROM employees WHERE emp_no BETWEEN 10001 AND 10050",
              // One at a time, with its children changed in the same transaction first.
              "BEGIN", "UPDATE salaries SET salary = salary + 1 WHERE emp_no = 10100",
              "DELETE FROM employees WHERE emp_no = 10100", "COMMIT",
              // A department: its dept_emp rows go.
              "DELETE FROM departments WHERE dept_no = 'd002'",
              // An employee deleted, then one with the same number hired again.
              "DELETE FROM employees WHERE emp_no = 10200", "INSERT INTO employees VALUES (10200, 'again')",
              "INSERT INTO salaries VALUES (10200, 1, '2030-01-01')"});
  ASSERT_RUN_OK(p_.Run(), "after the deletes");
  ExpectAllEqual({"employees", "departments", "dept_emp", "salaries", "titles"}, "after the deletes");
}

TEST_P(CascadesTest, SetNullOnDeleteAndOnUpdate) {
  ASSERT_TRUE(p_.connected());
  for (const char* sql : std::initializer_list<const char*>{
           "CREATE TABLE owner (id INT PRIMARY KEY, code VARCHAR(10) NOT NULL, UNIQUE KEY (code))",
           // By the primary key (outside the child's sorting key) and by a unique string key.
           "CREATE TABLE pet (id INT PRIMARY KEY, owner_id INT NULL, owner_code VARCHAR(10) NULL, "
           "CONSTRAINT fk_owner FOREIGN KEY (owner_id) REFERENCES owner (id) ON DELETE SET NULL ON UPDATE "
           "SET "
           "NULL, "
           "CONSTRAINT fk_code FOREIGN KEY (owner_code) REFERENCES owner (code) ON DELETE SET NULL ON UPDATE "
           "CASCADE)",
           "INSERT INTO owner SELECT seq, CONCAT('o''', seq) FROM seq_1_to_20",
           "INSERT INTO pet SELECT seq, 1 + seq % 20, CONCAT('o''', 1 + (seq + 7) % 20) FROM seq_1_to_200"})
    p_.Exec(sql);
  ASSERT_RUN_OK(p_.Run(), "the snapshot");
  p_.ExecAll({"DELETE FROM owner WHERE id IN (1, 2, 3)", "UPDATE owner SET id = 1000 WHERE id = 4",
              "UPDATE owner SET code = CONCAT(code, '-x') WHERE id BETWEEN 10 AND 12"});
  ASSERT_RUN_OK(p_.Run(), "after the changes");
  ExpectAllEqual({"owner", "pet"}, "after SET NULL and a cascaded string key");
}

TEST_P(CascadesTest, ASessionWithoutForeignKeyChecksCascadesNothing) {
  ASSERT_TRUE(p_.connected());
  Sakila();
  ASSERT_RUN_OK(p_.Run(), "the snapshot");
  const std::string before = p_.SourceValue("SELECT count(*) FROM film_category WHERE category_id = 5");
  ASSERT_EQ(before, "63");
  p_.ExecAll({"SET SESSION foreign_key_checks = 0",
              "UPDATE category SET category_id = 99 WHERE category_id = 5",
              "SET SESSION foreign_key_checks = 1"});
  ASSERT_EQ(p_.SourceValue("SELECT count(*) FROM film_category WHERE category_id = 5"), before)
      << "the source's children keep the old value";
  ASSERT_RUN_OK(p_.Run(), "after the unchecked update");
  ExpectAllEqual({"category", "film_category"}, "after an update with foreign_key_checks off");
}

TEST_P(CascadesTest, AKillBetweenACascadesNewRowsAndItsTombstonesConverges) {
  ASSERT_TRUE(p_.connected());
  Sakila();
  ASSERT_RUN_OK(p_.Run(), "the snapshot");
  p_.ExecAll({"UPDATE category SET category_id = 200 WHERE category_id = 7",
              "INSERT INTO film_category VALUES "
              "(2000, 200, '2021-01-01 00:00:00')"});
  // The update's first statement (the new rows) ran, the second (the old rows' tombstones) did not.
  setenv("CHSYNC_CRASH_AT", "cascade#2", 1);
  CommandResult r = p_.Run();
  unsetenv("CHSYNC_CRASH_AT");
  ASSERT_EQ(r.exit_code, 137) << r.Describe();
  ASSERT_NE(r.err.find("crash point cascade"), std::string::npos) << r.Describe();
  ASSERT_RUN_OK(p_.Run(), "after the kill");
  ExpectAllEqual({"category", "film_category"}, "after a kill inside a cascade");
  // Once more over the same binlog: the replay writes nothing new.
  ASSERT_RUN_OK(p_.Run(), "again");
  ExpectAllEqual({"category", "film_category"}, "after a replay");
}

// A replay from an earlier checkpoint (the state directory as it was before the cascade) reads a
// child that already holds later rows: one that took the parent's old key again after the cascade
// must not be moved by it (reviewer's case: a phantom row (2001, 200) that nothing removes).
TEST_P(CascadesTest, AReplayLeavesALaterRowWithTheOldKeyAlone) {
  ASSERT_TRUE(p_.connected());
  Sakila();
  ASSERT_RUN_OK(p_.Run(), "the snapshot");
  const std::string saved = p_.state() + ".before";
  std::filesystem::copy(p_.state(), saved, std::filesystem::copy_options::recursive);
  p_.ExecAll({"UPDATE category SET category_id = 200 WHERE category_id = 7",
              "INSERT INTO category VALUES (7, 'again')",
              "INSERT INTO film_category VALUES (2001, 7, '2021-01-01 00:00:00')",
              "UPDATE category SET category_id = 201 WHERE category_id = 200"});
  ASSERT_RUN_OK(p_.Run(), "the changes");
  ExpectAllEqual({"category", "film_category"}, "after the changes");
  std::filesystem::remove_all(p_.state());
  std::filesystem::rename(saved, p_.state());
  ASSERT_RUN_OK(p_.Run(), "the same changes again");
  ExpectAllEqual({"category", "film_category"}, "after a replay of the changes");
}

// A paused parent's rows are not read, so neither are its cascades: the child parks with a message
// rather than keep rows the source removed, and resuming them copies them again.
TEST_P(CascadesTest, ACascadeFromAPausedParentParksTheChild) {
  ASSERT_TRUE(p_.connected());
  Employees();
  ASSERT_RUN_OK(p_.Run(), "the snapshot");
  CommandResult paused = testing::RunCommand(
      {testing::ChsyncBinary(), "pause", "--state", p_.state(), "--table", p_.db() + ".employees"}, 120'000);
  ASSERT_EQ(paused.exit_code, 0) << paused.Describe();
  p_.Exec("DELETE FROM employees WHERE emp_no BETWEEN 10001 AND 10005");
  ASSERT_RUN_OK(p_.Run(), "with the parent paused");
  CommandResult status = p_.ChsyncStatus();
  EXPECT_NE(
      status.out.find("its parent " + p_.db() + ".employees is paused, so chsync cannot follow the cascade"),
      std::string::npos)
      << status.Describe();
  EXPECT_NE(status.out.find(p_.db() + ".salaries  parked"), std::string::npos) << status.Describe();
  EXPECT_EQUAL_TO_SOURCE(p_, "departments", "a table outside the cascade streams on");
  // Resumed (queued while no pipe runs), each held table is copied again.
  for (const std::string& t : {"employees", "dept_emp", "salaries", "titles"}) {
    CommandResult resumed = testing::RunCommand(
        {testing::ChsyncBinary(), "resume", "--state", p_.state(), "--table", p_.db() + "." + t}, 120'000);
    ASSERT_EQ(resumed.exit_code, 0) << resumed.Describe();
  }
  ASSERT_RUN_OK(p_.Run(), "after the resumes");
  ExpectAllEqual({"employees", "dept_emp", "salaries", "titles"}, "after the resumes");
}

TEST_P(CascadesTest, AKeyWhoseParentIsNotReplicatedIsNamedNotFollowed) {
  ASSERT_TRUE(p_.connected());
  Sakila();
  CommandResult r = p_.RunTables(p_.db() + ".film_category");
  ASSERT_RUN_OK(r, "the child alone");
  const std::string line = p_.db() + ".film_category (fk_film_category_category) -> " + p_.db() +
                           ".category: ON UPDATE CASCADE: not followed, its parent table is not replicated";
  EXPECT_NE(r.err.find(line), std::string::npos) << r.Describe();
  CommandResult status = p_.ChsyncStatus();
  EXPECT_NE(status.out.find("  " + line + "\n"), std::string::npos) << status.Describe();
}

INSTANTIATE_TEST_SUITE_P(Destinations, CascadesTest, ::testing::Values(Dest::kServer, Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& info) {
                           return testing::DestName(info.param);
                         });

}  // namespace
}  // namespace chsync
