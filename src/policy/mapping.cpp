#include "policy/mapping.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>

#include "clickhouse/sql_quoting.h"
#include "clickhouse/type_mapping.h"
#include "common/glob.h"

namespace chsync::pipe {
namespace {

using Kind = ExpressionToken::Kind;

constexpr std::string_view kMetadataPrefix = "_chsync_";

bool Matches(const TableOptions& options, std::string_view database, std::string_view table) {
  std::string_view db_pattern;
  std::string_view table_pattern;
  if (!SplitTablePattern(options.pattern, db_pattern, table_pattern)) return false;  // Add checked it
  return GlobMatch(db_pattern, database) && GlobMatch(table_pattern, table);
}

bool IsMetadataName(std::string_view name) {
  return name.size() >= kMetadataPrefix.size() &&
         schema::EqualsIgnoreCase(name.substr(0, kMetadataPrefix.size()), kMetadataPrefix);
}

std::string Joined(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const std::string& part : parts) {
    if (!out.empty()) out += separator;
    out += part;
  }
  return out;
}

Error OptionError(const TableOptions& options, std::string_view key, const std::string& what) {
  return Error(ErrorKind::kConfig,
               options.origin + ": 'table_options." + options.pattern + "." + std::string(key) + "' " + what);
}

/// Replaces {database}, {db} and {table}; false on another {…}.
bool Substitute(std::string_view pattern, std::string_view database, std::string_view table,
                std::string& out) {
  out.clear();
  for (size_t i = 0; i < pattern.size();) {
    if (pattern[i] != '{') {
      out += pattern[i++];
      continue;
    }
    size_t close = pattern.find('}', i);
    if (close == std::string_view::npos) return false;
    std::string_view name = pattern.substr(i + 1, close - i - 1);
    if (name == "database" || name == "db") {
      out += database;
    } else if (name == "table") {
      out += table;
    } else {
      return false;
    }
    i = close + 1;
  }
  return true;
}

bool IsWordStart(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}
bool IsWordChar(unsigned char c) {
  return IsWordStart(c) || (c >= '0' && c <= '9') || c == '$';
}
bool IsDigit(unsigned char c) {
  return c >= '0' && c <= '9';
}

/// Words of ClickHouse expressions that are not column names unless the table has a column of
/// exactly that name (a column may be called `day` or `year`).
bool IsKeyword(std::string_view word) {
  static constexpr std::array<std::string_view, 45> kKeywords = {
      "AND",    "OR",    "NOT",   "IS",    "NULL",    "IN",         "LIKE",     "ILIKE",   "BETWEEN",
      "CASE",   "WHEN",  "THEN",  "ELSE",  "END",     "AS",         "GLOBAL",   "TRUE",    "FALSE",
      "ASC",    "DESC",  "NULLS", "FIRST", "LAST",    "COLLATE",    "INTERVAL", "SECOND",  "MINUTE",
      "HOUR",   "DAY",   "WEEK",  "MONTH", "QUARTER", "YEAR",       "DELETE",   "TO",      "DISK",
      "VOLUME", "WHERE", "GROUP", "BY",    "SET",     "RECOMPRESS", "CODEC",    "SECONDS", "DAYS"};
  return std::any_of(kKeywords.begin(), kKeywords.end(),
                     [&](std::string_view k) { return schema::EqualsIgnoreCase(k, word); });
}

bool IsSymbol(const ExpressionToken& t, std::string_view s) {
  return t.kind == Kind::kSymbol && t.text == s;
}

/// A possible column reference at tokens[i]: an identifier that is not a function name or a member
/// after '.' (it may still be a keyword: see IsKeyword).
bool IsColumnReference(const std::vector<ExpressionToken>& tokens, size_t i) {
  const ExpressionToken& t = tokens[i];
  if (t.kind != Kind::kWord && t.kind != Kind::kQuotedIdentifier) return false;
  if (i + 1 < tokens.size() && IsSymbol(tokens[i + 1], "(")) return false;
  if (i > 0 && IsSymbol(tokens[i - 1], ".")) return false;
  return true;
}

/// The index of the bracket closing tokens[open], or npos.
size_t MatchingClose(const std::vector<ExpressionToken>& tokens, size_t open) {
  int depth = 0;
  for (size_t i = open; i < tokens.size(); ++i) {
    if (tokens[i].kind != Kind::kSymbol) continue;
    const std::string& s = tokens[i].text;
    if (s == "(" || s == "[" || s == "{") ++depth;
    if (s == ")" || s == "]" || s == "}") {
      if (--depth == 0) return i;
    }
  }
  return std::string::npos;
}

/// The tokens between the first and the last when they enclose the whole list: (…) or tuple(…).
bool Unwrap(std::vector<ExpressionToken>& tokens) {
  size_t open = 0;
  if (tokens.size() >= 3 && tokens[0].kind == Kind::kWord &&
      schema::EqualsIgnoreCase(tokens[0].text, "tuple") && IsSymbol(tokens[1], "(")) {
    open = 1;
  } else if (tokens.size() < 2 || !IsSymbol(tokens[0], "(")) {
    return false;
  }
  if (MatchingClose(tokens, open) != tokens.size() - 1) return false;
  tokens =
      std::vector<ExpressionToken>(tokens.begin() + static_cast<std::ptrdiff_t>(open) + 1, tokens.end() - 1);
  return true;
}

/// `tokens` split at top-level commas.
std::vector<std::vector<ExpressionToken>> SplitTokens(const std::vector<ExpressionToken>& tokens) {
  std::vector<std::vector<ExpressionToken>> out(1);
  int depth = 0;
  for (const ExpressionToken& t : tokens) {
    if (t.kind == Kind::kSymbol) {
      if (t.text == "(" || t.text == "[" || t.text == "{") ++depth;
      if (t.text == ")" || t.text == "]" || t.text == "}") --depth;
      if (depth == 0 && t.text == ",") {
        out.emplace_back();
        continue;
      }
    }
    out.back().push_back(t);
  }
  if (out.size() == 1 && out[0].empty()) out.clear();
  return out;
}

/// An element's text as written: from its first token to the end of its last.
std::string ElementText(std::string_view text, const std::vector<ExpressionToken>& element) {
  if (element.empty()) return "";
  size_t begin = element.front().offset;
  size_t end = element.back().offset + element.back().length;
  return std::string(text.substr(begin, end - begin));
}

/// The element list of `text` (outer parentheses or tuple( ) removed, repeatedly).
Result<std::vector<std::vector<ExpressionToken>>> Elements(std::string_view text, std::string_view what) {
  CHSYNC_ASSIGN_OR_RETURN(std::vector<ExpressionToken> tokens, TokenizeExpression(text, what));
  while (Unwrap(tokens)) {
  }
  auto elements = SplitTokens(tokens);
  for (const auto& element : elements) {
    if (element.empty()) {
      return Error(ErrorKind::kConfig,
                   std::string(what) + " has an empty element in '" + std::string(text) + "'");
    }
  }
  return elements;
}

/// The name when `element` is one identifier (`a`, a), else nullopt.
std::optional<std::string> PlainIdentifier(const std::vector<ExpressionToken>& element) {
  if (element.size() != 1) return std::nullopt;
  if (element[0].kind == Kind::kQuotedIdentifier) return element[0].text;
  if (element[0].kind == Kind::kWord) return element[0].text;
  return std::nullopt;
}

/// The argument when `element` is function(identifier) of the named function (case-insensitive).
std::optional<std::string> CallOf(const std::vector<ExpressionToken>& element, std::string_view function) {
  if (element.size() != 4 || element[0].kind != Kind::kWord ||
      !schema::EqualsIgnoreCase(element[0].text, function) || !IsSymbol(element[1], "(") ||
      !IsSymbol(element[3], ")")) {
    return std::nullopt;
  }
  std::vector<ExpressionToken> argument{element[2]};
  return PlainIdentifier(argument);
}

bool ContainsName(const std::vector<NamedColumn>& names, std::string_view name) {
  return std::any_of(names.begin(), names.end(),
                     [&](const NamedColumn& n) { return schema::EqualsIgnoreCase(n.name, name); });
}

std::string Where(const std::string& origin) {
  return origin.empty() ? "" : " (" + origin + ")";
}

/// "ZSTD(3)" from "CODEC(ZSTD(3))" or "ZSTD(3)"; kConfig when it is not a list of codec names with
/// optional arguments.
Result<std::string> NormalizeCodec(std::string_view text, std::string_view what) {
  CHSYNC_ASSIGN_OR_RETURN(std::vector<ExpressionToken> tokens, TokenizeExpression(text, what));
  size_t begin = 0;
  size_t end = text.size();
  if (tokens.size() >= 3 && tokens[0].kind == Kind::kWord &&
      schema::EqualsIgnoreCase(tokens[0].text, "CODEC") && IsSymbol(tokens[1], "(") &&
      MatchingClose(tokens, 1) == tokens.size() - 1) {
    begin = tokens[2].offset;
    end = tokens.back().offset;
    tokens = std::vector<ExpressionToken>(tokens.begin() + 2, tokens.end() - 1);
  }
  auto elements = SplitTokens(tokens);
  if (elements.empty()) return Error(ErrorKind::kConfig, std::string(what) + " names no codec");
  for (const auto& element : elements) {
    bool ok = !element.empty() && element[0].kind == Kind::kWord;
    if (ok && element.size() > 1) {
      ok = IsSymbol(element[1], "(") && MatchingClose(element, 1) == element.size() - 1;
    }
    if (!ok) {
      return Error(ErrorKind::kConfig, std::string(what) +
                                           " must be codecs such as ZSTD(3) or Delta, LZ4, not '" +
                                           std::string(text) + "'");
    }
  }
  std::string_view inner = text.substr(begin, end - begin);
  while (!inner.empty() && (inner.front() == ' ' || inner.front() == '\t')) inner.remove_prefix(1);
  while (!inner.empty() && (inner.back() == ' ' || inner.back() == '\t')) inner.remove_suffix(1);
  return std::string(inner);
}

bool IsIdentifier(std::string_view name) {
  if (name.empty() || !IsWordStart(static_cast<unsigned char>(name[0])) ||
      static_cast<unsigned char>(name[0]) >= 0x80)
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    unsigned char u = static_cast<unsigned char>(c);
    return u < 0x80 && (IsWordStart(u) || IsDigit(u));
  });
}

