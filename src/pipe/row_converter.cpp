#include "pipe/row_converter.h"

#include <iconv.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "clickhouse/ddl.h"
#include "common/log.h"

namespace chsync::pipe {

using clickhouse::Cell;

namespace {

/// A MySQL character set and the glibc iconv name whose mapping is closest to the server's.
struct CharsetName {
  std::string_view mysql;
  std::string_view iconv;
  /// Every byte is one character (a 256-entry table is built).
  bool single_byte;
};

constexpr CharsetName kCharsets[] = {
    {"latin1", "CP1252", true},  // MySQL's latin1 is cp1252 with 0x81, 0x8D, 0x8F, 0x90, 0x9D as C1 controls
    {"latin2", "ISO-8859-2", true},
    {"latin5", "ISO-8859-9", true},
    {"latin7", "ISO-8859-13", true},
    {"cp1250", "CP1250", true},
    {"cp1251", "CP1251", true},
    {"cp1256", "CP1256", true},
    {"cp1257", "CP1257", true},
    {"greek", "ISO-8859-7", true},
    {"hebrew", "ISO-8859-8", true},
    {"koi8r", "KOI8-R", true},
    {"koi8u", "KOI8-U", true},
    {"tis620", "TIS-620", true},
    {"cp850", "CP850", true},
    {"cp852", "CP852", true},
    {"cp866", "CP866", true},
    {"macroman", "MACINTOSH", true},
    {"macce", "MAC-CENTRALEUROPE", true},
    {"hp8", "HP-ROMAN8", true},
    {"dec8", "DEC-MCS", true},
    {"armscii8", "ARMSCII-8", true},
    {"ascii", "ASCII", true},
    {"gbk", "GBK", false},
    {"gb2312", "EUC-CN", false},
    {"gb18030", "GB18030", false},
    {"big5", "BIG5", false},
    {"sjis", "CP932", false},  // plus the 7 JIS X 0208 differences (kJisFixes)
    {"cp932", "CP932", false},
    {"ujis", "EUC-JP-MS", false},  // plus kJisFixes
    {"eucjpms", "EUC-JP-MS", false},
    {"euckr", "CP949", false},  // MySQL's euckr includes the CP949 extension
    {"ucs2", "UCS-2BE", false},
    {"utf16", "UTF-16BE", false},
    {"utf16le", "UTF-16LE", false},
    {"utf32", "UTF-32BE", false},
};

/// Bytes where MySQL's single-byte tables differ from glibc's (found by converting every byte
/// with MariaDB 10.11 and with iconv); 0 stands for a byte the server converts to '?'.
struct ByteFix {
  std::string_view charset;
  uint8_t byte;
  char32_t code_point;
};

constexpr ByteFix kByteFixes[] = {
    {"latin1", 0x81, 0x81},     {"latin1", 0x8D, 0x8D},     {"latin1", 0x8F, 0x8F},
    {"latin1", 0x90, 0x90},     {"latin1", 0x9D, 0x9D},     {"cp1256", 0x8A, 0},
    {"cp1256", 0x8F, 0},        {"cp1256", 0x98, 0},        {"cp1256", 0x9A, 0},
    {"cp1256", 0x9F, 0},        {"cp1256", 0xAA, 0},        {"cp1256", 0xC0, 0},
    {"cp1256", 0xFF, 0},        {"greek", 0xA1, 0x02BD},    {"greek", 0xA2, 0x02BC},
    {"greek", 0xA4, 0},         {"greek", 0xA5, 0},         {"greek", 0xAA, 0},
    {"hebrew", 0xAF, 0x203E},   {"koi8u", 0x95, 0x2022},    {"cp866", 0xFC, 0x207F},
    {"cp866", 0xFD, 0x00B2},    {"macroman", 0xC6, 0x2206}, {"macroman", 0xF0, 0xF8FF},
    {"dec8", 0xA0, 0x00A0},     {"armscii8", 0xA1, 0x2741}, {"armscii8", 0xA2, 0x00A7},
    {"armscii8", 0xAD, 0x055F}, {"armscii8", 0xFE, 0x2019}, {"armscii8", 0xFF, 0x0027},
};

/// MySQL's sjis and ujis map these JIS X 0208 characters as JIS does, glibc's CP932 and
/// EUC-JP-MS as Microsoft does: the converted text is mapped back, code point for code point.
constexpr std::pair<char32_t, char32_t> kJisFixes[] = {
    {0xFF3C, 0x005C}, {0xFF5E, 0x301C}, {0x2225, 0x2016}, {0xFF0D, 0x2212},
    {0xFFE0, 0x00A2}, {0xFFE1, 0x00A3}, {0xFFE2, 0x00AC},
};

void AppendUtf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

const CharsetName* FindCharset(std::string_view charset) {
  for (const CharsetName& c : kCharsets) {
    if (c.mysql == charset) return &c;
  }
  return nullptr;
}

bool IsUtf8Charset(std::string_view charset) {
  return charset == "utf8mb4" || charset == "utf8mb3" || charset == "utf8" || charset == "binary" ||
         charset.empty();
}

/// iconv_open's failure value, (iconv_t)-1.
bool IsIconvError(iconv_t cd) {
  return reinterpret_cast<intptr_t>(cd) == -1;
}

bool AllAscii(std::string_view bytes) {
  for (char c : bytes) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

/// Runs iconv over `in`, appending UTF-8 to `out`. A byte that does not start a valid character
/// (or an incomplete one at the end) becomes '?' and conversion goes on at the next byte, as the
/// server does when it converts a stored string for a SELECT.
void IconvAppend(iconv_t cd, std::string_view in, std::string& out) {
  char* src = const_cast<char*>(in.data());  // iconv's signature; it does not write the input
  size_t src_left = in.size();
  while (src_left > 0) {
    const size_t start = out.size();
    const size_t room = src_left * 4 + 16;
    out.resize(start + room);
    char* dst = out.data() + start;
    size_t dst_left = room;
    size_t rc = iconv(cd, &src, &src_left, &dst, &dst_left);
    out.resize(start + (room - dst_left));
    if (rc != static_cast<size_t>(-1)) break;
    if (errno == E2BIG) continue;
    // EILSEQ or EINVAL: one replacement character per byte that does not convert.
    out.push_back('?');
    ++src;
    --src_left;
    iconv(cd, nullptr, nullptr, nullptr, nullptr);
  }
  iconv(cd, nullptr, nullptr, nullptr, nullptr);
}

/// UTF-8 of each byte of a single-byte character set, built once per character set.
struct ByteTable {
  std::array<std::array<char, 4>, 256> utf8{};
  std::array<uint8_t, 256> size{};
};

std::shared_ptr<const ByteTable> BuildByteTable(const CharsetName& name) {
  iconv_t cd = iconv_open("UTF-8", std::string(name.iconv).c_str());
  if (IsIconvError(cd)) return nullptr;
  auto table = std::make_shared<ByteTable>();
  std::string out;
  for (int b = 0; b < 256; ++b) {
    out.clear();
    char byte = static_cast<char>(b);
    IconvAppend(cd, std::string_view(&byte, 1), out);
    for (const ByteFix& fix : kByteFixes) {
      if (fix.charset == name.mysql && fix.byte == b) {
        out.clear();
        AppendUtf8(fix.code_point == 0 ? U'?' : fix.code_point, out);
      }
    }
    if (name.mysql == "tis620") {
      // MySQL's tis620 keeps 0x80–0x9F as C1 controls and shows its unassigned bytes as U+FFFD.
      if (b >= 0x80 && b <= 0x9F) {
        out.clear();
        AppendUtf8(static_cast<char32_t>(b), out);
      } else if (b == 0xA0 || (b >= 0xDB && b <= 0xDE) || b >= 0xFC) {
        out.clear();
        AppendUtf8(0xFFFD, out);
      }
    }
    if (out.empty() || out.size() > 4) out = "?";
    table->size[b] = static_cast<uint8_t>(out.size());
    for (size_t k = 0; k < out.size(); ++k) table->utf8[b][k] = out[k];
  }
  iconv_close(cd);
  return table;
}

/// The shared table of a single-byte character set (built on first use, thread-safe).
std::shared_ptr<const ByteTable> ByteTableFor(const CharsetName& name) {
  static std::mutex mutex;
  static std::map<std::string_view, std::shared_ptr<const ByteTable>> tables;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = tables.find(name.mysql);
  if (it != tables.end()) return it->second;
  std::shared_ptr<const ByteTable> table = BuildByteTable(name);
  tables.emplace(name.mysql, table);
  return table;
}

}  // namespace

/// Converts strings of one MySQL character set to UTF-8: a byte table for single-byte sets, an
/// iconv descriptor (owned, not shared: iconv keeps state) for the others.
class CharsetConverter {
 public:
  /// nullptr when the character set is unknown or iconv lacks it.
  static std::unique_ptr<CharsetConverter> Create(std::string_view charset) {
    const CharsetName* name = FindCharset(charset);
    if (name == nullptr) return nullptr;
    auto c = std::unique_ptr<CharsetConverter>(new CharsetConverter());
    c->charset_ = std::string(charset);
    if (name->single_byte) {
      c->table_ = ByteTableFor(*name);
      if (c->table_ == nullptr) return nullptr;
      return c;
    }
    iconv_t cd = iconv_open("UTF-8", std::string(name->iconv).c_str());
    if (IsIconvError(cd)) return nullptr;
    c->cd_ = cd;
    c->ascii_compatible_ =
        !charset.starts_with("ucs2") && !charset.starts_with("utf16") && charset != "utf32";
    c->jis_fixes_ = charset == "sjis" || charset == "ujis";
    return c;
  }

