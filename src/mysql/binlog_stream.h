#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "mysql/connection.h"
#include "mysql/read_pacing.h"

struct st_mariadb_rpl;  // MARIADB_RPL from <mariadb/mariadb_rpl.h>

namespace chsync::mysql {

/// A place in a server's binlog: file name and byte offset of an event start (64-bit: files
/// may exceed 4 GiB, where the header's 32-bit log_pos wraps).
struct BinlogCoordinate {
  std::string file;
  uint64_t position = 0;
  /// MySQL: Executed_Gtid_Set at that position, when CurrentBinlogPosition read it ("" otherwise).
  std::string gtid_set;

  /// "binlog.000042:1234".
  std::string ToString() const;
};

/// Orders coordinates of one server: by the file's numeric extension ("binlog.000010" after
/// "binlog.000009"), then position. Files whose names have no numeric extension compare by name.
int CompareCoordinates(const BinlogCoordinate& a, const BinlogCoordinate& b);

/// Parses "FILE:POS" (as given to `--from`). Errors are kUsage.
Result<BinlogCoordinate> ParseCoordinate(std::string_view text);

/// True when the server's version string names MariaDB.
bool IsMariaDbVersion(std::string_view server_version);

/// The server's current binlog write position: SHOW BINLOG STATUS (MariaDB ≥ 10.5.2),
/// SHOW BINARY LOG STATUS (MySQL ≥ 8.2), SHOW MASTER STATUS before. Fails with kConfig when
/// binary logging is off.
Result<BinlogCoordinate> CurrentBinlogPosition(Connection& conn);

/// The oldest binlog file the server still has (first row of SHOW BINARY LOGS).
Result<std::string> FirstBinlogFile(Connection& conn);

/// Sends one replication command whose payload (`payload`, command byte first, e.g. from
/// BuildComBinlogDumpGtid) starts a binlog stream, without waiting for an answer: the server's
/// first packet (an event or an error) is read by whoever reads the stream next.
Status SendReplicationCommand(Connection& conn, std::string_view payload);

/// How a BinlogStream registers and where it starts.
struct BinlogStreamOptions {
  /// Our replica server_id; must differ from the source's and from every other replica's,
  /// or the server disconnects one of them.
  uint32_t server_id = 0x43480001;
  /// Start coordinate. Ignored when `gtid_set` is set. An empty file means "the server's
  /// current position" (read with CurrentBinlogPosition when the stream opens).
  BinlogCoordinate start;
  /// Start from GTIDs instead of a coordinate. MariaDB: a GTID list ("0-1-5,1-2-9", sent as
  /// @slave_connect_state): the stream starts after those transactions. MySQL: a GTID set
  /// ("uuid:1-42,uuid2:1-7", see MysqlGtidSet) of the transactions the replica already has,
  /// sent with COM_BINLOG_DUMP_GTID: the server sends every transaction NOT in the set, from
  /// the first binlog that has one. MySQL needs gtid_mode=ON; tags need MySQL 8.3 or later.
  /// The wrong flavor's syntax fails with kUsage.
  std::string gtid_set;
  /// Ask the server for a HEARTBEAT event after this many milliseconds without events
  /// (0: none). Must be below the connection's read timeout.
  uint32_t heartbeat_ms = 30000;
  /// At the live end, pause this long after a read that had to wait, so that the next
  /// transactions are read together (ReadPacing); 0: never.
  std::chrono::milliseconds live_pause{0};
};

/// Where a streamed event is: its file's name (a view of the stream's own copy: valid until the
/// next BinlogStream::Next) and byte offset. Not a BinlogCoordinate, so that no string is copied per
/// event.
struct StreamPlace {
  std::string_view file;
  uint64_t position = 0;

