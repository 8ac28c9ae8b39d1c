#pragma once

// The rows of prepared XA transactions, kept in the state directory between XA PREPARE and
// XA COMMIT / XA ROLLBACK (which may come much later, after other transactions, or after a restart).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace chsync::pipe {

/// One table's rows of a prepared XA transaction, encoded for ClickHouse.
struct XaBatch {
  std::string table;   ///< "db.t" of the source table
  std::string prefix;  ///< TableWriter::insert_prefix() when the rows were encoded
  std::string data;    ///< RowBinary rows, versions included
  /// The table's row changes in the XA transaction, counted when it commits (chsync_row_changes_total),
  /// also after a restart: on the table's first batch, 0 on the others.
  uint64_t inserts = 0;
  uint64_t updates = 0;
  uint64_t deletes = 0;

  bool operator==(const XaBatch&) const = default;
};

/// The file name (in the state directory) for the XA transaction whose group began at
/// `file_sequence`:`position`: "xa-<sequence>-<position>.rows".
std::string XaRowsFileName(uint32_t file_sequence, uint64_t position);

/// File layout: "chsync-xa 2\n", then per batch three fields (table, prefix, data), each a
/// little-endian u64 length and the bytes, and the three change counts (little-endian u64 each),
/// then a little-endian CRC32 of everything before it. Version 1 files (no counts) are read too.
std::string EncodeXaRows(const std::vector<XaBatch>& batches);
/// Parses EncodeXaRows' output; kCorrupt (naming `origin`) for anything else: a length past the end,
/// a wrong checksum, a missing header.
Result<std::vector<XaBatch>> DecodeXaRows(std::string_view bytes, const std::string& origin);

/// Writes the batches crash-safely into `dir`/`name`, and reads them back.
Status WriteXaRows(const std::string& dir, const std::string& name, const std::vector<XaBatch>& batches);
Result<std::vector<XaBatch>> ReadXaRows(const std::string& dir, const std::string& name);
/// Removes `dir`/`name`; a missing file is no error.
void RemoveXaRows(const std::string& dir, const std::string& name);

}  // namespace chsync::pipe
