// `chsync run` end to end, against both destinations (ClickHouse 18.16 over HTTP and an embedded
// chDB store): after each run the destination's FINAL view must equal the source value for value
// (pipe_compare.h), and schema changes must follow the seeds' table (../shared/seeds/README.md).
//
// Every test uses its own source database (the MariaDB servers are shared by parallel tests), its
// own --state directory, its own --server-id and, for the embedded destination, its own store.

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/url.h"
#include "mysql/connection.h"
#include "pipe_compare.h"
#include "pipe_harness.h"
#include "test_env.h"

namespace chsync {
namespace {

using testing::BackgroundProcess;
using testing::CommandResult;
using testing::CompareOptions;
using testing::Dest;
using testing::DestName;
using testing::MakeTempDir;
using testing::PipeTest;
using testing::RunCommand;

/// Replication server ids of this binary (schema_evolution_test uses 3000000 + …).
constexpr int kServerIdBase = 1000000;

/// The destination's FINAL view of `table` equals the source (else the comparison's report).
#define EXPECT_EQUAL_TO_SOURCE(pipe, table)     \
  do {                                          \
    std::string report = (pipe).Compare(table); \
    EXPECT_TRUE(report.empty()) << report;      \
  } while (false)

std::string AllBytesLiteral() {
  static const char kHex[] = "0123456789ABCDEF";
  std::string s = "x'";
  for (int i = 0; i < 256; ++i) {
    s += kHex[i >> 4];
    s += kHex[i & 15];
  }
  return s + "'";
}

// ---------------------------------------------------------------------------------------------
// The comparison itself reports differences (so that the tests below can fail).

TEST(PipeCompareTest, ReportsMissingExtraAndDifferentValues) {
  PipeTest p;
  p.Init("CHSYNC_TEST_MYSQL_FULL", Dest::kServer, "e2e_cmp", kServerIdBase);
  ASSERT_TRUE(p.connected());
  p.ExecAll({"USE " + p.db(), "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10), d DECIMAL(10,2), f FLOAT)",
             "INSERT INTO t VALUES (1, 'a', 1.50, 0.1), (2, 'b', 2.00, 0.2), (3, 'c', NULL, NULL)"});
  CommandResult r = p.Run();
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQUAL_TO_SOURCE(p, "t");
  // Changes the pipe has not seen yet.
  p.ExecAll({"UPDATE t SET v = 'A' WHERE id = 1", "UPDATE t SET f = 0.30000001 WHERE id = 2",
             "DELETE FROM t WHERE id = 3", "INSERT INTO t VALUES (4, 'd', 4, 4)"});
  std::string report = p.Compare("t");
  EXPECT_NE(report.find("4 difference(s)"), std::string::npos) << report;
  EXPECT_NE(report.find("key (id=1) column v (varchar(10)): source 'A', destination 'a'"), std::string::npos)
      << report;
  EXPECT_NE(report.find("key (id=2) column f (float)"), std::string::npos) << report;
  EXPECT_NE(report.find("key (id=3): extra at the destination"), std::string::npos) << report;
  EXPECT_NE(report.find("key (id=4): missing at the destination"), std::string::npos) << report;
  CompareOptions without_v;
  without_v.ignore_columns = {"v", "f"};
  EXPECT_EQ(p.Compare("t", without_v).find("column v"), std::string::npos);
  p.Cleanup();
}

// ---------------------------------------------------------------------------------------------
// (a) Every type, snapshot then stream.

const char* const kAllTypesTable = R"sql(
CREATE TABLE all_types (
  id INT NOT NULL PRIMARY KEY,
  i8 TINYINT, u8 TINYINT UNSIGNED, bo BOOL, i16 SMALLINT, u16 SMALLINT UNSIGNED,
  i24 MEDIUMINT, u24 MEDIUMINT UNSIGNED, i32 INT, u32 INT UNSIGNED, i64 BIGINT,
  u64 BIGINT UNSIGNED NOT NULL DEFAULT 0,
  f32 FLOAT, f64 DOUBLE, d10 DECIMAL(10,2), d38 DECIMAL(38,10), d65 DECIMAL(65,30),
  d5 DECIMAL(5,0) NOT NULL DEFAULT 0,
  da DATE, dt0 DATETIME, dt3 DATETIME(3), dt6 DATETIME(6),
  ts0 TIMESTAMP NULL DEFAULT NULL, ts6 TIMESTAMP(6) NULL DEFAULT NULL,
  tm TIME, tm3 TIME(3), yr YEAR, b1 BIT(1), b64 BIT(64),
  en ENUM('a','b','c d','É'), st SET('x','y','z'),
  ch CHAR(10), vc VARCHAR(100), tx TEXT,
  vl VARCHAR(50) CHARACTER SET latin1, tl TEXT CHARACTER SET latin1,
  bn BINARY(4), vb VARBINARY(50), bl BLOB, mb MEDIUMBLOB,
  js JSON, g GEOMETRY, pt POINT, uu UUID, ip4 INET4, ip6 INET6,
  nn VARCHAR(10) NOT NULL DEFAULT ''
))sql";

const char* const kAllColumns =
    "id,i8,u8,bo,i16,u16,i24,u24,i32,u32,i64,u64,f32,f64,d10,d38,d65,d5,da,dt0,dt3,dt6,ts0,ts6,tm,tm3,yr,b1,"
    "b64,"
    "en,st,ch,vc,tx,vl,tl,bn,vb,bl,mb,js,g,pt,uu,ip4,ip6,nn";

/// The smallest values of every column (dates below what ClickHouse holds: they clamp).
std::string MinRow(int id) {
  return "INSERT INTO all_types (" + std::string(kAllColumns) + ") VALUES (" + std::to_string(id) +
         ",-128,0,-1,-32768,0,-8388608,0,-2147483648,0,-9223372036854775808,0,"
         "-3.40282e38,-1.7976931348623157e308,-99999999.99,-9999999999999999999999999999.9999999999,"
         "-99999999999999999999999999999999999.999999999999999999999999999999,-99999,"
         "'1000-01-01','1900-01-01 00:00:00','1900-01-01 00:00:00.000','1900-01-01 00:00:00.000000',"
         "'1970-01-01 00:00:01','1970-01-01 00:00:01.000001','-838:59:59','-838:59:59.999',1901,b'0',b'0',"
         "'a','','','','','','',x'00',x'',x'',x'','{}',ST_GeomFromText('POINT(0 0)'),"
         "ST_GeomFromText('POINT(-0.1 1e-300)'),'00000000-0000-0000-0000-000000000000','0.0.0.0','::','')";
}

/// The largest values, and strings with every awkward byte.
std::string MaxRow(int id) {
  return "INSERT INTO all_types (" + std::string(kAllColumns) + ") VALUES (" + std::to_string(id) +
         ",127,255,1,32767,65535,8388607,16777215,2147483647,4294967295,9223372036854775807,"
         "18446744073709551615,3.40282e38,1.7976931348623157e308,99999999.99,"
         "9999999999999999999999999999.9999999999,"
         "99999999999999999999999999999999999.999999999999999999999999999999,99999,"
         "'9999-12-31','2299-12-31 23:59:59','2299-12-31 23:59:59.999','2299-12-31 23:59:59.999999',"
         "'2038-01-19 03:14:07','2038-01-19 03:14:07.999999','838:59:59','838:59:59.999',2155,b'1',"
         "b'1111111111111111111111111111111111111111111111111111111111111111',"
         "'É','x,y,z','abcdefghij',"
         "'😀 é 中 tab\\there nl\\nx back\\\\slash quote''s \"dq\" nul\\0end',"
         "REPEAT('long text é ',500),'café ÿ',REPEAT('Ünïcödé ',100),x'0102',x'00FF7F80'," +
         AllBytesLiteral() +
         ",REPEAT(x'DEADBEEF',5000),'{\"k\": [1, 2.5, \"x\", null, true], \"u\": \"é\\\\n\"}',"
         "ST_GeomFromText('POLYGON((0 0,10 0,10 10,0 10,0 0),(1 1,2 1,2 2,1 1))'),"
         "ST_GeomFromText('POINT(1.5 -2.25)'),'123e4567-e89b-12d3-a456-426614174000','255.255.255.255',"
         "'2001:db8::ff00:42:8329','x')";
}

/// Zero dates, the zero year and the invalid ENUM value (needs sql_mode='').
std::string ZeroRow(int id) {
  return "INSERT INTO all_types (" + std::string(kAllColumns) + ") VALUES (" + std::to_string(id) +
         ",0,0,0,0,0,0,0,0,0,0,0,0,-0e0,0,0,0,0,'0000-00-00','0000-00-00 00:00:00',"
         "'0000-00-00 00:00:00.000','0000-00-00 00:00:00.000000','0000-00-00 00:00:00',"
         "'0000-00-00 00:00:00.000000','00:00:00','00:00:00.000',0,b'0',b'0','','',' ','',NULL,'',NULL,"
         "x'',x'00',NULL,NULL,'null',ST_GeomFromText('GEOMETRYCOLLECTION(POINT(1 2),LINESTRING(0 0,1 1))'),"
         "NULL,NULL,NULL,'::ffff:1.2.3.4','0')";
}

/// Dates with a zero month or day (allowed without NO_ZERO_IN_DATE).
std::string PartZeroRow(int id) {
  return "INSERT INTO all_types (id, da, dt0, dt6, vc) VALUES (" + std::to_string(id) +
         ", '2024-00-15', '2024-05-00 10:00:00', '2024-05-00 10:00:00.5', 'part zero')";
}

/// Generated rows [from, to] covering ordinary values of every column.
std::string BulkInsert(int from, int to) {
  std::string s =
      "INSERT INTO all_types (" + std::string(kAllColumns) + ") SELECT " +
      "seq, seq % 256 - 128, seq % 256, seq % 2, seq * 7 % 65536 - 32768, seq * 13 % 65536, "
      "seq * 1001 % 16777216 - 8388608, seq * 99 % 16777216, seq * 1000003 % 4294967296 - 2147483648, "
      "seq * 2654435761 % 4294967296, seq * 1000000007 - 4611686018427387904, seq * 83886070001, "
      "seq / 7, seq * PI() / 1000, seq * 1.25 - 100, seq * 12345.6789012345, "
      "CONCAT('-', seq, '.', LPAD(seq, 30, '0')), seq % 99999, "
      "DATE '2000-01-01' + INTERVAL (seq * 37 % 40000) DAY, "
      "TIMESTAMP '2001-02-03 04:05:06' + INTERVAL seq * 3607 SECOND, "
      "TIMESTAMP '2010-01-01 00:00:00.123' + INTERVAL seq * 863 SECOND, "
      "TIMESTAMP '1999-12-31 23:59:59.654321' + INTERVAL seq * 12345 SECOND, "
      "FROM_UNIXTIME(1000000000 + seq * 86413 % 1000000000), FROM_UNIXTIME(1000000000.123456 + seq * 86413 % "
      "1000000000), "
      "SEC_TO_TIME(seq * 1234 % 3000000 - 1500000), SEC_TO_TIME(seq * 12.345 - 1000), "
      "1901 + seq % 255, seq % 2, seq * 1234567891011, ELT(seq % 4 + 1, 'a', 'b', 'c d', 'É'), "
      "ELT(seq % 5 + 1, '', 'x', 'y', 'x,z', 'x,y,z'), LEFT(CONCAT('c', seq), 10), "
      "CONCAT('row ', seq, ' é😀\\t'), REPEAT(CONCAT('t', seq), seq % 50), CONCAT('lat ', seq, ' é'), "
      "IF(seq % 3 = 0, NULL, CONCAT('ÿ', seq)), UNHEX(LPAD(HEX(seq), 8, '0')), UNHEX(MD5(seq)), "
      "IF(seq % 4 = 0, NULL, UNHEX(SHA2(seq, 256))), REPEAT(UNHEX(MD5(seq)), seq % 10), "
      "JSON_OBJECT('n', seq, 's', CONCAT('v', seq), 'a', JSON_ARRAY(seq, seq / 2)), "
      "IF(seq % 2 = 0, POINT(seq, seq / 3), "
      "ST_GeomFromText(CONCAT('LINESTRING(0 0,', seq, ' ', seq * 0.5, ')'))), "
      "POINT(seq / 10, -seq / 7), UUID(), INET_NTOA(seq * 16777259 % 4294967296), "
      "CONCAT('2001:db8::', HEX(seq % 65536)), CONCAT('n', seq) FROM (SELECT CAST(seq AS SIGNED) AS seq FROM "
      "seq_" +
      std::to_string(from) + "_to_" + std::to_string(to) + ") AS numbers";
  return s;
}

const std::vector<std::string>& OtherTables() {
  static const std::vector<std::string> kTables = {
      "CREATE TABLE nokey (a INT, b VARCHAR(20), c DOUBLE, d DATETIME(3))",
      "CREATE TABLE composite (k1 INT NOT NULL, k2 VARCHAR(20) NOT NULL, k3 DATE NOT NULL, v INT, w "
      "VARCHAR(10), "
      "PRIMARY KEY (k2, k1, k3))",
      "CREATE TABLE uniq (u INT NOT NULL, v VARCHAR(10), n INT, UNIQUE KEY (u))",
  };
  return kTables;
}

class TypesE2eTest : public ::testing::TestWithParam<Dest> {
 protected:
  void SetUp() override { p_.Init("CHSYNC_TEST_MYSQL_FULL", GetParam(), "e2e_types", kServerIdBase); }
  void TearDown() override { p_.Cleanup(); }
  PipeTest p_;
};

TEST_P(TypesE2eTest, SnapshotThenStreamEqualsSourceForEveryType) {
  ASSERT_TRUE(p_.connected());
  const std::string use = "USE " + p_.db();
  // Snapshot path: rows that exist before the first run.
  p_.ExecAll({use, kAllTypesTable});
  for (const std::string& t : OtherTables()) p_.Exec(t);
  // NOLINTBEGIN(bugprone-suspicious-missing-comma): long statements are split over lines
  p_.ExecAll(
      {MinRow(1), MaxRow(2), "INSERT INTO all_types (id) VALUES (3)", "SET SESSION sql_mode = ''", ZeroRow(4),
       PartZeroRow(5), "SET SESSION sql_mode = DEFAULT", BulkInsert(100, 299),
       "INSERT INTO nokey SELECT seq, CONCAT('b', seq), seq / 3, TIMESTAMP '2020-01-01 00:00:00.001' + "
       "INTERVAL seq HOUR FROM seq_1_to_50",
       "INSERT INTO nokey VALUES (NULL, NULL, NULL, NULL)",
       "INSERT INTO composite SELECT seq, CONCAT('k', seq % 7), DATE '2024-01-01' + INTERVAL seq DAY, seq, "
       "CONCAT('w', seq) FROM seq_1_to_50",
       "INSERT INTO uniq SELECT seq, CONCAT('v', seq), seq FROM seq_1_to_30"});

  CommandResult first = p_.Run({"--schema-policy", p_.db() + ".nokey:keyless=distinct"});
  ASSERT_EQ(first.exit_code, 0) << first.Describe();
  for (const char* t : {"all_types", "nokey", "composite", "uniq"}) EXPECT_EQUAL_TO_SOURCE(p_, t);

  // Stream path: the same kinds of rows written after the snapshot, then changes of every kind.
  p_.ExecAll(
      {use, MinRow(1001), MaxRow(1002), "INSERT INTO all_types (id) VALUES (1003)",
       "SET SESSION sql_mode = ''", ZeroRow(1004), PartZeroRow(1005), "SET SESSION sql_mode = DEFAULT",
       BulkInsert(300, 399),
       // updates of every column kind, to values and to NULL
       "UPDATE all_types SET vc = CONCAT(vc, '!'), f64 = f64 * 2, d38 = -d38, dt6 = dt6 + INTERVAL 1 DAY, "
       "en = 'b', st = 'y', bl = x'00', js = JSON_OBJECT('u', id) WHERE id % 3 = 0 AND id < 1000",
       "UPDATE all_types SET i8 = NULL, f32 = NULL, da = NULL, tm = NULL, tl = NULL, g = NULL, uu = NULL, "
       "ip6 = NULL WHERE id % 7 = 0",
       "UPDATE all_types SET ts0 = '2030-06-01 12:00:00', tm3 = '-00:00:01.5', b64 = 1, "
       "vl = 'ÀÉÎ', pt = POINT(3, 4) WHERE id = 2",
       // a row changed twice in one transaction, deleted and inserted again
       "BEGIN", "UPDATE all_types SET i32 = 1 WHERE id = 101", "UPDATE all_types SET i32 = 2 WHERE id = 101",
       "DELETE FROM all_types WHERE id = 102", MinRow(102), "COMMIT",
       // deletes, and primary-key changes (tombstone for the old key)
       "DELETE FROM all_types WHERE id % 5 = 0 AND id < 1000",
       "UPDATE all_types SET id = id + 100000 WHERE id % 11 = 1", "DELETE FROM all_types WHERE id = 1004",
       // one transaction with 20k rows, updates and key changes inside it
       "BEGIN", BulkInsert(200000, 219999),
       "UPDATE all_types SET i32 = -i32, vc = 'in txn' WHERE id BETWEEN 200000 AND 200999",
       "DELETE FROM all_types WHERE id BETWEEN 210000 AND 210099",
       "UPDATE all_types SET id = id + 50000 WHERE id BETWEEN 219900 AND 219999", "COMMIT",
       // the other tables
       "UPDATE nokey SET b = CONCAT(b, 'x') WHERE a % 4 = 0", "DELETE FROM nokey WHERE a % 5 = 0",
       "INSERT INTO nokey VALUES (1000, 'new', -1.5, '2021-01-01 00:00:00.999')",
       "UPDATE nokey SET c = NULL WHERE a IS NULL",
       "UPDATE composite SET k2 = CONCAT(k2, '-moved') WHERE k1 % 3 = 0",
       "UPDATE composite SET k3 = k3 + INTERVAL 1 YEAR, v = -v WHERE k1 % 4 = 0",
       "DELETE FROM composite WHERE k1 % 5 = 0",
       "INSERT INTO composite VALUES (1000, 'k1', '2024-01-02', 99, 'again')",
       "UPDATE uniq SET u = u + 1000 WHERE u % 3 = 0", "UPDATE uniq SET v = NULL WHERE u % 4 = 0",
       "DELETE FROM uniq WHERE u = 1"});

  // NOLINTEND(bugprone-suspicious-missing-comma)
  CommandResult second = p_.Run({"--schema-policy", p_.db() + ".nokey:keyless=distinct"});
  ASSERT_EQ(second.exit_code, 0) << second.Describe();
  for (const char* t : {"all_types", "nokey", "composite", "uniq"}) EXPECT_EQUAL_TO_SOURCE(p_, t);

  // A run with nothing new to apply exits 0 and changes nothing.
  CommandResult third = p_.Run({"--schema-policy", p_.db() + ".nokey:keyless=distinct"});
  EXPECT_EQ(third.exit_code, 0) << third.Describe();
  EXPECT_EQUAL_TO_SOURCE(p_, "all_types");
}

INSTANTIATE_TEST_SUITE_P(Destinations, TypesE2eTest, ::testing::Values(Dest::kServer, Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& i) { return DestName(i.param); });

// ---------------------------------------------------------------------------------------------
// (b) The seeds' table, full metadata.

class SchemaChangeE2eTest : public ::testing::TestWithParam<Dest> {
 protected:
  void SetUp() override { p_.Init("CHSYNC_TEST_MYSQL_FULL", GetParam(), "e2e_ddl", kServerIdBase); }
  void TearDown() override { p_.Cleanup(); }

