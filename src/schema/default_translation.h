#pragma once

#include <string>
#include <string_view>

#include "schema/table_schema.h"

namespace chsync::schema {

/// The outcome of translating a MySQL column default for ClickHouse (seeds/README.md, "Defaults
/// of added columns"): either a ClickHouse literal, or an omission with a reason the pipe logs.
struct DefaultTranslation {
  bool propagated = false;
  /// ClickHouse literal text when propagated: a number (`-5`, `1.50`, `1e5`), or a single-quoted
  /// string with ClickHouse escaping (`'it\'s'`, `'2024-01-31 10:00:00'`).
  std::string literal;
  /// Why the default was omitted (empty when propagated), e.g. "NULL default", "function call
  /// CURRENT_TIMESTAMP(6)", "string contains a backslash".
  std::string reason;

  bool operator==(const DefaultTranslation&) const = default;
};

/// Translates `column.default_value` in the context of the column's MySQL type.
/// Propagated: integer/decimal/float literals with sign, TRUE/FALSE (as 1/0), simple strings,
/// date and datetime strings, ENUM/SET members when `full_metadata` (binlog_row_metadata=FULL).
/// Omitted, each with a reason: no default, NULL, bit and hex literals, CURRENT_TIMESTAMP and any
/// function call or expression (including `('x')`), strings holding a backslash or a control
/// character, and any value that does not fit the column's type (out-of-range integer, zero date,
/// fraction on an integer column, member not in the ENUM, TIMESTAMP literals whose meaning depends
/// on the session time zone, types with no portable ClickHouse literal such as TIME and GEOMETRY).
DefaultTranslation TranslateDefault(const Column& column, bool full_metadata);

/// `text` as a ClickHouse string literal: single quotes, `\` → `\\`, `'` → `\'`.
std::string QuoteClickHouseString(std::string_view text);

}  // namespace chsync::schema
