#include "cli/version.h"

#include <curl/curl.h>
#include <fmt/format.h>
#include <mariadb/mysql.h>
#include <zstd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "chsync_git_commit.h"  // CHSYNC_GIT_COMMIT, written by version.cmake at build time
#include "clickhouse/connection.h"
#include "clickhouse/embedded_connection.h"

namespace chsync::cli {
namespace {

/// libcurl's version with the libraries it speaks TLS and gzip through ("7.88.1, OpenSSL/3.0.19,
/// zlib 1.2.13").
std::string CurlVersion() {
  const curl_version_info_data* info = curl_version_info(CURLVERSION_NOW);
  if (info == nullptr || info->version == nullptr) return "unknown";
  std::string text = info->version;
  if (info->ssl_version != nullptr) text += fmt::format(", {}", info->ssl_version);
  if (info->libz_version != nullptr) text += fmt::format(", zlib {}", info->libz_version);
  return text;
}

/// Where a file: destination would load libchdb.so from, each candidate with whether it exists.
std::string ChdbCandidates() {
  std::string text;
  for (const std::string& candidate : clickhouse::EmbeddedConnection::LibraryCandidates({})) {
    if (!text.empty()) text += ", else ";
    if (candidate.find('/') == std::string::npos) {
      text += candidate + " in the dynamic loader's path";
      continue;
    }
    std::error_code ec;
    text += candidate + (std::filesystem::is_regular_file(candidate, ec) ? " (present)" : " (absent)");
  }
  return text;
}

}  // namespace

std::string BuildCommit() {
  return CHSYNC_GIT_COMMIT;
}

std::string VersionText() {
  std::string text = fmt::format("chsync {} (commit {})\n", CHSYNC_VERSION, CHSYNC_GIT_COMMIT);
  text += fmt::format("MariaDB Connector/C {} (MySQL and MariaDB sources)\n", mysql_get_client_info());
  text += fmt::format("libcurl {} (ClickHouse over HTTP and HTTPS)\n", CurlVersion());
  text += fmt::format("zstd {}\n", ZSTD_versionString());
  const char* env = std::getenv("CHSYNC_CHDB_LIB");
  const bool named = env != nullptr && *env != '\0';
  text += fmt::format("chDB (embedded ClickHouse, file: destinations): loaded only when used, from {}{}",
                      ChdbCandidates(),
                      named ? " (named by CHSYNC_CHDB_LIB)" : "; CHSYNC_CHDB_LIB may name another");
  return text;
}

}  // namespace chsync::cli
