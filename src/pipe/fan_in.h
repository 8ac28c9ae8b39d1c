#pragma once

// Many source tables into one ClickHouse table (docs/mapping.md, "Many sources into one table"):
// a table_options entry with `source_column:` sends every table it matches into one shared table
// whose first column (and first sorting-key column) says which source each row came from. The
// shared table's columns are the union of its sources' columns, each wide enough for every
// source's values. This file owns that guarantee: every step is idempotent and safe against
// another pipe altering the same table at the same moment (ClickHouse is the only record of the
// union: nothing of it is kept in a checkpoint), and a source's rows are only ever removed by
// statements that name its source value.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "clickhouse/ddl.h"
#include "clickhouse/table_writer.h"
#include "common/result.h"
#include "pipe/destination.h"
#include "policy/mapping.h"
#include "schema/table_schema.h"

namespace chsync::pipe {

/// Makes the shared table `name` hold the rows of `layout` (the source table's columns under their
/// ClickHouse names, WriterSchema): creates it when missing (CREATE TABLE IF NOT EXISTS, laid out
/// with the source column first), adds the columns it lacks (at the end, with this source's
/// DEFAULT: the first source that brings a column gives its default), and widens a column whose
/// type cannot hold this source's values (clickhouse::MergeColumn). A column it has that this
/// source lacks stays. Another pipe's ADD or MODIFY of the same column at the same moment is read
/// back and merged, never an error. Returns what this source's writer sends: its source value and
/// the types to encode into. kUnsupported naming the column and both types when no type holds both
/// (the source table parks); kConfig when a table of that name exists without the source column.
Result<clickhouse::WriterOptions> EnsureShared(Destination& destination, const clickhouse::DdlTarget& target,
                                               std::string_view name, const schema::TableSchema& layout,
                                               const EffectiveMapping& mapping);

/// Writes a deletion (a row with _chsync_is_deleted = 1 at `version`) over every live row of
/// `mapping`'s source in the shared table `name` whose version is below `version`: a TRUNCATE of
/// one source table, or a source table created anew. Safe to run again (the same rows at the same
/// version), and rows written after the statement (higher versions) stay.
Status DeleteSourceRows(Destination& destination, const clickhouse::DdlTarget& target, std::string_view name,
                        const EffectiveMapping& mapping, uint64_t version);

/// Removes every row of `mapping`'s source from the shared table `name` (ALTER TABLE … DELETE WHERE
/// source = value) and waits until ClickHouse has done it: before the source table is copied again
/// (its copy's rows have version 0). Rows inserted after it was asked stay.
Status ClearSourceRows(Destination& destination, const clickhouse::DdlTarget& target, std::string_view name,
                       const EffectiveMapping& mapping);

}  // namespace chsync::pipe
