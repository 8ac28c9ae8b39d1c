// SnapshotReader against the live MariaDB that scripts/test starts (CHSYNC_TEST_MYSQL_FULL).

#include "mysql/snapshot_reader.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/url.h"

namespace chsync::mysql {
namespace {

std::unique_ptr<Connection> Connect() {
  const char* url = std::getenv("CHSYNC_TEST_MYSQL_FULL");
  if (url == nullptr) {
    ADD_FAILURE() << "CHSYNC_TEST_MYSQL_FULL is not set: run through scripts/test";
    return nullptr;
  }
  auto parsed = ParseUrl(url);
  auto options = OptionsFromUrl(*parsed);
  auto conn = Connection::Open(*options);
  if (!conn.ok()) {
    ADD_FAILURE() << conn.error().message();
    return nullptr;
  }
  return std::move(*conn);
}

void Exec(Connection& conn, const std::vector<std::string>& statements) {
  for (const std::string& s : statements) {
    Status st = conn.Execute(s);
    ASSERT_TRUE(st.ok()) << s << ": " << st.error().message();
  }
}

/// Text of each value in a row, for comparison: AppendValueText plus the kind.
std::string RowText(const std::vector<binlog::Value>& row) {
  std::string out;
  for (const binlog::Value& v : row) {
    if (!out.empty()) out += " | ";
    if (v.kind == binlog::ValueKind::kEnum) out += "enum#";
    if (v.kind == binlog::ValueKind::kSet) out += "set#";
    binlog::AppendValueText(v, out);
  }
  return out;
}

class SnapshotReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    conn_ = Connect();
    ASSERT_NE(conn_, nullptr);
    Exec(*conn_, {"CREATE DATABASE IF NOT EXISTS snap_reader", "USE snap_reader"});
  }
  std::unique_ptr<Connection> conn_;
};

TEST_F(SnapshotReaderTest, CompositeCaseInsensitiveKeyPagesWithoutGapsOrRepeats) {
  Exec(*conn_, {"DROP TABLE IF EXISTS snap_reader.pages",
                "CREATE TABLE snap_reader.pages (tenant VARCHAR(10) COLLATE utf8mb4_general_ci, n INT, "
                "note TEXT, PRIMARY KEY (tenant, n))",
                "INSERT INTO snap_reader.pages VALUES ('a',1,'x'),('a',2,'x'),('B',1,'y'),('b2',5,NULL),"
                "('c',-3,'z'),('c',0,''),('C0',7,'w'),('é',1,'accent')"});
  auto reader =
      SnapshotReader::Open(*conn_, {"snap_reader", "pages", {"tenant", "n", "note"}, {}, {"tenant", "n"}, 3});
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  std::vector<std::string> seen;
  Key after;
  int chunks = 0;
  while (true) {
    auto chunk = (*reader)->ReadChunk(after, [&](const std::vector<binlog::Value>& row) {
      seen.push_back(RowText(row));
      return Status::Ok();
    });
    ASSERT_TRUE(chunk.ok()) << chunk.error().message();
    ++chunks;
    // Resume through the checkpoint's JSON form, as a restarted pipe does.
    auto restored = KeyFromJson(KeyToJson(chunk->last_key));
    ASSERT_TRUE(restored.ok());
    EXPECT_EQ(*restored, chunk->last_key);
    after = *restored;
    if (chunk->last) break;
  }
  EXPECT_EQ(chunks, 3);
  std::vector<std::string> expected = {"a | 1 | x",  "a | 2 | x", "B | 1 | y",  "b2 | 5 | NULL",
                                       "c | -3 | z", "c | 0 | ",  "C0 | 7 | w", "é | 1 | accent"};
  EXPECT_EQ(seen, expected);
}

