// ShardRouter against ClickHouse itself: the server must print and hash key values exactly as
// chsync does, or rows sent straight to a shard would land where the Distributed table does not
// look for them.

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "clickhouse/row_binary.h"
#include "clickhouse/shard_router.h"
#include "clickhouse/sql_quoting.h"
#include "clickhouse/test_destinations.h"

namespace chsync::clickhouse {
namespace {

using testing::ConnectOrFail;
using testing::EmbeddedUrl;
using testing::ServerUrl;
using testing::UniqueDatabase;

enum class Engine { kServer, kEmbedded };

class ShardRouterServerTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    conn_ = ConnectOrFail(GetParam() == Engine::kServer ? ServerUrl() : EmbeddedUrl());
    ASSERT_NE(conn_, nullptr);
  }
  std::unique_ptr<Connection> conn_;
};

std::string Hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : bytes) {
    out.push_back(kHex[static_cast<uint8_t>(c) >> 4]);
    out.push_back(kHex[static_cast<uint8_t>(c) & 15]);
  }
  return out;
}

/// The style the server prints keys in, from the probe (18.16 and 26.7 differ: docs/clusters.md).
std::optional<KeyStyle> ProbeStyle(Connection& conn) {
  RoutingProbe probe = MakeRoutingProbe();
  auto got = conn.Query(probe.sql, "TabSeparatedRaw");
  EXPECT_TRUE(got.ok()) << got.error().message();
  return got.ok() ? probe.Match(*got) : std::nullopt;
}

TEST_P(ShardRouterServerTest, ProbeMatchesTheServersStyle) {
  std::optional<KeyStyle> style = ProbeStyle(*conn_);
  ASSERT_TRUE(style.has_value()) << MakeRoutingProbe().sql;
  // 18.16 prints zero dates as zeros and keeps a decimal's scale; 26.7 does neither.
  EXPECT_EQ(style->zero_date_is_epoch, GetParam() == Engine::kEmbedded);
  EXPECT_EQ(style->trim_decimal_zeros, GetParam() == Engine::kEmbedded);
}

TEST_P(ShardRouterServerTest, HashOfRandomBytesAgrees) {
  std::mt19937_64 random(20261202);
  std::vector<std::string> inputs;
  std::string sql = "SELECT arrayJoin([";
  for (size_t n = 0; n < 300; ++n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(random());
    sql += (n == 0 ? "" : ", ") + std::string("cityHash64(unhex('") + Hex(s) + "'))";
    inputs.push_back(std::move(s));
  }
  sql += "])";
  auto got = conn_->Query(sql, "TabSeparatedRaw");
  ASSERT_TRUE(got.ok()) << got.error().message();
  std::string_view rest = *got;
  for (size_t n = 0; n < inputs.size(); ++n) {
    size_t end = rest.find('\n');
    ASSERT_NE(end, std::string_view::npos) << "only " << n << " rows";
    EXPECT_EQ(std::strtoull(std::string(rest.substr(0, end)).c_str(), nullptr, 10), CityHash64(inputs[n]))
        << "length " << n;
    rest.remove_prefix(end + 1);
  }
}

