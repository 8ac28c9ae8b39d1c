#include "pipe/config.h"

#include <gtest/gtest.h>

namespace chsync::pipe {
namespace {

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
log_level: debug
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
  EXPECT_EQ(c.log_level, "debug");
  EXPECT_TRUE(Validate(c).ok());
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
  s = LoadConfigText("source: [a, b]\n", "p.yaml", c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("'source' must be a text value"), std::string::npos)
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
