#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace chsync::binlog {

/// Converts MySQL's binary JSON (a JSON column value, or a JSON diff value) to JSON text as
/// MySQL itself prints it: `{"a": 1, "b": [true, null]}`; keys in stored order; strings escaped
/// as MySQL does; doubles with the shortest digits that round-trip; opaque DECIMAL as a number,
/// DATE/TIME/DATETIME/TIMESTAMP as quoted strings with 6 fraction digits for the times, other
/// opaque values as "base64:typeNN:…". An empty value is `null` (what MySQL reads it as).
/// Every offset and size is checked; nesting deeper than 200 levels is a kCorrupt error.
/// `base_offset` is where `data` starts in the file, for error messages.
Status JsonBinaryToText(std::string_view data, uint64_t base_offset, std::string& out);

/// Appends `s` as a JSON string literal (with quotes), escaping as MySQL does.
void AppendJsonString(std::string_view s, std::string& out);

}  // namespace chsync::binlog
