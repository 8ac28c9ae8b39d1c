// Tracker::CheckTableMap with TABLE_MAP metadata: for every column type, the metadata the server
// writes (values below follow MySQL's and MariaDB's Field::do_save_field_metadata, and were seen
// in real TABLE_MAP events of MariaDB 11) matches the tracked column, and a different value is
// reported naming the column.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "schema/tracker.h"

namespace chsync::schema {
namespace {

Tracker WithTable(const std::string& create, Tracker::Options options = {}) {
  Tracker tracker(options);
  tracker.SetDatabaseDefaults("db", "latin1", "latin1_swedish_ci");
  auto r = tracker.ApplySql(create, "db");
  EXPECT_TRUE(r.ok()) << create << ": " << (r.ok() ? "" : r.error().message());
  return tracker;
}

TableMapColumns Map(std::vector<uint8_t> types, std::vector<uint16_t> metadata) {
  TableMapColumns map;
  map.database = "db";
  map.table = "t";
  map.types = std::move(types);
  map.metadata = std::move(metadata);
  return map;
}

struct MetadataCase {
  const char* definition;  ///< column definition of `c`
  uint8_t wire;            ///< binlog type code the server writes
  uint16_t metadata;       ///< metadata as binlog::ColumnInfo::metadata holds it
  bool mariadb = false;
};

const MetadataCase kCases[] = {
    {"TINYINT", 1, 0},
    {"SMALLINT UNSIGNED", 2, 0},
    {"MEDIUMINT", 9, 0},
    {"INT", 3, 0},
    {"BIGINT", 8, 0},
    {"DECIMAL(65,30)", 246, (65 << 8) | 30},
    {"DECIMAL", 246, 10 << 8},
    {"NUMERIC(12,2)", 246, (12 << 8) | 2},
    {"FLOAT", 4, 4},
    {"FLOAT(30)", 5, 8},
    {"DOUBLE", 5, 8},
    {"BIT", 16, 0x0001},
    {"BIT(1)", 16, 0x0001},
    {"BIT(8)", 16, 0x0100},
    {"BIT(13)", 16, 0x0105},
    {"BIT(64)", 16, 0x0800},
    {"DATE", 10, 0},
    {"YEAR", 13, 0},
    {"TIME", 19, 0},
    {"TIME(3)", 19, 3},
    {"TIME(6)", 11, 0},  // MariaDB's pre-5.6 TIME(n) (mysql56_temporal_format=OFF) has none
    {"DATETIME", 18, 0},
    {"DATETIME(6)", 18, 6},
    {"DATETIME(2)", 12, 0},
    {"TIMESTAMP(2)", 17, 2},
    {"TIMESTAMP(0)", 7, 0},
    {"CHAR(10)", 254, 0xFE0A},
    {"CHAR", 254, 0xFE01},
    {"CHAR(10) CHARACTER SET utf8mb4", 254, 0xFE28},
    {"CHAR(100) CHARACTER SET utf8mb3", 254, 0xEE2C},  // 300 bytes: bit 8 folded into the type byte
    {"CHAR(255) CHARACTER SET utf8mb4", 254, 0xCEFC},  // 1020 bytes
    {"CHAR(150) CHARACTER SET utf8mb4", 254, 0xDE58},  // 600 bytes: bit 9 only
    {"CHAR(10) CHARACTER SET ucs2", 254, 0xFE14},
    {"CHAR(10) COLLATE utf8mb4_bin", 254, 0xFE28},
    {"BINARY(16)", 254, 0xFE10},
    {"VARCHAR(10)", 15, 10},
    {"VARCHAR(10) CHARACTER SET utf8mb4", 15, 40},
    {"VARCHAR(300) CHARACTER SET utf8", 15, 900},
    {"VARCHAR(16383) CHARACTER SET utf8mb4", 15, 65532},
    {"VARCHAR(5) CHARACTER SET sjis", 15, 10},
    {"VARBINARY(255)", 15, 255},
    {"ENUM('a','b')", 254, 0xF701},
    {"SET('a')", 254, 0xF801},
    {"SET('a','b','c','d','e','f','g','h','i')", 254, 0xF802},
    {"TINYBLOB", 252, 1},
    {"TINYTEXT CHARACTER SET utf8mb4", 252, 1},
    {"BLOB", 252, 2},
    {"TEXT", 252, 2},
    {"MEDIUMBLOB", 252, 3},
    {"MEDIUMTEXT", 252, 3},
    {"LONGBLOB", 252, 4},
    {"LONGTEXT", 252, 4},
    {"TEXT(300)", 252, 2},
    {"JSON", 245, 4},
    {"JSON", 252, 4, true},  // MariaDB: LONGTEXT
    {"GEOMETRY", 255, 4},
    {"POINT", 255, 4},
    {"UUID", 254, 0xFE10, true},
    {"INET4", 254, 0xFE04, true},
    {"INET6", 254, 0xFE10, true},
};

TEST(TableMapMetadataTest, EveryTypeMatchesWhatTheServerWrites) {
  for (const MetadataCase& tc : kCases) {
    SCOPED_TRACE(tc.definition);
    Tracker::Options options;
    options.mariadb = tc.mariadb;
    Tracker t = WithTable(std::string("CREATE TABLE t (id INT, c ") + tc.definition + ")", options);
    Status ok = t.CheckTableMap(Map({3, tc.wire}, {0, tc.metadata}));
    EXPECT_TRUE(ok.ok()) << (ok.ok() ? "" : ok.error().message());
  }
}

TEST(TableMapMetadataTest, EveryTypeDetectsOtherMetadata) {
  for (const MetadataCase& tc : kCases) {
    SCOPED_TRACE(tc.definition);
    Tracker::Options options;
    options.mariadb = tc.mariadb;
    Tracker t = WithTable(std::string("CREATE TABLE t (id INT, c ") + tc.definition + ")", options);
    for (uint16_t other :
         {static_cast<uint16_t>(tc.metadata + 1), static_cast<uint16_t>(tc.metadata ^ 0x0100)}) {
      Status s = t.CheckTableMap(Map({3, tc.wire}, {0, other}));
      ASSERT_FALSE(s.ok()) << "metadata " << other << " accepted";
      EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
      EXPECT_NE(s.error().message().find("column 2 (`c`) has metadata"), std::string::npos)
          << s.error().message();
      EXPECT_NE(s.error().message().find("resync the table"), std::string::npos) << s.error().message();
    }
  }
}

TEST(TableMapMetadataTest, SwappedVarcharsOfDifferentLengthsAreDetected) {
  // The server ran ALTER TABLE t MODIFY a VARCHAR(10) AFTER b: both columns stay VARCHAR, so the
  // wire types cannot tell; only their byte lengths (metadata) do.
  const std::string create = "CREATE TABLE t (id INT, a VARCHAR(10), b VARCHAR(20)) DEFAULT CHARSET=utf8mb4";
  const TableMapColumns after = Map({3, 15, 15}, {0, 80, 40});

  Tracker stale = WithTable(create, {.full_metadata = false});
  EXPECT_TRUE(stale.CheckTableMap(Map({3, 15, 15}, {0, 40, 80})).ok());
  Status s = stale.CheckTableMap(after);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(),
            "TABLE_MAP for db.t: column 2 (`a`) has metadata 80 (max 80 bytes) but the tracked schema's "
            "varchar(10) CHARACTER SET utf8mb4 would be written as 40 (max 40 bytes); the tracked schema is "
            "out of date, resync the table");

