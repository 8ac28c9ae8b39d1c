#include "mysql/aws_credentials.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/redact.h"

extern char** environ;

namespace chsync::mysql {
namespace {

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

struct HttpAnswer {
  int status = 0;
  std::string body;
};

struct Endpoint {
  std::string host;
  std::string port = "80";
};

Result<Endpoint> ParseEndpoint(const std::string& endpoint) {
  std::string rest = endpoint;
  if (rest.starts_with("http://")) {
    rest = rest.substr(7);
  } else if (rest.find("://") != std::string::npos) {
    return Error(ErrorKind::kConfig,
                 "the instance metadata endpoint must be http://HOST[:PORT] (got " + endpoint + ")");
  }
  rest = rest.substr(0, rest.find('/'));
  Endpoint e;
  if (rest.starts_with("[")) {
    size_t close = rest.find(']');
    if (close == std::string::npos) return Error(ErrorKind::kConfig, "bad metadata endpoint " + endpoint);
    e.host = rest.substr(1, close - 1);
    if (close + 1 < rest.size() && rest[close + 1] == ':') e.port = rest.substr(close + 2);
  } else if (size_t colon = rest.rfind(':'); colon != std::string::npos) {
    e.host = rest.substr(0, colon);
    e.port = rest.substr(colon + 1);
  } else {
    e.host = rest;
  }
  if (e.host.empty()) return Error(ErrorKind::kConfig, "bad metadata endpoint " + endpoint);
  return e;
}

/// One HTTP/1.1 exchange with Connection: close; the answer read until the server closes.
Result<HttpAnswer> Exchange(const Endpoint& at, const std::string& method, const std::string& path,
                            const std::string& header_lines, int timeout_ms) {
  const std::string where = "instance metadata service at " + at.host + ":" + at.port;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(at.host.c_str(), at.port.c_str(), &hints, &found); rc != 0) {
    return Error(ErrorKind::kNetwork, where + ": " + gai_strerror(rc));
  }
  int fd = socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, found->ai_protocol);
  if (fd < 0) {
    freeaddrinfo(found);
    return Error(ErrorKind::kNetwork, where + ": socket: " + std::strerror(errno));
  }
  int rc = connect(fd, found->ai_addr, found->ai_addrlen);
  freeaddrinfo(found);
  auto fail = [&](const std::string& what) {
    close(fd);
    return Error(ErrorKind::kNetwork, where + ": " + what);
  };
  auto wait = [&](short events) {
    pollfd p{fd, events, 0};
    return poll(&p, 1, timeout_ms) == 1;
  };
  if (rc != 0 && errno != EINPROGRESS) return fail(std::string("connect: ") + std::strerror(errno));
  if (rc != 0) {
    if (!wait(POLLOUT)) return fail("no answer within " + std::to_string(timeout_ms) + " ms");
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return fail(std::string("connect: ") + std::strerror(err));
  }
  std::string request = method + " " + path + " HTTP/1.1\r\nHost: " + at.host + "\r\nConnection: close\r\n" +
                        header_lines + (method == "PUT" ? "Content-Length: 0\r\n" : "") + "\r\n";
  size_t sent = 0;
  while (sent < request.size()) {
    if (!wait(POLLOUT)) return fail("timed out sending");
    ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN) return fail(std::string("send: ") + std::strerror(errno));
    if (n > 0) sent += static_cast<size_t>(n);
  }
  std::string answer;
  char buffer[4096];
  while (answer.size() < (1u << 20)) {
    if (!wait(POLLIN)) return fail("no answer within " + std::to_string(timeout_ms) + " ms");
    ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n == 0) break;
    if (n < 0 && errno != EAGAIN) return fail(std::string("recv: ") + std::strerror(errno));
    if (n > 0) answer.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  HttpAnswer out;
  size_t head_end = answer.find("\r\n\r\n");
  if (!answer.starts_with("HTTP/1.") || answer.size() < 12 || head_end == std::string::npos) {
    return Error(ErrorKind::kNetwork, where + ": not an HTTP answer");
  }
  out.status = std::atoi(answer.c_str() + 9);
  out.body = answer.substr(head_end + 4);
  return out;
}

