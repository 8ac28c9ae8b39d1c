#include "policy/adopt.h"

#include <fmt/format.h>

#include <algorithm>

#include "clickhouse/sql_quoting.h"
#include "policy/mapping.h"
#include "schema/table_schema.h"

namespace chsync::pipe {
namespace {

using Kind = ExpressionToken::Kind;

std::string Joined(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const std::string& part : parts) {
    if (!out.empty()) out += separator;
    out += part;
  }
  return out;
}

/// A type without the spaces ClickHouse may print differently (outside quotes).
std::string CompactType(std::string_view type) {
  std::string out;
  bool quoted = false;
  for (size_t i = 0; i < type.size(); ++i) {
    char c = type[i];
    if (quoted && c == '\\' && i + 1 < type.size()) {
      out += c;
      out += type[++i];
      continue;
    }
    if (c == '\'') quoted = !quoted;
    if (!quoted && (c == ' ' || c == '\t')) continue;
    out += c;
  }
  return out;
}

/// `type` without a LowCardinality( ) around it.
std::string_view WithoutLowCardinality(std::string_view type) {
  constexpr std::string_view kPrefix = "LowCardinality(";
  if (type.starts_with(kPrefix) && type.ends_with(")")) {
    return type.substr(kPrefix.size(), type.size() - kPrefix.size() - 1);
  }
  return type;
}

bool IsLowCardinality(std::string_view type) {
  return WithoutLowCardinality(type).size() != type.size();
}

/// What engine_full says besides the engine's name.
struct EngineClauses {
  std::string name;
  std::vector<std::string> arguments;
  std::string partition_by;
  std::string order_by;
  std::string ttl;
  std::string settings;
};

bool IsWord(const ExpressionToken& t, std::string_view word) {
  return t.kind == Kind::kWord && schema::EqualsIgnoreCase(t.text, word);
}

Result<EngineClauses> ParseEngineFull(std::string_view text) {
  CHSYNC_ASSIGN_OR_RETURN(std::vector<ExpressionToken> tokens, TokenizeExpression(text, "engine_full"));
  EngineClauses out;
  if (tokens.empty() || tokens[0].kind != Kind::kWord) return out;
  out.name = tokens[0].text;
  size_t i = 1;
  if (i < tokens.size() && tokens[i].kind == Kind::kSymbol && tokens[i].text == "(") {
    int depth = 0;
    size_t close = i;
    for (; close < tokens.size(); ++close) {
      if (tokens[close].kind != Kind::kSymbol) continue;
      if (tokens[close].text == "(") ++depth;
      if (tokens[close].text == ")" && --depth == 0) break;
    }
    size_t begin = tokens[i].offset + 1;
    size_t end = close < tokens.size() ? tokens[close].offset : text.size();
    std::string_view inside = text.substr(begin, end - begin);
    if (inside.find_first_not_of(" \t") != std::string_view::npos) {
      CHSYNC_ASSIGN_OR_RETURN(out.arguments,
                              SplitExpressionList("(" + std::string(inside) + ")", "engine arguments"));
    }
    i = close + 1;
  }
  // The clauses, each up to the next at depth 0.
  std::vector<std::pair<std::string*, std::pair<size_t, size_t>>>
      found;  // field, (text begin, keyword begin)
  int depth = 0;
  for (; i < tokens.size(); ++i) {
    const ExpressionToken& t = tokens[i];
    if (t.kind == Kind::kSymbol) {
      if (t.text == "(" || t.text == "[") ++depth;
      if (t.text == ")" || t.text == "]") --depth;
      continue;
    }
    if (depth != 0) continue;
    const bool two = i + 1 < tokens.size();
    std::string* field = nullptr;
    size_t words = 1;
    if (two && IsWord(t, "PARTITION") && IsWord(tokens[i + 1], "BY")) {
      field = &out.partition_by;
      words = 2;
    } else if (two && IsWord(t, "ORDER") && IsWord(tokens[i + 1], "BY")) {
      field = &out.order_by;
      words = 2;
    } else if (two && (IsWord(t, "PRIMARY") && IsWord(tokens[i + 1], "KEY"))) {
      words = 2;
    } else if (two && (IsWord(t, "SAMPLE") && IsWord(tokens[i + 1], "BY"))) {
      words = 2;
    } else if (IsWord(t, "TTL")) {
      field = &out.ttl;
    } else if (IsWord(t, "SETTINGS")) {
      field = &out.settings;
    } else {
      continue;
    }
    size_t text_begin = i + words < tokens.size() ? tokens[i + words].offset : text.size();
    found.push_back({field, {text_begin, t.offset}});
    i += words - 1;
  }
  for (size_t k = 0; k < found.size(); ++k) {
    if (found[k].first == nullptr) continue;
    size_t begin = found[k].second.first;
    size_t end = k + 1 < found.size() ? found[k + 1].second.second : text.size();
    if (end < begin) end = begin;
    std::string_view clause = text.substr(begin, end - begin);
    while (!clause.empty() && clause.back() == ' ') clause.remove_suffix(1);
    *found[k].first = std::string(clause);
  }
  return out;
}

/// The canonical spelling of each element of an expression list.
std::vector<std::string> CanonicalList(std::string_view text) {
  std::vector<std::string> out;
  auto elements = SplitExpressionList(text, "key");
  if (!elements.ok()) return {CanonicalExpression(text)};
  for (const std::string& e : *elements) out.push_back(CanonicalExpression(e));
  return out;
}

std::vector<std::string> CanonicalList(const std::vector<std::string>& elements) {
  std::vector<std::string> out;
  out.reserve(elements.size());
  for (const std::string& e : elements) out.push_back(CanonicalExpression(e));
  return out;
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty()) out.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

/// The codec lists agree; a codec given without arguments matches the one ClickHouse reports with
/// the arguments it filled in (Delta is reported as Delta(8) for 8-byte values).
bool SameCodecs(std::string_view wanted, std::string_view have) {
  std::vector<std::string> w = CanonicalList(wanted);
  std::vector<std::string> h = have.empty() ? std::vector<std::string>{} : CanonicalList(have);
  if (w.size() != h.size()) return false;
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i] != h[i] && !h[i].starts_with(w[i] + " (")) return false;
  }
  return true;
}

