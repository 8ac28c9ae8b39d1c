#include "pipe/snapshot.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "clickhouse/table_writer.h"
#include "common/crash_point.h"
#include "common/log.h"
#include "metrics/pipe_metrics.h"
#include "mysql/snapshot_reader.h"
#include "pipe/row_converter.h"
#include "state/progress.h"

namespace chsync::pipe {
namespace {

using clickhouse::TableWriter;

/// Lost source connections: reopened and the chunk read again, this many tries in all.
constexpr int kSourceAttempts = 5;
constexpr std::chrono::milliseconds kSourceBackoff{500};
constexpr std::chrono::milliseconds kSourceMaxBackoff{8'000};
/// The most room a writer is given before its first chunk (see CopyTable).
constexpr uint64_t kMaxWriterRoom = uint64_t{64} << 20;

/// Encoded rows handed from a table's reader to its inserter.
struct Batch {
  TableWriter* writer = nullptr;
  /// The key after which the chunk starts (empty: the table's first chunk, or an unkeyed table).
  mysql::Key start_key;
  /// The key of the chunk's last row (empty when it has none, or the table is unkeyed).
  mysql::Key last_key;
  /// The table is complete once this batch is stored.
  bool last = false;
};

/// The meeting point of one table's reader (the worker thread) and its inserter thread: a pool of
/// writers (two: one being filled while the other is being inserted, which bounds the memory to
/// two encoded chunks) and the queue of filled ones.
class Handoff {
 public:
  explicit Handoff(std::vector<TableWriter*> writers) : free_(std::move(writers)) {}

  /// Reader: a writer to fill, waiting for one to come back; nullptr once the inserter failed.
  TableWriter* Acquire() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return broken_ || !free_.empty(); });
    if (broken_) return nullptr;
    TableWriter* w = free_.back();
    free_.pop_back();
    return w;
  }
  /// Gives back a writer without submitting it (reader), or after its batch was handled (inserter).
  void Release(TableWriter* w) {
    std::lock_guard lock(mu_);
    free_.push_back(w);
    cv_.notify_all();
  }
  /// Reader: queues a filled writer for the inserter.
  void Submit(Batch batch) {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(batch));
    ++unfinished_;
    cv_.notify_all();
  }
  /// Reader: no more batches.
  void Close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }
  /// Reader: waits until every submitted batch was handled; false when the inserter failed.
  bool Drain() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return broken_ || unfinished_ == 0; });
    return !broken_;
  }

  /// Inserter: the next batch, or nullopt when the reader closed and nothing is queued.
  std::optional<Batch> Next() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return closed_ || !queue_.empty(); });
    if (queue_.empty()) return std::nullopt;
    Batch b = std::move(queue_.front());
    queue_.pop_front();
    return b;
  }
  /// Inserter: the batch of `w` is handled.
  void Done(TableWriter* w) {
    std::lock_guard lock(mu_);
    free_.push_back(w);
    --unfinished_;
    cv_.notify_all();
  }
  /// Inserter: failed; the reader's Acquire and Drain return at once from now on.
  void Break() {
    std::lock_guard lock(mu_);
    broken_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<TableWriter*> free_;
  std::deque<Batch> queue_;
  size_t unfinished_ = 0;  // submitted, not yet Done
  bool closed_ = false;
  bool broken_ = false;
};

/// What the workers share.
struct Shared {
  Shared(std::vector<SnapshotJob>& jobs_in, const SnapshotOptions& options_in, const ChunkDone& on_chunk_in,
         const std::atomic<bool>& stop_in, SnapshotProgress& progress_in)
      : jobs(jobs_in), options(options_in), on_chunk(on_chunk_in), stop(stop_in), progress(progress_in) {}

  std::vector<SnapshotJob>& jobs;
  const SnapshotOptions& options;
  const ChunkDone& on_chunk;
  const std::atomic<bool>& stop;
  SnapshotProgress& progress;
  /// Job indices to copy, and the next one to take.
  std::vector<size_t> pending;
  std::atomic<size_t> next{0};

  /// Guards on_chunk calls, jobs[i].progress and first_error.
  std::mutex mu;
  std::optional<Error> first_error;
  std::atomic<bool> failed{false};

  void Fail(Error error) {
    std::lock_guard lock(mu);
    if (!first_error) first_error = std::move(error);
    failed.store(true);
  }
  /// A stop was requested or some worker failed: start no new chunk.
  bool Halted() const {
    return failed.load(std::memory_order_relaxed) || stop.load(std::memory_order_relaxed);
  }
};