std::string Getenv(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

}  // namespace

std::time_t ParseIso8601Utc(std::string_view text) {
  std::tm tm{};
  std::string s(text);
  if (s.size() < 20 || strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) return 0;
  return timegm(&tm);
}

std::optional<AwsCredentials> CredentialsFromEnvironment(const std::map<std::string, std::string>& env) {
  auto get = [&env](const char* name) {
    auto it = env.find(name);
    return it == env.end() ? std::string() : it->second;
  };
  AwsCredentials c;
  c.access_key_id = get("AWS_ACCESS_KEY_ID");
  c.secret_access_key = get("AWS_SECRET_ACCESS_KEY");
  c.session_token = get("AWS_SESSION_TOKEN");
  c.source = "environment (AWS_ACCESS_KEY_ID)";
  if (c.access_key_id.empty() || c.secret_access_key.empty()) return std::nullopt;
  return c;
}

Result<std::optional<AwsCredentials>> CredentialsFromSharedFile(std::string_view text,
                                                                std::string_view profile,
                                                                const std::string& origin) {
  std::istringstream in{std::string(text)};
  std::string line;
  bool inside = false;
  bool found = false;
  AwsCredentials c;
  while (std::getline(in, line)) {
    std::string t = Trim(line);
    if (t.empty() || t[0] == '#' || t[0] == ';') continue;
    if (t.front() == '[' && t.back() == ']') {
      inside = Trim(t.substr(1, t.size() - 2)) == profile;
      found = found || inside;
      continue;
    }
    if (!inside) continue;
    size_t eq = t.find('=');
    if (eq == std::string::npos) continue;
    std::string key = Trim(t.substr(0, eq));
    std::string value = Trim(t.substr(eq + 1));
    if (key == "aws_access_key_id") c.access_key_id = value;
    if (key == "aws_secret_access_key") c.secret_access_key = value;
    if (key == "aws_session_token") c.session_token = value;
  }
  if (!found) return std::optional<AwsCredentials>();
  if (c.access_key_id.empty() || c.secret_access_key.empty()) {
    return Error(ErrorKind::kConfig, "profile [" + std::string(profile) + "] of " + origin +
                                         " lacks aws_access_key_id or aws_secret_access_key");
  }
  c.source = "profile " + std::string(profile) + " of " + origin;
  return std::optional<AwsCredentials>(std::move(c));
}

