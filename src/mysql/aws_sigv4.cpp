#include "mysql/aws_sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cctype>

namespace chsync::mysql {

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return Hex(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest, &length);
  return std::string(reinterpret_cast<const char*>(digest), length);
}

std::string UriEncode(std::string_view text) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kDigits[c >> 4]);
      out.push_back(kDigits[c & 15]);
    }
  }
  return out;
}

std::string AmzDate(std::time_t when) {
  std::tm tm{};
  gmtime_r(&when, &tm);
  char text[20];
  std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &tm);
  return text;
}

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string Trimmed(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && s[b] == ' ') ++b;
  while (e > b && s[e - 1] == ' ') --e;
  return std::string(s.substr(b, e - b));
}

std::vector<std::pair<std::string, std::string>> SortedHeaders(const SigV4Request& request) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, value] : request.headers) out.emplace_back(Lower(name), Trimmed(value));
  std::sort(out.begin(), out.end());
  return out;
}

std::string CanonicalQuery(const std::vector<std::pair<std::string, std::string>>& query) {
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(query.size());
  for (const auto& [name, value] : query) encoded.emplace_back(UriEncode(name), UriEncode(value));
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [name, value] : encoded) {
    if (!out.empty()) out += '&';
    out.append(name).append("=").append(value);
  }
  return out;
}

}  // namespace

std::string SignedHeaders(const SigV4Request& request) {
  std::string out;
  for (const auto& [name, value] : SortedHeaders(request)) {
    if (!out.empty()) out += ';';
    out += name;
  }
  return out;
}

std::string CanonicalRequest(const SigV4Request& request) {
  std::string out = request.method + "\n" + request.path + "\n" + CanonicalQuery(request.query) + "\n";
  for (const auto& [name, value] : SortedHeaders(request))
    out.append(name).append(":").append(value).append("\n");
  out += "\n" + SignedHeaders(request) + "\n" + Sha256Hex(request.payload);
  return out;
}

std::string StringToSign(std::string_view amz_date, std::string_view region, std::string_view service,
                         std::string_view canonical_request) {
  std::string out = "AWS4-HMAC-SHA256\n";
  out.append(amz_date).append("\n");
  out.append(amz_date.substr(0, 8)).append("/").append(region).append("/").append(service);
  out.append("/aws4_request\n").append(Sha256Hex(canonical_request));
  return out;
}

std::string SigningKey(std::string_view secret, std::string_view date, std::string_view region,
                       std::string_view service) {
  std::string key = HmacSha256("AWS4" + std::string(secret), date);
  key = HmacSha256(key, region);
  key = HmacSha256(key, service);
  return HmacSha256(key, "aws4_request");
}

std::string RdsAuthToken(const AwsCredentials& credentials, std::string_view host, uint16_t port,
                         std::string_view user, std::string_view region, std::time_t now) {
  const std::string amz_date = AmzDate(now);
  const std::string date = amz_date.substr(0, 8);
  const std::string endpoint = std::string(host) + ":" + std::to_string(port);
  SigV4Request request;
  request.headers = {{"host", endpoint}};
  request.query = {{"Action", "connect"},
                   {"DBUser", std::string(user)},
                   {"X-Amz-Algorithm", "AWS4-HMAC-SHA256"},
                   {"X-Amz-Credential", credentials.access_key_id + "/" + date + "/" + std::string(region) +
                                            "/rds-db/aws4_request"},
                   {"X-Amz-Date", amz_date},
                   {"X-Amz-Expires", std::to_string(kRdsTokenLifetimeSeconds)},
                   {"X-Amz-SignedHeaders", "host"}};
  if (!credentials.session_token.empty()) {
    request.query.emplace_back("X-Amz-Security-Token", credentials.session_token);
  }
  const std::string canonical = CanonicalRequest(request);
  const std::string signature =
      Hex(HmacSha256(SigningKey(credentials.secret_access_key, date, region, "rds-db"),
                     StringToSign(amz_date, region, "rds-db", canonical)));
  return endpoint + "/?" + CanonicalQuery(request.query) + "&X-Amz-Signature=" + signature;
}

}  // namespace chsync::mysql