std::string ColumnOptionsText(const clickhouse::ColumnOptions& options) {
  std::vector<std::string> parts;
  if (options.low_cardinality) parts.emplace_back("LowCardinality");
  if (!options.codec.empty()) parts.push_back("CODEC(" + options.codec + ")");
  return Joined(parts, " ");
}

}  // namespace

bool TableOptions::Exact() const {
  return pattern.find_first_of("*?") == std::string::npos;
}

Result<std::vector<ExpressionToken>> TokenizeExpression(std::string_view text, std::string_view what) {
  std::vector<ExpressionToken> tokens;
  std::vector<char> open;
  auto fail = [&](size_t at, const std::string& why) {
    return Error(ErrorKind::kConfig, std::string(what) + ": " + why + " at byte " + std::to_string(at) +
                                         " of '" + std::string(text) + "'");
  };
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    ExpressionToken t;
    t.offset = i;
    if (c == '`' || c == '"' || c == '\'') {
      t.kind = c == '\'' ? Kind::kString : Kind::kQuotedIdentifier;
      std::string value;
      size_t j = i + 1;
      bool closed = false;
      while (j < text.size()) {
        char d = text[j];
        if (d == '\\' && j + 1 < text.size()) {
          value += text[j + 1];
          j += 2;
          continue;
        }
        if (d == static_cast<char>(c)) {
          if (j + 1 < text.size() && text[j + 1] == static_cast<char>(c)) {
            value += d;
            j += 2;
            continue;
          }
          closed = true;
          ++j;
          break;
        }
        value += d;
        ++j;
      }
      if (!closed) return fail(i, std::string("unclosed ") + static_cast<char>(c));
      t.text = t.kind == Kind::kString ? std::string(text.substr(i, j - i)) : value;
      t.length = j - i;
      i = j;
    } else if (IsWordStart(c)) {
      size_t j = i + 1;
      while (j < text.size() && IsWordChar(static_cast<unsigned char>(text[j]))) ++j;
      t.kind = Kind::kWord;
      t.text = std::string(text.substr(i, j - i));
      t.length = j - i;
      i = j;
    } else if (IsDigit(c) ||
               (c == '.' && i + 1 < text.size() && IsDigit(static_cast<unsigned char>(text[i + 1])) &&
                (tokens.empty() || tokens.back().kind == Kind::kSymbol))) {
      size_t j = i + 1;
      while (j < text.size()) {
        unsigned char d = static_cast<unsigned char>(text[j]);
        bool exponent_sign = (d == '+' || d == '-') && (text[j - 1] == 'e' || text[j - 1] == 'E') &&
                             !(text.substr(i, 2) == "0x" || text.substr(i, 2) == "0X");
        if (!IsWordChar(d) && d != '.' && !exponent_sign) break;
        ++j;
      }
      t.kind = Kind::kNumber;
      t.text = std::string(text.substr(i, j - i));
      t.length = j - i;
      i = j;
    } else {
      if (c == ';') return fail(i, "';' is not part of an expression");
      if (c == '#' || text.substr(i, 2) == "--" || text.substr(i, 2) == "/*") {
        return fail(i, "comments are not allowed");
      }
      static constexpr std::array<std::string_view, 8> kTwo = {
          "->", "<=", ">=", "!=", "<>", "==", "||", "::"};
      size_t n = 1;
      for (std::string_view two : kTwo) {
        if (text.substr(i, 2) == two) n = 2;
      }
      std::string_view symbol = text.substr(i, n);
      if (n == 1 &&
          std::string_view("()[]{},.+-*/%=<>?:!").find(static_cast<char>(c)) == std::string_view::npos) {
        return fail(i, "unexpected character '" + std::string(symbol) + "'");
      }
      if (c == '(' || c == '[' || c == '{') open.push_back(static_cast<char>(c));
      if (c == ')' || c == ']' || c == '}') {
        const char expected = c == ')' ? '(' : c == ']' ? '[' : '{';
        if (open.empty() || open.back() != expected)
          return fail(i, "'" + std::string(symbol) + "' closes nothing");
        open.pop_back();
      }
      t.kind = Kind::kSymbol;
      t.text = std::string(symbol);
      t.length = n;
      i += n;
    }
    tokens.push_back(std::move(t));
  }
  if (!open.empty()) return fail(text.size(), std::string("'") + open.back() + "' is not closed");
  return tokens;
}

