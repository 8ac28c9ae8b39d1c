#include "policy/mapping.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "clickhouse/capabilities.h"
#include "clickhouse/ddl.h"
#include "schema/tracker.h"

namespace chsync::pipe {
namespace {

const clickhouse::Capabilities kOld = clickhouse::FromVersion({18, 16, 1, 0});
const clickhouse::Capabilities kNew = clickhouse::FromVersion({26, 7, 3, 1});

/// The table a MySQL CREATE TABLE statement makes in database `shop`, as the tracker holds it.
schema::TableSchema Table(const std::string& sql) {
  schema::Tracker tracker;
  auto applied = tracker.ApplySql(sql, "shop");
  if (!applied.ok()) {
    ADD_FAILURE() << sql << ": " << applied.error().message();
    return {};
  }
  std::vector<const schema::TableSchema*> tables = tracker.Tables();
  if (tables.size() != 1) {
    ADD_FAILURE() << sql << ": " << tables.size() << " tables";
    return {};
  }
  return *tables[0];
}

schema::TableSchema Orders() {
  return Table(
      "CREATE TABLE orders (id BIGINT UNSIGNED NOT NULL, cust_id INT NOT NULL, email VARCHAR(100), "
      "phone VARCHAR(20), status VARCHAR(10) NOT NULL DEFAULT 'new', ssn CHAR(11), created_at DATETIME NOT "
      "NULL, "
      "PRIMARY KEY (id), UNIQUE KEY u_email (email))");
}

/// An entry for `pattern` given at line `line` of chsync.yaml.
TableOptions Entry(const std::string& pattern, int line) {
  TableOptions o;
  o.pattern = pattern;
  o.origin = "chsync.yaml:" + std::to_string(line);
  return o;
}

/// The issue's example: shop.orders with every option, then shop.* excluding ssn.
MappingSet Example() {
  MappingSet set;
  TableOptions orders = Entry("shop.orders", 2);
  orders.dest_database = "analytics";
  orders.dest_table = "orders_v2";
  orders.exclude_columns = {"email", "phone"};
  orders.rename_columns = {{"cust_id", "customer_id"}};
  orders.order_by = "(customer_id, id)";
  orders.partition_by = "toYYYYMM(created_at)";
  orders.ttl = "created_at + INTERVAL 1 YEAR";
  orders.settings = {{"index_granularity", "4096"}};
  orders.columns = {{"status", ColumnEntry{"ZSTD(3)", true}}};
  orders.adopt = true;
  EXPECT_TRUE(set.Add(orders).ok());
  TableOptions all = Entry("shop.*", 14);
  all.exclude_columns = {"ssn"};
  EXPECT_TRUE(set.Add(all).ok());
  return set;
}

/// The message of Validate's error ("" when it passes).
std::string Problems(const EffectiveMapping& m, const schema::TableSchema& source) {
  Status s = Validate(m, source);
  if (s.ok()) return "";
  EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
  return s.error().message();
}

/// A mapping of shop.orders with one entry (exact pattern) built by `fill`.
template <typename Fill>
EffectiveMapping OrdersWith(Fill fill) {
  MappingSet set;
  TableOptions o = Entry("shop.orders", 3);
  fill(o);
  Status s = set.Add(o);
  EXPECT_TRUE(s.ok()) << s.error().message();
  return set.For("shop", "orders");
}

TEST(MappingTokenizer, QuotesBackticksAndBrackets) {
  auto tokens = TokenizeExpression("f(`a,b`, 'it''s, \\'x', \"C\") + 1.5e-3 -> [x]", "t");
  ASSERT_TRUE(tokens.ok()) << tokens.error().message();
  std::vector<std::string> texts;
  for (const ExpressionToken& t : *tokens) texts.push_back(t.text);
  EXPECT_EQ(texts, (std::vector<std::string>{"f", "(", "a,b", ",", "'it''s, \\'x'", ",", "C", ")", "+",
                                             "1.5e-3", "->", "[", "x", "]"}));
  EXPECT_EQ((*tokens)[2].kind, ExpressionToken::Kind::kQuotedIdentifier);
  EXPECT_EQ((*tokens)[4].kind, ExpressionToken::Kind::kString);
  EXPECT_EQ((*tokens)[6].kind, ExpressionToken::Kind::kQuotedIdentifier);
  EXPECT_EQ((*tokens)[9].kind, ExpressionToken::Kind::kNumber);
}

TEST(MappingTokenizer, MalformedExpressionsAreConfigErrors) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"(a, b", "order_by: '(' is not closed at byte 5 of '(a, b'"},
      {"a)", "order_by: ')' closes nothing at byte 1 of 'a)'"},
      {"(a]", "order_by: ']' closes nothing at byte 2 of '(a]'"},
      {"'abc", "order_by: unclosed ' at byte 0 of ''abc'"},
      {"`abc", "order_by: unclosed ` at byte 0 of '`abc'"},
      {"id); DROP TABLE x", "order_by: ')' closes nothing at byte 2"},
      {"id; DROP TABLE x", "order_by: ';' is not part of an expression at byte 2"},
      {"id -- c", "order_by: comments are not allowed at byte 3"},
      {"id /* c */", "order_by: comments are not allowed at byte 3"},
      {"id @ 1", "order_by: unexpected character '@' at byte 3"},
  };
  for (const Case& c : cases) {
    auto tokens = TokenizeExpression(c.text, "order_by");
    ASSERT_FALSE(tokens.ok()) << c.text;
    EXPECT_EQ(tokens.error().kind(), ErrorKind::kConfig);
    EXPECT_EQ(tokens.error().message().rfind(c.message, 0), 0u) << tokens.error().message();
  }
}

