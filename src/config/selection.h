#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "mysql/table_filter.h"
#include "state/checkpoint.h"

namespace chsync::pipe {

/// Which source tables the pipe replicates: the configured `tables:` / --tables patterns, then the
/// changes `chsync tables add|remove` made while the pipe ran (kept in the checkpoint, on top of
/// whatever the configuration says), in order. A table is selected when the last of them that
/// matches it says so: the configured patterns first (an including pattern matches and no
/// excluding one does), then each change whose pattern matches it, an add selecting it and a
/// remove deselecting it. Pure.
class Selection {
 public:
  /// Every table outside the system schemas, no changes.
  Selection() : configured_(mysql::TableFilter::All()) {}
  /// `spec`: the --tables text (empty: every table); kUsage naming a bad pattern of it or of a change.
  static Result<Selection> Make(std::string_view spec, std::vector<SelectionChange> changes);

  bool Matches(std::string_view database, std::string_view table) const;
  /// The configured patterns alone.
  const mysql::TableFilter& configured() const { return configured_; }
  const std::vector<SelectionChange>& changes() const { return changes_; }
  /// The configured text as given ("*.*" when every table).
  const std::string& spec() const { return configured_.spec(); }
  /// One line: the configured text, then the changes: "shop.*, !shop.tmp_*; then add crm.users,
  /// remove shop.audit". What the checkpoint records, to find a changed selection at a restart.
  std::string Describe() const;

  /// The selection with one more change. An earlier change of the same pattern is dropped (the
  /// new one decides for the tables it matches anyway), so the list stays as short as the patterns
  /// given. kUsage when `pattern` is not DB.TABLE (wildcards * and ? allowed) or `op` is neither
  /// "add" nor "remove".
  Result<Selection> With(std::string_view op, std::string_view pattern, uint64_t at_ms) const;

 private:
  mysql::TableFilter configured_;
  std::vector<SelectionChange> changes_;
  std::vector<mysql::TableFilter> change_filters_;  ///< each change's pattern, parsed
};

}  // namespace chsync::pipe