Result<std::vector<std::string>> SplitExpressionList(std::string_view text, std::string_view what) {
  CHSYNC_ASSIGN_OR_RETURN(auto elements, Elements(text, what));
  std::vector<std::string> out;
  out.reserve(elements.size());
  for (const auto& element : elements) out.push_back(ElementText(text, element));
  return out;
}

std::string CanonicalExpression(std::string_view text) {
  auto tokens = TokenizeExpression(text, "expression");
  if (!tokens.ok()) return std::string(text);
  static constexpr std::array<std::string_view, 8> kUnits = {"Second", "Minute", "Hour",    "Day",
                                                             "Week",   "Month",  "Quarter", "Year"};
  std::string out;
  for (size_t i = 0; i < tokens->size(); ++i) {
    const ExpressionToken& t = (*tokens)[i];
    if (!out.empty()) out += ' ';
    // ClickHouse prints INTERVAL 1 YEAR as toIntervalYear(1).
    if (t.kind == Kind::kWord && schema::EqualsIgnoreCase(t.text, "INTERVAL") && i + 2 < tokens->size() &&
        (*tokens)[i + 1].kind == Kind::kNumber && (*tokens)[i + 2].kind == Kind::kWord) {
      auto unit = std::find_if(kUnits.begin(), kUnits.end(), [&](std::string_view u) {
        return schema::EqualsIgnoreCase(u, (*tokens)[i + 2].text);
      });
      if (unit != kUnits.end()) {
        out += clickhouse::QuoteIdentifier("toInterval" + std::string(*unit)) + " ( " +
               (*tokens)[i + 1].text + " )";
        i += 2;
        continue;
      }
    }
    if (t.kind == Kind::kQuotedIdentifier || t.kind == Kind::kWord) {
      out += clickhouse::QuoteIdentifier(t.text);
    } else {
      out += t.text;
    }
  }
  return out;
}

std::string SettingLiteral(std::string_view value, bool quoted) {
  if (!quoted) {
    if (value == "true") return "1";
    if (value == "false") return "0";
    std::string_view digits = value;
    if (!digits.empty() && digits.front() == '-') digits.remove_prefix(1);
    size_t dot = digits.find('.');
    bool number = !digits.empty() && digits.front() != '.' && digits.back() != '.' &&
                  std::all_of(digits.begin(), digits.end(),
                              [](char c) { return IsDigit(static_cast<unsigned char>(c)) || c == '.'; }) &&
                  (dot == std::string_view::npos || digits.find('.', dot + 1) == std::string_view::npos);
    if (number) return std::string(value);
  }
  return clickhouse::QuoteString(value);
}

