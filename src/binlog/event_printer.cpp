#include "binlog/event_printer.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <memory>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "binlog/json_binary.h"
#include "binlog/partial_rows.h"

namespace chsync::binlog {
namespace {

constexpr uint32_t kBinaryCollation = 63;

template <typename T>
void Num(T v, std::string& out) {
  char buf[40];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

void Hex(std::string_view bytes, std::string& out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  size_t at = out.size();
  out.resize(at + 2 * bytes.size());
  char* p = out.data() + at;
  for (char c : bytes) {
    auto u = static_cast<uint8_t>(c);
    p[0] = kHex[u >> 4];
    p[1] = kHex[u & 15];
    p += 2;
  }
}

// Length of the valid UTF-8 sequence starting at s[i], or 0.
size_t Utf8Length(std::string_view s, size_t i) {
  auto b = static_cast<uint8_t>(s[i]);
  size_t n = b >= 0xf0 && b <= 0xf4 ? 4 : b >= 0xe0 ? 3 : b >= 0xc2 && b < 0xe0 ? 2 : 0;
  if (n == 0 || b > 0xf4 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<uint8_t>(s[i + k]) & 0xc0) != 0x80) return 0;
  }
  return n;
}

bool IsUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
#if defined(__SSE2__)
    // Sixteen ASCII bytes at a time.
    while (s.size() - i >= 16 &&
           _mm_movemask_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i))) == 0) {
      i += 16;
    }
#endif
    // Eight ASCII bytes at a time.
    while (s.size() - i >= 8) {
      uint64_t word;
      std::memcpy(&word, s.data() + i, 8);
      if (word & 0x8080808080808080ULL) break;
      i += 8;
    }
    if (i == s.size()) break;
    auto b = static_cast<uint8_t>(s[i]);
    if (b < 0x80) {
      ++i;
      continue;
    }
    size_t n = Utf8Length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// Bytes Quote copies unchanged: printable ASCII but the backslash and the quote.
constexpr std::array<bool, 256> kQuotePlain = [] {
  std::array<bool, 256> t{};
  for (size_t c = 0x20; c < 0x7f; ++c) t[c] = c != '\\' && c != '\'';
  return t;
}();

// 'text' with \\, \', \n, \r, \t, \0 and \xNN for other control bytes and invalid UTF-8.
void Quote(std::string_view s, std::string& out) {
  out.push_back('\'');
  for (size_t i = 0; i < s.size();) {
    size_t plain = i;
    while (plain < s.size() && kQuotePlain[static_cast<uint8_t>(s[plain])]) ++plain;
    if (plain > i) {
      out.append(s.data() + i, plain - i);
      i = plain;
      if (i == s.size()) break;
    }
    char c = s[i];
    auto u = static_cast<uint8_t>(c);
    if (u >= 0x80) {
      size_t n = Utf8Length(s, i);
      if (n > 0) {
        out.append(s.substr(i, n));
        i += n;
        continue;
      }
    }
    switch (c) {
      case '\\': out.append("\\\\"); break;
      case '\'': out.append("\\'"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      case '\0': out.append("\\0"); break;
      default:
        if (u < 0x20 || u >= 0x7f) {
          static constexpr char kHex[] = "0123456789abcdef";
          out.append("\\x");
          out.push_back(kHex[u >> 4]);
          out.push_back(kHex[u & 15]);
        } else {
          out.push_back(c);
        }
    }
    ++i;
  }
  out.push_back('\'');
}

// --- Writers into memory the caller has made room for; each returns the end of what it wrote.

constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// The two digits of `v` (below 100).
const char* Pair(uint32_t v) {
  return kDigitPairs + 2 * static_cast<size_t>(v);
}

// `v` (below 10^4) as exactly four digits.
char* Put4Digits(char* p, uint32_t v) {
  std::memcpy(p, Pair(v / 100), 2);
  std::memcpy(p + 2, Pair(v % 100), 2);
  return p + 4;
}

// `v` (below 10^8) as exactly eight digits: two independent halves.
char* Put8Digits(char* p, uint32_t v) {
  Put4Digits(p, v / 10000);
  return Put4Digits(p + 4, v % 10000);
}

// `v` (below 10^4) without leading zeros.
char* PutSmall(char* p, uint32_t v) {
  if (v < 10) {
    *p = static_cast<char>('0' + v);
    return p + 1;
  }
  if (v < 100) {
    std::memcpy(p, Pair(v), 2);
    return p + 2;
  }
  uint32_t high = v / 100;
  if (high < 10) {
    *p++ = static_cast<char>('0' + high);
  } else {
    std::memcpy(p, Pair(high), 2);
    p += 2;
  }
  std::memcpy(p, Pair(v % 100), 2);
  return p + 2;
}

// std::to_chars' decimal text of `v`: split into groups of four and eight digits whose pairs
// are independent (rather than one long chain of divisions), in 32-bit arithmetic.
char* PutUint32(char* p, uint32_t v) {
  if (v < 10000) return PutSmall(p, v);
  if (v < 100000000) return Put4Digits(PutSmall(p, v / 10000), v % 10000);
  return Put8Digits(PutSmall(p, v / 100000000), v % 100000000);
}

char* PutUint(char* p, uint64_t v) {
  if (v <= UINT32_MAX) return PutUint32(p, static_cast<uint32_t>(v));
  if (v >= 10000000000000000ULL) return std::to_chars(p, p + 20, v).ptr;
  return Put8Digits(PutUint32(p, static_cast<uint32_t>(v / 100000000)), static_cast<uint32_t>(v % 100000000));
}

char* PutInt(char* p, int64_t v) {
  if (v >= 0) return PutUint(p, static_cast<uint64_t>(v));
  *p++ = '-';
  return PutUint(p, uint64_t{0} - static_cast<uint64_t>(v));
}

char* Put(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

// The two upper-case hex digits of every byte value.
constexpr std::array<char, 512> kHexPairs = [] {
  constexpr char kHex[] = "0123456789ABCDEF";
  std::array<char, 512> t{};
  for (size_t b = 0; b < 256; ++b) {
    t[2 * b] = kHex[b >> 4];
    t[2 * b + 1] = kHex[b & 15];
  }
  return t;
}();

char* PutHex(char* p, std::string_view bytes) {
#if defined(__SSE2__)
  // Eight bytes at a time: their sixteen nibbles in order, each + '0', + 7 more above 9.
  while (bytes.size() >= 8) {
    __m128i in = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes.data()));
    __m128i mask = _mm_set1_epi8(0x0f);
    __m128i nibbles = _mm_unpacklo_epi8(_mm_and_si128(_mm_srli_epi16(in, 4), mask), _mm_and_si128(in, mask));
    __m128i letters = _mm_and_si128(_mm_cmpgt_epi8(nibbles, _mm_set1_epi8(9)), _mm_set1_epi8(7));
    __m128i text = _mm_add_epi8(_mm_add_epi8(nibbles, _mm_set1_epi8('0')), letters);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), text);
    p += 16;
    bytes.remove_prefix(8);
  }
