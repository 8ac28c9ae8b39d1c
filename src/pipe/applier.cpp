// The applier (applier.h): the binlog's events applied to ClickHouse in binlog order, with schema
// changes applied between the rows they separate.

#include "pipe/applier.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <utility>
#include <variant>

#include "binlog/hires_temporal.h"
#include "clickhouse/ddl.h"
#include "clickhouse/server_error.h"
#include "common/crash_point.h"
#include "common/log.h"
#include "metrics/pipe_metrics.h"
#include "pipe/clock.h"
#include "pipe/history.h"
#include "pipe/names.h"
#include "position/row_version.h"
#include "schema/lexer.h"
#include "state/control.h"

namespace chsync::pipe {
namespace {

constexpr uint64_t kSqlModeAnsiQuotes = 4;
constexpr uint64_t kSqlModeNoBackslashEscapes = uint64_t{1} << 20;
constexpr uint64_t kSqlModeStrict = (uint64_t{1} << 21) | (uint64_t{1} << 22);  // STRICT_TRANS/ALL_TABLES
constexpr uint8_t kMariaGtidStandalone = 1;
constexpr auto kIdleCheckpointInterval = std::chrono::seconds(10);

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (std::isspace(static_cast<unsigned char>(s.front())) != 0 || s.front() == ';'))
    s.remove_prefix(1);
  while (!s.empty() && (std::isspace(static_cast<unsigned char>(s.back())) != 0 || s.back() == ';'))
    s.remove_suffix(1);
  return s;
}

bool ContainsNoCase(std::string_view haystack, std::string_view needle) {
  if (needle.empty() || needle.size() > haystack.size()) return false;
  auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                        [](char x, char y) { return std::tolower(x) == std::tolower(y); });
  return it != haystack.end();
}

/// Whether `sql` names `identifier` as a word of its own (case-insensitive), quoted or not: "t" is
/// in `ALTER TABLE t ADD …` and in `\`db\`.\`t\``, not in `ALTER TABLE other …`.
bool MentionsIdentifier(std::string_view sql, std::string_view identifier) {
  if (identifier.empty()) return false;
  auto is_word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$' ||
           static_cast<unsigned char>(c) >= 0x80;
  };
  auto same = [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  };
  for (auto it = sql.begin(); it != sql.end(); ++it) {
    it = std::search(it, sql.end(), identifier.begin(), identifier.end(), same);
    if (it == sql.end()) return false;
    const size_t at = static_cast<size_t>(it - sql.begin());
    const size_t end = at + identifier.size();
    if ((at == 0 || !is_word(sql[at - 1])) && (end == sql.size() || !is_word(sql[end]))) return true;
  }
  return false;
}

/// ALTER [ONLINE] IGNORE TABLE: the source truncates and clamps values even in strict mode.
bool IsAlterIgnore(std::string_view sql) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (words.size() < 3 && i < sql.size()) {
    while (i < sql.size() && std::isspace(static_cast<unsigned char>(sql[i])) != 0) ++i;
    size_t start = i;
    while (i < sql.size() && std::isalpha(static_cast<unsigned char>(sql[i])) != 0) ++i;
    if (i == start) break;
    words.push_back(sql.substr(start, i - start));
  }
  if (words.empty() || !schema::EqualsIgnoreCase(words[0], "ALTER")) return false;
  for (size_t w = 1; w < words.size(); ++w) {
    if (schema::EqualsIgnoreCase(words[w], "IGNORE")) return true;
    if (!schema::EqualsIgnoreCase(words[w], "ONLINE")) return false;
  }
  return false;
}

/// 10.11.6-MariaDB-log → 101106; 8.0.40 → 80040 (for versioned comments in DDL).
uint32_t VersionNumber(std::string_view version) {
  uint32_t parts[3] = {0, 0, 0};
  size_t part = 0;
  for (char c : version) {
    if (c >= '0' && c <= '9') {
      parts[part] = parts[part] * 10 + static_cast<uint32_t>(c - '0');
    } else if (c == '.' && part < 2) {
      ++part;
    } else {
      break;
    }
  }
  return parts[0] * 10000 + parts[1] * 100 + parts[2];
}

