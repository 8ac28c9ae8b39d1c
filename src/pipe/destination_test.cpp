// The Destination's multi-step changes against a fake ClickHouse that keeps a catalog of tables and
// can "crash" (refuse everything) after any number of statements: each change, run again by a new
// Destination after a crash between any two of its steps, ends as one run without a crash ends.

#include "pipe/destination.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/test_util.h"

namespace chsync::pipe {
namespace {

/// A table of the fake: its rows and engine.
struct FakeTable {
  int rows = 0;
  std::string engine = "ReplacingMergeTree(_chsync_version) ORDER BY a";
  bool operator==(const FakeTable&) const = default;
};

/// What survives a crash: the tables by "db.name", and the statements run.
struct Catalog {
  std::map<std::string, FakeTable> tables;
  std::vector<std::string> statements;
  /// Statements that change something still allowed before the "crash"; -1: no crash.
  int budget = -1;
  /// The queries of system.tables' keys asked.
  int key_reads = 0;
  /// "db.name" of folders of parts no table owns (18.16 killed in the middle of a rename): a
  /// table renamed to that name is refused, as 18.16 refuses it.
  std::set<std::string> orphan_folders;
};

/// Understands the statements Destination sends to one server of version `version`.
class FakeClickHouse : public clickhouse::Connection {
 public:
  FakeClickHouse(Catalog& catalog, std::string version) : catalog_(catalog), version_(std::move(version)) {}
  std::string Describe() const override { return "fake"; }
  bool embedded() const override { return false; }

