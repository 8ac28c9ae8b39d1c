#include "clickhouse/http_connection.h"

#include <curl/curl.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <set>

#include "clickhouse/gzip.h"
#include "clickhouse/server_error.h"
#include "common/log.h"
#include "net/ssh_tunnel.h"

namespace chsync::clickhouse {
namespace {

struct ResponseState {
  std::string body;
  int exception_code = 0;
};

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* state = static_cast<ResponseState*>(user);
  state->body.append(data, size * count);
  return size * count;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* state = static_cast<ResponseState*>(user);
  std::string_view line(data, size * count);
  constexpr std::string_view kName = "x-clickhouse-exception-code:";
  if (line.size() > kName.size()) {
    bool match = true;
    for (size_t i = 0; i < kName.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(line[i])) != kName[i]) {
        match = false;
        break;
      }
    }
    if (match)
      state->exception_code = ParseExceptionCode(
          "Code: " + std::string(line.substr(kName.size() + (line[kName.size()] == ' ' ? 1 : 0))));
  }
  return size * count;
}

/// Data handed to libcurl for the request body without copying.
struct UploadState {
  std::string_view first;   // the statement text, or empty for inserts
  std::string_view second;  // the data
  size_t offset = 0;
};

size_t OnUpload(char* buffer, size_t size, size_t count, void* user) {
  auto* state = static_cast<UploadState*>(user);
  size_t room = size * count;
  size_t written = 0;
  while (room > 0) {
    size_t total = state->first.size() + state->second.size();
    if (state->offset >= total) break;
    std::string_view part = state->offset < state->first.size()
                                ? state->first.substr(state->offset)
                                : state->second.substr(state->offset - state->first.size());
    size_t n = std::min(room, part.size());
    std::memcpy(buffer + written, part.data(), n);
    written += n;
    room -= n;
    state->offset += n;
  }
  return written;
}

std::string Escape(CURL* curl, std::string_view text) {
  char* escaped = curl_easy_escape(curl, text.data(), static_cast<int>(text.size()));
  std::string out = escaped != nullptr ? escaped : "";
  curl_free(escaped);
  return out;
}

/// libcurl's progress callback: a non-zero return aborts the transfer (CURLE_ABORTED_BY_CALLBACK).
int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* cancel = static_cast<const std::atomic<bool>*>(user);
  return cancel->load(std::memory_order_relaxed) ? 1 : 0;
}

bool Has(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

/// Warns once per process and URL that an https:// destination's certificate goes unchecked.
void WarnUnverified(const std::string& base_url) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mutex);
  if (!warned.insert(base_url).second) return;
  log::Warn(
      "TLS certificate verification is OFF for ClickHouse at {} (ssl-verify=0 in the destination URL): "
      "the connection is encrypted but anyone on the network path can pose as the server and read the "
      "data and the password; pass ssl-ca=FILE with the CA that signed the server's certificate instead",
      base_url);
}

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

Result<std::unique_ptr<HttpConnection>> HttpConnection::Create(std::string base_url, std::string user,
                                                               std::string password, ConnectOptions options) {
  GlobalInit();
  if (!options.tls_verify && base_url.starts_with("https://")) WarnUnverified(base_url);
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return Error(ErrorKind::kInternal, "curl_easy_init failed");
  return std::unique_ptr<HttpConnection>(new HttpConnection(curl, std::move(base_url), std::move(user),
                                                            std::move(password), std::move(options)));
}

HttpConnection::HttpConnection(void* curl, std::string base_url, std::string user, std::string password,
                               ConnectOptions options)
    : curl_(curl),
      base_url_(std::move(base_url)),
      user_(std::move(user)),
      password_(std::move(password)),
      options_(std::move(options)) {}

HttpConnection::~HttpConnection() {
  curl_easy_cleanup(static_cast<CURL*>(curl_));
}

