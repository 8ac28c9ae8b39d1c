#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clickhouse/capabilities.h"
#include "clickhouse/ddl.h"
#include "common/result.h"
#include "policy/row_filter.h"
#include "schema/table_schema.h"

namespace chsync::pipe {

/// Per-table mapping and ClickHouse table options (`table_options:` in the configuration file,
/// docs/mapping.md): destination names, excluded and renamed columns, ORDER BY, PARTITION BY, TTL,
/// SETTINGS, per-column CODEC and LowCardinality, adoption of an existing table. Pure: the
/// configuration in, names and CREATE TABLE options out; no I/O.
///
/// Names. Keys that name columns (exclude_columns, rename_columns, columns) use the source's column
/// names and compare case-insensitively, as MySQL does. order_by, partition_by and ttl are
/// ClickHouse expressions, written into the CREATE TABLE as they are: they use the ClickHouse
/// (renamed) column names, which ClickHouse compares case-sensitively.

/// The options of one column, as one entry gives them (absent: left as earlier entries set it).
struct ColumnEntry {
  std::optional<std::string> codec;  ///< the codecs inside CODEC( ): "ZSTD(3)", "Delta, LZ4"
  std::optional<bool> low_cardinality;

  bool operator==(const ColumnEntry&) const = default;
};

/// What a source DELETE does in ClickHouse (`deletes:` in table_options, docs/mapping.md).
enum class DeleteMode {
  kSoft,    ///< a tombstone row (_chsync_deleted = 1) at the delete's version: the row leaves
  kIgnore,  ///< append-only: nothing is written; the row stays as it was last written
};

/// One `table_options:` entry: what it says for the tables its pattern matches.
struct TableOptions {
  /// A --tables style DB.TABLE glob (`*` and `?`); must have a dot.
  std::string pattern;
  /// Where the entry was given ("chsync.yaml:12"), for messages.
  std::string origin;
  /// Destination names; "{database}" (or "{db}") and "{table}" are replaced by the source's.
  std::optional<std::string> dest_database;
  std::optional<std::string> dest_table;
  std::vector<std::string> exclude_columns;
  std::vector<std::pair<std::string, std::string>> rename_columns;  ///< (source name, ClickHouse name)
  std::optional<std::string> order_by;
  std::optional<std::string> partition_by;
  std::optional<std::string> ttl;
  /// (name, value as ClickHouse literal text: 4096, 'hot'); see SettingLiteral.
  std::vector<std::pair<std::string, std::string>> settings;
  std::vector<std::pair<std::string, ColumnEntry>> columns;  ///< (source name, options)
  std::optional<bool> adopt;
  std::optional<DeleteMode> deletes;
  /// `history: true`: every change also goes to <dest_table>_history (docs/mapping.md).
  std::optional<bool> history;
  /// A row filter (`where:`, a MySQL expression over the source's columns; src/policy/row_filter.h).
  std::optional<std::string> where;
  /// Many source tables into one ClickHouse table (docs/mapping.md, "Many sources into one
  /// table"): the name of the column that holds each row's source.
  std::optional<std::string> source_column;
  /// `json: native` (true) or `json: string` (false): the table's JSON columns as ClickHouse JSON
  /// or as String, over the pipe's `json:`.
  std::optional<bool> json_native;

  /// True when the pattern names one table (no `*` or `?`).
  bool Exact() const;

  bool operator==(const TableOptions&) const = default;
};

/// A column name a mapping refers to, with where it was given.
struct NamedColumn {
  std::string name;
  std::string origin;
  /// Given by an entry whose pattern names the table exactly: the column must exist (a pattern
  /// entry applies to whichever matching tables have the column).
  bool exact = false;

  bool operator==(const NamedColumn&) const = default;
};

/// The options in force for one source table: every matching entry applied in order. Scalars
/// (dest names, order_by, partition_by, ttl, adopt, a column's codec or low_cardinality, a
/// setting's value, a rename's target) take the last value given; lists add up (exclude_columns,
/// the set of renamed columns, settings, columns).
struct EffectiveMapping {
  std::string source_database;
  std::string source_table;
  std::string dest_database;  ///< resolved: never empty
  std::string dest_table;     ///< resolved: never empty
  std::vector<NamedColumn> excluded;
  /// (source column, ClickHouse name), in the order first given.
  std::vector<std::pair<NamedColumn, std::string>> renamed;
  /// Source column → the ClickHouse name its existing table keeps (AcceptRenamedAway).
  std::map<std::string, std::string> stored_names;
  /// ORDER BY as given (empty: chsync's sorting key), and its top-level elements.
  std::string order_by;
  std::vector<std::string> order_by_elements;
  std::string partition_by;
  std::string ttl;
  /// Where order_by, partition_by and ttl were given (the entry in force).
  std::string order_by_origin;
  std::string partition_by_origin;
  std::string ttl_origin;
  std::vector<std::pair<std::string, std::string>> settings;
  std::vector<std::pair<NamedColumn, clickhouse::ColumnOptions>> columns;
  bool adopt = false;
  /// `deletes:` (last entry given wins); kIgnore also keeps a TRUNCATE TABLE's rows in ClickHouse.
  DeleteMode deletes = DeleteMode::kSoft;
  /// `history: true`: the table's row changes also go to `<dest_table>_history`.
  bool history = false;
  /// The row filter in force (the last entry's `where:`; empty: every row), and where it was given.
  std::string where;
  std::string where_origin;
  /// `source_column:` (last entry given wins): the ClickHouse table may hold the rows of several
  /// source tables, each row's source in this column (first of its ORDER BY); empty: one source.
  std::string source_column;
  /// What this table's rows hold in source_column: the source database's name, or with the pipe's
  /// source_name "NAME/database" (set by the pipe: TableSet::MappingFor).
  std::string source_value;
  /// `json:` of the last entry that gives it; unset: the pipe's `json:`.
  std::optional<bool> json_native;
  /// The entries that apply, as "PATTERN (ORIGIN)".
  std::vector<std::string> origins;