// Rows stored by chsync's encoder (clamped dates, scaled decimals, enums by index, NULLs) and the
// server's own sharding expression over them.
TEST_P(ShardRouterServerTest, StoredRowsHashAsTheRouterSays) {
  const std::string db = UniqueDatabase("router");
  ASSERT_TRUE(conn_->Execute("CREATE DATABASE " + QuoteIdentifier(db)).ok());
  MappedType e8;
  e8.type = "Enum8('' = 0, 'red' = 1, 'it\\'s' = 2)";
  e8.encoding = Encoding::kEnum8;
  e8.labels = {"red", "it's"};
  auto type = [](std::string name, Encoding e, bool nullable = false, uint32_t scale = 0) {
    MappedType t;
    t.type = nullable ? "Nullable(" + name + ")" : std::move(name);
    t.encoding = e;
    t.nullable = nullable;
    t.scale = scale;
    if (e == Encoding::kDecimal32 || e == Encoding::kDecimal64)
      t.precision = e == Encoding::kDecimal32 ? 9 : 10;
    return t;
  };
  std::vector<std::string> names = {"i", "a", "b", "s", "n", "d", "d0", "dt", "ts", "e", "u", "m"};
  std::vector<MappedType> types = {type("UInt32", Encoding::kUInt32),
                                   type("Int8", Encoding::kInt8),
                                   type("UInt64", Encoding::kUInt64),
                                   type("String", Encoding::kString),
                                   type("String", Encoding::kString, true),
                                   type("Decimal(10, 2)", Encoding::kDecimal64, false, 2),
                                   type("Decimal(9, 0)", Encoding::kDecimal32, false, 0),
                                   type("Date", Encoding::kDate),
                                   type("DateTime('UTC')", Encoding::kDateTime),
                                   e8,
                                   type("UUID", Encoding::kUuid),
                                   type("Int64", Encoding::kInt64, true)};
  std::string columns;
  for (size_t i = 0; i < names.size(); ++i) columns += (i ? ", " : "") + names[i] + " " + types[i].type;
  const std::string key =
      "a, b, s, isNull(n), assumeNotNull(n), d, d0, dt, ts, e, u, isNull(m), assumeNotNull(m)";
  ASSERT_TRUE(conn_
                  ->Execute("CREATE TABLE " + QualifiedName(db, "t") + " (" + columns +
                            ") ENGINE = MergeTree ORDER BY i")
                  .ok());
  std::optional<KeyStyle> style = ProbeStyle(*conn_);
  ASSERT_TRUE(style.has_value());
  auto router = ShardRouter::Create(key, names, types, {1, 1}, *style);
  ASSERT_TRUE(router.ok()) << router.error().message();

  std::mt19937_64 random(7);
  RowBinaryEncoder encoder(types);
  std::vector<uint64_t> expected;
  std::vector<std::string> texts;
  std::vector<std::string> strings;
  strings.reserve(2000);
  for (uint32_t i = 0; i < 1000; ++i) {
    std::string s(random() % 40, '\0');
    for (char& c : s) c = static_cast<char>(random() % 4 == 0 ? "\\'\n\t\0\b"[random() % 6] : random());
    strings.push_back(std::move(s));
    std::string u(16, '\0');
    for (char& c : u) c = static_cast<char>(random());
    strings.push_back(std::move(u));
    int64_t cents = static_cast<int64_t>(random() % 2000001) - 1000000;
    std::string price = (cents < 0 ? "-" : "") + std::to_string(std::llabs(cents) / 100) + "." +
                        std::to_string(std::llabs(cents) % 100 / 10) + std::to_string(std::llabs(cents) % 10);
    strings.push_back(price);
    strings.push_back(std::to_string(static_cast<int64_t>(random() % 1999999999) - 999999999));
    const std::string& kept_price = strings[strings.size() - 2];
    const std::string& whole = strings.back();
    // Every 10th row uses the edges: zero dates, dates clamped to the range, the largest values.
    bool edge = i % 10 == 0;
    std::vector<Cell> row = {
        uint64_t{i},
        static_cast<int64_t>(static_cast<int8_t>(random())),
        edge ? uint64_t{18446744073709551615u} : uint64_t{random()},
        std::string_view(strings[strings.size() - 4]),
        i % 3 == 0 ? Cell(NullCell{}) : Cell(std::string_view(strings[strings.size() - 4]).substr(0, 3)),
        DecimalCell{kept_price},
        DecimalCell{whole},
        edge ? (i % 20 == 0 ? DateCell{0, 0, 0} : DateCell{2200, 3, 4})
             : DateCell{static_cast<int32_t>(1970 + random() % 130), static_cast<uint32_t>(1 + random() % 12),
                        static_cast<uint32_t>(1 + random() % 28)},
        edge ? (i % 20 == 0 ? Cell(EpochCell{0, 0}) : Cell(DateTimeCell{1960, 1, 1, 0, 0, 0, 0}))
             : Cell(EpochCell{static_cast<int64_t>(random() % 4102444800u), 0}),
        uint64_t{random() % 3},
        std::string_view(strings[strings.size() - 3]),
        i % 4 == 0 ? Cell(NullCell{}) : Cell(static_cast<int64_t>(random())),
    };
    ASSERT_TRUE(encoder.AppendRow(row).ok()) << i;
    auto text = router->KeyText(row);
    ASSERT_TRUE(text.ok()) << text.error().message();
    expected.push_back(CityHash64(*text));
    texts.push_back(*text);
  }
  std::string prefix = "INSERT INTO " + QualifiedName(db, "t") + " FORMAT RowBinary";
  ASSERT_TRUE(conn_->Insert(prefix, encoder.data()).ok());
  auto got = conn_->Query(
      "SELECT cityHash64(toString(tuple(" + key + "))) FROM " + QualifiedName(db, "t") + " ORDER BY i",
      "TabSeparatedRaw");
  ASSERT_TRUE(got.ok()) << got.error().message();
  std::string_view rest = *got;
  size_t mismatches = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    size_t end = rest.find('\n');
    ASSERT_NE(end, std::string_view::npos);
    if (std::strtoull(std::string(rest.substr(0, end)).c_str(), nullptr, 10) != expected[i] &&
        ++mismatches <= 5) {
      auto text = conn_->Query("SELECT toString(tuple(" + key + ")) FROM " + QualifiedName(db, "t") +
                                   " WHERE i = " + std::to_string(i),
                               "TabSeparatedRaw");
      ADD_FAILURE() << "row " << i << ": the server prints " << (text.ok() ? *text : text.error().message())
                    << ", chsync " << texts[i];
    }
    rest.remove_prefix(end + 1);
  }
  EXPECT_EQ(mismatches, 0u);
  (void)conn_->Execute("DROP DATABASE " + QuoteIdentifier(db));
}

