#include "common/redact.h"

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "common/url.h"

namespace chsync {
namespace {

/// Registered secrets, longest first, replaced as a whole when one is added (readers keep the
/// list they took).
using Secrets = std::vector<std::string>;

std::mutex g_mutex;
std::shared_ptr<const Secrets> g_secrets = std::make_shared<const Secrets>();

std::shared_ptr<const Secrets> CurrentSecrets() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_secrets;
}

/// How far before an '@' a `user:password` word is looked for.
constexpr size_t kMaxWordBack = 512;

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/// Characters that end a URL or a word in running text.
bool IsHardBoundary(char c) {
  return IsSpace(c) || c == '\'' || c == '"' || c == '`' || c == '<' || c == '>';
}

/// Characters that end a `user:password@` word once its ':' is seen (before, they may be part of
/// the password).
bool IsSoftBoundary(char c) {
  return c == ',' || c == ';' || c == '/' || c == '=';
}

bool IsAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool IsSchemeChar(char c) {
  return IsAlpha(c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
}

/// Where the scheme of the "://" at `separator` begins, or npos when no scheme precedes it.
size_t SchemeStart(std::string_view s, size_t separator) {
  size_t i = separator;
  while (i > 0 && IsSchemeChar(s[i - 1])) --i;
  while (i < separator && !IsAlpha(s[i])) ++i;  // a scheme begins with a letter
  return i < separator ? i : std::string_view::npos;
}

/// Where the URL whose "://" ends at `start` stops at the latest: where the next URL's scheme
/// begins, or the end of `s`.
size_t NextUrlStart(std::string_view s, size_t start) {
  size_t next = s.find("://", start);
  if (next == std::string_view::npos) return s.size();
  size_t scheme = SchemeStart(s, next);
  return scheme == std::string_view::npos ? next : std::max(scheme, start);
}

using Ranges = std::vector<std::pair<size_t, size_t>>;  // [begin, end)

void AddMask(Ranges& ranges, std::string_view s, size_t begin, size_t end) {
  if (begin >= end) return;
  std::string_view value = s.substr(begin, end - begin);
  if (value == kRedactedMark || value == "PASSWORD") return;
  ranges.emplace_back(begin, end);
}

/// `scheme://user:password@host…`: first ':' after "://" to the last '@' of the fragment.
void SchemeUrls(std::string_view s, Ranges& ranges) {
  for (size_t p = s.find("://"); p != std::string_view::npos; p = s.find("://", p + 3)) {
    if (SchemeStart(s, p) == std::string_view::npos) continue;
    size_t start = p + 3;
    size_t limit = NextUrlStart(s, start);
    size_t end = start;
    while (end < limit && !IsHardBoundary(s[end])) ++end;
    std::string_view fragment = s.substr(start, end - start);
    size_t at = fragment.rfind('@');
    if (at == std::string_view::npos) continue;
    size_t colon = fragment.find(':');
    if (colon < at) AddMask(ranges, s, start + colon + 1, start + at);
  }
}

/// `user:password@` without a scheme: the word that ends at each '@', from its first ':'.
void UserPasswordWords(std::string_view s, Ranges& ranges) {
  for (size_t at = s.find('@'); at != std::string_view::npos; at = s.find('@', at + 1)) {
    size_t colon = std::string_view::npos;
    size_t floor = at > kMaxWordBack ? at - kMaxWordBack : 0;
    for (size_t i = at; i > floor; --i) {
      char c = s[i - 1];
      if (IsHardBoundary(c)) break;
      if (c == '/' && i >= 2 && s[i - 2] == '/') break;  // "scheme://": SchemeUrls' business
      if (IsSoftBoundary(c) && colon != std::string_view::npos) break;
      if (c == ':') colon = i - 1;
    }
    if (colon == std::string_view::npos) continue;
    if (s[colon + 1] == '=') continue;  // SQL's `@a:=@a+1`, not a password
    AddMask(ranges, s, colon + 1, at);
  }
}

bool IsWordChar(char c) {
  return IsSchemeChar(c) || c == '_';
}

/// `password=…`, `passwd=…`, `pwd=…` (URL query parameters), any case.
void PasswordParameters(std::string_view s, Ranges& ranges) {
  if (s.find('=') == std::string_view::npos) return;
  std::string lower(s);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  static constexpr std::array<std::string_view, 3> kKeys = {"password=", "passwd=", "pwd="};
  for (std::string_view key : kKeys) {
    for (size_t p = lower.find(key); p != std::string::npos; p = lower.find(key, p + 1)) {
      if (p > 0 && IsWordChar(lower[p - 1])) continue;
      size_t begin = p + key.size();
      size_t end = begin;
      while (end < s.size() && s[end] != '&' && !IsHardBoundary(s[end])) ++end;
      AddMask(ranges, s, begin, end);
    }
  }
}

std::string ReplaceAll(std::string_view text, std::string_view secret) {
  std::string out;
  out.reserve(text.size());
  size_t from = 0;
  for (size_t p = text.find(secret); p != std::string_view::npos; p = text.find(secret, from)) {
    out.append(text.substr(from, p - from)).append(kRedactedMark);
    from = p + secret.size();
  }
  out.append(text.substr(from));
  return out;
}

void RegisterWithDecoded(std::string_view value) {
  RegisterSecret(value);
  if (value.find('%') == std::string_view::npos) return;
  auto decoded = PercentDecode(value);
  if (decoded.ok()) RegisterSecret(*decoded);
}

}  // namespace

std::string Redact(std::string_view text) {
  std::string known(text);
  std::shared_ptr<const Secrets> secrets = CurrentSecrets();
  for (const std::string& secret : *secrets) {
    if (known.find(secret) != std::string::npos) known = ReplaceAll(known, secret);
  }
  std::string_view s = known;
  Ranges ranges;
  if (s.find('@') != std::string_view::npos) {
    SchemeUrls(s, ranges);
    UserPasswordWords(s, ranges);
  }
  PasswordParameters(s, ranges);
  if (ranges.empty()) return known;
  std::sort(ranges.begin(), ranges.end());
  std::string out;
  out.reserve(s.size());
  size_t from = 0;
  for (size_t i = 0; i < ranges.size();) {
    size_t begin = ranges[i].first;
    size_t end = ranges[i].second;
    for (++i; i < ranges.size() && ranges[i].first <= end; ++i) end = std::max(end, ranges[i].second);
    out.append(s.substr(from, begin - from)).append(kRedactedMark);
    from = end;
  }
  out.append(s.substr(from));
  return out;
}

void RegisterSecret(std::string_view secret) {
  if (secret.size() < kMinSecretLength) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (std::find(g_secrets->begin(), g_secrets->end(), secret) != g_secrets->end()) return;
  auto next = std::make_shared<Secrets>(*g_secrets);
  next->emplace_back(secret);
  std::stable_sort(next->begin(), next->end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  g_secrets = std::move(next);
}

void RegisterSecretsIn(std::string_view text) {
  bool any_url = false;
  for (size_t p = text.find("://"); p != std::string_view::npos; p = text.find("://", p + 3)) {
    if (SchemeStart(text, p) == std::string_view::npos) continue;
    any_url = true;
    size_t start = p + 3;
    std::string_view fragment = text.substr(start, NextUrlStart(text, start) - start);
    size_t at = fragment.rfind('@');
    if (at == std::string_view::npos) continue;
    size_t colon = fragment.find(':');
    if (colon < at) RegisterWithDecoded(fragment.substr(colon + 1, at - colon - 1));
  }
  if (any_url) return;
  size_t at = text.rfind('@');
  if (at == std::string_view::npos) return;
  size_t colon = text.find(':');
  if (colon < at) RegisterWithDecoded(text.substr(colon + 1, at - colon - 1));
}

void ClearSecretsForTest() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_secrets = std::make_shared<const Secrets>();
}

}  // namespace chsync
