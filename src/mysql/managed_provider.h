#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "mysql/connection.h"

namespace chsync::mysql {

/// Where a MySQL server runs, as far as its own variables tell: on a host of its user's
/// (kSelfManaged) or in a managed service whose users cannot run SET GLOBAL nor edit my.cnf, and
/// change settings through the provider's parameter groups, flags or server parameters instead.
enum class Provider { kSelfManaged, kRds, kAurora, kCloudSql, kAzure };

/// The provider and the variable that gave it away ("basedir=/rdsdbbin/mysql-8.0.41.R2/").
struct ProviderGuess {
  Provider provider = Provider::kSelfManaged;
  std::string evidence;  ///< empty for kSelfManaged
  bool managed() const { return provider != Provider::kSelfManaged; }
};

/// "Amazon RDS", "Amazon Aurora MySQL", "Google Cloud SQL for MySQL", "Azure Database for MySQL
/// flexible server", "self-managed".
std::string_view ProviderName(Provider provider);

/// Recognises the provider from SHOW GLOBAL VARIABLES, by name (pure). In this order:
/// aurora_version present: Aurora (its basedir is under /rdsdbbin too); basedir under /rdsdbbin/
/// or datadir under /rdsdbdata/: RDS; a cloudsql_* variable (Cloud SQL's own flags, such as
/// cloudsql_iam_authentication): Cloud SQL; aad_auth_only (Azure's Microsoft Entra switch):
/// Azure; otherwise self-managed.
ProviderGuess DetectProvider(const std::map<std::string, std::string>& variables);

/// The value of 'binlog retention hours' from the rows of CALL mysql.rds_show_configuration
/// (columns name, value, description): "NULL" for a NULL value; nullopt when no row names it.
std::optional<std::string> BinlogRetentionHours(const QueryResult& configuration);

/// Runs CALL mysql.rds_show_configuration on an RDS or Aurora server and returns
/// BinlogRetentionHours of its answer; an error when the server refuses the call.
Result<std::optional<std::string>> ReadRdsBinlogRetention(Connection& conn);

}  // namespace chsync::mysql
