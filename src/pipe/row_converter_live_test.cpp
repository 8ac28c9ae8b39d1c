// RowConverter against the live MariaDB (CHSYNC_TEST_MYSQL_FULL): the same rows read by the
// snapshot (SnapshotReader with SnapshotQueryFor) and streamed from the binlog (BinlogStream and
// the decoder) must encode to byte-identical RowBinary, for a current ClickHouse (26.7) and an
// old one (18.16), across every MariaDB type and a range of character sets.

#include <gtest/gtest.h>

#include <unistd.h>

#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "binlog/decoder.h"
#include "binlog/event.h"
#include "clickhouse/capabilities.h"
#include "clickhouse/row_binary.h"
#include "clickhouse/type_mapping.h"
#include "common/url.h"
#include "mysql/binlog_stream.h"
#include "mysql/connection.h"
#include "mysql/snapshot_reader.h"
#include "pipe/row_converter.h"
#include "schema/information_schema.h"
#include "schema/tracker.h"
#include "test_env.h"

namespace chsync::pipe {
namespace {

const std::vector<clickhouse::ServerVersion> kVersions = {{26, 7}, {18, 16}};

/// Single-byte character sets whose every byte is stored and compared (table `bytes8`).
const std::vector<std::string> kByteCharsets = {
    "latin1",   "latin2", "latin5", "latin7", "cp1250",   "cp1251", "cp1256", "cp1257",
    "greek",    "hebrew", "koi8r",  "koi8u",  "tis620",   "cp850",  "cp852",  "cp866",
    "macroman", "macce",  "hp8",    "dec8",   "armscii8", "ascii"};

Result<mysql::ConnectOptions> Options() {
  std::string url = testing::RequireEnv("CHSYNC_TEST_MYSQL_FULL");
  if (url.empty()) return Error(ErrorKind::kConfig, "CHSYNC_TEST_MYSQL_FULL is not set");
  CHSYNC_ASSIGN_OR_RETURN(Url parsed, ParseUrl(url));
  return mysql::OptionsFromUrl(parsed);
}

Result<schema::TextRows> Rows(mysql::Connection& conn, const std::string& sql) {
  CHSYNC_ASSIGN_OR_RETURN(mysql::QueryResult r, conn.Query(sql));
  return schema::TextRows{std::move(r.columns), std::move(r.rows)};
}

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

/// One table's rows from each origin: RowBinary per id and per ClickHouse version, plus the
/// converted string cells of the first version (for value checks).
struct Encoded {
  std::map<int64_t, std::vector<std::string>> bytes;    // id → one RowBinary row per kVersions
  std::map<int64_t, std::vector<std::string>> strings;  // id → string cells ("<null>", "<other>")
};

struct Converters {
  std::vector<RowConverter> converters;
  std::vector<std::vector<clickhouse::MappedType>> types;
};

Result<Converters> MakeConverters(const schema::TableSchema& table) {
  Converters out;
  for (const clickhouse::ServerVersion& version : kVersions) {
    std::vector<clickhouse::MappedType> types;
    for (const schema::Column& c : table.columns) {
      CHSYNC_ASSIGN_OR_RETURN(clickhouse::MappedType m,
                              clickhouse::MapColumn(c, clickhouse::FromVersion(version)));
      types.push_back(std::move(m));
    }
    CHSYNC_ASSIGN_OR_RETURN(RowConverter conv, RowConverter::Create(table, types));
    out.converters.push_back(std::move(conv));
    out.types.push_back(std::move(types));
  }
  return out;
}

Status Add(Converters& convs, std::span<const binlog::Value> row, ValueOrigin origin, Encoded& out) {
  int64_t id = row[0].kind == binlog::ValueKind::kUint ? static_cast<int64_t>(row[0].u) : row[0].i;
  std::vector<std::string>& bytes = out.bytes[id];
  if (!bytes.empty()) return Error(ErrorKind::kInternal, "row id " + std::to_string(id) + " seen twice");
  std::vector<clickhouse::Cell> cells;
  for (size_t v = 0; v < kVersions.size(); ++v) {
    CHSYNC_RETURN_IF_ERROR(convs.converters[v].Convert(row, origin, cells));
    clickhouse::RowBinaryEncoder encoder(convs.types[v]);
    Status st = encoder.AppendRow(cells);
    if (!st.ok()) {
      st.error().AddContext(std::string(origin == ValueOrigin::kSnapshot ? "snapshot" : "binlog") +
                            " row id " + std::to_string(id) + " for ClickHouse " + kVersions[v].ToString());
      return st;
    }
    bytes.emplace_back(encoder.data());
    if (v == 0) {
      std::vector<std::string>& strings = out.strings[id];
      for (const clickhouse::Cell& cell : cells) {
        if (const auto* s = std::get_if<std::string_view>(&cell)) {
          strings.emplace_back(*s);
        } else {
          strings.emplace_back(std::holds_alternative<clickhouse::NullCell>(cell) ? "<null>" : "<other>");
        }
      }
    }
  }
  return Status::Ok();
}

class RowConverterLiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto options = Options();
    ASSERT_TRUE(options.ok()) << options.error().message();
    options_ = *options;
    auto conn = mysql::Connection::Open(options_);
    ASSERT_TRUE(conn.ok()) << conn.error().message();
    conn_ = std::move(*conn);
    db_ = "row_conv_" + std::to_string(getpid());
    Exec("DROP DATABASE IF EXISTS " + db_);
    Exec("CREATE DATABASE " + db_ + " DEFAULT CHARACTER SET utf8mb4");
    Exec("USE " + db_);
    // Zero dates are part of what is replicated.
    Exec("SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'");
  }
  void TearDown() override {
    if (conn_ != nullptr) (void)conn_->Execute("DROP DATABASE IF EXISTS " + db_);
  }

