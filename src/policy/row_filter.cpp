#include "policy/row_filter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <utility>

namespace chsync::pipe {

namespace {

// ---------------------------------------------------------------------------------------------
// Tokens.

enum class Tok : uint8_t { kWord, kQuoted, kString, kNumber, kSymbol, kEnd };

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;  ///< kWord/kSymbol/kNumber as written; kQuoted unquoted; kString decoded
  size_t offset = 0;
};

bool IsIdentByte(unsigned char c) {
  return std::isalnum(c) != 0 || c == '_' || c == '$' || c >= 0x80;
}

Error ConfigError(std::string_view origin, std::string_view text, size_t offset, const std::string& what) {
  std::string near = std::string(text.substr(std::min(offset, text.size()), 20));
  return Error(ErrorKind::kConfig, std::string(origin) + ": where: " + what + " at byte " +
                                       std::to_string(offset) +
                                       (near.empty() ? " (the end)" : " (near \"" + near + "\")") + " of \"" +
                                       std::string(text) + "\"");
}

Result<std::vector<Token>> Tokenize(std::string_view text, std::string_view origin) {
  std::vector<Token> out;
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (std::isspace(c) != 0) {
      ++i;
      continue;
    }
    Token t;
    t.offset = i;
    if (c == '\'' || c == '"') {
      const char quote = text[i];
      ++i;
      bool closed = false;
      while (i < n) {
        char d = text[i];
        if (d == '\\' && i + 1 < n) {
          char e = text[i + 1];
          switch (e) {
            case '0': t.text += '\0'; break;
            case 'b': t.text += '\b'; break;
            case 'n': t.text += '\n'; break;
            case 'r': t.text += '\r'; break;
            case 't': t.text += '\t'; break;
            case 'Z': t.text += '\x1a'; break;
            // MySQL keeps the backslash of \% and \_ (they stay LIKE escapes).
            case '%':
            case '_':
              t.text += '\\';
              t.text += e;
              break;
            default: t.text += e; break;
          }
          i += 2;
          continue;
        }
        if (d == quote) {
          if (i + 1 < n && text[i + 1] == quote) {
            t.text += quote;
            i += 2;
            continue;
          }
          ++i;
          closed = true;
          break;
        }
        t.text += d;
        ++i;
      }
      if (!closed) return ConfigError(origin, text, t.offset, "unclosed string literal");
      t.kind = Tok::kString;
    } else if (c == '`') {
      ++i;
      bool closed = false;
      while (i < n) {
        if (text[i] == '`') {
          if (i + 1 < n && text[i + 1] == '`') {
            t.text += '`';
            i += 2;
            continue;
          }
          ++i;
          closed = true;
          break;
        }
        t.text += text[i++];
      }
      if (!closed) return ConfigError(origin, text, t.offset, "unclosed `identifier`");
      if (t.text.empty()) return ConfigError(origin, text, t.offset, "empty `identifier`");
      t.kind = Tok::kQuoted;
    } else if (std::isdigit(c) != 0 ||
               (c == '.' && i + 1 < n && std::isdigit(static_cast<unsigned char>(text[i + 1])) != 0)) {
      size_t j = i;
      while (j < n && std::isdigit(static_cast<unsigned char>(text[j])) != 0) ++j;
      if (j < n && text[j] == '.') {
        ++j;
        while (j < n && std::isdigit(static_cast<unsigned char>(text[j])) != 0) ++j;
      }
      if (j < n && (text[j] == 'e' || text[j] == 'E')) {
        size_t k = j + 1;
        if (k < n && (text[k] == '+' || text[k] == '-')) ++k;
        if (k < n && std::isdigit(static_cast<unsigned char>(text[k])) != 0) {
          while (k < n && std::isdigit(static_cast<unsigned char>(text[k])) != 0) ++k;
          j = k;
        }
      }
      if (j < n && IsIdentByte(static_cast<unsigned char>(text[j]))) {
        return ConfigError(origin, text, i, "a malformed number");
      }
      t.kind = Tok::kNumber;
      t.text = std::string(text.substr(i, j - i));
      i = j;
    } else if (IsIdentByte(c)) {
      size_t j = i;
      while (j < n && IsIdentByte(static_cast<unsigned char>(text[j]))) ++j;
      t.kind = Tok::kWord;
      t.text = std::string(text.substr(i, j - i));
      i = j;
    } else {
      static constexpr std::string_view kSymbols[] = {"<=>", "<>", "!=", "<=", ">=", "&&", "||", "=",
                                                      "<",   ">",  "(",  ")",  ",",  "!",  "-",  "+"};
      bool found = false;
      for (std::string_view s : kSymbols) {
        if (text.substr(i, s.size()) == s) {
          t.kind = Tok::kSymbol;
          t.text = std::string(s);
          i += s.size();
          found = true;
          break;
        }
      }
      if (!found) {
        return ConfigError(origin, text, i, "an unexpected character '" + std::string(1, text[i]) + "'");
      }
    }
    out.push_back(std::move(t));
  }
  Token end;
  end.offset = n;
  out.push_back(end);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Values while evaluating.

/// A number: exact (an integer or a DECIMAL, as sign and digits) or a double.
struct Num {
  bool exact = true;
  bool negative = false;
  std::string whole;     ///< exact: digits before the point, no leading zeros ("" for 0)
  std::string fraction;  ///< exact: digits after the point, no trailing zeros
  double d = 0;          ///< the value as a double (always set)
};

Num NumFromDecimalText(std::string_view text) {
  Num n;
  size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) {
    n.negative = text[i] == '-';
    ++i;
  }
  size_t point = text.find('.', i);
  std::string_view whole =
      text.substr(i, point == std::string_view::npos ? std::string_view::npos : point - i);
  std::string_view fraction = point == std::string_view::npos ? std::string_view() : text.substr(point + 1);
  while (!whole.empty() && whole.front() == '0') whole.remove_prefix(1);
  while (!fraction.empty() && fraction.back() == '0') fraction.remove_suffix(1);
  n.whole = std::string(whole);
  n.fraction = std::string(fraction);
  if (n.whole.empty() && n.fraction.empty()) n.negative = false;
  n.d = std::strtod(std::string(text).c_str(), nullptr);
  return n;
}

Num NumFromUint(uint64_t u, bool negative = false) {
  Num n;
  n.negative = negative && u != 0;
  n.whole = u == 0 ? "" : std::to_string(u);
  n.d = negative ? -static_cast<double>(u) : static_cast<double>(u);
  return n;
}

Num NumFromInt(int64_t v) {
  // The magnitude of INT64_MIN does not fit int64_t: negate as unsigned.
  const uint64_t magnitude = v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  return NumFromUint(magnitude, v < 0);
}

Num NumFromDouble(double d) {
  Num n;
  n.exact = false;
  n.d = d;
  return n;
}

