#include "mysql/binlog_stream.h"

#include <mariadb/mysql.h>
// mariadb_rpl.h and ma_pvio.h need the types of mysql.h first.
#include <mariadb/ma_pvio.h>
#include <mariadb/mariadb_rpl.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstring>
#include <limits>
#include <thread>

#include "common/byte_reader.h"
#include "mysql/mysql_gtid_set.h"
#include "mysql/server_probe.h"

namespace chsync::mysql {
namespace {

constexpr size_t kHeaderSize = 19;
constexpr uint8_t kRotateEvent = 4;
constexpr uint8_t kFormatDescriptionEvent = 15;
constexpr uint8_t kHeartbeatEvent = 27;
constexpr uint8_t kHeartbeatV2Event = 41;
constexpr uint16_t kArtificialFlag = 0x20;
constexpr int kErrorMasterFatalReadingBinlog = 1236;
/// What mysql_net_read_packet returns on a failed read or an error packet: packet_error,
/// ((unsigned int)-1), widened.
constexpr unsigned long kPacketError = 0xFFFFFFFFUL;

/// How long a stream that asked for heartbeats waits for a packet before it calls the connection
/// dead: eight heartbeat periods, at least 10 s, at most the connection's read timeout. A network
/// that stalls (packets dropped, a proxy that hangs) otherwise keeps the read waiting for the whole
/// read timeout (600 s by default), and the pipe with it.
unsigned StallTimeoutSeconds(uint32_t heartbeat_ms, unsigned read_timeout_s) {
  unsigned s = std::max(10U, static_cast<unsigned>((uint64_t{heartbeat_ms} * 8 + 999) / 1000));
  return read_timeout_s == 0 ? s : std::min(s, read_timeout_s);
}

/// The read timeout of the connection's socket now, in milliseconds (0: none or unknown).
int ReadTimeoutMs(MYSQL* mysql) {
  MARIADB_PVIO* pvio = mysql->net.pvio;
  if (pvio == nullptr) return 0;
  return std::max(0, pvio->timeout[PVIO_READ_TIMEOUT]);
}

/// Whether Connector/C's read-ahead buffer is used up, so that the next read goes to the socket
/// (and may wait for the server); reads served from the buffer never wait.
bool ReadAheadEmpty(MYSQL* mysql) {
  const MARIADB_PVIO* pvio = mysql->net.pvio;
  if (pvio == nullptr || pvio->cache == nullptr) return true;
  return pvio->cache_pos >= pvio->cache + pvio->cache_size;
}

/// The version of `server_version`; "5.5.5-10.11.2-MariaDB" (the replication-compatible prefix
/// some MariaDB servers send) yields the MariaDB version.
ServerVersion VersionOf(std::string_view server_version) {
  if (server_version.starts_with("5.5.5-") && IsMariaDbVersion(server_version))
    server_version.remove_prefix(6);
  return ServerVersion::Parse(server_version);
}

/// Splits "binlog.000042" into ("binlog", 42); no numeric extension gives number -1.
std::pair<std::string_view, int64_t> SplitFileName(std::string_view file) {
  size_t dot = file.rfind('.');
  if (dot == std::string_view::npos || dot + 1 == file.size()) return {file, -1};
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(file.data() + dot + 1, file.data() + file.size(), n);
  if (ec != std::errc() || ptr != file.data() + file.size()) return {file, -1};
  return {file.substr(0, dot), n};
}

/// The 64-bit end of an event whose header says `log_pos` (the low 32 bits of its end),
/// given that it cannot end before `min_end`.
uint64_t Widen(uint32_t log_pos, uint64_t min_end) {
  uint64_t candidate = (min_end & ~uint64_t{0xFFFFFFFF}) | log_pos;
  if (candidate < min_end) candidate += uint64_t{1} << 32;
  return candidate;
}

}  // namespace

std::string BinlogCoordinate::ToString() const {
  return file + ":" + std::to_string(position);
}

std::string StreamPlace::ToString() const {
  return std::string(file) + ":" + std::to_string(position);
}

int CompareCoordinates(const BinlogCoordinate& a, const BinlogCoordinate& b) {
  auto [a_base, a_num] = SplitFileName(a.file);
  auto [b_base, b_num] = SplitFileName(b.file);
  if (a_num >= 0 && b_num >= 0 && a_base == b_base) {
    if (a_num != b_num) return a_num < b_num ? -1 : 1;
  } else if (int c = a.file.compare(b.file); c != 0) {
    return c < 0 ? -1 : 1;
  }
  if (a.position == b.position) return 0;
  return a.position < b.position ? -1 : 1;
}

Result<BinlogCoordinate> ParseCoordinate(std::string_view text) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    return Error(ErrorKind::kUsage,
                 "expected FILE:POS such as binlog.000042:4, got '" + std::string(text) + "'");
  }
  BinlogCoordinate c;
  c.file = std::string(text.substr(0, colon));
  std::string_view pos = text.substr(colon + 1);
  auto [ptr, ec] = std::from_chars(pos.data(), pos.data() + pos.size(), c.position);
  if (ec != std::errc() || ptr != pos.data() + pos.size() || c.position < 4) {
    return Error(ErrorKind::kUsage, "binlog position in '" + std::string(text) +
                                        "' must be a number of at least 4 (the first event of a file)");
  }
  return c;
}

