#pragma once

// Foreign-key cascades followed in ClickHouse (docs/delivery.md, "Foreign-key cascades").
//
// ON DELETE CASCADE / SET NULL and ON UPDATE CASCADE / SET NULL change a child table's rows inside
// InnoDB: the binlog carries the parent's row change and nothing of the child's. chsync replays the
// child's part from the parent's row images: every live child row that holds the parent row's old
// values gets a tombstone, or its new values, at the parent row's version, by an INSERT … SELECT
// over the child's FINAL view, once the child's earlier rows are in ClickHouse. A child row written
// after the cascade carries a later version and wins over what the cascade wrote, whatever order
// the two reach ClickHouse in; a replay finds the old rows gone and writes nothing.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "binlog/event.h"
#include "clickhouse/shard_router.h"
#include "clickhouse/type_mapping.h"
#include "common/result.h"
#include "mysql/table_inventory.h"
#include "schema/table_schema.h"
#include "schema/tracker.h"
#include "state/checkpoint.h"

namespace chsync::pipe {

struct TableState;
class TableStates;

/// What the statements know of a child table's ClickHouse side.
struct CascadeChild {
  /// "`db`.`t`": where the child's rows are written now.
  std::string table;
  /// The INSERT's columns (TableWriter::names(): the table's, then version and deletion flag).
  std::vector<std::string> names;
  /// The mapped type of each of the first types.size() columns of `names`.
  std::vector<clickhouse::MappedType> types;
  /// Columns from this index on (before the version) were dropped at the source and kept in
  /// ClickHouse: NULL in rows written since, the cascade's too.
  size_t kept_from = SIZE_MAX;
  /// The foreign key's columns, as indexes into `names` and `types`, in the key's order.
  std::vector<size_t> fk;
  /// The foreign key's columns are in the child's ClickHouse sorting key: a row whose values
  /// change there is a new row, and the old one gets a tombstone.
  bool key_moves = false;
};

/// One parent row change as the child sees it: the rows holding `old_values` (one per foreign key
/// column, as a ClickHouse literal: a number or a quoted string) are deleted, set to NULL there, or
/// set to `new_values`.
struct CascadeChange {
  enum class Kind { kDelete, kSetNull, kUpdate };
  Kind kind = Kind::kDelete;
  std::vector<std::string> old_values;
  std::vector<std::string> new_values;
  uint64_t version = 0;
};

/// The INSERT … SELECT statements that apply `changes` (one rows event's, in order) to `child`, in
/// the order to run them. Deletes and SET NULLs of one event go together (no two of them touch one
/// child row); updates go one parent row at a time, as InnoDB runs them. Where a row moves to a new
/// sorting key, its new row is written before the old one's tombstone: a crash between the two
/// leaves both, and the replay writes the tombstone.
std::vector<std::string> CascadeStatements(const CascadeChild& child, std::span<const CascadeChange> changes);

/// The value text of a one-column key as ShardRouter::KeyText prints it ("(5)", "('x')", "(NULL)")
/// as a literal CAST can read: "5" becomes "'5'", a quoted string stays, NULL is nullopt.
std::optional<std::string> CascadeLiteral(std::string_view key_text);

/// The cascading foreign keys of the replicated tables and which of them chsync follows.
class CascadeFollower {
 public:
  /// Reads the links again before the next rows event (a table's schema or writer changed).
  void Invalidate() { stale_ = true; }

  /// Finds the cascading foreign keys among `tables` when stale (their keys as `tracker` has them
  /// now: a statement that only adds or drops a foreign key changes nothing else): a child's key is followed
  /// when its parent is replicated too, both sides' columns are, the destination is not a cluster
  /// (`clustered`), and ShardRouter prints the parent's values. Logs what changed since the last
  /// time; the lines for `chsync status` are then in described().
  /// True when described() changed.
  bool Refresh(TableStates& tables, const schema::Tracker& tracker, uint64_t erasures, bool clustered);

  /// Whether some replicated table is the parent of a followed key.
  bool HasParents() const { return !parents_.empty(); }
  /// Whether rows events of `parent` ("db.t") may need statements.
  bool IsParent(std::string_view parent) const { return !parents_.empty() && parents_.contains(parent); }

  /// The statements `rows` of `parent` need, for each child; `versions[k]` is the version of
  /// rows.rows[k]. A child that cannot be followed for this event (a partial image without the
  /// values) is in `refused` with the reason: the caller parks it.
  struct Work {
    /// (child "db.t", statement), in the order to run them.
    std::vector<std::pair<std::string, std::string>> statements;
    std::vector<std::pair<std::string, Error>> refused;
  };
  /// `at`: the event's position; a child copied from a later point already holds its cascades.
  Result<Work> StatementsFor(TableStates& tables, const std::string& parent, TableState& table,
                             const binlog::RowsEvent& rows, std::span<const uint64_t> versions,
                             const SourcePosition& at);

  /// The cascading keys the source's information_schema names (read at start): one the tracked
  /// schema does not know (a state written before chsync tracked foreign keys) is listed as not
  /// followed.
  void SetSourceKeys(std::vector<mysql::CascadingForeignKey> keys) {
    source_keys_ = std::move(keys);
    stale_ = true;
  }

  /// The children a delete (`deleting`) or an update of `parent` cascades into, where followed.
  std::vector<std::string> ChildrenOf(std::string_view parent, bool deleting) const;

  /// "shop.film_category (fk_category) -> shop.category: ON UPDATE CASCADE: followed".
  const std::vector<std::string>& described() const { return described_; }

  /// Statements of an open XA transaction wait for its commit (one phase). At XA PREPARE they
  /// cannot wait in memory: the caller parks their children (DeferredChildren) and drops them.
  void Defer(std::vector<std::pair<std::string, std::string>> statements);
  std::vector<std::pair<std::string, std::string>> TakeDeferred();
  std::vector<std::string> DeferredChildren() const;
  void DropDeferred() { deferred_.clear(); }

 private:
  struct Link {
    std::string child;  ///< "db.t"
    schema::ForeignKey key;
    std::vector<size_t> parent_indexes;  ///< of key.parent_columns in the parent's source columns
    std::vector<size_t> child_indexes;   ///< of key.columns in the child's source columns
    /// One printer per referenced column: ShardRouter over the parent's row with that column as key.
    /// None while the parent is held without a writer: only ChildrenOf reads the link then.
    std::vector<clickhouse::ShardRouter> printers;
  };

  bool stale_ = true;
  uint64_t erasures_ = 0;
  std::map<std::string, std::vector<Link>, std::less<>> parents_;
  std::vector<std::string> described_;
  std::vector<std::pair<std::string, std::string>> deferred_;
  std::vector<mysql::CascadingForeignKey> source_keys_;
  std::vector<binlog::Value> ordered_;
  std::vector<clickhouse::Cell> before_;
  std::vector<clickhouse::Cell> after_;
};

}  // namespace chsync::pipe
