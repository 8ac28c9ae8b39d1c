#pragma once

// The replicated tables while the pipe runs: each one's destination, writer, converter, key, hold
// and rebuild, by "db.t", and the lookup by TABLE_MAP that the stream asks for every rows event.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "binlog/event.h"
#include "clickhouse/table_writer.h"
#include "common/result.h"
#include "metrics/pipe_metrics.h"
#include "pipe/row_converter.h"
#include "policy/row_filter.h"
#include "state/checkpoint.h"

namespace chsync::pipe {

/// A table being rebuilt online: a snapshot thread copies the source table into
/// state.temp_table while the stream writes the table's changes there too.
struct Rebuilder {
  ~Rebuilder();
  /// Stops the copy (it finishes its current chunk) and waits for the thread.
  void Stop();

  std::mutex mutex;
  RebuildState state;  ///< progress: guarded by mutex
  std::atomic<bool> stop{false};
  std::atomic<bool> finished{false};
  Status result;  ///< the copy's outcome, once finished
  std::thread thread;
};

/// One replicated table while the pipe runs.
struct TableState {
  DestinationTable dest;
  std::optional<clickhouse::TableWriter> writer;
  /// table_options' `history: true`: the writer of `<dest_table>_history` (pipe/history.h), whose
  /// rows go out and are acknowledged with the writer's, before any checkpoint after them.
  std::optional<clickhouse::TableWriter> history;
  std::optional<RowConverter> converter;
  /// The table's row filter (table_options' where:, over dest.source's columns): only the images it
  /// passes are replicated. `filter_error`: the filter no longer parses against the table (a column
  /// it names was dropped or renamed at the source): the stream parks the table at its next row.
  std::optional<RowFilter> filter;
  std::optional<Error> filter_error;
  /// Sorting key columns as indexes into dest.source.columns; empty with a full-row key.
  std::vector<int> key_indexes;
  bool full_row = false;
  /// table_options' `deletes: ignore` (append-only): a DELETE writes nothing (set by RebuildWriter).
  bool ignore_deletes = false;
  /// A table shared with other sources (table_options' source_column): the source value its rows
  /// carry and the types the shared table has (pipe/fan_in.h; set by RebuildWriter). Default: none.
  clickhouse::WriterOptions shared;
  /// See TableSnapshot::stream_from.
  std::optional<SourcePosition> stream_from;
  /// The TABLE_MAP the current column mapping was built from (kept alive so that its address
  /// identifies it), and for each source column the index of its value in that map's rows.
  std::shared_ptr<const binlog::TableMap> table_map;
  std::vector<uint32_t> map_index;
  /// Set while the table is rebuilt online: the writer then writes into the rebuild's table.
  std::unique_ptr<Rebuilder> rebuild;
  /// Set while the table is parked or paused: its binlog changes are not applied.
  std::optional<HeldTable> held;
  /// The row changes in the writer (counted once ClickHouse acknowledged their INSERT), and the
  /// table's counters (set by RebuildWriter).
  PendingRowChanges changes;
};

/// The replicated tables by "db.t": a std::map that counts its erasures, so that a lookup cache
/// (Find) knows when an iterator it kept may have gone. Inserting invalidates no map
/// iterator; erasing and clearing count.
class TableStates {
 public:
  using Map = std::map<std::string, std::unique_ptr<TableState>, std::less<>>;
  using iterator = Map::iterator;
  using const_iterator = Map::const_iterator;

  iterator begin() { return map_.begin(); }
  iterator end() { return map_.end(); }
  const_iterator begin() const { return map_.begin(); }
  const_iterator end() const { return map_.end(); }
  iterator find(std::string_view key) { return map_.find(key); }
  const_iterator find(std::string_view key) const { return map_.find(key); }
  bool contains(std::string_view key) const { return map_.contains(key); }
  const std::unique_ptr<TableState>& at(const std::string& key) const { return map_.at(key); }
  size_t size() const { return map_.size(); }
  bool empty() const { return map_.empty(); }
  std::unique_ptr<TableState>& operator[](const std::string& key) { return map_[key]; }
  iterator erase(iterator it) {
    ++erasures_;
    return map_.erase(it);
  }
  size_t erase(const std::string& key) {
    ++erasures_;
    return map_.erase(key);
  }
  void clear() {
    ++erasures_;
    map_.clear();
  }
  uint64_t erasures() const { return erasures_; }

  /// The entry for `database`.`table`, or end(), without allocating.
  iterator Find(std::string_view database, std::string_view table);
  /// The entry for the table of `map`, or end(). Asked two or three times per rows event (the
  /// decoder's decode_rows_of, the stream's rows handling). The entries found for a map that
  /// `keep` holds (so that an address names one map) are remembered, the last kFoundMaps, until an
  /// erasure (the decoder hands out a repeated TABLE_MAP as the same object).
  iterator Find(const binlog::TableMap& map, const std::shared_ptr<const binlog::TableMap>& keep = nullptr);

 private:
  Map map_;
  uint64_t erasures_ = 0;

  std::string key_scratch_;  ///< Find's key
  static constexpr size_t kFoundMaps = 16;
  struct FoundTable {
    std::shared_ptr<const binlog::TableMap> map;
    iterator table;
  };
  std::vector<FoundTable> found_;
  size_t found_next_ = 0;  ///< the entry replaced next
  uint64_t found_erasures_ = 0;
};

}  // namespace chsync::pipe