/// "snapshot of `db`.`t`, chunk after key [...]": where an error happened.
std::string ChunkContext(const SnapshotJob& job, bool keyed, const mysql::Key& start_key) {
  std::string where = "snapshot of " + job.schema.QualifiedName();
  if (!keyed) return where + " (read in one pass: the table has no usable key)";
  if (start_key.empty()) return where + ", first chunk";
  return where + ", chunk after key " + mysql::KeyToJson(start_key);
}

/// Whether a failed read means the source connection is gone (so reconnecting and reading the chunk
/// again may succeed): a transport error, the server going away or killing the session, or, when
/// the error does not say, a connection that no longer answers.
bool SourceLost(const Error& error, mysql::Connection* conn) {
  if (error.kind() == ErrorKind::kNetwork) return true;
  if (error.kind() != ErrorKind::kServer) return false;  // conversion and encoding errors are final
  // ER_SERVER_SHUTDOWN, ER_QUERY_INTERRUPTED, ER_CONNECTION_KILLED (MariaDB).
  const int code = error.server_code();
  if (code == 1053 || code == 1317 || code == 1927) return true;
  return conn == nullptr || !conn->Execute("DO 1").ok();
}

/// Copies tables one after another with its own source and destination connections.
class Worker {
 public:
  explicit Worker(Shared& shared) : shared_(shared) {}

  void Run() {
    while (!shared_.Halted()) {
      size_t n = shared_.next.fetch_add(1);
      if (n >= shared_.pending.size()) break;
      size_t index = shared_.pending[n];
      Status s = CopyTable(index);
      if (!s.ok()) {
        shared_.progress.Interrupted(index);
        shared_.Fail(std::move(s).error());
        break;
      }
    }
  }

 private:
  /// (Re)opens the source connection, retrying a network failure with backoff.
  Status OpenSource() {
    source_.reset();
    std::chrono::milliseconds backoff = kSourceBackoff;
    for (int attempt = 1;; ++attempt) {
      auto conn = mysql::Connection::Open(shared_.options.source);
      if (conn.ok()) {
        source_ = std::move(conn).value();
        // A keyless table is read in one statement that pauses while the inserter catches up:
        // give the server room to wait for us.
        return source_->Execute("SET SESSION net_write_timeout = 3600");
      }
      if (conn.error().kind() != ErrorKind::kNetwork || attempt >= kSourceAttempts)
        return std::move(conn).error();
      log::Warn("snapshot: cannot reach the source ({}); retrying in {} ms", conn.error().message(),
                backoff.count());
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, kSourceMaxBackoff);
    }
  }

  Status EnsureConnections() {
    if (source_ == nullptr) {
      CHSYNC_RETURN_IF_ERROR(OpenSource());
    }
    if (dest_ == nullptr) {
      CHSYNC_ASSIGN_OR_RETURN(dest_, clickhouse::Connect(shared_.options.dest_url, shared_.options.dest));
    }
    return Status::Ok();
  }

  Status CopyTable(size_t index);
  void InsertLoop(size_t index, bool keyed, Handoff& handoff, std::optional<Error>& error);

  Shared& shared_;
  std::unique_ptr<mysql::Connection> source_;
  std::unique_ptr<clickhouse::Connection> dest_;
};

