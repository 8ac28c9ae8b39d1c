#include "config/config.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace chsync::pipe {
namespace {

TEST(PipeConfig, BadBytesRetriesAndBooleansNameTheKey) {
  for (const char* text : {"batch:\n  max_bytes: 10\n", "retry:\n  attempts: 0\n",
                           "retry:\n  max_backoff_ms: lots\n", "durable_inserts: yes\n"}) {
    PipeConfig c;
    Status s = LoadConfigText(text, "pipe.yaml", c);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
    EXPECT_NE(s.error().message().find("pipe.yaml:"), std::string::npos) << s.error().message();
  }
}

TEST(PipeConfig, SshKeysPutATunnelIntoEveryUrlWithoutItsOwn) {
  PipeConfig c;
  Status s = LoadConfigText(R"(
source:
  - mysql://repl@db-1.internal:3306
  - mysql://repl@db-2.internal:3306?ssh=other@bastion-2:2200
dest: https://default@ch.internal:8443
source_ssh:
  host: bastion.example.com
  port: 2222
  user: tunnel
  key_file: /etc/chsync/id_ed25519
  known_hosts: /etc/chsync/known_hosts
dest_ssh:
  host: bastion.example.com
  user: tunnel
  strict_host_key_checking: false
)",
                            "pipe.yaml", c);
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(c.source_ssh.host, "bastion.example.com");
  EXPECT_EQ(c.source_ssh.port, 2222);
  EXPECT_EQ(c.source_ssh.user, "tunnel");
  EXPECT_EQ(c.source_ssh.key_file, "/etc/chsync/id_ed25519");
  EXPECT_EQ(c.source_ssh.known_hosts, "/etc/chsync/known_hosts");
  EXPECT_TRUE(c.source_ssh.strict_host_key_checking);
  EXPECT_EQ(c.dest_ssh.port, 22);
  EXPECT_FALSE(c.dest_ssh.strict_host_key_checking);
  ASSERT_TRUE(ApplySshKeys(c).ok());
  EXPECT_EQ(c.source,
            "mysql://repl@db-1.internal:3306?ssh=tunnel%40bastion.example.com:2222&ssh-key=/etc/chsync/"
            "id_ed25519&ssh-known-hosts=/etc/chsync/known_hosts, "
            "mysql://repl@db-2.internal:3306?ssh=other@bastion-2:2200");
  EXPECT_EQ(c.dest, "https://default@ch.internal:8443?ssh=tunnel%40bastion.example.com:22&ssh-strict=no");
}

TEST(PipeConfig, BadSshKeysNameTheKey) {
  for (const char* text : {"source_ssh:\n  port: 0\n", "source_ssh:\n  port: ssh\n",
                           "dest_ssh:\n  strict_host_key_checking: maybe\n", "source_ssh:\n  hots: b\n"}) {
    PipeConfig c;
    Status s = LoadConfigText(text, "pipe.yaml", c);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
    EXPECT_NE(s.error().message().find("pipe.yaml:"), std::string::npos) << s.error().message();
  }
  PipeConfig no_host;
  ASSERT_TRUE(
      LoadConfigText("source: mysql://r@db\nsource_ssh:\n  user: tunnel\n", "pipe.yaml", no_host).ok());
  Status s = ApplySshKeys(no_host);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("source_ssh names no host"), std::string::npos) << s.error().message();
  PipeConfig with_port;
  ASSERT_TRUE(
      LoadConfigText("source: mysql://r@db\nsource_ssh:\n  host: b:22\n", "pipe.yaml", with_port).ok());
  s = ApplySshKeys(with_port);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("source_ssh.port"), std::string::npos) << s.error().message();
}

