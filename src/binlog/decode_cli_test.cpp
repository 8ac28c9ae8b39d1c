// Runs the built `chsync decode` on fixture files (registered by src/cli/decode.cmake).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/test_util.h"

namespace {

const std::string kFixtures = CHSYNC_SOURCE_DIR "/../shared/fixtures/binlog/";

struct CliRun : chsync::test::CommandRun {
  std::vector<std::string> lines;
};

CliRun Decode(const std::string& args) {
  CliRun r{chsync::test::RunCommand(std::string(CHSYNC_BINARY) + " decode " + args,
                                    testing::TempDir() + "chsync_decode_stderr.txt")};
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) r.lines.push_back(line);
  return r;
}

const std::string kEasyPost = kFixtures + "EasyPost/rust-mysql-binlog/test_data/bin-log.000001";

TEST(DecodeCliTest, PrintsEveryEventAsTheGoldenFileRecords) {
  CliRun r = Decode(kEasyPost);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream golden(CHSYNC_SOURCE_DIR "/tests/data/binlog/golden/mysql-5.7.24-easypost.txt");
  std::stringstream want;
  want << golden.rdbuf();
  EXPECT_EQ(r.out, want.str());
  ASSERT_EQ(r.lines.size(), 14u);
  EXPECT_NE(r.lines[7].find("bin-log.000001:652 WRITE_ROWS_V2"), std::string::npos);
  EXPECT_NE(r.lines[7].find("row0:after={@1=1 @2=0.10000 @3='zero point one'}"), std::string::npos);
}

TEST(DecodeCliTest, JsonFormatIsOneObjectPerLine) {
  CliRun r = Decode("--format json " + kEasyPost);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.lines.size(), 14u);
  for (const auto& line : r.lines) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << line;
  }
  auto rows = nlohmann::json::parse(r.lines[12]);
  EXPECT_EQ(rows["type"], "WRITE_ROWS_V2");
  EXPECT_EQ(rows["position"], 942);
  EXPECT_EQ(rows["table"], "bltest.foo");
  EXPECT_EQ(rows["changes"][0]["after"]["@1"], 2);
  EXPECT_EQ(rows["changes"][0]["after"]["@2"], "1.00000");
  EXPECT_EQ(rows["changes"][0]["after"]["@3"], "one point zero");
}

TEST(DecodeCliTest, StartAndStopPositions) {
  CliRun r = Decode("--start-position 718 --stop-position 1008 " + kEasyPost);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.lines.size(), 5u);
  EXPECT_EQ(r.lines.front().rfind("bin-log.000001:718 XID", 0), 0u) << r.lines.front();
  EXPECT_EQ(r.lines.back().rfind("bin-log.000001:942 WRITE_ROWS_V2", 0), 0u) << r.lines.back();
}

TEST(DecodeCliTest, StartPositionInsideAnEventFails) {
  CliRun r = Decode("--start-position 700 " + kEasyPost);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not the start of an event"), std::string::npos) << r.err;
}

TEST(DecodeCliTest, TruncatedFileExitsNonZeroAfterPrintingWhatItCould) {
  CliRun r = Decode(kFixtures + "MariaDB/server/mysql-test/std_data/bug11747416_32228_binlog.000001");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.lines.size(), 4u);
  EXPECT_NE(r.err.find("truncated event at offset 316"), std::string::npos) << r.err;
}

TEST(DecodeCliTest, CorruptEventNamesItsPosition) {
  CliRun r = Decode(kFixtures + "MariaDB/server/mysql-test/std_data/corrupt-relay-bin.000624");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.lines.size(), 872u);
  EXPECT_NE(r.err.find("corrupt-relay-bin.000624:91204"), std::string::npos) << r.err;
}

TEST(DecodeCliTest, SeveralFilesInOrder) {
  CliRun r =
      Decode(kEasyPost + " " + kFixtures + "blackbeam/rust_mysql_common/test-data/binlogs/time_issue.000001");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_GT(r.lines.size(), 14u);
  EXPECT_EQ(r.lines[14].rfind("time_issue.000001:4 FORMAT_DESCRIPTION", 0), 0u) << r.lines[14];
}

}  // namespace
