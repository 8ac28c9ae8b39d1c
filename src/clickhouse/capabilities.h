#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "clickhouse/server_version.h"

namespace chsync::clickhouse {

/// What a ClickHouse version can do that chsync's output depends on. Everything chsync emits that
/// differs between versions is decided from here, never by comparing version strings elsewhere.
struct Capabilities {
  bool datetime64 = false;            ///< DateTime64(p) type
  bool now64 = false;                 ///< now64(p) function (DEFAULT of _chsync_synced_at)
  bool date32 = false;                ///< Date32 type (1900..2299)
  bool bool_type = false;             ///< Bool type
  bool replacing_is_deleted = false;  ///< ReplacingMergeTree(ver, is_deleted)
  bool low_cardinality = false;       ///< LowCardinality without allow_experimental_low_cardinality_type
  bool ip_types = false;              ///< IPv4 / IPv6 types
  bool uuid = false;                  ///< UUID type
  bool decimal256 = false;            ///< Decimal(P, S) with 38 < P <= 76 without an experimental setting
  bool json_type = false;  ///< the JSON type (needs a setting before 25.3; chsync maps JSON to String)
  /// The JSON type production-ready (25.3), Nullable(JSON) included (25.2), and RowBinary input of
  /// it as text (input_format_binary_read_json_as_string): what `json: native` needs.
  bool json_type_ready = false;
  bool time_type = false;                   ///< Time / Time64 types (need enable_time_time64_type)
  bool add_column_if_not_exists = false;    ///< ALTER … ADD COLUMN IF NOT EXISTS
  bool add_column_after = false;            ///< ALTER … ADD COLUMN … AFTER col
  bool add_column_first = false;            ///< ALTER … ADD COLUMN … FIRST
  bool modify_to_nullable = false;          ///< ALTER … MODIFY COLUMN c Nullable(T) on MergeTree
  bool rename_column = false;               ///< ALTER … RENAME COLUMN
  bool modify_as_mutation = false;          ///< ALTER … MODIFY COLUMN runs as a mutation
  bool drop_sync = false;                   ///< DROP TABLE … SYNC (Atomic databases drop later without it)
  bool http_exception_code_header = false;  ///< X-ClickHouse-Exception-Code response header
  /// MergeTree settings fsync_after_insert and fsync_part_directory, in a release where they work:
  /// an INSERT is acknowledged only after its part's files and directory are fsynced.
  bool fsync_after_insert = false;
  bool codec = false;  ///< per-column CODEC(…) in column definitions
  bool ttl = false;    ///< table TTL (and column TTL) of MergeTree tables
  /// Not the server's but the user's choice (datetime_fallback: string), set by whoever holds the
  /// configuration; FromVersion leaves it false. Without datetime64, DATETIME/TIMESTAMP with
  /// fractional seconds then map to a String holding their exact text instead of DateTime.
  bool datetime_fallback_text = false;
  /// Not the server's but the user's choice (`json: native`, per pipe or per table): MySQL/MariaDB
  /// JSON columns map to ClickHouse JSON instead of String. MapColumn refuses a JSON column under
  /// it on a server without json_type_ready. FromVersion leaves it false.
  bool json_native = false;
  /// The version these capabilities were decided from, for messages; {0, 0} when built by hand.
  ServerVersion version;
};

/// The capabilities of `version`, from one table of (feature, first version).
Capabilities FromVersion(const ServerVersion& version);

/// Every capability as (name, supported), in a fixed order, for `chsync check` and messages.
std::vector<std::pair<std::string_view, bool>> ListCapabilities(const Capabilities& caps);

/// The first version that has the named capability (a name from ListCapabilities), for messages
/// such as "needs ClickHouse 21.9 or later"; {0, 0} for an unknown name.
ServerVersion FirstVersionWith(std::string_view name);

}  // namespace chsync::clickhouse
