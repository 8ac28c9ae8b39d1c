#include "policy/schema_policy.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace chsync::pipe {
namespace {

using P = SchemaPolicy;

std::string Message(const Status& s) {
  return s.ok() ? "(ok)" : s.error().message();
}

TEST(SchemaPolicy, DefaultsAreTheDocumentedOnes) {
  PolicySet set;
  P p = set.For("shop", "orders");
  EXPECT_EQ(PolicyValueName(p.rename_column), "rename");
  EXPECT_EQ(PolicyValueName(p.type_change), "follow");
  EXPECT_EQ(PolicyValueName(p.truncate), "propagate");
  EXPECT_EQ(PolicyValueName(p.create_table), "replicate");
  EXPECT_EQ(PolicyValueName(p.drop_table), "keep");
  EXPECT_EQ(PolicyValueName(p.rename_table), "follow");
  EXPECT_EQ(PolicyValueName(p.drop_column), "keep");
  EXPECT_EQ(PolicyValueName(p.position_shift), "follow");
  EXPECT_EQ(PolicyValueName(p.key_change), "rebuild");
  EXPECT_EQ(PolicyValueName(p.keyless), "refuse");
  EXPECT_EQ(PolicyValueName(p.on_table_error), "park");
  EXPECT_EQ(p, P{});
  EXPECT_EQ(set.Describe(),
            std::vector<std::string>{"defaults: rename_column=rename type_change=follow truncate=propagate "
                                     "create_table=replicate drop_table=keep rename_table=follow "
                                     "drop_column=keep position_shift=follow key_change=rebuild "
                                     "keyless=refuse on_table_error=park"});
}

TEST(SchemaPolicy, EveryValueOfEveryKeyCanBeAssigned) {
  struct Case {
    const char* key;
    std::vector<const char*> values;
  };
  const std::vector<Case> cases = {
      {"rename_column", {"rename", "ignore", "fail"}},
      {"type_change", {"follow", "fail"}},
      {"truncate", {"propagate", "ignore", "fail"}},
      {"create_table", {"replicate", "ignore", "fail"}},
      {"drop_table", {"keep", "drop", "fail"}},
      {"rename_table", {"follow", "fail"}},
      {"drop_column", {"keep", "propagate", "fail"}},
      {"position_shift", {"follow", "fail"}},
      {"key_change", {"rebuild", "fail"}},
      {"keyless", {"refuse", "distinct"}},
      {"on_table_error", {"park", "stop"}},
  };
  for (const Case& c : cases) {
    for (const char* value : c.values) {
      PolicySet set;
      std::string assignment = std::string(c.key) + "=" + value;
      ASSERT_TRUE(set.Assign(assignment).ok()) << Message(set.Assign(assignment));
      P p = set.For("any", "table");
      std::string_view got;
      std::string key = c.key;
      if (key == "rename_column") got = PolicyValueName(p.rename_column);
      if (key == "type_change") got = PolicyValueName(p.type_change);
      if (key == "truncate") got = PolicyValueName(p.truncate);
      if (key == "create_table") got = PolicyValueName(p.create_table);
      if (key == "drop_table") got = PolicyValueName(p.drop_table);
      if (key == "rename_table") got = PolicyValueName(p.rename_table);
      if (key == "drop_column") got = PolicyValueName(p.drop_column);
      if (key == "position_shift") got = PolicyValueName(p.position_shift);
      if (key == "key_change") got = PolicyValueName(p.key_change);
      if (key == "keyless") got = PolicyValueName(p.keyless);
      if (key == "on_table_error") got = PolicyValueName(p.on_table_error);
      EXPECT_EQ(got, value) << assignment;
      EXPECT_NE(set.Describe()[0].find(" " + assignment), std::string::npos) << set.Describe()[0];
    }
  }
}

TEST(SchemaPolicy, GlobalAssignmentChangesEveryTable) {
  PolicySet set;
  ASSERT_TRUE(set.Assign("truncate=ignore").ok());
  ASSERT_TRUE(set.Assign("", "drop_table", "drop", "chsync.yaml:3").ok());
  EXPECT_EQ(set.For("shop", "orders").truncate, P::Truncate::kIgnore);
  EXPECT_EQ(set.For("crm", "customers").truncate, P::Truncate::kIgnore);
  EXPECT_EQ(set.For("crm", "customers").drop_table, P::DropTable::kDrop);
  EXPECT_EQ(set.defaults().truncate, P::Truncate::kIgnore);
  EXPECT_EQ(set.For("crm", "customers").rename_column, P::RenameColumn::kRename);
  ASSERT_EQ(set.Describe().size(), 1u);
  EXPECT_NE(set.Describe()[0].find(" truncate=ignore "), std::string::npos);
  EXPECT_NE(set.Describe()[0].find(" drop_table=drop "), std::string::npos);
}

TEST(SchemaPolicy, PerTableAssignmentsApplyOnlyToMatchingTablesLaterOnesWin) {
  PolicySet set;
  ASSERT_TRUE(set.Assign("shop.*:truncate=ignore").ok());
  ASSERT_TRUE(set.Assign("shop.orders:truncate=fail").ok());
  ASSERT_TRUE(set.Assign("shop.order?:drop_table=drop").ok());
  EXPECT_EQ(set.For("shop", "orders").truncate, P::Truncate::kFail);
  EXPECT_EQ(set.For("shop", "orders").drop_table, P::DropTable::kDrop);
  EXPECT_EQ(set.For("shop", "items").truncate, P::Truncate::kIgnore);
  EXPECT_EQ(set.For("shop", "items").drop_table, P::DropTable::kKeep);
  EXPECT_EQ(set.For("crm", "orders").truncate, P::Truncate::kPropagate);
  EXPECT_EQ(set.For("shop", "order").drop_table, P::DropTable::kKeep);  // ? is one character

  // Order decides between per-table assignments: the broader one given last wins.
  ASSERT_TRUE(set.Assign("shop.*:truncate=propagate").ok());
  EXPECT_EQ(set.For("shop", "orders").truncate, P::Truncate::kPropagate);

  // Assigning the same key to the same pattern again replaces the earlier assignment: it is
  // listed once, last.
  std::vector<std::string> lines = set.Describe();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1], "shop.orders: truncate=fail");
  EXPECT_EQ(lines[2], "shop.order?: drop_table=drop");
  EXPECT_EQ(lines[3], "shop.*: truncate=propagate");
  ASSERT_TRUE(set.Assign("shop.orders:truncate=ignore").ok());
  EXPECT_EQ(set.For("shop", "orders").truncate, P::Truncate::kIgnore);
  EXPECT_EQ(set.For("shop", "items").truncate, P::Truncate::kPropagate);
  lines = set.Describe();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1], "shop.order?: drop_table=drop");
  EXPECT_EQ(lines[2], "shop.*: truncate=propagate");
  EXPECT_EQ(lines[3], "shop.orders: truncate=ignore");
}

