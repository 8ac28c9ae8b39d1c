#include "schema/default_translation.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include <string_view>
#include "common/result.h"

namespace chsync::schema {
namespace {

DefaultTranslation Omit(std::string reason) {
  DefaultTranslation t;
  t.reason = std::move(reason);
  return t;
}

DefaultTranslation Propagate(std::string literal) {
  DefaultTranslation t;
  t.propagated = true;
  t.literal = std::move(literal);
  return t;
}

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

/// A decimal literal split into parts: [sign] int [. frac] [e [sign] exp].
struct NumberParts {
  bool negative = false;
  std::string integer;   ///< without leading zeros ("" for zero)
  std::string fraction;  ///< as written
  bool has_point = false;
  bool has_exponent = false;
  bool valid = false;
};

NumberParts SplitNumber(std::string_view text) {
  NumberParts p;
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    p.negative = text[i] == '-';
    ++i;
  }
  size_t digits = 0;
  while (i < text.size() && IsDigit(text[i])) {
    if (!(p.integer.empty() && text[i] == '0')) p.integer += text[i];
    ++i;
    ++digits;
  }
  if (i < text.size() && text[i] == '.') {
    p.has_point = true;
    ++i;
    while (i < text.size() && IsDigit(text[i])) {
      p.fraction += text[i];
      ++i;
      ++digits;
    }
  }
  if (digits == 0) return p;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    p.has_exponent = true;
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    size_t exp_digits = 0;
    while (i < text.size() && IsDigit(text[i])) {
      ++i;
      ++exp_digits;
    }
    if (exp_digits == 0) return p;
  }
  p.valid = i == text.size();
  return p;
}

bool FractionIsZero(const NumberParts& p) {
  return std::all_of(p.fraction.begin(), p.fraction.end(), [](char c) { return c == '0'; });
}

/// Compares non-negative decimal digit strings without leading zeros.
int CompareMagnitude(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
}

/// Largest magnitude for negative and positive values of an integer type.
void IntegerBounds(ColumnType type, bool is_unsigned, std::string_view& min_neg, std::string_view& max_pos) {
  switch (type) {
    case ColumnType::kTinyInt:
      min_neg = is_unsigned ? "" : "128";
      max_pos = is_unsigned ? "255" : "127";
      return;
    case ColumnType::kSmallInt:
      min_neg = is_unsigned ? "" : "32768";
      max_pos = is_unsigned ? "65535" : "32767";
      return;
    case ColumnType::kMediumInt:
      min_neg = is_unsigned ? "" : "8388608";
      max_pos = is_unsigned ? "16777215" : "8388607";
      return;
    case ColumnType::kInt:
      min_neg = is_unsigned ? "" : "2147483648";
      max_pos = is_unsigned ? "4294967295" : "2147483647";
      return;
    default:
      min_neg = is_unsigned ? "" : "9223372036854775808";
      max_pos = is_unsigned ? "18446744073709551615" : "9223372036854775807";
      return;
  }
}

/// Normalised text of a valid number: no '+', "0" before a leading '.', "-0" → "0".
std::string NumberLiteral(std::string_view text) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  bool negative = !text.empty() && text[0] == '-';
  std::string_view body = negative ? text.substr(1) : text;
  bool all_zero = std::all_of(body.begin(), body.end(), [](char c) { return c == '0' || c == '.'; });
  std::string out;
  if (negative && !all_zero) out += '-';
  if (!body.empty() && body[0] == '.') out += '0';
  out.append(body.data(), body.size());
  return out;
}

