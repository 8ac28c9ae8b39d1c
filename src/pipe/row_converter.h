#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "binlog/value.h"
#include "clickhouse/row_binary.h"
#include "clickhouse/type_mapping.h"
#include "common/result.h"
#include "mysql/snapshot_reader.h"
#include "schema/table_schema.h"

namespace chsync::pipe {

/// Where a row's values came from. The two sources differ in small ways that the converter evens
/// out, so that a row copied by the snapshot and the same row written by the stream produce the
/// same ClickHouse bytes:
///   - the binlog carries strings in the column's character set; the snapshot gets them converted
///     to utf8mb4 by the server. Binlog strings of other character sets are converted to UTF-8
///     the way the server converts them (see docs/types.md, "Character sets and bytes");
///   - the binlog leaves out the trailing 0x00 bytes of BINARY(n), UUID, INET4 and INET6 values
///     (they are padded back to their width); CHAR(n) values lose their trailing spaces, as a
///     SELECT shows them;
///   - the snapshot reads UUID/INET4/INET6 as their stored bytes (SnapshotQueryFor), which are
///     the binlog's bytes: UUID in RFC 4122 order, addresses in network order.
enum class ValueOrigin { kSnapshot, kBinlog };

/// Converts strings of one MySQL character set to UTF-8 (defined in row_converter.cpp).
class CharsetConverter;

/// Turns source rows (one binlog::Value per tracked column, in schema order) into the cells that
/// clickhouse::TableWriter takes for the same columns. Not thread-safe (it owns scratch space and
/// iconv state). Convert allocates nothing per cell once its scratch buffers have grown.
class RowConverter {
 public:
  /// `types[i]` is the mapped ClickHouse type of table.columns[i] (TableWriter::types()).
  /// Character columns in a character set chsync cannot convert keep their bytes; Create logs one
  /// warning per such column.
  static Result<RowConverter> Create(const schema::TableSchema& table,
                                     std::vector<clickhouse::MappedType> types);

  RowConverter(RowConverter&&) noexcept;
  RowConverter& operator=(RowConverter&&) noexcept;
  ~RowConverter();

  /// Converts one row. `values.size()` must equal the column count. A kAbsent value (a partial
  /// row image) is an error (kUnsupported) naming the column and saying binlog_row_image must be
  /// FULL. Cells may point into `values` and into the converter's scratch space: valid until the
  /// next Convert call.
  Status Convert(std::span<const binlog::Value> values, ValueOrigin origin,
                 std::vector<clickhouse::Cell>& cells);

  const schema::TableSchema& table() const { return table_; }

 private:
  /// What a column's binlog bytes need to equal the snapshot's.
  struct ColumnFix {
    /// Non-null for character columns whose character set is not UTF-8 (nor ASCII-only).
    CharsetConverter* charset = nullptr;
    /// BINARY(n)/UUID/INET: width to pad with 0x00 bytes (0 = none).
    uint32_t pad_to = 0;
    /// CHAR(n): remove trailing spaces.
    bool strip_spaces = false;
    /// Integer columns: width in bits and signedness from the schema, which decide how an
    /// integer value is read (a binlog without SIGNEDNESS metadata gives every integer signed).
    uint8_t int_bits = 0;
    bool is_unsigned = false;
  };

  RowConverter(schema::TableSchema table, std::vector<clickhouse::MappedType> types);
  /// The bytes of binlog string `bytes` of column `i` as the snapshot would read them.
  std::string_view FixBinlogBytes(size_t i, std::string_view bytes);

  schema::TableSchema table_;
  std::vector<clickhouse::MappedType> types_;
  std::vector<ColumnFix> fixes_;
  /// One converter per character set in use (fixes_ point into these).
  std::vector<std::unique_ptr<CharsetConverter>> converters_;
  /// Per column: bytes produced by conversion (charset, padding), kept until the next Convert.
  std::vector<std::string> scratch_;
};

/// The iconv name chsync converts MySQL character set `charset` ("latin1", "sjis", …) from, or
/// "" when it does not know the character set. UTF-8 sets ("utf8mb4", "utf8mb3") and "binary"
/// need no conversion and give "".
std::string_view IconvNameOf(std::string_view charset);

/// Converts `bytes` in MySQL character set `charset` to UTF-8 as the server converts them for a
/// SELECT (for tests and tools; RowConverter keeps its converters). Unknown sets: bytes as they
/// are.
std::string ConvertToUtf8(std::string_view charset, std::string_view bytes);

/// The SnapshotQuery that reads `table` for RowConverter: every column in schema order, ENUM as
/// its index and SET as its bits (as the binlog carries them), MariaDB UUID/INET6/INET4 as their
/// stored bytes, keyed by the destination sorting key when it is not a full-row key
/// (clickhouse::ChooseSortingKey), else unkeyed (one pass).
mysql::SnapshotQuery SnapshotQueryFor(const schema::TableSchema& table, uint64_t chunk_rows);

}  // namespace chsync::pipe
