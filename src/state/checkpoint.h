#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace chsync::pipe {

/// Where replication resumes: the start of the first event not yet applied, always at a
/// transaction boundary.
struct SourcePosition {
  std::string file;       ///< binlog file name, e.g. "binlog.000042"
  uint64_t position = 0;  ///< byte offset in that file (64-bit: files may exceed 4 GiB)
  std::string gtid_set;   ///< MySQL GTID set or MariaDB GTID position at that point; may be empty
  /// How far row versions of `file` are shifted up at `position` by the compressed events before
  /// it (see row_version.h): part of the position, so that a replay from here numbers rows as the
  /// first pass did. 0 at the start of every file.
  uint64_t version_shift = 0;
  /// Added to `file`'s sequence number in row versions (row_version.h). 0 on the server a pipe
  /// started on; set when the pipe moved to another server (failover.cpp), whose binlog files are
  /// numbered apart, so that versions keep growing across the move.
  int64_t sequence_base = 0;

  bool operator==(const SourcePosition&) const = default;
};

/// How far the snapshot of one table got.
struct TableSnapshot {
  enum class State { kPending, kCopying, kDone };
  std::string database;
  std::string table;
  State state = State::kPending;
  /// Primary-key value of the last row of the last acknowledged chunk, as JSON text (an array of
  /// the key columns' values); empty before the first chunk.
  std::string last_key;
  uint64_t rows_copied = 0;
  /// Set when the table was (re)copied after streaming began (`chsync resync --table`): the
  /// binlog position recorded before that copy read its first row. The stream skips this table's
  /// events before it (the copy already holds their effect) and applies those after.
  std::optional<SourcePosition> stream_from;

  bool operator==(const TableSnapshot&) const = default;
};

/// What a destination table holds beyond its source table's tracked schema.
struct DestinationState {
  std::string table;  ///< "db.table" of the source table
  /// Columns dropped at the source and kept in ClickHouse (NULL in later rows), in drop order.
  std::vector<std::string> kept_columns;
  /// The DEFAULT expression each ClickHouse column was created or added with ("" for none).
  std::vector<std::pair<std::string, std::string>> defaults;
  /// Source column → ClickHouse column, for columns renamed at the source whose ClickHouse column
  /// kept its name (ClickHouse without RENAME COLUMN, key columns, rename_column=ignore).
  std::vector<std::pair<std::string, std::string>> clickhouse_names;
  /// ALIAS columns chsync added to ClickHouse under a renamed column's new name.
  std::vector<std::string> aliases;
  /// Source columns never replicated (exclude_columns), by their tracked names.
  std::vector<std::string> excluded;
  /// Where its rows are in ClickHouse (table_options' dest_database and dest_table, or the default
  /// names); empty in checkpoints older than these fields. A restart under table_options that place
  /// the table elsewhere moves the ClickHouse table there first.
  std::string clickhouse_database;
  std::string clickhouse_table;
  /// A table shared by several sources (table_options' source_column): the column, and the value
  /// this source's rows carry in it; empty otherwise. A restart under another value or column
  /// would leave its rows under the old one.
  std::string source_column;
  std::string source_value;

  bool operator==(const DestinationState&) const = default;
};

/// A table being rebuilt online: copied again into `temp_table` while the stream writes its
/// changes there too; swapped in for the ClickHouse table when the copy is done.
struct RebuildState {
  std::string database;  ///< the source table
  std::string table;
  std::string temp_table;  ///< ClickHouse table being filled (same destination database)
  /// The copy's progress (database/table as above).
  TableSnapshot progress;
  /// Position of the statement that started the rebuild, and why.
  std::string position;
  std::string reason;

  bool operator==(const RebuildState&) const = default;
};

/// The source server a pipe reads from: a file:position means nothing on another server.
struct SourceIdentity {
  uint32_t server_id = 0;
  std::string server_uuid;  ///< MySQL's @@server_uuid; empty on MariaDB, which has none
  /// host:port the pipe reached it at (for `chsync status`; not part of the identity's test).
  std::string address;

  bool SameServer(const SourceIdentity& other) const {
    return server_id == other.server_id && server_uuid == other.server_uuid;
  }

  bool operator==(const SourceIdentity&) const = default;
};

/// How rows were routed to the shards of the destination when they were written
/// (docs/clusters.md, "Routing is recorded"): a key's new versions meet its old ones on one shard
/// only while this stays the same.
struct Routing {
  std::string cluster;            ///< the --dest-cluster; empty for one server
  std::vector<uint32_t> weights;  ///< shard_weight per shard, in shard_num order; {1} for one shard
  /// How the servers print key values before hashing them (clickhouse::KeyStyleName); "" when the
  /// destination has one shard (nothing is hashed), "unknown" when no style of chsync's matched.
  std::string key_text;

  bool operator==(const Routing&) const = default;
};

