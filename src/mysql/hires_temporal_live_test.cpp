// MariaDB 5.3 "hires" temporal columns, live: creates a table with TIME/DATETIME/TIMESTAMP of every
// precision while the global mysql56_temporal_format is OFF (so MariaDB stores and binlogs them in
// its old formats), writes edge values, updates and deletes some, streams the binlog through
// BinlogStream and the decoder, and checks that every decoded value equals what SELECT returns.
//
// The TABLE_MAP of such a table carries no precision (old type codes 7/11/12, no metadata); the
// test supplies it from the tracked schema through DecoderOptions::complete_table_map, as the pipe
// does (binlog::SetHiresPrecision), with the schema loaded both from information_schema and from
// the CREATE TABLE statement.

#include <gtest/gtest.h>

#include <unistd.h>
#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "binlog/decoder.h"
#include "binlog/event.h"
#include "binlog/hires_temporal.h"
#include "binlog/value.h"
#include "common/url.h"
#include "mysql/binlog_stream.h"
#include "mysql/connection.h"
#include "schema/information_schema.h"
#include "schema/tracker.h"

namespace chsync::mysql {
namespace {

using binlog::ColumnType;
using binlog::Value;
using binlog::ValueKind;

/// Column name, declared type, binlog type code it must arrive as, precision.
struct ColumnDef {
  std::string name;
  std::string type;
  ColumnType wire;
  uint8_t fsp;
};

std::vector<ColumnDef> TemporalColumns() {
  std::vector<ColumnDef> out;
  for (uint8_t fsp = 0; fsp <= 6; ++fsp) {
    std::string p = fsp == 0 ? "" : "(" + std::to_string(fsp) + ")";
    out.push_back({"t" + std::to_string(fsp), "TIME" + p, ColumnType::kTime, fsp});
    out.push_back({"d" + std::to_string(fsp), "DATETIME" + p, ColumnType::kDateTime, fsp});
    out.push_back({"s" + std::to_string(fsp), "TIMESTAMP" + p + " NULL", ColumnType::kTimestamp, fsp});
  }
  return out;
}

/// Values for every column of a row: one TIME, DATETIME and TIMESTAMP literal (NULL allowed),
/// stored into each precision (the server truncates the fraction).
struct RowValues {
  int id;
  std::string time, datetime, timestamp;
};

const RowValues kInserts[] = {
    {1, "'12:34:56.123456'", "'2024-06-15 12:34:56.123456'", "'2024-06-15 12:34:56.123456'"},
    {2, "'-00:00:00.000001'", "'0000-00-00 00:00:00.000000'", "'0000-00-00 00:00:00'"},
    {3, "'838:59:59.999999'", "'9999-12-31 23:59:59.999999'", "'2038-01-19 03:14:07.999999'"},
    {4, "'-838:59:59.999999'", "'1000-01-01 00:00:00.000001'", "'1970-01-01 00:00:01.000001'"},
    {5, "NULL", "NULL", "NULL"},
    {6, "'-12:00:00.5'", "'2000-02-29 23:59:59.5'", "'2000-02-29 23:59:59.5'"},
    {7, "'-00:00:01.987654'", "'1999-12-31 00:00:00.000009'", "'1999-12-31 00:00:00.000009'"},
    {8, "'00:00:00'", "'2024-01-01 00:00:00'", "'2024-01-01 00:00:00'"},
};

ConnectOptions ServerOptions() {
  const char* url_text = std::getenv("CHSYNC_TEST_MYSQL_FULL");
  if (url_text == nullptr) {
    ADD_FAILURE() << "CHSYNC_TEST_MYSQL_FULL is not set: run the tests through scripts/test-servers";
    return {};
  }
  auto url = ParseUrl(url_text);
  EXPECT_TRUE(url.ok()) << (url.ok() ? "" : url.error().message());
  if (!url.ok()) return {};
  auto options = OptionsFromUrl(*url);
  EXPECT_TRUE(options.ok()) << (options.ok() ? "" : options.error().message());
  return options.ok() ? *options : ConnectOptions{};
}

/// A decoded row: each column's text form (AppendValueText), "NULL" for NULL.
using Row = std::vector<std::string>;

std::string Text(const Value& v) {
  if (v.kind == ValueKind::kAbsent) return "<absent>";
  std::string out;
  binlog::AppendValueText(v, out);
  return out;
}

class HiresTemporalLiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_ = ServerOptions();
    ASSERT_FALSE(options_.host.empty());
    auto conn = Connection::Open(options_);
    ASSERT_TRUE(conn.ok()) << conn.error().message();
    conn_ = std::move(*conn);
    database_ = "hires_live_" + std::to_string(getpid());
    ASSERT_TRUE(Exec("DROP DATABASE IF EXISTS " + database_));
    ASSERT_TRUE(Exec("CREATE DATABASE " + database_));
  }

