#include "http/server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>

namespace chsync::http {
namespace {

ListenAddress Loopback() {
  return ListenAddress{"127.0.0.1", 0};
}

Handlers AllHandlers() {
  Handlers h;
  h.metrics = [] { return std::string("# TYPE chsync_up gauge\nchsync_up 1\n"); };
  h.ready = [] { return ReadyState{true, ""}; };
  h.status_page = [] { return std::string("<!DOCTYPE html><title>status</title>"); };
  h.query = [](const QueryRequest& request) {
    QueryResult result;
    result.ok = true;
    result.body = request.sql + "|" + request.default_format + "|" + request.database + "|" +
                  (request.read_only ? "ro" : "rw") + "\n";
    return result;
  };
  return h;
}

class ServerTest : public ::testing::Test {
 protected:
  void Start(Handlers handlers) {
    auto started = Server::Start(Loopback(), std::move(handlers));
    ASSERT_TRUE(started.ok()) << started.error().message();
    server_ = std::move(*started);
    ASSERT_GT(server_->port(), 0);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_read_timeout(5, 0);
  }

  /// Sends raw bytes and returns the server's first response (or what came before it closed or
  /// 3 s passed).
  std::string Raw(const std::string& bytes) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server_->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    timeval timeout{3, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    EXPECT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
    std::string answer;
    char buffer[4096];
    while (!Complete(answer)) {
      ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      answer.append(buffer, static_cast<size_t>(n));
    }
    ::close(fd);
    return answer;
  }

  /// Whether `answer` holds a whole response: its head and Content-Length bytes of body.
  static bool Complete(const std::string& answer) {
    size_t head = answer.find("\r\n\r\n");
    if (head == std::string::npos) return false;
    size_t at = answer.find("Content-Length: ");
    if (at == std::string::npos || at > head) return true;
    size_t length = std::stoul(answer.substr(at + 16));
    return answer.size() >= head + 4 + length;
  }

  std::unique_ptr<Server> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(ServerTest, ServesMetricsAsPrometheusText) {
  Start(AllHandlers());
  auto res = client_->Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "# TYPE chsync_up gauge\nchsync_up 1\n");
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
}

TEST_F(ServerTest, HealthzIsAlwaysOk) {
  Handlers h;  // nothing else served
  Start(std::move(h));
  auto res = client_->Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "ok\n");
}

TEST_F(ServerTest, ReadyzAnswersReady) {
  Start(AllHandlers());
  auto res = client_->Get("/readyz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "ready\n");
}

TEST_F(ServerTest, ReadyzAnswers503WithTheReason) {
  Handlers h = AllHandlers();
  h.ready = [] { return ReadyState{false, "snapshot in progress"}; };
  Start(std::move(h));
  auto res = client_->Get("/readyz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(res->body, "snapshot in progress\n");
}

TEST_F(ServerTest, PingAnswersLikeClickHouse) {
  Start(AllHandlers());
  auto res = client_->Get("/ping");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "Ok.\n");
}

TEST_F(ServerTest, UnknownPathIs404) {
  Start(AllHandlers());
  for (const char* path : {"/nope", "/metrics/x", "/favicon.ico", "/%2e%2e/etc/passwd"}) {
    auto res = client_->Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 404) << path;
    EXPECT_NE(res->body.find("Not Found"), std::string::npos) << path;
  }
}

TEST_F(ServerTest, EmptyHandlersAre404) {
  Start(Handlers{});
  for (const char* path : {"/metrics", "/readyz", "/", "/?query=SELECT%201"}) {
    auto res = client_->Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 404) << path;
  }
}

TEST_F(ServerTest, WrongMethodIs405) {
  Start(AllHandlers());
  auto res = client_->Post("/metrics", "x", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);
  EXPECT_EQ(res->get_header_value("Allow"), "GET, HEAD");
  auto put = client_->Put("/", "x", "text/plain");
  ASSERT_TRUE(put);
  EXPECT_EQ(put->status, 405);
  auto del = client_->Delete("/healthz");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 405);
}

