// Tracker::CheckTableMap against real TABLE_MAP events of both test MariaDB servers
// (binlog_row_metadata=FULL and MINIMAL): a table with every MariaDB column type, loaded from
// information_schema as the pipe loads it, passes the check with the server's metadata; after
// position-shifting ALTERs replayed on the tracker every later TABLE_MAP still passes, while a
// tracker that missed the statement (or replayed a wrong one) fails, naming the column.

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "binlog/decoder.h"
#include "binlog/event.h"
#include "common/url.h"
#include "mysql/binlog_stream.h"
#include "mysql/connection.h"
#include "schema/information_schema.h"
#include "schema/tracker.h"
#include "test_env.h"

namespace chsync {
namespace {

using schema::TableMapColumns;
using schema::Tracker;

struct Server {
  const char* env;          ///< variable holding the server's URL
  uint32_t replica_id;      ///< server_id our binlog streams register with
  bool expect_full = true;  ///< binlog_row_metadata the server is expected to run with
};

void PrintTo(const Server& server, std::ostream* os) {
  *os << server.env;
}

std::string Message(const Status& s) {
  return s.ok() ? std::string("ok") : s.error().message();
}

/// What the pipe hands CheckTableMap: wire types, names (FULL only) and each column's metadata.
TableMapColumns ToColumns(const binlog::TableMap& map) {
  TableMapColumns out;
  out.database = map.database;
  out.table = map.table;
  bool names = !map.columns.empty() && !map.columns.front().name.empty();
  for (const binlog::ColumnInfo& c : map.columns) {
    out.types.push_back(static_cast<uint8_t>(c.type));
    if (names) out.names.push_back(c.name);
    out.metadata.push_back(c.metadata);
  }
  return out;
}

class TableMapMetadataLiveTest : public ::testing::TestWithParam<Server> {
 protected:
  void SetUp() override {
    std::string url = testing::RequireEnv(GetParam().env);
    ASSERT_FALSE(url.empty());
    auto parsed = ParseUrl(url);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message();
    auto options = mysql::OptionsFromUrl(*parsed);
    ASSERT_TRUE(options.ok()) << options.error().message();
    options_ = *options;
    options_.read_timeout_s = 60;
    auto conn = mysql::Connection::Open(options_);
    ASSERT_TRUE(conn.ok()) << conn.error().message();
    conn_ = std::move(*conn);
    auto metadata = conn_->QueryValue("SELECT @@binlog_row_metadata");
    ASSERT_TRUE(metadata.ok()) << metadata.error().message();
    full_ = metadata->value_or("") == "FULL";
    ASSERT_EQ(full_, GetParam().expect_full) << "binlog_row_metadata=" << metadata->value_or("NULL");
    mariadb_ = mysql::IsMariaDbVersion(conn_->server_version());
    // Tests may run in parallel against the same server: each has its own database and replica id.
    std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    bool charsets = test.starts_with("EveryServerCharset");
    db_ = charsets ? "table_map_metadata_charsets" : "table_map_metadata_types";
    replica_id_ = GetParam().replica_id + (charsets ? 10 : 0);
    Exec("DROP DATABASE IF EXISTS " + db_);
    Exec("CREATE DATABASE " + db_ + " DEFAULT CHARACTER SET utf8mb4");
    Exec("USE " + db_);
  }

  void TearDown() override {
    if (conn_) (void)conn_->Execute("DROP DATABASE IF EXISTS " + db_);
  }

  void Exec(const std::string& sql) {
    Status s = conn_->Execute(sql);
    ASSERT_TRUE(s.ok()) << sql << ": " << s.error().message();
  }

  Tracker NewTracker() const {
    Tracker::Options o;
    o.full_metadata = full_;
    o.mariadb = mariadb_;
    Tracker t(o);
    t.SetDatabaseDefaults(db_, "utf8mb4", "");
    return t;
  }

  /// A tracker holding `table` as information_schema describes it now (the pipe's load path).
  Result<Tracker> Load(const std::string& table) {
    std::vector<std::string> dbs{db_};
    auto rows = [&](const std::string& sql) -> Result<schema::TextRows> {
      CHSYNC_ASSIGN_OR_RETURN(mysql::QueryResult r, conn_->Query(sql));
      return schema::TextRows{std::move(r.columns), std::move(r.rows)};
    };
    CHSYNC_ASSIGN_OR_RETURN(schema::TextRows tables, rows(schema::TablesQuery(dbs)));
    CHSYNC_ASSIGN_OR_RETURN(schema::TextRows columns, rows(schema::ColumnsQuery(dbs)));
    CHSYNC_ASSIGN_OR_RETURN(schema::TextRows statistics, rows(schema::StatisticsQuery(dbs)));
    CHSYNC_ASSIGN_OR_RETURN(std::vector<schema::TableSchema> loaded,
                            schema::LoadSchemas(tables, columns, statistics, {mariadb_}));
    Tracker t = NewTracker();
    for (schema::TableSchema& s : loaded) t.SetTable(std::move(s));
    if (t.Find(db_, table) == nullptr) return Error(ErrorKind::kNotFound, table + " was not loaded");
    return t;
  }

