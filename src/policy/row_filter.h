#pragma once

// Row filters: `where: "<expression>"` in a table's table_options (docs/mapping.md). The snapshot's
// SELECT and verify's source queries carry the expression as SQL; the stream evaluates it over each
// binlog row image with MySQL's semantics, so that both agree on which rows are replicated.
//
// The language is a subset of MySQL's expressions: column references (bare or `backticked`),
// number and string literals ('..' or ".." with MySQL's backslash escapes), NULL, TRUE, FALSE;
// = <> != < <= > >= <=>; AND && OR || XOR NOT !; IN (...), NOT IN; BETWEEN .. AND ..,
// NOT BETWEEN; IS [NOT] NULL / TRUE / FALSE / UNKNOWN; [NOT] LIKE with % _ and an optional
// ESCAPE '<c>'; parentheses; a leading - or + on a number.
//
// Comparisons follow MySQL: three-valued logic; numbers compare numerically (integers and DECIMALs
// exactly, as doubles when a FLOAT/DOUBLE or a string takes part); a string against a number as
// doubles (the string's numeric prefix); a DATE/DATETIME/TIMESTAMP/TIME/YEAR column against a
// string literal as that temporal type (the literal must be a valid value, checked at parse time);
// TIMESTAMP values in UTC (chsync's sessions use time_zone '+00:00'); ENUM/SET columns by their
// text against strings and by their number against numbers. Strings compare by the column's
// collation (see StringCompare in row_filter.cpp for exactly which are modelled): binary and _bin
// collations exactly; case-insensitive ones exactly over ASCII text, and a value outside what is
// modelled is an error at evaluation (the stream parks the table) rather than a silent difference.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "binlog/value.h"
#include "common/result.h"
#include "schema/table_schema.h"

namespace chsync::pipe {

/// SQL's truth values.
enum class Truth : uint8_t { kFalse, kTrue, kUnknown };

/// A parsed, checked row filter for one table.
class RowFilter {
 public:
  /// Parses `text` against `table`'s columns. kConfig naming `origin` ("chsync.yaml:12"), the byte
  /// offset and what was expected; an unknown column (the message lists the table's columns); a
  /// column of a type filters cannot compare (JSON, spatial, VECTOR); a literal that is not a valid
  /// value of the temporal column it is compared with; two string columns of different collations
  /// compared. Never crashes, whatever the text.
  static Result<RowFilter> Parse(std::string_view text, const schema::TableSchema& table,
                                 std::string_view origin);

  /// The expression as written.
  const std::string& text() const { return text_; }
  /// The condition for the source's SQL: the text, parenthesised ("(status = 'paid')").
  std::string Sql() const { return "(" + text_ + ")"; }
  /// The columns the filter names, as the table spells them, each once, in table order.
  const std::vector<std::string>& columns() const { return column_names_; }
  /// Whether the filter names `column` (case-insensitive).
  bool Names(std::string_view column) const;

  /// The filter's truth for one row. `row` holds the values of the table's columns (the schema given
  /// to Parse); `index` maps a column's index in that schema to its value's index in `row` (empty:
  /// the same index). kUnsupported when a needed value is absent from the image (the message says
  /// to set binlog_row_image=FULL) or a comparison falls outside what is modelled (a non-ASCII string
  /// in a case-insensitive collation); kCorrupt when `row` is too short.
  Result<Truth> Evaluate(std::span<const binlog::Value> row, const std::vector<uint32_t>& index = {}) const;
  /// Evaluate()'s result is kTrue: the row is replicated.
  Result<bool> Passes(std::span<const binlog::Value> row, const std::vector<uint32_t>& index = {}) const;

  /// One node of the expression (public for the implementation's helpers).
  struct Node;
  /// A column the filter reads, resolved at parse time.
  struct ColumnRef {
    int index = -1;  ///< in the table's columns
    std::string name;
    schema::ColumnType type = schema::ColumnType::kUnknown;
    std::string collation;  ///< lower case; "binary" for binary strings
    std::vector<std::string> enum_values;
  };

  RowFilter();
  ~RowFilter();
  RowFilter(const RowFilter&);
  RowFilter& operator=(const RowFilter&);
  RowFilter(RowFilter&&) noexcept;
  RowFilter& operator=(RowFilter&&) noexcept;

 private:
  std::string text_;
  std::vector<std::string> column_names_;
  std::vector<ColumnRef> refs_;
  std::vector<Node> nodes_;
  int root_ = -1;
};

/// The collations whose comparisons RowFilter models, as a sentence for messages and docs.
std::string_view ModelledCollations();

}  // namespace chsync::pipe
