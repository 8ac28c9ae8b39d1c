// Issue 18, "Secrets", against real servers: the command a new user tried (`--source` with two
// comma-separated URLs) replicates, and what MariaDB and ClickHouse echo back of what chsync sent
// them (a database named like the password, a statement that quotes it) never shows a password in
// chsync's output, log (text or JSON) or state directory. The cases that need no server are in
// src/cli/secrets_cli_test.cpp.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/url.h"
#include "pipe_compare.h"
#include "pipe_harness.h"
#include "test_env.h"

namespace chsync {
namespace {

using testing::ChsyncBinary;
using testing::CommandResult;
using testing::Dest;
using testing::FreeLoopbackPort;
using testing::PipeTest;
using testing::ReadFile;
using testing::RequireEnv;
using testing::RunCommand;

constexpr int kServerIdBase = 18180000;

/// The password of `url` (the test servers' URLs carry one).
std::string PasswordOf(const std::string& url) {
  auto parsed = ParseUrl(url);
  EXPECT_TRUE(parsed.ok()) << url;
  if (!parsed.ok()) return "";
  EXPECT_TRUE(parsed->has_password && !parsed->password.empty()) << "no password in " << parsed->Redacted();
  return parsed->password;
}

/// `url` with its path (and query) replaced by "/" + `path`.
std::string WithPath(const std::string& url, const std::string& path) {
  auto parsed = ParseUrl(url);
  EXPECT_TRUE(parsed.ok());
  if (!parsed.ok()) return url;
  return parsed->scheme + "://" + parsed->user + ":" + parsed->password + "@" + parsed->Address() + "/" +
         path;
}

/// Neither stream of `r` holds any of `secrets`.
void ExpectNoSecret(const CommandResult& r, const std::vector<std::string>& secrets,
                    const std::string& what) {
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    EXPECT_EQ(r.out.find(secret), std::string::npos) << what << ": stdout shows a password:\n" << r.out;
    EXPECT_EQ(r.err.find(secret), std::string::npos) << what << ": stderr shows a password:\n" << r.err;
  }
}

void ExpectNoSecretInFiles(const std::string& dir, const std::vector<std::string>& secrets) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, ec)) {
    if (!entry.is_regular_file()) continue;
    std::string text = ReadFile(entry.path());
    for (const std::string& secret : secrets) {
      if (!secret.empty())
        EXPECT_EQ(text.find(secret), std::string::npos) << entry.path() << " holds a password";
    }
  }
}

TEST(Secrets, TwoCommaSeparatedSourcesReplicateWithoutShowingThePassword) {
  PipeTest p;
  p.Init("CHSYNC_TEST_MYSQL_FULL", Dest::kServer, "secrets", kServerIdBase);
  ASSERT_TRUE(p.connected());
  const std::string source_pw = PasswordOf(p.source_url());
  const std::string dest_pw = PasswordOf(p.dest_url());
  ASSERT_TRUE(p.Exec("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))"));
  ASSERT_TRUE(p.Exec("INSERT INTO t VALUES (1, 'one'), (2, 'two')"));
  // As the issue tried it: the server, then a second one (a replica that is down: a closed port).
  auto parsed = ParseUrl(p.source_url());
  ASSERT_TRUE(parsed.ok());
  const std::string down = parsed->scheme + "://" + parsed->user + ":" + parsed->password +
                           "@127.0.0.1:" + std::to_string(FreeLoopbackPort());
  p.SetRunSources(p.source_url() + "," + down);
  for (const char* format : {"text", "json"}) {
    CommandResult r = p.Run({"--log-format", format, "--log-level", "debug"});
    ASSERT_RUN_OK(r, std::string("with two comma-separated sources, ") + format + " log");
    ExpectNoSecret(r, {source_pw, dest_pw}, std::string("chsync run, ") + format + " log");
  }
  EXPECT_EQUAL_TO_SOURCE(p, "t", "after chsync run with two comma-separated sources");
  CommandResult status = p.ChsyncStatus();
  EXPECT_EQ(status.exit_code, 0) << status.Describe();
  ExpectNoSecret(status, {source_pw, dest_pw}, "chsync status");
  ExpectNoSecretInFiles(p.state(), {source_pw, dest_pw});
  // check reads both servers; tail reads one and refuses the list.
  CommandResult check = RunCommand({ChsyncBinary(), "check", "--source", p.source_url() + "," + down,
                                    "--dest", p.dest_url(), "--tables", p.db() + ".*"},
                                   120000);
  ExpectNoSecret(check, {source_pw, dest_pw}, "chsync check with two sources");
  EXPECT_NE(check.out.find("127.0.0.1"), std::string::npos) << check.Describe();
  CommandResult tail = RunCommand(
      {ChsyncBinary(), "tail", "--source", p.source_url() + "," + down, "--until-caught-up"}, 60000);
  EXPECT_EQ(tail.exit_code, 2) << tail.Describe();
  EXPECT_NE(tail.err.find("several comma-separated URLs"), std::string::npos) << tail.Describe();
  ExpectNoSecret(tail, {source_pw}, "chsync tail with two sources");
  p.Cleanup();
}

