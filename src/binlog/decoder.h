#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "binlog/event.h"
#include "binlog/partial_rows.h"
#include "binlog/text_arena.h"
#include "common/result.h"

namespace chsync::binlog {

struct DecoderOptions {
  /// Verify CRC32 checksums when the FORMAT_DESCRIPTION says CRC32 (recommended).
  bool verify_checksums = true;
  /// Checksum algorithm for events that arrive before any FORMAT_DESCRIPTION (the fake ROTATE
  /// at the start of a replication stream): the value negotiated with @source_binlog_checksum.
  /// kUndefined = detect: a trailing CRC32 that matches is taken as a checksum.
  ChecksumAlgorithm checksum_before_format = ChecksumAlgorithm::kUndefined;
  /// Upper bound on one decompressed TRANSACTION_PAYLOAD or MariaDB compressed event/column,
  /// checked against the sizes the event declares before anything is allocated.
  uint64_t max_uncompressed_size = uint64_t{1} << 31;
  /// A ROTATE event switches file() to its next_file (right for replication streams). A file
  /// reader turns this off: positions stay offsets in the file being read.
  bool follow_rotate = true;
  /// When set, rows events of tables for which it returns false are not decoded: the RowsEvent
  /// names its table and has `skipped` set and no rows, and the TABLE_MAP of such a table has
  /// no optional metadata (a replica skips tables it does not replicate this way, cheaply, and a
  /// flaw in their metadata does not stop it).
  std::function<bool(const TableMap&)> decode_rows_of;
  /// When set, called with each TABLE_MAP before it is cached for the rows events that follow, to
  /// supply what the event leaves out: the precision of MariaDB 5.3 hires TIME/DATETIME/TIMESTAMP
  /// columns (binlog/hires_temporal.h, SetHiresPrecision). An error fails the TABLE_MAP's decoding.
  std::function<Status(TableMap&)> complete_table_map;
};

/// A stateful binlog event decoder: bytes of one event in, one typed Event out. No I/O.
///
/// Feed events in stream order, one at a time: the bytes exactly as they appear in a binlog
/// file, or as a replication packet carries them after its leading 0x00 OK byte (header, body,
/// and checksum when one is in use). The decoder keeps what later events need: the
/// FORMAT_DESCRIPTION (header and post-header lengths, checksum algorithm), the TABLE_MAP cache
/// (by table id; a newer map replaces an older one with the same id), and the current file
/// name (a ROTATE event switches it to its next_file).
///
/// Every length in the input is checked against the bytes present before use; a malformed
/// event gives a kCorrupt Error naming the field, the byte offset and "file:position", never a
/// crash. After an error the decoder stays usable (the next event can be decoded).
///
/// Not thread-safe. Events returned by Decode() are valid until the next Decode() call and
/// while the bytes passed in live (see Event).
class Decoder {
 public:
  explicit Decoder(DecoderOptions options = {});

  /// Sets the name used in Event::file and in error messages ("binlog.000042").
  void SetFile(std::string_view file) { file_.assign(file); }
  const std::string& file() const { return file_; }

  /// Decodes the event in `bytes` (exactly one event: its header's event_size must equal
  /// bytes.size()) that starts at byte `position` of the current file.
  Result<Event> Decode(std::string_view bytes, uint64_t position);

  /// Reads only the common header (19 bytes; 13 for binlog v1). Needs no state except the
  /// header length of the current format.
  Result<EventHeader> PeekHeader(std::string_view bytes, uint64_t position) const;

  /// The current FORMAT_DESCRIPTION, or null before the first one.
  const FormatDescriptionEvent* format() const { return format_ ? &*format_ : nullptr; }
  /// Checksum algorithm in effect for the next event.
  ChecksumAlgorithm checksum() const;
  /// The table map with this id, or null.
  std::shared_ptr<const TableMap> FindTable(uint64_t table_id) const;
  /// Forgets the format, the table maps and the encryption state (a new, unrelated stream).
  void Reset();

 private:
  struct Context;
  Result<Event> DecodeOne(std::string_view bytes, uint64_t position, bool in_payload);
  Status DecodeBody(Context& ctx, Event& event);
  Status DecodeFormatDescription(Context& ctx, Event& event);
  Status DecodeGtid(Context& ctx, Event& event);
  Status DecodeGtidTagged(Context& ctx, Event& event);
  Status DecodePreviousGtids(Context& ctx, Event& event);
  Status DecodeMariaGtid(Context& ctx, Event& event);
  Status DecodePayload(Context& ctx, Event& event);
  Status DecodePartialRowData(Context& ctx, Event& event);
  /// The TABLE_MAP whose body `r` covers: parsed, or the one parsed from the same bytes before.
  Result<std::shared_ptr<const TableMap>> TableMapOf(const ByteReader& r, uint8_t post_header_len);

  DecoderOptions options_;
  std::string file_;
  std::optional<std::string> pending_file_;  ///< set by ROTATE, applied at the next Decode()
  std::optional<FormatDescriptionEvent> format_;
  bool encrypted_ = false;
  std::unordered_map<uint64_t, std::shared_ptr<const TableMap>> tables_;
  /// Set after a rows event with STMT_END_F: the statement's table maps are done with.
  bool clear_tables_before_next_map_ = false;
  /// TABLE_MAPs by the bytes of their body: every statement repeats its table's map, and the
  /// same object handed out again saves parsing it and tells consumers it has not changed
  /// (a changed table has a new table id, so new bytes). `wanted`: what decode_rows_of said of it.
  struct RecentMap {
    std::shared_ptr<const TableMap> map;
    bool wanted = true;
  };
  struct BytesHash {
    using is_transparent = void;
    size_t operator()(std::string_view bytes) const { return std::hash<std::string_view>{}(bytes); }
  };
  static constexpr size_t kRecentMapsLimit = 4096;
  std::unordered_map<std::string, RecentMap, BytesHash, std::equal_to<>> recent_maps_;
  TextArena arena_;
  /// Fragments of a MariaDB PARTIAL_ROW_DATA group being joined (bounded by max_uncompressed_size).
  PartialRowsAssembler partial_;
  std::string scratch_;
};

}  // namespace chsync::binlog