bool SameValue(const binlog::Value& a, const binlog::Value& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case binlog::ValueKind::kAbsent:
    case binlog::ValueKind::kNull: return true;
    case binlog::ValueKind::kInt: return a.i == b.i;
    case binlog::ValueKind::kUint:
    case binlog::ValueKind::kYear:
    case binlog::ValueKind::kBit:
    case binlog::ValueKind::kEnum:
    case binlog::ValueKind::kSet: return a.u == b.u;
    case binlog::ValueKind::kFloat: return std::bit_cast<uint32_t>(a.f) == std::bit_cast<uint32_t>(b.f);
    case binlog::ValueKind::kDouble: return std::bit_cast<uint64_t>(a.d) == std::bit_cast<uint64_t>(b.d);
    case binlog::ValueKind::kDate:
      return a.date.year == b.date.year && a.date.month == b.date.month && a.date.day == b.date.day;
    case binlog::ValueKind::kTime:
      return a.time.negative == b.time.negative && a.time.hour == b.time.hour &&
             a.time.minute == b.time.minute && a.time.second == b.time.second &&
             a.time.microsecond == b.time.microsecond;
    case binlog::ValueKind::kDateTime:
      return a.datetime.year == b.datetime.year && a.datetime.month == b.datetime.month &&
             a.datetime.day == b.datetime.day && a.datetime.hour == b.datetime.hour &&
             a.datetime.minute == b.datetime.minute && a.datetime.second == b.datetime.second &&
             a.datetime.microsecond == b.datetime.microsecond;
    case binlog::ValueKind::kTimestamp:
      return a.timestamp.seconds == b.timestamp.seconds && a.timestamp.microsecond == b.timestamp.microsecond;
    default: return a.text == b.text;
  }
}

/// Whether `sql` changes rows (INSERT, UPDATE, DELETE, REPLACE, LOAD DATA): a statement that a
/// session in STATEMENT format (or a MIXED server choosing statement form) writes to the binlog as
/// text instead of row images. Leading comments are skipped.
bool IsRowChangingStatement(std::string_view sql) {
  size_t i = 0;
  while (i < sql.size()) {
    while (i < sql.size() && (std::isspace(static_cast<unsigned char>(sql[i])) != 0 || sql[i] == '(')) ++i;
    if (sql.substr(i, 2) != "/*") break;
    const size_t end = sql.find("*/", i + 2);
    if (end == std::string_view::npos) return false;
    i = end + 2;
  }
  size_t start = i;
  while (i < sql.size() && std::isalpha(static_cast<unsigned char>(sql[i])) != 0) ++i;
  const std::string_view word = sql.substr(start, i - start);
  for (std::string_view dml : {"INSERT", "UPDATE", "DELETE", "REPLACE", "LOAD"}) {
    if (schema::EqualsIgnoreCase(word, dml)) return true;
  }
  return false;
}

}  // namespace

Applier::Applier(ApplierParts parts, ApplierHost& host)
    : parts_(parts),
      host_(host),
      outbox_({parts.request.config, parts.set, parts.destination, parts.holds, parts.checkpointer,
               parts.versions},
              {committed_, gtids_, boundaries_}),
      schema_({parts.request.config, parts.source, parts.tracker, parts.checkpoint, parts.set,
               parts.destination, parts.checkpointer, parts.holds, parts.versions, parts.history},
              host) {}

Status Applier::Start(const SourcePosition& resume) {
  committed_ = resume;
  CHSYNC_ASSIGN_OR_RETURN(gtids_,
                          GtidProgress::Load(committed_.gtid_set, parts_.source.server().is_mariadb()));
  parts_.versions->Resume(committed_.file, committed_.version_shift);
  parts_.checkpointer.ForgetObsolete();
  boundaries_.Reset();
  outbox_.Close();
  std::vector<std::unique_ptr<clickhouse::Connection>> lanes;
  CHSYNC_ASSIGN_OR_RETURN(std::unique_ptr<clickhouse::Connection> flush_connection,
                          clickhouse::Connect(parts_.request.config.dest, parts_.destination.options()));
  lanes.push_back(std::move(flush_connection));
  for (const std::string& urls : parts_.destination.shard_urls()) {
    CHSYNC_ASSIGN_OR_RETURN(std::unique_ptr<clickhouse::Connection> shard,
                            clickhouse::Connect(urls, parts_.destination.options()));
    lanes.push_back(std::move(shard));
  }
  parts_.holds.Clear();  // what it held, the checkpoint holds, or a replay parks again
  outbox_.Open(std::move(lanes));
  return Status::Ok();
}

void Applier::BeginSession() {
  server_version_.reset();
  boundaries_.Reset();
  gtids_.Discard();
  last_checkpoint_ = std::chrono::steady_clock::now();
  outbox_.StartClock(last_checkpoint_);
}

void Applier::NoteFileStart(std::string_view file, uint64_t end) {
  committed_.file = std::string(file);
  committed_.position = end;
  committed_.version_shift = parts_.versions->shift();
}

