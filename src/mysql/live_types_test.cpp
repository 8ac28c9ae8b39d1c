// Live type tests: runs tests/data/binlog/live_types.sql on the FULL MariaDB test server, streams
// the binlog it wrote through BinlogStream and the binlog decoder, and checks that the decoded
// row events agree value for value with (1) what the server holds afterwards (SELECT) and
// (2) what `mariadb-binlog -vv --base64-output=decode-rows` prints for the same events.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "binlog/decoder.h"
#include "binlog/event.h"
#include "binlog/value.h"
#include "common/url.h"
#include "mysql/binlog_stream.h"
#include "mysql/connection.h"

namespace chsync::mysql {
namespace {

using binlog::ColumnInfo;
using binlog::Value;
using binlog::ValueKind;

constexpr const char* kDatabase = "live_types";
constexpr uint32_t kBinaryCollation = 63;

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::string Format(const char* format, double d) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, d);
  return buf;
}

bool IsFixedBinary(const ColumnInfo& c) {
  return c.real_type == binlog::ColumnType::kString && c.charset.value_or(0) == kBinaryCollation;
}

/// The bytes of a string-like value; BINARY(n) values get back the trailing zero bytes that the
/// binlog leaves out, as the server returns them.
std::string PaddedBytes(const Value& v, const ColumnInfo& c) {
  std::string bytes(v.text);
  if (IsFixedBinary(c) && bytes.size() < c.max_length) bytes.resize(c.max_length, '\0');
  return bytes;
}

/// One value in the form the server query (ServerExpression) produces for its column.
std::string Canonical(const Value& v, const ColumnInfo& c, const std::string& data_type) {
  if (v.kind == ValueKind::kAbsent) return "<absent>";
  if (v.kind == ValueKind::kNull) return "NULL";
  switch (v.kind) {
    case ValueKind::kFloat: return Format("%.17g", static_cast<double>(v.f));
    case ValueKind::kDouble: return Format("%.17g", v.d);
    case ValueKind::kString:
    case ValueKind::kJson:
    case ValueKind::kGeometry: (void)data_type; return Hex(PaddedBytes(v, c));
    case ValueKind::kEnum: {
      std::string name = v.u >= 1 && v.u <= c.enum_values.size() ? c.enum_values[v.u - 1] : "";
      return std::to_string(v.u) + "|" + name;
    }
    case ValueKind::kSet: {
      std::string names;
      for (size_t i = 0; i < c.enum_values.size() && i < 64; ++i) {
        if ((v.u >> i) & 1) names += (names.empty() ? "" : ",") + c.enum_values[i];
      }
      return std::to_string(v.u) + "|" + names;
    }
    default: {
      std::string out;
      binlog::AppendValueText(v, out);
      return out;
    }
  }
}

/// The SELECT expression whose text equals Canonical() of the column's decoded value.
std::string ServerExpression(const std::string& column, const std::string& data_type) {
  std::string c = QuoteIdentifier(column);
  // FLOAT as text has 6 digits; as DOUBLE it is exact (reformatted in ServerCanonical).
  if (data_type == "float") return "CAST(" + c + " AS DOUBLE)";
  if (data_type == "double") return c;
  if (data_type == "bit") return c + " + 0";
  // SET + 0 is a signed BIGINT: a 64-member set's top bit would print negative.
  if (data_type == "enum" || data_type == "set")
    return "CONCAT(CAST(" + c + " + 0 AS UNSIGNED), '|', " + c + ")";
  if (data_type == "uuid" || data_type == "inet6") return "HEX(CAST(" + c + " AS BINARY(16)))";
  if (data_type == "inet4") return "HEX(CAST(" + c + " AS BINARY(4)))";
  static const std::set<std::string> kBytes = {"char",
                                               "varchar",
                                               "binary",
                                               "varbinary",
                                               "tinyblob",
                                               "blob",
                                               "mediumblob",
                                               "longblob",
                                               "tinytext",
                                               "text",
                                               "mediumtext",
                                               "longtext",
                                               "json",
                                               "geometry",
                                               "point",
                                               "linestring",
                                               "polygon",
                                               "multipoint",
                                               "multilinestring",
                                               "multipolygon",
                                               "geometrycollection"};
  if (kBytes.count(data_type)) return "HEX(" + c + ")";
  return c;
}