  /// The ClickHouse table is shared by several source tables (source_column is set).
  bool Shared() const { return !source_column.empty(); }

  /// The source column `column` is excluded: never selected by the snapshot, never written from
  /// the binlog, not created in ClickHouse; also a column of that name added later.
  bool Excluded(std::string_view column) const;
  /// The ClickHouse name of source column `column` (itself unless renamed).
  std::string DestColumn(std::string_view column) const;
  /// Nothing configured for the table beyond the defaults.
  bool IsDefault() const;

  /// `source` without its excluded columns (and without the UNIQUE keys over them): the columns
  /// the snapshot selects, the stream converts and CreateTable creates.
  schema::TableSchema Project(const schema::TableSchema& source) const;
  /// The pipe's capabilities `caps` (its `json:` in caps.json_native) with the table's `json:`
  /// applied: what every type of this table is mapped under (CREATE, ALTER, writers, verify).
  clickhouse::Capabilities Caps(const clickhouse::Capabilities& caps) const;
  /// The options for clickhouse::CreateTable, AddColumn and ModifyColumn: the destination table
  /// name, the renames, ORDER BY, PARTITION BY, TTL, SETTINGS and the column options.
  clickhouse::CreateOptions CreateOptions() const;
  /// The source columns (of `source`, in its order) whose change moves a row within the ClickHouse
  /// table: the sorting key's columns and every column ORDER BY or PARTITION BY names. The stream
  /// applies an UPDATE that changes one of them as a key change (a tombstone for the before-image,
  /// then the new row), or the old row would stay under its old key or partition.
  std::vector<std::string> KeyColumns(const schema::TableSchema& source) const;

  /// Columns this pipe already excludes (`excluded`) or stores under a renamed column's ClickHouse
  /// name (`clickhouse_names`, source → ClickHouse) need not exist at the source any more: a column
  /// renamed there keeps its exclusion or its ClickHouse name, and the entry naming its old name
  /// stays right. Clears their NamedColumn::exact.
  /// The ClickHouse names are remembered: DestColumn answers them for their source columns (the
  /// ClickHouse table's columns, which its ORDER BY, PARTITION BY and TTL name).
  void AcceptRenamedAway(const std::vector<std::string>& excluded,
                         const std::map<std::string, std::string>& clickhouse_names);

  /// One line: "shop.orders → analytics.orders_v2; excluded: email, phone; renamed:
  /// cust_id→customer_id; ORDER BY (customer_id, id); PARTITION BY toYYYYMM(created_at); TTL …;
  /// SETTINGS index_granularity = 4096; columns: status LowCardinality CODEC(ZSTD(3)); adopt".
  std::string Summary() const;
  /// Summary(), then "  from table_options: PATTERN (ORIGIN), …" when entries apply: for
  /// `explain-ddl`, `check` and `status`.
  std::vector<std::string> Describe() const;

  bool operator==(const EffectiveMapping&) const = default;
};

/// Every `table_options:` entry, in the order given.
class MappingSet {
 public:
  /// Appends an entry after checking what can be checked without a table (kConfig naming
  /// options.origin and the key): the pattern has a dot; dest names are not empty and a glob
  /// pattern's dest_table uses {table}; no empty or `_chsync_` rename target and no column renamed
  /// twice within the entry; order_by, partition_by and ttl are one well-formed expression (list)
  /// each; codecs are well formed; setting names are identifiers.
  Status Add(TableOptions options);

  /// The mapping of db.table. Its destination database is the mapping's, else
  /// `default_dest_database`, else `database`; its table the mapping's, else `table`.
  EffectiveMapping For(std::string_view database, std::string_view table,
                       std::string_view default_dest_database = "") const;

  /// No two of `tables` (source db, table) land in the same ClickHouse table; kConfig naming both.
  Status CheckDestinations(const std::vector<std::pair<std::string, std::string>>& tables,
                           std::string_view default_dest_database = "") const;