  ~CharsetConverter() {
    if (cd_ != nullptr) iconv_close(cd_);
  }
  CharsetConverter(const CharsetConverter&) = delete;
  CharsetConverter& operator=(const CharsetConverter&) = delete;

  const std::string& charset() const { return charset_; }

  /// UTF-8 of `in`: `in` itself when it is ASCII in an ASCII-compatible set, else written to
  /// `scratch` (its capacity is reused).
  std::string_view Convert(std::string_view in, std::string& scratch) {
    if (ascii_compatible_ && AllAscii(in)) return in;
    scratch.clear();
    if (table_ != nullptr) {
      for (char ch : in) {
        auto b = static_cast<unsigned char>(ch);
        scratch.append(table_->utf8[b].data(), table_->size[b]);
      }
      return scratch;
    }
    IconvAppend(cd_, in, scratch);
    if (jis_fixes_) ApplyJisFixes(scratch);
    return scratch;
  }

 private:
  CharsetConverter() = default;

  /// Replaces the Microsoft code points of kJisFixes in UTF-8 `text` with the JIS ones.
  static void ApplyJisFixes(std::string& text) {
    std::string fixed;
    size_t copied = 0;
    for (size_t i = 0; i + 2 < text.size(); ++i) {
      auto b0 = static_cast<unsigned char>(text[i]);
      if ((b0 & 0xF0) != 0xE0) continue;
      char32_t cp = ((b0 & 0x0F) << 12) | ((static_cast<unsigned char>(text[i + 1]) & 0x3F) << 6) |
                    (static_cast<unsigned char>(text[i + 2]) & 0x3F);
      for (const auto& [from, to] : kJisFixes) {
        if (cp != from) continue;
        fixed.append(text, copied, i - copied);
        AppendUtf8(to, fixed);
        copied = i + 3;
        break;
      }
      i += 2;
    }
    if (copied == 0) return;
    fixed.append(text, copied, std::string::npos);
    text = std::move(fixed);
  }