std::string ServerCanonical(const std::optional<std::string>& text, const std::string& data_type) {
  if (!text) return "NULL";
  if (data_type == "float" || data_type == "double")
    return Format("%.17g", std::strtod(text->c_str(), nullptr));
  return *text;
}

/// A table's rows by primary key (`id`, the first column), each as canonical values.
struct TableState {
  std::vector<std::string> columns;
  std::vector<std::string> data_types;  ///< information_schema DATA_TYPE per column
  std::map<int64_t, std::vector<std::string>> rows;
};

/// One row image as decoded, for the comparison with mariadb-binlog.
struct DecodedImage {
  std::string table;
  char kind;  ///< 'I' insert, 'U' update before, 'u' update after, 'D' delete
  std::vector<Value> values;
  std::shared_ptr<const binlog::TableMap> map;
  std::string owned;  ///< backing store for string values (values' views point here)
};

struct LiveRun {
  bool ran = false;
  std::string setup_error;
  BinlogCoordinate start, end;
  std::vector<std::string> decode_errors;
  std::set<int> event_types;  ///< types of events that touched live_types
  size_t max_rows_per_transaction = 0;
  std::map<std::string, std::vector<std::string>> data_types;  ///< table → DATA_TYPE per column
  std::map<std::string, TableState> tables;
  std::vector<std::unique_ptr<DecodedImage>> images;
};

LiveRun& TheRun();

ConnectOptions ServerOptions(std::string& error) {
  const char* url_text = std::getenv("CHSYNC_TEST_MYSQL_FULL");
  if (url_text == nullptr) {
    error = "CHSYNC_TEST_MYSQL_FULL is not set: run the tests through scripts/test-servers";
    return {};
  }
  auto url = ParseUrl(url_text);
  if (!url.ok()) {
    error = url.error().message();
    return {};
  }
  auto options = OptionsFromUrl(*url);
  if (!options.ok()) {
    error = options.error().message();
    return {};
  }
  return *options;
}

/// Runs the SQL script with the mariadb client (the script needs DELIMITER).
std::string RunScript(const ConnectOptions& o) {
  std::string script = CHSYNC_SOURCE_DIR "/tests/data/binlog/live_types.sql";
  setenv("MYSQL_PWD", o.password.c_str(), 1);
  std::string cmd = "mariadb --no-defaults --protocol=TCP -h " + o.host + " -P " + std::to_string(o.port) +
                    " -u " + o.user + " < " + script + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return "cannot run the mariadb client";
  std::string output;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) output.append(buf, n);
  int rc = pclose(p);
  unsetenv("MYSQL_PWD");
  if (rc != 0) return "mariadb client failed on " + script + ": " + output;
  return "";
}

void ApplyRows(LiveRun& run, const binlog::RowsEvent& rows, const std::string& table) {
  auto types_it = run.data_types.find(table);
  if (types_it == run.data_types.end()) return;  // a table the script dropped or never made
  TableState& state = run.tables[table];
  const auto& columns = rows.table->columns;
  if (state.columns.empty()) {
    for (const ColumnInfo& c : columns) state.columns.push_back(c.name);
    state.data_types = types_it->second;
  }
  auto canon = [&](binlog::RowImage image) {
    std::vector<std::string> out;
    for (size_t i = 0; i < image.size() && i < columns.size(); ++i) {
      out.push_back(Canonical(image[i], columns[i], i < state.data_types.size() ? state.data_types[i] : ""));
    }
    return out;
  };
  auto key = [](binlog::RowImage image) -> int64_t {
    if (image.empty()) return INT64_MIN;
    return image[0].kind == ValueKind::kUint ? static_cast<int64_t>(image[0].u) : image[0].i;
  };
  auto keep = [&](char kind, binlog::RowImage image) {
    auto img = std::make_unique<DecodedImage>();
    img->table = table;
    img->kind = kind;
    img->map = rows.table;
    size_t total = 0;
    for (const Value& v : image) total += v.text.size();
    img->owned.reserve(total);
    for (const Value& v : image) {
      Value copy = v;
      if (!v.text.empty()) {
        size_t at = img->owned.size();
        img->owned.append(v.text);
        copy.text = std::string_view(img->owned.data() + at, v.text.size());
      }
      img->values.push_back(copy);
    }
    run.images.push_back(std::move(img));
  };
  for (const binlog::RowChange& change : rows.rows) {
    switch (rows.kind) {
      case binlog::RowsKind::kWrite:
        state.rows[key(change.after)] = canon(change.after);
        keep('I', change.after);
        break;
      case binlog::RowsKind::kDelete:
        state.rows.erase(key(change.before));
        keep('D', change.before);
        break;
      default:
        state.rows.erase(key(change.before));
        state.rows[key(change.after)] = canon(change.after);
        keep('U', change.before);
        keep('u', change.after);
        break;
    }
  }
}