int CompareExact(const Num& a, const Num& b) {
  const bool za = a.whole.empty() && a.fraction.empty();
  const bool zb = b.whole.empty() && b.fraction.empty();
  const bool na = a.negative && !za;
  const bool nb = b.negative && !zb;
  if (na != nb) return na ? -1 : 1;
  int magnitude = 0;
  if (a.whole.size() != b.whole.size()) {
    magnitude = a.whole.size() < b.whole.size() ? -1 : 1;
  } else if (int c = a.whole.compare(b.whole); c != 0) {
    magnitude = c < 0 ? -1 : 1;
  } else if (int f = a.fraction.compare(b.fraction); f != 0) {
    magnitude = f < 0 ? -1 : 1;
  }
  return na ? -magnitude : magnitude;
}

int CompareNum(const Num& a, const Num& b) {
  if (a.exact && b.exact) return CompareExact(a, b);
  return a.d < b.d ? -1 : (a.d > b.d ? 1 : 0);
}

/// MySQL's string-to-number conversion: the longest numeric prefix after leading spaces (0 if
/// none), as a double.
double StringToDouble(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])) != 0) ++i;
  size_t start = i;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  size_t digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0) ++i, ++digits;
  }
  if (digits == 0) return 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t k = i + 1;
    if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
    if (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k])) != 0) {
      while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k])) != 0) ++k;
      i = k;
    }
  }
  return std::strtod(std::string(s.substr(start, i - start)).c_str(), nullptr);
}

/// A temporal value, comparable: DATE and DATETIME as a DATETIME; TIME apart.
struct Temporal {
  bool time = false;       ///< a TIME (else a DATE or DATETIME)
  bool date_only = false;  ///< a DATE (its number form is YYYYMMDD)
  bool negative = false;   ///< TIME only
  uint64_t packed = 0;     ///< YYYYMMDDhhmmss, or hhmmss for a TIME (hours may exceed 99)
  uint32_t micro = 0;
};

int CompareTemporal(const Temporal& a, const Temporal& b) {
  const bool na = a.negative && (a.packed != 0 || a.micro != 0);
  const bool nb = b.negative && (b.packed != 0 || b.micro != 0);
  if (na != nb) return na ? -1 : 1;
  int magnitude = 0;
  if (a.packed != b.packed) {
    magnitude = a.packed < b.packed ? -1 : 1;
  } else if (a.micro != b.micro) {
    magnitude = a.micro < b.micro ? -1 : 1;
  }
  return na ? -magnitude : magnitude;
}

Num TemporalNumber(const Temporal& t) {
  uint64_t packed = t.date_only ? t.packed / 1000000 : t.packed;
  std::string text = (t.negative ? "-" : "") + std::to_string(packed);
  if (t.micro != 0 && !t.date_only) {
    std::string m = std::to_string(t.micro);
    text += "." + std::string(6 - std::min<size_t>(6, m.size()), '0') + m;
  }
  return NumFromDecimalText(text);
}

/// Reads up to `max` digits at `s[i]`; false when there are none.
bool ReadDigits(std::string_view s, size_t& i, size_t max, uint64_t& out) {
  size_t start = i;
  out = 0;
  while (i < s.size() && i - start < max && std::isdigit(static_cast<unsigned char>(s[i])) != 0) {
    out = out * 10 + static_cast<uint64_t>(s[i] - '0');
    ++i;
  }
  return i > start;
}

/// 'H:MM[:SS[.ffffff]]' from s[i], the hours in at most `hour_digits` digits; false when it is not
/// one. Leaves i after it (the caller checks that nothing follows and the ranges).
bool ReadClock(std::string_view s, size_t& i, size_t hour_digits, uint64_t& h, uint64_t& mi, uint64_t& sec,
               uint32_t& micro) {
  if (!ReadDigits(s, i, hour_digits, h) || i >= s.size() || s[i] != ':') return false;
  ++i;
  if (!ReadDigits(s, i, 2, mi)) return false;
  if (i < s.size() && s[i] == ':') {
    ++i;
    if (!ReadDigits(s, i, 2, sec)) return false;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    const size_t start = i;
    uint64_t f = 0;
    if (!ReadDigits(s, i, 6, f)) return false;
    for (size_t k = i - start; k < 6; ++k) f *= 10;
    micro = static_cast<uint32_t>(f);
  }
  return true;
}

/// 'YYYY-MM-DD', 'YYYY-MM-DD HH:MM[:SS[.ffffff]]' (or 'T'); the zero date allowed.
std::optional<Temporal> ParseDateTime(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  size_t i = 0;
  uint64_t y = 0;
  uint64_t mo = 0;
  uint64_t d = 0;
  if (!ReadDigits(s, i, 4, y) || i != 4) return std::nullopt;
  if (i >= s.size() || (s[i] != '-' && s[i] != '/')) return std::nullopt;
  ++i;
  if (!ReadDigits(s, i, 2, mo)) return std::nullopt;
  if (i >= s.size() || (s[i] != '-' && s[i] != '/')) return std::nullopt;
  ++i;
  if (!ReadDigits(s, i, 2, d)) return std::nullopt;
  if (mo > 12 || d > 31 || ((mo == 0) != (d == 0) && y != 0)) return std::nullopt;
  Temporal t;
  t.date_only = true;
  uint64_t h = 0;
  uint64_t mi = 0;
  uint64_t sec = 0;
  if (i < s.size()) {
    if (s[i] != ' ' && s[i] != 'T') return std::nullopt;
    ++i;
    if (!ReadClock(s, i, 2, h, mi, sec, t.micro)) return std::nullopt;
    if (i != s.size() || h > 23 || mi > 59 || sec > 59) return std::nullopt;
    t.date_only = false;
  }
  t.packed = ((((y * 100 + mo) * 100 + d) * 100 + h) * 100 + mi) * 100 + sec;
  return t;
}

/// '[-]H:MM[:SS[.ffffff]]'.
std::optional<Temporal> ParseTime(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  Temporal t;
  t.time = true;
  size_t i = 0;
  if (i < s.size() && s[i] == '-') {
    t.negative = true;
    ++i;
  }
  uint64_t h = 0;
  uint64_t mi = 0;
  uint64_t sec = 0;
  if (!ReadClock(s, i, 3, h, mi, sec, t.micro)) return std::nullopt;
  if (i != s.size() || h > 838 || mi > 59 || sec > 59) return std::nullopt;
  t.packed = h * 10000 + mi * 100 + sec;
  if (t.packed == 0 && t.micro == 0) t.negative = false;
  return t;
}

/// The civil UTC date and time of `seconds` since the epoch.
Temporal FromEpoch(uint32_t seconds, uint32_t micro) {
  int64_t days = seconds / 86400;
  int64_t rest = seconds % 86400;
  // Howard Hinnant's civil_from_days.
  days += 719468;
  const int64_t era = days / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = yoe + era * 400;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  if (m <= 2) ++y;
  Temporal t;
  t.packed = static_cast<uint64_t>(
      ((((y * 100 + m) * 100 + d) * 100 + rest / 3600) * 100 + (rest / 60) % 60) * 100 + rest % 60);
  t.micro = micro;
  return t;
}