  /// "binlog.000042:1234".
  std::string ToString() const;
  BinlogCoordinate coordinate() const { return BinlogCoordinate{std::string(file), position, {}}; }
};

/// One event as the server sent it.
///
/// `bytes` is the whole event: 19-byte header, body and, when the format description says so,
/// the CRC32 checksum; the packet's leading OK byte is not included. The view is valid until
/// the next call of BinlogStream::Next (or the stream's destruction).
struct StreamEvent {
  std::string_view bytes;
  /// Where the event is in the server's binlog. For events the server made up for us (fake
  /// ROTATE at the start, HEARTBEAT, the format description re-sent when starting mid-file),
  /// `artificial` is true and `at` is the coordinate the stream has reached, not the
  /// event's own place.
  StreamPlace at;
  uint8_t type = 0;
  bool artificial = false;
};

/// Streams a live server's binlog as a replica would (COM_BINLOG_DUMP through MariaDB
/// Connector/C's replication API, or COM_BINLOG_DUMP_GTID for a MySQL GTID set, sent by us and
/// read through the same API) and hands out raw events with their coordinates, for the
/// binlog decoder. Tracks the file name through ROTATE events and the 64-bit position of
/// every event.
///
/// Not thread-safe: one thread at a time. The stream owns its connection, which is in
/// replication mode and cannot run queries once the stream is open.
class BinlogStream {
 public:
  /// Prepares the session (checksum negotiation, slave capability, heartbeat period, GTID
  /// connect state) and sends the dump request. A purged or unknown start position is
  /// reported by the first Next() (the server answers the request lazily), as kServer with
  /// server_code 1236.
  static Result<std::unique_ptr<BinlogStream>> Open(std::unique_ptr<Connection> conn,
                                                    const BinlogStreamOptions& options);
  ~BinlogStream();
  BinlogStream(const BinlogStream&) = delete;
  BinlogStream& operator=(const BinlogStream&) = delete;

  /// Blocks until the server sends the next event. Errors: kServer (with the server's code,
  /// 1236 for a purged or missing position, saying what to do), kNetwork (connection lost or
  /// read timeout: retry from next_coordinate()), kCorrupt (an event header that does not
  /// add up), kServer with code 0 when the server ended the stream.
  Result<StreamEvent> Next();

  /// Where the next real event starts: the place to resume from after a failure.
  const BinlogCoordinate& next_coordinate() const { return next_; }
  /// True for a MariaDB source.
  bool is_mariadb() const { return is_mariadb_; }
  /// Checksum algorithm the session negotiated ("CRC32" or "NONE").
  const std::string& checksum() const { return checksum_; }
  /// The connection's socket (-1 when unknown): BinlogReadAhead shuts it down, from another thread,
  /// to end a read that waits.
  int socket() const;
  /// Whether the next Next() finds its packet in Connector/C's read-ahead buffer (it does not wait
  /// for the socket).
  bool buffered() const;

 private:
  BinlogStream(std::unique_ptr<Connection> conn, bool is_mariadb);
  Status Prepare(const BinlogStreamOptions& options);
  Status PrepareMySqlGtidStart(const BinlogStreamOptions& options);
  Status StartDump(const BinlogStreamOptions& options);
  Error FetchError();

  std::unique_ptr<Connection> conn_;
  st_mariadb_rpl* rpl_ = nullptr;
  bool is_mariadb_;
  std::string checksum_;
  bool has_checksum_ = false;    ///< events of the current file end with 4 checksum bytes
  bool saw_real_event_ = false;  ///< an event with a real position arrived since the last rotate
  BinlogCoordinate next_;
  /// The file a real ROTATE event was in (its StreamEvent's `at` views it).
  std::string rotated_from_;
  std::string requested_;   ///< "binlog.000042:1234" or "GTID 0-1-5", for error messages
  bool from_gtid_ = false;  ///< started from a GTID list or set rather than a coordinate
  /// COM_BINLOG_DUMP_GTID payload when starting a MySQL server from a GTID set, else empty.
  std::string dump_gtid_packet_;
  std::string first_file_;  ///< oldest binlog on the server when the stream opened
  ReadPacing pacing_{std::chrono::milliseconds(0)};
};

}  // namespace chsync::mysql