void Stream(LiveRun& run, const ConnectOptions& options) {
  ConnectOptions o = options;
  o.read_timeout_s = 60;
  auto conn = Connection::Open(o);
  if (!conn.ok()) {
    run.setup_error = conn.error().message();
    return;
  }
  BinlogStreamOptions so;
  so.server_id = 4200201;
  so.heartbeat_ms = 1000;
  so.start = run.start;
  auto stream = BinlogStream::Open(std::move(*conn), so);
  if (!stream.ok()) {
    run.setup_error = stream.error().message();
    return;
  }
  binlog::DecoderOptions dopt;
  dopt.checksum_before_format = binlog::ChecksumAlgorithm::kCrc32;
  // Rows of this test's tables only: tests running beside it write other tables to the same
  // binlog (some, MariaDB 5.3 temporals, only decodable with their schema).
  dopt.decode_rows_of = [](const binlog::TableMap& map) { return map.database == kDatabase; };
  binlog::Decoder decoder(dopt);
  size_t rows_in_transaction = 0;
  while (CompareCoordinates((*stream)->next_coordinate(), run.end) < 0) {
    auto ev = (*stream)->Next();
    if (!ev.ok()) {
      run.setup_error = ev.error().message();
      return;
    }
    if (decoder.file() != ev->at.file) decoder.SetFile(ev->at.file);
    auto decoded = decoder.Decode(ev->bytes, ev->at.position);
    if (!decoded.ok()) {
      run.decode_errors.push_back(decoded.error().message());
      continue;
    }
    const binlog::Event& e = *decoded;
    if (std::holds_alternative<binlog::MariaGtidEvent>(e.body)) rows_in_transaction = 0;
    if (const auto* q = std::get_if<binlog::QueryEvent>(&e.body)) {
      if (q->database == kDatabase) run.event_types.insert(static_cast<int>(e.header.type));
    }
    if (const auto* rows = std::get_if<binlog::RowsEvent>(&e.body)) {
      if (rows->table && rows->table->database == kDatabase) {
        run.event_types.insert(static_cast<int>(e.header.type));
        rows_in_transaction += rows->rows.size();
        run.max_rows_per_transaction = std::max(run.max_rows_per_transaction, rows_in_transaction);
        ApplyRows(run, *rows, rows->table->table);
      }
    }
  }
}

LiveRun& TheRun() {
  static LiveRun run;
  if (run.ran) return run;
  run.ran = true;
  ConnectOptions options = ServerOptions(run.setup_error);
  if (!run.setup_error.empty()) return run;
  auto conn = Connection::Open(options);
  if (!conn.ok()) {
    run.setup_error = conn.error().message();
    return run;
  }
  // Each test process runs the script once; processes that ctest runs in parallel take turns
  // (the lock lives as long as this connection, i.e. until the process ends).
  auto locked = (*conn)->QueryValue("SELECT GET_LOCK('chsync_live_types', 900)");
  if (!locked.ok() || locked->value_or("0") != "1") {
    run.setup_error = "could not take the server lock chsync_live_types within 900 s";
    return run;
  }
  static std::unique_ptr<Connection> lock_holder;
  auto start = CurrentBinlogPosition(**conn);
  if (!start.ok()) {
    run.setup_error = start.error().message();
    return run;
  }
  run.start = *start;
  run.setup_error = RunScript(options);
  // The script turns log_bin_compress on for a while; the server is shared, so make sure it is
  // off again even when the script failed half-way.
  (void)(*conn)->Execute("SET GLOBAL log_bin_compress = OFF");
  if (!run.setup_error.empty()) return run;
  auto end = CurrentBinlogPosition(**conn);
  if (!end.ok()) {
    run.setup_error = end.error().message();
    return run;
  }
  run.end = *end;
  auto columns = (*conn)->Query(
      "SELECT TABLE_NAME, COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = "
      "'live_types' "
      "ORDER BY TABLE_NAME, ORDINAL_POSITION");
  if (!columns.ok()) {
    run.setup_error = columns.error().message();
    return run;
  }
  for (const auto& row : columns->rows) run.data_types[*row[0]].push_back(*row[2]);
  Stream(run, options);
  lock_holder = std::move(*conn);
  return run;
}

class LiveTypesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LiveRun& run = TheRun();
    ASSERT_TRUE(run.setup_error.empty()) << run.setup_error;
  }

  /// Compares the decoded final state of `table` with the server's, value for value.
  void ExpectTableMatches(const std::string& table) {
    LiveRun& run = TheRun();
    std::string error;
    ConnectOptions options = ServerOptions(error);
    ASSERT_TRUE(error.empty()) << error;
    auto conn = Connection::Open(options);
    ASSERT_TRUE(conn.ok()) << conn.error().message();
    ASSERT_TRUE((*conn)->Execute("SET time_zone = '+00:00'").ok());
    auto types_it = run.data_types.find(table);
    ASSERT_NE(types_it, run.data_types.end()) << "table " << table << " missing on the server";
    auto state_it = run.tables.find(table);
    ASSERT_NE(state_it, run.tables.end()) << "no row event of live_types." << table << " was decoded";
    const TableState& state = state_it->second;
    ASSERT_EQ(state.columns.size(), types_it->second.size()) << "column count of " << table;

    std::string sql = "SELECT ";
    for (size_t i = 0; i < state.columns.size(); ++i) {
      ASSERT_FALSE(state.columns[i].empty()) << "TABLE_MAP of " << table << " has no column names";
      sql += (i ? ", " : "") + ServerExpression(state.columns[i], types_it->second[i]);
    }
    sql += " FROM live_types." + QuoteIdentifier(table) + " ORDER BY 1";
    auto result = (*conn)->Query(sql);
    ASSERT_TRUE(result.ok()) << result.error().message();

    EXPECT_EQ(state.rows.size(), result->rows.size()) << "row count of " << table;
    int mismatches = 0;
    std::set<int64_t> server_ids;
    for (const auto& row : result->rows) {
      int64_t id = std::stoll(row[0].value_or("0"));
      server_ids.insert(id);
      auto it = state.rows.find(id);
      if (it == state.rows.end()) {
        ADD_FAILURE() << table << ": row id=" << id << " is on the server but not in the decoded events";
        continue;
      }
      for (size_t i = 0; i < row.size() && mismatches < 20; ++i) {
        std::string expected = ServerCanonical(row[i], types_it->second[i]);
        const std::string& got = i < it->second.size() ? it->second[i] : "<missing>";
        if (expected != got) {
          ++mismatches;
          ADD_FAILURE() << table << " id=" << id << " column " << state.columns[i] << " ("
                        << types_it->second[i] << "): server " << expected.substr(0, 200) << ", decoded "
                        << got.substr(0, 200);
        }
      }
    }
    for (const auto& [id, values] : state.rows) {
      if (!server_ids.count(id))
        ADD_FAILURE() << table << ": decoded row id=" << id << " is not on the server";
    }
  }
};

TEST_F(LiveTypesTest, EveryEventDecodes) {
  LiveRun& run = TheRun();
  for (const std::string& e : run.decode_errors) ADD_FAILURE() << e;
  EXPECT_TRUE(run.decode_errors.empty());
}

