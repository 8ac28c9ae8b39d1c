// AWS IAM database authentication: SigV4 against AWS's published test suite
// (aws-sig-v4-test-suite, as shipped with aws-c-auth: get-vanilla and
// get-vanilla-query-order-key-case), an RDS token against a known answer computed with openssl
// apart from this code, and the credential chain against the environment, credentials files with
// profiles and a fake instance metadata service (IMDSv2) on loopback.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "common/redact.h"
#include "common/url.h"
#include "mysql/aws_credentials.h"
#include "mysql/aws_sigv4.h"
#include "mysql/connection.h"

namespace chsync::mysql {
namespace {

// The test suite's credentials, region, service and date.
constexpr const char* kKeyId = "AKIDEXAMPLE";
constexpr const char* kSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

SigV4Request SuiteRequest() {
  SigV4Request r;
  r.method = "GET";
  r.path = "/";
  r.headers = {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", "20150830T123600Z"}};
  return r;
}

std::string Sign(const SigV4Request& r) {
  return Hex(HmacSha256(SigningKey(kSecret, "20150830", "us-east-1", "service"),
                        StringToSign("20150830T123600Z", "us-east-1", "service", CanonicalRequest(r))));
}

TEST(SigV4, GetVanillaOfTheAwsTestSuite) {
  // get-vanilla.creq, .sts and .authz of the suite.
  EXPECT_EQ(CanonicalRequest(SuiteRequest()),
            "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n"
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(StringToSign("20150830T123600Z", "us-east-1", "service", CanonicalRequest(SuiteRequest())),
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
            "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63");
  EXPECT_EQ(Hex(SigningKey(kSecret, "20150830", "us-east-1", "service")),
            "938127b5336810ddb6a5d6af445fcac9e371f9ed418ed386b022aed82901be75");
  EXPECT_EQ(SignedHeaders(SuiteRequest()), "host;x-amz-date");
  EXPECT_EQ(Sign(SuiteRequest()), "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
}

TEST(SigV4, GetVanillaQueryOrderKeyCaseSortsTheQuery) {
  SigV4Request r = SuiteRequest();
  r.query = {{"Param2", "value2"}, {"Param1", "value1"}};
  EXPECT_NE(CanonicalRequest(r).find("\n/\nParam1=value1&Param2=value2\n"), std::string::npos);
  EXPECT_EQ(Sign(r), "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
}

TEST(SigV4, UriEncodingAndDates) {
  EXPECT_EQ(UriEncode("AKID/20150830/us-east-1/rds-db/aws4_request"),
            "AKID%2F20150830%2Fus-east-1%2Frds-db%2Faws4_request");
  EXPECT_EQ(UriEncode("a b+c=~._-"), "a%20b%2Bc%3D~._-");
  EXPECT_EQ(AmzDate(1440938160), "20150830T123600Z");
  EXPECT_EQ(ParseIso8601Utc("2015-08-30T12:36:00Z"), 1440938160);
  EXPECT_EQ(ParseIso8601Utc("soon"), 0);
}

TEST(RdsAuthToken, KnownAnswerComputedWithOpenssl) {
  // Computed apart from this code, with openssl dgst (SigV4 by hand; the same steps give the suite's
  // signing key 938127b5… for service "service"):
  //   Q='Action=connect&DBUser=chsync_iam&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIDEXAMPLE%2F20150830%2Fus-east-1%2Frds-db%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host'
  //   canonical request: GET \n / \n $Q \n host:mydb.123456789012.us-east-1.rds.amazonaws.com:3306 \n\n host
  //   \n sha256("") sha256(canonical request) =
  //   afdb07193a254e87910e65a5aaa95285f8366ffeb88b0738efe786a6901461af key = HMAC chain (openssl dgst -sha256
  //   -mac HMAC -macopt key:AWS4<secret>, then hexkey:) over
  //         20150830, us-east-1, rds-db, aws4_request
  //       = 10a582aab7ba4736f4608306f11bd2dfe64933c9ee3c50c250459488d83542fa
  //   signature = HMAC(key, string to sign)
  //       = 39ca12c97d8ee5b6d46225312bf64455c58b7ff606af79a48501602f0f7abd0b
  AwsCredentials c{kKeyId, kSecret, "", "test", 0};
  EXPECT_EQ(Hex(SigningKey(kSecret, "20150830", "us-east-1", "rds-db")),
            "10a582aab7ba4736f4608306f11bd2dfe64933c9ee3c50c250459488d83542fa");
  EXPECT_EQ(RdsAuthToken(c, "mydb.123456789012.us-east-1.rds.amazonaws.com", 3306, "chsync_iam", "us-east-1",
                         1440938160),
            "mydb.123456789012.us-east-1.rds.amazonaws.com:3306/?Action=connect&DBUser=chsync_iam"
            "&X-Amz-Algorithm=AWS4-HMAC-SHA256"
            "&X-Amz-Credential=AKIDEXAMPLE%2F20150830%2Fus-east-1%2Frds-db%2Faws4_request"
            "&X-Amz-Date=20150830T123600Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host"
            "&X-Amz-Signature=39ca12c97d8ee5b6d46225312bf64455c58b7ff606af79a48501602f0f7abd0b");
}

TEST(RdsAuthToken, SessionCredentialsAddTheirTokenAndEachMinuteSignsAnew) {
  AwsCredentials c{"ASIAEXAMPLE", kSecret, "FwoGZX/session+token=", "test", 0};
  std::string token = RdsAuthToken(c, "db.example", 3306, "u", "eu-west-1", 1440938160);
  EXPECT_NE(token.find("&X-Amz-Security-Token=FwoGZX%2Fsession%2Btoken%3D&X-Amz-SignedHeaders=host"),
            std::string::npos)
      << token;
  EXPECT_NE(RdsAuthToken(c, "db.example", 3306, "u", "eu-west-1", 1440938160 + 60), token);
}

TEST(AwsCredentials, FromTheEnvironment) {
  EXPECT_FALSE(CredentialsFromEnvironment({{"AWS_ACCESS_KEY_ID", "AKID"}}).has_value());
  auto c = CredentialsFromEnvironment(
      {{"AWS_ACCESS_KEY_ID", "AKID"}, {"AWS_SECRET_ACCESS_KEY", "S"}, {"AWS_SESSION_TOKEN", "T"}});
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->access_key_id, "AKID");
  EXPECT_EQ(c->secret_access_key, "S");
  EXPECT_EQ(c->session_token, "T");
}

TEST(AwsCredentials, FromASharedFileWithProfiles) {
  const std::string text =
      "# comment\n[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key=secretdefault\n\n"
      "[pipe]\n aws_access_key_id=AKIDPIPE \naws_secret_access_key = secretpipe\naws_session_token = tok\n"
      "[broken]\naws_access_key_id=AKIDBROKEN\n";
  auto d = CredentialsFromSharedFile(text, "default", "creds");
  ASSERT_TRUE(d.ok() && d->has_value());
  EXPECT_EQ((*d)->access_key_id, "AKIDDEFAULT");
  EXPECT_EQ((*d)->secret_access_key, "secretdefault");
  auto p = CredentialsFromSharedFile(text, "pipe", "creds");
  ASSERT_TRUE(p.ok() && p->has_value());
  EXPECT_EQ((*p)->access_key_id, "AKIDPIPE");
  EXPECT_EQ((*p)->session_token, "tok");
  auto none = CredentialsFromSharedFile(text, "other", "creds");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  auto broken = CredentialsFromSharedFile(text, "broken", "creds");
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.error().message().find("[broken]"), std::string::npos);
}

/// A fake IMDSv2 on loopback: PUT /latest/api/token (with the TTL header) hands out `issued`; the
/// metadata paths answer only with X-aws-ec2-metadata-token equal to `accepted` (401 otherwise).
class FakeImds {
 public:
  FakeImds(std::string issued, std::string accepted)
      : issued_(std::move(issued)), accepted_(std::move(accepted)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    listen(fd_, 8);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeImds() {
    stop_ = true;
    thread_.join();
    close(fd_);
  }
  std::string Endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_; }

 private:
  void Serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) != 1) continue;
      int c = accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      std::string in;
      char buf[2048];
      while (in.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        in.append(buf, static_cast<size_t>(n));
      }
      ++requests_;
      std::string out = Answer(in);
      send(c, out.data(), out.size(), MSG_NOSIGNAL);
      close(c);
    }
  }
  static std::string Reply(int status, const std::string& body) {
    return "HTTP/1.1 " + std::to_string(status) + (status == 200 ? " OK" : " Error") +
           "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  }
  std::string Answer(const std::string& in) {
    auto header = [&in](const std::string& name) -> std::string {
      size_t at = in.find("\r\n" + name + ": ");
      if (at == std::string::npos) return "";
      size_t start = at + name.size() + 4;
      return in.substr(start, in.find("\r\n", start) - start);
    };
    if (in.starts_with("PUT /latest/api/token ")) {
      if (header("X-aws-ec2-metadata-token-ttl-seconds").empty()) return Reply(400, "missing TTL");
      return Reply(200, issued_);
    }
    if (header("X-aws-ec2-metadata-token") != accepted_) return Reply(401, "");
    if (in.starts_with("GET /latest/meta-data/iam/security-credentials/ "))
      return Reply(200, "chsync-role\n");
    if (in.starts_with("GET /latest/meta-data/iam/security-credentials/chsync-role ")) {
      return Reply(200, R"({"Code":"Success","LastUpdated":"2015-08-30T12:00:00Z","Type":"AWS-HMAC",)"
                        R"("AccessKeyId":"ASIAIMDSEXAMPLE","SecretAccessKey":"imdsSecretExampleKey",)"
                        R"("Token":"imdsSessionTokenExample","Expiration":"2099-01-01T00:00:00Z"})");
    }
    return Reply(404, "");
  }
  std::string issued_, accepted_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

TEST(AwsCredentials, FromTheInstanceMetadataServiceWithASessionToken) {
  FakeImds imds("token-123", "token-123");
  auto c = CredentialsFromImds(imds.Endpoint());
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->access_key_id, "ASIAIMDSEXAMPLE");
  EXPECT_EQ(c->secret_access_key, "imdsSecretExampleKey");
  EXPECT_EQ(c->session_token, "imdsSessionTokenExample");
  EXPECT_EQ(c->expiration, ParseIso8601Utc("2099-01-01T00:00:00Z"));
  EXPECT_EQ(imds.requests(), 3);  // token, role, credentials
}

TEST(AwsCredentials, TheMetadataServiceRefusesAWrongToken) {
  FakeImds imds("token-issued", "token-other");
  auto c = CredentialsFromImds(imds.Endpoint());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind(), ErrorKind::kAuth);
  EXPECT_NE(c.error().message().find("names no IAM role (HTTP 401)"), std::string::npos)
      << c.error().message();
}

