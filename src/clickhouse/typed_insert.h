#pragma once

// RowBinary carries no types: ClickHouse reads each value as the type its column has when the
// INSERT starts. A table whose column types change under a writer (one shared by several sources,
// widened by another of them: docs/mapping.md, "Many sources into one table") would read rows
// encoded for the old type as other values (a DECIMAL's scale) or other rows. Such a writer's
// INSERT prefix starts with a header naming the types its rows are encoded for; Connection::Insert
// then checks them against the table before and after the INSERT, and when they differ sends the
// rows through a staging table of the encoded types, from which INSERT … SELECT converts them.
// The header travels with the rows, also into XA transactions' files.

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "clickhouse/connection.h"
#include "common/result.h"

namespace chsync::clickhouse {

/// The header for an INSERT into `database`.`table` of rows whose columns `names` are encoded as
/// `types` (same length): a comment ClickHouse skips, put before the INSERT statement.
std::string TypedInsertHeader(std::string_view database, std::string_view table,
                              const std::vector<std::string>& names, const std::vector<std::string>& types);

/// An INSERT prefix that starts with a TypedInsertHeader, taken apart.
struct TypedInsert {
  std::string database;
  std::string table;
  std::vector<std::pair<std::string, std::string>> columns;  ///< name, the type its values are encoded as
  std::string statement;  ///< the INSERT … FORMAT RowBinary after the header
};

/// nullopt when `prefix` has no header (or a damaged one: it is then sent as it is).
std::optional<TypedInsert> ParseTypedInsert(std::string_view prefix);

/// The INSERT of `data` that Connection::Insert runs for a prefix with a header: checked before
/// and after, staged when the table's types are not the encoded ones (see above). From the check
/// before to the check after, it holds the table's TypeGate as one of its inserters.
Status InsertTyped(Connection& connection, const TypedInsert& insert, std::string_view data,
                   const RequestOptions& request);

/// Within one process, typed INSERTs into a table and changes of its column types (a shared table's
/// MODIFY COLUMN, pipe/fan_in.cpp) exclude each other: the change waits for the INSERTs that checked
/// the types to end, and INSERTs that come meanwhile wait for the change. A copy's INSERT (its own
/// thread) and the stream's widening of the same shared table then never meet half-way; between
/// processes, the check after the INSERT is what remains. A waiting change goes before new INSERTs,
/// so that a busy table is still altered.
class TypeGate {
 public:
  /// Held while it lives; the gate of `database`.`table`, the names the INSERT's header has.
  class Held {
   public:
    Held(Held&& other) noexcept : gate_(std::exchange(other.gate_, nullptr)), change_(other.change_) {}
    Held& operator=(Held&&) = delete;
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;
    ~Held();

   private:
    friend class TypeGate;
    Held(TypeGate* gate, bool change) : gate_(gate), change_(change) {}
    TypeGate* gate_;
    bool change_;
  };
  /// Entered as one of the table's inserters (any number at once).
  [[nodiscard]] static Held Insert(std::string_view database, std::string_view table);
  /// Entered as the one change of the table's types, once no inserter is in (said in the log when
  /// it has to wait).
  [[nodiscard]] static Held Change(std::string_view database, std::string_view table);
  /// How many changes wait for the table's gate (for the tests).
  static int ChangesWaiting(std::string_view database, std::string_view table);

 private:
  static TypeGate& Of(std::string_view database, std::string_view table);
  std::mutex mutex_;
  std::condition_variable turn_;
  int inserters_ = 0;
  int changes_waiting_ = 0;
  bool changing_ = false;
};

}  // namespace chsync::clickhouse