#endif
  for (char c : bytes) {
    std::memcpy(p, kHexPairs.data() + 2 * static_cast<size_t>(static_cast<uint8_t>(c)), 2);
    p += 2;
  }
  return p;
}

// Eight bytes at a time: whether any byte is zero, below n, above n (SWAR; n <= 127).
constexpr uint64_t kOnes = 0x0101010101010101ULL;
constexpr uint64_t kHighs = 0x8080808080808080ULL;
constexpr uint64_t AnyZero(uint64_t w) {
  return (w - kOnes) & ~w & kHighs;
}
constexpr uint64_t AnyBelow(uint64_t w, uint8_t n) {
  return (w - kOnes * n) & ~w & kHighs;
}
constexpr uint64_t AnyAbove(uint64_t w, uint8_t n) {
  return ((w + kOnes * (127 - n)) | w) & kHighs;
}

// Quote's output (at most 4 * size + 2 bytes).
char* PutQuoted(char* p, std::string_view s) {
  *p++ = '\'';
  char* const body = p;
  for (size_t i = 0; i < s.size();) {
    // The tail, when all so far was copied as is (as many bytes written as read, so the output
    // holds the input): the last 16 (or 8) bytes of the input are checked at once, and when the
    // tail needs no care they are stored over their copy, which ends the string.
    size_t rem = s.size() - i;
#if defined(__SSE2__)
    if (rem < 16 && s.size() >= 16 && static_cast<size_t>(p - body) == i) {
      __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + s.size() - 16));
      __m128i special = _mm_or_si128(
          _mm_or_si128(_mm_cmplt_epi8(w, _mm_set1_epi8(0x20)), _mm_cmpeq_epi8(w, _mm_set1_epi8(0x7f))),
          _mm_or_si128(_mm_cmpeq_epi8(w, _mm_set1_epi8('\\')), _mm_cmpeq_epi8(w, _mm_set1_epi8('\''))));
      if ((static_cast<unsigned>(_mm_movemask_epi8(special)) >> (16 - rem)) == 0) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(p - (16 - rem)), w);
        p += rem;
        break;
      }
    }
#endif
    if (rem < 8 && s.size() >= 8 && static_cast<size_t>(p - body) == i) {
      // The masks flag every byte that needs care (false flags only above a true one).
      uint64_t w;
      std::memcpy(&w, s.data() + s.size() - 8, 8);
      uint64_t special =
          AnyBelow(w, 0x20) | AnyAbove(w, 0x7e) | AnyZero(w ^ (kOnes * '\\')) | AnyZero(w ^ (kOnes * '\''));
      if ((special >> (8 * (8 - rem))) == 0) {
        std::memcpy(p - (8 - rem), &w, 8);
        p += rem;
        break;
      }
    }
#if defined(__SSE2__)
    if (rem >= 16) {
      // As below, sixteen bytes at a time: as signed bytes, those below 0x20 are the control
      // bytes and every byte above 0x7f.
      __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
      __m128i special = _mm_or_si128(
          _mm_or_si128(_mm_cmplt_epi8(w, _mm_set1_epi8(0x20)), _mm_cmpeq_epi8(w, _mm_set1_epi8(0x7f))),
          _mm_or_si128(_mm_cmpeq_epi8(w, _mm_set1_epi8('\\')), _mm_cmpeq_epi8(w, _mm_set1_epi8('\''))));
      auto mask = static_cast<unsigned>(_mm_movemask_epi8(special));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p), w);
      if (mask == 0) {
        p += 16;
        i += 16;
        continue;
      }
      size_t plain = static_cast<size_t>(std::countr_zero(mask));
      p += plain;
      i += plain;
    } else if (s.size() - i >= 8) {
#else
    if (s.size() - i >= 8) {
#endif
      // Copies the eight bytes (the output has room: each byte may take four) and keeps those
      // before the first that needs care; the lowest flag of the masks is exact.
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      uint64_t special =
          AnyBelow(w, 0x20) | AnyAbove(w, 0x7e) | AnyZero(w ^ (kOnes * '\\')) | AnyZero(w ^ (kOnes * '\''));
      std::memcpy(p, &w, 8);
      if (special == 0) {
        p += 8;
        i += 8;
        continue;
      }
      size_t plain = static_cast<size_t>(std::countr_zero(special)) / 8;
      p += plain;
      i += plain;
    }
    auto u = static_cast<uint8_t>(s[i]);
    if (kQuotePlain[u]) {
      *p++ = s[i++];
      continue;
    }
    if (u >= 0x80) {
      size_t n = Utf8Length(s, i);
      if (n > 0) {
        p = Put(p, s.substr(i, n));
        i += n;
        continue;
      }
    }
    *p++ = '\\';
    switch (u) {
      case '\\': *p++ = '\\'; break;
      case '\'': *p++ = '\''; break;
      case '\n': *p++ = 'n'; break;
      case '\r': *p++ = 'r'; break;
      case '\t': *p++ = 't'; break;
      case '\0': *p++ = '0'; break;
      default: {
        static constexpr char kHex[] = "0123456789abcdef";
        *p++ = 'x';
        *p++ = kHex[u >> 4];
        *p++ = kHex[u & 15];
      }
    }
    ++i;
  }
  *p++ = '\'';
  return p;
}