bool IsMariaDbVersion(std::string_view server_version) {
  return server_version.find("MariaDB") != std::string_view::npos ||
         server_version.find("mariadb") != std::string_view::npos;
}

Result<BinlogCoordinate> CurrentBinlogPosition(Connection& conn) {
  ServerVersion version = VersionOf(conn.server_version());
  const char* sql = BinlogStatusStatement(IsMariaDbVersion(conn.server_version()), version);
  auto result = conn.Query(sql);
  if (!result.ok()) {
    Error e = std::move(result).error();
    e.AddContext(
        "reading the current binlog position (the user needs the REPLICATION CLIENT or BINLOG MONITOR "
        "privilege)");
    return e;
  }
  int file_col = result->ColumnIndex("File");
  int pos_col = result->ColumnIndex("Position");
  if (result->rows.empty() || file_col < 0 || pos_col < 0 || !result->rows[0][file_col] ||
      !result->rows[0][pos_col]) {
    return Error(ErrorKind::kConfig, "binary logging is off on MySQL server " + conn.options().Address() +
                                         " (" + sql +
                                         " returned nothing): start the server with log_bin enabled");
  }
  BinlogCoordinate c;
  c.file = *result->rows[0][file_col];
  if (int gtid_col = result->ColumnIndex("Executed_Gtid_Set"); gtid_col >= 0 && result->rows[0][gtid_col]) {
    c.gtid_set = *result->rows[0][gtid_col];
  }
  const std::string& pos = *result->rows[0][pos_col];
  auto [ptr, ec] = std::from_chars(pos.data(), pos.data() + pos.size(), c.position);
  if (ec != std::errc() || ptr != pos.data() + pos.size()) {
    return Error(ErrorKind::kServer, std::string(sql) + " on " + conn.options().Address() +
                                         " returned a position that is not a number: '" + pos + "'");
  }
  return c;
}

Result<std::string> FirstBinlogFile(Connection& conn) {
  CHSYNC_ASSIGN_OR_RETURN(QueryResult r, conn.Query("SHOW BINARY LOGS"));
  if (r.rows.empty() || r.rows[0].empty() || !r.rows[0][0]) {
    return Error(ErrorKind::kConfig,
                 "SHOW BINARY LOGS on " + conn.options().Address() + " lists no binlog files");
  }
  return *r.rows[0][0];
}

Status SendReplicationCommand(Connection& conn, std::string_view payload) {
  assert(!payload.empty());
  MYSQL* mysql = conn.handle();
  // Connector/C has no call for COM_BINLOG_DUMP_GTID; its command method is what
  // mariadb_rpl_open uses for COM_BINLOG_DUMP. skip_check: the answer is the stream itself.
  auto command = static_cast<enum enum_server_command>(static_cast<uint8_t>(payload[0]));
  if (mysql->methods->db_command(mysql, command, payload.data() + 1, payload.size() - 1, 1, nullptr) != 0) {
    return conn.LastError("cannot send the binlog dump request");
  }
  return Status::Ok();
}

