#pragma once

// The canonical text of a row, computed inside each database: one SQL expression per column for
// MySQL/MariaDB and one for ClickHouse that produce the same bytes for a value chsync replicated
// (docs/verify.md, "Canonical values"). Pure: a column and the destination's capabilities in,
// SQL text out; no I/O.
//
// A cell is the column's value in the form chsync writes it (dates clamped as chsync clamps them,
// zero dates as 1970-01-01, ENUMs as their index, text as UTF-8), "N" for NULL. Text-like cells
// carry their byte length in front ("3:abc"), so that no value can run into the next one; cells
// are joined by ','. A row's hash is the first 64 bits of the SHA-1 of that text, which both
// engines compute (MariaDB: CONV(SUBSTR(SHA1(…),1,16),16,10); ClickHouse 18.16 and later:
// reinterpretAsUInt64(reverse(substring(SHA1(…),1,8)))).

#include <string>
#include <string_view>
#include <vector>

#include "clickhouse/capabilities.h"
#include "common/result.h"
#include "schema/table_schema.h"

namespace chsync::verify {

/// How exactly a column's canonical text stands for its value.
enum class Exactness {
  kExact,        ///< equal text ⇔ equal value as chsync writes it
  kApproximate,  ///< compared by a text form that can differ for equal values (or agree for unequal)
  kLossy,        ///< the destination keeps less than the source (fractions dropped): compared as kept
  kNotCompared,  ///< no comparable form: only the row's presence is compared
};

std::string_view ExactnessName(Exactness exactness);

/// The source is MariaDB or MySQL (JSON differs: MariaDB stores the text, MySQL binary JSON).
struct SourceFlavor {
  bool mariadb = true;
};

/// One column's canonical cell on each side.
struct ColumnCanon {
  std::string source_name;  ///< the MySQL column
  std::string dest_name;    ///< the ClickHouse column
  std::string source_sql;   ///< MySQL expression of the cell text (never NULL)
  std::string dest_sql;     ///< ClickHouse expression of the same text (never NULL)
  Exactness exactness = Exactness::kExact;
  std::string note;       ///< why it is not exact ("" when it is)
  bool prefixed = false;  ///< the cell is text with its length in front
};

/// The canonical cell of `column` (a source column, replicated as clickhouse::MapColumn maps it for
/// `caps`) stored in ClickHouse column `dest_name`. kUnsupported for a column MapColumn refuses.
///
/// `dest_type` is that column's type at the destination as system.columns gives it, when known
/// (empty: as MapColumn maps `column`). A table several sources share stores a column as its
/// widest source has it (clickhouse::MergeColumn): a Decimal of a larger scale, a DateTime64 of a
/// larger precision, Nullable. Such a column's cells stand for its values, not their printed
/// width: a decimal without trailing fraction zeros on both sides (1.50 and 1.500000 are "1.5"),
/// a datetime printed by the source at the destination's precision, NULL tested at the
/// destination. A type that is not a widening of the mapped one (or that cannot be read) is
/// ignored.
Result<ColumnCanon> CanonicalColumn(const schema::Column& column, std::string_view dest_name,
                                    const clickhouse::Capabilities& caps, const SourceFlavor& flavor,
                                    std::string_view dest_type = {});

/// The cells joined: MySQL CONCAT(c1, ',', c2, …) / ClickHouse concat(…). One cell: itself.
std::string SourceConcat(const std::vector<std::string>& cells);
std::string DestConcat(const std::vector<std::string>& cells);

/// The first 64 bits of SHA1(`text_sql`) as an unsigned 64-bit number, on each side.
std::string SourceHash64(std::string_view text_sql);
std::string DestHash64(std::string_view text_sql);
/// Bits 64..95 of the same SHA-1 as an unsigned number: a second, independent bucket of a key.
std::string SourceHash32Low(std::string_view text_sql);
std::string DestHash32Low(std::string_view text_sql);

/// The value of a cell for people: "N" is NULL; a `prefixed` cell loses its length prefix.
std::string DisplayCell(std::string_view cell, bool prefixed);

}  // namespace chsync::verify