Result<std::string> IntegerFor(const Column& c, std::string_view text) {
  NumberParts p = SplitNumber(text);
  if (!p.valid) return Error(ErrorKind::kUnsupported, fmt::format("'{}' is not a number", text));
  if (p.has_exponent) return Error(ErrorKind::kUnsupported, "exponent notation for an integer column");
  if (!FractionIsZero(p)) {
    return Error(ErrorKind::kUnsupported,
                 fmt::format("{} has a fraction and the column is an integer", text));
  }
  std::string_view min_neg, max_pos;
  IntegerBounds(c.type == ColumnType::kBit ? ColumnType::kBigInt : c.type,
                c.is_unsigned || c.type == ColumnType::kBit, min_neg, max_pos);
  bool zero = p.integer.empty();
  if (p.negative && !zero) {
    if (min_neg.empty() || CompareMagnitude(p.integer, min_neg) > 0) {
      return Error(ErrorKind::kUnsupported, fmt::format("{} is out of range for {}", text, c.TypeText()));
    }
    return "-" + p.integer;
  }
  if (CompareMagnitude(p.integer, max_pos) > 0) {
    return Error(ErrorKind::kUnsupported, fmt::format("{} is out of range for {}", text, c.TypeText()));
  }
  if (c.type == ColumnType::kBit && c.length && *c.length < 64) {
    // Fits in M bits?
    uint64_t v = 0;
    for (char d : p.integer) v = v * 10 + static_cast<uint64_t>(d - '0');
    if (v >> *c.length != 0) {
      return Error(ErrorKind::kUnsupported, fmt::format("{} does not fit BIT({})", text, *c.length));
    }
  }
  return zero ? std::string("0") : p.integer;
}

Result<std::string> DecimalFor(const Column& c, std::string_view text) {
  NumberParts p = SplitNumber(text);
  if (!p.valid) return Error(ErrorKind::kUnsupported, fmt::format("'{}' is not a number", text));
  if (p.has_exponent) return Error(ErrorKind::kUnsupported, "exponent notation for a DECIMAL column");
  uint32_t precision = c.precision.value_or(10);
  uint32_t scale = c.scale.value_or(0);
  std::string fraction = p.fraction;
  while (!fraction.empty() && fraction.back() == '0' && fraction.size() > scale) fraction.pop_back();
  if (fraction.size() > scale) {
    return Error(ErrorKind::kUnsupported,
                 fmt::format("{} has more decimals than DECIMAL({},{}) keeps", text, precision, scale));
  }
  if (p.integer.size() > precision - scale) {
    return Error(ErrorKind::kUnsupported,
                 fmt::format("{} is out of range for DECIMAL({},{})", text, precision, scale));
  }
  if (p.negative && c.is_unsigned && !(p.integer.empty() && FractionIsZero(p))) {
    return Error(ErrorKind::kUnsupported, fmt::format("{} is negative and the column is unsigned", text));
  }
  return NumberLiteral(text);
}

