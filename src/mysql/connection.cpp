#include "mysql/connection.h"

#include <mariadb/errmsg.h>
#include <mariadb/mysql.h>
#include <mariadb/mysqld_error.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include <fmt/format.h>

#include "common/redact.h"
#include "mysql/aws_credentials.h"
#include "mysql/aws_sigv4.h"
#include "net/ssh_tunnel.h"

namespace chsync::mysql {
namespace {

bool IsNetworkErrno(unsigned code) {
  return code == CR_CONNECTION_ERROR || code == CR_CONN_HOST_ERROR || code == CR_SERVER_GONE_ERROR ||
         code == CR_SERVER_LOST || code == CR_UNKNOWN_HOST || code == CR_IPSOCK_ERROR ||
         code == CR_SERVER_LOST_EXTENDED;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool Contains(std::string_view text, std::string_view part) {
  return Lower(text).find(part) != std::string::npos;
}

bool IsAuthErrno(unsigned code) {
  return code == ER_ACCESS_DENIED_ERROR || code == ER_DBACCESS_DENIED_ERROR ||
         code == ER_ACCESS_DENIED_NO_PASSWORD_ERROR || code == CR_AUTH_PLUGIN_CANNOT_LOAD;
}

}  // namespace

std::string ConnectOptions::Address() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return h + ":" + std::to_string(port);
}

Result<ConnectOptions> OptionsFromUrl(const Url& url, const char* password_env) {
  if (url.scheme != "mysql" && url.scheme != "mariadb") {
    return Error(ErrorKind::kUsage, "source URL must start with mysql:// (got " + url.Redacted() + ")");
  }
  ConnectOptions o;
  o.host = url.host;
  o.port = url.port != 0 ? url.port : 3306;
  o.user = url.user;
  if (o.user.empty()) return Error(ErrorKind::kUsage, "source URL names no user: " + url.Redacted());
  if (url.has_password) {
    o.password = url.password;
  } else if (password_env != nullptr) {
    if (const char* env = std::getenv(password_env)) o.password = env;
  }
  if (url.path.size() > 1) o.database = url.path.substr(1);
  CHSYNC_ASSIGN_OR_RETURN(auto params, ParseQueryParams(url.query));
  CHSYNC_ASSIGN_OR_RETURN(o.ssh, net::TakeSshParams(params, "source URL"));
  bool tls_off = false;
  bool verify_mode = false;
  bool auth_iam = false;
  std::string mode_text;
  for (const auto& [key, value] : params) {
    if (key == "ssl" || key == "ssl-mode" || key == "sslmode") {
      std::string v = Lower(value);
      mode_text = key;
      mode_text += "=";
      mode_text += value;
      if (v == "0" || v == "false" || v == "disabled") {
        tls_off = true;
      } else if (v == "1" || v == "true" || v == "required") {
        o.tls_required = true;
      } else if (v == "verify_ca" || v == "verify_identity") {
        o.tls_required = true;
        verify_mode = true;
      } else {
        return Error(ErrorKind::kUsage, fmt::format("source URL parameter {}='{}' is not one of 0, false, "
                                                    "disabled, 1, true, required, verify_ca, verify_identity",
                                                    key, value));
      }
    } else if (key == "ssl-ca" || key == "sslca") {
      if (value.empty())
        return Error(ErrorKind::kUsage, "source URL parameter ssl-ca needs a file: ssl-ca=FILE");
      o.tls_ca = value;
      o.tls_required = true;
    } else if (key == "connect-timeout") {
      o.connect_timeout_s = static_cast<unsigned>(std::strtoul(value.c_str(), nullptr, 10));
    } else if (key == "read-timeout") {
      // Seconds a query waits for the server's answer (the binlog stream waits less: heartbeats).
      o.read_timeout_s = static_cast<unsigned>(std::strtoul(value.c_str(), nullptr, 10));
      if (o.read_timeout_s == 0) {
        return Error(ErrorKind::kUsage,
                     "read-timeout in the source URL must be a number of seconds, not '" + value + "'");
      }
    } else if (key == "auth") {
      if (Lower(value) != "aws_iam") {
        return Error(ErrorKind::kUsage, "source URL parameter auth='" + value +
                                            "' is not aws_iam (the only one; without it, a password)");
      }
      auth_iam = true;
    } else if (key == "region") {
      o.aws_iam_region = value;
    } else {
      return Error(ErrorKind::kUsage,
                   "unknown source URL parameter '" + key +
                       "' (known: ssl, ssl-ca, connect-timeout, read-timeout, auth, region, ssh, ssh-key, "
                       "ssh-known-hosts, ssh-strict)");
    }
  }
  if (auth_iam || !o.aws_iam_region.empty()) {
    if (!auth_iam)
      return Error(ErrorKind::kUsage, "source URL parameter region= is for auth=aws_iam, which it lacks");
    if (o.aws_iam_region.empty()) {
      return Error(
          ErrorKind::kUsage,
          "source URL says auth=aws_iam but names no region: add region=REGION (e.g. region=eu-west-1), "
          "the AWS region of the RDS or Aurora server");
    }
    if (!o.tls_required || tls_off) {
      return Error(
          ErrorKind::kUsage,
          "source URL says auth=aws_iam without TLS: RDS takes IAM tokens only over TLS, and chsync sends "
          "the token in clear text inside it; add ssl-ca=FILE (the RDS CA bundle) or ssl=required");
    }
    if (url.has_password) {
      return Error(ErrorKind::kUsage,
                   "source URL says auth=aws_iam and has a password: leave the password out, "
                   "the IAM token is the password");
    }
    o.password.clear();  // not CHSYNC_SOURCE_PASSWORD: the token replaces it
  }
  if (tls_off && o.tls_required) {
    return Error(ErrorKind::kUsage, "source URL says " + mode_text +
                                        " and asks for TLS with ssl-ca or another ssl parameter: keep one");
  }
  if (verify_mode && o.tls_ca.empty()) {
    return Error(ErrorKind::kUsage,
                 "source URL says " + mode_text +
                     " but names no CA: add ssl-ca=FILE, the CA certificate (PEM) that signed the "
                     "server's certificate (for a public CA, the system bundle, e.g. "
                     "/etc/ssl/certs/ca-certificates.crt on Debian)");
  }
  return o;
}

int QueryResult::ColumnIndex(std::string_view name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    const std::string& c = columns[i];
    if (c.size() != name.size()) continue;
    bool same = true;
    for (size_t j = 0; j < c.size() && same; ++j) {
      same =
          std::tolower(static_cast<unsigned char>(c[j])) == std::tolower(static_cast<unsigned char>(name[j]));
    }
    if (same) return static_cast<int>(i);
  }
  return -1;
}