void Worker::InsertLoop(size_t index, bool keyed, Handoff& handoff, std::optional<Error>& error) {
  SnapshotJob& job = shared_.jobs[index];
  while (std::optional<Batch> batch = handoff.Next()) {
    if (error || shared_.failed.load()) {
      handoff.Done(batch->writer);
      continue;
    }
    const uint64_t rows = batch->writer->rows();
    const size_t bytes = batch->writer->bytes();
    const auto insert_start = std::chrono::steady_clock::now();
    Status s = batch->writer->Flush(*dest_);
    log::Debug(
        "snapshot of {}: inserted {} rows ({} bytes) in {} ms", job.schema.QualifiedName(), rows, bytes,
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - insert_start)
            .count());
    if (s.ok()) {
      ReportClamped(job.schema.QualifiedName(), batch->writer->TakeClamped(), shared_.options.caps.date32);
      Metrics().ObserveInsert(
          rows, bytes,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - insert_start).count());
      std::lock_guard lock(shared_.mu);
      TableSnapshot& p = job.progress;
      p.rows_copied += rows;
      Metrics().SetSnapshotRows(job.schema.QualifiedName(), p.rows_copied);
      // A keyed table resumes after the last acknowledged key. A keyless one is only ever recorded
      // when complete: re-reading it after a crash is harmless, since its destination table sorts
      // by the full row and identical rows collapse into one.
      if (keyed || batch->last) {
        if (!batch->last_key.empty()) p.last_key = mysql::KeyToJson(batch->last_key);
        p.state = batch->last ? TableSnapshot::State::kDone : TableSnapshot::State::kCopying;
        s = shared_.on_chunk(index, p);
      }
      shared_.progress.Copied(index, p.rows_copied);
      if (s.ok() && batch->last) shared_.progress.Finished(index);
    }
    if (!s.ok()) {
      Error e = std::move(s).error();
      e.AddContext(ChunkContext(job, keyed, batch->start_key));
      error = std::move(e);
      handoff.Break();
    }
    handoff.Done(batch->writer);
  }
}