  void TearDown() override {
    if (conn_) (void)conn_->Execute("DROP DATABASE IF EXISTS " + database_);
  }

  bool Exec(const std::string& sql) {
    Status s = conn_->Execute(sql);
    EXPECT_TRUE(s.ok()) << sql << ": " << (s.ok() ? "" : s.error().message());
    return s.ok();
  }

  /// Runs CREATE TABLE with mysql56_temporal_format OFF. The variable is global only and the
  /// server is shared by tests that run in parallel: the window is two statements long, the old
  /// value is restored on every path, and tests that toggle it take turns through a server lock.
  void CreateOldFormatTable(const std::string& create) {
    auto locked = conn_->QueryValue("SELECT GET_LOCK('chsync_mysql56_temporal_format', 120)");
    ASSERT_TRUE(locked.ok() && locked->value_or("0") == "1") << "could not take the server lock";
    auto before = conn_->QueryValue("SELECT @@GLOBAL.mysql56_temporal_format");
    ASSERT_TRUE(before.ok()) << before.error().message();
    std::string restore = "SET GLOBAL mysql56_temporal_format = " + before->value_or("ON");
    Status off = conn_->Execute("SET GLOBAL mysql56_temporal_format = OFF");
    Status created = off.ok() ? conn_->Execute(create) : Status::Ok();
    Status restored = conn_->Execute(restore);
    (void)conn_->QueryValue("SELECT RELEASE_LOCK('chsync_mysql56_temporal_format')");
    ASSERT_TRUE(off.ok()) << off.error().message();
    ASSERT_TRUE(created.ok()) << created.error().message();
    ASSERT_TRUE(restored.ok()) << restored.error().message();
  }

  /// Runs `chsync tail` from `start` until caught up; its exit status and its output (stderr too).
  std::pair<int, std::string> Tail(const BinlogCoordinate& start, unsigned server_id) {
    std::string chsync = CHSYNC_BINARY_DIR "/src/cli/chsync";
    EXPECT_EQ(access(chsync.c_str(), X_OK), 0) << chsync << " is missing: build the chsync target";
    setenv("CHSYNC_SOURCE_PASSWORD", options_.password.c_str(), 1);
    std::string cmd = chsync + " tail --source mysql://" + options_.user + "@" + options_.Address() +
                      " --from " + start.ToString() + " --until-caught-up --server-id " +
                      std::to_string(server_id) + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    EXPECT_NE(p, nullptr);
    std::string output;
    if (p == nullptr) return {-1, output};
    char buf[1 << 16];
    while (size_t n = fread(buf, 1, sizeof buf, p)) output.append(buf, n);
    int status = pclose(p);
    unsetenv("CHSYNC_SOURCE_PASSWORD");
    return {status, output};
  }

  ConnectOptions options_;
  std::unique_ptr<Connection> conn_;
  std::string database_;
};

