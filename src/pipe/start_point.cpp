// Where a CDC-only pipe begins (start_point.h): the pure decisions, then the reads of the source.

#include "pipe/start_point.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <utility>
#include <variant>

#include "binlog/decoder.h"
#include "mysql/mysql_gtid_set.h"
#include "pipe/names.h"
#include "schema/parser.h"

namespace chsync::pipe {

namespace {

/// The statement's text without leading spaces, upper-cased up to `n` characters.
std::string Leading(std::string_view sql, size_t n) {
  size_t at = sql.find_first_not_of(" \t\r\n");
  std::string out;
  for (size_t i = at; i != std::string_view::npos && i < sql.size() && out.size() < n; ++i) {
    char c = sql[i];
    out += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
  }
  return out;
}

bool IsGtid(const binlog::Event& event) {
  return std::holds_alternative<binlog::MariaGtidEvent>(event.body) ||
         std::holds_alternative<binlog::GtidEvent>(event.body);
}

/// The GTID an event names, as the servers print it ("0-1-42"; MySQL "uuid:42").
std::string GtidText(const binlog::Event& event) {
  if (const auto* g = std::get_if<binlog::MariaGtidEvent>(&event.body)) {
    return fmt::format("{}-{}-{}", g->domain_id, event.header.server_id, g->seq_no);
  }
  if (const auto* g = std::get_if<binlog::GtidEvent>(&event.body); g != nullptr && !g->anonymous) {
    std::string uuid;
    for (size_t i = 0; i < g->sid.size(); ++i) {
      if (i == 4 || i == 6 || i == 8 || i == 10) uuid += '-';
      uuid += fmt::format("{:02x}", g->sid[i]);
    }
    return uuid + (g->tag.empty() ? "" : ":" + g->tag) + ":" + std::to_string(g->gno);
  }
  return "";
}

/// A dump of the source from `from`, decoded with rows skipped: `each` is called with every event
/// the server sends (the artificial ones too, `ev.artificial`) until it returns false, an error,
/// or the server has nothing more to send (a heartbeat: the end of its binlog).
Status ReadBinlog(const DumpOpener& open, uint32_t server_id, const mysql::BinlogCoordinate& from,
                  const std::function<Result<bool>(const binlog::Event&, const mysql::StreamEvent&)>& each) {
  CHSYNC_ASSIGN_OR_RETURN(std::unique_ptr<mysql::Connection> conn, open());
  mysql::BinlogStreamOptions options;
  options.server_id = server_id;
  options.start = {from.file, from.position};
  options.heartbeat_ms = 200;
  CHSYNC_ASSIGN_OR_RETURN(std::unique_ptr<mysql::BinlogStream> stream,
                          mysql::BinlogStream::Open(std::move(conn), options));
  binlog::DecoderOptions decoder_options;
  decoder_options.checksum_before_format =
      stream->checksum() == "CRC32" ? binlog::ChecksumAlgorithm::kCrc32 : binlog::ChecksumAlgorithm::kNone;
  decoder_options.decode_rows_of = [](const binlog::TableMap&) { return false; };
  binlog::Decoder decoder(decoder_options);
  while (true) {
    CHSYNC_ASSIGN_OR_RETURN(mysql::StreamEvent ev, stream->Next());
    if (decoder.file() != ev.at.file) decoder.SetFile(ev.at.file);
    auto decoded = decoder.Decode(ev.bytes, ev.at.position);
    if (!decoded.ok()) return std::move(decoded.error().AddContext("binlog event at " + ev.at.ToString()));
    if (std::holds_alternative<binlog::HeartbeatEvent>(decoded->body)) return Status::Ok();
    CHSYNC_ASSIGN_OR_RETURN(bool more, each(*decoded, ev));
    if (!more) return Status::Ok();
  }
}

}  // namespace

std::optional<EventStamp> FirstBoundaryAtOrAfter(const std::vector<EventStamp>& events, int64_t time) {
  for (const EventStamp& e : events) {
    if (e.boundary && e.timestamp >= time) return e;
  }
  return std::nullopt;
}

Result<std::optional<size_t>> FileToScan(size_t count, const std::function<Result<int64_t>(size_t)>& start_of,
                                         int64_t time) {
  if (count == 0) return std::optional<size_t>();
  CHSYNC_ASSIGN_OR_RETURN(int64_t first, start_of(0));
  if (first > time) return std::optional<size_t>();
  // Invariant: file `low` began at or before `time`; every file after `high` began after it.
  size_t low = 0;
  size_t high = count - 1;
  while (low < high) {
    const size_t middle = low + (high - low + 1) / 2;
    CHSYNC_ASSIGN_OR_RETURN(int64_t began, start_of(middle));
    if (began <= time) {
      low = middle;
    } else {
      high = middle - 1;
    }
  }
  return std::optional<size_t>(low);
}

bool BeginsTransaction(const binlog::Event& event, bool after_gtid) {
  if (std::holds_alternative<binlog::MariaGtidEvent>(event.body)) return true;
  if (std::holds_alternative<binlog::GtidEvent>(event.body)) return true;
  if (const auto* q = std::get_if<binlog::QueryEvent>(&event.body)) {
    // Without GTID events (MySQL before 5.7 or binlogs without them), BEGIN or a statement alone.
    if (after_gtid) return false;
    const std::string word = Leading(q->query, 8);
    return !(word.starts_with("COMMIT") || word.starts_with("ROLLBACK") || word.starts_with("XA ") ||
             word.starts_with("SAVEPOINT"));
  }
  return false;
}

bool MayStartAt(const binlog::Event& event) {
  return std::visit(
      [&](const auto& body) {
        using T = std::decay_t<decltype(body)>;
        if constexpr (std::is_same_v<T, binlog::MariaGtidEvent> || std::is_same_v<T, binlog::GtidEvent> ||
                      std::is_same_v<T, binlog::FormatDescriptionEvent> ||
                      std::is_same_v<T, binlog::RotateEvent> ||
                      std::is_same_v<T, binlog::MariaGtidListEvent> ||
                      std::is_same_v<T, binlog::BinlogCheckpointEvent> ||
                      std::is_same_v<T, binlog::PreviousGtidsEvent> || std::is_same_v<T, binlog::StopEvent> ||
                      std::is_same_v<T, binlog::HeartbeatEvent>) {
          return true;
        } else if constexpr (std::is_same_v<T, binlog::QueryEvent>) {
          return BeginsTransaction(event, /*after_gtid=*/false);
        } else {
          return false;
        }
      },
      event.body);
}

Result<std::optional<std::string>> SelectedTableChanged(std::string_view sql, std::string_view database,
                                                        const TableSelected& selected) {
  CHSYNC_ASSIGN_OR_RETURN(schema::Statement st, schema::ParseStatement(sql));
  std::vector<schema::TableName> names;
  switch (st.kind) {
    case schema::StatementKind::kCreateTable:
    case schema::StatementKind::kCreateTableLike:
    case schema::StatementKind::kCreateIndex:
    case schema::StatementKind::kDropIndex: names.push_back(st.table); break;
    case schema::StatementKind::kAlterTable:
      names.push_back(st.table);
      for (const schema::AlterOperation& op : st.operations) {
        if (!op.new_table.name.empty()) names.push_back(op.new_table);
      }
      break;
    case schema::StatementKind::kDropTable: names = st.tables; break;
    case schema::StatementKind::kRenameTable:
      for (const auto& [from, to] : st.renames) {
        names.push_back(from);
        names.push_back(to);
      }
      break;
    default: return std::optional<std::string>();
  }
  if (st.temporary) return std::optional<std::string>();  // never in the binlog's row events
  for (const schema::TableName& n : names) {
    const std::string db = n.database.empty() ? std::string(database) : n.database;
    if (selected(db, n.name)) return std::optional<std::string>(TableKey(db, n.name));
  }
  return std::optional<std::string>();
}

bool MayNameTable(std::string_view sql, const std::vector<std::string>& names) {
  auto lower = [](std::string_view text) {
    std::string out(text);
    for (char& c : out) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    return out;
  };
  const std::string text = lower(sql);
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& name) { return text.find(lower(name)) != std::string::npos; });
}

