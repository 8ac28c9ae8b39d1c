// The decoder's and printer's fast paths must give exactly what the general code gives: doubles
// as std::to_chars prints them, DECIMAL text (and errors) as ReadDecimal.
#include <gtest/gtest.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>

#include "binlog/decimal.h"
#include "binlog/decimal_text.h"
#include "binlog/event_printer.h"
#include "binlog/value.h"

namespace chsync::binlog {
namespace {

std::string DoubleText(double d) {
  Value v;
  v.kind = ValueKind::kDouble;
  v.d = d;
  char buf[kMaxFixedValueText];
  return std::string(buf, WriteFixedValueText(v, buf));
}

std::string ToChars(double d) {
  char buf[64];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, d).ptr);
}

TEST(FastTextTest, DoublesPrintAsToChars) {
  for (double d : {0.0,
                   -0.0,
                   0.5,
                   -0.501,
                   1e-5,
                   1e-4,
                   0.001,
                   0.0001234,
                   17.0,
                   100.0,
                   1000.0,
                   1e14,
                   1e15,
                   999999999999999.0,
                   123456789012345.6,
                   0.1 + 0.2,
                   1.0 / 3,
                   9007199254740993.0,
                   1e300,
                   5e-324,
                   2.2250738585072014e-308}) {
    EXPECT_EQ(DoubleText(d), ToChars(d)) << d;
  }
  std::mt19937_64 rng(20261130);
  for (int i = 0; i < 200000; ++i) {
    // Short decimals (the fast path), random bit patterns and decimals of every length.
    double shortish = static_cast<double>(rng() % 100000000) / static_cast<double>(1 + rng() % 100000);
    ASSERT_EQ(DoubleText(shortish), ToChars(shortish)) << shortish;
    ASSERT_EQ(DoubleText(-shortish * 1e-3), ToChars(-shortish * 1e-3)) << shortish;
    uint64_t bits = rng();
    double any;
    std::memcpy(&any, &bits, sizeof any);
    ASSERT_EQ(DoubleText(any), ToChars(any)) << bits;
    char text[64];
    std::snprintf(text, sizeof text, "%.*ge%d", static_cast<int>(1 + rng() % 17),
                  static_cast<double>(rng() % 100000000000000000ULL), static_cast<int>(rng() % 40) - 20);
    double parsed = std::strtod(text, nullptr);
    ASSERT_EQ(DoubleText(parsed), ToChars(parsed)) << text;
  }
}

TEST(FastTextTest, DecimalsAsReadDecimal) {
  std::mt19937_64 rng(42);
  TextArena arena;
  for (int i = 0; i < 300000; ++i) {
    // Valid and invalid metadata, digit groups in and out of range, values cut short.
    unsigned precision = static_cast<unsigned>(rng() % 68);
    unsigned scale = static_cast<unsigned>(rng() % 33);
    if (i % 3 == 0) {
      precision = 1 + static_cast<unsigned>(rng() % 65);
      scale = static_cast<unsigned>(rng() % (std::min(precision, 30u) + 1));
    }
    uint8_t bytes[40];
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    if (rng() % 2) {
      uint8_t fill = bytes[0] & 0x80 ? 0 : 0xff;
      for (size_t k = 1; k < sizeof bytes; ++k)
        bytes[k] = rng() % 4 == 0 ? static_cast<uint8_t>(rng()) : fill;
    }
    size_t size = rng() % (sizeof bytes + 1);
    ByteReader general(bytes, size, 100);
    ByteReader fast(bytes, size, 100);
    std::string expected;
    Status s = ReadDecimal(general, precision, scale, expected);
    Result<std::string_view> got = ReadDecimalText(fast, precision, scale, arena);
    ASSERT_EQ(s.ok(), got.ok()) << precision << "," << scale << " size " << size;
    EXPECT_EQ(general.position(), fast.position());
    if (s.ok()) {
      ASSERT_EQ(expected, *got) << precision << "," << scale;
    } else {
      ASSERT_EQ(s.error().message(), got.error().message());
    }
    if (i % 1000 == 0) arena.Reset();
  }
}

// The text format's quoting, written plainly: \\ \' \n \r \t \0, valid UTF-8 as is, other
// control bytes, DEL and bytes that are not valid UTF-8 as \xNN.
std::string Quoted(std::string_view s) {
  std::string out = "'";
  for (size_t i = 0; i < s.size();) {
    auto b = static_cast<uint8_t>(s[i]);
    size_t n = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    bool utf8 = n > 0 && i + n <= s.size();
    for (size_t k = 1; utf8 && k < n; ++k) utf8 = (static_cast<uint8_t>(s[i + k]) & 0xc0) == 0x80;
    if (utf8) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    switch (b) {
      case '\\': out += "\\\\"; break;
      case '\'': out += "\\'"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case 0: out += "\\0"; break;
      default:
        if (b < 0x20 || b >= 0x7f) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\x%02x", b);
          out += hex;
        } else {
          out.push_back(static_cast<char>(b));
        }
    }
    ++i;
  }
  return out + "'";
}

TEST(FastTextTest, StringsQuoteWhereverTheirSpecialBytesAre) {
  auto table = std::make_shared<TableMap>();
  table->database = "db";
  table->table = "t";
  ColumnInfo column;
  column.type = column.real_type = ColumnType::kVarchar;
  column.max_length = 255;
  column.charset = 45;
  column.name = "s";
  table->columns.push_back(column);
  const char kAlphabet[] = "abcXYZ019 '\\\n\t\r\x01\x7f\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xff\x80";
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    // Mostly plain text with a special byte or two anywhere, of every length around 8 and 16.
    std::string text(rng() % 48, 'a');
    for (char& c : text) c = static_cast<char>('a' + rng() % 26);
    for (int k = static_cast<int>(rng() % 3); k > 0 && !text.empty(); --k)
      text[rng() % text.size()] = kAlphabet[rng() % (sizeof kAlphabet - 1)];
    Event e;
    e.file = "binlog.000001";
    e.header.type = EventType::kWriteRowsV2;
    RowsEvent rows;
    rows.table = table;
    rows.values.resize(1);
    rows.values[0].kind = ValueKind::kString;
    rows.values[0].type = ColumnType::kVarchar;
    rows.values[0].text = text;
    rows.rows.push_back(RowChange{{}, RowImage(rows.values.data(), 1)});
    e.body = std::move(rows);
    std::string out;
    AppendEvent(e, PrintFormat::kText, out);
    std::string expected = " row0:after={s=" + Quoted(text) + "}\n";
    ASSERT_GE(out.size(), expected.size());
    ASSERT_EQ(out.substr(out.size() - expected.size()), expected) << i;
  }
}

}  // namespace
}  // namespace chsync::binlog
