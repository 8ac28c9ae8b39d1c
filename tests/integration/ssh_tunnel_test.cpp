// SSH tunnels end to end (docs/configuration.md, "SSH tunnels"), against the OpenSSH server of
// scripts/test-servers (sshd): a snapshot and the binlog stream through a tunnel to the source
// (?ssh= in the URL) and, to a ClickHouse server, through a second one (dest_ssh: in the file); the
// bastion killed with SIGKILL while the pipe streams and started again, nothing lost; a wrong host
// key, a wrong user key and a target the bastion cannot reach refused by `chsync run` and
// `chsync check` with messages naming the SSH failure.

#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "pipe_compare.h"
#include "pipe_harness.h"
#include "test_env.h"

namespace chsync {
namespace {

using testing::CommandResult;
using testing::Dest;
using testing::MakeTempDir;
using testing::PipeTest;
using testing::RequireEnv;

constexpr int kServerIdBase = 21700000;

class SshTunnelTest : public ::testing::TestWithParam<Dest> {
 protected:
  void SetUp() override {
    p_.Init("CHSYNC_TEST_MYSQL_FULL", GetParam(), "sshtun", kServerIdBase);
    port_ = RequireEnv("CHSYNC_TEST_SSHD_PORT");
    user_ = RequireEnv("CHSYNC_TEST_SSHD_USER");
    key_ = RequireEnv("CHSYNC_TEST_SSHD_KEY");
    known_hosts_ = RequireEnv("CHSYNC_TEST_SSHD_KNOWN_HOSTS");
  }
  void TearDown() override {
    if (const char* start = std::getenv("CHSYNC_TEST_SSHD_START")) std::system(start);  // never left down
    p_.Cleanup();
  }

  /// The source URL through the test bastion, with `key` and `known_hosts`.
  std::string Tunneled(const std::string& url, const std::string& key, const std::string& known_hosts) const {
    return url + "?ssh=" + user_ + "@127.0.0.1:" + port_ + "&ssh-key=" + key +
           "&ssh-known-hosts=" + known_hosts;
  }

  /// --config FILE: the destination (a ClickHouse server) through the bastion too (dest_ssh:), and
  /// short back-offs so that a reconnection comes within a second or two.
  std::vector<std::string> Config() const {
    std::string yaml = "retry:\n  max_backoff_ms: 500\n";
    if (GetParam() == Dest::kServer) {
      yaml += "dest_ssh:\n  host: 127.0.0.1\n  port: " + port_ + "\n  user: " + user_ +
              "\n  key_file: " + key_ + "\n  known_hosts: " + known_hosts_ + "\n";
    }
    const std::string path = MakeTempDir("sshtun-config") + "/chsync.yaml";
    std::ofstream(path) << yaml;
    return {"--config", path};
  }

  PipeTest p_;
  std::string port_, user_, key_, known_hosts_;
};

TEST_P(SshTunnelTest, SnapshotAndStreamingGoThroughTheTunnel) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(40))",
              "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')"});
  p_.SetRunSources(Tunneled(p_.source_url(), key_, known_hosts_));
  CommandResult r = p_.Run(Config());
  ASSERT_RUN_OK(r, "the snapshot through the tunnel");
  EXPECT_NE(r.err.find("SSH tunnel to 127.0.0.1:"), std::string::npos)
      << "the log names the tunnel it opened:\n"
      << r.Describe();
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after the snapshot");
  p_.ExecAll(
      {"INSERT INTO t VALUES (4, 'd')", "UPDATE t SET s = 'B' WHERE id = 2", "DELETE FROM t WHERE id = 3"});
  ASSERT_RUN_OK(p_.Run(Config()), "streaming through the tunnel");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "after streaming");
  EXPECT_EQ(p_.DestCount("t"), "3");
}