Connection::Connection(MYSQL* mysql, ConnectOptions options) : mysql_(mysql), options_(std::move(options)) {}

Connection::~Connection() {
  mysql_close(mysql_);
}

Error Connection::LastError(std::string_view what) const {
  unsigned code = mysql_errno(mysql_);
  ErrorKind kind = IsNetworkErrno(code) ? ErrorKind::kNetwork
                   : IsAuthErrno(code)  ? ErrorKind::kAuth
                                        : ErrorKind::kServer;
  std::string message = std::string(what) + " on MySQL server " + options_.Address() + ": " +
                        mysql_error(mysql_) + " (error " + std::to_string(code) + ")";
  return Error(kind, std::move(message), static_cast<int>(code));
}

Error TlsConnectError(const ConnectOptions& options, std::string_view detail, unsigned code) {
  const std::string where = "MySQL server " + options.Address();
  const std::string suffix =
      detail.empty() ? "" : ": " + std::string(detail) + " (error " + std::to_string(code) + ")";
  if (Contains(detail, "does not support") || Contains(detail, "not offer")) {
    return Error(ErrorKind::kConfig,
                 where + " offers no TLS, but the source URL asks for it (ssl=required or ssl-ca)" + suffix +
                     "; enable TLS on the server (ssl_cert, ssl_key and ssl_ca in its configuration) or "
                     "take ssl and ssl-ca out of the source URL",
                 static_cast<int>(code));
  }
  if (Contains(detail, "certificate") || Contains(detail, "validation") || Contains(detail, "verify") ||
      Contains(detail, "issuer")) {
    return Error(ErrorKind::kConfig,
                 "TLS certificate verify failed for " + where + " (checked against ssl-ca=" + options.tls_ca +
                     ")" + suffix +
                     "; pass ssl-ca=FILE with the CA certificate that signed the server's certificate, and "
                     "connect by a host name or IP address that the certificate lists",
                 static_cast<int>(code));
  }
  return Error(ErrorKind::kNetwork, "TLS handshake with " + where + " failed" + suffix,
               static_cast<int>(code));
}