TEST_F(LiveTypesTest, Integers) {
  ExpectTableMatches("ints");
}
TEST_F(LiveTypesTest, FloatingPoint) {
  ExpectTableMatches("floats");
}
TEST_F(LiveTypesTest, Decimals) {
  ExpectTableMatches("decimals");
}
TEST_F(LiveTypesTest, TemporalsWithEveryFsp) {
  ExpectTableMatches("temporals");
}
TEST_F(LiveTypesTest, BitsOfEveryWidth) {
  ExpectTableMatches("bits");
}
TEST_F(LiveTypesTest, EnumAndSet) {
  ExpectTableMatches("enums");
}
TEST_F(LiveTypesTest, EnumWithTwoByteIndex) {
  ExpectTableMatches("big_enum");
}
TEST_F(LiveTypesTest, SetWithSixtyFourMembers) {
  ExpectTableMatches("big_set");
}
TEST_F(LiveTypesTest, Strings) {
  ExpectTableMatches("strings");
}
TEST_F(LiveTypesTest, MariaDbCompressedColumns) {
  ExpectTableMatches("compressed_columns");
}
TEST_F(LiveTypesTest, Json) {
  ExpectTableMatches("jsons");
}
TEST_F(LiveTypesTest, Geometry) {
  ExpectTableMatches("geoms");
}
TEST_F(LiveTypesTest, UuidInet4Inet6) {
  ExpectTableMatches("nets");
}
TEST_F(LiveTypesTest, EveryDmlKind) {
  ExpectTableMatches("dml");
}
TEST_F(LiveTypesTest, BigTransaction) {
  ExpectTableMatches("big");
  EXPECT_GE(TheRun().max_rows_per_transaction, 120000u) << "the 120000-row INSERT should be one transaction";
}
TEST_F(LiveTypesTest, CompressedEvents) {
  ExpectTableMatches("compressed");
  const std::set<int>& types = TheRun().event_types;
  EXPECT_TRUE(types.count(static_cast<int>(binlog::EventType::kMariaQueryCompressed)))
      << "no QUERY_COMPRESSED event was streamed while log_bin_compress was on";
  EXPECT_TRUE(types.count(static_cast<int>(binlog::EventType::kMariaWriteRowsCompressedV1)))
      << "no WRITE_ROWS_COMPRESSED_V1 event was streamed";
  EXPECT_TRUE(types.count(static_cast<int>(binlog::EventType::kMariaUpdateRowsCompressedV1)))
      << "no UPDATE_ROWS_COMPRESSED_V1 event was streamed";
  EXPECT_TRUE(types.count(static_cast<int>(binlog::EventType::kMariaDeleteRowsCompressedV1)))
      << "no DELETE_ROWS_COMPRESSED_V1 event was streamed";
}

// --- agreement with mariadb-binlog -vv ---------------------------------------------------------

/// One "###   @N=value /* TYPE meta=… */" line.
struct PrintedValue {
  std::string text;
  std::string type;  ///< "INT", "TIMESTAMP(3)", "VARSTRING(240)", "BLOB/TEXT COMPRESSED", …
};

struct PrintedImage {
  std::string table;
  char kind;
  std::vector<PrintedValue> values;
};

/// Parses the row images of database live_types from mariadb-binlog's verbose output.
std::vector<PrintedImage> ParseMariadbBinlog(FILE* in) {
  std::vector<PrintedImage> out;
  std::string line;
  std::string table;
  char statement = 0;  // 'I', 'U', 'D'
  bool in_db = false;
  auto read_line = [&](std::string& l) {
    l.clear();
    int c;
    while ((c = std::fgetc(in)) != EOF && c != '\n') l.push_back(static_cast<char>(c));
    return c != EOF || !l.empty();
  };
  const std::string prefix = "`live_types`.`";
  while (read_line(line)) {
    if (!line.starts_with("### ")) continue;
    std::string_view body = std::string_view(line).substr(4);
    auto table_of = [&](std::string_view rest) {
      in_db = rest.starts_with(prefix);
      if (in_db) {
        std::string_view t = rest.substr(prefix.size());
        table = std::string(t.substr(0, t.find('`')));
      }
    };
    if (body.starts_with("INSERT INTO ")) {
      statement = 'I';
      table_of(body.substr(12));
    } else if (body.starts_with("UPDATE ")) {
      statement = 'U';
      table_of(body.substr(7));
    } else if (body.starts_with("DELETE FROM ")) {
      statement = 'D';
      table_of(body.substr(12));
    } else if (body == "SET" || body == "WHERE") {
      if (!in_db) continue;
      char kind = statement == 'U' ? (body == "WHERE" ? 'U' : 'u') : statement;
      out.push_back({table, kind, {}});
    } else if (body.starts_with("  @") && in_db && !out.empty()) {
      size_t eq = body.find('=');
      size_t comment = body.rfind(" /* ");
      if (eq == std::string_view::npos || comment == std::string_view::npos || comment < eq) continue;
      std::string_view value = body.substr(eq + 1, comment - eq - 1);
      while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
      std::string_view type = body.substr(comment + 4);
      type = type.substr(0, type.find(" meta="));
      out.back().values.push_back({std::string(value), std::string(type)});
    }
  }
  return out;
}