std::string HttpConnection::RequestUrl(std::string_view sql_in_url, std::string_view format,
                                       const RequestOptions& request) {
  CURL* curl = static_cast<CURL*>(curl_);
  std::string url = base_url_ + "?wait_end_of_query=1";
  auto add = [&](std::string_view name, std::string_view value) {
    url += "&";
    url += Escape(curl, name);
    url += "=";
    url += Escape(curl, value);
  };
  if (!sql_in_url.empty()) add("query", sql_in_url);
  if (!format.empty()) add("default_format", format);
  if (!options_.database.empty()) add("database", options_.database);
  if (!request.query_id.empty()) add("query_id", request.query_id);
  for (const auto& [name, value] : options_.settings) add(name, value);
  for (const auto& [name, value] : request.settings) add(name, value);
  return url;
}

Result<std::string> HttpConnection::Run(std::string_view sql, std::string_view data, std::string_view format,
                                        const RequestOptions& request) {
  CURL* curl = static_cast<CURL*>(curl_);
  curl_easy_reset(curl);  // keeps the live connection and caches; clears the previous request's options

  const bool insert = !data.empty();
  std::string url =
      RequestUrl(insert ? sql : std::string_view(), insert ? std::string_view() : format, request);
  std::string compressed;
  UploadState upload;
  if (insert) {
    if (options_.compress_min_bytes > 0 && data.size() >= options_.compress_min_bytes) {
      CHSYNC_ASSIGN_OR_RETURN(compressed, Gzip(data));
      upload.second = compressed;
    } else {
      upload.second = data;
    }
  } else {
    upload.first = sql;
  }
  const size_t body_size = upload.first.size() + upload.second.size();

  struct curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Content-Type: application/octet-stream");
  headers = curl_slist_append(headers, "Expect:");
  if (!compressed.empty()) headers = curl_slist_append(headers, "Content-Encoding: gzip");
  std::string user_header;
  std::string key_header;
  if (options_.header_auth) {
    user_header = "X-ClickHouse-User: " + user_;
    key_header = "X-ClickHouse-Key: " + password_;
    headers = curl_slist_append(headers, user_header.c_str());
    headers = curl_slist_append(headers, key_header.c_str());
  } else {
    curl_easy_setopt(curl, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
    curl_easy_setopt(curl, CURLOPT_USERNAME, user_.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, password_.c_str());
  }

  ResponseState response;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body_size));
  curl_easy_setopt(curl, CURLOPT_READFUNCTION, &OnUpload);
  curl_easy_setopt(curl, CURLOPT_READDATA, &upload);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  // A peer that vanished (cable, firewall, host gone) is noticed within about a minute while an
  // answer is awaited, rather than at the request timeout.
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPIDLE, 15L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPINTVL, 5L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.request_timeout.count()));
  if (!options_.tls_ca.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, options_.tls_ca.c_str());
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, options_.tls_verify ? 1L : 0L);
  curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, options_.tls_verify ? 2L : 0L);
  if (const std::atomic<bool>* cancel = cancel_flag(); cancel != nullptr) {
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, &OnProgress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, const_cast<std::atomic<bool>*>(cancel));
  }
  char curl_error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_error);
  struct curl_slist* connect_to = nullptr;
  if (options_.ssh) {
    // The forwarder of the SSH tunnel stands in for the server's address; the Host header and TLS
    // keep the server's own name.
    auto local = net::DialThroughSsh(*options_.ssh, ssh_host_, ssh_port_, options_.connect_timeout);
    if (!local.ok()) {
      curl_slist_free_all(headers);
      return local.error();
    }
    const std::string host = ssh_host_.find(':') != std::string::npos ? "[" + ssh_host_ + "]" : ssh_host_;
    const std::string rule =
        host + ":" + std::to_string(ssh_port_) + ":" + local->host + ":" + std::to_string(local->port);
    connect_to = curl_slist_append(connect_to, rule.c_str());
    curl_easy_setopt(curl, CURLOPT_CONNECT_TO, connect_to);
  }

  CURLcode rc = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  curl_slist_free_all(connect_to);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  long opened = 0;
  curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &opened);
  connections_opened_ += static_cast<uint64_t>(opened);
  if (rc == CURLE_ABORTED_BY_CALLBACK) {
    return CancelledError(std::string(insert ? "insert" : "statement") + " to ClickHouse at " + base_url_ +
                          " aborted");
  }
  if (rc != CURLE_OK && options_.ssh &&
      (rc == CURLE_GOT_NOTHING || rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR ||
       rc == CURLE_COULDNT_CONNECT)) {
    // The forwarder closed the connection: the bastion refused the channel, or the session dropped.
    if (auto failure = net::RecentSshFailure(*options_.ssh, ssh_host_, ssh_port_)) return *failure;
  }
  if (rc != CURLE_OK) {
    std::string detail = curl_error[0] != '\0' ? curl_error : curl_easy_strerror(rc);
    return TransportError(static_cast<int>(rc), detail, base_url_, options_);
  }
  if (status == 200 && response.exception_code == 0) return std::move(response.body);
  if (response.exception_code == 0 && ParseExceptionCode(response.body) == 0) {
    std::string what = "ClickHouse at " + base_url_ + " answered HTTP " + std::to_string(status);
    std::string snippet = response.body.substr(0, 300);
    if (!snippet.empty()) what += ": " + snippet;
    if (status >= 500 || status == 0) return Error(ErrorKind::kNetwork, what);
    if (status == 401 || status == 403)
      return Error(ErrorKind::kAuth, what + "; check the user and password");
    return Error(ErrorKind::kServer, what);
  }
  return ExceptionError(base_url_, response.exception_code, response.body);
}