TEST(Secrets, WhatTheServersEchoBackIsRedacted) {
  const std::string source = RequireEnv("CHSYNC_TEST_MYSQL_FULL");
  const std::string dest = RequireEnv("CHSYNC_TEST_CLICKHOUSE");
  ASSERT_FALSE(source.empty());
  ASSERT_FALSE(dest.empty());
  const std::string source_pw = PasswordOf(source);
  const std::string dest_pw = PasswordOf(dest);
  // A database named like the password: MariaDB answers "Unknown database '<it>'".
  const std::string echoing = WithPath(source, source_pw);
  CommandResult check = RunCommand({ChsyncBinary(), "check", "--source", echoing, "--dest", dest}, 120000);
  EXPECT_NE(check.exit_code, 0) << check.Describe();
  EXPECT_NE((check.out + check.err).find("Unknown database"), std::string::npos) << check.Describe();
  ExpectNoSecret(check, {source_pw, dest_pw}, "chsync check with a database named like the password");
  CommandResult tail = RunCommand({ChsyncBinary(), "tail", "--source", echoing, "--until-caught-up"}, 60000);
  EXPECT_NE(tail.exit_code, 0) << tail.Describe();
  ExpectNoSecret(tail, {source_pw}, "chsync tail with a database named like the password");
  // ClickHouse quotes the statement's names in its errors.
  CommandResult query = RunCommand(
      {ChsyncBinary(), "query", "--dest", dest, "SELECT * FROM `" + dest_pw + "`.`" + source_pw + "`"},
      60000);
  EXPECT_NE(query.exit_code, 0) << query.Describe();
  ExpectNoSecret(query, {source_pw, dest_pw}, "chsync query of a table named like the passwords");
  // Wrong passwords: the servers' refusals name the user, never the password.
  const std::string wrong = "Zq7-wrong-password";
  auto src = ParseUrl(source);
  auto dst = ParseUrl(dest);
  ASSERT_TRUE(src.ok() && dst.ok());
  const std::string bad_source = "mysql://" + src->user + ":" + wrong + "@" + src->Address();
  const std::string bad_dest = dst->scheme + "://" + dst->user + ":" + wrong + "@" + dst->Address();
  CommandResult refused =
      RunCommand({ChsyncBinary(), "check", "--source", bad_source, "--dest", bad_dest}, 120000);
  EXPECT_NE(refused.exit_code, 0) << refused.Describe();
  ExpectNoSecret(refused, {wrong, source_pw, dest_pw}, "chsync check with wrong passwords");
  // A pipe whose destination refuses the password, and one whose source does, with few retries.
  const std::string dir = testing::MakeTempDir("secrets");
  const std::string config = dir + "/retry.yaml";
  std::ofstream(config) << "retry:\n  attempts: 2\n  max_backoff_ms: 100\n";
  int n = 0;
  for (const auto& [from, to] : {std::pair{source, bad_dest}, std::pair{bad_source, dest}}) {
    const std::string state = dir + "/state-" + std::to_string(n++);
    CommandResult run = RunCommand(
        {ChsyncBinary(), "run", "--config", config, "--source", from, "--dest", to, "--state", state,
         "--tables", "secrets_none.*", "--until-caught-up", "--log-format", n == 1 ? "json" : "text"},
        120000);
    EXPECT_NE(run.exit_code, 0) << run.Describe();
    ExpectNoSecret(run, {wrong, source_pw, dest_pw}, "chsync run with a wrong password");
    ExpectNoSecretInFiles(state, {wrong, source_pw, dest_pw});
    CommandResult status = RunCommand({ChsyncBinary(), "status", "--state", state}, 60000);
    ExpectNoSecret(status, {wrong, source_pw, dest_pw}, "chsync status after a wrong password");
  }
}

}  // namespace
}  // namespace chsync
