#include "clickhouse/capabilities.h"

namespace chsync::clickhouse {
namespace {

struct Feature {
  std::string_view name;
  bool Capabilities::*field;
  ServerVersion since;
};

// The first release with each feature. Sources are ClickHouse changelogs and pull requests;
// entries marked "verified" were also checked against the 18.16 server of the test suite.
constexpr Feature kFeatures[] = {
    // 18.16: ClickHouse's UUID type predates 18.16 (verified: CREATE TABLE … (u UUID) works).
    {"uuid", &Capabilities::uuid, {18, 16, 0, 0}},
    // 18.16: ADD COLUMN … AFTER is accepted (verified); FIRST is not.
    {"add_column_after", &Capabilities::add_column_after, {18, 16, 0, 0}},
    // 18.16: MODIFY COLUMN s Nullable(String) on ReplacingMergeTree works (verified).
    {"modify_to_nullable", &Capabilities::modify_to_nullable, {18, 16, 0, 0}},
    // 19.1: per-column compression codecs, CODEC(…) (changelog 19.1, PR #3899; 18.16 rejects the
    // clause with a syntax error, verified).
    {"codec", &Capabilities::codec, {19, 1, 0, 0}},
    // 19.3: IPv4/IPv6 domain types (changelog 19.3, "Added IPv4 and IPv6 domain types"; 18.16
    // rejects them, verified).
    {"ip_types", &Capabilities::ip_types, {19, 3, 0, 0}},
    // 19.4: ADD COLUMN IF NOT EXISTS (PR #3900, December 2018, first in 19.1; 19.3 still failed
    // when the column existed, issue #4565, so 19.4 is the floor; 18.16 rejects it, verified).
    {"add_column_if_not_exists", &Capabilities::add_column_if_not_exists, {19, 4, 0, 0}},
    // 19.3: LowCardinality production ready, allow_experimental_low_cardinality_type removed
    // (PR #4323, February 2019; 18.16 requires the setting, verified).
    {"low_cardinality", &Capabilities::low_cardinality, {19, 3, 0, 0}},
    // 19.6: TTL of tables and columns (changelog 19.6, PR #4212; 18.16 rejects the clause with a
    // syntax error, verified).
    {"ttl", &Capabilities::ttl, {19, 6, 0, 0}},
    // 20.1: DateTime64 type and now64() (changelog 20.1, PR #7170; 18.16: "Unknown function
    // toDateTime64", verified).
    {"datetime64", &Capabilities::datetime64, {20, 1, 0, 0}},
    // 20.1: ALTER … MODIFY COLUMN runs as a mutation. Before, the ALTER converts every part itself,
    // and 18.16 fails on a part a DELETE emptied (verified; Destination::MergeEmptyParts).
    {"modify_as_mutation", &Capabilities::modify_as_mutation, {20, 1, 0, 0}},
    {"now64", &Capabilities::now64, {20, 1, 0, 0}},
    // 20.4: ALTER TABLE … RENAME COLUMN (PR #9948, merged April 2020; 18.16 rejects it, verified).
    {"rename_column", &Capabilities::rename_column, {20, 4, 0, 0}},
    // 20.6: ADD|MODIFY COLUMN … FIRST (PR #12073, July 2020; 18.16 rejects FIRST, verified).
    {"add_column_first", &Capabilities::add_column_first, {20, 6, 0, 0}},
    // 20.2: X-ClickHouse-Exception-Code header on HTTP errors (PR #8786, January 2020; 18.16 sends
    // none, verified). chsync parses "Code: N" from the body when the header is missing.
    {"http_exception_code_header", &Capabilities::http_exception_code_header, {20, 2, 0, 0}},
    // 20.10: Atomic databases by default, which drop a table's data (and a replicated table's
    // ZooKeeper replica) 480 s after DROP TABLE unless it says SYNC.
    {"drop_sync", &Capabilities::drop_sync, {20, 10, 0, 0}},
    // 21.1: fsync_after_insert and fsync_part_directory. Accepted since 20.6 (PR #11948; 18.16 has
    // neither in system.merge_tree_settings, verified), but they had no effect until PR #18845
    // ("Fix never worked fsync_part_directory/fsync_after_insert", changelog 21.1), so 21.1 is the
    // first release where the guarantee holds.
    {"fsync_after_insert", &Capabilities::fsync_after_insert, {21, 1, 0, 0}},
    // 21.9: Date32 (changelog 21.9, PR #25774).
    {"date32", &Capabilities::date32, {21, 9, 0, 0}},
    // 21.12: Bool type (changelog 21.12, PR #31072).
    {"bool_type", &Capabilities::bool_type, {21, 12, 0, 0}},
    // 22.3: Decimal256 usable without allow_experimental_bigint_types (experimental since 20.8,
    // the setting obsolete from 21.7; 22.3 LTS taken as the safe floor).
    {"decimal256", &Capabilities::decimal256, {22, 3, 0, 0}},
    // 23.2: ReplacingMergeTree(ver, is_deleted) (PR #41005, first released in 23.2).
    {"replacing_is_deleted", &Capabilities::replacing_is_deleted, {23, 2, 0, 0}},
    // 24.8: the new JSON type (experimental, allow_experimental_json_type).
    {"json_type", &Capabilities::json_type, {24, 8, 0, 0}},
    // 25.3: the JSON type production-ready (docs: "marked as production ready in version 25.3");
    // Nullable(JSON) since 25.2 (PR #73556); checked on the embedded chDB 26.7.
    {"json_type_ready", &Capabilities::json_type_ready, {25, 3, 0, 0}},
    // 25.6: Time and Time64 (docs: "introduced in version 25.6", enable_time_time64_type).
    {"time_type", &Capabilities::time_type, {25, 6, 0, 0}},
};

}  // namespace

Capabilities FromVersion(const ServerVersion& version) {
  Capabilities caps;
  caps.version = version;
  for (const Feature& f : kFeatures) caps.*(f.field) = version >= f.since;
  return caps;
}

std::vector<std::pair<std::string_view, bool>> ListCapabilities(const Capabilities& caps) {
  std::vector<std::pair<std::string_view, bool>> out;
  out.reserve(std::size(kFeatures));
  for (const Feature& f : kFeatures) out.emplace_back(f.name, caps.*(f.field));
  return out;
}

ServerVersion FirstVersionWith(std::string_view name) {
  for (const Feature& f : kFeatures) {
    if (f.name == name) return f.since;
  }
  return {};
}

}  // namespace chsync::clickhouse
