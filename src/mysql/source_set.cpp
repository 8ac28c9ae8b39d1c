#include "mysql/source_set.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <tuple>

#include "common/url.h"

namespace chsync::mysql {
namespace {

// Long enough for any real GTID list item or URL list; garbage is cut, not echoed whole.
constexpr size_t kShownText = 200;
constexpr size_t kShownItem = 60;

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

std::string Shown(std::string_view text, size_t limit) {
  std::string out(text.substr(0, limit));
  if (text.size() > limit) out += "...";
  return out;
}

/// The value of an unsigned decimal number up to `max`, or an error naming the part.
Result<uint64_t> ParseNumber(std::string_view digits, uint64_t max, std::string_view what) {
  auto fail = [&](std::string_view problem) {
    return Error(ErrorKind::kUsage,
                 std::string(what) + " '" + Shown(digits, kShownItem) + "' " + std::string(problem));
  };
  if (digits.empty()) return fail("is not an unsigned decimal number");
  uint64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return fail("is not an unsigned decimal number");
    auto digit = static_cast<uint64_t>(c - '0');
    if (value > (max - digit) / 10) return fail("is larger than " + std::to_string(max));
    value = value * 10 + digit;
  }
  return value;
}

/// One "D-S-N" item; `item` is trimmed and non-empty.
Result<MariaDbGtidList::Gtid> ParseItem(std::string_view item) {
  std::string_view parts[3];
  size_t n = 0;
  std::string_view rest = item;
  while (true) {
    size_t dash = rest.find('-');
    if (n == 3) return Error(ErrorKind::kUsage, "expected three numbers domain-server_id-sequence");
    parts[n++] = Trim(rest.substr(0, dash));
    if (dash == std::string_view::npos) break;
    rest.remove_prefix(dash + 1);
  }
  if (n != 3) return Error(ErrorKind::kUsage, "expected three numbers domain-server_id-sequence");
  constexpr uint64_t kU32 = std::numeric_limits<uint32_t>::max();
  CHSYNC_ASSIGN_OR_RETURN(uint64_t domain, ParseNumber(parts[0], kU32, "domain"));
  CHSYNC_ASSIGN_OR_RETURN(uint64_t server_id, ParseNumber(parts[1], kU32, "server_id"));
  CHSYNC_ASSIGN_OR_RETURN(uint64_t seq,
                          ParseNumber(parts[2], std::numeric_limits<uint64_t>::max(), "sequence number"));
  return MariaDbGtidList::Gtid{static_cast<uint32_t>(domain), static_cast<uint32_t>(server_id), seq};
}

/// Every item of a comma-separated list, in order. The error names the item and its offset but
/// not the whole text: the caller says what the text was for.
Result<std::vector<MariaDbGtidList::Gtid>> ParseItems(std::string_view text) {
  std::vector<MariaDbGtidList::Gtid> out;
  if (Trim(text).empty()) return out;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string_view raw = text.substr(start, comma == std::string_view::npos ? comma : comma - start);
    std::string_view item = Trim(raw);
    size_t offset = start;
    while (offset < text.size() && IsSpace(text[offset]) && offset - start < raw.size()) ++offset;
    if (item.empty()) {
      return Error(ErrorKind::kUsage, "empty item at offset " + std::to_string(offset) +
                                          " (expected domain-server_id-sequence)");
    }
    auto gtid = ParseItem(item);
    if (!gtid.ok()) {
      return std::move(gtid).error().AddContext("item '" + Shown(item, kShownItem) + "' at offset " +
                                                std::to_string(offset));
    }
    out.push_back(*gtid);
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

std::string GtidText(const MariaDbGtidList::Gtid& g) {
  return std::to_string(g.domain) + "-" + std::to_string(g.server_id) + "-" + std::to_string(g.seq);
}

auto EntryKey(const MysqlGtidSet::Entry& e) {
  return std::tie(e.uuid, e.tag);
}

/// Calls emit(start, end) for each piece of `a` that no interval of `b` covers. Both are
/// ascending and disjoint.
template <typename Emit>
void SubtractIntervals(const std::vector<MysqlGtidSet::Interval>& a,
                       const std::vector<MysqlGtidSet::Interval>& b, Emit emit) {
  size_t j = 0;
  for (const MysqlGtidSet::Interval& iv : a) {
    while (j < b.size() && b[j].end <= iv.start) ++j;
    int64_t cur = iv.start;
    while (j < b.size() && b[j].start < iv.end) {
      if (b[j].start > cur) emit(cur, b[j].start);
      cur = std::max(cur, b[j].end);
      // An interval of b reaching past this one may cut the next interval of a too.
      if (b[j].end > iv.end) break;
      ++j;
    }
    if (cur < iv.end) emit(cur, iv.end);
  }
}

}  // namespace

Result<MariaDbGtidList> MariaDbGtidList::Parse(std::string_view text) {
  auto items = ParseItems(text);
  if (!items.ok()) {
    return std::move(items).error().AddContext("GTID list '" + Shown(text, kShownText) +
                                               "' is not a MariaDB GTID list (domain-server_id-sequence, "
                                               "comma-separated)");
  }
  MariaDbGtidList list;
  for (const Gtid& g : *items) list.Set(g);
  return list;
}

Result<std::vector<MariaDbGtidList::Gtid>> MariaDbGtidList::ParseState(std::string_view text) {
  auto items = ParseItems(text);
  if (!items.ok()) {
    return std::move(items).error().AddContext("GTID binlog state '" + Shown(text, kShownText) +
                                               "' is not a MariaDB GTID list (domain-server_id-sequence, "
                                               "comma-separated)");
  }
  return std::move(items).value();
}

void MariaDbGtidList::Set(const Gtid& gtid) {
  domains_[gtid.domain] = gtid;
}

std::string MariaDbGtidList::ToString() const {
  std::string out;
  for (const auto& [domain, gtid] : domains_) {
    if (!out.empty()) out.push_back(',');
    out += GtidText(gtid);
  }
  return out;
}

std::string MariaDbMissing(const MariaDbGtidList& applied, std::string_view candidate_state) {
  auto items = ParseItems(candidate_state);
  if (!items.ok()) {
    return "the candidate's gtid_binlog_state '" + Shown(candidate_state, kShownText) +
           "' could not be read: " + items.error().message();
  }
  // domain -> server_id -> last sequence number it wrote there.
  std::map<uint32_t, std::map<uint32_t, uint64_t>> state;
  for (const MariaDbGtidList::Gtid& g : *items) state[g.domain][g.server_id] = g.seq;

  std::string out;
  auto report = [&](uint32_t domain, const std::string& what) {
    if (!out.empty()) out += "; ";
    out += "domain " + std::to_string(domain) + ": " + what;
  };
  for (const auto& [domain, want] : applied.domains()) {
    auto d = state.find(domain);
    if (d == state.end()) {
      report(domain, "none of it (chsync applied up to " + GtidText(want) + ")");
      continue;
    }
    auto s = d->second.find(want.server_id);
    if (s == d->second.end()) {
      // Other servers wrote in the domain, but nothing shows that their history went through
      // the GTID chsync applied last, so the candidate may have diverged from it.
      std::string has;
      for (const auto& [server_id, seq] : d->second) {
        if (!has.empty()) has.push_back(',');
        has += GtidText({domain, server_id, seq});
      }
      report(domain, "has " + has + " but not " + GtidText(want) + " (its history differs from the server " +
                         "chsync read)");
      continue;
    }
    if (s->second >= want.seq) continue;
    uint64_t missing = want.seq - s->second;
    report(domain, "has " + GtidText({domain, want.server_id, s->second}) + ", chsync applied up to " +
                       GtidText(want) + " (" + std::to_string(missing) +
                       (missing == 1 ? " transaction missing)" : " transactions missing)"));
  }
  return out;
}

MysqlGtidSet Subtract(const MysqlGtidSet& a, const MysqlGtidSet& b) {
  static const std::vector<MysqlGtidSet::Interval> kNone;
  MysqlGtidSet out;
  auto other = b.entries().begin();
  for (const MysqlGtidSet::Entry& entry : a.entries()) {
    // Both lists are sorted by (uuid, tag), so one forward walk over b finds every match.
    while (other != b.entries().end() && EntryKey(*other) < EntryKey(entry)) ++other;
    bool match = other != b.entries().end() && EntryKey(*other) == EntryKey(entry);
    SubtractIntervals(entry.intervals, match ? other->intervals : kNone,
                      [&](int64_t start, int64_t end) { out.Add(entry.uuid, entry.tag, start, end); });
  }
  return out;
}

bool Contains(const MysqlGtidSet& a, const MysqlGtidSet& b) {
  auto mine = a.entries().begin();
  for (const MysqlGtidSet::Entry& entry : b.entries()) {
    if (entry.intervals.empty()) continue;
    while (mine != a.entries().end() && EntryKey(*mine) < EntryKey(entry)) ++mine;
    if (mine == a.entries().end() || EntryKey(*mine) != EntryKey(entry)) return false;
    // a's intervals are merged (never touching), so a range of b that a holds lies inside one.
    const std::vector<MysqlGtidSet::Interval>& have = mine->intervals;
    size_t i = 0;
    for (const MysqlGtidSet::Interval& iv : entry.intervals) {
      while (i < have.size() && have[i].end <= iv.start) ++i;
      if (i == have.size() || have[i].start > iv.start || have[i].end < iv.end) return false;
    }
  }
  return true;
}

std::string MySqlMissing(const MysqlGtidSet& applied, const MysqlGtidSet& candidate_executed) {
  return Subtract(applied, candidate_executed).ToString();
}

Result<SourceSet> SourceSet::Parse(std::string_view urls) {
  SourceSet set;
  // A comma splits only where the next URL begins, so that a comma in a password stays in it.
  for (const std::string& url : SplitUrlList(urls)) {
    std::string_view trimmed = Trim(url);
    if (!trimmed.empty()) set.urls_.emplace_back(trimmed);
  }
  if (set.urls_.empty()) {
    // Nothing but commas and spaces: nothing secret to quote.
    return Error(ErrorKind::kConfig, "no source URL in '" + Shown(urls, kShownText) + "'");
  }
  return set;
}

std::vector<size_t> SourceSet::FailoverOrder(size_t current) const {
  assert(current < urls_.size());
  std::vector<size_t> order;
  order.reserve(urls_.size());
  for (size_t k = 1; k <= urls_.size(); ++k) order.push_back((current + k) % urls_.size());
  return order;
}

}  // namespace chsync::mysql