TEST(PipeConfig, CompleteFileSetsEveryKey) {
  PipeConfig c;
  Status s = LoadConfigText(R"(
source: mysql://repl@db.internal:3306
dest: https://default@ch.internal:8443
tables: "shop.*, !shop.tmp_*"
state: /var/lib/chsync/shop
dest_database: analytics
server_id: 4711
snapshot:
  parallelism: 8
  chunk_rows: 50000
batch:
  max_rows: 20000
  max_age_ms: 500
  max_bytes: 1048576
retry:
  attempts: 3
  max_backoff_ms: 200
  give_up_after_ms: 60000
durable_inserts: true
log_level: debug
schema_changes:
  truncate: ignore
  drop_column: propagate
  tables:
    shop.orders:
      drop_table: drop
    "*.audit_log": {create_table: ignore, truncate: fail}
)",
                            "pipe.yaml", c);
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(c.source, "mysql://repl@db.internal:3306");
  EXPECT_EQ(c.dest, "https://default@ch.internal:8443");
  EXPECT_EQ(c.tables, "shop.*, !shop.tmp_*");
  EXPECT_EQ(c.state, "/var/lib/chsync/shop");
  EXPECT_EQ(c.dest_database, "analytics");
  EXPECT_EQ(c.server_id, 4711u);
  EXPECT_EQ(c.snapshot_parallelism, 8u);
  EXPECT_EQ(c.snapshot_chunk_rows, 50000u);
  EXPECT_EQ(c.batch_max_rows, 20000u);
  EXPECT_EQ(c.batch_max_age_ms, 500u);
  EXPECT_EQ(c.batch_max_bytes, 1048576u);
  EXPECT_EQ(c.retry_attempts, 3);
  EXPECT_EQ(c.retry_max_backoff_ms, 200u);
  EXPECT_EQ(c.retry_give_up_after_ms, 60000u);
  EXPECT_TRUE(c.durable_inserts);
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_EQ(c.policies.For("shop", "items").truncate, SchemaPolicy::Truncate::kIgnore);
  EXPECT_EQ(c.policies.For("shop", "items").drop_column, SchemaPolicy::DropColumn::kPropagate);
  EXPECT_EQ(c.policies.For("shop", "orders").drop_table, SchemaPolicy::DropTable::kDrop);
  EXPECT_EQ(c.policies.For("crm", "audit_log").create_table, SchemaPolicy::CreateTable::kIgnore);
  EXPECT_EQ(c.policies.For("crm", "audit_log").truncate, SchemaPolicy::Truncate::kFail);
  EXPECT_TRUE(Validate(c).ok());
}

TEST(PipeConfig, SchemaChangesSetDefaultsAndPerTablePolicies) {
  PipeConfig c;
  Status s = LoadConfigText(R"(
schema_changes:
  tables:
    shop.orders:
      rename_column: fail
    "shop.*":
      rename_column: ignore
  rename_column: fail
  key_change: fail
)",
                            "pipe.yaml", c);
  ASSERT_TRUE(s.ok()) << s.error().message();
  // The later per-table setting wins for shop.orders; a per-table setting beats the default.
  EXPECT_EQ(c.policies.For("shop", "orders").rename_column, SchemaPolicy::RenameColumn::kIgnore);
  EXPECT_EQ(c.policies.For("shop", "items").rename_column, SchemaPolicy::RenameColumn::kIgnore);
  EXPECT_EQ(c.policies.For("crm", "t").rename_column, SchemaPolicy::RenameColumn::kFail);
  EXPECT_EQ(c.policies.For("crm", "t").key_change, SchemaPolicy::KeyChange::kFail);
  EXPECT_EQ(c.policies.For("crm", "t").truncate, SchemaPolicy::Truncate::kPropagate);
  std::vector<std::string> lines = c.policies.Describe();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "shop.orders: rename_column=fail");
  EXPECT_EQ(lines[2], "shop.*: rename_column=ignore");

  // Flags (assignments after the file) win.
  ASSERT_TRUE(c.policies.Assign("shop.orders:rename_column=rename").ok());
  EXPECT_EQ(c.policies.For("shop", "orders").rename_column, SchemaPolicy::RenameColumn::kRename);

  PipeConfig empty;
  ASSERT_TRUE(LoadConfigText("schema_changes:\n", "pipe.yaml", empty).ok());
  EXPECT_EQ(empty.policies, PolicySet{});
}