/// How a collation compares strings (what is modelled).
enum class Coll : uint8_t {
  kBinary,        ///< bytes, no padding (binary strings, *_0900_bin, *_nopad_bin)
  kBinPad,        ///< bytes, trailing spaces ignored (*_bin)
  kGeneralCi,     ///< ASCII case-folded, PAD SPACE (*_general_ci, *_general_mysql500_ci)
  kGeneralNoPad,  ///< as kGeneralCi without padding (*_general_nopad_ci)
  kUcaCi,         ///< UCA/other case-insensitive, PAD SPACE: ASCII equality, ordering of alphanumerics
  kUcaNoPad,      ///< as kUcaCi, NO PAD (*_0900_ai_ci, *_0900_as_ci, *_nopad_ci)
  kUnknown,       ///< not modelled: refused
};

Coll CollationKind(std::string_view name) {
  const std::string c = schema::CanonicalCollation(name);
  auto ends = [&](std::string_view s) {
    return c.size() >= s.size() && c.compare(c.size() - s.size(), s.size(), s) == 0;
  };
  auto has = [&](std::string_view s) { return c.find(s) != std::string::npos; };
  if (c == "binary") return Coll::kBinary;
  if (ends("_bin")) return has("0900") || has("nopad") ? Coll::kBinary : Coll::kBinPad;
  const std::string charset = schema::CharsetOfCollation(c);
  const std::string rest = c.size() > charset.size() + 1 ? c.substr(charset.size() + 1) : "";
  if (rest == "general_ci" || rest == "general_mysql500_ci") return Coll::kGeneralCi;
  if (rest == "general_nopad_ci") return Coll::kGeneralNoPad;
  if (rest == "swedish_ci" || rest == "unicode_ci" || rest == "unicode_520_ci" || rest == "uca1400_ai_ci" ||
      rest == "uca1400_as_ci") {
    return Coll::kUcaCi;
  }
  if (rest == "0900_ai_ci" || rest == "0900_as_ci" || rest == "swedish_nopad_ci" ||
      rest == "unicode_nopad_ci" || rest == "unicode_520_nopad_ci" || rest == "uca1400_nopad_ai_ci" ||
      rest == "uca1400_nopad_as_ci") {
    return Coll::kUcaNoPad;
  }
  return Coll::kUnknown;
}

bool Padded(Coll c) {
  return c == Coll::kBinPad || c == Coll::kGeneralCi || c == Coll::kUcaCi;
}
bool CaseInsensitive(Coll c) {
  return c != Coll::kBinary && c != Coll::kBinPad && c != Coll::kUnknown;
}

/// Printable ASCII and the whitespace controls: what the case-insensitive collations are modelled for.
bool ModelledByte(unsigned char b) {
  return (b >= 0x20 && b < 0x7f) || (b >= 0x09 && b <= 0x0d);
}

unsigned char Fold(unsigned char b) {
  return b >= 'a' && b <= 'z' ? static_cast<unsigned char>(b - 32) : b;
}

struct Val {
  enum class Kind : uint8_t { kNull, kNum, kStr, kTemporal };
  Kind kind = Kind::kNull;
  Num num;
  std::string str;
  Temporal temporal;
  /// The column a string came from (its collation), or null for a literal or an expression.
  const RowFilter::ColumnRef* column = nullptr;
  /// ENUM/SET: the number form (index or bitmap).
  std::optional<Num> number_form;
};

Val NullVal() {
  return {};
}
Val NumVal(Num n) {
  Val v;
  v.kind = Val::Kind::kNum;
  v.num = std::move(n);
  return v;
}
Val BoolVal(Truth t) {
  if (t == Truth::kUnknown) return NullVal();
  return NumVal(NumFromInt(t == Truth::kTrue ? 1 : 0));
}

Error Unsupported(const std::string& why) {
  return Error(ErrorKind::kUnsupported, "row filter: " + why);
}

std::string CollationOf(const RowFilter::ColumnRef* c) {
  return c ? c->collation : std::string("binary");
}

/// Compares two strings by collation `coll` (of `who`, for messages); `ordering`: < > matter,
/// not just equality.
Result<int> StringCompare(std::string_view a, std::string_view b, Coll coll, const RowFilter::ColumnRef* who,
                          bool ordering) {
  const bool ci = CaseInsensitive(coll);
  if (ci) {
    for (std::string_view s : {a, b}) {
      for (char ch : s) {
        auto u = static_cast<unsigned char>(ch);
        bool ok = ModelledByte(u);
        // Outside the general collations, punctuation orders by UCA weights, not by code.
        if (ok && ordering && coll != Coll::kGeneralCi && coll != Coll::kGeneralNoPad) {
          ok = std::isalnum(u) != 0 || u == ' ';
        }
        if (!ok) {
          return Unsupported("comparing \"" + std::string(s.substr(0, 40)) + "\" in collation " +
                             CollationOf(who) + (who ? " (column " + who->name + ")" : "") +
                             ": chsync models case-insensitive collations over printable ASCII only" +
                             (ordering ? " (ordering: letters, digits and spaces)" : "") +
                             "; use a _bin collation's column, or a filter of = / IN over ASCII values");
        }
      }
    }
  }
  const size_t common = std::min(a.size(), b.size());
  for (size_t i = 0; i < common; ++i) {
    unsigned char x = static_cast<unsigned char>(a[i]);
    unsigned char y = static_cast<unsigned char>(b[i]);
    if (ci) {
      x = Fold(x);
      y = Fold(y);
    }
    if (x != y) return x < y ? -1 : 1;
  }
  if (a.size() == b.size()) return 0;
  const std::string_view longer = a.size() > b.size() ? a : b;
  const int sign = a.size() > b.size() ? 1 : -1;
  if (!Padded(coll)) return sign;
  // PAD SPACE: the shorter string is compared as if padded with spaces.
  for (size_t i = common; i < longer.size(); ++i) {
    auto x = static_cast<unsigned char>(longer[i]);
    if (x != ' ') return x > ' ' ? sign : -sign;
  }
  return 0;
}

