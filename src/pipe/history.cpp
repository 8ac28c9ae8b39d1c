#include "pipe/history.h"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "clickhouse/sql_quoting.h"
#include "common/log.h"

namespace chsync::pipe {
namespace {

using clickhouse::QualifiedName;
using clickhouse::QuoteIdentifier;
using clickhouse::QuoteString;

schema::Column TextColumn(std::string_view name) {
  schema::Column c;
  c.name = std::string(name);
  c.type = schema::ColumnType::kVarChar;
  c.type_spelling = "varchar";
  c.length = 255;
  c.charset = "utf8mb4";
  c.nullable = false;
  return c;
}

schema::Column TimeColumn(std::string_view name) {
  schema::Column c;
  c.name = std::string(name);
  c.type = schema::ColumnType::kTimestamp;
  c.type_spelling = "timestamp";
  c.fsp = 0;
  c.nullable = false;
  return c;
}

std::string WithoutSpaces(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c != ' ') out += c;
  }
  return out;
}

}  // namespace

std::string HistoryTableName(std::string_view table) {
  return std::string(table) + std::string(kHistorySuffix);
}

Result<HistoryLayout> LayoutHistory(const DestinationTable& dest, std::string_view table,
                                    const clickhouse::Capabilities& caps,
                                    const clickhouse::DdlTarget& target) {
  HistoryLayout out;
  out.options.table = HistoryTableName(table);
  for (const schema::Column& c : dest.source.columns) {
    std::string name = dest.ClickHouseName(c.name);
    if (name != c.name) out.options.column_names.emplace_back(c.name, std::move(name));
  }
  // The main table's sorting key as CreateTable writes it (Nullable columns as isNull, assumeNotNull).
  schema::TableSchema source = dest.source;
  clickhouse::CreateOptions main_options = out.options;
  main_options.table = std::string(table);
  CHSYNC_ASSIGN_OR_RETURN(clickhouse::TableLayout main,
                          clickhouse::DestinationLayout(source, caps, target, main_options));
  out.options.order_by = main.order_by;
  out.options.order_by.push_back(QuoteIdentifier(clickhouse::kVersionColumn));
  out.options.order_by.push_back(QuoteIdentifier(kChangeColumn));

  out.create = std::move(source);
  out.create.name = out.options.table;
  out.create.columns.push_back(TextColumn(kChangeColumn));
  out.create.columns.push_back(TextColumn(kBinlogColumn));
  out.create.columns.push_back(TextColumn(kGtidColumn));
  out.create.columns.push_back(TimeColumn(kCommitTimeColumn));
  out.create.RenumberColumns();
  out.writer = out.create;
  for (schema::Column& c : out.writer.columns) c.name = dest.ClickHouseName(c.name);
  return out;
}

Status EnsureHistoryTable(Destination& destination, const clickhouse::DdlTarget& target,
                          const HistoryLayout& layout) {
  const std::string& table = layout.options.table;
  const std::string qualified = QualifiedName(target.StorageDatabase(), table);
  if (!target.cluster.empty()) {
    return Error(ErrorKind::kUnsupported,
                 "history: true is not supported on a cluster (dest_cluster " + target.cluster +
                     "): the history table " + qualified +
                     " would need a replicated table of its own; take history out of table_options");
  }
  CHSYNC_ASSIGN_OR_RETURN(std::string create,
                          clickhouse::CreateTable(layout.create, destination.caps(), target, layout.options));
  CHSYNC_RETURN_IF_ERROR(destination.Ddl(create));
  CHSYNC_ASSIGN_OR_RETURN(
      clickhouse::TableLayout wanted,
      clickhouse::DestinationLayout(layout.create, destination.caps(), target, layout.options));
  CHSYNC_ASSIGN_OR_RETURN(
      std::string text, destination.connection().Query(
                            "SELECT name, type FROM system.columns WHERE database = " +
                                QuoteString(target.StorageDatabase()) + " AND table = " + QuoteString(table),
                            "TabSeparatedRaw"));
  std::map<std::string, std::string> has;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    if (size_t tab = line.find('\t'); tab != std::string_view::npos)
      has.emplace(std::string(line.substr(0, tab)), std::string(line.substr(tab + 1)));
    start = end + 1;
  }
  for (const clickhouse::TableLayout::Column& c : wanted.columns) {
    auto it = has.find(c.name);
    std::string sql;
    if (it == has.end()) {
      sql = fmt::format("ALTER TABLE {} ADD COLUMN {} {}{}", qualified, QuoteIdentifier(c.name), c.type,
                        c.default_expression.empty() ? "" : " DEFAULT " + c.default_expression);
    } else if (WithoutSpaces(it->second) != WithoutSpaces(c.type)) {
      sql = fmt::format("ALTER TABLE {} MODIFY COLUMN {} {}", qualified, QuoteIdentifier(c.name), c.type);
    } else {
      continue;
    }
    log::Info("history table {}: {}", qualified, sql);
    CHSYNC_RETURN_IF_ERROR(destination.Ddl(sql));
  }
  return Status::Ok();
}

Status RenameHistoryColumn(Destination& destination, const clickhouse::DdlTarget& target,
                           std::string_view table, const std::string& from, const std::string& to) {
  if (!destination.caps().rename_column || from == to) return Status::Ok();
  CHSYNC_ASSIGN_OR_RETURN(
      std::string found,
      destination.connection().Query(
          "SELECT countIf(name = " + QuoteString(from) + "), countIf(name = " + QuoteString(to) +
          ") FROM system.columns WHERE database = " + QuoteString(target.StorageDatabase()) +
          " AND table = " + QuoteString(table)));
  if (found.rfind("1\t0", 0) != 0) return Status::Ok();  // done already, or nothing to rename
  CHSYNC_ASSIGN_OR_RETURN(std::string sql,
                          clickhouse::RenameColumn(table, from, to, destination.caps(), target));
  return destination.Ddl(sql);
}

Status SetUpHistory(TableState& table, bool history, Destination& destination,
                    const clickhouse::DdlTarget& target, std::string_view dest_table) {
  table.history.reset();
  if (!history) return Status::Ok();
  CHSYNC_ASSIGN_OR_RETURN(HistoryLayout layout,
                          LayoutHistory(table.dest, dest_table, destination.caps(), target));
  CHSYNC_RETURN_IF_ERROR(EnsureHistoryTable(destination, target, layout));
  CHSYNC_ASSIGN_OR_RETURN(clickhouse::TableWriter writer,
                          clickhouse::TableWriter::Create(layout.writer, destination.caps(), target));
  table.history.emplace(std::move(writer));
  return Status::Ok();
}

}  // namespace chsync::pipe