TEST(PipeConfig, BadSchemaChangesNameFileLineAndKey) {
  struct Case {
    const char* yaml;
    const char* message;
  };
  const Case cases[] = {
      {"source: x\nschema_changes:\n  truncate: sometimes\n",
       "p.yaml:3: 'schema_changes.truncate' must be propagate, ignore or fail, not 'sometimes'"},
      {"schema_changes:\n  truncat: ignore\n",
       "p.yaml:2: 'schema_changes.truncat' is not a schema policy (keys: rename_column, type_change, "
       "truncate, create_table, drop_table, rename_table, drop_column, position_shift, key_change"},
      {"schema_changes:\n  tables:\n    shop.orders:\n      drop_table: never\n",
       "p.yaml:4: 'schema_changes.tables.shop.orders.drop_table' must be keep, drop or fail, not 'never'"},
      {"schema_changes:\n  tables:\n    shop.orders: {drop_tabel: drop}\n",
       "p.yaml:3: 'schema_changes.tables.shop.orders.drop_tabel' is not a schema policy (keys: "},
      {"schema_changes:\n  tables:\n    shop:\n      truncate: ignore\n",
       "p.yaml:4: table pattern 'shop' must be DB.TABLE (wildcards * and ?"},
      {"schema_changes:\n  tables:\n    shop.t: ignore\n",
       "p.yaml:3: 'schema_changes.tables.shop.t' must be a mapping of policy keys"},
      {"schema_changes:\n  tables: [shop.t]\n",
       "p.yaml:2: 'schema_changes.tables' must be a mapping of DB.TABLE patterns to policy keys"},
      {"schema_changes:\n  truncate: [ignore]\n", "p.yaml:2: 'schema_changes.truncate' must be a text value"},
      {"schema_changes:\n  tables:\n    shop.t:\n      truncate: {a: b}\n",
       "p.yaml:4: 'schema_changes.tables.shop.t.truncate' must be a text value"},
      {"schema_changes: fail\n", "p.yaml:1: 'schema_changes' must be a mapping of policy keys"},
  };
  for (const Case& k : cases) {
    PipeConfig c;
    Status s = LoadConfigText(k.yaml, "p.yaml", c);
    ASSERT_FALSE(s.ok()) << k.yaml;
    EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
    EXPECT_NE(s.error().message().find(k.message), std::string::npos) << s.error().message();
  }
}

TEST(PipeConfig, TableOptionsInTheFile) {
  PipeConfig c;
  Status s = LoadConfigText(R"yaml(
source: mysql://repl@db
table_options:
  "shop.orders":
    dest: analytics.orders_v2
    exclude_columns: [email, phone]
    rename_columns: {cust_id: customer_id}
    order_by: "(customer_id, id)"
    partition_by: "toYYYYMM(created_at)"
    ttl: "created_at + INTERVAL 1 YEAR"
    settings: {index_granularity: 4096, storage_policy: hot_cold, merge_with_ttl_timeout: "3600",
               ttl_only_drop_parts: true}
    columns: {status: {low_cardinality: true, codec: "CODEC(ZSTD(3))"}}
    adopt: true
    where: "status IN ('paid', 'shipped') AND created_at >= '2024-01-01'"
  "shop.*":
    exclude_columns: [ssn]
    deletes: ignore
    history: true
    dest_database: "{database}_ch"
  crm.people:
)yaml",
                            "pipe.yaml", c);
  ASSERT_TRUE(s.ok()) << s.error().message();
  const std::vector<TableOptions>& entries = c.mappings.entries();
  ASSERT_EQ(entries.size(), 3u);
  const TableOptions& orders = entries[0];
  EXPECT_EQ(orders.pattern, "shop.orders");
  EXPECT_EQ(orders.origin, "pipe.yaml:4");
  EXPECT_EQ(orders.dest_database, "analytics");
  EXPECT_EQ(orders.dest_table, "orders_v2");
  EXPECT_EQ(orders.exclude_columns, (std::vector<std::string>{"email", "phone"}));
  EXPECT_EQ(orders.rename_columns,
            (std::vector<std::pair<std::string, std::string>>{{"cust_id", "customer_id"}}));
  EXPECT_EQ(orders.order_by, "(customer_id, id)");
  EXPECT_EQ(orders.partition_by, "toYYYYMM(created_at)");
  EXPECT_EQ(orders.ttl, "created_at + INTERVAL 1 YEAR");
  EXPECT_EQ(orders.settings, (std::vector<std::pair<std::string, std::string>>{
                                 {"index_granularity", "4096"},
                                 {"storage_policy", "'hot_cold'"},
                                 {"merge_with_ttl_timeout", "'3600'"},  // quoted in the file: text
                                 {"ttl_only_drop_parts", "1"}}));
  ASSERT_EQ(orders.columns.size(), 1u);
  EXPECT_EQ(orders.columns[0].first, "status");
  EXPECT_EQ(orders.columns[0].second, (ColumnEntry{"ZSTD(3)", true}));
  EXPECT_EQ(orders.adopt, true);
  EXPECT_EQ(orders.where, "status IN ('paid', 'shipped') AND created_at >= '2024-01-01'");
  EXPECT_EQ(entries[1].origin, "pipe.yaml:16");
  EXPECT_EQ(entries[2].pattern, "crm.people");

  EffectiveMapping m = c.mappings.For("shop", "orders");
  EXPECT_EQ(m.dest_database, "shop_ch");  // the later entry wins
  EXPECT_EQ(m.dest_table, "orders_v2");
  EXPECT_TRUE(m.Excluded("ssn"));
  EXPECT_TRUE(m.Excluded("email"));
  EXPECT_EQ(m.DestColumn("cust_id"), "customer_id");
  EXPECT_EQ(m.deletes, DeleteMode::kIgnore);
  EXPECT_TRUE(m.history);
  EXPECT_FALSE(c.mappings.For("crm", "people").history);
  EXPECT_EQ(orders.deletes, std::nullopt);
  EXPECT_EQ(c.mappings.For("crm", "people").deletes, DeleteMode::kSoft);

  PipeConfig empty;
  ASSERT_TRUE(LoadConfigText("table_options:\n", "pipe.yaml", empty).ok());
  EXPECT_TRUE(empty.mappings.empty());
}