TEST(MappingTokenizer, TopLevelListsInEverySpelling) {
  struct Case {
    const char* text;
    std::vector<std::string> elements;
  };
  const Case cases[] = {
      {"(customer_id, id)", {"customer_id", "id"}},
      {"customer_id, id", {"customer_id", "id"}},
      {"tuple(customer_id, id)", {"customer_id", "id"}},
      {"TUPLE(a)", {"a"}},
      {"((a, b))", {"a", "b"}},
      {"id", {"id"}},
      {"(a + b) * 2, c", {"(a + b) * 2", "c"}},
      {"(a) + (b)", {"(a) + (b)"}},
      {"toDate(created_at), `b,c`, f(x, ',')", {"toDate(created_at)", "`b,c`", "f(x, ',')"}},
      {"  ( isNull(`a`) , assumeNotNull(`a`) )  ", {"isNull(`a`)", "assumeNotNull(`a`)"}},
      {"tuple()", {}},
  };
  for (const Case& c : cases) {
    auto elements = SplitExpressionList(c.text, "order_by");
    ASSERT_TRUE(elements.ok()) << c.text << ": " << elements.error().message();
    EXPECT_EQ(*elements, c.elements) << c.text;
  }
  auto empty = SplitExpressionList("(a, , b)", "order_by");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message(), "order_by has an empty element in '(a, , b)'");
}

TEST(MappingTokenizer, CanonicalSpellingIgnoresQuotingAndSpaces) {
  EXPECT_EQ(CanonicalExpression("isNull(`a`)"), CanonicalExpression("isNull( a )"));
  EXPECT_EQ(CanonicalExpression("`b c`, id"), "`b c` , `id`");
  EXPECT_EQ(CanonicalExpression("`year`, day"), CanonicalExpression("year, `day`"));
  EXPECT_EQ(CanonicalExpression("created_at + INTERVAL 1 year"),
            CanonicalExpression("created_at+interval 1 YEAR"));
  EXPECT_EQ(CanonicalExpression("d + INTERVAL 30 DAY"), CanonicalExpression("d + toIntervalDay(30)"));
  EXPECT_NE(CanonicalExpression("a, b"), CanonicalExpression("b, a"));
  EXPECT_NE(CanonicalExpression("'a'"), CanonicalExpression("`a`"));
}

TEST(MappingTest, SettingLiterals) {
  EXPECT_EQ(SettingLiteral("4096", false), "4096");
  EXPECT_EQ(SettingLiteral("-1", false), "-1");
  EXPECT_EQ(SettingLiteral("0.5", false), "0.5");
  EXPECT_EQ(SettingLiteral("true", false), "1");
  EXPECT_EQ(SettingLiteral("false", false), "0");
  EXPECT_EQ(SettingLiteral("hot_cold", false), "'hot_cold'");
  EXPECT_EQ(SettingLiteral("4096", true), "'4096'");
  EXPECT_EQ(SettingLiteral("1.2.3", false), "'1.2.3'");
  EXPECT_EQ(SettingLiteral("it's", false), "'it\\'s'");
}

TEST(MappingTest, EntriesMergeInOrderScalarsReplacedListsAdded) {
  MappingSet set = Example();
  TableOptions later = Entry("shop.ord*", 20);
  later.ttl = "created_at + INTERVAL 2 YEAR";
  later.rename_columns = {{"CUST_ID", "client_id"}};
  later.settings = {{"index_granularity", "8192"}, {"min_bytes_for_wide_part", "0"}};
  later.columns = {{"STATUS", ColumnEntry{std::nullopt, false}}};
  ASSERT_TRUE(set.Add(later).ok());

  EffectiveMapping m = set.For("shop", "orders");
  EXPECT_EQ(m.dest_database, "analytics");
  EXPECT_EQ(m.dest_table, "orders_v2");
  ASSERT_EQ(m.excluded.size(), 3u);
  EXPECT_EQ(m.excluded[0], (NamedColumn{"email", "chsync.yaml:2", true}));
  EXPECT_EQ(m.excluded[2], (NamedColumn{"ssn", "chsync.yaml:14", false}));
  ASSERT_EQ(m.renamed.size(), 1u);
  EXPECT_EQ(m.renamed[0].first, (NamedColumn{"cust_id", "chsync.yaml:20", true}));
  EXPECT_EQ(m.renamed[0].second, "client_id");
  EXPECT_EQ(m.order_by_elements, (std::vector<std::string>{"customer_id", "id"}));
  EXPECT_EQ(m.ttl, "created_at + INTERVAL 2 YEAR");
  EXPECT_EQ(m.ttl_origin, "chsync.yaml:20");
  EXPECT_EQ(m.order_by_origin, "chsync.yaml:2");
  EXPECT_EQ(m.settings, (std::vector<std::pair<std::string, std::string>>{{"index_granularity", "8192"},
                                                                          {"min_bytes_for_wide_part", "0"}}));
  ASSERT_EQ(m.columns.size(), 1u);
  EXPECT_EQ(m.columns[0].second, (clickhouse::ColumnOptions{"ZSTD(3)", false}));
  EXPECT_TRUE(m.adopt);
  EXPECT_EQ(m.origins, (std::vector<std::string>{"shop.orders (chsync.yaml:2)", "shop.* (chsync.yaml:14)",
                                                 "shop.ord* (chsync.yaml:20)"}));

  EXPECT_TRUE(m.Excluded("EMAIL"));
  EXPECT_TRUE(m.Excluded("ssn"));
  EXPECT_FALSE(m.Excluded("status"));
  EXPECT_EQ(m.DestColumn("Cust_Id"), "client_id");
  EXPECT_EQ(m.DestColumn("status"), "status");
  EXPECT_FALSE(m.IsDefault());

  // Other tables of shop only get the pattern's exclusion; other databases nothing.
  EffectiveMapping customers = set.For("shop", "customers");
  EXPECT_EQ(customers.dest_database, "shop");
  EXPECT_EQ(customers.dest_table, "customers");
  ASSERT_EQ(customers.excluded.size(), 1u);
  EXPECT_FALSE(customers.adopt);
  EffectiveMapping other = set.For("crm", "orders", "warehouse");
  EXPECT_TRUE(other.IsDefault());
  EXPECT_EQ(other.dest_database, "warehouse");
  EXPECT_EQ(other.dest_table, "orders");
}