// AppendJsonString's output (at most 6 * size + 2 bytes).
char* PutJsonString(char* p, std::string_view s) {
  *p++ = '"';
  for (size_t i = 0; i < s.size(); ++i) {
#if defined(__SSE2__)
    if (s.size() - i >= 16) {
      // As below, sixteen bytes at a time (control bytes: 0 to 0x1f as signed bytes).
      __m128i w = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
      __m128i control =
          _mm_and_si128(_mm_cmplt_epi8(w, _mm_set1_epi8(0x20)), _mm_cmpgt_epi8(w, _mm_set1_epi8(-1)));
      __m128i special = _mm_or_si128(control, _mm_or_si128(_mm_cmpeq_epi8(w, _mm_set1_epi8('"')),
                                                           _mm_cmpeq_epi8(w, _mm_set1_epi8('\\'))));
      auto mask = static_cast<unsigned>(_mm_movemask_epi8(special));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p), w);
      if (mask == 0) {
        p += 16;
        i += 15;
        continue;
      }
      size_t plain = static_cast<size_t>(std::countr_zero(mask));
      p += plain;
      i += plain;
    } else if (s.size() - i >= 8) {
#else
    if (s.size() - i >= 8) {
#endif
      // As in PutQuoted (each byte may take six).
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      uint64_t special = AnyBelow(w, 0x20) | AnyZero(w ^ (kOnes * '"')) | AnyZero(w ^ (kOnes * '\\'));
      std::memcpy(p, &w, 8);
      if (special == 0) {
        p += 8;
        i += 7;
        continue;
      }
      size_t plain = static_cast<size_t>(std::countr_zero(special)) / 8;
      p += plain;
      i += plain;
    }
    char c = s[i];
    auto u = static_cast<uint8_t>(c);
    if (u >= 0x20 && c != '"' && c != '\\') {
      *p++ = c;
      continue;
    }
    *p++ = '\\';
    switch (c) {
      case '"': *p++ = '"'; break;
      case '\\': *p++ = '\\'; break;
      case '\b': *p++ = 'b'; break;
      case '\f': *p++ = 'f'; break;
      case '\n': *p++ = 'n'; break;
      case '\r': *p++ = 'r'; break;
      case '\t': *p++ = 't'; break;
      default: {
        static constexpr char kHex[] = "0123456789abcdef";
        p = Put(p, "u00");
        *p++ = kHex[u >> 4];
        *p++ = kHex[u & 15];
      }
    }
  }
  *p++ = '"';
  return p;
}

// StrValueTo's output: at most 4 * size + 2 bytes (text) or 6 * size + 10 (JSON).
char* PutStr(char* p, bool json, std::string_view v) {
  if (!json) return PutQuoted(p, v);
  if (IsUtf8(v)) return PutJsonString(p, v);
  p = Put(p, "{\"hex\":\"");
  p = PutHex(p, v);
  return Put(p, "\"}");
}

size_t StrBound(bool json, size_t size) {
  return json ? 6 * size + 10 : 4 * size + 2;
}

void Uuid(const std::array<uint8_t, 16>& sid, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[sid[i] >> 4]);
    out.push_back(kHex[sid[i] & 15]);
  }
}

std::string GtidSetText(const std::vector<GtidSetEntry>& sets) {
  std::string out;
  for (size_t i = 0; i < sets.size(); ++i) {
    if (i > 0) out.push_back(',');
    Uuid(sets[i].sid, out);
    if (!sets[i].tag.empty()) {
      out.push_back(':');
      out.append(sets[i].tag);
    }
    for (const auto& [start, end] : sets[i].intervals) {
      out.push_back(':');
      Num(start, out);
      if (end > start + 1) {
        out.push_back('-');
        Num(end - 1, out);
      }
    }
  }
  return out;
}

std::string SetText(uint64_t bits, const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < 64; ++i) {
    if (bits & (uint64_t{1} << i)) {
      if (!out.empty()) out.push_back(',');
      out.append(names[i]);
    }
  }
  return out;
}

std::string ColumnName(const TableMap* t, size_t i) {
  if (t && i < t->columns.size() && !t->columns[i].name.empty()) return t->columns[i].name;
  return "@" + std::to_string(i + 1);
}