Status MappingSet::Add(TableOptions options) {
  std::string_view db_pattern;
  std::string_view table_pattern;
  if (!SplitTablePattern(options.pattern, db_pattern, table_pattern)) {
    return Error(ErrorKind::kConfig,
                 options.origin + ": 'table_options." + options.pattern +
                     "': the pattern must be DB.TABLE (wildcards * and ?, e.g. shop.orders, "
                     "shop.*)");
  }
  std::string scratch;
  for (auto [key, value] :
       {std::pair{"dest_database", &options.dest_database}, std::pair{"dest_table", &options.dest_table}}) {
    if (!value->has_value()) continue;
    if ((*value)->empty()) return OptionError(options, key, "must not be empty");
    if (!Substitute(**value, "d", "t", scratch)) {
      return OptionError(options, key,
                         "may use {database} and {table}, nothing else in braces: '" + **value + "'");
    }
  }
  if (options.dest_table && options.dest_table->starts_with("_chsync_")) {
    return OptionError(options, "dest_table",
                       "names a table of chsync's own ('" + *options.dest_table +
                           "': names starting with _chsync_ are chsync's); choose another name");
  }
  if (options.dest_table && !options.Exact() && options.dest_table->find("{table}") == std::string::npos &&
      !options.source_column) {
    return OptionError(
        options, "dest_table",
        "would put every table matching '" + options.pattern + "' into the one ClickHouse table '" +
            *options.dest_table +
            "': use {table} in it (e.g. {table}_v2), give the option per table, or, when the "
            "pattern matches one table in each of many databases, give source_column: _source to "
            "merge them into one table (docs/mapping.md, \"Many sources into one table\")");
  }
  if (options.source_column) {
    const std::string& c = *options.source_column;
    if (c.empty() || c.size() > 64 ||
        c.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") !=
            std::string::npos ||
        (c[0] >= '0' && c[0] <= '9')) {
      return OptionError(options, "source_column",
                         "must be a column name of letters, digits and _ (e.g. _source), not '" + c + "'");
    }
    if (c.starts_with("_chsync_")) {
      return OptionError(
          options, "source_column",
          "names a column of chsync's own ('" + c + "': names starting with _chsync_ are chsync's)");
    }
    if (options.history.value_or(false)) {
      return OptionError(
          options, "source_column",
          "cannot be combined with history: true yet; give the shared table's sources no history");
    }
  }
  for (const std::string& column : options.exclude_columns) {
    if (column.empty()) return OptionError(options, "exclude_columns", "has an empty column name");
  }
  for (size_t i = 0; i < options.rename_columns.size(); ++i) {
    const auto& [from, to] = options.rename_columns[i];
    const std::string key = "rename_columns." + from;
    if (from.empty() || to.empty()) return OptionError(options, key, "must rename a column to a name");
    if (IsMetadataName(to)) {
      return OptionError(options, key,
                         "renames to " + to + ": names starting with _chsync_ are chsync's metadata columns");
    }
    for (size_t j = 0; j < i; ++j) {
      if (schema::EqualsIgnoreCase(options.rename_columns[j].first, from)) {
        return OptionError(options, key, "renames the column twice");
      }
      if (schema::EqualsIgnoreCase(options.rename_columns[j].second, to)) {
        return OptionError(options, key,
                           fmt::format("renames {} to {}, the name {} is renamed to as well", from, to,
                                       options.rename_columns[j].first));
      }
    }
  }
  const std::string prefix = "'table_options." + options.pattern + ".";
  if (options.order_by) {
    auto elements = Elements(*options.order_by, options.origin + ": " + prefix + "order_by'");
    if (!elements.ok()) return elements.error();
    if (elements->empty()) {
      return OptionError(options, "order_by", "must list the sorting key (at least the primary key columns)");
    }
  }
  for (auto [key, value] :
       {std::pair{"partition_by", &options.partition_by}, std::pair{"ttl", &options.ttl}}) {
    if (!value->has_value()) continue;
    auto tokens = TokenizeExpression(**value, options.origin + ": " + prefix + key + "'");
    if (!tokens.ok()) return tokens.error();
    if (tokens->empty()) return OptionError(options, key, "must not be empty");
  }
  if (options.where && options.where->find_first_not_of(" \t\r\n") == std::string::npos) {
    return OptionError(options, "where", "must not be empty (leave it out to replicate every row)");
  }
  for (const auto& [name, value] : options.settings) {
    if (!IsIdentifier(name)) return OptionError(options, "settings." + name, "is not a setting name");
    if (value.empty()) return OptionError(options, "settings." + name, "needs a value");
  }
  for (auto& [column, entry] : options.columns) {
    if (column.empty()) return OptionError(options, "columns", "has an empty column name");
    if (entry.codec) {
      auto codec = NormalizeCodec(*entry.codec,
                                  fmt::format("{}: {}columns.{}.codec'", options.origin, prefix, column));
      if (!codec.ok()) return codec.error();
      entry.codec = *codec;
    }
  }
  entries_.push_back(std::move(options));
  return Status::Ok();
}

EffectiveMapping MappingSet::For(std::string_view database, std::string_view table,
                                 std::string_view default_dest_database) const {
  EffectiveMapping m;
  m.source_database = std::string(database);
  m.source_table = std::string(table);
  std::optional<std::string> dest_database;
  std::optional<std::string> dest_table;
  auto named = [](const TableOptions& e, const std::string& name) {
    return NamedColumn{name, e.origin, e.Exact()};
  };
  for (const TableOptions& e : entries_) {
    if (!Matches(e, database, table)) continue;
    m.origins.push_back(e.pattern + " (" + e.origin + ")");
    if (e.dest_database) dest_database = e.dest_database;
    if (e.dest_table) dest_table = e.dest_table;
    for (const std::string& column : e.exclude_columns) {
      auto it = std::find_if(m.excluded.begin(), m.excluded.end(),
                             [&](const NamedColumn& n) { return schema::EqualsIgnoreCase(n.name, column); });
      if (it == m.excluded.end()) {
        m.excluded.push_back(named(e, column));
      } else {
        it->exact = it->exact || e.Exact();
      }
    }
    for (const auto& rename : e.rename_columns) {
      const std::string& from = rename.first;
      const std::string& to = rename.second;
      auto it = std::find_if(m.renamed.begin(), m.renamed.end(),
                             [&](const auto& r) { return schema::EqualsIgnoreCase(r.first.name, from); });
      if (it == m.renamed.end()) {
        m.renamed.emplace_back(named(e, from), to);
      } else {
        bool exact = it->first.exact || e.Exact();
        it->first = named(e, it->first.name);
        it->first.exact = exact;
        it->second = to;
      }
    }
    if (e.order_by) {
      m.order_by = *e.order_by;
      m.order_by_origin = e.origin;
    }
    if (e.partition_by) {
      m.partition_by = *e.partition_by;
      m.partition_by_origin = e.origin;
    }
    if (e.ttl) {
      m.ttl = *e.ttl;
      m.ttl_origin = e.origin;
    }
    for (const auto& setting : e.settings) {
      auto it = std::find_if(m.settings.begin(), m.settings.end(),
                             [&](const auto& s) { return s.first == setting.first; });
      if (it == m.settings.end()) {
        m.settings.push_back(setting);
      } else {
        it->second = setting.second;
      }
    }
    for (const auto& configured : e.columns) {
      const std::string& column = configured.first;
      const ColumnEntry& entry = configured.second;
      auto it = std::find_if(m.columns.begin(), m.columns.end(),
                             [&](const auto& c) { return schema::EqualsIgnoreCase(c.first.name, column); });
      if (it == m.columns.end()) {
        m.columns.emplace_back(named(e, column), clickhouse::ColumnOptions{});
        it = m.columns.end() - 1;
      } else {
        it->first.exact = it->first.exact || e.Exact();
      }
      if (entry.codec) it->second.codec = *entry.codec;
      if (entry.low_cardinality) it->second.low_cardinality = *entry.low_cardinality;
    }
    if (e.adopt) m.adopt = *e.adopt;
    if (e.deletes) m.deletes = *e.deletes;
    if (e.history) m.history = *e.history;
    if (e.json_native) m.json_native = *e.json_native;
    if (e.where) {
      m.where = *e.where;
      m.where_origin = e.origin;
    }
    if (e.source_column) m.source_column = *e.source_column;
  }
  m.source_value = std::string(database);
  const std::string fallback_database =
      default_dest_database.empty() ? std::string(database) : std::string(default_dest_database);
  if (!dest_database || !Substitute(*dest_database, database, table, m.dest_database)) {
    m.dest_database = fallback_database;
  }
  if (!dest_table || !Substitute(*dest_table, database, table, m.dest_table))
    m.dest_table = std::string(table);
  if (!m.order_by.empty()) {
    auto elements = SplitExpressionList(m.order_by, "order_by");
    if (elements.ok()) m.order_by_elements = *elements;  // Add checked it
  }
  return m;
}