TEST(MappingTest, DestinationPlaceholdersAndDefaults) {
  MappingSet set;
  TableOptions o = Entry("shop.*", 1);
  o.dest_database = "{database}_ch";
  o.dest_table = "{table}_v2";
  ASSERT_TRUE(set.Add(o).ok());
  TableOptions only_table = Entry("crm.people", 5);
  only_table.dest_table = "persons";
  ASSERT_TRUE(set.Add(only_table).ok());
  EffectiveMapping m = set.For("shop", "orders", "analytics");
  EXPECT_EQ(m.dest_database, "shop_ch");
  EXPECT_EQ(m.dest_table, "orders_v2");
  EffectiveMapping p = set.For("crm", "people", "analytics");
  EXPECT_EQ(p.dest_database, "analytics");  // dest_database, else --dest-database, else the source's
  EXPECT_EQ(p.dest_table, "persons");
  EXPECT_EQ(set.For("crm", "people").dest_database, "crm");
}

TEST(MappingTest, TheLastDeleteModeGivenWins) {
  MappingSet set;
  TableOptions all;
  all.pattern = "shop.*";
  all.origin = "chsync.yaml:2";
  all.deletes = DeleteMode::kIgnore;
  TableOptions one;
  one.pattern = "shop.orders";
  one.origin = "chsync.yaml:5";
  one.deletes = DeleteMode::kSoft;
  ASSERT_TRUE(set.Add(all).ok());
  ASSERT_TRUE(set.Add(one).ok());
  EXPECT_EQ(set.For("shop", "orders").deletes, DeleteMode::kSoft);
  EffectiveMapping events = set.For("shop", "events");
  EXPECT_EQ(events.deletes, DeleteMode::kIgnore);
  EXPECT_FALSE(events.IsDefault());
  EXPECT_EQ(events.Summary(), "shop.events → shop.events; deletes: ignore (append-only)");
  EXPECT_EQ(set.For("crm", "people").deletes, DeleteMode::kSoft);
  EXPECT_EQ(set.Describe(), (std::vector<std::string>{"shop.* (chsync.yaml:2): deletes ignore",
                                                      "shop.orders (chsync.yaml:5): deletes soft"}));
}

TEST(MappingTest, SummaryAndDescribe) {
  EffectiveMapping m = Example().For("shop", "orders");
  EXPECT_EQ(
      m.Summary(),
      "shop.orders → analytics.orders_v2; excluded: email, phone, ssn; renamed: cust_id→customer_id; "
      "PARTITION BY toYYYYMM(created_at); ORDER BY (customer_id, id); TTL created_at + INTERVAL 1 YEAR; "
      "SETTINGS index_granularity = 4096; columns: status LowCardinality CODEC(ZSTD(3)); adopt");
  EXPECT_EQ(m.Describe(),
            (std::vector<std::string>{
                m.Summary(), "  from table_options: shop.orders (chsync.yaml:2), shop.* (chsync.yaml:14)"}));
  EXPECT_EQ(MappingSet().For("shop", "t").Describe(), (std::vector<std::string>{"shop.t → shop.t"}));
  EXPECT_EQ(
      Example().Describe(),
      (std::vector<std::string>{
          "shop.orders (chsync.yaml:2): dest analytics.orders_v2; exclude email, phone; rename "
          "cust_id→customer_id; order_by (customer_id, id); partition_by toYYYYMM(created_at); ttl "
          "created_at + INTERVAL 1 YEAR; settings index_granularity = 4096; column status: low_cardinality, "
          "codec ZSTD(3); adopt",
          "shop.* (chsync.yaml:14): exclude ssn"}));
}

TEST(MappingTest, TheExampleValidatesAndCreatesItsTable) {
  const schema::TableSchema source = Orders();
  EffectiveMapping m = Example().For("shop", "orders");
  ASSERT_EQ(Problems(m, source), "");
  ASSERT_TRUE(Validate(m, source, kNew, {.database = "analytics"}).ok());

  schema::TableSchema projected = m.Project(source);
  std::vector<std::string> names;
  for (const schema::Column& c : projected.columns)
    names.push_back(c.name + "@" + std::to_string(c.ordinal_position));
  EXPECT_EQ(names, (std::vector<std::string>{"id@1", "cust_id@2", "status@3", "created_at@4"}));
  EXPECT_TRUE(projected.unique_keys.empty());  // u_email was over an excluded column
  EXPECT_EQ(projected.primary_key, (std::vector<std::string>{"id"}));

  auto sql = clickhouse::CreateTable(projected, kNew, {.database = "analytics"}, m.CreateOptions());
  ASSERT_TRUE(sql.ok()) << sql.error().message();
  EXPECT_EQ(*sql,
            "CREATE TABLE IF NOT EXISTS `analytics`.`orders_v2`\n(\n"
            "    `id` UInt64,\n"
            "    `customer_id` Int32,\n"
            "    `status` LowCardinality(String) DEFAULT 'new' CODEC(ZSTD(3)),\n"
            "    `created_at` DateTime64(0, 'UTC'),\n"
            "    `_chsync_version` UInt64,\n"
            "    `_chsync_is_deleted` UInt8,\n"
            "    `_chsync_synced_at` DateTime64(3) DEFAULT now64(3)\n"
            ")\nENGINE = ReplacingMergeTree(`_chsync_version`, `_chsync_is_deleted`)\n"
            "PARTITION BY toYYYYMM(created_at)\n"
            "ORDER BY (customer_id, id)\n"
            "TTL created_at + INTERVAL 1 YEAR\n"
            "SETTINGS index_granularity = 4096");

  // An UPDATE of cust_id moves the row in ClickHouse (it is in ORDER BY), so does one of
  // created_at (PARTITION BY); status does not.
  EXPECT_EQ(m.KeyColumns(source), (std::vector<std::string>{"id", "cust_id", "created_at"}));
  EXPECT_EQ(MappingSet().For("shop", "orders").KeyColumns(source), (std::vector<std::string>{"id"}));
}