  void Exec(const std::string& sql) {
    Status st = conn_->Execute(sql);
    ASSERT_TRUE(st.ok()) << sql << ": " << st.error().message();
  }

  /// The tables of db_ as the pipe loads them: information_schema, normalised by the tracker.
  Result<schema::TableSchema> LoadTable(const std::string& name) {
    std::vector<std::string> dbs{db_};
    CHSYNC_ASSIGN_OR_RETURN(schema::TextRows tables, Rows(*conn_, schema::TablesQuery(dbs)));
    CHSYNC_ASSIGN_OR_RETURN(schema::TextRows columns, Rows(*conn_, schema::ColumnsQuery(dbs)));
    CHSYNC_ASSIGN_OR_RETURN(schema::TextRows statistics, Rows(*conn_, schema::StatisticsQuery(dbs)));
    CHSYNC_ASSIGN_OR_RETURN(
        std::vector<schema::TableSchema> loaded,
        schema::LoadSchemas(tables, columns, statistics, schema::InformationSchemaFlavor{true}));
    schema::Tracker::Options topt;
    topt.mariadb = true;
    schema::Tracker tracker(topt);
    for (schema::TableSchema& t : loaded) tracker.SetTable(std::move(t));
    const schema::TableSchema* t = tracker.Find(db_, name);
    if (t == nullptr) return Error(ErrorKind::kNotFound, "table " + name + " not loaded");
    return *t;
  }

  Result<Encoded> ReadSnapshot(const schema::TableSchema& table, uint64_t chunk_rows) {
    CHSYNC_ASSIGN_OR_RETURN(Converters convs, MakeConverters(table));
    CHSYNC_ASSIGN_OR_RETURN(auto reader,
                            mysql::SnapshotReader::Open(*conn_, SnapshotQueryFor(table, chunk_rows)));
    Encoded out;
    mysql::Key after;
    while (true) {
      CHSYNC_ASSIGN_OR_RETURN(auto chunk,
                              reader->ReadChunk(after, [&](const std::vector<binlog::Value>& row) {
                                return Add(convs, row, ValueOrigin::kSnapshot, out);
                              }));
      if (chunk.last) break;
      // Through the checkpoint's JSON form, as a restarted pipe resumes.
      CHSYNC_ASSIGN_OR_RETURN(after, mysql::KeyFromJson(mysql::KeyToJson(chunk.last_key)));
    }
    return out;
  }

