#pragma once

#include <string>
#include <string_view>

#include "clickhouse/capabilities.h"
#include "schema/table_schema.h"

namespace chsync::pipe {

/// What a MODIFY/CHANGE of a column's type means for the rows already in ClickHouse.
struct TypeChangeVerdict {
  enum class Kind {
    /// The ClickHouse type is the same and every existing value stays as it is (e.g. VARCHAR(10) →
    /// VARCHAR(100), TEXT → MEDIUMTEXT, a collation change within one charset): nothing to do.
    kUnchanged,
    /// ALTER TABLE … MODIFY COLUMN to the new ClickHouse type converts every existing value exactly
    /// to what the source now holds (INT → BIGINT, DECIMAL(10,2) → DECIMAL(12,2), NOT NULL → NULL,
    /// FLOAT → DOUBLE, ENUM labels appended, a narrowing the source only accepts when every value
    /// fits because it ran in strict mode, …).
    kModify,
    /// Existing values may differ from what the source now holds (the source rounded, truncated,
    /// clamped or re-encoded them, or ClickHouse cannot convert them exactly): the table's rows
    /// must be copied again (the pipe rebuilds the table online or stops, by policy).
    kRebuild,
  };
  Kind kind = Kind::kRebuild;
  /// Why, in words for the log and the schema-change history (e.g. "Int32 → Int64: every INT
  /// value fits in BIGINT"; "DATETIME(6) → DATETIME(0): the source rounded the fractional seconds").
  std::string reason;
};

/// "kUnchanged", "kModify" or "kRebuild".
std::string_view TypeChangeKindName(TypeChangeVerdict::Kind kind);

/// Classifies the change of `old_column` into `new_column` (same column, as the schema tracker
/// reports a kColumnModified). `strict_mode` says whether the statement ran with
/// STRICT_TRANS_TABLES or STRICT_ALL_TABLES in its sql_mode (then the source refuses an ALTER that
/// would truncate or clamp a value, so a narrowing that succeeded changed no value). Column renames
/// and default changes are not considered (the caller handles them); nullability is.
TypeChangeVerdict ClassifyTypeChange(const schema::Column& old_column, const schema::Column& new_column,
                                     bool strict_mode, const clickhouse::Capabilities& caps);

}  // namespace chsync::pipe
