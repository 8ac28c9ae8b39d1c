#include "clickhouse/cluster.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "clickhouse/server_error.h"
#include "clickhouse/sql_quoting.h"
#include "common/log.h"
#include "common/url.h"

namespace chsync::clickhouse {
namespace {

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty()) lines.push_back(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::vector<std::string_view> SplitTabs(std::string_view line) {
  std::vector<std::string_view> fields;
  for (;;) {
    size_t tab = line.find('\t');
    fields.push_back(line.substr(0, tab));
    if (tab == std::string_view::npos) return fields;
    line.remove_prefix(tab + 1);
  }
}

template <typename T>
bool ParseNumber(std::string_view text, T& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

std::string ReplaceAll(std::string text, std::string_view from, std::string_view to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

/// Undoes TabSeparated escaping (\t, \n, \\, \', \0).
std::string Unescape(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out.push_back(text[i]);
      continue;
    }
    char c = text[++i];
    switch (c) {
      case 'n': out.push_back('\n'); break;
      case 't': out.push_back('\t'); break;
      case '0': out.push_back('\0'); break;
      default: out.push_back(c); break;
    }
  }
  return out;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecoded(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      int hi = HexDigit(text[i + 1]);
      int lo = HexDigit(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

}  // namespace

size_t ClusterTopology::shards() const {
  std::set<uint32_t> seen;
  for (const ClusterNode& n : nodes) seen.insert(n.shard);
  return seen.size();
}

std::vector<uint32_t> ClusterTopology::ShardWeights() const {
  std::map<uint32_t, uint32_t> weight;
  for (const ClusterNode& n : nodes) weight[n.shard] = n.weight;
  std::vector<uint32_t> out;
  out.reserve(weight.size());
  for (const auto& [shard, w] : weight) out.push_back(w);
  return out;
}

size_t ClusterTopology::max_replicas() const {
  std::map<uint32_t, size_t> per_shard;
  for (const ClusterNode& n : nodes) ++per_shard[n.shard];
  size_t most = 0;
  for (const auto& [shard, count] : per_shard) most = std::max(most, count);
  return most;
}

std::string ClusterTopology::Describe() const {
  size_t s = shards();
  size_t r = max_replicas();
  std::string out = std::to_string(s) + (s == 1 ? " shard × " : " shards × ") + std::to_string(r) +
                    (r == 1 ? " replica (" : " replicas (");
  uint32_t shard = 0;
  for (const ClusterNode& n : nodes) {
    if (n.shard != shard) {
      if (shard != 0) out += "; ";
      out += "shard " + std::to_string(n.shard) + ": ";
      shard = n.shard;
    } else {
      out += ", ";
    }
    out += n.Address();
  }
  return out + ")";
}

std::string TopologyQuery(std::string_view name) {
  return "SELECT shard_num, replica_num, host_name, port, shard_weight FROM system.clusters WHERE cluster "
         "= " +
         QuoteString(name) + " ORDER BY shard_num, replica_num";
}

Result<ClusterTopology> ParseTopology(std::string_view name, std::string_view tsv) {
  ClusterTopology topology;
  topology.name = std::string(name);
  for (std::string_view line : SplitLines(tsv)) {
    std::vector<std::string_view> f = SplitTabs(line);
    ClusterNode node;
    if (f.size() < 4 || f.size() > 5 || !ParseNumber(f[0], node.shard) || !ParseNumber(f[1], node.replica) ||
        !ParseNumber(f[3], node.port) || f[2].empty() || (f.size() == 5 && !ParseNumber(f[4], node.weight))) {
      return Error(ErrorKind::kServer, "unexpected row in system.clusters for cluster " + std::string(name) +
                                           ": " + std::string(line.substr(0, 200)));
    }
    node.host = Unescape(f[2]);
    topology.nodes.push_back(std::move(node));
  }
  if (topology.nodes.empty()) {
    return Error(ErrorKind::kConfig, "ClickHouse cluster '" + std::string(name) + "' is not defined");
  }
  std::sort(topology.nodes.begin(), topology.nodes.end(), [](const ClusterNode& a, const ClusterNode& b) {
    return a.shard != b.shard ? a.shard < b.shard : a.replica < b.replica;
  });
  return topology;
}

std::string LocalDatabase(std::string_view database) {
  return std::string(database) + "_local";
}

std::vector<std::string> ServerMacros(std::string_view pattern) {
  std::vector<std::string> out;
  for (size_t at = pattern.find('{'); at != std::string_view::npos; at = pattern.find('{', at + 1)) {
    size_t end = pattern.find('}', at);
    if (end == std::string_view::npos) break;
    std::string name(pattern.substr(at + 1, end - at - 1));
    if (name == "db" || name == "database" || name == "table") continue;
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
  }
  return out;
}

std::string ReplicationPath(std::string_view pattern, std::string_view database, std::string_view table,
                            std::string_view token) {
  std::string path = ReplaceAll(std::string(pattern), "{db}", database);
  path = ReplaceAll(std::move(path), "{database}", database);
  path = ReplaceAll(std::move(path), "{table}", table);
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (!token.empty()) path.append("/").append(token);
  return path;
}

std::string ShardingExpression(std::string_view sorting_key) {
  return "cityHash64(toString(tuple(" + std::string(sorting_key) + ")))";
}

std::string CreateDistributed(std::string_view database, std::string_view table,
                              std::string_view local_database, std::string_view cluster,
                              std::string_view sorting_key) {
  return "CREATE TABLE IF NOT EXISTS " + QualifiedName(database, table) + " ON CLUSTER " +
         QuoteIdentifier(cluster) + " AS " + QualifiedName(local_database, table) + " ENGINE = Distributed(" +
         QuoteIdentifier(cluster) + ", " + QuoteIdentifier(local_database) + ", " + QuoteIdentifier(table) +
         ", " + ShardingExpression(sorting_key) + ")";
}

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

/// The top-level arguments of `text`, the inside of an engine's parentheses, trimmed.
std::vector<std::string_view> SplitArguments(std::string_view text) {
  std::vector<std::string_view> out;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quote != 0) {
      if (ch == '\\') {
        ++i;
      } else if (ch == quote) {
        quote = 0;
      }
    } else if (ch == '\'' || ch == '`' || ch == '"') {
      quote = ch;
    } else if (ch == '(' || ch == '[') {
      ++depth;
    } else if (ch == ')' || ch == ']') {
      --depth;
    } else if (ch == ',' && depth == 0) {
      out.push_back(Trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  out.push_back(Trim(text.substr(start)));
  return out;
}

/// `name` without the quotes ClickHouse may print around it ('x', `x`, "x"); escapes undone.
std::string Unquoted(std::string_view name) {
  if (name.size() < 2 || (name.front() != '\'' && name.front() != '`' && name.front() != '"') ||
      name.back() != name.front()) {
    return std::string(name);
  }
  std::string out;
  for (size_t i = 1; i + 1 < name.size(); ++i) {
    if (name[i] == '\\' && i + 2 < name.size()) ++i;
    out += name[i];
  }
  return out;
}

}  // namespace

std::optional<DistributedDifference> DistributedDiffers(std::string_view engine_full,
                                                        std::string_view cluster,
                                                        std::string_view local_database,
                                                        std::string_view table,
                                                        std::string_view sorting_key) {
  using Kind = DistributedDifference::Kind;
  engine_full = Trim(engine_full);
  constexpr std::string_view kEngine = "Distributed(";
  if (!engine_full.starts_with(kEngine) || !engine_full.ends_with(")")) {
    return DistributedDifference{Kind::kOther,
                                 "it is not a Distributed table (" + std::string(engine_full) + ")", ""};
  }
  std::vector<std::string_view> args =
      SplitArguments(engine_full.substr(kEngine.size(), engine_full.size() - kEngine.size() - 1));
  if (args.size() != 4) {
    return DistributedDifference{Kind::kOther,
                                 "its engine has " + std::to_string(args.size()) + " arguments, not 4 (" +
                                     std::string(engine_full) + ")",
                                 ""};
  }
  if (Unquoted(args[0]) != cluster) {
    return DistributedDifference{
        Kind::kOther, "it is over cluster " + std::string(args[0]) + ", not " + std::string(cluster), ""};
  }
  if (Unquoted(args[1]) != local_database || Unquoted(args[2]) != table) {
    return DistributedDifference{Kind::kOther,
                                 "it reads " + std::string(args[1]) + "." + std::string(args[2]) + ", not " +
                                     std::string(local_database) + "." + std::string(table),
                                 ""};
  }
  const std::string ours = ShardingExpression(sorting_key);
  const std::string printed = "cityHash64(toString((" + std::string(sorting_key) + ")))";
  if (args[3] != ours && args[3] != printed) {
    return DistributedDifference{Kind::kShardingKey,
                                 "it shards by " + std::string(args[3]) + ", not by " + ours,
                                 std::string(args[3])};
  }
  return std::nullopt;
}

std::string DropDistributed(std::string_view database, std::string_view table, std::string_view cluster) {
  return "DROP TABLE IF EXISTS " + QualifiedName(database, table) + " ON CLUSTER " + QuoteIdentifier(cluster);
}

std::string DdlTaskPath(std::string_view message) {
  constexpr std::string_view kTask = "Watching task ";
  size_t at = message.find(kTask);
  if (at == std::string_view::npos) return "";
  std::string_view rest = message.substr(at + kTask.size());
  size_t end = rest.find(' ');
  std::string_view path = rest.substr(0, end);
  if (path.empty() || path.front() != '/') return "";
  return std::string(path);
}

std::vector<HostOutcome> ParseFinished(std::string_view tsv) {
  std::vector<HostOutcome> out;
  for (std::string_view line : SplitLines(tsv)) {
    size_t tab = line.find('\t');
    if (tab == std::string_view::npos) continue;
    HostOutcome outcome;
    outcome.host = PercentDecoded(line.substr(0, tab));
    std::string value = Unescape(line.substr(tab + 1));
    size_t nl = value.find('\n');
    if (!ParseNumber(std::string_view(value).substr(0, nl), outcome.code)) outcome.code = -1;
    if (nl != std::string::npos) outcome.message = value.substr(nl + 1);
    while (!outcome.message.empty() && outcome.message.back() == '\n') outcome.message.pop_back();
    out.push_back(std::move(outcome));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> ParsePairs(std::string_view tsv) {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::string_view line : SplitLines(tsv)) {
    size_t tab = line.find('\t');
    if (tab == std::string_view::npos) continue;
    out.emplace_back(Unescape(line.substr(0, tab)), Unescape(line.substr(tab + 1)));
  }
  return out;
}

bool AppliedAsynchronously(int code) {
  return code == 341 || code == 48;
}

std::vector<std::string> SplitUrls(std::string_view text) {
  return SplitUrlList(text);  // a comma in a password stays in its URL
}

bool NodeFailure(const Error& error) {
  if (error.kind() == ErrorKind::kNetwork) return !IsCancelled(error);
  if (error.kind() != ErrorKind::kServer) return false;
  switch (error.server_code()) {
    case code::kTableIsReadOnly:
    case 225:  // ZooKeeper session expired
    case 999:  // KEEPER_EXCEPTION
    case code::kSocketTimeout:
    case code::kNetworkError:
    case 279:  // ALL_CONNECTION_TRIES_FAILED
      return true;
    default: return false;
  }
}

FailoverConnection::FailoverConnection(std::vector<std::unique_ptr<Connection>> nodes)
    : nodes_(std::move(nodes)) {}

std::string FailoverConnection::Describe() const {
  return nodes_[current()]->Describe();
}

Result<std::string> FailoverConnection::Run(std::string_view sql, std::string_view data,
                                            std::string_view format, const RequestOptions& request) {
  Connection& node = *nodes_[current()];
  auto move_on = [&](const Error& error) {
    if (nodes_.size() < 2 || !NodeFailure(error)) return;
    size_t next = (current() + 1) % nodes_.size();
    current_.store(next, std::memory_order_relaxed);
    log::Warn("ClickHouse node {} failed ({}); statements go to {} now", node.Describe(), error.message(),
              nodes_[next]->Describe());
  };
  if (data.empty()) {
    Result<std::string> result = node.Query(sql, format, request);
    if (!result.ok()) move_on(result.error());
    return result;
  }
  Status s = node.Insert(sql, data, request);
  if (!s.ok()) {
    move_on(s.error());
    return std::move(s).error();
  }
  return std::string();
}

}  // namespace chsync::clickhouse