TEST(MappingTest, ExampleOnClickHouse1816IsRefusedNamingTheOption) {
  const schema::TableSchema source = Orders();
  EffectiveMapping m = Example().For("shop", "orders");
  Status s = Validate(m, source, kOld, {.database = "analytics"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kUnsupported);
  EXPECT_EQ(
      s.error().message(),
      "table shop.orders: column status: LowCardinality needs ClickHouse 19.3 or later, and the destination "
      "is ClickHouse 18.16 (18.16 has it only behind allow_experimental_low_cardinality_type, which chsync "
      "does not set): remove the option from table_options, or upgrade ClickHouse");
}

TEST(MappingTest, OrderByMustHoldThePrimaryKey) {
  const schema::TableSchema source = Orders();
  EXPECT_EQ(
      Problems(OrdersWith([](TableOptions& o) { o.order_by = "(cust_id)"; }), source),
      "ORDER BY of shop.orders must contain the primary key column id: ClickHouse keeps one row per ORDER "
      "BY value, so rows with other ids would collapse (chsync.yaml:3)");
  // Wrapped in an expression it no longer identifies the row.
  EXPECT_NE(Problems(OrdersWith([](TableOptions& o) { o.order_by = "(cust_id, intDiv(id, 10))"; }), source)
                .find("must contain the primary key column id"),
            std::string::npos);
  for (const char* accepted :
       {"(cust_id, id)", "cust_id, id", "tuple(cust_id, id)", "id", "(toDate(created_at), id)", "(`id`)",
        "(status, id, cityHash64(email_domain(1)))"}) {
    EXPECT_EQ(Problems(OrdersWith([&](TableOptions& o) { o.order_by = accepted; }), source), "") << accepted;
  }
}

TEST(MappingTest, OrderByUsesClickHouseNames) {
  const schema::TableSchema source = Orders();
  auto renamed = [](const char* order_by) {
    return OrdersWith([&](TableOptions& o) {
      o.rename_columns = {{"id", "order_id"}, {"cust_id", "customer_id"}};
      o.order_by = order_by;
    });
  };
  EXPECT_EQ(Problems(renamed("(customer_id, order_id)"), source), "");
  EXPECT_EQ(
      Problems(renamed("(customer_id, id)"), source),
      "table_options for shop.orders have 2 problems:\n"
      "  ORDER BY of shop.orders names id, which is order_id in ClickHouse: ORDER BY is ClickHouse text, "
      "over the ClickHouse (renamed) column names (chsync.yaml:3)\n"
      "  ORDER BY of shop.orders must contain the primary key column id (order_id in ClickHouse): ClickHouse "
      "keeps one row per ORDER BY value, so rows with other order_ids would collapse (chsync.yaml:3)");
  auto sql = clickhouse::CreateTable(source, kNew, {.database = "d"},
                                     renamed("(customer_id, order_id)").CreateOptions());
  ASSERT_TRUE(sql.ok()) << sql.error().message();
  EXPECT_NE(sql->find("    `order_id` UInt64,\n    `customer_id` Int32,\n"), std::string::npos) << *sql;
  // Without order_by, chsync's key under its ClickHouse name.
  auto plain =
      clickhouse::CreateTable(source, kNew, {.database = "d"}, OrdersWith([](TableOptions& o) {
                                                                 o.rename_columns = {{"id", "order_id"}};
                                                               }).CreateOptions());
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->ends_with("\nORDER BY (`order_id`)")) << *plain;
}

TEST(MappingTest, OrderByNamesOnlyColumnsOfTheClickHouseTable) {
  const schema::TableSchema source = Orders();
  struct Case {
    const char* order_by;
    const char* problem;
  };
  const Case cases[] = {
      {"(email, id)",
       "ORDER BY of shop.orders names email, which exclude_columns excludes: the ClickHouse table does not "
       "have "
       "it (chsync.yaml:3)"},
      {"(_chsync_version, id)",
       "ORDER BY of shop.orders names _chsync_version, a chsync metadata column: its value differs between "
       "the "
       "versions of a row, so they would no longer replace each other (chsync.yaml:3)"},
      {"(Status, id)",
       "ORDER BY of shop.orders names Status, and the ClickHouse column is status (ClickHouse compares names "
       "case-sensitively) (chsync.yaml:3)"},
      {"(colour, id)",
       "ORDER BY of shop.orders names colour, which is not a column of the table (chsync.yaml:3)"},
      {"(phone, id)",
       "ORDER BY of shop.orders lists phone, which is Nullable: ClickHouse refuses a Nullable sorting key; "
       "write "
       "isNull(phone), assumeNotNull(phone) as chsync does (chsync.yaml:3)"},
  };
  for (const Case& c : cases) {
    EffectiveMapping m = OrdersWith([&](TableOptions& o) {
      o.exclude_columns = {"email"};
      o.order_by = c.order_by;
    });
    EXPECT_EQ(Problems(m, source), c.problem) << c.order_by;
  }
  // Nullable columns enter as chsync writes them, or plainly with allow_nullable_key.
  EXPECT_EQ(
      Problems(OrdersWith([](TableOptions& o) { o.order_by = "(isNull(phone), assumeNotNull(phone), id)"; }),
               source),
      "");
  EXPECT_EQ(Problems(OrdersWith([](TableOptions& o) {
                       o.order_by = "(phone, id)";
                       o.settings = {{"allow_nullable_key", "1"}};
                     }),
                     source),
            "");
}