TEST_F(HiresTemporalLiveTest, DecodedValuesEqualTheServers) {
  const std::vector<ColumnDef> columns = TemporalColumns();
  std::string create = "CREATE TABLE " + database_ + ".t (id INT PRIMARY KEY";
  for (const ColumnDef& c : columns) create += ", " + c.name + " " + c.type;
  // A column after the temporal ones: it decodes right only if every value before took its size.
  create += ", tail VARCHAR(20))";

  ASSERT_TRUE(Exec("SET time_zone = '+00:00'"));
  ASSERT_TRUE(Exec("SET sql_mode = ''"));  // zero dates
  auto start = CurrentBinlogPosition(*conn_);
  ASSERT_TRUE(start.ok()) << start.error().message();
  ASSERT_NO_FATAL_FAILURE(CreateOldFormatTable(create));

  // The server really made the old formats (TIME(0) included: the classic 3-byte TIME).
  auto show = conn_->Query("SHOW CREATE TABLE " + database_ + ".t");
  ASSERT_TRUE(show.ok()) << show.error().message();
  ASSERT_EQ(show->rows.size(), 1u);
  const std::string create_text = show->rows[0][1].value_or("");
  for (const ColumnDef& c : columns) {
    std::string type = c.type.substr(0, c.type.find(' '));
    for (char& ch : type) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    EXPECT_NE(create_text.find("`" + c.name + "` " + type + " /* mariadb-5.3 */"), std::string::npos)
        << c.name << " is not in MariaDB's 5.3 format: " << create_text;
  }

  for (const RowValues& r : kInserts) {
    std::string sql = "INSERT INTO " + database_ + ".t VALUES (" + std::to_string(r.id);
    for (const ColumnDef& c : columns) {
      sql += ", ";
      sql += c.wire == ColumnType::kTime       ? r.time
             : c.wire == ColumnType::kDateTime ? r.datetime
                                               : r.timestamp;
    }
    sql += ", 'row " + std::to_string(r.id) + "')";
    ASSERT_TRUE(Exec(sql));
  }
  // Updates that change every column (both images decode), one to NULLs, one from NULLs; deletes.
  std::string update = "UPDATE " + database_ + ".t SET tail = CONCAT(tail, ' updated')";
  for (const ColumnDef& c : columns) {
    if (c.wire == ColumnType::kTime) update += ", " + c.name + " = '-100:59:58.654321'";
    if (c.wire == ColumnType::kDateTime) update += ", " + c.name + " = '1987-07-07 07:07:07.070707'";
    if (c.wire == ColumnType::kTimestamp) update += ", " + c.name + " = '2001-09-09 01:46:40.999999'";
  }
  ASSERT_TRUE(Exec(update + " WHERE id IN (1, 5)"));
  std::string nulls = "UPDATE " + database_ + ".t SET tail = NULL";
  for (const ColumnDef& c : columns) nulls += ", " + c.name + " = NULL";
  ASSERT_TRUE(Exec(nulls + " WHERE id = 3"));
  ASSERT_TRUE(Exec("DELETE FROM " + database_ + ".t WHERE id IN (6, 8)"));
  auto end = CurrentBinlogPosition(*conn_);
  ASSERT_TRUE(end.ok()) << end.error().message();

  // The schema as a pipe tracks it: from information_schema, and from the DDL.
  std::vector<std::string> dbs = {database_};
  auto rows = [&](const std::string& sql) -> schema::TextRows {
    auto r = conn_->Query(sql);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
    if (!r.ok()) return {};
    return schema::TextRows{std::move(r->columns), std::move(r->rows)};
  };
  auto loaded =
      schema::LoadSchemas(rows(schema::TablesQuery(dbs)), rows(schema::ColumnsQuery(dbs)),
                          rows(schema::StatisticsQuery(dbs)), schema::InformationSchemaFlavor{true});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  ASSERT_EQ(loaded->size(), 1u);
  schema::Tracker::Options tracker_options;
  tracker_options.mariadb = true;
  schema::Tracker from_information_schema(tracker_options);
  from_information_schema.SetTable(loaded->front());
  schema::Tracker from_ddl(tracker_options);
  auto applied = from_ddl.ApplySql(create_text, database_);
  ASSERT_TRUE(applied.ok()) << applied.error().message();
  for (const schema::Tracker* tracker : {&from_information_schema, &from_ddl}) {
    const schema::TableSchema* table = tracker->Find(database_, "t");
    ASSERT_NE(table, nullptr);
    ASSERT_EQ(table->columns.size(), columns.size() + 2);
    for (size_t i = 0; i < columns.size(); ++i) {
      EXPECT_EQ(table->columns[i + 1].fsp.value_or(0), columns[i].fsp) << columns[i].name;
    }
  }
  const schema::TableSchema* tracked = from_information_schema.Find(database_, "t");
  ASSERT_NE(tracked, nullptr);
  std::vector<uint8_t> precisions;
  for (const schema::Column& c : tracked->columns)
    precisions.push_back(static_cast<uint8_t>(c.fsp.value_or(0)));

  // Stream the binlog between the two positions.
  ConnectOptions o = options_;
  o.read_timeout_s = 60;
  auto stream_conn = Connection::Open(o);
  ASSERT_TRUE(stream_conn.ok()) << stream_conn.error().message();
  BinlogStreamOptions so;
  so.server_id = 4200000 + static_cast<uint32_t>(getpid() % 100000);
  so.heartbeat_ms = 1000;
  so.start = *start;
  auto stream = BinlogStream::Open(std::move(*stream_conn), so);
  ASSERT_TRUE(stream.ok()) << stream.error().message();
  binlog::DecoderOptions dopt;
  dopt.checksum_before_format =
      (*stream)->checksum() == "CRC32" ? binlog::ChecksumAlgorithm::kCrc32 : binlog::ChecksumAlgorithm::kNone;
  size_t table_maps = 0, completed_maps = 0, inserts = 0, updates = 0, deletes = 0;
  // What a pipe does: the tracked precision goes into each TABLE_MAP before its rows are decoded.
  // Rows of this test's table only, should anything else share the range.
  dopt.decode_rows_of = [&](const binlog::TableMap& map) { return map.database == database_; };
  dopt.complete_table_map = [&](binlog::TableMap& map) -> Status {
    if (map.database != database_) return Status::Ok();
    ++completed_maps;
    // What MariaDB writes: the old type codes, and no precision.
    EXPECT_EQ(map.columns.size(), columns.size() + 2);
    for (size_t i = 0; i < columns.size() && i + 1 < map.columns.size(); ++i) {
      EXPECT_EQ(map.columns[i + 1].type, columns[i].wire) << columns[i].name;
      EXPECT_EQ(map.columns[i + 1].metadata, 0) << columns[i].name;
    }
    return binlog::SetHiresPrecision(map, precisions);
  };
  binlog::Decoder decoder(dopt);

  std::map<int, Row> decoded;
  auto key = [](binlog::RowImage image) { return static_cast<int>(image[0].i); };
  auto row_text = [&](binlog::RowImage image) {
    Row row;
    for (const Value& v : image) row.push_back(Text(v));
    return row;
  };
  while (CompareCoordinates((*stream)->next_coordinate(), *end) < 0) {
    auto ev = (*stream)->Next();
    ASSERT_TRUE(ev.ok()) << ev.error().message();
    if (decoder.file() != ev->at.file) decoder.SetFile(ev->at.file);
    auto e = decoder.Decode(ev->bytes, ev->at.position);
    ASSERT_TRUE(e.ok()) << e.error().message();
    if (const auto* tm = std::get_if<binlog::TableMapEvent>(&e->body)) {
      if (tm->table->database != database_) continue;
      ++table_maps;
      const binlog::TableMap& map = *tm->table;
      ASSERT_EQ(map.columns.size(), columns.size() + 2);
      // The completed map checks out against the tracked schema.
      schema::TableMapColumns check;
      check.database = map.database;
      check.table = map.table;
      for (const binlog::ColumnInfo& c : map.columns) {
        check.types.push_back(static_cast<uint8_t>(c.type));
        check.metadata.push_back(c.metadata);
        check.names.push_back(c.name);
      }
      for (size_t i = 0; i < columns.size(); ++i) EXPECT_EQ(map.columns[i + 1].metadata, columns[i].fsp);
      Status checked = from_information_schema.CheckTableMap(check);
      EXPECT_TRUE(checked.ok()) << checked.error().message();
      checked = from_ddl.CheckTableMap(check);
      EXPECT_TRUE(checked.ok()) << checked.error().message();
      continue;
    }
    const auto* rows_event = std::get_if<binlog::RowsEvent>(&e->body);
    if (rows_event == nullptr || !rows_event->table || rows_event->table->database != database_) continue;
    for (const binlog::RowChange& change : rows_event->rows) {
      switch (rows_event->kind) {
        case binlog::RowsKind::kWrite:
          ++inserts;
          decoded[key(change.after)] = row_text(change.after);
          break;
        case binlog::RowsKind::kDelete:
          ++deletes;
          decoded.erase(key(change.before));
          break;
        default:
          ++updates;
          ASSERT_EQ(decoded.count(key(change.before)), 1u);
          // The before image is the row as decoded from its insert.
          EXPECT_EQ(row_text(change.before), decoded[key(change.before)]);
          decoded.erase(key(change.before));
          decoded[key(change.after)] = row_text(change.after);
          break;
      }
      for (size_t i = 0; i < columns.size(); ++i) {
        const Value& v = change.after.empty() ? change.before[i + 1] : change.after[i + 1];
        if (v.kind != ValueKind::kNull) {
          EXPECT_EQ(v.fsp, columns[i].fsp) << columns[i].name;
        }
      }
    }
  }
  EXPECT_GE(table_maps, 1u);
  EXPECT_EQ(completed_maps, table_maps);
  EXPECT_EQ(inserts, std::size(kInserts));
  EXPECT_EQ(updates, 3u);
  EXPECT_EQ(deletes, 2u);

  // The server's view, every column as text.
  std::string select = "SELECT id";
  for (const ColumnDef& c : columns) select += ", " + c.name;
  auto result = conn_->Query(select + ", tail FROM " + database_ + ".t ORDER BY id");
  ASSERT_TRUE(result.ok()) << result.error().message();
  ASSERT_EQ(result->rows.size(), decoded.size());
  size_t compared = 0, fractional = 0, negative = 0;
  for (const auto& server_row : result->rows) {
    int id = std::stoi(server_row[0].value_or("0"));
    auto it = decoded.find(id);
    ASSERT_NE(it, decoded.end()) << "row " << id << " was not decoded";
    ASSERT_EQ(it->second.size(), server_row.size());
    for (size_t i = 0; i < server_row.size(); ++i) {
      std::string expected = server_row[i].value_or("NULL");
      std::string name = i == 0 ? "id" : i <= columns.size() ? columns[i - 1].name : "tail";
      EXPECT_EQ(it->second[i], expected) << "row " << id << " column " << name;
      ++compared;
      if (expected.find('.') != std::string::npos) ++fractional;
      if (!expected.empty() && expected[0] == '-') ++negative;
    }
  }
  // Rows 1-5 and 7 remain; the comparison covered fractions and negative TIMEs.
  EXPECT_EQ(decoded.size(), 6u);
  EXPECT_EQ(compared, 6 * (columns.size() + 2));
  EXPECT_GT(fractional, 50u);
  EXPECT_GT(negative, 10u);
}