Status Applier::HandleEvent(const binlog::Event& event, uint64_t outer_end) {
  if (const auto* rows = std::get_if<binlog::RowsEvent>(&event.body)) return HandleRows(event, *rows);
  if (const auto* payload = std::get_if<binlog::TransactionPayloadEvent>(&event.body)) {
    // The events inside end where the payload ends: a transaction that commits inside it may be
    // resumed after the payload, never at a point inside it.
    for (const binlog::Event& inner : payload->events) CHSYNC_RETURN_IF_ERROR(HandleEvent(inner, outer_end));
    return Status::Ok();
  }
  if (const auto* partial = std::get_if<binlog::PartialRowDataEvent>(&event.body)) {
    // The last fragment of a fragmented rows event carries it, reassembled.
    for (const binlog::Event& inner : partial->events) CHSYNC_RETURN_IF_ERROR(HandleEvent(inner, outer_end));
    return Status::Ok();
  }
  if (const auto* format = std::get_if<binlog::FormatDescriptionEvent>(&event.body)) {
    server_version_ = VersionNumber(format->server_version);
    mariadb_format_ = format->mariadb;
  }
  if (const auto* gtid = std::get_if<binlog::MariaGtidEvent>(&event.body)) {
    gtids_.NoteMariaDb(gtid->domain_id, event.header.server_id, gtid->seq_no);
    alter_phase_ = gtid->flags_extra.value_or(0) &
                   (binlog::kMariaGtidExtraStartAlter | binlog::kMariaGtidExtraCommitAlter |
                    binlog::kMariaGtidExtraRollbackAlter);
  } else if (const auto* mysql_gtid = std::get_if<binlog::GtidEvent>(&event.body)) {
    if (!mysql_gtid->anonymous) gtids_.NoteMySql(mysql_gtid->sid, mysql_gtid->tag, mysql_gtid->gno);
  }
  if (const auto* query = std::get_if<binlog::QueryEvent>(&event.body);
      query != nullptr && query->error_code == 0 && IsRowChangingStatement(query->query)) {
    CHSYNC_RETURN_IF_ERROR(ParkStatementTables(event, *query));
  }
  const std::optional<std::string> open_before = boundaries_.open_xa();
  Boundary boundary = boundaries_.Observe(event, outer_end);
  switch (boundary.kind) {
    case Boundary::Kind::kNone:
    case Boundary::Kind::kBegin: return Status::Ok();
    case Boundary::Kind::kXaBegin:
      // The writers hold only the XA transaction's rows from here to its XA PREPARE: the rows of
      // the transactions before it go out now.
      if (open_before) {
        outbox_.DiscardSetAside();
        parts_.cascades.DropDeferred();
      } else {
        CHSYNC_RETURN_IF_ERROR(outbox_.SendWriters());
      }
      xa_group_start_ = event.position;
      return Status::Ok();
    case Boundary::Kind::kCommit:
      if (boundary.ends_open_xa) {
        // The open XA group committed in one phase: its rows set aside go out, then its cascades.
        CHSYNC_RETURN_IF_ERROR(outbox_.SendSetAside());
        CHSYNC_RETURN_IF_ERROR(
            RunCascades(parts_.cascades.TakeDeferred(), Coordinate(event.file, event.position)));
      }
      return EndTransaction(event, boundary.resume, false);
    case Boundary::Kind::kXaPrepare: return PrepareXa(event, boundary);
    case Boundary::Kind::kXaCommit: return FinishXa(event, boundary, /*commit=*/true);
    case Boundary::Kind::kXaRollback:
      if (open_before && *open_before == boundary.xid) {
        outbox_.DiscardSetAside();
        parts_.cascades.DropDeferred();
        return EndTransaction(event, boundary.resume, false);
      }
      return FinishXa(event, boundary, /*commit=*/false);
    case Boundary::Kind::kStatement: {
      const auto& query = std::get<binlog::QueryEvent>(event.body);
      return HandleQuery(event, query, boundary.resume);
    }
  }
  return Status::Ok();
}