/// "2 shards of cluster 'c' (weights 1, 1), keys printed as ClickHouse 21.9+ does" or "one server".
std::string DescribeRouting(const Routing& routing);
/// Why rows written under `saved` would not meet their new versions under `now` (both described);
/// none when they would. An unknown key text on either side compares equal (nothing to compare),
/// and so does any key text when no sharding key holds a value whose text changed between
/// ClickHouse versions (`key_text_matters` false: keys of integers and strings only).
std::optional<std::string> RoutingChange(const Routing& saved, const Routing& now,
                                         bool key_text_matters = true);

/// An XA transaction whose first phase (XA PREPARE) was read while its second (XA COMMIT or
/// XA ROLLBACK) was not yet: its rows wait in `rows_file` (in the state directory) and reach
/// ClickHouse at XA COMMIT only.
struct PendingXa {
  std::string xid;        ///< as the binlog prints it: X'61',X'',1
  std::string prepared;   ///< "binlog.000001:682", where its group began
  std::string rows_file;  ///< file name in the state directory (see xa_store.h)

  bool operator==(const PendingXa&) const = default;
};

/// A table whose binlog changes the stream does not apply (docs/table-control.md): parked by a
/// failure that concerns it alone (on_table_error=park), or paused by `chsync pause`. Its
/// ClickHouse table keeps the rows it had; `chsync resume` or `chsync resync --table` copies the
/// table again online, which also brings in every change it missed.
struct HeldTable {
  std::string table;      ///< "db.t" (the source table, as tracked)
  std::string state;      ///< "parked" or "paused"
  std::string reason;     ///< why, in a line
  std::string statement;  ///< the statement or row that failed ("" for a pause)
  std::string position;   ///< where the stream stopped applying it: "binlog.000003:1234"
  uint64_t at_ms = 0;     ///< when (wall clock, ms since the epoch)

  bool operator==(const HeldTable&) const = default;
};

/// A change of the table selection made while the pipe ran (`chsync tables add|remove`,
/// docs/table-control.md), kept on top of the configured `tables:`.
struct SelectionChange {
  std::string op;       ///< "add" or "remove"
  std::string pattern;  ///< DB.TABLE, wildcards * and ?
  uint64_t at_ms = 0;   ///< when it was carried out (wall clock, ms since the epoch)

  bool operator==(const SelectionChange&) const = default;
};

/// A table that left the selection: no longer applied; its ClickHouse table is kept as it was.
struct UnselectedTable {
  std::string table;             ///< "db.t" at the source
  std::string clickhouse_table;  ///< "db.t" in ClickHouse, kept
  std::string position;          ///< where the stream stopped applying it: "binlog.000003:1234"
  uint64_t at_ms = 0;

  bool operator==(const UnselectedTable&) const = default;
};

/// Everything a restart needs, saved only after ClickHouse acknowledged all it describes.
struct Checkpoint {
  /// The server the positions are on (unset in checkpoints older than this field).
  std::optional<SourceIdentity> source;
  /// Position from which streaming began (recorded before the snapshot read its first row).
  SourcePosition stream_start;
  /// Position to resume streaming from.
  SourcePosition resume;
  /// The tracked schemas as of `resume`, in schema::Tracker's text form.
  std::string schemas;
  std::vector<TableSnapshot> snapshot;
  /// What the destination tables hold beyond the tracked source schemas.
  std::vector<DestinationState> destinations;
  /// Tables being rebuilt online.
  std::vector<RebuildState> rebuilds;
  /// Prepared XA transactions not yet committed or rolled back as of `resume`.
  std::vector<PendingXa> pending_xa;
  /// Tables parked or paused (HeldTable).
  std::vector<HeldTable> held;
  /// Ids of the control requests (state/control.h) carried out, the most recent last (at most
  /// kMaxRequestsDone): saved with their effect, so that a request is carried out once.
  std::vector<std::string> requests_done;
  /// The table selection the tables below follow (Selection::Describe; empty in checkpoints older
  /// than this field): a restart under another selection adds and removes tables.
  std::string selection;
  /// The changes `chsync tables add|remove` made, in order.
  std::vector<SelectionChange> selection_changes;
  /// Tables that left the selection, whose ClickHouse table is kept.
  std::vector<UnselectedTable> unselected;
  /// How the rows in ClickHouse were routed to shards (unset in checkpoints older than this field).
  std::optional<Routing> routing;
  /// Wall-clock time of the save, milliseconds since the epoch (for `chsync status`).
  uint64_t saved_at_ms = 0;
  /// The copy of snapshot.mode only ended here: the tables equal the source at `stream_start` and
  /// nothing streams from this checkpoint (a run under another mode refuses it; `only` copies again).
  bool load_only = false;

  bool operator==(const Checkpoint&) const = default;
};

inline constexpr size_t kMaxRequestsDone = 100;

/// Serializes to the JSON document stored on disk (stable key order, format version 1).
std::string ToJson(const Checkpoint& checkpoint);
/// Parses ToJson's output; errors (kCorrupt) name the field.
Result<Checkpoint> FromJson(std::string_view json);

}  // namespace chsync::pipe