TEST_F(SnapshotReaderTest, EveryTypeIsExact) {
  Exec(
      *conn_,
      {"DROP TABLE IF EXISTS snap_reader.types",
       "CREATE TABLE snap_reader.types (id BIGINT UNSIGNED PRIMARY KEY, ti TINYINT, su SMALLINT UNSIGNED, "
       "mi MEDIUMINT, bi BIGINT, f FLOAT, d DOUBLE, dec65 DECIMAL(65,30), y YEAR, dt DATE, dtm DATETIME(6), "
       "ts TIMESTAMP(3) NULL, tm TIME(2), b BIT(10), e ENUM('x','y','z'), s SET('r','g','b'), "
       "vb VARBINARY(20), bl LONGBLOB, j JSON, g GEOMETRY)",
       "SET time_zone = '+00:00'",
       "INSERT INTO snap_reader.types VALUES (18446744073709551615, -128, 65535, -8388608, "
       "-9223372036854775808, 3.1415927, 2.718281828459045, "
       "'-12345678901234567890123456789012345.123456789012345678901234567891', 2155, '1000-01-01', "
       "'9999-12-31 23:59:59.999999', '2038-01-19 03:14:07.999', '-838:59:59.00', b'1010101010', 'z', 'r,b', "
       "X'00FF7F', REPEAT('ab', 60000), '{\"k\": [1, 2.5, \"s\"]}', ST_GeomFromText('POINT(1 2)'))",
       "INSERT INTO snap_reader.types (id) VALUES (1)"});
  auto reader = SnapshotReader::Open(
      *conn_, {"snap_reader",
               "types",
               {"id", "ti", "su", "mi", "bi", "f", "d", "dec65", "y", "dt", "dtm", "ts", "tm", "b", "e", "s",
                "vb", "bl", "j"},
               {SnapshotQuery::Read::kValue, SnapshotQuery::Read::kValue, SnapshotQuery::Read::kValue,
                SnapshotQuery::Read::kValue, SnapshotQuery::Read::kValue, SnapshotQuery::Read::kValue,
                SnapshotQuery::Read::kValue, SnapshotQuery::Read::kValue, SnapshotQuery::Read::kValue,
                SnapshotQuery::Read::kValue, SnapshotQuery::Read::kValue, SnapshotQuery::Read::kValue,
                SnapshotQuery::Read::kValue, SnapshotQuery::Read::kValue, SnapshotQuery::Read::kEnumIndex,
                SnapshotQuery::Read::kSetBits, SnapshotQuery::Read::kValue, SnapshotQuery::Read::kValue,
                SnapshotQuery::Read::kValue},
               {"id"},
               100});
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  std::vector<std::vector<binlog::Value>> rows;
  std::vector<std::string> blob_sizes, texts;
  auto chunk = (*reader)->ReadChunk({}, [&](const std::vector<binlog::Value>& row) {
    texts.push_back(RowText(std::vector<binlog::Value>(row.begin(), row.end() - 2)));
    blob_sizes.push_back(std::to_string(row[17].text.size()));
    rows.push_back(row);
    return Status::Ok();
  });
  ASSERT_TRUE(chunk.ok()) << chunk.error().message();
  ASSERT_EQ(chunk->rows, 2u);
  EXPECT_TRUE(chunk->last);
  EXPECT_EQ(texts[0],
            "1 | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | "
            "NULL | NULL | NULL | NULL");
  EXPECT_EQ(
      texts[1],
      "18446744073709551615 | -128 | 65535 | -8388608 | -9223372036854775808 | 3.1415927 | "
      "2.718281828459045 | -12345678901234567890123456789012345.123456789012345678901234567891 | 2155 | "
      "1000-01-01 | 9999-12-31 23:59:59.999999 | 2038-01-19 03:14:07.999 | -838:59:59.00 | 682 | enum#3 | "
      "set#5 | " +
          std::string("\x00\xff\x7f", 3));
  EXPECT_EQ(blob_sizes[1], "120000") << "a 120 KB blob read whole";
  const std::vector<binlog::Value>& full = rows[1];
  EXPECT_EQ(full[0].kind, binlog::ValueKind::kUint);
  EXPECT_EQ(full[4].kind, binlog::ValueKind::kInt);
  EXPECT_EQ(full[5].kind, binlog::ValueKind::kFloat);
  EXPECT_EQ(full[5].f, 3.1415927f);
  EXPECT_EQ(full[11].kind, binlog::ValueKind::kTimestamp);
  EXPECT_EQ(full[11].timestamp.seconds, 2147483647u) << "TIMESTAMP as UTC epoch seconds";
  EXPECT_EQ(full[11].timestamp.microsecond, 999000u);
  EXPECT_EQ(full[12].kind, binlog::ValueKind::kTime);
  EXPECT_TRUE(full[12].time.negative);
  EXPECT_EQ(full[12].time.hour, 838u);
  EXPECT_EQ(full[13].kind, binlog::ValueKind::kBit);
  EXPECT_EQ(full[13].fsp, 10);
}

