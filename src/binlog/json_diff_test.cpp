#include "binlog/json_diff.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace chsync::binlog::internal {
namespace {

struct Op {
  int op;
  std::string path;
  std::string value;  // binary JSON, empty for remove
};

// A PARTIAL_UPDATE_ROWS JSON column value: 4-byte length, then the diffs.
std::string DiffBytes(const std::vector<Op>& ops) {
  std::string body;
  for (const Op& o : ops) {
    body.push_back(static_cast<char>(o.op));
    body.push_back(static_cast<char>(o.path.size()));
    body += o.path;
    if (o.op != 2) {
      body.push_back(static_cast<char>(o.value.size()));
      body += o.value;
    }
  }
  std::string out(4, '\0');
  out[0] = static_cast<char>(body.size());
  return out + body;
}

const std::string kInt7("\x05\x07\x00", 3);  // int16 7
const std::string kTrue("\x04\x01", 2);      // true
const std::string kStr("\x0c\x02hi", 4);     // "hi"

Result<Value> Apply(const std::string& before_text, const std::vector<Op>& ops, bool with_before = true) {
  TextArena arena;
  std::string scratch;
  ValueContext ctx{arena, scratch, 1 << 20};
  ColumnInfo column;
  column.type = column.real_type = ColumnType::kJson;
  column.metadata = 4;
  Value before;
  before.kind = ValueKind::kJson;
  before.text = before_text;
  std::string bytes = DiffBytes(ops);
  ByteReader r(bytes);
  Value out;
  Status s = ApplyJsonDiff(r, column, with_before ? &before : nullptr, ctx, out);
  if (!s.ok()) return s.error();
  static std::string keep;
  keep.assign(out.text);  // the arena dies with this function
  out.text = keep;
  return out;
}

TEST(JsonDiffTest, ReplaceMember) {
  auto v = Apply(R"({"a": 1, "b": [1, 2]})", {{0, "$.a", kInt7}});
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_EQ(v->kind, ValueKind::kJson);
  EXPECT_EQ(v->text, R"({"a": 7, "b": [1, 2]})");
}

TEST(JsonDiffTest, InsertMemberInMySqlKeyOrder) {
  auto v = Apply(R"({"a": 1, "bbb": 2})", {{1, "$.cc", kTrue}});
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_EQ(v->text, R"({"a": 1, "cc": true, "bbb": 2})");
}

TEST(JsonDiffTest, InsertAndReplaceArrayElements) {
  auto v = Apply(R"({"b": [1, 2]})", {{1, "$.b[1]", kStr}, {0, "$.b[0]", kTrue}});
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_EQ(v->text, R"({"b": [true, "hi", 2]})");
}

TEST(JsonDiffTest, RemoveKeepsExactScalars) {
  auto v = Apply(R"({"a": 9.00, "big": 18446744073709551615, "q": "x\"y"})", {{2, "$.q", ""}});
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_EQ(v->text, R"({"a": 9.00, "big": 18446744073709551615})");
}

TEST(JsonDiffTest, QuotedPathMember) {
  auto v = Apply(R"({"a b": 1})", {{0, "$.\"a b\"", kInt7}});
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_EQ(v->text, R"({"a b": 7})");
}

TEST(JsonDiffTest, WithoutBeforeImageTheOperationsAreReported) {
  auto v = Apply("", {{0, "$.age", kInt7}, {2, "$.x", ""}}, false);
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_EQ(v->kind, ValueKind::kJsonDiff);
  EXPECT_EQ(v->text, R"([{"op": "replace", "path": "$.age", "value": 7}, {"op": "remove", "path": "$.x"}])");
}

TEST(JsonDiffTest, PathThatDoesNotResolveIsCorrupt) {
  auto v = Apply(R"({"a": 1})", {{0, "$.nope", kInt7}});
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message().find("does not apply"), std::string::npos) << v.error().message();
}

TEST(JsonDiffTest, UnknownOperationIsCorrupt) {
  auto v = Apply(R"({"a": 1})", {{5, "$.a", kInt7}});
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message().find("unknown JSON diff operation 5"), std::string::npos)
      << v.error().message();
}

}  // namespace
}  // namespace chsync::binlog::internal
