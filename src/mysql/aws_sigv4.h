#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/hex.h"

namespace chsync::mysql {

/// AWS credentials: an access key and its secret, and the session token of temporary ones.
struct AwsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  ///< empty for long-term keys
  std::string source;         ///< where they came from, for messages ("environment", "profile x", …)
  /// When temporary credentials end (seconds since the epoch); 0: not known or never.
  std::time_t expiration = 0;
};

/// SHA-256 of `data` in lower-case hex.
std::string Sha256Hex(std::string_view data);
/// HMAC-SHA256 of `data` under `key`, as raw bytes.
std::string HmacSha256(std::string_view key, std::string_view data);
/// SigV4's URI encoding: every byte but A-Z a-z 0-9 - _ . ~ as %XX (upper-case hex).
std::string UriEncode(std::string_view text);
/// "YYYYMMDDTHHMMSSZ" of `when` (UTC).
std::string AmzDate(std::time_t when);

/// A request as SigV4 signs it: header names in any case; the query as decoded name-value pairs.
struct SigV4Request {
  std::string method = "GET";
  std::string path = "/";  ///< already URI-encoded
  std::vector<std::pair<std::string, std::string>> query;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string payload;
};

/// The canonical request (AWS Signature Version 4): method, path, the query sorted by encoded
/// name and value, the headers lower-cased, trimmed and sorted, the signed header names and the
/// payload's SHA-256.
std::string CanonicalRequest(const SigV4Request& request);
/// "host;x-amz-date": the request's header names, lower-cased, sorted, joined by ';'.
std::string SignedHeaders(const SigV4Request& request);
/// "AWS4-HMAC-SHA256\n<amz date>\n<date>/<region>/<service>/aws4_request\n<sha256 of canonical>".
std::string StringToSign(std::string_view amz_date, std::string_view region, std::string_view service,
                         std::string_view canonical_request);
/// The signing key: HMAC chain of "AWS4"+secret over the date (YYYYMMDD), region, service and
/// "aws4_request" (raw bytes).
std::string SigningKey(std::string_view secret, std::string_view date, std::string_view region,
                       std::string_view service);

/// An RDS/Aurora IAM authentication token for `user` at `host`:`port`, valid 15 minutes from
/// `now`: the SigV4 presigned URL of Action=connect for service rds-db, without its scheme
/// ("HOST:PORT/?Action=connect&DBUser=…&X-Amz-Signature=…"), with X-Amz-Security-Token for
/// temporary credentials. The server takes it as the password, sent in clear text over TLS.
std::string RdsAuthToken(const AwsCredentials& credentials, std::string_view host, uint16_t port,
                         std::string_view user, std::string_view region, std::time_t now);

/// How long an RDS IAM token is valid (X-Amz-Expires), in seconds.
constexpr int kRdsTokenLifetimeSeconds = 900;

}  // namespace chsync::mysql
