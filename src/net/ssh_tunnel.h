#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"
#include "net/ssh_endpoint.h"

namespace chsync::net {

/// A local address to dial instead of a target reached through an SSH tunnel.
struct LocalAddress {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
};

/// The address to dial for `target_host:target_port` through the bastion of `endpoint`: a
/// forwarder on 127.0.0.1 (an ephemeral port) whose accepted connections each become a
/// direct-tcpip channel to the target over one SSH session. One forwarder per endpoint and target
/// in the process, started on first use and kept until the process ends; one thread of its own
/// owns its libssh session (libssh sessions are not thread-safe) and pumps every channel.
///
/// Before it returns, the session is up: connected, the bastion's host key checked against the
/// known_hosts file, logged in. A session that dropped (bastion restarted, network cut) is opened
/// again here, so a caller that retries a broken connection re-opens the tunnel. Connections
/// through a session that drops break (their reads fail); nothing is replayed.
///
/// Errors are named as SSH failures, with the bastion, the target and what to do: kNetwork when
/// the bastion cannot be reached (retrying may help), kConfig for a host key that is unknown
/// (strict checking) or differs from known_hosts, or an unreadable key file, kAuth when the
/// bastion refuses the user and key. `timeout` bounds the connection to the bastion.
/// Thread-safe.
Result<LocalAddress> DialThroughSsh(const SshEndpoint& endpoint, const std::string& target_host,
                                    uint16_t target_port, std::chrono::milliseconds timeout);

/// Why the last connection through the forwarder of `endpoint` to the target failed, when it did
/// within the last 30 seconds: the bastion refused to open the channel (the target is down or not
/// reachable from the bastion, or forwarding is off there: kNetwork), or the session dropped. A
/// caller whose connection to the forwarder broke during its handshake returns this instead of its
/// own, less telling error. nullopt when nothing failed lately.
std::optional<Error> RecentSshFailure(const SshEndpoint& endpoint, const std::string& target_host,
                                      uint16_t target_port);

}  // namespace chsync::net
