#include "config/config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include "common/redact.h"
#include "common/url.h"

namespace chsync::pipe {
namespace {

/// The largest http.ready_max_lag_s: a week.
constexpr double kMaxReadyLagSeconds = 604800;

std::string Where(const std::string& origin, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.is_null()) return origin;
  return origin + ":" + std::to_string(m.line + 1);
}

Error ConfigError(const std::string& where, const std::string& key, const std::string& what) {
  return Error(ErrorKind::kConfig, where + ": '" + key + "' " + what);
}

Status ReadString(const YAML::Node& node, const std::string& where, const std::string& key,
                  std::string& out) {
  if (!node.IsScalar()) return ConfigError(where, key, "must be a text value");
  out = node.as<std::string>();
  return Status::Ok();
}

Status ReadUint(const YAML::Node& node, const std::string& where, const std::string& key, uint64_t min,
                uint64_t max, uint64_t& out) {
  if (!node.IsScalar()) return ConfigError(where, key, "must be a whole number");
  const std::string& text = node.Scalar();
  uint64_t v = 0;
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) {
    return ConfigError(where, key, "must be a whole number, not '" + text + "'");
  }
  v = std::stoull(text);
  if (v < min || v > max) {
    return ConfigError(
        where, key,
        "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", not " + text);
  }
  out = v;
  return Status::Ok();
}

/// `text` as a decimal number: digits with an optional fraction; no sign, exponent, inf or nan.
std::optional<double> ParseDecimal(const std::string& text) {
  std::string digits = text;
  size_t dot = digits.find('.');
  if (dot != std::string::npos) digits.erase(dot, 1);
  if (digits.empty() || text.size() > 32 || digits.find_first_not_of("0123456789") != std::string::npos ||
      text.front() == '.' || text.back() == '.') {
    return std::nullopt;
  }
  return std::strtod(text.c_str(), nullptr);
}

using Setter = std::function<Status(const YAML::Node&, const std::string& where, PipeConfig&)>;

Setter String(std::string PipeConfig::*field) {
  return [field](const YAML::Node& n, const std::string& where, PipeConfig& c) {
    return ReadString(n, where, "", c.*field);
  };
}

/// A text value, or a list of them joined with commas (`dest:` with several URLs).
Setter UrlList(std::string PipeConfig::*field) {
  return [field](const YAML::Node& n, const std::string& where, PipeConfig& c) -> Status {
    if (n.IsScalar()) return ReadString(n, where, "", c.*field);
    if (!n.IsSequence() || n.size() == 0) return ConfigError(where, "", "must be a URL or a list of URLs");
    std::string joined;
    for (const YAML::Node& item : n) {
      // One URL per item; a comma in its password is fine (SplitUrlList keeps it).
      if (!item.IsScalar() || SplitUrlList(item.Scalar()).size() != 1) {
        return ConfigError(where, "", "must be a list of URLs, one per item");
      }
      joined += (joined.empty() ? "" : ",") + item.Scalar();
    }
    c.*field = std::move(joined);
    return Status::Ok();
  };
}

Setter Bool(bool PipeConfig::*field) {
  return [field](const YAML::Node& n, const std::string& where, PipeConfig& c) -> Status {
    if (!n.IsScalar() || (n.Scalar() != "true" && n.Scalar() != "false")) {
      return ConfigError(where, "", "must be true or false");
    }
    c.*field = n.Scalar() == "true";
    return Status::Ok();
  };
}

/// A number with an optional fraction ("60", "0.5"), within [min, max] and, when `min_exclusive`,
/// above min.
Setter Decimal(double PipeConfig::*field, double min, double max, bool min_exclusive) {
  return [field, min, max, min_exclusive](const YAML::Node& n, const std::string& where,
                                          PipeConfig& c) -> Status {
    if (!n.IsScalar()) return ConfigError(where, "", "must be a number");
    const std::string& text = n.Scalar();
    std::optional<double> parsed = ParseDecimal(text);
    if (!parsed) return ConfigError(where, "", "must be a number such as 60 or 0.5, not '" + text + "'");
    double v = *parsed;
    if (v < min || v > max || (min_exclusive && v == min)) {
      return ConfigError(where, "",
                         fmt::format("must be {} {} and at most {}, not {}",
                                     min_exclusive ? "above" : "at least", min, max, text));
    }
    c.*field = v;
    return Status::Ok();
  };
}

template <typename T>
Setter Number(T PipeConfig::*field, uint64_t min, uint64_t max) {
  return [field, min, max](const YAML::Node& n, const std::string& where, PipeConfig& c) -> Status {
    uint64_t v = 0;
    CHSYNC_RETURN_IF_ERROR(ReadUint(n, where, "", min, max, v));
    c.*field = static_cast<T>(v);
    return Status::Ok();
  };
}

/// snapshot.mode (or `snapshot:` alone): initial, never or only.
Setter StartModeSetter() {
  return [](const YAML::Node& n, const std::string& where, PipeConfig& c) -> Status {
    std::string value;
    CHSYNC_RETURN_IF_ERROR(ReadString(n, where, "", value));
    auto mode = ParseStartMode(value);
    if (!mode.ok()) return ConfigError(where, "", mode.error().message());
    c.snapshot_mode = *mode;
    return Status::Ok();
  };
}

/// A text value that `check` accepts (its message is put after the key).
Setter Checked(std::string PipeConfig::*field, Status (*check)(std::string_view)) {
  return [field, check](const YAML::Node& n, const std::string& where, PipeConfig& c) -> Status {
    std::string value;
    CHSYNC_RETURN_IF_ERROR(ReadString(n, where, "", value));
    Status checked = check(value);
    if (!checked.ok()) return ConfigError(where, "", checked.error().message());
    c.*field = std::move(value);
    return Status::Ok();
  };
}

/// Puts the configuration key into a PolicySet error ("f.yaml:3: 'truncate' must be …" becomes
/// "f.yaml:3: 'schema_changes.truncate' must be …").
Status WithConfigKey(Status s, std::string_view key, const std::string& config_key) {
  if (s.ok()) return s;
  std::string m = s.error().message();
  std::string quoted = "'" + std::string(key) + "'";
  size_t at = m.find(quoted);
  if (at != std::string::npos) m.replace(at, quoted.size(), "'" + config_key + "'");
  return Error(ErrorKind::kConfig, m);
}

/// `schema_changes:` — policy keys (the defaults for every table) and `tables:`, a mapping of
/// DB.TABLE patterns to mappings of policy keys.
Status ApplySchemaChanges(const YAML::Node& map, const std::string& origin, PipeConfig& config) {
  if (map.IsNull()) return Status::Ok();
  if (!map.IsMap()) {
    return ConfigError(Where(origin, map), "schema_changes",
                       "must be a mapping of policy keys (and 'tables:')");
  }
  for (const auto& item : map) {
    const std::string name = item.first.as<std::string>();
    const std::string where = Where(origin, item.first);
    if (name == "tables") {
      if (item.second.IsNull()) continue;
      if (!item.second.IsMap()) {
        return ConfigError(where, "schema_changes.tables",
                           "must be a mapping of DB.TABLE patterns to policy keys");
      }
      for (const auto& table : item.second) {
        const std::string pattern = table.first.as<std::string>();
        const std::string table_key = "schema_changes.tables." + pattern;
        const std::string table_where = Where(origin, table.first);
        if (!table.second.IsMap()) {
          return ConfigError(table_where, table_key, "must be a mapping of policy keys");
        }
        for (const auto& policy : table.second) {
          const std::string key = policy.first.as<std::string>();
          std::string config_key = table_key;
          config_key.append(".").append(key);
          const std::string policy_where = Where(origin, policy.first);
          if (!policy.second.IsScalar()) {
            return ConfigError(policy_where, config_key, "must be a text value");
          }
          CHSYNC_RETURN_IF_ERROR(WithConfigKey(
              config.policies.Assign(pattern, key, policy.second.Scalar(), policy_where), key, config_key));
        }
      }
      continue;
    }
    if (!item.second.IsScalar()) {
      return ConfigError(where, "schema_changes." + name, "must be a text value");
    }
    CHSYNC_RETURN_IF_ERROR(WithConfigKey(config.policies.Assign("", name, item.second.Scalar(), where), name,
                                         "schema_changes." + name));
  }
  return Status::Ok();
}

constexpr const char* kTableOptionKeys =
    "adopt, columns, deletes, dest, dest_database, dest_table, exclude_columns, history, json, "
    "order_by, partition_by, rename_columns, settings, source_column, ttl, where";

/// A text option of table_options (`key` is the full configuration key, for messages).
Status ReadText(const YAML::Node& node, const std::string& where, const std::string& key, std::string& out) {
  if (!node.IsScalar()) return ConfigError(where, key, "must be a text value");
  out = node.Scalar();
  return Status::Ok();
}

Status ReadFlag(const YAML::Node& node, const std::string& where, const std::string& key, bool& out) {
  if (!node.IsScalar() || (node.Scalar() != "true" && node.Scalar() != "false")) {
    return ConfigError(where, key, "must be true or false");
  }
  out = node.Scalar() == "true";
  return Status::Ok();
}

/// A mapping whose keys and values are text: rename_columns, settings.
Status ReadTextMap(
    const YAML::Node& node, const std::string& origin, const std::string& where, const std::string& key,
    const std::string& what,
    const std::function<Status(const std::string&, const YAML::Node&, const std::string&)>& each) {
  if (node.IsNull()) return Status::Ok();
  if (!node.IsMap()) return ConfigError(where, key, "must be a mapping of " + what);
  for (const auto& item : node) {
    const std::string name = item.first.as<std::string>();
    const std::string item_where = Where(origin, item.first);
    if (!item.second.IsScalar())
      return ConfigError(item_where, fmt::format("{}.{}", key, name), "must be a text value");
    CHSYNC_RETURN_IF_ERROR(each(name, item.second, item_where));
  }
  return Status::Ok();
}

/// One entry of `table_options:`.
Status ReadTableOptions(const YAML::Node& node, const std::string& origin, const std::string& pattern,
                        const std::string& where, TableOptions& options) {
  const std::string table_key = "table_options." + pattern;
  options.pattern = pattern;
  options.origin = where;
  if (node.IsNull()) return Status::Ok();
  if (!node.IsMap()) {
    return ConfigError(where, table_key,
                       std::string("must be a mapping of table options (") + kTableOptionKeys + ")");
  }
  bool dest_given = false;
  bool dest_part_given = false;
  for (const auto& option : node) {
    const std::string name = option.first.as<std::string>();
    const std::string key = fmt::format("{}.{}", table_key, name);
    const std::string at = Where(origin, option.first);
    const YAML::Node& value = option.second;
    if (name == "dest") {
      std::string text;
      CHSYNC_RETURN_IF_ERROR(ReadText(value, at, key, text));
      size_t dot = text.find('.');
      if (dot == std::string::npos || dot == 0 || dot + 1 == text.size()) {
        return ConfigError(at, key, "must be DB.TABLE (e.g. analytics.orders_v2), not '" + text + "'");
      }
      options.dest_database = text.substr(0, dot);
      options.dest_table = text.substr(dot + 1);
      dest_given = true;
    } else if (name == "dest_database" || name == "dest_table") {
      std::string text;
      CHSYNC_RETURN_IF_ERROR(ReadText(value, at, key, text));
      (name == "dest_database" ? options.dest_database : options.dest_table) = text;
      dest_part_given = true;
    } else if (name == "exclude_columns") {
      if (value.IsNull()) continue;
      if (!value.IsSequence()) return ConfigError(at, key, "must be a list of column names");
      for (const YAML::Node& column : value) {
        if (!column.IsScalar())
          return ConfigError(Where(origin, column), key, "must be a list of column names");
        options.exclude_columns.push_back(column.Scalar());
      }
    } else if (name == "rename_columns") {
      CHSYNC_RETURN_IF_ERROR(
          ReadTextMap(value, origin, at, key, "source column names to ClickHouse names",
                      [&](const std::string& from, const YAML::Node& to, const std::string&) {
                        options.rename_columns.emplace_back(from, to.Scalar());
                        return Status::Ok();
                      }));
    } else if (name == "order_by" || name == "partition_by" || name == "ttl") {
      std::string text;
      CHSYNC_RETURN_IF_ERROR(ReadText(value, at, key, text));
      (name == "order_by"       ? options.order_by
       : name == "partition_by" ? options.partition_by
                                : options.ttl) = text;
    } else if (name == "settings") {
      CHSYNC_RETURN_IF_ERROR(
          ReadTextMap(value, origin, at, key, "MergeTree settings to values",
                      [&](const std::string& setting, const YAML::Node& v, const std::string&) {
                        // A quoted value stays text ('…'); a plain one is a number where it looks like one.
                        options.settings.emplace_back(setting, SettingLiteral(v.Scalar(), v.Tag() == "!"));
                        return Status::Ok();
                      }));
    } else if (name == "columns") {
      if (value.IsNull()) continue;
      if (!value.IsMap()) return ConfigError(at, key, "must be a mapping of column names to column options");
      for (const auto& column : value) {
        const std::string column_name = column.first.as<std::string>();
        const std::string column_key = fmt::format("{}.{}", key, column_name);
        const std::string column_at = Where(origin, column.first);
        if (column.second.IsNull()) continue;
        if (!column.second.IsMap()) {
          return ConfigError(column_at, column_key,
                             "must be a mapping of column options (codec, low_cardinality)");
        }
        ColumnEntry entry;
        for (const auto& field : column.second) {
          const std::string field_name = field.first.as<std::string>();
          const std::string field_key = fmt::format("{}.{}", column_key, field_name);
          const std::string field_at = Where(origin, field.first);
          if (field_name == "codec") {
            std::string text;
            CHSYNC_RETURN_IF_ERROR(ReadText(field.second, field_at, field_key, text));
            entry.codec = text;
          } else if (field_name == "low_cardinality") {
            bool flag = false;
            CHSYNC_RETURN_IF_ERROR(ReadFlag(field.second, field_at, field_key, flag));
            entry.low_cardinality = flag;
          } else {
            return ConfigError(field_at, field_key, "is not a column option (keys: codec, low_cardinality)");
          }
        }
        options.columns.emplace_back(column_name, std::move(entry));
      }
    } else if (name == "adopt") {
      bool flag = false;
      CHSYNC_RETURN_IF_ERROR(ReadFlag(value, at, key, flag));
      options.adopt = flag;
    } else if (name == "history") {
      bool flag = false;
      CHSYNC_RETURN_IF_ERROR(ReadFlag(value, at, key, flag));
      options.history = flag;
    } else if (name == "deletes") {
      if (!value.IsScalar() || (value.Scalar() != "soft" && value.Scalar() != "ignore")) {
        return ConfigError(at, key, "must be soft (a DELETE removes the row) or ignore (append-only)");
      }
      options.deletes = value.Scalar() == "ignore" ? DeleteMode::kIgnore : DeleteMode::kSoft;
    } else if (name == "json") {
      auto mode = value.IsScalar() ? ParseJsonMode(value.Scalar()) : ParseJsonMode("");
      if (!mode.ok())
        return ConfigError(at, key, "must be string (JSON as text in a String) or native (ClickHouse JSON)");
      options.json_native = *mode == PipeConfig::JsonMode::kNative;
    } else if (name == "where") {
      std::string text;
      CHSYNC_RETURN_IF_ERROR(ReadText(value, at, key, text));
      options.where = text;
    } else if (name == "source_column") {
      std::string text;
      CHSYNC_RETURN_IF_ERROR(ReadText(value, at, key, text));
      options.source_column = text;
    } else {
      return ConfigError(at, key, std::string("is not a table option (keys: ") + kTableOptionKeys + ")");
    }
  }
  if (dest_given && dest_part_given) {
    return ConfigError(where, table_key,
                       "gives dest and dest_database or dest_table: give one or the others");
  }
  return Status::Ok();
}

/// `table_options:` — a mapping of DB.TABLE patterns to table options, applied in order.
Status ApplyTableOptions(const YAML::Node& map, const std::string& origin, PipeConfig& config) {
  if (map.IsNull()) return Status::Ok();
  if (!map.IsMap()) {
    return ConfigError(Where(origin, map), "table_options",
                       "must be a mapping of DB.TABLE patterns to table options");
  }
  for (const auto& table : map) {
    TableOptions options;
    CHSYNC_RETURN_IF_ERROR(ReadTableOptions(table.second, origin, table.first.as<std::string>(),
                                            Where(origin, table.first), options));
    CHSYNC_RETURN_IF_ERROR(config.mappings.Add(std::move(options)));
  }
  return Status::Ok();
}

Status Apply(const YAML::Node& map, const std::string& prefix, const std::string& origin,
             const std::map<std::string, Setter>& setters, PipeConfig& config) {
  if (!map.IsMap())
    return Error(ErrorKind::kConfig, Where(origin, map) + ": '" + prefix + "' must be a mapping of keys");
  for (const auto& item : map) {
    std::string key =
        prefix.empty() ? item.first.as<std::string>() : prefix + "." + item.first.as<std::string>();
    std::string where = Where(origin, item.first);
    if (key == "schema_changes") {
      CHSYNC_RETURN_IF_ERROR(ApplySchemaChanges(item.second, origin, config));
      continue;
    }
    if (key == "table_options") {
      CHSYNC_RETURN_IF_ERROR(ApplyTableOptions(item.second, origin, config));
      continue;
    }
    if (item.second.IsMap()) {
      CHSYNC_RETURN_IF_ERROR(Apply(item.second, key, origin, setters, config));
      continue;
    }
    auto it = setters.find(key);
    if (it == setters.end()) {
      std::string known;
      for (const auto& [name, setter] : setters) known += (known.empty() ? "" : ", ") + name;
      known += ", schema_changes, table_options";
      return ConfigError(where, key, "is not a setting (known: " + known + ")");
    }
    Status s = it->second(item.second, where, config);
    if (!s.ok()) {
      // The setters do not know their key: put it into the message.
      std::string m = s.error().message();
      size_t quote = m.find("''");
      if (quote != std::string::npos) m.replace(quote, 2, "'" + key + "'");
      return Error(ErrorKind::kConfig, m);
    }
  }
  return Status::Ok();
}

/// A key of source_ssh: or dest_ssh:.
Setter SshText(net::SshEndpoint PipeConfig::*which, std::string net::SshEndpoint::*field) {
  return [which, field](const YAML::Node& n, const std::string& where, PipeConfig& c) {
    return ReadString(n, where, "", c.*which.*field);
  };
}

Setter SshPort(net::SshEndpoint PipeConfig::*which) {
  return [which](const YAML::Node& n, const std::string& where, PipeConfig& c) -> Status {
    std::string text;
    CHSYNC_RETURN_IF_ERROR(ReadString(n, where, "", text));
    unsigned value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || ptr != text.data() + text.size() || value == 0 || value > 65535) {
      return ConfigError(where, "", "must be a port number from 1 to 65535, not '" + text + "'");
    }
    (c.*which).port = static_cast<uint16_t>(value);
    return Status::Ok();
  };
}