Result<std::optional<FoundSchemaChange>> SchemaChangeAfter(const DumpOpener& open, uint32_t server_id,
                                                           const mysql::BinlogCoordinate& from,
                                                           const mysql::BinlogCoordinate& to,
                                                           const TableSelected& selected,
                                                           const std::vector<std::string>& names) {
  std::optional<FoundSchemaChange> found;
  std::optional<Error> failed;
  bool first = true;
  std::string gtid;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::hours(24);
  Status read = ReadBinlog(
      open, server_id, from, [&](const binlog::Event& event, const mysql::StreamEvent& ev) -> Result<bool> {
        if (ev.artificial) return true;
        const mysql::BinlogCoordinate at = ev.at.coordinate();
        if (mysql::CompareCoordinates(at, to) >= 0) return false;
        if (std::chrono::steady_clock::now() > deadline) {
          failed = Error(ErrorKind::kServer, "the binlog from the start point to now took a day to read");
          return false;
        }
        if (first) {
          first = false;
          if (!MayStartAt(event)) {
            failed =
                Error(ErrorKind::kConfig,
                      fmt::format("{} is inside a transaction (the event there is not one a transaction "
                                  "begins with): give the position of a transaction's first event (its "
                                  "GTID or BEGIN event, SHOW BINLOG EVENTS shows them) or of a file's end",
                                  at.ToString()));
            return false;
          }
        }
        if (IsGtid(event)) gtid = GtidText(event);
        const auto* q = std::get_if<binlog::QueryEvent>(&event.body);
        if (q == nullptr) return true;
        const std::string word = Leading(q->query, 9);
        if (word == "BEGIN" || word.starts_with("COMMIT") || word.starts_with("ROLLBACK") ||
            word.starts_with("XA ") || word.starts_with("SAVEPOINT")) {
          return true;
        }
        auto changed = SelectedTableChanged(q->query, q->database, selected);
        if (changed.ok() && !changed->has_value()) return true;
        if (!changed.ok() && !MayNameTable(q->query, names)) return true;
        found = FoundSchemaChange{std::string(q->query), changed.ok() ? **changed : "unknown", at.ToString(),
                                  gtid};
        if (!changed.ok())
          found->table = "an unknown table (chsync cannot parse it: " + changed.error().message() + ")";
        return false;
      });
  if (!read.ok()) {
    if (read.error().server_code() == 1236) {
      return Error(ErrorKind::kConfig,
                   "the start point " + from.ToString() +
                       " cannot be read on the source (an event must begin there: SHOW BINLOG "
                       "EVENTS lists where they do): " +
                       read.error().message());
    }
    return std::move(read).error();
  }
  if (failed) return *failed;
  return found;
}

