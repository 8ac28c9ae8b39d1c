#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace chsync::mysql {

/// Which source tables to replicate: `--tables 'db.*,db2.t,!db.tmp_*'`.
///
/// Comma-separated patterns `DB.TABLE` with shell wildcards (`*`, `?`) in either part; a bare `DB`
/// means `DB.*`; a leading `!` excludes. A table is selected when an including pattern matches and no
/// excluding one does. The system schemas (mysql, information_schema, performance_schema, sys) are
/// never selected by wildcards.
class TableFilter {
 public:
  /// Everything but the system schemas.
  static TableFilter All();
  /// Parses a specification; errors (kUsage) name the bad item.
  static Result<TableFilter> Parse(std::string_view spec);

  bool Matches(std::string_view database, std::string_view table) const;
  const std::string& spec() const { return spec_; }

 private:
  struct Pattern {
    std::string database;
    std::string table;
    bool exclude = false;
  };
  std::vector<Pattern> patterns_;
  std::string spec_;
};

/// True for mysql, information_schema, performance_schema and sys.
bool IsSystemSchema(std::string_view database);

}  // namespace chsync::mysql