  /// Runs `statements` on the server and returns every TABLE_MAP of `table` they wrote to the
  /// binlog, read back as a replica reads it.
  Result<std::vector<TableMapColumns>> RunAndReadMaps(const std::vector<std::string>& statements,
                                                      const std::string& table) {
    CHSYNC_ASSIGN_OR_RETURN(mysql::BinlogCoordinate start, mysql::CurrentBinlogPosition(*conn_));
    for (const std::string& sql : statements) {
      Status s = conn_->Execute(sql);
      if (!s.ok()) return std::move(s).error().AddContext(sql);
    }
    CHSYNC_ASSIGN_OR_RETURN(mysql::BinlogCoordinate end, mysql::CurrentBinlogPosition(*conn_));
    CHSYNC_ASSIGN_OR_RETURN(std::unique_ptr<mysql::Connection> conn, mysql::Connection::Open(options_));
    mysql::BinlogStreamOptions so;
    so.server_id = replica_id_;
    so.heartbeat_ms = 1000;
    so.start = start;
    CHSYNC_ASSIGN_OR_RETURN(std::unique_ptr<mysql::BinlogStream> stream,
                            mysql::BinlogStream::Open(std::move(conn), so));
    binlog::DecoderOptions dopt;
    dopt.checksum_before_format =
        stream->checksum() == "CRC32" ? binlog::ChecksumAlgorithm::kCrc32 : binlog::ChecksumAlgorithm::kNone;
    // Rows of this test's tables only (tests running beside it share the binlog).
    dopt.decode_rows_of = [this](const binlog::TableMap& map) { return map.database == db_; };
    binlog::Decoder decoder(dopt);
    std::vector<TableMapColumns> maps;
    while (mysql::CompareCoordinates(stream->next_coordinate(), end) < 0) {
      CHSYNC_ASSIGN_OR_RETURN(mysql::StreamEvent ev, stream->Next());
      if (decoder.file() != ev.at.file) decoder.SetFile(ev.at.file);
      CHSYNC_ASSIGN_OR_RETURN(binlog::Event e, decoder.Decode(ev.bytes, ev.at.position));
      if (const auto* tm = std::get_if<binlog::TableMapEvent>(&e.body)) {
        if (tm->table->database == db_ && tm->table->table == table) maps.push_back(ToColumns(*tm->table));
      }
    }
    if (maps.empty()) return Error(ErrorKind::kNotFound, "no TABLE_MAP of " + table + " in the binlog");
    return maps;
  }

  mysql::ConnectOptions options_;
  std::unique_ptr<mysql::Connection> conn_;
  bool full_ = true;
  bool mariadb_ = true;
  std::string db_;
  uint32_t replica_id_ = 0;
};

constexpr const char* kEveryType = R"sql(CREATE TABLE t (
  id INT AUTO_INCREMENT PRIMARY KEY,
  ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, mi MEDIUMINT, i INT UNSIGNED, bi BIGINT,
  dec65 DECIMAL(65,30), dec_default DECIMAL, dec12 DECIMAL(12,2), f FLOAT, f30 FLOAT(30), d DOUBLE,
  b1 BIT(1), b7 BIT(7), b8 BIT(8), b13 BIT(13), b63 BIT(63), b64 BIT(64),
  dt DATE, t0 TIME, t1 TIME(1), t2 TIME(2), t3 TIME(3), t4 TIME(4), t5 TIME(5), t6 TIME(6),
  dt0 DATETIME, dt1 DATETIME(1), dt2 DATETIME(2), dt3 DATETIME(3), dt4 DATETIME(4), dt5 DATETIME(5),
  dt6 DATETIME(6),
  ts0 TIMESTAMP NULL, ts1 TIMESTAMP(1) NULL, ts2 TIMESTAMP(2) NULL, ts3 TIMESTAMP(3) NULL,
  ts4 TIMESTAMP(4) NULL, ts5 TIMESTAMP(5) NULL, ts6 TIMESTAMP(6) NULL,
  y YEAR,
  c_latin1 CHAR(10) CHARACTER SET latin1, c_utf8mb3 CHAR(100) CHARACTER SET utf8mb3,
  c_utf8mb4 CHAR(255) CHARACTER SET utf8mb4, c_default CHAR,
  va VARCHAR(10) CHARACTER SET latin1, vb VARCHAR(20) CHARACTER SET latin1,
  v_utf8mb3 VARCHAR(300) CHARACTER SET utf8mb3, v_utf8mb4 VARCHAR(1000) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
  bin BINARY(16), vbin VARBINARY(255),
  tb TINYBLOB, bl BLOB, mb MEDIUMBLOB, lb LONGBLOB,
  tt TINYTEXT, tx TEXT CHARACTER SET latin1, mt MEDIUMTEXT, lt LONGTEXT,
  e ENUM('a','b','c'), s SET('a','b','c','d','e','f','g','h','i'),
  j JSON, g GEOMETRY, p POINT, u UUID, ip4 INET4, ip6 INET6
))sql";

