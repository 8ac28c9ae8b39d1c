#include "clickhouse/server_error.h"

#include <gtest/gtest.h>

namespace chsync::clickhouse {
namespace {

constexpr const char* kOldWrongPassword =
    "Code: 193, e.displayText() = DB::Exception: Wrong password for user default, e.what() = DB::Exception\n";
constexpr const char* kNewTableExists =
    "Code: 57. DB::Exception: Table default.example already exists. (TABLE_ALREADY_EXISTS) "
    "(version 22.10.1.1175 (official build))\n";

TEST(ServerErrorTest, ParsesCodeFrom1816Format) {
  EXPECT_EQ(ParseExceptionCode(kOldWrongPassword), 193);
}

TEST(ServerErrorTest, ParsesCodeFromCurrentFormat) {
  EXPECT_EQ(ParseExceptionCode(kNewTableExists), 57);
}

TEST(ServerErrorTest, NoCodeInPlainText) {
  EXPECT_EQ(ParseExceptionCode("Bad Gateway"), 0);
  EXPECT_EQ(ParseExceptionCode("Code: x"), 0);
  EXPECT_EQ(ParseExceptionCode(""), 0);
}

TEST(ServerErrorTest, CleansOldMessage) {
  EXPECT_EQ(CleanExceptionMessage(kOldWrongPassword), "DB::Exception: Wrong password for user default");
}

TEST(ServerErrorTest, CleansNewMessage) {
  EXPECT_EQ(CleanExceptionMessage(kNewTableExists),
            "DB::Exception: Table default.example already exists. (TABLE_ALREADY_EXISTS)");
}

TEST(ServerErrorTest, CutsVeryLongMessages) {
  std::string huge = "Code: 62. DB::Exception: " + std::string(10000, 'x');
  EXPECT_LT(CleanExceptionMessage(huge).size(), 2100u);
}

TEST(ServerErrorTest, AuthCodesAreAuthErrors) {
  for (int c : {192, 193, 194, 516}) EXPECT_EQ(KindForCode(c), ErrorKind::kAuth) << c;
  for (int c : {0, 60, 62, 252}) EXPECT_EQ(KindForCode(c), ErrorKind::kServer) << c;
}

TEST(ServerErrorTest, ExceptionErrorCarriesCodeAndWhere) {
  Error e = ExceptionError("http://h:8123/", 0, kOldWrongPassword);
  EXPECT_EQ(e.kind(), ErrorKind::kAuth);
  EXPECT_EQ(e.server_code(), 193);
  EXPECT_NE(e.message().find("http://h:8123/"), std::string::npos);
  EXPECT_NE(e.message().find("Wrong password"), std::string::npos);
  EXPECT_NE(e.message().find("(code 193)"), std::string::npos);
}

TEST(ServerErrorTest, HeaderCodeWinsOverBody) {
  Error e = ExceptionError("x", 252, "Code: 1. DB::Exception: Too many parts");
  EXPECT_EQ(e.server_code(), 252);
}

TEST(ServerErrorTest, RetryableClassification) {
  EXPECT_TRUE(IsRetryable(Error(ErrorKind::kNetwork, "connection refused")));
  EXPECT_TRUE(IsRetryable(Error(ErrorKind::kServer, "too many parts", code::kTooManyParts)));
  EXPECT_TRUE(IsRetryable(Error(ErrorKind::kServer, "memory", code::kMemoryLimitExceeded)));
  EXPECT_FALSE(IsRetryable(Error(ErrorKind::kServer, "syntax", 62)));
  EXPECT_FALSE(IsRetryable(Error(ErrorKind::kServer, "type mismatch", 53)));
  EXPECT_FALSE(IsRetryable(Error(ErrorKind::kAuth, "wrong password", 193)));
}

}  // namespace
}  // namespace chsync::clickhouse
