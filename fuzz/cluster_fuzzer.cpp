// libFuzzer target for what chsync parses of a ClickHouse cluster's answers: system.clusters rows
// (ParseTopology), a distributed DDL task's finished hosts (ParseFinished), a Code 159 message
// (DdlTaskPath), URL lists and path macros. Errors are fine; crashes and sanitizer reports are
// not, nor a topology whose counts disagree with its nodes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "clickhouse/cluster.h"

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
  return 0;
}