Status Applier::HandleQuery(const binlog::Event& event, const binlog::QueryEvent& query, uint64_t resume) {
  std::string_view sql = Trim(query.query);
  // binlog_alter_two_phase (MariaDB 10.8+): the ALTER is written when it starts (START ALTER) and
  // again when it ends, as COMMIT ALTER or ROLLBACK ALTER. Only a committed one changed the table.
  const uint8_t phase = query.status.gtid_flags3.value_or(alter_phase_);
  alter_phase_ = 0;
  if ((phase & (binlog::kMariaGtidExtraStartAlter | binlog::kMariaGtidExtraRollbackAlter)) != 0) {
    const bool start = (phase & binlog::kMariaGtidExtraStartAlter) != 0;
    log::Info("statement at {} {}: {}", Coordinate(event.file, event.position),
              start ? "is the START ALTER of a two-phase ALTER, applied at its COMMIT ALTER"
                    : "is a ROLLBACK ALTER: the source undid it, nothing to apply",
              sql.substr(0, 200));
    return resume == 0 ? Status::Ok() : EndTransaction(event, resume, false);
  }
  if (query.error_code != 0) {
    log::Warn("statement at {} failed on the source (error {}), not applied: {}",
              Coordinate(event.file, event.position), query.error_code, sql.substr(0, 200));
    return resume == 0 ? Status::Ok() : EndTransaction(event, resume, false);
  }

  schema::LexOptions lex;
  uint64_t sql_mode = query.status.sql_mode.value_or(0);
  lex.ansi_quotes = (sql_mode & kSqlModeAnsiQuotes) != 0;
  lex.no_backslash_escapes = (sql_mode & kSqlModeNoBackslashEscapes) != 0;
  strict_mode_ = (sql_mode & kSqlModeStrict) != 0 && !IsAlterIgnore(sql);
  if (server_version_) {
    lex.server_version = *server_version_;
    lex.mariadb_comments = mariadb_format_;
    lex.mariadb_server = mariadb_format_;
  }
  auto applied = parts_.tracker.ApplySql(sql, query.database, lex);
  parts_.cascades.Invalidate();  // foreign keys may have come or gone
  if (!applied.ok()) {
    // Which replicated tables could the statement be about?
    std::string concerned;
    for (const auto& [key, table] : parts_.set.tables()) {
      if (!StatementNames(*table, sql, query.database, event)) continue;
      concerned = key;
      break;
    }
    if (concerned.empty()) {
      log::Debug("statement at {} not applied to the tracked schemas ({}): {}",
                 Coordinate(event.file, event.position), applied.error().message(), sql.substr(0, 200));
    } else if (!parts_.source.full_metadata()) {
      Metrics().NoteSchemaChange(SchemaChangeKind(sql), "failed");
      Error error = ResyncError(concerned,
                                "a statement that may change it could not be followed (" +
                                    applied.error().message() + "): \"" + std::string(sql.substr(0, 500)) +
                                    "\"; without binlog_row_metadata=FULL its rows cannot be matched safely",
                                event);
      TableState& table = *parts_.set.tables().at(concerned);
      if (!table.held) {
        CHSYNC_RETURN_IF_ERROR(host_.ParkTable(table, concerned, error, std::string(sql),
                                               Coordinate(event.file, event.position)));
      }
    } else {
      log::Warn(
          "statement at {} could not be applied to the tracked schema of {} ({}); its rows are matched by "
          "column name and checked against the tracked schema: {}",
          Coordinate(event.file, event.position), concerned, applied.error().message(), sql.substr(0, 200));
    }
  } else {
    schema_.AddUntrackedRenames(sql, query.database, lex, *applied);
    if (!applied->changes.empty()) {
      schemas_dirty_ = true;
      CHSYNC_RETURN_IF_ERROR(ApplySchemaChanges(event, query, *applied));
    }
  }
  return resume == 0 ? Status::Ok() : EndTransaction(event, resume, true);
}

bool Applier::StatementNames(const TableState& table, std::string_view sql, std::string_view database,
                             const binlog::Event& event) const {
  // The statement must name the table, and run in its database or name that too.
  const schema::TableSchema& source = table.dest.source;
  if (!MentionsIdentifier(sql, source.name)) return false;
  const bool in_its_database =
      database.size() == source.database.size() && ContainsNoCase(database, source.database);
  if (!in_its_database && !MentionsIdentifier(sql, source.database)) return false;
  // Copied again after this statement: the copy (and its schema) already holds its effect.
  return !table.stream_from ||
         mysql::CompareCoordinates({std::string(event.file), event.position},
                                   {table.stream_from->file, table.stream_from->position}) >= 0;
}

Status Applier::ParkStatementTables(const binlog::Event& event, const binlog::QueryEvent& query) {
  std::string_view sql = Trim(query.query);
  for (auto& [key, table] : parts_.set.tables()) {
    if (table->held || !StatementNames(*table, sql, query.database, event)) continue;
    Error error = ResyncError(
        key,
        "a statement written in STATEMENT format may have changed its rows: \"" +
            std::string(sql.substr(0, 300)) +
            "\". The binlog holds its text, not the rows it changed, so chsync cannot apply it. A session "
            "ran with binlog_format=STATEMENT (SET SESSION binlog_format overrides the server's), or a MIXED "
            "server chose statement form: keep every session in ROW format",
        event);
    CHSYNC_RETURN_IF_ERROR(
        host_.ParkTable(*table, key, error, std::string(sql), Coordinate(event.file, event.position)));
  }
  return Status::Ok();
}

Status Applier::ApplySchemaChanges(const binlog::Event& event, const binlog::QueryEvent& query,
                                   const schema::ApplyResult& applied) {
  if (!schema_.Concerns(event, applied)) return Status::Ok();
  // Rows before the statement go out under the old layout, and a checkpoint at the statement's
  // start is saved, before anything changes in ClickHouse: a crash while the statement's
  // ClickHouse side runs replays just the statement, whose steps are each safe to run again.
  CHSYNC_RETURN_IF_ERROR(FlushAndCheckpoint());
  CHSYNC_RETURN_IF_ERROR(outbox_.flusher()->Drain());
  const std::string statement(Trim(query.query));
  return schema_.Apply({event, statement, strict_mode_, committed_.sequence_base}, applied);
}