  /// name → (type, default_expression) of the destination table t.
  std::map<std::string, std::pair<std::string, std::string>> DestColumns() {
    std::map<std::string, std::pair<std::string, std::string>> out;
    for (const auto& r :
         p_.DestQuery("SELECT name, type, default_expression FROM system.columns WHERE database = '" +
                      p_.db() + "' AND table = 't'")) {
      if (r.size() == 3) out[r[0].value_or("")] = {r[1].value_or(""), r[2].value_or("")};
    }
    return out;
  }

  /// id → column → canonical value (pipe_compare.h) of `names` in table t, read on one side.
  std::map<std::string, std::map<std::string, std::optional<std::string>>> ColumnValues(
      const std::vector<std::string>& names, bool source) {
    std::map<std::string, std::map<std::string, std::optional<std::string>>> out;
    std::string error;
    int version = testing::DestinationVersion(p_.dest_url(), &error);
    std::vector<testing::SourceColumn> all;
    std::vector<size_t> keys;
    if (version < 0 || !testing::DescribeSourceTable(p_.conn(), p_.db(), "t", version, &all, &keys, &error)) {
      ADD_FAILURE() << error;
      return out;
    }
    std::vector<testing::SourceColumn> cols;
    for (const auto& c : all) {
      if (c.name == "id" || std::find(names.begin(), names.end(), c.name) != names.end()) cols.push_back(c);
    }
    if (cols.size() != names.size() + 1 || cols[0].name != "id") {
      ADD_FAILURE() << "the source lacks some of the columns asked for";
      return out;
    }
    auto table = source
                     ? testing::ReadSourceTable(p_.conn(), p_.db(), "t", cols, {0}, version, &error)
                     : testing::ReadDestinationTable(p_.dest_url(), p_.db(), "t", cols, {0}, version, &error);
    if (!table.has_value()) {
      ADD_FAILURE() << error;
      return out;
    }
    for (const auto& [key, rows] : table->rows) {
      for (size_t i = 1; i < cols.size(); ++i) out[*rows.front()[0]][cols[i].name] = rows.front()[i];
    }
    return out;
  }