/// The value's text (for LIKE and string comparisons of non-strings).
std::string TextOf(const Val& v) {
  switch (v.kind) {
    case Val::Kind::kStr: return v.str;
    case Val::Kind::kNum: {
      if (!v.num.exact) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", v.num.d);
        return buf;
      }
      std::string s = v.num.negative ? "-" : "";
      s += v.num.whole.empty() ? "0" : v.num.whole;
      if (!v.num.fraction.empty()) s += "." + v.num.fraction;
      return s;
    }
    case Val::Kind::kTemporal: {
      const Temporal& t = v.temporal;
      char buf[64];
      if (t.time) {
        std::snprintf(buf, sizeof buf, "%s%02llu:%02llu:%02llu", t.negative ? "-" : "",
                      static_cast<unsigned long long>(t.packed / 10000),
                      static_cast<unsigned long long>(t.packed / 100 % 100),
                      static_cast<unsigned long long>(t.packed % 100));
      } else {
        const uint64_t p = t.packed;
        std::snprintf(buf, sizeof buf, "%04llu-%02llu-%02llu",
                      static_cast<unsigned long long>(p / 10000000000ULL),
                      static_cast<unsigned long long>(p / 100000000 % 100),
                      static_cast<unsigned long long>(p / 1000000 % 100));
        std::string s = buf;
        if (!t.date_only) {
          std::snprintf(
              buf, sizeof buf, " %02llu:%02llu:%02llu", static_cast<unsigned long long>(p / 10000 % 100),
              static_cast<unsigned long long>(p / 100 % 100), static_cast<unsigned long long>(p % 100));
          s += buf;
        }
        if (t.micro != 0) {
          std::snprintf(buf, sizeof buf, ".%06u", t.micro);
          s += buf;
        }
        return s;
      }
      std::string s = buf;
      if (t.micro != 0) {
        std::snprintf(buf, sizeof buf, ".%06u", t.micro);
        s += buf;
      }
      return s;
    }
    case Val::Kind::kNull: break;
  }
  return "";
}

Num AsNumber(const Val& v) {
  switch (v.kind) {
    case Val::Kind::kNum: return v.num;
    case Val::Kind::kStr: return v.number_form ? *v.number_form : NumFromDouble(StringToDouble(v.str));
    case Val::Kind::kTemporal: return TemporalNumber(v.temporal);
    case Val::Kind::kNull: break;
  }
  return NumFromInt(0);
}

Truth TruthOf(const Val& v) {
  if (v.kind == Val::Kind::kNull) return Truth::kUnknown;
  Num n = AsNumber(v);
  bool zero = n.exact ? (n.whole.empty() && n.fraction.empty()) : n.d == 0;
  return zero ? Truth::kFalse : Truth::kTrue;
}

/// MySQL's comparison of two non-NULL values (`ordering`: the result's sign matters, not only
/// whether it is 0).
Result<int> CompareVals(const Val& a, const Val& b, bool ordering) {
  using K = Val::Kind;
  if (a.kind == K::kStr && b.kind == K::kStr) {
    // A column's collation wins over a literal's; two literals compare as bytes.
    const RowFilter::ColumnRef* who = a.column ? a.column : b.column;
    Coll coll = who ? CollationKind(who->collation) : Coll::kBinary;
    return StringCompare(a.str, b.str, coll, who, ordering);
  }
  if (a.kind == K::kTemporal || b.kind == K::kTemporal) {
    const Val& t = a.kind == K::kTemporal ? a : b;
    const Val& o = a.kind == K::kTemporal ? b : a;
    const int sign = a.kind == K::kTemporal ? 1 : -1;
    if (o.kind == K::kNum) return sign * CompareNum(TemporalNumber(t.temporal), o.num);
    Temporal other;
    if (o.kind == K::kTemporal) {
      other = o.temporal;
    } else {
      std::optional<Temporal> parsed = t.temporal.time ? ParseTime(o.str) : ParseDateTime(o.str);
      if (!parsed) {
        return Unsupported("\"" + o.str.substr(0, 40) + "\" is not a valid " +
                           (t.temporal.time ? "TIME" : "DATE or DATETIME") + " value to compare with");
      }
      other = *parsed;
    }
    if (other.time != t.temporal.time) return Unsupported("a TIME compared with a DATE or DATETIME");
    return sign * CompareTemporal(t.temporal, other);
  }
  return CompareNum(AsNumber(a), AsNumber(b));
}

/// LIKE: `pattern` over `subject`, `%` and `_` wildcards, `escape` quoting the next character.
/// `utf8`: `_` matches one UTF-8 character.
bool LikeMatch(std::string_view s, std::string_view p, char escape, bool ci, bool utf8) {
  auto char_len = [&](std::string_view t, size_t i) -> size_t {
    if (!utf8) return 1;
    auto c = static_cast<unsigned char>(t[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    return std::min(len, t.size() - i);
  };
  // Iterative matching with backtracking to the last '%'.
  size_t si = 0;
  size_t pi = 0;
  size_t star_p = std::string_view::npos;
  size_t star_s = 0;
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '%') {
      star_p = ++pi;
      star_s = si;
      continue;
    }
    if (pi < p.size()) {
      if (p[pi] == '_') {
        si += char_len(s, si);
        ++pi;
        continue;
      }
      size_t plen = 1;
      size_t at = pi;
      if (p[pi] == escape && pi + 1 < p.size()) {
        at = pi + 1;
        plen = 2;
      }
      const size_t clen = char_len(p, at);
      if (si + clen <= s.size()) {
        bool same = true;
        for (size_t k = 0; k < clen; ++k) {
          auto x = static_cast<unsigned char>(s[si + k]);
          auto y = static_cast<unsigned char>(p[at + k]);
          if (ci) {
            x = Fold(x);
            y = Fold(y);
          }
          if (x != y) same = false;
        }
        if (same) {
          si += clen;
          pi += plen - 1 + clen;
          continue;
        }
      }
    }
    if (star_p == std::string_view::npos) return false;
    star_s += char_len(s, star_s);
    si = star_s;
    pi = star_p;
  }
  while (pi < p.size() && p[pi] == '%') ++pi;
  return pi == p.size();
}

bool IsTemporalType(schema::ColumnType t) {
  using T = schema::ColumnType;
  return t == T::kDate || t == T::kDateTime || t == T::kTimestamp || t == T::kTime;
}

bool IsStringType(schema::ColumnType t) {
  using T = schema::ColumnType;
  return schema::IsCharacterType(t) || t == T::kBinary || t == T::kVarBinary || t == T::kTinyBlob ||
         t == T::kBlob || t == T::kMediumBlob || t == T::kLongBlob;
}

}  // namespace

// -----------------------------------------------------------------------------------------------
// The tree.

struct RowFilter::Node {
  enum class Op : uint8_t {
    kColumn,
    kNull,
    kNumber,
    kString,
    kCompare,  ///< text: = <> < <= > >= <=>
    kAnd,
    kOr,
    kXor,
    kNot,
    kIn,       ///< kids[0] IN (kids[1..])
    kBetween,  ///< kids[0] BETWEEN kids[1] AND kids[2]
    kIs,       ///< kids[0] IS text (NULL, TRUE, FALSE, UNKNOWN)
    kLike,     ///< kids[0] LIKE kids[1] (escape)
  };
  Op op = Op::kNull;
  bool negated = false;  ///< NOT IN, NOT BETWEEN, NOT LIKE, IS NOT
  std::string text;
  int column = -1;  ///< kColumn: index in refs_
  Num number;
  char escape = '\\';
  std::vector<int> kids;
};

RowFilter::RowFilter() = default;
RowFilter::~RowFilter() = default;
RowFilter::RowFilter(const RowFilter&) = default;
RowFilter& RowFilter::operator=(const RowFilter&) = default;
RowFilter::RowFilter(RowFilter&&) noexcept = default;
RowFilter& RowFilter::operator=(RowFilter&&) noexcept = default;

