#pragma once

#include <string_view>

namespace chsync {

/// Shell-style match of `text` against `pattern`: `*` any run, `?` one character, the rest
/// literal. Case-sensitive, as MySQL table names are on Linux.
bool GlobMatch(std::string_view pattern, std::string_view text);

}  // namespace chsync
