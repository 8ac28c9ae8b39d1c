#include "mysql/table_filter.h"

#include "common/glob.h"

namespace chsync::mysql {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string Unquote(std::string_view s) {
  if (s.size() >= 2 && s.front() == '`' && s.back() == '`') return std::string(s.substr(1, s.size() - 2));
  return std::string(s);
}

}  // namespace

bool IsSystemSchema(std::string_view database) {
  return database == "mysql" || database == "information_schema" || database == "performance_schema" ||
         database == "sys";
}

TableFilter TableFilter::All() {
  TableFilter f;
  f.patterns_.push_back({"*", "*", false});
  f.spec_ = "*.*";
  return f;
}

Result<TableFilter> TableFilter::Parse(std::string_view spec) {
  TableFilter f;
  f.spec_ = std::string(spec);
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    std::string_view item =
        Trim(spec.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    start = comma == std::string_view::npos ? spec.size() + 1 : comma + 1;
    if (item.empty()) continue;
    Pattern p;
    if (item.front() == '!') {
      p.exclude = true;
      item = Trim(item.substr(1));
    }
    size_t dot = item.find('.');
    if (item.size() >= 2 && item.front() == '`') {
      size_t close = item.find('`', 1);
      dot = close == std::string_view::npos ? std::string_view::npos : item.find('.', close);
    }
    std::string_view db = item.substr(0, dot);
    std::string_view table = dot == std::string_view::npos ? "*" : item.substr(dot + 1);
    if (db.empty() || table.empty()) {
      return Error(ErrorKind::kUsage, "invalid table pattern '" + std::string(item) +
                                          "' in --tables: expected DB.TABLE, DB.* or DB (wildcards * and ?)");
    }
    p.database = Unquote(db);
    p.table = Unquote(table);
    f.patterns_.push_back(std::move(p));
  }
  bool any_include = false;
  for (const auto& p : f.patterns_) any_include |= !p.exclude;
  if (!any_include) {
    return Error(ErrorKind::kUsage,
                 "--tables '" + std::string(spec) + "' selects nothing: give at least one DB.TABLE pattern");
  }
  return f;
}

bool TableFilter::Matches(std::string_view database, std::string_view table) const {
  bool included = false;
  for (const auto& p : patterns_) {
    bool wildcard_db = p.database.find_first_of("*?") != std::string::npos;
    if (wildcard_db && IsSystemSchema(database)) continue;
    if (!GlobMatch(p.database, database) || !GlobMatch(p.table, table)) continue;
    if (p.exclude) return false;
    included = true;
  }
  return included;
}

}  // namespace chsync::mysql