// Issue 33, case 7: NULLs of a Nullable ENUM that declares '' in a keyless table's key. The
// server prints the stored 0 as the label MapColumn gives it (no label: Code 49 on 18.16,
// UNKNOWN_ELEMENT_OF_ENUM on 26.7), and the router prints the same.
TEST_P(ShardRouterServerTest, NullOfAnEnumDeclaringEmptyHashesAsTheRouterSays) {
  const std::string db = UniqueDatabase("router_enum");
  ASSERT_TRUE(conn_->Execute("CREATE DATABASE " + QuoteIdentifier(db)).ok());
  schema::Column e;
  e.name = "e";
  e.type = schema::ColumnType::kEnum;
  e.enum_values = {"a", "", "b"};
  auto version = conn_->Version();
  ASSERT_TRUE(version.ok()) << version.error().message();
  auto mapped = MapColumn(e, FromVersion(*version));
  ASSERT_TRUE(mapped.ok()) << mapped.error().message();
  MappedType x;
  x.type = "Int32";
  x.encoding = Encoding::kInt32;
  const std::vector<std::string> names = {"e", "x"};
  const std::vector<MappedType> types = {*mapped, x};
  const std::string key = "isNull(e), assumeNotNull(e), x";
  ASSERT_TRUE(conn_
                  ->Execute("CREATE TABLE " + QualifiedName(db, "t") + " (e " + mapped->type +
                            ", x Int32) ENGINE = MergeTree ORDER BY (" + key + ")")
                  .ok());
  auto router = ShardRouter::Create(key, names, types, {1, 1}, ProbeStyle(*conn_).value_or(KeyStyle{}));
  ASSERT_TRUE(router.ok()) << router.error().message();
  RowBinaryEncoder encoder(types);
  std::vector<std::string> texts;
  for (int64_t i = 0; i < 40; ++i) {
    // NULL, MySQL's invalid index 0 (written as the declared ''), 'a', '' and 'b'.
    std::vector<Cell> row = {i % 8 == 0 ? Cell(NullCell{}) : Cell(static_cast<uint64_t>(i % 4)), i};
    ASSERT_TRUE(encoder.AppendRow(row).ok()) << i;
    auto text = router->KeyText(row);
    ASSERT_TRUE(text.ok()) << text.error().message();
    texts.push_back(*text);
  }
  ASSERT_TRUE(
      conn_->Insert("INSERT INTO " + QualifiedName(db, "t") + " FORMAT RowBinary", encoder.data()).ok());
  auto got =
      conn_->Query("SELECT toString(tuple(" + key + ")) FROM " + QualifiedName(db, "t") + " ORDER BY x",
                   "TabSeparatedRaw");
  ASSERT_TRUE(got.ok()) << got.error().message();
  std::string expected;
  for (const std::string& text : texts) expected += text + "\n";
  EXPECT_EQ(*got, expected);
  EXPECT_NE(got->find("(1,' ',0)"), std::string::npos) << *got;
  (void)conn_->Execute("DROP DATABASE " + QuoteIdentifier(db));
}

INSTANTIATE_TEST_SUITE_P(Engines, ShardRouterServerTest,
                         ::testing::Values(Engine::kServer, Engine::kEmbedded), [](const auto& param) {
                           return param.param == Engine::kServer ? "Server" : "Embedded";
                         });

}  // namespace
}  // namespace chsync::clickhouse
