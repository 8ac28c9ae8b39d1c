#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "clickhouse/capabilities.h"
#include "clickhouse/ddl.h"
#include "common/result.h"

namespace chsync::pipe {

/// Adopting a ClickHouse table the user created (`adopt: true` in table_options, docs/mapping.md):
/// the table is compared with the one chsync would create (clickhouse::DestinationLayout) and used
/// only when nothing that chsync's writes depend on differs. Pure: the server's answers in, the
/// differences out.

/// One column of an existing table, as system.columns reports it.
struct ExistingColumn {
  std::string name;
  std::string type;          ///< as ClickHouse prints it: Nullable(String), DateTime('UTC')
  std::string default_kind;  ///< "", DEFAULT, MATERIALIZED, ALIAS or EPHEMERAL
  std::string default_expression;
  /// compression_codec: "CODEC(ZSTD(3))", "" for none. Servers before 19.1 do not report it.
  std::string codec;

  bool operator==(const ExistingColumn&) const = default;
};

/// An existing table, as system.tables and system.columns report it.
struct ExistingTable {
  std::string engine;       ///< system.tables.engine: ReplacingMergeTree
  std::string engine_full;  ///< the engine with its clauses: "ReplacingMergeTree(v) ORDER BY (id) SETTINGS …"
  std::string sorting_key;    ///< "id, b" (empty: taken from engine_full's ORDER BY)
  std::string partition_key;  ///< "toYYYYMM(d)" (empty: none, or taken from engine_full)
  std::vector<ExistingColumn> columns;
  bool codecs_known = false;  ///< the server reported compression_codec

  bool operator==(const ExistingTable&) const = default;
};

/// The SELECTs whose TabSeparated answers ParseExistingTable reads (ClickHouse 18.16 and later;
/// compression_codec where caps.codec).
std::string ExistingTableQuery(std::string_view database, std::string_view table);
std::string ExistingColumnsQuery(std::string_view database, std::string_view table,
                                 const clickhouse::Capabilities& caps);

/// The answers of ExistingTableQuery and ExistingColumnsQuery (FORMAT TabSeparated, escapes
/// resolved) as an ExistingTable. kNotFound when system.tables has no row (the table does not
/// exist); kCorrupt when a row has another number of fields than the query selects.
Result<ExistingTable> ParseExistingTable(std::string_view table_answer, std::string_view columns_answer,
                                         const clickhouse::Capabilities& caps);

/// What CompareForAdoption found.
struct AdoptionReport {
  /// What keeps chsync from using the table, one readable line each: "column email: chsync writes
  /// Nullable(String), the table has String", "missing column _chsync_version UInt64", "engine
  /// MergeTree, chsync needs ReplacingMergeTree(_chsync_version)", "sorting key (id) differs from
  /// (customer_id, id)".
  std::vector<std::string> differences;
  /// What differs without harm to the replication, for the log: LowCardinality, CODEC, TTL,
  /// SETTINGS, columns chsync does not write that have a DEFAULT (or ALIAS, MATERIALIZED).
  std::vector<std::string> notes;

  bool ok() const { return differences.empty(); }
};

/// Compares `existing` with `wanted` (DestinationLayout of the table with its mapping's options).
/// A difference is whatever would make inserts fail or rows wrong: a column chsync writes missing,
/// of another type (Nullable and Enum labels included; LowCardinality aside, which RowBinary
/// writes alike) or not insertable (ALIAS, MATERIALIZED); a column chsync does not write without a
/// DEFAULT; another engine or version column; another sorting key or partition key (they decide
/// which rows replace each other). Column order does not matter (inserts name their columns).
/// On a single server, a Replicated or Shared ReplacingMergeTree is accepted (with a note).
AdoptionReport CompareForAdoption(const clickhouse::TableLayout& wanted, const ExistingTable& existing);

/// Ok, or kConfig: "cannot adopt the ClickHouse table analytics.orders_v2 for shop.orders: …"
/// with every difference, and what to do.
Status CheckAdoption(const AdoptionReport& report, std::string_view source_table,
                     std::string_view dest_table);

}  // namespace chsync::pipe
