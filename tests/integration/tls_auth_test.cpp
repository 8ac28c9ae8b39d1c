// TLS and authentication for real (issue 18): `chsync check` and `chsync run` against MariaDB
// mysql-full with TLS and ClickHouse 18.16 over HTTPS, both with the test CA's certificate that
// scripts/test-servers makes; a wrong CA refused with a message that says what to do; a user
// created REQUIRE SSL; users of the ed25519 and mysql_native_password plugins.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/url.h"
#include "pipe_harness.h"
#include "test_env.h"

namespace chsync::testing {
namespace {

constexpr int kServerIdBase = 19300000;
constexpr int kTimeoutMs = 120'000;

/// `url` with `?params` added (the URLs of test-servers have no path or query).
std::string With(const std::string& url, const std::string& params) {
  return url + "/?" + params;
}

bool Has(const CommandResult& r, const std::string& text) {
  return r.out.find(text) != std::string::npos || r.err.find(text) != std::string::npos;
}

class TlsAuth : public ::testing::Test {
 protected:
  void SetUp() override {
    ca_ = RequireEnv("CHSYNC_TEST_TLS_CA");
    wrong_ca_ = RequireEnv("CHSYNC_TEST_TLS_WRONG_CA");
    https_ = RequireEnv("CHSYNC_TEST_CLICKHOUSE_HTTPS");
    admin_ = RequireEnv("CHSYNC_TEST_MYSQL_FULL");
    p_.Init("CHSYNC_TEST_MYSQL_FULL", Dest::kServer, "tls", kServerIdBase);
    p_.ExecAll({"CREATE TABLE t (id INT PRIMARY KEY, note VARCHAR(40))",
                "INSERT INTO t VALUES (1, 'before the snapshot'), (2, 'é and ü')"});
  }
  void TearDown() override { p_.Cleanup(); }

  CommandResult Check(const std::string& source, const std::string& dest) const {
    return RunCommand(
        {ChsyncBinary(), "check", "--source", source, "--dest", dest, "--tables", p_.db() + ".*"},
        kTimeoutMs);
  }

  /// `chsync run --until-caught-up` from `source` into `dest` (the test's state directory).
  CommandResult Run(const std::string& source, const std::string& dest) const {
    std::vector<std::string> argv = p_.RunArgs(p_.db() + ".*", true, {});
    argv[3] = source;
    argv[5] = dest;
    return RunCommand(argv, kTimeoutMs);
  }

  /// A run from `source` (snapshot), a change, and a second run (binlog): the destination equals
  /// the source after each.
  void Replicates(const std::string& source, const std::string& dest, const std::string& who) {
    CommandResult first = Run(source, dest);
    ASSERT_RUN_OK(first, "as " + who + " (snapshot)");
    EXPECT_EQUAL_TO_SOURCE(p_, "t", "after the snapshot as " + who);
    p_.ExecAll({"INSERT INTO t VALUES (3, 'streamed')", "UPDATE t SET note = 'changed' WHERE id = 1",
                "DELETE FROM t WHERE id = 2"});
    CommandResult second = Run(source, dest);
    ASSERT_RUN_OK(second, "as " + who + " (binlog)");
    EXPECT_EQUAL_TO_SOURCE(p_, "t", "after streaming as " + who);
    EXPECT_EQ(p_.DestCount("t"), "2");
  }