Result<std::vector<BinlogFileSize>> ListBinlogFiles(mysql::Connection& conn) {
  CHSYNC_ASSIGN_OR_RETURN(mysql::QueryResult r, conn.Query("SHOW BINARY LOGS"));
  std::vector<BinlogFileSize> out;
  for (const auto& row : r.rows) {
    if (row.empty() || !row[0]) continue;
    BinlogFileSize f{*row[0], 0};
    if (row.size() > 1 && row[1]) f.size = std::strtoull(row[1]->c_str(), nullptr, 10);
    out.push_back(std::move(f));
  }
  return out;
}

Result<std::optional<mysql::BinlogCoordinate>> FindStartByTime(const DumpOpener& open, uint32_t server_id,
                                                               const std::vector<BinlogFileSize>& files,
                                                               const mysql::BinlogCoordinate& end,
                                                               int64_t time) {
  // A file's start: the timestamp of its first event (its format description, written when the
  // server opened the file).
  auto start_of = [&](size_t i) -> Result<int64_t> {
    std::optional<int64_t> stamp;
    CHSYNC_RETURN_IF_ERROR(ReadBinlog(open, server_id, {files[i].file, 4},
                                      [&](const binlog::Event& event, const mysql::StreamEvent& ev) {
                                        if (ev.artificial || event.header.timestamp == 0) return true;
                                        stamp = event.header.timestamp;
                                        return false;
                                      }));
    if (!stamp) {
      return Error(ErrorKind::kServer,
                   "the binlog file " + files[i].file + " sent no event with a timestamp");
    }
    return *stamp;
  };
  CHSYNC_ASSIGN_OR_RETURN(std::optional<size_t> index, FileToScan(files.size(), start_of, time));
  if (!index) {
    if (files.empty()) return Error(ErrorKind::kConfig, "the source lists no binlog file");
    CHSYNC_ASSIGN_OR_RETURN(int64_t first, start_of(0));
    return Error(
        ErrorKind::kConfig,
        fmt::format("start_time {} is before the source's oldest binlog file {}, which began at {}: the "
                    "changes before that are purged. Give a later start_time, or use snapshot.mode "
                    "initial to copy the tables",
                    UtcText(time), files[0].file, UtcText(first)));
  }
  // The events from that file's start, in batches: the first boundary at or after `time`.
  std::optional<mysql::BinlogCoordinate> found;
  std::vector<EventStamp> batch;
  bool after_gtid = false;
  auto decide = [&] {
    if (auto first = FirstBoundaryAtOrAfter(batch, time))
      found = mysql::BinlogCoordinate{first->file, first->position};
    batch.clear();
    return !found;
  };
  CHSYNC_RETURN_IF_ERROR(ReadBinlog(
      open, server_id, {files[*index].file, 4},
      [&](const binlog::Event& event, const mysql::StreamEvent& ev) -> Result<bool> {
        if (ev.artificial) return true;
        const mysql::BinlogCoordinate at = ev.at.coordinate();
        if (mysql::CompareCoordinates(at, end) >= 0) return false;
        batch.push_back({event.header.timestamp, at.file, at.position, BeginsTransaction(event, after_gtid)});
        after_gtid = IsGtid(event);
        return batch.size() < 4096 || decide();
      }));
  if (!found && !batch.empty()) decide();
  return found;
}

std::string UtcText(int64_t seconds) {
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

}  // namespace chsync::pipe
