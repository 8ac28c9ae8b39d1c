// libFuzzer target for what chsync parses of a ClickHouse cluster's answers: system.clusters rows
// (ParseTopology), a distributed DDL task's finished hosts (ParseFinished), a Code 159 message
// (DdlTaskPath), URL lists and path macros; and of the shard routing: a sorting key as
// system.tables prints it (ParseSortingKey), the routing probe's answer, and CityHash64 over input
// of every length. Errors are fine; crashes and sanitizer reports are not, nor a topology whose
// counts disagree with its nodes, nor a route outside the shards.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "clickhouse/cluster.h"
#include "clickhouse/shard_router.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  if (auto topology = chsync::clickhouse::ParseTopology("c", in); topology.ok()) {
    if (topology->nodes.empty() || topology->shards() == 0 || topology->shards() > topology->nodes.size() ||
        topology->max_replicas() == 0) {
      std::abort();
    }
    (void)topology->Describe();
  }
  for (const auto& host : chsync::clickhouse::ParseFinished(in)) {
    if (host.host.size() > in.size()) std::abort();
  }
  std::string path = chsync::clickhouse::DdlTaskPath(in);
  if (!path.empty() && path.front() != '/') std::abort();
  (void)chsync::clickhouse::SplitUrls(in);
  (void)chsync::clickhouse::ServerMacros(in);
  (void)chsync::clickhouse::ReplicationPath(in, "d", "t", "x");

  (void)chsync::clickhouse::CityHash64(in);
  static const chsync::clickhouse::RoutingProbe probe = chsync::clickhouse::MakeRoutingProbe();
  (void)probe.Match(in);
  if (auto key = chsync::clickhouse::ParseSortingKey(in); key.ok()) {
    // Every key column a Nullable String; the row's values are slices of the input.
    std::vector<std::string> names;
    std::vector<chsync::clickhouse::MappedType> types;
    std::vector<chsync::clickhouse::Cell> row;
    for (const auto& part : *key) {
      if (part.column.empty()) std::abort();
      names.push_back(part.column);
      chsync::clickhouse::MappedType t;
      t.type = "Nullable(String)";
      t.nullable = true;
      types.push_back(t);
      if (row.size() % 3 == 2) {
        row.emplace_back(chsync::clickhouse::NullCell{});
      } else {
        row.emplace_back(in.substr(row.size() % in.size()));
      }
    }
    auto router = chsync::clickhouse::ShardRouter::Create(in, names, types, {1, 2, 0});
    if (router.ok()) {
      auto shard = router->Route(row);
      if (shard.ok() && (*shard >= 3 || *shard == 2)) std::abort();  // weight 0 gets nothing
    }
  }
  return 0;
}