Status Applier::EndTransaction(const binlog::Event& event, uint64_t resume, bool force_checkpoint) {
  gtids_.Commit();
  committed_.file = std::string(event.file);
  committed_.position = resume;
  committed_.version_shift = parts_.versions->shift();
  if (schemas_dirty_) {
    parts_.checkpoint.schemas = parts_.tracker.Serialize();
    schemas_dirty_ = false;
    force_checkpoint = true;
  }
  ++parts_.status.transactions;
  Metrics().transactions_applied.Add();
  parts_.status.last_event_time = event.header.timestamp;

  const auto now = CoarseSteadyNow();  // once per transaction: a few milliseconds are precise enough
  const bool due = force_checkpoint || now - last_checkpoint_ >= kIdleCheckpointInterval || outbox_.Due(now);
  if (due) CHSYNC_RETURN_IF_ERROR(FlushAndCheckpoint());
  return host_.BetweenTransactions();
}

Status Applier::HandleRows(const binlog::Event& event, const binlog::RowsEvent& rows) {
  if (!rows.table) {
    return Error(ErrorKind::kCorrupt,
                 "rows event without its TABLE_MAP at " + Coordinate(event.file, event.position));
  }
  // The decoder skips the rows of tables chsync does not apply, held ones too; a held parent's
  // cascades still concern its children.
  if (rows.skipped && !parts_.cascades.HasParents()) return Status::Ok();
  auto it = parts_.set.tables().Find(*rows.table, rows.table);
  if (it == parts_.set.tables().end()) return Status::Ok();
  TableState& table = *it->second;
  host_.NoteCascades();
  // InnoDB's cascades from this table's changes, unless the session turned foreign_key_checks off.
  const bool cascading = rows.kind != binlog::RowsKind::kWrite && parts_.cascades.IsParent(it->first) &&
                         (rows.flags & binlog::kRowsFlagNoForeignKeyChecks) == 0;
  // The children of a change whose cascade cannot be followed are parked: their rows stay owed.
  auto park_children = [&](const std::string& why) -> Status {
    if (!cascading) return Status::Ok();
    for (const std::string& child :
         parts_.cascades.ChildrenOf(it->first, rows.kind == binlog::RowsKind::kDelete)) {
      auto c = parts_.set.tables().find(child);
      if (c == parts_.set.tables().end() || c->second->held) continue;
      CHSYNC_RETURN_IF_ERROR(host_.ParkTable(
          *c->second, c->first,
          Error(ErrorKind::kUnsupported, "its parent " + it->first + " " + why +
                                             ", so chsync cannot follow the cascade of its change"),
          "a cascade from " + it->first, Coordinate(event.file, event.position)));
    }
    return Status::Ok();
  };
  if (table.held) return park_children("is " + table.held->state);
  if (rows.skipped) return Status::Ok();
  // Copied from a later point (an offline resync): its own rows before it are in the copy, and
  // their cascades into the children are not.
  const bool before_copy =
      table.stream_from &&
      mysql::CompareCoordinates({std::string(event.file), event.position},
                                {table.stream_from->file, table.stream_from->position}) < 0;
  if (before_copy && !cascading) return Status::Ok();
  if (table.table_map != rows.table) {
    if (Status mapped = MapColumns(table, rows.table, event); !mapped.ok()) {
      if (before_copy) return park_children("has rows chsync cannot map (" + mapped.error().message() + ")");
      CHSYNC_RETURN_IF_ERROR(park_children("parked on the same change"));
      return host_.ParkTable(table, it->first, mapped.error(), "a rows event of the table",
                             Coordinate(event.file, event.position));
    }
  }
  if (table.filter_error) {
    CHSYNC_RETURN_IF_ERROR(park_children("parked on the same change"));
    return host_.ParkTable(table, it->first,
                           Error(ErrorKind::kUnsupported,
                                 "its row filter (table_options where:) no longer fits the table (" +
                                     table.filter_error->message() + "); edit the where: of " + it->first +
                                     " in the configuration, restart chsync, then run "
                                     "`chsync resync --table " +
                                     it->first + "`"),
                           "a rows event of the table", Coordinate(event.file, event.position));
  }
  CHSYNC_ASSIGN_OR_RETURN(uint32_t sequence, parts_.versions->Sequence(event.file, committed_.sequence_base));
  // A row chsync cannot convert for this table parks it (when that concerns the table alone).
  bool parked = false;
  auto append = [&](Status appended) -> Status {
    if (appended.ok()) return appended;
    // The table parked on an earlier image of this row (an update's tombstone): the rest of it
    // is not applied either. Before, the after-image's error stopped the pipe.
    if (parked) return Status::Ok();
    Status s = host_.ParkTable(table, it->first, appended.error(), "a row of the table",
                               Coordinate(event.file, event.position));
    parked = s.ok();
    return s;
  };
  const size_t bytes_before = table.writer->bytes() + (table.history ? table.history->bytes() : 0);
  const size_t rows_before = table.writer->rows() + (table.history ? table.history->rows() : 0);
  if (table.history) {
    history_binlog_ = Coordinate(event.file, event.position);
    history_gtid_ = gtids_.OpenGtid();
  }
  uint64_t unchanged = 0;  // updates that changed nothing: nothing written
  uint64_t filtered = 0;   // changes outside the row filter (where:): nothing written
  // Whether an image passes the table's row filter (always without one).
  auto passes = [&](binlog::RowImage image) -> Result<bool> {
    if (!table.filter) return true;
    return table.filter->Passes(image, table.map_index);
  };
  row_versions_.clear();
  for (size_t k = 0; k < rows.rows.size() && !parked; ++k) {
    const binlog::RowChange& row = rows.rows[k];
    CHSYNC_ASSIGN_OR_RETURN(uint64_t version, parts_.versions->Of(sequence, event, rows, k));
    if (cascading) row_versions_.push_back(version);
    if (before_copy) continue;
    switch (rows.kind) {
      case binlog::RowsKind::kWrite: {
        Result<bool> in = passes(row.after);
        if (!in.ok() || !*in) {
          ++filtered;
          if (!in.ok()) CHSYNC_RETURN_IF_ERROR(append(in.error()));
          break;
        }
        CHSYNC_RETURN_IF_ERROR(append(AppendImage(table, row.after, version, false, event, kChangeInsert)));
        break;
      }
      case binlog::RowsKind::kDelete: {
        // A row outside the filter was never sent: no tombstone for it.
        Result<bool> in = passes(row.before);
        if (!in.ok() || !*in) {
          ++filtered;
          if (!in.ok()) CHSYNC_RETURN_IF_ERROR(append(in.error()));
          break;
        }
        // `deletes: ignore` (append-only): the row stays in ClickHouse as last written; its history
        // still records the delete.
        if (table.ignore_deletes && !table.history) break;
        CHSYNC_RETURN_IF_ERROR(append(
            AppendImage(table, row.before, version, true, event, kChangeDelete, !table.ignore_deletes)));
        break;
      }
      case binlog::RowsKind::kUpdate:
      case binlog::RowsKind::kPartialUpdate: {
        if (table.filter) {
          // Moved out of the filter: a tombstone for the row sent; moved in: the row, as an insert.
          Result<bool> was_in = passes(row.before);
          Result<bool> is_in = was_in.ok() ? passes(row.after) : was_in;
          if (!is_in.ok()) {
            CHSYNC_RETURN_IF_ERROR(append(is_in.error()));
            break;
          }
          if (!*was_in || !*is_in) {
            // In the filtered table's history: a delete, or an insert.
            if (*was_in) {
              CHSYNC_RETURN_IF_ERROR(
                  append(AppendImage(table, row.before, version, true, event, kChangeDelete)));
            }
            if (*is_in) {
              CHSYNC_RETURN_IF_ERROR(
                  append(AppendImage(table, row.after, version, false, event, kChangeInsert)));
            }
            if (!*was_in && !*is_in) ++filtered;
            break;
          }
        }
        bool key_changed = table.full_row;
        for (int index : table.key_indexes) {
          uint32_t at = table.map_index[static_cast<size_t>(index)];
          if (!SameValue(row.before[at], row.after[at])) key_changed = true;
        }
        if (key_changed) {
          bool same = row.before.size() == row.after.size() &&
                      std::equal(row.before.begin(), row.before.end(), row.after.begin(), SameValue);
          if (same) {  // nothing changed; a tombstone and a row with one key and version would clash
            ++unchanged;
            break;
          }
          CHSYNC_RETURN_IF_ERROR(
              append(AppendImage(table, row.before, version, true, event, kChangeUpdateBefore)));
        } else if (table.history) {
          CHSYNC_RETURN_IF_ERROR(append(
              AppendImage(table, row.before, version, false, event, kChangeUpdateBefore, /*main=*/false)));
        }
        CHSYNC_RETURN_IF_ERROR(
            append(AppendImage(table, row.after, version, false, event, kChangeUpdateAfter)));
        break;
      }
    }
  }
  if (before_copy) return FollowCascades(it->first, table, rows, event);
  if (parked) return park_children("parked on the same change");
  parts_.status.rows_applied += rows.rows.size();
  switch (rows.kind) {
    case binlog::RowsKind::kWrite: table.changes.inserts += rows.rows.size() - filtered; break;
    case binlog::RowsKind::kDelete:
      if (!table.ignore_deletes) table.changes.deletes += rows.rows.size() - filtered;
      break;
    case binlog::RowsKind::kUpdate:
    case binlog::RowsKind::kPartialUpdate:
      table.changes.updates += rows.rows.size() - unchanged - filtered;
      break;
  }
  outbox_.NoteAppended(table.writer->bytes() + (table.history ? table.history->bytes() : 0) - bytes_before,
                       table.writer->rows() + (table.history ? table.history->rows() : 0) - rows_before);
  if (cascading) CHSYNC_RETURN_IF_ERROR(FollowCascades(it->first, table, rows, event));
  return outbox_.FlushIfFull(it->first, table);
}