Setter SshStrict(net::SshEndpoint PipeConfig::*which) {
  return [which](const YAML::Node& n, const std::string& where, PipeConfig& c) -> Status {
    if (!n.IsScalar() || (n.Scalar() != "true" && n.Scalar() != "false")) {
      return ConfigError(where, "", "must be true or false");
    }
    (c.*which).strict_host_key_checking = n.Scalar() == "true";
    return Status::Ok();
  };
}

void AddSshSetters(std::map<std::string, Setter>& setters, const std::string& prefix,
                   net::SshEndpoint PipeConfig::*which) {
  setters.emplace(prefix + ".host", SshText(which, &net::SshEndpoint::host));
  setters.emplace(prefix + ".port", SshPort(which));
  setters.emplace(prefix + ".user", SshText(which, &net::SshEndpoint::user));
  setters.emplace(prefix + ".key_file", SshText(which, &net::SshEndpoint::key_file));
  setters.emplace(prefix + ".known_hosts", SshText(which, &net::SshEndpoint::known_hosts));
  setters.emplace(prefix + ".strict_host_key_checking", SshStrict(which));
}

std::map<std::string, Setter> WithSshSetters(std::map<std::string, Setter> setters) {
  AddSshSetters(setters, "source_ssh", &PipeConfig::source_ssh);
  AddSshSetters(setters, "dest_ssh", &PipeConfig::dest_ssh);
  return setters;
}

