#include "verify/verifier.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "clickhouse/capabilities.h"
#include "clickhouse/sql_quoting.h"
#include "mysql/table_filter.h"
#include "mysql/table_inventory.h"
#include "position/row_version.h"
#include "schema/information_schema.h"
#include "state/checkpoint.h"
#include "state/control.h"
#include "state/state_dir.h"

namespace chsync::verify {
namespace {

using Clock = std::chrono::steady_clock;

/// Serialises the lines the lanes of a table print.
std::mutex g_print;

/// Differing sub-buckets whose rows are fetched per chunk and round; the others are counted.
constexpr size_t kMaxSubBucketsFetched = 64;

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

Result<schema::TextRows> Rows(mysql::Connection& conn, const std::string& sql) {
  CHSYNC_ASSIGN_OR_RETURN(mysql::QueryResult r, conn.Query(sql));
  return schema::TextRows{std::move(r.columns), std::move(r.rows)};
}

/// A binlog position as (file sequence, offset), comparable.
std::optional<std::pair<uint64_t, uint64_t>> Ordinal(const pipe::SourcePosition& p) {
  auto seq = pipe::BinlogFileSequence(p.file);
  if (!seq.ok()) return std::nullopt;
  return std::make_pair(static_cast<uint64_t>(*seq), p.position);
}

class TableVerifier {
 public:
  TableVerifier(mysql::Connection& source, clickhouse::Connection& dest, const VerifyOptions& options,
                const TablePlan& plan, TableResult& result, bool mariadb)
      : source_(source), dest_(dest), options_(options), plan_(plan), result_(result), mariadb_(mariadb) {}

  Status Run() {
    if (plan_.ranged) return RunRanged();
    return RunBuckets();
  }

  std::vector<std::string> shown;  ///< difference lines printed so far

 private:
  bool Stopped() const { return options_.stop != nullptr && options_.stop->load(); }

  Result<std::string> DestQuery(const std::string& sql) {
    auto started = Clock::now();
    auto r = dest_.Query(sql, "TabSeparated");
    result_.dest_seconds += Seconds(Clock::now() - started);
    if (!r.ok())
      return Error(r.error().kind(), "destination table " + plan_.dest_name + ": " + r.error().message());
    return r;
  }

  Result<mysql::QueryResult> SourceQuery(const std::string& sql) {
    auto started = Clock::now();
    auto r = source_.Query(sql);
    result_.source_seconds += Seconds(Clock::now() - started);
    if (!r.ok())
      return Error(r.error().kind(), "source table " + plan_.source_name + ": " + r.error().message());
    return r;
  }

  /// Starts a consistent read at the source and returns the binlog position it sees.
  Result<pipe::SourcePosition> BeginRead() {
    CHSYNC_RETURN_IF_ERROR(source_.Execute("START TRANSACTION WITH CONSISTENT SNAPSHOT"));
    pipe::SourcePosition p;
    if (mariadb_) {
      CHSYNC_ASSIGN_OR_RETURN(mysql::QueryResult r, source_.Query("SHOW STATUS LIKE 'binlog_snapshot_%'"));
      for (const auto& row : r.rows) {
        if (row.size() < 2 || !row[0] || !row[1]) continue;
        if (Lower(*row[0]) == "binlog_snapshot_file") p.file = *row[1];
        if (Lower(*row[0]) == "binlog_snapshot_position")
          p.position = std::strtoull(row[1]->c_str(), nullptr, 10);
      }
    } else {
      // MySQL has no snapshot position: the current one, read after the snapshot began, is at
      // or after it (which only makes the wait for the pipe longer).
      auto r = source_.Query("SHOW BINARY LOG STATUS");
      if (!r.ok()) r = source_.Query("SHOW MASTER STATUS");
      if (r.ok() && !r->rows.empty() && r->rows[0].size() >= 2 && r->rows[0][0] && r->rows[0][1]) {
        p.file = *r->rows[0][0];
        p.position = std::strtoull(r->rows[0][1]->c_str(), nullptr, 10);
      }
    }
    return p;
  }