TEST_P(SshTunnelTest, ABastionKilledWhileStreamingLosesNothing) {
  ASSERT_TRUE(p_.connected());
  p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(40))", "INSERT INTO t VALUES (1, 'a')"});
  p_.SetRunSources(Tunneled(p_.source_url(), key_, known_hosts_));
  const std::string log = MakeTempDir("sshtun-kill") + "/chsync.log";
  std::optional<testing::BackgroundProcess> pipe =
      testing::StartPipeInBackground(p_, p_.RunArgs(p_.db() + ".*", false, Config()), log);
  ASSERT_TRUE(pipe.has_value());
  for (int i = 2; i <= 20; ++i) p_.Exec("INSERT INTO t VALUES (" + std::to_string(i) + ", 'before')");
  ASSERT_EQ(p_.CompareWithin("t", 60), "") << testing::Tail(testing::ReadFile(log));
  ASSERT_EQ(std::system(RequireEnv("CHSYNC_TEST_SSHD_KILL").c_str()), 0);
  // While the bastion is down the source goes on: rows, an update and a delete.
  for (int i = 21; i <= 40; ++i) p_.Exec("INSERT INTO t VALUES (" + std::to_string(i) + ", 'during')");
  p_.ExecAll({"UPDATE t SET s = 'changed' WHERE id <= 5", "DELETE FROM t WHERE id = 7"});
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ASSERT_EQ(std::system(RequireEnv("CHSYNC_TEST_SSHD_START").c_str()), 0);
  for (int i = 41; i <= 50; ++i) p_.Exec("INSERT INTO t VALUES (" + std::to_string(i) + ", 'after')");
  EXPECT_EQ(p_.CompareWithin("t", 90), "") << testing::Tail(testing::ReadFile(log));
  EXPECT_EQ(p_.DestCount("t"), "49");
  const std::string text = testing::ReadFile(log);
  EXPECT_NE(text.find("the SSH session dropped"), std::string::npos) << testing::Tail(text);
  EXPECT_TRUE(pipe->Running()) << "the pipe waited for the bastion rather than give up:\n"
                               << testing::Tail(text);
  EXPECT_EQ(pipe->SignalAndWait(SIGTERM, 30000), 0) << testing::Tail(testing::ReadFile(log));
}

// Refusals happen before any row moves, whatever the destination: tested on ClickHouse 18.16 alone.
class SshTunnelRefusalTest : public SshTunnelTest {};

