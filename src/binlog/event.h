#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "binlog/column_type.h"
#include "binlog/value.h"

namespace chsync::binlog {

/// Event type codes (MySQL's Log_event_type plus MariaDB's 160+ range).
enum class EventType : uint8_t {
  kUnknown = 0,
  kStartV3 = 1,
  kQuery = 2,
  kStop = 3,
  kRotate = 4,
  kIntvar = 5,
  kLoad = 6,
  kSlave = 7,
  kCreateFile = 8,
  kAppendBlock = 9,
  kExecLoad = 10,
  kDeleteFile = 11,
  kNewLoad = 12,
  kRand = 13,
  kUserVar = 14,
  kFormatDescription = 15,
  kXid = 16,
  kBeginLoadQuery = 17,
  kExecuteLoadQuery = 18,
  kTableMap = 19,
  kPreGaWriteRows = 20,
  kPreGaUpdateRows = 21,
  kPreGaDeleteRows = 22,
  kWriteRowsV1 = 23,
  kUpdateRowsV1 = 24,
  kDeleteRowsV1 = 25,
  kIncident = 26,
  kHeartbeat = 27,
  kIgnorable = 28,
  kRowsQuery = 29,
  kWriteRowsV2 = 30,
  kUpdateRowsV2 = 31,
  kDeleteRowsV2 = 32,
  kGtid = 33,
  kAnonymousGtid = 34,
  kPreviousGtids = 35,
  kTransactionContext = 36,
  kViewChange = 37,
  kXaPrepare = 38,
  kPartialUpdateRows = 39,
  kTransactionPayload = 40,
  kHeartbeatV2 = 41,
  kGtidTagged = 42,
  kMariaAnnotateRows = 160,
  kMariaBinlogCheckpoint = 161,
  kMariaGtid = 162,
  kMariaGtidList = 163,
  kMariaStartEncryption = 164,
  kMariaQueryCompressed = 165,
  kMariaWriteRowsCompressedV1 = 166,
  kMariaUpdateRowsCompressedV1 = 167,
  kMariaDeleteRowsCompressedV1 = 168,
  kMariaWriteRowsCompressed = 169,
  kMariaUpdateRowsCompressed = 170,
  kMariaDeleteRowsCompressed = 171,
  kMariaPartialRowData = 172,
};

/// "QUERY", "WRITE_ROWS_V2", "MARIA_GTID", …; "UNKNOWN" for a code not listed above.
std::string_view EventTypeName(EventType type);

enum class ChecksumAlgorithm : uint8_t { kNone = 0, kCrc32 = 1, kUndefined = 255 };

/// Common header flags.
inline constexpr uint16_t kFlagBinlogInUse = 0x0001;  ///< LOG_EVENT_BINLOG_IN_USE_F (FDE only)
inline constexpr uint16_t kFlagArtificial = 0x0020;   ///< LOG_EVENT_ARTIFICIAL_F (fake ROTATE)
inline constexpr uint16_t kFlagRelayLog = 0x0040;     ///< LOG_EVENT_RELAY_LOG_F

/// Rows event flags.
inline constexpr uint16_t kRowsFlagStmtEnd = 0x0001;
inline constexpr uint16_t kRowsFlagNoForeignKeyChecks = 0x0002;
inline constexpr uint16_t kRowsFlagRelaxedUniqueChecks = 0x0004;
inline constexpr uint16_t kRowsFlagCompleteRows = 0x0008;

/// The common event header (19 bytes in v4).
///
/// | offset | size | field      |
/// |--------|------|------------|
/// | 0      | 4    | timestamp  |
/// | 4      | 1    | type       |
/// | 5      | 4    | server_id  |
/// | 9      | 4    | event_size (header + body + checksum) |
/// | 13     | 4    | log_pos (end of event; 32 bits, overflows: never use it as a position) |
/// | 17     | 2    | flags      |
struct EventHeader {
  uint32_t timestamp = 0;
  EventType type = EventType::kUnknown;  ///< raw code, may be a value not named in EventType
  uint32_t server_id = 0;
  uint32_t event_size = 0;
  uint32_t log_pos = 0;
  uint16_t flags = 0;
};

/// FORMAT_DESCRIPTION_EVENT (v4). Owns its data: the decoder keeps it for the rest of the file.
struct FormatDescriptionEvent {
  uint16_t binlog_version = 4;
  std::string server_version;  ///< "8.0.40", "10.6.26-MariaDB-log"
  uint32_t create_timestamp = 0;
  uint8_t header_length = 19;
  /// post_header_lengths[type - 1] is the post-header length of events of that type.
  std::vector<uint8_t> post_header_lengths;
  ChecksumAlgorithm checksum = ChecksumAlgorithm::kNone;
  bool mariadb = false;
  /// The FDE's own CRC only matched with LOG_EVENT_BINLOG_IN_USE_F cleared (a file copied while
  /// the server had it open); not an error.
  bool crc_matched_without_in_use_flag = false;

