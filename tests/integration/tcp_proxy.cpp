#include "tcp_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace chsync::testing {
namespace {

constexpr int kPass = 0;
constexpr int kStall = 1;
constexpr int kDelay = 2;
/// How often a forwarding thread looks at the mode and the stop flag while its side is silent.
constexpr int kPollMs = 20;

sockaddr_in Loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

/// Closes `fd` so that the peer sees a reset rather than an orderly end.
void CloseHard(int fd) {
  linger l{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  close(fd);
}

}  // namespace

struct TcpProxy::Link {
  int client = -1;
  int server = -1;
  std::atomic<bool> closing{false};
  std::atomic<int> running{2};
  std::thread to_server;
  std::thread to_client;

  /// Wakes both forwarding threads (their sockets fail from now on); the fds stay valid until
  /// both threads have been joined.
  void Shut() {
    if (closing.exchange(true)) return;
    shutdown(client, SHUT_RDWR);
    if (server >= 0) shutdown(server, SHUT_RDWR);
  }
  ~Link() {
    if (to_server.joinable()) to_server.join();
    if (to_client.joinable()) to_client.join();
    if (client >= 0) CloseHard(client);
    if (server >= 0) CloseHard(server);
  }
};

std::unique_ptr<TcpProxy> TcpProxy::Start(int target_port, std::string* error) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return nullptr;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a = Loopback(0);
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd, 64) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    *error = std::string("cannot listen on 127.0.0.1: ") + std::strerror(errno);
    close(fd);
    return nullptr;
  }
  std::unique_ptr<TcpProxy> proxy(new TcpProxy(fd, ntohs(a.sin_port), target_port));
  if (pipe2(proxy->wake_, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    return nullptr;
  }
  proxy->acceptor_ = std::thread([p = proxy.get()] { p->AcceptLoop(); });
  return proxy;
}

TcpProxy::TcpProxy(int listen_fd, int port, int target_port)
    : listen_fd_(listen_fd), port_(port), target_port_(target_port) {}

TcpProxy::~TcpProxy() {
  stop_.store(true);
  if (wake_[1] >= 0) (void)!write(wake_[1], "x", 1);
  if (acceptor_.joinable()) acceptor_.join();
  Reap(/*all=*/true);
  close(listen_fd_);
  if (wake_[0] >= 0) close(wake_[0]);
  if (wake_[1] >= 0) close(wake_[1]);
}

void TcpProxy::Pass() {
  mode_.store(kPass);
}

void TcpProxy::Stall() {
  mode_.store(kStall);
}

void TcpProxy::Delay(int ms) {
  delay_ms_.store(ms);
  mode_.store(kDelay);
}

void TcpProxy::DropAll() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& link : links_) link->Shut();
}

size_t TcpProxy::open_connections() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& link : links_) n += link->running.load() > 0 && !link->closing.load() ? 1 : 0;
  return n;
}

void TcpProxy::Reap(bool all) {
  std::vector<std::shared_ptr<Link>> done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = links_.begin(); it != links_.end();) {
      if (all) (*it)->Shut();
      if (all || (*it)->running.load() == 0) {
        done.push_back(std::move(*it));
        it = links_.erase(it);
      } else {
        ++it;
      }
    }
  }
  done.clear();  // joins the threads outside the lock
}

void TcpProxy::AcceptLoop() {
  while (!stop_.load()) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    int n = poll(fds, 2, 200);
    Reap(/*all=*/false);
    if (n <= 0 || (fds[0].revents & POLLIN) == 0) continue;
    int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    accepted_.fetch_add(1);
    if (refuse_new_.load()) {
      CloseHard(client);
      continue;
    }
    int server = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in to = Loopback(target_port_.load());
    if (server < 0 || connect(server, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
      if (server >= 0) close(server);
      CloseHard(client);
      continue;
    }
    int one = 1;
    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto link = std::make_shared<Link>();
    link->client = client;
    link->server = server;
    // The threads use the link through a plain pointer: links_ owns it, and destroying it joins them.
    link->to_server = std::thread([this, l = link.get()] { Forward(*l, true); });
    link->to_client = std::thread([this, l = link.get()] { Forward(*l, false); });
    std::lock_guard<std::mutex> lock(mu_);
    links_.push_back(link);
  }
}

void TcpProxy::Forward(Link& link, bool client_to_server) {
  const int from = client_to_server ? link.client : link.server;
  const int to = client_to_server ? link.server : link.client;
  char buf[16384];
  while (!stop_.load() && !link.closing.load()) {
    if (mode_.load() == kStall) {
      std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
      continue;
    }
    pollfd p{from, POLLIN, 0};
    int ready = poll(&p, 1, kPollMs);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    if (mode_.load() == kStall) continue;  // stalled while waiting: the bytes stay where they are
    ssize_t got = recv(from, buf, sizeof buf, 0);
    if (got <= 0) break;
    if (mode_.load() == kDelay) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_.load()));
    size_t sent = 0;
    while (sent < static_cast<size_t>(got) && !link.closing.load()) {
      ssize_t n = send(to, buf + sent, static_cast<size_t>(got) - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    if (sent < static_cast<size_t>(got)) break;
  }
  // One side ended (or a drop): end the other as well, as a proxy does.
  link.Shut();
  link.running.fetch_sub(1);
}

}  // namespace chsync::testing
