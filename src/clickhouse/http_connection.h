#pragma once

#include <memory>
#include <string>

#include "clickhouse/connection.h"

namespace chsync::clickhouse {

/// A ClickHouse server over its HTTP interface, through one libcurl easy handle that keeps the
/// TCP (and TLS) connection alive between requests. Statements go in the POST body; an insert puts
/// its statement in the `query` parameter and streams the data as the body (gzip-compressed when
/// large). Every request carries `wait_end_of_query=1`, so an exception raised while the server
/// produces output still arrives as an HTTP error rather than as a cut-off 200 body. With a cancel
/// flag (ConnectOptions::cancel), libcurl's progress callback aborts a request in progress.
class HttpConnection final : public Connection {
 public:
  /// `base_url` is "http(s)://host:port/" without credentials. An https:// URL with
  /// options.tls_verify off (?ssl-verify=0) logs a warning, once per process and URL.
  static Result<std::unique_ptr<HttpConnection>> Create(std::string base_url, std::string user,
                                                        std::string password, ConnectOptions options);
  ~HttpConnection() override;
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  std::string Describe() const override { return base_url_; }
  /// TCP connections opened so far: stays 1 over many requests while keep-alive works.
  uint64_t connections_opened() const { return connections_opened_; }
  bool embedded() const override { return false; }
  /// The server's host and port as the bastion reaches them, when options.ssh names a tunnel.
  void set_ssh_target(std::string host, uint16_t port) {
    ssh_host_ = std::move(host);
    ssh_port_ = port;
  }

 protected:
  Result<std::string> Run(std::string_view sql, std::string_view data, std::string_view format,
                          const RequestOptions& request) override;

 private:
  HttpConnection(void* curl, std::string base_url, std::string user, std::string password,
                 ConnectOptions options);
  std::string RequestUrl(std::string_view sql_in_url, std::string_view format, const RequestOptions& request);

  void* curl_;  // CURL*
  std::string base_url_;
  std::string user_;
  std::string password_;
  ConnectOptions options_;
  uint64_t connections_opened_ = 0;
  std::string ssh_host_;
  uint16_t ssh_port_ = 0;
};

/// What a failed libcurl transfer to `base_url` means, with what to do: a certificate refused
/// (wrong CA, or a host name the certificate does not list) or a CA file that cannot be read is
/// kConfig, since retrying cannot help; a TLS handshake that breaks or never completes (often an
/// https:// URL pointed at the plain HTTP port) and anything else is kNetwork. `curl_code` is the
/// CURLcode, `detail` libcurl's message.
Error TransportError(int curl_code, std::string_view detail, std::string_view base_url,
                     const ConnectOptions& options);

}  // namespace chsync::clickhouse
