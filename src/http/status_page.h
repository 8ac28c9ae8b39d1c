#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace chsync::http {

/// One sample of a chart's series.
struct Point {
  uint64_t unix_ms = 0;
  double value = 0;
};

/// A row of the tables' table.
struct TableRow {
  std::string name;   ///< "db.table"
  std::string state;  ///< streaming, snapshot, parked, paused, resyncing, failed…
  uint64_t rows_applied = 0;
  uint64_t snapshot_copied = 0;
  uint64_t snapshot_estimated = 0;  ///< 0: unknown
  /// Source tables that go to this ClickHouse table (`state` is then the most urgent of theirs);
  /// 0 or 1: the row is one table.
  uint64_t sources = 0;
};

/// A source table's state (LiveTable) by urgency: parked, paused, failed first, then tables being
/// copied, streaming, and the ones no longer applied; lower is more urgent. Status pages list the
/// tables in this order and a ClickHouse table with several sources shows the most urgent.
int TableStateRank(std::string_view state);

/// One entry of the schema-change log.
struct SchemaChangeRow {
  uint64_t at_ms = 0;
  std::string position;  ///< binlog position of the statement
  std::string table;
  std::string statement;             ///< the source's DDL, as written
  std::vector<std::string> actions;  ///< what chsync did in ClickHouse
};

/// Everything the status page shows. Strings are untrusted (table names, statements and errors
/// come from the source) and are escaped. A NaN double means "unknown".
struct StatusPageData {
  std::string title = "chsync";  ///< the pipe's name
  std::string phase;             ///< snapshot, streaming, stopped, failed (others: a grey badge)
  std::string source;            ///< redacted URLs
  std::string destination;
  std::string position;
  std::string gtid_position;
  double lag_seconds = std::numeric_limits<double>::quiet_NaN();
  double seconds_since_last_event = std::numeric_limits<double>::quiet_NaN();
  uint64_t rows_applied = 0;
  uint64_t transactions = 0;
  uint64_t started_at_ms = 0;  ///< 0: unknown
  uint64_t updated_at_ms = 0;  ///< 0: unknown
  std::string last_error;      ///< empty: none
  /// The last hour, oldest first; older samples are not drawn. Row changes per second.
  std::vector<Point> lag_series;
  std::vector<Point> rate_series;
  std::vector<TableRow> tables;
  /// Source tables per state ("streaming", "parked", …), for the summary above the tables.
  std::vector<std::pair<std::string, uint64_t>> table_states;
  /// The parked and paused source tables (name and state), listed before every other table.
  std::vector<TableRow> held;
  /// Rows of each list before "… and N more" (the held tables, the tables).
  size_t max_table_rows = 50;
  std::vector<SchemaChangeRow> schema_changes;  ///< any order; shown newest first
  double retention_headroom_bytes = std::numeric_limits<double>::quiet_NaN();
  double retention_headroom_seconds = std::numeric_limits<double>::quiet_NaN();
  /// The page's "now", the right edge of the charts; 0: the system clock.
  uint64_t now_ms = 0;
};

/// A whole HTML5 page: header with the state badge, cards (lag, rows/s, rows applied, retention
/// headroom), SVG charts of the last hour, tables (the counts by state, the held tables, then the
/// tables most urgent first, each list cut after max_table_rows), schema changes and the last error. Self-
/// contained: inline CSS, SVG and a little JS (tooltips, local times, reload every 5 s); no URL
/// to anything outside the page. Pure: the same data renders the same page.
std::string RenderStatusPage(const StatusPageData& data);

/// `&<>"'` as entities: safe in text and in quoted attributes.
std::string HtmlEscape(std::string_view text);
/// 950, 1.2k, 34.5k, 123k, 1.2M, 3.4G; "–" for NaN.
std::string HumanCount(double value);
/// 512 B, 3.4 kB, 3.4 MB, 12 GB (powers of 1000); "–" for NaN.
std::string HumanBytes(double bytes);
/// 0.4 s, 45 s, 3 min 20 s, 2 h 5 min, 3 d 4 h; "–" for NaN.
std::string HumanDuration(double seconds);

}  // namespace chsync::http
