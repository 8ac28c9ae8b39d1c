#pragma once

#include <functional>
#include <memory>
#include <string>

#include "common/result.h"
#include "http/listen_address.h"

namespace chsync::http {

/// What /readyz answers: 200 "ready\n", or 503 with `reason` (e.g. "snapshot in progress").
struct ReadyState {
  bool ready = false;
  std::string reason;
};

/// A query for the ClickHouse-compatible endpoint, as ClickHouse's HTTP interface reads it.
struct QueryRequest {
  /// The statement as sent: the `query` parameter, or the POST body, or both joined by '\n'. A
  /// trailing `FORMAT X` is left in it: the statement's own business.
  std::string sql;
  std::string default_format;  ///< `default_format` parameter or X-ClickHouse-Format header; TabSeparated
  std::string database;        ///< `database` parameter or X-ClickHouse-Database header; may be empty
  /// True for GET, which ClickHouse runs read-only: the function should refuse writes
  /// (IsReadOnlyStatement), e.g. with code 164 (READONLY).
  bool read_only = false;
};

struct QueryResult {
  bool ok = false;
  /// The result in its format when ok. Else the error text: sent as is when it already reads
  /// "Code: N. …" (as ClickHouse writes it), else as "Code: N. DB::Exception: <body>\n".
  std::string body;
  int code = 0;         ///< ClickHouse error code when !ok (62 syntax, 164 readonly, 60 unknown table…)
  int http_status = 0;  ///< 0: 200 when ok, 500 when not
  std::string format;   ///< the output format actually used; empty: the request's default_format
};

using QueryFunction = std::function<QueryResult(const QueryRequest&)>;

/// What the server serves. Any may be empty: its route then answers 404. They are called from
/// the server's worker threads, several at a time, and must be thread-safe; an exception they
/// throw becomes a 500 and the server goes on.
struct Handlers {
  std::function<std::string()> metrics;      ///< GET /metrics: Prometheus text format 0.0.4
  std::function<ReadyState()> ready;         ///< GET /readyz
  std::function<std::string()> status_page;  ///< GET / without `query`: a whole HTML page
  QueryFunction query;                       ///< GET /?query=…, POST /: ClickHouse HTTP interface
};

/// chsync's one HTTP server (cpp-httplib on its own accept thread and a pool of 3 workers).
///
/// Routes: GET /metrics, /healthz (200 "ok\n" while the process lives), /readyz, /ping ("Ok.\n",
/// what ClickHouse clients call), / (status page or query) and POST / (query). An unknown path is
/// 404, a known path with another method 405, both with a short text body.
/// Limits: request body 1 MiB (413 beyond), request line and headers 8 KiB each (cpp-httplib's),
/// read and write timeouts 10 s, idle keep-alive connections closed after 2 s.
///
/// Thread-safety: Start, port and Stop may be called from any thread but a handler's.
class Server {
 public:
  static constexpr size_t kMaxBodyBytes = 1 << 20;
  static constexpr int kWorkerThreads = 3;
  static constexpr int kTimeoutSeconds = 10;

  /// Binds `address` (port 0: a free port) and serves in the background until Stop. Fails
  /// (kConfig) when the address cannot be bound, saying why (e.g. in use).
  static Result<std::unique_ptr<Server>> Start(const ListenAddress& address, Handlers handlers);

  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// The bound port (the one chosen when the address asked for 0).
  int port() const;
  /// The bound address, with the real port.
  const ListenAddress& address() const;

  /// Stops accepting, finishes the requests in flight and joins the threads. Idempotent.
  /// Takes at most about one read timeout (a client sending slowly keeps its worker).
  void Stop();

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// ClickHouse's Content-Type for an output format: "text/tab-separated-values; charset=UTF-8"
/// for TabSeparated*/TSV*, "application/json; charset=UTF-8" for JSON*, "text/csv;
/// charset=UTF-8; header=absent" for CSV, "text/plain; charset=UTF-8" otherwise.
std::string ContentTypeForFormat(const std::string& format);

}  // namespace chsync::http