std::string TypeText(const ColumnInfo& c) {
  std::string s(ColumnTypeName(c.real_type));
  switch (c.real_type) {
    case ColumnType::kNewDecimal:
      s += "(" + std::to_string(c.metadata >> 8) + "," + std::to_string(c.metadata & 0xff) + ")";
      break;
    case ColumnType::kVarchar:
    case ColumnType::kVarString:
    case ColumnType::kString:
    case ColumnType::kMariaVarcharCompressed: s += "(" + std::to_string(c.max_length) + ")"; break;
    case ColumnType::kBit:
      s += "(" + std::to_string((c.metadata >> 8) * 8 + (c.metadata & 0xff)) + ")";
      break;
    case ColumnType::kTimestamp2:
    case ColumnType::kDateTime2:
    case ColumnType::kTime2:
    case ColumnType::kFloat:
    case ColumnType::kDouble:
    case ColumnType::kBlob:
    case ColumnType::kGeometry:
    case ColumnType::kJson:
    case ColumnType::kVector:
    case ColumnType::kMariaBlobCompressed: s += "(" + std::to_string(c.metadata) + ")"; break;
    case ColumnType::kEnum:
    case ColumnType::kSet: s += "(" + std::to_string(c.metadata & 0xff) + ")"; break;
    default: break;
  }
  return s;
}

// A string value: quoted text, or a JSON string ({"hex": …} when it is not UTF-8).
void StrValueTo(bool json, std::string_view v, std::string& out) {
  if (json) {
    if (IsUtf8(v)) {
      AppendJsonString(v, out);
    } else {
      out.append("{\"hex\":\"");
      Hex(v, out);
      out.append("\"}");
    }
  } else {
    Quote(v, out);
  }
}

/// What rows events print again and again for one table, rendered once: the table name value
/// and each column's label (text: `name=`; JSON: `"name":`). Holds the map so that its address
/// keeps naming it.
struct TableLabels {
  /// What FastImage needs of one column, worked out once per table.
  struct Column {
    const ColumnInfo* info = nullptr;  ///< null when the map has no such column
    /// Room for the label, the separator and any value of the column but the text of strings,
    /// DECIMAL and JSON (which FastImage adds per value).
    size_t bound = 0;
    uint8_t label_size = 0;  ///< the label's length; above kLabelSlot: use `columns`
    std::array<char, 24> label{};
  };
  static constexpr size_t kLabelSlot = 24;
  std::shared_ptr<const TableMap> table;
  bool json = false;
  std::string name;
  std::vector<std::string> columns;
  std::vector<Column> plan;
};

class Printer {
 public:
  Printer(PrintFormat format, std::string& out) : json_(format == PrintFormat::kJson), out_(out) {}

  void Print(const Event& e, bool reassembled = false) {
    Begin(e);
    if (reassembled) Flag("reassembled");
    std::visit([&](const auto& body) { Body(e, body); }, e.body);
    End();
    if (const auto* p = std::get_if<TransactionPayloadEvent>(&e.body)) {
      for (const Event& inner : p->events) Print(inner);
    }
    if (const auto* p = std::get_if<PartialRowDataEvent>(&e.body)) {
      // The last fragment of a group carries the rows event joined from all of them.
      for (const Event& inner : p->events) Print(inner, /*reassembled=*/true);
    }
  }

 private:
  // --- generic field writers (text: " key=value"; JSON: ,"key":value)
  void Key(std::string_view k) {
    if (json_) {
      out_.append(",\"");
      out_.append(k);
      out_.append("\":");
    } else {
      out_.push_back(' ');
      out_.append(k);
      out_.push_back('=');
    }
  }
  template <typename T>
  void Field(std::string_view k, T v) {
    Key(k);
    Num(v, out_);
  }
  void Str(std::string_view k, std::string_view v) {
    Key(k);
    StrValue(v);
  }
  void StrValue(std::string_view v) { StrValueTo(json_, v, out_); }
  void Flag(std::string_view k) {
    if (json_) {
      Key(k);
      out_.append("true");
    } else {
      out_.push_back(' ');
      out_.append(k);
    }
  }
  void HexField(std::string_view k, uint64_t v) {
    Key(k);
    char buf[24];
    auto res = std::to_chars(buf, buf + sizeof buf, v, 16);
    if (json_) out_.push_back('"');
    out_.append("0x");
    out_.append(buf, res.ptr);
    if (json_) out_.push_back('"');
  }
  template <typename T>
  void Opt(std::string_view k, const std::optional<T>& v) {
    if (v) Field(k, *v);
  }

  void Begin(const Event& e) {
    if (json_) {
      out_.append("{\"file\":");
      AppendJsonString(e.file, out_);
      out_.append(",\"position\":");
      Num(e.position, out_);
      if (e.payload_index) Field("payload_index", *e.payload_index);
      out_.append(",\"type\":\"");
      TypeName(e);
      out_.push_back('"');
    } else {
      out_.append(e.file);
      out_.push_back(':');
      Num(e.position, out_);
      if (e.payload_index) {
        out_.push_back('#');
        Num(*e.payload_index, out_);
      }
      out_.push_back(' ');
      TypeName(e);
    }
    Field("ts", e.header.timestamp);
    Field("server_id", e.header.server_id);
    Field("size", e.header.event_size);
    Field("log_pos", e.header.log_pos);
    HexField("flags", e.header.flags);
    if (e.checksum_verified) Flag("crc_ok");
  }
  void End() { out_.append(json_ ? "}\n" : "\n"); }

  void TypeName(const Event& e) {
    std::string_view n = EventTypeName(e.header.type);
    out_.append(n);
    if (n == "UNKNOWN") {
      out_.push_back('_');
      Num(static_cast<int>(e.header.type), out_);
    }
  }