Result<std::unique_ptr<Connection>> Connection::Open(const ConnectOptions& options) {
  if (!options.tls_ca.empty()) {
    // Connector/C reports an unreadable CA file as a bare "No such file or directory".
    std::FILE* ca = std::fopen(options.tls_ca.c_str(), "r");
    if (ca == nullptr) {
      return Error(ErrorKind::kConfig, "cannot read the CA file '" + options.tls_ca +
                                           "' named by ssl-ca in the source URL: " + std::strerror(errno));
    }
    std::fclose(ca);
  }
  MYSQL* mysql = mysql_init(nullptr);
  if (mysql == nullptr) return Error(ErrorKind::kInternal, "mysql_init failed: out of memory");
  unsigned ct = options.connect_timeout_s, rt = options.read_timeout_s, wt = options.write_timeout_s;
  mysql_optionsv(mysql, MYSQL_OPT_CONNECT_TIMEOUT, &ct);
  mysql_optionsv(mysql, MYSQL_OPT_READ_TIMEOUT, &rt);
  mysql_optionsv(mysql, MYSQL_OPT_WRITE_TIMEOUT, &wt);
  mysql_optionsv(mysql, MYSQL_SET_CHARSET_NAME, "utf8mb4");
  unsigned protocol = MYSQL_PROTOCOL_TCP;
  mysql_optionsv(mysql, MYSQL_OPT_PROTOCOL, &protocol);
  if (options.tls_required) {
    my_bool enforce = 1;
    mysql_optionsv(mysql, MYSQL_OPT_SSL_ENFORCE, &enforce);
    if (!options.tls_ca.empty()) {
      mysql_optionsv(mysql, MYSQL_OPT_SSL_CA, options.tls_ca.c_str());
      my_bool verify = 1;
      mysql_optionsv(mysql, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify);
    }
  }
  std::string password = options.password;
  if (!options.aws_iam_region.empty()) {
    // A new token for every connection: each is valid 15 minutes from now.
    auto credentials = ResolveAwsCredentials();
    if (!credentials.ok()) {
      mysql_close(mysql);
      return Error(credentials.error().kind(),
                   "IAM authentication to " + options.Address() + ": " + credentials.error().message());
    }
    password = RdsAuthToken(*credentials, options.host, options.port, options.user, options.aws_iam_region,
                            std::time(nullptr));
    RegisterSecret(password);
    my_bool cleartext = 1;
    mysql_optionsv(mysql, MYSQL_ENABLE_CLEARTEXT_PLUGIN, &cleartext);
  }
  std::unique_ptr<Connection> conn(new Connection(mysql, options));
  std::string host = options.host;
  uint16_t port = options.port;
  if (options.ssh) {  // the forwarder of an SSH tunnel stands in for the server
    CHSYNC_ASSIGN_OR_RETURN(net::LocalAddress local,
                            net::DialThroughSsh(*options.ssh, options.host, options.port,
                                                std::chrono::seconds(options.connect_timeout_s)));
    host = local.host;
    port = local.port;
  }
  if (mysql_real_connect(mysql, host.c_str(), options.user.c_str(), password.c_str(),
                         options.database.empty() ? nullptr : options.database.c_str(), port, nullptr,
                         CLIENT_MULTI_RESULTS) == nullptr) {
    if (options.ssh && IsNetworkErrno(mysql_errno(mysql))) {
      // The forwarder closed the connection: the bastion refused the channel, or the session dropped.
      if (auto failure = net::RecentSshFailure(*options.ssh, options.host, options.port)) return *failure;
    }
    if (mysql_errno(mysql) == CR_SSL_CONNECTION_ERROR) {
      return TlsConnectError(options, mysql_error(mysql), mysql_errno(mysql));
    }
    Error e = conn->LastError("cannot connect as user '" + options.user + "'");
    if (e.kind() == ErrorKind::kServer && mysql_errno(mysql) >= 2000)
      e = Error(ErrorKind::kNetwork, e.message(), e.server_code());
    return e;
  }
  const char* cipher = mysql_get_ssl_cipher(mysql);
  conn->tls_cipher_ = cipher != nullptr ? cipher : "";
  if (options.tls_required && conn->tls_cipher_.empty()) {
    // Without certificate verification Connector/C 3.3 falls back to plain text when the server
    // offers no TLS, whatever MYSQL_OPT_SSL_ENFORCE says: refuse the connection here.
    return TlsConnectError(options, "the server does not offer TLS; Connector/C connected without it",
                           CR_SSL_CONNECTION_ERROR);
  }
  const char* version = mysql_get_server_info(mysql);
  conn->server_version_ = version != nullptr ? version : "";
  return conn;
}