TEST(PipeConfig, BadTableOptionsNameFileLineAndKey) {
  struct Case {
    const char* yaml;
    const char* message;
  };
  const Case cases[] = {
      {"table_options: [shop.orders]\n",
       "p.yaml:1: 'table_options' must be a mapping of DB.TABLE patterns to table options"},
      {"table_options:\n  shop.orders: yes\n",
       "p.yaml:2: 'table_options.shop.orders' must be a mapping of table options (adopt, columns, deletes, "
       "dest, dest_database, dest_table, exclude_columns, history, json, order_by, partition_by, "
       "rename_columns, settings, source_column, ttl, where)"},
      {"table_options:\n  shop.orders:\n    order: id\n",
       "p.yaml:3: 'table_options.shop.orders.order' is not a table option (keys: adopt, columns, deletes, "
       "dest, "},
      {"table_options:\n  shop.orders:\n    dest: analytics\n",
       "p.yaml:3: 'table_options.shop.orders.dest' must be DB.TABLE (e.g. analytics.orders_v2), not "
       "'analytics'"},
      {"table_options:\n  shop.orders:\n    dest: a.b\n    dest_table: c\n",
       "p.yaml:2: 'table_options.shop.orders' gives dest and dest_database or dest_table: give one or the "
       "others"},
      {"table_options:\n  shop.orders:\n    exclude_columns: email\n",
       "p.yaml:3: 'table_options.shop.orders.exclude_columns' must be a list of column names"},
      {"table_options:\n  shop.orders:\n    exclude_columns: [[email]]\n",
       "'table_options.shop.orders.exclude_columns' must be a list of column names"},
      {"table_options:\n  shop.orders:\n    rename_columns: [a, b]\n",
       "p.yaml:3: 'table_options.shop.orders.rename_columns' must be a mapping of source column names to "
       "ClickHouse names"},
      {"table_options:\n  shop.orders:\n    rename_columns:\n      a: [b]\n",
       "p.yaml:4: 'table_options.shop.orders.rename_columns.a' must be a text value"},
      {"table_options:\n  shop.orders:\n    order_by: [id]\n",
       "p.yaml:3: 'table_options.shop.orders.order_by' must be a text value"},
      {"table_options:\n  shop.orders:\n    order_by: \"(id\"\n",
       "p.yaml:2: 'table_options.shop.orders.order_by': '(' is not closed at byte 3 of '(id'"},
      {"table_options:\n  shop.orders:\n    settings: {a: {b: 1}}\n",
       "p.yaml:3: 'table_options.shop.orders.settings.a' must be a text value"},
      {"table_options:\n  shop.orders:\n    columns: [status]\n",
       "p.yaml:3: 'table_options.shop.orders.columns' must be a mapping of column names to column options"},
      {"table_options:\n  shop.orders:\n    columns:\n      status: ZSTD\n",
       "p.yaml:4: 'table_options.shop.orders.columns.status' must be a mapping of column options (codec, "
       "low_cardinality)"},
      {"table_options:\n  shop.orders:\n    columns:\n      status: {lowcardinality: true}\n",
       "p.yaml:4: 'table_options.shop.orders.columns.status.lowcardinality' is not a column option (keys: "
       "codec, "
       "low_cardinality)"},
      {"table_options:\n  shop.orders:\n    columns:\n      status: {low_cardinality: yes}\n",
       "p.yaml:4: 'table_options.shop.orders.columns.status.low_cardinality' must be true or false"},
      {"table_options:\n  shop.orders:\n    deletes: hard\n",
       "p.yaml:3: 'table_options.shop.orders.deletes' must be soft (a DELETE removes the row) or ignore "
       "(append-only)"},
      {"table_options:\n  shop.orders:\n    history: yes\n",
       "p.yaml:3: 'table_options.shop.orders.history' must be true or false"},
      {"table_options:\n  shop.orders:\n    adopt: 1\n",
       "p.yaml:3: 'table_options.shop.orders.adopt' must be true or false"},
      {"table_options:\n  orders:\n    adopt: true\n",
       "p.yaml:2: 'table_options.orders': the pattern must be DB.TABLE"},
      {"table_options:\n  \"shop.*\":\n    dest_table: all\n",
       "p.yaml:2: 'table_options.shop.*.dest_table' would put every table matching 'shop.*' into the one "
       "ClickHouse table 'all'"},
  };
  for (const Case& k : cases) {
    PipeConfig c;
    Status s = LoadConfigText(k.yaml, "p.yaml", c);
    ASSERT_FALSE(s.ok()) << k.yaml;
    EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
    EXPECT_NE(s.error().message().find(k.message), std::string::npos) << s.error().message();
  }
}

