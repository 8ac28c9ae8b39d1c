#pragma once

#include <string_view>

namespace chsync::http {

/// True only for a single statement that reads: its first keyword, after whitespace, `--` and
/// `/* */` comments (nested, as ClickHouse nests them) and opening parentheses, is SELECT, WITH,
/// SHOW, DESCRIBE, DESC, EXISTS or EXPLAIN (any case), and nothing but whitespace and comments
/// follows a `;` outside quotes ('…', "…", `…`, with backslash escapes and doubled quotes).
///
/// Conservative: anything it cannot read with certainty is false — an unterminated quote or
/// comment, a `#` comment or a `$$` heredoc outside quotes, and `INTO OUTFILE` (which writes a
/// file where the embedded store runs). This is the first gate only: the executor still runs
/// the statement with ClickHouse's readonly setting, which also guards table functions.
bool IsReadOnlyStatement(std::string_view sql);

}  // namespace chsync::http
