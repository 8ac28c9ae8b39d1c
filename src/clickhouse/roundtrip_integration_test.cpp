#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <sstream>

#include "clickhouse/capabilities.h"
#include "clickhouse/connection.h"
#include "clickhouse/ddl.h"
#include "clickhouse/row_binary.h"
#include "clickhouse/sql_quoting.h"
#include "clickhouse/table_writer.h"
#include "clickhouse/test_columns.h"
#include "clickhouse/test_destinations.h"

namespace chsync::clickhouse {
namespace {

using schema::ColumnType;
using schema::DefaultKind;
using testing::Col;

enum class Engine { kServer, kEmbedded };

/// What one column holds in each test row, and what reading it back must print.
struct Expect {
  Cell cell;
  std::string on_old;  ///< ClickHouse 18.16
  std::string on_new;  ///< ClickHouse 26.7 (same as on_old when empty)
};

struct TypeCase {
  schema::Column column;
  bool hex = false;  ///< read back as hex(col): the bytes, exactly
  std::vector<Expect> rows;
};

std::string Hex(std::string_view bytes) {
  static const char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

std::string U32(uint32_t v) {
  return std::string(reinterpret_cast<const char*>(&v), 4);
}
std::string F64(double v) {
  return std::string(reinterpret_cast<const char*>(&v), 8);
}

/// Decimal text without trailing fraction zeros: the servers differ in how they print scale.
std::string NormalizeDecimal(std::string s) {
  if (s.find('.') == std::string::npos || s.find_first_not_of("-0123456789.") != std::string::npos) return s;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

class RoundTripTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    conn_ =
        testing::ConnectOrFail(GetParam() == Engine::kServer ? testing::ServerUrl() : testing::EmbeddedUrl());
    ASSERT_NE(conn_, nullptr);
    auto version = conn_->Version();
    ASSERT_TRUE(version.ok()) << version.error().message();
    caps_ = FromVersion(*version);
    old_ = !caps_.datetime64;
    target_.database = testing::UniqueDatabase("chsync_ch_rt");
    ASSERT_TRUE(conn_->Execute(CreateDatabase(target_)).ok());
  }
  void TearDown() override {
    if (conn_ != nullptr) {
      EXPECT_TRUE(conn_->Execute("DROP DATABASE IF EXISTS " + QuoteIdentifier(target_.database)).ok());
    }
  }

  Status Run(const std::string& sql) { return conn_->Execute(sql); }

  std::unique_ptr<Connection> conn_;
  Capabilities caps_;
  bool old_ = false;
  DdlTarget target_;
};

std::vector<TypeCase> AllTypes() {
  const std::string all_bytes = [] {
    std::string s;
    for (int i = 0; i < 256; ++i) s.push_back(static_cast<char>(i));
    return s;
  }();
  static const std::string kAllBytes = all_bytes;
  static const std::string kUtf8 = "é中😀";
  static const std::string kPoint = U32(4326) + "\x01" + U32(1) + F64(1) + F64(-2.5);
  static const std::string kVector = [] {
    float f[2] = {1.5f, -2.0f};
    return std::string(reinterpret_cast<const char*>(f), 8);
  }();
  static const std::string kUuidBytes("\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xAA\xBB\xCC\xDD\xEE\xFF", 16);
  static const std::string kZeroUuid(16, '\0');
  static const std::string kV4("\x0A\x00\x00\x01", 4);
  static const std::string kV6 = std::string("\x20\x01\x0d\xb8", 4) + std::string(11, '\0') + "\x01";
  const NullCell null;
  auto dt = [](uint32_t us) { return DateTimeCell{2024, 6, 15, 12, 34, 56, us}; };
  std::vector<TypeCase> cases = {
      {Col("i8", ColumnType::kTinyInt),
       false,
       {{int64_t{-128}, "-128"}, {int64_t{127}, "127"}, {null, "\\N"}, {int64_t{0}, "0"}}},
      {Col("u8", ColumnType::kTinyInt).Unsigned().NotNull(),
       false,
       {{uint64_t{0}, "0"}, {uint64_t{255}, "255"}, {uint64_t{1}, "1"}, {uint64_t{0}, "0"}}},
      {Col("i16", ColumnType::kSmallInt),
       false,
       {{int64_t{-32768}, "-32768"}, {int64_t{32767}, "32767"}, {null, "\\N"}, {int64_t{0}, "0"}}},
      {Col("u16", ColumnType::kSmallInt).Unsigned(),
       false,
       {{uint64_t{0}, "0"}, {uint64_t{65535}, "65535"}, {null, "\\N"}, {uint64_t{0}, "0"}}},
      {Col("i24", ColumnType::kMediumInt),
       false,
       {{int64_t{-8388608}, "-8388608"}, {int64_t{8388607}, "8388607"}, {null, "\\N"}, {int64_t{0}, "0"}}},
      {Col("u24", ColumnType::kMediumInt).Unsigned(),
       false,
       {{uint64_t{0}, "0"}, {uint64_t{16777215}, "16777215"}, {null, "\\N"}, {uint64_t{0}, "0"}}},
      {Col("i32", ColumnType::kInt),
       false,
       {{int64_t{INT32_MIN}, "-2147483648"},
        {int64_t{INT32_MAX}, "2147483647"},
        {null, "\\N"},
        {int64_t{0}, "0"}}},
      {Col("u32", ColumnType::kInt).Unsigned(),
       false,
       {{uint64_t{0}, "0"}, {uint64_t{UINT32_MAX}, "4294967295"}, {null, "\\N"}, {uint64_t{0}, "0"}}},
      {Col("i64", ColumnType::kBigInt),
       false,
       {{int64_t{INT64_MIN}, "-9223372036854775808"},
        {int64_t{INT64_MAX}, "9223372036854775807"},
        {null, "\\N"},
        {int64_t{0}, "0"}}},
      {Col("u64", ColumnType::kBigInt).Unsigned(),
       false,
       {{uint64_t{0}, "0"},
        {uint64_t{UINT64_MAX}, "18446744073709551615"},
        {null, "\\N"},
        {uint64_t{0}, "0"}}},
      {Col("f32", ColumnType::kFloat), false, {{-2.25, "-2.25"}, {1.5, "1.5"}, {null, "\\N"}, {0.0, "0"}}},
      {Col("f64", ColumnType::kDouble),
       false,
       {{-1e-10, "-1e-10"},
        {std::numeric_limits<double>::max(), "1.7976931348623157e308"},
        {null, "\\N"},
        {0.0, "0"}}},
      {Col("d10_2", ColumnType::kDecimal).Precision(10, 2),
       false,
       {{DecimalCell{"-99999999.99"}, "-99999999.99"},
        {DecimalCell{"99999999.99"}, "99999999.99"},
        {null, "\\N"},
        {DecimalCell{"0.10"}, "0.1"}}},
      {Col("d38_10", ColumnType::kDecimal).Precision(38, 10),
       false,
       {{DecimalCell{"-9999999999999999999999999999.9999999999"}, "-9999999999999999999999999999.9999999999"},
        {DecimalCell{"0.0000000001"}, "0.0000000001"},
        {null, "\\N"},
        {DecimalCell{"-12345.6789000000"}, "-12345.6789"}}},
      {Col("d65_30", ColumnType::kDecimal).Precision(65, 30),
       false,
       {{DecimalCell{"-99999999999999999999999999999999999.999999999999999999999999999999"},
         "-99999999999999999999999999999999999.999999999999999999999999999999"},
        {DecimalCell{"0.000000000000000000000000000001"}, "0.000000000000000000000000000001"},
        {null, "\\N"},
        {DecimalCell{"1"}, "1"}}},
      {Col("dt", ColumnType::kDate),
       false,
       {{DateCell{1000, 1, 1}, "0000-00-00", "1900-01-01"},  // 18.16 prints day 0 as 0000-00-00
        {DateCell{9999, 12, 31}, "2105-12-31", "2299-12-31"},
        {null, "\\N"},
        {DateCell{0, 0, 0}, "0000-00-00", "1970-01-01"}}},
      {Col("leap", ColumnType::kDate).NotNull(),
       false,
       {{DateCell{2024, 2, 29}, "2024-02-29"},
        {DateCell{1970, 1, 2}, "1970-01-02"},
        {DateCell{2000, 3, 1}, "2000-03-01"},
        {DateCell{2106, 2, 7}, "2105-12-31", "2106-02-07"}}},
  };
  for (uint32_t fsp = 0; fsp <= 6; ++fsp) {
    std::string frac = fsp == 0 ? "" : "." + std::string("123456").substr(0, fsp);
    cases.push_back({Col("dt" + std::to_string(fsp), ColumnType::kDateTime).Fsp(fsp),
                     false,
                     {{dt(123456), "2024-06-15 12:34:56", "2024-06-15 12:34:56" + frac},
                      {DateTimeCell{2038, 1, 19, 3, 14, 8, 0}, "2038-01-19 03:14:08",
                       "2038-01-19 03:14:08" + (fsp == 0 ? "" : "." + std::string(fsp, '0'))},
                      {null, "\\N"},
                      {DateTimeCell{}, "0000-00-00 00:00:00",
                       "1970-01-01 00:00:00" + (fsp == 0 ? "" : "." + std::string(fsp, '0'))}}});
  }
  std::vector<TypeCase> more = {
      {Col("ts6", ColumnType::kTimestamp).Fsp(6),
       false,
       {{EpochCell{1718454896, 789123}, "2024-06-15 12:34:56", "2024-06-15 12:34:56.789123"},
        {EpochCell{2147483647, 999999}, "2038-01-19 03:14:07", "2038-01-19 03:14:07.999999"},
        {null, "\\N"},
        {EpochCell{0, 0}, "0000-00-00 00:00:00", "1970-01-01 00:00:00.000000"}}},
      {Col("tm", ColumnType::kTime).Fsp(6),
       false,
       {{TimeCell{true, 838, 59, 59, 0}, "-838:59:59.000000"},
        {TimeCell{false, 838, 59, 59, 0}, "838:59:59.000000"},
        {null, "\\N"},
        {TimeCell{false, 0, 0, 0, 1}, "00:00:00.000001"}}},
      {Col("yr", ColumnType::kYear),
       false,
       {{uint64_t{1901}, "1901"}, {uint64_t{2155}, "2155"}, {null, "\\N"}, {uint64_t{0}, "0"}}},
      {Col("b64", ColumnType::kBit).Length(64),
       false,
       {{uint64_t{0}, "0"},
        {uint64_t{UINT64_MAX}, "18446744073709551615"},
        {null, "\\N"},
        {uint64_t{5}, "5"}}},
      {Col("vc", ColumnType::kVarChar).Length(20),
       true,
       {{std::string_view(kUtf8), Hex(kUtf8)},
        {std::string_view("x"), "78"},
        {null, "\\N"},
        {std::string_view(), ""}}},
      {Col("bl", ColumnType::kLongBlob),
       true,
       {{std::string_view(kAllBytes), Hex(kAllBytes)},
        {std::string_view("\0", 1), "00"},
        {null, "\\N"},
        {std::string_view(), ""}}},
      {Col("en", ColumnType::kEnum).Labels({"a", "b'q", "日本"}),
       false,
       {{uint64_t{1}, "a"}, {uint64_t{2}, "b'q"}, {uint64_t{3}, "日本"}, {uint64_t{0}, ""}}},
      {Col("st", ColumnType::kSet).Labels({"x", "y", "z"}),
       false,
       {{uint64_t{5}, "x,z"}, {uint64_t{7}, "x,y,z"}, {null, "\\N"}, {uint64_t{0}, ""}}},
      {Col("js", ColumnType::kJson),
       false,
       {{std::string_view("{\"a\": [1, null]}"), "{\"a\": [1, null]}"},
        {std::string_view("[]"), "[]"},
        {null, "\\N"},
        {std::string_view("\"\""), "\"\""}}},
      {Col("geo", ColumnType::kGeometry),
       false,
       {{std::string_view(kPoint), "POINT(1 -2.5)"}, {null, "\\N"}, {null, "\\N"}, {null, "\\N"}}},
      {Col("vec", ColumnType::kVector).Length(2),
       false,
       {{std::string_view(kVector), "[1.5,-2]"}, {null, "[]"}, {null, "[]"}, {std::string_view(), "[]"}}},
      {Col("uu", ColumnType::kUuid),
       false,
       {{std::string_view(kUuidBytes), "00112233-4455-6677-8899-aabbccddeeff"},
        {std::string_view(kZeroUuid), "00000000-0000-0000-0000-000000000000"},
        {null, "\\N"},
        {null, "\\N"}}},
      {Col("ip4", ColumnType::kInet4),
       false,
       {{std::string_view(kV4), "10.0.0.1"}, {null, "\\N"}, {null, "\\N"}, {null, "\\N"}}},
      {Col("ip6", ColumnType::kInet6),
       false,
       {{std::string_view(kV6), "2001:db8::1"}, {null, "\\N"}, {null, "\\N"}, {null, "\\N"}}},
  };
  for (auto& c : more) cases.push_back(std::move(c));
  return cases;
}

TEST_P(RoundTripTest, EveryTypeBoundaryValuesReadBackExactly) {
  std::vector<TypeCase> cases = AllTypes();
  schema::TableSchema table;
  table.name = "all_types";
  table.columns.push_back(Col("id", ColumnType::kInt).NotNull());
  for (const TypeCase& c : cases) table.columns.push_back(c.column);
  table.primary_key = {"id"};
  table.RenumberColumns();
  auto create = CreateTable(table, caps_, target_);
  ASSERT_TRUE(create.ok()) << create.error().message();
  Status created = Run(*create);
  ASSERT_TRUE(created.ok()) << created.error().message() << "\n" << *create;

  std::vector<MappedType> types;
  std::vector<std::string> names;
  for (const schema::Column& c : table.columns) {
    auto mapped = MapColumn(c, caps_);
    ASSERT_TRUE(mapped.ok()) << mapped.error().message();
    types.push_back(*mapped);
    names.push_back(c.name);
  }
  types.push_back(VersionColumnType());
  types.push_back(IsDeletedColumnType());
  names.emplace_back(kVersionColumn);
  names.emplace_back(kIsDeletedColumn);
  RowBinaryEncoder encoder(types);
  const size_t row_count = 4;
  for (size_t r = 0; r < row_count; ++r) {
    std::vector<Cell> row;
    row.emplace_back(int64_t(r + 1));
    for (const TypeCase& c : cases) row.push_back(c.rows[r].cell);
    row.emplace_back(uint64_t{0});
    row.emplace_back(uint64_t{0});
    Status appended = encoder.AppendRow(row);
    ASSERT_TRUE(appended.ok()) << "row " << r + 1 << ": " << appended.error().message();
  }
  Status inserted = conn_->Insert(InsertPrefix(target_.database, table.name, names), encoder.data());
  ASSERT_TRUE(inserted.ok()) << inserted.error().message();

  std::string select = "SELECT ";
  for (size_t i = 0; i < cases.size(); ++i) {
    if (i > 0) select += ", ";
    std::string col = QuoteIdentifier(cases[i].column.name);
    // Plain columns print in TabSeparated form (18.16's toString(Decimal128) is broken).
    select += cases[i].hex ? "hex(" + col + ")" : col;
  }
  select += " FROM " + QualifiedName(target_.database, table.name) + " ORDER BY `id`";
  auto out = conn_->Query(select);
  ASSERT_TRUE(out.ok()) << out.error().message();
  std::istringstream lines(*out);
  std::string line;
  for (size_t r = 0; r < row_count; ++r) {
    ASSERT_TRUE(std::getline(lines, line)) << "missing row " << r + 1;
    std::vector<std::string> fields;
    size_t start = 0;
    for (size_t tab = line.find('\t');; tab = line.find('\t', start)) {
      fields.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
      if (tab == std::string::npos) break;
      start = tab + 1;
    }
    ASSERT_EQ(fields.size(), cases.size()) << line;
    for (size_t i = 0; i < cases.size(); ++i) {
      const Expect& e = cases[i].rows[r];
      std::string expected = old_ || e.on_new.empty() ? e.on_old : e.on_new;
      // TabSeparated escapes backslash and quote-free text only; the enum label b'q prints as is.
      std::string actual = fields[i];
      if (actual.find("\\'") != std::string::npos) actual.replace(actual.find("\\'"), 2, "'");
      EXPECT_EQ(NormalizeDecimal(actual), NormalizeDecimal(expected))
          << "column " << cases[i].column.name << " (" << types[i + 1].type << "), row " << r + 1;
    }
  }
}

TEST_P(RoundTripTest, AddColumnWithDefaultOnATableWithRows) {
  schema::TableSchema table;
  table.name = "select";  // a reserved word as the table name
  table.columns = {Col("id", ColumnType::kInt).NotNull(), Col("a`b é", ColumnType::kVarChar).Length(5)};
  table.primary_key = {"id"};
  table.RenumberColumns();
  auto create = CreateTable(table, caps_, target_);
  ASSERT_TRUE(create.ok());
  ASSERT_TRUE(Run(*create).ok()) << *create;
  RowBinaryEncoder encoder({*MapColumn(table.columns[0], caps_), *MapColumn(table.columns[1], caps_),
                            VersionColumnType(), IsDeletedColumnType()});
  for (int64_t id = 1; id <= 2; ++id) {
    std::vector<Cell> row = {id, std::string_view("v"), uint64_t{0}, uint64_t{0}};
    ASSERT_TRUE(encoder.AppendRow(row).ok());
  }
  std::vector<std::string> names = {"id", "a`b é", std::string(kVersionColumn),
                                    std::string(kIsDeletedColumn)};
  Status inserted = conn_->Insert(InsertPrefix(target_.database, table.name, names), encoder.data());
  ASSERT_TRUE(inserted.ok()) << inserted.error().message();

  const schema::Column added[] = {
      Col("n", ColumnType::kInt).NotNull().Default(DefaultKind::kNumber, "-5"),
      Col("s", ColumnType::kVarChar).Length(10).Default(DefaultKind::kString, "it's \\ ok"),
      Col("d", ColumnType::kDecimal).Precision(10, 2).NotNull().Default(DefaultKind::kNumber, "1.50"),
      Col("day", ColumnType::kDate).NotNull().Default(DefaultKind::kString, "2020-02-29"),
      Col("e", ColumnType::kEnum).Labels({"x", "y"}).NotNull().Default(DefaultKind::kString, "y"),
      Col("_chsync version", ColumnType::kInt).Default(DefaultKind::kNumber, "7"),
  };
  std::string after = "a`b é";
  for (const schema::Column& c : added) {
    auto alter = AddColumn(table.name, c, after, caps_, target_);
    ASSERT_TRUE(alter.ok()) << alter.error().message();
    Status s = Run(*alter);
    ASSERT_TRUE(s.ok()) << s.error().message() << "\n" << *alter;
    after = c.name;
  }
  auto out = conn_->Query("SELECT `id`, `a``b é`, n, s, toInt64(d * 100), day, e, `_chsync version` FROM " +
                          QualifiedName(target_.database, table.name) + " ORDER BY id");
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(*out,
            "1\tv\t-5\tit\\'s \\\\ ok\t150\t2020-02-29\ty\t7\n"
            "2\tv\t-5\tit\\'s \\\\ ok\t150\t2020-02-29\ty\t7\n");
  // Source order kept: the added columns sit before the metadata columns.
  auto described = conn_->Query("DESCRIBE TABLE " + QualifiedName(target_.database, table.name));
  ASSERT_TRUE(described.ok()) << described.error().message();
  std::string names_in_order;
  std::istringstream lines(*described);
  for (std::string line; std::getline(lines, line);) names_in_order += line.substr(0, line.find('\t')) + "\n";
  EXPECT_EQ(names_in_order,
            "id\na`b é\nn\ns\nd\nday\ne\n_chsync "
            "version\n_chsync_version\n_chsync_is_deleted\n_chsync_synced_at\n");
}

TEST_P(RoundTripTest, ModifyToNullableRenameTruncateDrop) {
  schema::TableSchema table;
  table.name = "t";
  table.columns = {Col("id", ColumnType::kInt).NotNull(), Col("v", ColumnType::kInt).NotNull()};
  table.primary_key = {"id"};
  ASSERT_TRUE(Run(*CreateTable(table, caps_, target_)).ok());
  schema::Column now_nullable = table.columns[1];
  now_nullable.nullable = true;
  auto modify = ModifyColumn("t", now_nullable, caps_, target_);
  ASSERT_TRUE(modify.ok());
  Status modified = Run(*modify);
  ASSERT_TRUE(modified.ok()) << modified.error().message();
  RowBinaryEncoder encoder({*MapColumn(table.columns[0], caps_), *MapColumn(now_nullable, caps_),
                            VersionColumnType(), IsDeletedColumnType()});
  std::vector<Cell> row = {int64_t{1}, NullCell{}, uint64_t{3}, uint64_t{1}};
  ASSERT_TRUE(encoder.AppendRow(row).ok());
  ASSERT_TRUE(
      conn_
          ->Insert(InsertPrefix(target_.database, "t", {"id", "v", "_chsync_version", "_chsync_is_deleted"}),
                   encoder.data())
          .ok());
  auto out = conn_->Query("SELECT id, v, _chsync_version, _chsync_is_deleted FROM " +
                          QualifiedName(target_.database, "t"));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "1\t\\N\t3\t1\n");