  // --- bodies
  void Body(const Event&, const OtherEvent& o) { Field("body_bytes", o.body.size()); }
  void Body(const Event&, const FormatDescriptionEvent& f) {
    Field("binlog_version", f.binlog_version);
    Str("server_version", f.server_version);
    Field("create_ts", f.create_timestamp);
    Field("header_length", static_cast<unsigned>(f.header_length));
    Str("checksum", f.checksum == ChecksumAlgorithm::kCrc32 ? "CRC32" : "NONE");
    Field("post_header_lengths", f.post_header_lengths.size());
    if (f.crc_matched_without_in_use_flag) Flag("crc_ok_without_in_use_flag");
  }
  void Body(const Event&, const StartV3Event& s) {
    Field("binlog_version", s.binlog_version);
    Str("server_version", s.server_version);
    Field("create_ts", s.create_timestamp);
  }
  void Body(const Event& e, const RotateEvent& r) {
    if (e.header.flags & kFlagArtificial) Flag("artificial");
    Str("next_file", r.next_file);
    Field("next_position", r.position);
  }
  void Body(const Event&, const QueryEvent& q) {
    Field("thread_id", q.thread_id);
    Field("exec_time", q.exec_time);
    Field("error_code", q.error_code);
    if (q.compressed) Flag("compressed");
    const QueryStatus& s = q.status;
    if (s.flags2) HexField("flags2", *s.flags2);
    if (s.sql_mode) HexField("sql_mode", *s.sql_mode);
    if (s.catalog) Str("catalog", *s.catalog);
    Opt("auto_increment_increment", s.auto_increment_increment);
    Opt("auto_increment_offset", s.auto_increment_offset);
    Opt("charset_client", s.client_charset);
    Opt("collation_connection", s.collation_connection);
    Opt("collation_server", s.collation_server);
    if (s.time_zone) Str("time_zone", *s.time_zone);
    Opt("lc_time_names", s.lc_time_names);
    Opt("collation_database", s.collation_database);
    Opt("table_map_for_update", s.table_map_for_update);
    Opt("master_data_written", s.master_data_written);
    if (s.invoker_user) Str("invoker_user", *s.invoker_user);
    if (s.invoker_host) Str("invoker_host", *s.invoker_host);
    for (auto db : s.updated_db_names) Str("updated_db", db);
    if (s.updated_db_names_over_max) Flag("updated_dbs_over_max");
    Opt("microseconds", s.microseconds);
    Opt("explicit_defaults_for_timestamp", s.explicit_defaults_for_timestamp);
    Opt("ddl_xid", s.ddl_xid);
    Opt("default_collation_for_utf8mb4", s.default_collation_for_utf8mb4);
    Opt("sql_require_primary_key", s.sql_require_primary_key);
    Opt("default_table_encryption", s.default_table_encryption);
    Opt("gtid_flags3", s.gtid_flags3);
    Opt("sa_seq_no", s.sa_seq_no);
    Opt("unknown_status_code", s.unknown_code);
    Str("db", q.database);
    Str("query", q.query);
  }
  void Body(const Event&, const XidEvent& x) { Field("xid", x.xid); }
  void Body(const Event&, const IntvarEvent& i) {
    Field("kind", static_cast<unsigned>(i.kind));
    Field("value", i.value);
  }
  void Body(const Event&, const RandEvent& r) {
    Field("seed1", r.seed1);
    Field("seed2", r.seed2);
  }
  void Body(const Event&, const UserVarEvent& u) {
    Str("name", u.name);
    if (u.is_null) {
      Flag("null");
      return;
    }
    Field("value_type", static_cast<unsigned>(u.value_type));
    Field("charset", u.charset);
    Key("value");
    if (json_) {
      out_.push_back('"');
      Hex(u.value, out_);
      out_.push_back('"');
    } else {
      out_.append("x'");
      Hex(u.value, out_);
      out_.push_back('\'');
    }
  }
  void TableName(const TableMap& t) {
    Key("table");
    StrValue(t.database + "." + t.table);
  }
  void Body(const Event&, const TableMapEvent& tm) {
    const TableMap& t = *tm.table;
    Field("table_id", t.table_id);
    TableName(t);
    Field("flags", t.flags);
    Key("columns");
    out_.push_back('[');
    for (size_t i = 0; i < t.columns.size(); ++i) {
      const ColumnInfo& c = t.columns[i];
      if (i > 0) out_.append(json_ ? "," : ", ");
      std::string desc = ColumnName(&t, i) + " " + TypeText(c);
      if (c.is_unsigned) desc += *c.is_unsigned ? " unsigned" : " signed";
      if (!c.nullable) desc += " not_null";
      if (c.charset) desc += " collation=" + std::to_string(*c.charset);
      if (c.geometry_type) desc += " geometry_type=" + std::to_string(*c.geometry_type);
      if (c.visible && !*c.visible) desc += " invisible";
      if (c.vector_dimensions) desc += " dimensions=" + std::to_string(*c.vector_dimensions);
      if (!c.enum_values.empty()) {
        desc += " values=(";
        for (size_t k = 0; k < c.enum_values.size(); ++k) {
          if (k > 0) desc += ",";
          std::string q;
          Quote(c.enum_values[k], q);
          desc += q;
        }
        desc += ")";
      }
      if (json_) {
        AppendJsonString(desc, out_);
      } else {
        out_.append(desc);
      }
    }
    out_.push_back(']');
    if (!t.primary_key.empty()) {
      Key("primary_key");
      out_.push_back('[');
      for (size_t i = 0; i < t.primary_key.size(); ++i) {
        if (i > 0) out_.push_back(',');
        Num(t.primary_key[i], out_);
        if (t.primary_key_prefix[i]) {
          out_.push_back(json_ ? '.' : '/');
          Num(t.primary_key_prefix[i], out_);
        }
      }
      out_.push_back(']');
    }
    Opt("default_collation", t.default_charset);
    Opt("enum_set_default_collation", t.enum_set_default_charset);
    if (!t.metadata_kinds.empty()) {
      Key("optional_metadata");
      out_.push_back('[');
      for (size_t i = 0; i < t.metadata_kinds.size(); ++i) {
        if (i > 0) out_.push_back(',');
        Num(static_cast<unsigned>(t.metadata_kinds[i]), out_);
      }
      out_.push_back(']');
    }
  }