  /// Post-header length for `type`, or `fallback` when the FDE has no entry for it.
  uint8_t PostHeaderLength(EventType type, uint8_t fallback) const;
};

/// START_EVENT_V3 (binlog format v1/v3, MySQL < 5.0).
struct StartV3Event {
  uint16_t binlog_version = 0;
  std::string_view server_version;
  uint32_t create_timestamp = 0;
};

/// ROTATE_EVENT: the next file and the position to continue at. A fake rotate (flag
/// kFlagArtificial, or timestamp 0 in a replication stream) names the file being streamed.
struct RotateEvent {
  uint64_t position = 0;
  std::string_view next_file;
};

/// Status variables of a QUERY event; each is set only when the event carries it.
struct QueryStatus {
  std::optional<uint32_t> flags2;
  std::optional<uint64_t> sql_mode;
  std::optional<std::string_view> catalog;
  std::optional<uint16_t> auto_increment_increment;
  std::optional<uint16_t> auto_increment_offset;
  std::optional<uint16_t> client_charset;  ///< character_set_client (collation id)
  std::optional<uint16_t> collation_connection;
  std::optional<uint16_t> collation_server;
  std::optional<std::string_view> time_zone;
  std::optional<uint16_t> lc_time_names;
  std::optional<uint16_t> collation_database;
  std::optional<uint64_t> table_map_for_update;
  std::optional<uint32_t> master_data_written;
  std::optional<std::string_view> invoker_user;
  std::optional<std::string_view> invoker_host;
  std::vector<std::string_view> updated_db_names;
  bool updated_db_names_over_max = false;
  std::optional<uint32_t> microseconds;  ///< Q_MICROSECONDS / MariaDB Q_HRNOW
  std::optional<uint8_t> explicit_defaults_for_timestamp;
  std::optional<uint64_t> ddl_xid;  ///< Q_DDL_LOGGED_WITH_XID / MariaDB Q_XID
  std::optional<uint16_t> default_collation_for_utf8mb4;
  std::optional<uint8_t> sql_require_primary_key;
  std::optional<uint8_t> default_table_encryption;
  std::optional<uint8_t> gtid_flags3;  ///< MariaDB: the GTID's flags_extra (kMariaGtidExtra*)
  /// MariaDB, with gtid_flags3 COMMIT ALTER or ROLLBACK ALTER: seq_no of the START ALTER.
  std::optional<uint64_t> sa_seq_no;
  /// Code of a status variable we do not know; parsing stopped there (its length is unknown).
  std::optional<uint8_t> unknown_code;
};

/// QUERY_EVENT (and MariaDB QUERY_COMPRESSED_EVENT, with `query` inflated).
struct QueryEvent {
  uint32_t thread_id = 0;
  uint32_t exec_time = 0;
  uint16_t error_code = 0;
  std::string_view database;
  std::string_view query;
  QueryStatus status;
  bool compressed = false;
};

struct XidEvent {
  uint64_t xid = 0;
};

/// INTVAR_EVENT: 1 = LAST_INSERT_ID, 2 = INSERT_ID.
struct IntvarEvent {
  uint8_t kind = 0;
  uint64_t value = 0;
};

struct RandEvent {
  uint64_t seed1 = 0;
  uint64_t seed2 = 0;
};

/// USER_VAR_EVENT: @name = value (raw bytes; value_type is MySQL's Item_result).
struct UserVarEvent {
  std::string_view name;
  bool is_null = true;
  uint8_t value_type = 0;
  uint32_t charset = 0;
  std::string_view value;
  std::optional<uint8_t> flags;
};

/// One column of a TABLE_MAP event, with whatever optional metadata (binlog_row_metadata=FULL
/// or MINIMAL) described it.
struct ColumnInfo {
  ColumnType type = ColumnType::kNull;       ///< as on the wire
  ColumnType real_type = ColumnType::kNull;  ///< ENUM/SET/STRING resolved from STRING metadata
  uint16_t metadata = 0;                     ///< raw metadata, as MySQL packs it
  bool nullable = true;
  /// Maximum byte length for CHAR/VARCHAR/BINARY (decides 1- or 2-byte length prefixes).
  uint32_t max_length = 0;
  std::optional<bool> is_unsigned;       ///< SIGNEDNESS
  std::optional<uint32_t> charset;       ///< collation id (DEFAULT_/COLUMN_CHARSET, ENUM_AND_SET_*)
  std::string name;                      ///< COLUMN_NAME; empty when absent
  std::vector<std::string> enum_values;  ///< ENUM_STR_VALUE or SET_STR_VALUE, in order
  std::optional<uint32_t> geometry_type;
  std::optional<bool> visible;  ///< COLUMN_VISIBILITY
  std::optional<uint32_t> vector_dimensions;
};

/// What a TABLE_MAP describes; shared by the TABLE_MAP event and every rows event that uses it,
/// so it outlives both.
struct TableMap {
  uint64_t table_id = 0;
  uint16_t flags = 0;
  std::string database;
  std::string table;
  std::vector<ColumnInfo> columns;
  std::optional<uint32_t> default_charset;  ///< DEFAULT_CHARSET's default collation
  std::optional<uint32_t> enum_set_default_charset;
  /// SIMPLE_PRIMARY_KEY / PRIMARY_KEY_WITH_PREFIX: column indexes in key order; prefix length
  /// per key part (0 = whole column). Empty when the metadata does not say.
  std::vector<uint32_t> primary_key;
  std::vector<uint32_t> primary_key_prefix;
  /// Optional metadata TLV types this event carried (1..13), in order; unknown ones are skipped.
  std::vector<uint8_t> metadata_kinds;
};

struct TableMapEvent {
  std::shared_ptr<const TableMap> table;
};

enum class RowsKind : uint8_t { kWrite, kUpdate, kDelete, kPartialUpdate };

/// One row image: exactly one Value per table column (kAbsent where the image omits it).
using RowImage = std::span<const Value>;

/// One changed row. Writes have only `after`, deletes only `before`.
struct RowChange {
  RowImage before;
  RowImage after;
};

/// WRITE/UPDATE/DELETE_ROWS v0 (pre-GA), v1, v2, MariaDB compressed, and PARTIAL_UPDATE_ROWS.
struct RowsEvent {
  RowsKind kind = RowsKind::kWrite;
  uint8_t version = 2;      ///< 0 pre-GA (5.1.15-5.1.17), 1, 2
  bool compressed = false;  ///< MariaDB *_ROWS_COMPRESSED (inflated before decoding)
  uint64_t table_id = 0;
  uint16_t flags = 0;  ///< kRowsFlag*
  std::shared_ptr<const TableMap> table;
  uint32_t column_count = 0;
  /// v2 extra data, raw; partition ids when it carried the PART info (type 1).
  std::string_view extra_data;
  std::optional<uint16_t> partition_id;
  std::optional<uint16_t> source_partition_id;
  /// true when an image leaves out some columns (binlog_row_image=MINIMAL or NOBLOB).
  bool partial_before_image = false;
  bool partial_after_image = false;
  /// DecoderOptions::decode_rows_of declined the table: `rows` is empty.
  bool skipped = false;
  /// MariaDB *_ROWS_COMPRESSED: the length of the inflated row data, as the compression header
  /// declares it (read even when `skipped`, so it is the same whichever tables are decoded).
  /// Each row takes at least one byte of it, so it bounds the row count. 0 when uncompressed.
  uint64_t inflated_size = 0;
  std::vector<RowChange> rows;
  /// Backing store of every RowImage in `rows` (do not resize).
  std::vector<Value> values;
};

/// GTID_LOG_EVENT / ANONYMOUS_GTID_LOG_EVENT / GTID_TAGGED_LOG_EVENT (MySQL).
struct GtidEvent {
  bool anonymous = false;
  uint8_t flags = 0;  ///< bit 0: may have been committed (commit_flag)
  std::array<uint8_t, 16> sid{};
  uint64_t gno = 0;
  std::string tag;  ///< GTID_TAGGED only
  std::optional<uint64_t> last_committed;
  std::optional<uint64_t> sequence_number;
  std::optional<uint64_t> immediate_commit_timestamp;  ///< microseconds since the epoch
  std::optional<uint64_t> original_commit_timestamp;
  std::optional<uint64_t> transaction_length;
  std::optional<uint32_t> immediate_server_version;
  std::optional<uint32_t> original_server_version;
  std::optional<uint64_t> commit_group_ticket;
};

/// One UUID[:tag] with its closed-open intervals [start, end).
struct GtidSetEntry {
  std::array<uint8_t, 16> sid{};
  std::string tag;
  std::vector<std::pair<uint64_t, uint64_t>> intervals;
};

struct PreviousGtidsEvent {
  std::vector<GtidSetEntry> sets;
};

struct Event;

/// TRANSACTION_PAYLOAD_EVENT (MySQL >= 8.0.20): the transaction's events, inflated and decoded.
struct TransactionPayloadEvent {
  uint64_t compression_type = 0;  ///< 0 = zstd, 255 = none
  uint64_t payload_size = 0;
  uint64_t uncompressed_size = 0;
  std::vector<Event> events;
};

/// MariaDB PARTIAL_ROW_DATA_EVENT (12.3+, MDEV-32570): one fragment of a rows event larger than
/// binlog_row_event_fragment_threshold (format: binlog/partial_rows.h). The fragment that
/// completes its group carries the reassembled rows event, decoded, in `events` (one element);
/// the other fragments carry none. That rows event has the position of the group's FIRST
/// fragment (its rows lie in the bytes from there to the last fragment's end), its own header
/// (type WRITE_ROWS_V1, …; event_size of the reassembled event, without checksum) and views
/// valid until the next Decode() call, like any event.
struct PartialRowDataEvent {
  uint32_t total = 0;     ///< fragments in the group
  uint32_t sequence = 0;  ///< this fragment's number, 1-based
  uint8_t flags = 0;      ///< kPartialRowsFlagOrigEventSize (0x01) on fragment 1
  std::optional<uint64_t> original_size;
  uint64_t chunk_size = 0;  ///< bytes of the original event this fragment carries
  std::vector<Event> events;
};

struct RowsQueryEvent {
  std::string_view query;
};

/// HEARTBEAT_LOG_EVENT (v1: file name only) and HEARTBEAT_LOG_EVENT_V2.
struct HeartbeatEvent {
  uint8_t version = 1;
  std::string_view log_file;
  std::optional<uint64_t> log_position;
};

struct IncidentEvent {
  uint16_t incident = 0;
  std::string_view message;
};

struct XaPrepareEvent {
  bool one_phase = false;
  uint32_t format_id = 0;
  std::string_view gtrid;
  std::string_view bqual;
};

struct StopEvent {};

/// MariaGtidEvent::flags2 bits (MariaDB's Gtid_log_event::FL_*).
inline constexpr uint8_t kMariaGtidStandalone = 1;     ///< no terminating COMMIT/XID event
inline constexpr uint8_t kMariaGtidGroupCommitId = 2;  ///< commit_id present
inline constexpr uint8_t kMariaGtidTransactional = 4;  ///< can be rolled back (InnoDB, …)
inline constexpr uint8_t kMariaGtidAllowParallel = 8;
inline constexpr uint8_t kMariaGtidWaited = 16;
inline constexpr uint8_t kMariaGtidDdl = 32;
inline constexpr uint8_t kMariaGtidPreparedXa = 64;    ///< the group is XA START … XA PREPARE
inline constexpr uint8_t kMariaGtidCompletedXa = 128;  ///< the group is XA COMMIT or XA ROLLBACK
/// MariaGtidEvent::flags_extra bits (FL_*_E1).
inline constexpr uint8_t kMariaGtidExtraMultiEngine = 1;  ///< extra_engines present
inline constexpr uint8_t kMariaGtidExtraStartAlter = 2;
inline constexpr uint8_t kMariaGtidExtraCommitAlter = 4;    ///< sa_seq_no present
inline constexpr uint8_t kMariaGtidExtraRollbackAlter = 8;  ///< sa_seq_no present
inline constexpr uint8_t kMariaGtidExtraThreadId = 16;      ///< thread_id present (MariaDB 11.5+)

/// MariaDB GTID_EVENT: domain-server-seq_no starts an event group. Body layout (offsets after
/// the common header; each optional part follows the previous one without a gap):
///
/// | offset | size  | field                                      | present                               |
/// |--------|-------|--------------------------------------------|---------------------------------------|
/// | 0      | 8     | seq_no                                     | always                                |
/// | 8      | 4     | domain_id                                  | always                                |
/// | 12     | 1     | flags2                                     | always                                |
/// | 13     | 8     | commit_id                                  | kMariaGtidGroupCommitId               |
/// | …      | 4     | XA formatID                                | kMariaGtid{Prepared,Completed}Xa      |
/// | …      | 1 + 1 | XA gtrid_length, bqual_length (<= 64 each) | the same                              |
/// | …      | n     | XA gtrid, then bqual                       | the same                              |
/// | …      | 1     | flags_extra (written only when non-zero)   | when bytes remain                     |
/// | …      | 1     | extra_engines                              | kMariaGtidExtraMultiEngine            |
/// | …      | 8     | sa_seq_no                                  | kMariaGtidExtra{Commit,Rollback}Alter |
/// | …      | 4     | thread_id                                  | kMariaGtidExtraThreadId               |
///
/// then zero bytes up to a 19-byte body when less was written. So a zero where flags_extra
/// would be is padding: `flags_extra` is set only when that byte is non-zero.
///
/// XA as MariaDB 10.5+ logs it: XA START … XA END, XA PREPARE is one group whose GTID has
/// kMariaGtidPreparedXa and ends with an XA_PREPARE event; XA COMMIT and XA ROLLBACK are each a
/// later standalone group (kMariaGtidCompletedXa, the same XA id) holding one QUERY with the
/// statement: only its text tells commit from rollback. XA COMMIT … ONE PHASE is logged as an
/// ordinary transaction (no XA flags, ends with XID).
struct MariaGtidEvent {
  uint64_t seq_no = 0;
  uint32_t domain_id = 0;
  uint8_t flags2 = 0;  ///< kMariaGtid* bits
  std::optional<uint64_t> commit_id;
  std::optional<uint32_t> xa_format_id;  ///< set with the XA flags; then xa_gtrid/xa_bqual too
  std::string_view xa_gtrid;
  std::string_view xa_bqual;
  std::optional<uint8_t> flags_extra;  ///< kMariaGtidExtra* bits; unset when absent or zero
  /// Engines beyond the first taking part in the transaction (MariaDB 10.11 writes 255 in XA
  /// PREPARE groups).
  std::optional<uint8_t> extra_engines;
  /// seq_no of the START ALTER group a COMMIT ALTER or ROLLBACK ALTER completes (same domain).
  std::optional<uint64_t> sa_seq_no;
  /// Id of the connection that ran the transaction (MariaDB 11.5+).
  std::optional<uint32_t> thread_id;
};

struct MariaGtid {
  uint32_t domain_id = 0;
  uint32_t server_id = 0;
  uint64_t seq_no = 0;
};

struct MariaGtidListEvent {
  uint8_t flags = 0;  ///< top 4 bits of the count field
  std::vector<MariaGtid> gtids;
};

struct BinlogCheckpointEvent {
  std::string_view file;
};

struct AnnotateRowsEvent {
  std::string_view query;
};

/// MariaDB START_ENCRYPTION_EVENT: every later event in the file is encrypted and cannot be
/// decoded without the key; the decoder reports that as an error from then on.
struct StartEncryptionEvent {
  uint8_t scheme = 0;
  uint32_t key_version = 0;
};

/// An event kind this decoder does not interpret (or an unknown type code): skipped by its
/// size; `body` is the raw body without header and checksum.
struct OtherEvent {
  std::string_view body;
};

using EventBody =
    std::variant<OtherEvent, FormatDescriptionEvent, StartV3Event, RotateEvent, QueryEvent, XidEvent,
                 IntvarEvent, RandEvent, UserVarEvent, TableMapEvent, RowsEvent, GtidEvent,
                 PreviousGtidsEvent, TransactionPayloadEvent, RowsQueryEvent, HeartbeatEvent, IncidentEvent,
                 XaPrepareEvent, StopEvent, MariaGtidEvent, MariaGtidListEvent, BinlogCheckpointEvent,
                 AnnotateRowsEvent, StartEncryptionEvent, PartialRowDataEvent>;

/// One decoded event. Views inside it point into the bytes given to Decoder::Decode() or into
/// the Decoder's scratch storage: valid until the next Decode() call on that decoder.
struct Event {
  EventHeader header;
  /// Binlog file the event is in (the decoder's current file), and the 64-bit offset of the
  /// event's first byte in it. Events inside a TRANSACTION_PAYLOAD carry the payload event's
  /// position, their index in `payload_index` and their offset in `payload_offset`.
  std::string_view file;
  uint64_t position = 0;
  std::optional<uint32_t> payload_index;
  /// For an event inside a TRANSACTION_PAYLOAD (payload_index set): the offset of its first
  /// byte in the uncompressed payload. The payload's events are back to back: the first is at
  /// 0, each next one at the previous offset + its header.event_size, and the last ends at the
  /// payload's uncompressed_size. 0 for every other event.
  uint64_t payload_offset = 0;
  bool checksum_verified = false;
  EventBody body;

  /// Position just after the event (position + event_size).
  uint64_t end_position() const { return position + header.event_size; }
};

}  // namespace chsync::binlog
