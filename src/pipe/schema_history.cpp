// The history of applied schema changes (schema_history.h).

#include "pipe/schema_history.h"

#include <fmt/format.h>

#include "clickhouse/sql_quoting.h"
#include "common/log.h"
#include "metrics/pipe_metrics.h"
#include "pipe/clock.h"

namespace chsync::pipe {
namespace {

constexpr size_t kMaxSchemaChangeRecords = 100;

}  // namespace

void SchemaHistory::Record(const std::string& key, const std::string& database, const std::string& position,
                           const std::string& statement, const std::vector<std::string>& lines,
                           std::string_view action) {
  if (!action.empty()) Metrics().NoteSchemaChange(SchemaChangeKind(statement), action);
  SchemaChangeRecord record;
  record.at_ms = NowMs();
  record.position = position;
  record.table = key;
  record.statement = statement.substr(0, 1000);
  for (const std::string& line : lines) {
    log::Info("{} at {}: {}", key, position, line);
    record.actions.push_back(line);
  }
  Append(database, record);
  status_.schema_changes.push_back(std::move(record));
  if (status_.schema_changes.size() > kMaxSchemaChangeRecords) {
    status_.schema_changes.erase(status_.schema_changes.begin());
  }
  PublishRunStatus(status_);
}

void SchemaHistory::Append(const std::string& database, const SchemaChangeRecord& record) {
  using clickhouse::QuoteIdentifier;
  using clickhouse::QuoteString;
  std::string table = QuoteIdentifier(database) + "." + QuoteIdentifier(kSchemaLogTable);
  if (Status created = destination_.EnsureSchemaLog(database); !created.ok()) {
    log::Warn("cannot create {}: {}", table, created.error().message());
    return;
  }
  std::string actions;
  for (const std::string& action : record.actions)
    actions += (actions.empty() ? "" : ", ") + QuoteString(action);
  Status inserted = destination_.connection().Execute(fmt::format(
      "INSERT INTO {} (`at`, `position`, `table`, `statement`, `actions`) VALUES ({}, {}, {}, {}, [{}])",
      table,
      destination_.caps().datetime64 ? fmt::format("fromUnixTimestamp64Milli(toInt64({}))", record.at_ms)
                                     : fmt::format("toDateTime({})", record.at_ms / 1000),
      QuoteString(record.position), QuoteString(record.table), QuoteString(record.statement), actions));
  if (!inserted.ok())
    log::Warn("cannot record the schema change in {}: {}", table, inserted.error().message());
}

}  // namespace chsync::pipe