TEST(MappingTest, ColumnsNamedLikeKeywords) {
  const schema::TableSchema t = Table(
      "CREATE TABLE stats (`year` SMALLINT NOT NULL, `day` DATE NOT NULL, d DATE NOT NULL, hits INT, "
      "PRIMARY KEY (`year`, `day`))");
  MappingSet set;
  TableOptions o = Entry("shop.stats", 2);
  o.order_by = "(year, day, hits IS NULL)";
  o.ttl = "d + INTERVAL 1 DAY";
  o.partition_by = "year";
  ASSERT_TRUE(set.Add(o).ok());
  EffectiveMapping m = set.For("shop", "stats");
  EXPECT_EQ(Problems(m, t), "");
  EXPECT_EQ(m.KeyColumns(t), (std::vector<std::string>{"year", "day", "hits"}));
  // A keyword that is no column is not taken for one; a column is checked even when named like one.
  MappingSet other;
  TableOptions p = Entry("shop.stats", 3);
  p.order_by = "(YEAR, day)";
  ASSERT_TRUE(other.Add(p).ok());
  EXPECT_EQ(
      Problems(other.For("shop", "stats"), t),
      "ORDER BY of shop.stats must contain the primary key column year: ClickHouse keeps one row per ORDER "
      "BY value, so rows with other years would collapse (chsync.yaml:3)");
}

TEST(MappingTest, FullRowKeyTablesMustListEveryColumn) {
  const schema::TableSchema log =
      Table("CREATE TABLE log (at DATETIME NOT NULL, who VARCHAR(20), what TEXT NOT NULL)");
  auto with = [&](const char* order_by) {
    MappingSet set;
    TableOptions o = Entry("shop.log", 7);
    o.order_by = order_by;
    EXPECT_TRUE(set.Add(o).ok());
    return set.For("shop", "log");
  };
  EXPECT_EQ(Problems(with("(what, at, isNull(who), assumeNotNull(who))"), log), "");
  EXPECT_EQ(
      Problems(with("(at, what)"), log),
      "ORDER BY of shop.log must list every column of the table, which has no primary key or NOT NULL unique "
      "key (chsync identifies its rows by all their values): who is missing as isNull(who), "
      "assumeNotNull(who) (the column is Nullable), so rows that differ only in it would collapse "
      "(chsync.yaml:7)");
  // Nothing of such a table can be excluded.
  MappingSet set;
  TableOptions o = Entry("shop.log", 9);
  o.exclude_columns = {"who"};
  ASSERT_TRUE(set.Add(o).ok());
  EXPECT_EQ(
      Problems(set.For("shop", "log"), log),
      "cannot exclude column who of shop.log: the table has no primary key or NOT NULL unique key, so chsync "
      "identifies its rows by all their values, and rows that differ only in who would collapse into one; "
      "give the table a primary key at the source, or replicate the column (chsync.yaml:9)");
}

TEST(MappingTest, UniqueKeyTables) {
  const schema::TableSchema t =
      Table("CREATE TABLE people (code CHAR(4) NOT NULL, name VARCHAR(20), UNIQUE KEY u_code (code))");
  auto with = [](std::function<void(TableOptions&)> fill) {
    MappingSet set;
    TableOptions o = Entry("shop.people", 4);
    fill(o);
    EXPECT_TRUE(set.Add(o).ok());
    return set.For("shop", "people");
  };
  EXPECT_EQ(
      Problems(with([](TableOptions& o) { o.order_by = "(isNull(name), assumeNotNull(name))"; }), t),
      "ORDER BY of shop.people must contain the column code of the unique key u_code (the table has no "
      "primary key; chsync identifies its rows by that key): ClickHouse keeps one row per ORDER BY value, "
      "so rows with other codes would collapse (chsync.yaml:4)");
  EXPECT_EQ(
      Problems(with([](TableOptions& o) {
                 o.order_by = "(name)";
                 o.exclude_columns = {"code"};
               }),
               t),
      "table_options for shop.people have 2 problems:\n"
      "  cannot exclude column code of shop.people: it is in the NOT NULL unique key that identifies the "
      "table's rows in ClickHouse (its sorting key) (chsync.yaml:4)\n"
      "  ORDER BY of shop.people lists name, which is Nullable: ClickHouse refuses a Nullable sorting key; "
      "write isNull(name), assumeNotNull(name) as chsync does (chsync.yaml:4)");
  EXPECT_EQ(Problems(with([](TableOptions& o) { o.order_by = "(name IS NULL, code)"; }), t), "");
}

TEST(MappingTest, ExcludingAPrimaryKeyColumnIsRefused) {
  EXPECT_EQ(
      Problems(OrdersWith([](TableOptions& o) { o.exclude_columns = {"ID"}; }), Orders()),
      "cannot exclude column id of shop.orders: it is in the primary key that identifies the table's rows in "
      "ClickHouse (its sorting key) (chsync.yaml:3)");
}

TEST(MappingTest, UnknownColumnsAreErrorsForTablesNamedExactly) {
  const schema::TableSchema source = Orders();
  EXPECT_EQ(
      Problems(OrdersWith([](TableOptions& o) {
                 o.exclude_columns = {"emial"};
                 o.rename_columns = {{"custid", "customer_id"}};
                 o.columns = {{"stat", ColumnEntry{"ZSTD(3)", std::nullopt}}};
               }),
               source),
      "table_options for shop.orders have 3 problems:\n"
      "  exclude_columns of shop.orders names emial, which is not a column of the table (chsync.yaml:3)\n"
      "  rename_columns of shop.orders names custid, which is not a column of the table (chsync.yaml:3)\n"
      "  columns of shop.orders names stat, which is not a column of the table (chsync.yaml:3)");
  // A pattern applies to whichever tables have the column (a PII column added later stays excluded).
  MappingSet set;
  TableOptions all = Entry("shop.*", 1);
  all.exclude_columns = {"emial", "ssn"};
  all.rename_columns = {{"custid", "customer_id"}};
  ASSERT_TRUE(set.Add(all).ok());
  EffectiveMapping m = set.For("shop", "orders");
  EXPECT_EQ(Problems(m, source), "");
  EXPECT_TRUE(m.Excluded("emial"));
}

