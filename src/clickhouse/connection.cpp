#include "clickhouse/connection.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "clickhouse/cluster.h"
#include "clickhouse/embedded_connection.h"
#include "clickhouse/http_connection.h"
#include "clickhouse/server_error.h"
#include "clickhouse/typed_insert.h"
#include "common/log.h"

namespace chsync::clickhouse {
namespace {

/// Applies `?name=value&…` of a server URL to `options`.
Status ApplyQueryOptions(std::string_view query, ConnectOptions& options, bool& compress_set) {
  CHSYNC_ASSIGN_OR_RETURN(auto params, ParseQueryParams(query));
  CHSYNC_ASSIGN_OR_RETURN(options.ssh, net::TakeSshParams(params, "destination URL"));
  for (auto& [name, value] : params) {
    if (name == "database") {
      options.database = value;
    } else if (name == "ssl-ca") {
      options.tls_ca = value;
    } else if (name == "ssl-verify") {
      if (value != "0" && value != "1") {
        return Error(ErrorKind::kUsage,
                     "ssl-verify in the destination URL must be 0 or 1, not '" + value + "'");
      }
      options.tls_verify = value == "1";
    } else if (name == "compress") {
      if (value != "0" && value != "1") {
        return Error(ErrorKind::kUsage,
                     "compress in the destination URL must be 0 or 1, not '" + value + "'");
      }
      options.compress_min_bytes = value == "1" ? size_t{1} << 20 : 0;
      compress_set = true;
    } else if (name == "auth") {
      if (value != "header" && value != "basic") {
        return Error(ErrorKind::kUsage,
                     "auth in the destination URL must be 'basic' or 'header', not '" + value + "'");
      }
      options.header_auth = value == "header";
    } else if (name == "connect-timeout" || name == "request-timeout") {
      // Seconds: how long to wait for the connection, and for one statement's or insert's answer
      // (a stalled network fails after it and is retried).
      char* end = nullptr;
      unsigned long seconds = std::strtoul(value.c_str(), &end, 10);
      if (value.empty() || end == nullptr || *end != '\0' || seconds < 1 || seconds > 86400) {
        std::string message = name;
        message += " in the destination URL must be a number of seconds from 1 to 86400, not '";
        message += value;
        message += "'";
        return Error(ErrorKind::kUsage, std::move(message));
      }
      (name == "connect-timeout" ? options.connect_timeout : options.request_timeout) =
          std::chrono::seconds(seconds);
    } else if (name == "password" || name == "user") {
      return Error(ErrorKind::kUsage,
                   "put the user in the destination URL as USER@HOST and the password in " +
                       options.password_env + ", not in ?" + name + "=");
    } else {
      options.settings.emplace_back(std::move(name), std::move(value));
    }
  }
  return Status::Ok();
}

}  // namespace

Error CancelledError(std::string_view what) {
  return Error(ErrorKind::kNetwork, "cancelled: " + std::string(what));
}

bool IsCancelled(const Error& error) {
  if (error.kind() != ErrorKind::kNetwork) return false;
  const std::string& message = error.message();
  return message.starts_with("cancelled: ") || message.find(": cancelled: ") != std::string::npos;
}

bool Connection::SleepUnlessCancelled(std::chrono::milliseconds duration) const {
  constexpr std::chrono::milliseconds kStep{50};
  const auto deadline = std::chrono::steady_clock::now() + duration;
  for (;;) {
    if (cancelled()) return false;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return true;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(deadline - now, kStep));
  }
}

Result<std::string> Connection::RunWithRetries(std::string_view sql, std::string_view data,
                                               std::string_view format, const RequestOptions& request) {
  if (cancelled()) return CancelledError("nothing sent to " + Describe());
  std::chrono::milliseconds backoff = retry_.initial_backoff;
  for (int attempt = 1;; ++attempt) {
    auto result = Run(sql, data, format, request);
    if (result.ok()) return result;
    const bool last = attempt >= retry_.max_attempts || !IsRetryable(result.error()) ||
                      IsCancelled(result.error()) ||
                      (request.on_cluster && result.error().server_code() == code::kTimeoutExceeded);
    if (on_failure_) on_failure_(result.error(), attempt, !last);
    if (last) return result;
    log::Warn("{}; retrying in {} ms (attempt {} of {})", result.error().message(), backoff.count(),
              attempt + 1, retry_.max_attempts);
    if (!SleepUnlessCancelled(backoff)) {
      return CancelledError("stopped retrying after attempt " + std::to_string(attempt) + " of " +
                            std::to_string(retry_.max_attempts) + ": " + result.error().message());
    }
    backoff = std::min(backoff * 2, retry_.max_backoff);
  }
}

Result<std::string> Connection::Query(std::string_view sql, std::string_view format,
                                      const RequestOptions& request) {
  return RunWithRetries(sql, {}, format, request);
}

