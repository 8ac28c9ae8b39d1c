// INSERTs checked against the types their rows were encoded for, against a fake ClickHouse whose
// column types change when the test says.

#include "clickhouse/typed_insert.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

namespace chsync::clickhouse {
namespace {

/// Answers system.columns with `types` (the ones after `change_after_inserts` INSERTs: `later`),
/// and records every other statement with its data.
class FakeClickHouse : public Connection {
 public:
  std::string types = "id\tInt64\nd\tDecimal(10, 2)\n_chsync_version\tUInt64\n";
  std::string later;
  int change_after_inserts = -1;
  bool refuse_stage = false;
  /// The INSERT that meets the change is refused (the rows' widths no longer match).
  bool refuse_changed = false;
  std::vector<std::string> statements;
  std::vector<std::string> data;
  /// Called as each INSERT with rows runs (ClickHouse reading them).
  std::function<void()> on_insert;

  std::string Describe() const override { return "fake"; }
  bool embedded() const override { return false; }

 protected:
  Result<std::string> Run(std::string_view sql, std::string_view rows, std::string_view,
                          const RequestOptions&) override {
    if (sql.starts_with("SELECT name, type FROM system.columns")) {
      EXPECT_NE(sql.find("database = 'db' AND table = 't*/x'"), std::string_view::npos) << sql;
      return types;
    }
    statements.emplace_back(sql);
    data.emplace_back(rows);
    if (sql.starts_with("INSERT") && !rows.empty()) {
      if (on_insert) on_insert();
      if (refuse_stage && sql.find("__chsync_staged_") != std::string_view::npos)
        return Error(ErrorKind::kServer, "no room", 53);
      if (change_after_inserts >= 0 && --change_after_inserts < 0) {
        types = later;
        if (refuse_changed) return Error(ErrorKind::kServer, "Cannot read all data", 33);
      }
    }
    return std::string();
  }
};

const std::vector<std::string> kNames = {"id", "d", "_chsync_version"};
const std::vector<std::string> kTypes = {"Int64", "Decimal(10, 2)", "UInt64"};
const std::string kStatement = "INSERT INTO `db`.`t*/x` (`id`, `d`, `_chsync_version`) FORMAT RowBinary";

std::string Prefix() {
  return TypedInsertHeader("db", "t*/x", kNames, kTypes) + kStatement;
}

TEST(TypedInsertTest, TheHeaderIsACommentThatNamesTheTableAndTypesWhateverTheirCharacters) {
  const std::vector<std::string> names = {"a*/b", "tab\there", "100%", "line\nbreak"};
  const std::vector<std::string> types = {"Int64", "Decimal(10, 2)", "Nullable(String)", "DateTime64(6)"};
  const std::string header = TypedInsertHeader("d*/b", "t\tx", names, types);
  ASSERT_TRUE(header.starts_with("/*"));
  // The comment ends once, at its end: nothing of a name closes it early.
  EXPECT_EQ(header.find("*/"), header.size() - 3) << header;
  std::optional<TypedInsert> parsed = ParseTypedInsert(header + kStatement);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->database, "d*/b");
  EXPECT_EQ(parsed->table, "t\tx");
  ASSERT_EQ(parsed->columns.size(), 4u);
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(parsed->columns[i].first, names[i]);
    EXPECT_EQ(parsed->columns[i].second, types[i]);
  }
  EXPECT_EQ(parsed->statement, kStatement);
  // A prefix without one, or with a damaged one, is sent as it is.
  EXPECT_FALSE(ParseTypedInsert(kStatement).has_value());
  EXPECT_FALSE(ParseTypedInsert("/* chsync typed insert\ndb\tt\nx\t%4 */ " + kStatement).has_value());
  EXPECT_FALSE(ParseTypedInsert("/* chsync typed insert\ndb\tt\n" + kStatement).has_value());
}

TEST(TypedInsertTest, RowsOfTheTablesTypesAreInsertedAsTheyAre) {
  FakeClickHouse ch;
  ASSERT_TRUE(ch.Insert(Prefix(), "rows").ok());
  ASSERT_EQ(ch.statements.size(), 1u);
  EXPECT_EQ(ch.statements[0], kStatement) << "the header is not sent";
  EXPECT_EQ(ch.data[0], "rows");
}

TEST(TypedInsertTest, RowsOfTypesTheTableNoLongerHasAreConvertedThroughAStagingTable) {
  FakeClickHouse ch;
  ch.types = "id\tInt64\nd\tDecimal(20, 4)\n_chsync_version\tUInt64\nnew\tString\n";
  ASSERT_TRUE(ch.Insert(Prefix(), "rows").ok());
  ASSERT_EQ(ch.statements.size(), 4u);
  EXPECT_TRUE(ch.statements[0].starts_with("CREATE TABLE `db`.`t*/x__chsync_staged_")) << ch.statements[0];
  EXPECT_NE(
      ch.statements[0].find("(`id` Int64, `d` Decimal(10, 2), `_chsync_version` UInt64) ENGINE = Memory"),
      std::string::npos)
      << ch.statements[0];
  EXPECT_TRUE(ch.statements[1].starts_with("INSERT INTO `db`.`t*/x__chsync_staged_")) << ch.statements[1];
  EXPECT_EQ(ch.data[1], "rows");
  EXPECT_TRUE(ch.statements[2].starts_with(
      "INSERT INTO `db`.`t*/x` (`id`, `d`, `_chsync_version`) SELECT `id`, `d`, `_chsync_version` FROM "
      "`db`.`t*/x__chsync_staged_"))
      << ch.statements[2];
  EXPECT_TRUE(ch.statements[3].starts_with("DROP TABLE IF EXISTS `db`.`t*/x__chsync_staged_"))
      << ch.statements[3];
}