Status Worker::CopyTable(size_t index) {
  SnapshotJob& job = shared_.jobs[index];
  const SnapshotOptions& options = shared_.options;
  const uint64_t rows_per_chunk =
      ChunkRowsFor(options.chunk_rows, options.chunk_max_bytes, job.avg_row_bytes);
  if (rows_per_chunk < std::max<uint64_t>(options.chunk_rows, 1)) {
    log::Info("snapshot of {}: {} rows per chunk (rows of about {} bytes; batch.max_bytes {})",
              job.schema.QualifiedName(), rows_per_chunk, job.avg_row_bytes, options.chunk_max_bytes);
  }
  mysql::SnapshotQuery query = SnapshotQueryFor(job.schema, rows_per_chunk);
  query.where = job.where;
  const bool keyed = !query.key_columns.empty();
  const uint64_t chunk_rows = query.chunk_rows;
  const std::string table_name = job.schema.QualifiedName();

  // Where to start: after the last acknowledged key of a keyed table, else at the beginning.
  mysql::Key after;
  bool resumed = false;
  {
    std::lock_guard lock(shared_.mu);
    TableSnapshot& p = job.progress;
    if (keyed && p.state == TableSnapshot::State::kCopying && !p.last_key.empty()) {
      auto key = mysql::KeyFromJson(p.last_key);
      if (!key.ok()) return std::move(key.error().AddContext("snapshot progress of " + table_name));
      after = std::move(key).value();
      resumed = true;
    } else {
      p.last_key.clear();
      p.rows_copied = 0;
    }
  }

  if (job.writer_schema.columns.size() < job.schema.columns.size()) {
    return Error(ErrorKind::kInternal,
                 "snapshot of " + table_name + ": the destination layout has fewer columns (" +
                     std::to_string(job.writer_schema.columns.size()) + ") than the source (" +
                     std::to_string(job.schema.columns.size()) + ")");
  }
  // Each writer is given the room a chunk is expected to take (at most batch.max_bytes, the bound
  // chunks are sized by): growing a buffer of tens of MB by doubling copies it each time into
  // fresh memory, and the page faults of that were a tenth of the copy's CPU on wide rows.
  const uint64_t expected_rows = job.row_estimate > 0 ? std::min(job.row_estimate, rows_per_chunk) : 0;
  const uint64_t room_cap =
      options.chunk_max_bytes > 0 ? std::min(options.chunk_max_bytes, kMaxWriterRoom) : kMaxWriterRoom;
  const uint64_t expected_bytes = std::min(expected_rows * job.avg_row_bytes, room_cap);
  std::vector<TableWriter> writers;
  for (int i = 0; i < 2; ++i) {
    auto w = TableWriter::Create(job.writer_schema, job.caps.value_or(options.caps), job.target,
                                 job.writer_options);
    if (!w.ok()) return std::move(w.error().AddContext("snapshot of " + table_name));
    w->Reserve(expected_bytes);
    writers.push_back(std::move(w).value());
  }
  const size_t source_columns = job.schema.columns.size();
  const size_t kept_columns = job.writer_schema.columns.size() - source_columns;
  std::vector<clickhouse::MappedType> types(writers[0].types().begin(),
                                            writers[0].types().begin() + static_cast<long>(source_columns));
  CHSYNC_ASSIGN_OR_RETURN(RowConverter converter, RowConverter::Create(job.schema, std::move(types)));
  CHSYNC_RETURN_IF_ERROR(EnsureConnections());

  auto reader_or = mysql::SnapshotReader::Open(*source_, query);
  if (!reader_or.ok() && reader_or.error().kind() == ErrorKind::kNetwork) {
    CHSYNC_RETURN_IF_ERROR(OpenSource());
    reader_or = mysql::SnapshotReader::Open(*source_, query);
  }
  if (!reader_or.ok()) return std::move(reader_or.error().AddContext("snapshot of " + table_name));
  std::unique_ptr<mysql::SnapshotReader> reader = std::move(reader_or).value();

  uint64_t rows_before = 0;
  {
    std::lock_guard lock(shared_.mu);
    rows_before = job.progress.rows_copied;
  }
  shared_.progress.Started(index, rows_before, resumed);

  Handoff handoff({&writers[0], &writers[1]});
  std::optional<Error> insert_error;
  std::thread inserter([&] { InsertLoop(index, keyed, handoff, insert_error); });

  // The writer being filled; rows of a keyless table are handed off every chunk_rows rows.
  TableWriter* current = nullptr;
  bool halted_in_pass = false;  // keyless pass cut short by a stop or a failure elsewhere
  std::vector<clickhouse::Cell> cells;
  cells.reserve(job.writer_schema.columns.size());
  const mysql::RowCallback on_row = [&](const std::vector<binlog::Value>& row) -> Status {
    if (!keyed && current->rows() >= chunk_rows) {
      handoff.Submit(Batch{current, {}, {}, false});
      current = nullptr;
      if (shared_.Halted()) {
        halted_in_pass = true;
        return Error(ErrorKind::kInternal, "snapshot halted");
      }
      current = handoff.Acquire();
      if (current == nullptr) return Error(ErrorKind::kInternal, "the insert failed");
    }
    CHSYNC_RETURN_IF_ERROR(converter.Convert(row, ValueOrigin::kSnapshot, cells));
    for (size_t i = 0; i < kept_columns; ++i) cells.emplace_back(clickhouse::NullCell{});
    return current->Append(cells, /*version=*/0, /*is_deleted=*/false);
  };

  // Reads one chunk into `current`, reopening a lost source connection and reading the chunk
  // again (into a fresh writer: the partial rows are dropped).
  using Chunk = mysql::SnapshotReader::Chunk;
  auto read_chunk = [&]() -> Result<Chunk> {
    std::chrono::milliseconds backoff = kSourceBackoff;
    for (int attempt = 1;; ++attempt) {
      Result<Chunk> chunk = reader != nullptr
                                ? reader->ReadChunk(after, on_row)
                                : Result<Chunk>(Error(ErrorKind::kNetwork, "no source connection"));
      if (chunk.ok() || halted_in_pass || attempt >= kSourceAttempts ||
          !SourceLost(chunk.error(), source_.get())) {
        return chunk;
      }
      log::Warn("{}: lost the source connection ({}); reading again in {} ms (attempt {} of {})",
                ChunkContext(job, keyed, after), chunk.error().message(), backoff.count(), attempt + 1,
                kSourceAttempts);
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, kSourceMaxBackoff);
      if (!keyed) {
        // The pass starts over: wait for the chunks already handed off, then count afresh.
        if (current != nullptr) handoff.Release(current);
        current = nullptr;
        if (!handoff.Drain()) return Error(ErrorKind::kInternal, "the insert failed");
        std::lock_guard lock(shared_.mu);
        job.progress.rows_copied = 0;
        shared_.progress.Copied(index, 0);
        Metrics().SetSnapshotRows(job.schema.QualifiedName(), 0);
      }
      if (current == nullptr) {
        current = handoff.Acquire();
        if (current == nullptr) return Error(ErrorKind::kInternal, "the insert failed");
      }
      // Drop the partial chunk.
      auto fresh = TableWriter::Create(job.writer_schema, job.caps.value_or(options.caps), job.target,
                                       job.writer_options);
      if (!fresh.ok()) return std::move(fresh).error();
      *current = std::move(fresh).value();
      reader.reset();
      source_.reset();
      auto conn = mysql::Connection::Open(options.source);
      if (!conn.ok()) {
        if (conn.error().kind() != ErrorKind::kNetwork) return std::move(conn).error();
        continue;  // still unreachable: a failed attempt
      }
      source_ = std::move(conn).value();
      CHSYNC_RETURN_IF_ERROR(source_->Execute("SET SESSION net_write_timeout = 3600"));
      auto r = mysql::SnapshotReader::Open(*source_, query);
      if (!r.ok()) {
        if (r.error().kind() != ErrorKind::kNetwork) return std::move(r).error();
        continue;
      }
      reader = std::move(r).value();
    }
  };

  std::optional<Error> read_error;
  bool complete = false;
  while (!shared_.Halted()) {
    const auto wait_start = std::chrono::steady_clock::now();
    current = handoff.Acquire();
    if (current == nullptr) break;  // the inserter failed; its error is reported below
    if (shared_.Halted()) {         // while waiting for a writer
      handoff.Release(current);
      current = nullptr;
      break;
    }
    mysql::Key start_key = after;
    DelayPoint("snapshot.chunk");  // tests: a schema change lands between two chunks
    const auto read_start = std::chrono::steady_clock::now();
    Result<Chunk> chunk = read_chunk();
    if (log::GetLevel() <= log::Level::kDebug) {
      auto ms = [](auto d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
      log::Debug("snapshot of {}: read {} rows in {} ms after waiting {} ms for the inserter", table_name,
                 chunk.ok() ? chunk->rows : 0, ms(std::chrono::steady_clock::now() - read_start),
                 ms(read_start - wait_start));
    }
    if (!chunk.ok()) {
      if (current != nullptr) handoff.Release(current);
      current = nullptr;
      if (!halted_in_pass) {
        Error e = std::move(chunk).error();
        read_error = std::move(e.AddContext(ChunkContext(job, keyed, start_key)));
      }
      break;
    }
    if (!chunk->last_key.empty()) after = chunk->last_key;
    handoff.Submit(Batch{current, std::move(start_key), std::move(chunk->last_key), chunk->last});
    current = nullptr;
    if (chunk->last) {
      complete = true;
      break;
    }
  }
  handoff.Close();
  inserter.join();

  // An insert failure makes the reader stop too (with an error of its own): report the cause.
  if (insert_error) return std::move(*insert_error);
  if (read_error) return std::move(*read_error);
  if (!complete || shared_.failed.load()) shared_.progress.Interrupted(index);
  return Status::Ok();
}

}  // namespace

