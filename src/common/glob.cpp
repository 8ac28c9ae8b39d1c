#include "common/glob.h"

namespace chsync {

bool GlobMatch(std::string_view pattern, std::string_view text) {
  // Iterative matcher with single backtrack point: linear in practice, no recursion.
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

namespace {

std::string_view Unquote(std::string_view s) {
  if (s.size() >= 2 && s.front() == '`' && s.back() == '`') return s.substr(1, s.size() - 2);
  return s;
}

}  // namespace

bool SplitTablePattern(std::string_view pattern, std::string_view& database, std::string_view& table) {
  size_t dot = pattern.find('.');
  if (pattern.size() >= 2 && pattern.front() == '`') {
    size_t close = pattern.find('`', 1);
    dot = close == std::string_view::npos ? std::string_view::npos : pattern.find('.', close);
  }
  if (dot == std::string_view::npos) return false;
  database = Unquote(pattern.substr(0, dot));
  table = Unquote(pattern.substr(dot + 1));
  return !database.empty() && !table.empty();
}

}  // namespace chsync
