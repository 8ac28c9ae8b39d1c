#include "net/ssh_tunnel.h"

#include <fcntl.h>
#include <libssh/libssh.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "common/log.h"

namespace chsync::net {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kChunk = size_t{32} * 1024;
/// How long a failure stays "recent" for RecentSshFailure.
constexpr auto kRecent = std::chrono::seconds(30);

std::string KnownHostsName(const SshEndpoint& e) {
  return e.known_hosts.empty() ? "~/.ssh/known_hosts" : e.known_hosts;
}

std::string Fingerprint(ssh_session session) {
  ssh_key key = nullptr;
  if (ssh_get_server_publickey(session, &key) != SSH_OK) return "unknown";
  unsigned char* hash = nullptr;
  size_t length = 0;
  std::string out = "unknown";
  if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &length) == SSH_OK) {
    if (char* text = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, length); text != nullptr) {
      out = std::string(ssh_key_type_to_char(ssh_key_type(key))) + " " + text;
      ssh_string_free_char(text);
    }
    ssh_clean_pubkey_hash(&hash);
  }
  ssh_key_free(key);
  return out;
}

/// One local connection and its channel.
struct Pair {
  int fd = -1;
  ssh_channel channel = nullptr;
  std::string to_local;  ///< read from the channel, not yet written to the local socket
  bool local_eof = false;
};

/// The forwarder of one endpoint and target. Its thread owns the libssh session and every channel;
/// other threads only post requests (EnsureSession) and read the recorded failure.
class Tunnel {
 public:
  Tunnel(SshEndpoint endpoint, std::string host, uint16_t port)
      : endpoint_(std::move(endpoint)), target_host_(std::move(host)), target_port_(port) {}
  ~Tunnel() {  // only when Start failed: a started tunnel lives until the process ends
    for (int fd : {listen_fd_, wake_[0], wake_[1]}) {
      if (fd >= 0) close(fd);
    }
  }
  Tunnel(const Tunnel&) = delete;
  Tunnel& operator=(const Tunnel&) = delete;

