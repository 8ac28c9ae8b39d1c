#include "policy/adopt.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "clickhouse/capabilities.h"
#include "clickhouse/ddl.h"
#include "policy/mapping.h"
#include "schema/tracker.h"

namespace chsync::pipe {
namespace {

const clickhouse::Capabilities kOld = clickhouse::FromVersion({18, 16, 1, 0});
const clickhouse::Capabilities kNew = clickhouse::FromVersion({26, 7, 3, 1});

schema::TableSchema Orders() {
  schema::Tracker tracker;
  auto applied = tracker.ApplySql(
      "CREATE TABLE orders (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, cust_id INT NOT NULL, email "
      "VARCHAR(100), "
      "status ENUM('new','paid') NOT NULL, created_at DATETIME NOT NULL)",
      "shop");
  EXPECT_TRUE(applied.ok());
  return *tracker.Find("shop", "orders");
}

clickhouse::TableLayout Wanted(const clickhouse::Capabilities& caps,
                               const clickhouse::CreateOptions& options = {},
                               const clickhouse::DdlTarget& target = {.database = "analytics"}) {
  auto layout = clickhouse::DestinationLayout(Orders(), caps, target, options);
  EXPECT_TRUE(layout.ok()) << layout.error().message();
  return layout.ok() ? *layout : clickhouse::TableLayout{};
}

/// What ClickHouse 18.16 reports for the table CreateTable(Orders(), kOld, …) makes (the strings as
/// an 18.16 server printed them for such a table).
ExistingTable AsCreatedOn1816() {
  ExistingTable t;
  t.engine = "ReplacingMergeTree";
  t.engine_full = "ReplacingMergeTree(_chsync_version) ORDER BY id SETTINGS index_granularity = 8192";
  t.sorting_key = "id";
  t.columns = {{"id", "UInt64", "", "", ""},
               {"cust_id", "Int32", "", "", ""},
               {"email", "Nullable(String)", "", "", ""},
               {"status", "Enum8('' = 0, 'new' = 1, 'paid' = 2)", "", "", ""},
               {"created_at", "DateTime('UTC')", "", "", ""},
               {"_chsync_version", "UInt64", "", "", ""},
               {"_chsync_is_deleted", "UInt8", "", "", ""},
               {"_chsync_synced_at", "DateTime", "DEFAULT", "now()", ""}};
  return t;
}

std::string Lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

TEST(AdoptTest, TheTableChsyncWouldCreateIsAdopted) {
  AdoptionReport r = CompareForAdoption(Wanted(kOld), AsCreatedOn1816());
  EXPECT_TRUE(r.ok()) << Lines(r.differences);
  EXPECT_EQ(Lines(r.notes), "");
  EXPECT_TRUE(CheckAdoption(r, "shop.orders", "analytics.orders").ok());
}

TEST(AdoptTest, EveryDifferenceIsNamed) {
  ExistingTable t = AsCreatedOn1816();
  t.engine = "MergeTree";
  t.engine_full =
      "MergeTree PARTITION BY toYYYYMM(created_at) ORDER BY (cust_id, id) SETTINGS index_granularity = 8192";
  t.sorting_key = "cust_id, id";
  t.partition_key = "toYYYYMM(created_at)";
  t.columns[2].type = "String";                         // email NOT NULL in ClickHouse
  t.columns[3].type = "Enum8('' = 0, 'new' = 1)";       // a label missing
  t.columns.erase(t.columns.begin() + 5);               // no _chsync_version
  t.columns.push_back({"note", "String", "", "", ""});  // nobody writes it
  t.columns.push_back({"day", "Date", "MATERIALIZED", "toDate(created_at)", ""});
  t.columns[0].name = "ID";
  AdoptionReport r = CompareForAdoption(Wanted(kOld), t);
  EXPECT_EQ(
      Lines(r.differences),
      "column id: the table has ID (ClickHouse compares names case-sensitively)\n"
      "column email: chsync writes Nullable(String), the table has String\n"
      "column status: chsync writes Enum8('' = 0, 'new' = 1, 'paid' = 2), the table has Enum8('' = 0, 'new' "
      "= 1)\n"
      "missing column _chsync_version UInt64\n"
      "column ID UInt64 is not one chsync writes and has no DEFAULT: every row would hold the type's zero; "
      "drop "
      "it or give it a DEFAULT\n"
      "column note String is not one chsync writes and has no DEFAULT: every row would hold the type's zero; "
      "drop it or give it a DEFAULT\n"
      "engine MergeTree, chsync needs ReplacingMergeTree(_chsync_version)\n"
      "sorting key (cust_id, id) differs from (`id`), which chsync needs\n"
      "partition key toYYYYMM(created_at) differs from (none), which chsync was configured with "
      "(partition_by "
      "in table_options: chsync writes a change of a row's partition as a key change)\n");
  EXPECT_EQ(Lines(r.notes),
            "column day is not replicated; ClickHouse fills it (MATERIALIZED toDate(created_at))\n");
  Status s = CheckAdoption(r, "shop.orders", "analytics.orders");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
  EXPECT_TRUE(s.error().message().starts_with(
      "cannot adopt the ClickHouse table analytics.orders for shop.orders: it differs from what chsync would "
      "create in 9 ways:\n  column id: the table has ID"))
      << s.error().message();
  EXPECT_TRUE(
      s.error().message().ends_with("\nchange the table (or table_options) until they agree; or drop the "
                                    "table and leave adopt out, and chsync "
                                    "creates it"))
      << s.error().message();
}

TEST(AdoptTest, EngineArgumentsAndReplicatedEngines) {
  ExistingTable t = AsCreatedOn1816();
  t.engine_full = "ReplacingMergeTree(created_at) ORDER BY id";
  EXPECT_EQ(Lines(CompareForAdoption(Wanted(kOld), t).differences),
            "engine ReplacingMergeTree(created_at), chsync needs ReplacingMergeTree(_chsync_version)\n");
  // A newer server's table needs the is_deleted argument too.
  ExistingTable newer = AsCreatedOn1816();
  newer.columns[4].type = "DateTime64(0, 'UTC')";
  newer.columns[7] = {"_chsync_synced_at", "DateTime64(3)", "DEFAULT", "now64(3)", ""};
  EXPECT_EQ(Lines(CompareForAdoption(Wanted(kNew), newer).differences),
            "engine ReplacingMergeTree(_chsync_version), chsync needs ReplacingMergeTree(_chsync_version, "
            "_chsync_is_deleted)\n");
  newer.engine_full = "ReplacingMergeTree(`_chsync_version`, `_chsync_is_deleted`) ORDER BY id";
  EXPECT_TRUE(CompareForAdoption(Wanted(kNew), newer).ok());
  // On one server, a Replicated (or Cloud's Shared) table works alike.
  ExistingTable replicated = AsCreatedOn1816();
  replicated.engine = "ReplicatedReplacingMergeTree";
  replicated.engine_full =
      "ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/analytics/orders', '{replica}', "
      "_chsync_version) "
      "ORDER BY id SETTINGS index_granularity = 8192";
  AdoptionReport r = CompareForAdoption(Wanted(kOld), replicated);
  EXPECT_TRUE(r.ok()) << Lines(r.differences);
  EXPECT_EQ(Lines(r.notes),
            "engine ReplicatedReplacingMergeTree where chsync would create ReplacingMergeTree\n");
  // On a cluster, a plain ReplacingMergeTree would not replicate.
  AdoptionReport on_cluster =
      CompareForAdoption(Wanted(kOld, {}, {.database = "analytics", .cluster = "main"}), AsCreatedOn1816());
  EXPECT_EQ(Lines(on_cluster.differences),
            "engine ReplacingMergeTree, chsync needs ReplicatedReplacingMergeTree(_chsync_version)\n");
  EXPECT_TRUE(
      CompareForAdoption(Wanted(kOld, {}, {.database = "analytics", .cluster = "main"}), replicated).ok());
}

TEST(AdoptTest, ConfiguredOptionsAreCompared) {
  clickhouse::CreateOptions options;
  options.table = "orders_v2";
  options.column_names = {{"cust_id", "customer_id"}};
  options.order_by = {"customer_id", "id"};
  options.partition_by = "toYYYYMM(created_at)";
  options.ttl = "created_at + INTERVAL 1 YEAR";
  options.settings = {{"index_granularity", "4096"}};
  options.columns = {{"email", {"ZSTD(3)", true}}};
  ExistingTable t;
  t.engine = "ReplacingMergeTree";
  t.engine_full =
      "ReplacingMergeTree(_chsync_version, _chsync_is_deleted) PARTITION BY toYYYYMM(created_at) ORDER BY "
      "(customer_id, id) TTL created_at + toIntervalYear(1) SETTINGS index_granularity = 4096";
  t.sorting_key = "customer_id, id";
  t.partition_key = "toYYYYMM(created_at)";
  t.codecs_known = true;
  t.columns = {{"id", "UInt64", "", "", ""},
               {"customer_id", "Int32", "", "", ""},
               {"email", "LowCardinality(Nullable(String))", "", "", "CODEC(ZSTD(3))"},
               {"status", "Enum8('' = 0, 'new' = 1, 'paid' = 2)", "", "", ""},
               {"created_at", "DateTime64(0, 'UTC')", "", "", ""},
               {"_chsync_version", "UInt64", "", "", ""},
               {"_chsync_is_deleted", "UInt8", "", "", ""},
               {"_chsync_synced_at", "DateTime64(3)", "DEFAULT", "now64(3)", ""}};
  options.columns.emplace_back("cust_id", clickhouse::ColumnOptions{"Delta, LZ4", false});
  t.columns[1].codec = "CODEC(Delta(4), LZ4)";  // ClickHouse fills in the width of Delta
  // ClickHouse prints INTERVAL 1 YEAR as toIntervalYear(1), and both are the same TTL.
  AdoptionReport r = CompareForAdoption(Wanted(kNew, options), t);
  EXPECT_TRUE(r.ok()) << Lines(r.differences);
  EXPECT_EQ(Lines(r.notes), "");
  t.columns[1].codec = "CODEC(DoubleDelta, LZ4)";
  EXPECT_EQ(
      Lines(CompareForAdoption(Wanted(kNew, options), t).notes),
      "column customer_id: table_options ask for CODEC(Delta, LZ4), the table has CODEC(DoubleDelta, LZ4)\n");
  t.columns[1].codec = "";

  // Codec, LowCardinality and settings are storage choices: notes. The key is not.
  t.columns[2] = {"email", "Nullable(String)", "", "", ""};
  t.engine_full =
      "ReplacingMergeTree(_chsync_version, _chsync_is_deleted) PARTITION BY toYYYYMM(created_at) ORDER "
      "BY (id) SETTINGS index_granularity = 8192";
  t.sorting_key = "id";
  r = CompareForAdoption(Wanted(kNew, options), t);
  EXPECT_EQ(Lines(r.differences), "sorting key (id) differs from (customer_id, id), which chsync needs\n");
  EXPECT_EQ(
      Lines(r.notes),
      "column customer_id: table_options ask for CODEC(Delta, LZ4), the table has the default compression\n"
      "column email: the table stores Nullable(String), table_options ask for "
      "LowCardinality(Nullable(String))\n"
      "column email: table_options ask for CODEC(ZSTD(3)), the table has the default compression\n"
      "TTL (none) where table_options ask for created_at + INTERVAL 1 YEAR\n"
      "setting index_granularity = 4096 is not among the table's (index_granularity = 8192)\n");
}

TEST(AdoptTest, SyncedAtMayBeAnyDateTime) {
  ExistingTable t = AsCreatedOn1816();
  t.columns[7] = {"_chsync_synced_at", "DateTime64(6, 'UTC')", "DEFAULT", "now64(6)", ""};
  EXPECT_TRUE(CompareForAdoption(Wanted(kOld), t).ok());
  t.columns[7] = {"_chsync_synced_at", "DateTime", "", "", ""};
  AdoptionReport r = CompareForAdoption(Wanted(kOld), t);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(Lines(r.notes),
            "column _chsync_synced_at has no DEFAULT: it holds DateTime's zero instead of the time chsync "
            "wrote each "
            "row (chsync creates it DEFAULT now())\n");
  t.columns[7] = {"_chsync_synced_at", "String", "", "", ""};
  EXPECT_EQ(Lines(CompareForAdoption(Wanted(kOld), t).differences),
            "column _chsync_synced_at: chsync reads it as DateTime, the table has String\n");
  t.columns[7] = {"_chsync_is_deleted", "UInt8", "ALIAS", "0", ""};
  t.columns[6] = {"_chsync_synced_at", "DateTime", "DEFAULT", "now()", ""};
  EXPECT_EQ(Lines(CompareForAdoption(Wanted(kOld), t).differences),
            "column _chsync_is_deleted is ALIAS in the table, and chsync writes it (UInt8)\n");
}

TEST(AdoptTest, ParsesTheServersAnswers) {
  // As an 18.16 server answers ExistingTableQuery and ExistingColumnsQuery in TabSeparated.
  const std::string tables =
      "ReplacingMergeTree\tReplacingMergeTree(_chsync_version) ORDER BY id SETTINGS index_granularity = "
      "8192\tid\t\n";
  const std::string columns =
      "id\tUInt64\t\t\n"
      "status\tEnum8(\\'\\' = 0, \\'new\\' = 1, \\'paid\\' = 2)\t\t\n"
      "_chsync_synced_at\tDateTime\tDEFAULT\tnow()\n";
  auto t = ParseExistingTable(tables, columns, kOld);
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(t->engine, "ReplacingMergeTree");
  EXPECT_EQ(t->sorting_key, "id");
  EXPECT_EQ(t->partition_key, "");
  EXPECT_FALSE(t->codecs_known);
  ASSERT_EQ(t->columns.size(), 3u);
  EXPECT_EQ(t->columns[1], (ExistingColumn{"status", "Enum8('' = 0, 'new' = 1, 'paid' = 2)", "", "", ""}));
  EXPECT_EQ(t->columns[2], (ExistingColumn{"_chsync_synced_at", "DateTime", "DEFAULT", "now()", ""}));

  auto newer = ParseExistingTable(tables, "email\tNullable(String)\t\t\tCODEC(ZSTD(3))\n", kNew);
  ASSERT_TRUE(newer.ok()) << newer.error().message();
  EXPECT_TRUE(newer->codecs_known);
  EXPECT_EQ(newer->columns[0].codec, "CODEC(ZSTD(3))");

  auto missing = ParseExistingTable("", "", kOld);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind(), ErrorKind::kNotFound);
  auto short_row = ParseExistingTable(tables, "id\tUInt64\n", kOld);
  ASSERT_FALSE(short_row.ok());
  EXPECT_EQ(short_row.error().kind(), ErrorKind::kCorrupt);