TEST(SchemaPolicy, DescribeListsPerTableAssignmentsInOrder) {
  PolicySet set;
  ASSERT_TRUE(set.Assign("shop.*:truncate=ignore").ok());
  ASSERT_TRUE(set.Assign("", "drop_column", "propagate", "--schema-policy").ok());
  ASSERT_TRUE(set.Assign("*.audit_log", "create_table", "ignore", "chsync.yaml:9").ok());
  std::vector<std::string> lines = set.Describe();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].find("defaults: "), std::string::npos);
  EXPECT_NE(lines[0].find(" drop_column=propagate "), std::string::npos);
  EXPECT_NE(lines[0].find(" truncate=propagate "), std::string::npos);
  EXPECT_EQ(lines[1], "shop.*: truncate=ignore");
  EXPECT_EQ(lines[2], "*.audit_log: create_table=ignore");
}

TEST(SchemaPolicy, PerTableBeatsTheDefaultWhateverTheOrder) {
  PolicySet set;
  ASSERT_TRUE(set.Assign("shop.orders:drop_table=drop").ok());
  ASSERT_TRUE(set.Assign("drop_table=fail").ok());
  EXPECT_EQ(set.For("shop", "orders").drop_table, P::DropTable::kDrop);
  EXPECT_EQ(set.For("shop", "items").drop_table, P::DropTable::kFail);
}

TEST(SchemaPolicy, GlobPatterns) {
  PolicySet set;
  ASSERT_TRUE(set.Assign("*.tmp_*:create_table=ignore").ok());
  ASSERT_TRUE(set.Assign("db?.log:truncate=ignore").ok());
  ASSERT_TRUE(set.Assign("`my.db`.`t`:drop_table=drop").ok());
  EXPECT_EQ(set.For("shop", "tmp_1").create_table, P::CreateTable::kIgnore);
  EXPECT_EQ(set.For("crm", "tmp_").create_table, P::CreateTable::kIgnore);
  EXPECT_EQ(set.For("crm", "tmp").create_table, P::CreateTable::kReplicate);
  EXPECT_EQ(set.For("crm", "x_tmp_1").create_table, P::CreateTable::kReplicate);
  EXPECT_EQ(set.For("db1", "log").truncate, P::Truncate::kIgnore);
  EXPECT_EQ(set.For("db12", "log").truncate, P::Truncate::kPropagate);
  EXPECT_EQ(set.For("db1", "logs").truncate, P::Truncate::kPropagate);
  EXPECT_EQ(set.For("Shop", "TMP_1").create_table, P::CreateTable::kReplicate) << "case-sensitive";
  EXPECT_EQ(set.For("my.db", "t").drop_table, P::DropTable::kDrop) << "quoted name with a dot";
  EXPECT_EQ(set.For("my", "db.t").drop_table, P::DropTable::kKeep);
}