BinlogStream::BinlogStream(std::unique_ptr<Connection> conn, bool is_mariadb)
    : conn_(std::move(conn)), is_mariadb_(is_mariadb) {}

int BinlogStream::socket() const {
  MYSQL* mysql = conn_->handle();
  if (mysql == nullptr) return -1;
  const my_socket fd = mysql_get_socket(mysql);
  return fd == MARIADB_INVALID_SOCKET ? -1 : static_cast<int>(fd);
}

bool BinlogStream::buffered() const {
  return !ReadAheadEmpty(conn_->handle());
}

BinlogStream::~BinlogStream() {
  if (rpl_ != nullptr) mariadb_rpl_close(rpl_);
}

Result<std::unique_ptr<BinlogStream>> BinlogStream::Open(std::unique_ptr<Connection> conn,
                                                         const BinlogStreamOptions& options) {
  assert(conn != nullptr);
  bool mariadb = IsMariaDbVersion(conn->server_version());
  std::unique_ptr<BinlogStream> stream(new BinlogStream(std::move(conn), mariadb));
  CHSYNC_RETURN_IF_ERROR(stream->Prepare(options));
  CHSYNC_RETURN_IF_ERROR(stream->StartDump(options));
  return stream;
}

Status BinlogStream::Prepare(const BinlogStreamOptions& options) {
  Connection& c = *conn_;
  pacing_ = ReadPacing(options.live_pause);
  if (options.server_id == 0) {
    return Error(ErrorKind::kUsage,
                 "server_id 0 is not allowed for a replica: choose a number unique among the "
                 "source's replicas");
  }
  if (options.heartbeat_ms / 1000 >= c.options().read_timeout_s) {
    return Error(ErrorKind::kUsage, "heartbeat period " + std::to_string(options.heartbeat_ms) +
                                        " ms must be below the read timeout of " +
                                        std::to_string(c.options().read_timeout_s) + " s");
  }
  bool source_names = !is_mariadb_ && VersionOf(c.server_version()).AtLeast(8, 0, 26);

  CHSYNC_ASSIGN_OR_RETURN(std::optional<std::string> checksum,
                          c.QueryValue("SELECT @@global.binlog_checksum"));
  checksum_ = checksum.value_or("NONE");
  has_checksum_ = checksum_ != "NONE";
  // Declaring that we understand checksums makes the server send events as they are in the
  // file, with their CRC32; otherwise it would strip checksums for an "old" replica.
  CHSYNC_RETURN_IF_ERROR(c.Execute(source_names ? "SET @source_binlog_checksum = @@global.binlog_checksum"
                                                : "SET @master_binlog_checksum = @@global.binlog_checksum"));
  if (is_mariadb_) {
    // MARIA_SLAVE_CAPABILITY_GTID: MariaDB sends its GTID events and accepts @slave_connect_state.
    CHSYNC_RETURN_IF_ERROR(c.Execute("SET @mariadb_slave_capability = 4"));
  }
  if (options.heartbeat_ms > 0) {
    std::string ns = std::to_string(uint64_t{options.heartbeat_ms} * 1000000);
    CHSYNC_RETURN_IF_ERROR(c.Execute("SET @master_heartbeat_period = " + ns));
    if (source_names) CHSYNC_RETURN_IF_ERROR(c.Execute("SET @source_heartbeat_period = " + ns));
    // With heartbeats, silence means a dead or stalled connection long before the read timeout
    // that queries need: the socket's read timeout becomes a few heartbeat periods.
    MARIADB_PVIO* pvio = c.handle()->net.pvio;
    if (pvio != nullptr && pvio->methods != nullptr && pvio->methods->set_timeout != nullptr) {
      pvio->methods->set_timeout(
          pvio, PVIO_READ_TIMEOUT,
          static_cast<int>(StallTimeoutSeconds(options.heartbeat_ms, c.options().read_timeout_s)));
    }
  }

  // For the message if the start position turns out to be purged; without the privilege the
  // message just does not name the oldest file.
  if (auto first = FirstBinlogFile(c); first.ok()) first_file_ = *first;

  if (!options.gtid_set.empty() && !is_mariadb_) {
    CHSYNC_RETURN_IF_ERROR(PrepareMySqlGtidStart(options));
  } else if (!options.gtid_set.empty()) {
    if (options.gtid_set.find(':') != std::string::npos) {
      return Error(ErrorKind::kUsage,
                   "'" + options.gtid_set + "' is a MySQL GTID set (uuid:interval), but " +
                       c.options().Address() + " is MariaDB " + c.server_version() +
                       ", whose GTIDs are domain-server-sequence lists such as 0-1-42 (see SELECT "
                       "@@gtid_binlog_pos): start from such a list, or from FILE:POS");
    }
    for (char ch : options.gtid_set) {
      bool ok = (ch >= '0' && ch <= '9') || ch == '-' || ch == ',' || ch == ' ';
      if (!ok) {
        return Error(ErrorKind::kUsage,
                     "'" + options.gtid_set +
                         "' is not a MariaDB GTID list (domain-server-sequence, comma-separated, "
                         "e.g. 0-1-42)");
      }
    }
    CHSYNC_RETURN_IF_ERROR(c.Execute("SET @slave_connect_state = " + QuoteString(options.gtid_set)));
    CHSYNC_RETURN_IF_ERROR(c.Execute("SET @slave_gtid_strict_mode = 0"));
    CHSYNC_RETURN_IF_ERROR(c.Execute("SET @slave_gtid_ignore_duplicates = 0"));
    next_ = BinlogCoordinate{"", 4};
    requested_ = "GTID " + options.gtid_set;
    from_gtid_ = true;
  } else if (options.start.file.empty()) {
    CHSYNC_ASSIGN_OR_RETURN(next_, CurrentBinlogPosition(c));
    requested_ = next_.ToString();
  } else {
    next_ = options.start;
    requested_ = next_.ToString();
  }
  if (next_.position > std::numeric_limits<uint32_t>::max()) {
    return Error(ErrorKind::kUnsupported,
                 "cannot start at " + requested_ +
                     ": COM_BINLOG_DUMP takes 32-bit positions (the file is over 4 GiB)");
  }
  return Status::Ok();
}