uint64_t ChunkRowsFor(uint64_t chunk_rows, uint64_t chunk_max_bytes, uint64_t avg_row_bytes) {
  chunk_rows = std::max<uint64_t>(chunk_rows, 1);
  if (chunk_max_bytes == 0 || avg_row_bytes == 0) return chunk_rows;
  return std::clamp<uint64_t>(chunk_max_bytes / avg_row_bytes, 1, chunk_rows);
}

Status RunSnapshot(std::vector<SnapshotJob>& jobs, const SnapshotOptions& options, const ChunkDone& on_chunk,
                   const std::atomic<bool>& stop) {
  SnapshotProgress progress(options.terminal, options.log_interval);
  Shared shared(jobs, options, on_chunk, stop, progress);
  for (size_t i = 0; i < jobs.size(); ++i) {
    progress.AddTable(jobs[i].schema.QualifiedName(), jobs[i].row_estimate);
    Metrics().SetSnapshotRows(jobs[i].schema.QualifiedName(), jobs[i].progress.rows_copied,
                              jobs[i].row_estimate);
    if (jobs[i].progress.state != TableSnapshot::State::kDone) shared.pending.push_back(i);
  }
  if (shared.pending.empty()) return Status::Ok();

  const size_t workers = std::clamp<size_t>(options.parallelism, 1, shared.pending.size());
  std::mutex done_mu;
  std::condition_variable done_cv;
  size_t running = workers;
  std::vector<std::thread> threads;
  threads.reserve(workers);
  for (size_t i = 0; i < workers; ++i) {
    threads.emplace_back([&] {
      Worker(shared).Run();
      std::lock_guard lock(done_mu);
      --running;
      done_cv.notify_all();
    });
  }
  {
    std::unique_lock lock(done_mu);
    while (running > 0) {
      done_cv.wait_for(lock, progress.tick_interval());
      lock.unlock();
      progress.Tick();
      lock.lock();
    }
  }
  for (std::thread& t : threads) t.join();
  progress.Summary();

  std::lock_guard lock(shared.mu);
  if (shared.first_error) return std::move(*shared.first_error);
  return Status::Ok();
}

}  // namespace chsync::pipe
