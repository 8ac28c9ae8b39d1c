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

}  // namespace
}  // namespace chsync::clickhouse
