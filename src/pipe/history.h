#pragma once

// table_options' `history: true` (docs/mapping.md): beside a replicated table's ClickHouse table,
// the table `<dest_table>_history`, which receives every row change the stream applies to it —
// its kind, row version, binlog coordinate, GTID and commit time — and keeps it.

#include <string>
#include <string_view>

#include "clickhouse/capabilities.h"
#include "clickhouse/ddl.h"
#include "common/result.h"
#include "pipe/destination.h"
#include "pipe/live_tables.h"
#include "policy/ddl_policy.h"
#include "schema/table_schema.h"

namespace chsync::pipe {

inline constexpr std::string_view kHistorySuffix = "_history";
/// The history table's metadata columns, after the table's own: the kind of change (one of the
/// kChange* texts), the binlog coordinate of the rows event ("file:position"), the transaction's
/// GTID ("" without GTIDs) and the rows event's timestamp. _chsync_version (the version the main
/// table's row gets) and _chsync_is_deleted (always 0) follow, as in every chsync table.
inline constexpr std::string_view kChangeColumn = "_chsync_change";
inline constexpr std::string_view kBinlogColumn = "_chsync_binlog";
inline constexpr std::string_view kGtidColumn = "_chsync_gtid";
inline constexpr std::string_view kCommitTimeColumn = "_chsync_commit_time";
inline constexpr size_t kHistoryMetadataColumns = 4;

inline constexpr std::string_view kChangeInsert = "insert";
inline constexpr std::string_view kChangeUpdateBefore = "update_before";
inline constexpr std::string_view kChangeUpdateAfter = "update_after";
inline constexpr std::string_view kChangeDelete = "delete";

/// The history table of a ClickHouse table `table`: "`table`_history".
std::string HistoryTableName(std::string_view table);

/// What the history table of `dest` is made of: `create`, the schema CreateTable takes (the source
/// columns under their source names, then the metadata columns) with `options` (the ClickHouse
/// names of renamed columns, ORDER BY the main table's sorting key, _chsync_version and
/// _chsync_change); `writer`, the same columns under their ClickHouse names, for its TableWriter.
/// Columns dropped at the source (kept_columns) are not written: the history table keeps them.
struct HistoryLayout {
  schema::TableSchema create;
  clickhouse::CreateOptions options;
  schema::TableSchema writer;
};
Result<HistoryLayout> LayoutHistory(const DestinationTable& dest, std::string_view table,
                                    const clickhouse::Capabilities& caps,
                                    const clickhouse::DdlTarget& target);

/// Creates the history table when it is missing, and adds the columns it lacks and changes the type
/// of those whose type differs from `layout`'s (a column the table has beyond them — dropped at the
/// source — stays, with its values). Each statement is safe to repeat. kUnsupported on a cluster
/// (target.cluster): the history table is for one server or an embedded store.
Status EnsureHistoryTable(Destination& destination, const clickhouse::DdlTarget& target,
                          const HistoryLayout& layout);

/// RENAME COLUMN `from` TO `to` in history table `table`, when it has `from` and lacks `to` (a
/// replay finds it done); nothing on a server without RENAME COLUMN.
Status RenameHistoryColumn(Destination& destination, const clickhouse::DdlTarget& target,
                           std::string_view table, const std::string& from, const std::string& to);

/// Sets table.history, the writer of the history table of `table` (ClickHouse table `dest_table`
/// at `target`), after EnsureHistoryTable; resets it when `history` is false.
Status SetUpHistory(TableState& table, bool history, Destination& destination,
                    const clickhouse::DdlTarget& target, std::string_view dest_table);

}  // namespace chsync::pipe
