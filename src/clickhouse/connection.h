#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clickhouse/server_version.h"
#include "common/result.h"
#include "common/url.h"
#include "net/ssh_endpoint.h"

namespace chsync::clickhouse {

/// How a Connection retries a statement that failed with a retryable error (IsRetryable():
/// transport failures, "too many parts", memory limit, timeouts): it waits initial_backoff,
/// doubling up to max_backoff, for at most max_attempts tries in all. Other errors (syntax, types,
/// authentication) return at once. A retried INSERT may have been applied once already: the
/// destination tables deduplicate by version, so the FINAL view is unaffected.
struct RetryPolicy {
  int max_attempts = 6;  ///< 1: no retries
  std::chrono::milliseconds initial_backoff{250};
  std::chrono::milliseconds max_backoff{8'000};
};

/// Told of every failed attempt of a request (from the thread that made it): the error, the
/// attempt's number (1 for the first) and whether another attempt follows. For metrics; it must
/// not call the connection.
using FailureObserver = std::function<void(const Error& error, int attempt, bool retrying)>;

/// How to reach a destination, beyond what its URL says.
struct ConnectOptions {
  /// Retries of failed statements; `chsync check` uses a single attempt to report at once.
  RetryPolicy retry;
  /// Environment variable that supplies the password when the URL has none.
  std::string password_env = "CHSYNC_DEST_PASSWORD";
  std::chrono::milliseconds connect_timeout{10'000};
  /// Whole-request limit for one statement or one insert batch.
  std::chrono::milliseconds request_timeout{600'000};
  /// Send the credentials as X-ClickHouse-User/X-ClickHouse-Key headers instead of Basic auth.
  /// URL: ?auth=header.
  bool header_auth = false;
  /// CA bundle to verify an https:// server against (URL: ?ssl-ca=PATH); empty: system store.
  std::string tls_ca;
  /// Verify the server's certificate and host name (URL: ?ssl-verify=0 turns it off).
  bool tls_verify = true;
  /// Default database for unqualified names (URL: ?database=NAME or the path /NAME).
  std::string database;
  /// ClickHouse settings sent with every request (URL: any other ?name=value).
  std::vector<std::pair<std::string, std::string>> settings;
  /// Gzip-compress insert bodies of at least this many bytes (HTTP only); 0 never compresses.
  /// Connect turns it off for loopback hosts unless the URL says ?compress=1 (?compress=0: never).
  size_t compress_min_bytes = 1 << 20;
  /// Path of libchdb.so for file: URLs; empty: $CHSYNC_CHDB_LIB if set, else the first of
  /// <exe dir>/../lib/libchdb.so, the build's .deps/chdb/libchdb.so, "libchdb.so" on the loader path.
  std::string chdb_library;
  /// Stops the connection when it points to true (set from any thread or a signal handler): the back-off
  /// wait between attempts ends within about 100 ms and no further attempt starts, an HTTP
  /// transfer in progress is aborted (libcurl checks it at least once a second), and the call
  /// returns CancelledError (IsCancelled). Already true: a call returns at once without sending
  /// anything. A statement the embedded engine has started runs to its end. Null: never
  /// cancelled. The flag must outlive the connection (or be replaced by set_cancel).
  const std::atomic<bool>* cancel = nullptr;
  /// ?ssh=USER@BASTION:PORT (with ssh-key, ssh-known-hosts, ssh-strict): HTTP requests go through
  /// an SSH tunnel to the server (net/ssh_tunnel.h); TLS still checks the server's own name.
  std::optional<net::SshEndpoint> ssh;
  /// Told of every failed attempt (set_on_failure); null: nobody. With several URLs the failover
  /// connection reports, not its nodes.
  FailureObserver on_failure;
};

/// Per-request extras.
struct RequestOptions {
  std::string query_id;  ///< empty: the server picks one
  std::vector<std::pair<std::string, std::string>> settings;
  /// An ON CLUSTER statement: a timeout (159, the task outlived distributed_ddl_task_timeout) is
  /// returned at once instead of retried, because the statement is queued in ZooKeeper already and
  /// a resend would queue it again. The caller waits for the task (clickhouse/cluster.h).
  bool on_cluster = false;
};

/// One session with a ClickHouse destination: a server over HTTP(S), or an embedded engine (chDB)
/// over a local store. Not thread-safe: one thread at a time per Connection.
///
/// Errors: kNetwork when the destination cannot be reached or the transport broke (retryable);
/// kAuth when it refused the credentials (codes 192, 193, 194, 516); kServer for any other
/// exception, with Error::server_code() holding ClickHouse's code. Messages name Describe() and
/// never contain the password.
class Connection {
 public:
  virtual ~Connection() = default;

  /// Runs `sql` and returns its output in `format` (the whole text, as the server sent it).
  Result<std::string> Query(std::string_view sql, std::string_view format = "TabSeparated",
                            const RequestOptions& request = {});
  /// Runs `sql` and discards any output.
  Status Execute(std::string_view sql, const RequestOptions& request = {});
  /// Sends `insert_sql_prefix` ("INSERT INTO `db`.`t` (`a`, `b`) FORMAT RowBinary") followed by
  /// `data` (bytes in that format, untouched). The batch is accepted whole or the call fails.
  /// Empty `data` sends nothing and succeeds.
  Status Insert(std::string_view insert_sql_prefix, std::string_view data,
                const RequestOptions& request = {});
  /// The server's version (`SELECT version()`), read once and then cached.
  Result<ServerVersion> Version();

  /// "http://host:port" or "embedded chDB at /store/path": for messages, never a password.
  virtual std::string Describe() const = 0;
  /// True for the embedded engine.
  virtual bool embedded() const = 0;

  void set_retry_policy(const RetryPolicy& policy) { retry_ = policy; }
  const RetryPolicy& retry_policy() const { return retry_; }
  /// The flag that cancels this connection (ConnectOptions::cancel); null: never cancelled.
  void set_cancel(const std::atomic<bool>* cancel) { cancel_ = cancel; }
  /// Told of every failed attempt of this connection's requests (ConnectOptions::on_failure).
  void set_on_failure(FailureObserver observer) { on_failure_ = std::move(observer); }

 protected:
  /// The cancel flag, for a transport that can abort a request in progress; may be null.
  const std::atomic<bool>* cancel_flag() const { return cancel_; }
  bool cancelled() const { return cancel_ != nullptr && cancel_->load(std::memory_order_relaxed); }

  /// Runs one statement; `data` (may be empty) follows the statement text as its inline data.
  virtual Result<std::string> Run(std::string_view sql, std::string_view data, std::string_view format,
                                  const RequestOptions& request) = 0;

 private:
  /// Run() again while it fails with a retryable error, as retry_ allows.
  Result<std::string> RunWithRetries(std::string_view sql, std::string_view data, std::string_view format,
                                     const RequestOptions& request);

  /// Sleeps `duration` in steps of at most 50 ms; false as soon as the connection is cancelled.
  bool SleepUnlessCancelled(std::chrono::milliseconds duration) const;

  std::optional<ServerVersion> version_;
  RetryPolicy retry_;
  const std::atomic<bool>* cancel_ = nullptr;
  FailureObserver on_failure_;
};

/// The error of a call that ConnectOptions::cancel stopped: kNetwork (the statement may or may
/// not have been applied, as after a broken connection), message "cancelled: <what>".
Error CancelledError(std::string_view what);

/// True for an error made by CancelledError, also after context was added in front of it
/// (kNetwork, message starting with "cancelled: " or containing ": cancelled: "). Callers that
/// retry kNetwork errors should stop instead.
bool IsCancelled(const Error& error);

/// Opens a destination from its URL: `http(s)://USER[:PASSWORD]@HOST[:PORT][/DATABASE][?options]`
/// (a server) or `file:PATH` (an embedded store at PATH, created when missing). Without a password
/// in the URL, the variable options.password_env supplies it. The server is not contacted until
/// the first statement (call Version() to check it).
Result<std::unique_ptr<Connection>> Connect(const Url& url, const ConnectOptions& options = {});

/// Connect(ParseUrl(url_text), options). Several server URLs separated by commas (the nodes of one
/// cluster) give a FailoverConnection (clickhouse/cluster.h) over them.
Result<std::unique_ptr<Connection>> Connect(std::string_view url_text, const ConnectOptions& options = {});

}  // namespace chsync::clickhouse