bool LeapYear(int y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int ParseFixed(std::string_view s, size_t at, size_t n) {
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (i >= s.size() || !IsDigit(s[i])) return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

/// Validates YYYY-MM-DD at the start of `s`; "zero" marks 0000-00-00-style dates.
Result<bool> CheckDate(std::string_view s) {
  if (s.size() < 10 || s[4] != '-' || s[7] != '-')
    return Error(ErrorKind::kUnsupported, "not a YYYY-MM-DD date");
  int y = ParseFixed(s, 0, 4), m = ParseFixed(s, 5, 2), d = ParseFixed(s, 8, 2);
  if (y < 0 || m < 0 || d < 0) return Error(ErrorKind::kUnsupported, "not a YYYY-MM-DD date");
  if (y == 0 || m == 0 || d == 0)
    return Error(ErrorKind::kUnsupported, "zero date (ClickHouse has no zero date)");
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m > 12) return Error(ErrorKind::kUnsupported, "month out of range");
  int max_day = kDays[m - 1] + ((m == 2 && LeapYear(y)) ? 1 : 0);
  if (d > max_day) return Error(ErrorKind::kUnsupported, "day out of range");
  return true;
}

Result<std::string> DateTimeFor(const Column& c, std::string_view s) {
  CHSYNC_ASSIGN_OR_RETURN(bool ok, CheckDate(s));
  (void)ok;
  if (c.type == ColumnType::kDate) {
    if (s.size() != 10) return Error(ErrorKind::kUnsupported, "a DATE default with a time part");
    return QuoteClickHouseString(s);
  }
  std::string value(s.substr(0, 10));
  std::string_view rest = s.substr(10);
  if (rest.empty()) {
    value += " 00:00:00";
  } else {
    if (rest.size() < 9 || (rest[0] != ' ' && rest[0] != 'T') || rest[3] != ':' || rest[6] != ':') {
      return Error(ErrorKind::kUnsupported, "not a YYYY-MM-DD HH:MM:SS datetime");
    }
    int h = ParseFixed(rest, 1, 2), mi = ParseFixed(rest, 4, 2), se = ParseFixed(rest, 7, 2);
    if (h < 0 || mi < 0 || se < 0 || h > 23 || mi > 59 || se > 59) {
      return Error(ErrorKind::kUnsupported, "time of day out of range");
    }
    value += ' ';
    value += rest.substr(1, 8);
    std::string_view frac = rest.substr(9);
    if (!frac.empty()) {
      if (frac[0] != '.' || frac.size() < 2 || frac.size() > 7 ||
          !std::all_of(frac.begin() + 1, frac.end(), IsDigit)) {
        return Error(ErrorKind::kUnsupported, "bad fractional seconds");
      }
      uint32_t fsp = c.fsp.value_or(0);
      std::string_view digits = frac.substr(1);
      std::string kept(digits.substr(0, std::min<size_t>(digits.size(), fsp)));
      bool dropped_nonzero = std::any_of(digits.begin() + static_cast<long>(kept.size()), digits.end(),
                                         [](char d) { return d != '0'; });
      if (dropped_nonzero) {
        return Error(ErrorKind::kUnsupported,
                     fmt::format("more fractional digits than the column's fsp {}", fsp));
      }
      if (!kept.empty()) value += "." + kept;
    }
  }
  return QuoteClickHouseString(value);
}

bool HasBackslash(std::string_view s) {
  return s.find('\\') != std::string_view::npos;
}
bool HasControl(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char ch) {
    auto u = static_cast<unsigned char>(ch);
    return u < 0x20 || u == 0x7f;
  });
}

/// Checks a string default for the rules every string must pass.
std::string SimpleStringProblem(std::string_view s) {
  if (HasBackslash(s)) return "string contains a backslash";
  if (HasControl(s)) return "string contains a control character";
  return "";
}