Status MappingSet::CheckDestinations(const std::vector<std::pair<std::string, std::string>>& tables,
                                     std::string_view default_dest_database) const {
  std::map<std::pair<std::string, std::string>, std::string> seen;
  for (const auto& [database, table] : tables) {
    EffectiveMapping m = For(database, table, default_dest_database);
    auto [it, inserted] =
        seen.emplace(std::pair{m.dest_database, m.dest_table}, fmt::format("{}.{}", database, table));
    if (!inserted) {
      // Shared tables: every source of one ClickHouse table names the same source_column.
      size_t dot = it->second.find('.');
      EffectiveMapping other =
          For(it->second.substr(0, dot), it->second.substr(dot + 1), default_dest_database);
      if (m.Shared() && other.source_column == m.source_column && other.source_value != m.source_value)
        continue;
      if (m.Shared() && other.source_column == m.source_column) {
        return Error(
            ErrorKind::kConfig,
            fmt::format("tables {} and {}.{} would both be replicated into the shared ClickHouse table "
                        "{}.{} with {} = '{}': a shared table keeps its sources apart by database (and "
                        "source_name), so two tables of one database cannot share it; give one of them "
                        "another dest in table_options",
                        it->second, database, table, m.dest_database, m.dest_table, m.source_column,
                        m.source_value));
      }
      if (m.Shared() || other.Shared()) {
        return Error(ErrorKind::kConfig,
                     fmt::format("tables {} and {}.{} both go into the ClickHouse table {}.{} but their "
                                 "table_options give different source_column ('{}' and '{}'): give every "
                                 "table of a shared ClickHouse table the same source_column",
                                 it->second, database, table, m.dest_database, m.dest_table,
                                 other.source_column, m.source_column));
      }
      return Error(
          ErrorKind::kConfig,
          fmt::format("tables {} and {}.{} would both be replicated into the ClickHouse table {}.{}: give "
                      "one of them another dest in table_options",
                      it->second, database, table, m.dest_database, m.dest_table));
    }
  }
  return Status::Ok();
}

std::vector<std::string> MappingSet::Describe() const {
  std::vector<std::string> lines;
  for (const TableOptions& e : entries_) {
    std::vector<std::string> parts;
    if (e.dest_database || e.dest_table) {
      parts.push_back("dest " + e.dest_database.value_or("(default database)") + "." +
                      e.dest_table.value_or("{table}"));
    }
    if (!e.exclude_columns.empty()) parts.push_back("exclude " + Joined(e.exclude_columns, ", "));
    if (!e.rename_columns.empty()) {
      std::vector<std::string> renames;
      for (const auto& [from, to] : e.rename_columns) renames.push_back(fmt::format("{}→{}", from, to));
      parts.push_back("rename " + Joined(renames, ", "));
    }
    if (e.order_by) parts.push_back("order_by " + *e.order_by);
    if (e.partition_by) parts.push_back("partition_by " + *e.partition_by);
    if (e.ttl) parts.push_back("ttl " + *e.ttl);
    if (!e.settings.empty()) {
      std::vector<std::string> settings;
      for (const auto& [name, value] : e.settings) settings.push_back(fmt::format("{} = {}", name, value));
      parts.push_back("settings " + Joined(settings, ", "));
    }
    for (const auto& [column, entry] : e.columns) {
      std::vector<std::string> options;
      if (entry.low_cardinality)
        options.push_back(*entry.low_cardinality ? "low_cardinality" : "no low_cardinality");
      if (entry.codec) options.push_back("codec " + *entry.codec);
      parts.push_back("column " + column + ": " + Joined(options, ", "));
    }
    if (e.adopt) parts.push_back(*e.adopt ? "adopt" : "no adopt");
    if (e.deletes) parts.push_back(*e.deletes == DeleteMode::kIgnore ? "deletes ignore" : "deletes soft");
    if (e.history) parts.push_back(*e.history ? "history" : "no history");
    if (e.json_native) parts.push_back(*e.json_native ? "json native" : "json string");
    if (e.where) parts.push_back("where " + *e.where);
    if (e.source_column) parts.push_back("source_column " + *e.source_column);
    lines.push_back(e.pattern + " (" + e.origin + "): " + (parts.empty() ? "nothing" : Joined(parts, "; ")));
  }
  return lines;
}

bool EffectiveMapping::Excluded(std::string_view column) const {
  return ContainsName(excluded, column);
}

void EffectiveMapping::AcceptRenamedAway(const std::vector<std::string>& already_excluded,
                                         const std::map<std::string, std::string>& clickhouse_names) {
  for (NamedColumn& n : excluded) {
    if (std::any_of(already_excluded.begin(), already_excluded.end(),
                    [&](const std::string& e) { return schema::EqualsIgnoreCase(e, n.name); })) {
      n.exact = false;
    }
  }
  for (auto& [from, to] : renamed) {
    for (const auto& [source, stored] : clickhouse_names) {
      if (stored == to) from.exact = false;
    }
  }
  stored_names = clickhouse_names;
}