std::string Unquoted(std::string_view name) {
  auto tokens = TokenizeExpression(name, "name");
  if (tokens.ok() && tokens->size() == 1 &&
      ((*tokens)[0].kind == Kind::kWord || (*tokens)[0].kind == Kind::kQuotedIdentifier)) {
    return (*tokens)[0].text;
  }
  return std::string(name);
}

}  // namespace

std::string ExistingTableQuery(std::string_view database, std::string_view table) {
  return "SELECT engine, engine_full, sorting_key, partition_key FROM system.tables WHERE database = " +
         clickhouse::QuoteString(database) + " AND name = " + clickhouse::QuoteString(table);
}

std::string ExistingColumnsQuery(std::string_view database, std::string_view table,
                                 const clickhouse::Capabilities& caps) {
  return std::string("SELECT name, type, default_kind, default_expression") +
         (caps.codec ? ", compression_codec" : "") +
         " FROM system.columns WHERE database = " + clickhouse::QuoteString(database) +
         " AND table = " + clickhouse::QuoteString(table);
}

Result<ExistingTable> ParseExistingTable(std::string_view table_answer, std::string_view columns_answer,
                                         const clickhouse::Capabilities& caps) {
  std::vector<std::string_view> table_lines = Lines(table_answer);
  if (table_lines.empty()) return Error(ErrorKind::kNotFound, "the table does not exist");
  std::vector<std::string> t = clickhouse::SplitTabSeparated(table_lines[0]);
  if (table_lines.size() != 1 || t.size() != 4) {
    return Error(ErrorKind::kCorrupt,
                 "system.tables answered " + std::to_string(table_lines.size()) + " rows of " +
                     std::to_string(t.size()) +
                     " fields, not one of 4 (engine, engine_full, sorting_key, partition_key)");
  }
  ExistingTable out;
  out.engine = t[0];
  out.engine_full = t[1];
  out.sorting_key = t[2];
  out.partition_key = t[3];
  out.codecs_known = caps.codec;
  const size_t fields = caps.codec ? 5 : 4;
  for (std::string_view line : Lines(columns_answer)) {
    std::vector<std::string> c = clickhouse::SplitTabSeparated(line);
    if (c.size() != fields) {
      return Error(ErrorKind::kCorrupt, "system.columns answered a row of " + std::to_string(c.size()) +
                                            " fields, not " + std::to_string(fields) + ": " +
                                            std::string(line));
    }
    out.columns.push_back({c[0], c[1], c[2], c[3], caps.codec ? c[4] : ""});
  }
  return out;
}

