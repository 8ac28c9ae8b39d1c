#pragma once

// The last line of defence against passwords in output: every text that leaves the process as a
// message (log lines, errors printed by the CLI, status.json, park reasons saved in the state
// directory, the HTTP server's status page, metrics and error bodies) goes through Redact. Row
// data never does: it runs on messages only, so its cost does not matter on the hot path.

#include <string>
#include <string_view>

namespace chsync {

/// What a removed password is replaced with.
inline constexpr std::string_view kRedactedMark = "***";

/// Known secrets shorter than this are not masked wherever they occur (a two-letter password
/// would mask ordinary words); they are masked where URL syntax shows them, as every password is.
inline constexpr size_t kMinSecretLength = 4;

/// `text` with every password replaced by "***":
/// - every exact occurrence of a registered secret (RegisterSecret, RegisterSecretsIn), whatever
///   surrounds it, the longest first;
/// - the password of every `scheme://user:password@host` fragment: from the first ':' after "://"
///   to the last '@' before the fragment ends (at whitespace, a quote, '<' or '>', or where the
///   next `scheme://` begins, so comma-separated lists of URLs are handled URL by URL). The
///   password may hold '@', ':', '/', ',', ';' and percent-escapes;
/// - the password of every `user:password@` fragment without a scheme, as servers echo parts of
///   URLs back (`Unknown database '/chsync:PW@127.0.0.1:3307'`): from the first ':' of the word
///   that ends at the '@' (a word ends at whitespace, a quote or "//"; at ',', ';', '/', '=' only
///   when a ':' is already seen, so a password may hold those) — at most 512 bytes back;
/// - the value of `password=`, `passwd=` and `pwd=` (URL query parameters), up to '&', whitespace
///   or a quote.
/// A password that is literally "PASSWORD" (the placeholder of usage hints such as
/// "mysql://USER:PASSWORD@HOST:PORT") is left alone unless it is registered.
/// Unregistered passwords holding whitespace or quotes are cut where the fragment seems to end:
/// passwords chsync is given are registered, so they are masked whole.
/// Thread-safe; linear in the size of `text` (times the number of registered secrets).
std::string Redact(std::string_view text);

/// Registers `secret` (a password chsync knows: from a URL, an environment variable or a password
/// file) so that Redact masks every exact occurrence of it. Values shorter than kMinSecretLength
/// are ignored. Thread-safe; registering a secret twice is harmless.
void RegisterSecret(std::string_view secret);

/// Registers the passwords `text` holds, taken as one value a user gave (a command-line argument,
/// a configuration value, a --source list): of every `scheme://user:password@…` in it (up to the
/// last '@' before the next `scheme://`, whitespace and quotes included), or, when it holds no
/// "://", of `user:password@host` (first ':' to last '@'). Each is registered as written and,
/// when it holds percent-escapes, decoded. Thread-safe.
void RegisterSecretsIn(std::string_view text);

/// Forgets every registered secret. For tests.
void ClearSecretsForTest();

}  // namespace chsync
