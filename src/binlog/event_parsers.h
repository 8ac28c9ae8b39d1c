#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "binlog/event.h"
#include "binlog/text_arena.h"
#include "common/byte_reader.h"
#include "common/result.h"

/// Parsers for the event bodies that need more than a few lines; used by Decoder only.
namespace chsync::binlog::internal {

/// Scratch state shared by the value decoders of one Decoder.
struct ValueContext {
  TextArena& arena;
  std::string& scratch;
  uint64_t max_uncompressed_size;
  /// When set and false for a rows event's table, its rows are not decoded (RowsEvent::skipped).
  const std::function<bool(const TableMap&)>* decode_rows_of = nullptr;
};

/// TABLE_MAP_EVENT from its post-header and body (`r` covers both, checksum excluded).
/// `mariadb`: the SIGNEDNESS bitmap has a bit for YEAR columns too (MariaDB's YEAR is an integer
/// field; MySQL leaves it out), and GEOMETRY columns count as character columns in the charset
/// lists. When `wanted` is set and false for the table, its optional metadata is not read.
Result<std::shared_ptr<TableMap>> ParseTableMap(ByteReader r, uint8_t post_header_len, bool mariadb = false,
                                                const std::function<bool(const TableMap&)>* wanted = nullptr);

/// Rows events of every version. `find_table` looks a table id up in the decoder's cache.
Status ParseRows(ByteReader r, EventType type, uint8_t post_header_len,
                 const std::function<std::shared_ptr<const TableMap>(uint64_t)>& find_table,
                 ValueContext& ctx, RowsEvent& out);

/// One column value of `column` from a row image.
Status DecodeValue(ByteReader& r, const ColumnInfo& column, ValueContext& ctx, Value& out);

}  // namespace chsync::binlog::internal