  /// The rows inserted into `table` between `start` and `end`, from the binlog.
  Result<Encoded> ReadBinlog(const schema::TableSchema& table, const mysql::BinlogCoordinate& start,
                             const mysql::BinlogCoordinate& end) {
    CHSYNC_ASSIGN_OR_RETURN(Converters convs, MakeConverters(table));
    mysql::ConnectOptions o = options_;
    o.read_timeout_s = 60;
    CHSYNC_ASSIGN_OR_RETURN(auto conn, mysql::Connection::Open(o));
    mysql::BinlogStreamOptions so;
    so.server_id = 4200300 + static_cast<uint32_t>(getpid() % 1000);
    so.heartbeat_ms = 1000;
    so.start = start;
    CHSYNC_ASSIGN_OR_RETURN(auto stream, mysql::BinlogStream::Open(std::move(conn), so));
    binlog::DecoderOptions dopt;
    dopt.checksum_before_format = binlog::ChecksumAlgorithm::kCrc32;
    // Rows of this test's tables only (tests running beside it share the binlog).
    dopt.decode_rows_of = [this](const binlog::TableMap& map) { return map.database == db_; };
    binlog::Decoder decoder(dopt);
    Encoded out;
    while (mysql::CompareCoordinates(stream->next_coordinate(), end) < 0) {
      CHSYNC_ASSIGN_OR_RETURN(mysql::StreamEvent ev, stream->Next());
      if (decoder.file() != ev.at.file) decoder.SetFile(ev.at.file);
      CHSYNC_ASSIGN_OR_RETURN(binlog::Event e, decoder.Decode(ev.bytes, ev.at.position));
      const auto* rows = std::get_if<binlog::RowsEvent>(&e.body);
      if (rows == nullptr || !rows->table || rows->table->database != db_ || rows->table->table != table.name)
        continue;
      if (rows->kind != binlog::RowsKind::kWrite)
        return Error(ErrorKind::kInternal, "unexpected update or delete");
      for (const binlog::RowChange& change : rows->rows) {
        CHSYNC_RETURN_IF_ERROR(Add(convs, change.after, ValueOrigin::kBinlog, out));
      }
    }
    return out;
  }

  /// Runs `inserts` and returns the table's rows from the snapshot and from the binlog.
  void Capture(const std::string& table_name, const std::vector<std::string>& inserts, Encoded& snapshot,
               Encoded& stream, schema::TableSchema& table) {
    auto start = mysql::CurrentBinlogPosition(*conn_);
    ASSERT_TRUE(start.ok()) << start.error().message();
    for (const std::string& sql : inserts) Exec(sql);
    auto end = mysql::CurrentBinlogPosition(*conn_);
    ASSERT_TRUE(end.ok()) << end.error().message();
    auto loaded = LoadTable(table_name);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message();
    table = *loaded;
    auto snap = ReadSnapshot(table, 2);
    ASSERT_TRUE(snap.ok()) << snap.error().message();
    snapshot = std::move(*snap);
    auto binlog = ReadBinlog(table, *start, *end);
    ASSERT_TRUE(binlog.ok()) << binlog.error().message();
    stream = std::move(*binlog);
  }

