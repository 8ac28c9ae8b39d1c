#include "pipe/row_converter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "clickhouse/capabilities.h"

namespace chsync::pipe {
namespace {

using binlog::Value;
using binlog::ValueKind;
using schema::ColumnType;

schema::Column Col(std::string name, ColumnType type, std::string charset = "",
                   std::optional<uint32_t> length = {}) {
  schema::Column c;
  c.name = std::move(name);
  c.type = type;
  c.charset = std::move(charset);
  c.length = length;
  c.nullable = true;
  return c;
}

schema::TableSchema Table(std::vector<schema::Column> columns) {
  schema::TableSchema t;
  t.database = "db";
  t.name = "t";
  t.columns = std::move(columns);
  t.RenumberColumns();
  return t;
}

std::vector<clickhouse::MappedType> Types(const schema::TableSchema& t,
                                          clickhouse::ServerVersion version = {26, 7}) {
  std::vector<clickhouse::MappedType> types;
  for (const schema::Column& c : t.columns) {
    auto m = clickhouse::MapColumn(c, clickhouse::FromVersion(version));
    EXPECT_TRUE(m.ok()) << c.name;
    types.push_back(*m);
  }
  return types;
}

Value Str(std::string_view bytes) {
  Value v;
  v.kind = ValueKind::kString;
  v.text = bytes;
  return v;
}

/// The string a single-column converter gives for `bytes`.
std::string ConvertOne(const schema::Column& column, std::string_view bytes, ValueOrigin origin) {
  schema::TableSchema t = Table({column});
  auto conv = RowConverter::Create(t, Types(t));
  EXPECT_TRUE(conv.ok());
  std::vector<Value> row = {Str(bytes)};
  std::vector<clickhouse::Cell> cells;
  Status st = conv->Convert(row, origin, cells);
  EXPECT_TRUE(st.ok()) << st.error().message();
  if (cells.size() != 1 || !std::holds_alternative<std::string_view>(cells[0])) return "<not a string>";
  return std::string(std::get<std::string_view>(cells[0]));
}

std::string FromBinlog(std::string charset, std::string_view bytes) {
  return ConvertOne(Col("c", ColumnType::kVarChar, std::move(charset), 100), bytes, ValueOrigin::kBinlog);
}

TEST(RowConverterTest, Latin1IsCp1252WithC1Controls) {
  EXPECT_EQ(FromBinlog("latin1", "caf\xE9"), "café");
  EXPECT_EQ(FromBinlog("latin1", "\x80 \x9F"), "€ Ÿ");
  // MySQL's latin1 keeps the five bytes cp1252 leaves undefined as the C1 controls.
  EXPECT_EQ(FromBinlog("latin1", "\x81\x8D\x8F\x90\x9D"), "\xC2\x81\xC2\x8D\xC2\x8F\xC2\x90\xC2\x9D");
  EXPECT_EQ(FromBinlog("latin1", "plain ascii"), "plain ascii");
}

TEST(RowConverterTest, SnapshotStringsAreAlreadyUtf8) {
  EXPECT_EQ(ConvertOne(Col("c", ColumnType::kVarChar, "latin1", 10), "café", ValueOrigin::kSnapshot), "café");
}

TEST(RowConverterTest, CommonCharacterSets) {
  EXPECT_EQ(FromBinlog("latin2", "\xB1\xE6"), "ąć");
  EXPECT_EQ(FromBinlog("cp1250", "\x9A\xE8"), "šč");
  EXPECT_EQ(FromBinlog("cp1251", "\xCF\xF0\xE8\xE2\xE5\xF2"), "Привет");
  EXPECT_EQ(FromBinlog("koi8r", "\xF0\xD2\xC9\xD7\xC5\xD4"), "Привет");
  EXPECT_EQ(FromBinlog("cp866", "\x8F\xE0\xA8\xA2\xA5\xE2"), "Привет");
  EXPECT_EQ(FromBinlog("greek", "\xE1\xE2\xE3"), "αβγ");
  EXPECT_EQ(FromBinlog("hebrew", "\xF9\xEC\xE5\xED"), "שלום");
  EXPECT_EQ(FromBinlog("cp1256", "\xE3\xD1\xCD\xC8\xC7"), "مرحبا");
  EXPECT_EQ(FromBinlog("tis620", "\xA1"), "ก");
  EXPECT_EQ(FromBinlog("macroman", "\x8E"), "é");
  EXPECT_EQ(FromBinlog("gbk", "\xD6\xD0\xCE\xC4"), "中文");
  EXPECT_EQ(FromBinlog("gb2312", "\xD6\xD0\xCE\xC4"), "中文");
  EXPECT_EQ(FromBinlog("big5", "\xA4\xA4\xA4\xE5"), "中文");
  EXPECT_EQ(FromBinlog("sjis", "\x93\xFA\x96\x7B"), "日本");
  EXPECT_EQ(FromBinlog("cp932", "\x93\xFA\x96\x7B"), "日本");
  EXPECT_EQ(FromBinlog("ujis", "\xC6\xFC\xCB\xDC"), "日本");
  EXPECT_EQ(FromBinlog("eucjpms", "\xC6\xFC\xCB\xDC"), "日本");
  EXPECT_EQ(FromBinlog("euckr", "\xC7\xD1\xB1\xB9"), "한국");
  EXPECT_EQ(FromBinlog("ucs2", std::string("\0A\xAC\x00", 4)), "A가");
  EXPECT_EQ(FromBinlog("utf16", std::string("\xD8\x3D\xDE\x00", 4)), "😀");
  EXPECT_EQ(FromBinlog("utf16le", std::string("A\0", 2)), "A");
  EXPECT_EQ(FromBinlog("utf32", std::string("\0\x01\xF6\x00", 4)), "😀");
}

TEST(RowConverterTest, JisCharactersMapAsTheServerMapsThem) {
  // sjis/ujis follow JIS (backslash, wave dash), cp932/eucjpms follow Microsoft (fullwidth forms).
  EXPECT_EQ(FromBinlog("sjis", "\x81\x5F\x81\x60"), "\\〜");
  EXPECT_EQ(FromBinlog("cp932", "\x81\x5F\x81\x60"), "＼～");
  EXPECT_EQ(FromBinlog("ujis", "\xA1\xC0\xA1\xC1"), "\\〜");
  EXPECT_EQ(FromBinlog("eucjpms", "\xA1\xC0\xA1\xC1"), "＼～");
}

TEST(RowConverterTest, BytesThatDoNotConvertBecomeQuestionMarks) {
  EXPECT_EQ(FromBinlog("ascii",
                       "a\xFF"
                       "b"),
            "a?b");
  EXPECT_EQ(FromBinlog("greek", "\xAE"), "?");
  EXPECT_EQ(FromBinlog("gbk",
                       "x\xFF"
                       "y"),
            "x?y");
  EXPECT_EQ(FromBinlog("gbk", "x\xD6"), "x?");  // a lead byte cut off at the end
}

TEST(RowConverterTest, UnknownCharacterSetKeepsTheBytes) {
  EXPECT_EQ(FromBinlog("keybcs2", "\x80\x81"), "\x80\x81");
  EXPECT_EQ(ConvertToUtf8("keybcs2", "\x80"), "\x80");
  EXPECT_EQ(IconvNameOf("keybcs2"), "");
  EXPECT_EQ(IconvNameOf("utf8mb4"), "");
  EXPECT_EQ(IconvNameOf("latin1"), "CP1252");
}

TEST(RowConverterTest, Utf8AndBinaryColumnsAreUntouched) {
  EXPECT_EQ(FromBinlog("utf8mb4", "caf\xC3\xA9 \xF0\x9F\x98\x80"), "café 😀");
  const std::string bytes("\xE9\x00 ", 3);
  EXPECT_EQ(ConvertOne(Col("b", ColumnType::kVarBinary, "", 10), bytes, ValueOrigin::kBinlog), bytes);
  EXPECT_EQ(ConvertOne(Col("b", ColumnType::kBlob), "\xE9 ", ValueOrigin::kBinlog), "\xE9 ");
}

TEST(RowConverterTest, FixedWidthBinaryIsPaddedBackToItsWidth) {
  auto binary8 = Col("b", ColumnType::kBinary, "", 8);
  EXPECT_EQ(ConvertOne(binary8, "ab", ValueOrigin::kBinlog), std::string("ab\0\0\0\0\0\0", 8));
  EXPECT_EQ(ConvertOne(binary8, "", ValueOrigin::kBinlog), std::string(8, '\0'));
  EXPECT_EQ(ConvertOne(binary8, std::string("ab\0\0\0\0\0\0", 8), ValueOrigin::kSnapshot),
            std::string("ab\0\0\0\0\0\0", 8));
  EXPECT_EQ(ConvertOne(Col("u", ColumnType::kUuid), std::string("\x12\x3E\x45", 3), ValueOrigin::kBinlog),
            std::string("\x12\x3E\x45") + std::string(13, '\0'));
  EXPECT_EQ(ConvertOne(Col("a", ColumnType::kInet4), "", ValueOrigin::kBinlog), std::string(4, '\0'));
  EXPECT_EQ(ConvertOne(Col("a", ColumnType::kInet6), "\x20\x01", ValueOrigin::kBinlog),
            std::string("\x20\x01") + std::string(14, '\0'));
}

TEST(RowConverterTest, CharLosesTrailingSpacesVarCharKeepsThem) {
  EXPECT_EQ(ConvertOne(Col("c", ColumnType::kChar, "utf8mb4", 10), "hi  ", ValueOrigin::kBinlog), "hi");
  EXPECT_EQ(ConvertOne(Col("c", ColumnType::kChar, "ucs2", 4), std::string("\0h\0i\0 \0 ", 8),
                       ValueOrigin::kBinlog),
            "hi");
  EXPECT_EQ(ConvertOne(Col("c", ColumnType::kVarChar, "utf8mb4", 10), "hi  ", ValueOrigin::kBinlog), "hi  ");
}

TEST(RowConverterTest, SameRowFromBothOriginsEncodesIdentically) {
  schema::TableSchema t =
      Table({Col("name", ColumnType::kVarChar, "latin1", 20), Col("b", ColumnType::kBinary, "", 4),
             Col("c", ColumnType::kChar, "cp1251", 5)});
  for (clickhouse::ServerVersion version :
       {clickhouse::ServerVersion{26, 7}, clickhouse::ServerVersion{18, 16}}) {
    std::vector<clickhouse::MappedType> types = Types(t, version);
    auto conv = RowConverter::Create(t, types);
    ASSERT_TRUE(conv.ok());
    const std::string padded("x\0\0\0", 4);
    std::vector<Value> snapshot = {Str("café"), Str(padded), Str("Да")};
    std::vector<Value> stream = {Str("caf\xE9"), Str("x"), Str("\xC4\xE0   ")};
    std::vector<clickhouse::Cell> cells;
    clickhouse::RowBinaryEncoder a(types), b(types);
    ASSERT_TRUE(conv->Convert(snapshot, ValueOrigin::kSnapshot, cells).ok());
    ASSERT_TRUE(a.AppendRow(cells).ok());
    ASSERT_TRUE(conv->Convert(stream, ValueOrigin::kBinlog, cells).ok());
    ASSERT_TRUE(b.AppendRow(cells).ok());
    EXPECT_EQ(a.data(), b.data());
    EXPECT_NE(a.data().find("café"), std::string_view::npos);
  }
}

TEST(RowConverterTest, DateTimeKeptAsTextIsTheSameFromBothOrigins) {
  schema::TableSchema t = Table({Col("dt", ColumnType::kDateTime), Col("ts", ColumnType::kTimestamp)});
  t.columns[0].fsp = 6;
  t.columns[1].fsp = 3;
  clickhouse::Capabilities caps = clickhouse::FromVersion({18, 16});
  caps.datetime_fallback_text = true;
  std::vector<clickhouse::MappedType> types;
  for (const schema::Column& c : t.columns) types.push_back(*clickhouse::MapColumn(c, caps));
  ASSERT_EQ(types[0].encoding, clickhouse::Encoding::kDateTimeText);
  ASSERT_EQ(types[1].encoding, clickhouse::Encoding::kDateTimeText);
  auto conv = RowConverter::Create(t, types);
  ASSERT_TRUE(conv.ok());
  std::vector<Value> row(2);
  row[0].kind = ValueKind::kDateTime;
  row[0].datetime = {1000, 1, 1, 0, 0, 0, 1};
  row[1].kind = ValueKind::kTimestamp;
  row[1].timestamp = {1718454896, 789000};  // 2024-06-15 12:34:56.789 UTC
  clickhouse::RowBinaryEncoder a(types), b(types);
  std::vector<clickhouse::Cell> cells;
  ASSERT_TRUE(conv->Convert(row, ValueOrigin::kSnapshot, cells).ok());
  ASSERT_TRUE(a.AppendRow(cells).ok());
  ASSERT_TRUE(conv->Convert(row, ValueOrigin::kBinlog, cells).ok());
  ASSERT_TRUE(b.AppendRow(cells).ok());
  EXPECT_EQ(a.data(), b.data());
  // Nullable: a 0 marker, then the text's length and the text.
  EXPECT_EQ(a.data(), std::string("\x00\x1A"
                                  "1000-01-01 00:00:00.000001"
                                  "\x00\x17"
                                  "2024-06-15 12:34:56.789",
                                  2 * 2 + 26 + 23));
}

TEST(RowConverterTest, ScratchIsReusedAcrossRows) {
  schema::TableSchema t = Table({Col("name", ColumnType::kVarChar, "latin1", 20)});
  auto conv = RowConverter::Create(t, Types(t));
  ASSERT_TRUE(conv.ok());
  std::vector<clickhouse::Cell> cells;
  std::vector<Value> row = {Str("d\xE9j\xE0 vu, a longer value than the next")};
  ASSERT_TRUE(conv->Convert(row, ValueOrigin::kBinlog, cells).ok());
  const char* first = std::get<std::string_view>(cells[0]).data();
  row = {Str("caf\xE9")};
  ASSERT_TRUE(conv->Convert(row, ValueOrigin::kBinlog, cells).ok());
  EXPECT_EQ(std::get<std::string_view>(cells[0]), "café");
  EXPECT_EQ(std::get<std::string_view>(cells[0]).data(), first) << "the column's buffer was reallocated";
  // ASCII text in an ASCII-compatible set is not copied at all.
  row = {Str("plain")};
  ASSERT_TRUE(conv->Convert(row, ValueOrigin::kBinlog, cells).ok());
  EXPECT_EQ(std::get<std::string_view>(cells[0]).data(), row[0].text.data());
}

TEST(RowConverterTest, OtherKindsBecomeTheirCells) {
  schema::TableSchema t =
      Table({Col("i", ColumnType::kBigInt), Col("u", ColumnType::kBigInt), Col("n", ColumnType::kInt),
             Col("e", ColumnType::kEnum), Col("tm", ColumnType::kTime), Col("f", ColumnType::kFloat)});
  t.columns[1].is_unsigned = true;
  t.columns[3].enum_values = {"a", "b"};
  t.columns[4].fsp = 3;
  auto conv = RowConverter::Create(t, Types(t));
  ASSERT_TRUE(conv.ok());
  std::vector<Value> row(6);
  row[0].kind = ValueKind::kInt;
  row[0].i = -5;
  row[1].kind = ValueKind::kUint;
  row[1].u = UINT64_MAX;
  row[2].kind = ValueKind::kNull;
  row[3].kind = ValueKind::kEnum;
  row[3].u = 2;
  row[4].kind = ValueKind::kTime;
  row[4].time = {true, 1, 2, 3, 500000};
  row[5].kind = ValueKind::kFloat;
  row[5].f = 1.5f;
  std::vector<clickhouse::Cell> cells;
  ASSERT_TRUE(conv->Convert(row, ValueOrigin::kBinlog, cells).ok());
  ASSERT_EQ(cells.size(), 6u);
  EXPECT_EQ(std::get<int64_t>(cells[0]), -5);
  EXPECT_EQ(std::get<uint64_t>(cells[1]), UINT64_MAX);
  EXPECT_TRUE(std::holds_alternative<clickhouse::NullCell>(cells[2]));
  EXPECT_EQ(std::get<uint64_t>(cells[3]), 2u);
  EXPECT_TRUE(std::get<clickhouse::TimeCell>(cells[4]).negative);
  EXPECT_EQ(std::get<double>(cells[5]), 1.5);
}

TEST(RowConverterTest, IntegerSignednessFollowsTheSchema) {
  // Without SIGNEDNESS metadata the binlog gives every integer signed (and the reverse must not
  // corrupt signed columns either).
  schema::TableSchema t = Table({Col("ub", ColumnType::kBigInt), Col("ut", ColumnType::kTinyInt),
                                 Col("st", ColumnType::kTinyInt), Col("sm", ColumnType::kMediumInt)});
  t.columns[0].is_unsigned = true;
  t.columns[1].is_unsigned = true;
  auto conv = RowConverter::Create(t, Types(t));
  ASSERT_TRUE(conv.ok());
  std::vector<Value> row(4);
  row[0].kind = ValueKind::kInt;
  row[0].i = -1;
  row[1].kind = ValueKind::kInt;
  row[1].i = -1;
  row[2].kind = ValueKind::kUint;
  row[2].u = 255;
  row[3].kind = ValueKind::kUint;
  row[3].u = 0xFFFFFE;
  std::vector<clickhouse::Cell> cells;
  ASSERT_TRUE(conv->Convert(row, ValueOrigin::kBinlog, cells).ok());
  EXPECT_EQ(std::get<uint64_t>(cells[0]), UINT64_MAX);
  EXPECT_EQ(std::get<uint64_t>(cells[1]), 255u);
  EXPECT_EQ(std::get<int64_t>(cells[2]), -1);
  EXPECT_EQ(std::get<int64_t>(cells[3]), -2);
}

TEST(RowConverterTest, PartialImagesAndWrongSizesAreErrors) {
  schema::TableSchema t = Table({Col("a", ColumnType::kInt), Col("j", ColumnType::kJson)});
  auto conv = RowConverter::Create(t, Types(t));
  ASSERT_TRUE(conv.ok());
  std::vector<clickhouse::Cell> cells;
  std::vector<Value> row(2);
  row[1].kind = ValueKind::kNull;
  Status st = conv->Convert(row, ValueOrigin::kBinlog, cells);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(st.error().message().find("binlog_row_image=FULL"), std::string::npos) << st.error().message();
  row[0].kind = ValueKind::kInt;
  row[1].kind = ValueKind::kJsonDiff;
  st = conv->Convert(row, ValueOrigin::kBinlog, cells);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("column j"), std::string::npos) << st.error().message();
  row.pop_back();
  EXPECT_FALSE(conv->Convert(row, ValueOrigin::kBinlog, cells).ok());
  EXPECT_FALSE(RowConverter::Create(t, {}).ok());
}

TEST(RowConverterTest, SnapshotQueryReadsWhatTheBinlogCarries) {
  schema::TableSchema t =
      Table({Col("id", ColumnType::kInt), Col("e", ColumnType::kEnum), Col("s", ColumnType::kSet),
             Col("u", ColumnType::kUuid), Col("a4", ColumnType::kInet4), Col("a6", ColumnType::kInet6),
             Col("v", ColumnType::kVarChar, "latin1", 5)});
  t.primary_key = {"id"};
  t.columns[0].nullable = false;
  using Read = mysql::SnapshotQuery::Read;
  mysql::SnapshotQuery q = SnapshotQueryFor(t, 500);
  EXPECT_EQ(q.reads, (std::vector<Read>{Read::kValue, Read::kEnumIndex, Read::kSetBits, Read::kBytes16,
                                        Read::kBytes4, Read::kBytes16, Read::kValue}));
  EXPECT_EQ(q.key_columns, std::vector<std::string>{"id"});
  EXPECT_EQ(q.chunk_rows, 500u);
}

}  // namespace
}  // namespace chsync::pipe
