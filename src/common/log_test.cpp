#include "common/log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <regex>
#include <string>
#include <vector>

namespace chsync::log {
namespace {

// 2026-11-29T17:00:00.123Z
constexpr int64_t kMs = 1795971600123;

/// Sends fd 2 to a temporary file while it lives; Finish() restores it and returns what was written.
class StderrCapture {
 public:
  StderrCapture() : file_(std::tmpfile()) {
    std::fflush(stderr);
    saved_ = dup(STDERR_FILENO);
    if (file_ != nullptr) dup2(fileno(file_), STDERR_FILENO);
  }
  ~StderrCapture() { Finish(); }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;

  std::string Finish() {
    if (saved_ < 0) return text_;
    std::fflush(stderr);
    dup2(saved_, STDERR_FILENO);
    close(saved_);
    saved_ = -1;
    if (file_ == nullptr) return text_;
    std::rewind(file_);
    char buffer[4096];
    size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, file_)) > 0) text_.append(buffer, n);
    std::fclose(file_);
    file_ = nullptr;
    return text_;
  }

 private:
  std::FILE* file_;
  int saved_ = -1;
  std::string text_;
};

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

/// Restores the process-wide logger settings after each test.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    level_ = GetLevel();
    format_ = GetFormat();
  }
  void TearDown() override {
    SetLevel(level_);
    SetFormat(format_);
  }

 private:
  Level level_ = Level::kInfo;
  Format format_ = Format::kText;
};

TEST_F(LogTest, JsonLinesHaveStableKeysAndLevelNames) {
  struct Case {
    Level level;
    const char* expected;
  };
  const Case cases[] = {
      {Level::kDebug, R"({"ts":"2026-11-29T17:00:00.123Z","level":"debug","msg":"hello"})"},
      {Level::kInfo, R"({"ts":"2026-11-29T17:00:00.123Z","level":"info","msg":"hello"})"},
      {Level::kWarn, R"({"ts":"2026-11-29T17:00:00.123Z","level":"warn","msg":"hello"})"},
      {Level::kError, R"({"ts":"2026-11-29T17:00:00.123Z","level":"error","msg":"hello"})"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(FormatLine(Format::kJson, c.level, kMs, "hello"), c.expected);
  }
}

TEST_F(LogTest, JsonEscapesTheMessage) {
  EXPECT_EQ(
      FormatLine(Format::kJson, Level::kWarn, kMs, "table \"shop\".\"t\\1\"\nnext\x01 caf\xe9"),
      R"({"ts":"2026-11-29T17:00:00.123Z","level":"warn","msg":"table \"shop\".\"t\\1\"\nnext\u0001 caf\ufffd"})");
}

TEST_F(LogTest, TimestampPadsMillisecondsAndStartsAtEpoch) {
  EXPECT_EQ(FormatLine(Format::kJson, Level::kInfo, 0, ""),
            R"({"ts":"1970-01-01T00:00:00.000Z","level":"info","msg":""})");
  EXPECT_EQ(FormatLine(Format::kText, Level::kInfo, 1795971600007, "x"), "2026-11-29T17:00:00.007Z INFO  x");
}

TEST_F(LogTest, TextLinesAreUnchanged) {
  EXPECT_EQ(FormatLine(Format::kText, Level::kDebug, kMs, "a \"b\"\n"),
            "2026-11-29T17:00:00.123Z DEBUG a \"b\"\n");
  EXPECT_EQ(FormatLine(Format::kText, Level::kInfo, kMs, "m"), "2026-11-29T17:00:00.123Z INFO  m");
  EXPECT_EQ(FormatLine(Format::kText, Level::kWarn, kMs, "m"), "2026-11-29T17:00:00.123Z WARN  m");
  EXPECT_EQ(FormatLine(Format::kText, Level::kError, kMs, "m"), "2026-11-29T17:00:00.123Z ERROR m");
}

TEST_F(LogTest, WritesJsonToStderrOneObjectPerLine) {
  SetLevel(Level::kInfo);
  SetFormat(Format::kJson);
  EXPECT_EQ(GetFormat(), Format::kJson);
  StderrCapture capture;
  Info("copied {} rows of {}", 42, "shop.orders");
  Debug("dropped: below the level");
  Warn("two\nlines");
  Err("chsync run: {}", "lost \"connection\"");
  std::vector<std::string> lines = Lines(capture.Finish());
  ASSERT_EQ(lines.size(), 3u);
  const std::regex ts(R"(^\{"ts":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z",)");
  for (const std::string& line : lines) EXPECT_TRUE(std::regex_search(line, ts)) << line;
  EXPECT_EQ(lines[0].substr(33), R"("level":"info","msg":"copied 42 rows of shop.orders"})");
  EXPECT_EQ(lines[1].substr(33), R"("level":"warn","msg":"two\nlines"})");
  EXPECT_EQ(lines[2].substr(33), R"("level":"error","msg":"chsync run: lost \"connection\""})");
}

TEST_F(LogTest, WritesTextToStderrByDefault) {
  SetLevel(Level::kDebug);
  SetFormat(Format::kText);
  StderrCapture capture;
  Debug("d");
  Info("i {}", 1);
  Err("e");
  std::vector<std::string> lines = Lines(capture.Finish());
  ASSERT_EQ(lines.size(), 3u);
  const std::regex text(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO |ERROR) )");
  for (const std::string& line : lines) EXPECT_TRUE(std::regex_search(line, text)) << line;
  EXPECT_EQ(lines[0].substr(25), "DEBUG d");
  EXPECT_EQ(lines[1].substr(25), "INFO  i 1");
  EXPECT_EQ(lines[2].substr(25), "ERROR e");
}

TEST_F(LogTest, ErrorsPassEveryLevel) {
  SetLevel(Level::kError);
  SetFormat(Format::kJson);
  StderrCapture capture;
  Warn("dropped");
  Err("kept");
  std::vector<std::string> lines = Lines(capture.Finish());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].substr(33), R"("level":"error","msg":"kept"})");
}

}  // namespace
}  // namespace chsync::log