// `chsync tail` has no tracked schema: it reads the precision of such columns from the server's
// information_schema, and prints the values as the server has them.
TEST_F(HiresTemporalLiveTest, TailPrintsTheServersValues) {
  ASSERT_TRUE(Exec("SET time_zone = '+00:00'"));
  auto start = CurrentBinlogPosition(*conn_);
  ASSERT_TRUE(start.ok()) << start.error().message();
  ASSERT_NO_FATAL_FAILURE(CreateOldFormatTable("CREATE TABLE " + database_ +
                                               ".tt (id INT PRIMARY KEY, a TIME(3), b DATETIME(6), "
                                               "c TIMESTAMP(2) NULL, d TIME, e VARCHAR(10))"));
  ASSERT_TRUE(
      Exec("INSERT INTO " + database_ +
           ".tt VALUES (1, '-01:02:03.5', '2024-06-15 12:34:56.123456', '2024-06-15 12:34:56.12', "
           "'-00:00:01', 'one'), (2, '838:59:59.999', '1000-01-01 00:00:00.000001', NULL, '12:00:00', "
           "'two')"));

  auto [status, output] = Tail(*start, 4200305);
  ASSERT_EQ(status, 0) << "chsync tail failed: "
                       << output.substr(output.size() > 2000 ? output.size() - 2000 : 0);

  auto rows = conn_->Query("SELECT id, a, b, c, d, e FROM " + database_ + ".tt ORDER BY id");
  ASSERT_TRUE(rows.ok()) << rows.error().message();
  ASSERT_EQ(rows->rows.size(), 2u);
  const char* names[] = {"id", "a", "b", "c", "d", "e"};
  for (const auto& row : rows->rows) {
    std::string expected = "{";
    for (size_t i = 0; i < row.size(); ++i) {
      if (i > 0) expected += " ";
      expected += std::string(names[i]) + "=";
      if (!row[i]) {
        expected += "NULL";
      } else if (i == 0) {
        expected += *row[i];
      } else {
        expected += "'" + *row[i] + "'";
      }
    }
    expected += "}";
    EXPECT_NE(output.find(expected), std::string::npos) << "tail did not print " << expected << " in:\n"
                                                        << output;
  }
}

