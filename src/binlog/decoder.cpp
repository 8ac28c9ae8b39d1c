#include "binlog/decoder.h"

#include <bit>
#include <cstdio>
#include <string>
#include <utility>

#include "binlog/compression.h"
#include "binlog/event_parsers.h"
#include "binlog/hires_temporal.h"

namespace chsync::binlog {
namespace {

constexpr size_t kHeaderLength = 19;
constexpr size_t kChecksumLength = 4;

std::string Hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

uint32_t ReadLE32(const char* p) {
  auto u = reinterpret_cast<const uint8_t*>(p);
  return uint32_t{u[0]} | (uint32_t{u[1]} << 8) | (uint32_t{u[2]} << 16) | (uint32_t{u[3]} << 24);
}

// Post-header lengths of the binlog v3 format (MySQL 4.x), indexed by type - 1.
const std::vector<uint8_t>& V3PostHeaderLengths() {
  static const std::vector<uint8_t> kLengths = {56, 11, 0, 8, 0, 18, 0, 4, 4, 4, 4, 18, 0, 0};
  return kLengths;
}

// True when FDEs of this server version end with a checksum-algorithm byte and a checksum
// (MySQL >= 5.6.1, MariaDB >= 5.3).
bool HasChecksumAlgorithm(std::string_view version, bool mariadb) {
  unsigned v[3] = {0, 0, 0};
  size_t part = 0;
  for (char c : version) {
    if (c >= '0' && c <= '9') {
      v[part] = v[part] * 10 + static_cast<unsigned>(c - '0');
      if (v[part] > 10000) return false;
    } else if (c == '.' && part < 2) {
      ++part;
    } else {
      break;
    }
  }
  unsigned n = v[0] * 10000 + v[1] * 100 + v[2];
  return mariadb ? n >= 50300 : n >= 50601;
}

Error ChecksumMismatch(uint32_t stored, uint32_t computed) {
  return Error(ErrorKind::kCorrupt, "checksum mismatch: stored " + Hex32(stored) + ", computed " +
                                        Hex32(computed) +
                                        " (the event is damaged; re-fetch it from the server)");
}

Status ParseQueryStatus(ByteReader s, QueryStatus& q) {
  while (!s.empty()) {
    CHSYNC_ASSIGN_OR_RETURN(uint8_t code, s.ReadU8("status variable code"));
    switch (code) {
      case 0: {
        CHSYNC_ASSIGN_OR_RETURN(q.flags2, s.ReadU32("Q_FLAGS2"));
        break;
      }
      case 1: {
        CHSYNC_ASSIGN_OR_RETURN(q.sql_mode, s.ReadU64("Q_SQL_MODE"));
        break;
      }
      case 2: {
        CHSYNC_ASSIGN_OR_RETURN(uint8_t n, s.ReadU8("Q_CATALOG length"));
        CHSYNC_ASSIGN_OR_RETURN(q.catalog, s.ReadBytes(n, "Q_CATALOG"));
        CHSYNC_RETURN_IF_ERROR(s.Skip(1, "Q_CATALOG terminator"));
        break;
      }
      case 3: {
        CHSYNC_ASSIGN_OR_RETURN(q.auto_increment_increment, s.ReadU16("Q_AUTO_INCREMENT"));
        CHSYNC_ASSIGN_OR_RETURN(q.auto_increment_offset, s.ReadU16("Q_AUTO_INCREMENT"));
        break;
      }
      case 4: {
        CHSYNC_ASSIGN_OR_RETURN(q.client_charset, s.ReadU16("Q_CHARSET"));
        CHSYNC_ASSIGN_OR_RETURN(q.collation_connection, s.ReadU16("Q_CHARSET"));
        CHSYNC_ASSIGN_OR_RETURN(q.collation_server, s.ReadU16("Q_CHARSET"));
        break;
      }
      case 5: {
        CHSYNC_ASSIGN_OR_RETURN(uint8_t n, s.ReadU8("Q_TIME_ZONE length"));
        CHSYNC_ASSIGN_OR_RETURN(q.time_zone, s.ReadBytes(n, "Q_TIME_ZONE"));
        break;
      }
      case 6: {
        CHSYNC_ASSIGN_OR_RETURN(uint8_t n, s.ReadU8("Q_CATALOG_NZ length"));
        CHSYNC_ASSIGN_OR_RETURN(q.catalog, s.ReadBytes(n, "Q_CATALOG_NZ"));
        break;
      }
      case 7: {
        CHSYNC_ASSIGN_OR_RETURN(q.lc_time_names, s.ReadU16("Q_LC_TIME_NAMES"));
        break;
      }
      case 8: {
        CHSYNC_ASSIGN_OR_RETURN(q.collation_database, s.ReadU16("Q_CHARSET_DATABASE"));
        break;
      }
      case 9: {
        CHSYNC_ASSIGN_OR_RETURN(q.table_map_for_update, s.ReadU64("Q_TABLE_MAP_FOR_UPDATE"));
        break;
      }
      case 10: {
        CHSYNC_ASSIGN_OR_RETURN(q.master_data_written, s.ReadU32("Q_MASTER_DATA_WRITTEN"));
        break;
      }
      case 11: {
        CHSYNC_ASSIGN_OR_RETURN(uint8_t n, s.ReadU8("Q_INVOKER user length"));
        CHSYNC_ASSIGN_OR_RETURN(q.invoker_user, s.ReadBytes(n, "Q_INVOKER user"));
        CHSYNC_ASSIGN_OR_RETURN(uint8_t m, s.ReadU8("Q_INVOKER host length"));
        CHSYNC_ASSIGN_OR_RETURN(q.invoker_host, s.ReadBytes(m, "Q_INVOKER host"));
        break;
      }
      case 12: {
        CHSYNC_ASSIGN_OR_RETURN(uint8_t count, s.ReadU8("Q_UPDATED_DB_NAMES count"));
        if (count == 254) {
          q.updated_db_names_over_max = true;
          break;
        }
        for (unsigned i = 0; i < count; ++i) {
          std::string_view rest(reinterpret_cast<const char*>(s.current()), s.remaining());
          size_t nul = rest.find('\0');
          if (nul == std::string_view::npos) return s.Corrupt("unterminated Q_UPDATED_DB_NAMES entry");
          q.updated_db_names.push_back(rest.substr(0, nul));
          CHSYNC_RETURN_IF_ERROR(s.Skip(nul + 1));
        }
        break;
      }
      case 13:
      case 128: {
        CHSYNC_ASSIGN_OR_RETURN(uint64_t us, s.ReadUintLE(3, "Q_MICROSECONDS"));
        q.microseconds = static_cast<uint32_t>(us);
        break;
      }
      case 16: {
        CHSYNC_ASSIGN_OR_RETURN(q.explicit_defaults_for_timestamp,
                                s.ReadU8("Q_EXPLICIT_DEFAULTS_FOR_TIMESTAMP"));
        break;
      }
      case 17:
      case 129: {
        CHSYNC_ASSIGN_OR_RETURN(q.ddl_xid, s.ReadU64("Q_DDL_LOGGED_WITH_XID"));
        break;
      }
      case 18: {
        CHSYNC_ASSIGN_OR_RETURN(q.default_collation_for_utf8mb4,
                                s.ReadU16("Q_DEFAULT_COLLATION_FOR_UTF8MB4"));
        break;
      }
      case 19: {
        CHSYNC_ASSIGN_OR_RETURN(q.sql_require_primary_key, s.ReadU8("Q_SQL_REQUIRE_PRIMARY_KEY"));
        break;
      }
      case 20: {
        CHSYNC_ASSIGN_OR_RETURN(q.default_table_encryption, s.ReadU8("Q_DEFAULT_TABLE_ENCRYPTION"));
        break;
      }
      case 130: {
        CHSYNC_ASSIGN_OR_RETURN(q.gtid_flags3, s.ReadU8("Q_GTID_FLAGS3"));
        if (*q.gtid_flags3 & (kMariaGtidExtraCommitAlter | kMariaGtidExtraRollbackAlter)) {
          CHSYNC_ASSIGN_OR_RETURN(q.sa_seq_no, s.ReadU64("Q_GTID_FLAGS3 START ALTER seq_no"));
        }
        break;
      }
      default: q.unknown_code = code; return Status::Ok();
    }
  }
  return Status::Ok();
}

Result<uint64_t> ReadTlvInt(ByteReader v) {
  CHSYNC_ASSIGN_OR_RETURN(uint64_t x, v.ReadPackedInt("field value"));
  return x;
}

}  // namespace

uint8_t FormatDescriptionEvent::PostHeaderLength(EventType type, uint8_t fallback) const {
  auto code = static_cast<size_t>(type);
  if (code == 0 || code > post_header_lengths.size()) return fallback;
  return post_header_lengths[code - 1];
}

struct Decoder::Context {
  std::string_view bytes;
  ByteReader body;  // post-header + body, checksum excluded
  bool in_payload = false;
};

Decoder::Decoder(DecoderOptions options)
    : options_(std::move(options)), partial_(options_.max_uncompressed_size) {}

ChecksumAlgorithm Decoder::checksum() const {
  return format_ ? format_->checksum : options_.checksum_before_format;
}

std::shared_ptr<const TableMap> Decoder::FindTable(uint64_t table_id) const {
  auto it = tables_.find(table_id);
  return it == tables_.end() ? nullptr : it->second;
}

void Decoder::Reset() {
  format_.reset();
  pending_file_.reset();
  encrypted_ = false;
  tables_.clear();
  recent_maps_.clear();
  clear_tables_before_next_map_ = false;
  partial_.Reset();
}

Result<EventHeader> Decoder::PeekHeader(std::string_view bytes, uint64_t position) const {
  EventHeader h;
  if (bytes.size() >= kHeaderLength) {  // read in place: this runs for every event
    const char* p = bytes.data();
    h.timestamp = ReadLE32(p);
    h.type = static_cast<EventType>(static_cast<uint8_t>(p[4]));
    h.server_id = ReadLE32(p + 5);
    h.event_size = ReadLE32(p + 9);
    h.log_pos = ReadLE32(p + 13);
    h.flags = static_cast<uint16_t>(static_cast<uint8_t>(p[17]) | (static_cast<uint8_t>(p[18]) << 8));
    return h;
  }
  ByteReader r(bytes, position);
  CHSYNC_ASSIGN_OR_RETURN(h.timestamp, r.ReadU32("event header"));
  CHSYNC_ASSIGN_OR_RETURN(uint8_t type, r.ReadU8("event header"));
  h.type = static_cast<EventType>(type);
  CHSYNC_ASSIGN_OR_RETURN(h.server_id, r.ReadU32("event header"));
  CHSYNC_ASSIGN_OR_RETURN(h.event_size, r.ReadU32("event header"));
  CHSYNC_ASSIGN_OR_RETURN(h.log_pos, r.ReadU32("event header"));
  CHSYNC_ASSIGN_OR_RETURN(h.flags, r.ReadU16("event header"));
  return h;
}

Result<Event> Decoder::Decode(std::string_view bytes, uint64_t position) {
  if (pending_file_) {
    file_ = std::move(*pending_file_);
    pending_file_.reset();
  }
  arena_.Reset();
  Result<Event> res = DecodeOne(bytes, position, false);
  if (!res.ok()) {
    std::string where = "at " + file_ + ":" + std::to_string(position);
    if (bytes.size() > 4)
      where = std::string(EventTypeName(static_cast<EventType>(bytes[4]))) + " event " + where;
    res.error().AddContext("while decoding " + where);
  }
  return res;
}

Result<Event> Decoder::DecodeOne(std::string_view bytes, uint64_t position, bool in_payload) {
  if (encrypted_ && !in_payload) {
    return Error(ErrorKind::kUnsupported,
                 "the binlog is encrypted from its START_ENCRYPTION event on; chsync cannot decrypt it "
                 "(read it through the server, which decrypts, instead of from the file)");
  }
  Event ev;
  CHSYNC_ASSIGN_OR_RETURN(ev.header, PeekHeader(bytes, position));
  if (!in_payload && ev.header.type != EventType::kMariaPartialRowData) {
    // A rows event split into PARTIAL_ROW_DATA fragments must not be cut short.
    CHSYNC_RETURN_IF_ERROR(partial_.BeforeOtherEvent(ev.header.type, file_, position));
  }
  ev.file = file_;
  ev.position = position;
  if (ev.header.event_size != bytes.size()) {
    return Error(ErrorKind::kCorrupt, "event_size " + std::to_string(ev.header.event_size) +
                                          " in the header at offset " + std::to_string(position) +
                                          " does not match the " + std::to_string(bytes.size()) +
                                          " bytes of the event");
  }
  size_t header_len = format_ ? format_->header_length : kHeaderLength;
  if (bytes.size() < header_len) {
    return Error(ErrorKind::kCorrupt, "event of " + std::to_string(bytes.size()) +
                                          " bytes is shorter than its " + std::to_string(header_len) +
                                          "-byte header, at offset " + std::to_string(position));
  }
  size_t body_end = bytes.size();
  EventType type = ev.header.type;
  if (type == EventType::kFormatDescription) {
    Context ctx{bytes,
                ByteReader(reinterpret_cast<const uint8_t*>(bytes.data()) + kHeaderLength,
                           bytes.size() - kHeaderLength, position + kHeaderLength),
                in_payload};
    CHSYNC_RETURN_IF_ERROR(DecodeFormatDescription(ctx, ev));
    return ev;
  }
  if (!in_payload) {
    ChecksumAlgorithm alg = checksum();
    if (alg == ChecksumAlgorithm::kCrc32 || alg == ChecksumAlgorithm::kUndefined) {
      if (bytes.size() < header_len + kChecksumLength) {
        if (alg == ChecksumAlgorithm::kCrc32) {
          return Error(ErrorKind::kCorrupt,
                       "event too short for its checksum at offset " + std::to_string(position));
        }
      } else {
        uint32_t stored = ReadLE32(bytes.data() + bytes.size() - kChecksumLength);
        bool check = options_.verify_checksums || alg == ChecksumAlgorithm::kUndefined;
        uint32_t computed = check ? Crc32(bytes.substr(0, bytes.size() - kChecksumLength)) : stored;
        if (alg == ChecksumAlgorithm::kCrc32) {
          if (check && stored != computed) return ChecksumMismatch(stored, computed);
          body_end -= kChecksumLength;
          ev.checksum_verified = options_.verify_checksums;
        } else if (stored == computed) {
          body_end -= kChecksumLength;
          ev.checksum_verified = true;
        }
      }
    }
  }
  Context ctx{bytes,
              ByteReader(reinterpret_cast<const uint8_t*>(bytes.data()) + header_len, body_end - header_len,
                         position + header_len),
              in_payload};
  CHSYNC_RETURN_IF_ERROR(DecodeBody(ctx, ev));
  return ev;
}

Result<std::shared_ptr<const TableMap>> Decoder::TableMapOf(const ByteReader& r, uint8_t post_header_len) {
  ByteReader peek = r;
  const std::string_view body = peek.ReadRest();
  const bool unfiltered = !options_.decode_rows_of;
  auto it = recent_maps_.find(body);
  if (it != recent_maps_.end() &&
      (unfiltered || options_.decode_rows_of(*it->second.map) == it->second.wanted)) {
    return it->second.map;
  }
  bool asked = true;
  const std::function<bool(const TableMap&)> ask = [&](const TableMap& map) {
    asked = options_.decode_rows_of(map);
    return asked;
  };
  CHSYNC_ASSIGN_OR_RETURN(std::shared_ptr<TableMap> t,
                          internal::ParseTableMap(r, post_header_len, format_ && format_->mariadb,
                                                  options_.decode_rows_of ? &ask : nullptr));
  // complete_table_map fills in what the event leaves out from elsewhere (the tracked schema),
  // which may change while the bytes stay the same: such maps are parsed afresh each time.
  const bool completed = options_.complete_table_map &&
                         std::any_of(t->columns.begin(), t->columns.end(), [](const ColumnInfo& c) {
                           return IsOldTemporalType(c.type) && c.metadata == 0;
                         });
  if (options_.complete_table_map) CHSYNC_RETURN_IF_ERROR(options_.complete_table_map(*t));
  if (!completed) {
    if (recent_maps_.size() >= kRecentMapsLimit) recent_maps_.clear();
    recent_maps_.insert_or_assign(std::string(body), RecentMap{t, asked});
  }
  return std::shared_ptr<const TableMap>(std::move(t));
}

Status Decoder::DecodeFormatDescription(Context& ctx, Event& ev) {
  ByteReader& r = ctx.body;
  FormatDescriptionEvent f;
  CHSYNC_ASSIGN_OR_RETURN(f.binlog_version, r.ReadU16("binlog version"));
  CHSYNC_ASSIGN_OR_RETURN(std::string_view version, r.ReadBytes(50, "server version"));
  f.server_version.assign(version.substr(0, version.find('\0')));
  CHSYNC_ASSIGN_OR_RETURN(f.create_timestamp, r.ReadU32("create timestamp"));
  CHSYNC_ASSIGN_OR_RETURN(f.header_length, r.ReadU8("header length"));
  if (f.binlog_version != 4) {
    return r.Corrupt("FORMAT_DESCRIPTION binlog version " + std::to_string(f.binlog_version) +
                     " (expected 4)");
  }
  if (f.header_length < kHeaderLength) {
    return r.Corrupt("FORMAT_DESCRIPTION header length " + std::to_string(f.header_length) + " below 19");
  }
  if (f.server_version.empty() || f.server_version[0] < '1' || f.server_version[0] > '9') {
    return Error(ErrorKind::kCorrupt,
                 "FORMAT_DESCRIPTION server version does not start with a version number, at offset " +
                     std::to_string(ev.position + kHeaderLength + 2));
  }
  f.mariadb = f.server_version.find("MariaDB") != std::string::npos;
  std::string_view rest = r.ReadRest();
  std::string_view covered = ctx.bytes.substr(0, ctx.bytes.size() - kChecksumLength);
  uint32_t stored = ctx.bytes.size() >= kHeaderLength + kChecksumLength
                        ? ReadLE32(ctx.bytes.data() + ctx.bytes.size() - kChecksumLength)
                        : 0;
  // Servers that know checksums end the FDE with the algorithm byte and a CRC32, which they
  // compute even when the algorithm is NONE. The version says whether to expect them; a
  // matching CRC says so too (a damaged version string must not turn verification off).
  bool has_alg = HasChecksumAlgorithm(f.server_version, f.mariadb) ||
                 (rest.size() >= 1 + kChecksumLength && Crc32(covered) == stored);
  if (has_alg) {
    if (rest.size() < 1 + kChecksumLength) return r.Corrupt("FORMAT_DESCRIPTION too short for its checksum");
    auto alg = static_cast<uint8_t>(rest[rest.size() - 1 - kChecksumLength]);
    if (alg != 0 && alg != 1) {
      return r.Corrupt("unknown checksum algorithm " + std::to_string(alg) + " in FORMAT_DESCRIPTION");
    }
    f.checksum = static_cast<ChecksumAlgorithm>(alg);
    rest.remove_suffix(1 + kChecksumLength);
    // Verified whatever the algorithm; a stored 0 with algorithm NONE means "not computed".
    bool check = options_.verify_checksums && !ctx.in_payload &&
                 (f.checksum == ChecksumAlgorithm::kCrc32 || stored != 0);
    if (check) {
      uint32_t computed = Crc32(covered);
      if (stored != computed) {
        if (ev.header.flags & kFlagBinlogInUse) {
          // A file copied while the server had it open: the flag was set after the CRC was computed.
          std::string copy(covered);
          copy[17] = static_cast<char>(static_cast<uint8_t>(copy[17]) & ~kFlagBinlogInUse);
          if (Crc32(copy) != stored) return ChecksumMismatch(stored, computed);
          f.crc_matched_without_in_use_flag = true;
        } else {
          return ChecksumMismatch(stored, computed);
        }
      }
      ev.checksum_verified = true;
    }
  }
  f.post_header_lengths.assign(rest.begin(), rest.end());
  format_ = f;
  ev.body = std::move(f);
  return Status::Ok();
}

namespace {

/// A rows event of a MariaDB table whose TIME/DATETIME/TIMESTAMP columns have no precision in
/// their TABLE_MAP may hold MariaDB 5.3 "hires" values, whose width only the schema knows: say
/// so, since the error itself then names whichever later column the misread bytes reached.
Error HiresHint(Error error, const RowsEvent& rows) {
  if (rows.table == nullptr) return error;
  std::string names;
  for (const ColumnInfo& c : rows.table->columns) {
    if (!IsOldTemporalType(c.type) || c.metadata != 0) continue;
    names += names.empty() ? "" : ", ";
    names += c.name.empty() ? "@" + std::to_string(&c - rows.table->columns.data() + 1) : std::string(c.name);
  }
  if (names.empty()) return error;
  return error.AddContext("table " + std::string(rows.table->database) + "." +
                          std::string(rows.table->table) +
                          " has TIME/DATETIME/TIMESTAMP columns without a precision in the binlog (" + names +
                          "): if SHOW CREATE TABLE marks them /* mariadb-5.3 */ (created with "
                          "mysql56_temporal_format=OFF), only the schema knows their values' width, which "
                          "`chsync tail` and the pipe read from the server");
}

}  // namespace

Status Decoder::DecodeBody(Context& ctx, Event& ev) {
  ByteReader& r = ctx.body;
  EventType type = ev.header.type;
  auto post_header = [&](uint8_t fallback) {
    return format_ ? format_->PostHeaderLength(type, fallback) : fallback;
  };
  switch (type) {
    case EventType::kStartV3: {
      StartV3Event s;
      CHSYNC_ASSIGN_OR_RETURN(s.binlog_version, r.ReadU16("binlog version"));
      CHSYNC_ASSIGN_OR_RETURN(std::string_view version, r.ReadBytes(50, "server version"));
      s.server_version = version.substr(0, version.find('\0'));
      CHSYNC_ASSIGN_OR_RETURN(s.create_timestamp, r.ReadU32("create timestamp"));
      if (!format_) {
        FormatDescriptionEvent f;
        f.binlog_version = s.binlog_version;
        f.server_version.assign(s.server_version);
        f.post_header_lengths = V3PostHeaderLengths();
        format_ = std::move(f);
      }
      ev.body = s;
      return Status::Ok();
    }
    case EventType::kQuery:
    case EventType::kMariaQueryCompressed: {
      QueryEvent q;
      q.compressed = type == EventType::kMariaQueryCompressed;
      uint8_t ph = post_header(13);
      if (ph < 11) return r.Corrupt("QUERY post-header length " + std::to_string(ph) + " below 11");
      CHSYNC_ASSIGN_OR_RETURN(q.thread_id, r.ReadU32("thread id"));
      CHSYNC_ASSIGN_OR_RETURN(q.exec_time, r.ReadU32("exec time"));
      CHSYNC_ASSIGN_OR_RETURN(uint8_t db_len, r.ReadU8("database length"));
      CHSYNC_ASSIGN_OR_RETURN(q.error_code, r.ReadU16("error code"));
      uint16_t status_len = 0;
      if (ph >= 13) {
        CHSYNC_ASSIGN_OR_RETURN(status_len, r.ReadU16("status variables length"));
        CHSYNC_RETURN_IF_ERROR(r.Skip(ph - 13u, "QUERY post-header"));
      }
      CHSYNC_ASSIGN_OR_RETURN(ByteReader status, r.Sub(status_len, "status variables"));
      CHSYNC_RETURN_IF_ERROR(ParseQueryStatus(status, q.status));
      CHSYNC_ASSIGN_OR_RETURN(q.database, r.ReadBytes(db_len, "database name"));
      CHSYNC_RETURN_IF_ERROR(r.Skip(1, "database name terminator"));
      uint64_t at = r.offset();
      q.query = r.ReadRest();
      if (q.compressed) {
        CHSYNC_ASSIGN_OR_RETURN(q.query,
                                InflateMariaEvent(q.query, at, options_.max_uncompressed_size, arena_));
      }
      ev.body = q;
      return Status::Ok();
    }
    case EventType::kStop: ev.body = StopEvent{}; return Status::Ok();
    case EventType::kRotate: {
      RotateEvent rot;
      uint8_t ph = post_header(8);
      if (ph >= 8) {
        CHSYNC_ASSIGN_OR_RETURN(rot.position, r.ReadU64("rotate position"));
        CHSYNC_RETURN_IF_ERROR(r.Skip(ph - 8u, "ROTATE post-header"));
      }
      rot.next_file = r.ReadRest();
      if (options_.follow_rotate && !ctx.in_payload && !rot.next_file.empty())
        pending_file_ = std::string(rot.next_file);
      ev.body = rot;
      return Status::Ok();
    }
    case EventType::kIntvar: {
      IntvarEvent i;
      CHSYNC_ASSIGN_OR_RETURN(i.kind, r.ReadU8("INTVAR type"));
      CHSYNC_ASSIGN_OR_RETURN(i.value, r.ReadU64("INTVAR value"));
      ev.body = i;
      return Status::Ok();
    }
    case EventType::kRand: {
      RandEvent i;
      CHSYNC_ASSIGN_OR_RETURN(i.seed1, r.ReadU64("RAND seed1"));
      CHSYNC_ASSIGN_OR_RETURN(i.seed2, r.ReadU64("RAND seed2"));
      ev.body = i;
      return Status::Ok();
    }
    case EventType::kUserVar: {
      UserVarEvent u;
      CHSYNC_ASSIGN_OR_RETURN(uint32_t name_len, r.ReadU32("user variable name length"));
      CHSYNC_ASSIGN_OR_RETURN(u.name, r.ReadBytes(name_len, "user variable name"));
      CHSYNC_ASSIGN_OR_RETURN(uint8_t is_null, r.ReadU8("user variable null flag"));
      u.is_null = is_null != 0;
      if (!u.is_null) {
        CHSYNC_ASSIGN_OR_RETURN(u.value_type, r.ReadU8("user variable type"));
        CHSYNC_ASSIGN_OR_RETURN(u.charset, r.ReadU32("user variable charset"));
        CHSYNC_ASSIGN_OR_RETURN(uint32_t value_len, r.ReadU32("user variable value length"));
        CHSYNC_ASSIGN_OR_RETURN(u.value, r.ReadBytes(value_len, "user variable value"));
        if (!r.empty()) {
          CHSYNC_ASSIGN_OR_RETURN(uint8_t flags, r.ReadU8("user variable flags"));
          u.flags = flags;
        }
      }
      ev.body = u;
      return Status::Ok();
    }
    case EventType::kXid: {
      XidEvent x;
      CHSYNC_ASSIGN_OR_RETURN(x.xid, r.ReadU64("xid"));
      ev.body = x;
      return Status::Ok();
    }
    case EventType::kTableMap: {
      CHSYNC_ASSIGN_OR_RETURN(std::shared_ptr<const TableMap> t, TableMapOf(r, post_header(8)));
      if (clear_tables_before_next_map_) {
        tables_.clear();
        clear_tables_before_next_map_ = false;
      }
      tables_[t->table_id] = t;
      ev.body = TableMapEvent{std::move(t)};
      return Status::Ok();
    }
    case EventType::kPreGaWriteRows:
    case EventType::kPreGaUpdateRows:
    case EventType::kPreGaDeleteRows:
    case EventType::kWriteRowsV1:
    case EventType::kUpdateRowsV1:
    case EventType::kDeleteRowsV1:
    case EventType::kWriteRowsV2:
    case EventType::kUpdateRowsV2:
    case EventType::kDeleteRowsV2:
    case EventType::kPartialUpdateRows:
    case EventType::kMariaWriteRowsCompressedV1:
    case EventType::kMariaUpdateRowsCompressedV1:
    case EventType::kMariaDeleteRowsCompressedV1:
    case EventType::kMariaWriteRowsCompressed:
    case EventType::kMariaUpdateRowsCompressed:
    case EventType::kMariaDeleteRowsCompressed: {
      bool v2 = type == EventType::kWriteRowsV2 || type == EventType::kUpdateRowsV2 ||
                type == EventType::kDeleteRowsV2 || type == EventType::kPartialUpdateRows ||
                static_cast<uint8_t>(type) >= 169;
      RowsEvent rows;
      internal::ValueContext vctx{arena_, scratch_, options_.max_uncompressed_size, &options_.decode_rows_of};
      Status parsed = internal::ParseRows(
          r, type, post_header(v2 ? 10 : 8), [this](uint64_t id) { return FindTable(id); }, vctx, rows);
      if (!parsed.ok()) {
        Error e = std::move(parsed).error();
        return format_ && format_->mariadb ? HiresHint(std::move(e), rows) : e;
      }
      if (rows.flags & kRowsFlagStmtEnd) clear_tables_before_next_map_ = true;
      ev.body = std::move(rows);
      return Status::Ok();
    }
    case EventType::kIncident: {
      IncidentEvent i;
      CHSYNC_ASSIGN_OR_RETURN(i.incident, r.ReadU16("incident number"));
      if (!r.empty()) {
        CHSYNC_ASSIGN_OR_RETURN(uint8_t len, r.ReadU8("incident message length"));
        CHSYNC_ASSIGN_OR_RETURN(i.message, r.ReadBytes(len, "incident message"));
      }
      ev.body = i;
      return Status::Ok();
    }
    case EventType::kHeartbeat: {
      HeartbeatEvent h;
      h.log_file = r.ReadRest();
      ev.body = h;
      return Status::Ok();
    }
    case EventType::kHeartbeatV2: {
      HeartbeatEvent h;
      h.version = 2;
      while (!r.empty()) {
        CHSYNC_ASSIGN_OR_RETURN(uint64_t field, r.ReadPackedInt("heartbeat field type"));
        if (field == 0) break;
        CHSYNC_ASSIGN_OR_RETURN(uint64_t len, r.ReadPackedInt("heartbeat field length"));
        CHSYNC_ASSIGN_OR_RETURN(ByteReader v, r.Sub(len, "heartbeat field"));
        if (field == 1) {
          h.log_file = v.ReadRest();
        } else if (field == 2) {
          CHSYNC_ASSIGN_OR_RETURN(uint64_t pos, ReadTlvInt(v));
          h.log_position = pos;
        }
      }
      ev.body = h;
      return Status::Ok();
    }
    case EventType::kRowsQuery: {
      RowsQueryEvent q;
      CHSYNC_RETURN_IF_ERROR(r.Skip(1, "rows query length"));
      q.query = r.ReadRest();
      ev.body = q;
      return Status::Ok();
    }
    case EventType::kGtid:
    case EventType::kAnonymousGtid: return DecodeGtid(ctx, ev);
    case EventType::kGtidTagged: return DecodeGtidTagged(ctx, ev);
    case EventType::kPreviousGtids: return DecodePreviousGtids(ctx, ev);
    case EventType::kXaPrepare: {
      XaPrepareEvent x;
      CHSYNC_ASSIGN_OR_RETURN(uint8_t one_phase, r.ReadU8("XA one-phase flag"));
      x.one_phase = one_phase != 0;
      CHSYNC_ASSIGN_OR_RETURN(x.format_id, r.ReadU32("XA format id"));
      CHSYNC_ASSIGN_OR_RETURN(uint32_t gtrid_len, r.ReadU32("XA gtrid length"));
      CHSYNC_ASSIGN_OR_RETURN(uint32_t bqual_len, r.ReadU32("XA bqual length"));
      if (gtrid_len > 64 || bqual_len > 64) return r.Corrupt("XA id part longer than 64 bytes");
      CHSYNC_ASSIGN_OR_RETURN(x.gtrid, r.ReadBytes(gtrid_len, "XA gtrid"));
      CHSYNC_ASSIGN_OR_RETURN(x.bqual, r.ReadBytes(bqual_len, "XA bqual"));
      ev.body = x;
      return Status::Ok();
    }
    case EventType::kTransactionPayload: return DecodePayload(ctx, ev);
    case EventType::kMariaPartialRowData: return DecodePartialRowData(ctx, ev);
    case EventType::kMariaAnnotateRows: ev.body = AnnotateRowsEvent{r.ReadRest()}; return Status::Ok();
    case EventType::kMariaBinlogCheckpoint: {
      CHSYNC_ASSIGN_OR_RETURN(uint32_t len, r.ReadU32("checkpoint file name length"));
      CHSYNC_ASSIGN_OR_RETURN(std::string_view name, r.ReadBytes(len, "checkpoint file name"));
      ev.body = BinlogCheckpointEvent{name};
      return Status::Ok();
    }
    case EventType::kMariaGtid: return DecodeMariaGtid(ctx, ev);
    case EventType::kMariaGtidList: {
      MariaGtidListEvent l;
      CHSYNC_ASSIGN_OR_RETURN(uint32_t count, r.ReadU32("GTID list count"));
      l.flags = static_cast<uint8_t>(count >> 28);
      count &= 0x0fffffff;
      if (count > r.remaining() / 16)
        return r.Corrupt("GTID list count " + std::to_string(count) + " past the end");
      for (uint32_t i = 0; i < count; ++i) {
        MariaGtid g;
        CHSYNC_ASSIGN_OR_RETURN(g.domain_id, r.ReadU32("GTID domain"));
        CHSYNC_ASSIGN_OR_RETURN(g.server_id, r.ReadU32("GTID server id"));
        CHSYNC_ASSIGN_OR_RETURN(g.seq_no, r.ReadU64("GTID seq_no"));
        l.gtids.push_back(g);
      }
      ev.body = std::move(l);
      return Status::Ok();
    }
    case EventType::kMariaStartEncryption: {
      StartEncryptionEvent s;
      CHSYNC_ASSIGN_OR_RETURN(s.scheme, r.ReadU8("encryption scheme"));
      CHSYNC_ASSIGN_OR_RETURN(s.key_version, r.ReadU32("encryption key version"));
      if (!ctx.in_payload) encrypted_ = true;
      ev.body = s;
      return Status::Ok();
    }
    default: ev.body = OtherEvent{r.ReadRest()}; return Status::Ok();
  }
}

Status Decoder::DecodeGtid(Context& ctx, Event& ev) {
  ByteReader& r = ctx.body;
  GtidEvent g;
  g.anonymous = ev.header.type == EventType::kAnonymousGtid;
  CHSYNC_ASSIGN_OR_RETURN(g.flags, r.ReadU8("GTID flags"));
  CHSYNC_ASSIGN_OR_RETURN(std::string_view sid, r.ReadBytes(16, "GTID source id"));
  std::copy(sid.begin(), sid.end(), g.sid.begin());
  CHSYNC_ASSIGN_OR_RETURN(g.gno, r.ReadU64("GTID number"));
  if (!r.empty()) {
    CHSYNC_ASSIGN_OR_RETURN(uint8_t lt_type, r.ReadU8("logical timestamp type"));
    if (lt_type == 2) {
      CHSYNC_ASSIGN_OR_RETURN(g.last_committed, r.ReadU64("last_committed"));
      CHSYNC_ASSIGN_OR_RETURN(g.sequence_number, r.ReadU64("sequence_number"));
    }
  }
  if (r.remaining() >= 7) {
    CHSYNC_ASSIGN_OR_RETURN(uint64_t ts, r.ReadUintLE(7, "immediate commit timestamp"));
    constexpr uint64_t kHigh = uint64_t{1} << 55;
    g.immediate_commit_timestamp = ts & ~kHigh;
    if (ts & kHigh) {
      CHSYNC_ASSIGN_OR_RETURN(uint64_t orig, r.ReadUintLE(7, "original commit timestamp"));
      g.original_commit_timestamp = orig;
    } else {
      g.original_commit_timestamp = g.immediate_commit_timestamp;
    }
    if (!r.empty()) {
      CHSYNC_ASSIGN_OR_RETURN(uint64_t len, r.ReadPackedInt("transaction length"));
      g.transaction_length = len;
    }
    if (r.remaining() >= 4) {
      CHSYNC_ASSIGN_OR_RETURN(uint32_t v, r.ReadU32("immediate server version"));
      constexpr uint32_t kHigh32 = uint32_t{1} << 31;
      g.immediate_server_version = v & ~kHigh32;
      if (v & kHigh32) {
        CHSYNC_ASSIGN_OR_RETURN(uint32_t o, r.ReadU32("original server version"));
        g.original_server_version = o;
      } else {
        g.original_server_version = g.immediate_server_version;
      }
    }
    if (r.remaining() >= 8) {
      CHSYNC_ASSIGN_OR_RETURN(uint64_t ticket, r.ReadU64("commit group ticket"));
      g.commit_group_ticket = ticket;
    }
  }
  ev.body = std::move(g);
  return Status::Ok();
}

namespace {

// mysql::serialization variable-length unsigned integer: the number of trailing one bits of
// the first byte, plus one, is the byte count; the value is the little-endian bytes shifted
// right by that count.
Result<uint64_t> ReadVarUint(ByteReader& r, std::string_view what) {
  CHSYNC_RETURN_IF_ERROR(r.Need(1, what));
  uint8_t first = *r.current();
  size_t n = static_cast<size_t>(std::countr_one(first)) + 1;
  if (n > 9) return r.Corrupt(std::string(what) + ": variable-length integer longer than 9 bytes");
  if (n == 9) {
    CHSYNC_RETURN_IF_ERROR(r.Skip(1));
    return r.ReadU64(what);
  }
  CHSYNC_ASSIGN_OR_RETURN(uint64_t v, r.ReadUintLE(n, what));
  return v >> n;
}

Result<int64_t> ReadVarInt(ByteReader& r, std::string_view what) {
  CHSYNC_ASSIGN_OR_RETURN(uint64_t z, ReadVarUint(r, what));
  return static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
}

}  // namespace

Status Decoder::DecodeGtidTagged(Context& ctx, Event& ev) {
  ByteReader& r = ctx.body;
  GtidEvent g;
  CHSYNC_ASSIGN_OR_RETURN(uint64_t version, ReadVarUint(r, "GTID_TAGGED format version"));
  if (version != 1) return r.Corrupt("GTID_TAGGED format version " + std::to_string(version));
  CHSYNC_ASSIGN_OR_RETURN(uint64_t size, ReadVarUint(r, "GTID_TAGGED size"));
  if (size > r.size()) return r.Corrupt("GTID_TAGGED size " + std::to_string(size) + " past the end");
  CHSYNC_ASSIGN_OR_RETURN(uint64_t last_required, ReadVarUint(r, "GTID_TAGGED last field id"));
  (void)last_required;
  bool original_ts = false, original_version = false;
  while (!r.empty()) {
    CHSYNC_ASSIGN_OR_RETURN(uint64_t field, ReadVarUint(r, "GTID_TAGGED field id"));
    switch (field) {
      case 0: {
        CHSYNC_ASSIGN_OR_RETURN(uint64_t flags, ReadVarUint(r, "GTID flags"));
        g.flags = static_cast<uint8_t>(flags);
        break;
      }
      case 1:
        for (auto& b : g.sid) {
          CHSYNC_ASSIGN_OR_RETURN(uint64_t v, ReadVarUint(r, "GTID source id"));
          if (v > 255) return r.Corrupt("GTID source id byte above 255");
          b = static_cast<uint8_t>(v);
        }
        break;
      case 2: {
        CHSYNC_ASSIGN_OR_RETURN(int64_t gno, ReadVarInt(r, "GTID number"));
        g.gno = static_cast<uint64_t>(gno);
        break;
      }
      case 3: {
        CHSYNC_ASSIGN_OR_RETURN(uint64_t len, ReadVarUint(r, "GTID tag length"));
        if (len > 32) return r.Corrupt("GTID tag longer than 32 bytes");
        CHSYNC_ASSIGN_OR_RETURN(std::string_view tag, r.ReadBytes(len, "GTID tag"));
        g.tag.assign(tag);
        break;
      }
      case 4: {
        CHSYNC_ASSIGN_OR_RETURN(int64_t v, ReadVarInt(r, "last_committed"));
        g.last_committed = static_cast<uint64_t>(v);
        break;
      }
      case 5: {
        CHSYNC_ASSIGN_OR_RETURN(int64_t v, ReadVarInt(r, "sequence_number"));
        g.sequence_number = static_cast<uint64_t>(v);
        break;
      }
      case 6: {
        CHSYNC_ASSIGN_OR_RETURN(g.immediate_commit_timestamp, ReadVarUint(r, "immediate commit timestamp"));
        break;
      }
      case 7: {
        CHSYNC_ASSIGN_OR_RETURN(g.original_commit_timestamp, ReadVarUint(r, "original commit timestamp"));
        original_ts = true;
        break;
      }
      case 8: {
        CHSYNC_ASSIGN_OR_RETURN(g.transaction_length, ReadVarUint(r, "transaction length"));
        break;
      }
      case 9: {
        CHSYNC_ASSIGN_OR_RETURN(uint64_t v, ReadVarUint(r, "immediate server version"));
        g.immediate_server_version = static_cast<uint32_t>(v);
        break;
      }
      case 10: {
        CHSYNC_ASSIGN_OR_RETURN(uint64_t v, ReadVarUint(r, "original server version"));
        g.original_server_version = static_cast<uint32_t>(v);
        original_version = true;
        break;
      }
      case 11: {
        CHSYNC_ASSIGN_OR_RETURN(g.commit_group_ticket, ReadVarUint(r, "commit group ticket"));
        break;
      }
      default:
        // A field added by a newer server: its encoding is unknown, so the rest is not read.
        r.ReadRest();
        break;
    }
  }
  if (!original_ts) g.original_commit_timestamp = g.immediate_commit_timestamp;
  if (!original_version) g.original_server_version = g.immediate_server_version;
  ev.body = std::move(g);
  return Status::Ok();
}

Status Decoder::DecodePreviousGtids(Context& ctx, Event& ev) {
  ByteReader& r = ctx.body;
  PreviousGtidsEvent p;
  CHSYNC_ASSIGN_OR_RETURN(uint64_t head, r.ReadU64("GTID set count"));
  uint8_t format = static_cast<uint8_t>(head >> 56);
  uint64_t count = head & 0x00ffffffffffffffULL;
  if (format == 1) {
    // Tagged format (MySQL >= 8.3): format byte, 6-byte count, format byte again.
    if ((head & 0xff) != 1) return r.Corrupt("malformed tagged GTID set header");
    count = (head >> 8) & 0xffffffffffffULL;
  } else if (format != 0) {
    return r.Corrupt("unknown GTID set format " + std::to_string(format));
  }
  if (count > r.remaining() / 24)
    return r.Corrupt("GTID set count " + std::to_string(count) + " past the end");
  for (uint64_t i = 0; i < count; ++i) {
    GtidSetEntry e;
    CHSYNC_ASSIGN_OR_RETURN(std::string_view sid, r.ReadBytes(16, "GTID source id"));
    std::copy(sid.begin(), sid.end(), e.sid.begin());
    if (format == 1) {
      // A serialization-format variable-length integer; tags are at most 32 bytes, so one byte.
      CHSYNC_ASSIGN_OR_RETURN(uint8_t tag_len, r.ReadU8("GTID tag length"));
      if (tag_len & 1) return r.Corrupt("GTID tag length does not fit one byte");
      CHSYNC_ASSIGN_OR_RETURN(std::string_view tag, r.ReadBytes(tag_len >> 1, "GTID tag"));
      e.tag.assign(tag);
    }
    CHSYNC_ASSIGN_OR_RETURN(uint64_t n, r.ReadU64("GTID interval count"));
    if (n > r.remaining() / 16)
      return r.Corrupt("GTID interval count " + std::to_string(n) + " past the end");
    for (uint64_t k = 0; k < n; ++k) {
      CHSYNC_ASSIGN_OR_RETURN(uint64_t start, r.ReadU64("GTID interval start"));
      CHSYNC_ASSIGN_OR_RETURN(uint64_t end, r.ReadU64("GTID interval end"));
      e.intervals.emplace_back(start, end);
    }
    p.sets.push_back(std::move(e));
  }
  ev.body = std::move(p);
  return Status::Ok();
}

Status Decoder::DecodeMariaGtid(Context& ctx, Event& ev) {
  // Layout: MariaGtidEvent in event.h. Only what the flags announce is there, back to back; no
  // gap before the XA id or flags_extra when commit_id is absent.
  ByteReader& r = ctx.body;
  MariaGtidEvent g;
  CHSYNC_ASSIGN_OR_RETURN(g.seq_no, r.ReadU64("GTID seq_no"));
  CHSYNC_ASSIGN_OR_RETURN(g.domain_id, r.ReadU32("GTID domain id"));
  CHSYNC_ASSIGN_OR_RETURN(g.flags2, r.ReadU8("GTID flags"));
  if (g.flags2 & kMariaGtidGroupCommitId) {
    CHSYNC_ASSIGN_OR_RETURN(uint64_t id, r.ReadU64("GTID commit id"));
    g.commit_id = id;
  }
  if (g.flags2 & (kMariaGtidPreparedXa | kMariaGtidCompletedXa)) {
    CHSYNC_ASSIGN_OR_RETURN(uint32_t format_id, r.ReadU32("XA format id"));
    g.xa_format_id = format_id;
    CHSYNC_ASSIGN_OR_RETURN(uint8_t gtrid_len, r.ReadU8("XA gtrid length"));
    CHSYNC_ASSIGN_OR_RETURN(uint8_t bqual_len, r.ReadU8("XA bqual length"));
    if (gtrid_len > 64 || bqual_len > 64) return r.Corrupt("XA id part longer than 64 bytes");
    CHSYNC_ASSIGN_OR_RETURN(g.xa_gtrid, r.ReadBytes(gtrid_len, "XA gtrid"));
    CHSYNC_ASSIGN_OR_RETURN(g.xa_bqual, r.ReadBytes(bqual_len, "XA bqual"));
  }
  if (!r.empty()) {
    // The writer leaves flags_extra out when it is zero: a zero here is the padding to 19 bytes.
    CHSYNC_ASSIGN_OR_RETURN(uint8_t extra, r.ReadU8("GTID extra flags"));
    if (extra != 0) {
      g.flags_extra = extra;
      if (extra & kMariaGtidExtraMultiEngine) {
        CHSYNC_ASSIGN_OR_RETURN(uint8_t engines, r.ReadU8("GTID extra engines"));
        g.extra_engines = engines;
      }
      if (extra & (kMariaGtidExtraCommitAlter | kMariaGtidExtraRollbackAlter)) {
        CHSYNC_ASSIGN_OR_RETURN(uint64_t sa, r.ReadU64("GTID START ALTER seq_no"));
        g.sa_seq_no = sa;
      }
      if (extra & kMariaGtidExtraThreadId) {
        CHSYNC_ASSIGN_OR_RETURN(uint32_t thread, r.ReadU32("GTID thread id"));
        g.thread_id = thread;
      }
    }
  }
  // What remains is zero padding (or a field of a newer server): not read.
  ev.body = g;
  return Status::Ok();
}

Status Decoder::DecodePayload(Context& ctx, Event& ev) {
  ByteReader& r = ctx.body;
  if (ctx.in_payload) return r.Corrupt("TRANSACTION_PAYLOAD nested inside another");
  TransactionPayloadEvent p;
  bool have_size = false;
  while (true) {
    CHSYNC_ASSIGN_OR_RETURN(uint64_t field, r.ReadPackedInt("payload field type"));
    if (field == 0) break;
    CHSYNC_ASSIGN_OR_RETURN(uint64_t len, r.ReadPackedInt("payload field length"));
    CHSYNC_ASSIGN_OR_RETURN(ByteReader v, r.Sub(len, "payload field"));
    switch (field) {
      case 1: {
        CHSYNC_ASSIGN_OR_RETURN(p.payload_size, ReadTlvInt(v));
        have_size = true;
        break;
      }
      case 2: {
        CHSYNC_ASSIGN_OR_RETURN(p.compression_type, ReadTlvInt(v));
        break;
      }
      case 3: {
        CHSYNC_ASSIGN_OR_RETURN(p.uncompressed_size, ReadTlvInt(v));
        break;
      }
      default: break;
    }
  }
  uint64_t at = r.offset();
  std::string_view payload = r.ReadRest();
  if (have_size && p.payload_size != payload.size()) {
    return Error(ErrorKind::kCorrupt, "TRANSACTION_PAYLOAD declares " + std::to_string(p.payload_size) +
                                          " payload bytes but has " + std::to_string(payload.size()) +
                                          ", at offset " + std::to_string(at));
  }
  std::string_view inner;
  if (p.compression_type == 0) {
    CHSYNC_ASSIGN_OR_RETURN(
        inner, ZstdDecompress(payload, p.uncompressed_size, at, options_.max_uncompressed_size, arena_));
  } else if (p.compression_type == 255) {
    inner = payload;
  } else {
    return Error(ErrorKind::kUnsupported, "TRANSACTION_PAYLOAD compression type " +
                                              std::to_string(p.compression_type) + " at offset " +
                                              std::to_string(at));
  }
  size_t pos = 0;
  uint32_t index = 0;
  while (pos < inner.size()) {
    if (inner.size() - pos < kHeaderLength) {
      return Error(ErrorKind::kCorrupt, "truncated event header inside TRANSACTION_PAYLOAD at payload byte " +
                                            std::to_string(pos) + " (event at offset " +
                                            std::to_string(ev.position) + ")");
    }
    uint32_t size = ReadLE32(inner.data() + pos + 9);
    if (size < kHeaderLength || size > inner.size() - pos) {
      return Error(ErrorKind::kCorrupt,
                   "bad event_size " + std::to_string(size) + " inside TRANSACTION_PAYLOAD at payload byte " +
                       std::to_string(pos) + " (event at offset " + std::to_string(ev.position) + ")");
    }
    Result<Event> e = DecodeOne(inner.substr(pos, size), ev.position, true);
    if (!e.ok()) {
      return std::move(e).error().AddContext("inside TRANSACTION_PAYLOAD, event " + std::to_string(index) +
                                             " at payload byte " + std::to_string(pos));
    }
    e->payload_index = index++;
    e->payload_offset = pos;
    p.events.push_back(std::move(e).value());
    pos += size;
  }
  ev.body = std::move(p);
  return Status::Ok();
}

Status Decoder::DecodePartialRowData(Context& ctx, Event& ev) {
  if (ctx.in_payload) return ctx.body.Corrupt("PARTIAL_ROW_DATA inside a TRANSACTION_PAYLOAD");
  CHSYNC_ASSIGN_OR_RETURN(PartialRowsFragment f, ParsePartialRowsFragment(ctx.body));
  PartialRowDataEvent p;
  p.total = f.total;
  p.sequence = f.sequence;
  p.flags = f.flags;
  p.original_size = f.original_size;
  p.chunk_size = f.chunk.size();
  CHSYNC_ASSIGN_OR_RETURN(std::optional<ReassembledRowsEvent> done,
                          partial_.Add(f, file_, ev.position, checksum()));
  if (done) {
    // The joined event has no checksum (removed if it had one): decode it like an event of a
    // TRANSACTION_PAYLOAD, at the group's first position so that positions derived from its
    // rows (row versions) stay within the group's bytes.
    Result<Event> inner = DecodeOne(done->event, done->first_position, /*in_payload=*/true);
    if (!inner.ok()) {
      return std::move(inner).error().AddContext(
          "in the " + std::string(EventTypeName(done->type)) + " event reassembled from " +
          std::to_string(done->fragments) + " PARTIAL_ROW_DATA fragments that began at " +
          std::string(done->first_file) + ":" + std::to_string(done->first_position));
    }
    inner->checksum_verified = done->had_checksum && options_.verify_checksums;
    p.events.push_back(std::move(inner).value());
  }
  ev.body = std::move(p);
  return Status::Ok();
}

}  // namespace chsync::binlog
