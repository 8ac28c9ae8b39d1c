#pragma once

// Routing rows to the shards of a cluster in chsync, the way the Distributed table would
// (docs/clusters.md, "Writes"): chsync's Distributed tables shard by
// cityHash64(toString(tuple(<sorting key>))) % total weight, so a row sent straight to the shard
// this computes lands where an insert through the Distributed table would have put it, and every
// version of a key stays on one shard (FINAL is per shard).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clickhouse/row_binary.h"
#include "clickhouse/type_mapping.h"
#include "common/result.h"

namespace chsync::clickhouse {

/// CityHash64 v1.0.2 of `bytes`: what ClickHouse's cityHash64 returns for one String argument.
uint64_t CityHash64(std::string_view bytes);

/// One element of a sorting key as system.tables prints it.
struct KeyPart {
  enum class Kind { kColumn, kIsNull, kAssumeNotNull };
  Kind kind = Kind::kColumn;
  std::string column;
};

/// The parts of `sorting_key` ("id, isNull(c), assumeNotNull(c)", names possibly backquoted);
/// kUnsupported for any other expression.
Result<std::vector<KeyPart>> ParseSortingKey(std::string_view sorting_key);

/// How a ClickHouse version prints the values whose text changed over the years.
struct KeyStyle {
  /// Day 0 and second 0 print as 1970-01-01 (00:00:00); 18.16 prints zeros ('0000-00-00').
  bool zero_date_is_epoch = false;
  /// Decimals print without trailing fraction zeros (-9071.2, 5); 18.16 keeps the scale (-9071.20).
  bool trim_decimal_zeros = false;

  bool operator==(const KeyStyle&) const = default;
};

/// The ClickHouse versions that print keys in `style`: "18.16" (zeros, decimals at their scale),
/// "21.9+" (epoch, trimmed), or the two settings for a mix no release was seen with.
std::string KeyStyleName(const KeyStyle& style);

/// The shard of a row by its key. Built for one writer layout; not thread-safe (scratch space).
class ShardRouter {
 public:
  /// `columns[i]` and `types[i]`: the i-th value of the rows Route() gets. `weights`: shard_weight
  /// of each shard in shard_num order. kUnsupported when a key part's type has no exact text here
  /// (Float32/64 and Decimal128 print in ways this does not reproduce; DateTime outside UTC prints
  /// in the server's time zone), when a key column is not among `columns`, or when every weight is 0.
  static Result<ShardRouter> Create(std::string_view sorting_key, std::span<const std::string> columns,
                                    std::span<const MappedType> types, std::vector<uint32_t> weights,
                                    KeyStyle style = {});

  size_t shards() const { return slot_shards_.empty() ? 0 : weights_.size(); }
  /// The 0-based shard (index into `weights`) of a row; errors as EncodeCell's for a bad value.
  Result<size_t> Route(std::span<const Cell> row);
  /// The text the sharding expression hashes for `row`: toString(tuple(key)), e.g. "(5,0,'x')".
  Result<std::string> KeyText(std::span<const Cell> row);

 private:
  struct Part {
    KeyPart::Kind kind;
    size_t index;  ///< into the row
  };
  ShardRouter(std::vector<Part> parts, std::vector<MappedType> types, std::vector<uint32_t> weights,
              KeyStyle style);
  Status AppendText(const Part& part, const Cell& cell, std::string& out);

  std::vector<Part> parts_;
  std::vector<MappedType> types_;  ///< of the whole row
  std::vector<uint32_t> weights_;
  KeyStyle style_;
  std::vector<uint32_t> slot_shards_;  ///< cumulative weights: slot (hash % total) → first shard above it
  std::string encoded_;
  std::string text_;
};

/// A query for the server and the value it returns for each KeyStyle when the server prints and
/// hashes key values exactly as ShardRouter does in that style: `SELECT
/// cityHash64(toString(tuple(…)))` over one value of each type ShardRouter handles (negative and
/// unsigned extremes, escapes, scaled decimals, dates and times, zero dates, an enum, a UUID, a
/// NULL). Route only in a style that agrees.
struct RoutingProbe {
  std::string sql;
  std::vector<std::pair<KeyStyle, uint64_t>> expected;

  /// The style whose value the server returned (`answer`: the query's output); none: do not route.
  std::optional<KeyStyle> Match(std::string_view answer) const;
};
RoutingProbe MakeRoutingProbe();

}  // namespace chsync::clickhouse