  PipeTest p_;
};

TEST_P(SchemaChangeE2eTest, SeedsTableAddDropAndDefaultChanges) {
  ASSERT_TRUE(p_.connected());
  const std::string use = "USE " + p_.db();
  p_.ExecAll({use,
              "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(50), qty INT, c_keep INT NOT NULL DEFAULT 3)",
              "INSERT INTO t (id, name, qty, c_keep) VALUES (1, 'one', 10, 11), (2, 'two', 20, 12), "
              "(3, 'three', 30, 13), (4, 'four', NULL, 14), (5, 'five', 50, 15)"});
  CommandResult r = p_.Run();
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQUAL_TO_SOURCE(p_, "t");

  // ADD COLUMN without default, with each propagated default kind, and with omitted defaults.
  struct Added {
    std::string name;
    std::string definition;
    bool propagated;  ///< the ClickHouse column carries a DEFAULT
  };
  const std::vector<Added> added = {
      {"c_plain", "INT", false},
      {"c_nn", "INT NOT NULL", false},
      {"c_str_nn", "VARCHAR(20) NOT NULL", false},
      {"d_int", "INT DEFAULT -42", true},
      {"d_nn_int", "BIGINT NOT NULL DEFAULT 7", true},
      {"d_dec", "DECIMAL(10,3) DEFAULT 12.5", true},
      {"d_float", "FLOAT DEFAULT 0.25", true},
      {"d_double", "DOUBLE DEFAULT -1.5e3", true},
      {"d_true", "BOOL DEFAULT TRUE", true},
      {"d_false", "TINYINT(1) NOT NULL DEFAULT FALSE", true},
      {"d_str", "VARCHAR(30) DEFAULT 'it''s \"here\" é'", true},
      {"d_date", "DATE DEFAULT '2024-02-29'", true},
      {"d_dt", "DATETIME DEFAULT '2023-12-31 23:59:58'", true},
      {"d_enum", "ENUM('low','mid','high') DEFAULT 'mid'", true},
      {"o_null", "INT DEFAULT NULL", false},
      {"o_bit", "BIT(3) DEFAULT b'101'", false},
      {"o_bit_nn", "BIT(3) NOT NULL DEFAULT b'101'", false},
      {"o_ts", "TIMESTAMP NULL DEFAULT CURRENT_TIMESTAMP", false},
      {"o_now", "DATETIME DEFAULT NOW()", false},
      {"o_uuid", "VARCHAR(36) DEFAULT UUID()", false},
      {"o_bs", "VARCHAR(20) DEFAULT 'a\\\\b'", false},
      {"o_bs_nn", "VARCHAR(20) NOT NULL DEFAULT 'a\\\\b'", false},
  };
  // Columns whose source default the destination's earlier rows do not read.
  const std::map<std::string, std::string> omitted_earlier = {
      {"o_bit", "NULL"},  {"o_bit_nn", "0"}, {"o_ts", "NULL"}, {"o_now", "NULL"},
      {"o_uuid", "NULL"}, {"o_bs", "NULL"},  {"o_bs_nn", ""},  // type default of a NOT NULL String
  };
  p_.Exec(use);
  for (const Added& a : added) p_.Exec("ALTER TABLE t ADD COLUMN " + a.name + " " + a.definition);
  p_.ExecAll(
      {"INSERT INTO t (id, name, qty, c_plain, c_nn, c_str_nn, d_int, d_str, o_bit, o_bs) VALUES "
       "(6, 'six', 60, 6, 66, 'six', 600, 'explicit', b'011', 'x\\\\y')",
       "INSERT INTO t (id, name, c_nn, c_str_nn) VALUES (7, 'seven', 77, 's')",  // the rest take defaults
       "UPDATE t SET name = 'two!' WHERE id = 2"});  // an earlier row rewritten whole
  r = p_.Run();
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  CompareOptions skip;
  for (const auto& [name, value] : omitted_earlier) skip.ignore_columns.push_back(name);
  {
    std::string report = p_.Compare("t", skip);
    EXPECT_TRUE(report.empty()) << report;
  }

  auto columns = DestColumns();
  for (const Added& a : added) {
    ASSERT_TRUE(columns.count(a.name)) << a.name << " was not added at the destination";
    if (a.propagated) {
      EXPECT_NE(columns[a.name].second, "") << a.name << " " << a.definition << ": default not propagated";
    } else {
      EXPECT_EQ(columns[a.name].second, "") << a.name << " " << a.definition << ": default must be omitted";
    }
  }
  // Omitted defaults: rows already in ClickHouse read the type default or NULL; rows written
  // after the change (6, 7, and 2 which was updated) carry the source's values.
  std::vector<std::string> omitted_names;
  omitted_names.reserve(omitted_earlier.size());
  for (const auto& [name, earlier] : omitted_earlier) omitted_names.push_back(name);
  auto src = ColumnValues(omitted_names, true);
  auto dst = ColumnValues(omitted_names, false);
  for (const auto& [name, earlier] : omitted_earlier) {
    for (const char* id : {"1", "3", "4", "5"}) {
      ASSERT_TRUE(dst.count(id)) << "row " << id << " missing at the destination";
      EXPECT_EQ(dst[id][name].value_or("NULL"), earlier) << name << " of earlier row " << id;
    }
    for (const char* id : {"2", "6", "7"}) {
      ASSERT_TRUE(src.count(id) && dst.count(id)) << "row " << id << " missing";
      EXPECT_EQ(dst[id][name], src[id][name]) << name << " of row " << id << " written after ADD COLUMN";
    }
  }

  // DROP COLUMN: kept at the destination, NULL for rows written after the drop.
  auto before_drop = ColumnValues({"qty", "c_keep"}, true);
  p_.ExecAll({use, "ALTER TABLE t DROP COLUMN qty", "ALTER TABLE t DROP COLUMN c_keep",
              "INSERT INTO t (id, name, c_nn, c_str_nn) VALUES (8, 'eight', 88, 'e')",
              "UPDATE t SET name = 'three!' WHERE id = 3"});
  r = p_.Run();
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  {
    std::string report = p_.Compare("t", skip);
    EXPECT_TRUE(report.empty()) << report;
  }
  columns = DestColumns();
  ASSERT_TRUE(columns.count("qty")) << "dropped column qty must stay in ClickHouse";
  ASSERT_TRUE(columns.count("c_keep")) << "dropped column c_keep must stay in ClickHouse";
  EXPECT_EQ(columns["c_keep"].first, "Nullable(Int32)") << "a NOT NULL column becomes Nullable when dropped";
  auto kept = p_.DestQuery("SELECT id, qty, c_keep FROM `" + p_.db() +
                           "`.t FINAL WHERE _chsync_is_deleted = 0 ORDER BY id");
  ASSERT_EQ(kept.size(), 8u);
  for (const auto& row : kept) {
    ASSERT_EQ(row.size(), 3u);
    std::string id = row[0].value_or("?");
    if (id == "3" || id == "8") {
      EXPECT_EQ(row[1], std::nullopt) << "qty of row " << id << " written after the drop";
      EXPECT_EQ(row[2], std::nullopt) << "c_keep of row " << id << " written after the drop";
    } else {
      EXPECT_EQ(row[1], before_drop[id]["qty"]) << "qty of row " << id << " written before the drop";
      EXPECT_EQ(row[2], before_drop[id]["c_keep"]) << "c_keep of row " << id << " written before the drop";
    }
  }

  // SET DEFAULT / DROP DEFAULT (and a MODIFY that only changes the default): nothing changes.
  auto before = DestColumns();
  p_.ExecAll({use, "ALTER TABLE t ALTER COLUMN d_int SET DEFAULT 99",
              "ALTER TABLE t ALTER COLUMN d_str DROP DEFAULT",
              "ALTER TABLE t ALTER COLUMN c_plain SET DEFAULT 5",
              "ALTER TABLE t MODIFY COLUMN d_dec DECIMAL(10,3) DEFAULT 1.0",
              "INSERT INTO t (id, name, c_nn, c_str_nn) VALUES (9, 'nine', 99, 'n')",
              "UPDATE t SET d_int = d_int + 1 WHERE id = 1"});
  r = p_.Run();
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(DestColumns(), before) << "SET/DROP DEFAULT must not change the ClickHouse table";
  {
    std::string report = p_.Compare("t", skip);
    EXPECT_TRUE(report.empty()) << report;
  }

  // The history is in the destination too: one row per statement, saying what was done or not.
  std::map<std::string, std::string> history;
  for (const auto& row : p_.DestQuery("SELECT statement, toString(actions) FROM " + p_.db() +
                                      "._chsync_schema_log FINAL WHERE table = '" + p_.db() + ".t'")) {
    if (row.size() == 2) history[row[0].value_or("")] = row[1].value_or("");
  }
  auto actions_of = [&](const std::string& statement) {
    auto it = history.find(statement);
    return it == history.end() ? std::string("(no row)") : it->second;
  };
  EXPECT_NE(actions_of("ALTER TABLE t DROP COLUMN qty").find("not propagated"), std::string::npos)
      << actions_of("ALTER TABLE t DROP COLUMN qty");
  EXPECT_NE(actions_of("ALTER TABLE t ALTER COLUMN d_int SET DEFAULT 99").find("not propagated"),
            std::string::npos)
      << actions_of("ALTER TABLE t ALTER COLUMN d_int SET DEFAULT 99");
}

INSTANTIATE_TEST_SUITE_P(Destinations, SchemaChangeE2eTest, ::testing::Values(Dest::kServer, Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& i) { return DestName(i.param); });

// ---------------------------------------------------------------------------------------------
// (c) Ordinal mode (binlog_row_metadata=MINIMAL).

struct OrdinalCase {
  const char* name;
  const char* statement;  ///< run on table t (id, a, b, c)
  bool fails;
};

void PrintTo(const OrdinalCase& c, std::ostream* os) {
  *os << c.statement;
}

const OrdinalCase kOrdinalCases[] = {
    {"AddAtEnd", "ALTER TABLE t ADD COLUMN d VARCHAR(10) DEFAULT 'dd'", false},
    {"DropColumn", "ALTER TABLE t DROP COLUMN a", true},
    {"AddFirst", "ALTER TABLE t ADD COLUMN z INT FIRST", true},
    {"AddAfter", "ALTER TABLE t ADD COLUMN z INT AFTER id", true},
    {"ModifyFirst", "ALTER TABLE t MODIFY COLUMN b VARCHAR(20) FIRST", true},
    {"ChangeAfter", "ALTER TABLE t CHANGE COLUMN c c INT AFTER id", true},
};

class OrdinalE2eTest : public ::testing::TestWithParam<std::tuple<Dest, OrdinalCase>> {
 protected:
  void SetUp() override {
    p_.Init("CHSYNC_TEST_MYSQL_MINIMAL", std::get<0>(GetParam()), "e2e_ord", kServerIdBase);
  }
  void TearDown() override { p_.Cleanup(); }
  PipeTest p_;
};

// The seeds' behaviour (position_shift=fail) stops at a position-shifting statement; the default
// (position_shift=follow) then picks up from the same checkpoint and follows it.
TEST_P(OrdinalE2eTest, PositionShiftingDdlStopsWithFailAndIsFollowedByDefault) {
  ASSERT_TRUE(p_.connected());
  const OrdinalCase& c = std::get<1>(GetParam());
  p_.ExecAll({"USE " + p_.db(), "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10), c INT)",
              "INSERT INTO t VALUES (1, 10, 'x', 100), (2, 20, NULL, 200)"});
  CommandResult r = p_.Run();
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQUAL_TO_SOURCE(p_, "t");

  p_.ExecAll({"INSERT INTO t (id, b) VALUES (3, 'before')", c.statement,
              "INSERT INTO t (id, b) VALUES (4, 'after')", "UPDATE t SET b = 'upd' WHERE id = 1"});
  const std::vector<std::string> fail = {"--schema-policy", "position_shift=fail", "--schema-policy",
                                         "on_table_error=stop"};
  r = p_.Run(fail);
  if (!c.fails) {
    ASSERT_EQ(r.exit_code, 0) << r.Describe();
    EXPECT_EQUAL_TO_SOURCE(p_, "t");
    return;
  }
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  const std::string table = p_.db() + ".t";
  const std::string quoted = "`" + p_.db() + "`.`t`";
  EXPECT_TRUE(r.err.find(table) != std::string::npos || r.err.find(quoted) != std::string::npos)
      << "the error must name " << table << ":\n"
      << r.err;
  EXPECT_NE(r.err.find(c.statement), std::string::npos) << "the error must quote the statement:\n" << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(binlog\.[0-9]{6}:[0-9]+)")))
      << "the error must give the binlog position (file:pos):\n"
      << r.err;
  EXPECT_NE(r.err.find("chsync resync"), std::string::npos) << "the error must say what to do:\n" << r.err;
  // The pipe stays stopped on a second run, and nothing after the statement reached ClickHouse.
  CommandResult again = p_.Run(fail);
  EXPECT_EQ(again.exit_code, 1) << again.Describe();
  EXPECT_NE(again.err.find(c.statement), std::string::npos) << again.err;
  auto rows =
      p_.DestQuery("SELECT id, b FROM `" + p_.db() + "`.t FINAL WHERE _chsync_is_deleted = 0 ORDER BY id");
  ASSERT_GE(rows.size(), 2u);
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 2u);
    EXPECT_NE(row[0], std::optional<std::string>("4")) << "row 4 was written after the statement";
    if (row[0] == std::optional<std::string>("1")) {
      EXPECT_EQ(row[1], std::optional<std::string>("x")) << "the update of row 1 came after the statement";
    }
  }
  // Following the statement: the rows before and after it land in the right columns.
  CommandResult follow = p_.Run();
  ASSERT_EQ(follow.exit_code, 0) << follow.Describe();
  EXPECT_EQUAL_TO_SOURCE(p_, "t");
}