Status Applier::FollowCascades(const std::string& key, TableState& table, const binlog::RowsEvent& rows,
                               const binlog::Event& event) {
  auto work = parts_.cascades.StatementsFor(parts_.set.tables(), key, table, rows, row_versions_,
                                            SourcePosition{std::string(event.file), event.position, ""});
  if (!work.ok())
    return std::move(
        work.error().AddContext("the cascades of " + key + " at " + Coordinate(event.file, event.position)));
  for (auto& [child, why] : work->refused) {
    auto it = parts_.set.tables().find(child);
    if (it == parts_.set.tables().end()) continue;
    CHSYNC_RETURN_IF_ERROR(host_.ParkTable(*it->second, it->first, why, "a cascade from " + key,
                                           Coordinate(event.file, event.position)));
  }
  if (work->statements.empty()) return Status::Ok();
  if (boundaries_.open_xa()) {
    parts_.cascades.Defer(std::move(work->statements));
    return Status::Ok();
  }
  return RunCascades(work->statements, Coordinate(event.file, event.position));
}

Status Applier::RunCascades(const std::vector<std::pair<std::string, std::string>>& statements,
                            const std::string& position) {
  if (statements.empty()) return Status::Ok();
  // The child's rows written before the cascade must be in ClickHouse for its SELECT to see them.
  CHSYNC_RETURN_IF_ERROR(FlushAll());
  CHSYNC_RETURN_IF_ERROR(outbox_.flusher()->Drain());
  for (const auto& [child, statement] : statements) {
    auto it = parts_.set.tables().find(child);
    if (it == parts_.set.tables().end() || it->second->held) continue;  // parked meanwhile: owed whole
    CrashPoint("cascade");
    Status done = parts_.destination.connection().Execute(statement);
    if (done.ok() || clickhouse::IsRetryable(done.error()) || done.error().kind() == ErrorKind::kNetwork) {
      CHSYNC_RETURN_IF_ERROR(done);
      continue;
    }
    // Refused for good (a value the child's column cannot take): the child alone stops.
    CHSYNC_RETURN_IF_ERROR(
        host_.ParkTable(*it->second, it->first, done.error(), "a cascade into the table", position));
  }
  return Status::Ok();
}

