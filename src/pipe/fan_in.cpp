// Many source tables into one ClickHouse table (fan_in.h).

#include "pipe/fan_in.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "clickhouse/cluster.h"
#include "clickhouse/merged_type.h"
#include "clickhouse/sql_quoting.h"
#include "clickhouse/typed_insert.h"
#include "common/crash_point.h"
#include "common/log.h"

namespace chsync::pipe {
namespace {

using clickhouse::QualifiedName;
using clickhouse::QuoteIdentifier;
using clickhouse::QuoteString;

struct StoredColumn {
  std::string name;
  std::string type;
  std::string default_kind;
  std::string default_expression;
};

std::string OnCluster(const clickhouse::DdlTarget& target) {
  return target.cluster.empty() ? "" : " ON CLUSTER " + QuoteIdentifier(target.cluster);
}

/// The columns of the shared table as ClickHouse has them now (none: no such table).
Result<std::vector<StoredColumn>> ReadColumns(Destination& destination, const clickhouse::DdlTarget& target,
                                              std::string_view name) {
  CHSYNC_ASSIGN_OR_RETURN(
      std::string text,
      destination.connection().Query(
          "SELECT name, type, default_kind, default_expression FROM system.columns WHERE database = " +
              QuoteString(target.StorageDatabase()) + " AND table = " + QuoteString(name),
          "TabSeparatedRaw"));
  std::vector<StoredColumn> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    std::vector<std::string> fields;
    size_t from = 0;
    while (true) {
      size_t tab = line.find('\t', from);
      fields.emplace_back(
          line.substr(from, tab == std::string_view::npos ? std::string_view::npos : tab - from));
      if (tab == std::string_view::npos) break;
      from = tab + 1;
    }
    if (fields.size() < 4) continue;
    out.push_back({fields[0], fields[1], fields[2], fields[3]});
  }
  return out;
}

const StoredColumn* Find(const std::vector<StoredColumn>& columns, std::string_view name) {
  for (const StoredColumn& c : columns) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

/// Runs `sql` once on the node the connection uses now: no retry, and no move to another node (a
/// cluster's connection moves on a ZooKeeper error, which here is an answer: "No node", a replica
/// that exists).
Result<std::string> OnCurrentNode(Destination& destination, const std::string& sql) {
  clickhouse::Connection& connection = destination.connection();
  auto* failover = dynamic_cast<clickhouse::FailoverConnection*>(&connection);
  clickhouse::Connection& node = failover != nullptr ? failover->node(failover->current()) : connection;
  const clickhouse::RetryPolicy policy = node.retry_policy();
  clickhouse::RetryPolicy once = policy;
  once.max_attempts = 1;
  node.set_retry_policy(once);
  Result<std::string> out = node.Query(sql);
  node.set_retry_policy(policy);
  return out;
}

bool NoZooKeeperNode(const Error& error) {
  return error.server_code() == 999 && error.message().find("No node") != std::string::npos;
}

/// The rows (TabSeparated) of a query of system.zookeeper at a path that may not exist: nullopt
/// when it does not.
Result<std::optional<std::string>> ReadZooKeeper(Destination& destination, const std::string& sql) {
  Result<std::string> rows = OnCurrentNode(destination, sql);
  if (rows.ok()) return std::optional<std::string>(std::move(*rows));
  if (NoZooKeeperNode(rows.error())) return std::optional<std::string>();
  // Not an answer (the node or ZooKeeper unreachable): retried, on another node of the cluster.
  rows = destination.connection().Query(sql);
  if (rows.ok()) return std::optional<std::string>(std::move(*rows));
  if (NoZooKeeperNode(rows.error())) return std::optional<std::string>();
  return std::move(rows).error();
}

/// `name` as one ZooKeeper node name: letters, digits, '_' and '-' as they are, any other byte as
/// %XX (no '/', no "." or "..", no macro braces).
std::string ZooKeeperName(std::string_view name) {
  std::string out;
  for (char ch : name) {
    auto c = static_cast<unsigned char>(ch);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-') {
      out += ch;
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

/// Serialises the ALTERs of one shared table among pipes (ClickHouse has no conditional ALTER: a
/// pipe that widened a column from what it read could narrow another pipe's wider type written in
/// between). The table `<name>__chsync_altering` exists while a pipe alters `name`, and the pipe
/// whose CREATE TABLE made it holds it. Its owner (Destination::owner(): host and state directory)
/// is the DEFAULT of its one column: a pipe killed while it held the lock takes it back at its
/// restart, and only the owner drops it. A lock older than kStaleAfterSeconds is a pipe's that
/// never came back, and is broken.
///
/// On one server the table is a Memory table: CREATE TABLE of a name that exists fails (code 57)
/// on every version; system.columns shows its owner and system.tables its age.
///
/// On a cluster every node must see the same lock, so the table is a ReplicatedMergeTree made on
/// the node the pipe is connected to (not ON CLUSTER) at one ZooKeeper path per shared table,
/// `/chsync/alter_locks/<database>/<name>` (ZooKeeperName), always as replica `lock`: ZooKeeper
/// lets one replica of that name exist, so a CREATE on another node fails (code 253, or 122 when
/// its owner differs: the columns differ) while a pipe holds it, and on the same node with 57.
/// ClickHouse (18.16 too) removes the path with its last replica, so each owner's CREATE makes the
/// path anew with its own DEFAULT (a path left with another's would refuse it: 122). The owner and
/// the age are read from ZooKeeper (the replica's `columns` node and its creation time), whichever
/// node holds it; it is taken back or broken with DROP … ON CLUSTER. A pipe tries CREATE only when
/// the path is gone: while a drop removes it, a replica made under it could be removed with it
/// (18.16 removes the replica, then the path). A path left without a replica for kOrphanSeconds (a
/// CREATE or a DROP stopped half-way) is cleared by making the replica again with the columns
/// ZooKeeper has and dropping it. A CREATE that fails leaves an empty folder of the table on 18.16
/// (DROP DATABASE fails there until the lock is made and dropped on that node once more): the check
/// of the path keeps such failures to pipes that try at the same moment.
class AlterLock {
 public:
  static Result<AlterLock> Take(Destination& destination, const clickhouse::DdlTarget& target,
                                std::string_view name) {
    AlterLock lock(destination, target, name);
    CHSYNC_RETURN_IF_ERROR(target.cluster.empty() ? lock.TakeOnServer(name) : lock.TakeOnCluster(name));
    return lock;
  }
  AlterLock(AlterLock&& other) noexcept
      : destination_(other.destination_),
        cluster_(std::move(other.cluster_)),
        database_(std::move(other.database_)),
        lock_name_(std::exchange(other.lock_name_, "")),
        owner_(std::move(other.owner_)),
        path_(std::move(other.path_)) {}
  AlterLock& operator=(AlterLock&&) = delete;
  AlterLock(const AlterLock&) = delete;
  AlterLock& operator=(const AlterLock&) = delete;
  ~AlterLock() {
    if (lock_name_.empty()) return;
    // Dropped only while it is still this pipe's (broken as stale, it may be another's now). When
    // the pipe stops meanwhile, its restart takes it back.
    auto held = path_.empty() ? LocalHolder() : ReplicaHolder();
    if (!held.ok() || !held->has_value() || (*held)->owner != owner_) return;
    // Taken through a node the pipe is no longer connected to (it failed over): a DROP … ON CLUSTER
    // would wait for that node. Left for the next turn, which takes it back.
    if (!path_.empty()) {
      auto here = LocalHolder();
      if (!here.ok() || !here->has_value()) {
        log::Info("{} stays on the node it was taken through until this pipe's next ALTER takes it back",
                  Lock());
        return;
      }
    }
    Status dropped = Drop();
    if (!dropped.ok()) log::Warn("releasing {}: {}", Lock(), dropped.error().message());
  }

 private:
  static constexpr int kStaleAfterSeconds = 3600;
  static constexpr int kOrphanSeconds = 60;
  static constexpr int kIncompatibleColumns = 122;  // another owner's lock, on a cluster
  static constexpr int kTableExists = 57;
  static constexpr int kReplicaExists = 253;

  /// Who holds the lock: its owner as its column's DEFAULT (quoted), where, since when.
  struct Holder {
    std::string owner;
    std::string node;  ///< " through node HOST:PORT" on a cluster, else ""
    std::string age;   ///< seconds; "" when unknown
  };

  AlterLock(Destination& destination, const clickhouse::DdlTarget& target, std::string_view name)
      : destination_(destination),
        cluster_(target.cluster),
        database_(target.StorageDatabase()),
        lock_name_(std::string(name) + "__chsync_altering"),
        owner_(QuoteString(destination.owner())) {
    if (!cluster_.empty())
      path_ = "/chsync/alter_locks/" + ZooKeeperName(database_) + "/" + ZooKeeperName(name);
  }

  std::string Lock() const { return QualifiedName(database_, lock_name_); }

  Status TakeOnServer(std::string_view name) {
    auto reported = std::chrono::steady_clock::now() - std::chrono::seconds(10);  // said at once
    int unseen = 0;
    for (;;) {
      Status created = destination_.connection().Execute(
          fmt::format("CREATE TABLE {} (owner String DEFAULT {}) ENGINE = Memory", Lock(), owner_));
      if (created.ok()) return Status::Ok();
      if (created.error().server_code() != kTableExists) return created.error();
      CHSYNC_ASSIGN_OR_RETURN(std::optional<Holder> holder, LocalHolder());
      if (!holder) {  // dropped meanwhile
        CHSYNC_RETURN_IF_ERROR(Unseen(unseen));
        continue;
      }
      unseen = 0;
      CHSYNC_RETURN_IF_ERROR(Contend(name, *holder, reported));
    }
  }

  Status TakeOnCluster(std::string_view name) {
    const std::string create = fmt::format(
        "CREATE TABLE {} (owner String DEFAULT {}) ENGINE = ReplicatedMergeTree({}, 'lock') ORDER BY tuple()",
        Lock(), owner_, QuoteString(path_));
    auto reported = std::chrono::steady_clock::now() - std::chrono::seconds(10);
    std::optional<std::chrono::steady_clock::time_point> orphan_since;
    int unseen = 0;
    for (;;) {
      // The path first: it is there as long as the lock is, or is being removed.
      CHSYNC_ASSIGN_OR_RETURN(bool path_there, PathExists());
      std::optional<Holder> holder;
      if (path_there) {
        CHSYNC_ASSIGN_OR_RETURN(holder, ReplicaHolder());
        if (!holder) {
          // Being removed by a drop of the lock, or left by a CREATE or DROP that stopped half-way.
          const auto now = std::chrono::steady_clock::now();
          if (!orphan_since) orphan_since = now;
          if (now - *orphan_since >= std::chrono::seconds(kOrphanSeconds)) {
            CHSYNC_RETURN_IF_ERROR(ClearOrphan());
            orphan_since.reset();
          }
          CHSYNC_RETURN_IF_ERROR(Pause());
          continue;
        }
        orphan_since.reset();
      } else {
        orphan_since.reset();
        Result<std::string> created = OnCurrentNode(destination_, create);
        if (!created.ok() && !Contended(created.error())) {
          // Not an answer (the node unreachable, say): retried, on another node of the cluster.
          created = destination_.connection().Query(create);
        }
        if (created.ok()) {
          CHSYNC_ASSIGN_OR_RETURN(holder, ReplicaHolder());
          if (holder && holder->owner == owner_) return Status::Ok();
          // Another pipe's drop of the lock removed this replica with the path at the same moment:
          // the table stays on this node until a later turn finds it (57) and drops it as this
          // pipe's own.
          log::Warn("{} was made, but ZooKeeper does not show it as this pipe's at {}: taking it again",
                    Lock(), path_);
          CHSYNC_RETURN_IF_ERROR(Pause());
          continue;
        }
        if (!Contended(created.error())) return std::move(created).error();
        if (created.error().server_code() != kTableExists) {  // another pipe's, at the same moment
          CHSYNC_RETURN_IF_ERROR(Pause());
          continue;
        }
        // On this node without its path in ZooKeeper: a lock made before locks were replicated (a
        // Memory table), or one whose replica a drop removed as above.
        CHSYNC_ASSIGN_OR_RETURN(holder, LocalHolder());
        if (!holder) {
          CHSYNC_RETURN_IF_ERROR(Unseen(unseen));
          continue;
        }
        unseen = 0;
      }
      CHSYNC_RETURN_IF_ERROR(Contend(name, *holder, reported));
    }
  }

  /// Between two tries: 100 ms, unless the pipe stops.
  Status Pause() {
    if (destination_.cancelled()) return clickhouse::CancelledError("waiting for " + Lock());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return Status::Ok();
  }

  /// ClickHouse said the lock table exists, and then did not list it: once, a drop in between;
  /// for 10 s, a table the node cannot show (a folder a refused CREATE left, say), which no wait
  /// ends: an error that names it.
  Status Unseen(int& times) {
    if (++times >= 100) {
      return Error(
          ErrorKind::kServer,
          fmt::format("ClickHouse refuses to create {} because it exists, but does not list it; remove "
                      "what is left of it on the node (its folder in the data directory) and start "
                      "chsync again",
                      Lock()));
    }
    return Pause();
  }

  /// A CREATE of the lock that failed because it is there: on this node (57), on another (253),
  /// another owner's on another node (122), or ZooKeeper's nodes made or removed meanwhile (999).
  static bool Contended(const Error& error) {
    const int code = error.server_code();
    return code == kTableExists || code == kReplicaExists || code == kIncompatibleColumns || code == 999;
  }

  /// What to do about a lock `holder` holds: take it back (this pipe's own) or break it (stale);
  /// or wait, said every 10 s. Either way a pause before the next try. Cancelled: an error.
  Status Contend(std::string_view name, const Holder& holder,
                 std::chrono::steady_clock::time_point& reported) {
    if (holder.owner == owner_) {
      log::Info("{} is this pipe's, left by a stop in the middle of an ALTER: taken back", Lock());
      CHSYNC_RETURN_IF_ERROR(Drop());
      return Pause();
    }
    if (!holder.age.empty() && std::atoll(holder.age.c_str()) > kStaleAfterSeconds) {
      log::Warn(
          "{} of {}{} is older than {} s: its pipe stopped in the middle of an ALTER and did not come "
          "back; it is broken",
          Lock(), holder.owner, holder.node, kStaleAfterSeconds);
      CHSYNC_RETURN_IF_ERROR(Drop());
      return Pause();
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - reported >= std::chrono::seconds(10)) {
      log::Info(
          "waiting for another pipe that alters {}: {} is held by {}{} since {} s (if that pipe is gone "
          "for good, drop {}{})",
          QualifiedName(database_, name), Lock(), holder.owner, holder.node,
          holder.age.empty() ? "?" : holder.age, Lock(),
          cluster_.empty() ? "" : " ON CLUSTER " + QuoteIdentifier(cluster_));
      reported = now;
    }
    return Pause();
  }

  /// Drops the lock: where the pipe is connected when it is there, else on every node of the
  /// cluster (a lock taken through another node).
  /// SYNC where databases are Atomic (20.10 and later), which otherwise keep a dropped table's
  /// replica in ZooKeeper for 480 s: every later turn would wait that long.
  Status Drop() {
    const std::string drop = "DROP TABLE IF EXISTS " + Lock();
    const std::string sync = destination_.caps().drop_sync ? " SYNC" : "";
    if (cluster_.empty()) return destination_.connection().Execute(drop + sync);
    CHSYNC_ASSIGN_OR_RETURN(
        std::string here,
        destination_.connection().Query("SELECT count() FROM system.tables WHERE database = " +
                                        QuoteString(database_) + " AND name = " + QuoteString(lock_name_)));
    if (here.starts_with("1")) return destination_.connection().Execute(drop + sync);
    return destination_.Ddl(drop + " ON CLUSTER " + QuoteIdentifier(cluster_) + sync);
  }

  /// The lock on the node the pipe is connected to: its age from system.tables, its owner from
  /// system.columns ("" for a table without the column: not a pipe's).
  Result<std::optional<Holder>> LocalHolder() {
    const std::string where = " WHERE database = " + QuoteString(database_);
    CHSYNC_ASSIGN_OR_RETURN(
        std::string age,
        destination_.connection().Query("SELECT toInt64(now()) - toInt64(metadata_modification_time) FROM "
                                        "system.tables" +
                                        where + " AND name = " + QuoteString(lock_name_)));
    while (!age.empty() && age.back() == '\n') age.pop_back();
    if (age.empty()) return std::optional<Holder>();
    CHSYNC_ASSIGN_OR_RETURN(
        std::string owner,
        destination_.connection().Query("SELECT default_expression FROM system.columns" + where +
                                            " AND table = " + QuoteString(lock_name_) + " AND name = 'owner'",
                                        "TabSeparatedRaw"));
    while (!owner.empty() && owner.back() == '\n') owner.pop_back();
    return std::optional<Holder>(Holder{std::move(owner), "", std::move(age)});
  }

  /// The replica `lock` at path_ as ZooKeeper has it: its owner from its columns, its node from
  /// its host, its age from its creation; none when there is no such replica.
  Result<std::optional<Holder>> ReplicaHolder() {
    CHSYNC_ASSIGN_OR_RETURN(
        std::optional<std::string> rows,
        ReadZooKeeper(destination_,
                      "SELECT name, value, toInt64(now()) - toInt64(ctime) FROM system.zookeeper "
                      "WHERE path = " +
                          QuoteString(path_ + "/replicas/lock") + " AND name IN ('columns', 'host')"));
    if (!rows) return std::optional<Holder>();
    Holder holder;
    bool held = false;
    for (size_t start = 0; start < rows->size();) {
      size_t end = rows->find('\n', start);
      if (end == std::string::npos) end = rows->size();
      std::vector<std::string> fields =
          clickhouse::SplitTabSeparated(std::string_view(*rows).substr(start, end - start));
      start = end + 1;
      if (fields.size() < 3) continue;
      if (fields[0] == "columns") {
        holder.owner = OwnerOfColumns(fields[1]).value_or("");  // "": not a pipe's
        holder.age = fields[2];
        held = true;
      } else if (fields[0] == "host") {
        holder.node = " through node " + HostOf(fields[1]);
      }
    }
    if (!held) return std::optional<Holder>();
    return std::optional<Holder>(std::move(holder));
  }

  /// The DEFAULT of column `owner` in the text of a ZooKeeper `columns` node ("columns format
  /// version: 1\n1 columns:\n`owner` String\tDEFAULT\t<expression, escaped>\n").
  static std::optional<std::string> OwnerOfColumns(std::string_view text) {
    constexpr std::string_view kLine = "`owner` String\tDEFAULT\t";
    size_t at = text.find(kLine);
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view rest = text.substr(at + kLine.size());
    rest = rest.substr(0, rest.find('\n'));
    return clickhouse::SplitTabSeparated(rest).front();
  }

  /// "HOST:TCP_PORT" from the text of a replica's `host` node ("host: …\nport: …\ntcp_port: …\n…").
  static std::string HostOf(std::string_view text) {
    auto field = [&](std::string_view key) {
      size_t at = text.find(key);
      if (at == std::string_view::npos) return std::string("?");
      std::string_view rest = text.substr(at + key.size());
      return std::string(rest.substr(0, rest.find('\n')));
    };
    return field("host: ") + ":" + field("tcp_port: ");
  }

  /// Whether path_ is in ZooKeeper (with a replica or without).
  Result<bool> PathExists() {
    const size_t slash = path_.rfind('/');
    CHSYNC_ASSIGN_OR_RETURN(
        std::optional<std::string> count,
        ReadZooKeeper(destination_, "SELECT count() FROM system.zookeeper WHERE path = " +
                                        QuoteString(path_.substr(0, slash)) +
                                        " AND name = " + QuoteString(path_.substr(slash + 1))));
    return count && count->starts_with("1");
  }

  /// path_ without a replica, for kOrphanSeconds: the replica made again with the columns the
  /// path has (another owner's DEFAULT), and dropped, which removes the path.
  Status ClearOrphan() {
    CHSYNC_ASSIGN_OR_RETURN(std::optional<std::string> rows,
                            ReadZooKeeper(destination_, "SELECT value FROM system.zookeeper WHERE path = " +
                                                            QuoteString(path_) + " AND name = 'columns'"));
    if (!rows) return Status::Ok();  // gone meanwhile
    std::vector<std::string> fields = clickhouse::SplitTabSeparated(rows->substr(0, rows->find('\n')));
    std::optional<std::string> owner = OwnerOfColumns(fields.front());
    const std::string by_hand = fmt::format(
        "the ZooKeeper path {} of {} has had no replica for {} s (a CREATE or DROP of it stopped half-way); "
        "when no pipe alters the shared table, remove the path (zkCli.sh: deleteall {})",
        path_, Lock(), kOrphanSeconds, path_);
    if (!owner || owner->size() < 2 || owner->front() != '\'' || owner->back() != '\'')
      return Error(ErrorKind::kServer, by_hand);
    log::Warn("{}: it is cleared", by_hand.substr(0, by_hand.find(';')));
    Result<std::string> made =
        OnCurrentNode(destination_, fmt::format("CREATE TABLE {} (owner String DEFAULT {}) ENGINE = "
                                                "ReplicatedMergeTree({}, 'lock') ORDER BY tuple()",
                                                Lock(), *owner, QuoteString(path_)));
    if (!made.ok()) {
      if (Contended(made.error()) && made.error().server_code() != kTableExists)
        return Status::Ok();  // taken meanwhile
      return Error(ErrorKind::kServer, by_hand + ": " + made.error().message());
    }
    return destination_.connection().Execute("DROP TABLE IF EXISTS " + Lock() +
                                             (destination_.caps().drop_sync ? " SYNC" : ""));
  }

  Destination& destination_;
  std::string cluster_;
  std::string database_;
  std::string lock_name_;
  std::string owner_;
  std::string path_;  ///< ZooKeeper path on a cluster, else ""
};

/// True when `stored` lacks a column of `layout` or has one too narrow for it.
Result<bool> NeedsAlter(const std::vector<StoredColumn>& stored, const schema::TableSchema& layout,
                        const clickhouse::Capabilities& caps) {
  for (const schema::Column& column : layout.columns) {
    const StoredColumn* existing = Find(stored, column.name);
    if (existing == nullptr) return true;
    CHSYNC_ASSIGN_OR_RETURN(clickhouse::MappedType mapped, clickhouse::MapColumn(column, caps));
    mapped = clickhouse::SharedStorageType(mapped);
    clickhouse::ColumnMerge merge = clickhouse::MergeColumn(existing->type, mapped, caps.decimal256);
    if (merge.kind != clickhouse::ColumnMerge::Kind::kKeep) return true;
  }
  return false;
}

}  // namespace

Result<clickhouse::WriterOptions> EnsureShared(Destination& destination, const clickhouse::DdlTarget& target,
                                               std::string_view name, const schema::TableSchema& layout,
                                               const EffectiveMapping& mapping) {
  const clickhouse::Capabilities& caps = destination.caps();
  const std::string table = QualifiedName(target.StorageDatabase(), name);
  if (target.sharded) {
    return Error(ErrorKind::kConfig,
                 fmt::format("{}.{}: table_options' source_column (a table shared by several sources) is not "
                             "supported on a sharded cluster yet; replicate these tables separately there",
                             mapping.source_database, mapping.source_table));
  }
  clickhouse::CreateOptions options = mapping.CreateOptions();
  options.table = std::string(name);
  options.column_names.clear();  // `layout` has the ClickHouse names already
  CHSYNC_ASSIGN_OR_RETURN(std::vector<StoredColumn> stored, ReadColumns(destination, target, name));
  if (stored.empty()) {
    CHSYNC_RETURN_IF_ERROR(destination.Ddl(clickhouse::CreateDatabase(target)));
    schema::TableSchema create = layout;
    create.name = std::string(name);
    CHSYNC_ASSIGN_OR_RETURN(std::string sql, clickhouse::CreateTable(create, caps, target, options));
    Status created = destination.Ddl(sql);
    // Another pipe may have created it at the same moment: what counts is that it is there now.
    CHSYNC_ASSIGN_OR_RETURN(stored, ReadColumns(destination, target, name));
    if (stored.empty()) {
      CHSYNC_RETURN_IF_ERROR(created);
      return Error(ErrorKind::kServer,
                   "the shared table " + table + " was created but ClickHouse does not list it");
    }
    if (created.ok())
      log::Info("created the shared table {} (sources in column {})", table, mapping.source_column);
  }
  if (Find(stored, mapping.source_column) == nullptr) {
    return Error(ErrorKind::kConfig,
                 fmt::format("the ClickHouse table {} exists without the column {} that table_options' "
                             "source_column names: it was not made by chsync for several sources; give "
                             "the entry another dest, or drop the table",
                             table, mapping.source_column));
  }
  // The table's sorting key must be this source's: a source keyed otherwise would have rows of
  // one key collapse (its key wider than the table's) or a row's versions sort apart (narrower).
  {
    schema::TableSchema mine = layout;
    mine.name = std::string(name);
    CHSYNC_ASSIGN_OR_RETURN(clickhouse::TableLayout wanted,
                            clickhouse::DestinationLayout(mine, caps, target, options));
    CHSYNC_ASSIGN_OR_RETURN(
        std::string key, destination.connection().Query(
                             "SELECT sorting_key FROM system.tables WHERE database = " +
                                 QuoteString(target.StorageDatabase()) + " AND name = " + QuoteString(name),
                             "TabSeparatedRaw"));
    std::string expected;
    for (const std::string& element : wanted.order_by) expected += (expected.empty() ? "" : ", ") + element;
    auto bare = [](std::string_view text) {
      std::string out;
      for (char c : text) {
        if (c != '`' && c != ' ' && c != '\n') out += c;
      }
      return out;
    };
    if (bare(key) != bare(expected)) {
      while (!key.empty() && key.back() == '\n') key.pop_back();
      return Error(
          ErrorKind::kUnsupported,
          fmt::format("the shared table {} is sorted by ({}), and source {}.{} ({}) would be sorted by "
                      "({}): rows of different keys would collapse into one, or a row's versions "
                      "would not meet. Every source of a shared table needs the same primary key; "
                      "give this source another dest in table_options, or change its key at the "
                      "source",
                      table, key, mapping.source_database, mapping.source_table, mapping.source_value,
                      expected));
    }
  }
  // Staging tables of typed INSERTs (clickhouse/typed_insert.h) that a kill left: each lives for
  // one INSERT, so one older than ten minutes is no writer's any more.
  CHSYNC_ASSIGN_OR_RETURN(
      std::string staged,
      destination.connection().Query(
          "SELECT name FROM system.tables WHERE database = " + QuoteString(target.StorageDatabase()) +
              " AND startsWith(name, " + QuoteString(std::string(name) + "__chsync_staged_") +
              ") AND metadata_modification_time < now() - 600",
          "TabSeparatedRaw"));
  for (size_t start = 0; start < staged.size();) {
    size_t end = staged.find('\n', start);
    if (end == std::string::npos) end = staged.size();
    const std::string left = staged.substr(start, end - start);
    start = end + 1;
    if (left.empty()) continue;
    Status dropped = destination.connection().Execute("DROP TABLE IF EXISTS " +
                                                      QualifiedName(target.StorageDatabase(), left));
    if (!dropped.ok())
      log::Warn("dropping the staging table {} a stop left: {}", left, dropped.error().message());
  }
  // Columns to add or widen: under the lock, from what ClickHouse has once it is held.
  std::optional<AlterLock> lock;
  CHSYNC_ASSIGN_OR_RETURN(bool alter, NeedsAlter(stored, layout, caps));
  if (alter) {
    CHSYNC_ASSIGN_OR_RETURN(AlterLock taken, AlterLock::Take(destination, target, name));
    lock.emplace(std::move(taken));
    CrashPoint("fan_in.locked");  // the lock held, nothing altered yet
    CHSYNC_ASSIGN_OR_RETURN(stored, ReadColumns(destination, target, name));
  }
  clickhouse::WriterOptions writer;
  writer.source_column = mapping.source_column;
  writer.source_value = mapping.source_value;
  writer.types.resize(layout.columns.size());
  const std::string what = "the shared table " + table;
  for (size_t i = 0; i < layout.columns.size(); ++i) {
    const schema::Column& column = layout.columns[i];
    CHSYNC_ASSIGN_OR_RETURN(clickhouse::MappedType mapped, clickhouse::MapColumn(column, caps));
    mapped = clickhouse::SharedStorageType(mapped);
    // Added, then merged: another pipe may add or widen it between our read and our ALTER.
    for (int attempt = 0;; ++attempt) {
      const StoredColumn* existing = Find(stored, column.name);
      if (existing == nullptr) {
        CHSYNC_ASSIGN_OR_RETURN(std::string add,
                                clickhouse::AddColumn(name, column, "", caps, target, options));
        Status added = destination.Ddl(add);
        CHSYNC_ASSIGN_OR_RETURN(stored, ReadColumns(destination, target, name));
        if (Find(stored, column.name) == nullptr) {
          CHSYNC_RETURN_IF_ERROR(added);
          return Error(
              ErrorKind::kServer,
              fmt::format("{}: column {} was added but ClickHouse does not list it", what, column.name));
        }
        if (added.ok()) log::Info("{}: added column {} for {}", what, column.name, mapping.source_value);
        continue;
      }
      clickhouse::ColumnMerge merge = clickhouse::MergeColumn(existing->type, mapped, caps.decimal256);
      if (merge.kind == clickhouse::ColumnMerge::Kind::kConflict) {
        return Error(ErrorKind::kUnsupported,
                     fmt::format("{}: column {} of source {}.{} ({}): {}. Give this source another dest "
                                 "in table_options, or change the column at the source",
                                 what, column.name, mapping.source_database, mapping.source_table,
                                 mapping.source_value, merge.why));
      }
      if (merge.kind == clickhouse::ColumnMerge::Kind::kKeep) {
        writer.types[i] = merge.write_as;
        break;
      }
      if (attempt >= 3) {
        return Error(ErrorKind::kServer,
                     fmt::format("{}: column {} changed under every attempt to widen it to {}", what,
                                 column.name, merge.type));
      }
      // ClickHouse 18.16 drops a column's DEFAULT on MODIFY: it is stated again.
      std::string sql = "ALTER TABLE " + table + OnCluster(target) + " MODIFY COLUMN " +
                        QuoteIdentifier(column.name) + " " + merge.type;
      if (existing->default_kind == "DEFAULT" && !existing->default_expression.empty())
        sql += " DEFAULT " + existing->default_expression;
      Status widened = [&]() -> Status {
        // Not while this process's INSERTs that checked the old types run (a copy's, say); merged
        // right before it, with no INSERT in between (Destination::MergeEmptyParts).
        const clickhouse::TypeGate::Held changing = clickhouse::TypeGate::Change(target.database, name);
        CHSYNC_RETURN_IF_ERROR(destination.MergeEmptyParts(target, name));
        return destination.Ddl(sql);
      }();
      CHSYNC_ASSIGN_OR_RETURN(stored, ReadColumns(destination, target, name));
      if (widened.ok()) {
        log::Info("{}: column {} widened from {} to {} for {}", what, column.name, existing->type, merge.type,
                  mapping.source_value);
      } else {
        // Another pipe's ALTER in between, or one ClickHouse reports failed after it changed the
        // type (see Destination::MergeEmptyParts): what the table has now decides.
        log::Warn("{}: widening column {} to {} for {}: {}", what, column.name, merge.type,
                  mapping.source_value, widened.error().message());
      }
      // Merged again against what is there now (ours, or another pipe's wider type).
    }
  }
  return writer;
}

Status DeleteSourceRows(Destination& destination, const clickhouse::DdlTarget& target, std::string_view name,
                        const EffectiveMapping& mapping, uint64_t version) {
  CHSYNC_ASSIGN_OR_RETURN(std::vector<StoredColumn> stored, ReadColumns(destination, target, name));
  if (stored.empty()) return Status::Ok();
  const std::string table = QualifiedName(target.StorageDatabase(), name);
  std::string columns;
  std::string values;
  for (const StoredColumn& c : stored) {
    if (c.name == clickhouse::kSyncedAtColumn || c.default_kind == "ALIAS" ||
        c.default_kind == "MATERIALIZED")
      continue;
    if (!columns.empty()) {
      columns += ", ";
      values += ", ";
    }
    columns += QuoteIdentifier(c.name);
    if (c.name == clickhouse::kVersionColumn) {
      values += fmt::format("toUInt64({})", version);
    } else if (c.name == clickhouse::kIsDeletedColumn) {
      values += "toUInt8(1)";
    } else {
      values += QuoteIdentifier(c.name);
    }
  }
  const std::string sql = fmt::format(
      "INSERT INTO {} ({}) SELECT {} FROM {} FINAL WHERE {} = {} AND {} = 0 AND {} < {}", table, columns,
      values, table, QuoteIdentifier(mapping.source_column), QuoteString(mapping.source_value),
      QuoteIdentifier(clickhouse::kIsDeletedColumn), QuoteIdentifier(clickhouse::kVersionColumn), version);
  return destination.connection().Execute(sql);
}

Status ClearSourceRows(Destination& destination, const clickhouse::DdlTarget& target, std::string_view name,
                       const EffectiveMapping& mapping) {
  const std::string table = QualifiedName(target.StorageDatabase(), name);
  const std::string where =
      fmt::format("{} = {}", QuoteIdentifier(mapping.source_column), QuoteString(mapping.source_value));
  CHSYNC_ASSIGN_OR_RETURN(std::string rows, destination.connection().Query(fmt::format(
                                                "SELECT count() FROM {} WHERE {}", table, where)));
  if (rows.empty() || rows[0] == '0') return Status::Ok();  // nothing to remove: no mutation
  // A part holding this source's rows alone would be left empty by the DELETE, and ClickHouse before
  // 20.1 fails a later MODIFY COLUMN on an empty part (Destination::MergeEmptyParts): there, the
  // partitions are merged first, so that each part keeps the other sources' rows.
  if (!destination.caps().modify_as_mutation) {
    CHSYNC_ASSIGN_OR_RETURN(
        std::string partitions,
        destination.connection().Query("SELECT DISTINCT partition_id FROM system.parts WHERE database = " +
                                           QuoteString(target.StorageDatabase()) +
                                           " AND table = " + QuoteString(name) + " AND active",
                                       "TabSeparatedRaw"));
    for (size_t start = 0; start < partitions.size();) {
      size_t end = partitions.find('\n', start);
      if (end == std::string::npos) end = partitions.size();
      const std::string partition = partitions.substr(start, end - start);
      start = end + 1;
      if (partition.empty()) continue;
      CHSYNC_RETURN_IF_ERROR(destination.connection().Execute(
          fmt::format("OPTIMIZE TABLE {} PARTITION ID {} FINAL", table, QuoteString(partition))));
    }
  }
  CHSYNC_RETURN_IF_ERROR(
      destination.Ddl(fmt::format("ALTER TABLE {}{} DELETE WHERE {}", table, OnCluster(target), where)));
  // This source's mutations only (another source's, or a user's, may take longer or never end):
  // ClickHouse keeps the command as it prints it (`DELETE WHERE _source = 'tenant_7'`, the name
  // quoted only when it must be), so its value is looked for.
  const std::string mine =
      "SELECT count() FROM system.mutations WHERE database = " + QuoteString(target.StorageDatabase()) +
      " AND table = " + QuoteString(name) + " AND is_done = 0 AND position(command, " +
      QuoteString(QuoteString(mapping.source_value)) + ") > 0";
  const auto start = std::chrono::steady_clock::now();
  auto reported = start;
  for (;;) {
    CHSYNC_ASSIGN_OR_RETURN(std::string count, destination.connection().Query(mine));
    if (count.empty() || count[0] == '0') return Status::Ok();
    if (destination.cancelled())
      return clickhouse::CancelledError("waiting for ClickHouse to remove the rows of " +
                                        mapping.source_value);
    const auto now = std::chrono::steady_clock::now();
    if (now - reported >= std::chrono::seconds(10)) {
      // ClickHouse 19 and later say why a mutation does not progress.
      auto why = destination.connection().Query(
          "SELECT any(latest_fail_reason) FROM system.mutations WHERE database = " +
          QuoteString(target.StorageDatabase()) + " AND table = " + QuoteString(name) +
          " AND is_done = 0 AND position(command, " + QuoteString(QuoteString(mapping.source_value)) +
          ") > 0");
      std::string reason = why.ok() ? *why : "";
      while (!reason.empty() && reason.back() == '\n') reason.pop_back();
      log::Info(
          "waiting {} s for ClickHouse to remove the rows of {} from {} (ALTER TABLE … DELETE WHERE {}){}",
          std::chrono::duration_cast<std::chrono::seconds>(now - start).count(), mapping.source_value, table,
          where, reason.empty() ? "" : ": its last failure: " + reason);
      reported = now;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace chsync::pipe