Result<AwsCredentials> CredentialsFromImds(const std::string& endpoint, int timeout_ms) {
  CHSYNC_ASSIGN_OR_RETURN(Endpoint at, ParseEndpoint(endpoint));
  CHSYNC_ASSIGN_OR_RETURN(HttpAnswer token,
                          Exchange(at, "PUT", "/latest/api/token",
                                   "X-aws-ec2-metadata-token-ttl-seconds: 21600\r\n", timeout_ms));
  if (token.status != 200 || token.body.empty()) {
    return Error(ErrorKind::kAuth, "instance metadata service at " + endpoint +
                                       " refused a session token (HTTP " + std::to_string(token.status) +
                                       ")");
  }
  RegisterSecret(token.body);
  const std::string header = "X-aws-ec2-metadata-token: " + Trim(token.body) + "\r\n";
  const std::string base = "/latest/meta-data/iam/security-credentials/";
  CHSYNC_ASSIGN_OR_RETURN(HttpAnswer roles, Exchange(at, "GET", base, header, timeout_ms));
  std::string role = Trim(roles.body.substr(0, roles.body.find('\n')));
  if (roles.status != 200 || role.empty()) {
    return Error(ErrorKind::kAuth, "instance metadata service at " + endpoint + " names no IAM role (HTTP " +
                                       std::to_string(roles.status) +
                                       "): attach an instance profile whose role may rds-db:connect");
  }
  CHSYNC_ASSIGN_OR_RETURN(HttpAnswer answer, Exchange(at, "GET", base + role, header, timeout_ms));
  if (answer.status != 200) {
    return Error(ErrorKind::kAuth, "instance metadata service at " + endpoint +
                                       " refused the credentials of role " + role + " (HTTP " +
                                       std::to_string(answer.status) + ")");
  }
  nlohmann::json json = nlohmann::json::parse(answer.body, nullptr, false);
  if (!json.is_object() || !json.contains("AccessKeyId") || !json.contains("SecretAccessKey") ||
      !json["AccessKeyId"].is_string() || !json["SecretAccessKey"].is_string()) {
    return Error(ErrorKind::kAuth, "instance metadata service at " + endpoint + ": the credentials of role " +
                                       role + " are not JSON with AccessKeyId and SecretAccessKey");
  }
  AwsCredentials c;
  c.access_key_id = json["AccessKeyId"].get<std::string>();
  c.secret_access_key = json["SecretAccessKey"].get<std::string>();
  if (json.contains("Token") && json["Token"].is_string()) c.session_token = json["Token"].get<std::string>();
  if (json.contains("Expiration") && json["Expiration"].is_string())
    c.expiration = ParseIso8601Utc(json["Expiration"].get<std::string>());
  c.source = "instance metadata service (role " + role + ")";
  return c;
}

Result<AwsCredentials> ResolveAwsCredentials() {
  std::map<std::string, std::string> env;
  for (const char* name : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"}) {
    if (const char* v = std::getenv(name)) env[name] = v;
  }
  auto registered = [](AwsCredentials c) {
    RegisterSecret(c.secret_access_key);
    if (!c.session_token.empty()) RegisterSecret(c.session_token);
    return c;
  };
  if (auto c = CredentialsFromEnvironment(env)) return registered(*c);

  std::string file = Getenv("AWS_SHARED_CREDENTIALS_FILE");
  if (file.empty() && !Getenv("HOME").empty()) file = Getenv("HOME") + "/.aws/credentials";
  std::string profile = Getenv("AWS_PROFILE");
  if (profile.empty()) profile = "default";
  if (!file.empty()) {
    std::ifstream in(file);
    if (in) {
      std::stringstream text;
      text << in.rdbuf();
      CHSYNC_ASSIGN_OR_RETURN(std::optional<AwsCredentials> c,
                              CredentialsFromSharedFile(text.str(), profile, file));
      if (c) return registered(*c);
    }
  }
  std::string disabled = Getenv("AWS_EC2_METADATA_DISABLED");
  if (disabled == "true" || disabled == "TRUE" || disabled == "1") {
    return Error(ErrorKind::kAuth,
                 "no AWS credentials: none in the environment (AWS_ACCESS_KEY_ID), no profile [" + profile +
                     "] in " + (file.empty() ? "~/.aws/credentials" : file) +
                     ", and the instance metadata service is disabled (AWS_EC2_METADATA_DISABLED)");
  }
  static std::mutex mutex;
  static std::optional<AwsCredentials> cached;
  std::lock_guard<std::mutex> lock(mutex);
  const std::time_t now = std::time(nullptr);
  if (cached && (cached->expiration == 0 || cached->expiration - 300 > now)) return *cached;
  std::string endpoint = Getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
  if (endpoint.empty()) endpoint = "http://169.254.169.254";
  auto imds = CredentialsFromImds(endpoint);
  if (!imds.ok()) {
    return Error(imds.error().kind(),
                 "no AWS credentials: none in the environment (AWS_ACCESS_KEY_ID), no profile [" + profile +
                     "] in " + (file.empty() ? "~/.aws/credentials" : file) + ", and " +
                     imds.error().message());
  }
  cached = registered(*imds);
  return *cached;
}

}  // namespace chsync::mysql
