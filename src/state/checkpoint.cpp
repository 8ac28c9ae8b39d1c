#include "state/checkpoint.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "common/redact.h"

namespace chsync::pipe {
namespace {

using nlohmann::ordered_json;

constexpr int kFormatVersion = 1;

const char* StateName(TableSnapshot::State s) {
  switch (s) {
    case TableSnapshot::State::kPending: return "pending";
    case TableSnapshot::State::kCopying: return "copying";
    case TableSnapshot::State::kDone: return "done";
  }
  return "pending";
}

ordered_json PositionToJson(const SourcePosition& p) {
  ordered_json j{{"file", p.file}, {"position", p.position}, {"gtid_set", p.gtid_set}};
  if (p.version_shift != 0) j["version_shift"] = p.version_shift;
  if (p.sequence_base != 0) j["sequence_base"] = p.sequence_base;
  return j;
}

SourcePosition PositionFromJson(const ordered_json& j) {
  SourcePosition p;
  p.file = j.at("file").get<std::string>();
  p.position = j.at("position").get<uint64_t>();
  p.gtid_set = j.at("gtid_set").get<std::string>();
  if (j.contains("version_shift")) p.version_shift = j.at("version_shift").get<uint64_t>();
  if (j.contains("sequence_base")) p.sequence_base = j.at("sequence_base").get<int64_t>();
  return p;
}

ordered_json DestinationsToJson(const std::vector<DestinationState>& destinations) {
  ordered_json j = ordered_json::array();
  for (const DestinationState& d : destinations) {
    ordered_json defaults = ordered_json::object();
    for (const auto& [column, expression] : d.defaults) defaults[column] = expression;
    ordered_json names = ordered_json::object();
    for (const auto& [source, destination] : d.clickhouse_names) names[source] = destination;
    j.push_back(ordered_json{{"table", d.table},
                             {"kept_columns", d.kept_columns},
                             {"defaults", defaults},
                             {"clickhouse_names", names},
                             {"aliases", d.aliases}});
    if (!d.excluded.empty()) j.back()["excluded"] = d.excluded;
    if (!d.clickhouse_table.empty()) {
      j.back()["clickhouse_database"] = d.clickhouse_database;
      j.back()["clickhouse_table"] = d.clickhouse_table;
    }
    if (!d.source_column.empty()) {
      j.back()["source_column"] = d.source_column;
      j.back()["source_value"] = d.source_value;
    }
  }
  return j;
}

ordered_json SnapshotToJson(const TableSnapshot& t) {
  ordered_json j{{"database", t.database},
                 {"table", t.table},
                 {"state", StateName(t.state)},
                 {"last_key", t.last_key},
                 {"rows_copied", t.rows_copied}};
  if (t.stream_from) j["stream_from"] = PositionToJson(*t.stream_from);
  return j;
}

Result<TableSnapshot> SnapshotFromJson(const ordered_json& t) {
  TableSnapshot s;
  s.database = t.at("database").get<std::string>();
  s.table = t.at("table").get<std::string>();
  std::string state = t.at("state").get<std::string>();
  if (state == "pending") {
    s.state = TableSnapshot::State::kPending;
  } else if (state == "copying") {
    s.state = TableSnapshot::State::kCopying;
  } else if (state == "done") {
    s.state = TableSnapshot::State::kDone;
  } else {
    return Error(ErrorKind::kCorrupt, "checkpoint: unknown snapshot state '" + state + "'");
  }
  s.last_key = t.at("last_key").get<std::string>();
  s.rows_copied = t.at("rows_copied").get<uint64_t>();
  if (t.contains("stream_from")) s.stream_from = PositionFromJson(t.at("stream_from"));
  return s;
}

}  // namespace

std::string DescribeRouting(const Routing& routing) {
  if (routing.cluster.empty()) return "one server";
  if (routing.weights.size() <= 1) return fmt::format("cluster '{}' (one shard)", routing.cluster);
  std::string text = fmt::format("{} shards of cluster '{}' (weights {})", routing.weights.size(),
                                 routing.cluster, fmt::join(routing.weights, ", "));
  if (routing.key_text == "unknown") return text + ", keys printed in a way chsync does not know";
  if (!routing.key_text.empty() && routing.key_text[0] >= '0' && routing.key_text[0] <= '9') {
    return text + ", keys printed as ClickHouse " + routing.key_text + " prints them";
  }
  return text + ", keys printed with " + routing.key_text;
}

std::optional<std::string> RoutingChange(const Routing& saved, const Routing& now, bool key_text_matters) {
  const bool saved_sharded = saved.weights.size() > 1;
  const bool now_sharded = now.weights.size() > 1;
  if (!saved_sharded && !now_sharded) return std::nullopt;  // nothing was hashed, nothing will be
  const bool same_text = !key_text_matters || saved.key_text == now.key_text || saved.key_text == "unknown" ||
                         now.key_text == "unknown";
  if (saved.cluster == now.cluster && saved.weights == now.weights && same_text) return std::nullopt;
  return fmt::format("the rows in ClickHouse were routed over {}, and the destination is now {}",
                     DescribeRouting(saved), DescribeRouting(now));
}

std::string ToJson(const Checkpoint& c) {
  ordered_json snapshot = ordered_json::array();
  for (const TableSnapshot& t : c.snapshot) snapshot.push_back(SnapshotToJson(t));
  ordered_json rebuilds = ordered_json::array();
  for (const RebuildState& r : c.rebuilds) {
    rebuilds.push_back(ordered_json{{"database", r.database},
                                    {"table", r.table},
                                    {"temp_table", r.temp_table},
                                    {"progress", SnapshotToJson(r.progress)},
                                    {"position", r.position},
                                    {"reason", Redact(r.reason)}});
  }
  ordered_json pending_xa = ordered_json::array();
  for (const PendingXa& x : c.pending_xa) {
    pending_xa.push_back(ordered_json{{"xid", x.xid}, {"prepared", x.prepared}, {"rows_file", x.rows_file}});
  }
  ordered_json j{{"format", kFormatVersion},
                 {"saved_at_ms", c.saved_at_ms},
                 {"stream_start", PositionToJson(c.stream_start)},
                 {"resume", PositionToJson(c.resume)},
                 {"snapshot", std::move(snapshot)},
                 {"destinations", DestinationsToJson(c.destinations)},
                 {"rebuilds", std::move(rebuilds)},
                 {"pending_xa", std::move(pending_xa)},
                 {"schemas", c.schemas}};
  if (!c.held.empty()) {
    ordered_json held = ordered_json::array();
    for (const HeldTable& h : c.held) {
      held.push_back(ordered_json{{"table", h.table},
                                  {"state", h.state},
                                  {"reason", Redact(h.reason)},  // messages: no password saved
                                  {"statement", Redact(h.statement)},
                                  {"position", h.position},
                                  {"at_ms", h.at_ms}});
    }
    j["held"] = std::move(held);
  }
  if (!c.requests_done.empty()) j["requests_done"] = c.requests_done;
  if (!c.selection.empty()) j["selection"] = c.selection;
  if (!c.selection_changes.empty()) {
    ordered_json changes = ordered_json::array();
    for (const SelectionChange& s : c.selection_changes) {
      changes.push_back(ordered_json{{"op", s.op}, {"pattern", s.pattern}, {"at_ms", s.at_ms}});
    }
    j["selection_changes"] = std::move(changes);
  }
  if (!c.unselected.empty()) {
    ordered_json unselected = ordered_json::array();
    for (const UnselectedTable& u : c.unselected) {
      unselected.push_back(ordered_json{{"table", u.table},
                                        {"clickhouse_table", u.clickhouse_table},
                                        {"position", u.position},
                                        {"at_ms", u.at_ms}});
    }
    j["unselected"] = std::move(unselected);
  }
  if (c.load_only) j["load_only"] = true;
  if (c.source) {
    j["source"] = ordered_json{{"server_id", c.source->server_id}, {"server_uuid", c.source->server_uuid}};
    if (!c.source->address.empty()) j["source"]["address"] = c.source->address;
  }
  if (c.routing) {
    j["routing"] = ordered_json{
        {"cluster", c.routing->cluster}, {"weights", c.routing->weights}, {"key_text", c.routing->key_text}};
  }
  return j.dump(2) + "\n";
}

Result<Checkpoint> FromJson(std::string_view text) {
  ordered_json j = ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Error(ErrorKind::kCorrupt, "checkpoint is not a JSON object");
  }
  try {
    int format = j.at("format").get<int>();
    if (format != kFormatVersion) {
      return Error(ErrorKind::kUnsupported, "checkpoint format " + std::to_string(format) +
                                                " is not understood by this chsync (it writes format " +
                                                std::to_string(kFormatVersion) + ")");
    }
    Checkpoint c;
    c.saved_at_ms = j.at("saved_at_ms").get<uint64_t>();
    c.stream_start = PositionFromJson(j.at("stream_start"));
    c.resume = PositionFromJson(j.at("resume"));
    c.schemas = j.at("schemas").get<std::string>();
    for (const auto& t : j.at("snapshot")) {
      CHSYNC_ASSIGN_OR_RETURN(TableSnapshot s, SnapshotFromJson(t));
      c.snapshot.push_back(std::move(s));
    }
    if (j.contains("rebuilds")) {
      for (const auto& r : j.at("rebuilds")) {
        RebuildState state;
        state.database = r.at("database").get<std::string>();
        state.table = r.at("table").get<std::string>();
        state.temp_table = r.at("temp_table").get<std::string>();
        CHSYNC_ASSIGN_OR_RETURN(state.progress, SnapshotFromJson(r.at("progress")));
        state.position = r.at("position").get<std::string>();
        state.reason = r.at("reason").get<std::string>();
        c.rebuilds.push_back(std::move(state));
      }
    }
    if (j.contains("source")) {
      const auto& source = j.at("source");
      c.source =
          SourceIdentity{source.at("server_id").get<uint32_t>(), source.at("server_uuid").get<std::string>(),
                         source.contains("address") ? source.at("address").get<std::string>() : ""};
    }
    if (j.contains("routing")) {
      const auto& routing = j.at("routing");
      c.routing = Routing{routing.at("cluster").get<std::string>(),
                          routing.at("weights").get<std::vector<uint32_t>>(),
                          routing.at("key_text").get<std::string>()};
    }
    if (j.contains("pending_xa")) {
      for (const auto& x : j.at("pending_xa")) {
        c.pending_xa.push_back({x.at("xid").get<std::string>(), x.at("prepared").get<std::string>(),
                                x.at("rows_file").get<std::string>()});
      }
    }
    if (j.contains("held")) {
      for (const auto& h : j.at("held")) {
        HeldTable held{h.at("table").get<std::string>(),    h.at("state").get<std::string>(),
                       h.at("reason").get<std::string>(),   h.at("statement").get<std::string>(),
                       h.at("position").get<std::string>(), h.at("at_ms").get<uint64_t>()};
        if (held.state != "parked" && held.state != "paused") {
          return Error(ErrorKind::kCorrupt,
                       "checkpoint: unknown table state '" + held.state + "' of " + held.table);
        }
        c.held.push_back(std::move(held));
      }
    }
    if (j.contains("load_only")) c.load_only = j.at("load_only").get<bool>();
    if (j.contains("requests_done")) c.requests_done = j.at("requests_done").get<std::vector<std::string>>();
    if (j.contains("selection")) c.selection = j.at("selection").get<std::string>();
    if (j.contains("selection_changes")) {
      for (const auto& s : j.at("selection_changes")) {
        SelectionChange change{s.at("op").get<std::string>(), s.at("pattern").get<std::string>(),
                               s.at("at_ms").get<uint64_t>()};
        if (change.op != "add" && change.op != "remove") {
          return Error(ErrorKind::kCorrupt,
                       "checkpoint: unknown change of the table selection '" + change.op + "'");
        }
        c.selection_changes.push_back(std::move(change));
      }
    }
    if (j.contains("unselected")) {
      for (const auto& u : j.at("unselected")) {
        c.unselected.push_back({u.at("table").get<std::string>(), u.at("clickhouse_table").get<std::string>(),
                                u.at("position").get<std::string>(), u.at("at_ms").get<uint64_t>()});
      }
    }
    if (j.contains("destinations")) {
      for (const auto& d : j.at("destinations")) {
        DestinationState state;
        state.table = d.at("table").get<std::string>();
        state.kept_columns = d.at("kept_columns").get<std::vector<std::string>>();
        for (const auto& [column, expression] : d.at("defaults").items()) {
          state.defaults.emplace_back(column, expression.get<std::string>());
        }
        if (d.contains("clickhouse_names")) {
          for (const auto& [source, destination] : d.at("clickhouse_names").items()) {
            state.clickhouse_names.emplace_back(source, destination.get<std::string>());
          }
        }
        if (d.contains("aliases")) state.aliases = d.at("aliases").get<std::vector<std::string>>();
        if (d.contains("excluded")) state.excluded = d.at("excluded").get<std::vector<std::string>>();
        if (d.contains("clickhouse_table")) {
          state.clickhouse_database = d.at("clickhouse_database").get<std::string>();
          state.clickhouse_table = d.at("clickhouse_table").get<std::string>();
        }
        if (d.contains("source_column")) {
          state.source_column = d.at("source_column").get<std::string>();
          state.source_value = d.at("source_value").get<std::string>();
        }
        c.destinations.push_back(std::move(state));
      }
    }
    return c;
  } catch (const nlohmann::json::exception& e) {
    return Error(ErrorKind::kCorrupt, std::string("checkpoint: ") + e.what());
  }
}

}  // namespace chsync::pipe