  auto rename = RenameColumn("t", "v", "w", caps_, target_);
  if (caps_.rename_column) {
    ASSERT_TRUE(rename.ok());
    Status renamed = Run(*rename);
    ASSERT_TRUE(renamed.ok()) << renamed.error().message();
    EXPECT_EQ(
        *conn_->Query("SELECT count() FROM " + QualifiedName(target_.database, "t") + " WHERE w IS NULL"),
        "1\n");
  } else {
    ASSERT_FALSE(rename.ok());
    EXPECT_EQ(rename.error().kind(), ErrorKind::kUnsupported);
  }
  ASSERT_TRUE(Run(RenameTable("t", "t2", target_)).ok());
  ASSERT_TRUE(Run(TruncateTable("t2", target_)).ok());
  EXPECT_EQ(*conn_->Query("SELECT count() FROM " + QualifiedName(target_.database, "t2")), "0\n");
  ASSERT_TRUE(Run(DropTable("t2", target_)).ok());
  EXPECT_EQ(
      *conn_->Query("SELECT count() FROM system.tables WHERE database = " + QuoteString(target_.database)),
      "0\n");
}

TEST_P(RoundTripTest, FinalViewAppliesVersionsAndDeletes) {
  schema::TableSchema table;
  table.name = "kv";
  table.columns = {Col("k", ColumnType::kInt).NotNull(), Col("v", ColumnType::kVarChar).Length(5)};
  table.primary_key = {"k"};
  ASSERT_TRUE(Run(*CreateTable(table, caps_, target_)).ok());
  std::vector<MappedType> types = {*MapColumn(table.columns[0], caps_), *MapColumn(table.columns[1], caps_),
                                   VersionColumnType(), IsDeletedColumnType()};
  std::string prefix =
      InsertPrefix(target_.database, "kv", {"k", "v", "_chsync_version", "_chsync_is_deleted"});
  RowBinaryEncoder first(types);
  std::vector<Cell> a0 = {int64_t{1}, std::string_view("old"), uint64_t{0}, uint64_t{0}};
  std::vector<Cell> b0 = {int64_t{2}, std::string_view("gone"), uint64_t{0}, uint64_t{0}};
  ASSERT_TRUE(first.AppendRow(a0).ok());
  ASSERT_TRUE(first.AppendRow(b0).ok());
  ASSERT_TRUE(conn_->Insert(prefix, first.data()).ok());
  RowBinaryEncoder second(types);
  std::vector<Cell> a1 = {int64_t{1}, std::string_view("new"), uint64_t{10}, uint64_t{0}};
  std::vector<Cell> b1 = {int64_t{2}, std::string_view("gone"), uint64_t{11}, uint64_t{1}};
  ASSERT_TRUE(second.AppendRow(a1).ok());
  ASSERT_TRUE(second.AppendRow(b1).ok());
  ASSERT_TRUE(conn_->Insert(prefix, second.data()).ok());
  auto out = conn_->Query("SELECT k, v FROM " + QualifiedName(target_.database, "kv") +
                          " FINAL WHERE _chsync_is_deleted = 0 ORDER BY k");
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(*out, "1\tnew\n");
}

TEST_P(RoundTripTest, TableWriterKeepsAFailedBatchForRetry) {
  schema::TableSchema table;
  table.name = "w";
  table.columns = {Col("k", ColumnType::kInt).NotNull(), Col("v", ColumnType::kDecimal).Precision(5, 2)};
  table.primary_key = {"k"};
  auto writer = TableWriter::Create(table, caps_, target_);
  ASSERT_TRUE(writer.ok()) << writer.error().message();
  std::vector<Cell> row = {int64_t{1}, DecimalCell{"123.45"}};
  ASSERT_TRUE(writer->Append(row, 7, false).ok());
  std::vector<Cell> bad = {int64_t{2}, DecimalCell{"1234.5"}};
  Status rejected = writer->Append(bad, 8, false);
  ASSERT_FALSE(rejected.ok());
  EXPECT_NE(rejected.error().message().find("column 2"), std::string::npos) << rejected.error().message();
  EXPECT_EQ(writer->rows(), 1u);
  // The table does not exist yet: the flush fails, the row stays for the retry.
  Status failed = writer->Flush(*conn_);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().kind(), ErrorKind::kServer);
  EXPECT_EQ(writer->rows(), 1u);
  ASSERT_TRUE(Run(*CreateTable(table, caps_, target_)).ok());
  Status flushed = writer->Flush(*conn_);
  ASSERT_TRUE(flushed.ok()) << flushed.error().message();
  EXPECT_EQ(writer->rows(), 0u);
  EXPECT_EQ(*conn_->Query("SELECT k, v, _chsync_version, _chsync_is_deleted FROM " +
                          QualifiedName(target_.database, "w")),
            "1\t123.45\t7\t0\n");
}