TEST(PipeConfig, UnknownKeyNamesFileLineAndKnownKeys) {
  PipeConfig c;
  Status s = LoadConfigText("source: x\nsnapshot:\n  paralelism: 3\n", "pipe.yaml", c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
  EXPECT_NE(s.error().message().find("pipe.yaml:3: 'snapshot.paralelism' is not a setting"),
            std::string::npos)
      << s.error().message();
  EXPECT_NE(s.error().message().find("snapshot.parallelism"), std::string::npos);
  EXPECT_NE(s.error().message().find("schema_changes"), std::string::npos);
  EXPECT_NE(s.error().message().find("table_options"), std::string::npos);
}

TEST(PipeConfig, BadValuesAreNamed) {
  PipeConfig c;
  Status s = LoadConfigText("batch:\n  max_rows: lots\n", "p.yaml", c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("p.yaml:2: 'batch.max_rows' must be a whole number, not 'lots'"),
            std::string::npos)
      << s.error().message();
  s = LoadConfigText("server_id: 0\n", "p.yaml", c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("'server_id' must be between 1 and 4294967295"), std::string::npos)
      << s.error().message();
  s = LoadConfigText("source: [a, [b]]\n", "p.yaml", c);  // a list of URLs is fine; nesting is not
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("'source' must be a list of URLs, one per item"), std::string::npos)
      << s.error().message();
  s = LoadConfigText("source: [a, b\n", "p.yaml", c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("not valid YAML"), std::string::npos) << s.error().message();
}

TEST(PipeConfig, ValidateNamesTheMissingSettingAndItsFlag) {
  PipeConfig c;
  Status s = Validate(c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("--source"), std::string::npos);
  c.source = "mysql://u@h";
  c.dest = "file:/x";
  s = Validate(c);
  EXPECT_NE(s.error().message().find("--state DIR"), std::string::npos);
  c.state = "/tmp/s";
  c.log_level = "loud";
  EXPECT_FALSE(Validate(c).ok());
  c.log_level = "warn";
  EXPECT_TRUE(Validate(c).ok());
}

TEST(PipeConfig, MissingFileIsAConfigError) {
  PipeConfig c;
  Status s = LoadConfigFile("/nonexistent/chsync.yaml", c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
  EXPECT_NE(s.error().message().find("/nonexistent/chsync.yaml"), std::string::npos);
}

}  // namespace
}  // namespace chsync::pipe

namespace chsync::pipe {
namespace {

TEST(PipeConfig, ClusterKeysAndADestinationList) {
  PipeConfig c;
  Status s = LoadConfigText(R"(
source: mysql://u@h:3306
dest:
  - http://default@node1:8123
  - http://default@node2:8123
state: /tmp/s
dest_cluster: sharded
dest_replication_path: /ch/{layer}/{database}/{table}
dest_replica_name: "{host}"
dest_ddl_timeout_s: 90
)",
                            "pipe.yaml", c);
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(c.dest, "http://default@node1:8123,http://default@node2:8123");
  EXPECT_EQ(c.dest_cluster, "sharded");
  EXPECT_EQ(c.dest_replication_path, "/ch/{layer}/{database}/{table}");
  EXPECT_EQ(c.dest_replica_name, "{host}");
  EXPECT_EQ(c.dest_ddl_timeout_s, 90u);
  EXPECT_TRUE(Validate(c).ok());

  PipeConfig bad = c;
  bad.dest_replication_path = "ch/{table}";
  ASSERT_FALSE(Validate(bad).ok());
  EXPECT_NE(Validate(bad).error().message().find("starting with '/'"), std::string::npos);
  bad = c;
  bad.dest = "file:/tmp/store";
  ASSERT_FALSE(Validate(bad).ok());
  EXPECT_NE(Validate(bad).error().message().find("needs ClickHouse servers"), std::string::npos);