  Status Start() {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (listen_fd_ < 0)
      return Error(ErrorKind::kIo, std::string("SSH tunnel: socket: ") + std::strerror(errno));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        listen(listen_fd_, 64) != 0 ||
        getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return Error(ErrorKind::kIo, std::string("SSH tunnel: cannot listen on 127.0.0.1 for the forwarder: ") +
                                       std::strerror(errno));
    }
    local_port_ = ntohs(addr.sin_port);
    if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
      return Error(ErrorKind::kIo, std::string("SSH tunnel: pipe: ") + std::strerror(errno));
    }
    std::thread([this] { Run(); }).detach();  // lives as long as the process
    return Status::Ok();
  }

  uint16_t local_port() const { return local_port_; }

  /// Waits until the pump thread has the session up, or has tried once and failed (that error).
  Status EnsureSession(std::chrono::milliseconds timeout) {
    if (up_.load()) return Status::Ok();
    timeout_s_.store(std::max<long>(1, static_cast<long>((timeout.count() + 999) / 1000)));
    std::unique_lock lock(mu_);
    const uint64_t seen = attempts_;
    wanted_ = true;
    Wake();
    const bool answered = cv_.wait_for(lock, timeout + std::chrono::seconds(5),
                                       [&] { return up_.load() || attempts_ != seen; });
    if (up_.load()) return Status::Ok();
    if (!answered) {
      return Error(ErrorKind::kNetwork, "SSH tunnel to " + Target() + " through the bastion " +
                                            endpoint_.Describe() +
                                            ": no answer from the bastion in time; check that it runs and is "
                                            "reachable from here");
    }
    return connect_error_.value_or(Error(ErrorKind::kNetwork, "SSH tunnel: the session is down"));
  }

  std::optional<Error> RecentFailure() {
    std::lock_guard lock(mu_);
    if (!failure_ || Clock::now() - failure_at_ > kRecent) return std::nullopt;
    return failure_;
  }

 private:
  std::string Target() const {
    return (target_host_.find(':') != std::string::npos ? "[" + target_host_ + "]" : target_host_) + ":" +
           std::to_string(target_port_);
  }
  std::string Where() const {
    return "SSH tunnel to " + Target() + " through the bastion " + endpoint_.Describe();
  }

  /// Whether the session is still connected: libssh marks a socket closed by the peer (a killed
  /// bastion) in its status.
  bool Alive() const {
    return session_ != nullptr && ssh_is_connected(session_) != 0 &&
           (ssh_get_status(session_) & (SSH_CLOSED | SSH_CLOSED_ERROR)) == 0;
  }

  void Wake() {
    const char c = 1;
    [[maybe_unused]] ssize_t n = write(wake_[1], &c, 1);
  }

  void RecordFailure(Error e) {
    std::lock_guard lock(mu_);
    failure_ = std::move(e);
    failure_at_ = Clock::now();
  }

  /// Connects, checks the host key, logs in. On the pump thread.
  Status Connect() {
    ssh_session s = ssh_new();
    if (s == nullptr) return Error(ErrorKind::kInternal, "SSH tunnel: ssh_new failed");
    const std::string bastion = endpoint_.Describe();
    auto fail = [&](Error e) {
      ssh_disconnect(s);
      ssh_free(s);
      return e;
    };
    int no = 0;
    ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &no);  // ~/.ssh/config does not change what chsync does
    ssh_options_set(s, SSH_OPTIONS_HOST, endpoint_.host.c_str());
    unsigned port = endpoint_.port;
    ssh_options_set(s, SSH_OPTIONS_PORT, &port);
    if (!endpoint_.user.empty()) ssh_options_set(s, SSH_OPTIONS_USER, endpoint_.user.c_str());
    if (!endpoint_.known_hosts.empty())
      ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, endpoint_.known_hosts.c_str());
    long timeout_s = timeout_s_.load();
    ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &timeout_s);
    if (ssh_connect(s) != SSH_OK) {
      return fail(
          Error(ErrorKind::kNetwork, Where() + ": cannot reach the bastion: " + ssh_get_error(s) +
                                         "; check that the bastion runs and that its host and port (ssh= "
                                         "in the URL, or source_ssh/dest_ssh host and port) are right"));
    }
    switch (ssh_session_is_known_server(s)) {
      case SSH_KNOWN_HOSTS_OK: break;
      case SSH_KNOWN_HOSTS_CHANGED:
      case SSH_KNOWN_HOSTS_OTHER:
        return fail(Error(ErrorKind::kConfig,
                          Where() + ": host key mismatch: the bastion offers " + Fingerprint(s) +
                              ", which is not the key " + KnownHostsName(endpoint_) +
                              " holds for it; someone may be intercepting the connection, or the bastion's "
                              "key was changed: if it was, check the new fingerprint and replace its line in "
                              "that file"));
      case SSH_KNOWN_HOSTS_UNKNOWN:
      case SSH_KNOWN_HOSTS_NOT_FOUND:
        if (endpoint_.strict_host_key_checking) {
          return fail(Error(
              ErrorKind::kConfig,
              Where() + ": unknown host: the bastion's key (" + Fingerprint(s) + ") is not in " +
                  KnownHostsName(endpoint_) + "; check the fingerprint and add the key (ssh-keyscan -p " +
                  std::to_string(endpoint_.port) + " " + endpoint_.host + " >> " + KnownHostsName(endpoint_) +
                  "), or name another file with ssh-known-hosts= (known_hosts:)"));
        }
        log::Warn("{}: the bastion's key ({}) is not in {}; accepted because strict host key checking is off",
                  Where(), Fingerprint(s), KnownHostsName(endpoint_));
        break;
      case SSH_KNOWN_HOSTS_ERROR:
      default:
        return fail(Error(ErrorKind::kConfig, Where() + ": cannot check the bastion's host key against " +
                                                  KnownHostsName(endpoint_) + ": " + ssh_get_error(s)));
    }
    int auth = SSH_AUTH_DENIED;
    std::string with;
    if (!endpoint_.key_file.empty()) {
      with = "the key " + endpoint_.key_file;
      ssh_key key = nullptr;
      if (ssh_pki_import_privkey_file(endpoint_.key_file.c_str(), nullptr, nullptr, nullptr, &key) !=
          SSH_OK) {
        return fail(Error(ErrorKind::kConfig,
                          Where() + ": cannot read the private key " + endpoint_.key_file +
                              " (missing, unreadable, protected by a passphrase, or not a private key); name "
                              "a readable key without a passphrase with ssh-key= (key_file:), or use the "
                              "agent"));
      }
      auth = ssh_userauth_publickey(s, nullptr, key);
      ssh_key_free(key);
    } else {
      with = "the agent's keys and ~/.ssh's default keys";
      auth = ssh_userauth_publickey_auto(s, nullptr, nullptr);
    }
    if (auth != SSH_AUTH_SUCCESS) {
      std::string user = endpoint_.user.empty() ? "this user" : "user '" + endpoint_.user + "'";
      return fail(Error(ErrorKind::kAuth,
                        Where() + ": authentication refused: the bastion did not accept " + user + " with " +
                            with +
                            "; add the public key to the user's ~/.ssh/authorized_keys on the bastion, "
                            "or name the right user and key (ssh=USER@…, ssh-key=)"));
    }
    // A bastion that vanishes without closing the connection is noticed within about a minute.
    const int fd = ssh_get_fd(s);
    int on = 1, idle = 15, interval = 5, count = 6;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
    session_ = s;
    log::Info("{}: session open, forwarding 127.0.0.1:{}", Where(), local_port_);
    return Status::Ok();
  }

  void Disconnect(const std::string& why) {
    RecordFailure(Error(ErrorKind::kNetwork, Where() + ": the SSH session dropped (" + why +
                                                 "); it is opened again on the next connection"));
    for (Pair& p : pairs_) Close(p);
    pairs_.clear();
    if (session_ != nullptr) {
      ssh_disconnect(session_);
      ssh_free(session_);
      session_ = nullptr;
    }
    up_.store(false);
    log::Warn("{}: the SSH session dropped ({})", Where(), why);
  }

  static void Close(Pair& p) {
    if (p.fd >= 0) close(p.fd);
    p.fd = -1;
    if (p.channel != nullptr) {
      ssh_channel_close(p.channel);
      ssh_channel_free(p.channel);
      p.channel = nullptr;
    }
  }

  /// Tries the session once (when it is down) and tells the waiters.
  void TryConnect() {
    Status s = session_ != nullptr ? Status::Ok() : Connect();
    std::lock_guard lock(mu_);
    ++attempts_;
    wanted_ = false;
    if (s.ok()) {
      up_.store(true);
      connect_error_.reset();
    } else {
      connect_error_ = s.error();
      failure_ = s.error();
      failure_at_ = Clock::now();
    }
    cv_.notify_all();
  }

  void Accept() {
    for (;;) {
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) return;
      if (session_ == nullptr) TryConnect();
      if (session_ == nullptr) {
        close(fd);
        continue;
      }
      int on = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
      ssh_channel channel = ssh_channel_new(session_);
      if (channel == nullptr || ssh_channel_open_forward(channel, target_host_.c_str(), target_port_,
                                                         "127.0.0.1", local_port_) != SSH_OK) {
        std::string detail = ssh_get_error(session_);
        if (channel != nullptr) ssh_channel_free(channel);
        // The failure is recorded before the local connection closes: its client asks for it then.
        if (!Alive()) {
          Disconnect(detail);
        } else {
          RecordFailure(Error(ErrorKind::kNetwork,
                              Where() + ": target refused: the bastion could not open a connection to " +
                                  Target() + " (" + detail + "); check that " + Target() +
                                  " runs and is reachable from the bastion under that name, and that the "
                                  "bastion's sshd allows TCP forwarding (AllowTcpForwarding)"));
        }
        close(fd);
        continue;
      }
      pairs_.push_back(Pair{fd, channel, {}, false});
    }
  }

  /// Moves bytes of one pair both ways. False when the pair is done (closed on either side).
  bool Pump(Pair& p, short revents, char* buf) {
    if (!p.to_local.empty()) {
      ssize_t n = send(p.fd, p.to_local.data(), p.to_local.size(), MSG_NOSIGNAL);
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
      if (n > 0) p.to_local.erase(0, static_cast<size_t>(n));
    }
    if (!p.local_eof && (revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      ssize_t n = recv(p.fd, buf, kChunk, 0);
      if (n > 0) {
        if (ssh_channel_write(p.channel, buf, static_cast<uint32_t>(n)) == SSH_ERROR) return false;
      } else if (n == 0) {
        p.local_eof = true;
        ssh_channel_send_eof(p.channel);
      } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
        return false;
      }
    }
    while (p.to_local.empty()) {
      int n = ssh_channel_read_nonblocking(p.channel, buf, kChunk, 0);
      if (n == SSH_ERROR) return false;
      if (n <= 0) break;
      ssize_t sent = send(p.fd, buf, static_cast<size_t>(n), MSG_NOSIGNAL);
      if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
      const size_t done = sent > 0 ? static_cast<size_t>(sent) : 0;
      if (done < static_cast<size_t>(n)) p.to_local.assign(buf + done, static_cast<size_t>(n) - done);
    }
    if (p.to_local.empty() && (ssh_channel_is_eof(p.channel) != 0 || ssh_channel_is_closed(p.channel) != 0)) {
      return false;
    }
    return !(p.local_eof && ssh_channel_is_closed(p.channel) != 0);
  }

  void Run() {
    std::vector<char> buffer(kChunk);
    std::vector<pollfd> fds;
    for (;;) {
      bool wanted = false;
      {
        std::lock_guard lock(mu_);
        wanted = wanted_;
      }
      if (wanted) TryConnect();
      if (session_ != nullptr && !Alive()) Disconnect(ssh_get_error(session_));
      // Data libssh already holds for a channel does not make its socket readable: do not sleep.
      bool ready = false;
      for (Pair& p : pairs_) {
        if (p.to_local.empty() && ssh_channel_poll(p.channel, 0) != 0) ready = true;
      }
      fds.clear();
      fds.push_back({wake_[0], POLLIN, 0});
      fds.push_back({listen_fd_, POLLIN, 0});
      fds.push_back({session_ != nullptr ? ssh_get_fd(session_) : -1, POLLIN, 0});
      for (Pair& p : pairs_) {
        short events = p.local_eof ? 0 : POLLIN;
        if (!p.to_local.empty()) events |= POLLOUT;
        fds.push_back({p.fd, events, 0});
      }
      poll(fds.data(), fds.size(), ready ? 0 : 200);
      if ((fds[0].revents & POLLIN) != 0) {
        char drain[64];
        while (read(wake_[0], drain, sizeof drain) > 0) {
        }
      }
      for (size_t i = 0; i < pairs_.size(); ++i) {
        if (!Pump(pairs_[i], fds[3 + i].revents, buffer.data())) {
          if (session_ != nullptr && !Alive()) break;  // Disconnect closes them all
          Close(pairs_[i]);
        }
      }
      std::erase_if(pairs_, [](const Pair& p) { return p.fd < 0; });
      if (session_ != nullptr && !Alive()) {
        Disconnect(ssh_get_error(session_));
        continue;
      }
      if ((fds[1].revents & POLLIN) != 0) Accept();
    }
  }

  const SshEndpoint endpoint_;
  const std::string target_host_;
  const uint16_t target_port_;
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  uint16_t local_port_ = 0;
  ssh_session session_ = nullptr;  // the pump thread's
  std::vector<Pair> pairs_;        // the pump thread's
  std::atomic<bool> up_{false};
  std::atomic<long> timeout_s_{10};  ///< of the bastion's connection, from the last EnsureSession

  std::mutex mu_;
  std::condition_variable cv_;
  bool wanted_ = false;
  uint64_t attempts_ = 0;
  std::optional<Error> connect_error_;
  std::optional<Error> failure_;
  Clock::time_point failure_at_;
};