INSTANTIATE_TEST_SUITE_P(Destinations, OrdinalE2eTest,
                         ::testing::Combine(::testing::Values(Dest::kServer, Dest::kEmbedded),
                                            ::testing::ValuesIn(kOrdinalCases)),
                         [](const ::testing::TestParamInfo<std::tuple<Dest, OrdinalCase>>& i) {
                           return DestName(std::get<0>(i.param)) + "_" + std::get<1>(i.param).name;
                         });

// ---------------------------------------------------------------------------------------------
// (d) A column added while a large table is being copied.

class SnapshotDdlE2eTest : public ::testing::TestWithParam<Dest> {
 protected:
  void SetUp() override { p_.Init("CHSYNC_TEST_MYSQL_FULL", GetParam(), "e2e_snap", kServerIdBase); }
  void TearDown() override { p_.Cleanup(); }

  /// Snapshot progress of one table as DIR/checkpoint.json records it (state/checkpoint.h).
  struct Progress {
    std::string state;  ///< "pending", "copying" or "done"
    uint64_t rows_copied = 0;
  };
  /// Progress of table `big`, nullopt before the first checkpoint (or while it is being replaced).
  std::optional<Progress> ReadProgress() {
    std::ifstream in(p_.state() + "/checkpoint.json");
    if (!in) return std::nullopt;
    std::stringstream text;
    text << in.rdbuf();
    auto j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.contains("snapshot") || !j["snapshot"].is_array()) return std::nullopt;
    for (const auto& t : j["snapshot"]) {
      if (t.value("table", "") == "big")
        return Progress{t.value("state", ""), t.value("rows_copied", uint64_t{0})};
    }
    return std::nullopt;
  }

  PipeTest p_;
};