TEST_F(ServerTest, BodyOver1MiBIs413) {
  Start(AllHandlers());
  std::string big(2 << 20, 'x');
  auto res = client_->Post("/", big, "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  auto next = client_->Get("/healthz");
  ASSERT_TRUE(next);
  EXPECT_EQ(next->status, 200);
}

TEST_F(ServerTest, ChunkedBodyOver1MiBIs413) {
  Start(AllHandlers());
  std::string chunk(64 << 10, 'x');
  std::string request =
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
  char size[16];
  std::snprintf(size, sizeof size, "%zx\r\n", chunk.size());
  for (int i = 0; i < 20; ++i) request += size + chunk + "\r\n";
  request += "0\r\n\r\n";
  std::string answer = Raw(request);
  EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << answer.substr(0, 100);
}

TEST_F(ServerTest, MalformedRequestsGet400OrACloseAndTheServerGoesOn) {
  Start(AllHandlers());
  const std::string garbage[] = {
      std::string("\x00\x01GARBAGE\r\n\r\n", 13),
      "GET\r\n\r\n",
      "GET / HTTP/9.9 extra\r\n\r\n",
      "\r\n\r\n",
      "POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n",
      "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nxx\r\n0\r\n\r\n",
      "GET /" + std::string(20000, 'a') + " HTTP/1.1\r\n\r\n",
      "GET / HTTP/1.1\r\nX: " + std::string(20000, 'b') + "\r\n\r\n",
  };
  for (const std::string& bytes : garbage) {
    SCOPED_TRACE(bytes.substr(0, 40));
    std::string answer = Raw(bytes);
    EXPECT_TRUE(answer.empty() || answer.rfind("HTTP/1.1 4", 0) == 0) << answer.substr(0, 200);
    auto res = client_->Get("/healthz");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
  }
}

TEST_F(ServerTest, AThrowingHandlerIs500AndTheServerGoesOn) {
  Handlers h = AllHandlers();
  std::atomic<int> calls{0};
  h.metrics = [&calls]() -> std::string {
    ++calls;
    throw std::runtime_error("boom");
  };
  h.ready = []() -> ReadyState { throw 42; };
  Start(std::move(h));
  auto res = client_->Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 500);
  EXPECT_NE(res->body.find("boom"), std::string::npos);
  auto ready = client_->Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 500);
  auto next = client_->Get("/healthz");
  ASSERT_TRUE(next);
  EXPECT_EQ(next->status, 200);
  EXPECT_EQ(calls.load(), 1);
}

TEST_F(ServerTest, StatusPageAtRoot) {
  Start(AllHandlers());
  auto res = client_->Get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(res->body, "<!DOCTYPE html><title>status</title>");
}

TEST_F(ServerTest, QueryByGet) {
  Start(AllHandlers());
  client_->set_url_encode(false);  // send the '+' as is: ClickHouse reads it as a space
  auto res = client_->Get("/?query=SELECT%201+AS+x&database=shop");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "SELECT 1 AS x|TabSeparated|shop|ro\n");
  EXPECT_EQ(res->get_header_value("X-ClickHouse-Format"), "TabSeparated");
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/tab-separated-values; charset=UTF-8");
}

TEST_F(ServerTest, QueryByPostBody) {
  Start(AllHandlers());
  auto res = client_->Post("/?default_format=JSONEachRow", "SELECT 1 FORMAT JSON", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "SELECT 1 FORMAT JSON|JSONEachRow||rw\n");
  EXPECT_EQ(res->get_header_value("X-ClickHouse-Format"), "JSONEachRow");
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json; charset=UTF-8");
}