std::string_view ModelledCollations() {
  return "binary strings and *_bin collations (bytes; trailing spaces ignored except for binary, _0900_bin "
         "and _nopad_bin), *_general_ci, *_general_mysql500_ci and *_general_nopad_ci (ASCII case-folding), "
         "*_swedish_ci, *_unicode_ci, *_unicode_520_ci, *_0900_ai_ci, *_0900_as_ci and "
         "*_uca1400_ai_ci/_as_ci "
         "and their nopad forms (ASCII case-folding for = and LIKE; < and > over letters, digits and spaces)";
}

namespace {

class Parser {
 public:
  Parser(std::string_view text, std::string_view origin, const schema::TableSchema& table,
         std::vector<Token> tokens, std::vector<RowFilter::Node>& nodes,
         std::vector<RowFilter::ColumnRef>& refs)
      : text_(text), origin_(origin), table_(table), tokens_(std::move(tokens)), nodes_(nodes), refs_(refs) {}

  Result<int> Run() {
    CHSYNC_ASSIGN_OR_RETURN(int root, Expr());
    if (Peek().kind != Tok::kEnd) return Expected("AND, OR or the end of the expression");
    return root;
  }

 private:
  using Node = RowFilter::Node;
  using Op = Node::Op;
  static constexpr int kMaxDepth = 100;