TEST_P(SnapshotDdlE2eTest, ColumnAddedDuringSnapshotIsRightForAllRows) {
  ASSERT_TRUE(p_.connected());
  constexpr uint64_t kRows = 300000;
  p_.ExecAll({"USE " + p_.db(), "CREATE TABLE big (id INT PRIMARY KEY, a INT NOT NULL, b VARCHAR(40))",
              "INSERT INTO big SELECT seq, seq * 3, CONCAT('row ', seq) FROM seq_1_to_150000",
              "INSERT INTO big SELECT seq, seq * 3, CONCAT('row ', seq) FROM seq_150001_to_300000"});

  // The copy waits 15 s before reading its fourth chunk (of 60), so that the ALTER and the changes
  // below land while it runs however fast the machine copies.
  setenv("CHSYNC_DELAY_AT", "snapshot.chunk#4", 1);
  setenv("CHSYNC_DELAY_MS", "15000", 1);
  auto run = BackgroundProcess::Start(
      p_.RunArgs(p_.db() + ".*", false, {"--snapshot-chunk-rows", "5000", "--snapshot-parallelism", "1"}),
      MakeTempDir("e2e-log") + "/run.log");
  unsetenv("CHSYNC_DELAY_AT");
  unsetenv("CHSYNC_DELAY_MS");
  ASSERT_TRUE(run.has_value());
  // Wait until some chunks are in ClickHouse (the checkpoint says so; an embedded store cannot be
  // read while the run holds it).
  std::optional<Progress> progress;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline && run->Running()) {
    progress = ReadProgress();
    if (progress.has_value() && progress->rows_copied > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(run->Running()) << "chsync run exited early (" << run->exit_code() << "):\n" << run->Log();
  ASSERT_TRUE(progress.has_value() && progress->rows_copied > 0) << "no snapshot progress:\n" << run->Log();

  p_.ExecAll({"ALTER TABLE big ADD COLUMN c INT NOT NULL DEFAULT 7",
              "UPDATE big SET c = id, b = CONCAT(b, '+') WHERE id % 1000 = 0",
              "INSERT INTO big SELECT seq, seq * 3, 'new', -seq FROM seq_300001_to_301000",
              "DELETE FROM big WHERE id % 10007 = 0"});
  progress = ReadProgress();
  ASSERT_TRUE(progress.has_value());
  EXPECT_NE(progress->state, "done")
      << "the snapshot finished before the ALTER: this run did not test a column added during a snapshot";
  EXPECT_LT(progress->rows_copied, kRows);

  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int code = run->SignalAndWait(SIGTERM, 60'000);
  EXPECT_EQ(code, 0) << "chsync run must exit 0 on SIGTERM:\n" << run->Log();

  CommandResult r = p_.Run();
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQUAL_TO_SOURCE(p_, "big");
}

INSTANTIATE_TEST_SUITE_P(Destinations, SnapshotDdlE2eTest, ::testing::Values(Dest::kServer, Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& i) { return DestName(i.param); });

}  // namespace
}  // namespace chsync