TEST(MappingTest, RowFilterLastEntryWinsAndIsChecked) {
  const schema::TableSchema source = Orders();
  MappingSet set;
  TableOptions all = Entry("shop.*", 1);
  all.where = "status = 'new'";
  ASSERT_TRUE(set.Add(all).ok());
  TableOptions orders = Entry("shop.orders", 5);
  orders.where = "status IN ('paid', 'shipped') AND created_at >= '2024-01-01'";
  ASSERT_TRUE(set.Add(orders).ok());
  EffectiveMapping m = set.For("shop", "orders");
  EXPECT_EQ(m.where, "status IN ('paid', 'shipped') AND created_at >= '2024-01-01'");
  EXPECT_EQ(m.where_origin, "chsync.yaml:5");
  EXPECT_NE(m.Summary().find("WHERE status IN ('paid', 'shipped')"), std::string::npos) << m.Summary();
  EXPECT_EQ(Problems(m, source), "");
  auto filter = FilterFor(m, source);
  ASSERT_TRUE(filter.ok()) << filter.error().message();
  ASSERT_TRUE(filter->has_value());
  EXPECT_EQ((*filter)->columns(), (std::vector<std::string>{"status", "created_at"}));
  EXPECT_FALSE(FilterFor(EffectiveMapping{}, source)->has_value()) << "no where: no filter";

  const std::string unknown = Problems(OrdersWith([](TableOptions& o) { o.where = "stauts = 'x'"; }), source);
  EXPECT_NE(unknown.find("chsync.yaml:3: where: unknown column stauts (shop.orders has id, cust_id, email"),
            std::string::npos)
      << unknown;
  EXPECT_NE(unknown.find("at byte 0"), std::string::npos) << unknown;
  EXPECT_EQ(
      Problems(OrdersWith([](TableOptions& o) {
                 o.exclude_columns = {"email"};
                 o.where = "email LIKE '%@example.com'";
               }),
               source),
      "the row filter (where:) of shop.orders names email, which exclude_columns excludes (chsync.yaml:3)");
  MappingSet empty;
  TableOptions blank = Entry("shop.orders", 9);
  blank.where = "  ";
  Status s = empty.Add(blank);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("'table_options.shop.orders.where' must not be empty"),
            std::string::npos)
      << s.error().message();
}

TEST(MappingTest, RenamesThatCollide) {
  const schema::TableSchema source = Orders();
  EXPECT_EQ(
      Problems(OrdersWith([](TableOptions& o) {
                 o.rename_columns = {{"cust_id", "STATUS"}};
               }),
               source),
      "rename_columns of shop.orders renames cust_id to STATUS, the name of another column of the table "
      "(chsync.yaml:3)");
  EXPECT_EQ(Problems(OrdersWith([](TableOptions& o) {
                       o.exclude_columns = {"email"};
                       o.rename_columns = {{"email", "mail"}};
                     }),
                     source),
            "rename_columns of shop.orders renames email, which exclude_columns excludes (chsync.yaml:3)");
  // Across entries (within one entry Add refuses it).
  MappingSet set;
  TableOptions first = Entry("shop.*", 1);
  first.rename_columns = {{"phone", "contact"}};
  TableOptions second = Entry("shop.orders", 2);
  second.rename_columns = {{"email", "contact"}};
  ASSERT_TRUE(set.Add(first).ok());
  ASSERT_TRUE(set.Add(second).ok());
  EXPECT_EQ(Problems(set.For("shop", "orders"), source),
            "rename_columns of shop.orders renames email to contact, and phone is renamed to contact "
            "(chsync.yaml:2)");
  // Renaming a column to its own name in another case is a rename in ClickHouse.
  EXPECT_EQ(Problems(OrdersWith([](TableOptions& o) {
                       o.rename_columns = {{"status", "Status"}};
                     }),
                     source),
            "");
}

TEST(MappingTest, ColumnOptionsOfExcludedColumnsAndPartitionAndTtlReferences) {
  const schema::TableSchema source = Orders();
  EXPECT_EQ(
      Problems(OrdersWith([](TableOptions& o) {
                 o.exclude_columns = {"email"};
                 o.columns = {{"email", ColumnEntry{"ZSTD(3)", std::nullopt}}};
                 o.rename_columns = {{"created_at", "created"}};
                 o.partition_by = "toYYYYMM(created_at)";
                 o.ttl =
                     "created + INTERVAL 1 DAY, created + INTERVAL 1 HOUR TO VOLUME 'cold' WHERE email = ''";
               }),
               source),
      "table_options for shop.orders have 3 problems:\n"
      "  columns of shop.orders configures email, which exclude_columns excludes (chsync.yaml:3)\n"
      "  PARTITION BY of shop.orders names created_at, which is created in ClickHouse: PARTITION BY is "
      "ClickHouse text, over the ClickHouse (renamed) column names (chsync.yaml:3)\n"
      "  TTL of shop.orders names email, which exclude_columns excludes: the ClickHouse table does not have "
      "it (chsync.yaml:3)");
  // TTL may use the time chsync wrote the row.
  EXPECT_EQ(
      Problems(OrdersWith([](TableOptions& o) { o.ttl = "_chsync_synced_at + INTERVAL 30 DAY"; }), source),
      "");
  EXPECT_NE(Problems(OrdersWith([](TableOptions& o) { o.partition_by = "_chsync_is_deleted"; }), source)
                .find("PARTITION BY of shop.orders names _chsync_is_deleted, a chsync metadata column"),
            std::string::npos);
}