  const Token& Peek(size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  bool IsWord(const Token& t, std::string_view w) const {
    return t.kind == Tok::kWord && schema::EqualsIgnoreCase(t.text, w);
  }
  bool IsSymbol(const Token& t, std::string_view s) const { return t.kind == Tok::kSymbol && t.text == s; }
  bool AcceptWord(std::string_view w) {
    if (!IsWord(Peek(), w)) return false;
    ++pos_;
    return true;
  }
  bool AcceptSymbol(std::string_view s) {
    if (!IsSymbol(Peek(), s)) return false;
    ++pos_;
    return true;
  }
  Error Expected(const std::string& what) const {
    return ConfigError(origin_, text_, Peek().offset, "expected " + what);
  }
  int Add(Node node) {
    nodes_.push_back(std::move(node));
    return static_cast<int>(nodes_.size()) - 1;
  }
  /// One more AND/OR/XOR or comparison chained: the tree is as deep as its chains, and it is
  /// evaluated by recursion for every row, so their number is bounded.
  Status Link() {
    if (++links_ <= kMaxLinks) return Status::Ok();
    return ConfigError(origin_, text_, Peek().offset,
                       fmt::format("the expression chains more than {} AND, OR, XOR and comparisons (an "
                                   "IN (…) list holds many values in one)",
                                   kMaxLinks));
  }

  int AddBinary(Op op, int a, int b) {
    Node n;
    n.op = op;
    n.kids = {a, b};
    return Add(std::move(n));
  }

  struct DepthGuard {
    explicit DepthGuard(int& d) : depth(d) { ++depth; }
    ~DepthGuard() { --depth; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    int& depth;
  };

  Result<int> Expr() {
    DepthGuard guard(depth_);
    if (depth_ > kMaxDepth)
      return ConfigError(origin_, text_, Peek().offset, "the expression nests too deeply");
    CHSYNC_ASSIGN_OR_RETURN(int left, Xor());
    while (AcceptWord("OR") || AcceptSymbol("||")) {
      CHSYNC_RETURN_IF_ERROR(Link());
      CHSYNC_ASSIGN_OR_RETURN(int right, Xor());
      left = AddBinary(Op::kOr, left, right);
    }
    return left;
  }
  Result<int> Xor() {
    CHSYNC_ASSIGN_OR_RETURN(int left, And());
    while (AcceptWord("XOR")) {
      CHSYNC_RETURN_IF_ERROR(Link());
      CHSYNC_ASSIGN_OR_RETURN(int right, And());
      left = AddBinary(Op::kXor, left, right);
    }
    return left;
  }
  Result<int> And() {
    CHSYNC_ASSIGN_OR_RETURN(int left, Not());
    while (AcceptWord("AND") || AcceptSymbol("&&")) {
      CHSYNC_RETURN_IF_ERROR(Link());
      CHSYNC_ASSIGN_OR_RETURN(int right, Not());
      left = AddBinary(Op::kAnd, left, right);
    }
    return left;
  }
  Result<int> Not() {
    DepthGuard guard(depth_);
    if (depth_ > kMaxDepth)
      return ConfigError(origin_, text_, Peek().offset, "the expression nests too deeply");
    if (AcceptWord("NOT")) {
      CHSYNC_ASSIGN_OR_RETURN(int kid, Not());
      Node n;
      n.op = Op::kNot;
      n.kids = {kid};
      return Add(std::move(n));
    }
    return Predicate();
  }

  Result<int> Predicate() {
    CHSYNC_ASSIGN_OR_RETURN(int left, Operand());
    for (;;) {
      const Token& t = Peek();
      if (t.kind == Tok::kSymbol && (t.text == "=" || t.text == "<>" || t.text == "!=" || t.text == "<" ||
                                     t.text == "<=" || t.text == ">" || t.text == ">=" || t.text == "<=>")) {
        CHSYNC_RETURN_IF_ERROR(Link());
        std::string op = t.text == "!=" ? "<>" : t.text;
        ++pos_;
        CHSYNC_ASSIGN_OR_RETURN(int right, Operand());
        CHSYNC_RETURN_IF_ERROR(CheckPair(left, right, t.offset));
        Node n;
        n.op = Op::kCompare;
        n.text = op;
        n.kids = {left, right};
        left = Add(std::move(n));
        continue;
      }
      if (IsWord(t, "IS")) {
        ++pos_;
        Node n;
        n.op = Op::kIs;
        n.negated = AcceptWord("NOT");
        for (std::string_view w : {"NULL", "TRUE", "FALSE", "UNKNOWN"}) {
          if (AcceptWord(w)) n.text = std::string(w);
        }
        if (n.text.empty()) return Expected("NULL, TRUE, FALSE or UNKNOWN after IS");
        n.kids = {left};
        left = Add(std::move(n));
        continue;
      }
      bool negated = false;
      if (IsWord(t, "NOT") &&
          (IsWord(Peek(1), "IN") || IsWord(Peek(1), "BETWEEN") || IsWord(Peek(1), "LIKE"))) {
        negated = true;
        ++pos_;
      }
      const size_t at = Peek().offset;
      if (AcceptWord("IN")) {
        if (!AcceptSymbol("(")) return Expected("( after IN");
        Node n;
        n.op = Op::kIn;
        n.negated = negated;
        n.kids = {left};
        do {
          CHSYNC_ASSIGN_OR_RETURN(int item, Operand());
          CHSYNC_RETURN_IF_ERROR(CheckPair(left, item, at));
          n.kids.push_back(item);
        } while (AcceptSymbol(","));
        if (!AcceptSymbol(")")) return Expected(", or ) in the IN list");
        left = Add(std::move(n));
        continue;
      }
      if (AcceptWord("BETWEEN")) {
        CHSYNC_ASSIGN_OR_RETURN(int low, Operand());
        if (!AcceptWord("AND")) return Expected("AND of BETWEEN");
        CHSYNC_ASSIGN_OR_RETURN(int high, Operand());
        CHSYNC_RETURN_IF_ERROR(CheckPair(left, low, at));
        CHSYNC_RETURN_IF_ERROR(CheckPair(left, high, at));
        Node n;
        n.op = Op::kBetween;
        n.negated = negated;
        n.kids = {left, low, high};
        left = Add(std::move(n));
        continue;
      }
      if (AcceptWord("LIKE")) {
        CHSYNC_ASSIGN_OR_RETURN(int pattern, Operand());
        Node n;
        n.op = Op::kLike;
        n.negated = negated;
        n.kids = {left, pattern};
        if (AcceptWord("ESCAPE")) {
          const Token& e = Peek();
          if (e.kind != Tok::kString || e.text.size() > 1)
            return Expected("a one-character string after ESCAPE");
          n.escape = e.text.empty() ? '\\' : e.text[0];
          ++pos_;
        }
        left = Add(std::move(n));
        continue;
      }
      if (negated) return Expected("IN, BETWEEN or LIKE after NOT");
      return left;
    }
  }

  Result<int> Operand() {
    DepthGuard guard(depth_);
    if (depth_ > kMaxDepth)
      return ConfigError(origin_, text_, Peek().offset, "the expression nests too deeply");
    const Token t = Peek();
    if (AcceptSymbol("(")) {
      CHSYNC_ASSIGN_OR_RETURN(int inner, Expr());
      if (!AcceptSymbol(")")) return Expected(")");
      return inner;
    }
    if (AcceptSymbol("!")) {
      CHSYNC_ASSIGN_OR_RETURN(int kid, Operand());
      Node n;
      n.op = Op::kNot;
      n.kids = {kid};
      return Add(std::move(n));
    }
    if (IsSymbol(t, "-") || IsSymbol(t, "+")) {
      ++pos_;
      const Token& num = Peek();
      if (num.kind != Tok::kNumber) return Expected("a number after " + t.text);
      ++pos_;
      return AddNumber((t.text == "-" ? "-" : "") + num.text);
    }
    switch (t.kind) {
      case Tok::kNumber: ++pos_; return AddNumber(t.text);
      case Tok::kString: {
        ++pos_;
        Node n;
        n.op = Op::kString;
        n.text = t.text;
        return Add(std::move(n));
      }
      case Tok::kQuoted: ++pos_; return AddColumn(t);
      case Tok::kWord: {
        if (IsWord(t, "NULL")) {
          ++pos_;
          return Add(Node{});
        }
        if (IsWord(t, "TRUE") || IsWord(t, "FALSE")) {
          ++pos_;
          return AddNumber(IsWord(t, "TRUE") ? "1" : "0");
        }
        for (std::string_view k :
             {"AND", "OR", "XOR", "NOT", "IN", "BETWEEN", "IS", "LIKE", "ESCAPE", "UNKNOWN"}) {
          if (IsWord(t, k))
            return Expected("a column, a literal or ( (a column named " + t.text + " is written `" + t.text +
                            "`)");
        }
        if (IsSymbol(Peek(1), "(")) {
          return ConfigError(origin_, text_, t.offset,
                             "functions are not supported in a row filter (" + t.text + "(…))");
        }
        ++pos_;
        return AddColumn(t);
      }
      case Tok::kSymbol:
      case Tok::kEnd: break;
    }
    return Expected("a column, a literal or (");
  }

  int AddNumber(const std::string& text) {
    Node n;
    n.op = Op::kNumber;
    n.text = text;
    const bool is_float = text.find_first_of("eE") != std::string::npos;
    n.number = is_float ? NumFromDouble(std::strtod(text.c_str(), nullptr)) : NumFromDecimalText(text);
    return Add(std::move(n));
  }

  Result<int> AddColumn(const Token& t) {
    const int index = table_.FindColumn(t.text);
    if (index < 0) {
      std::string names;
      for (const schema::Column& c : table_.columns) names += (names.empty() ? "" : ", ") + c.name;
      return ConfigError(origin_, text_, t.offset,
                         "unknown column " + t.text + " (" + table_.QualifiedName() + " has " + names + ")");
    }
    const schema::Column& col = table_.columns[static_cast<size_t>(index)];
    using T = schema::ColumnType;
    const T type = col.type;
    if (type == T::kJson || type == T::kVector || type == T::kUuid || type == T::kInet4 ||
        type == T::kInet6 || type == T::kUnknown ||
        (type >= T::kGeometry && type <= T::kGeometryCollection)) {
      return ConfigError(origin_, text_, t.offset,
                         "column " + col.name + " is " + std::string(schema::ColumnTypeName(type)) +
                             ", which a row filter cannot compare");
    }
    int ref = -1;
    for (size_t i = 0; i < refs_.size(); ++i) {
      if (refs_[i].index == index) ref = static_cast<int>(i);
    }
    if (ref < 0) {
      RowFilter::ColumnRef r;
      r.index = index;
      r.name = col.name;
      r.type = type;
      r.enum_values = col.enum_values;
      if (IsStringType(type) && !schema::IsCharacterType(type)) {
        r.collation = "binary";
      } else if (schema::IsCharacterType(type)) {
        r.collation = schema::CanonicalCollation(!col.collation.empty() ? col.collation : table_.collation);
        if (r.collation.empty()) {
          // Not known: the default of the charset differs between servers; both general_ci and
          // 0900_ai_ci agree with the UCA model's restrictions.
          r.collation =
              schema::CanonicalCharset(col.charset.empty() ? table_.charset : col.charset) + "_unicode_ci";
        }
        if (CollationKind(r.collation) == Coll::kUnknown) {
          return ConfigError(origin_, text_, t.offset,
                             "column " + col.name + " has collation " + r.collation +
                                 ", which chsync's row filters do not model (they model " +
                                 std::string(ModelledCollations()) + ")");
        }
      }
      refs_.push_back(std::move(r));
      ref = static_cast<int>(refs_.size()) - 1;
    }
    Node n;
    n.op = Op::kColumn;
    n.column = ref;
    n.text = col.name;
    return Add(std::move(n));
  }

  /// Checks what can be checked of a comparison of `a` with `b`: a literal against a temporal
  /// column must be a valid value of it; two string columns must share a collation.
  Status CheckPair(int a, int b, size_t offset) {
    const Node& x = nodes_[static_cast<size_t>(a)];
    const Node& y = nodes_[static_cast<size_t>(b)];
    for (auto [col, lit] : {std::pair{&x, &y}, std::pair{&y, &x}}) {
      if (col->op != Op::kColumn || lit->op != Op::kString) continue;
      const RowFilter::ColumnRef& r = refs_[static_cast<size_t>(col->column)];
      if (!IsTemporalType(r.type)) continue;
      const bool ok = r.type == schema::ColumnType::kTime ? ParseTime(lit->text).has_value()
                                                          : ParseDateTime(lit->text).has_value();
      if (!ok) {
        return ConfigError(origin_, text_, offset,
                           "'" + lit->text + "' is not a valid " +
                               std::string(schema::ColumnTypeName(r.type)) + " value for column " + r.name +
                               " (write 'YYYY-MM-DD', 'YYYY-MM-DD hh:mm:ss' or "
                               "'hh:mm:ss')");
      }
    }
    if (x.op == Op::kColumn && y.op == Op::kColumn) {
      const RowFilter::ColumnRef& p = refs_[static_cast<size_t>(x.column)];
      const RowFilter::ColumnRef& q = refs_[static_cast<size_t>(y.column)];
      if (!p.collation.empty() && !q.collation.empty() && p.collation != q.collation) {
        return ConfigError(origin_, text_, offset,
                           "columns " + p.name + " (" + p.collation + ") and " + q.name + " (" + q.collation +
                               ") have different collations");
      }
    }
    return Status::Ok();
  }

  std::string_view text_;
  std::string_view origin_;
  const schema::TableSchema& table_;
  std::vector<Token> tokens_;
  std::vector<RowFilter::Node>& nodes_;
  std::vector<RowFilter::ColumnRef>& refs_;
  size_t pos_ = 0;
  int depth_ = 0;
  int links_ = 0;
  static constexpr int kMaxLinks = 4000;
};

struct Evaluator {
  const std::vector<RowFilter::Node>& nodes;
  const std::vector<RowFilter::ColumnRef>& refs;
  std::span<const binlog::Value> row;
  const std::vector<uint32_t>& index;

  using Node = RowFilter::Node;
  using Op = Node::Op;

  Result<Val> ColumnValue(const RowFilter::ColumnRef& ref) const {
    auto i = static_cast<size_t>(ref.index);
    if (!index.empty()) {
      if (i >= index.size())
        return Error(ErrorKind::kCorrupt, "row filter: column " + ref.name + " is not mapped");
      i = index[i];
    }
    if (i >= row.size()) {
      return Error(ErrorKind::kCorrupt, "row filter: the row image has " + std::to_string(row.size()) +
                                            " values, column " + ref.name + " is not among them");
    }
    const binlog::Value& v = row[i];
    Val out;
    using K = binlog::ValueKind;
    switch (v.kind) {
      case K::kAbsent:
        return Unsupported(
            "column " + ref.name +
            ", which the filter names, is not in the binlog row image: set binlog_row_image=FULL at the "
            "source");
      case K::kNull: return NullVal();
      case K::kInt: return NumVal(NumFromInt(v.i));
      case K::kUint:
      case K::kYear:
      case K::kBit: return NumVal(NumFromUint(v.u));
      case K::kFloat: return NumVal(NumFromDouble(static_cast<double>(v.f)));
      case K::kDouble: return NumVal(NumFromDouble(v.d));
      case K::kDecimal: return NumVal(NumFromDecimalText(v.text));
      case K::kEnum:
        out.kind = Val::Kind::kStr;
        if (v.u >= 1 && v.u <= ref.enum_values.size()) out.str = ref.enum_values[v.u - 1];
        out.number_form = NumFromUint(v.u);
        out.column = &ref;
        return out;
      case K::kSet:
        out.kind = Val::Kind::kStr;
        for (size_t b = 0; b < ref.enum_values.size() && b < 64; ++b) {
          if ((v.u >> b & 1U) != 0) out.str += (out.str.empty() ? "" : ",") + ref.enum_values[b];
        }
        out.number_form = NumFromUint(v.u);
        out.column = &ref;
        return out;
      case K::kString:
        out.kind = Val::Kind::kStr;
        out.str = std::string(v.text);
        out.column = &ref;
        return out;
      case K::kDate:
        out.kind = Val::Kind::kTemporal;
        out.temporal.date_only = true;
        out.temporal.packed =
            ((static_cast<uint64_t>(v.date.year) * 100 + v.date.month) * 100 + v.date.day) * 1000000ULL;
        return out;
      case K::kDateTime: {
        out.kind = Val::Kind::kTemporal;
        const binlog::DateTime& t = v.datetime;
        out.temporal.packed =
            ((((static_cast<uint64_t>(t.year) * 100 + t.month) * 100 + t.day) * 100 + t.hour) * 100 +
             t.minute) *
                100 +
            t.second;
        out.temporal.micro = t.microsecond;
        return out;
      }
      case K::kTimestamp:
        out.kind = Val::Kind::kTemporal;
        if (v.timestamp.seconds == 0 && v.timestamp.microsecond == 0) return out;  // the zero timestamp
        out.temporal = FromEpoch(v.timestamp.seconds, v.timestamp.microsecond);
        return out;
      case K::kTime:
        out.kind = Val::Kind::kTemporal;
        out.temporal.time = true;
        out.temporal.negative = v.time.negative;
        out.temporal.packed = static_cast<uint64_t>(v.time.hour) * 10000 +
                              static_cast<uint64_t>(v.time.minute) * 100 + v.time.second;
        out.temporal.micro = v.time.microsecond;
        return out;
      case K::kJson:
      case K::kGeometry:
      case K::kVector:
      case K::kJsonDiff: break;
    }
    return Unsupported("column " + ref.name + " holds a value a row filter cannot compare");
  }

  Result<Truth> Compare(const Val& a, const Val& b, std::string_view op) const {
    if (op == "<=>") {
      if (a.kind == Val::Kind::kNull || b.kind == Val::Kind::kNull) {
        return a.kind == b.kind ? Truth::kTrue : Truth::kFalse;
      }
    } else if (a.kind == Val::Kind::kNull || b.kind == Val::Kind::kNull) {
      return Truth::kUnknown;
    }
    const bool ordering = op != "=" && op != "<>" && op != "<=>";
    CHSYNC_ASSIGN_OR_RETURN(int c, CompareVals(a, b, ordering));
    bool r = false;
    if (op == "=" || op == "<=>")
      r = c == 0;
    else if (op == "<>")
      r = c != 0;
    else if (op == "<")
      r = c < 0;
    else if (op == "<=")
      r = c <= 0;
    else if (op == ">")
      r = c > 0;
    else
      r = c >= 0;
    return r ? Truth::kTrue : Truth::kFalse;
  }

  static Truth Negate(Truth t) {
    if (t == Truth::kUnknown) return t;
    return t == Truth::kTrue ? Truth::kFalse : Truth::kTrue;
  }

  Result<enum Truth> TruthAt(int at) const {
    CHSYNC_ASSIGN_OR_RETURN(Val v, Eval(at));
    return TruthOf(v);
  }

  Result<Val> Eval(int at) const {
    const Node& n = nodes[static_cast<size_t>(at)];
    switch (n.op) {
      case Op::kNull: return NullVal();
      case Op::kNumber: return NumVal(n.number);
      case Op::kString: {
        Val v;
        v.kind = Val::Kind::kStr;
        v.str = n.text;
        return v;
      }
      case Op::kColumn: return ColumnValue(refs[static_cast<size_t>(n.column)]);
      case Op::kCompare: {
        CHSYNC_ASSIGN_OR_RETURN(Val a, Eval(n.kids[0]));
        CHSYNC_ASSIGN_OR_RETURN(Val b, Eval(n.kids[1]));
        CHSYNC_ASSIGN_OR_RETURN(enum Truth t, Compare(a, b, n.text));
        return BoolVal(t);
      }
      case Op::kAnd: {
        CHSYNC_ASSIGN_OR_RETURN(enum Truth a, TruthAt(n.kids[0]));
        if (a == Truth::kFalse) return BoolVal(Truth::kFalse);
        CHSYNC_ASSIGN_OR_RETURN(enum Truth b, TruthAt(n.kids[1]));
        if (b == Truth::kFalse) return BoolVal(Truth::kFalse);
        return BoolVal(a == Truth::kTrue && b == Truth::kTrue ? Truth::kTrue : Truth::kUnknown);
      }
      case Op::kOr: {
        CHSYNC_ASSIGN_OR_RETURN(enum Truth a, TruthAt(n.kids[0]));
        if (a == Truth::kTrue) return BoolVal(Truth::kTrue);
        CHSYNC_ASSIGN_OR_RETURN(enum Truth b, TruthAt(n.kids[1]));
        if (b == Truth::kTrue) return BoolVal(Truth::kTrue);
        return BoolVal(a == Truth::kFalse && b == Truth::kFalse ? Truth::kFalse : Truth::kUnknown);
      }
      case Op::kXor: {
        CHSYNC_ASSIGN_OR_RETURN(enum Truth a, TruthAt(n.kids[0]));
        CHSYNC_ASSIGN_OR_RETURN(enum Truth b, TruthAt(n.kids[1]));
        if (a == Truth::kUnknown || b == Truth::kUnknown) return NullVal();
        return BoolVal(a != b ? Truth::kTrue : Truth::kFalse);
      }
      case Op::kNot: {
        CHSYNC_ASSIGN_OR_RETURN(enum Truth a, TruthAt(n.kids[0]));
        return BoolVal(Negate(a));
      }
      case Op::kIs: {
        CHSYNC_ASSIGN_OR_RETURN(Val v, Eval(n.kids[0]));
        bool r = false;
        if (n.text == "NULL" || n.text == "UNKNOWN") {
          r = v.kind == Val::Kind::kNull;
        } else {
          enum Truth t = TruthOf(v);
          r = n.text == "TRUE" ? t == Truth::kTrue : t == Truth::kFalse;
        }
        return BoolVal((r != n.negated) ? Truth::kTrue : Truth::kFalse);
      }
      case Op::kIn: {
        CHSYNC_ASSIGN_OR_RETURN(Val a, Eval(n.kids[0]));
        enum Truth result = Truth::kFalse;
        if (a.kind == Val::Kind::kNull) {
          result = Truth::kUnknown;
        } else {
          for (size_t k = 1; k < n.kids.size(); ++k) {
            CHSYNC_ASSIGN_OR_RETURN(Val b, Eval(n.kids[k]));
            CHSYNC_ASSIGN_OR_RETURN(enum Truth t, Compare(a, b, "="));
            if (t == Truth::kTrue) {
              result = Truth::kTrue;
              break;
            }
            if (t == Truth::kUnknown) result = Truth::kUnknown;
          }
        }
        return BoolVal(n.negated ? Negate(result) : result);
      }
      case Op::kBetween: {
        CHSYNC_ASSIGN_OR_RETURN(Val a, Eval(n.kids[0]));
        CHSYNC_ASSIGN_OR_RETURN(Val lo, Eval(n.kids[1]));
        CHSYNC_ASSIGN_OR_RETURN(Val hi, Eval(n.kids[2]));
        CHSYNC_ASSIGN_OR_RETURN(enum Truth x, Compare(a, lo, ">="));
        CHSYNC_ASSIGN_OR_RETURN(enum Truth y, Compare(a, hi, "<="));
        enum Truth r = Truth::kUnknown;
        if (x == Truth::kFalse || y == Truth::kFalse)
          r = Truth::kFalse;
        else if (x == Truth::kTrue && y == Truth::kTrue)
          r = Truth::kTrue;
        return BoolVal(n.negated ? Negate(r) : r);
      }
      case Op::kLike: {
        CHSYNC_ASSIGN_OR_RETURN(Val s, Eval(n.kids[0]));
        CHSYNC_ASSIGN_OR_RETURN(Val p, Eval(n.kids[1]));
        if (s.kind == Val::Kind::kNull || p.kind == Val::Kind::kNull) return NullVal();
        const RowFilter::ColumnRef* who = s.column ? s.column : p.column;
        const Coll coll = who && (s.kind == Val::Kind::kStr) ? CollationKind(who->collation) : Coll::kBinary;
        const std::string subject = TextOf(s);
        const std::string pattern = TextOf(p);
        const bool ci = CaseInsensitive(coll);
        if (ci) {
          CHSYNC_RETURN_IF_ERROR(StringCompare(subject, pattern, coll, who, false));
        }
        const bool utf8 = who && who->collation.starts_with("utf8");
        const bool m = LikeMatch(subject, pattern, n.escape, ci, utf8);
        return BoolVal(m != n.negated ? Truth::kTrue : Truth::kFalse);
      }
    }
    return NullVal();
  }
};

}  // namespace

Result<RowFilter> RowFilter::Parse(std::string_view text, const schema::TableSchema& table,
                                   std::string_view origin) {
  CHSYNC_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(text, origin));
  if (tokens.size() == 1) return ConfigError(origin, text, 0, "an expression (the filter is empty)");
  RowFilter f;
  f.text_ = std::string(text);
  Parser parser(text, origin, table, std::move(tokens), f.nodes_, f.refs_);
  CHSYNC_ASSIGN_OR_RETURN(f.root_, parser.Run());
  std::vector<ColumnRef> sorted = f.refs_;
  std::sort(sorted.begin(), sorted.end(),
            [](const ColumnRef& a, const ColumnRef& b) { return a.index < b.index; });
  for (const ColumnRef& r : sorted) f.column_names_.push_back(r.name);
  return f;
}

bool RowFilter::Names(std::string_view column) const {
  return std::any_of(column_names_.begin(), column_names_.end(),
                     [&](const std::string& c) { return schema::EqualsIgnoreCase(c, column); });
}

Result<Truth> RowFilter::Evaluate(std::span<const binlog::Value> row,
                                  const std::vector<uint32_t>& index) const {
  if (root_ < 0) return Truth::kTrue;
  Evaluator e{nodes_, refs_, row, index};
  return e.TruthAt(root_);
}

Result<bool> RowFilter::Passes(std::span<const binlog::Value> row, const std::vector<uint32_t>& index) const {
  CHSYNC_ASSIGN_OR_RETURN(Truth t, Evaluate(row, index));
  return t == Truth::kTrue;
}

}  // namespace chsync::pipe