TEST(SchemaPolicy, SpacesAroundThePartsOfAnAssignmentAreIgnored) {
  PolicySet set;
  ASSERT_TRUE(set.Assign(" shop.t : truncate = ignore ").ok());
  EXPECT_EQ(set.For("shop", "t").truncate, P::Truncate::kIgnore);
  EXPECT_EQ(set.Describe()[1], "shop.t: truncate=ignore");
}

TEST(SchemaPolicy, UnknownKeyNamesOriginKeyAndEveryKey) {
  PolicySet set;
  Status s = set.Assign("", "truncat", "ignore", "chsync.yaml:12");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
  EXPECT_EQ(s.error().message(),
            "chsync.yaml:12: 'truncat' is not a schema policy (keys: rename_column, type_change, "
            "truncate, create_table, drop_table, rename_table, drop_column, position_shift, "
            "key_change, keyless, on_table_error)");
  s = set.Assign("shop.t:renam_column=ignore");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
  EXPECT_NE(s.error().message().find("--schema-policy 'shop.t:renam_column=ignore': 'renam_column' is "
                                     "not a schema policy (keys: rename_column, "),
            std::string::npos)
      << s.error().message();
  EXPECT_EQ(set, PolicySet{}) << "a failed assignment changes nothing";
}

TEST(SchemaPolicy, BadValueNamesOriginKeyAndTheAllowedValues) {
  struct Case {
    const char* key;
    const char* allowed;
  };
  const std::vector<Case> cases = {
      {"rename_column", "rename, ignore or fail"}, {"type_change", "follow or fail"},
      {"truncate", "propagate, ignore or fail"},   {"create_table", "replicate, ignore or fail"},
      {"drop_table", "keep, drop or fail"},        {"rename_table", "follow or fail"},
      {"drop_column", "keep, propagate or fail"},  {"position_shift", "follow or fail"},
      {"key_change", "rebuild or fail"},           {"keyless", "refuse or distinct"},
  };
  for (const Case& c : cases) {
    PolicySet set;
    Status s = set.Assign("shop.t", c.key, "sometimes", "chsync.yaml:7");
    ASSERT_FALSE(s.ok()) << c.key;
    EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
    EXPECT_EQ(s.error().message(),
              std::string("chsync.yaml:7: '") + c.key + "' must be " + c.allowed + ", not 'sometimes'");
    EXPECT_EQ(set, PolicySet{});
  }
  PolicySet set;
  Status s = set.Assign("truncate=IGNORE");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(),
            "--schema-policy 'truncate=IGNORE': 'truncate' must be propagate, ignore or fail, not "
            "'IGNORE'");
  s = set.Assign("truncate=");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("'truncate' must be propagate, ignore or fail, not ''"),
            std::string::npos)
      << s.error().message();
}

TEST(SchemaPolicy, PatternWithoutADotIsAnError) {
  PolicySet set;
  for (const char* pattern : {"shop", "shop.", ".orders", "*", "``.t"}) {
    Status s = set.Assign(pattern, "truncate", "ignore", "chsync.yaml:4");
    ASSERT_FALSE(s.ok()) << pattern;
    EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
    EXPECT_EQ(s.error().message(), std::string("chsync.yaml:4: table pattern '") + pattern +
                                       "' must be DB.TABLE (wildcards * and ?, e.g. shop.orders, "
                                       "shop.*, *.audit_log)");
  }
  Status s = set.Assign("shop:truncate=ignore");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("--schema-policy 'shop:truncate=ignore': table pattern 'shop' "
                                     "must be DB.TABLE"),
            std::string::npos)
      << s.error().message();
  EXPECT_EQ(set, PolicySet{});
}

TEST(SchemaPolicy, MalformedAssignmentsAreErrors) {
  PolicySet set;
  Status s = set.Assign("truncate");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind(), ErrorKind::kConfig);
  EXPECT_EQ(s.error().message(),
            "--schema-policy 'truncate': expected KEY=VALUE or DB.TABLE:KEY=VALUE (keys: "
            "rename_column, type_change, truncate, create_table, drop_table, rename_table, "
            "drop_column, position_shift, key_change, keyless, on_table_error)");
  s = set.Assign(":truncate=ignore");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message(),
            "--schema-policy ':truncate=ignore': no table pattern before ':' (expected "
            "DB.TABLE:KEY=VALUE, or KEY=VALUE for every table)");
  s = set.Assign("=ignore");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("'' is not a schema policy"), std::string::npos) << s.error().message();
  s = set.Assign("");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("expected KEY=VALUE"), std::string::npos);
  EXPECT_EQ(set, PolicySet{});
}

}  // namespace
}  // namespace chsync::pipe
