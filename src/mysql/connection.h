#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/url.h"
#include "net/ssh_endpoint.h"

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
  /// TLS or nothing: ?ssl=required (1, true), ?ssl-mode=verify_ca|verify_identity, or ?ssl-ca=.
  /// Open() fails when the server does not offer TLS (Connector/C 3.3 alone would fall back to a
  /// plain connection when the certificate is not verified).
  bool tls_required = false;
  /// ?ssl-ca=PATH: the server's certificate must be signed by this CA and name the host connected
  /// to (Connector/C checks both: verify_ca and verify_identity are the same here).
  std::string tls_ca;
  /// ?auth=aws_iam&region=REGION: AWS IAM database authentication (RDS, Aurora). Open() makes a
  /// new IAM token (mysql/aws_sigv4.h, credentials by ResolveAwsCredentials) for every connection
  /// and sends it as the password with the cleartext plugin; TLS is required. Empty: password auth.
  std::string aws_iam_region;
  /// ?ssh=USER@BASTION:PORT (with ssh-key, ssh-known-hosts, ssh-strict): Open() connects through an
  /// SSH tunnel to host:port (net/ssh_tunnel.h). TLS through a tunnel checks the certificate
  /// against 127.0.0.1, the forwarder's address.
  std::optional<net::SshEndpoint> ssh;

  /// "host:port", for messages.
  std::string Address() const;
};

/// Options from `mysql://USER[:PASSWORD]@HOST[:PORT][/DB][?ssl=required&ssl-ca=PATH]`.
/// When the URL has no password, `password_env` (if set in the environment) supplies it.
/// Parameters: ssl (or ssl-mode, sslmode) = 0|false|disabled, 1|true|required, verify_ca,
/// verify_identity (any case; the verify modes need ssl-ca); ssl-ca (or sslca) = PATH;
/// connect-timeout and read-timeout = seconds; auth = aws_iam with region = REGION (needs TLS).
/// Anything else is a kUsage error that lists them.
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
  /// The TLS cipher of this connection as the client negotiated it; empty for a plain connection.
  const std::string& tls_cipher() const { return tls_cipher_; }
  /// How the server sees this session's transport, from its own status (SHOW SESSION STATUS
  /// Ssl_version, Ssl_cipher): "TLSv1.3 TLS_AES_256_GCM_SHA384", or "" when it is not encrypted.
  Result<std::string> ServerTlsStatus();
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
  std::string tls_cipher_;
};

/// The error of a failed TLS connection attempt (Connector/C's CR_SSL_CONNECTION_ERROR, or a
/// server that offered no TLS when `options` require it): what failed at which server and what
/// to do. kConfig when the certificate was refused or the server has no TLS (retrying cannot
/// help), kNetwork for a handshake broken in transit. `detail` is Connector/C's message.
Error TlsConnectError(const ConnectOptions& options, std::string_view detail, unsigned code);

/// `name` quoted as a MySQL identifier (backticks doubled).
std::string QuoteIdentifier(std::string_view name);
/// `text` as a MySQL string literal in single quotes (backslash, quote and control bytes escaped).
std::string QuoteString(std::string_view text);

}  // namespace chsync::mysql