TEST_P(TableMapMetadataLiveTest, EveryTypePassesAndFollowedAltersKeepPassing) {
  Exec(kEveryType);
  auto loaded = Load("t");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  Tracker tracker = std::move(*loaded);

  auto first = RunAndReadMaps({"INSERT INTO t (id) VALUES (NULL)"}, "t");
  ASSERT_TRUE(first.ok()) << first.error().message();
  for (const TableMapColumns& map : *first) {
    ASSERT_EQ(map.metadata.size(), tracker.Find(db_, "t")->columns.size());
    EXPECT_EQ(map.names.empty(), !full_);
    Status s = tracker.CheckTableMap(map);
    EXPECT_TRUE(s.ok()) << Message(s);
    // Every column's metadata is checked: changing any one byte of it is caught.
    for (size_t i = 0; i < map.metadata.size(); ++i) {
      TableMapColumns changed = map;
      changed.metadata[i] ^= 0x0001;
      Status bad = tracker.CheckTableMap(changed);
      ASSERT_FALSE(bad.ok()) << "column " << i + 1 << " metadata " << map.metadata[i] << " not checked";
      EXPECT_NE(bad.error().message().find("column " + std::to_string(i + 1) + " ("), std::string::npos)
          << bad.error().message();
    }
  }

  struct Step {
    std::string alter;
    /// What the stale tracker's error must say (empty: any check failure).
    std::string stale_says;
  };
  const std::vector<Step> steps = {
      {"ALTER TABLE t DROP COLUMN si", "columns but the tracked schema has"},
      // Same wire type and (in MINIMAL mode) no names: only the byte lengths show the swap.
      {"ALTER TABLE t MODIFY va VARCHAR(10) CHARACTER SET latin1 AFTER vb",
       full_ ? "is `vb` but the tracked schema has `va`" : "(`va`) has metadata 20 (max 20 bytes)"},
      {"ALTER TABLE t ADD COLUMN added DECIMAL(12,4) FIRST", "columns but the tracked schema has"},
      {"ALTER TABLE t MODIFY dt6 DATETIME(6) AFTER dt0",
       full_ ? "is `dt6` but the tracked schema has `dt1`" : "(`dt1`) has metadata 6 (fsp 6)"},
      {"ALTER TABLE t CHANGE t3 t3_renamed TIME(3) FIRST", ""},
      {"ALTER TABLE t MODIFY dec65 DECIMAL(65,30) AFTER dec12",
       full_ ? "is `dec_default` but the tracked schema has `dec65`"
             : "(`dec65`) has metadata 0x0a00 (precision 10, scale 0)"},
      {"ALTER TABLE t MODIFY tb TINYBLOB AFTER lb",
       full_ ? "is `bl` but the tracked schema has `tb`" : "(`tb`) has metadata 2 (pack length 2)"},
      {"ALTER TABLE t MODIFY c_latin1 CHAR(10) CHARACTER SET latin1 AFTER c_utf8mb4",
       full_ ? "is `c_utf8mb3` but the tracked schema has `c_latin1`"
             : "(`c_latin1`) has metadata 0xee2c (fixed length, 300 bytes)"},
      {"ALTER TABLE t DROP COLUMN b7, ADD COLUMN x CHAR(5) CHARACTER SET utf8mb3 AFTER b1, "
       "MODIFY e ENUM('a','b','c') FIRST",
       ""},
  };
  int id = 1;
  for (const Step& step : steps) {
    SCOPED_TRACE(step.alter);
    Tracker stale = tracker;
    auto applied = tracker.ApplySql(step.alter, db_);
    ASSERT_TRUE(applied.ok()) << applied.error().message();
    bool shifted = false;
    for (const auto& change : applied->changes) shifted = shifted || change.shifts_positions;
    EXPECT_TRUE(shifted) << "the statement should shift positions";

    auto maps = RunAndReadMaps({step.alter, "INSERT INTO t (id) VALUES (" + std::to_string(++id) + ")"}, "t");
    ASSERT_TRUE(maps.ok()) << maps.error().message();
    for (const TableMapColumns& map : *maps) {
      Status followed = tracker.CheckTableMap(map);
      EXPECT_TRUE(followed.ok()) << Message(followed);
      Status missed = stale.CheckTableMap(map);
      ASSERT_FALSE(missed.ok()) << "a tracker that missed the statement accepts the TABLE_MAP";
      EXPECT_EQ(missed.error().kind(), ErrorKind::kConfig);
      EXPECT_NE(missed.error().message().find("TABLE_MAP for " + db_ + ".t"), std::string::npos)
          << missed.error().message();
      EXPECT_NE(missed.error().message().find("resync the table"), std::string::npos)
          << missed.error().message();
      EXPECT_NE(missed.error().message().find(step.stale_says), std::string::npos)
          << missed.error().message();
    }
    // The followed schema also agrees with a fresh load (so the check above compared like with like).
    auto fresh = Load("t");
    ASSERT_TRUE(fresh.ok()) << fresh.error().message();
    for (const TableMapColumns& map : *maps) {
      Status s = fresh->CheckTableMap(map);
      EXPECT_TRUE(s.ok()) << Message(s);
    }
  }

  // A tracker that replays a wrong statement (another length) fails on the next TABLE_MAP.
  Tracker wrong = tracker;
  const std::string alter = "ALTER TABLE t MODIFY vb VARCHAR(20) CHARACTER SET latin1 AFTER v_utf8mb3";
  ASSERT_TRUE(tracker.ApplySql(alter, db_).ok());
  ASSERT_TRUE(
      wrong.ApplySql("ALTER TABLE t MODIFY vb VARCHAR(21) CHARACTER SET latin1 AFTER v_utf8mb3", db_).ok());
  auto maps = RunAndReadMaps({alter, "INSERT INTO t (id) VALUES (" + std::to_string(++id) + ")"}, "t");
  ASSERT_TRUE(maps.ok()) << maps.error().message();
  for (const TableMapColumns& map : *maps) {
    Status right = tracker.CheckTableMap(map);
    EXPECT_TRUE(right.ok()) << Message(right);
    Status s = wrong.CheckTableMap(map);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(
        s.error().message().find("(`vb`) has metadata 20 (max 20 bytes) but the tracked schema's "
                                 "varchar(21) CHARACTER SET latin1 would be written as 21 (max 21 bytes)"),
        std::string::npos)
        << s.error().message();
  }
}