  EXPECT_EQ(ExistingTableQuery("analytics", "it's"),
            "SELECT engine, engine_full, sorting_key, partition_key FROM system.tables WHERE database = "
            "'analytics' "
            "AND name = 'it\\'s'");
  EXPECT_EQ(
      ExistingColumnsQuery("analytics", "orders", kOld),
      "SELECT name, type, default_kind, default_expression FROM system.columns WHERE database = 'analytics' "
      "AND table = 'orders'");
  EXPECT_EQ(
      ExistingColumnsQuery("analytics", "orders", kNew),
      "SELECT name, type, default_kind, default_expression, compression_codec FROM system.columns WHERE "
      "database = 'analytics' AND table = 'orders'");
}

TEST(AdoptTest, KeyColumnsNamedLikeKeywords) {
  schema::Tracker tracker;
  ASSERT_TRUE(
      tracker
          .ApplySql("CREATE TABLE stats (`year` SMALLINT NOT NULL, n INT NOT NULL, PRIMARY KEY (`year`))",
                    "shop")
          .ok());
  auto layout =
      clickhouse::DestinationLayout(*tracker.Find("shop", "stats"), kOld, {.database = "analytics"});
  ASSERT_TRUE(layout.ok());
  ExistingTable t;
  t.engine = "ReplacingMergeTree";
  t.engine_full = "ReplacingMergeTree(_chsync_version) ORDER BY year SETTINGS index_granularity = 8192";
  t.sorting_key = "year";
  t.columns = {{"year", "Int16", "", "", ""},
               {"n", "Int32", "", "", ""},
               {"_chsync_version", "UInt64", "", "", ""},
               {"_chsync_is_deleted", "UInt8", "", "", ""},
               {"_chsync_synced_at", "DateTime", "DEFAULT", "now()", ""}};
  AdoptionReport r = CompareForAdoption(*layout, t);
  EXPECT_TRUE(r.ok()) << Lines(r.differences);
}

TEST(AdoptTest, SortingKeyFromEngineFullWhenNotReported) {
  ExistingTable t = AsCreatedOn1816();
  t.sorting_key = "";
  t.engine_full = "ReplacingMergeTree(_chsync_version) ORDER BY (`id`) SETTINGS index_granularity = 8192";
  EXPECT_TRUE(CompareForAdoption(Wanted(kOld), t).ok());
  t.engine_full = "ReplacingMergeTree(_chsync_version) PARTITION BY cust_id ORDER BY (id, cust_id)";
  EXPECT_EQ(Lines(CompareForAdoption(Wanted(kOld), t).differences),
            "sorting key ((id, cust_id)) differs from (`id`), which chsync needs\n"
            "partition key cust_id differs from (none), which chsync was configured with (partition_by in "
            "table_options: chsync writes a change of a row's partition as a key change)\n");
}

}  // namespace
}  // namespace chsync::pipe