Status BinlogStream::PrepareMySqlGtidStart(const BinlogStreamOptions& options) {
  Connection& c = *conn_;
  if (LooksLikeMariaDbGtidList(options.gtid_set)) {
    return Error(ErrorKind::kUsage,
                 "'" + options.gtid_set + "' is a MariaDB GTID list, but " + c.options().Address() +
                     " is MySQL " + c.server_version() +
                     ": give a MySQL GTID set such as 3e11fa47-71ca-11e1-9e33-c80aa9429562:1-42 (the "
                     "transactions already replicated; see SELECT @@global.gtid_executed), or start from "
                     "FILE:POS");
  }
  CHSYNC_ASSIGN_OR_RETURN(MysqlGtidSet set, MysqlGtidSet::Parse(options.gtid_set));
  ServerVersion version = VersionOf(c.server_version());
  if (set.has_tags() && !version.AtLeast(8, 3, 0)) {
    return Error(ErrorKind::kUsage, "GTID set '" + set.ToString() + "' has tagged GTIDs, which MySQL " +
                                        version.ToString() + " on " + c.options().Address() +
                                        " does not know (tags came with MySQL 8.3)");
  }
  // The dump thread refuses a GTID request unless gtid_mode is ON; say so before asking.
  CHSYNC_ASSIGN_OR_RETURN(std::optional<std::string> mode, c.QueryValue("SELECT @@global.gtid_mode"));
  if (mode.value_or("OFF") != "ON") {
    return Error(ErrorKind::kConfig, "MySQL server " + c.options().Address() +
                                         " has gtid_mode=" + mode.value_or("OFF") +
                                         ": starting from a GTID set needs gtid_mode=ON; start from "
                                         "FILE:POS instead");
  }
  // An empty file name at position 4: the server picks the first binlog that has a
  // transaction outside the set, as a replica with SOURCE_AUTO_POSITION=1 asks.
  dump_gtid_packet_ = BuildComBinlogDumpGtid(kBinlogThroughGtid, options.server_id, "", 4, set.Encode());
  next_ = BinlogCoordinate{"", 4};
  requested_ = "GTID set " + (set.empty() ? std::string("(empty)") : set.ToString());
  from_gtid_ = true;
  return Status::Ok();
}