  void EndRead() { (void)source_.Execute("COMMIT"); }

  /// Waits (bounded by `deadline`) until the pipe's checkpoint passes `read_at`.
  LagView WaitForPipe(const pipe::SourcePosition& read_at, Clock::time_point deadline) {
    LagView lag;
    if (options_.state.empty()) {
      lag.checkpoint_passed = true;
      return lag;
    }
    auto target = Ordinal(read_at);
    ShiftAtRead shift(read_at.file, read_at.position);
    bool said = false;
    const Clock::time_point waiting_since = Clock::now();
    for (;;) {
      auto cp = pipe::ReadCheckpoint(options_.state);
      if (cp.ok() && *cp) {
        const pipe::SourcePosition& resume = (*cp)->resume;
        auto at = Ordinal(resume);
        shift.Saw(resume.file, resume.position, resume.version_shift, resume.sequence_base);
        if (target) {
          auto seq = pipe::BinlogFileSequence(read_at.file);
          int64_t counted = static_cast<int64_t>(seq.ok() ? *seq : 0) + resume.sequence_base;
          if (counted > 0) {
            auto v =
                pipe::RowVersion({static_cast<uint32_t>(counted), read_at.position + shift.lower_bound()});
            if (v.ok()) lag.first_version_after = *v;
          }
        }
        if (at && target && *at >= *target) {
          lag.checkpoint_passed = true;
          return lag;
        }
        if (!running_) {
          // Nothing will move the checkpoint: compare with what the destination holds.
          lag.checkpoint_passed = true;
          if (!behind_noted_) {
            behind_noted_ = true;
            result_.notes.push_back(
                fmt::format("the pipe is not running and its checkpoint ({}:{}) is behind the source "
                            "({}:{}): rows changed "
                            "since then show as differences",
                            resume.file, resume.position, read_at.file, read_at.position));
          }
          return lag;
        }
        if (!said && Clock::now() - waiting_since > std::chrono::seconds(2)) {
          said = true;
          std::lock_guard<std::mutex> lock(g_print);
          if (options_.progress) std::fputs("\n", options_.progress_out);
          fmt::print(
              options_.progress_out,
              "verify: {}: a chunk differs; waiting for the pipe to pass {}:{} (checkpoint at {}:{})\n",
              plan_.source_name, read_at.file, read_at.position, resume.file, resume.position);
        }
      } else if (!running_) {
        lag.checkpoint_passed = true;
        return lag;
      }
      if (Clock::now() >= deadline || Stopped()) return lag;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

  Result<Summary> ParseSummaryRow(const std::optional<std::string>& count,
                                  const std::optional<std::string>& sum) {
    Summary s;
    CHSYNC_ASSIGN_OR_RETURN(s.count, ParseCount(count.value_or("0")));
    CHSYNC_ASSIGN_OR_RETURN(s.sum, ParseSum(sum.value_or("")));
    return s;
  }

  Result<Summary> SourceSummary(const Chunk& chunk) {
    CHSYNC_ASSIGN_OR_RETURN(mysql::QueryResult r, SourceQuery(SourceSummarySql(plan_, chunk)));
    if (r.rows.empty() || r.rows[0].size() < 2) return Summary{};
    return ParseSummaryRow(r.rows[0][0], r.rows[0][1]);
  }

  Result<Summary> DestSummary(const Chunk& chunk) {
    CHSYNC_ASSIGN_OR_RETURN(std::string text, DestQuery(DestSummarySql(plan_, chunk)));
    auto rows = ParseTabSeparated(text);
    if (rows.empty() || rows[0].size() < 2) return Summary{};
    return ParseSummaryRow(rows[0][0], rows[0][1]);
  }

  Result<std::map<uint64_t, Summary>> SourceBuckets(const std::string& sql) {
    CHSYNC_ASSIGN_OR_RETURN(mysql::QueryResult r, SourceQuery(sql));
    std::map<uint64_t, Summary> out;
    for (const auto& row : r.rows) {
      if (row.size() < 3 || !row[0]) continue;
      CHSYNC_ASSIGN_OR_RETURN(uint64_t b, ParseCount(*row[0]));
      CHSYNC_ASSIGN_OR_RETURN(out[b], ParseSummaryRow(row[1], row[2]));
    }
    return out;
  }

  Result<std::map<uint64_t, Summary>> DestBuckets(const std::string& sql) {
    CHSYNC_ASSIGN_OR_RETURN(std::string text, DestQuery(sql));
    std::map<uint64_t, Summary> out;
    for (const auto& row : ParseTabSeparated(text)) {
      if (row.size() < 3) continue;
      CHSYNC_ASSIGN_OR_RETURN(uint64_t b, ParseCount(row[0]));
      CHSYNC_ASSIGN_OR_RETURN(out[b], ParseSummaryRow(row[1], row[2]));
    }
    return out;
  }

  /// Source and destination summaries of `chunk`, the destination's read in parallel.
  Result<std::pair<Summary, Summary>> BothSummaries(const Chunk& chunk) {
    auto dest = std::async(std::launch::async, [&] { return DestSummary(chunk); });
    auto s = SourceSummary(chunk);
    auto d = dest.get();
    if (!s.ok()) return s.error();
    if (!d.ok()) return d.error();
    return std::make_pair(*s, *d);
  }

  /// One chunk: compared, and when it differs narrowed to rows. With a running pipe a differing
  /// chunk is read again (a new snapshot) once the pipe's checkpoint has passed the position of
  /// that read, until its differences are not the pipe's lag or the wait ends. `first` holds
  /// summaries already read (by a bucket pass) that differ.
  Status CheckChunk(const Chunk& chunk, std::optional<std::pair<Summary, Summary>> first) {
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(options_.wait_s);
    const bool follow = !options_.state.empty() && running_;
    for (int round = 0;; ++round) {
      CHSYNC_ASSIGN_OR_RETURN(pipe::SourcePosition read_at, BeginRead());
      LagView lag;
      if (round == 0) {
        // The first read does not wait: most chunks are equal whatever the pipe's lag.
        lag.checkpoint_passed = !follow;
      } else {
        lag = WaitForPipe(read_at, deadline);
      }
      std::pair<Summary, Summary> sums;
      if (round == 0 && first) {
        sums = *first;
      } else {
        auto both = BothSummaries(chunk);
        if (!both.ok()) {
          EndRead();
          return both.error();
        }
        sums = *both;
        if (round == 0) {
          result_.source_rows += sums.first.count;
          result_.dest_rows += sums.second.count;
        }
      }
      if (sums.first == sums.second) {
        EndRead();
        if (round > 0) ++result_.caught_up_chunks;
        return Status::Ok();
      }
      if (round == 0 && follow) {
        // Possibly lag: read again once the pipe has passed a new read's position.
        EndRead();
        continue;
      }
      auto narrowed = Narrow(chunk, sums, lag);
      EndRead();
      if (!narrowed.ok()) return narrowed.error();
      const bool settle = follow && Clock::now() < deadline && !Stopped();
      const bool lagging = !narrowed->lag.empty();
      const bool real = !narrowed->real.empty() || narrowed->hidden > 0;
      if (real && !lagging) {
        Report(chunk, *narrowed, false);
        return Status::Ok();
      }
      if (!settle) {
        Report(chunk, *narrowed, true);
        return Status::Ok();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  }

  struct Narrowed {
    std::vector<RowDifference> real;
    std::vector<RowDifference> lag;  ///< possibly the pipe's lag
    size_t hidden = 0;               ///< differing sub-buckets not fetched
    Summary source, dest;
  };

  Result<Narrowed> Narrow(const Chunk& chunk, const std::pair<Summary, Summary>& sums, const LagView& lag) {
    Narrowed out;
    out.source = sums.first;
    out.dest = sums.second;
    const uint64_t subs = SubBucketsFor(std::max(sums.first.count, sums.second.count));
    CHSYNC_ASSIGN_OR_RETURN(auto s_subs, SourceBuckets(SourceSubBucketSql(plan_, chunk, subs)));
    CHSYNC_ASSIGN_OR_RETURN(auto d_subs, DestBuckets(DestSubBucketSql(plan_, chunk, subs)));
    std::vector<uint64_t> differing = DifferingBuckets(s_subs, d_subs);
    if (differing.size() > kMaxSubBucketsFetched) {
      out.hidden = differing.size() - kMaxSubBucketsFetched;
      differing.resize(kMaxSubBucketsFetched);
    }
    if (differing.empty()) {
      // The destination changed between the summaries: treat as lag, read again.
      if (!lag.checkpoint_passed || !options_.state.empty()) out.lag.push_back({});
      return out;
    }
    CHSYNC_ASSIGN_OR_RETURN(mysql::QueryResult s_rows,
                            SourceQuery(SourceRowsSql(plan_, chunk, subs, differing)));
    CHSYNC_ASSIGN_OR_RETURN(std::string d_text, DestQuery(DestRowsSql(plan_, chunk, subs, differing)));
    CellRows source_cells, dest_cells;
    for (const auto& row : s_rows.rows) {
      std::vector<std::string> cells;
      cells.reserve(row.size());
      for (const auto& v : row) cells.push_back(v.value_or("N"));
      source_cells.push_back(std::move(cells));
    }
    dest_cells = ParseTabSeparated(d_text);
    CHSYNC_ASSIGN_OR_RETURN(std::vector<RowDifference> diffs, CompareRows(plan_, source_cells, dest_cells));
    std::map<std::string, uint64_t> versions;
    if (!options_.state.empty() && running_ && !diffs.empty()) {
      CHSYNC_ASSIGN_OR_RETURN(std::string v_text, DestQuery(DestVersionsSql(plan_, chunk, subs, differing)));
      for (const auto& row : ParseTabSeparated(v_text)) {
        if (row.size() < 2) continue;
        auto v = ParseCount(row[1]);
        if (v.ok()) versions[row[0]] = *v;
      }
    }
    for (RowDifference& d : diffs) {
      std::optional<uint64_t> latest;
      if (auto it = versions.find(d.key_text); it != versions.end()) latest = it->second;
      const bool maybe_lag = !options_.state.empty() && running_ && MayBeLag(lag, latest);
      (maybe_lag ? out.lag : out.real).push_back(std::move(d));
    }
    if (diffs.empty() && !(sums.first == sums.second)) {
      // Sub-buckets differed but their rows did not (the destination moved between queries).
      if (!options_.state.empty() && running_) out.lag.push_back({});
    }
    return out;
  }

  /// Prints a chunk's differences (with `final_round`, also those that may still be lag) and counts
  /// the chunk as differing.
  void Report(const Chunk& chunk, const Narrowed& n, bool final_round) {
    std::vector<std::pair<const RowDifference*, bool>> rows;  // (row, still changing)
    for (const auto& d : n.real) rows.emplace_back(&d, false);
    size_t unsettled = 0;
    if (final_round) {
      for (const auto& d : n.lag) {
        if (d.key.empty()) continue;
        rows.emplace_back(&d, true);
        ++unsettled;
      }
    }
    std::lock_guard<std::mutex> lock(g_print);
    result_.equal = false;
    ++result_.differing_chunks;
    result_.differing_rows += rows.size();
    result_.unsettled_rows += unsettled;
    if (options_.progress) std::fputs("\r\033[K", options_.progress_out);
    fmt::print(options_.out, "{}: chunk {} differs: source {} rows, destination {} rows\n", plan_.source_name,
               chunk.Describe(plan_.range_source_column), n.source.count, n.dest.count);
    for (const auto& [d, changing] : rows) {
      if (shown.size() >= options_.max_rows_shown) break;
      shown.push_back(DescribeDifference(*d));
      fmt::print(options_.out, "  {}{}\n", shown.back(),
                 changing ? " (still changing while the pipe ran)" : "");
    }
    if (n.hidden > 0) {
      fmt::print(options_.out, "  … and the rows of {} more differing parts of this chunk (not listed)\n",
                 n.hidden);
    }
    if (rows.empty() && n.hidden == 0) {
      fmt::print(options_.out, "  (no single row found: the destination changed while it was read)\n");
    }
    std::fflush(options_.out);
  }

  void Progress(uint64_t chunks_done, uint64_t other_rows = 0) {
    if (!options_.progress) return;
    std::lock_guard<std::mutex> lock(g_print);
    fmt::print(options_.progress_out, "\r\033[Kverify {}: {} chunks, {} rows", plan_.source_name, chunks_done,
               result_.source_rows + other_rows);
    std::fflush(options_.progress_out);
  }

  /// The end of the chunk that starts at `lo`: about chunk_rows rows on; unset for the last chunk.
  Result<std::optional<std::string>> NextBoundary(const std::optional<std::string>& lo) {
    std::optional<std::string> hi;
    CHSYNC_ASSIGN_OR_RETURN(mysql::QueryResult b,
                            SourceQuery(SourceNextBoundarySql(plan_, lo, options_.chunk_rows)));
    if (!b.rows.empty() && !b.rows[0].empty() && b.rows[0][0]) {
      hi = *b.rows[0][0];
      if (lo && *hi == *lo) {
        CHSYNC_ASSIGN_OR_RETURN(mysql::QueryResult n, SourceQuery(SourceNextValueSql(plan_, *lo)));
        hi = !n.rows.empty() && !n.rows[0].empty() && n.rows[0][0] ? n.rows[0][0] : std::nullopt;
      }
    }
    return hi;
  }

  /// Chunks in key order; with a second lane, two at a time (each lane its own connections).
  Status RunRanged() {
    std::optional<std::string> lo;
    for (;;) {
      if (Stopped()) return Error(ErrorKind::kInternal, "stopped");
      CHSYNC_ASSIGN_OR_RETURN(std::optional<std::string> hi, NextBoundary(lo));
      Chunk chunk{lo, hi, 0, 1};
      if (hi && lane_ != nullptr) {
        CHSYNC_ASSIGN_OR_RETURN(std::optional<std::string> hi2, NextBoundary(hi));
        Chunk second{hi, hi2, 0, 1};
        auto other = std::async(std::launch::async, [&] { return lane_->CheckChunk(second, std::nullopt); });
        Status mine = CheckChunk(chunk, std::nullopt);
        Status theirs = other.get();
        CHSYNC_RETURN_IF_ERROR(mine);
        CHSYNC_RETURN_IF_ERROR(theirs);
        result_.chunks += 2;
        Progress(result_.chunks, lane_->result_.source_rows);
        if (!hi2) break;
        lo = hi2;
        continue;
      }
      CHSYNC_RETURN_IF_ERROR(CheckChunk(chunk, std::nullopt));
      ++result_.chunks;
      Progress(result_.chunks, lane_ != nullptr ? lane_->result_.source_rows : 0);
      if (!hi) break;
      lo = hi;
    }
    return Status::Ok();
  }

  Status RunBuckets() {
    uint64_t estimate = 0;
    {
      auto r = source_.Query("SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = " +
                             mysql::QuoteString(plan_.source_name.substr(0, plan_.source_name.find('.'))) +
                             " AND TABLE_NAME = " +
                             mysql::QuoteString(plan_.source_name.substr(plan_.source_name.find('.') + 1)));
      if (r.ok() && !r->rows.empty() && !r->rows[0].empty() && r->rows[0][0]) {
        estimate = std::strtoull(r->rows[0][0]->c_str(), nullptr, 10);
      }
    }
    const uint64_t buckets = std::clamp<uint64_t>(
        (estimate + options_.chunk_rows - 1) / std::max<uint64_t>(1, options_.chunk_rows), 1, 65536);
    if (auto began = BeginRead(); !began.ok()) return began.error();
    auto dest_future =
        std::async(std::launch::async, [&] { return DestBuckets(DestBucketSummarySql(plan_, buckets)); });
    auto s = SourceBuckets(SourceBucketSummarySql(plan_, buckets));
    auto d = dest_future.get();
    EndRead();
    if (!s.ok()) return s.error();
    if (!d.ok()) return d.error();
    for (const auto& [b, sum] : *s) result_.source_rows += sum.count;
    for (const auto& [b, sum] : *d) result_.dest_rows += sum.count;
    result_.chunks = buckets;
    for (uint64_t b : DifferingBuckets(*s, *d)) {
      Chunk chunk;
      chunk.bucket = b;
      chunk.buckets = buckets;
      Summary ss = s->contains(b) ? s->at(b) : Summary{};
      Summary ds = d->contains(b) ? d->at(b) : Summary{};
      CHSYNC_RETURN_IF_ERROR(CheckChunk(chunk, std::make_pair(ss, ds)));
    }
    Progress(result_.chunks);
    return Status::Ok();
  }

 public:
  bool running_ = false;
  /// A second lane (its own connections and result) that checks every other chunk; may be null.
  TableVerifier* lane_ = nullptr;

 private:
  mysql::Connection& source_;
  clickhouse::Connection& dest_;
  const VerifyOptions& options_;
  const TablePlan& plan_;
  TableResult& result_;
  bool mariadb_;
  bool behind_noted_ = false;
};

}  // namespace

bool VerifyResult::equal() const {
  return std::all_of(tables.begin(), tables.end(), [](const TableResult& t) { return t.equal; });
}

Result<VerifyResult> Verify(mysql::Connection& source, clickhouse::Connection& dest,
                            const VerifyOptions& options) {
  const bool mariadb = source.server_version().find("MariaDB") != std::string::npos;
  CHSYNC_RETURN_IF_ERROR(source.Execute("SET NAMES utf8mb4"));
  CHSYNC_RETURN_IF_ERROR(source.Execute("SET time_zone = '+00:00'"));
  CHSYNC_RETURN_IF_ERROR(source.Execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ"));
  CHSYNC_ASSIGN_OR_RETURN(clickhouse::ServerVersion version, dest.Version());
  clickhouse::Capabilities caps = clickhouse::FromVersion(version);
  caps.datetime_fallback_text = options.datetime_fallback_text;
  caps.json_native = options.json_native;

  mysql::TableFilter filter = mysql::TableFilter::All();
  if (!options.tables.empty()) {
    CHSYNC_ASSIGN_OR_RETURN(filter, mysql::TableFilter::Parse(options.tables));
  }
  CHSYNC_ASSIGN_OR_RETURN(mysql::QueryResult dbs,
                          source.Query("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA"));
  std::vector<std::string> databases;
  for (const auto& row : dbs.rows) {
    if (row.empty() || !row[0] || mysql::IsSystemSchema(*row[0])) continue;
    databases.push_back(*row[0]);
  }
  if (databases.empty()) return Error(ErrorKind::kUsage, "the source has no database to verify");
  CHSYNC_ASSIGN_OR_RETURN(schema::TextRows t_rows, Rows(source, schema::TablesQuery(databases)));
  CHSYNC_ASSIGN_OR_RETURN(schema::TextRows c_rows, Rows(source, schema::ColumnsQuery(databases)));
  CHSYNC_ASSIGN_OR_RETURN(schema::TextRows s_rows, Rows(source, schema::StatisticsQuery(databases)));
  CHSYNC_ASSIGN_OR_RETURN(schema::TextRows f_rows, Rows(source, schema::ForeignKeysQuery(databases)));
  CHSYNC_ASSIGN_OR_RETURN(std::vector<schema::TableSchema> schemas,
                          schema::LoadSchemas(t_rows, c_rows, s_rows, f_rows, {mariadb}));
  if (mariadb) CHSYNC_RETURN_IF_ERROR(mysql::MarkMariaDbJson(source, databases, schemas));
  std::erase_if(schemas, [&](const schema::TableSchema& t) { return !filter.Matches(t.database, t.name); });
  if (schemas.empty()) {
    return Error(ErrorKind::kUsage,
                 "no table at " + source.options().Address() + " matches --tables '" + options.tables + "'");
  }

  std::optional<pipe::Checkpoint> checkpoint;
  bool running = false;
  if (!options.state.empty()) {
    CHSYNC_ASSIGN_OR_RETURN(auto cp, pipe::ReadCheckpoint(options.state));
    if (!cp) return Error(ErrorKind::kUsage, "state directory " + options.state + " has no checkpoint yet");
    checkpoint = std::move(*cp);
    running = pipe::PipeRunning(options.state);
  }

  // The second lane's connections, opened once for every table.
  std::unique_ptr<mysql::Connection> source2;
  std::unique_ptr<clickhouse::Connection> dest2;
  if (options.parallel > 1 && options.open_dest && !dest.embedded()) {
    auto s2 = mysql::Connection::Open(source.options());
    auto d2 = options.open_dest();
    Status ready = !s2.ok() ? Status(s2.error()) : !d2.ok() ? Status(d2.error()) : Status::Ok();
    if (ready.ok()) {
      for (const char* sql : {"SET NAMES utf8mb4", "SET time_zone = '+00:00'",
                              "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ"}) {
        if (ready.ok()) ready = (*s2)->Execute(sql);
      }
    }
    if (ready.ok()) {
      source2 = std::move(*s2);
      dest2 = std::move(*d2);
    } else {
      fmt::print(options.progress_out, "verify: one chunk at a time: a second connection failed: {}\n",
                 ready.error().message());
    }
  }

  VerifyResult out;
  for (const schema::TableSchema& table : schemas) {
    TableResult result;
    result.source = table.database + "." + table.name;
    ColumnMapping mapping;
    clickhouse::Capabilities table_caps = caps;  // the table's json: over the pipe's
    std::string dest_db = options.dest_database.empty() ? table.database : options.dest_database;
    std::string dest_table = table.name;
    if (options.mappings != nullptr) {
      pipe::EffectiveMapping m = options.mappings->For(table.database, table.name, options.dest_database);
      dest_db = m.dest_database;
      dest_table = m.dest_table;
      for (const auto& e : m.excluded) mapping.excluded.push_back(e.name);
      for (const auto& [from, to] : m.renamed) mapping.renamed[from.name] = to;
      mapping.where = m.where;
      if (m.Shared()) {
        mapping.source_column = m.source_column;
        mapping.source_value =
            options.source_name.empty() ? m.source_value : options.source_name + "/" + m.source_value;
      }
      table_caps = m.Caps(caps);
    }
    if (checkpoint) {
      for (const pipe::DestinationState& d : checkpoint->destinations) {
        if (Lower(d.table) != Lower(result.source)) continue;
        for (const auto& e : d.excluded) mapping.excluded.push_back(e);
        for (const auto& [from, to] : d.clickhouse_names) mapping.renamed[from] = to;
      }
      for (const pipe::HeldTable& h : checkpoint->held) {
        if (Lower(h.table) == Lower(result.source)) {
          result.notes.push_back("the pipe holds this table (" + h.state + " at " + h.position +
                                 "): " + h.reason);
        }
      }
      for (const pipe::TableSnapshot& s : checkpoint->snapshot) {
        if (s.database == table.database && s.table == table.name &&
            s.state != pipe::TableSnapshot::State::kDone) {
          result.notes.push_back(
              "the pipe's snapshot of this table is not done: rows not copied yet are differences");
        }
      }
    }
    result.dest = dest_db;
    result.dest.append(".").append(dest_table);
    // The destination's column types: a shared table's can be wider than this source's (another
    // source widened them), and its cells are then compared by value. Unknown (no table yet, an
    // error): as this source's columns map.
    auto types = dest.Query(
        "SELECT name, type FROM system.columns WHERE database = " + clickhouse::QuoteString(dest_db) +
            " AND table = " + clickhouse::QuoteString(dest_table),
        "TabSeparated");
    if (types.ok()) {
      for (const auto& row : ParseTabSeparated(*types)) {
        if (row.size() >= 2) mapping.dest_types[row[0]] = row[1];
      }
    }
    auto plan = PlanTable(table, mapping, dest_db, dest_table, table_caps, {mariadb});
    if (!plan.ok()) {
      result.equal = false;
      result.notes.push_back(plan.error().message());
      fmt::print(options.out, "{}: cannot be compared: {}\n", result.source, plan.error().message());
      out.tables.push_back(std::move(result));
      continue;
    }
    for (const std::string& note : plan->notes) result.notes.push_back(note);
    // A missing destination table is a difference, said plainly.
    auto exists = dest.Query("EXISTS TABLE " + plan->dest_table, "TabSeparated");
    if (exists.ok() && exists->substr(0, 1) == "0") {
      result.equal = false;
      fmt::print(options.out, "{}: the destination has no table {}\n", result.source, result.dest);
      out.tables.push_back(std::move(result));
      continue;
    }
    TableVerifier verifier(source, dest, options, *plan, result, mariadb);
    verifier.running_ = running;
    TableResult lane_result;
    std::optional<TableVerifier> lane;
    if (source2 && dest2 && plan->ranged) {
      lane.emplace(*source2, *dest2, options, *plan, lane_result, mariadb);
      lane->running_ = running;
      verifier.lane_ = &*lane;
    }
    const auto started = std::chrono::steady_clock::now();
    Status status = verifier.Run();
    result.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (lane) {
      result.equal = result.equal && lane_result.equal;
      result.source_rows += lane_result.source_rows;
      result.dest_rows += lane_result.dest_rows;
      result.differing_chunks += lane_result.differing_chunks;
      result.caught_up_chunks += lane_result.caught_up_chunks;
      result.differing_rows += lane_result.differing_rows;
      result.unsettled_rows += lane_result.unsettled_rows;
      result.source_seconds += lane_result.source_seconds;
      result.dest_seconds += lane_result.dest_seconds;
      for (std::string& note : lane_result.notes) result.notes.push_back(std::move(note));
      for (std::string& line : lane->shown) verifier.shown.push_back(std::move(line));
    }
    if (options.progress) std::fputs("\r\033[K", options.progress_out);
    if (!status.ok()) return status.error();
    if (verifier.shown.size() < result.differing_rows) {
      fmt::print(options.out, "  … {} more differing rows not listed (--max-rows)\n",
                 result.differing_rows - verifier.shown.size());
    }
    for (const std::string& note : result.notes)
      fmt::print(options.out, "{}: note: {}\n", result.source, note);
    auto rate = [](uint64_t rows, double seconds) {
      return seconds > 0 ? fmt::format("{:.0f} rows/s", static_cast<double>(rows) / seconds)
                         : std::string("-");
    };
    fmt::print(
        options.out,
        "{}: {} — source {} rows in {:.2f} s ({}), destination {} rows in {:.2f} s ({}); {:.2f} s wall "
        "({}, {} lane(s)); {} chunks, {} differing, {} rows differ{}{}\n",
        result.source, result.equal ? "equal" : "DIFFERENT", result.source_rows, result.source_seconds,
        rate(result.source_rows, result.source_seconds), result.dest_rows, result.dest_seconds,
        rate(result.dest_rows, result.dest_seconds), result.wall_seconds,
        rate(std::max(result.source_rows, result.dest_rows), result.wall_seconds), lane ? 2 : 1,
        result.chunks, result.differing_chunks, result.differing_rows,
        result.unsettled_rows > 0
            ? fmt::format(" ({} still changing when the wait ended)", result.unsettled_rows)
            : "",
        result.caught_up_chunks > 0
            ? fmt::format("; {} chunks equal once the pipe caught up", result.caught_up_chunks)
            : "");
    std::fflush(options.out);
    out.tables.push_back(std::move(result));
  }
  return out;
}

}  // namespace chsync::verify
