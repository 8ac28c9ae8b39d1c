#pragma once

// The column types of a table that several source tables share (docs/mapping.md, "Many sources
// into one table"): what such a table stores a source column as, and how a column one source has
// and another source brings with another type merge into one type that holds the values of both.
// Pure: types in, decisions out.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "clickhouse/type_mapping.h"

namespace chsync::clickhouse {

/// The type a shared table stores a source column of type `mapped` as: integers as Int64 (an
/// unsigned BIGINT as UInt64), FLOAT as Float64, anything else as MapColumn maps it. A source that
/// widens an INT to a BIGINT, or a FLOAT to a DOUBLE, then changes nothing in ClickHouse, and the
/// RowBinary every writer of the table sends stays right while another process widens its source.
MappedType SharedStorageType(const MappedType& mapped);

/// How a column that a shared table has (as system.columns types it: `existing`) and a source's
/// column (`ours`, SharedStorageType already applied) become one column.
struct ColumnMerge {
  enum class Kind {
    kKeep,      ///< the table's column holds our values as it is
    kModify,    ///< the column must become `type` (MODIFY COLUMN) to hold both
    kConflict,  ///< no ClickHouse type holds both: `why` says what each side has
  };
  Kind kind = Kind::kKeep;
  /// kModify: the new type (LowCardinality( ) kept around it when the column has it).
  std::string type;
  /// kKeep and kModify: how this source's writer encodes the column's values.
  MappedType write_as;
  std::string why;
};

/// The merge of `ours` into a column of type `existing`, by the families a value can widen within:
/// integers (a wider Int, never signed into UInt64 or UInt64 into Int64), Float32 into Float64,
/// Decimal(P, S) (the larger scale and the larger integer part, at most 38 digits, 76 with
/// `decimal256`), an Enum whose labels extend the other's, DateTime64 (the larger precision), a
/// NOT NULL column into a Nullable one and the other way round. Equal types keep.
ColumnMerge MergeColumn(std::string_view existing, const MappedType& ours, bool decimal256 = false);

/// What a column type's text (as system.columns shows it) says of the parts a merge widens.
struct StoredTypeParts {
  bool nullable = false;
  std::optional<uint32_t> decimal_precision, decimal_scale;  ///< Decimal(P, S)
  std::optional<uint32_t> datetime64_scale;                  ///< DateTime64(S[, 'zone'])
};
/// The parts of `type`, through LowCardinality( ) and Nullable( ).
StoredTypeParts ParseStoredType(std::string_view type);

}  // namespace chsync::clickhouse
