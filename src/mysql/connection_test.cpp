#include "mysql/connection.h"

#include <gtest/gtest.h>

#include <string>

namespace chsync::mysql {
namespace {

Result<ConnectOptions> Parse(const std::string& query) {
  auto url = ParseUrl("mysql://u:secret-pw@db.example:3307/app" + query);
  EXPECT_TRUE(url.ok());
  return OptionsFromUrl(*url, nullptr);
}

TEST(SourceUrlTls, PlainByDefault) {
  auto o = Parse("");
  ASSERT_TRUE(o.ok());
  EXPECT_FALSE(o->tls_required);
  EXPECT_TRUE(o->tls_ca.empty());
  EXPECT_EQ(o->database, "app");
}

TEST(SourceUrlTls, RequiredSpellings) {
  for (const char* q : {"?ssl=1", "?ssl=true", "?ssl=required", "?ssl-mode=REQUIRED", "?sslmode=Required"}) {
    auto o = Parse(q);
    ASSERT_TRUE(o.ok()) << q << ": " << o.error().message();
    EXPECT_TRUE(o->tls_required) << q;
    EXPECT_TRUE(o->tls_ca.empty()) << q;
  }
}

TEST(SourceUrlTls, DisabledSpellings) {
  for (const char* q : {"?ssl=0", "?ssl=false", "?ssl-mode=DISABLED"}) {
    auto o = Parse(q);
    ASSERT_TRUE(o.ok()) << q << ": " << o.error().message();
    EXPECT_FALSE(o->tls_required) << q;
  }
}

TEST(SourceUrlTls, CaImpliesTlsAndVerification) {
  auto o = Parse("?ssl-ca=%2Fetc%2Fchsync%2Fca.pem");
  ASSERT_TRUE(o.ok()) << o.error().message();
  EXPECT_TRUE(o->tls_required);
  EXPECT_EQ(o->tls_ca, "/etc/chsync/ca.pem");
  auto v = Parse("?ssl-mode=VERIFY_IDENTITY&sslca=/ca.pem");
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_EQ(v->tls_ca, "/ca.pem");
  // The order of the parameters does not matter.
  auto w = Parse("?ssl-ca=/ca.pem&ssl-mode=verify_ca");
  ASSERT_TRUE(w.ok()) << w.error().message();
  EXPECT_TRUE(w->tls_required);
}

TEST(SourceUrlTls, VerifyModesNeedACa) {
  for (const char* q : {"?ssl-mode=verify_ca", "?ssl-mode=VERIFY_IDENTITY"}) {
    auto o = Parse(q);
    ASSERT_FALSE(o.ok()) << q;
    EXPECT_EQ(o.error().kind(), ErrorKind::kUsage);
    EXPECT_NE(o.error().message().find("add ssl-ca=FILE"), std::string::npos) << o.error().message();
  }
}

TEST(SourceUrlTls, BadValuesAreRefusedWithTheChoices) {
  for (const char* q : {"?ssl=yes-please", "?ssl=", "?ssl-ca=", "?ssl=0&ssl-ca=/ca.pem", "?ssl-verify=0"}) {
    auto o = Parse(q);
    ASSERT_FALSE(o.ok()) << q;
    EXPECT_EQ(o.error().kind(), ErrorKind::kUsage) << q;
    EXPECT_EQ(o.error().message().find("secret-pw"), std::string::npos) << o.error().message();
  }
  auto o = Parse("?ssl=yes-please");
  EXPECT_NE(o.error().message().find("required, verify_ca, verify_identity"), std::string::npos)
      << o.error().message();
}

ConnectOptions WithCa() {
  ConnectOptions o;
  o.host = "db.example";
  o.port = 3307;
  o.user = "u";
  o.password = "secret-pw";
  o.tls_required = true;
  o.tls_ca = "/etc/chsync/ca.pem";
  return o;
}

TEST(TlsConnectErrorTest, WrongCaNamesTheServerTheCaAndWhatToDo) {
  Error e = TlsConnectError(WithCa(), "TLS/SSL error: self-signed certificate in certificate chain", 2026);
  EXPECT_EQ(e.kind(), ErrorKind::kConfig);
  const std::string& m = e.message();
  EXPECT_NE(m.find("TLS certificate verify failed for MySQL server db.example:3307"), std::string::npos) << m;
  EXPECT_NE(m.find("ssl-ca=/etc/chsync/ca.pem"), std::string::npos) << m;
  EXPECT_NE(m.find("self-signed certificate in certificate chain (error 2026)"), std::string::npos) << m;
  EXPECT_NE(m.find("pass ssl-ca=FILE"), std::string::npos) << m;
  EXPECT_EQ(m.find("secret-pw"), std::string::npos) << m;
}

TEST(TlsConnectErrorTest, HostNameMismatchIsAConfigurationError) {
  Error e = TlsConnectError(WithCa(), "TLS/SSL error: Validation of SSL server certificate failed", 2026);
  EXPECT_EQ(e.kind(), ErrorKind::kConfig);
  EXPECT_NE(e.message().find("host name or IP address that the certificate lists"), std::string::npos)
      << e.message();
}

TEST(TlsConnectErrorTest, ServerWithoutTls) {
  for (const char* detail : {"TLS/SSL error: SSL is required, but the server does not support it",
                             "the server does not offer TLS; Connector/C connected without it"}) {
    Error e = TlsConnectError(WithCa(), detail, 2026);
    EXPECT_EQ(e.kind(), ErrorKind::kConfig) << detail;
    EXPECT_NE(e.message().find("MySQL server db.example:3307 offers no TLS"), std::string::npos)
        << e.message();
    EXPECT_NE(e.message().find("enable TLS on the server"), std::string::npos) << e.message();
  }
}

TEST(TlsConnectErrorTest, BrokenHandshakeIsRetryable) {
  Error e = TlsConnectError(WithCa(), "TLS/SSL error: unexpected eof while reading", 2026);
  EXPECT_EQ(e.kind(), ErrorKind::kNetwork);
  EXPECT_NE(e.message().find("TLS handshake with MySQL server db.example:3307 failed"), std::string::npos)
      << e.message();
}

TEST(ConnectionOpen, UnreadableCaFileIsNamed) {
  ConnectOptions o = WithCa();
  o.tls_ca = "/nonexistent/chsync-ca.pem";
  auto conn = Connection::Open(o);
  ASSERT_FALSE(conn.ok());
  EXPECT_EQ(conn.error().kind(), ErrorKind::kConfig);
  EXPECT_NE(conn.error().message().find("cannot read the CA file '/nonexistent/chsync-ca.pem'"),
            std::string::npos)
      << conn.error().message();
}

}  // namespace
}  // namespace chsync::mysql