const std::map<std::string, Setter>& Setters() {
  static const std::map<std::string, Setter> setters = WithSshSetters({
      {"source", UrlList(&PipeConfig::source)},
      {"failover.after_ms", Number(&PipeConfig::failover_after_ms, 0, 86400000)},
      {"on_binlog_gap",
       [](const YAML::Node& n, const std::string& where, PipeConfig& c) -> Status {
         std::string value;
         CHSYNC_RETURN_IF_ERROR(ReadString(n, where, "", value));
         auto gap = ParseBinlogGap(value);
         if (!gap.ok()) return ConfigError(where, "", gap.error().message());
         c.on_binlog_gap = *gap;
         return Status::Ok();
       }},
      {"dest", UrlList(&PipeConfig::dest)},
      {"source_password_file", String(&PipeConfig::source_password_file)},
      {"dest_password_file", String(&PipeConfig::dest_password_file)},
      {"dest_cluster", String(&PipeConfig::dest_cluster)},
      {"dest_replication_path", String(&PipeConfig::dest_replication_path)},
      {"dest_replica_name", String(&PipeConfig::dest_replica_name)},
      {"dest_ddl_timeout_s", Number(&PipeConfig::dest_ddl_timeout_s, 1, 86400)},
      {"tables", String(&PipeConfig::tables)},
      {"state", String(&PipeConfig::state)},
      {"dest_database", String(&PipeConfig::dest_database)},
      {"source_name", String(&PipeConfig::source_name)},
      {"server_id", Number(&PipeConfig::server_id, 1, 4294967295u)},
      {"snapshot", StartModeSetter()},
      {"snapshot.mode", StartModeSetter()},
      {"start_position", Checked(&PipeConfig::start_position,
                                 [](std::string_view t) -> Status {
                                   auto parsed = ParseStartPosition(t);
                                   if (!parsed.ok()) return std::move(parsed).error();
                                   return Status::Ok();
                                 })},
      {"start_gtid", String(&PipeConfig::start_gtid)},
      {"start_time", Checked(&PipeConfig::start_time,
                             [](std::string_view t) -> Status {
                               auto parsed = ParseStartTime(t);
                               if (!parsed.ok()) return std::move(parsed).error();
                               return Status::Ok();
                             })},
      {"snapshot.parallelism", Number(&PipeConfig::snapshot_parallelism, 1, 64)},
      {"snapshot.chunk_rows", Number(&PipeConfig::snapshot_chunk_rows, 1000, 100000000)},
      {"batch.max_rows", Number(&PipeConfig::batch_max_rows, 1, 10000000)},
      {"batch.max_age_ms", Number(&PipeConfig::batch_max_age_ms, 10, 600000)},
      {"batch.max_bytes", Number(&PipeConfig::batch_max_bytes, 1ull << 16, 1ull << 34)},
      {"retry.attempts", Number(&PipeConfig::retry_attempts, 1, 1000)},
      {"retry.max_backoff_ms", Number(&PipeConfig::retry_max_backoff_ms, 10, 3600000)},
      {"retry.give_up_after_ms", Number(&PipeConfig::retry_give_up_after_ms, 0, 604800000)},
      {"log_level", String(&PipeConfig::log_level)},
      {"log_format", String(&PipeConfig::log_format)},
      {"http.listen", String(&PipeConfig::http_listen)},
      {"http.ready_max_lag_s", Decimal(&PipeConfig::http_ready_max_lag_s, 0, kMaxReadyLagSeconds, true)},
      {"http.metrics_per_source_table", Bool(&PipeConfig::http_metrics_per_source_table)},
      {"durable_inserts", Bool(&PipeConfig::durable_inserts)},
      {"json",
       [](const YAML::Node& n, const std::string& where, PipeConfig& c) -> Status {
         std::string value;
         CHSYNC_RETURN_IF_ERROR(ReadString(n, where, "", value));
         auto mode = ParseJsonMode(value);
         if (!mode.ok()) return ConfigError(where, "", mode.error().message());
         c.json = *mode;
         return Status::Ok();
       }},
      {"datetime_fallback",
       [](const YAML::Node& n, const std::string& where, PipeConfig& c) -> Status {
         std::string value;
         CHSYNC_RETURN_IF_ERROR(ReadString(n, where, "", value));
         auto fallback = ParseDateTimeFallback(value);
         if (!fallback.ok()) return ConfigError(where, "", fallback.error().message());
         c.datetime_fallback = *fallback;
         return Status::Ok();
       }},
  });
  return setters;
}