std::string EffectiveMapping::DestColumn(std::string_view column) const {
  // A column renamed at the source whose ClickHouse column kept its name (issue 33, case 3: a
  // sorting-key column behind an ALIAS): the ClickHouse table's name is the one its keys use.
  for (const auto& [source, stored] : stored_names) {
    if (schema::EqualsIgnoreCase(source, column)) return stored;
  }
  for (const auto& [from, to] : renamed) {
    if (schema::EqualsIgnoreCase(from.name, column)) return to;
  }
  return std::string(column);
}

bool EffectiveMapping::IsDefault() const {
  return origins.empty();
}

clickhouse::Capabilities EffectiveMapping::Caps(const clickhouse::Capabilities& caps) const {
  clickhouse::Capabilities out = caps;
  if (json_native) out.json_native = *json_native;
  return out;
}

schema::TableSchema EffectiveMapping::Project(const schema::TableSchema& source) const {
  schema::TableSchema out = source;
  std::erase_if(out.columns, [&](const schema::Column& c) { return Excluded(c.name); });
  std::erase_if(out.unique_keys, [&](const schema::Key& key) {
    return std::any_of(key.columns.begin(), key.columns.end(),
                       [&](const std::string& c) { return Excluded(c); });
  });
  out.RenumberColumns();
  return out;
}

clickhouse::CreateOptions EffectiveMapping::CreateOptions() const {
  clickhouse::CreateOptions out;
  out.table = dest_table;
  for (const auto& [from, to] : renamed) out.column_names.emplace_back(from.name, to);
  for (const auto& [column, options] : columns) out.columns.emplace_back(column.name, options);
  out.order_by = order_by_elements;
  out.partition_by = partition_by;
  out.ttl = ttl;
  out.settings = settings;
  out.source_column = source_column;
  return out;
}

std::vector<std::string> ColumnReferences(std::string_view expression) {
  std::vector<std::string> out;
  auto tokens = TokenizeExpression(expression, "expression");
  if (!tokens.ok()) return out;
  for (size_t i = 0; i < tokens->size(); ++i) {
    if (IsColumnReference(*tokens, i)) out.push_back((*tokens)[i].text);
  }
  return out;
}

std::vector<std::string> EffectiveMapping::KeyColumns(const schema::TableSchema& source) const {
  std::vector<std::string> referenced;
  for (const std::string* text : {&order_by, &partition_by}) {
    if (text->empty()) continue;
    auto tokens = TokenizeExpression(*text, "expression");
    if (!tokens.ok()) continue;
    for (size_t i = 0; i < tokens->size(); ++i) {
      if (IsColumnReference(*tokens, i)) referenced.push_back((*tokens)[i].text);
    }
  }
  const clickhouse::SortingKey key = clickhouse::ChooseSortingKey(source);
  std::vector<std::string> out;
  for (const schema::Column& c : source.columns) {
    if (Excluded(c.name)) continue;
    const std::string dest = DestColumn(c.name);
    bool in_key = std::any_of(key.columns.begin(), key.columns.end(),
                              [&](const std::string& k) { return schema::EqualsIgnoreCase(k, c.name); });
    bool named = std::find(referenced.begin(), referenced.end(), dest) != referenced.end();
    if (in_key || named) out.push_back(c.name);
  }
  return out;
}

std::string EffectiveMapping::Summary() const {
  std::vector<std::string> parts{source_database + "." + source_table + " → " + dest_database + "." +
                                 dest_table};
  if (!excluded.empty()) {
    std::vector<std::string> names;
    for (const NamedColumn& n : excluded) names.push_back(n.name);
    parts.push_back("excluded: " + Joined(names, ", "));
  }
  if (!renamed.empty()) {
    std::vector<std::string> names;
    for (const auto& [from, to] : renamed) names.push_back(from.name + "→" + to);
    parts.push_back("renamed: " + Joined(names, ", "));
  }
  if (!partition_by.empty()) parts.push_back("PARTITION BY " + partition_by);
  if (!order_by_elements.empty()) parts.push_back("ORDER BY (" + Joined(order_by_elements, ", ") + ")");
  if (!ttl.empty()) parts.push_back("TTL " + ttl);
  if (!settings.empty()) {
    std::vector<std::string> items;
    for (const auto& [name, value] : settings) items.push_back(fmt::format("{} = {}", name, value));
    parts.push_back("SETTINGS " + Joined(items, ", "));
  }
  std::vector<std::string> column_parts;
  for (const auto& [column, options] : columns) {
    std::string text = ColumnOptionsText(options);
    if (!text.empty()) column_parts.push_back(column.name + " " + text);
  }
  if (!column_parts.empty()) parts.push_back("columns: " + Joined(column_parts, ", "));
  if (adopt) parts.emplace_back("adopt");
  if (deletes == DeleteMode::kIgnore) parts.emplace_back("deletes: ignore (append-only)");
  if (history) parts.push_back("history: " + dest_database + "." + dest_table + "_history");
  if (json_native) parts.emplace_back(*json_native ? "json: native" : "json: string");
  if (!where.empty()) parts.push_back("WHERE " + where);
  if (Shared()) parts.push_back("shared: " + source_column + " = '" + source_value + "'");
  return Joined(parts, "; ");
}

std::vector<std::string> EffectiveMapping::Describe() const {
  std::vector<std::string> lines{Summary()};
  if (!origins.empty()) lines.push_back("  from table_options: " + Joined(origins, ", "));
  return lines;
}

namespace {

/// How an identifier in ORDER BY, PARTITION BY or TTL relates to the table.
class ColumnResolver {
 public:
  ColumnResolver(const EffectiveMapping& m, const schema::TableSchema& source) : m_(m), source_(source) {}

  /// The source column whose ClickHouse name is exactly `name`, or nullptr.
  const schema::Column* ByClickHouseName(std::string_view name) const {
    for (const schema::Column& c : source_.columns) {
      if (!m_.Excluded(c.name) && m_.DestColumn(c.name) == name) return &c;
    }
    return nullptr;
  }

