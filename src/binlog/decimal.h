#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/byte_reader.h"
#include "common/result.h"

namespace chsync::binlog {

/// Bytes MySQL's binary DECIMAL(precision, scale) takes, or 0 when precision/scale are invalid
/// (precision 1–65, scale 0–30 and <= precision).
size_t DecimalBinarySize(unsigned precision, unsigned scale);

/// Reads a binary DECIMAL(precision, scale) and appends its exact text to `out`: "-" when
/// negative, integer digits without leading zeros ("0" when none), and exactly `scale` fraction
/// digits ("-12.3400", "0.50", "7"). Never goes through floating point. A digit group above
/// 999999999 (impossible in a valid value) is a kCorrupt error.
Status ReadDecimal(ByteReader& r, unsigned precision, unsigned scale, std::string& out);

}  // namespace chsync::binlog