  void ExpectSameBytes(const schema::TableSchema& table, const Encoded& snapshot, const Encoded& stream,
                       size_t expected_rows) {
    ASSERT_EQ(snapshot.bytes.size(), expected_rows);
    ASSERT_EQ(stream.bytes.size(), expected_rows);
    for (const auto& [id, rows] : snapshot.bytes) {
      auto it = stream.bytes.find(id);
      ASSERT_NE(it, stream.bytes.end()) << "row " << id << " missing from the binlog";
      for (size_t v = 0; v < kVersions.size(); ++v) {
        EXPECT_TRUE(rows[v] == it->second[v])
            << "row " << id << " of " << table.name << " encodes differently for ClickHouse "
            << kVersions[v].ToString() << " (snapshot " << rows[v].size() << " bytes, binlog "
            << it->second[v].size() << " bytes)";
      }
      // Locate differing columns by their converted strings (first version).
      const auto& a = snapshot.strings.at(id);
      const auto& b = stream.strings.at(id);
      for (size_t c = 0; c < a.size() && c < b.size(); ++c) {
        EXPECT_EQ(Hex(a[c]), Hex(b[c]))
            << "row " << id << " column " << table.columns[c].name << " (" << table.columns[c].TypeText()
            << " " << table.columns[c].charset << ")";
      }
    }
  }

  mysql::ConnectOptions options_;
  std::unique_ptr<mysql::Connection> conn_;
  std::string db_;
};