Status BinlogStream::StartDump(const BinlogStreamOptions& options) {
  MYSQL* mysql = conn_->handle();
  rpl_ = mariadb_rpl_init(mysql);
  if (rpl_ == nullptr) return conn_->LastError("cannot start binlog replication");
  if (!dump_gtid_packet_.empty()) {
    // mariadb_rpl_open only sends COM_BINLOG_DUMP; the events that follow our own request are
    // read with mariadb_rpl_fetch all the same.
    if (mariadb_rpl_optionsv(rpl_, MARIADB_RPL_SERVER_ID, static_cast<unsigned>(options.server_id)) != 0) {
      return Error(ErrorKind::kInternal, "MariaDB Connector/C rejected a replication option");
    }
    Status sent = SendReplicationCommand(*conn_, dump_gtid_packet_);
    if (!sent.ok()) {
      Error e = std::move(sent).error();
      e.AddContext("starting binlog replication from " + requested_);
      return e;
    }
    return Status::Ok();
  }
  unsigned flags = is_mariadb_ ? MARIADB_RPL_BINLOG_SEND_ANNOTATE_ROWS : 0;
  if (mariadb_rpl_optionsv(rpl_, MARIADB_RPL_FILENAME, next_.file.data(), next_.file.size()) != 0 ||
      mariadb_rpl_optionsv(rpl_, MARIADB_RPL_START, static_cast<unsigned long>(next_.position)) != 0 ||
      mariadb_rpl_optionsv(rpl_, MARIADB_RPL_SERVER_ID, static_cast<unsigned>(options.server_id)) != 0 ||
      mariadb_rpl_optionsv(rpl_, MARIADB_RPL_FLAGS, flags) != 0) {
    return Error(ErrorKind::kInternal, "MariaDB Connector/C rejected a replication option");
  }
  if (mariadb_rpl_open(rpl_) != 0) {
    if (mariadb_rpl_errno(rpl_) != 0) {
      return Error(ErrorKind::kServer,
                   "cannot start binlog replication from " + requested_ + " on " +
                       conn_->options().Address() + ": " + mariadb_rpl_error(rpl_),
                   static_cast<int>(mariadb_rpl_errno(rpl_)));
    }
    return conn_->LastError("cannot start binlog replication from " + requested_);
  }
  return Status::Ok();
}