// A table dropped since its rows were written: the precision is gone with it. tail says so, leaves
// those rows undecoded instead of misreading them, and goes on.
TEST_F(HiresTemporalLiveTest, TailSkipsRowsOfADroppedTableAndSaysWhy) {
  auto start = CurrentBinlogPosition(*conn_);
  ASSERT_TRUE(start.ok()) << start.error().message();
  ASSERT_NO_FATAL_FAILURE(CreateOldFormatTable("CREATE TABLE " + database_ +
                                               ".gone (id INT PRIMARY KEY, b DATETIME(6), e VARCHAR(10))"));
  ASSERT_TRUE(Exec("INSERT INTO " + database_ + ".gone VALUES (1, '2024-06-15 12:34:56.123456', 'one')"));
  ASSERT_TRUE(Exec("DROP TABLE " + database_ + ".gone"));
  ASSERT_TRUE(Exec("CREATE TABLE " + database_ + ".after (id INT PRIMARY KEY)"));
  ASSERT_TRUE(Exec("INSERT INTO " + database_ + ".after VALUES (42)"));

  auto [status, output] = Tail(*start, 4200306);
  ASSERT_EQ(status, 0) << "chsync tail failed: "
                       << output.substr(output.size() > 2000 ? output.size() - 2000 : 0);
  EXPECT_NE(output.find("rows of " + database_ + ".gone are not decoded"), std::string::npos) << output;
  EXPECT_NE(output.find("table='" + database_ + ".gone' rows_flags=0x1 version=1 rows_not_decoded"),
            std::string::npos)
      << output;
  // Events after it are still printed, values included.
  EXPECT_NE(output.find("table='" + database_ + ".after'"), std::string::npos) << output;
  EXPECT_NE(output.find("row0:after={id=42}"), std::string::npos) << output;
}

}  // namespace
}  // namespace chsync::mysql
