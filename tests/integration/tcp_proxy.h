#pragma once

// A loopback TCP proxy for the fault tests: placed between chsync and a server (MariaDB or
// ClickHouse), it forwards bytes both ways and can break the network on demand: drop every open
// connection, stall connections (accepted and kept open, nothing forwarded), or delay each chunk.
//
// It runs in the test process: one thread accepts, two threads per connection forward (one per
// direction). It listens on 127.0.0.1 only and connects to 127.0.0.1 only.

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace chsync::testing {

class TcpProxy {
 public:
  /// Listens on a free loopback port and forwards every connection to 127.0.0.1:`target_port`,
  /// in pass mode. Returns nullptr with the reason in `*error` when it cannot listen.
  static std::unique_ptr<TcpProxy> Start(int target_port, std::string* error);
  /// Closes every connection and stops its threads.
  ~TcpProxy();
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  /// The port it listens on (127.0.0.1).
  int port() const { return port_; }

  /// Forwards everything at once (also what waited in a stalled connection).
  void Pass();
  /// Accepts connections and keeps them (and the ones open) open, but forwards nothing either
  /// way: to both sides the peer looks alive and silent, as with a network that drops packets
  /// while the kernels on either end still hold the connection.
  void Stall();
  /// Forwards each chunk read from either side `ms` milliseconds after reading it.
  void Delay(int ms);
  /// Closes every connection open now, both sides (new connections are accepted as the mode says).
  void DropAll();
  /// New connections go to 127.0.0.1:`target_port` from now on (a VIP, a DNS name or a proxy such as
  /// ProxySQL re-pointed to another server); open ones stay where they are until DropAll().
  void Retarget(int target_port) { target_port_.store(target_port); }
  /// While true, a new connection is closed as soon as it is accepted (a server that refuses).
  void RefuseNew(bool refuse) { refuse_new_.store(refuse); }

  /// Connections accepted so far, and open now.
  size_t accepted() const { return accepted_.load(); }
  size_t open_connections() const;

 private:
  struct Link;
  TcpProxy(int listen_fd, int port, int target_port);
  void AcceptLoop();
  void Forward(Link& link, bool client_to_server);
  void Reap(bool all);

  int listen_fd_;
  int port_;
  std::atomic<int> target_port_;
  int wake_[2] = {-1, -1};
  std::atomic<bool> stop_{false};
  std::atomic<int> mode_{0};  ///< 0 pass, 1 stall, 2 delay
  std::atomic<int> delay_ms_{0};
  std::atomic<bool> refuse_new_{false};
  std::atomic<size_t> accepted_{0};
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<Link>> links_;
  std::thread acceptor_;
};

}  // namespace chsync::testing