TEST(AwsCredentials, ANonAnsweringMetadataServiceIsANetworkError) {
  // A port nobody listens on.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  auto c = CredentialsFromImds("http://127.0.0.1:" + std::to_string(ntohs(a.sin_port)), 500);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind(), ErrorKind::kNetwork);
}

TEST(AwsCredentials, TheChainTakesEnvironmentThenFileThenMetadataAndRegistersTheSecrets) {
  const std::string dir = ::testing::TempDir();
  const std::string file = dir + "/aws_credentials_test";
  std::ofstream(file)
      << "[default]\naws_access_key_id=AKIDFILEDEFAULT\naws_secret_access_key=fileSecretDefault\n"
         "[pipe]\naws_access_key_id=AKIDFILEPIPE\naws_secret_access_key=fileSecretPipe\n";
  FakeImds imds("t", "t");
  setenv("AWS_SHARED_CREDENTIALS_FILE", file.c_str(), 1);
  setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.Endpoint().c_str(), 1);
  unsetenv("AWS_EC2_METADATA_DISABLED");
  setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "envSecretKeyExample", 1);
  auto env = ResolveAwsCredentials();
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->access_key_id, "AKIDENV");
  EXPECT_EQ(Redact("key envSecretKeyExample"), "key ***");

  unsetenv("AWS_ACCESS_KEY_ID");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  setenv("AWS_PROFILE", "pipe", 1);
  auto pipe = ResolveAwsCredentials();
  ASSERT_TRUE(pipe.ok());
  EXPECT_EQ(pipe->access_key_id, "AKIDFILEPIPE");
  unsetenv("AWS_PROFILE");
  auto def = ResolveAwsCredentials();
  ASSERT_TRUE(def.ok());
  EXPECT_EQ(def->access_key_id, "AKIDFILEDEFAULT");

  setenv("AWS_SHARED_CREDENTIALS_FILE", (dir + "/no_such_file").c_str(), 1);
  auto meta = ResolveAwsCredentials();
  ASSERT_TRUE(meta.ok()) << meta.error().message();
  EXPECT_EQ(meta->access_key_id, "ASIAIMDSEXAMPLE");
  EXPECT_EQ(Redact("s=imdsSecretExampleKey t=imdsSessionTokenExample"), "s=*** t=***");
  const int asked = imds.requests();
  ASSERT_TRUE(ResolveAwsCredentials().ok());
  EXPECT_EQ(imds.requests(), asked);  // kept until 5 minutes before they expire

  setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
  auto none = ResolveAwsCredentials();
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message().find("no AWS credentials"), std::string::npos);
  unsetenv("AWS_EC2_METADATA_DISABLED");
  unsetenv("AWS_SHARED_CREDENTIALS_FILE");
  unsetenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
}

TEST(AwsIamUrl, NeedsTlsAndARegion) {
  auto options = [](const std::string& text) {
    auto url = ParseUrl(text);
    EXPECT_TRUE(url.ok()) << text;
    return OptionsFromUrl(*url, nullptr);
  };
  auto plain = options("mysql://chsync_iam@db.example:3306/?auth=aws_iam&region=eu-west-1");
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.error().message().find("without TLS"), std::string::npos);
  auto noregion = options("mysql://chsync_iam@db.example:3306/?auth=aws_iam&ssl=required");
  ASSERT_FALSE(noregion.ok());
  EXPECT_NE(noregion.error().message().find("names no region"), std::string::npos);
  auto withpw = options("mysql://chsync_iam:pw@db.example:3306/?auth=aws_iam&ssl=required&region=eu-west-1");
  ASSERT_FALSE(withpw.ok());
  auto ok = options("mysql://chsync_iam@db.example:3306/?auth=aws_iam&ssl=required&region=eu-west-1");
  ASSERT_TRUE(ok.ok()) << ok.error().message();
  EXPECT_EQ(ok->aws_iam_region, "eu-west-1");
  EXPECT_TRUE(ok->tls_required);
}

}  // namespace
}  // namespace chsync::mysql
