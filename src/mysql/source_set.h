#pragma once

// Several source servers (a primary and its replicas) and the GTID arithmetic that decides whether
// one of them can take over a pipe: what chsync applied, in the terms of both flavors, and what a
// candidate server lacks of it. Knows no destination (ARCHITECTURE.md, "Growing the house").

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "mysql/mysql_gtid_set.h"

namespace chsync::mysql {

/// A MariaDB GTID position: for each replication domain, the last GTID applied in it
/// ("0-1-42,1-2-9": domain-server_id-sequence). In gtid_strict_mode sequence numbers grow within a
/// domain, whichever server wrote them, so "applied up to 0-1-42" means every GTID of domain 0 up
/// to sequence 42.
class MariaDbGtidList {
 public:
  struct Gtid {
    uint32_t domain = 0;
    uint32_t server_id = 0;
    uint64_t seq = 0;
    bool operator==(const Gtid&) const = default;
  };

  /// Parses "D-S-N[,D-S-N…]", whitespace around each part allowed; "" is the empty list. When a
  /// domain appears twice the later entry wins (the form @@gtid_binlog_state uses lists several
  /// servers per domain: use ParseState for it). Errors are kUsage and name the offending part.
  static Result<MariaDbGtidList> Parse(std::string_view text);
  /// Parses @@gtid_binlog_state: the same text, but every entry is kept, in the order given,
  /// since a domain appears once per server_id that wrote in it. Errors as for Parse.
  static Result<std::vector<Gtid>> ParseState(std::string_view text);

  /// Records a GTID: it replaces its domain's entry.
  void Set(const Gtid& gtid);
  /// "D-S-N,…" with domains ascending; "" when empty.
  std::string ToString() const;

  bool empty() const { return domains_.empty(); }
  const std::map<uint32_t, Gtid>& domains() const { return domains_; }

  bool operator==(const MariaDbGtidList&) const = default;

 private:
  std::map<uint32_t, Gtid> domains_;
};

/// What `candidate` lacks of `applied`, in words a DBA can act on; "" when it has all of it.
///
/// MariaDB: `applied` is chsync's position; `candidate_state` is the candidate's
/// @@gtid_binlog_state (the last GTID of every domain-server pair in its binlogs, several per
/// domain). For each applied domain D with last GTID D-S-N the candidate must have written or
/// replicated D-S-N or a later GTID of D: an entry D-S-M with M >= N, or (after a failover wrote
/// on) any entry of D with a sequence above N whose history includes D-S-N, which the binlog
/// state alone cannot prove — so an entry D-S-M with M >= N is required. Lists each domain that
/// falls short: "domain 0: has 0-1-40, chsync applied up to 0-1-42 (2 transactions missing)",
/// "domain 1: none of it (chsync applied up to 1-2-9)".
std::string MariaDbMissing(const MariaDbGtidList& applied, std::string_view candidate_state);

/// MySQL: the GTIDs in `applied` (chsync's executed set) that are not in `candidate_executed`
/// (the candidate's @@gtid_executed), as a GTID set text ("uuid:5-7"), "" when none are missing.
std::string MySqlMissing(const MysqlGtidSet& applied, const MysqlGtidSet& candidate_executed);

/// The GTIDs of `a` not in `b`.
MysqlGtidSet Subtract(const MysqlGtidSet& a, const MysqlGtidSet& b);
/// Whether every GTID of `b` is in `a`.
bool Contains(const MysqlGtidSet& a, const MysqlGtidSet& b);

/// The servers a pipe may read from, in the order given (`--source URL1,URL2`): the first is tried
/// first at a fresh start; after that the pipe stays on the one it reads from until it fails.
class SourceSet {
 public:
  /// Splits a comma-separated list of URLs (SplitUrlList, common/url.h: a comma splits where the
  /// next `scheme://` begins, so a comma in a password stays in its URL); empty items are
  /// ignored. kConfig when none is left.
  static Result<SourceSet> Parse(std::string_view urls);

  size_t size() const { return urls_.size(); }
  const std::string& url(size_t i) const { return urls_[i]; }
  const std::vector<std::string>& urls() const { return urls_; }
  /// The order in which to try servers when `current` stopped answering: the others in list order
  /// starting after `current` (wrapping around), then `current` last.
  std::vector<size_t> FailoverOrder(size_t current) const;

 private:
  std::vector<std::string> urls_;
};

}  // namespace chsync::mysql