  bool empty() const { return entries_.empty(); }
  const std::vector<TableOptions>& entries() const { return entries_; }
  /// One line per entry, for `chsync status`: "shop.orders (chsync.yaml:3): dest analytics.orders_v2;
  /// exclude email, phone; …".
  std::vector<std::string> Describe() const;

  bool operator==(const MappingSet&) const = default;

 private:
  std::vector<TableOptions> entries_;
};

/// Checks `mapping` against its source table (kConfig; one message naming the table, listing every
/// problem, each naming its column and where it was configured):
///   - a column named by exclude_columns, rename_columns or columns that the table lacks (for
///     entries that name the table exactly; see NamedColumn::exact);
///   - an excluded column of the sorting key (clickhouse::ChooseSortingKey); in a table without a
///     primary key or NOT NULL unique key every column is, so nothing of it can be excluded;
///   - a renamed or configured column that is excluded; a rename onto another column's name, two
///     columns renamed to one name, a rename to a `_chsync_` name;
///   - an ORDER BY without every sorting-key column as a plain identifier of its top-level list
///     (a Nullable one as isNull(c) and assumeNotNull(c)), or naming an excluded column, a renamed
///     column by its source name, a metadata column, a Nullable column plainly, or a column the
///     table lacks; a PARTITION BY or TTL naming an excluded or renamed-away column;
///   - a `where:` row filter that does not parse against the table (RowFilter::Parse) or names an
///     excluded column.
/// The overload with capabilities also lays the table out (clickhouse::DestinationLayout), so that
/// what CreateTable would refuse for this server (CODEC, TTL, LowCardinality) is found up front.
Status Validate(const EffectiveMapping& mapping, const schema::TableSchema& source);
Status Validate(const EffectiveMapping& mapping, const schema::TableSchema& source,
                const clickhouse::Capabilities& caps, const clickhouse::DdlTarget& target);

/// What the pipe checks before it creates or alters a table of `mapping`: that `json: native` (the
/// pipe's in caps.json_native, or the table's) finds the JSON type on this server for every JSON
/// column kept; then Validate with capabilities, whose kUnsupported (an option this server lacks)
/// becomes kConfig (skipped for a default mapping).
Status CheckForPipe(const EffectiveMapping& mapping, const schema::TableSchema& source,
                    const clickhouse::Capabilities& caps, const clickhouse::DdlTarget& target);

/// The row filter of `mapping` parsed against `source` (the source table as tracked, with any
/// excluded columns: Validate refuses a filter naming one); nullopt when the mapping has none.
/// kConfig as RowFilter::Parse.
Result<std::optional<RowFilter>> FilterFor(const EffectiveMapping& mapping,
                                           const schema::TableSchema& source);

/// A YAML scalar as a ClickHouse setting value: numbers as they are, true/false as 1/0, any other
/// text (or text that was quoted in the file, `quoted`) as a string literal.
std::string SettingLiteral(std::string_view value, bool quoted);

/// One token of a ClickHouse expression, as the mapping reads them.
struct ExpressionToken {
  enum class Kind { kWord, kQuotedIdentifier, kString, kNumber, kSymbol };
  Kind kind = Kind::kSymbol;
  /// kWord and kSymbol: the text; kQuotedIdentifier: the name, unquoted; kString: the literal as
  /// written; kNumber: as written.
  std::string text;
  size_t offset = 0;  ///< byte offset in the expression
  size_t length = 0;  ///< bytes in the expression

  bool operator==(const ExpressionToken&) const = default;
};

/// The identifiers `expression` (ClickHouse text) may use as column references: not function
/// names, not members after '.' (keywords too: a column may be called `year`); quoted ones
/// unquoted. Empty when it does not tokenize.
std::vector<std::string> ColumnReferences(std::string_view expression);

/// Splits a ClickHouse expression into tokens, respecting 'strings', `identifiers` and
/// "identifiers". kConfig (naming `what` and the byte offset) on an unclosed quote, brackets that
/// do not balance, a ';', a comment, or a byte that starts no token.
Result<std::vector<ExpressionToken>> TokenizeExpression(std::string_view text, std::string_view what);

/// The top-level elements of an expression list: split at commas outside brackets, after removing
/// parentheses or tuple( ) that enclose the whole text ("(a, b)", "a, b" and "tuple(a, b)" all give
/// {"a", "b"}); each element's text as written, trimmed. Errors as TokenizeExpression, and for an
/// empty element.
Result<std::vector<std::string>> SplitExpressionList(std::string_view text, std::string_view what);

/// The expression's tokens in one canonical spelling (identifiers in backticks, single spaces), to
/// compare expressions as ClickHouse prints them with expressions as a user wrote them; the text
/// itself when it does not tokenize.
std::string CanonicalExpression(std::string_view text);

}  // namespace chsync::pipe