  void ValueOut(const Value& v, const ColumnInfo* c) {
    switch (v.kind) {
      case ValueKind::kString:
        if (c && c->charset && *c->charset == kBinaryCollation) {
          if (json_) {
            out_.append("{\"hex\":\"");
            Hex(v.text, out_);
            out_.append("\"}");
          } else {
            out_.append("x'");
            Hex(v.text, out_);
            out_.push_back('\'');
          }
        } else {
          StrValue(v.text);
        }
        return;
      case ValueKind::kGeometry:
        if (json_) {
          out_.append("{\"hex\":\"");
          Hex(v.text, out_);
          out_.append("\"}");
        } else {
          out_.append("x'");
          Hex(v.text, out_);
          out_.push_back('\'');
        }
        return;
      case ValueKind::kJson:
      case ValueKind::kJsonDiff:
        if (!json_ && v.kind == ValueKind::kJsonDiff) out_.append("diff:");
        if (json_ && v.kind == ValueKind::kJsonDiff) {
          out_.append("{\"json_diff\":");
          out_.append(v.text);
          out_.push_back('}');
        } else if (json_) {
          out_.append(v.text);
        } else {
          Quote(v.text, out_);
        }
        return;
      case ValueKind::kEnum:
        if (c && v.u >= 1 && v.u <= c->enum_values.size()) {
          if (!json_) {
            Num(v.u, out_);
            out_.push_back('(');
          }
          StrValue(c->enum_values[v.u - 1]);
          if (!json_) out_.push_back(')');
          return;
        }
        Num(v.u, out_);
        return;
      case ValueKind::kSet:
        if (c && !c->enum_values.empty()) {
          if (!json_) {
            Num(v.u, out_);
            out_.push_back('(');
          }
          StrValue(SetText(v.u, c->enum_values));
          if (!json_) out_.push_back(')');
          return;
        }
        Num(v.u, out_);
        return;
      case ValueKind::kNull: out_.append(json_ ? "null" : "NULL"); return;
      case ValueKind::kDecimal:
        if (json_) {
          AppendJsonString(v.text, out_);
        } else {
          out_.append(v.text);
        }
        return;
      case ValueKind::kYear:
      case ValueKind::kDate:
      case ValueKind::kTime:
      case ValueKind::kDateTime:
      case ValueKind::kTimestamp: {
        // Digits, '-', ':', ' ' and '.': nothing to escape in either format.
        bool quoted = json_ || v.kind != ValueKind::kYear;
        char quote = json_ ? '"' : '\'';
        if (quoted) out_.push_back(quote);
        AppendValueText(v, out_);
        if (quoted) out_.push_back(quote);
        return;
      }
      default: AppendValueText(v, out_); return;
    }
  }

  /// The labels of `table`, from the cache when the previous rows event had the same map.
  TableLabels& Labels(const std::shared_ptr<const TableMap>& table) {
    static thread_local TableLabels cache;
    if (cache.table != table || cache.json != json_ || !cache.table) {
      cache.table = table;
      cache.json = json_;
      cache.columns.clear();
      cache.plan.clear();
      cache.name.clear();
      if (table) StrValueTo(json_, table->database + "." + table->table, cache.name);
    }
    return cache;
  }
  /// `name=` or `"name":` of column `i`.
  static std::string_view ColumnLabel(TableLabels& labels, size_t i) {
    if (i < labels.columns.size()) return labels.columns[i];
    return NewColumnLabel(labels, i);
  }
  static std::string_view NewColumnLabel(TableLabels& labels, size_t i) {
    const TableMap* t = labels.table.get();
    while (labels.columns.size() <= i) {
      std::string name = ColumnName(t, labels.columns.size());
      std::string label;
      if (labels.json) {
        AppendJsonString(name, label);
        label.push_back(':');
      } else {
        label = std::move(name);
        label.push_back('=');
      }
      labels.columns.push_back(std::move(label));
    }
    return labels.columns[i];
  }

  /// ValueOut into memory with room for it (see FastImage), for all kinds but SET and VECTOR.
  char* PutValue(char* p, const Value& v, const ColumnInfo* c) const {
    switch (v.kind) {
      case ValueKind::kString:
        if (c && c->charset && *c->charset == kBinaryCollation) {
          p = Put(p, json_ ? "{\"hex\":\"" : "x'");
          p = PutHex(p, v.text);
          return Put(p, json_ ? "\"}" : "'");
        }
        return PutStr(p, json_, v.text);
      case ValueKind::kGeometry:
        p = Put(p, json_ ? "{\"hex\":\"" : "x'");
        p = PutHex(p, v.text);
        return Put(p, json_ ? "\"}" : "'");
      case ValueKind::kJson:
      case ValueKind::kJsonDiff:
        if (json_) {
          if (v.kind == ValueKind::kJsonDiff) {
            p = Put(p, "{\"json_diff\":");
            p = Put(p, v.text);
            *p++ = '}';
            return p;
          }
          return Put(p, v.text);
        }
        if (v.kind == ValueKind::kJsonDiff) p = Put(p, "diff:");
        return PutQuoted(p, v.text);
      case ValueKind::kDecimal: return json_ ? PutJsonString(p, v.text) : Put(p, v.text);
      case ValueKind::kEnum:
        if (c && v.u >= 1 && v.u <= c->enum_values.size()) {
          if (json_) return PutStr(p, true, c->enum_values[v.u - 1]);
          p = WriteFixedValueText(v, p);
          *p++ = '(';
          p = PutQuoted(p, c->enum_values[v.u - 1]);
          *p++ = ')';
          return p;
        }
        return WriteFixedValueText(v, p);
      case ValueKind::kNull: return json_ ? Put(p, "null") : Put(p, "NULL");
      case ValueKind::kYear:
      case ValueKind::kDate:
      case ValueKind::kTime:
      case ValueKind::kDateTime:
      case ValueKind::kTimestamp: {
        // Digits, '-', ':', ' ' and '.': nothing to escape in either format.
        bool quoted = json_ || v.kind != ValueKind::kYear;
        char quote = json_ ? '"' : '\'';
        if (quoted) *p++ = quote;
        p = WriteFixedValueText(v, p);
        if (quoted) *p++ = quote;
        return p;
      }
      default: return WriteFixedValueText(v, p);
    }
  }