  std::string charset_;
  std::shared_ptr<const ByteTable> table_;
  iconv_t cd_ = nullptr;
  bool ascii_compatible_ = true;
  bool jis_fixes_ = false;
};

std::string_view IconvNameOf(std::string_view charset) {
  const CharsetName* name = FindCharset(charset);
  return name == nullptr ? std::string_view() : name->iconv;
}

std::string ConvertToUtf8(std::string_view charset, std::string_view bytes) {
  std::unique_ptr<CharsetConverter> c = CharsetConverter::Create(charset);
  if (c == nullptr) return std::string(bytes);
  std::string scratch;
  return std::string(c->Convert(bytes, scratch));
}

RowConverter::RowConverter(schema::TableSchema table, std::vector<clickhouse::MappedType> types)
    : table_(std::move(table)), types_(std::move(types)), fixes_(types_.size()), scratch_(types_.size()) {}

RowConverter::RowConverter(RowConverter&&) noexcept = default;
RowConverter& RowConverter::operator=(RowConverter&&) noexcept = default;
RowConverter::~RowConverter() = default;

Result<RowConverter> RowConverter::Create(const schema::TableSchema& table,
                                          std::vector<clickhouse::MappedType> types) {
  if (types.size() != table.columns.size()) {
    return Error(ErrorKind::kInternal, "RowConverter for " + table.QualifiedName() + ": " +
                                           std::to_string(types.size()) + " types for " +
                                           std::to_string(table.columns.size()) + " columns");
  }
  RowConverter converter(table, std::move(types));
  for (size_t i = 0; i < table.columns.size(); ++i) {
    const schema::Column& column = table.columns[i];
    ColumnFix& fix = converter.fixes_[i];
    switch (column.type) {
      case schema::ColumnType::kBinary: fix.pad_to = column.length.value_or(1); break;
      case schema::ColumnType::kUuid:
      case schema::ColumnType::kInet6: fix.pad_to = 16; break;
      case schema::ColumnType::kInet4: fix.pad_to = 4; break;
      case schema::ColumnType::kChar: fix.strip_spaces = true; break;
      case schema::ColumnType::kTinyInt: fix.int_bits = 8; break;
      case schema::ColumnType::kSmallInt: fix.int_bits = 16; break;
      case schema::ColumnType::kMediumInt: fix.int_bits = 24; break;
      case schema::ColumnType::kInt: fix.int_bits = 32; break;
      case schema::ColumnType::kBigInt: fix.int_bits = 64; break;
      default: break;
    }
    fix.is_unsigned = column.is_unsigned;
    const bool textual = schema::IsCharacterType(column.type) && column.type != schema::ColumnType::kEnum &&
                         column.type != schema::ColumnType::kSet;
    if (!textual || IsUtf8Charset(column.charset)) continue;
    for (const auto& existing : converter.converters_) {
      if (existing->charset() == column.charset) fix.charset = existing.get();
    }
    if (fix.charset != nullptr) continue;
    std::unique_ptr<CharsetConverter> created = CharsetConverter::Create(column.charset);
    if (created == nullptr) {
      log::Warn(
          "column {} of {} is in character set {}, which chsync cannot convert to UTF-8: its values are "
          "copied as they are, the snapshot's (converted by the server) may differ from the stream's",
          column.name, table.QualifiedName(), column.charset);
      continue;
    }
    fix.charset = created.get();
    converter.converters_.push_back(std::move(created));
  }
  return converter;
}

std::string_view RowConverter::FixBinlogBytes(size_t i, std::string_view bytes) {
  const ColumnFix& fix = fixes_[i];
  if (fix.charset != nullptr) bytes = fix.charset->Convert(bytes, scratch_[i]);
  if (fix.strip_spaces) {
    while (!bytes.empty() && bytes.back() == ' ') bytes.remove_suffix(1);
  }
  if (bytes.size() < fix.pad_to) {
    std::string& s = scratch_[i];
    if (bytes.data() == s.data()) {
      s.resize(bytes.size());
    } else {
      s.assign(bytes);
    }
    s.resize(fix.pad_to, '\0');
    bytes = s;
  }
  return bytes;
}

Status RowConverter::Convert(std::span<const binlog::Value> values, ValueOrigin origin,
                             std::vector<Cell>& cells) {
  if (values.size() != types_.size()) {
    return Error(ErrorKind::kInternal, "row of " + std::to_string(values.size()) + " values for the " +
                                           std::to_string(types_.size()) + " columns of " +
                                           table_.QualifiedName());
  }
  cells.clear();
  for (size_t i = 0; i < values.size(); ++i) {
    const binlog::Value& v = values[i];
    switch (v.kind) {
      case binlog::ValueKind::kAbsent:
        return Error(ErrorKind::kUnsupported,
                     "column " + table_.columns[i].name + " of " + table_.QualifiedName() +
                         " is missing from the row image (a session with binlog_row_image=MINIMAL or "
                         "NOBLOB: SET SESSION overrides the server's setting), and chsync never applies a "
                         "partial row as if it were whole: set binlog_row_image=FULL for every session");
      case binlog::ValueKind::kNull: cells.emplace_back(clickhouse::NullCell{}); break;
      case binlog::ValueKind::kInt:
        if (fixes_[i].is_unsigned && fixes_[i].int_bits != 0) {
          // The stored bits of an unsigned column read as signed: take them back.
          const unsigned bits = fixes_[i].int_bits;
          const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
          cells.emplace_back(static_cast<uint64_t>(v.i) & mask);
        } else {
          cells.emplace_back(v.i);
        }
        break;
      case binlog::ValueKind::kUint:
        if (!fixes_[i].is_unsigned && fixes_[i].int_bits != 0) {
          // The bits of a signed column read as unsigned: sign-extend from the column's width.
          const unsigned shift = 64 - fixes_[i].int_bits;
          cells.emplace_back(static_cast<int64_t>(v.u << shift) >> shift);
        } else {
          cells.emplace_back(v.u);
        }
        break;
      case binlog::ValueKind::kYear:
      case binlog::ValueKind::kBit:
      case binlog::ValueKind::kEnum:
      case binlog::ValueKind::kSet: cells.emplace_back(v.u); break;
      case binlog::ValueKind::kFloat: cells.emplace_back(static_cast<double>(v.f)); break;
      case binlog::ValueKind::kDouble: cells.emplace_back(v.d); break;
      case binlog::ValueKind::kDecimal: cells.emplace_back(clickhouse::DecimalCell{v.text}); break;
      case binlog::ValueKind::kDate:
        cells.emplace_back(clickhouse::DateCell{v.date.year, v.date.month, v.date.day});
        break;
      case binlog::ValueKind::kDateTime:
        cells.emplace_back(clickhouse::DateTimeCell{v.datetime.year, v.datetime.month, v.datetime.day,
                                                    v.datetime.hour, v.datetime.minute, v.datetime.second,
                                                    v.datetime.microsecond});
        break;
      case binlog::ValueKind::kTimestamp:
        cells.emplace_back(clickhouse::EpochCell{v.timestamp.seconds, v.timestamp.microsecond});
        break;
      case binlog::ValueKind::kTime:
        cells.emplace_back(clickhouse::TimeCell{v.time.negative, v.time.hour, v.time.minute, v.time.second,
                                                v.time.microsecond});
        break;
      case binlog::ValueKind::kString:
        cells.emplace_back(origin == ValueOrigin::kBinlog ? FixBinlogBytes(i, v.text) : v.text);
        break;
      case binlog::ValueKind::kJson:
      case binlog::ValueKind::kGeometry:
      case binlog::ValueKind::kVector: cells.emplace_back(v.text); break;
      case binlog::ValueKind::kJsonDiff:
        return Error(ErrorKind::kUnsupported,
                     "column " + table_.columns[i].name + " of " + table_.QualifiedName() +
                         " arrived as a partial JSON update: set binlog_row_value_options='' on the source");
    }
  }
  return Status::Ok();
}

mysql::SnapshotQuery SnapshotQueryFor(const schema::TableSchema& table, uint64_t chunk_rows) {
  mysql::SnapshotQuery query;
  query.database = table.database;
  query.table = table.name;
  query.chunk_rows = chunk_rows;
  using Read = mysql::SnapshotQuery::Read;
  for (const schema::Column& column : table.columns) {
    query.columns.push_back(column.name);
    switch (column.type) {
      case schema::ColumnType::kEnum: query.reads.push_back(Read::kEnumIndex); break;
      case schema::ColumnType::kSet: query.reads.push_back(Read::kSetBits); break;
      case schema::ColumnType::kUuid:
      case schema::ColumnType::kInet6: query.reads.push_back(Read::kBytes16); break;
      case schema::ColumnType::kInet4: query.reads.push_back(Read::kBytes4); break;
      default: query.reads.push_back(Read::kValue); break;
    }
  }
  clickhouse::SortingKey key = clickhouse::ChooseSortingKey(table);
  if (!key.full_row) query.key_columns = key.columns;
  return query;
}

}  // namespace chsync::pipe
