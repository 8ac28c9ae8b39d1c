#pragma once

// Where a pipe that copies nothing (snapshot.mode never) begins to stream, and whether it may begin
// there (docs/configuration.md, "Start modes").
//
// A start in the past needs the tables' schemas as they were then, but chsync reads only today's:
// they are right only if no statement between the start and now changed a replicated table. So
// the binlog from the start to now is read, and a statement that changes a selected table refuses
// the start (SchemaChangeAfter), naming the statement, its position and what to do.
//
// A start_time is found in the binlog's own event timestamps (whole seconds, UTC): the file to read
// is the last one that began at or before the time (FileToScan, a binary search over the files'
// first events), and the start is the first transaction that begins at or after it
// (FirstBoundaryAtOrAfter). Both decisions are pure functions; the functions below them read the
// source.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "binlog/event.h"
#include "common/result.h"
#include "mysql/binlog_stream.h"
#include "mysql/connection.h"

namespace chsync::pipe {

/// One event of a binlog as the time lookup sees it.
struct EventStamp {
  int64_t timestamp = 0;  ///< the event header's, seconds since the epoch
  std::string file;
  uint64_t position = 0;
  /// A transaction (or a statement outside one) begins here: a place a stream may start from.
  bool boundary = false;
};

/// The first event of `events` (in binlog order) that is a boundary with a timestamp at or after
/// `time`; nullopt when there is none.
std::optional<EventStamp> FirstBoundaryAtOrAfter(const std::vector<EventStamp>& events, int64_t time);

/// Of `count` binlog files in order, whose first event's timestamp `start_of(i)` gives, the one a
/// lookup of `time` reads first: the last that began at or before `time` (found by binary search,
/// so `start_of` is called about log2(count) times). nullopt when the first file began after
/// `time` (the binlog no longer holds what came before it), or there is no file.
Result<std::optional<size_t>> FileToScan(size_t count, const std::function<Result<int64_t>(size_t)>& start_of,
                                         int64_t time);

/// Whether `event` begins a transaction or a statement outside one, given whether the event before
/// it was a GTID event (then its BEGIN does not: the GTID event did).
bool BeginsTransaction(const binlog::Event& event, bool after_gtid);

/// Whether an event at a stream's first position is one a stream may start from: a transaction's
/// first event, or one outside every transaction (a file's format description, Rotate, Gtid_list…);
/// not a table map, rows, Xid, COMMIT or any other event inside a transaction.
bool MayStartAt(const binlog::Event& event);

/// Which table, as "db.table", the statement `sql` (run with current database `database`) changes
/// the schema of among those `selected` keeps (CREATE, ALTER, DROP, RENAME, CREATE/DROP INDEX);
/// nullopt when it changes none (BEGIN, COMMIT, XA, TRUNCATE, statements on other tables). A
/// statement that cannot be parsed is a kCorrupt error: chsync cannot tell what it changed.
using TableSelected = std::function<bool(std::string_view database, std::string_view table)>;
Result<std::optional<std::string>> SelectedTableChanged(std::string_view sql, std::string_view database,
                                                        const TableSelected& selected);

/// Whether `sql` may name one of the tables `names` (case-insensitive, anywhere in its text): a
/// statement chsync cannot parse changes a replicated table only if it names one.
bool MayNameTable(std::string_view sql, const std::vector<std::string>& names);

/// Opens a dump connection to the source (checked to be the server read).
using DumpOpener = std::function<Result<std::unique_ptr<mysql::Connection>>()>;

/// A statement in the binlog that changed a selected table.
struct FoundSchemaChange {
  std::string statement;
  std::string table;     ///< "db.table"
  std::string position;  ///< "binlog.000003:1234"
  std::string gtid;      ///< its GTID ("0-1-42", "uuid:42"); "" without GTIDs
};

/// Reads the binlog from `from` (a position; its first event must be one MayStartAt accepts, else
/// kConfig) up to `to`, as replica `server_id`, and returns the first statement that changes the
/// schema of a table `selected` keeps, or nullopt. A statement that cannot be parsed counts as one
/// when it names one of `names` (the selected tables' names; MayNameTable).
Result<std::optional<FoundSchemaChange>> SchemaChangeAfter(const DumpOpener& open, uint32_t server_id,
                                                           const mysql::BinlogCoordinate& from,
                                                           const mysql::BinlogCoordinate& to,
                                                           const TableSelected& selected,
                                                           const std::vector<std::string>& names);

/// The binlog files of the server `conn` reaches (SHOW BINARY LOGS, oldest first) and their sizes.
struct BinlogFileSize {
  std::string file;
  uint64_t size = 0;
};
Result<std::vector<BinlogFileSize>> ListBinlogFiles(mysql::Connection& conn);

/// The first transaction at or after `time` (seconds since the epoch) in the source's binlog,
/// found by reading its event timestamps: a file's start by FileToScan, then that file and the
/// later ones event by event up to `end` (the binlog's end now). nullopt when none began at or
/// after `time` before `end`. kConfig when the binlog's oldest file began after `time`.
Result<std::optional<mysql::BinlogCoordinate>> FindStartByTime(const DumpOpener& open, uint32_t server_id,
                                                               const std::vector<BinlogFileSize>& files,
                                                               const mysql::BinlogCoordinate& end,
                                                               int64_t time);

/// "2024-05-01 12:00:00 UTC".
std::string UtcText(int64_t seconds);

}  // namespace chsync::pipe
