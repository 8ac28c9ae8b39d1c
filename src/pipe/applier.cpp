// The applier (applier.h): the binlog's events applied to ClickHouse in binlog order, with schema
// changes applied between the rows they separate.

#include "pipe/applier.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <thread>
#include <utility>
#include <variant>

#include "binlog/hires_temporal.h"
#include "clickhouse/ddl.h"
#include "clickhouse/server_error.h"
#include "clickhouse/sql_quoting.h"
#include "common/crash_point.h"
#include "common/log.h"
#include "pipe/clock.h"
#include "pipe/names.h"
#include "pipe/pipe_metrics.h"
#include "position/row_version.h"
#include "schema/lexer.h"
#include "schema/parser.h"
#include "state/control.h"

namespace chsync::pipe {
namespace {

constexpr uint64_t kSqlModeAnsiQuotes = 4;
constexpr uint64_t kSqlModeNoBackslashEscapes = uint64_t{1} << 20;
constexpr uint64_t kSqlModeStrict = (uint64_t{1} << 21) | (uint64_t{1} << 22);  // STRICT_TRANS/ALL_TABLES
constexpr uint8_t kMariaGtidStandalone = 1;
constexpr auto kIdleCheckpointInterval = std::chrono::seconds(10);
constexpr size_t kMaxSchemaChangeRecords = 100;

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
    : request_(parts.request),
      source_(parts.source),
      tracker_(parts.tracker),
      checkpoint_(parts.checkpoint),
      status_(parts.status),
      set_(parts.set),
      destination_(parts.destination),
      checkpointer_(parts.checkpointer),
      cascades_(parts.cascades),
      holds_(parts.holds),
      versions_(parts.versions),
      retention_(parts.retention),
      host_(host) {}

Status Applier::Start(const SourcePosition& resume) {
  committed_ = resume;
  CHSYNC_ASSIGN_OR_RETURN(gtids_, GtidProgress::Load(committed_.gtid_set, source_.server().is_mariadb()));
  versions_->Resume(committed_.file, committed_.version_shift);
  pending_bytes_ = 0;
  pending_rows_bound_ = PendingRows();
  xa_batches_.clear();
  xa_changes_.clear();
  checkpointer_.ForgetObsolete();
  boundaries_.Reset();
  flusher_.reset();
  std::vector<std::unique_ptr<clickhouse::Connection>> lanes;
  CHSYNC_ASSIGN_OR_RETURN(std::unique_ptr<clickhouse::Connection> flush_connection,
                          clickhouse::Connect(request_.config.dest, destination_.options()));
  lanes.push_back(std::move(flush_connection));
  for (const std::string& urls : destination_.shard_urls()) {
    CHSYNC_ASSIGN_OR_RETURN(std::unique_ptr<clickhouse::Connection> shard,
                            clickhouse::Connect(urls, destination_.options()));
    lanes.push_back(std::move(shard));
  }
  holds_.Clear();  // what it held, the checkpoint holds, or a replay parks again
  flusher_ = std::make_unique<Flusher>(std::move(lanes), 4,
                                       static_cast<size_t>(2 * request_.config.batch_max_bytes));
  return Status::Ok();
}

void Applier::BeginSession() {
  server_version_.reset();
  boundaries_.Reset();
  gtids_.Discard();
  last_flush_ = last_checkpoint_ = std::chrono::steady_clock::now();
}

void Applier::NoteFileStart(std::string_view file, uint64_t end) {
  committed_.file = std::string(file);
  committed_.position = end;
  committed_.version_shift = versions_->shift();
}

void Applier::DropPending(TableState& table) {
  if (!table.writer) return;
  pending_bytes_ -= std::min(pending_bytes_, table.writer->bytes());
  (void)table.writer->TakeData();
}

void Applier::AttachParking(Flusher::BatchInfo& info, const std::string& key) {
  holds_.AttachParking(info, key, Coordinate(committed_.file, committed_.position), checkpointer_.path());
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
        DiscardOpenXaRows();
      } else {
        CHSYNC_RETURN_IF_ERROR(SendWriters());
      }
      xa_group_start_ = event.position;
      return Status::Ok();
    case Boundary::Kind::kCommit:
      if (boundary.ends_open_xa)
        CHSYNC_RETURN_IF_ERROR(SendOpenXaBatches(Coordinate(event.file, event.position)));
      return EndTransaction(event, boundary.resume, false);
    case Boundary::Kind::kXaPrepare: return PrepareXa(event, boundary);
    case Boundary::Kind::kXaCommit: return FinishXa(event, boundary, /*commit=*/true);
    case Boundary::Kind::kXaRollback:
      if (open_before && *open_before == boundary.xid) {
        DiscardOpenXaRows();
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

void Applier::AddUntrackedRenames(std::string_view sql, std::string_view database,
                                  const schema::LexOptions& lex, schema::ApplyResult& applied) {
  // The tracker reports renames of the tables it tracks only. A table it never saw (created
  // before the pipe started, outside --tables) renamed onto a replicated name must be copied.
  if (sql.size() < 6 || !schema::EqualsIgnoreCase(sql.substr(0, 6), "RENAME")) return;
  auto statement = schema::ParseStatement(sql, lex);
  if (!statement.ok() || statement->kind != schema::StatementKind::kRenameTable) return;
  for (const auto& [from, to] : statement->renames) {
    schema::TableName source{from.database.empty() ? std::string(database) : from.database, from.name};
    schema::TableName target{to.database.empty() ? std::string(database) : to.database, to.name};
    bool reported =
        std::any_of(applied.changes.begin(), applied.changes.end(), [&](const schema::SchemaChange& c) {
          return c.kind == schema::SchemaChange::Kind::kTableRenamed &&
                 c.old_table.database == source.database && c.old_table.name == source.name;
        });
    if (reported || !set_.ShouldReplicate(target.database, target.name)) continue;
    schema::SchemaChange change;
    change.kind = schema::SchemaChange::Kind::kTableRenamed;
    change.old_table = source;
    change.table = target;
    applied.changes.push_back(std::move(change));
  }
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
  auto applied = tracker_.ApplySql(sql, query.database, lex);
  cascades_.Invalidate();  // foreign keys may have come or gone
  if (!applied.ok()) {
    // Which replicated tables could the statement be about?
    std::string concerned;
    for (const auto& [key, table] : set_.tables()) {
      if (!StatementNames(*table, sql, query.database, event)) continue;
      concerned = key;
      break;
    }
    if (concerned.empty()) {
      log::Debug("statement at {} not applied to the tracked schemas ({}): {}",
                 Coordinate(event.file, event.position), applied.error().message(), sql.substr(0, 200));
    } else if (!source_.full_metadata()) {
      Metrics().NoteSchemaChange(SchemaChangeKind(sql), "failed");
      Error error = ResyncError(concerned,
                                "a statement that may change it could not be followed (" +
                                    applied.error().message() + "): \"" + std::string(sql.substr(0, 500)) +
                                    "\"; without binlog_row_metadata=FULL its rows cannot be matched safely",
                                event);
      TableState& table = *set_.tables().at(concerned);
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
    AddUntrackedRenames(sql, query.database, lex, *applied);
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
  for (auto& [key, table] : set_.tables()) {
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

void Applier::Record(const std::string& key, const std::string& database, const std::string& position,
                     const std::string& statement, const std::vector<std::string>& lines,
                     std::string_view action) {
  if (!action.empty()) Metrics().NoteSchemaChange(SchemaChangeKind(statement), action);
  SchemaChangeRecord record;
  record.at_ms = NowMs();
  record.position = position;
  record.table = key;
  record.statement = statement.substr(0, 1000);
  for (const std::string& line : lines) {
    log::Info("{} at {}: {}", key, position, line);
    record.actions.push_back(line);
  }
  RecordSchemaChange(database, record);
  status_.schema_changes.push_back(std::move(record));
  if (status_.schema_changes.size() > kMaxSchemaChangeRecords) {
    status_.schema_changes.erase(status_.schema_changes.begin());
  }
  PublishRunStatus(status_);
}

Status Applier::ApplySchemaChanges(const binlog::Event& event, const binlog::QueryEvent& query,
                                   const schema::ApplyResult& applied) {
  const std::string position = Coordinate(event.file, event.position);
  const std::string statement(Trim(query.query));
  auto before_stream_from = [&](const TableState& table) {
    return table.stream_from &&
           mysql::CompareCoordinates({std::string(event.file), event.position},
                                     {table.stream_from->file, table.stream_from->position}) < 0;
  };
  // Does the statement concern a replicated table (or one about to be)?
  bool concerns = false;
  for (const schema::SchemaChange& change : applied.changes) {
    for (const schema::TableName* name : {&change.table, &change.old_table}) {
      if (name->name.empty()) continue;
      std::string key = TableKey(name->database, name->name);
      auto it = set_.tables().find(key);
      if ((it != set_.tables().end() && !before_stream_from(*it->second)) || set_.dropped().contains(key) ||
          set_.ShouldReplicate(name->database, name->name) ||
          set_.IsMigrationLeftover(name->database, name->name)) {
        concerns = true;
      }
    }
  }
  if (!concerns) return Status::Ok();
  // Rows before the statement go out under the old layout, and a checkpoint at the statement's
  // start is saved, before anything changes in ClickHouse: a crash while the statement's
  // ClickHouse side runs replays just the statement, whose steps are each safe to run again.
  CHSYNC_RETURN_IF_ERROR(FlushAndCheckpoint());
  CHSYNC_RETURN_IF_ERROR(flusher_->Drain());

  std::vector<schema::SchemaChange> rest;
  std::set<std::string> replaced;
  bool renames = false;
  for (const schema::SchemaChange& change : applied.changes) {
    if (change.kind == schema::SchemaChange::Kind::kTableRenamed) renames = true;
    if (change.kind == schema::SchemaChange::Kind::kTableReplaced)
      replaced.insert(TableKey(change.table.database, change.table.name));
  }
  if (renames) CHSYNC_RETURN_IF_ERROR(ApplyTableRenames(event, statement, applied.changes));
  for (const schema::SchemaChange& change : applied.changes) {
    if (change.kind == schema::SchemaChange::Kind::kTableRenamed ||
        change.kind == schema::SchemaChange::Kind::kTableReplaced ||
        replaced.contains(TableKey(change.table.database, change.table.name))) {
      continue;  // the ClickHouse table moved along with the source table (ApplyTableRenames)
    }
    rest.push_back(change);
  }

  std::vector<std::string> order;
  std::map<std::string, std::vector<schema::SchemaChange>> groups;
  for (const schema::SchemaChange& change : rest) {
    std::string key = TableKey(change.table.database, change.table.name);
    if (!groups.contains(key)) order.push_back(key);
    groups[key].push_back(change);
  }
  for (const std::string& key : order) {
    const std::vector<schema::SchemaChange>& changes = groups[key];
    auto it = set_.tables().find(key);
    TableState* table = it == set_.tables().end() ? nullptr : it->second.get();
    const schema::TableName& name = changes.front().table;
    bool created = std::any_of(changes.begin(), changes.end(), [](const schema::SchemaChange& c) {
      return c.kind == schema::SchemaChange::Kind::kTableCreated;
    });
    bool dropping = std::any_of(changes.begin(), changes.end(), [](const schema::SchemaChange& c) {
      return c.kind == schema::SchemaChange::Kind::kTableDropped;
    });
    auto was_dropped = set_.dropped().find(key);
    const bool leftover = set_.IsMigrationLeftover(name.database, name.name);
    if (table == nullptr && was_dropped == set_.dropped().end() &&
        !(created && set_.ShouldReplicate(name.database, name.name))) {
      if (dropping && leftover) {
        // A migration tool's table that ClickHouse may hold (renamed out of the replication).
        const Placement place = set_.PlaceFor(name.database, name.name);
        Status s = destination_.DropDestination(place.target, place.table);
        if (!s.ok()) return s;
      }
      continue;
    }
    if (table != nullptr && before_stream_from(*table)) continue;
    if (table != nullptr && table->held && !dropping) {
      // Its copy on resume takes the schema as it is then.
      log::Info("{} is {}: the statement at {} is not applied to its ClickHouse table", key,
                table->held->state, position);
      continue;
    }
    DestinationTable before = table != nullptr                      ? table->dest
                              : was_dropped != set_.dropped().end() ? was_dropped->second
                                                                    : DestinationTable{};
    if (created)
      before = DestinationTable{};  // a new table: what ClickHouse holds under its name is moved aside
    const schema::TableSchema* after = tracker_.Find(name.database, name.name);
    if (created) CHSYNC_RETURN_IF_ERROR(set_.CheckPlaceFree(name.database, name.name));
    PolicyContext context = set_.ContextFor(name.database, name.name, !source_.full_metadata());
    context.position = position;
    context.statement = statement;
    context.strict_mode = strict_mode_;
    context.migration_leftover = dropping && leftover;
    const bool rebuilding = table != nullptr && table->rebuild != nullptr;
    Result<TablePlan> planned = PlanTableChanges(changes, before, after, context);
    if (!planned.ok()) {
      Metrics().NoteSchemaChange(SchemaChangeKind(statement), "failed");
      // A table created, dropped or (ApplyTableRenames) renamed leaves nothing to park: those stop.
      if (table == nullptr || dropping) return std::move(planned).error();
      CHSYNC_RETURN_IF_ERROR(host_.ParkTable(*table, key, planned.error(), statement, position));
      continue;
    }
    TablePlan plan = std::move(planned).value();
    if (rebuilding) {
      // The rebuild copies the table as it was; start it again under the new schema.
      CHSYNC_RETURN_IF_ERROR(host_.CancelRebuild(*table));
      if (!plan.dropped && !plan.ignored && after != nullptr) {
        plan.statements.clear();
        plan.skip_if_column_exists.clear();
        plan.skip_if_column_missing.clear();
        plan.rebuild = true;
        plan.rebuild_reason = "the table changed again while it was being rebuilt";
        plan.after = set_.FreshDestination(*after, plan.after.excluded);
        plan.log_lines.push_back("the rebuild in progress starts again under the new schema");
      }
    }
    if (plan.created) {
      CHSYNC_ASSIGN_OR_RETURN(uint32_t sequence, versions_->Sequence(event.file, committed_.sequence_base));
      CHSYNC_RETURN_IF_ERROR(destination_.MakeRoom(context.target, context.mapping.dest_table,
                                                   fmt::format("{}_{}", sequence, event.position)));
    }
    if (Status ran = destination_.RunPlan(plan, context.target, context.mapping.dest_table); !ran.ok()) {
      // ClickHouse refused the table's ALTER: the table parks (when that concerns it alone).
      if (table == nullptr || plan.dropped || plan.created) return ran;
      Metrics().NoteSchemaChange(SchemaChangeKind(statement), "failed");
      CHSYNC_RETURN_IF_ERROR(host_.ParkTable(*table, key, ran.error(), statement, position));
      continue;
    }
    Record(key, context.target.database, position, statement, plan.log_lines, SchemaChangeAction(plan));
    if (plan.ignored) continue;
    if (plan.dropped) {
      if (table != nullptr) CHSYNC_RETURN_IF_ERROR(host_.CancelRebuild(*table));
      set_.dropped()[key] = plan.after;
      set_.tables().erase(key);
      holds_.Unparked(key);  // its rows are no longer owed: the table is gone
      std::erase_if(checkpoint_.snapshot, [&](const TableSnapshot& s) {
        return s.database == name.database && s.table == name.name;
      });
      continue;
    }
    set_.dropped().erase(key);
    if (table == nullptr) {
      auto state = std::make_unique<TableState>();
      table = state.get();
      set_.tables()[key] = std::move(state);
      // Replicated from its first row: nothing to copy.
      std::erase_if(checkpoint_.snapshot, [&](const TableSnapshot& s) {
        return s.database == name.database && s.table == name.name;
      });
      checkpoint_.snapshot.push_back(
          {name.database, name.name, TableSnapshot::State::kDone, "", 0, std::nullopt});
    }
    table->dest = plan.after;
    Status applied_here = plan.rebuild
                              ? host_.StartRebuild(*table, position, plan.rebuild_reason, /*resume=*/false)
                              : host_.RebuildWriter(*table);
    if (!applied_here.ok()) {
      CHSYNC_RETURN_IF_ERROR(host_.ParkTable(*table, key, applied_here.error(), statement, position));
    } else if (!plan.park_reason.empty()) {
      // A table chsync will not replicate (keyless=refuse): made, then parked at its first statement.
      CHSYNC_RETURN_IF_ERROR(host_.ParkTable(*table, key, Error(ErrorKind::kUnsupported, plan.park_reason),
                                             statement, position));
    }
  }
  return Status::Ok();
}

Status Applier::ApplyTableRenames(const binlog::Event& event, const std::string& statement,
                                  const std::vector<schema::SchemaChange>& changes) {
  const std::string position = Coordinate(event.file, event.position);
  // Renaming again what a crash let rename already would move the wrong table: after `RENAME TABLE t
  // TO _t_del, _t_gho TO t`, `t` is the former `_t_gho`. Each ClickHouse step is recorded in the
  // journal once done, and skipped when the statement is replayed; the bookkeeping around the steps
  // is done on every pass. The checkpoint at the statement's start is saved (ApplySchemaChanges):
  // the steps of statements before it are never replayed.
  CHSYNC_RETURN_IF_ERROR(destination_.BeginJournaled(checkpointer_.path(), checkpoint_.resume.file,
                                                     checkpoint_.resume.position));
  for (size_t index = 0; index < changes.size(); ++index) {
    const schema::SchemaChange& change = changes[index];
    if (change.kind != schema::SchemaChange::Kind::kTableRenamed) continue;
    const schema::TableName& from = change.old_table;
    const schema::TableName& to = change.table;
    const std::string from_key = TableKey(from.database, from.name);
    const std::string to_key = TableKey(to.database, to.name);
    // Each name's place in ClickHouse: the ClickHouse table moves to the new name's place.
    const Placement from_place = set_.PlaceFor(from.database, from.name);
    const Placement to_place = set_.PlaceFor(to.database, to.name);
    const clickhouse::DdlTarget& from_target = from_place.target;
    const clickhouse::DdlTarget& to_target = to_place.target;
    const bool replicate_to = set_.ShouldReplicate(to.database, to.name);
    auto it = set_.tables().find(from_key);
    std::vector<std::string> lines;
    if (it != set_.tables().end()) {
      PolicyContext context = set_.ContextFor(from.database, from.name, !source_.full_metadata());
      if (context.policy.rename_table == SchemaPolicy::RenameTable::kFail) {
        Metrics().NoteSchemaChange("rename_table", "failed");
        return ResyncError(
            from_key, fmt::format("renamed to {} (rename_table=fail): \"{}\"", to_key, statement), event);
      }
      if (replicate_to) CHSYNC_RETURN_IF_ERROR(set_.CheckPlaceFree(to.database, to.name, from_key));
      std::unique_ptr<TableState> state = std::move(it->second);
      set_.tables().erase(it);
      holds_.Unparked(from_key);  // a park moves with the table's own state (state->held)
      const bool rebuilding = state->rebuild != nullptr;
      CHSYNC_RETURN_IF_ERROR(host_.CancelRebuild(*state));
      CHSYNC_ASSIGN_OR_RETURN(uint32_t sequence, versions_->Sequence(event.file, committed_.sequence_base));
      if (set_.dropped().contains(to_key) || replicate_to) {
        CHSYNC_RETURN_IF_ERROR(destination_.RunStepOnce(
            DdlStep{std::string(event.file), event.position, fmt::format("{}/room", index)}, [&] {
              return destination_.MakeRoom(to_target, to_place.table,
                                           fmt::format("{}_{}", sequence, event.position));
            }));
      }
      CHSYNC_RETURN_IF_ERROR(destination_.RunStepOnce(
          DdlStep{std::string(event.file), event.position, fmt::format("{}/rename", index)}, [&] {
            return destination_.RenameDestination(from_target, from_place.table, to_target, to_place.table);
          }));
      std::erase_if(checkpoint_.snapshot, [&](const TableSnapshot& s) {
        return s.database == from.database && s.table == from.name;
      });
      const schema::TableSchema* schema = tracker_.Find(to.database, to.name);
      if (replicate_to && schema != nullptr) {
        // Excluded and renamed columns stay as they were (the mapping follows the table); columns the
        // new name's table_options exclude besides are left out by copying the table again.
        const std::vector<std::string> was_excluded = state->dest.excluded;
        const DestinationTable renamed = set_.FreshDestination(*schema, was_excluded);
        const bool excludes_more = renamed.excluded.size() > was_excluded.size();
        state->dest.source = renamed.source;
        state->dest.excluded = renamed.excluded;
        state->stream_from.reset();
        checkpoint_.snapshot.push_back(
            {to.database, to.name, TableSnapshot::State::kDone, "", 0, std::nullopt});
        lines.push_back(fmt::format("RENAME TABLE {} TO {}: ClickHouse table {} renamed to {}", from_key,
                                    to_key, from_place.Qualified(), to_place.Qualified()));
        TableState& moved = *state;
        set_.tables()[to_key] = std::move(state);
        set_.dropped().erase(to_key);
        std::optional<std::string> refused =
            moved.held ? std::nullopt
                       : KeylessRefusal(*schema, request_.config.policies.For(to.database, to.name));
        if (refused) {
          // Replicated under its old name's keyless=distinct, refused under the new one's.
          CHSYNC_RETURN_IF_ERROR(
              host_.ParkTable(moved, to_key, Error(ErrorKind::kUnsupported, *refused), statement, position));
        } else if (rebuilding || excludes_more) {
          CHSYNC_RETURN_IF_ERROR(
              host_.StartRebuild(moved, position,
                                 rebuilding ? "renamed while it was being rebuilt"
                                            : "the table_options of its new name exclude more columns",
                                 false));
        } else {
          CHSYNC_RETURN_IF_ERROR(host_.RebuildWriter(moved));
        }
      } else {
        state->dest.source.database = to.database;
        state->dest.source.name = to.name;
        set_.dropped()[to_key] = state->dest;
        lines.push_back(
            fmt::format("RENAME TABLE {} TO {}: ClickHouse table renamed to {}; {} does not match "
                        "--tables, so it is no "
                        "longer replicated (its ClickHouse table keeps the rows it has)",
                        from_key, to_key, to_place.Qualified(), to_key));
      }
      Record(from_key, from_target.database, position, statement, lines,
             rebuilding ? "rebuilt" : "propagated");
      continue;
    }
    set_.dropped().erase(from_key);
    if (!replicate_to) continue;
    // A table chsync did not replicate moved onto a replicated name: its rows must be copied.
    CHSYNC_RETURN_IF_ERROR(set_.CheckPlaceFree(to.database, to.name));
    PolicyContext context = set_.ContextFor(to.database, to.name, !source_.full_metadata());
    if (context.policy.create_table == SchemaPolicy::CreateTable::kIgnore) continue;
    if (context.policy.rename_table == SchemaPolicy::RenameTable::kFail) {
      Metrics().NoteSchemaChange("rename_table", "failed");
      return ResyncError(
          to_key, fmt::format("replaced by {} (rename_table=fail): \"{}\"", from_key, statement), event);
    }
    const schema::TableSchema* schema = tracker_.Find(to.database, to.name);
    if (schema == nullptr) {
      // Renamed from a table the tracker never saw (created before the pipe started and not
      // replicated): its schema as the source has it now.
      auto keep = [&](const schema::TableSchema& t) {
        return t.database == to.database && t.name == to.name;
      };
      CHSYNC_ASSIGN_OR_RETURN(std::vector<schema::TableSchema> loaded,
                              source_.LoadSchemas({to.database}, keep));
      if (loaded.empty()) {
        return ResyncError(to_key, "replaced by " + from_key + ", which chsync did not track and cannot find",
                           event);
      }
      tracker_.SetTable(loaded[0]);
      schemas_dirty_ = true;
      schema = tracker_.Find(to.database, to.name);
    }
    CHSYNC_ASSIGN_OR_RETURN(uint32_t sequence, versions_->Sequence(event.file, committed_.sequence_base));
    // Run again after the rebuild below swapped its copy in (and a crash came), it would move the
    // copy aside.
    CHSYNC_RETURN_IF_ERROR(destination_.RunStepOnce(
        DdlStep{std::string(event.file), event.position, fmt::format("{}/room", index)}, [&] {
          return destination_.MakeRoom(to_target, to_place.table,
                                       fmt::format("{}_{}", sequence, event.position));
        }));
    auto state = std::make_unique<TableState>();
    state->dest = set_.FreshDestination(*schema);
    TableState& added = *state;
    set_.tables()[to_key] = std::move(state);
    set_.dropped().erase(to_key);
    std::erase_if(checkpoint_.snapshot,
                  [&](const TableSnapshot& s) { return s.database == to.database && s.table == to.name; });
    checkpoint_.snapshot.push_back({to.database, to.name, TableSnapshot::State::kDone, "", 0, std::nullopt});
    std::string reason = "renamed from " + from_key + ", whose rows chsync did not replicate";
    if (std::optional<std::string> refused = KeylessRefusal(*schema, context.policy)) {
      // Not copied: parked at once, its rows owed until it has a key (or keyless: distinct).
      CHSYNC_RETURN_IF_ERROR(
          host_.ParkTable(added, to_key, Error(ErrorKind::kUnsupported, *refused), statement, position));
      continue;
    }
    CHSYNC_RETURN_IF_ERROR(host_.StartRebuild(added, position, reason, /*resume=*/false));
    lines.push_back(
        fmt::format("RENAME TABLE {} TO {}: {} is copied into ClickHouse (rebuilt online) because {}",
                    from_key, to_key, to_key, reason));
    Record(to_key, to_target.database, position, statement, lines, "rebuilt");
  }
  return Status::Ok();
}

void Applier::RecordSchemaChange(const std::string& database, const SchemaChangeRecord& record) {
  using clickhouse::QuoteIdentifier;
  using clickhouse::QuoteString;
  std::string table = QuoteIdentifier(database) + "." + QuoteIdentifier(kSchemaLogTable);
  if (Status created = destination_.EnsureSchemaLog(database); !created.ok()) {
    log::Warn("cannot create {}: {}", table, created.error().message());
    return;
  }
  std::string actions;
  for (const std::string& action : record.actions)
    actions += (actions.empty() ? "" : ", ") + QuoteString(action);
  Status inserted = destination_.connection().Execute(fmt::format(
      "INSERT INTO {} (`at`, `position`, `table`, `statement`, `actions`) VALUES ({}, {}, {}, {}, [{}])",
      table,
      destination_.caps().datetime64 ? fmt::format("fromUnixTimestamp64Milli(toInt64({}))", record.at_ms)
                                     : fmt::format("toDateTime({})", record.at_ms / 1000),
      QuoteString(record.position), QuoteString(record.table), QuoteString(record.statement), actions));
  if (!inserted.ok())
    log::Warn("cannot record the schema change in {}: {}", table, inserted.error().message());
}

Status Applier::EndTransaction(const binlog::Event& event, uint64_t resume, bool force_checkpoint) {
  gtids_.Commit();
  committed_.file = std::string(event.file);
  committed_.position = resume;
  committed_.version_shift = versions_->shift();
  if (schemas_dirty_) {
    checkpoint_.schemas = tracker_.Serialize();
    schemas_dirty_ = false;
    force_checkpoint = true;
  }
  ++status_.transactions;
  Metrics().transactions_applied.Add();
  status_.last_event_time = event.header.timestamp;

  const auto now = CoarseSteadyNow();       // once per transaction: a few milliseconds are precise enough
  const bool pending = pending_bytes_ > 0;  // every row has bytes
  bool due = force_checkpoint || pending_bytes_ >= request_.config.batch_max_bytes ||
             (pending && now - last_flush_ >= std::chrono::milliseconds(request_.config.batch_max_age_ms)) ||
             now - last_checkpoint_ >= kIdleCheckpointInterval;
  if (!due && pending_rows_bound_ >= request_.config.batch_max_rows) {
    pending_rows_bound_ = PendingRows();
    due = pending_rows_bound_ >= request_.config.batch_max_rows;
  }
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
  if (rows.skipped && !cascades_.HasParents()) return Status::Ok();
  auto it = set_.tables().Find(*rows.table, rows.table);
  if (it == set_.tables().end()) return Status::Ok();
  TableState& table = *it->second;
  host_.NoteCascades();
  // InnoDB's cascades from this table's changes, unless the session turned foreign_key_checks off.
  const bool cascading = rows.kind != binlog::RowsKind::kWrite && cascades_.IsParent(it->first) &&
                         (rows.flags & binlog::kRowsFlagNoForeignKeyChecks) == 0;
  // The children of a change whose cascade cannot be followed are parked: their rows stay owed.
  auto park_children = [&](const std::string& why) -> Status {
    if (!cascading) return Status::Ok();
    for (const std::string& child : cascades_.ChildrenOf(it->first, rows.kind == binlog::RowsKind::kDelete)) {
      auto c = set_.tables().find(child);
      if (c == set_.tables().end() || c->second->held) continue;
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
  CHSYNC_ASSIGN_OR_RETURN(uint32_t sequence, versions_->Sequence(event.file, committed_.sequence_base));
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
  const size_t bytes_before = table.writer->bytes();
  const size_t rows_before = table.writer->rows();
  uint64_t unchanged = 0;  // updates that changed nothing: nothing written
  row_versions_.clear();
  for (size_t k = 0; k < rows.rows.size() && !parked; ++k) {
    const binlog::RowChange& row = rows.rows[k];
    CHSYNC_ASSIGN_OR_RETURN(uint64_t version, versions_->Of(sequence, event, rows, k));
    if (cascading) row_versions_.push_back(version);
    if (before_copy) continue;
    switch (rows.kind) {
      case binlog::RowsKind::kWrite:
        CHSYNC_RETURN_IF_ERROR(append(AppendImage(table, row.after, version, false, event)));
        break;
      case binlog::RowsKind::kDelete:
        CHSYNC_RETURN_IF_ERROR(append(AppendImage(table, row.before, version, true, event)));
        break;
      case binlog::RowsKind::kUpdate:
      case binlog::RowsKind::kPartialUpdate: {
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
          CHSYNC_RETURN_IF_ERROR(append(AppendImage(table, row.before, version, true, event)));
        }
        CHSYNC_RETURN_IF_ERROR(append(AppendImage(table, row.after, version, false, event)));
        break;
      }
    }
  }
  if (before_copy) return FollowCascades(it->first, table, rows, event);
  if (parked) return park_children("parked on the same change");
  status_.rows_applied += rows.rows.size();
  switch (rows.kind) {
    case binlog::RowsKind::kWrite: table.changes.inserts += rows.rows.size(); break;
    case binlog::RowsKind::kDelete: table.changes.deletes += rows.rows.size(); break;
    case binlog::RowsKind::kUpdate:
    case binlog::RowsKind::kPartialUpdate: table.changes.updates += rows.rows.size() - unchanged; break;
  }
  pending_bytes_ += table.writer->bytes() - bytes_before;
  pending_rows_bound_ += table.writer->rows() - rows_before;
  if (cascading) CHSYNC_RETURN_IF_ERROR(FollowCascades(it->first, table, rows, event));
  if (table.writer->batch_rows() >= request_.config.batch_max_rows ||
      table.writer->bytes() >= request_.config.batch_max_bytes) {
    CHSYNC_RETURN_IF_ERROR(FlushTable(it->first, table));
  }
  // All tables' unsent rows together stay under the byte bound too.
  if (pending_bytes_ >= request_.config.batch_max_bytes) CHSYNC_RETURN_IF_ERROR(FlushAll());
  return Status::Ok();
}

Status Applier::FollowCascades(const std::string& key, TableState& table, const binlog::RowsEvent& rows,
                               const binlog::Event& event) {
  auto work = cascades_.StatementsFor(set_.tables(), key, table, rows, row_versions_,
                                      SourcePosition{std::string(event.file), event.position, ""});
  if (!work.ok())
    return std::move(
        work.error().AddContext("the cascades of " + key + " at " + Coordinate(event.file, event.position)));
  for (auto& [child, why] : work->refused) {
    auto it = set_.tables().find(child);
    if (it == set_.tables().end()) continue;
    CHSYNC_RETURN_IF_ERROR(host_.ParkTable(*it->second, it->first, why, "a cascade from " + key,
                                           Coordinate(event.file, event.position)));
  }
  if (work->statements.empty()) return Status::Ok();
  if (boundaries_.open_xa()) {
    cascades_.Defer(std::move(work->statements));
    return Status::Ok();
  }
  return RunCascades(work->statements, Coordinate(event.file, event.position));
}

Status Applier::RunCascades(const std::vector<std::pair<std::string, std::string>>& statements,
                            const std::string& position) {
  if (statements.empty()) return Status::Ok();
  // The child's rows written before the cascade must be in ClickHouse for its SELECT to see them.
  CHSYNC_RETURN_IF_ERROR(FlushAll());
  CHSYNC_RETURN_IF_ERROR(flusher_->Drain());
  for (const auto& [child, statement] : statements) {
    auto it = set_.tables().find(child);
    if (it == set_.tables().end() || it->second->held) continue;  // parked meanwhile: owed whole
    CrashPoint("cascade");
    Status done = destination_.connection().Execute(statement);
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
  Status checked = tracker_.CheckTableMap(columns);
  if (!checked.ok()) {
    return ResyncError(
        key, "its binlog rows no longer match the tracked schema (" + checked.error().message() + ")", event);
  }
  const schema::TableSchema& source = table.dest.source;
  // Without names (ordinal mode) a column's value is at its position in the tracked schema, which
  // has the excluded columns too.
  const schema::TableSchema* tracked =
      table.dest.excluded.empty() ? &source : tracker_.Find(map->database, map->table);
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
                            const binlog::Event& event) {
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
  if (s.ok()) {
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

size_t Applier::PendingRows() const {
  size_t rows = 0;
  for (const auto& [key, table] : set_.tables()) rows += table->writer ? table->writer->batch_rows() : 0;
  return rows;
}

Status Applier::FlushTable(const std::string& key, TableState& table) {
  if (!table.writer || table.writer->rows() == 0) return Status::Ok();
  ReportClamped(key, table.writer->TakeClamped(), destination_.caps().date32);
  pending_bytes_ -= std::min(pending_bytes_, table.writer->bytes());
  if (boundaries_.open_xa()) {
    xa_changes_[key].Absorb(table.changes);
    xa_batches_.push_back({key, table.writer->insert_prefix(), table.writer->TakeData()});
    return Status::Ok();
  }
  return QueueRows(table);
}

Flusher::BatchInfo Applier::TakeBatchInfo(TableState& table) {
  Flusher::BatchInfo info;
  info.rows = table.writer->rows();
  if (!table.changes.empty()) {
    PendingRowChanges changes;
    changes.Absorb(table.changes);
    info.acknowledged = [changes]() mutable { changes.Count(); };
  }
  return info;
}

Status Applier::QueueRows(TableState& table) {
  // A move to another server must find these rows' transactions there (lineage.h).
  if (!gtids_.empty() || !committed_.gtid_set.empty()) {
    CHSYNC_RETURN_IF_ERROR(versions_->lineage().NoteSent(gtids_.ToStringWithOpen()));
  }
  Flusher::BatchInfo info = TakeBatchInfo(table);
  const std::string key = TableKey(table.dest.source.database, table.dest.source.name);
  ReportClamped(key, table.writer->TakeClamped(), destination_.caps().date32);
  if (table.writer->routed() && flusher_->lanes() > 1) {
    const size_t total_bytes = std::max<size_t>(1, table.writer->bytes());
    std::vector<std::pair<size_t, std::string>> shards = table.writer->TakeShardData();
    for (size_t i = 0; i < shards.size(); ++i) {
      auto& [shard, data] = shards[i];
      // Rows per shard in proportion to its bytes; the changes count with the last shard's INSERT.
      Flusher::BatchInfo part;
      part.rows = info.rows * data.size() / total_bytes;
      if (i + 1 == shards.size()) part.acknowledged = std::exchange(info.acknowledged, nullptr);
      AttachParking(part, key);
      CHSYNC_RETURN_IF_ERROR(
          flusher_->Insert(table.writer->local_prefix(), std::move(data), 1 + shard, std::move(part)));
    }
    return Status::Ok();
  }
  AttachParking(info, key);
  return flusher_->Insert(table.writer->insert_prefix(), table.writer->TakeData(), 0, std::move(info));
}

Status Applier::SendWriters() {
  for (auto& [key, table] : set_.tables()) {
    if (table->writer && table->writer->rows() > 0) CHSYNC_RETURN_IF_ERROR(QueueRows(*table));
  }
  pending_bytes_ = 0;
  pending_rows_bound_ = 0;
  last_flush_ = std::chrono::steady_clock::now();
  return Status::Ok();
}

Status Applier::FlushAll() {
  if (!boundaries_.open_xa()) return SendWriters();
  for (auto& [key, table] : set_.tables()) CHSYNC_RETURN_IF_ERROR(FlushTable(key, *table));
  return Status::Ok();
}

Status Applier::SendOpenXaBatches(const std::string& position) {
  if (xa_batches_.empty()) return RunCascades(cascades_.TakeDeferred(), position);
  CHSYNC_RETURN_IF_ERROR(versions_->lineage().NoteSent(gtids_.ToStringWithOpen()));
  std::vector<XaBatch> batches = std::move(xa_batches_);
  xa_batches_.clear();
  std::map<std::string, PendingRowChanges> changes = std::move(xa_changes_);
  xa_changes_.clear();
  for (XaBatch& batch : batches) {
    Flusher::BatchInfo info;
    // The table's changes count with its first batch.
    if (auto it = changes.find(batch.table); it != changes.end()) {
      info.rows = it->second.rows();
      info.acknowledged = [counted = it->second]() mutable { counted.Count(); };
      changes.erase(it);
    }
    AttachParking(info, batch.table);
    CHSYNC_RETURN_IF_ERROR(
        flusher_->Insert(std::move(batch.prefix), std::move(batch.data), 0, std::move(info)));
  }
  return RunCascades(cascades_.TakeDeferred(), position);
}

void Applier::DiscardOpenXaRows() {
  for (auto& [key, table] : set_.tables()) {
    if (table->writer) (void)table->writer->TakeData();
    table->changes.inserts = table->changes.updates = table->changes.deletes = 0;
  }
  xa_batches_.clear();
  xa_changes_.clear();
  cascades_.DropDeferred();
  pending_bytes_ = 0;
  pending_rows_bound_ = 0;
}

Status Applier::PrepareXa(const binlog::Event& event, const Boundary& boundary) {
  // A prepared transaction's rows wait in a file, and its cascades cannot follow them there.
  for (const std::string& child : cascades_.DeferredChildren()) {
    auto it = set_.tables().find(child);
    if (it == set_.tables().end() || it->second->held) continue;
    CHSYNC_RETURN_IF_ERROR(host_.ParkTable(
        *it->second, it->first,
        Error(ErrorKind::kUnsupported,
              "chsync does not follow a foreign-key cascade inside a prepared XA transaction"),
        "XA PREPARE " + boundary.xid, Coordinate(event.file, event.position)));
  }
  cascades_.DropDeferred();
  std::vector<XaBatch> batches = std::move(xa_batches_);
  xa_batches_.clear();
  for (auto& [key, table] : set_.tables()) {
    if (!table->writer || table->writer->rows() == 0) continue;
    xa_changes_[key].Absorb(table->changes);
    batches.push_back({key, table->writer->insert_prefix(), table->writer->TakeData()});
  }
  pending_bytes_ = 0;
  // Each table's changes go with its first batch, into the file: counted at XA COMMIT, also by a
  // chsync restarted in between.
  for (const auto& entry : xa_changes_) {
    const std::string& key = entry.first;
    auto first =
        std::find_if(batches.begin(), batches.end(), [&](const XaBatch& b) { return b.table == key; });
    if (first == batches.end()) continue;
    first->inserts = entry.second.inserts;
    first->updates = entry.second.updates;
    first->deletes = entry.second.deletes;
  }
  xa_changes_.clear();
  CHSYNC_ASSIGN_OR_RETURN(uint32_t sequence, versions_->Sequence(event.file, committed_.sequence_base));
  PendingXa pending{boundary.xid, Coordinate(event.file, xa_group_start_),
                    XaRowsFileName(sequence, xa_group_start_)};
  std::erase_if(checkpoint_.pending_xa, [&](const PendingXa& x) { return x.xid == boundary.xid; });
  if (!batches.empty()) {
    // On disk before any checkpoint past the PREPARE names it.
    CHSYNC_RETURN_IF_ERROR(WriteXaRows(checkpointer_.path(), pending.rows_file, batches));
    log::Info("XA transaction {} prepared at {}: its rows wait for XA COMMIT", boundary.xid,
              pending.prepared);
  } else {
    pending.rows_file.clear();
  }
  checkpoint_.pending_xa.push_back(std::move(pending));
  return EndTransaction(event, boundary.resume, /*force_checkpoint=*/true);
}

Status Applier::FinishXa(const binlog::Event& event, const Boundary& boundary, bool commit) {
  auto it = std::find_if(checkpoint_.pending_xa.begin(), checkpoint_.pending_xa.end(),
                         [&](const PendingXa& x) { return x.xid == boundary.xid; });
  if (it == checkpoint_.pending_xa.end()) {
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
  checkpoint_.pending_xa.erase(it);
  if (!pending.rows_file.empty()) {
    if (commit) {
      CHSYNC_ASSIGN_OR_RETURN(std::vector<XaBatch> batches,
                              ReadXaRows(checkpointer_.path(), pending.rows_file));
      CHSYNC_RETURN_IF_ERROR(versions_->lineage().NoteSent(gtids_.ToStringWithOpen()));
      for (XaBatch& batch : batches) {
        auto target = set_.tables().find(batch.table);
        if (target == set_.tables().end()) continue;  // no longer replicated (dropped, renamed away)
        if (target->second->held) continue;           // parked or paused: its copy on resume has these rows
        // The table's changes count with its first batch (they are in the file).
        Flusher::BatchInfo info;
        PendingRowChanges counted;
        counted.inserts = batch.inserts;
        counted.updates = batch.updates;
        counted.deletes = batch.deletes;
        if (!counted.empty()) {
          counted.counters = Metrics().RowCounters(batch.table);
          info.rows = counted.rows();
          info.acknowledged = [counted]() mutable { counted.Count(); };
        }
        AttachParking(info, batch.table);
        CHSYNC_RETURN_IF_ERROR(
            flusher_->Insert(std::move(batch.prefix), std::move(batch.data), 0, std::move(info)));
      }
    }
    checkpointer_.Obsolete(pending.rows_file);
  }
  log::Info("XA transaction {} (prepared at {}) {} at {}", boundary.xid, pending.prepared,
            commit ? "committed" : "rolled back", Coordinate(event.file, event.position));
  return EndTransaction(event, boundary.resume, /*force_checkpoint=*/true);
}

Status Applier::FlushAndCheckpoint() {
  CHSYNC_RETURN_IF_ERROR(FlushAll());
  committed_.gtid_set = gtids_.ToString();
  checkpoint_.resume = committed_;
  status_.position = Coordinate(committed_.file, committed_.position);
  status_.gtid_position = committed_.gtid_set;
  host_.BeforeCheckpoint();
  // Saved by the flusher once every row queued before it is in ClickHouse.
  auto save = checkpointer_.Deferred(checkpoint_, status_, source_.server().is_mariadb(), retention_.get());
  CHSYNC_RETURN_IF_ERROR(flusher_->After(std::move(save)));
  last_checkpoint_ = std::chrono::steady_clock::now();
  return Status::Ok();
}

Error Applier::ResyncError(const std::string& table, const std::string& what,
                           const binlog::Event& event) const {
  return Error(ErrorKind::kUnsupported,
               fmt::format("table {}: {} (binlog position {}). Run `chsync resync --table {}` with the same "
                           "--source, --dest and --state to copy the table again",
                           table, what, Coordinate(event.file, event.position), table));
}

}  // namespace chsync::pipe
