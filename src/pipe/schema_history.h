#pragma once

// The history of the schema changes the pipe applied: each one counted in the metrics under its
// statement's kind, logged, kept (the last 100) in the run status for `chsync status` and the
// status page, and appended to `_chsync_schema_log` in the ClickHouse database it concerns.

#include <string>
#include <string_view>
#include <vector>

#include "pipe/destination.h"
#include "state/run_status.h"

namespace chsync::pipe {

class SchemaHistory {
 public:
  /// `status` and `destination` outlive this object.
  SchemaHistory(RunStatus& status, Destination& destination) : status_(status), destination_(destination) {}

  /// Records a schema change of table `key` at `position` ("binlog.000003:1234"), `lines` being
  /// what was done; `action` (SchemaChangeAction) counts it in the metrics under the statement's
  /// kind ("": not counted, e.g. a rebuild that finished). The run status is published.
  void Record(const std::string& key, const std::string& database, const std::string& position,
              const std::string& statement, const std::vector<std::string>& lines, std::string_view action);

 private:
  /// Appends `record` to `_chsync_schema_log` in `database` (created on first use). A failure is
  /// logged, not fatal: the history is also in `chsync status` and the log.
  void Append(const std::string& database, const SchemaChangeRecord& record);

  RunStatus& status_;
  Destination& destination_;
};

}  // namespace chsync::pipe