  /// Why `name` cannot be used in `clause` (empty: it can). `metadata_ok`: TTL may name
  /// _chsync_synced_at; `unknown_ok`: a word the table does not have may be something else.
  std::string Problem(std::string_view clause, const ExpressionToken& token, bool metadata_ok,
                      bool unknown_ok) const {
    const std::string& name = token.text;
    if (token.kind == Kind::kWord && IsKeyword(name) && ByClickHouseName(name) == nullptr) return "";
    const std::string table = source_.QualifiedName();
    const std::string n(name);
    const std::string head = std::string(clause) + " of " + table + " names " + n;
    if (ByClickHouseName(name) != nullptr) return "";
    if (IsMetadataName(name)) {
      if (metadata_ok) return "";
      return head +
             ", a chsync metadata column: its value differs between the versions of a row, so they "
             "would no longer replace each other";
    }
    if (m_.Excluded(name))
      return head + ", which exclude_columns excludes: the ClickHouse table does not have it";
    for (const auto& [from, to] : m_.renamed) {
      if (schema::EqualsIgnoreCase(from.name, name) && source_.GetColumn(from.name) != nullptr) {
        return fmt::format(
            "{}, which is {} in ClickHouse: {} is ClickHouse text, over the ClickHouse (renamed) "
            "column names",
            head, to, clause);
      }
    }
    for (const schema::Column& c : source_.columns) {
      const std::string dest = m_.DestColumn(c.name);
      if (!m_.Excluded(c.name) && schema::EqualsIgnoreCase(dest, name)) {
        return fmt::format("{}, and the ClickHouse column is {} (ClickHouse compares names case-sensitively)",
                           head, dest);
      }
    }
    if (unknown_ok) return "";
    return head + ", which is not a column of the table";
  }

