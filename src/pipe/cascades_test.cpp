#include "pipe/cascades.h"

#include <gtest/gtest.h>

namespace chsync::pipe {
namespace {

clickhouse::MappedType Type(std::string name, bool nullable = false) {
  clickhouse::MappedType t;
  t.type = nullable ? "Nullable(" + name + ")" : std::move(name);
  t.nullable = nullable;
  return t;
}

/// film_category (film_id, category_id, last_update), sorted by (film_id, category_id).
CascadeChild FilmCategory() {
  CascadeChild c;
  c.table = "`db`.`film_category`";
  c.names = {"film_id", "category_id", "last_update", "_chsync_version", "_chsync_is_deleted"};
  c.types = {Type("UInt16"), Type("UInt8"), Type("DateTime")};
  c.fk = {1};
  c.key_moves = true;
  return c;
}

CascadeChange Change(CascadeChange::Kind kind, std::vector<std::string> old_values, uint64_t version,
                     std::vector<std::string> new_values = {}) {
  CascadeChange c;
  c.kind = kind;
  c.old_values = std::move(old_values);
  c.new_values = std::move(new_values);
  c.version = version;
  return c;
}

TEST(CascadeLiteralTest, KeyTextsBecomeLiteralsCastCanRead) {
  EXPECT_EQ(CascadeLiteral("(5)"), "'5'");
  EXPECT_EQ(CascadeLiteral("(-1.50)"), "'-1.50'");
  EXPECT_EQ(CascadeLiteral("('it\\'s')"), "'it\\'s'");
  EXPECT_EQ(CascadeLiteral("('2024-01-02')"), "'2024-01-02'");
  EXPECT_EQ(CascadeLiteral("(NULL)"), std::nullopt);
}

TEST(CascadeStatementsTest, DeletesOfOneEventAreOneTombstoneStatementAtTheirLatestVersion) {
  const std::vector<CascadeChange> changes = {Change(CascadeChange::Kind::kDelete, {"'16'"}, 7),
                                              Change(CascadeChange::Kind::kDelete, {"'3'"}, 8)};
  const std::vector<std::string> sql = CascadeStatements(FilmCategory(), changes);
  ASSERT_EQ(sql.size(), 1u);
  EXPECT_EQ(
      sql[0],
      "INSERT INTO `db`.`film_category` (`film_id`, `category_id`, `last_update`, `_chsync_version`, "
      "`_chsync_is_deleted`) SELECT `film_id`, `category_id`, `last_update`, toUInt64(8), toUInt8(1) FROM "
      "`db`.`film_category` FINAL WHERE `_chsync_is_deleted` = 0 AND `_chsync_version` < 8 AND "
      "((`category_id` = "
      "CAST('16' AS UInt8)) "
      "OR (`category_id` = CAST('3' AS UInt8)))");
}

TEST(CascadeStatementsTest, AnUpdateOfTheKeyWritesTheNewRowsBeforeTheOldOnesTombstones) {
  const std::vector<CascadeChange> changes = {Change(CascadeChange::Kind::kUpdate, {"'16'"}, 9, {"'100'"}),
                                              Change(CascadeChange::Kind::kUpdate, {"'15'"}, 10, {"'16'"})};
  const std::vector<std::string> sql = CascadeStatements(FilmCategory(), changes);
  ASSERT_EQ(sql.size(), 4u) << "one parent row at a time, as InnoDB does";
  EXPECT_NE(sql[0].find("SELECT `film_id`, CAST('100' AS UInt8), `last_update`, toUInt64(9), toUInt8(0)"),
            std::string::npos)
      << sql[0];
  EXPECT_NE(sql[0].find("`category_id` = CAST('16' AS UInt8)"), std::string::npos) << sql[0];
  EXPECT_NE(sql[1].find("SELECT `film_id`, `category_id`, `last_update`, toUInt64(9), toUInt8(1)"),
            std::string::npos)
      << sql[1];
  EXPECT_NE(sql[1].find("`category_id` = CAST('16' AS UInt8)"), std::string::npos) << sql[1];
  EXPECT_NE(sql[2].find("CAST('16' AS UInt8), `last_update`, toUInt64(10)"), std::string::npos) << sql[2];
  EXPECT_NE(sql[3].find("`category_id` = CAST('15' AS UInt8)"), std::string::npos) << sql[3];
}

TEST(CascadeStatementsTest, SetNullOutsideTheSortingKeyReplacesTheRowInPlace) {
  CascadeChild c;
  c.table = "`db`.`c`";
  c.names = {"id", "p_id", "_chsync_version", "_chsync_is_deleted"};
  c.types = {Type("Int32"), Type("Int32", true)};
  c.fk = {1};
  c.key_moves = false;
  const std::vector<CascadeChange> changes = {Change(CascadeChange::Kind::kSetNull, {"'4'"}, 3)};
  const std::vector<std::string> sql = CascadeStatements(c, changes);
  ASSERT_EQ(sql.size(), 1u) << "no tombstone: the row keeps its key and the later version wins";
  EXPECT_NE(sql[0].find("SELECT `id`, CAST(NULL AS Nullable(Int32)), toUInt64(3), toUInt8(0)"),
            std::string::npos)
      << sql[0];
  EXPECT_NE(sql[0].find("`p_id` = CAST('4' AS Int32)"), std::string::npos) << sql[0];
}

TEST(CascadeStatementsTest, ManyRowsAreSplitIntoStatementsOfBoundedSize) {
  std::vector<CascadeChange> changes;
  changes.reserve(450);
  for (int i = 0; i < 450; ++i)
    changes.push_back(Change(CascadeChange::Kind::kDelete, {"'" + std::to_string(i) + "'"}, 100 + i));
  const std::vector<std::string> sql = CascadeStatements(FilmCategory(), changes);
  ASSERT_EQ(sql.size(), 3u);
  EXPECT_NE(sql[0].find("toUInt64(299)"), std::string::npos);
  EXPECT_NE(sql[2].find("toUInt64(549)"), std::string::npos);
  for (const std::string& s : sql) EXPECT_LT(s.size(), 64u * 1024) << "well under max_query_size";
}

}  // namespace
}  // namespace chsync::pipe
