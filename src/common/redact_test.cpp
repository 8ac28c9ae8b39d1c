#include "common/redact.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "common/log.h"

namespace chsync {
namespace {

/// Every test starts with no registered secret and leaves none behind.
class RedactTest : public ::testing::Test {
 protected:
  void SetUp() override { ClearSecretsForTest(); }
  void TearDown() override { ClearSecretsForTest(); }
};

struct Case {
  std::string input;
  std::string expected;
};

TEST_F(RedactTest, UrlsAndUserPasswordWords) {
  const std::vector<Case> cases = {
      {"mysql://chsync:s3cret@127.0.0.1:3306/db", "mysql://chsync:***@127.0.0.1:3306/db"},
      {"http://default:pw@ch:8123/?database=x", "http://default:***@ch:8123/?database=x"},
      // Percent-encoded and punctuation the URL parser accepts in a password.
      {"mysql://u:p%40ss%3Aw%2F@h:1", "mysql://u:***@h:1"},
      {"mysql://u:a@b:c/d,e;f@h:3306/db", "mysql://u:***@h:3306/db"},
      {"mysql://u:p\xC3\xA4ss\xE2\x82\xAC@h", "mysql://u:***@h"},
      // Several URLs, with and without a comma between them.
      {"mysql://chsync:PW@127.0.0.1:3306,mysql://chsync:PW@127.0.0.1:3307",
       "mysql://chsync:***@127.0.0.1:3306,mysql://chsync:***@127.0.0.1:3307"},
      {"from mysql://a:x1@h1 to http://b:x2@h2 and back",
       "from mysql://a:***@h1 to http://b:***@h2 and back"},
      {"http://u:p@a:1, http://v:q@b:2,,", "http://u:***@a:1, http://v:***@b:2,,"},
      // What MariaDB echoes of a comma list taken for one URL.
      {"Unknown database '/chsync:PW@127.0.0.1:3307' (error 1049)",
       "Unknown database '/chsync:***@127.0.0.1:3307' (error 1049)"},
      {"\"mysql://u:pw@h\"", "\"mysql://u:***@h\""},
      // Without a scheme.
      {"u:pw@host", "u:***@host"},
      {"u:pw@h1:3306,v:qq@h2", "u:***@h1:3306,v:***@h2"},
      {"u:a:b@c@host", "u:***@host"},
      {"u:a,b/c@host", "u:***@host"},
      {"(u:pw@host)", "(u:***@host)"},
      // Malformed URLs.
      {"mysql://u:PW@", "mysql://u:***@"},
      {"mysql://u:PW@host:notaport", "mysql://u:***@host:notaport"},
      {"mysql://:PW@h", "mysql://:***@h"},
      {":PW@h", ":***@h"},
      // Query parameters.
      {"http://ch:8123/?user=u&password=top&x=1", "http://ch:8123/?user=u&password=***&x=1"},
      {"PWD=abc def", "PWD=*** def"},
  };
  for (const Case& c : cases) EXPECT_EQ(Redact(c.input), c.expected) << c.input;
}

TEST_F(RedactTest, LeavesOrdinaryMessagesAlone) {
  const std::vector<std::string> texts = {
      "",
      "cannot connect as user 'chsync' on MySQL server 127.0.0.1:3306: Access denied for user "
      "'chsync'@'127.0.0.1' (using password: YES) (error 1045)",
      "reading server_id 11 at 10.0.0.11:3306 from GTID 0-11-59 (binlog binlog.000004:21423 there)",
      "mysql://repl@db-1:3306,mysql://repl@db-2:3306",
      "mail bob@example.com at 12:30",
      "GRANT ALL ON db.* TO `u`@`%`",
      "SET @rownum:=@rownum+1",
      "give --source mysql://USER:PASSWORD@HOST:PORT",
      "http://[::1]:8123/",
      "mysql://u:***@h:1",
      "password: YES",
      "binlog.000001:1234 at 3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5",
  };
  for (const std::string& t : texts) EXPECT_EQ(Redact(t), t);
}

TEST_F(RedactTest, KnownSecretsAnywhere) {
  RegisterSecret("hunter2-x");
  RegisterSecret("pa ss'\"w");
  RegisterSecret("ab");  // too short to mask on its own
  EXPECT_EQ(Redact("the password is hunter2-x, again hunter2-x"), "the password is ***, again ***");
  EXPECT_EQ(Redact("Unknown database 'pa ss'\"w'"), "Unknown database '***'");
  EXPECT_EQ(Redact("mysql://u:pa ss'\"w@h"), "mysql://u:***@h");
  EXPECT_EQ(Redact("about ab"), "about ab");
  // The longest first: a secret inside another is not left half shown.
  RegisterSecret("hunter");
  EXPECT_EQ(Redact("hunter2-x hunter"), "*** ***");
}

TEST_F(RedactTest, RegistersWhatUsersGive) {
  RegisterSecretsIn("mysql://u:one two@h:1,mysql://v:p%40x%20y@h:2");
  RegisterSecretsIn("--dest=w:th'ree@h");
  RegisterSecretsIn("mysql://repl@db-1:3306");  // no password: nothing to register
  EXPECT_EQ(Redact("one two"), "***");
  EXPECT_EQ(Redact("p%40x%20y and p@x y"), "*** and ***");
  EXPECT_EQ(Redact("th'ree"), "***");
  EXPECT_EQ(Redact("repl db-1"), "repl db-1");
}

TEST_F(RedactTest, UntrustedInputStaysLinearAndWhole) {
  std::string many(100000, '@');
  EXPECT_EQ(Redact(many), many);
  std::string colons;
  for (int i = 0; i < 20000; ++i) colons += "a:b@";
  std::string out = Redact(colons);
  EXPECT_EQ(out.find("b@a"), std::string::npos);
  std::string urls;
  for (int i = 0; i < 20000; ++i) urls += "x://u:p@";
  EXPECT_EQ(Redact(urls).find(":p@"), std::string::npos);
  for (int i = 0; i < 256; ++i)
    Redact(std::string(1, static_cast<char>(i)) + ":x@" + std::string(1, static_cast<char>(i)));
}

TEST_F(RedactTest, LogLinesInBothFormats) {
  RegisterSecret("quo\"te-pw");
  const std::string message = "cannot connect to mysql://u:s3cret@h:1 with quo\"te-pw";
  EXPECT_EQ(log::FormatLine(log::Format::kText, log::Level::kError, 0, message),
            "1970-01-01T00:00:00.000Z ERROR cannot connect to mysql://u:***@h:1 with ***");
  EXPECT_EQ(
      log::FormatLine(log::Format::kJson, log::Level::kWarn, 0, message),
      R"({"ts":"1970-01-01T00:00:00.000Z","level":"warn","msg":"cannot connect to mysql://u:***@h:1 with ***"})");
}

TEST_F(RedactTest, ThreadSafe) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 500; ++i) {
        RegisterSecret("secret-" + std::to_string(t) + "-" + std::to_string(i % 50));
        EXPECT_EQ(Redact("x secret-" + std::to_string(t) + "-" + std::to_string(i % 50) + " y"), "x *** y");
      }
    });
  }
  for (std::thread& th : threads) th.join();
}

}  // namespace
}  // namespace chsync