 protected:
  Result<std::string> Run(std::string_view sql_view, std::string_view, std::string_view,
                          const clickhouse::RequestOptions&) override {
    const std::string sql(sql_view);
    std::smatch m;
    if (sql == "SELECT version()") return version_ + "\n";
    static const std::regex kWhere(R"(FROM system\.tables WHERE database = '([^']*)' AND name = '([^']*)')");
    if (sql.starts_with("SELECT count() FROM system.tables") && std::regex_search(sql, m, kWhere)) {
      return std::string(catalog_.tables.contains(m[1].str() + "." + m[2].str()) ? "1\n" : "0\n");
    }
    if (sql.starts_with("SELECT engine_full FROM system.tables") && std::regex_search(sql, m, kWhere)) {
      auto it = catalog_.tables.find(m[1].str() + "." + m[2].str());
      return it == catalog_.tables.end() ? std::string() : it->second.engine + "\n";
    }
    if (sql.starts_with("SELECT sorting_key, partition_key FROM system.tables") &&
        std::regex_search(sql, m, kWhere)) {
      ++catalog_.key_reads;
      return std::string(catalog_.tables.contains(m[1].str() + "." + m[2].str()) ? "a\t\n" : "");
    }
    static const std::regex kNames(
        R"(^SELECT name FROM system\.tables WHERE database = '([^']*)' AND name IN \((.*)\)$)");
    if (std::regex_match(sql, m, kNames)) {
      static const std::regex kQuoted(R"('([^']*)')");
      const std::string database = m[1].str();
      const std::string list = m[2].str();
      std::string rows;
      for (std::sregex_iterator it(list.begin(), list.end(), kQuoted), end; it != end; ++it) {
        if (catalog_.tables.contains(database + "." + (*it)[1].str())) rows += (*it)[1].str() + "\n";
      }
      return rows;
    }
    static const std::regex kIn(R"(FROM system\.tables WHERE database IN \('([^']*)'\)$)");
    if (sql.starts_with("SELECT database, name, sorting_key, partition_key FROM system.tables") &&
        std::regex_search(sql, m, kIn)) {
      ++catalog_.key_reads;
      std::string rows;
      for (const auto& [name, table] : catalog_.tables) {
        const size_t dot = name.find('.');
        if (name.substr(0, dot) == m[1].str())
          rows += name.substr(0, dot) + "\t" + name.substr(dot + 1) + "\tid\t\n";
      }
      return rows;
    }
    static const std::regex kCount(R"(^SELECT count\(\) FROM `([^`]*)`\.`([^`]*)`$)");
    if (std::regex_match(sql, m, kCount)) {
      auto it = catalog_.tables.find(m[1].str() + "." + m[2].str());
      if (it == catalog_.tables.end()) return Error(ErrorKind::kServer, "no table", 60);
      return std::to_string(it->second.rows) + "\n";
    }
    if (sql.starts_with("SELECT")) return Error(ErrorKind::kInternal, "the fake does not know: " + sql);
    // Everything else changes something: counted against the crash budget.
    if (catalog_.budget == 0) return Error(ErrorKind::kInternal, "crashed before: " + sql);
    if (catalog_.budget > 0) --catalog_.budget;
    catalog_.statements.push_back(sql);
    if (sql.starts_with("CREATE DATABASE IF NOT EXISTS ")) return std::string();
    static const std::regex kDrop(R"(^DROP TABLE IF EXISTS `([^`]*)`\.`([^`]*)`$)");
    if (std::regex_match(sql, m, kDrop)) {
      catalog_.tables.erase(m[1].str() + "." + m[2].str());
      return std::string();
    }
    static const std::regex kCreateAs(
        R"(^CREATE TABLE IF NOT EXISTS `([^`]*)`\.`([^`]*)` AS `([^`]*)`\.`([^`]*)` ENGINE = (.*)$)");
    if (std::regex_match(sql, m, kCreateAs)) {
      const std::string name = m[1].str() + "." + m[2].str();
      if (!catalog_.tables.contains(m[3].str() + "." + m[4].str()))
        return Error(ErrorKind::kServer, "no table to copy", 60);
      if (!catalog_.tables.contains(name)) catalog_.tables[name] = FakeTable{0, m[5].str()};
      catalog_.orphan_folders.erase(name);  // the table takes the folder (18.16 does)
      return std::string();
    }
    static const std::regex kCreate(R"(^CREATE TABLE IF NOT EXISTS `([^`]*)`\.`([^`]*)` \()");
    if (std::regex_search(sql, m, kCreate)) {
      catalog_.tables.try_emplace(m[1].str() + "." + m[2].str(), FakeTable{0, "ReplacingMergeTree()"});
      return std::string();
    }
    if (sql.starts_with("RENAME TABLE ")) {
      // Pairs `a`.`b` TO `c`.`d`, applied in order; all or nothing, as ClickHouse does.
      static const std::regex kPair(R"(`([^`]*)`\.`([^`]*)` TO `([^`]*)`\.`([^`]*)`)");
      std::map<std::string, FakeTable> tables = catalog_.tables;
      for (std::sregex_iterator it(sql.begin(), sql.end(), kPair), end; it != end; ++it) {
        const std::string from = (*it)[1].str() + "." + (*it)[2].str();
        const std::string to = (*it)[3].str() + "." + (*it)[4].str();
        if (!tables.contains(from)) return Error(ErrorKind::kServer, "no table " + from, 60);
        if (tables.contains(to)) return Error(ErrorKind::kServer, "table " + to + " exists", 57);
        if (catalog_.orphan_folders.contains(to))
          return Error(ErrorKind::kServer, "Target path already exists: " + to, 84);
        tables[to] = tables[from];
        tables.erase(from);
      }
      catalog_.tables = std::move(tables);
      return std::string();
    }
    return Error(ErrorKind::kInternal, "the fake does not know: " + sql);
  }

 private:
  Catalog& catalog_;
  std::string version_;
};

class DestinationTest : public ::testing::Test {
 protected:
  /// A Destination opened over the catalog (a new one for each run, as after a restart).
  std::unique_ptr<Destination> Open(const std::string& version = "18.16.1") {
    auto destination = std::make_unique<Destination>(config_, cancel_);
    auto opened = destination->OpenWith(std::make_unique<FakeClickHouse>(catalog_, version));
    EXPECT_TRUE(opened.ok()) << opened.error().message();
    return destination;
  }

  /// Runs `change` on a new Destination after each possible crash: the first run may do `k`
  /// statements, then a second run (no crash) finishes; the tables must end as `expected` for every
  /// k, and a first run that was not cut short must end so too. Returns the statements of that
  /// whole run.
  size_t ConvergesFromEveryCrash(const std::map<std::string, FakeTable>& start,
                                 const std::function<Status(Destination&)>& change,
                                 const std::map<std::string, FakeTable>& expected) {
    for (int k = 0;; ++k) {
      catalog_ = Catalog{start, {}, k};
      std::unique_ptr<Destination> first = Open();
      const Status cut = change(*first);
      const bool crashed = catalog_.budget == 0 && !cut.ok();
      catalog_.budget = -1;
      const size_t whole = catalog_.statements.size();
      std::unique_ptr<Destination> second = Open();
      Status finished = change(*second);
      if (!finished.ok()) {
        ADD_FAILURE() << "after a crash past " << k << " statements: " << finished.error().message();
        return 0;
      }
      EXPECT_EQ(catalog_.tables, expected) << "after a crash past " << k << " statements";
      if (!crashed) {
        EXPECT_TRUE(cut.ok()) << cut.error().message();
        return whole;  // k reached the change's whole length: every crash point was walked
      }
      if (k >= 20) {
        ADD_FAILURE() << "the change never finished";
        return 0;
      }
    }
  }