TEST_F(SnapshotReaderTest, TableWithoutKeyIsReadInOnePass) {
  Exec(*conn_,
       {"DROP TABLE IF EXISTS snap_reader.nokey", "CREATE TABLE snap_reader.nokey (a INT, b VARCHAR(5))",
        "INSERT INTO snap_reader.nokey VALUES (1,'x'),(1,'x'),(2,NULL)"});
  auto reader = SnapshotReader::Open(*conn_, {"snap_reader", "nokey", {"a", "b"}, {}, {}, 1000});
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  int rows = 0;
  auto chunk = (*reader)->ReadChunk({}, [&](const std::vector<binlog::Value>&) {
    ++rows;
    return Status::Ok();
  });
  ASSERT_TRUE(chunk.ok());
  EXPECT_EQ(rows, 3);
  EXPECT_TRUE(chunk->last);
  EXPECT_TRUE(chunk->last_key.empty());
}

TEST_F(SnapshotReaderTest, CallbackErrorStopsTheRead) {
  Exec(*conn_, {"DROP TABLE IF EXISTS snap_reader.stop", "CREATE TABLE snap_reader.stop (id INT PRIMARY KEY)",
                "INSERT INTO snap_reader.stop VALUES (1),(2),(3)"});
  auto reader = SnapshotReader::Open(*conn_, {"snap_reader", "stop", {"id"}, {}, {"id"}, 10});
  ASSERT_TRUE(reader.ok());
  int rows = 0;
  auto chunk = (*reader)->ReadChunk({}, [&](const std::vector<binlog::Value>&) -> Status {
    if (++rows == 2) return Error(ErrorKind::kNetwork, "destination went away");
    return Status::Ok();
  });
  ASSERT_FALSE(chunk.ok());
  EXPECT_EQ(chunk.error().message(), "destination went away");
  // The connection is still usable afterwards.
  EXPECT_TRUE(conn_->Execute("SELECT 1").ok());
}

TEST_F(SnapshotReaderTest, MissingTableNamesIt) {
  auto reader = SnapshotReader::Open(*conn_, {"snap_reader", "no_such_table", {"id"}, {}, {"id"}, 10});
  ASSERT_FALSE(reader.ok());
  EXPECT_NE(reader.error().message().find("`snap_reader`.`no_such_table`"), std::string::npos)
      << reader.error().message();
}

TEST(SnapshotKeyJson, RoundTripsAndRejectsDamage) {
  Key key = {{KeyValue::Kind::kInt, -5, 0, 0, ""},
             {KeyValue::Kind::kUint, 0, 18446744073709551615ull, 0, ""},
             {KeyValue::Kind::kDouble, 0, 0, 1.5, ""},
             {KeyValue::Kind::kText, 0, 0, 0, std::string("a\0\xff\"", 4)},
             {KeyValue::Kind::kTemporal, 0, 0, 0, "2024-01-02 03:04:05.000006"}};
  auto back = KeyFromJson(KeyToJson(key));
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(*back, key);
  EXPECT_FALSE(KeyFromJson("{").ok());
  EXPECT_FALSE(KeyFromJson("[{\"q\": 1}]").ok());
  EXPECT_FALSE(KeyFromJson("[{\"x\": \"abc\"}]").ok());
  EXPECT_FALSE(KeyFromJson("[{\"i\": \"text\"}]").ok());
}

}  // namespace
}  // namespace chsync::mysql