TEST_F(ServerTest, QueryByPostFormEncodedBodyIsTheQuery) {
  Start(AllHandlers());
  // What `curl -d 'SELECT 1'` sends: the body is the query, not a form.
  auto res = client_->Post("/", "SELECT 1 WHERE 'a=b&query=x'", "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body, "SELECT 1 WHERE 'a=b&query=x'|TabSeparated||rw\n");
}

TEST_F(ServerTest, QueryParameterPrefixAndBodyJoinWithANewline) {
  Start(AllHandlers());
  auto res = client_->Post("/?query=INSERT%20INTO%20t%20FORMAT%20TSV", "1\t2\n", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body, "INSERT INTO t FORMAT TSV\n1\t2\n|TabSeparated||rw\n");
}

TEST_F(ServerTest, QueryFormatFromHeaderAndFromTheFunction) {
  Handlers h = AllHandlers();
  h.query = [](const QueryRequest& request) {
    QueryResult result;
    result.ok = true;
    result.body = request.default_format + "\n";
    result.format = "Pretty";
    return result;
  };
  Start(std::move(h));
  auto res = client_->Get("/?query=SELECT%201", {{"X-ClickHouse-Format", "CSV"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body, "CSV\n");
  EXPECT_EQ(res->get_header_value("X-ClickHouse-Format"), "Pretty");
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; charset=UTF-8");
}

TEST_F(ServerTest, QueryErrorLooksLikeClickHouse) {
  Handlers h = AllHandlers();
  h.query = [](const QueryRequest&) {
    QueryResult result;
    result.ok = false;
    result.code = 62;
    result.body = "Syntax error: failed at position 1 (SELEC)";
    result.http_status = 400;
    return result;
  };
  Start(std::move(h));
  auto res = client_->Get("/?query=SELEC");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(res->body, "Code: 62. DB::Exception: Syntax error: failed at position 1 (SELEC)\n");
  EXPECT_EQ(res->get_header_value("X-ClickHouse-Exception-Code"), "62");
}

TEST_F(ServerTest, NoPasswordInMetricsStatusPageReadinessOrErrors) {
  Handlers h = AllHandlers();
  h.metrics = [] { return std::string("chsync_info{source=\"mysql://repl:Zq7m@db:3306\"} 1\n"); };
  h.status_page = [] { return std::string("<p>last error: Unknown database '/repl:Zq7s@db:3307'</p>"); };
  h.ready = [] { return ReadyState{false, "cannot reach http://default:Zq7r@ch:8123"}; };
  h.query = [](const QueryRequest&) {
    return QueryResult{false, "Code: 516. DB::Exception: echo of u:Zq7q@h", 516, 0};
  };
  Start(std::move(h));
  for (const char* path : {"/metrics", "/", "/readyz", "/?query=SELECT%201"}) {
    auto res = client_->Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->body.find("Zq7"), std::string::npos) << path << ": " << res->body;
    EXPECT_NE(res->body.find(":***@"), std::string::npos) << path << ": " << res->body;
  }
}

TEST_F(ServerTest, QueryErrorDefaultsTo500AndKeepsAFullClickHouseMessage) {
  Handlers h = AllHandlers();
  h.query = [](const QueryRequest&) {
    return QueryResult{false, "Code: 60. DB::Exception: Table shop.x does not exist. (UNKNOWN_TABLE)\n", 60,
                       0};
  };
  Start(std::move(h));
  auto res = client_->Post("/", "SELECT * FROM shop.x", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 500);
  EXPECT_EQ(res->body, "Code: 60. DB::Exception: Table shop.x does not exist. (UNKNOWN_TABLE)\n");
  EXPECT_EQ(res->get_header_value("X-ClickHouse-Exception-Code"), "60");
}

TEST_F(ServerTest, EmptyQueryIsASyntaxError) {
  Start(AllHandlers());
  auto res = client_->Post("/", "  \n", "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(res->body.rfind("Code: 62. DB::Exception: Empty query", 0), 0u) << res->body;
}

TEST_F(ServerTest, AThrowingQueryFunctionIs500) {
  Handlers h = AllHandlers();
  h.query = [](const QueryRequest&) -> QueryResult { throw std::logic_error("bad"); };
  Start(std::move(h));
  auto res = client_->Get("/?query=SELECT%201");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 500);
  auto next = client_->Get("/ping");
  ASSERT_TRUE(next);
  EXPECT_EQ(next->status, 200);
}

TEST_F(ServerTest, BadPercentEscapeIs400) {
  Start(AllHandlers());
  auto res = Raw("GET /?query=%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(res.rfind("HTTP/1.1 400", 0), 0u) << res;
}

TEST_F(ServerTest, StopIsIdempotentAndFreesThePort) {
  Start(AllHandlers());
  int port = server_->port();
  server_->Stop();
  server_->Stop();
  httplib::Client after("127.0.0.1", port);
  after.set_connection_timeout(1, 0);
  EXPECT_FALSE(after.Get("/healthz"));
  server_.reset();  // the destructor after Stop is fine too

  auto again = Server::Start(ListenAddress{"127.0.0.1", static_cast<uint16_t>(port)}, AllHandlers());
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ((*again)->port(), port);
}

TEST_F(ServerTest, BusyPortIsAClearError) {
  Start(AllHandlers());
  auto second = Server::Start(ListenAddress{"127.0.0.1", static_cast<uint16_t>(server_->port())}, Handlers{});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().kind(), ErrorKind::kConfig);
  EXPECT_NE(second.error().message().find("cannot listen on 127.0.0.1:"), std::string::npos)
      << second.error().message();
}

TEST_F(ServerTest, ListensOnIpv6Loopback) {
  auto started = Server::Start(ListenAddress{"::1", 0}, AllHandlers());
  if (!started.ok()) GTEST_SKIP() << "no IPv6 here: " << started.error().message();
  httplib::Client client("::1", (*started)->port());
  auto res = client.Get("/ping");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body, "Ok.\n");
  EXPECT_EQ((*started)->address().host, "::1");
}

TEST(ContentTypeTest, FollowsClickHouse) {
  EXPECT_EQ(ContentTypeForFormat("TabSeparated"), "text/tab-separated-values; charset=UTF-8");
  EXPECT_EQ(ContentTypeForFormat("TSVWithNames"), "text/tab-separated-values; charset=UTF-8");
  EXPECT_EQ(ContentTypeForFormat("JSON"), "application/json; charset=UTF-8");
  EXPECT_EQ(ContentTypeForFormat("JSONCompact"), "application/json; charset=UTF-8");
  EXPECT_EQ(ContentTypeForFormat("CSV"), "text/csv; charset=UTF-8; header=absent");
  EXPECT_EQ(ContentTypeForFormat("Pretty"), "text/plain; charset=UTF-8");
  EXPECT_EQ(ContentTypeForFormat("RowBinary"), "text/plain; charset=UTF-8");
}

}  // namespace
}  // namespace chsync::http
