#include "clickhouse/http_connection.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

namespace chsync::clickhouse {
namespace {

/// A loopback TCP server that accepts one connection, reads whatever arrives and never answers:
/// a ClickHouse that hangs in the middle of a request.
class SilentServer {
 public:
  SilentServer() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof(addr);
    if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(listener_, 1) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ADD_FAILURE() << "cannot listen on the loopback interface";
      return;
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~SilentServer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (listener_ >= 0) ::close(listener_);
  }
  SilentServer(const SilentServer&) = delete;
  SilentServer& operator=(const SilentServer&) = delete;

  uint16_t port() const { return port_; }
  /// Bytes of the request received so far.
  size_t received() const { return received_.load(); }

 private:
  /// Polls in short steps so that the destructor can stop the thread whatever the client does.
  bool WaitReadable(int fd) {
    while (!stop_) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 20) > 0) return true;
    }
    return false;
  }

  void Serve() {
    if (!WaitReadable(listener_)) return;
    int client = ::accept(listener_, nullptr, nullptr);
    if (client < 0) return;
    char buffer[4096];
    while (WaitReadable(client)) {
      ssize_t n = ::recv(client, buffer, sizeof(buffer), 0);
      if (n <= 0) break;  // the client gave up and closed the connection
      received_ += static_cast<size_t>(n);
    }
    ::close(client);
  }

  int listener_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<size_t> received_{0};
  std::thread thread_;
};

TEST(HttpConnectionCancel, FlagAbortsARequestTheServerNeverAnswers) {
  SilentServer server;
  ASSERT_NE(server.port(), 0);
  std::atomic<bool> cancel{false};
  ConnectOptions options;
  options.request_timeout = std::chrono::minutes(10);
  options.retry.max_attempts = 5;
  options.cancel = &cancel;
  auto conn = Connect("http://127.0.0.1:" + std::to_string(server.port()) + "/", options);
  ASSERT_TRUE(conn.ok()) << conn.error().message();
  // Cancel once the whole request has reached the server, so the transfer is in progress.
  std::thread canceller([&] {
    while (server.received() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    cancel = true;
  });
  auto r = (*conn)->Query("SELECT 1");
  canceller.join();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(IsCancelled(r.error())) << r.error().message();
  EXPECT_EQ(r.error().kind(), ErrorKind::kNetwork);
  EXPECT_NE(r.error().message().find("aborted"), std::string::npos)
      << "the transfer itself should have been aborted: " << r.error().message();
}

// CURLcode values (curl/curl.h), spelled out so that the test reads without libcurl's header.
constexpr int kSslConnectError = 35, kTimedOut = 28, kPeerFailedVerification = 60, kRecvError = 56,
              kCaBadFile = 77;

TEST(HttpTransportError, WrongCaSaysWhatToPass) {
  ConnectOptions o;
  o.tls_ca = "/etc/chsync/ch-ca.pem";
  Error e = TransportError(kPeerFailedVerification,
                           "SSL certificate problem: unable to get local issuer certificate",
                           "https://ch.example:8443/", o);
  EXPECT_EQ(e.kind(), ErrorKind::kConfig);
  const std::string& m = e.message();
  EXPECT_NE(m.find("TLS certificate verify failed for ClickHouse at https://ch.example:8443/"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("checked against ssl-ca=/etc/chsync/ch-ca.pem"), std::string::npos) << m;
  EXPECT_NE(m.find("unable to get local issuer certificate"), std::string::npos) << m;
  EXPECT_NE(m.find("pass ssl-ca=FILE"), std::string::npos) << m;
  // Without ssl-ca the system store was used.
  Error s = TransportError(kPeerFailedVerification, "SSL certificate problem: self-signed certificate",
                           "https://ch.example:8443/", ConnectOptions{});
  EXPECT_NE(s.message().find("checked against the system's CA store"), std::string::npos) << s.message();
}

TEST(HttpTransportError, HostNameMismatch) {
  Error e = TransportError(kPeerFailedVerification,
                           "SSL: no alternative certificate subject name matches target host name 'vm'",
                           "https://vm:8443/", ConnectOptions{});
  EXPECT_EQ(e.kind(), ErrorKind::kConfig);
  EXPECT_NE(e.message().find("is not for that host"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("subjectAltName"), std::string::npos) << e.message();
}

TEST(HttpTransportError, UnreadableCaFile) {
  ConnectOptions o;
  o.tls_ca = "/nonexistent/ca.pem";
  Error e =
      TransportError(kCaBadFile, "error setting certificate file: /nonexistent/ca.pem", "https://h:8443/", o);
  EXPECT_EQ(e.kind(), ErrorKind::kConfig);
  EXPECT_NE(e.message().find("cannot use the CA file of ssl-ca=/nonexistent/ca.pem"), std::string::npos)
      << e.message();
}

TEST(HttpTransportError, HttpsToThePlainPortIsRetryableAndExplained) {
  Error timeout = TransportError(kTimedOut, "SSL connection timeout", "https://h:8123/", ConnectOptions{});
  EXPECT_EQ(timeout.kind(), ErrorKind::kNetwork);
  EXPECT_NE(timeout.message().find("is the port ClickHouse's https_port"), std::string::npos)
      << timeout.message();
  Error handshake =
      TransportError(kSslConnectError, "OpenSSL: wrong version number", "https://h:8123/", ConnectOptions{});
  EXPECT_EQ(handshake.kind(), ErrorKind::kNetwork);
  EXPECT_NE(handshake.message().find("TLS handshake with ClickHouse at https://h:8123/ failed"),
            std::string::npos)
      << handshake.message();
  // Plain HTTP to the HTTPS port: the server drops the connection.
  Error plain = TransportError(kRecvError, "Recv failure: Connection reset by peer", "http://h:8443/",
                               ConnectOptions{});
  EXPECT_EQ(plain.kind(), ErrorKind::kNetwork);
  EXPECT_NE(plain.message().find("use https://"), std::string::npos) << plain.message();
  // An ordinary timeout says nothing about TLS.
  Error slow = TransportError(kTimedOut, "Operation timed out after 10000 milliseconds", "http://h:8123/",
                              ConnectOptions{});
  EXPECT_EQ(slow.message(),
            "cannot reach ClickHouse at http://h:8123/: Operation timed out after 10000 milliseconds");
}

}  // namespace
}  // namespace chsync::clickhouse