AdoptionReport CompareForAdoption(const clickhouse::TableLayout& wanted, const ExistingTable& existing) {
  AdoptionReport r;
  auto find = [&](std::string_view name) -> const ExistingColumn* {
    for (const ExistingColumn& c : existing.columns) {
      if (c.name == name) return &c;
    }
    return nullptr;
  };
  for (const clickhouse::TableLayout::Column& w : wanted.columns) {
    const ExistingColumn* e = find(w.name);
    if (e == nullptr) {
      auto similar =
          std::find_if(existing.columns.begin(), existing.columns.end(),
                       [&](const ExistingColumn& c) { return schema::EqualsIgnoreCase(c.name, w.name); });
      if (similar != existing.columns.end()) {
        r.differences.push_back("column " + w.name + ": the table has " + similar->name +
                                " (ClickHouse compares names case-sensitively)");
      } else {
        r.differences.push_back("missing column " + w.name + " " + w.type);
      }
      continue;
    }
    if (e->default_kind == "ALIAS" || e->default_kind == "MATERIALIZED" || e->default_kind == "EPHEMERAL") {
      r.differences.push_back("column " + w.name + " is " + e->default_kind +
                              " in the table, and chsync writes it (" + w.type + ")");
      continue;
    }
    const bool synced_at = w.name == clickhouse::kSyncedAtColumn;
    if (synced_at) {
      // chsync never writes it: any DateTime or DateTime64 with a DEFAULT will do.
      if (!WithoutLowCardinality(e->type).starts_with("DateTime")) {
        r.differences.push_back("column " + w.name + ": chsync reads it as " + w.type + ", the table has " +
                                e->type);
      } else if (e->default_kind.empty()) {
        r.notes.push_back("column " + w.name + " has no DEFAULT: it holds " + e->type +
                          "'s zero instead of the time chsync wrote each row (chsync creates it DEFAULT " +
                          w.default_expression + ")");
      }
      continue;
    }
    const std::string want_type = CompactType(WithoutLowCardinality(w.type));
    const std::string have_type = CompactType(WithoutLowCardinality(e->type));
    if (want_type != have_type) {
      r.differences.push_back("column " + w.name + ": chsync writes " + w.type + ", the table has " +
                              e->type);
      continue;
    }
    if (IsLowCardinality(w.type) != IsLowCardinality(e->type)) {
      r.notes.push_back("column " + w.name + ": the table stores " + e->type + ", table_options ask for " +
                        w.type);
    }
    if (existing.codecs_known) {
      std::string have_codec = e->codec;
      if (!have_codec.empty()) {
        auto inner = SplitExpressionList(have_codec, "codec");
        if (inner.ok() && inner->size() == 1 && (*inner)[0].starts_with("CODEC")) {
          auto args = SplitExpressionList((*inner)[0].substr(5), "codec");
          if (args.ok()) have_codec = Joined(*args, ", ");
        }
      }
      if (!w.codec.empty() && !SameCodecs(w.codec, have_codec)) {
        r.notes.push_back("column " + w.name + ": table_options ask for CODEC(" + w.codec +
                          "), the table has " + (e->codec.empty() ? "the default compression" : e->codec));
      }
    }
  }
  for (const ExistingColumn& e : existing.columns) {
    bool written = std::any_of(wanted.columns.begin(), wanted.columns.end(),
                               [&](const clickhouse::TableLayout::Column& w) { return w.name == e.name; });
    if (written) continue;
    if (e.default_kind.empty()) {
      r.differences.push_back("column " + e.name + " " + e.type +
                              " is not one chsync writes and has no DEFAULT: every row would hold the type's "
                              "zero; drop it or give it a DEFAULT");
    } else {
      r.notes.push_back("column " + e.name + " is not replicated; ClickHouse fills it (" + e.default_kind +
                        " " + e.default_expression + ")");
    }
  }

  std::vector<std::string> wanted_args;
  for (const std::string& c : wanted.engine_columns) wanted_args.push_back(c);
  const std::string wanted_engine = wanted.engine + "(" + Joined(wanted_args, ", ") + ")";
  auto clauses = ParseEngineFull(existing.engine_full);
  if (!clauses.ok()) {
    r.differences.push_back("engine " + existing.engine_full +
                            " cannot be read: " + clauses.error().message());
    return r;
  }
  const bool replicated = existing.engine.starts_with("Replicated") || existing.engine.starts_with("Shared");
  std::string engine_base = existing.engine;
  if (existing.engine.starts_with("Replicated")) engine_base = existing.engine.substr(10);
  if (existing.engine.starts_with("Shared")) engine_base = existing.engine.substr(6);
  const bool engine_ok = existing.engine == wanted.engine ||
                         (wanted.engine == "ReplacingMergeTree" && engine_base == "ReplacingMergeTree");
  std::vector<std::string> args = clauses->arguments;
  if (replicated && args.size() >= 2) args.erase(args.begin(), args.begin() + 2);
  std::vector<std::string> have_args;
  have_args.reserve(args.size());
  for (const std::string& a : args) have_args.push_back(Unquoted(a));
  if (!engine_ok) {
    r.differences.push_back("engine " + existing.engine + ", chsync needs " + wanted_engine);
  } else if (have_args != wanted_args) {
    r.differences.push_back("engine " + existing.engine + "(" + Joined(args, ", ") + "), chsync needs " +
                            wanted_engine);
  } else if (existing.engine != wanted.engine) {
    r.notes.push_back("engine " + existing.engine + " where chsync would create " + wanted.engine);
  }

  const std::string have_key = existing.sorting_key.empty() ? clauses->order_by : existing.sorting_key;
  if (CanonicalList(have_key) != CanonicalList(wanted.order_by)) {
    r.differences.push_back("sorting key (" + have_key + ") differs from (" + Joined(wanted.order_by, ", ") +
                            "), which chsync needs");
  }
  const std::string have_partition =
      existing.partition_key.empty() ? clauses->partition_by : existing.partition_key;
  if (CanonicalExpression(have_partition) != CanonicalExpression(wanted.partition_by)) {
    r.differences.push_back(
        "partition key " + (have_partition.empty() ? std::string("(none)") : have_partition) +
        " differs from " + (wanted.partition_by.empty() ? std::string("(none)") : wanted.partition_by) +
        ", which chsync was configured with (partition_by in table_options: chsync writes a change of a "
        "row's "
        "partition as a key change)");
  }
  if (CanonicalExpression(clauses->ttl) != CanonicalExpression(wanted.ttl) && !wanted.ttl.empty()) {
    r.notes.push_back("TTL " + (clauses->ttl.empty() ? std::string("(none)") : clauses->ttl) +
                      " where table_options ask for " + wanted.ttl);
  }
  if (!wanted.settings.empty()) {
    auto have = SplitExpressionList(clauses->settings.empty() ? std::string_view("()") : clauses->settings,
                                    "settings");
    std::vector<std::string> have_settings = have.ok() ? CanonicalList(*have) : std::vector<std::string>{};
    for (const auto& [name, value] : wanted.settings) {
      const std::string want = CanonicalExpression(fmt::format("{} = {}", name, value));
      if (std::find(have_settings.begin(), have_settings.end(), want) == have_settings.end()) {
        r.notes.push_back(fmt::format("setting {} = {} is not among the table's ({})", name, value,
                                      clauses->settings.empty() ? std::string("none") : clauses->settings));
      }
    }
  }
  return r;
}

Status CheckAdoption(const AdoptionReport& report, std::string_view source_table,
                     std::string_view dest_table) {
  if (report.ok()) return Status::Ok();
  return Error(
      ErrorKind::kConfig,
      "cannot adopt the ClickHouse table " + std::string(dest_table) + " for " + std::string(source_table) +
          ": it differs from what chsync would create in " + std::to_string(report.differences.size()) +
          (report.differences.size() == 1 ? " way" : " ways") + ":\n  " + Joined(report.differences, "\n  ") +
          "\nchange the table (or table_options) until they agree; or drop the table and leave adopt out, "
          "and chsync creates it");
}

}  // namespace chsync::pipe