Result<std::string> Connection::ServerTlsStatus() {
  CHSYNC_ASSIGN_OR_RETURN(QueryResult r,
                          Query("SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')"));
  std::string version, cipher;
  for (const auto& row : r.rows) {
    if (row.size() < 2 || !row[0] || !row[1]) continue;
    if (*row[0] == "Ssl_version") version = *row[1];
    if (*row[0] == "Ssl_cipher") cipher = *row[1];
  }
  if (cipher.empty()) return std::string();
  return version.empty() ? cipher : version + " " + cipher;
}

Status Connection::Execute(std::string_view sql) {
  if (mysql_real_query(mysql_, sql.data(), sql.size()) != 0) return LastError("query failed");
  // Drain every result set so the connection stays usable.
  do {
    MYSQL_RES* res = mysql_store_result(mysql_);
    if (res != nullptr) mysql_free_result(res);
  } while (mysql_next_result(mysql_) == 0);
  if (mysql_errno(mysql_) != 0) return LastError("query failed");
  return Status::Ok();
}

Result<QueryResult> Connection::Query(std::string_view sql) {
  if (mysql_real_query(mysql_, sql.data(), sql.size()) != 0) return LastError("query failed");
  QueryResult out;
  MYSQL_RES* res = mysql_store_result(mysql_);
  if (res == nullptr) {
    if (mysql_field_count(mysql_) != 0) return LastError("reading the result failed");
    return out;
  }
  unsigned n = mysql_num_fields(res);
  MYSQL_FIELD* fields = mysql_fetch_fields(res);
  out.columns.reserve(n);
  for (unsigned i = 0; i < n; ++i) out.columns.emplace_back(fields[i].name, fields[i].name_length);
  while (MYSQL_ROW row = mysql_fetch_row(res)) {
    unsigned long* lengths = mysql_fetch_lengths(res);
    auto& r = out.rows.emplace_back();
    r.reserve(n);
    for (unsigned i = 0; i < n; ++i) {
      if (row[i] == nullptr) {
        r.emplace_back(std::nullopt);
      } else {
        r.emplace_back(std::string(row[i], lengths[i]));
      }
    }
  }
  mysql_free_result(res);
  while (mysql_next_result(mysql_) == 0) {
    if (MYSQL_RES* extra = mysql_store_result(mysql_)) mysql_free_result(extra);
  }
  return out;
}

Result<std::optional<std::string>> Connection::QueryValue(std::string_view sql) {
  CHSYNC_ASSIGN_OR_RETURN(QueryResult r, Query(sql));
  if (r.rows.empty() || r.rows[0].empty()) return std::optional<std::string>();
  return r.rows[0][0];
}

std::string QuoteIdentifier(std::string_view name) {
  std::string out = "`";
  for (char c : name) {
    if (c == '`') out.push_back('`');
    out.push_back(c);
  }
  out.push_back('`');
  return out;
}

std::string QuoteString(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    switch (c) {
      case '\'': out += "\\'"; break;
      case '\\': out += "\\\\"; break;
      case '\0': out += "\\0"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\x1a': out += "\\Z"; break;
      default: out.push_back(c);
    }
  }
  out.push_back('\'');
  return out;
}

}  // namespace chsync::mysql
