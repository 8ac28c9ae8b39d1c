#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace chsync::mysql {

/// A MySQL GTID set (`gtid_executed`, `gtid_purged`): for each source UUID, optionally with a
/// tag (MySQL 8.3+), the closed-open intervals [start, end) of transaction numbers (GNOs).
///
/// Text form, as MySQL prints and accepts it:
///
///     3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7,
///     b9b88c66-0755-11f1-9899-4a9da94c4d71:1-2:mytag:1-9
///
/// UUIDs in upper or lower case; whitespace (newlines included) around every part; after a
/// UUID, ':'-separated items that are either an interval (`N` or `N-M`, 1 <= N <= M <=
/// 2^63-2) or a tag, which applies to the intervals after it. A tag is a letter or '_' followed
/// by letters, digits or '_', at most 32 characters in all, case-insensitive (kept lower-case).
/// The same UUID (and tag) may appear more than once; overlapping and adjacent intervals merge.
///
/// Binary form, used by COM_BINLOG_DUMP_GTID's data and by the PREVIOUS_GTIDS_LOG_EVENT body,
/// all integers little-endian:
///
///   | bytes | field                                                                     |
///   |-------|---------------------------------------------------------------------------|
///   | 8     | n_sids, untagged format: the entry count (top byte 0)                     |
///   |       | tagged format: byte 0 = 1, bytes 1-6 = entry count, byte 7 = 1            |
///   | per entry, ordered by UUID bytes, then tag:                                       |
///   | 16    | UUID                                                                      |
///   | 1+n   | tagged format only: tag length as a serialization varlen integer (one    |
///   |       | byte, length << 1, since a tag has at most 32 characters), then the tag   |
///   |       | (length 0 for an untagged UUID)                                           |
///   | 8     | n_intervals                                                               |
///   | 16 each | start, end (signed 64-bit, end exclusive), ascending, not touching      |
///
/// The tagged format is written only when some entry has a tag, so sets without tags stay
/// readable by servers before 8.3. Entries without intervals are never written.
class MysqlGtidSet {
 public:
  struct Interval {
    int64_t start = 0;  ///< first GNO, >= 1
    int64_t end = 0;    ///< one past the last GNO
    bool operator==(const Interval&) const = default;
  };
  struct Entry {
    std::array<uint8_t, 16> uuid{};
    std::string tag;                  ///< lower-case; empty for untagged GTIDs
    std::vector<Interval> intervals;  ///< ascending, disjoint, not adjacent, non-empty
    bool operator==(const Entry&) const = default;
  };

  /// Largest GNO MySQL accepts (GNO_END - 1, GNO_END = 2^63 - 1).
  static constexpr int64_t kMaxGno = INT64_MAX - 1;
  static constexpr size_t kMaxTagLength = 32;

  /// Parses the text form. Errors are kUsage and name the offending part and its offset.
  static Result<MysqlGtidSet> Parse(std::string_view text);
  /// Decodes the binary form; `bytes` must hold exactly one encoded set. Errors are kCorrupt
  /// and name the byte offset.
  static Result<MysqlGtidSet> Decode(std::string_view bytes);

  /// Adds [start, end) for `uuid` and `tag` (lower-case, already valid).
  /// REQUIRES: 1 <= start < end <= kMaxGno + 1.
  void Add(const std::array<uint8_t, 16>& uuid, const std::string& tag, int64_t start, int64_t end);

  /// The binary form (see the class comment).
  std::string Encode() const;
  /// Canonical text: entries in encoding order, a UUID written once with its untagged
  /// intervals first and then each tag with its intervals, "uuid:1-5:7:tag:1-2,uuid2:3".
  /// Empty for the empty set.
  std::string ToString() const;

  bool empty() const { return entries_.empty(); }
  bool has_tags() const;
  /// Ordered by UUID bytes, then tag (the order MySQL encodes and prints them in).
  const std::vector<Entry>& entries() const { return entries_; }

  bool operator==(const MysqlGtidSet&) const = default;

 private:
  std::vector<Entry> entries_;
};

/// The text of a UUID, lower-case, 8-4-4-4-12.
std::string UuidText(const std::array<uint8_t, 16>& uuid);

/// True when `text` has the shape of a MariaDB GTID list ("0-1-42,1-2-9": domain-server-
/// sequence numbers, comma-separated), which a MySQL server cannot take.
bool LooksLikeMariaDbGtidList(std::string_view text);

/// COM_BINLOG_DUMP_GTID flags. BINLOG_DUMP_NON_BLOCK is bit 0 (sql/rpl_constants.h); bit 1 is
/// USE_HEARTBEAT_EVENT_V2 on MySQL 8.0+ (formerly BINLOG_THROUGH_POSITION); BINLOG_THROUGH_GTID
/// is bit 2 as the protocol documentation has it. The server reads the data size and data
/// whatever the flags say (sql/rpl_source.cc, com_binlog_dump_gtid); other clients (e.g.
/// python-mysql-replication) set bit 2 all the same, and so do we.
inline constexpr uint16_t kBinlogDumpNonBlock = 0x01;  ///< EOF instead of waiting at the end
inline constexpr uint16_t kBinlogThroughGtid = 0x04;   ///< the packet carries the GTID set
inline constexpr uint8_t kComBinlogDumpGtid = 0x1e;

/// The payload of a COM_BINLOG_DUMP_GTID command (without the 4-byte packet header):
///
///   | bytes | field                                                     |
///   |-------|-----------------------------------------------------------|
///   | 1     | 0x1e                                                      |
///   | 2     | flags                                                     |
///   | 4     | replica server_id                                         |
///   | 4     | binlog file name length                                   |
///   | n     | binlog file name (empty: let the GTID set choose)         |
///   | 8     | binlog position (4 with an empty name)                    |
///   | 4     | data size, only when flags has kBinlogThroughGtid         |
///   | n     | data: MysqlGtidSet::Encode() of the transactions the      |
///   |       | replica already has; the server sends every other one     |
std::string BuildComBinlogDumpGtid(uint16_t flags, uint32_t server_id, std::string_view file,
                                   uint64_t position, std::string_view gtid_data);

}  // namespace chsync::mysql
