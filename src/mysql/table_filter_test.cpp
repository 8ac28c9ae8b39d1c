#include "mysql/table_filter.h"

#include <gtest/gtest.h>

namespace chsync::mysql {
namespace {

TEST(TableFilter, PatternsAndExclusions) {
  auto f = TableFilter::Parse("shop.*, crm.customers ,!shop.tmp_*,logs");
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_TRUE(f->Matches("shop", "orders"));
  EXPECT_FALSE(f->Matches("shop", "tmp_x"));
  EXPECT_TRUE(f->Matches("crm", "customers"));
  EXPECT_FALSE(f->Matches("crm", "leads"));
  EXPECT_TRUE(f->Matches("logs", "anything"));
  EXPECT_FALSE(f->Matches("other", "orders"));
}

TEST(TableFilter, WildcardsNeverSelectSystemSchemas) {
  auto f = TableFilter::Parse("*.*");
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(f->Matches("mysql", "user"));
  EXPECT_FALSE(f->Matches("sys", "x"));
  EXPECT_TRUE(f->Matches("app", "x"));
  EXPECT_TRUE(TableFilter::Parse("mysql.user")->Matches("mysql", "user"));
  EXPECT_FALSE(TableFilter::All().Matches("performance_schema", "threads"));
}

TEST(TableFilter, QuotedNamesAndErrors) {
  auto f = TableFilter::Parse("`my.db`.t");
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->Matches("my.db", "t"));
  auto bad = TableFilter::Parse("shop.");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind(), ErrorKind::kUsage);
  EXPECT_NE(bad.error().message().find("shop."), std::string::npos);
  EXPECT_FALSE(TableFilter::Parse("!shop.*").ok());
  EXPECT_FALSE(TableFilter::Parse(" , ").ok());
}

}  // namespace
}  // namespace chsync::mysql
