#include "config/selection.h"

#include <gtest/gtest.h>

namespace chsync::pipe {
namespace {

Selection Make(std::string_view spec, std::vector<SelectionChange> changes = {}) {
  auto s = Selection::Make(spec, std::move(changes));
  EXPECT_TRUE(s.ok()) << s.error().message();
  return s.ok() ? *s : Selection();
}

TEST(SelectionTest, TheConfiguredPatternsDecideWithoutChanges) {
  Selection s = Make("shop.*, !shop.tmp_*");
  EXPECT_TRUE(s.Matches("shop", "orders"));
  EXPECT_FALSE(s.Matches("shop", "tmp_x"));
  EXPECT_FALSE(s.Matches("crm", "users"));
  EXPECT_TRUE(Make("").Matches("crm", "users")) << "empty: every table";
  EXPECT_FALSE(Make("").Matches("mysql", "user")) << "never the system schemas";
}

TEST(SelectionTest, TheLastChangeThatMatchesATableDecides) {
  Selection s = Make("shop.*");
  auto added = s.With("add", "crm.users", 1);
  ASSERT_TRUE(added.ok()) << added.error().message();
  EXPECT_TRUE(added->Matches("crm", "users"));
  EXPECT_FALSE(added->Matches("crm", "orders"));
  auto removed = added->With("remove", "shop.audit_*", 2);
  ASSERT_TRUE(removed.ok());
  EXPECT_FALSE(removed->Matches("shop", "audit_2024"));
  EXPECT_TRUE(removed->Matches("shop", "orders"));
  // One table of the removed pattern added back: the later change wins for it alone.
  auto back = removed->With("add", "shop.audit_2025", 3);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->Matches("shop", "audit_2025"));
  EXPECT_FALSE(back->Matches("shop", "audit_2024"));
  // The configured exclusion is overridden by a later add too.
  auto tmp = Make("shop.*, !shop.tmp_*").With("add", "shop.tmp_keep", 4);
  ASSERT_TRUE(tmp.ok());
  EXPECT_TRUE(tmp->Matches("shop", "tmp_keep"));
  EXPECT_FALSE(tmp->Matches("shop", "tmp_other"));
}

TEST(SelectionTest, AChangeOfAPatternReplacesTheEarlierOneOfTheSamePattern) {
  auto s = Make("shop.*").With("add", "crm.users", 1);
  ASSERT_TRUE(s.ok());
  auto again = s->With("remove", "crm.users", 2);
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->changes().size(), 1u);
  EXPECT_EQ(again->changes()[0], (SelectionChange{"remove", "crm.users", 2}));
  EXPECT_FALSE(again->Matches("crm", "users"));
  EXPECT_EQ(again->Describe(), "shop.*; then remove crm.users");
}

TEST(SelectionTest, DescribeNamesTheConfiguredTextAndEveryChange) {
  Selection s = Make("shop.*", {{"add", "crm.users", 1}, {"remove", "shop.audit", 2}});
  EXPECT_EQ(s.Describe(), "shop.*; then add crm.users, remove shop.audit");
  EXPECT_EQ(Make("").Describe(), "*.*");
  EXPECT_NE(Make("shop.*").Describe(), Make("shop.*, crm.users").Describe());
}

TEST(SelectionTest, BadPatternsAndOpsAreRefused) {
  Selection s = Make("shop.*");
  for (std::string_view bad : {"shop", "", "a.b,c.d", "!shop.x", "."}) {
    auto r = s.With("add", bad, 1);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().kind(), ErrorKind::kUsage) << bad;
    EXPECT_NE(r.error().message().find("DB.TABLE"), std::string::npos) << r.error().message();
  }
  EXPECT_FALSE(s.With("drop", "shop.x", 1).ok());
  EXPECT_FALSE(Selection::Make("shop.*", {{"rename", "shop.x", 1}}).ok());
  EXPECT_FALSE(Selection::Make("shop.", {}).ok());
}

}  // namespace
}  // namespace chsync::pipe