  /// The plan of the first `n` columns of `labels`' table.
  static void Plan(TableLabels& labels, size_t n, bool json) {
    const TableMap* t = labels.table.get();
    if (n > 0) ColumnLabel(labels, n - 1);
    while (labels.plan.size() < n) {
      size_t i = labels.plan.size();
      TableLabels::Column c;
      c.info = t && i < t->columns.size() ? &t->columns[i] : nullptr;
      const std::string& label = labels.columns[i];
      c.label_size = static_cast<uint8_t>(std::min<size_t>(label.size(), TableLabels::kLabelSlot + 1));
      std::memcpy(c.label.data(), label.data(), std::min(label.size(), TableLabels::kLabelSlot));
      size_t enum_bound = 0;
      if (c.info) {
        for (const std::string& e : c.info->enum_values)
          enum_bound = std::max(enum_bound, StrBound(json, e.size()));
      }
      c.bound =
          std::max(label.size(), TableLabels::kLabelSlot) + 1 + kMaxFixedValueText + 2 + enum_bound + 16;
      labels.plan.push_back(c);
    }
  }

  /// Image() in one piece when every value has a bound; false (nothing written) otherwise.
  bool FastImage(std::string_view label, RowImage image, TableLabels& labels, size_t& end) {
    if (labels.plan.size() < image.size()) Plan(labels, image.size(), json_);
    const TableLabels::Column* plan = labels.plan.data();
    // Strings, DECIMAL and JSON take at most six bytes per byte of text (JSON escapes), on top
    // of the column's bound.
    size_t text = 0;
    size_t bound = label.size() + 8;
    for (size_t i = 0; i < image.size(); ++i) {
      const Value& v = image[i];
      if (v.kind == ValueKind::kSet || v.kind == ValueKind::kVector) return false;
      text += v.text.size();
      bound += plan[i].bound;
    }
    bound += 6 * text;
    char* const start = Room(end, bound);
    char* p = start;
    if (json_) *p++ = '"';
    p = Put(p, label);
    p = Put(p, json_ ? "\":{" : "={");
    const char separator = json_ ? ',' : ' ';
    bool first = true;
    for (size_t i = 0; i < image.size(); ++i) {
      const Value& v = image[i];
      if (v.is_absent()) continue;
      if (!first) *p++ = separator;
      first = false;
      const TableLabels::Column& c = plan[i];
      if (c.label_size <= TableLabels::kLabelSlot) {
        // The whole slot: the room is there, and a fixed-size copy is a pair of moves.
        std::memcpy(p, c.label.data(), TableLabels::kLabelSlot);
        p += c.label_size;
      } else {
        p = Put(p, labels.columns[i]);
      }
      switch (v.kind) {
        case ValueKind::kInt: p = PutInt(p, v.i); break;
        case ValueKind::kUint: p = PutUint(p, v.u); break;
        default: p = PutValue(p, v, c.info);
      }
    }
    *p++ = '}';
    assert(p <= start + bound);
    end += static_cast<size_t>(p - start);
    return true;
  }

  /// `n` bytes of room at `end` (the end of what is written) in out_. Rows print this way: the
  /// room one row image did not use serves the next, so out_'s zero-filling of new room costs
  /// about one pass over the output (rather than one over each image's bound), and out_ is cut
  /// back to `end` when the rows are done.
  char* Room(size_t end, size_t n) {
    if (out_.size() - end < n) out_.resize(end + n);
    return out_.data() + end;
  }

  /// Writes `s` at `end`, which moves past it.
  void Raw(size_t& end, std::string_view s) {
    std::memcpy(Room(end, s.size()), s.data(), s.size());
    end += s.size();
  }

  void Image(std::string_view label, RowImage image, TableLabels& labels, size_t& end) {
    if (FastImage(label, image, labels, end)) return;
    out_.resize(end);
    const TableMap* t = labels.table.get();
    if (json_) {
      out_.push_back('"');
      out_.append(label);
      out_.append("\":{");
    } else {
      out_.append(label);
      out_.append("={");
    }
    bool first = true;
    for (size_t i = 0; i < image.size(); ++i) {
      const Value& v = image[i];
      if (v.is_absent()) continue;
      if (!first) out_.append(json_ ? "," : " ");
      first = false;
      out_.append(ColumnLabel(labels, i));
      ValueOut(v, t && i < t->columns.size() ? &t->columns[i] : nullptr);
    }
    out_.push_back('}');
    end = out_.size();
  }

