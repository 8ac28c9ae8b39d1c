// Online rebuilds: a table whose ClickHouse rows can no longer be brought to the source's state by
// ALTERs (its sorting key changed, the source rewrote values, a table moved in whose rows chsync
// never saw) is copied again into a new ClickHouse table while the stream keeps writing the
// table's changes there too; when the copy is done the new table replaces the old one.
//
// Why the result is exact: the copy starts after the statement (the stream is at it), so every
// change the copy may miss or read half-way is in the binlog after it, and reaches the new table
// with a version above the copy's 0. ReplacingMergeTree keeps, per key, the row with the highest
// version: the last change when there is one, the copied row otherwise.

#include <fmt/format.h>

#include "clickhouse/ddl.h"
#include "clickhouse/sql_quoting.h"
#include "common/log.h"
#include "pipe/pipe.h"

namespace chsync::pipe {
namespace {

constexpr std::string_view kRebuildSuffix = "__chsync_rebuild";
constexpr std::string_view kReplacedSuffix = "__chsync_replaced";

/// MySQL error codes a copy gets when the table changed further at the source (a column or the
/// table went away): the stream reaches that statement later and restarts the rebuild.
bool ChangedUnderneath(const Error& error) {
  return error.server_code() == 1054 || error.server_code() == 1146;
}

/// Whether two schemas give different rows: a column's name, type, sign or size differs.
bool DifferentColumns(const schema::TableSchema& a, const schema::TableSchema& b) {
  if (a.columns.size() != b.columns.size()) return true;
  for (size_t i = 0; i < a.columns.size(); ++i) {
    const schema::Column& x = a.columns[i];
    const schema::Column& y = b.columns[i];
    if (!schema::EqualsIgnoreCase(x.name, y.name) || x.type != y.type || x.is_unsigned != y.is_unsigned ||
        x.length != y.length || x.precision != y.precision || x.scale != y.scale) {
      return true;
    }
  }
  return false;
}

/// Whether the source's columns of `table` now differ from its tracked schema (a statement the
/// stream has not reached yet changed it).
Result<bool> SourceMovedOn(SourceLink& source, const TableState& table) {
  const schema::TableSchema& tracked = table.dest.source;
  auto keep = [&](const schema::TableSchema& t) {
    return t.database == tracked.database && t.name == tracked.name;
  };
  CHSYNC_ASSIGN_OR_RETURN(std::vector<schema::TableSchema> now, source.LoadSchemas({tracked.database}, keep));
  return now.empty() || DifferentColumns(WithoutColumns(now[0], table.dest.excluded), tracked);
}

}  // namespace

Status Pipe::StartRebuild(TableState& table, const std::string& position, const std::string& reason,
                          bool resume) {
  const schema::TableSchema& source = table.dest.source;
  const std::string key = TableKey(source.database, source.name);
  const Placement place = set_.PlaceFor(source.database, source.name);
  const clickhouse::DdlTarget& target = place.target;
  // A table shared with other sources (pipe/fan_in.h) is copied into itself: this source's rows are
  // removed first, and its copy and its stream rows go to the shared table, where nothing is swapped.
  const bool shared = set_.MappingFor(source.database, source.name).Shared();
  if (!table.rebuild) table.rebuild = std::make_unique<Rebuilder>();
  Rebuilder& rebuild = *table.rebuild;
  rebuild.stop = false;
  rebuild.finished = false;
  rebuild.result = Status::Ok();
  if (resume) {
    CHSYNC_ASSIGN_OR_RETURN(bool exists,
                            destination_.DestinationTableExists(target, rebuild.state.temp_table));
    if (!exists) {
      // The swap ran before a crash; only its end may be left: the Distributed table over the
      // swapped-in local table (a crash right after the second rename, issue 33 case 4), and the
      // clean-up.
      log::Info("rebuild of {}: already swapped in", key);
      CHSYNC_RETURN_IF_ERROR(destination_.SwapIn(target, place.table, rebuild.state.temp_table,
                                                 place.table + std::string(kReplacedSuffix)));
      table.rebuild.reset();
      return RebuildWriter(table);
    }
  } else {
    rebuild.state = RebuildState{};
    rebuild.state.database = source.database;
    rebuild.state.table = source.name;
    rebuild.state.temp_table = shared ? place.table : place.table + std::string(kRebuildSuffix);
    rebuild.state.progress = {source.database, source.name, TableSnapshot::State::kPending, "", 0,
                              std::nullopt};
    rebuild.state.position = position;
    rebuild.state.reason = reason;
    // The copy is a new table: laid out afresh (no kept columns or names left by earlier renames).
    const schema::TableSchema* tracked = tracker_.Find(source.database, source.name);
    if (tracked == nullptr)
      return Error(ErrorKind::kInternal, "rebuild of " + key + ": the table is not tracked");
    const DestinationTable carried = table.dest;
    table.dest = set_.FreshDestination(*tracked, carried.excluded);
    if (shared) {
      // Its rows written so far go out before they are removed (none yet when the pipe starts).
      if (applier_.flusher() != nullptr) {
        CHSYNC_RETURN_IF_ERROR(applier_.FlushAll());
        CHSYNC_RETURN_IF_ERROR(applier_.flusher()->Drain());
      }
    }
    CHSYNC_RETURN_IF_ERROR(
        set_.CreateDestination(*tracked, /*replace=*/true, rebuild.state.temp_table, &carried));
    log::Info("rebuild of {} started at {} ({}): copying it into {}.{}", key, position, reason,
              target.database, rebuild.state.temp_table);
  }
  CHSYNC_RETURN_IF_ERROR(RebuildWriter(table));

  SnapshotJob job;
  job.schema = source;
  job.writer_schema = WriterSchema(table.dest);
  job.writer_schema.name = rebuild.state.temp_table;
  job.where = set_.MappingFor(source.database, source.name).where;
  job.writer_options = table.shared;
  job.caps = set_.MappingFor(source.database, source.name).Caps(destination_.caps());
  job.target = target;
  job.progress = rebuild.state.progress;
  // The estimate behind the progress lines (information_schema's TABLE_ROWS), and the row size
  // behind the chunks' byte bound (AVG_ROW_LENGTH).
  auto estimate = source_.control().Query(
      "SELECT TABLE_ROWS, AVG_ROW_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = " +
      mysql::QuoteString(source.database) + " AND TABLE_NAME = " + mysql::QuoteString(source.name));
  if (estimate.ok() && !estimate->rows.empty() && estimate->rows[0].size() >= 2) {
    const auto& row = estimate->rows[0];
    if (row[0]) job.row_estimate = std::strtoull(row[0]->c_str(), nullptr, 10);
    if (row[1]) job.avg_row_bytes = std::strtoull(row[1]->c_str(), nullptr, 10);
  }
  SnapshotOptions options;
  options.parallelism = 1;
  options.chunk_rows = request_.config.snapshot_chunk_rows;
  options.chunk_max_bytes = request_.config.batch_max_bytes;
  options.source = source_.options();
  options.dest_url = request_.config.dest;
  options.dest = destination_.options();
  options.caps = destination_.caps();
  options.terminal = false;
  rebuilds_.Launch(rebuild, [job = std::move(job), options = std::move(options), key](
                                const std::function<Status(const TableSnapshot&)>& on_chunk,
                                const std::atomic<bool>& stop) mutable {
    std::vector<SnapshotJob> jobs{std::move(job)};
    Status s = RunSnapshot(
        jobs, options, [&](size_t, const TableSnapshot& progress) { return on_chunk(progress); }, stop);
    if (s.ok() && jobs[0].progress.state != TableSnapshot::State::kDone && !stop) {
      s = Error(ErrorKind::kInternal, "the copy of " + key + " ended unfinished");
    }
    return s;
  });
  return Status::Ok();
}

Status Pipe::CancelRebuild(TableState& table) {
  if (!table.rebuild) return Status::Ok();
  table.rebuild->Stop();
  std::string temp = table.rebuild->state.temp_table;
  table.rebuild.reset();
  const Placement place = set_.PlaceFor(table.dest.source.database, table.dest.source.name);
  // A shared table is its own copy: it stays (the next copy removes this source's rows again).
  if (temp != place.table) CHSYNC_RETURN_IF_ERROR(destination_.DropDestination(place.target, temp));
  return RebuildWriter(table);
}

Status Pipe::PollRebuilds(bool wait) {
  bool any = false;
  for (auto& [key, table] : set_.tables()) {
    if (!table->rebuild) continue;
    Rebuilder& r = *table->rebuild;
    if (!wait && !r.finished) continue;
    if (wait && !r.finished) log::Info("waiting for the rebuild of {} to finish", key);
    if (r.thread.joinable()) r.thread.join();
    if (!r.finished) continue;  // stopped
    if (!r.result.ok()) {
      const Error& error = r.result.error();
      // A copy may also read values the tracked schema cannot hold (a later MODIFY widened a column
      // before the copy read it): the source's columns say whether the table moved on.
      bool moved_on = ChangedUnderneath(error) || r.stop;  // r.stop: paused by an earlier poll
      if (!wait && !moved_on) {
        auto differs = SourceMovedOn(source_, *table);
        moved_on = differs.ok() && *differs;
      }
      if (!wait && moved_on) {
        // The table changed again at the source: the stream reaches that statement later and
        // restarts the rebuild then.
        if (!r.stop) {
          log::Warn(
              "rebuild of {} paused: {}; it restarts when the stream reaches the statement that changed "
              "the table",
              key, error.message());
          r.stop = true;
        }
        continue;
      }
      return Error(error.kind(), "rebuild of " + key + ": " + error.message());
    }
    any = true;
  }
  if (!any) return Status::Ok();
  // Rows for the rebuilt tables go to their new tables before those are renamed.
  CHSYNC_RETURN_IF_ERROR(applier_.FlushAll());
  CHSYNC_RETURN_IF_ERROR(applier_.flusher()->Drain());
  for (auto& [key, table] : set_.tables()) {
    if (!table->rebuild || !table->rebuild->finished || !table->rebuild->result.ok()) continue;
    RebuildState state;
    {
      std::lock_guard<std::mutex> lock(table->rebuild->mutex);
      state = table->rebuild->state;
    }
    if (const Placement place = set_.PlaceFor(state.database, state.table); state.temp_table != place.table) {
      CHSYNC_RETURN_IF_ERROR(destination_.SwapIn(place.target, place.table, state.temp_table,
                                                 place.table + std::string(kReplacedSuffix)));
    }
    table->rebuild.reset();
    CHSYNC_RETURN_IF_ERROR(RebuildWriter(*table));
    const Placement place = set_.PlaceFor(state.database, state.table);
    std::string line = fmt::format("rebuild finished: {} rows copied; the new table replaced {}",
                                   state.progress.rows_copied, place.Qualified());
    history_.Record(key, place.target.database, applier_.committed_at(),
                    "(rebuild started at " + state.position + ": " + state.reason + ")", {line}, "");
  }
  return applier_.FlushAndCheckpoint();
}

}  // namespace chsync::pipe