TEST(MappingTest, AddChecksWhatNeedsNoTable) {
  struct Case {
    const char* name;
    std::function<void(TableOptions&)> fill;
    const char* message;
  };
  const Case cases[] = {
      {"no dot", [](TableOptions& o) { o.pattern = "orders"; },
       "chsync.yaml:3: 'table_options.orders': the pattern must be DB.TABLE (wildcards * and ?, e.g. "
       "shop.orders, "
       "shop.*)"},
      {"glob dest_table",
       [](TableOptions& o) {
         o.pattern = "shop.*";
         o.dest_table = "all_orders";
       },
       "chsync.yaml:3: 'table_options.shop.*.dest_table' would put every table matching 'shop.*' into the "
       "one "
       "ClickHouse table 'all_orders': use {table} in it (e.g. {table}_v2), give the option per table, or, "
       "when the pattern matches one table in each of many databases, give source_column: _source to merge "
       "them into one table (docs/mapping.md, \"Many sources into one table\")"},
      {"placeholder", [](TableOptions& o) { o.dest_database = "{tabel}"; },
       "chsync.yaml:3: 'table_options.shop.orders.dest_database' may use {database} and {table}, nothing "
       "else in "
       "braces: '{tabel}'"},
      {"empty dest", [](TableOptions& o) { o.dest_table = ""; },
       "chsync.yaml:3: 'table_options.shop.orders.dest_table' must not be empty"},
      {"metadata rename",
       [](TableOptions& o) {
         o.rename_columns = {{"a", "_CHSYNC_x"}};
       },
       "chsync.yaml:3: 'table_options.shop.orders.rename_columns.a' renames to _CHSYNC_x: names starting "
       "with "
       "_chsync_ are chsync's metadata columns"},
      {"rename twice",
       [](TableOptions& o) {
         o.rename_columns = {{"a", "b"}, {"A", "c"}};
       },
       "chsync.yaml:3: 'table_options.shop.orders.rename_columns.A' renames the column twice"},
      {"rename onto one",
       [](TableOptions& o) {
         o.rename_columns = {{"a", "x"}, {"b", "x"}};
       },
       "chsync.yaml:3: 'table_options.shop.orders.rename_columns.b' renames b to x, the name a is renamed to "
       "as "
       "well"},
      {"order_by", [](TableOptions& o) { o.order_by = "(id"; },
       "chsync.yaml:3: 'table_options.shop.orders.order_by': '(' is not closed at byte 3 of '(id'"},
      {"empty order_by", [](TableOptions& o) { o.order_by = "tuple()"; },
       "chsync.yaml:3: 'table_options.shop.orders.order_by' must list the sorting key (at least the primary "
       "key "
       "columns)"},
      {"ttl", [](TableOptions& o) { o.ttl = "d + 1; DROP TABLE x"; },
       "chsync.yaml:3: 'table_options.shop.orders.ttl': ';' is not part of an expression at byte 5 of 'd + "
       "1; "
       "DROP TABLE x'"},
      {"empty partition", [](TableOptions& o) { o.partition_by = " "; },
       "chsync.yaml:3: 'table_options.shop.orders.partition_by' must not be empty"},
      {"setting",
       [](TableOptions& o) {
         o.settings = {{"index granularity", "1"}};
       },
       "chsync.yaml:3: 'table_options.shop.orders.settings.index granularity' is not a setting name"},
      {"codec",
       [](TableOptions& o) {
         o.columns = {{"s", ColumnEntry{"ZSTD(3) + 1", std::nullopt}}};
       },
       "chsync.yaml:3: 'table_options.shop.orders.columns.s.codec' must be codecs such as ZSTD(3) or Delta, "
       "LZ4, "
       "not 'ZSTD(3) + 1'"},
  };
  for (const Case& c : cases) {
    MappingSet set;
    TableOptions o = Entry("shop.orders", 3);
    c.fill(o);
    Status s = set.Add(o);
    ASSERT_FALSE(s.ok()) << c.name;
    EXPECT_EQ(s.error().kind(), ErrorKind::kConfig) << c.name;
    EXPECT_EQ(s.error().message(), c.message) << c.name;
    EXPECT_TRUE(set.empty()) << c.name;
  }
}

TEST(MappingTest, CodecsAreNormalized) {
  for (const char* written : {"CODEC(ZSTD(3))", "ZSTD(3)", " codec( ZSTD(3) ) "}) {
    MappingSet set;
    TableOptions o = Entry("shop.orders", 1);
    o.columns = {{"status", ColumnEntry{written, std::nullopt}}};
    ASSERT_TRUE(set.Add(o).ok()) << written;
    EXPECT_EQ(set.entries()[0].columns[0].second.codec, "ZSTD(3)") << written;
  }
  MappingSet set;
  TableOptions o = Entry("shop.orders", 1);
  o.columns = {{"created_at", ColumnEntry{"Delta, LZ4", std::nullopt}}};
  ASSERT_TRUE(set.Add(o).ok());
  EXPECT_EQ(set.For("shop", "orders").CreateOptions().Column("created_at")->codec, "Delta, LZ4");
}