TEST_P(SshTunnelRefusalTest, AWrongHostKeyIsRefused) {
  ASSERT_TRUE(p_.connected());
  p_.Exec("CREATE TABLE t (id INT PRIMARY KEY)");
  p_.SetRunSources(Tunneled(p_.source_url(), key_, RequireEnv("CHSYNC_TEST_SSHD_WRONG_KNOWN_HOSTS")));
  CommandResult r = p_.Run(Config());
  EXPECT_EQ(r.exit_code, 2) << "a configuration to fix, not a failure to retry:\n" << r.Describe();
  EXPECT_NE(r.err.find("host key mismatch"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("the bastion " + user_ + "@127.0.0.1:" + port_), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("replace its line"), std::string::npos) << r.Describe();
  EXPECT_TRUE(p_.DestTables().empty()) << "nothing was copied";
}

TEST_P(SshTunnelRefusalTest, AWrongUserKeyIsRefused) {
  ASSERT_TRUE(p_.connected());
  p_.Exec("CREATE TABLE t (id INT PRIMARY KEY)");
  p_.SetRunSources(Tunneled(p_.source_url(), RequireEnv("CHSYNC_TEST_SSHD_WRONG_KEY"), known_hosts_));
  CommandResult r = p_.Run(Config());
  EXPECT_EQ(r.exit_code, 2) << "a configuration to fix, not a failure to retry:\n" << r.Describe();
  EXPECT_NE(r.err.find("authentication refused"), std::string::npos) << r.Describe();
  EXPECT_NE(r.err.find("authorized_keys"), std::string::npos) << r.Describe();
  EXPECT_TRUE(p_.DestTables().empty()) << "nothing was copied";
}

/// `chsync check` through the tunnel: every blocking SSH failure in its own words.
TEST_P(SshTunnelRefusalTest, CheckNamesTheSshFailure) {
  ASSERT_TRUE(p_.connected());
  const std::string dest = RequireEnv("CHSYNC_TEST_CLICKHOUSE");
  p_.Exec("CREATE TABLE t (id INT PRIMARY KEY)");
  auto check = [&](const std::string& source) {
    return testing::RunProcess(
        {testing::ChsyncBinary(), "check", "--source", source, "--dest", dest, "--tables", p_.db() + ".*"});
  };
  testing::ProcessResult ok = check(Tunneled(p_.source_url(), key_, known_hosts_));
  EXPECT_NE(ok.output.find("SSH tunnel to 127.0.0.1:"), std::string::npos) << ok.output;
  EXPECT_EQ(ok.output.find("cannot connect"), std::string::npos) << ok.output;
  EXPECT_NE(ok.output.find("flavor"), std::string::npos) << "the source answered through the tunnel:\n"
                                                         << ok.output;

  testing::ProcessResult wrong_key =
      check(Tunneled(p_.source_url(), RequireEnv("CHSYNC_TEST_SSHD_WRONG_KEY"), known_hosts_));
  EXPECT_EQ(wrong_key.exit_code, 1) << wrong_key.output;
  EXPECT_NE(wrong_key.output.find("authentication refused"), std::string::npos) << wrong_key.output;

  const std::string empty = MakeTempDir("sshtun-kh") + "/known_hosts";
  std::ofstream(empty) << "";
  testing::ProcessResult unknown = check(Tunneled(p_.source_url(), key_, empty));
  EXPECT_EQ(unknown.exit_code, 1) << unknown.output;
  EXPECT_NE(unknown.output.find("unknown host"), std::string::npos) << unknown.output;
  EXPECT_NE(unknown.output.find("ssh-keyscan -p " + port_ + " 127.0.0.1"), std::string::npos)
      << unknown.output;

  // With strict host key checking off, the same unknown key is accepted (and logged).
  testing::ProcessResult lenient = check(Tunneled(p_.source_url(), key_, empty) + "&ssh-strict=no");
  EXPECT_EQ(lenient.output.find("unknown host"), std::string::npos) << lenient.output;
  EXPECT_NE(lenient.output.find("accepted because strict host key checking is off"), std::string::npos)
      << lenient.output;
  EXPECT_NE(lenient.output.find("flavor"), std::string::npos) << lenient.output;

  // A port nobody listens on, as the bastion sees it.
  const std::string nowhere =
      "mysql://chsync:chsync-pw@127.0.0.1:" + std::to_string(testing::FreeLoopbackPort());
  testing::ProcessResult refused = check(Tunneled(nowhere, key_, known_hosts_));
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_NE(refused.output.find("target refused"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("AllowTcpForwarding"), std::string::npos) << refused.output;

  // A bastion that does not answer at all.
  const std::string closed_port = std::to_string(testing::FreeLoopbackPort());
  testing::ProcessResult unreachable = check(p_.source_url() + "?ssh=" + user_ + "@127.0.0.1:" + closed_port +
                                             "&ssh-key=" + key_ + "&ssh-known-hosts=" + known_hosts_);
  EXPECT_EQ(unreachable.exit_code, 1) << unreachable.output;
  EXPECT_NE(unreachable.output.find("cannot reach the bastion"), std::string::npos) << unreachable.output;
}

INSTANTIATE_TEST_SUITE_P(Destinations, SshTunnelTest, ::testing::Values(Dest::kServer, Dest::kEmbedded),
                         [](const ::testing::TestParamInfo<Dest>& info) {
                           return testing::DestName(info.param);
                         });
INSTANTIATE_TEST_SUITE_P(Destinations, SshTunnelRefusalTest, ::testing::Values(Dest::kServer),
                         [](const ::testing::TestParamInfo<Dest>& info) {
                           return testing::DestName(info.param);
                         });

}  // namespace
}  // namespace chsync