TEST_P(RoundTripTest, DurableTableFsyncsInsertsOrIsRefused) {
  // The embedded chDB is 26.7; the test server is 18.16, which has neither setting.
  if (GetParam() == Engine::kEmbedded) {
    EXPECT_TRUE(caps_.fsync_after_insert);
  }
  auto known = conn_->Query(
      "SELECT count() FROM system.merge_tree_settings WHERE name IN ('fsync_after_insert', "
      "'fsync_part_directory')");
  ASSERT_TRUE(known.ok()) << known.error().message();
  schema::TableSchema table;
  table.database = "src";
  table.name = "durable";
  table.columns = {Col("k", ColumnType::kInt).NotNull(), Col("v", ColumnType::kVarChar).Length(5)};
  table.primary_key = {"k"};
  DdlTarget durable = target_;
  durable.durable = true;
  auto create = CreateTable(table, caps_, durable);
  if (!caps_.fsync_after_insert) {
    EXPECT_EQ(*known, "0\n");
    ASSERT_FALSE(create.ok()) << *create;
    EXPECT_EQ(create.error().kind(), ErrorKind::kUnsupported);
    EXPECT_NE(create.error().message().find("ClickHouse " + std::to_string(caps_.version.major) + "." +
                                            std::to_string(caps_.version.minor) + " cannot fsync"),
              std::string::npos)
        << create.error().message();
    EXPECT_NE(create.error().message().find("?insert_quorum=2"), std::string::npos);
    return;
  }
  EXPECT_EQ(*known, "2\n");
  ASSERT_TRUE(create.ok()) << create.error().message();
  Status created = Run(*create);
  ASSERT_TRUE(created.ok()) << created.error().message() << "\n" << *create;

  // A table created plain, made durable afterwards.
  table.name = "later";
  ASSERT_TRUE(Run(*CreateTable(table, caps_, target_)).ok());
  Status altered = Run(MakeDurable("later", target_));
  ASSERT_TRUE(altered.ok()) << altered.error().message();

  for (const char* name : {"durable", "later"}) {
    auto shown = conn_->Query("SHOW CREATE TABLE " + QualifiedName(target_.database, name));
    ASSERT_TRUE(shown.ok()) << shown.error().message();
    auto stored = conn_->Query("SELECT create_table_query FROM system.tables WHERE database = " +
                               QuoteString(target_.database) + " AND name = " + QuoteString(name));
    ASSERT_TRUE(stored.ok()) << stored.error().message();
    for (const std::string* text : {&*shown, &*stored}) {
      EXPECT_NE(text->find("fsync_after_insert = 1"), std::string::npos) << name << ": " << *text;
      EXPECT_NE(text->find("fsync_part_directory = 1"), std::string::npos) << name << ": " << *text;
    }
    RowBinaryEncoder encoder({*MapColumn(table.columns[0], caps_), *MapColumn(table.columns[1], caps_),
                              VersionColumnType(), IsDeletedColumnType()});
    for (int64_t k = 1; k <= 3; ++k) {
      std::vector<Cell> row = {k, std::string_view("v"), uint64_t{1}, uint64_t{0}};
      ASSERT_TRUE(encoder.AppendRow(row).ok());
    }
    Status inserted = conn_->Insert(
        InsertPrefix(target_.database, name, {"k", "v", "_chsync_version", "_chsync_is_deleted"}),
        encoder.data());
    ASSERT_TRUE(inserted.ok()) << name << ": " << inserted.error().message();
    EXPECT_EQ(*conn_->Query("SELECT count(), sum(k) FROM " + QualifiedName(target_.database, name)), "3\t6\n")
        << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, RoundTripTest, ::testing::Values(Engine::kServer, Engine::kEmbedded),
                         [](const auto& param_info) {
                           return param_info.param == Engine::kServer ? "Server" : "Embedded";
                         });

}  // namespace
}  // namespace chsync::clickhouse