Error BinlogStream::FetchError() {
  MYSQL* mysql = conn_->handle();
  std::string where = saw_real_event_ || !next_.file.empty() ? next_.ToString() : requested_;
  unsigned code = mysql_errno(mysql);
  if (code == 0) {
    return Error(ErrorKind::kServer, "MySQL server " + conn_->options().Address() +
                                         " ended the binlog stream at " + where +
                                         " (end of binlog in non-blocking mode, or the server shut down)");
  }
  if (code == kErrorMasterFatalReadingBinlog && from_gtid_) {
    std::string why =
        is_mariadb_
            ? "The binlogs the server still has do not continue from those GTIDs: they were purged, or a "
              "GTID names a transaction this server never wrote (compare @@gtid_binlog_state)"
            : "Either the server purged binlogs with transactions that are missing from the GTID set "
              "(compare @@global.gtid_purged), or the set names transactions of this server that it never "
              "wrote (compare @@global.gtid_executed)";
    return Error(ErrorKind::kServer,
                 "MySQL server " + conn_->options().Address() + " cannot send the binlog from " + where +
                     ": " + mysql_error(mysql) + " (error 1236). " + why +
                     ". Run `chsync resync` to take a new snapshot, or start from FILE:POS.",
                 kErrorMasterFatalReadingBinlog);
  }
  if (code == kErrorMasterFatalReadingBinlog) {
    std::string what_to_do =
        "The binlog there was probably purged (binlog_expire_logs_seconds, expire_logs_days, PURGE BINARY "
        "LOGS) "
        "or never existed. Run `chsync resync` to take a new snapshot";
    if (!first_file_.empty()) {
      what_to_do += ", or start from the oldest binlog the server still has: " + first_file_ + ":4";
    } else {
      what_to_do += ", or start from the first file that SHOW BINARY LOGS lists";
    }
    return Error(ErrorKind::kServer,
                 "MySQL server " + conn_->options().Address() + " cannot send the binlog from " + where +
                     ": " + mysql_error(mysql) + " (error 1236). " + what_to_do + ".",
                 kErrorMasterFatalReadingBinlog);
  }
  // Connection::LastError classifies lost connections and read timeouts as kNetwork.
  return conn_->LastError("binlog stream broke at " + where);
}