Error TransportError(int curl_code, std::string_view detail, std::string_view base_url,
                     const ConnectOptions& options) {
  const std::string where = "ClickHouse at " + std::string(base_url);
  const bool https = base_url.starts_with("https://");
  const std::string ca = options.tls_ca.empty() ? "the system's CA store" : "ssl-ca=" + options.tls_ca;
  switch (curl_code) {
    case CURLE_PEER_FAILED_VERIFICATION:
      if (Has(detail, "subject name") || Has(detail, "host name")) {
        return Error(ErrorKind::kConfig, "TLS certificate of " + where +
                                             " is not for that host: " + std::string(detail) +
                                             "; connect by a host name or IP address that the certificate "
                                             "lists (its subjectAltName)");
      }
      return Error(ErrorKind::kConfig,
                   "TLS certificate verify failed for " + where + " (checked against " + ca +
                       "): " + std::string(detail) +
                       "; pass ssl-ca=FILE in the destination URL with the CA certificate (PEM) that signed "
                       "the server's certificate (ssl-verify=0 turns verification off: for tests only)");
    case CURLE_SSL_CACERT_BADFILE:
      return Error(ErrorKind::kConfig, "cannot use the CA file of ssl-ca=" + options.tls_ca + " for " +
                                           where + ": " + std::string(detail) +
                                           "; name a readable PEM file of CA certificates");
    case CURLE_SSL_CONNECT_ERROR:
      return Error(ErrorKind::kNetwork, "TLS handshake with " + where + " failed: " + std::string(detail) +
                                            "; check that the port is ClickHouse's https_port (8443 by "
                                            "default) and that the server has a certificate configured");
    case CURLE_OPERATION_TIMEDOUT:
      if (https && (Has(detail, "SSL") || Has(detail, "TLS"))) {
        return Error(ErrorKind::kNetwork,
                     "TLS handshake with " + where + " did not complete: " + std::string(detail) +
                         "; is the port ClickHouse's https_port (8443 by default)? Its http_port (8123) "
                         "speaks plain HTTP: use http:// there");
      }
      break;
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
      if (!https) {
        return Error(ErrorKind::kNetwork, "cannot reach " + where + ": " + std::string(detail) +
                                              " (if the port is ClickHouse's https_port, use https://)");
      }
      break;
    default: break;
  }
  return Error(ErrorKind::kNetwork, "cannot reach " + where + ": " + std::string(detail));
}

}  // namespace chsync::clickhouse
