#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace chsync::net {

/// Where and how to open an SSH tunnel: the bastion, the user and key chsync logs in with, and
/// how the bastion's host key is checked. From a URL's `ssh=` parameters or the configuration's
/// source_ssh: / dest_ssh: keys (docs/configuration.md, "SSH tunnels").
struct SshEndpoint {
  std::string host;  ///< the bastion
  uint16_t port = 22;
  std::string user;  ///< empty: the local user's name (as ssh does)
  /// The private key file (OpenSSH or PEM format, no passphrase); empty: the keys of the agent
  /// (SSH_AUTH_SOCK) and then ~/.ssh's default keys.
  std::string key_file;
  /// The known_hosts file the bastion's key must be in; empty: ~/.ssh/known_hosts.
  std::string known_hosts;
  /// On (the default): a bastion whose key is not in known_hosts is refused. Off: an unknown key is
  /// accepted (and not written anywhere); a key that differs from the file's is refused either way.
  bool strict_host_key_checking = true;

  /// "user@host:port", for messages.
  std::string Describe() const;
  /// The URL parameters that say the same (`ssh=user@host:port&ssh-key=…`), percent-encoded,
  /// without a leading '?' or '&'.
  std::string ToQuery() const;
  bool operator==(const SshEndpoint&) const = default;
};

/// Parses `[user@]host[:port]` (IPv6 hosts in brackets) of `ssh=`; `what` names it in errors
/// ("ssh= in the source URL"). kUsage on an empty host, a bad port or a bad character.
Result<SshEndpoint> ParseSshTarget(std::string_view text, std::string_view what);

/// Takes the SSH parameters out of a URL's query parameters (ParseQueryParams): `ssh`,
/// `ssh-key`, `ssh-known-hosts` and `ssh-strict` (yes|no, 1|0, true|false). Returns the endpoint
/// when `ssh` is there, nullopt when no SSH parameter is; the other parameters stay in `params`.
/// kUsage when ssh-key, ssh-known-hosts or ssh-strict come without ssh=, or a value is bad; `what`
/// names the URL in errors ("source URL").
Result<std::optional<SshEndpoint>> TakeSshParams(std::vector<std::pair<std::string, std::string>>& params,
                                                 std::string_view what);

/// Appends `endpoint`'s parameters to every URL of a comma-separated list that names no ssh= of
/// its own (a URL's own ssh= wins over the configuration's keys). file: URLs are left as they are.
std::string WithSshParams(std::string_view url_list, const SshEndpoint& endpoint);

}  // namespace chsync::net
