#pragma once

#include <string_view>

namespace chsync {

/// Shell-style match of `text` against `pattern`: `*` any run, `?` one character, the rest
/// literal. Case-sensitive, as MySQL table names are on Linux.
bool GlobMatch(std::string_view pattern, std::string_view text);

/// Splits a DB.TABLE pattern into its two parts, either of which may be `quoted` (the quotes are
/// removed; a quoted database may hold dots); false when it is not one (no dot, an empty part).
bool SplitTablePattern(std::string_view pattern, std::string_view& database, std::string_view& table);

}  // namespace chsync
