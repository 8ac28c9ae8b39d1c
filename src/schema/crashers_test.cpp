// Replays every file under tests/data/ddl/crashers/ (inputs that once crashed or hung the parser,
// or that stress its limits) through the same checks as the fuzzer.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "schema/ddl_exercise.h"
#include "schema/parser.h"

namespace chsync::schema {
namespace {

TEST(DdlCrashersTest, EveryCrasherIsHandled) {
  std::filesystem::path dir =
      std::filesystem::path(CHSYNC_SOURCE_DIR) / "tests" / "data" / "ddl" / "crashers";
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().filename() == "README.md") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    SCOPED_TRACE(entry.path().string());
    EXPECT_EQ(ExerciseDdlInput(buffer.str()), "");
    ++count;
  }
  EXPECT_GT(count, 0) << "no crasher files in " << dir;
}

TEST(DdlCrashersTest, DeepNestingIsRefusedWithAPosition) {
  std::string sql =
      "CREATE TABLE t (a INT DEFAULT " + std::string(100000, '(') + "1" + std::string(100000, ')') + ")";
  auto st = ParseStatement(sql);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("parentheses nested deeper than"), std::string::npos)
      << st.error().message();
  EXPECT_NE(st.error().message().find("byte"), std::string::npos);
}

TEST(DdlCrashersTest, HugeInputParses) {
  std::string sql = "CREATE TABLE t (";
  for (int i = 0; i < 20000; ++i) sql += "c" + std::to_string(i) + " INT DEFAULT " + std::to_string(i) + ", ";
  sql += "z INT)";
  auto st = ParseStatement(sql);
  ASSERT_TRUE(st.ok()) << st.error().message();
  EXPECT_EQ(st->columns.size(), 20001u);
}

}  // namespace
}  // namespace chsync::schema
