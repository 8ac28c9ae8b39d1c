#include "schema/tracker.h"

#include <gtest/gtest.h>

#include "schema/explain.h"

namespace chsync::schema {
namespace {

Tracker WithTable(const std::string& create, Tracker::Options options = {}) {
  Tracker tracker(options);
  auto r = tracker.ApplySql(create, "db");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return tracker;
}

TEST(TrackerTableMapTest, MatchingMapPasses) {
  Tracker t = WithTable(
      "CREATE TABLE t (id INT, name VARCHAR(10), e ENUM('a'), d DECIMAL(5,2), ts TIMESTAMP(3), b TEXT)");
  EXPECT_TRUE(t.CheckTableMap({"db", "t", {3, 15, 254, 246, 17, 252}, {}}).ok());
  EXPECT_TRUE(
      t.CheckTableMap({"db", "t", {3, 15, 247, 246, 7, 252}, {"ID", "name", "e", "d", "ts", "b"}}).ok());
}

TEST(TrackerTableMapTest, ColumnCountMismatchNamesBothCounts) {
  Tracker t = WithTable("CREATE TABLE t (id INT, name VARCHAR(10))");
  Status s = t.CheckTableMap({"db", "t", {3, 15, 3}, {}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
  EXPECT_NE(s.error().message().find("has 3 columns but the tracked schema has 2"), std::string::npos)
      << s.error().message();
}

TEST(TrackerTableMapTest, TypeMismatchNamesTheColumn) {
  Tracker t = WithTable("CREATE TABLE t (id INT, price DECIMAL(10,2))");
  Status s = t.CheckTableMap({"db", "t", {3, 5}, {}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("column 2 (`price`) has binlog type 5"), std::string::npos)
      << s.error().message();
  EXPECT_NE(s.error().message().find("decimal(10,2)"), std::string::npos);
}

TEST(TrackerTableMapTest, NameMismatchWithFullMetadata) {
  Tracker t = WithTable("CREATE TABLE t (id INT, a INT)");
  Status s = t.CheckTableMap({"db", "t", {3, 3}, {"id", "b"}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("column 2 is `b` but the tracked schema has `a`"), std::string::npos)
      << s.error().message();
}

TEST(TrackerTableMapTest, UntrackedTableIsNotFound) {
  Tracker t;
  Status s = t.CheckTableMap({"db", "nope", {3}, {}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kNotFound);
}

TEST(TrackerTest, FailedStatementLeavesStateUnchanged) {
  Tracker t = WithTable("CREATE TABLE t (a INT, b INT)");
  std::string before = t.Serialize();
  auto r = t.ApplySql("ALTER TABLE t ADD c INT, DROP COLUMN nope", "db");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("cannot DROP `nope`"), std::string::npos) << r.error().message();
  EXPECT_EQ(t.Serialize(), before);
}

TEST(TrackerTest, OrdinalModeMarksShiftingChangesForResync) {
  Tracker::Options minimal;
  minimal.full_metadata = false;
  Tracker t = WithTable("CREATE TABLE t (a INT, b INT, c INT)", minimal);
  auto added_last = t.ApplySql("ALTER TABLE t ADD d INT", "db");
  ASSERT_TRUE(added_last.ok());
  ASSERT_EQ(added_last->changes.size(), 1u);
  EXPECT_FALSE(added_last->changes[0].requires_resync);
  auto added_first = t.ApplySql("ALTER TABLE t ADD e INT FIRST", "db");
  ASSERT_TRUE(added_first.ok());
  EXPECT_TRUE(added_first->changes[0].shifts_positions);
  EXPECT_TRUE(added_first->changes[0].requires_resync);
  auto dropped = t.ApplySql("ALTER TABLE t DROP COLUMN b", "db");
  ASSERT_TRUE(dropped.ok());
  EXPECT_TRUE(dropped->changes[0].requires_resync);
}

TEST(TrackerSerializationTest, RoundTripKeepsAwkwardBytes) {
  Tracker t;
  TableSchema table;
  table.database = "d b%=,";
  table.name = "t\nx\xff";
  Column a;
  a.name = "a b";
  a.type = ColumnType::kEnum;
  a.enum_values = {"", "x,y", "p=q%"};
  a.default_value = DefaultValue{DefaultKind::kString, "line\nbreak \\ 'q'", ""};
  a.nullable = false;
  a.comment = "c o m";
  Column b;
  b.name = "b";
  b.type = ColumnType::kDecimal;
  b.precision = 12;
  b.scale = 3;
  b.is_unsigned = true;
  b.generated = GeneratedKind::kStored;
  b.generation_expression = "`a` + 1";
  table.columns = {a, b};
  table.primary_key = {"a b"};
  table.unique_keys = {Key{"k,1", {"b", "a b"}}};
  t.SetTable(table);
  t.set_position("binlog.000042:1234");
  std::string text = t.Serialize();
  auto copy = Tracker::Deserialize(text);
  ASSERT_TRUE(copy.ok()) << copy.error().message();
  EXPECT_EQ(copy->Serialize(), text);
  EXPECT_EQ(copy->position(), "binlog.000042:1234");
  const TableSchema* original = t.Find(table.database, table.name);
  const TableSchema* loaded = copy->Find(table.database, table.name);
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(*loaded, *original);
}

TEST(TrackerSerializationTest, ForeignKeysRoundTrip) {
  Tracker t = WithTable(
      "CREATE TABLE `c,1` (id INT PRIMARY KEY, `p id` INT, a INT, b INT, "
      "CONSTRAINT `fk=1` FOREIGN KEY (`p id`, a) REFERENCES `other db`.`p%` (`x,y`, z) "
      "ON DELETE SET NULL ON UPDATE CASCADE, FOREIGN KEY (b) REFERENCES q (id) ON DELETE RESTRICT, "
      "FOREIGN KEY (a) REFERENCES q (id) ON UPDATE SET DEFAULT)");
  const TableSchema* original = t.Find("db", "c,1");
  ASSERT_NE(original, nullptr);
  ASSERT_EQ(original->foreign_keys.size(), 3u);
  std::string text = t.Serialize();
  auto copy = Tracker::Deserialize(text);
  ASSERT_TRUE(copy.ok()) << copy.error().message();
  EXPECT_EQ(copy->Serialize(), text);
  const TableSchema* loaded = copy->Find("db", "c,1");
  ASSERT_NE(loaded, nullptr);
  EXPECT_EQ(*loaded, *original);
  const ForeignKey& fk = loaded->foreign_keys[2];
  EXPECT_EQ(fk.name, "fk=1");
  EXPECT_EQ(fk.columns, (std::vector<std::string>{"p id", "a"}));
  EXPECT_EQ(fk.parent_database, "other db");
  EXPECT_EQ(fk.parent_table, "p%");
  EXPECT_EQ(fk.parent_columns, (std::vector<std::string>{"x,y", "z"}));
  EXPECT_EQ(fk.on_delete, ForeignKey::Action::kSetNull);
  EXPECT_EQ(fk.on_update, ForeignKey::Action::kCascade);
  EXPECT_EQ(loaded->foreign_keys[0].on_update, ForeignKey::Action::kNoAction);
  EXPECT_EQ(loaded->foreign_keys[0].on_delete, ForeignKey::Action::kRestrict);
  EXPECT_EQ(loaded->foreign_keys[1].on_update, ForeignKey::Action::kSetDefault);
}

TEST(TrackerSerializationTest, StateWithoutForeignKeysLoads) {
  // Written before foreign keys were tracked: no `foreign` lines.
  auto old = Tracker::Deserialize(
      "chsync-schema 1\nmode full_metadata=1 mariadb=1\n"
      "table database=d name=c engine=InnoDB\ncolumn name=a type=int\nend\n");
  ASSERT_TRUE(old.ok()) << old.error().message();
  ASSERT_NE(old->Find("d", "c"), nullptr);
  EXPECT_TRUE(old->Find("d", "c")->foreign_keys.empty());
  // A later DROP FOREIGN KEY of a key the old state never knew is a note, not an out-of-date table.
  auto dropped = old->ApplySql("ALTER TABLE c DROP FOREIGN KEY c_ibfk_1", "d");
  ASSERT_TRUE(dropped.ok()) << dropped.error().message();
  ASSERT_EQ(dropped->notes.size(), 1u);
  EXPECT_NE(dropped->notes[0].find("c_ibfk_1"), std::string::npos);
}

TEST(TrackerSerializationTest, BadForeignKeyLinesAreErrors) {
  std::string head = "chsync-schema 1\ntable database=d name=c\ncolumn name=a type=int\n";
  auto action = Tracker::Deserialize(head + "foreign name=f columns=a on_delete=EXPLODE\nend\n");
  ASSERT_FALSE(action.ok());
  EXPECT_NE(action.error().message().find("line 4: unknown foreign key action 'EXPLODE'"), std::string::npos)
      << action.error().message();
  EXPECT_FALSE(Tracker::Deserialize(head + "foreign name=f what=1\nend\n").ok());
  EXPECT_FALSE(Tracker::Deserialize("chsync-schema 1\nforeign name=f\n").ok());
}

TEST(TrackerSerializationTest, SingleEmptyEnumValueRoundTrips) {
  Tracker t = WithTable("CREATE TABLE t (e ENUM(''))");
  auto copy = Tracker::Deserialize(t.Serialize());
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ(copy->Find("db", "t")->columns[0].enum_values, std::vector<std::string>{""});
}

TEST(TrackerSerializationTest, CorruptInputIsAnErrorNamingTheLine) {
  EXPECT_FALSE(Tracker::Deserialize("").ok());
  EXPECT_FALSE(Tracker::Deserialize("not a schema\n").ok());
  auto bad_record = Tracker::Deserialize("chsync-schema 1\nwhat x=1\n");
  ASSERT_FALSE(bad_record.ok());
  EXPECT_NE(bad_record.error().message().find("line 2"), std::string::npos);
  auto column_outside = Tracker::Deserialize("chsync-schema 1\ncolumn name=a type=int\n");
  ASSERT_FALSE(column_outside.ok());
  auto unterminated =
      Tracker::Deserialize("chsync-schema 1\ntable database=d name=t\ncolumn name=a type=int\n");
  ASSERT_FALSE(unterminated.ok());
  EXPECT_NE(unterminated.error().message().find("missing 'end'"), std::string::npos);
  EXPECT_FALSE(
      Tracker::Deserialize("chsync-schema 1\ntable name=t\ncolumn name=a type=nonsense\nend\n").ok());
  EXPECT_FALSE(Tracker::Deserialize("chsync-schema 1\ntable name=t\ncolumn name=a%G1 type=int\nend\n").ok());
  EXPECT_FALSE(
      Tracker::Deserialize("chsync-schema 1\ntable name=t\ncolumn name=a length=x type=int\nend\n").ok());
  EXPECT_FALSE(Tracker::Deserialize("chsync-schema 1\ntable name=t\ncolumn name=a%4\nend\n").ok());
}

TEST(TrackerTest, GhostSwapReportsTheReplacedColumns) {
  Tracker t = WithTable("CREATE TABLE t (id INT PRIMARY KEY, a INT)");
  ASSERT_TRUE(t.ApplySql("CREATE TABLE _t_gho LIKE t", "db").ok());
  ASSERT_TRUE(t.ApplySql("ALTER TABLE _t_gho ADD COLUMN b VARCHAR(3) DEFAULT 'x'", "db").ok());
  auto swap = t.ApplySql("RENAME TABLE t TO _t_del, _t_gho TO t", "db");
  ASSERT_TRUE(swap.ok()) << swap.error().message();
  std::string out;
  for (const SchemaChange& c : swap->changes) out += ExplainChange(c);
  EXPECT_EQ(out,
            "table_renamed db._t_del from db.t\n"
            "table_renamed db.t from db._t_gho\n"
            "table_replaced db.t from db._t_gho (db.t now holds the table that was db._t_gho)\n"
            "column_added db.t b varchar(3) default='x' position=3 after=a default='x'\n");
  ASSERT_NE(t.Find("db", "t"), nullptr);
  EXPECT_EQ(t.Find("db", "t")->columns.size(), 3u);
}

TEST(TrackerTest, ModifyOfAPrimaryKeyColumnKeepsItNotNull) {
  Tracker t = WithTable("CREATE TABLE t (id INT NOT NULL, a INT, PRIMARY KEY (id))");
  for (const char* alter :
       {"ALTER TABLE t MODIFY id BIGINT UNSIGNED AUTO_INCREMENT",
        "ALTER TABLE t CHANGE id id BIGINT UNSIGNED", "ALTER TABLE t MODIFY id INT DEFAULT NULL"}) {
    SCOPED_TRACE(alter);
    auto r = t.ApplySql(alter, "db");
    ASSERT_TRUE(r.ok()) << r.error().message();
    const TableSchema* table = t.Find("db", "t");
    ASSERT_NE(table, nullptr);
    EXPECT_EQ(table->primary_key, std::vector<std::string>{"id"});
    EXPECT_FALSE(table->columns[0].nullable);
    EXPECT_EQ(table->columns[0].default_value.kind, DefaultKind::kNone);
  }
}

TEST(TrackerTest, AddPrimaryKeyMakesANullableColumnNotNull) {
  Tracker t = WithTable("CREATE TABLE t (id INT, a INT DEFAULT NULL)");
  ASSERT_TRUE(t.Find("db", "t")->columns[0].nullable);
  auto r = t.ApplySql("ALTER TABLE t ADD PRIMARY KEY pk USING BTREE (id)", "db");
  ASSERT_TRUE(r.ok()) << r.error().message();
  const TableSchema* table = t.Find("db", "t");
  EXPECT_EQ(table->primary_key, std::vector<std::string>{"id"});
  EXPECT_FALSE(table->columns[0].nullable);
  EXPECT_TRUE(table->columns[1].nullable);
  ASSERT_EQ(r->changes.size(), 2u);
  EXPECT_EQ(r->changes[0].kind, SchemaChange::Kind::kColumnModified);
  ASSERT_TRUE(r->changes[0].old_column.has_value());
  EXPECT_TRUE(r->changes[0].old_column->nullable);
  EXPECT_FALSE(r->changes[0].column.nullable);
  EXPECT_EQ(r->changes[1].kind, SchemaChange::Kind::kKeysChanged);
}

}  // namespace
}  // namespace chsync::schema