 private:
  const EffectiveMapping& m_;
  const schema::TableSchema& source_;
};

bool Setting(const EffectiveMapping& m, std::string_view name) {
  for (const auto& [setting, value] : m.settings) {
    if (setting == name) return value == "1";
  }
  return false;
}

void CheckOrderBy(const EffectiveMapping& m, const schema::TableSchema& source,
                  std::vector<std::string>& problems) {
  const std::string table = source.QualifiedName();
  const std::string where = Where(m.order_by_origin);
  auto elements = Elements(m.order_by, "order_by of " + table);
  if (!elements.ok()) {
    problems.push_back(elements.error().message() + where);
    return;
  }
  const ColumnResolver resolver(m, source);
  const bool nullable_key = Setting(m, "allow_nullable_key");
  std::vector<std::string> plain;
  std::vector<std::string> null_checked;
  std::vector<std::string> not_null_assumed;
  for (const auto& element : *elements) {
    if (auto name = PlainIdentifier(element)) plain.push_back(*name);
    if (auto name = CallOf(element, "isNull")) null_checked.push_back(*name);
    if (auto name = CallOf(element, "assumeNotNull")) not_null_assumed.push_back(*name);
    for (size_t i = 0; i < element.size(); ++i) {
      if (!IsColumnReference(element, i)) continue;
      std::string problem = resolver.Problem("ORDER BY", element[i], false, false);
      if (!problem.empty()) {
        problems.push_back(problem + where);
        continue;
      }
      const schema::Column* column = resolver.ByClickHouseName(element[i].text);
      if (element.size() == 1 && column != nullptr && column->nullable && !nullable_key) {
        problems.push_back(fmt::format(
            "ORDER BY of {} lists {}, which is Nullable: ClickHouse refuses a Nullable sorting key; write "
            "isNull({}), assumeNotNull({}) as chsync does{}",
            table, element[i].text, element[i].text, element[i].text, where));
      }
    }
  }
  const clickhouse::SortingKey key = clickhouse::ChooseSortingKey(source);
  auto has = [](const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  std::string unique_name;
  if (source.primary_key.empty() && !key.full_row) {
    for (const schema::Key& u : source.unique_keys) {
      if (u.columns == key.columns) {
        unique_name = u.name;
        break;
      }
    }
  }
  for (const std::string& k : key.columns) {
    const schema::Column* column = source.GetColumn(k);
    if (column == nullptr || m.Excluded(column->name)) continue;  // reported elsewhere
    const std::string dest = m.DestColumn(column->name);
    const bool ok = column->nullable ? ((has(null_checked, dest) && has(not_null_assumed, dest)) ||
                                        (nullable_key && has(plain, dest)))
                                     : has(plain, dest);
    if (ok) continue;
    const std::string named =
        dest == column->name ? column->name : fmt::format("{} ({} in ClickHouse)", column->name, dest);
    const std::string spelled =
        column->nullable
            ? fmt::format(" as isNull({}), assumeNotNull({}) (the column is Nullable)", dest, dest)
            : "";
    if (key.full_row) {
      problems.push_back(fmt::format(
          "ORDER BY of {} must list every column of the table, which has no primary key or NOT NULL unique "
          "key "
          "(chsync identifies its rows by all their values): {} is missing{}, so rows that differ only in it "
          "would collapse{}",
          table, named, spelled, where));
    } else if (!source.primary_key.empty()) {
      problems.push_back(
          fmt::format("ORDER BY of {} must contain the primary key column {}{}: ClickHouse keeps one row per "
                      "ORDER BY value, "
                      "so rows with other {}s would collapse{}",
                      table, named, spelled, dest, where));
    } else {
      problems.push_back(fmt::format(
          "ORDER BY of {} must contain the column {} of the unique key {}{} (the table has no primary key; "
          "chsync identifies its rows by that key): ClickHouse keeps one row per ORDER BY value, so rows "
          "with "
          "other {}s would collapse{}",
          table, named, unique_name, spelled, dest, where));
    }
  }
}

void CheckReferences(const EffectiveMapping& m, const schema::TableSchema& source, std::string_view clause,
                     const std::string& text, const std::string& origin, bool is_ttl,
                     std::vector<std::string>& problems) {
  auto tokens = TokenizeExpression(text, std::string(clause) + " of " + source.QualifiedName());
  if (!tokens.ok()) {
    problems.push_back(tokens.error().message() + Where(origin));
    return;
  }
  const ColumnResolver resolver(m, source);
  for (size_t i = 0; i < tokens->size(); ++i) {
    if (!IsColumnReference(*tokens, i)) continue;
    std::string problem = resolver.Problem(clause, (*tokens)[i], is_ttl, is_ttl);
    if (!problem.empty()) problems.push_back(problem + Where(origin));
  }
}

}  // namespace

Status Validate(const EffectiveMapping& m, const schema::TableSchema& source) {
  const std::string table = source.QualifiedName();
  std::vector<std::string> problems;
  auto missing = [&](const NamedColumn& n, std::string_view key) {
    if (!n.exact || source.GetColumn(n.name) != nullptr) return false;
    problems.push_back(fmt::format("{} of {} names {}, which is not a column of the table{}", key, table,
                                   n.name, Where(n.origin)));
    return true;
  };
  if (m.Shared() && m.history) {
    problems.push_back(
        fmt::format("{} has source_column and history: true: a shared table has no history "
                    "table yet; drop one of them",
                    table));
  }
  const clickhouse::SortingKey key = clickhouse::ChooseSortingKey(source);
  for (const NamedColumn& n : m.excluded) {
    if (missing(n, "exclude_columns")) continue;
    const schema::Column* column = source.GetColumn(n.name);
    if (column == nullptr) continue;
    bool in_key = std::any_of(key.columns.begin(), key.columns.end(), [&](const std::string& k) {
      return schema::EqualsIgnoreCase(k, column->name);
    });
    if (!in_key) continue;
    if (key.full_row) {
      problems.push_back(fmt::format(
          "cannot exclude column {} of {}: the table has no primary key or NOT NULL unique key, so chsync "
          "identifies its rows by all their values, and rows that differ only in {} would collapse into one; "
          "give "
          "the table a primary key at the source, or replicate the column{}",
          column->name, table, column->name, Where(n.origin)));
    } else {
      problems.push_back(
          fmt::format("cannot exclude column {} of {}: it is in the {} that identifies the table's rows in "
                      "ClickHouse (its "
                      "sorting key){}",
                      column->name, table, source.primary_key.empty() ? "NOT NULL unique key" : "primary key",
                      Where(n.origin)));
    }
  }
  for (size_t i = 0; i < m.renamed.size(); ++i) {
    const NamedColumn& from = m.renamed[i].first;
    const std::string& to = m.renamed[i].second;
    if (missing(from, "rename_columns")) continue;
    const std::string where = Where(from.origin);
    if (m.Excluded(from.name)) {
      problems.push_back(fmt::format("rename_columns of {} renames {}, which exclude_columns excludes{}",
                                     table, from.name, where));
      continue;
    }
    const std::string head = fmt::format("rename_columns of {} renames {} to {}", table, from.name, to);
    if (IsMetadataName(to)) {
      problems.push_back(
          fmt::format("{}: names starting with _chsync_ are chsync's metadata columns{}", head, where));
    }
    for (const schema::Column& c : source.columns) {
      if (!schema::EqualsIgnoreCase(c.name, from.name) && schema::EqualsIgnoreCase(c.name, to)) {
        problems.push_back(fmt::format("{}, the name of another column of the table{}", head, where));
      }
    }
    for (size_t j = 0; j < i; ++j) {
      if (schema::EqualsIgnoreCase(m.renamed[j].second, to) && !m.Excluded(m.renamed[j].first.name)) {
        problems.push_back(fmt::format("{}, and {} is renamed to {}{}", head, m.renamed[j].first.name,
                                       m.renamed[j].second, where));
      }
    }
  }
  for (const auto& [column, options] : m.columns) {
    if (missing(column, "columns")) continue;
    if (m.Excluded(column.name) && source.GetColumn(column.name) != nullptr) {
      problems.push_back(fmt::format("columns of {} configures {}, which exclude_columns excludes{}", table,
                                     column.name, Where(column.origin)));
    }
  }
  if (!m.order_by.empty()) CheckOrderBy(m, source, problems);
  if (!m.partition_by.empty()) {
    CheckReferences(m, source, "PARTITION BY", m.partition_by, m.partition_by_origin, false, problems);
  }
  if (!m.ttl.empty()) CheckReferences(m, source, "TTL", m.ttl, m.ttl_origin, true, problems);
  if (!m.where.empty()) {
    auto filter = FilterFor(m, source);
    if (!filter.ok()) {
      problems.push_back(filter.error().message());
    } else {
      for (const std::string& column : (*filter)->columns()) {
        if (m.Excluded(column)) {
          problems.push_back(
              fmt::format("the row filter (where:) of {} names {}, which exclude_columns excludes ({})",
                          table, column, m.where_origin));
        }
      }
    }
  }
  if (problems.empty()) return Status::Ok();
  if (problems.size() == 1) return Error(ErrorKind::kConfig, problems[0]);
  return Error(ErrorKind::kConfig, "table_options for " + table + " have " + std::to_string(problems.size()) +
                                       " problems:\n  " + Joined(problems, "\n  "));
}

Result<std::optional<RowFilter>> FilterFor(const EffectiveMapping& m, const schema::TableSchema& source) {
  if (m.where.empty()) return std::optional<RowFilter>();
  CHSYNC_ASSIGN_OR_RETURN(RowFilter filter, RowFilter::Parse(m.where, source, m.where_origin));
  return std::optional<RowFilter>(std::move(filter));
}

Status Validate(const EffectiveMapping& m, const schema::TableSchema& source,
                const clickhouse::Capabilities& caps, const clickhouse::DdlTarget& target) {
  CHSYNC_RETURN_IF_ERROR(Validate(m, source));
  auto layout = clickhouse::DestinationLayout(m.Project(source), m.Caps(caps), target, m.CreateOptions());
  if (!layout.ok()) return layout.error();
  return Status::Ok();
}

Status CheckForPipe(const EffectiveMapping& m, const schema::TableSchema& source,
                    const clickhouse::Capabilities& caps, const clickhouse::DdlTarget& target) {
  const clickhouse::Capabilities table_caps = m.Caps(caps);
  for (const schema::Column& c : source.columns) {
    if (!c.IsJson() || m.Excluded(c.name)) continue;
    auto mapped = clickhouse::MapColumn(c, table_caps);
    if (!mapped.ok())
      return Error(ErrorKind::kConfig, "table " + source.QualifiedName() + ": " + mapped.error().message());
  }
  if (m.IsDefault()) return Status::Ok();
  Status valid = Validate(m, source, caps, target);
  // What this server lacks for the options (CODEC, TTL, LowCardinality) is the configuration's to fix.
  if (!valid.ok() && valid.error().kind() == ErrorKind::kUnsupported)
    return Error(ErrorKind::kConfig, valid.error().message());
  return valid;
}

}  // namespace chsync::pipe