/// Reads the password file `file` names (relative to the configuration file's folder) into the
/// environment variable `env`, from which connections take the password of URLs without one.
Status ExportPasswordFile(const std::string& config_path, const std::string& key, const std::string& file,
                          const char* env) {
  if (file.empty()) return Status::Ok();
  std::filesystem::path at(file);
  if (at.is_relative()) at = std::filesystem::path(config_path).parent_path() / at;
  std::ifstream in(at);
  if (!in) {
    return ConfigError(config_path, key,
                       "names " + at.string() +
                           ", which cannot be read: check that it exists and that this "
                           "user may read it");
  }
  std::string password((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (password.ends_with('\n')) password.pop_back();
  if (password.ends_with('\r')) password.pop_back();
  RegisterSecret(password);  // never printed (common/redact.h)
  if (password.empty()) return ConfigError(config_path, key, "names " + at.string() + ", which is empty");
  if (password.find_first_of("\r\n") != std::string::npos) {
    return ConfigError(
        config_path, key,
        "names " + at.string() + ", which has more than one line: it must hold the password alone");
  }
  if (setenv(env, password.c_str(), 1) != 0) {
    return Error(ErrorKind::kConfig, std::string("cannot set ") + env + " from " + at.string());
  }
  return Status::Ok();
}

}  // namespace

Status LoadConfigText(std::string_view yaml, const std::string& origin, PipeConfig& config) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return Error(ErrorKind::kConfig,
                 origin + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
  if (root.IsNull()) return Status::Ok();
  try {
    return Apply(root, "", origin, Setters(), config);
  } catch (const YAML::Exception& e) {
    return Error(ErrorKind::kConfig, origin + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

Status LoadConfigFile(const std::string& path, PipeConfig& config) {
  std::ifstream in(path);
  if (!in) return Error(ErrorKind::kConfig, "cannot read configuration file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  CHSYNC_RETURN_IF_ERROR(LoadConfigText(text.str(), path, config));
  RegisterSecretsIn(config.source);  // the passwords of its URLs, never printed (common/redact.h)
  RegisterSecretsIn(config.dest);
  // The tunnels' files, like the password files, are relative to the configuration file's folder.
  for (net::SshEndpoint* ssh : {&config.source_ssh, &config.dest_ssh}) {
    for (std::string* file : {&ssh->key_file, &ssh->known_hosts}) {
      if (!file->empty() && file->front() != '/' && file->front() != '~') {
        *file = (std::filesystem::path(path).parent_path() / *file).string();
      }
    }
  }
  CHSYNC_RETURN_IF_ERROR(ExportPasswordFile(path, "source_password_file", config.source_password_file,
                                            "CHSYNC_SOURCE_PASSWORD"));
  return ExportPasswordFile(path, "dest_password_file", config.dest_password_file, "CHSYNC_DEST_PASSWORD");
}

Status ApplySshKeys(PipeConfig& config) {
  for (auto [key, ssh, urls] : {std::tuple{"source_ssh", &config.source_ssh, &config.source},
                                std::tuple{"dest_ssh", &config.dest_ssh, &config.dest}}) {
    const net::SshEndpoint none;
    if (ssh->host.empty()) {
      if (!(*ssh == none)) {
        return Error(ErrorKind::kConfig, std::string(key) + " names no host: give " + key +
                                             ".host, the bastion chsync opens its SSH tunnel through");
      }
      continue;
    }
    auto checked =
        net::ParseSshTarget(ssh->host.find(':') != std::string::npos ? "[" + ssh->host + "]" : ssh->host,
                            std::string(key) + ".host");
    // One ':' is a port (an IPv6 address has two or more).
    if (!checked.ok() || checked->port != 22 || !checked->user.empty() ||
        std::count(ssh->host.begin(), ssh->host.end(), ':') == 1) {
      return Error(ErrorKind::kConfig, std::string(key) + ".host must be a host name or address alone ('" +
                                           ssh->host + "'): give the port and user in " + key + ".port and " +
                                           key + ".user");
    }
    *urls = net::WithSshParams(*urls, *ssh);
  }
  return Status::Ok();
}

Result<PipeConfig::DateTimeFallback> ParseDateTimeFallback(std::string_view text) {
  if (text == "drop_fraction") return PipeConfig::DateTimeFallback::kDropFraction;
  if (text == "string") return PipeConfig::DateTimeFallback::kString;
  return Error(ErrorKind::kConfig,
               "datetime_fallback must be drop_fraction or string, not '" + std::string(text) + "'");
}

Result<PipeConfig::JsonMode> ParseJsonMode(std::string_view text) {
  if (text == "string") return PipeConfig::JsonMode::kString;
  if (text == "native") return PipeConfig::JsonMode::kNative;
  return Error(ErrorKind::kConfig, "json must be string or native, not '" + std::string(text) + "'");
}

Result<PipeConfig::StartMode> ParseStartMode(std::string_view text) {
  if (text == "initial") return PipeConfig::StartMode::kInitial;
  if (text == "never") return PipeConfig::StartMode::kNever;
  if (text == "only") return PipeConfig::StartMode::kOnly;
  return Error(ErrorKind::kConfig, "snapshot mode must be initial, never or only, not '" + std::string(text) +
                                       "' (flag --snapshot-mode, file key snapshot.mode)");
}

std::string_view StartModeName(PipeConfig::StartMode mode) {
  switch (mode) {
    case PipeConfig::StartMode::kInitial: return "initial";
    case PipeConfig::StartMode::kNever: return "never";
    case PipeConfig::StartMode::kOnly: return "only";
  }
  return "initial";
}

Result<std::pair<std::string, uint64_t>> ParseStartPosition(std::string_view text) {
  const size_t colon = text.rfind(':');
  auto bad = [&] {
    return Error(ErrorKind::kConfig,
                 "start_position must be FILE:POS, a binlog file and a byte offset "
                 "(e.g. binlog.000042:1234, as SHOW BINARY LOG STATUS prints them), not '" +
                     std::string(text) + "'");
  };
  if (colon == std::string_view::npos || colon == 0) return bad();
  const std::string_view file = text.substr(0, colon);
  const std::string_view digits = text.substr(colon + 1);
  if (digits.empty() || digits.size() > 19 ||
      digits.find_first_not_of("0123456789") != std::string_view::npos ||
      file.find_first_of(" \t/\\'\"`") != std::string_view::npos) {
    return bad();
  }
  const uint64_t position = std::stoull(std::string(digits));
  if (position < 4) return bad();  // every binlog file begins with its 4-byte magic number
  return std::make_pair(std::string(file), position);
}

Result<int64_t> ParseStartTime(std::string_view text) {
  auto bad = [&] {
    return Error(ErrorKind::kConfig,
                 "start_time must be 'YYYY-MM-DD HH:MM:SS' in UTC, or with an offset such as "
                 "'2024-05-01 12:00:00+02:00', not '" +
                     std::string(text) + "'");
  };
  // YYYY-MM-DD[ T]HH:MM:SS, then nothing, Z, or ±HH:MM.
  if (text.size() < 19) return bad();
  auto number = [&](size_t at, size_t length, int& out) {
    out = 0;
    for (size_t i = at; i < at + length; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      out = out * 10 + (text[i] - '0');
    }
    return true;
  };
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!number(0, 4, year) || text[4] != '-' || !number(5, 2, month) || text[7] != '-' || !number(8, 2, day) ||
      (text[10] != ' ' && text[10] != 'T') || !number(11, 2, hour) || text[13] != ':' ||
      !number(14, 2, minute) || text[16] != ':' || !number(17, 2, second)) {
    return bad();
  }
  std::string_view rest = text.substr(19);
  int64_t offset_s = 0;
  if (rest == "Z") {
    rest = {};
  } else if (!rest.empty()) {
    int oh = 0, om = 0;
    if (rest.size() != 6 || (rest[0] != '+' && rest[0] != '-') || !number(20, 2, oh) || rest[3] != ':' ||
        !number(23, 2, om) || oh > 23 || om > 59) {
      return bad();
    }
    offset_s = (rest[0] == '+' ? 1 : -1) * (int64_t{oh} * 3600 + int64_t{om} * 60);
  }
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (year < 1970 || month < 1 || month > 12 || day < 1 ||
      day > kDays[month - 1] + (month == 2 && leap ? 1 : 0) || hour > 23 || minute > 59 || second > 59) {
    return bad();
  }
  // Days since 1970-01-01 (the civil-from-days algorithm, inverted).
  const int y = month <= 2 ? year - 1 : year;
  const int era = y / 400;
  const int yoe = y - era * 400;
  const int doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const int64_t days = int64_t{era} * 146097 + doe - 719468;
  return days * 86400 + int64_t{hour} * 3600 + int64_t{minute} * 60 + second - offset_s;
}

Result<PipeConfig::BinlogGap> ParseBinlogGap(std::string_view text) {
  if (text == "fail") return PipeConfig::BinlogGap::kFail;
  if (text == "resync") return PipeConfig::BinlogGap::kResync;
  return Error(ErrorKind::kConfig, "on_binlog_gap must be fail or resync, not '" + std::string(text) + "'");
}

Status ValidateListenAddress(std::string_view address) {
  auto bad = [&](std::string_view why) {
    return Error(ErrorKind::kConfig, "http listen address '" + std::string(address) + "' " +
                                         std::string(why) +
                                         ": give HOST:PORT such as 127.0.0.1:9187 or [::1]:9187 (flag "
                                         "--http, file key http.listen)");
  };
  size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) return bad("has no port");
  std::string_view host = address.substr(0, colon);
  std::string_view port = address.substr(colon + 1);
  if (host.empty()) return bad("has no host (0.0.0.0 listens on every interface)");
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return bad("has an unclosed IPv6 bracket");
  } else if (host.find(':') != std::string_view::npos) {
    return bad("needs brackets around an IPv6 host");
  }
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos ||
      std::stoul(std::string(port)) > 65535) {
    return bad("has no port number between 0 and 65535");
  }
  return Status::Ok();
}

Status Validate(const PipeConfig& c) {
  if (c.source.empty())
    return Error(ErrorKind::kConfig, "no source: give --source mysql://USER@HOST:PORT (file key: source)");
  if (c.dest.empty()) return Error(ErrorKind::kConfig, "no destination: give --dest URL (file key: dest)");
  if (c.state.empty())
    return Error(ErrorKind::kConfig, "no state directory: give --state DIR (file key: state)");
  if (!c.dest_cluster.empty()) {
    if (c.dest.starts_with("file:")) {
      return Error(ErrorKind::kConfig,
                   "dest_cluster '" + c.dest_cluster +
                       "' needs ClickHouse servers (http:// or https:// in --dest), not an "
                       "embedded store");
    }
    if (c.dest_replication_path.empty() || c.dest_replication_path.front() != '/') {
      return Error(ErrorKind::kConfig,
                   "dest_replication_path must be a ZooKeeper path starting with '/', not '" +
                       c.dest_replication_path + "'");
    }
    if (c.dest_replica_name.empty()) {
      return Error(ErrorKind::kConfig, "dest_replica_name must not be empty (default: {replica})");
    }
  }
  if (c.log_level != "debug" && c.log_level != "info" && c.log_level != "warn" && c.log_level != "error") {
    return Error(ErrorKind::kConfig,
                 "log_level must be debug, info, warn or error, not '" + c.log_level + "'");
  }
  if (c.log_format != "text" && c.log_format != "json") {
    return Error(ErrorKind::kConfig, "log_format must be text or json, not '" + c.log_format +
                                         "' (flag --log-format, file key log_format)");
  }
  if (!c.http_listen.empty()) CHSYNC_RETURN_IF_ERROR(ValidateListenAddress(c.http_listen));
  const int starts =
      (c.start_position.empty() ? 0 : 1) + (c.start_gtid.empty() ? 0 : 1) + (c.start_time.empty() ? 0 : 1);
  if (starts > 1) {
    return Error(ErrorKind::kConfig,
                 "give at most one of start_position, start_gtid and start_time (flags --start-position, "
                 "--start-gtid, --start-time): each says where the stream begins");
  }
  if (starts == 1 && c.snapshot_mode != PipeConfig::StartMode::kNever) {
    const char* key = !c.start_position.empty() ? "start_position"
                      : !c.start_gtid.empty()   ? "start_gtid"
                                                : "start_time";
    return Error(ErrorKind::kConfig,
                 fmt::format("{} is given with snapshot.mode {}: a start point is for a pipe that copies "
                             "nothing (snapshot.mode never, flag --snapshot-mode never); an initial copy "
                             "streams from the point the copy began",
                             key, StartModeName(c.snapshot_mode)));
  }
  if (!c.start_position.empty()) CHSYNC_RETURN_IF_ERROR(ParseStartPosition(c.start_position));
  if (!c.start_time.empty()) CHSYNC_RETURN_IF_ERROR(ParseStartTime(c.start_time));
  if (!std::isfinite(c.http_ready_max_lag_s) || c.http_ready_max_lag_s <= 0 ||
      c.http_ready_max_lag_s > kMaxReadyLagSeconds) {
    return Error(ErrorKind::kConfig,
                 fmt::format("ready_max_lag_s must be above 0 and at most {} seconds, not {} (flag "
                             "--ready-max-lag-s, file key http.ready_max_lag_s)",
                             kMaxReadyLagSeconds, c.http_ready_max_lag_s));
  }
  return Status::Ok();
}

}  // namespace chsync::pipe
