#include "config/selection.h"

#include <fmt/format.h>

#include <utility>

namespace chsync::pipe {
namespace {

Result<mysql::TableFilter> ParseChangePattern(std::string_view op, std::string_view pattern) {
  if (op != "add" && op != "remove") {
    return Error(ErrorKind::kUsage,
                 fmt::format("unknown change of the table selection '{}' (add or remove)", op));
  }
  const bool qualified = pattern.find('.') != std::string_view::npos;
  if (!qualified || pattern.find(',') != std::string_view::npos || pattern.starts_with('!')) {
    return Error(ErrorKind::kUsage,
                 fmt::format("'{}' is not one DB.TABLE pattern (wildcards * and ?; DB.* for every table of a "
                             "database)",
                             pattern));
  }
  return mysql::TableFilter::Parse(pattern);
}

}  // namespace

Result<Selection> Selection::Make(std::string_view spec, std::vector<SelectionChange> changes) {
  Selection s;
  if (!spec.empty()) {
    CHSYNC_ASSIGN_OR_RETURN(s.configured_, mysql::TableFilter::Parse(spec));
  }
  for (const SelectionChange& c : changes) {
    CHSYNC_ASSIGN_OR_RETURN(mysql::TableFilter f, ParseChangePattern(c.op, c.pattern));
    s.change_filters_.push_back(std::move(f));
  }
  s.changes_ = std::move(changes);
  return s;
}

bool Selection::Matches(std::string_view database, std::string_view table) const {
  bool selected = configured_.Matches(database, table);
  for (size_t i = 0; i < changes_.size(); ++i) {
    if (change_filters_[i].Matches(database, table)) selected = changes_[i].op == "add";
  }
  return selected;
}

std::string Selection::Describe() const {
  std::string text = spec();
  for (size_t i = 0; i < changes_.size(); ++i) {
    text += fmt::format("{}{} {}", i == 0 ? "; then " : ", ", changes_[i].op, changes_[i].pattern);
  }
  return text;
}

Result<Selection> Selection::With(std::string_view op, std::string_view pattern, uint64_t at_ms) const {
  if (auto parsed = ParseChangePattern(op, pattern); !parsed.ok()) return std::move(parsed).error();
  std::vector<SelectionChange> changes;
  for (const SelectionChange& c : changes_) {
    if (c.pattern != pattern) changes.push_back(c);
  }
  changes.push_back({std::string(op), std::string(pattern), at_ms});
  return Make(configured_.spec(), std::move(changes));
}

}  // namespace chsync::pipe