Result<StreamEvent> BinlogStream::Next() {
  // Packets are read directly rather than through mariadb_rpl_fetch: Connector/C refuses event
  // types it does not know (MariaDB 12.3's PARTIAL_ROW_DATA, MySQL 8.3's GTID_TAGGED, ...),
  // while the decoder handles them or skips them by their size.
  MYSQL* mysql = conn_->handle();
  // Read before: a failed read closes the connection's socket.
  const int timeout_ms = ReadTimeoutMs(mysql);
  // Only reads that go to the socket are timed (the clock, read for every event, cost a tenth of
  // a catch-up's time): they are the ones that can wait for the server.
  const bool from_socket = ReadAheadEmpty(mysql);
  const auto read_start =
      from_socket ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  unsigned long length = mysql_net_read_packet(mysql);
  if (pacing_.enabled() && from_socket && length != kPacketError) {
    const auto read_end = std::chrono::steady_clock::now();
    // A read that took this long waited for the server: copying a packet that had arrived takes
    // far less, unless it is large, and large packets come fast enough for ReadPacing not to pause.
    const bool waited = read_end - read_start > std::chrono::microseconds(200);
    const std::chrono::milliseconds pause = pacing_.AfterRead(length, waited, read_end);
    if (pause.count() > 0) std::this_thread::sleep_for(pause);
  } else if (pacing_.enabled() && length != kPacketError) {
    (void)pacing_.AfterRead(length, /*waited=*/false, read_start);  // counted; the time is not used
  }
  if (length == kPacketError) {
    Error e = FetchError();
    const auto waited = from_socket ? std::chrono::steady_clock::now() - read_start
                                    : std::chrono::steady_clock::duration::zero();
    if (e.kind() == ErrorKind::kNetwork && timeout_ms > 0 &&
        waited >= std::chrono::milliseconds(timeout_ms - timeout_ms / 10)) {
      e.AddContext("nothing arrived from MySQL server " + conn_->options().Address() + " for " +
                   std::to_string(std::chrono::duration_cast<std::chrono::seconds>(waited).count()) +
                   " s, not even a heartbeat: the network or the server stalls");
    }
    return e;
  }
  const auto* packet = reinterpret_cast<const char*>(mysql->net.read_pos);
  if (length == 0) {
    return Error(ErrorKind::kCorrupt,
                 "empty binlog packet from " + conn_->options().Address() + " at " + next_.ToString());
  }
  if (static_cast<uint8_t>(packet[0]) == 0xFE && length < 8) {
    // EOF packet: the server has nothing more to send (non-blocking dump) and ends the stream.
    mysql->net.last_errno = 0;
    return FetchError();
  }
  if (packet[0] != 0) {
    return Error(ErrorKind::kCorrupt, "binlog packet from " + conn_->options().Address() + " at " +
                                          next_.ToString() + " starts with byte " +
                                          std::to_string(static_cast<uint8_t>(packet[0])) +
                                          " instead of 0 (an event) or 254 (end of stream)");
  }
  std::string_view bytes(packet + 1, length - 1);
  ByteReader header(bytes, next_.position);
  if (bytes.size() < kHeaderSize) {
    return Error(ErrorKind::kCorrupt,
                 "binlog event at " + next_.ToString() + " from " + conn_->options().Address() + " has " +
                     std::to_string(bytes.size()) + " bytes, fewer than the 19-byte event header");
  }
  uint32_t timestamp = *header.ReadU32("timestamp");
  uint8_t type = *header.ReadU8("event type");
  (void)header.Skip(4, "server id");
  uint32_t event_size = *header.ReadU32("event size");
  uint32_t log_pos = *header.ReadU32("log_pos");
  uint16_t flags = *header.ReadU16("flags");
  if (event_size != bytes.size()) {
    return Error(ErrorKind::kCorrupt, "binlog event at " + next_.ToString() + " says it has " +
                                          std::to_string(event_size) + " bytes but the server sent " +
                                          std::to_string(bytes.size()));
  }

  StreamEvent out;
  out.bytes = bytes;
  out.type = type;
  if (type == kHeartbeatEvent || type == kHeartbeatV2Event) {
    out.artificial = true;
    out.at = {next_.file, next_.position};
    return out;
  }
  if (type == kRotateEvent) {
    size_t tail = has_checksum_ ? 4 : 0;
    ByteReader body(bytes.substr(kHeaderSize), next_.position + kHeaderSize);
    CHSYNC_ASSIGN_OR_RETURN(uint64_t new_position, body.ReadU64("ROTATE position"));
    if (body.remaining() <= tail) {
      return Error(ErrorKind::kCorrupt, "ROTATE event at " + next_.ToString() + " names no file");
    }
    std::string_view rest = body.ReadRest();
    std::string new_file(rest.substr(0, rest.size() - tail));
    bool fake = timestamp == 0 || log_pos == 0 || (flags & kArtificialFlag) != 0;
    if (fake) {
      next_ = BinlogCoordinate{std::move(new_file), new_position};
      out.artificial = true;
      out.at = {next_.file, next_.position};
    } else {
      uint64_t end = Widen(log_pos, next_.position + event_size);
      rotated_from_ = std::move(next_.file);
      out.at = {rotated_from_, end - event_size};
      next_ = BinlogCoordinate{std::move(new_file), new_position};
      saw_real_event_ = true;
    }
    return out;
  }
  if (type == kFormatDescriptionEvent) {
    // The checksum algorithm byte sits before the 4 checksum bytes at the end (binlog v4,
    // servers since MySQL 5.6.1 / MariaDB 5.3); the server re-sends the description of the
    // file when a stream starts mid-file, with log_pos 0.
    if (bytes.size() >= kHeaderSize + 57 + 5) {
      uint8_t alg = static_cast<uint8_t>(bytes[bytes.size() - 5]);
      has_checksum_ = alg != 0 && alg != 0xFF;
    }
    if (log_pos == 0 || next_.position != 4) {
      out.artificial = true;
      out.at = {next_.file, next_.position};
      return out;
    }
  }
  if (log_pos == 0 || (flags & kArtificialFlag) != 0) {
    out.artificial = true;
    out.at = {next_.file, next_.position};
    return out;
  }
  uint64_t end = Widen(log_pos, next_.position + event_size);
  if (end < event_size + 4) {
    return Error(ErrorKind::kCorrupt, "binlog event at " + next_.ToString() + " ends at " +
                                          std::to_string(end) + " but has " + std::to_string(event_size) +
                                          " bytes");
  }
  out.at = {next_.file, end - event_size};
  next_.position = end;
  saw_real_event_ = true;
  return out;
}

}  // namespace chsync::mysql