using Key =
    std::tuple<std::string, uint16_t, std::string, std::string, std::string, bool, std::string, uint16_t>;

Key KeyOf(const SshEndpoint& e, const std::string& host, uint16_t port) {
  return {e.host, e.port, e.user, e.key_file, e.known_hosts, e.strict_host_key_checking, host, port};
}

struct Registry {
  std::mutex mu;
  std::map<Key, std::shared_ptr<Tunnel>> tunnels;
};

Registry& Tunnels() {
  static Registry* registry = new Registry;  // never destroyed: its threads run until the process ends
  return *registry;
}

}  // namespace

Result<LocalAddress> DialThroughSsh(const SshEndpoint& endpoint, const std::string& target_host,
                                    uint16_t target_port, std::chrono::milliseconds timeout) {
  std::shared_ptr<Tunnel> tunnel;
  {
    Registry& r = Tunnels();
    std::lock_guard lock(r.mu);
    auto& slot = r.tunnels[KeyOf(endpoint, target_host, target_port)];
    if (slot == nullptr) {
      auto made = std::make_shared<Tunnel>(endpoint, target_host, target_port);
      CHSYNC_RETURN_IF_ERROR(made->Start());
      slot = std::move(made);
    }
    tunnel = slot;
  }
  CHSYNC_RETURN_IF_ERROR(tunnel->EnsureSession(timeout));
  LocalAddress address;
  address.port = tunnel->local_port();
  return address;
}

std::optional<Error> RecentSshFailure(const SshEndpoint& endpoint, const std::string& target_host,
                                      uint16_t target_port) {
  std::shared_ptr<Tunnel> tunnel;
  {
    Registry& r = Tunnels();
    std::lock_guard lock(r.mu);
    auto it = r.tunnels.find(KeyOf(endpoint, target_host, target_port));
    if (it == r.tunnels.end()) return std::nullopt;
    tunnel = it->second;
  }
  return tunnel->RecentFailure();
}

}  // namespace chsync::net