TEST_F(RowConverterLiveTest, EveryTypeEncodesTheSameFromSnapshotAndBinlog) {
  Exec(
      "CREATE TABLE t (id INT PRIMARY KEY, l1 VARCHAR(20) CHARACTER SET latin1, l2 CHAR(10) CHARACTER SET "
      "latin2, "
      "cyr VARCHAR(20) CHARACTER SET cp1251, k8 VARCHAR(20) CHARACTER SET koi8r, gb VARCHAR(20) CHARACTER "
      "SET gbk, "
      "sj VARCHAR(20) CHARACTER SET sjis, uj VARCHAR(20) CHARACTER SET ujis, kr VARCHAR(20) CHARACTER SET "
      "euckr, "
      "b5 VARCHAR(20) CHARACTER SET big5, u16 VARCHAR(20) CHARACTER SET utf16, u32 CHAR(5) CHARACTER SET "
      "utf32, "
      "uc CHAR(5) CHARACTER SET ucs2, gr TEXT CHARACTER SET greek, a7 VARCHAR(10) CHARACTER SET ascii, "
      "c10 CHAR(10), vc VARCHAR(20), mb3 VARCHAR(10) CHARACTER SET utf8mb3, bin8 BINARY(8), vb VARBINARY(8), "
      "bl BLOB, tx LONGTEXT, u UUID, i4 INET4, i6 INET6, geo GEOMETRY, pt POINT, j JSON, "
      "e ENUM('a','b','c'), s SET('x','y','z'), bt BIT(12), y YEAR, tm TIME(3), tm0 TIME, d DATE, "
      "dt DATETIME(6), dt0 DATETIME, ts TIMESTAMP(6) NULL DEFAULT NULL, dc DECIMAL(65,30), d2 DECIMAL(10,2), "
      "f FLOAT, db DOUBLE, ub BIGINT UNSIGNED, sb BIGINT, ti TINYINT, mi MEDIUMINT UNSIGNED)");
  const std::vector<std::string> inserts = {
      "INSERT INTO t VALUES (1, 'café', 'Łódź  ', 'Привет', 'Привет', '中文', '日本〜', '日本〜', '한국', "
      "'中文', "
      "'😀x', 'ab  ', 'é ', 'αβγ', 'plain', 'hi   ', 'hi   ', 'ü', 'ab', 'ab\\0', x'00ff', 'long text 😀', "
      "'123e4567-e89b-12d3-a456-426614174000', '192.168.1.1', '2001:db8::1', ST_GeomFromText('POINT(1 2)', "
      "4326), "
      "ST_GeomFromText('POINT(-1.5 2.25)'), '{\"a\": [1, 2.5, \"x\"]}', 'b', 'x,z', b'101010101010', 2024, "
      "'-12:34:56.789', '838:59:59', '2024-02-29', '2024-06-15 12:34:56.123456', '1000-01-01 00:00:00', "
      "'2024-06-15 12:34:56.654321', '-12345678901234567890123456789012345.123456789012345678901234567890', "
      "-0.01, 0.1, -1.7976931348623157e308, 18446744073709551615, -9223372036854775808, -128, 16777215)",
      "INSERT INTO t VALUES (2, '', '   ', '', '', '', '', '', '', '', '', '     ', '', '', '', '   ', '   "
      "', '', "
      "x'0000', '', '', '', '6ccd780c-baba-4026-9564-5b8c65602400', '0.0.0.0', '::', "
      "ST_GeomFromText('LINESTRING(0 0, 1 1)'), ST_GeomFromText('POINT(0 0)'), '[]', '', '', b'0', 0, "
      "'-00:00:00.500', '-838:59:59', '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', "
      "'0000-00-00 00:00:00', 0, 0, 0, 0, 0, 0, 0, 0)",
      "INSERT INTO t VALUES (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
      "NULL, NULL, "
      "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
      "NULL, "
      "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
      "INSERT INTO t (id, l1, c10, bin8, u, i6, tm, dc, f, db, dt, ts, y, d) VALUES (4, 'naïve €', ' a b ', "
      "x'0102030405060700', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '::ffff:192.0.2.128', '00:00:00.001', "
      "'0.000000000000000000000000000001', 3.4028235e38, 2.2250738585072014e-308, '9999-12-31 "
      "23:59:59.999999', "
      "'2038-01-19 03:14:07.999999', 1901, '1000-01-01')"};
  Encoded snapshot, stream;
  schema::TableSchema table;
  ASSERT_NO_FATAL_FAILURE(Capture("t", inserts, snapshot, stream, table));
  ExpectSameBytes(table, snapshot, stream, 4);

  // What a user would check, on the stream's side.
  auto col = [&](const std::string& name) { return static_cast<size_t>(table.FindColumn(name)); };
  const auto& row1 = stream.strings.at(1);
  EXPECT_EQ(row1[col("l1")], "café");
  EXPECT_EQ(row1[col("l2")], "Łódź");
  EXPECT_EQ(row1[col("cyr")], "Привет");
  EXPECT_EQ(row1[col("k8")], "Привет");
  EXPECT_EQ(row1[col("gb")], "中文");
  EXPECT_EQ(row1[col("sj")], "日本〜");
  EXPECT_EQ(row1[col("uj")], "日本〜");
  EXPECT_EQ(row1[col("kr")], "한국");
  EXPECT_EQ(row1[col("b5")], "中文");
  EXPECT_EQ(row1[col("u16")], "😀x");
  EXPECT_EQ(row1[col("u32")], "ab");
  EXPECT_EQ(row1[col("uc")], "é");
  EXPECT_EQ(row1[col("gr")], "αβγ");
  EXPECT_EQ(row1[col("c10")], "hi");
  EXPECT_EQ(row1[col("vc")], "hi   ");
  EXPECT_EQ(row1[col("bin8")], std::string("ab\0\0\0\0\0\0", 8));
  EXPECT_EQ(Hex(row1[col("u")]), "123e4567e89b12d3a456426614174000");
  EXPECT_EQ(Hex(row1[col("i4")]), "c0a80101");
  EXPECT_EQ(Hex(row1[col("i6")]), "20010db8000000000000000000000001");
  const auto& row2 = stream.strings.at(2);
  EXPECT_EQ(Hex(row2[col("u")]), "6ccd780cbaba402695645b8c65602400");
  EXPECT_EQ(Hex(row2[col("i4")]), "00000000");
  EXPECT_EQ(row2[col("i6")], std::string(16, '\0'));
  EXPECT_EQ(row2[col("bin8")], std::string(8, '\0'));
  EXPECT_EQ(row2[col("c10")], "");
}