  void Body(const Event&, const RowsEvent& r) {
    TableLabels& labels = Labels(r.table);
    Field("table_id", r.table_id);
    if (r.table) {
      Key("table");
      out_.append(labels.name);
    }
    HexField("rows_flags", r.flags);
    Field("version", static_cast<unsigned>(r.version));
    if (r.compressed) Flag("compressed");
    if (r.skipped) Flag("rows_not_decoded");
    if (!r.extra_data.empty()) Field("extra_data_bytes", r.extra_data.size());
    Opt("partition_id", r.partition_id);
    Opt("source_partition_id", r.source_partition_id);
    if (r.partial_before_image) Flag("partial_before_image");
    if (r.partial_after_image) Flag("partial_after_image");
    Field("rows", r.rows.size());
    size_t end = out_.size();
    if (json_) {
      Raw(end, ",\"changes\":[");
      for (size_t i = 0; i < r.rows.size(); ++i) {
        Raw(end, i > 0 ? ",{" : "{");
        bool any = false;
        if (!r.rows[i].before.empty()) {
          Image("before", r.rows[i].before, labels, end);
          any = true;
        }
        if (!r.rows[i].after.empty()) {
          if (any) Raw(end, ",");
          Image("after", r.rows[i].after, labels, end);
        }
        Raw(end, "}");
      }
      Raw(end, "]");
      out_.resize(end);
      return;
    }
    for (size_t i = 0; i < r.rows.size(); ++i) {
      char* p = Room(end, 32);
      char* q = Put(p, " row");
      q = std::to_chars(q, q + 24, i).ptr;
      *q++ = ':';
      end += static_cast<size_t>(q - p);
      if (!r.rows[i].before.empty()) Image("before", r.rows[i].before, labels, end);
      if (!r.rows[i].after.empty()) {
        if (!r.rows[i].before.empty()) Raw(end, " ");
        Image("after", r.rows[i].after, labels, end);
      }
    }
    out_.resize(end);
  }
  void Body(const Event&, const GtidEvent& g) {
    std::string gtid;
    Uuid(g.sid, gtid);
    if (!g.tag.empty()) gtid += ":" + g.tag;
    gtid += ":" + std::to_string(g.gno);
    if (g.anonymous) Flag("anonymous");
    Str("gtid", gtid);
    Field("gtid_flags", static_cast<unsigned>(g.flags));
    Opt("last_committed", g.last_committed);
    Opt("sequence_number", g.sequence_number);
    Opt("immediate_commit_ts", g.immediate_commit_timestamp);
    Opt("original_commit_ts", g.original_commit_timestamp);
    Opt("transaction_length", g.transaction_length);
    Opt("immediate_server_version", g.immediate_server_version);
    Opt("original_server_version", g.original_server_version);
    Opt("commit_group_ticket", g.commit_group_ticket);
  }
  void Body(const Event&, const PreviousGtidsEvent& p) { Str("gtid_set", GtidSetText(p.sets)); }
  void Body(const Event&, const TransactionPayloadEvent& p) {
    Str("compression", p.compression_type == 0 ? "zstd" : p.compression_type == 255 ? "none" : "other");
    Field("payload_size", p.payload_size);
    Field("uncompressed_size", p.uncompressed_size);
    Field("events", p.events.size());
  }
  void Body(const Event&, const PartialRowDataEvent& p) {
    Field("fragment", p.sequence);
    Field("fragments", p.total);
    if (p.flags & ~kPartialRowsFlagOrigEventSize) HexField("fragment_flags", p.flags);
    Opt("original_size", p.original_size);
    Field("chunk_bytes", p.chunk_size);
  }
  void Body(const Event&, const RowsQueryEvent& q) { Str("query", q.query); }
  void Body(const Event&, const HeartbeatEvent& h) {
    Field("heartbeat_version", static_cast<unsigned>(h.version));
    Str("log_file", h.log_file);
    Opt("log_position", h.log_position);
  }
  void Body(const Event&, const IncidentEvent& i) {
    Field("incident", i.incident);
    Str("message", i.message);
  }
  void Body(const Event&, const XaPrepareEvent& x) {
    if (x.one_phase) Flag("one_phase");
    Field("format_id", x.format_id);
    Str("gtrid", x.gtrid);
    Str("bqual", x.bqual);
  }
  void Body(const Event&, const StopEvent&) {}
  void Body(const Event& e, const MariaGtidEvent& g) {
    Str("gtid", std::to_string(g.domain_id) + "-" + std::to_string(e.header.server_id) + "-" +
                    std::to_string(g.seq_no));
    HexField("flags2", g.flags2);
    Opt("commit_id", g.commit_id);
    if (g.xa_format_id) {
      Field("xa_format_id", *g.xa_format_id);
      Str("xa_gtrid", g.xa_gtrid);
      Str("xa_bqual", g.xa_bqual);
    }
    if (g.flags_extra) HexField("flags_extra", *g.flags_extra);
    if (g.extra_engines) Field("extra_engines", static_cast<unsigned>(*g.extra_engines));
    Opt("sa_seq_no", g.sa_seq_no);
    Opt("thread_id", g.thread_id);
  }
  void Body(const Event&, const MariaGtidListEvent& l) {
    std::string s;
    for (size_t i = 0; i < l.gtids.size(); ++i) {
      if (i > 0) s += ",";
      s += std::to_string(l.gtids[i].domain_id) + "-" + std::to_string(l.gtids[i].server_id) + "-" +
           std::to_string(l.gtids[i].seq_no);
    }
    Str("gtid_list", s);
    if (l.flags) Field("list_flags", static_cast<unsigned>(l.flags));
  }
  void Body(const Event&, const BinlogCheckpointEvent& c) { Str("checkpoint_file", c.file); }
  void Body(const Event&, const AnnotateRowsEvent& a) { Str("query", a.query); }
  void Body(const Event&, const StartEncryptionEvent& s) {
    Field("scheme", static_cast<unsigned>(s.scheme));
    Field("key_version", s.key_version);
  }

  bool json_;
  std::string& out_;
};

}  // namespace

void AppendEvent(const Event& event, PrintFormat format, std::string& out) {
  Printer(format, out).Print(event);
}

}  // namespace chsync::binlog
