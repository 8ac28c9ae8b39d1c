#include "state/run_status.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/redact.h"
#include "state/state_dir.h"

namespace chsync::pipe {

using nlohmann::ordered_json;

namespace {

std::vector<std::string> RedactAll(const std::vector<std::string>& texts) {
  std::vector<std::string> out;
  out.reserve(texts.size());
  for (const std::string& t : texts) out.push_back(Redact(t));
  return out;
}

}  // namespace

std::string RunStatusToJson(const RunStatus& s) {
  ordered_json changes = ordered_json::array();
  for (const SchemaChangeRecord& c : s.schema_changes) {
    changes.push_back(ordered_json{{"at_ms", c.at_ms},
                                   {"position", c.position},
                                   {"table", c.table},
                                   {"statement", Redact(c.statement)},
                                   {"actions", RedactAll(c.actions)}});
  }
  ordered_json j{{"phase", s.phase},
                 {"pid", s.pid},
                 {"updated_at_ms", s.updated_at_ms},
                 {"position", s.position},
                 {"gtid_position", s.gtid_position},
                 {"source", Redact(s.source)},
                 {"binlog_gap_resyncs", s.binlog_gap_resyncs},
                 {"last_event_time", s.last_event_time},
                 {"rows_applied", s.rows_applied},
                 {"transactions", s.transactions},
                 {"last_error", Redact(s.last_error)},  // messages: no password saved
                 {"destination", Redact(s.destination)},
                 {"schema_changes", std::move(changes)},
                 {"policies", s.policies},
                 {"cascades", s.cascades}};
  // Source text (statements, names) may hold any bytes: replace what is not UTF-8.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Result<RunStatus> RunStatusFromJson(std::string_view text) {
  ordered_json j = ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return Error(ErrorKind::kCorrupt, "status.json is not a JSON object");
  try {
    RunStatus s;
    s.phase = j.at("phase").get<std::string>();
    s.pid = j.at("pid").get<int>();
    s.updated_at_ms = j.at("updated_at_ms").get<uint64_t>();
    s.position = j.at("position").get<std::string>();
    s.last_event_time = j.at("last_event_time").get<uint64_t>();
    s.rows_applied = j.at("rows_applied").get<uint64_t>();
    s.transactions = j.at("transactions").get<uint64_t>();
    s.last_error = j.at("last_error").get<std::string>();
    for (const auto& c : j.at("schema_changes")) {
      SchemaChangeRecord r;
      r.at_ms = c.at("at_ms").get<uint64_t>();
      r.position = c.at("position").get<std::string>();
      r.table = c.at("table").get<std::string>();
      r.statement = c.at("statement").get<std::string>();
      r.actions = c.at("actions").get<std::vector<std::string>>();
      s.schema_changes.push_back(std::move(r));
    }
    // Absent from the status.json of versions before source failover.
    if (j.contains("gtid_position")) s.gtid_position = j.at("gtid_position").get<std::string>();
    if (j.contains("source")) s.source = j.at("source").get<std::string>();
    if (j.contains("binlog_gap_resyncs")) s.binlog_gap_resyncs = j.at("binlog_gap_resyncs").get<uint64_t>();
    // Absent from the status.json of versions before clusters.
    if (j.contains("destination")) s.destination = j.at("destination").get<std::string>();
    // Absent from the status.json of versions before schema-change policies.
    if (j.contains("policies")) s.policies = j.at("policies").get<std::vector<std::string>>();
    if (j.contains("cascades")) s.cascades = j.at("cascades").get<std::vector<std::string>>();
    return s;
  } catch (const nlohmann::json::exception& e) {
    return Error(ErrorKind::kCorrupt, std::string("status.json: ") + e.what());
  }
}

Result<std::optional<RunStatus>> ReadRunStatus(const std::string& dir) {
  std::string path = dir + "/status.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::optional<RunStatus>();
  std::ostringstream buffer;
  buffer << in.rdbuf();
  auto status = RunStatusFromJson(buffer.str());
  if (!status.ok()) return std::move(status.error().AddContext(path));
  return std::optional<RunStatus>(std::move(status).value());
}

Status WriteRunStatus(const std::string& dir, const RunStatus& status) {
  return WriteFileAtomically(dir + "/status.json", RunStatusToJson(status));
}

}  // namespace chsync::pipe