  Tracker followed = WithTable(create, {.full_metadata = false});
  auto r = followed.ApplySql("ALTER TABLE t MODIFY a VARCHAR(10) AFTER b", "db");
  ASSERT_TRUE(r.ok()) << r.error().message();
  Status ok = followed.CheckTableMap(after);
  EXPECT_TRUE(ok.ok()) << ok.error().message();

  // Replaying the wrong statement (a different length) is caught as well.
  Tracker wrong = WithTable(create, {.full_metadata = false});
  ASSERT_TRUE(wrong.ApplySql("ALTER TABLE t MODIFY a VARCHAR(12) AFTER b", "db").ok());
  Status bad = wrong.CheckTableMap(after);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("column 3 (`a`) has metadata 40 (max 40 bytes)"), std::string::npos)
      << bad.error().message();
  EXPECT_NE(bad.error().message().find("would be written as 48 (max 48 bytes)"), std::string::npos)
      << bad.error().message();
}

TEST(TableMapMetadataTest, DroppedColumnOfTheSameTypeIsDetectedByMetadata) {
  // DROP COLUMN p in (d DECIMAL(10,2), p DECIMAL(12,4), q DECIMAL(12,4)) with ADD r DECIMAL(12,4)
  // FIRST keeps the count and the wire types; the precision and scale show the shift.
  const std::string create = "CREATE TABLE t (d DECIMAL(10,2), p DECIMAL(12,4), q DECIMAL(12,4))";
  const TableMapColumns after = Map({246, 246, 246}, {(12 << 8) | 4, (10 << 8) | 2, (12 << 8) | 4});
  Tracker stale = WithTable(create, {.full_metadata = false});
  Status s = stale.CheckTableMap(after);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("column 1 (`d`) has metadata 0x0c04 (precision 12, scale 4)"),
            std::string::npos)
      << s.error().message();
  Tracker followed = WithTable(create, {.full_metadata = false});
  ASSERT_TRUE(followed.ApplySql("ALTER TABLE t DROP COLUMN p, ADD r DECIMAL(12,4) FIRST", "db").ok());
  Status ok = followed.CheckTableMap(after);
  EXPECT_TRUE(ok.ok()) << ok.error().message();
}