TEST_F(RowConverterLiveTest, EveryByteOfSingleByteCharacterSetsConvertsAsTheServerDoes) {
  std::string create = "CREATE TABLE bytes8 (id INT PRIMARY KEY";
  std::string insert = "INSERT INTO bytes8 VALUES (1";
  for (const std::string& cs : kByteCharsets) {
    create += ", c_" + cs + " TEXT CHARACTER SET " + cs;
    insert += ", CAST(x'";
    for (int b = 0; b < 256; ++b) {
      static constexpr char kDigits[] = "0123456789ABCDEF";
      insert.push_back(kDigits[b >> 4]);
      insert.push_back(kDigits[b & 15]);
    }
    insert += "' AS CHAR CHARACTER SET " + cs + ")";
  }
  Encoded snapshot, stream;
  schema::TableSchema table;
  ASSERT_NO_FATAL_FAILURE(Capture("bytes8", {create + ")", insert + ")"}, snapshot, stream, table));
  ExpectSameBytes(table, snapshot, stream, 1);
  const auto& row = stream.strings.at(1);
  EXPECT_NE(row[1].find("€"), std::string::npos) << "latin1 0x80 is the euro sign";
}

TEST_F(RowConverterLiveTest, UuidAndInetKeysPageThroughTheSnapshot) {
  std::vector<std::string> inserts = {
      "CREATE TABLE k (u UUID NOT NULL, a INET6 NOT NULL, n INT, PRIMARY KEY (u, a))"};
  std::string values;
  for (int i = 0; i < 9; ++i) {
    char uuid[64];
    std::snprintf(uuid, sizeof uuid, "%08x-0000-1000-8000-%012x", 0x10000000u * static_cast<unsigned>(9 - i),
                  static_cast<unsigned>(i * 7));
    values += std::string(values.empty() ? "" : ", ") + "('" + uuid +
              "', '2001:db8::" + std::to_string(i % 2) + "', " + std::to_string(i) + ")";
  }
  inserts.push_back("INSERT INTO k VALUES " + values);
  inserts.push_back("INSERT INTO k VALUES ('10000000-0000-1000-8000-000000000038', '::', 9)");
  auto start = mysql::CurrentBinlogPosition(*conn_);
  ASSERT_TRUE(start.ok());
  for (const std::string& sql : inserts) Exec(sql);
  auto loaded = LoadTable("k");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  // Keyed on (u, a), two rows per chunk: every row exactly once.
  auto converters = MakeConverters(*loaded);
  ASSERT_TRUE(converters.ok());
  auto reader = mysql::SnapshotReader::Open(*conn_, SnapshotQueryFor(*loaded, 2));
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  std::map<int64_t, int> seen;
  mysql::Key after;
  int chunks = 0;
  while (true) {
    auto chunk = (*reader)->ReadChunk(after, [&](const std::vector<binlog::Value>& row) {
      if (row[0].text.size() != 16 || row[1].text.size() != 16)
        return Status(Error(ErrorKind::kInternal, "UUID/INET6 not read as 16 bytes"));
      ++seen[row[2].i];
      return Status::Ok();
    });
    ASSERT_TRUE(chunk.ok()) << chunk.error().message();
    ++chunks;
    ASSERT_LT(chunks, 20) << "pagination does not advance";
    if (chunk->last) break;
    auto key = mysql::KeyFromJson(mysql::KeyToJson(chunk->last_key));
    ASSERT_TRUE(key.ok());
    after = *key;
  }
  EXPECT_EQ(seen.size(), 10u);
  for (const auto& [n, count] : seen) EXPECT_EQ(count, 1) << "row " << n;
  EXPECT_GE(chunks, 5);
}

}  // namespace
}  // namespace chsync::pipe
