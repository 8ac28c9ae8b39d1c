#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/url.h"

struct st_mysql;  // MYSQL from <mariadb/mysql.h>

namespace chsync::mysql {

/// Where and how to connect to a MySQL or MariaDB server.
struct ConnectOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 3306;
  std::string user;
  std::string password;
  std::string database;  ///< may be empty
  unsigned connect_timeout_s = 10;
  unsigned read_timeout_s = 600;
  unsigned write_timeout_s = 60;
  bool tls_required = false;  ///< ?ssl=required (or ssl=1) in the URL
  std::string tls_ca;         ///< ?ssl-ca=PATH: verify the server certificate against this CA

  /// "host:port", for messages.
  std::string Address() const;
};

/// Options from `mysql://USER[:PASSWORD]@HOST[:PORT][/DB][?ssl=required&ssl-ca=PATH]`.
/// When the URL has no password, `password_env` (if set in the environment) supplies it.
Result<ConnectOptions> OptionsFromUrl(const Url& url, const char* password_env = "CHSYNC_SOURCE_PASSWORD");

/// A text-protocol result: every value as text, NULL as nullopt.
struct QueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;

  /// Index of the named column (case-insensitive), or -1.
  int ColumnIndex(std::string_view name) const;
};

/// One connection through MariaDB Connector/C (speaks to MySQL 5.7–9.x and MariaDB, with
/// caching_sha2_password, ed25519 and TLS). Not thread-safe: one thread at a time.
class Connection {
 public:
  /// Connects; errors say which address and quote the server's message, never the password.
  /// Authentication failures are ErrorKind::kAuth, unreachable servers kNetwork.
  static Result<std::unique_ptr<Connection>> Open(const ConnectOptions& options);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Runs a statement and discards any result.
  Status Execute(std::string_view sql);
  /// Runs a statement and returns all rows as text.
  Result<QueryResult> Query(std::string_view sql);
  /// Runs a query expected to return one row with one value (nullopt for NULL or no row).
  Result<std::optional<std::string>> QueryValue(std::string_view sql);

  /// The server's version string (SELECT VERSION()), read at connect time.
  const std::string& server_version() const { return server_version_; }
  const ConnectOptions& options() const { return options_; }
  /// The underlying handle, for modules that speak lower-level protocol (binlog streaming).
  st_mysql* handle() { return mysql_; }

  /// An Error from the handle's last failure, with `what` as context and the server's errno.
  Error LastError(std::string_view what) const;

 private:
  Connection(st_mysql* mysql, ConnectOptions options);
  st_mysql* mysql_;
  ConnectOptions options_;
  std::string server_version_;
};

/// `name` quoted as a MySQL identifier (backticks doubled).
std::string QuoteIdentifier(std::string_view name);
/// `text` as a MySQL string literal in single quotes (backslash, quote and control bytes escaped).
std::string QuoteString(std::string_view text);

}  // namespace chsync::mysql
