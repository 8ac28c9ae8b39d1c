#include "http/server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <mutex>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "common/redact.h"
#include "common/url.h"

namespace chsync::http {
namespace {

constexpr const char* kTextPlain = "text/plain; charset=utf-8";
constexpr const char* kMetricsType = "text/plain; version=0.0.4; charset=utf-8";
constexpr const char* kHtmlType = "text/html; charset=utf-8";
constexpr int kKeepAliveSeconds = 2;

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.substr(0, prefix.size()) == prefix;
}

/// Response::set_content copies; a result may be large, so the body moves in.
void SetBody(httplib::Response& res, std::string body, const std::string& content_type) {
  res.body = std::move(body);
  res.headers.erase("Content-Type");
  res.set_header("Content-Type", content_type);
}

void SetText(httplib::Response& res, int status, std::string body) {
  res.status = status;
  SetBody(res, std::move(body), kTextPlain);
}

/// A ClickHouse-style error response: "Code: N. DB::Exception: …" and its code in a header.
void SetQueryError(httplib::Response& res, int status, int code, std::string_view message) {
  std::string body;
  if (StartsWith(message, "Code: ")) {
    body = std::string(message);
  } else {
    body = "Code: " + std::to_string(code) + ". DB::Exception: " + std::string(message);
  }
  if (body.empty() || body.back() != '\n') body += '\n';
  body = Redact(body);  // a server's error may echo what it was given
  res.status = status;
  res.set_header("X-ClickHouse-Exception-Code", std::to_string(code));
  SetBody(res, std::move(body), "text/plain; charset=UTF-8");
}

/// The URL's query string, decoded as an HTML form ('+' is a space), as ClickHouse reads it.
/// Parsed here rather than taken from httplib, which also mixes in form-encoded POST bodies.
Result<std::vector<std::pair<std::string, std::string>>> UrlParams(const std::string& target) {
  size_t question = target.find('?');
  if (question == std::string::npos) return std::vector<std::pair<std::string, std::string>>{};
  std::string query = target.substr(question + 1);
  for (char& c : query) {
    if (c == '+') c = ' ';
  }
  return ParseQueryParams(query);
}

const std::string* Find(const std::vector<std::pair<std::string, std::string>>& params,
                        std::string_view name) {
  for (const auto& [key, value] : params) {
    if (key == name) return &value;
  }
  return nullptr;
}

std::string StatusText(int status) {
  switch (status) {
    case 400: return "Bad Request\n";
    case 404: return "Not Found\n";
    case 405: return "Method Not Allowed\n";
    case 408: return "Request Timeout\n";
    case 413: return "Payload Too Large\n";
    case 414: return "URI Too Long\n";
    case 415: return "Unsupported Media Type\n";
    case 431: return "Request Header Fields Too Large\n";
    case 500: return "Internal Server Error\n";
    case 503: return "Service Unavailable\n";
    default: return "Error " + std::to_string(status) + "\n";
  }
}

}  // namespace

std::string ContentTypeForFormat(const std::string& format) {
  if (StartsWith(format, "TabSeparated") || StartsWith(format, "TSV")) {
    return "text/tab-separated-values; charset=UTF-8";
  }
  if (StartsWith(format, "JSON")) return "application/json; charset=UTF-8";
  if (format == "CSV") return "text/csv; charset=UTF-8; header=absent";
  if (StartsWith(format, "CSVWithNames")) return "text/csv; charset=UTF-8; header=present";
  return "text/plain; charset=UTF-8";
}

struct Server::Impl {
  httplib::Server server;
  Handlers handlers;
  ListenAddress bound;
  std::thread thread;
  std::atomic<bool> finished{false};
  std::mutex stop_mutex;
  bool stopped = false;

  /// Every request of every method comes here; nothing escapes it.
  void Dispatch(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader* reader) {
    try {
      Route(req, res, reader);
    } catch (const std::exception& e) {
      SetText(res, 500, std::string("internal error: ") + e.what() + "\n");
    } catch (...) {
      SetText(res, 500, "internal error\n");
    }
  }

  void Route(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader* reader) {
    const std::string& path = req.path;
    bool get = req.method == "GET" || req.method == "HEAD";
    bool post = req.method == "POST";
    bool known = path == "/healthz" || path == "/ping" || (path == "/metrics" && handlers.metrics) ||
                 (path == "/readyz" && handlers.ready) ||
                 (path == "/" && (handlers.status_page || handlers.query));
    if (!known) return SetText(res, 404, "Not Found: " + path.substr(0, 200) + "\n");
    if (path == "/") {
      if (get) return Root(req, res, nullptr);
      if (post) return Root(req, res, reader);
      res.set_header("Allow", "GET, HEAD, POST");
      return SetText(res, 405, "Method Not Allowed\n");
    }
    if (!get) {
      res.set_header("Allow", "GET, HEAD");
      return SetText(res, 405, "Method Not Allowed\n");
    }
    if (path == "/healthz") return SetText(res, 200, "ok\n");
    if (path == "/ping") return SetText(res, 200, "Ok.\n");
    if (path == "/metrics") {
      res.status = 200;
      SetBody(res, Redact(handlers.metrics()), kMetricsType);  // labels hold names and messages
      return;
    }
    ReadyState state = handlers.ready();
    if (state.ready) return SetText(res, 200, "ready\n");
    std::string reason = state.reason.empty() ? std::string("not ready") : state.reason;
    if (reason.back() != '\n') reason += '\n';
    SetText(res, 503, Redact(reason));
  }