TEST(TableMapMetadataTest, MessagesDescribeEachKind) {
  struct Message {
    const char* definition;
    uint8_t wire;
    uint16_t seen;
    const char* text;
  };
  const Message kMessages[] = {
      {"TIME(3)", 19, 6,
       "has metadata 6 (fsp 6) but the tracked schema's time(3) would be written as 3 (fsp 3)"},
      {"BIT(13)", 16, 0x0200,
       "has metadata 0x0200 (16 bits) but the tracked schema's bit(13) would be written as "
       "0x0105 (13 bits)"},
      {"BLOB", 252, 4,
       "has metadata 4 (pack length 4) but the tracked schema's blob would be written as 2 "
       "(pack length 2)"},
      {"CHAR(255) CHARACTER SET utf8mb4", 254, 0xFE28,
       "has metadata 0xfe28 (fixed length, 40 bytes) but the tracked schema's char(255) CHARACTER SET "
       "utf8mb4 "
       "would be written as 0xcefc (fixed length, 1020 bytes)"},
      {"ENUM('a')", 254, 0xF802,
       "has metadata 0xf802 (SET, 2 bytes) but the tracked schema's enum('a') would be "
       "written as 0xf701 (ENUM, 1 bytes)"},
  };
  for (const Message& m : kMessages) {
    SCOPED_TRACE(m.definition);
    Tracker t = WithTable(std::string("CREATE TABLE t (c ") + m.definition + ")");
    Status s = t.CheckTableMap(Map({m.wire}, {m.seen}));
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message().find(m.text), std::string::npos) << s.error().message();
  }
}

TEST(TableMapMetadataTest, EnumAndSetPackLengthsFollowMemberCount) {
  std::string many_enum = "ENUM(";
  std::string set17 = "SET(";
  std::string set33 = "SET(";
  for (int i = 0; i < 300; ++i) many_enum += (i ? ",'" : "'") + std::to_string(i) + "'";
  for (int i = 0; i < 17; ++i) set17 += (i ? ",'" : "'") + std::to_string(i) + "'";
  for (int i = 0; i < 33; ++i) set33 += (i ? ",'" : "'") + std::to_string(i) + "'";
  Tracker t = WithTable("CREATE TABLE t (e " + many_enum + "), s " + set17 + "), u " + set33 + "))");
  Status ok = t.CheckTableMap(Map({254, 254, 254}, {0xF702, 0xF803, 0xF808}));
  EXPECT_TRUE(ok.ok()) << ok.error().message();
  EXPECT_FALSE(t.CheckTableMap(Map({254, 254, 254}, {0xF701, 0xF803, 0xF808})).ok());
  EXPECT_FALSE(t.CheckTableMap(Map({254, 254, 254}, {0xF702, 0xF803, 0xF805})).ok());
}

TEST(TableMapMetadataTest, UnknownCharsetSkipsOnlyThatColumn) {
  Tracker t;
  TableSchema table;
  table.database = "db";
  table.name = "t";
  Column odd;
  odd.name = "odd";
  odd.type = ColumnType::kVarChar;
  odd.length = 10;
  odd.charset = "klingon";
  Column known;
  known.name = "known";
  known.type = ColumnType::kVarChar;
  known.length = 10;
  known.charset = "latin1";
  table.columns = {odd, known};
  table.RenumberColumns();
  t.SetTable(table);
  EXPECT_TRUE(t.CheckTableMap(Map({15, 15}, {12345, 10})).ok());
  Status s = t.CheckTableMap(Map({15, 15}, {12345, 11}));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("column 2 (`known`)"), std::string::npos) << s.error().message();
}

TEST(TableMapMetadataTest, WithoutMetadataOnlyTypesAreChecked) {
  Tracker t = WithTable("CREATE TABLE t (a VARCHAR(10), b VARCHAR(20))");
  EXPECT_TRUE(t.CheckTableMap(Map({15, 15}, {})).ok());
}

TEST(TableMapMetadataTest, MetadataCountMismatchIsCorrupt) {
  Tracker t = WithTable("CREATE TABLE t (a VARCHAR(10), b VARCHAR(20))");
  Status s = t.CheckTableMap(Map({15, 15}, {10}));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kCorrupt);
  EXPECT_NE(s.error().message().find("metadata of 1 columns but 2 types"), std::string::npos)
      << s.error().message();
}

TEST(TableMapMetadataTest, NameMismatchIsReportedBeforeMetadata) {
  Tracker t = WithTable("CREATE TABLE t (a VARCHAR(10), b VARCHAR(20))");
  TableMapColumns map = Map({15, 15}, {20, 10});
  map.names = {"b", "a"};
  Status s = t.CheckTableMap(map);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("column 1 is `b` but the tracked schema has `a`"), std::string::npos)
      << s.error().message();
}

}  // namespace
}  // namespace chsync::schema
