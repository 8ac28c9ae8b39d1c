#include "mysql/managed_provider.h"

#include <algorithm>
#include <cctype>

namespace chsync::mysql {

std::string_view ProviderName(Provider provider) {
  switch (provider) {
    case Provider::kSelfManaged: return "self-managed";
    case Provider::kRds: return "Amazon RDS";
    case Provider::kAurora: return "Amazon Aurora MySQL";
    case Provider::kCloudSql: return "Google Cloud SQL for MySQL";
    case Provider::kAzure: return "Azure Database for MySQL flexible server";
  }
  return "unknown";
}

ProviderGuess DetectProvider(const std::map<std::string, std::string>& variables) {
  auto value = [&variables](const std::string& name) -> const std::string* {
    auto it = variables.find(name);
    return it == variables.end() ? nullptr : &it->second;
  };
  if (const std::string* v = value("aurora_version")) {
    return {Provider::kAurora, "aurora_version=" + *v};
  }
  if (const std::string* v = value("basedir"); v != nullptr && v->starts_with("/rdsdbbin/")) {
    return {Provider::kRds, "basedir=" + *v};
  }
  if (const std::string* v = value("datadir"); v != nullptr && v->starts_with("/rdsdbdata/")) {
    return {Provider::kRds, "datadir=" + *v};
  }
  for (const auto& [name, v] : variables) {
    if (name.starts_with("cloudsql_")) return {Provider::kCloudSql, std::string(name).append("=").append(v)};
  }
  if (const std::string* v = value("aad_auth_only")) {
    return {Provider::kAzure, "aad_auth_only=" + *v};
  }
  return {};
}

std::optional<std::string> BinlogRetentionHours(const QueryResult& configuration) {
  int name = configuration.ColumnIndex("name");
  int value = configuration.ColumnIndex("value");
  if (name < 0 || value < 0) return std::nullopt;
  for (const auto& row : configuration.rows) {
    if (static_cast<size_t>(std::max(name, value)) >= row.size()) continue;
    const std::optional<std::string>& n = row[static_cast<size_t>(name)];
    if (!n || *n != "binlog retention hours") continue;
    const std::optional<std::string>& v = row[static_cast<size_t>(value)];
    return v.has_value() ? *v : std::string("NULL");
  }
  return std::nullopt;
}

Result<std::optional<std::string>> ReadRdsBinlogRetention(Connection& conn) {
  CHSYNC_ASSIGN_OR_RETURN(QueryResult rows, conn.Query("CALL mysql.rds_show_configuration"));
  return BinlogRetentionHours(rows);
}

}  // namespace chsync::mysql