/// Undoes mariadb-binlog's quoting: '…' with bytes below 0x20 as \xNN.
std::string Unquote(const std::string& text) {
  if (text.size() < 2 || text.front() != '\'' || text.back() != '\'') return text;
  std::string out;
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size() && text[i + 1] == 'x') {
      out.push_back(static_cast<char>(std::stoi(text.substr(i + 2, 2), nullptr, 16)));
      i += 3;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

/// Compares one value with mariadb-binlog's text for it. Returns "" when they agree, else
/// what differs; types mariadb-binlog prints only approximately are compared as it prints them.
std::string CompareWithPrinted(const Value& v, const ColumnInfo& column, const PrintedValue& p) {
  if (v.kind == ValueKind::kNull) return p.text == "NULL" ? "" : "decoded NULL";
  if (p.text == "NULL") return "mariadb-binlog printed NULL";
  if (p.type.find("COMPRESSED") != std::string::npos) return "";  // it prints the deflated bytes
  std::string ours;
  std::string theirs = p.text;
  switch (v.kind) {
    case ValueKind::kInt:
    case ValueKind::kUint: {
      // "-1 (255)": signed reading, then the unsigned one when they differ.
      size_t paren = theirs.find(" (");
      if (v.kind == ValueKind::kUint && paren != std::string::npos) {
        theirs = theirs.substr(paren + 2, theirs.size() - paren - 3);
      } else {
        theirs = theirs.substr(0, paren);
      }
      binlog::AppendValueText(v, ours);
      break;
    }
    case ValueKind::kYear:
      ours = std::to_string(v.u == 0 ? 1900 : v.u);  // it prints 1900 + the stored byte
      break;
    case ValueKind::kFloat:
      ours = Format("%-20g", static_cast<double>(v.f));
      while (!ours.empty() && ours.back() == ' ') ours.pop_back();
      break;
    case ValueKind::kDouble: ours = Format("%.20g", v.d); break;
    case ValueKind::kDate:
      binlog::AppendValueText(v, ours);
      std::replace(theirs.begin(), theirs.end(), ':', '-');
      theirs = Unquote(theirs);
      break;
    case ValueKind::kTimestamp:
      ours = std::to_string(v.timestamp.seconds);
      if (v.fsp > 0) {
        char frac[8];
        std::snprintf(frac, sizeof frac, "%06u", v.timestamp.microsecond);
        ours += "." + std::string(frac, v.fsp);
      }
      break;
    case ValueKind::kBit:
      ours = std::to_string(v.u);
      if (theirs.starts_with("b'"))
        theirs = std::to_string(std::stoull(theirs.substr(2, theirs.size() - 3), nullptr, 2));
      break;
    case ValueKind::kSet:
      // A SET prints as its stored bytes, least significant byte first, each byte's bits high to low.
      ours = std::to_string(v.u);
      if (theirs.starts_with("b'")) {
        std::string bits = theirs.substr(2, theirs.size() - 3);
        uint64_t value = 0;
        for (size_t byte = 0; byte * 8 + 8 <= bits.size() && byte < 8; ++byte) {
          value |= std::stoull(bits.substr(byte * 8, 8), nullptr, 2) << (8 * byte);
        }
        theirs = std::to_string(value);
      }
      break;
    case ValueKind::kEnum: ours = std::to_string(v.u); break;
    case ValueKind::kString:
    case ValueKind::kJson:
    case ValueKind::kGeometry:
      ours = Hex(v.text);
      theirs = Unquote(theirs);
      // The binlog leaves out a BINARY(n) value's trailing zero bytes; both sides may restore them.
      if (IsFixedBinary(column) && theirs.size() < column.max_length) theirs.resize(column.max_length, '\0');
      theirs = Hex(theirs);
      break;
    default:
      binlog::AppendValueText(v, ours);
      theirs = Unquote(theirs);
      break;
  }
  if (ours == theirs) return "";
  return "decoded " + ours.substr(0, 120) + ", mariadb-binlog " + theirs.substr(0, 120);
}

TEST_F(LiveTypesTest, AgreesWithMariadbBinlog) {
  LiveRun& run = TheRun();
  const char* datadir = std::getenv("CHSYNC_TEST_MYSQL_FULL_DATADIR");
  ASSERT_NE(datadir, nullptr) << "CHSYNC_TEST_MYSQL_FULL_DATADIR is not set";
  // The files from the start file to the end file, in order.
  std::string error;
  auto conn = Connection::Open(ServerOptions(error));
  ASSERT_TRUE(conn.ok());
  auto logs = (*conn)->Query("SHOW BINARY LOGS");
  ASSERT_TRUE(logs.ok());
  std::string files;
  for (const auto& row : logs->rows) {
    BinlogCoordinate c{*row[0], 4};
    if (CompareCoordinates({c.file, 0}, {run.start.file, 0}) >= 0 &&
        CompareCoordinates({c.file, 0}, {run.end.file, 0}) <= 0) {
      files += std::string(" ") + datadir + "/" + c.file;
    }
  }
  // --database: rows of other tests' tables (which share this binlog) are skipped, not printed; some
  // (MariaDB 5.3 temporals) would stop mariadb-binlog, which cannot decode them without the schema.
  std::string cmd =
      "mariadb-binlog --no-defaults -vv --base64-output=decode-rows --database=" + std::string(kDatabase) +
      " --start-position=" + std::to_string(run.start.position) +
      " --stop-position=" + std::to_string(run.end.position) + files + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::vector<PrintedImage> printed = ParseMariadbBinlog(p);
  pclose(p);

  ASSERT_EQ(printed.size(), run.images.size()) << "row images printed by mariadb-binlog vs decoded";
  int failures = 0;
  size_t compared = 0;
  for (size_t i = 0; i < printed.size() && failures < 30; ++i) {
    const PrintedImage& theirs = printed[i];
    const DecodedImage& ours = *run.images[i];
    if (theirs.table != ours.table || theirs.kind != ours.kind ||
        theirs.values.size() != ours.values.size()) {
      ADD_FAILURE() << "row image " << i << ": mariadb-binlog has " << theirs.kind << " " << theirs.table
                    << " with " << theirs.values.size() << " values, decoded " << ours.kind << " "
                    << ours.table << " with " << ours.values.size();
      ++failures;
      continue;
    }
    for (size_t c = 0; c < ours.values.size(); ++c) {
      std::string diff = CompareWithPrinted(ours.values[c], ours.map->columns[c], theirs.values[c]);
      ++compared;
      if (!diff.empty()) {
        ADD_FAILURE() << ours.table << " row image " << i << " (" << ours.kind << ") column "
                      << ours.map->columns[c].name << " " << theirs.values[c].type << ": " << diff;
        ++failures;
      }
    }
  }
  EXPECT_GT(compared, 500000u) << "fewer values compared than the script writes";
}

// --- `chsync tail --format json` end to end ------------------------------------------------------

/// Final state of `tables` built from the JSON lines of `chsync tail`, values as the JSON holds
/// them (numbers as printed, strings as is, null as NULL).
std::map<std::string, std::map<int64_t, std::vector<std::string>>> ReplayTailJson(
    const std::string& output, const std::set<std::string>& tables, std::string& error) {
  std::map<std::string, std::map<int64_t, std::vector<std::string>>> state;
  size_t begin = 0;
  while (begin < output.size()) {
    size_t end = output.find('\n', begin);
    if (end == std::string::npos) end = output.size();
    std::string line = output.substr(begin, end - begin);
    begin = end + 1;
    if (line.empty()) continue;
    nlohmann::ordered_json event = nlohmann::ordered_json::parse(line, nullptr, false);
    if (event.is_discarded()) {
      error = "not a JSON line: " + line.substr(0, 200);
      return state;
    }
    if (!event.contains("changes") || !event.contains("table")) continue;
    std::string table = event["table"].get<std::string>();
    if (!table.starts_with("live_types.") || !tables.count(table.substr(11))) continue;
    auto& rows = state[table.substr(11)];
    auto image = [](const nlohmann::ordered_json& obj) {
      std::vector<std::string> values;
      for (const auto& [name, value] : obj.items()) {
        if (value.is_null()) {
          values.push_back("NULL");
        } else if (value.is_string()) {
          values.push_back(value.get<std::string>());
        } else {
          values.push_back(value.dump());
        }
      }
      return values;
    };
    for (const auto& change : event["changes"]) {
      if (change.contains("before")) rows.erase(change["before"].begin()->get<int64_t>());
      if (change.contains("after")) rows[change["after"].begin()->get<int64_t>()] = image(change["after"]);
    }
  }
  return state;
}

TEST_F(LiveTypesTest, TailJsonAgreesWithTheServer) {
  LiveRun& run = TheRun();
  std::string error;
  ConnectOptions options = ServerOptions(error);
  ASSERT_TRUE(error.empty()) << error;
  std::string chsync = CHSYNC_BINARY_DIR "/src/cli/chsync";
  ASSERT_EQ(access(chsync.c_str(), X_OK), 0) << chsync << " is missing: build the chsync target";
  // The password travels in the environment, as a user would keep it out of the process list.
  setenv("CHSYNC_SOURCE_PASSWORD", options.password.c_str(), 1);
  std::string cmd = chsync + " tail --source mysql://" + options.user + "@" + options.Address() + " --from " +
                    run.start.ToString() + " --until-caught-up --format json --server-id 4200202";
  // Standard error apart: other tests' tables may draw warnings there, and standard output must be
  // JSON lines only.
  char err_path[] = "/tmp/chsync-tail-stderr-XXXXXX";
  int err_fd = mkstemp(err_path);
  ASSERT_GE(err_fd, 0);
  close(err_fd);
  cmd += std::string(" 2>") + err_path;
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string output;
  char buf[1 << 16];
  while (size_t n = fread(buf, 1, sizeof buf, p)) output.append(buf, n);
  int status = pclose(p);
  unsetenv("CHSYNC_SOURCE_PASSWORD");
  std::string errors;
  if (FILE* e = std::fopen(err_path, "r")) {
    while (size_t n = fread(buf, 1, sizeof buf, e)) errors.append(buf, n);
    std::fclose(e);
  }
  unlink(err_path);
  ASSERT_EQ(status, 0) << "chsync tail failed: " << errors << "\n"
                       << output.substr(output.size() > 2000 ? output.size() - 2000 : 0);
  EXPECT_EQ(output.find(options.password), std::string::npos) << "chsync tail printed the password";
  EXPECT_EQ(errors.find(options.password), std::string::npos) << "chsync tail printed the password";

  // Tables whose JSON values are the server's text (numbers, DECIMAL and temporal strings).
  const std::set<std::string> tables = {"ints", "decimals", "temporals", "dml", "big"};
  auto state = ReplayTailJson(output, tables, error);
  ASSERT_TRUE(error.empty()) << error;
  auto conn = Connection::Open(options);
  ASSERT_TRUE(conn.ok());
  ASSERT_TRUE((*conn)->Execute("SET time_zone = '+00:00'").ok());
  for (const std::string& table : tables) {
    auto result = (*conn)->Query("SELECT * FROM live_types." + table + " ORDER BY 1");
    ASSERT_TRUE(result.ok()) << result.error().message();
    const auto& rows = state[table];
    EXPECT_EQ(rows.size(), result->rows.size())
        << "rows of " << table << " after replaying chsync tail's JSON";
    int mismatches = 0;
    for (const auto& row : result->rows) {
      int64_t id = std::stoll(row[0].value_or("0"));
      auto it = rows.find(id);
      if (it == rows.end()) {
        if (++mismatches < 10) ADD_FAILURE() << table << " id=" << id << " missing from chsync tail's output";
        continue;
      }
      ASSERT_EQ(it->second.size(), row.size()) << table << " id=" << id;
      for (size_t i = 0; i < row.size(); ++i) {
        std::string expected = row[i].value_or("NULL");
        if (expected != it->second[i] && ++mismatches < 10) {
          ADD_FAILURE() << table << " id=" << id << " column " << result->columns[i] << ": server "
                        << expected << ", chsync tail " << it->second[i];
        }
      }
    }
    EXPECT_EQ(mismatches, 0) << table;
  }
}

}  // namespace
}  // namespace chsync::mysql
