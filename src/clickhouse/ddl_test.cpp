#include "clickhouse/ddl.h"

#include <gtest/gtest.h>

#include "clickhouse/test_columns.h"

namespace chsync::clickhouse {
namespace {

using schema::ColumnType;
using schema::DefaultKind;
using testing::Col;

const Capabilities kOld = FromVersion({18, 16, 1, 0});
const Capabilities kNew = FromVersion({26, 7, 3, 1});

schema::TableSchema Orders() {
  schema::TableSchema t;
  t.database = "shop";
  t.name = "orders";
  t.columns = {Col("id", ColumnType::kBigInt).Unsigned().NotNull(),
               Col("select", ColumnType::kVarChar).Length(10),
               Col("created", ColumnType::kDateTime).Fsp(3).NotNull()};
  t.primary_key = {"id"};
  t.RenumberColumns();
  return t;
}

TEST(DdlTest, CreateTableOnNewServer) {
  DdlTarget target{.database = "dest"};
  auto sql = CreateTable(Orders(), kNew, target);
  ASSERT_TRUE(sql.ok()) << sql.error().message();
  EXPECT_EQ(*sql,
            "CREATE TABLE IF NOT EXISTS `dest`.`orders`\n(\n"
            "    `id` UInt64,\n"
            "    `select` Nullable(String),\n"
            "    `created` DateTime64(3, 'UTC'),\n"
            "    `_chsync_version` UInt64,\n"
            "    `_chsync_is_deleted` UInt8,\n"
            "    `_chsync_synced_at` DateTime64(3) DEFAULT now64(3)\n"
            ")\nENGINE = ReplacingMergeTree(`_chsync_version`, `_chsync_is_deleted`)\n"
            "ORDER BY (`id`)");
}

TEST(DdlTest, CreateTableOnOldServer) {
  DdlTarget target{.database = "dest"};
  auto sql = CreateTable(Orders(), kOld, target);
  ASSERT_TRUE(sql.ok()) << sql.error().message();
  EXPECT_NE(sql->find("`created` DateTime('UTC'),"), std::string::npos) << *sql;
  EXPECT_NE(sql->find("`_chsync_synced_at` DateTime DEFAULT now()"), std::string::npos) << *sql;
  EXPECT_NE(sql->find("ENGINE = ReplacingMergeTree(`_chsync_version`)\n"), std::string::npos) << *sql;
}

TEST(DdlTest, CreateTableOnCluster) {
  DdlTarget target{.database = "dest", .cluster = "main"};
  auto sql = CreateTable(Orders(), kNew, target);
  ASSERT_TRUE(sql.ok());
  EXPECT_NE(sql->find("CREATE TABLE IF NOT EXISTS `dest`.`orders` ON CLUSTER `main`"), std::string::npos)
      << *sql;
  EXPECT_NE(sql->find("ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/dest/orders', "
                      "'{replica}', `_chsync_version`, `_chsync_is_deleted`)"),
            std::string::npos)
      << *sql;
  EXPECT_EQ(CreateDatabase(target), "CREATE DATABASE IF NOT EXISTS `dest` ON CLUSTER `main`");
}

TEST(DdlTest, DurableTableOnNewServerHasFsyncSettings) {
  DdlTarget target{.database = "dest", .durable = true};
  auto sql = CreateTable(Orders(), kNew, target);
  ASSERT_TRUE(sql.ok()) << sql.error().message();
  EXPECT_EQ(*sql,
            "CREATE TABLE IF NOT EXISTS `dest`.`orders`\n(\n"
            "    `id` UInt64,\n"
            "    `select` Nullable(String),\n"
            "    `created` DateTime64(3, 'UTC'),\n"
            "    `_chsync_version` UInt64,\n"
            "    `_chsync_is_deleted` UInt8,\n"
            "    `_chsync_synced_at` DateTime64(3) DEFAULT now64(3)\n"
            ")\nENGINE = ReplacingMergeTree(`_chsync_version`, `_chsync_is_deleted`)\n"
            "ORDER BY (`id`)\n"
            "SETTINGS fsync_after_insert = 1, fsync_part_directory = 1");
  DdlTarget clustered{.database = "dest", .cluster = "main", .durable = true};
  auto replicated = CreateTable(Orders(), kNew, clustered);
  ASSERT_TRUE(replicated.ok()) << replicated.error().message();
  EXPECT_TRUE(
      replicated->ends_with("`_chsync_is_deleted`)\nORDER BY (`id`)\n"
                            "SETTINGS fsync_after_insert = 1, fsync_part_directory = 1"))
      << *replicated;
}

TEST(DdlTest, DurableTableOnOldServerIsRefused) {
  DdlTarget target{.database = "dest", .durable = true};
  auto sql = CreateTable(Orders(), kOld, target);
  ASSERT_FALSE(sql.ok());
  EXPECT_EQ(sql.error().kind(), ErrorKind::kUnsupported);
  EXPECT_EQ(sql.error().message(),
            "table shop.orders: ClickHouse 18.16 cannot fsync inserted parts (fsync_after_insert needs "
            "21.1 or later): upgrade, or use replicas with insert_quorum (?insert_quorum=2 in the "
            "destination URL)");
  // 20.6 to 20.12 accept the settings, but they took no effect before 21.1.
  auto accepted_but_ignored = CreateTable(Orders(), FromVersion({20, 12, 8, 5}), target);
  ASSERT_FALSE(accepted_but_ignored.ok());
  EXPECT_NE(accepted_but_ignored.error().message().find("ClickHouse 20.12 cannot"), std::string::npos)
      << accepted_but_ignored.error().message();
  // Without `durable`, the old server gets its table and no SETTINGS.
  auto plain = CreateTable(Orders(), kOld, {.database = "dest"});
  ASSERT_TRUE(plain.ok()) << plain.error().message();
  EXPECT_EQ(plain->find("SETTINGS"), std::string::npos) << *plain;
}

TEST(DdlTest, MakeDurableAltersAnExistingTable) {
  EXPECT_EQ(MakeDurable("orders", {.database = "dest"}),
            "ALTER TABLE `dest`.`orders` MODIFY SETTING fsync_after_insert = 1, fsync_part_directory = 1");
  EXPECT_EQ(MakeDurable("orders", {.database = "dest", .cluster = "main"}),
            "ALTER TABLE `dest`.`orders` ON CLUSTER `main` MODIFY SETTING fsync_after_insert = 1, "
            "fsync_part_directory = 1");
}

TEST(DdlTest, MetadataColumnNameInTheSourceIsRefused) {
  schema::TableSchema t = Orders();
  t.columns.push_back(Col("_chsync_version", ColumnType::kInt));
  auto sql = CreateTable(t, kNew, {.database = "d"});
  ASSERT_FALSE(sql.ok());
  EXPECT_EQ(sql.error().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(sql.error().message().find("_chsync_version"), std::string::npos);
}

TEST(DdlTest, SortingKeyRules) {
  schema::TableSchema t;
  t.name = "t";
  t.columns = {Col("a", ColumnType::kInt), Col("b", ColumnType::kInt).NotNull(),
               Col("c", ColumnType::kInt).NotNull()};
  t.primary_key = {"c", "b"};
  EXPECT_EQ(ChooseSortingKey(t).columns, (std::vector<std::string>{"c", "b"}));
  t.primary_key.clear();
  t.unique_keys = {{"u_nullable", {"a"}}, {"u_ok", {"b"}}};
  SortingKey unique = ChooseSortingKey(t);
  EXPECT_EQ(unique.columns, (std::vector<std::string>{"b"}));
  EXPECT_FALSE(unique.full_row);
  t.unique_keys = {{"u_nullable", {"a"}}};
  SortingKey full = ChooseSortingKey(t);
  EXPECT_TRUE(full.full_row);
  EXPECT_EQ(full.columns, (std::vector<std::string>{"a", "b", "c"}));
  auto sql = CreateTable(t, kNew, {.database = "d"});
  ASSERT_TRUE(sql.ok());
  EXPECT_NE(sql->find("ORDER BY (isNull(`a`), assumeNotNull(`a`), `b`, `c`)"), std::string::npos) << *sql;
}

TEST(DdlTest, AddColumnPositionsAndDefaults) {
  DdlTarget target{.database = "d"};
  schema::Column c = Col("n", ColumnType::kInt).NotNull().Default(DefaultKind::kNumber, "-5");
  EXPECT_EQ(*AddColumn("t", c, "id", kNew, target),
            "ALTER TABLE `d`.`t` ADD COLUMN IF NOT EXISTS `n` Int32 DEFAULT -5 AFTER `id`");
  EXPECT_EQ(*AddColumn("t", c, "id", kOld, target),
            "ALTER TABLE `d`.`t` ADD COLUMN `n` Int32 DEFAULT -5 AFTER `id`");
  EXPECT_EQ(*AddColumn("t", c, "", kNew, target),
            "ALTER TABLE `d`.`t` ADD COLUMN IF NOT EXISTS `n` Int32 DEFAULT -5 FIRST");
  EXPECT_EQ(*AddColumn("t", c, "", kOld, target), "ALTER TABLE `d`.`t` ADD COLUMN `n` Int32 DEFAULT -5");
  DdlTarget clustered{.database = "d", .cluster = "c1"};
  EXPECT_EQ(*AddColumn("t", c, "id", kOld, clustered),
            "ALTER TABLE `d`.`t` ON CLUSTER `c1` ADD COLUMN `n` Int32 DEFAULT -5 AFTER `id`");
}

/// A table with a String, a Nullable String, a number and a date to hang options on.
schema::TableSchema Events() {
  schema::TableSchema t;
  t.database = "shop";
  t.name = "events";
  t.columns = {Col("id", ColumnType::kBigInt).Unsigned().NotNull(),
               Col("kind", ColumnType::kVarChar).Length(20).NotNull().Default(DefaultKind::kString, "view"),
               Col("note", ColumnType::kText), Col("day", ColumnType::kDate).NotNull(),
               Col("n", ColumnType::kInt).NotNull()};
  t.primary_key = {"id"};
  t.RenumberColumns();
  return t;
}

CreateOptions EventOptions() {
  CreateOptions o;
  o.table = "events_v2";
  o.column_names = {{"id", "event_id"}, {"NOTE", "comment"}};
  o.columns = {{"kind", {"ZSTD(3)", true}}, {"note", {"", true}}, {"n", {"Delta, LZ4", false}}};
  o.order_by = {"kind", "event_id"};
  o.partition_by = "toYYYYMM(day)";
  o.ttl = "day + INTERVAL 1 YEAR";
  o.settings = {{"index_granularity", "4096"}, {"storage_policy", "'hot_cold'"}};
  return o;
}

TEST(DdlTest, CreateTableWithOptions) {
  DdlTarget target{.database = "analytics", .durable = true};
  auto sql = CreateTable(Events(), kNew, target, EventOptions());
  ASSERT_TRUE(sql.ok()) << sql.error().message();
  EXPECT_EQ(*sql,
            "CREATE TABLE IF NOT EXISTS `analytics`.`events_v2`\n(\n"
            "    `event_id` UInt64,\n"
            "    `kind` LowCardinality(String) DEFAULT 'view' CODEC(ZSTD(3)),\n"
            "    `comment` LowCardinality(Nullable(String)),\n"
            "    `day` Date32,\n"
            "    `n` Int32 CODEC(Delta, LZ4),\n"
            "    `_chsync_version` UInt64,\n"
            "    `_chsync_is_deleted` UInt8,\n"
            "    `_chsync_synced_at` DateTime64(3) DEFAULT now64(3)\n"
            ")\nENGINE = ReplacingMergeTree(`_chsync_version`, `_chsync_is_deleted`)\n"
            "PARTITION BY toYYYYMM(day)\n"
            "ORDER BY (kind, event_id)\n"
            "TTL day + INTERVAL 1 YEAR\n"
            "SETTINGS fsync_after_insert = 1, fsync_part_directory = 1, index_granularity = 4096, "
            "storage_policy = 'hot_cold'");
  // On a cluster the replication path names the destination table.
  auto replicated = CreateTable(Events(), kNew, {.database = "analytics", .cluster = "main"}, EventOptions());
  ASSERT_TRUE(replicated.ok()) << replicated.error().message();
  EXPECT_NE(replicated->find("CREATE TABLE IF NOT EXISTS `analytics`.`events_v2` ON CLUSTER `main`\n"),
            std::string::npos);
  EXPECT_NE(
      replicated->find("ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/analytics/events_v2', "),
      std::string::npos)
      << *replicated;
}

TEST(DdlTest, DefaultOptionsChangeNothing) {
  DdlTarget target{.database = "dest"};
  EXPECT_EQ(*CreateTable(Orders(), kNew, target, CreateOptions{}), *CreateTable(Orders(), kNew, target));
  EXPECT_EQ(*CreateTable(Orders(), kOld, target, CreateOptions{}), *CreateTable(Orders(), kOld, target));
}

TEST(DdlTest, DestinationLayoutIsWhatCreateTableWrites) {
  auto layout = DestinationLayout(Events(), kNew, {.database = "analytics"}, EventOptions());
  ASSERT_TRUE(layout.ok()) << layout.error().message();
  EXPECT_EQ(layout->database, "analytics");
  EXPECT_EQ(layout->table, "events_v2");
  ASSERT_EQ(layout->columns.size(), 8u);
  EXPECT_EQ(layout->columns[1],
            (TableLayout::Column{"kind", "LowCardinality(String)", "'view'", "ZSTD(3)", "kind"}));
  EXPECT_EQ(layout->columns[2],
            (TableLayout::Column{"comment", "LowCardinality(Nullable(String))", "", "", "note"}));
  EXPECT_EQ(layout->columns[7],
            (TableLayout::Column{"_chsync_synced_at", "DateTime64(3)", "now64(3)", "", ""}));
  EXPECT_EQ(layout->engine, "ReplacingMergeTree");
  EXPECT_EQ(layout->engine_columns, (std::vector<std::string>{"_chsync_version", "_chsync_is_deleted"}));
  EXPECT_EQ(layout->order_by, (std::vector<std::string>{"kind", "event_id"}));

  auto plain = DestinationLayout(Orders(), kOld, {.database = "d", .cluster = "c"});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->engine, "ReplicatedReplacingMergeTree");
  EXPECT_EQ(plain->engine_columns, (std::vector<std::string>{"_chsync_version"}));
  EXPECT_EQ(plain->order_by, (std::vector<std::string>{"`id`"}));
  EXPECT_EQ(plain->columns.back(), (TableLayout::Column{"_chsync_synced_at", "DateTime", "now()", "", ""}));
}

TEST(DdlTest, OptionsTheServerLacksAreRefusedNamingThem) {
  struct Case {
    Capabilities caps;
    CreateOptions options;
    const char* message;
  };
  CreateOptions codec;
  codec.columns = {{"n", {"ZSTD(3)", false}}};
  CreateOptions ttl;
  ttl.ttl = "day + INTERVAL 1 DAY";
  CreateOptions low_cardinality;
  low_cardinality.columns = {{"note", {"", true}}};
  const Case cases[] = {
      {kOld, codec,
       "table shop.events: column n: CODEC needs ClickHouse 19.1 or later, and the destination is ClickHouse "
       "18.16: "
       "remove the option from table_options, or upgrade ClickHouse"},
      {kOld, ttl,
       "table shop.events: TTL needs ClickHouse 19.6 or later, and the destination is ClickHouse 18.16: "
       "remove the "
       "option from table_options, or upgrade ClickHouse"},
      {FromVersion({19, 5, 4, 0}), ttl,
       "table shop.events: TTL needs ClickHouse 19.6 or later, and the destination is ClickHouse 19.5: "
       "remove the "
       "option from table_options, or upgrade ClickHouse"},
      {kOld, low_cardinality,
       "table shop.events: column note: LowCardinality needs ClickHouse 19.3 or later, and the destination "
       "is "
       "ClickHouse 18.16 (18.16 has it only behind allow_experimental_low_cardinality_type, which chsync "
       "does not "
       "set): remove the option from table_options, or upgrade ClickHouse"},
  };
  for (const Case& c : cases) {
    auto sql = CreateTable(Events(), c.caps, {.database = "d"}, c.options);
    ASSERT_FALSE(sql.ok()) << c.message;
    EXPECT_EQ(sql.error().kind(), ErrorKind::kUnsupported);
    EXPECT_EQ(sql.error().message(), c.message);
  }
  // The releases that have them take them.
  EXPECT_TRUE(CreateTable(Events(), FromVersion({19, 1, 6, 0}), {.database = "d"}, codec).ok());
  EXPECT_TRUE(CreateTable(Events(), FromVersion({19, 3, 3, 0}), {.database = "d"}, low_cardinality).ok());
  EXPECT_TRUE(CreateTable(Events(), FromVersion({19, 6, 2, 11}), {.database = "d"}, ttl).ok());
  // PARTITION BY, ORDER BY and SETTINGS work on 18.16.
  CreateOptions old_ok;
  old_ok.partition_by = "toYYYYMM(day)";
  old_ok.order_by = {"n", "id"};
  old_ok.settings = {{"index_granularity", "4096"}};
  auto sql = CreateTable(Events(), kOld, {.database = "d"}, old_ok);
  ASSERT_TRUE(sql.ok()) << sql.error().message();
  EXPECT_TRUE(
      sql->ends_with(")\nENGINE = ReplacingMergeTree(`_chsync_version`)\nPARTITION BY toYYYYMM(day)\n"
                     "ORDER BY (n, id)\nSETTINGS index_granularity = 4096"))
      << *sql;
}

TEST(DdlTest, OptionsThatContradictTheTable) {
  CreateOptions number;
  number.columns = {{"n", {"", true}}};
  auto sql = CreateTable(Events(), kNew, {.database = "d"}, number);
  ASSERT_FALSE(sql.ok());
  EXPECT_EQ(sql.error().kind(), ErrorKind::kConfig);
  EXPECT_EQ(
      sql.error().message(),
      "table shop.events: column n: low_cardinality needs a column stored as String, and this one is Int32 "
      "(ClickHouse refuses LowCardinality of numbers, dates and enums without "
      "allow_suspicious_low_cardinality_types)");

  CreateOptions durable_again;
  durable_again.settings = {{"fsync_after_insert", "0"}};
  sql = CreateTable(Events(), kNew, {.database = "d", .durable = true}, durable_again);
  ASSERT_FALSE(sql.ok());
  EXPECT_EQ(sql.error().kind(), ErrorKind::kConfig);
  EXPECT_EQ(
      sql.error().message(),
      "table shop.events: setting fsync_after_insert is chsync's own with durable_inserts; remove it from "
      "table_options");
  EXPECT_TRUE(CreateTable(Events(), kNew, {.database = "d"}, durable_again).ok());  // not durable: the user's

  CreateOptions same_name;
  same_name.column_names = {{"n", "kind"}};
  sql = CreateTable(Events(), kNew, {.database = "d"}, same_name);
  ASSERT_FALSE(sql.ok());
  EXPECT_EQ(sql.error().message(),
            "table shop.events: columns kind and n would both be the ClickHouse column kind");

  CreateOptions metadata;
  metadata.column_names = {{"n", "_chsync_version"}};
  sql = CreateTable(Events(), kNew, {.database = "d"}, metadata);
  ASSERT_FALSE(sql.ok());
  EXPECT_EQ(sql.error().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(sql.error().message().find("_chsync_version"), std::string::npos);
}

TEST(DdlTest, OptionsFoundBySourceOrClickHouseName) {
  CreateOptions o = EventOptions();
  EXPECT_EQ(o.ClickHouseName("Id"), "event_id");
  EXPECT_EQ(o.ClickHouseName("event_id"), "event_id");
  EXPECT_EQ(o.ClickHouseName("kind"), "kind");
  ASSERT_NE(o.Column("NOTE"), nullptr);
  EXPECT_EQ(o.Column("comment"), o.Column("note"));
  EXPECT_EQ(o.Column("Comment"), nullptr);  // ClickHouse names are case-sensitive
  EXPECT_EQ(o.Column("day"), nullptr);
}

TEST(DdlTest, AddAndModifyColumnKeepTheColumnOptions) {
  DdlTarget target{.database = "d"};
  CreateOptions o = EventOptions();
  schema::Column note = Col("note", ColumnType::kText);
  EXPECT_EQ(
      *AddColumn("events_v2", note, "id", kNew, target, o),
      "ALTER TABLE `d`.`events_v2` ADD COLUMN IF NOT EXISTS `comment` LowCardinality(Nullable(String)) AFTER "
      "`event_id`");
  schema::Column kind =
      Col("kind", ColumnType::kVarChar).Length(50).NotNull().Default(DefaultKind::kString, "x");
  EXPECT_EQ(
      *AddColumn("events_v2", kind, "", kOld, target, CreateOptions{.columns = {{"kind", {"", false}}}}),
      "ALTER TABLE `d`.`events_v2` ADD COLUMN `kind` String DEFAULT 'x'");
  auto old = AddColumn("events_v2", kind, "", kOld, target, o);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.error().kind(), ErrorKind::kUnsupported);

  schema::Column n = Col("n", ColumnType::kBigInt).NotNull();
  EXPECT_EQ(*ModifyColumn("events_v2", n, kNew, target, o, "7"),
            "ALTER TABLE `d`.`events_v2` MODIFY COLUMN `n` Int64 DEFAULT 7 CODEC(Delta, LZ4)");
  EXPECT_EQ(
      *ModifyColumn("events_v2", Col("kind", ColumnType::kText), kNew, target, o),
      "ALTER TABLE `d`.`events_v2` MODIFY COLUMN `kind` LowCardinality(Nullable(String)) CODEC(ZSTD(3))");
  EXPECT_EQ(*ModifyColumn("events_v2", Col("id", ColumnType::kBigInt).NotNull(), kNew, target, o),
            "ALTER TABLE `d`.`events_v2` MODIFY COLUMN `event_id` Int64");
}

TEST(DdlTest, DefaultExpressionsOnlyForPortableLiterals) {
  struct Case {
    schema::Column column;
    std::optional<std::string> expected;
  };
  const Case cases[] = {
      {Col("a", ColumnType::kInt).Default(DefaultKind::kNumber, "+7"), "7"},
      {Col("a", ColumnType::kTinyInt).Default(DefaultKind::kNumber, "300"), std::nullopt},
      {Col("a", ColumnType::kTinyInt).Default(DefaultKind::kBool, "TRUE"), "1"},
      {Col("a", ColumnType::kInt).Default(DefaultKind::kString, "42"), "42"},
      {Col("a", ColumnType::kInt).Default(DefaultKind::kNumber, "1.5"), std::nullopt},
      {Col("a", ColumnType::kBit).Length(8).Default(DefaultKind::kBit, "101"), "5"},
      {Col("a", ColumnType::kDecimal).Precision(10, 2).Default(DefaultKind::kNumber, "1.50"),
       "CAST('1.50' AS Decimal(10, 2))"},
      {Col("a", ColumnType::kDecimal).Precision(10, 2).Default(DefaultKind::kNumber, "1.505"), std::nullopt},
      {Col("a", ColumnType::kDouble).Default(DefaultKind::kNumber, "1e5"), "CAST('1e5' AS Float64)"},
      {Col("a", ColumnType::kVarChar).Default(DefaultKind::kString, "it's"), "'it\\'s'"},
      {Col("a", ColumnType::kVarBinary).Default(DefaultKind::kHex, "00FF"), "'\\x00\xff'"},
      {Col("a", ColumnType::kEnum).Labels({"x", "y"}).Default(DefaultKind::kString, "Y"), "'y'"},
      {Col("a", ColumnType::kEnum).Labels({"x", "y"}).Default(DefaultKind::kString, "z"), std::nullopt},
      {Col("a", ColumnType::kSet).Labels({"a", "b", "c"}).Default(DefaultKind::kString, "c,a"), "'a,c'"},
      {Col("a", ColumnType::kDate).Default(DefaultKind::kString, "2020-02-29"),
       "CAST('2020-02-29' AS Date32)"},
      {Col("a", ColumnType::kDate).Default(DefaultKind::kString, "0000-00-00"), std::nullopt},
      {Col("a", ColumnType::kDateTime).Fsp(6).Default(DefaultKind::kString, "2020-01-02 03:04:05.5"),
       "CAST('2020-01-02 03:04:05.5' AS DateTime64(6, 'UTC'))"},
      {Col("a", ColumnType::kDateTime).Default(DefaultKind::kCurrentTimestamp, "CURRENT_TIMESTAMP"),
       std::nullopt},
      {Col("a", ColumnType::kInt).Default(DefaultKind::kExpression, "(1 + 1)"), std::nullopt},
      {Col("a", ColumnType::kInt).Default(DefaultKind::kNull, ""), std::nullopt},
      {Col("a", ColumnType::kJson).Default(DefaultKind::kExpression, "(json_object())"), std::nullopt},
  };
  for (const Case& c : cases) {
    auto mapped = MapColumn(c.column, kNew);
    ASSERT_TRUE(mapped.ok());
    EXPECT_EQ(DefaultExpression(c.column, *mapped), c.expected)
        << c.column.TypeText() << " DEFAULT " << c.column.default_value.text;
  }
}

TEST(DdlTest, ModifyRenameDropTruncate) {
  DdlTarget target{.database = "d"};
  schema::Column c = Col("a b", ColumnType::kInt);
  EXPECT_EQ(*ModifyColumn("t", c, kOld, target), "ALTER TABLE `d`.`t` MODIFY COLUMN `a b` Nullable(Int32)");
  EXPECT_EQ(*RenameColumn("t", "a", "select", kNew, target),
            "ALTER TABLE `d`.`t` RENAME COLUMN `a` TO `select`");
  auto old_rename = RenameColumn("t", "a", "b", kOld, target);
  ASSERT_FALSE(old_rename.ok());
  EXPECT_EQ(old_rename.error().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(old_rename.error().message().find("20.4"), std::string::npos);
  EXPECT_EQ(DropTable("t", target), "DROP TABLE IF EXISTS `d`.`t`");
  EXPECT_EQ(TruncateTable("t", target), "TRUNCATE TABLE IF EXISTS `d`.`t`");
  EXPECT_EQ(RenameTable("t", "u", target), "RENAME TABLE `d`.`t` TO `d`.`u`");
  EXPECT_EQ(InsertPrefix("d", "t", {"a", "_chsync_version"}),
            "INSERT INTO `d`.`t` (`a`, `_chsync_version`) FORMAT RowBinary");
}

}  // namespace
}  // namespace chsync::clickhouse