TEST(TypedInsertTest, RowsSentWhileAnotherWriterAlteredTheTableAreSentAgainConverted) {
  FakeClickHouse ch;
  ch.later = "id\tInt64\nd\tDecimal(20, 4)\n_chsync_version\tUInt64\n";
  ch.change_after_inserts = 0;  // altered while the first INSERT ran
  ASSERT_TRUE(ch.Insert(Prefix(), "rows").ok());
  ASSERT_EQ(ch.statements.size(), 5u);
  EXPECT_EQ(ch.statements[0], kStatement);
  EXPECT_TRUE(ch.statements[1].starts_with("CREATE TABLE")) << ch.statements[1];
  EXPECT_TRUE(ch.statements[3].starts_with("INSERT INTO `db`.`t*/x` (")) << ch.statements[3];
}

TEST(TypedInsertTest, RowsRefusedBecauseAnotherWriterAlteredTheTableAreSentAgainConverted) {
  FakeClickHouse ch;
  ch.later = "id\tInt64\nd\tDecimal(20, 4)\n_chsync_version\tUInt64\n";
  ch.change_after_inserts = 0;
  ch.refuse_changed = true;
  ASSERT_TRUE(ch.Insert(Prefix(), "rows").ok());
  ASSERT_EQ(ch.statements.size(), 5u);
  EXPECT_EQ(ch.statements[0], kStatement);
  EXPECT_TRUE(ch.statements[3].starts_with("INSERT INTO `db`.`t*/x` (")) << ch.statements[3];
  // Refused for another reason, with the types unchanged: the error, as it was.
  FakeClickHouse other;
  other.change_after_inserts = 0;
  other.later = other.types;
  other.refuse_changed = true;
  Status s = other.Insert(Prefix(), "rows");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("Cannot read all data"), std::string::npos);
  EXPECT_EQ(other.statements.size(), 1u);
}

TEST(TypedInsertTest, AFailedStagingFailsTheInsertAndDropsTheStagingTable) {
  FakeClickHouse ch;
  ch.types = "id\tInt64\nd\tDecimal(20, 4)\n_chsync_version\tUInt64\n";
  ch.refuse_stage = true;
  Status s = ch.Insert(Prefix(), "rows");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("`d` was Decimal(10, 2) and is now Decimal(20, 4)"), std::string::npos)
      << s.error().message();
  EXPECT_TRUE(ch.statements.back().starts_with("DROP TABLE IF EXISTS")) << ch.statements.back();
}

// A copy's INSERT checked the types and runs; the stream's widening of the table waits for it, and
// an INSERT that comes while the widening waits goes after it.
TEST(TypeGateTest, AChangeWaitsForInsertsThatCheckedTheTypesAndInsertsThatComeLaterWaitForIt) {
  FakeClickHouse ch;
  std::promise<void> inside;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  ch.on_insert = [&] {
    inside.set_value();
    released.wait();
  };
  std::thread copy([&] { EXPECT_TRUE(ch.Insert(Prefix(), "rows").ok()); });
  inside.get_future().wait();

  std::atomic<bool> changing{false};
  std::promise<void> end_change;
  std::thread widen([&, ended = end_change.get_future()]() mutable {
    const TypeGate::Held held = TypeGate::Change("db", "t*/x");
    changing = true;
    ended.wait();
  });
  std::atomic<bool> later_in{false};
  for (int i = 0; i < 1000 && TypeGate::ChangesWaiting("db", "t*/x") == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(TypeGate::ChangesWaiting("db", "t*/x"), 1) << "the change did not wait for the INSERT";
  std::thread later([&] {
    const TypeGate::Held held = TypeGate::Insert("db", "t*/x");
    later_in = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(changing) << "the table was altered while an INSERT of the old types ran";
  EXPECT_FALSE(later_in) << "an INSERT went before the change that waited";

  release.set_value();
  copy.join();
  for (int i = 0; i < 500 && !changing; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(changing);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(later_in) << "an INSERT went in while the types changed";
  end_change.set_value();
  widen.join();
  later.join();
  EXPECT_TRUE(later_in);
  // Another table's gate is its own.
  const TypeGate::Held other = TypeGate::Change("db", "other");
  const TypeGate::Held mine = TypeGate::Insert("db", "t*/x");
}

}  // namespace
}  // namespace chsync::clickhouse