  PipeConfig list;
  Status nested = LoadConfigText("dest: [http://a:1, [x]]\n", "pipe.yaml", list);
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.error().message().find("pipe.yaml:1: 'dest' must be a list of URLs"), std::string::npos)
      << nested.error().message();
}

TEST(PipeConfig, SourceListFailoverAndBinlogGapPolicy) {
  PipeConfig c;
  EXPECT_EQ(c.on_binlog_gap, PipeConfig::BinlogGap::kFail) << "a binlog gap must stop the pipe unless asked";
  EXPECT_EQ(c.failover_after_ms, 30000u);
  Status s = LoadConfigText(R"(
source:
  - mysql://u@primary:3306
  - mysql://u@replica:3306
dest: http://default@ch:8123
state: /tmp/s
failover:
  after_ms: 5000
on_binlog_gap: resync
)",
                            "pipe.yaml", c);
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(c.source, "mysql://u@primary:3306,mysql://u@replica:3306");
  EXPECT_EQ(c.failover_after_ms, 5000u);
  EXPECT_EQ(c.on_binlog_gap, PipeConfig::BinlogGap::kResync);

  PipeConfig bad;
  Status gap = LoadConfigText("on_binlog_gap: skip\n", "pipe.yaml", bad);
  ASSERT_FALSE(gap.ok());
  EXPECT_NE(gap.error().message().find("on_binlog_gap must be fail or resync, not 'skip'"), std::string::npos)
      << gap.error().message();
  EXPECT_FALSE(ParseBinlogGap("").ok());
  EXPECT_EQ(*ParseBinlogGap("fail"), PipeConfig::BinlogGap::kFail);
}

}  // namespace
}  // namespace chsync::pipe

namespace chsync::pipe {
namespace {

PipeConfig Minimal() {
  PipeConfig c;
  c.source = "mysql://u@h:3306";
  c.dest = "http://default@ch:8123";
  c.state = "/tmp/s";
  return c;
}

TEST(PipeConfig, LogFormatAndHttpBlock) {
  PipeConfig c = Minimal();
  EXPECT_EQ(c.log_format, "text");
  EXPECT_EQ(c.http_listen, "") << "the HTTP server must be off unless asked for";
  EXPECT_EQ(c.http_ready_max_lag_s, 60);
  Status s = LoadConfigText(R"(
log_format: json
http:
  listen: "127.0.0.1:9187"
  ready_max_lag_s: 12.5
)",
                            "pipe.yaml", c);
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(c.log_format, "json");
  EXPECT_EQ(c.http_listen, "127.0.0.1:9187");
  EXPECT_EQ(c.http_ready_max_lag_s, 12.5);
  EXPECT_TRUE(Validate(c).ok()) << Validate(c).error().message();

  PipeConfig flow = Minimal();
  s = LoadConfigText("http: {listen: \"[::1]:0\", ready_max_lag_s: 60}\n", "pipe.yaml", flow);
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(flow.http_listen, "[::1]:0");
  EXPECT_EQ(flow.http_ready_max_lag_s, 60);
  EXPECT_FALSE(flow.http_metrics_per_source_table) << "labelled by ClickHouse table by default";
  EXPECT_TRUE(Validate(flow).ok());

  PipeConfig per_source = Minimal();
  s = LoadConfigText("http: {listen: \"127.0.0.1:0\", metrics_per_source_table: true}\n", "pipe.yaml",
                     per_source);
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_TRUE(per_source.http_metrics_per_source_table);
  s = LoadConfigText("http: {metrics_per_source_table: sometimes}\n", "pipe.yaml", per_source);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("http.metrics_per_source_table"), std::string::npos)
      << s.error().message();
}