TEST(MappingTest, TwoTablesIntoOneDestinationAreRefused) {
  MappingSet set;
  TableOptions a = Entry("shop.orders", 1);
  a.dest_database = "analytics";
  a.dest_table = "orders";
  TableOptions b = Entry("archive.orders", 4);
  b.dest_database = "analytics";
  ASSERT_TRUE(set.Add(a).ok());
  ASSERT_TRUE(set.Add(b).ok());
  Status s = set.CheckDestinations({{"shop", "orders"}, {"shop", "items"}, {"archive", "orders"}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
  EXPECT_EQ(s.error().message(),
            "tables shop.orders and archive.orders would both be replicated into the ClickHouse table "
            "analytics.orders: give one of them another dest in table_options");
  EXPECT_TRUE(set.CheckDestinations({{"shop", "orders"}, {"archive", "items"}}).ok());
  // --dest-database alone merges databases, and so can collide too.
  EXPECT_FALSE(MappingSet().CheckDestinations({{"a", "t"}, {"b", "t"}}, "one").ok());
}

TEST(MappingTest, TablesWithOneSourceColumnShareADestinationAndOthersMayNot) {
  MappingSet set;
  TableOptions tenants = Entry("tenant_*.users", 1);
  tenants.dest_database = "analytics";
  tenants.dest_table = "users";  // no {table}: allowed with source_column
  tenants.source_column = "_source";
  ASSERT_TRUE(set.Add(tenants).ok());
  EXPECT_TRUE(
      set.CheckDestinations({{"tenant_1", "users"}, {"tenant_2", "users"}, {"tenant_2", "orders"}}).ok());
  // Two tables of one database in one shared table would share a source value: refused.
  MappingSet months;
  TableOptions orders = Entry("shop.orders_*", 1);
  orders.dest_database = "analytics";
  orders.dest_table = "orders";
  orders.source_column = "_source";
  ASSERT_TRUE(months.Add(orders).ok());
  Status same = months.CheckDestinations({{"shop", "orders_2023"}, {"shop", "orders_2024"}});
  ASSERT_FALSE(same.ok());
  EXPECT_NE(same.error().message().find("two tables of one database cannot share it"), std::string::npos)
      << same.error().message();
  EffectiveMapping m = set.For("tenant_7", "users");
  EXPECT_TRUE(m.Shared());
  EXPECT_EQ(m.source_column, "_source");
  EXPECT_EQ(m.source_value, "tenant_7");
  EXPECT_EQ(m.CreateOptions().source_column, "_source");
  EXPECT_NE(m.Summary().find("shared: _source = 'tenant_7'"), std::string::npos) << m.Summary();

  // A table without source_column may not land in a shared table.
  TableOptions lone = Entry("legacy.users", 2);
  lone.dest_database = "analytics";
  lone.dest_table = "users";
  ASSERT_TRUE(set.Add(lone).ok());
  Status s = set.CheckDestinations({{"tenant_1", "users"}, {"legacy", "users"}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("different source_column"), std::string::npos) << s.error().message();

  for (const char* bad : {"", "1x", "a-b", "_chsync_src"}) {
    TableOptions o = Entry("t_*.u", 3);
    o.source_column = bad;
    EXPECT_FALSE(MappingSet().Add(o).ok()) << bad;
  }
  TableOptions with_history = Entry("t_*.u", 3);
  with_history.source_column = "_source";
  with_history.history = true;
  EXPECT_FALSE(MappingSet().Add(with_history).ok());
}

TEST(MappingTest, LowCardinalityOnlyForStringColumns) {
  EffectiveMapping m = OrdersWith([](TableOptions& o) {
    o.columns = {{"cust_id", ColumnEntry{std::nullopt, true}}};
  });
  ASSERT_EQ(Problems(m, Orders()), "");
  Status s = Validate(m, Orders(), kNew, {.database = "d"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
  EXPECT_EQ(
      s.error().message(),
      "table shop.orders: column cust_id: low_cardinality needs a column stored as String, and this one is "
      "Int32 (ClickHouse refuses LowCardinality of numbers, dates and enums without "
      "allow_suspicious_low_cardinality_types)");
}

TEST(MappingTest, LaterAddColumnGetsItsOptionsAndExcludedStaysOut) {
  EffectiveMapping m = Example().For("shop", "orders");
  schema::Column note;
  note.name = "note";
  note.type = schema::ColumnType::kText;
  note.type_spelling = "text";
  // An ADD COLUMN of an excluded name: the pipe asks Excluded() and plans nothing for it.
  EXPECT_TRUE(m.Excluded("SSN"));
  MappingSet set = Example();
  TableOptions later = Entry("shop.orders", 30);
  later.columns = {{"note", ColumnEntry{"LZ4HC(9)", true}}};
  ASSERT_TRUE(set.Add(later).ok());
  auto sql = clickhouse::AddColumn("orders_v2", note, "status", kNew, {.database = "analytics"},
                                   set.For("shop", "orders").CreateOptions());
  ASSERT_TRUE(sql.ok()) << sql.error().message();
  EXPECT_EQ(
      *sql,
      "ALTER TABLE `analytics`.`orders_v2` ADD COLUMN IF NOT EXISTS `note` LowCardinality(Nullable(String)) "
      "CODEC(LZ4HC(9)) AFTER `status`");
}

TEST(MappingForPipe, DestinationNamesAreAppliedAndChsyncNamesRefused) {
  const schema::TableSchema orders = Orders();
  clickhouse::DdlTarget target;
  target.database = "analytics";
  const EffectiveMapping m = Example().For("shop", "orders");
  EXPECT_EQ(m.dest_database, "analytics");
  EXPECT_EQ(m.dest_table, "orders_v2");
  Status s = CheckForPipe(m, orders, kNew, target);
  EXPECT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(m.CreateOptions().table, "orders_v2");

  TableOptions own;
  own.pattern = "shop.orders";
  own.origin = "chsync.yaml:9";
  own.dest_table = "_chsync_schema_log";
  MappingSet set;
  Status added = set.Add(own);
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(added.error().kind(), ErrorKind::kConfig);
  for (const char* wanted : {"chsync.yaml:9", "dest_table", "_chsync_schema_log", "chsync's own"})
    EXPECT_NE(added.error().message().find(wanted), std::string::npos)
        << wanted << ": " << added.error().message();
}

TEST(MappingForPipe, TableOptionsAreValidatedForTheServer) {
  const schema::TableSchema orders = Orders();
  clickhouse::DdlTarget target;
  target.database = "shop";
  EXPECT_TRUE(CheckForPipe(MappingSet().For("shop", "orders"), orders, kOld, target).ok());
  EffectiveMapping options = OrdersWith([](TableOptions& o) {
    o.order_by = "(cust_id, id)";
    o.ttl = "created_at + INTERVAL 1 YEAR";
  });
  EXPECT_TRUE(CheckForPipe(options, orders, kNew, target).ok());
  Status s = CheckForPipe(options, orders, kOld, target);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);  // the server lacks TTL: exit 2 at start-up
  EXPECT_NE(s.error().message().find("TTL"), std::string::npos) << s.error().message();
  s = CheckForPipe(OrdersWith([](TableOptions& o) { o.order_by = "(cust_id)"; }), orders, kNew, target);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
  EXPECT_NE(s.error().message().find("id"), std::string::npos) << s.error().message();
}

}  // namespace
}  // namespace chsync::pipe