Status Applier::MapColumns(TableState& table, const std::shared_ptr<const binlog::TableMap>& map,
                           const binlog::Event& event) {
  std::string key = TableKey(map->database, map->table);
  schema::TableMapColumns columns;
  columns.database = map->database;
  columns.table = map->table;
  bool names = !map->columns.empty() && !map->columns.front().name.empty();
  for (const binlog::ColumnInfo& c : map->columns) {
    columns.types.push_back(static_cast<uint8_t>(c.type));
    columns.metadata.push_back(c.metadata);
    if (names) columns.names.push_back(c.name);
  }
  Status checked = parts_.tracker.CheckTableMap(columns);
  if (!checked.ok()) {
    return ResyncError(
        key, "its binlog rows no longer match the tracked schema (" + checked.error().message() + ")", event);
  }
  const schema::TableSchema& source = table.dest.source;
  // Without names (ordinal mode) a column's value is at its position in the tracked schema, which
  // has the excluded columns too.
  const schema::TableSchema* tracked =
      table.dest.excluded.empty() ? &source : parts_.tracker.Find(map->database, map->table);
  if (tracked == nullptr) return ResyncError(key, "it is not tracked", event);
  table.map_index.assign(source.columns.size(), 0);
  for (size_t i = 0; i < source.columns.size(); ++i) {
    if (!names) {
      const int at = tracked == &source ? static_cast<int>(i) : tracked->FindColumn(source.columns[i].name);
      if (at < 0) return ResyncError(key, "column " + source.columns[i].name + " is not tracked", event);
      table.map_index[i] = static_cast<uint32_t>(at);
      continue;
    }
    auto found = std::find_if(map->columns.begin(), map->columns.end(), [&](const binlog::ColumnInfo& c) {
      return schema::EqualsIgnoreCase(c.name, source.columns[i].name);
    });
    if (found == map->columns.end()) {
      return ResyncError(key, "column " + source.columns[i].name + " is missing from its binlog rows", event);
    }
    table.map_index[i] = static_cast<uint32_t>(found - map->columns.begin());
  }
  table.table_map = map;
  return Status::Ok();
}

Status Applier::AppendImage(TableState& table, binlog::RowImage image, uint64_t version, bool deleted,
                            const binlog::Event& event, std::string_view change, bool main) {
  const size_t n = table.map_index.size();
  ordered_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    uint32_t at = table.map_index[i];
    if (at >= image.size()) {
      return Error(ErrorKind::kCorrupt, "row image of " +
                                            TableKey(table.dest.source.database, table.dest.source.name) +
                                            " at " + Coordinate(event.file, event.position) + " has " +
                                            std::to_string(image.size()) + " values");
    }
    ordered_[i] = image[at];
  }
  Status s = table.converter->Convert(ordered_, ValueOrigin::kBinlog, cells_);
  if (s.ok() && table.history && !change.empty()) {
    // The history row: the image's cells, then what the change was and where (pipe/history.h).
    history_cells_.assign(cells_.begin(), cells_.end());
    history_cells_.emplace_back(change);
    history_cells_.emplace_back(std::string_view(history_binlog_));
    history_cells_.emplace_back(std::string_view(history_gtid_));
    history_cells_.emplace_back(clickhouse::EpochCell{static_cast<int64_t>(event.header.timestamp), 0});
    s = table.history->Append(history_cells_, version, false);
  }
  if (s.ok() && main) {
    cells_.resize(cells_.size() + table.dest.kept_columns.size(), clickhouse::NullCell{});
    s = table.writer->Append(cells_, version, deleted);
  }
  if (!s.ok()) {
    return std::move(s.error().AddContext("row of " +
                                          TableKey(table.dest.source.database, table.dest.source.name) +
                                          " at " + Coordinate(event.file, event.position)));
  }
  return Status::Ok();
}

