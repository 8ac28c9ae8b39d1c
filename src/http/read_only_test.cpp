#include "http/read_only.h"

#include <gtest/gtest.h>

namespace chsync::http {
namespace {

struct Case {
  const char* sql;
  bool read_only;
};

TEST(ReadOnlyTest, Table) {
  const Case cases[] = {
      // The read-only keywords, any case.
      {"SELECT 1", true},
      {"select 1", true},
      {"  \n\tSeLeCt 1", true},
      {"WITH x AS (SELECT 1) SELECT * FROM x", true},
      {"with 1 as a select a", true},
      {"SHOW TABLES", true},
      {"DESCRIBE TABLE t", true},
      {"DESC t", true},
      {"EXISTS TABLE t", true},
      {"explain select 1", true},
      {"EXPLAIN PIPELINE SELECT 1", true},
      {"(SELECT 1) UNION ALL (SELECT 2)", true},
      {"((select 1))", true},
      {"SELECT * FROM t FORMAT JSON", true},
      // Comments before the keyword.
      {"-- a comment\nSELECT 1", true},
      {"/* x */ select 1", true},
      {"/* outer /* nested */ still comment */ SELECT 1", true},
      {"/* x */ insert into t values (1)", false},
      {"-- SELECT\nDROP TABLE t", false},
      {"/* SELECT */ DROP TABLE t", false},
      // A trailing semicolon and comments are fine; a second statement is not.
      {"SELECT 1;", true},
      {"SELECT 1 ;  \n", true},
      {"SELECT 1; -- done", true},
      {"SELECT 1; /* done */", true},
      {"SELECT 1; DROP TABLE x", false},
      {"SELECT 1;DROP TABLE x", false},
      {"SELECT 1; ;", false},
      {"SELECT 1; /* c */ DROP TABLE x", false},
      // Semicolons and keywords inside quotes and comments.
      {"select ';'", true},
      {"select ';' ; ", true},
      {"select \"a;b\" from t", true},
      {"select `a;b` from t", true},
      {"select 'it''s; fine'", true},
      {"select 'back\\'slash; still string'", true},
      {"select 'x\\\\'; drop table t", false},
      {"select 1 -- ; drop table t", true},
      {"select 1 /* ; drop table t */", true},
      {"select 'a' || ';' || 'b'; drop table t", false},
      // Not read-only keywords, or not certain.
      {"INSERT INTO t SELECT 1", false},
      {"insert into t values (1)", false},
      {"CREATE TABLE t (a Int8) ENGINE = Memory", false},
      {"DROP TABLE t", false},
      {"ALTER TABLE t DELETE WHERE 1", false},
      {"TRUNCATE TABLE t", false},
      {"SET readonly = 0", false},
      {"OPTIMIZE TABLE t FINAL", false},
      {"SYSTEM STOP MERGES", false},
      {"KILL QUERY WHERE 1", false},
      {"SELECTX 1", false},
      {"SELECT_1", false},
      {"SHOWS", false},
      {"", false},
      {"   ", false},
      {"-- only a comment", false},
      {"(", false},
      {";", false},
      {"select 'unterminated", false},
      {"select 1 /* unterminated", false},
      {"/* unterminated select 1", false},
      {"select 1 # ; drop table t", false},
      {"select $$ ' $$; drop table t; -- '", false},
      {"SELECT 1 INTO OUTFILE '/tmp/x'", false},
      {"select 1 into /* c */ outfile 'x'", false},
      {"select outfile from t", true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(IsReadOnlyStatement(c.sql), c.read_only) << c.sql;
  }
}

}  // namespace
}  // namespace chsync::http