std::vector<std::string_view> SplitComma(std::string_view s) {
  std::vector<std::string_view> out;
  if (s.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

DefaultTranslation TranslateValue(const Column& c, std::string_view value, bool is_string,
                                  bool full_metadata) {
  switch (c.type) {
    case ColumnType::kTinyInt:
    case ColumnType::kSmallInt:
    case ColumnType::kMediumInt:
    case ColumnType::kInt:
    case ColumnType::kBigInt:
    case ColumnType::kBit:
    case ColumnType::kYear: {
      std::string_view v = value;
      while (is_string && !v.empty() && v.front() == ' ') v.remove_prefix(1);
      auto r = IntegerFor(c, v);
      if (!r.ok()) return Omit(r.error().message());
      if (c.type == ColumnType::kYear) {
        // YEAR stores 0 and 1901–2155; 1–69/70–99 shorthand means 2001–2069/1970–1999.
        long y = std::stol(*r);
        if (y == 0) return Omit("YEAR 0000 has no ClickHouse equivalent");
        if (y < 100) y += y < 70 ? 2000 : 1900;
        if (y < 1901 || y > 2155) return Omit(fmt::format("{} is out of range for YEAR", value));
        return Propagate(std::to_string(y));
      }
      return Propagate(*r);
    }
    case ColumnType::kDecimal: {
      auto r = DecimalFor(c, value);
      if (!r.ok()) return Omit(r.error().message());
      return Propagate(*r);
    }
    case ColumnType::kFloat:
    case ColumnType::kDouble: {
      NumberParts p = SplitNumber(value);
      if (!p.valid) return Omit(fmt::format("'{}' is not a number", value));
      if (c.is_unsigned && p.negative && !(p.integer.empty() && FractionIsZero(p))) {
        return Omit(fmt::format("{} is negative and the column is unsigned", value));
      }
      return Propagate(NumberLiteral(value));
    }
    case ColumnType::kDate:
    case ColumnType::kDateTime: {
      if (!is_string) return Omit("a number as a date default is not a portable literal");
      auto r = DateTimeFor(c, value);
      if (!r.ok()) return Omit(fmt::format("'{}': {}", value, r.error().message()));
      return Propagate(*r);
    }
    case ColumnType::kTimestamp: return Omit("TIMESTAMP literal defaults depend on the session time zone");
    case ColumnType::kTime: return Omit("TIME has no portable ClickHouse literal");
    case ColumnType::kEnum:
    case ColumnType::kSet: {
      if (!full_metadata) return Omit("ENUM/SET defaults need binlog_row_metadata=FULL");
      if (!is_string) return Omit("a numeric ENUM/SET default (member index) is not propagated");
      if (std::string problem = SimpleStringProblem(value); !problem.empty()) return Omit(problem);
      auto members = c.type == ColumnType::kSet ? SplitComma(value) : std::vector<std::string_view>{value};
      for (std::string_view m : members) {
        bool found = std::any_of(c.enum_values.begin(), c.enum_values.end(),
                                 [&](const std::string& e) { return EqualsIgnoreCase(e, m); });
        if (!found) return Omit(fmt::format("'{}' is not a member of {}", m, c.TypeText()));
      }
      return Propagate(QuoteClickHouseString(value));
    }
    case ColumnType::kChar:
    case ColumnType::kVarChar:
    case ColumnType::kTinyText:
    case ColumnType::kText:
    case ColumnType::kMediumText:
    case ColumnType::kLongText:
    case ColumnType::kVarBinary:
    case ColumnType::kTinyBlob:
    case ColumnType::kBlob:
    case ColumnType::kMediumBlob:
    case ColumnType::kLongBlob:
    case ColumnType::kJson:
    case ColumnType::kBinary: {
      if (std::string problem = SimpleStringProblem(value); !problem.empty()) return Omit(problem);
      if (c.type == ColumnType::kBinary && c.length && value.size() < *c.length) {
        return Omit("BINARY(n) pads the value with zero bytes");
      }
      if (c.type == ColumnType::kJson && !is_string)
        return Omit("a number as a JSON default is not propagated");
      return Propagate(QuoteClickHouseString(value));
    }
    default: return Omit(fmt::format("{} has no portable ClickHouse literal", ColumnTypeName(c.type)));
  }
}

}  // namespace

std::string QuoteClickHouseString(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '\'';
  for (char ch : text) {
    if (ch == '\\' || ch == '\'') out += '\\';
    out += ch;
  }
  out += '\'';
  return out;
}

DefaultTranslation TranslateDefault(const Column& column, bool full_metadata) {
  const DefaultValue& d = column.default_value;
  switch (d.kind) {
    case DefaultKind::kNone: return Omit("no default");
    case DefaultKind::kNull: return Omit("NULL default");
    case DefaultKind::kBit: return Omit(fmt::format("bit literal b'{}'", d.text));
    case DefaultKind::kHex: return Omit(fmt::format("hexadecimal literal X'{}'", d.text));
    case DefaultKind::kCurrentTimestamp: return Omit(fmt::format("function call {}", d.text));
    case DefaultKind::kExpression: return Omit(fmt::format("expression default ({})", d.text));
    case DefaultKind::kBool:
      if (!IsIntegerType(column.type) && column.type != ColumnType::kBit &&
          column.type != ColumnType::kDecimal && column.type != ColumnType::kFloat &&
          column.type != ColumnType::kDouble) {
        return Omit(fmt::format("{} as a default of a {} column", d.text, ColumnTypeName(column.type)));
      }
      return Propagate(d.text == "TRUE" ? "1" : "0");
    case DefaultKind::kNumber: return TranslateValue(column, d.text, /*is_string=*/false, full_metadata);
    case DefaultKind::kString:
      if (column.generated != GeneratedKind::kNone) return Omit("generated column");
      return TranslateValue(column, d.text, /*is_string=*/true, full_metadata);
  }
  return Omit("unknown default kind");
}

}  // namespace chsync::schema