TEST(PipeConfig, BadLogFormatIsRejected) {
  PipeConfig c = Minimal();
  ASSERT_TRUE(LoadConfigText("log_format: xml\n", "pipe.yaml", c).ok());
  Status s = Validate(c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
  EXPECT_NE(s.error().message().find("log_format must be text or json, not 'xml'"), std::string::npos)
      << s.error().message();
  EXPECT_NE(s.error().message().find("--log-format"), std::string::npos) << s.error().message();
  c.log_format = "JSON";
  EXPECT_FALSE(Validate(c).ok()) << "the values are lower case";
}

TEST(PipeConfig, BadReadyMaxLagIsRejected) {
  struct Case {
    const char* yaml;
    const char* message;
  };
  const Case cases[] = {
      {"http:\n  ready_max_lag_s: 0\n", "pipe.yaml:2: 'http.ready_max_lag_s' must be above 0"},
      {"http:\n  ready_max_lag_s: -5\n",
       "'http.ready_max_lag_s' must be a number such as 60 or 0.5, not '-5'"},
      {"http:\n  ready_max_lag_s: soon\n", "'http.ready_max_lag_s' must be a number"},
      {"http:\n  ready_max_lag_s: .nan\n", "'http.ready_max_lag_s' must be a number"},
      {"http:\n  ready_max_lag_s: 1e3\n", "'http.ready_max_lag_s' must be a number"},
      {"http:\n  ready_max_lag_s: 604801\n", "at most 604800"},
      {"http:\n  ready_max_lag_s: [1]\n", "'http.ready_max_lag_s' must be a number"},
      {"http:\n  port: 9187\n", "'http.port' is not a setting"},
  };
  for (const Case& c : cases) {
    PipeConfig config = Minimal();
    Status s = LoadConfigText(c.yaml, "pipe.yaml", config);
    ASSERT_FALSE(s.ok()) << c.yaml;
    EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
    EXPECT_NE(s.error().message().find(c.message), std::string::npos) << s.error().message();
  }
  // A flag sets the field directly: Validate checks it too.
  for (double bad : {0.0, -1.0, std::nan(""), 1e9}) {
    PipeConfig config = Minimal();
    config.http_ready_max_lag_s = bad;
    Status s = Validate(config);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.error().message().find("--ready-max-lag-s"), std::string::npos) << s.error().message();
  }
}

TEST(PipeConfig, HttpListenAddressIsChecked) {
  for (const char* good : {"127.0.0.1:9187", "0.0.0.0:9187", "localhost:0", "[::1]:9187", "[::]:65535"}) {
    EXPECT_TRUE(ValidateListenAddress(good).ok()) << good;
  }
  for (const char* bad : {"9187", ":9187", "127.0.0.1:", "127.0.0.1:http", "127.0.0.1:65536", "::1:9187",
                          "[::1:9187", "[]:1"}) {
    Status s = ValidateListenAddress(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.error().message().find("http.listen"), std::string::npos) << s.error().message();
  }
  PipeConfig c = Minimal();
  c.http_listen = "9187";
  EXPECT_FALSE(Validate(c).ok());
}

TEST(PipeConfig, DateTimeFallback) {
  PipeConfig c;
  EXPECT_EQ(c.datetime_fallback, PipeConfig::DateTimeFallback::kDropFraction)
      << "today's behaviour by default";
  ASSERT_TRUE(LoadConfigText("datetime_fallback: string\n", "pipe.yaml", c).ok());
  EXPECT_EQ(c.datetime_fallback, PipeConfig::DateTimeFallback::kString);
  ASSERT_TRUE(LoadConfigText("datetime_fallback: drop_fraction\n", "pipe.yaml", c).ok());
  EXPECT_EQ(c.datetime_fallback, PipeConfig::DateTimeFallback::kDropFraction);

  PipeConfig bad;
  Status s = LoadConfigText("datetime_fallback: text\n", "pipe.yaml", bad);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
  EXPECT_NE(s.error().message().find("pipe.yaml:1"), std::string::npos) << s.error().message();
  EXPECT_NE(s.error().message().find("datetime_fallback must be drop_fraction or string, not 'text'"),
            std::string::npos)
      << s.error().message();
  EXPECT_FALSE(ParseDateTimeFallback("").ok());
  EXPECT_EQ(*ParseDateTimeFallback("string"), PipeConfig::DateTimeFallback::kString);
}

TEST(PipeConfig, StartModesInTheFileAndTheirChecks) {
  PipeConfig c = Minimal();
  EXPECT_EQ(c.snapshot_mode, PipeConfig::StartMode::kInitial) << "today's behaviour by default";
  ASSERT_TRUE(
      LoadConfigText("snapshot:\n  mode: never\n  parallelism: 2\nstart_gtid: 0-1-42\n", "p.yaml", c).ok());
  EXPECT_EQ(c.snapshot_mode, PipeConfig::StartMode::kNever);
  EXPECT_EQ(c.snapshot_parallelism, 2u);
  EXPECT_EQ(c.start_gtid, "0-1-42");
  EXPECT_TRUE(Validate(c).ok());
  // `snapshot:` alone is the mode.
  ASSERT_TRUE(LoadConfigText("snapshot: only\n", "p.yaml", c).ok());
  EXPECT_EQ(c.snapshot_mode, PipeConfig::StartMode::kOnly);
  Status refused = Validate(c);
  ASSERT_FALSE(refused.ok()) << "a start point with a copy";
  EXPECT_NE(refused.error().message().find("start_gtid is given with snapshot.mode only"), std::string::npos)
      << refused.error().message();

  PipeConfig two = Minimal();
  ASSERT_TRUE(
      LoadConfigText("snapshot: never\nstart_position: binlog.000002:4\nstart_time: '2024-01-01 00:00:00'\n",
                     "p.yaml", two)
          .ok());
  Status both = Validate(two);
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.error().message().find("at most one of start_position, start_gtid and start_time"),
            std::string::npos)
      << both.error().message();

  for (const char* text :
       {"snapshot: sometimes\n", "snapshot:\n  mode: [never]\n", "start_position: binlog.000002\n",
        "start_position: binlog.000002:3\n", "start_position: ':77'\n", "start_time: yesterday\n",
        "start_time: '2024-02-30 00:00:00'\n", "start_time: '2024-01-01 24:00:00'\n",
        "start_time: '2024-01-01 00:00:00+2'\n"}) {
    PipeConfig bad = Minimal();
    Status s = LoadConfigText(text, "p.yaml", bad);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
    EXPECT_NE(s.error().message().find("p.yaml:"), std::string::npos) << s.error().message();
  }
}

