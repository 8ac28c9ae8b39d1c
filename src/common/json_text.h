#pragma once

// JSON text for the few places that write it by hand (the JSON log lines, small status bodies):
// escaping only, no parser.

#include <string>
#include <string_view>

namespace chsync {

/// `text` as the inside of a JSON string, without the surrounding quotes: `"` and `\` escaped,
/// \b \f \n \r \t as such, other control bytes (below 0x20) as \u00XX, well-formed UTF-8 kept as
/// it is, and every byte that is not part of a well-formed UTF-8 sequence (a stray continuation
/// byte, a truncated or overlong sequence, a surrogate, a code point above U+10FFFF) replaced by
/// \ufffd. The result is always valid JSON string content, whatever the input bytes.
std::string JsonEscape(std::string_view text);

/// `text` as a complete JSON string: JsonEscape in double quotes.
std::string JsonString(std::string_view text);

}  // namespace chsync