TEST_P(TableMapMetadataLiveTest, EveryServerCharsetIsKnown) {
  auto charsets = conn_->Query("SELECT CHARACTER_SET_NAME FROM information_schema.CHARACTER_SETS ORDER BY 1");
  ASSERT_TRUE(charsets.ok()) << charsets.error().message();
  ASSERT_FALSE(charsets->rows.empty());
  std::string create = "CREATE TABLE cs (id INT";
  std::vector<std::string> names;
  for (const auto& row : charsets->rows) {
    const std::string cs = row[0].value_or("");
    names.push_back(cs);
    create +=
        ", `c_" + cs + "` CHAR(7) CHARACTER SET " + cs + ", `v_" + cs + "` VARCHAR(7) CHARACTER SET " + cs;
  }
  Exec(create + ")");
  auto loaded = Load("cs");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  auto maps = RunAndReadMaps({"INSERT INTO cs (id) VALUES (1)"}, "cs");
  ASSERT_TRUE(maps.ok()) << maps.error().message();
  for (const TableMapColumns& map : *maps) {
    Status s = loaded->CheckTableMap(map);
    EXPECT_TRUE(s.ok()) << Message(s);
    for (size_t i = 1; i < map.metadata.size(); ++i) {
      TableMapColumns changed = map;
      changed.metadata[i] ^= 0x0001;
      EXPECT_FALSE(loaded->CheckTableMap(changed).ok())
          << "character set " << names[(i - 1) / 2] << " is not known: its columns' metadata is not checked";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Servers, TableMapMetadataLiveTest,
                         ::testing::Values(Server{"CHSYNC_TEST_MYSQL_FULL", 4207311, true},
                                           Server{"CHSYNC_TEST_MYSQL_MINIMAL", 4207312, false}),
                         [](const ::testing::TestParamInfo<Server>& param) {
                           return std::string(param.param.expect_full ? "Full" : "Minimal");
                         });

}  // namespace
}  // namespace chsync
