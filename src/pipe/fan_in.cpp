// Many source tables into one ClickHouse table (fan_in.h).

#include "pipe/fan_in.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "clickhouse/merged_type.h"
#include "clickhouse/sql_quoting.h"
#include "common/log.h"

namespace chsync::pipe {
namespace {

using clickhouse::QualifiedName;
using clickhouse::QuoteIdentifier;
using clickhouse::QuoteString;

struct StoredColumn {
  std::string name;
  std::string type;
  std::string default_kind;
  std::string default_expression;
};

std::string OnCluster(const clickhouse::DdlTarget& target) {
  return target.cluster.empty() ? "" : " ON CLUSTER " + QuoteIdentifier(target.cluster);
}

/// The columns of the shared table as ClickHouse has them now (none: no such table).
Result<std::vector<StoredColumn>> ReadColumns(Destination& destination, const clickhouse::DdlTarget& target,
                                              std::string_view name) {
  CHSYNC_ASSIGN_OR_RETURN(
      std::string text,
      destination.connection().Query(
          "SELECT name, type, default_kind, default_expression FROM system.columns WHERE database = " +
              QuoteString(target.StorageDatabase()) + " AND table = " + QuoteString(name),
          "TabSeparatedRaw"));
  std::vector<StoredColumn> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    std::vector<std::string> fields;
    size_t from = 0;
    while (true) {
      size_t tab = line.find('\t', from);
      fields.emplace_back(
          line.substr(from, tab == std::string_view::npos ? std::string_view::npos : tab - from));
      if (tab == std::string_view::npos) break;
      from = tab + 1;
    }
    if (fields.size() < 4) continue;
    out.push_back({fields[0], fields[1], fields[2], fields[3]});
  }
  return out;
}

const StoredColumn* Find(const std::vector<StoredColumn>& columns, std::string_view name) {
  for (const StoredColumn& c : columns) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

/// Serialises the ALTERs of one shared table among pipes (ClickHouse has no conditional ALTER: a
/// pipe that widened a column from what it read could narrow another pipe's wider type written in
/// between). The table `<name>__chsync_altering` exists while a pipe alters `name`: CREATE TABLE
/// of a name that exists fails (code 57) on every version, so the pipe whose CREATE succeeded holds
/// it. Its owner (Destination::owner(): host and state directory) is the DEFAULT of its one column,
/// which system.columns shows: a pipe killed while it held the lock takes it back at its restart,
/// and only the owner drops it. A lock older than kStaleAfterSeconds is a pipe's that never came
/// back, and is broken. On a cluster it is taken on the node the pipe is connected to.
class AlterLock {
 public:
  static Result<AlterLock> Take(Destination& destination, const clickhouse::DdlTarget& target,
                                std::string_view name) {
    constexpr int kStaleAfterSeconds = 3600;
    const std::string& database = target.StorageDatabase();
    const std::string lock_name = std::string(name) + "__chsync_altering";
    const std::string lock = QualifiedName(database, lock_name);
    const std::string owner = QuoteString(destination.owner());
    auto reported = std::chrono::steady_clock::now() - std::chrono::seconds(10);  // said at once
    for (;;) {
      Status created = destination.connection().Execute(
          fmt::format("CREATE TABLE {} (owner String DEFAULT {}) ENGINE = Memory", lock, owner));
      if (created.ok()) return AlterLock(destination, database, lock_name, owner);
      if (created.error().server_code() != kTableExists) return created.error();
      CHSYNC_ASSIGN_OR_RETURN(std::string held, Owner(destination, database, lock_name));
      if (held == owner) {
        log::Info("{} is this pipe's, left by a stop in the middle of an ALTER: taken back", lock);
        CHSYNC_RETURN_IF_ERROR(destination.connection().Execute("DROP TABLE IF EXISTS " + lock));
        continue;
      }
      CHSYNC_ASSIGN_OR_RETURN(
          std::string age,
          destination.connection().Query("SELECT toInt64(now()) - toInt64(metadata_modification_time) FROM "
                                         "system.tables WHERE database = " +
                                         QuoteString(database) + " AND name = " + QuoteString(lock_name)));
      while (!age.empty() && age.back() == '\n') age.pop_back();
      if (!age.empty() && std::atoll(age.c_str()) > kStaleAfterSeconds) {
        log::Warn(
            "{} of {} is older than {} s: its pipe stopped in the middle of an ALTER and did not come "
            "back; it is broken",
            lock, held, kStaleAfterSeconds);
        CHSYNC_RETURN_IF_ERROR(destination.connection().Execute("DROP TABLE IF EXISTS " + lock));
        continue;
      }
      if (destination.cancelled()) return clickhouse::CancelledError("waiting for " + lock);
      const auto now = std::chrono::steady_clock::now();
      if (now - reported >= std::chrono::seconds(10)) {
        log::Info(
            "waiting for another pipe that alters {}: {} is held by {} since {} s (if that pipe is gone for "
            "good, drop {})",
            QualifiedName(database, name), lock, held, age.empty() ? "?" : age, lock);
        reported = now;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  AlterLock(AlterLock&& other) noexcept
      : destination_(other.destination_),
        database_(std::move(other.database_)),
        lock_name_(std::exchange(other.lock_name_, "")),
        owner_(std::move(other.owner_)) {}
  AlterLock& operator=(AlterLock&&) = delete;
  AlterLock(const AlterLock&) = delete;
  AlterLock& operator=(const AlterLock&) = delete;
  ~AlterLock() {
    if (lock_name_.empty()) return;
    const std::string lock = QualifiedName(database_, lock_name_);
    // Dropped only while it is still this pipe's (broken as stale, it may be another's now). When
    // the pipe stops meanwhile, its restart takes it back.
    auto held = Owner(destination_, database_, lock_name_);
    if (!held.ok() || *held != owner_) return;
    Status dropped = destination_.connection().Execute("DROP TABLE IF EXISTS " + lock);
    if (!dropped.ok()) log::Warn("releasing {}: {}", lock, dropped.error().message());
  }

 private:
  static constexpr int kTableExists = 57;
  AlterLock(Destination& destination, std::string database, std::string lock_name, std::string owner)
      : destination_(destination),
        database_(std::move(database)),
        lock_name_(std::move(lock_name)),
        owner_(std::move(owner)) {}
  /// The lock's owner as its column's DEFAULT shows it (quoted); "" when there is no lock.
  static Result<std::string> Owner(Destination& destination, const std::string& database,
                                   const std::string& lock_name) {
    CHSYNC_ASSIGN_OR_RETURN(
        std::string text,
        destination.connection().Query(
            "SELECT default_expression FROM system.columns WHERE database = " + QuoteString(database) +
                " AND table = " + QuoteString(lock_name) + " AND name = 'owner'",
            "TabSeparatedRaw"));
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  }
  Destination& destination_;
  std::string database_;
  std::string lock_name_;
  std::string owner_;
};

/// True when `stored` lacks a column of `layout` or has one too narrow for it.
Result<bool> NeedsAlter(const std::vector<StoredColumn>& stored, const schema::TableSchema& layout,
                        const clickhouse::Capabilities& caps) {
  for (const schema::Column& column : layout.columns) {
    const StoredColumn* existing = Find(stored, column.name);
    if (existing == nullptr) return true;
    CHSYNC_ASSIGN_OR_RETURN(clickhouse::MappedType mapped, clickhouse::MapColumn(column, caps));
    mapped = clickhouse::SharedStorageType(mapped);
    clickhouse::ColumnMerge merge = clickhouse::MergeColumn(existing->type, mapped, caps.decimal256);
    if (merge.kind != clickhouse::ColumnMerge::Kind::kKeep) return true;
  }
  return false;
}

}  // namespace

Result<clickhouse::WriterOptions> EnsureShared(Destination& destination, const clickhouse::DdlTarget& target,
                                               std::string_view name, const schema::TableSchema& layout,
                                               const EffectiveMapping& mapping) {
  const clickhouse::Capabilities& caps = destination.caps();
  const std::string table = QualifiedName(target.StorageDatabase(), name);
  if (target.sharded) {
    return Error(ErrorKind::kConfig,
                 fmt::format("{}.{}: table_options' source_column (a table shared by several sources) is not "
                             "supported on a sharded cluster yet; replicate these tables separately there",
                             mapping.source_database, mapping.source_table));
  }
  clickhouse::CreateOptions options = mapping.CreateOptions();
  options.table = std::string(name);
  options.column_names.clear();  // `layout` has the ClickHouse names already
  CHSYNC_ASSIGN_OR_RETURN(std::vector<StoredColumn> stored, ReadColumns(destination, target, name));
  if (stored.empty()) {
    CHSYNC_RETURN_IF_ERROR(destination.Ddl(clickhouse::CreateDatabase(target)));
    schema::TableSchema create = layout;
    create.name = std::string(name);
    CHSYNC_ASSIGN_OR_RETURN(std::string sql, clickhouse::CreateTable(create, caps, target, options));
    Status created = destination.Ddl(sql);
    // Another pipe may have created it at the same moment: what counts is that it is there now.
    CHSYNC_ASSIGN_OR_RETURN(stored, ReadColumns(destination, target, name));
    if (stored.empty()) {
      CHSYNC_RETURN_IF_ERROR(created);
      return Error(ErrorKind::kServer,
                   "the shared table " + table + " was created but ClickHouse does not list it");
    }
    if (created.ok())
      log::Info("created the shared table {} (sources in column {})", table, mapping.source_column);
  }
  if (Find(stored, mapping.source_column) == nullptr) {
    return Error(ErrorKind::kConfig,
                 fmt::format("the ClickHouse table {} exists without the column {} that table_options' "
                             "source_column names: it was not made by chsync for several sources; give "
                             "the entry another dest, or drop the table",
                             table, mapping.source_column));
  }
  // The table's sorting key must be this source's: a source keyed otherwise would have rows of
  // one key collapse (its key wider than the table's) or a row's versions sort apart (narrower).
  {
    schema::TableSchema mine = layout;
    mine.name = std::string(name);
    CHSYNC_ASSIGN_OR_RETURN(clickhouse::TableLayout wanted,
                            clickhouse::DestinationLayout(mine, caps, target, options));
    CHSYNC_ASSIGN_OR_RETURN(
        std::string key, destination.connection().Query(
                             "SELECT sorting_key FROM system.tables WHERE database = " +
                                 QuoteString(target.StorageDatabase()) + " AND name = " + QuoteString(name),
                             "TabSeparatedRaw"));
    std::string expected;
    for (const std::string& element : wanted.order_by) expected += (expected.empty() ? "" : ", ") + element;
    auto bare = [](std::string_view text) {
      std::string out;
      for (char c : text) {
        if (c != '`' && c != ' ' && c != '\n') out += c;
      }
      return out;
    };
    if (bare(key) != bare(expected)) {
      while (!key.empty() && key.back() == '\n') key.pop_back();
      return Error(
          ErrorKind::kUnsupported,
          fmt::format("the shared table {} is sorted by ({}), and source {}.{} ({}) would be sorted by "
                      "({}): rows of different keys would collapse into one, or a row's versions "
                      "would not meet. Every source of a shared table needs the same primary key; "
                      "give this source another dest in table_options, or change its key at the "
                      "source",
                      table, key, mapping.source_database, mapping.source_table, mapping.source_value,
                      expected));
    }
  }
  // Staging tables of typed INSERTs (clickhouse/typed_insert.h) that a kill left: each lives for
  // one INSERT, so one older than ten minutes is no writer's any more.
  CHSYNC_ASSIGN_OR_RETURN(
      std::string staged,
      destination.connection().Query(
          "SELECT name FROM system.tables WHERE database = " + QuoteString(target.StorageDatabase()) +
              " AND startsWith(name, " + QuoteString(std::string(name) + "__chsync_staged_") +
              ") AND metadata_modification_time < now() - 600",
          "TabSeparatedRaw"));
  for (size_t start = 0; start < staged.size();) {
    size_t end = staged.find('\n', start);
    if (end == std::string::npos) end = staged.size();
    const std::string left = staged.substr(start, end - start);
    start = end + 1;
    if (left.empty()) continue;
    Status dropped = destination.connection().Execute("DROP TABLE IF EXISTS " +
                                                      QualifiedName(target.StorageDatabase(), left));
    if (!dropped.ok())
      log::Warn("dropping the staging table {} a stop left: {}", left, dropped.error().message());
  }
  // Columns to add or widen: under the lock, from what ClickHouse has once it is held.
  std::optional<AlterLock> lock;
  CHSYNC_ASSIGN_OR_RETURN(bool alter, NeedsAlter(stored, layout, caps));
  if (alter) {
    CHSYNC_ASSIGN_OR_RETURN(AlterLock taken, AlterLock::Take(destination, target, name));
    lock.emplace(std::move(taken));
    CHSYNC_ASSIGN_OR_RETURN(stored, ReadColumns(destination, target, name));
  }
  clickhouse::WriterOptions writer;
  writer.source_column = mapping.source_column;
  writer.source_value = mapping.source_value;
  writer.types.resize(layout.columns.size());
  const std::string what = "the shared table " + table;
  for (size_t i = 0; i < layout.columns.size(); ++i) {
    const schema::Column& column = layout.columns[i];
    CHSYNC_ASSIGN_OR_RETURN(clickhouse::MappedType mapped, clickhouse::MapColumn(column, caps));
    mapped = clickhouse::SharedStorageType(mapped);
    // Added, then merged: another pipe may add or widen it between our read and our ALTER.
    for (int attempt = 0;; ++attempt) {
      const StoredColumn* existing = Find(stored, column.name);
      if (existing == nullptr) {
        CHSYNC_ASSIGN_OR_RETURN(std::string add,
                                clickhouse::AddColumn(name, column, "", caps, target, options));
        Status added = destination.Ddl(add);
        CHSYNC_ASSIGN_OR_RETURN(stored, ReadColumns(destination, target, name));
        if (Find(stored, column.name) == nullptr) {
          CHSYNC_RETURN_IF_ERROR(added);
          return Error(
              ErrorKind::kServer,
              fmt::format("{}: column {} was added but ClickHouse does not list it", what, column.name));
        }
        if (added.ok()) log::Info("{}: added column {} for {}", what, column.name, mapping.source_value);
        continue;
      }
      clickhouse::ColumnMerge merge = clickhouse::MergeColumn(existing->type, mapped, caps.decimal256);
      if (merge.kind == clickhouse::ColumnMerge::Kind::kConflict) {
        return Error(ErrorKind::kUnsupported,
                     fmt::format("{}: column {} of source {}.{} ({}): {}. Give this source another dest "
                                 "in table_options, or change the column at the source",
                                 what, column.name, mapping.source_database, mapping.source_table,
                                 mapping.source_value, merge.why));
      }
      if (merge.kind == clickhouse::ColumnMerge::Kind::kKeep) {
        writer.types[i] = merge.write_as;
        break;
      }
      if (attempt >= 3) {
        return Error(ErrorKind::kServer,
                     fmt::format("{}: column {} changed under every attempt to widen it to {}", what,
                                 column.name, merge.type));
      }
      // ClickHouse 18.16 drops a column's DEFAULT on MODIFY: it is stated again.
      std::string sql = "ALTER TABLE " + table + OnCluster(target) + " MODIFY COLUMN " +
                        QuoteIdentifier(column.name) + " " + merge.type;
      if (existing->default_kind == "DEFAULT" && !existing->default_expression.empty())
        sql += " DEFAULT " + existing->default_expression;
      Status widened = destination.Ddl(sql);
      CHSYNC_ASSIGN_OR_RETURN(stored, ReadColumns(destination, target, name));
      if (widened.ok()) {
        log::Info("{}: column {} widened from {} to {} for {}", what, column.name, existing->type, merge.type,
                  mapping.source_value);
      }
      // Merged again against what is there now (ours, or another pipe's wider type).
    }
  }
  return writer;
}

Status DeleteSourceRows(Destination& destination, const clickhouse::DdlTarget& target, std::string_view name,
                        const EffectiveMapping& mapping, uint64_t version) {
  CHSYNC_ASSIGN_OR_RETURN(std::vector<StoredColumn> stored, ReadColumns(destination, target, name));
  if (stored.empty()) return Status::Ok();
  const std::string table = QualifiedName(target.StorageDatabase(), name);
  std::string columns;
  std::string values;
  for (const StoredColumn& c : stored) {
    if (c.name == clickhouse::kSyncedAtColumn || c.default_kind == "ALIAS" ||
        c.default_kind == "MATERIALIZED")
      continue;
    if (!columns.empty()) {
      columns += ", ";
      values += ", ";
    }
    columns += QuoteIdentifier(c.name);
    if (c.name == clickhouse::kVersionColumn) {
      values += fmt::format("toUInt64({})", version);
    } else if (c.name == clickhouse::kIsDeletedColumn) {
      values += "toUInt8(1)";
    } else {
      values += QuoteIdentifier(c.name);
    }
  }
  const std::string sql = fmt::format(
      "INSERT INTO {} ({}) SELECT {} FROM {} FINAL WHERE {} = {} AND {} = 0 AND {} < {}", table, columns,
      values, table, QuoteIdentifier(mapping.source_column), QuoteString(mapping.source_value),
      QuoteIdentifier(clickhouse::kIsDeletedColumn), QuoteIdentifier(clickhouse::kVersionColumn), version);
  return destination.connection().Execute(sql);
}

Status ClearSourceRows(Destination& destination, const clickhouse::DdlTarget& target, std::string_view name,
                       const EffectiveMapping& mapping) {
  const std::string table = QualifiedName(target.StorageDatabase(), name);
  const std::string where =
      fmt::format("{} = {}", QuoteIdentifier(mapping.source_column), QuoteString(mapping.source_value));
  CHSYNC_ASSIGN_OR_RETURN(std::string rows, destination.connection().Query(fmt::format(
                                                "SELECT count() FROM {} WHERE {}", table, where)));
  if (rows.empty() || rows[0] == '0') return Status::Ok();  // nothing to remove: no mutation
  CHSYNC_RETURN_IF_ERROR(
      destination.Ddl(fmt::format("ALTER TABLE {}{} DELETE WHERE {}", table, OnCluster(target), where)));
  // This source's mutations only (another source's, or a user's, may take longer or never end):
  // ClickHouse keeps the command as it prints it (`DELETE WHERE _source = 'tenant_7'`, the name
  // quoted only when it must be), so its value is looked for.
  const std::string mine =
      "SELECT count() FROM system.mutations WHERE database = " + QuoteString(target.StorageDatabase()) +
      " AND table = " + QuoteString(name) + " AND is_done = 0 AND position(command, " +
      QuoteString(QuoteString(mapping.source_value)) + ") > 0";
  const auto start = std::chrono::steady_clock::now();
  auto reported = start;
  for (;;) {
    CHSYNC_ASSIGN_OR_RETURN(std::string count, destination.connection().Query(mine));
    if (count.empty() || count[0] == '0') return Status::Ok();
    if (destination.cancelled())
      return clickhouse::CancelledError("waiting for ClickHouse to remove the rows of " +
                                        mapping.source_value);
    const auto now = std::chrono::steady_clock::now();
    if (now - reported >= std::chrono::seconds(10)) {
      // ClickHouse 19 and later say why a mutation does not progress.
      auto why = destination.connection().Query(
          "SELECT any(latest_fail_reason) FROM system.mutations WHERE database = " +
          QuoteString(target.StorageDatabase()) + " AND table = " + QuoteString(name) +
          " AND is_done = 0 AND position(command, " + QuoteString(QuoteString(mapping.source_value)) +
          ") > 0");
      std::string reason = why.ok() ? *why : "";
      while (!reason.empty() && reason.back() == '\n') reason.pop_back();
      log::Info(
          "waiting {} s for ClickHouse to remove the rows of {} from {} (ALTER TABLE … DELETE WHERE {}){}",
          std::chrono::duration_cast<std::chrono::seconds>(now - start).count(), mapping.source_value, table,
          where, reason.empty() ? "" : ": its last failure: " + reason);
      reported = now;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace chsync::pipe