TEST(PipeConfig, StartTimeIsUtcUnlessAnOffsetIsGiven) {
  EXPECT_EQ(*ParseStartTime("1970-01-01 00:00:00"), 0);
  EXPECT_EQ(*ParseStartTime("2024-03-01 12:30:15"), 1709296215);
  EXPECT_EQ(*ParseStartTime("2024-03-01T12:30:15Z"), 1709296215);
  EXPECT_EQ(*ParseStartTime("2024-03-01 14:30:15+02:00"), 1709296215);
  EXPECT_EQ(*ParseStartTime("2024-03-01 07:00:15-05:30"), 1709296215);
  EXPECT_EQ(*ParseStartTime("2000-02-29 00:00:00"), 951782400) << "a leap day";
  EXPECT_FALSE(ParseStartTime("2023-02-29 00:00:00").ok());
  EXPECT_FALSE(ParseStartTime("1969-12-31 23:59:59").ok());
  EXPECT_FALSE(ParseStartTime("2024-03-01 12:30").ok());
  auto position = ParseStartPosition("mysql-bin.000042:1234");
  ASSERT_TRUE(position.ok());
  EXPECT_EQ(position->first, "mysql-bin.000042");
  EXPECT_EQ(position->second, 1234u);
  EXPECT_FALSE(ParseStartPosition("mysql-bin.000042:12x").ok());
  EXPECT_FALSE(ParseStartPosition("../x:100").ok());
}

TEST(PipeConfig, JsonPerPipeAndPerTable) {
  PipeConfig c;
  EXPECT_EQ(c.json, PipeConfig::JsonMode::kString) << "today's behaviour by default";
  ASSERT_TRUE(LoadConfigText("json: native\n", "pipe.yaml", c).ok());
  EXPECT_EQ(c.json, PipeConfig::JsonMode::kNative);
  ASSERT_TRUE(LoadConfigText("json: string\n", "pipe.yaml", c).ok());
  EXPECT_EQ(c.json, PipeConfig::JsonMode::kString);

  Status s = LoadConfigText("json: binary\n", "pipe.yaml", c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
  EXPECT_NE(s.error().message().find("pipe.yaml:1"), std::string::npos) << s.error().message();
  EXPECT_NE(s.error().message().find("string or native"), std::string::npos) << s.error().message();

  PipeConfig t;
  s = LoadConfigText("table_options:\n  shop.events:\n    json: native\n  shop.old:\n    json: string\n",
                     "pipe.yaml", t);
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(t.mappings.For("shop", "events").json_native, std::optional<bool>(true));
  EXPECT_EQ(t.mappings.For("shop", "old").json_native, std::optional<bool>(false));
  EXPECT_EQ(t.mappings.For("shop", "other").json_native, std::nullopt);
  clickhouse::Capabilities caps;
  EXPECT_TRUE(t.mappings.For("shop", "events").Caps(caps).json_native);
  caps.json_native = true;
  EXPECT_FALSE(t.mappings.For("shop", "old").Caps(caps).json_native) << "the table's over the pipe's";
  EXPECT_TRUE(t.mappings.For("shop", "other").Caps(caps).json_native);

  PipeConfig bad;
  s = LoadConfigText("table_options:\n  shop.events:\n    json: yes\n", "pipe.yaml", bad);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("pipe.yaml:3"), std::string::npos) << s.error().message();
  EXPECT_NE(s.error().message().find("json"), std::string::npos) << s.error().message();
}

}  // namespace
}  // namespace chsync::pipe
