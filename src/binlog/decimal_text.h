#pragma once

#include <string_view>

#include "binlog/text_arena.h"
#include "common/byte_reader.h"
#include "common/result.h"

namespace chsync::binlog {

/// ReadDecimal (decimal.h) into `arena` rather than onto a string: the same text, the same
/// errors, without the intermediate string. The view lives as long as the arena's storage.
Result<std::string_view> ReadDecimalText(ByteReader& r, unsigned precision, unsigned scale, TextArena& arena);

}  // namespace chsync::binlog