Status Applier::PrepareXa(const binlog::Event& event, const Boundary& boundary) {
  // A prepared transaction's rows wait in a file, and its cascades cannot follow them there.
  for (const std::string& child : parts_.cascades.DeferredChildren()) {
    auto it = parts_.set.tables().find(child);
    if (it == parts_.set.tables().end() || it->second->held) continue;
    CHSYNC_RETURN_IF_ERROR(host_.ParkTable(
        *it->second, it->first,
        Error(ErrorKind::kUnsupported,
              "chsync does not follow a foreign-key cascade inside a prepared XA transaction"),
        "XA PREPARE " + boundary.xid, Coordinate(event.file, event.position)));
  }
  parts_.cascades.DropDeferred();
  std::vector<XaBatch> batches = outbox_.TakePrepared();
  CHSYNC_ASSIGN_OR_RETURN(uint32_t sequence, parts_.versions->Sequence(event.file, committed_.sequence_base));
  PendingXa pending{boundary.xid, Coordinate(event.file, xa_group_start_),
                    XaRowsFileName(sequence, xa_group_start_)};
  std::erase_if(parts_.checkpoint.pending_xa, [&](const PendingXa& x) { return x.xid == boundary.xid; });
  if (!batches.empty()) {
    // On disk before any checkpoint past the PREPARE names it.
    CHSYNC_RETURN_IF_ERROR(WriteXaRows(parts_.checkpointer.path(), pending.rows_file, batches));
    log::Info("XA transaction {} prepared at {}: its rows wait for XA COMMIT", boundary.xid,
              pending.prepared);
  } else {
    pending.rows_file.clear();
  }
  parts_.checkpoint.pending_xa.push_back(std::move(pending));
  return EndTransaction(event, boundary.resume, /*force_checkpoint=*/true);
}

Status Applier::FinishXa(const binlog::Event& event, const Boundary& boundary, bool commit) {
  auto it = std::find_if(parts_.checkpoint.pending_xa.begin(), parts_.checkpoint.pending_xa.end(),
                         [&](const PendingXa& x) { return x.xid == boundary.xid; });
  if (it == parts_.checkpoint.pending_xa.end()) {
    if (commit) {
      log::Warn(
          "XA COMMIT {} at {}: its XA PREPARE came before this pipe's start position, so its rows are not in "
          "the binlog that chsync read; if it wrote replicated tables, run `chsync resync --table DB.TABLE` "
          "for them",
          boundary.xid, Coordinate(event.file, event.position));
    }
    return EndTransaction(event, boundary.resume, false);
  }
  PendingXa pending = *it;
  parts_.checkpoint.pending_xa.erase(it);
  if (!pending.rows_file.empty()) {
    if (commit) {
      CHSYNC_ASSIGN_OR_RETURN(std::vector<XaBatch> batches,
                              ReadXaRows(parts_.checkpointer.path(), pending.rows_file));
      CHSYNC_RETURN_IF_ERROR(outbox_.SendPrepared(std::move(batches)));
    }
    parts_.checkpointer.Obsolete(pending.rows_file);
  }
  log::Info("XA transaction {} (prepared at {}) {} at {}", boundary.xid, pending.prepared,
            commit ? "committed" : "rolled back", Coordinate(event.file, event.position));
  return EndTransaction(event, boundary.resume, /*force_checkpoint=*/true);
}

Status Applier::FlushAndCheckpoint() {
  CHSYNC_RETURN_IF_ERROR(FlushAll());
  committed_.gtid_set = gtids_.ToString();
  parts_.checkpoint.resume = committed_;
  parts_.status.position = Coordinate(committed_.file, committed_.position);
  parts_.status.gtid_position = committed_.gtid_set;
  host_.BeforeCheckpoint();
  // Saved by the flusher once every row queued before it is in ClickHouse.
  auto save = parts_.checkpointer.Deferred(parts_.checkpoint, parts_.status,
                                           parts_.source.server().is_mariadb(), parts_.retention.get());
  CHSYNC_RETURN_IF_ERROR(outbox_.flusher()->After(std::move(save)));
  last_checkpoint_ = std::chrono::steady_clock::now();
  return Status::Ok();
}

}  // namespace chsync::pipe
