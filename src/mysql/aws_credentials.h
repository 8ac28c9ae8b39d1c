#pragma once

#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "mysql/aws_sigv4.h"

namespace chsync::mysql {

/// Credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN in `env`
/// (name → value); nullopt when the key id or the secret is missing.
std::optional<AwsCredentials> CredentialsFromEnvironment(const std::map<std::string, std::string>& env);

/// The profile `profile` of a shared credentials file's text (INI: [profile] sections with
/// aws_access_key_id, aws_secret_access_key and aws_session_token); nullopt when the file has no
/// such section, a kConfig error naming `origin` when the section lacks a key or its secret.
Result<std::optional<AwsCredentials>> CredentialsFromSharedFile(std::string_view text,
                                                                std::string_view profile,
                                                                const std::string& origin);

/// The instance metadata service (IMDSv2) at `endpoint` ("http://169.254.169.254", or
/// AWS_EC2_METADATA_SERVICE_ENDPOINT): PUT /latest/api/token with X-aws-ec2-metadata-token-ttl-seconds,
/// then, with the token, GET /latest/meta-data/iam/security-credentials/ (the role) and …/ROLE (the
/// credentials, JSON, with their Expiration). kNetwork when the endpoint does not answer within
/// `timeout_ms`, kAuth when it refuses the token or has no role.
Result<AwsCredentials> CredentialsFromImds(const std::string& endpoint, int timeout_ms = 1000);

/// The credentials the way AWS SDKs look for them: the environment, then the shared credentials
/// file (AWS_SHARED_CREDENTIALS_FILE, or ~/.aws/credentials; profile AWS_PROFILE or "default"),
/// then the instance metadata service (IMDSv2; AWS_EC2_METADATA_DISABLED=true skips it).
/// Metadata-service credentials are kept until 5 minutes before they expire (thread-safe).
/// The secrets found are registered with RegisterSecret (common/redact.h).
Result<AwsCredentials> ResolveAwsCredentials();

/// Parses "2024-05-01T12:00:00Z" to seconds since the epoch; 0 when it is not that form.
std::time_t ParseIso8601Utc(std::string_view text);

}  // namespace chsync::mysql
