#pragma once

#include "binlog/event.h"
#include "binlog/event_parsers.h"
#include "common/byte_reader.h"
#include "common/result.h"

namespace chsync::binlog::internal {

/// Reads a PARTIAL_UPDATE_ROWS JSON diff column value (length prefix per the column metadata,
/// then diffs: operation byte 0 REPLACE / 1 INSERT / 2 REMOVE, packed path length, path, and for
/// REPLACE/INSERT a packed value length and a binary JSON value) and applies it to `before`
/// (the column's before-image, JSON text). The result, JSON text in MySQL's form, goes to
/// `out` as a kJson value. A missing or NULL before-image, a path that does not resolve, or a
/// malformed diff is a kCorrupt error.
Status ApplyJsonDiff(ByteReader& r, const ColumnInfo& column, const Value* before, ValueContext& ctx,
                     Value& out);

}  // namespace chsync::binlog::internal