  /// GET / (status page or query) and POST / (query).
  void Root(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader* reader) {
    auto params = UrlParams(req.target);
    if (!params.ok()) {
      return SetQueryError(res, 400, 27, "cannot parse the URL's parameters: " + params.error().message());
    }
    const std::string* query = Find(*params, "query");
    if (reader == nullptr && query == nullptr) {
      if (!handlers.status_page) return SetText(res, 404, "Not Found: /\n");
      res.status = 200;
      res.set_header("Cache-Control", "no-store");
      SetBody(res, Redact(handlers.status_page()), kHtmlType);
      return;
    }
    if (!handlers.query) return SetText(res, 404, "Not Found: no query endpoint here\n");

    QueryRequest request;
    request.read_only = reader == nullptr;
    if (query != nullptr) request.sql = *query;
    if (reader != nullptr) {
      if (req.is_multipart_form_data()) {
        return SetQueryError(res, 415, 1, "multipart bodies are not supported: send the query as the body");
      }
      std::string body;
      bool too_large = false;
      bool read = (*reader)([&](const char* data, size_t size) {
        if (size > kMaxBodyBytes - body.size()) {
          too_large = true;
          return false;
        }
        body.append(data, size);
        return true;
      });
      if (too_large || res.status == 413) {
        return SetText(res, 413, "Payload Too Large: the body may hold at most 1 MiB\n");
      }
      if (!read) return SetText(res, 400, "Bad Request: could not read the body\n");
      if (!body.empty()) {
        if (!request.sql.empty()) request.sql += '\n';
        request.sql += body;
      }
    }
    if (request.sql.find_first_not_of(" \t\r\n") == std::string::npos) {
      return SetQueryError(res, 400, 62, "Empty query. (SYNTAX_ERROR)");
    }
    const std::string* format = Find(*params, "default_format");
    if (format != nullptr && !format->empty()) {
      request.default_format = *format;
    } else if (req.has_header("X-ClickHouse-Format")) {
      request.default_format = req.get_header_value("X-ClickHouse-Format");
    } else {
      request.default_format = "TabSeparated";
    }
    if (const std::string* database = Find(*params, "database"); database != nullptr) {
      request.database = *database;
    } else if (req.has_header("X-ClickHouse-Database")) {
      request.database = req.get_header_value("X-ClickHouse-Database");
    }

    QueryResult result = handlers.query(request);
    if (!result.ok) {
      return SetQueryError(res, result.http_status != 0 ? result.http_status : 500, result.code, result.body);
    }
    std::string used = result.format.empty() ? request.default_format : result.format;
    res.status = result.http_status != 0 ? result.http_status : 200;
    res.set_header("X-ClickHouse-Format", used);
    SetBody(res, std::move(result.body), ContentTypeForFormat(used));
  }
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  Stop();
}

int Server::port() const {
  return impl_->bound.port;
}

const ListenAddress& Server::address() const {
  return impl_->bound;
}

Result<std::unique_ptr<Server>> Server::Start(const ListenAddress& address, Handlers handlers) {
  auto impl = std::make_unique<Impl>();
  impl->handlers = std::move(handlers);
  impl->bound = address;
  Impl* self = impl.get();
  httplib::Server& server = impl->server;
  server.new_task_queue = [] { return new httplib::ThreadPool(kWorkerThreads); };
  server.set_payload_max_length(kMaxBodyBytes);
  server.set_read_timeout(kTimeoutSeconds, 0);
  server.set_write_timeout(kTimeoutSeconds, 0);
  server.set_keep_alive_timeout(kKeepAliveSeconds);
  server.set_keep_alive_max_count(100);
  // SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, which would let a second chsync
  // share the port silently instead of failing to bind.
  server.set_socket_options([](int socket) {
    int yes = 1;
    ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });

  auto get = [self](const httplib::Request& req, httplib::Response& res) {
    self->Dispatch(req, res, nullptr);
  };
  auto with_body = [self](const httplib::Request& req, httplib::Response& res,
                          const httplib::ContentReader& reader) { self->Dispatch(req, res, &reader); };
  server.Get(".*", get);
  server.Options(".*", get);
  server.Post(".*", with_body);
  server.Put(".*", with_body);
  server.Patch(".*", with_body);
  server.Delete(".*", with_body);
  server.set_exception_handler([](const httplib::Request&, httplib::Response& res,
                                  const std::exception_ptr&) { SetText(res, 500, "internal error\n"); });
  // Fills the body of the errors httplib answers itself (400 for a bad request line, 413, 414…).
  server.set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        SetBody(res, StatusText(res.status), kTextPlain);
        return httplib::Server::HandlerResponse::Handled;
      }));

  errno = 0;
  int port = address.port;
  bool bound = false;
  if (address.port == 0) {
    port = server.bind_to_any_port(address.host);
    bound = port > 0;
  } else {
    bound = server.bind_to_port(address.host, address.port);
  }
  if (!bound) {
    std::string why = errno != 0 ? std::strerror(errno) : "the address cannot be resolved or bound";
    return Error(ErrorKind::kConfig, "cannot listen on " + address.ToString() + ": " + why +
                                         " (choose another address or port, e.g. 127.0.0.1:0)");
  }
  impl->bound.port = static_cast<uint16_t>(port);

  impl->thread = std::thread([self] {
    try {
      self->server.listen_after_bind();
    } catch (...) {  // NOLINT(bugprone-empty-catch): the server thread never takes the process down
    }
    self->finished = true;
  });
  // Stop() only works once the accept loop runs, and that loop marks itself running first thing.
  while (!impl->server.is_running() && !impl->finished) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!impl->server.is_running()) {
    impl->thread.join();
    return Error(ErrorKind::kInternal, "the HTTP server on " + impl->bound.ToString() + " stopped at once");
  }
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

void Server::Stop() {
  std::lock_guard lock(impl_->stop_mutex);
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->server.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace chsync::http