  const clickhouse::DdlTarget target_ = [] {
    clickhouse::DdlTarget t;
    t.database = "db";
    return t;
  }();
  PipeConfig config_;
  std::atomic<bool> cancel_{false};
  Catalog catalog_;
};

// ClickHouse before 21 empties a table by replacing it (TruncateDestination): create an empty copy,
// swap the two names, drop the old one.
TEST_F(DestinationTest, ATruncateOnAnOldServerConvergesFromACrashBetweenAnyTwoSteps) {
  const size_t steps = ConvergesFromEveryCrash(
      {{"db.t", {5, "ReplacingMergeTree(_chsync_version) ORDER BY a"}}, {"db.other", {3}}},
      [&](Destination& d) { return d.TruncateDestination(target_, "t"); },
      {{"db.t", {0, "ReplacingMergeTree(_chsync_version) ORDER BY a"}}, {"db.other", {3}}});
  EXPECT_EQ(steps, 3u) << "create, swap, drop";
}

// 18.16 renames a table in steps (its folder, its new definition, the old one removed): a kill of
// ClickHouse between them leaves states no SQL makes. From each, the TRUNCATE run again (after a
// replay put older rows into `t` again) still ends with `t` empty and nothing of the swap left.
TEST_F(DestinationTest, ATruncateOnAnOldServerConvergesFromAKillInsideClickHousesRename) {
  const std::string engine = "ReplacingMergeTree(_chsync_version) ORDER BY a";
  const std::map<std::string, FakeTable> emptied = {{"db.t", {0, engine}}, {"db.other", {3}}};
  // The parts of `t` moved to a folder no table owns; `t` loaded empty and filled by the replay.
  auto folder = [&](Destination& d) {
    catalog_.orphan_folders = {"db.t__chsync_truncated"};
    return d.TruncateDestination(target_, "t");
  };
  ConvergesFromEveryCrash(
      {{"db.t", {2, engine}}, {"db.t__chsync_truncating", {0, engine}}, {"db.other", {3}}}, folder, emptied);
  // Two folders taken: the third name.
  auto folders = [&](Destination& d) {
    catalog_.orphan_folders = {"db.t__chsync_truncated", "db.t__chsync_truncated_2"};
    return d.TruncateDestination(target_, "t");
  };
  ConvergesFromEveryCrash({{"db.t", {2, engine}}, {"db.other", {3}}}, folders, emptied);
  // Defined under both names: `t` (loaded empty, filled by the replay) and the aside one.
  ConvergesFromEveryCrash(
      {{"db.t", {2, engine}},
       {"db.t__chsync_truncated", {5, engine}},
       {"db.t__chsync_truncating", {0, engine}},
       {"db.other", {3}}},
      [&](Destination& d) { return d.TruncateDestination(target_, "t"); }, emptied);
  // Between the swap's two renames: no `t`.
  ConvergesFromEveryCrash(
      {{"db.t__chsync_truncated", {5, engine}}, {"db.t__chsync_truncating", {0, engine}}, {"db.other", {3}}},
      [&](Destination& d) { return d.TruncateDestination(target_, "t"); }, emptied);
  // Killed inside the second rename: the empty table's folder is at `t`, which no table owns.
  auto folder_at_name = [&](Destination& d) {
    if (!catalog_.tables.contains("db.t")) catalog_.orphan_folders = {"db.t"};  // until a table takes it
    return d.TruncateDestination(target_, "t");
  };
  ConvergesFromEveryCrash(
      {{"db.t__chsync_truncated", {5, engine}}, {"db.t__chsync_truncating", {0, engine}}, {"db.other", {3}}},
      folder_at_name, emptied);
  // Every name taken by a folder: refused, naming them, with nothing changed.
  catalog_ = Catalog{{{"db.t", {2, engine}}}, {}, -1};
  for (const char* n : {"", "_2", "_3", "_4", "_5"})
    catalog_.orphan_folders.insert(std::string("db.t__chsync_truncated") + n);
  Status refused = Open()->TruncateDestination(target_, "t");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("t__chsync_truncated … t__chsync_truncated_5"), std::string::npos)
      << refused.error().message();
  EXPECT_EQ(catalog_.tables.at("db.t").rows, 2);
}

TEST_F(DestinationTest, MakingRoomMovesAKeptTableAsideOnceEvenAcrossACrash) {
  ConvergesFromEveryCrash({{"db.t", {4}}}, [&](Destination& d) { return d.MakeRoom(target_, "t", "3_1234"); },
                          {{"db.t__dropped_3_1234", {4}}});
  // An empty table is dropped, not kept aside.
  ConvergesFromEveryCrash({{"db.t", {0}}}, [&](Destination& d) { return d.MakeRoom(target_, "t", "3_1234"); },
                          {});
  // Replayed after the new table was made under the name (still empty): the kept one is aside
  // already, and the new one stays.
  ConvergesFromEveryCrash({{"db.t", {0}}, {"db.t__dropped_3_1234", {4}}},
                          [&](Destination& d) { return d.MakeRoom(target_, "t", "3_1234"); },
                          {{"db.t", {0}}, {"db.t__dropped_3_1234", {4}}});
}

TEST_F(DestinationTest, ARenameRunAgainAfterItsStepMovesNothingElse) {
  clickhouse::DdlTarget other = target_;
  other.database = "db2";
  ConvergesFromEveryCrash({{"db.a", {2}}, {"db.b_was", {9}}},
                          [&](Destination& d) { return d.RenameDestination(target_, "a", other, "b"); },
                          {{"db2.b", {2}}, {"db.b_was", {9}}});
  // Run again once done (a replay of the statement): the table that took the name stays.
  catalog_.tables["db.a"] = FakeTable{7};
  std::unique_ptr<Destination> again = Open();
  ASSERT_TRUE(again->RenameDestination(target_, "a", other, "b").ok());
  EXPECT_EQ(catalog_.tables.at("db2.b").rows, 2) << "the renamed table is never replaced";
}

TEST_F(DestinationTest, TheSchemaLogIsCreatedOncePerDatabase) {
  std::unique_ptr<Destination> d = Open();
  ASSERT_TRUE(d->EnsureSchemaLog("db").ok());
  const size_t after_first = catalog_.statements.size();
  EXPECT_GT(after_first, 0u);
  ASSERT_TRUE(d->EnsureSchemaLog("db").ok());
  EXPECT_EQ(catalog_.statements.size(), after_first);
  ASSERT_TRUE(d->EnsureSchemaLog("db2").ok());
  EXPECT_GT(catalog_.statements.size(), after_first);
}

TEST_F(DestinationTest, TheKeysOfEveryTableAreReadInOneQueryUntilAStatementRuns) {
  for (int i = 0; i < 100; ++i) catalog_.tables["db.t" + std::to_string(i)] = {};
  std::unique_ptr<Destination> d = Open();
  clickhouse::DdlTarget target;
  target.database = "db";
  d->PrefetchTableKeys({"db"});
  for (int i = 0; i < 100; ++i) {
    auto keys = d->ReadTableKeys(target, "t" + std::to_string(i));
    ASSERT_TRUE(keys.ok() && keys->has_value());
    EXPECT_EQ((*keys)->sorting_key, "id") << "from the prefetch";
  }
  EXPECT_EQ(catalog_.key_reads, 1);
  auto missing = d->ReadTableKeys(target, "not_there");  // not in the prefetch: asked alone
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  EXPECT_EQ(catalog_.key_reads, 2);
  // A statement may change any table: the prefetch is forgotten.
  ASSERT_TRUE(d->Ddl("CREATE DATABASE IF NOT EXISTS `other`").ok());
  auto again = d->ReadTableKeys(target, "t1");
  ASSERT_TRUE(again.ok() && again->has_value());
  EXPECT_EQ((*again)->sorting_key, "a");
  EXPECT_EQ(catalog_.key_reads, 3);
}

// A rebuild's copy replaces the table (the end of an online rebuild, rebuild.cpp).
TEST_F(DestinationTest, ASwapInConvergesFromACrashBetweenAnyTwoSteps) {
  const FakeTable old_rows{5, "ReplacingMergeTree(_chsync_version) ORDER BY a"};
  const FakeTable copied{9, "ReplacingMergeTree(_chsync_version) ORDER BY (a, b)"};
  const size_t steps = ConvergesFromEveryCrash(
      {{"db.t", old_rows}, {"db.t__chsync_rebuild", copied}, {"db.other", {3}}},
      [&](Destination& d) { return d.SwapIn(target_, "t", "t__chsync_rebuild", "t__chsync_replaced"); },
      {{"db.t", copied}, {"db.other", {3}}});
  // A stale replaced table dropped, the old table renamed aside and the copy renamed in (each after
  // CREATE DATABASE IF NOT EXISTS), the old one dropped.
  EXPECT_EQ(steps, 6u);
}

// `RENAME TABLE t TO _t_del, _t_gho TO t` (gh-ost's cut-over): each rename is a journaled step of the
// statement. A replay after a crash runs only what did not run, and a replay of the whole statement
// runs nothing: the `t` that took the name is never moved again.
TEST_F(DestinationTest, JournaledStepsRunOnceAcrossRestarts) {
  const std::map<std::string, FakeTable> start{{"db.t", {5}}, {"db._t_gho", {8}}};
  const std::map<std::string, FakeTable> expected{{"db._t_del", {5}}, {"db.t", {8}}};
  auto statement = [&](Destination& d, const std::string& state_dir) -> Status {
    CHSYNC_RETURN_IF_ERROR(d.BeginJournaled(state_dir, "binlog.000003", 4));
    CHSYNC_RETURN_IF_ERROR(d.RunStepOnce({"binlog.000003", 1234, "0/rename"}, [&] {
      return d.RenameDestination(target_, "t", target_, "_t_del");
    }));
    return d.RunStepOnce({"binlog.000003", 1234, "1/rename"},
                         [&] { return d.RenameDestination(target_, "_t_gho", target_, "t"); });
  };
  // Each rename is two statements (CREATE DATABASE IF NOT EXISTS, RENAME): a crash past 0 to 3.
  for (int k = 0; k <= 4; ++k) {
    test::TempDir state;
    catalog_ = Catalog{start, {}, k};
    Status cut = statement(*Open(), state.path());
    EXPECT_EQ(cut.ok(), k == 4) << "k=" << k;
    catalog_.budget = -1;
    Status finished = statement(*Open(), state.path());
    ASSERT_TRUE(finished.ok()) << "k=" << k << ": " << finished.error().message();
    EXPECT_EQ(catalog_.tables, expected) << "after a crash past " << k << " statements";
    // A later statement drops `_t_del`, and a crash comes before the checkpoint after both: the
    // rename is replayed, with a `t` there to rename again and no `_t_del` in the way. Nothing runs.
    catalog_.tables.erase("db._t_del");
    const size_t statements = catalog_.statements.size();
    ASSERT_TRUE(statement(*Open(), state.path()).ok());
    EXPECT_EQ(catalog_.statements.size(), statements) << "k=" << k;
    EXPECT_EQ(catalog_.tables, (std::map<std::string, FakeTable>{{"db.t", {8}}})) << "k=" << k;
  }
  // Once a checkpoint past the statement is saved, its steps are forgotten: the same coordinates
  // (another binlog with the same file names, after RESET MASTER) run again.
  test::TempDir state;
  catalog_ = Catalog{start, {}, -1};
  {
    std::unique_ptr<Destination> d = Open();
    ASSERT_TRUE(statement(*d, state.path()).ok());
    ASSERT_TRUE(d->BeginJournaled(state.path(), "binlog.000003", 2000).ok());
  }
  std::unique_ptr<Destination> later = Open();
  ASSERT_TRUE(later->BeginJournaled(state.path(), "binlog.000003", 2000).ok());
  int ran = 0;
  ASSERT_TRUE(later
                  ->RunStepOnce({"binlog.000003", 1234, "0/rename"},
                                [&] {
                                  ++ran;
                                  return Status::Ok();
                                })
                  .ok());
  EXPECT_EQ(ran, 1);
}

}  // namespace
}  // namespace chsync::pipe
