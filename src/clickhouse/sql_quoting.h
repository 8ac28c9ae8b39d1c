#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace chsync::clickhouse {

/// `name` as a ClickHouse quoted identifier: in backticks, a backtick doubled, a backslash
/// escaped, control bytes as \xHH; every other byte (any UTF-8) as is. Safe for any input,
/// including names ClickHouse reserves (`select`) or chsync uses (`_chsync_version`).
std::string QuoteIdentifier(std::string_view name);

/// "`db`.`table`".
std::string QualifiedName(std::string_view database, std::string_view table);

/// `value` as a ClickHouse string literal: in single quotes, quote and backslash escaped with a
/// backslash, control bytes and 0x7F as \xHH; other bytes (UTF-8 or not) as is. Binary-safe.
std::string QuoteString(std::string_view value);

/// The fields of one line of ClickHouse's TabSeparated output, unescaped (\t \n \r \b \f \0 \a
/// \v; a backslash before any other byte stands for that byte).
std::vector<std::string> SplitTabSeparated(std::string_view line);

}  // namespace chsync::clickhouse