  std::string ca_, wrong_ca_, https_, admin_;
  PipeTest p_;
};

TEST_F(TlsAuth, CheckOverTlsVerifiesBothServersAndShowsTheSession) {
  CommandResult r = Check(With(admin_, "ssl-ca=" + ca_), With(https_, "ssl-ca=" + ca_));
  EXPECT_EQ(r.exit_code, 0) << r.Describe();
  // The source line comes from the server's own view of the session (Ssl_version, Ssl_cipher).
  EXPECT_TRUE(Has(r, "tls                        TLSv1.")) << r.Describe();
  EXPECT_TRUE(Has(r, "server certificate verified against " + ca_)) << r.Describe();
  EXPECT_TRUE(Has(r, "ClickHouse server over HTTPS")) << r.Describe();
  EXPECT_TRUE(Has(r, "18.16.1")) << r.Describe();
  EXPECT_FALSE(Has(r, "verification is OFF")) << r.Describe();
  EXPECT_FALSE(Has(r, "chsync-pw") || Has(r, "ch-pw")) << "password printed";

  CommandResult plain = Check(admin_, RequireEnv("CHSYNC_TEST_CLICKHOUSE"));
  EXPECT_EQ(plain.exit_code, 0) << plain.Describe();
  EXPECT_TRUE(Has(plain, "tls                        off: plain TCP")) << plain.Describe();
}

TEST_F(TlsAuth, WrongCaIsRefusedWithWhatToDo) {
  CommandResult source = Check(With(admin_, "ssl-ca=" + wrong_ca_), With(https_, "ssl-ca=" + ca_));
  EXPECT_EQ(source.exit_code, 1) << source.Describe();
  EXPECT_TRUE(Has(source, "TLS certificate verify failed for MySQL server 127.0.0.1:")) << source.Describe();
  EXPECT_TRUE(Has(source, "pass ssl-ca=FILE")) << source.Describe();

  CommandResult dest = Check(With(admin_, "ssl-ca=" + ca_), With(https_, "ssl-ca=" + wrong_ca_));
  EXPECT_EQ(dest.exit_code, 1) << dest.Describe();
  EXPECT_TRUE(Has(dest, "TLS certificate verify failed for ClickHouse at https://127.0.0.1:"))
      << dest.Describe();
  EXPECT_TRUE(Has(dest, "checked against ssl-ca=" + wrong_ca_)) << dest.Describe();

  // Without ssl-ca the system's CA store does not know the test CA either.
  CommandResult system_store = Check(admin_, https_);
  EXPECT_EQ(system_store.exit_code, 1) << system_store.Describe();
  EXPECT_TRUE(Has(system_store, "checked against the system's CA store")) << system_store.Describe();

  // `chsync run` stops at once with exit code 2 (a configuration error: not retried) and the same
  // message.
  CommandResult run = Run(With(admin_, "ssl-ca=" + wrong_ca_), With(https_, "ssl-ca=" + ca_));
  EXPECT_EQ(run.exit_code, 2) << run.Describe();
  EXPECT_FALSE(run.timed_out) << run.Describe();
  EXPECT_TRUE(Has(run, "TLS certificate verify failed for MySQL server")) << run.Describe();
  CommandResult run_dest = Run(With(admin_, "ssl-ca=" + ca_), With(https_, "ssl-ca=" + wrong_ca_));
  EXPECT_EQ(run_dest.exit_code, 2) << run_dest.Describe();
  EXPECT_FALSE(run_dest.timed_out) << run_dest.Describe();
  EXPECT_TRUE(Has(run_dest, "TLS certificate verify failed for ClickHouse")) << run_dest.Describe();
  EXPECT_FALSE(Has(run, "chsync-pw") || Has(run_dest, "chsync-pw")) << "password printed";
}

TEST_F(TlsAuth, ServerWithoutTlsIsRefusedWhenTlsIsRequired) {
  // mysql-minimal has no certificate: ssl=required must not fall back to plain text.
  CommandResult r =
      Check(With(RequireEnv("CHSYNC_TEST_MYSQL_MINIMAL"), "ssl=required"), https_ + "/?ssl-ca=" + ca_);
  EXPECT_EQ(r.exit_code, 1) << r.Describe();
  EXPECT_TRUE(Has(r, "offers no TLS, but the source URL asks for it")) << r.Describe();
}

TEST_F(TlsAuth, RequireSslUserNeedsTlsAndReplicatesWithIt) {
  const std::string user = RequireEnv("CHSYNC_TEST_MYSQL_FULL_TLS_USER");
  CommandResult plain = Check(user, With(https_, "ssl-ca=" + ca_));
  EXPECT_EQ(plain.exit_code, 1) << plain.Describe();
  EXPECT_TRUE(Has(plain, "Access denied for user 'chsync_tls'")) << plain.Describe();
  EXPECT_FALSE(Has(plain, "tls-pw")) << "password printed";
  // The server lets this user in over TLS only: every session of the run (snapshot, binlog) is TLS.
  Replicates(With(user, "ssl-ca=" + ca_), With(https_, "ssl-ca=" + ca_), "a REQUIRE SSL user over TLS");
}

TEST_F(TlsAuth, Ed25519UserReplicates) {
  EXPECT_EQ(p_.SourceValue("SELECT plugin FROM mysql.user WHERE user = 'chsync_ed25519'"), "ed25519");
  Replicates(RequireEnv("CHSYNC_TEST_MYSQL_FULL_ED25519_USER"), RequireEnv("CHSYNC_TEST_CLICKHOUSE"),
             "an ed25519 user");
}

TEST_F(TlsAuth, NativePasswordUserReplicates) {
  EXPECT_EQ(p_.SourceValue("SELECT plugin FROM mysql.user WHERE user = 'chsync_native'"),
            "mysql_native_password");
  Replicates(RequireEnv("CHSYNC_TEST_MYSQL_FULL_NATIVE_USER"), RequireEnv("CHSYNC_TEST_CLICKHOUSE"),
             "a mysql_native_password user");
}

TEST_F(TlsAuth, SslVerifyOffWorksOnlyWhenAskedAndWarns) {
  CommandResult r = Run(admin_, With(https_, "ssl-verify=0"));
  ASSERT_RUN_OK(r, "with ssl-verify=0");
  EXPECT_EQUAL_TO_SOURCE(p_, "t", "written over HTTPS without verification");
  EXPECT_TRUE(Has(r, "TLS certificate verification is OFF for ClickHouse at https://127.0.0.1:"))
      << r.Describe();
  EXPECT_TRUE(Has(r, "pass ssl-ca=FILE")) << r.Describe();
  EXPECT_FALSE(Has(r, "ch-pw")) << "password printed";
  // Verified, there is no warning.
  CommandResult verified = Run(admin_, With(https_, "ssl-ca=" + ca_));
  ASSERT_RUN_OK(verified, "with ssl-ca");
  EXPECT_FALSE(Has(verified, "verification is OFF")) << verified.Describe();
}

}  // namespace
}  // namespace chsync::testing