Status Connection::Execute(std::string_view sql, const RequestOptions& request) {
  auto result = RunWithRetries(sql, {}, "TabSeparated", request);
  if (!result.ok()) return std::move(result).error();
  return Status::Ok();
}

Status Connection::Insert(std::string_view insert_sql_prefix, std::string_view data,
                          const RequestOptions& request) {
  if (data.empty()) return Status::Ok();
  if (std::optional<TypedInsert> typed = ParseTypedInsert(insert_sql_prefix))
    return InsertTyped(*this, *typed, data, request);
  auto result = RunWithRetries(insert_sql_prefix, data, {}, request);
  if (!result.ok()) return std::move(result).error();
  return Status::Ok();
}

Result<ServerVersion> Connection::Version() {
  if (!version_) {
    CHSYNC_ASSIGN_OR_RETURN(std::string text, Query("SELECT version()"));
    CHSYNC_ASSIGN_OR_RETURN(ServerVersion version, ParseServerVersion(text));
    version_ = version;
  }
  return *version_;
}

Result<std::unique_ptr<Connection>> Connect(const Url& url, const ConnectOptions& options) {
  if (url.scheme == "file") {
    CHSYNC_ASSIGN_OR_RETURN(auto conn, EmbeddedConnection::Open(url.path, options));
    conn->set_retry_policy(options.retry);
    conn->set_cancel(options.cancel);
    conn->set_on_failure(options.on_failure);
    return std::unique_ptr<Connection>(std::move(conn));
  }
  if (url.scheme != "http" && url.scheme != "https") {
    return Error(ErrorKind::kUsage, "destination URL " + url.Redacted() +
                                        ": use http://USER@HOST:8123, https://USER@HOST:8443 or file:PATH");
  }
  ConnectOptions effective = options;
  bool compress_set = false;
  CHSYNC_RETURN_IF_ERROR(ApplyQueryOptions(url.query, effective, compress_set));
  // Compressing costs more CPU than it saves on the loopback interface.
  if (!compress_set && (url.host == "127.0.0.1" || url.host == "localhost" || url.host == "::1")) {
    effective.compress_min_bytes = 0;
  }
  if (url.path.size() > 1) effective.database = url.path.substr(1);
  std::string password = url.password;
  if (!url.has_password && !effective.password_env.empty()) {
    if (const char* env = std::getenv(effective.password_env.c_str()); env != nullptr) password = env;
  }
  std::string user = url.user.empty() ? "default" : url.user;
  uint16_t port = url.port != 0 ? url.port : (url.scheme == "https" ? 8443 : 8123);
  std::string host = url.host.find(':') != std::string::npos ? "[" + url.host + "]" : url.host;
  std::string base = url.scheme + "://" + host + ":" + std::to_string(port) + "/";
  RetryPolicy retry = effective.retry;
  CHSYNC_ASSIGN_OR_RETURN(auto conn, HttpConnection::Create(std::move(base), std::move(user),
                                                            std::move(password), std::move(effective)));
  conn->set_ssh_target(url.host, port);
  conn->set_retry_policy(retry);
  conn->set_cancel(options.cancel);
  conn->set_on_failure(options.on_failure);
  return std::unique_ptr<Connection>(std::move(conn));
}

Result<std::unique_ptr<Connection>> Connect(std::string_view url_text, const ConnectOptions& options) {
  std::vector<std::string> urls = SplitUrls(url_text);
  if (urls.size() <= 1) {
    CHSYNC_ASSIGN_OR_RETURN(Url url, ParseUrl(urls.empty() ? url_text : std::string_view(urls[0])));
    return Connect(url, options);
  }
  // Several servers of one cluster: each node tries once, and the failover connection retries
  // on the next node.
  ConnectOptions single = options;
  single.retry.max_attempts = 1;
  single.on_failure = nullptr;  // the failover connection reports each attempt
  std::vector<std::unique_ptr<Connection>> nodes;
  for (const std::string& text : urls) {
    CHSYNC_ASSIGN_OR_RETURN(Url url, ParseUrl(text));
    if (url.scheme == "file") {
      return Error(ErrorKind::kUsage,
                   "destination " + url.Redacted() +
                       ": an embedded store (file:) cannot be one of several destination URLs");
    }
    CHSYNC_ASSIGN_OR_RETURN(std::unique_ptr<Connection> node, Connect(url, single));
    nodes.push_back(std::move(node));
  }
  auto failover = std::make_unique<FailoverConnection>(std::move(nodes));
  failover->set_retry_policy(options.retry);
  failover->set_cancel(options.cancel);
  failover->set_on_failure(options.on_failure);
  return std::unique_ptr<Connection>(std::move(failover));
}

}  // namespace chsync::clickhouse
