// Runs every chsync command (the built binary, registered by src/cli/secrets.cmake) with wrong,
// unreachable and malformed URLs that carry distinctive passwords, and checks that no part of a
// password shows in what the command prints (stdout, stderr, text and JSON log lines) or leaves in
// its state directory. No servers: every URL points at a closed loopback port.
//
// Every piece of every password holds the marker "Zq7", so any fragment of one that leaks (cut at a
// ':', '@', ',', quote or space) holds it too: the checks look for the marker alone.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "common/test_util.h"
#include "state/state_dir.h"

namespace {

constexpr const char* kMarker = "Zq7";

using chsync::test::TempDir;

/// A loopback TCP port that refuses connections: bound once, then closed.
int ClosedPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = 0;
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  if (fd >= 0) close(fd);
  return port;
}

struct Outcome {
  int exit_code = -1;
  bool stopped = false;  ///< still running at the deadline: sent SIGTERM (a pipe retrying)
  std::string out;
  std::string err;
};

/// Runs chsync with `args` (no shell: arguments go as they are, quotes and spaces too) and `env`
/// added to the environment, stdin from /dev/null. A command still running after `deadline_ms`
/// (a pipe retrying an unreachable server) is stopped with SIGTERM, as a user would with Ctrl-C.
Outcome Chsync(const std::vector<std::string>& args, const std::string& scratch,
               const std::vector<std::pair<std::string, std::string>>& env = {}, int deadline_ms = 20000) {
  const std::string out_path = scratch + "/stdout.txt";
  const std::string err_path = scratch + "/stderr.txt";
  pid_t pid = fork();
  if (pid == 0) {
    int in = open("/dev/null", O_RDONLY);
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || err < 0) _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> argv;
    std::string binary = CHSYNC_BINARY;
    argv.push_back(binary.data());
    std::vector<std::string> copies = args;
    for (std::string& a : copies) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  Outcome r;
  if (pid < 0) return r;
  int status = 0;
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(deadline_ms);
  bool done = false;
  while (!done) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      done = true;
    } else if (std::chrono::steady_clock::now() >= until) {
      r.stopped = true;
      kill(pid, SIGTERM);
      auto hard = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (waitpid(pid, &status, WNOHANG) != pid) {
        if (std::chrono::steady_clock::now() >= hard) {
          kill(pid, SIGKILL);
          waitpid(pid, &status, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      done = true;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = chsync::test::ReadText(out_path);
  r.err = chsync::test::ReadText(err_path);
  return r;
}

std::string Joined(const std::vector<std::string>& args) {
  std::string s;
  for (const std::string& a : args) s += (s.empty() ? "" : " ") + ("[" + a + "]");
  return s;
}

/// Fails when `text` holds the marker; shows where.
void ExpectNoMarker(const std::string& text, const std::string& what, const std::vector<std::string>& args) {
  size_t at = text.find(kMarker);
  if (at == std::string::npos) return;
  size_t from = at > 120 ? at - 120 : 0;
  ADD_FAILURE() << what << " shows a password for chsync " << Joined(args) << ":\n…" << text.substr(from, 240)
                << "…";
}

/// Every file under `dir` (a state directory): none may hold a password.
void ExpectNoMarkerInFiles(const std::string& dir, const std::vector<std::string>& args) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, ec)) {
    if (!entry.is_regular_file()) continue;
    ExpectNoMarker(chsync::test::ReadText(entry.path()), entry.path().string(), args);
  }
}

/// Passwords as they are written in a URL. Each piece holds the marker.
struct Password {
  std::string name;
  std::string in_url;
};

const std::vector<Password>& Passwords() {
  static const std::vector<Password> passwords = {
      {"plain", "Zq7plainpw"},
      {"short, not registered (masked by URL syntax only)", "Zq7"},
      {"percent-encoded", "Zq7pc%40Zq7at%2FZq7sl%2CZq7cm%20Zq7sp%3AZq7co"},
      {"odd characters", "Zq7a@Zq7b:Zq7c/Zq7d,Zq7e;Zq7f'Zq7g\"Zq7h Zq7i?Zq7j=Zq7k&Zq7l"},
      {"non-ASCII", "Zq7\xC3\xA4Zq7\xE2\x82\xACZq7\xF0\x9F\x94\x91"},
  };
  return passwords;
}

/// Source URL shapes with `p` (as written) for the closed ports `a` and `b`.
std::vector<std::string> SourceShapes(const std::string& p, int a, int b) {
  const std::string pa = std::to_string(a), pb = std::to_string(b);
  return {
      "mysql://chsync:" + p + "@127.0.0.1:" + pa,
      "mysql://chsync:" + p + "@127.0.0.1:" + pa + "/shop?connect-timeout=2",
      "mysql://chsync:" + p + "@127.0.0.1:" + pa + ",mysql://chsync:" + p + "@127.0.0.1:" + pb,
      "mysql://chsync:" + p + "@127.0.0.1:" + pa + ", mysql://chsync:" + p + "@127.0.0.1:" + pb + ",",
      "mysql://chsync:" + p + "@",
      "mysql://chsync:" + p + "@127.0.0.1:notaport",
      "mysql://chsync:" + p,
      "chsync:" + p + "@127.0.0.1:" + pa,
      "mysql://chsync:" + p + "@h1,h2:" + pa,
      "mysql://chsync:" + p + "@[::1",
      "mysql://chsync:" + p + "@127.0.0.1:" + pa + "?bogus=1",
  };
}

std::vector<std::string> DestShapes(const std::string& p, int a, int b) {
  const std::string pa = std::to_string(a), pb = std::to_string(b);
  return {
      "http://default:" + p + "@127.0.0.1:" + pa,
      "http://default:" + p + "@127.0.0.1:" + pa + ",http://default:" + p + "@127.0.0.1:" + pb,
      "https://default:" + p + "@127.0.0.1:" + pa + "/?ssl-verify=1",
      "http://default:" + p + "@",
      "http://default:" + p + "@127.0.0.1:notaport",
      "default:" + p + "@127.0.0.1:" + pa,
      "ftp://default:" + p + "@127.0.0.1:" + pa,
  };
}

class SecretsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    port_a_ = ClosedPort();
    port_b_ = ClosedPort();
    ASSERT_NE(port_a_, 0);
    ASSERT_NE(port_b_, 0);
  }

  /// Runs one command and checks everything it printed and left in `state` (when given).
  Outcome Check(const std::vector<std::string>& args, const std::string& state = "",
                const std::vector<std::pair<std::string, std::string>>& env = {}, int deadline_ms = 20000) {
    Outcome r = Chsync(args, scratch_.path(), env, deadline_ms);
    ExpectNoMarker(r.out, "stdout", args);
    ExpectNoMarker(r.err, "stderr", args);
    if (!state.empty()) ExpectNoMarkerInFiles(state, args);
    ++runs_;
    return r;
  }

  std::string GoodSource() const { return "mysql://chsync:Zq7good@127.0.0.1:" + std::to_string(port_a_); }
  std::string GoodDest() const { return "http://default:Zq7good@127.0.0.1:" + std::to_string(port_b_); }

  TempDir scratch_;
  int port_a_ = 0;
  int port_b_ = 0;
  int runs_ = 0;
};

TEST_F(SecretsCli, CheckQueryTailAndVerifyWithEveryUrlShape) {
  for (const Password& pw : Passwords()) {
    SCOPED_TRACE(pw.name);
    for (const std::string& source : SourceShapes(pw.in_url, port_a_, port_b_)) {
      Outcome r = Check({"check", "--source", source, "--dest", GoodDest()});
      EXPECT_NE(r.exit_code, 0) << source;
      Check({"tail", "--source", source, "--until-caught-up"});
      Check({"verify", "--source", source, "--dest", GoodDest(), "--tables", "shop.*"});
    }
    for (const std::string& dest : DestShapes(pw.in_url, port_a_, port_b_)) {
      Check({"check", "--source", GoodSource(), "--dest", dest});
      Check({"query", "--dest", dest, "SELECT 1"});
      Check({"verify", "--source", GoodSource(), "--dest", dest, "--tables", "shop.*"});
    }
  }
}

TEST_F(SecretsCli, RunAndResyncWithEveryUrlShapeInTextAndJsonLogs) {
  // Few retries with short waits: a pipe that cannot reach its servers gives up (or is stopped)
  // quickly, after logging its attempts.
  const std::string config = scratch_.path() + "/retry.yaml";
  chsync::test::WriteText(
      config,
      "retry:\n  attempts: 2\n  max_backoff_ms: 100\n  give_up_after_ms: 300\nfailover:\n  after_ms: 200\n");
  int n = 0;
  for (const Password& pw : Passwords()) {
    SCOPED_TRACE(pw.name);
    std::vector<std::pair<std::string, std::string>> pairs;
    for (const std::string& source : SourceShapes(pw.in_url, port_a_, port_b_))
      pairs.emplace_back(source, GoodDest());
    for (const std::string& dest : DestShapes(pw.in_url, port_a_, port_b_))
      pairs.emplace_back(GoodSource(), dest);
    for (const auto& [source, dest] : pairs) {
      const std::string state = scratch_.path() + "/state-" + std::to_string(n);
      const char* command = n % 3 == 2 ? "resync" : "run";
      const char* format = n % 2 == 0 ? "text" : "json";
      ++n;
      Outcome r = Check({command, "--config", config, "--source", source, "--dest", dest, "--state", state,
                         "--tables", "shop.*", "--log-format", format, "--log-level", "debug"},
                        state, {}, 8000);
      // Unreachable servers: it fails (unless stopped at the deadline on a slow machine).
      if (!r.stopped) EXPECT_NE(r.exit_code, 0) << source << " " << dest;
      // What `chsync status` shows of the failed pipe.
      if (std::filesystem::exists(state)) Check({"status", "--state", state}, state);
    }
  }
}

TEST_F(SecretsCli, PasswordsFromFilesAndTheEnvironment) {
  const std::string pw_file = scratch_.path() + "/source.pw";
  const std::string dest_pw_file = scratch_.path() + "/dest.pw";
  chsync::test::WriteText(pw_file, "Zq7file'pw Zq7\n");
  chsync::test::WriteText(dest_pw_file, "Zq7dest@Zq7pw\n");
  const std::string state = scratch_.path() + "/state";
  const std::string port = std::to_string(port_a_);
  const std::string config = scratch_.path() + "/pipe.yaml";
  chsync::test::WriteText(
      config, "source:\n  - mysql://chsync@127.0.0.1:" + port +
                  "\n  - mysql://chsync:Zq7list,Zq7pw@127.0.0.1:" + std::to_string(port_b_) +
                  "\ndest: http://default@127.0.0.1:" + port +
                  "\nsource_password_file: source.pw\ndest_password_file: dest.pw\nstate: " + state +
                  "\nretry:\n  attempts: 2\n  max_backoff_ms: 100\n");
  for (const char* command : {"run", "resync", "check", "verify"}) {
    Check({command, "--config", config}, state, {}, 8000);
  }
  Check({"explain-ddl", "--config", config, "--clickhouse-version", "23.8", scratch_.path() + "/none.sql"});
  Check({"status", "--state", state}, state);
  // From the environment.
  const std::vector<std::pair<std::string, std::string>> env = {{"CHSYNC_SOURCE_PASSWORD", "Zq7env-src"},
                                                                {"CHSYNC_DEST_PASSWORD", "Zq7env-dst"}};
  const std::string source = "mysql://chsync@127.0.0.1:" + port;
  const std::string dest = "http://default@127.0.0.1:" + port;
  Check({"check", "--source", source, "--dest", dest}, "", env);
  Check({"tail", "--source", source, "--until-caught-up"}, "", env);
  Check({"query", "--dest", dest, "SELECT 1"}, "", env);
  Check({"run", "--source", source, "--dest", dest, "--state", scratch_.path() + "/env-state", "--log-format",
         "json"},
        scratch_.path() + "/env-state", env, 8000);
  // A malformed configuration file that holds a password.
  const std::string bad = scratch_.path() + "/bad.yaml";
  chsync::test::WriteText(
      bad, "source: mysql://chsync:Zq7yaml@127.0.0.1:" + port + "\ndest: [http://default:Zq7yaml@h, [x]]\n");
  Check({"run", "--config", bad});
  Check({"check", "--config", bad});
  chsync::test::WriteText(
      bad, "source: mysql://chsync:Zq7yaml@127.0.0.1:" + port + "\nbogus_key: mysql://u:Zq7yaml@h\n");
  Check({"run", "--config", bad});
}

TEST_F(SecretsCli, ArgumentsEchoedInUsageErrors) {
  const std::string url = "mysql://chsync:Zq7echo@127.0.0.1:" + std::to_string(port_a_);
  const std::string state = scratch_.path() + "/state";
  {
    // A state directory with a checkpoint, as a pipe leaves it: pause and resume get to --table.
    auto dir = chsync::pipe::StateDir::Open(state);
    ASSERT_TRUE(dir.ok()) << dir.error().message();
    chsync::pipe::Checkpoint c;
    c.resume = {"binlog.000001", 4, ""};
    ASSERT_TRUE((*dir)->Save(c).ok());
  }
  const std::vector<std::vector<std::string>> commands = {
      {"check", url},  // a positional argument where none is expected
      {"nonsense", url},
      {url},
      {"run", "--source", url, "--dest", url, "--state", state, "--bogus", url},
      {"run", "--source", url, "--dest", "http://default@127.0.0.1:1", "--state", state, "--schema-policy",
       url},
      {"run", "--source", url, "--dest", "http://default@127.0.0.1:1", "--state", state, "--on-binlog-gap",
       url},
      {"run", "--source", url, "--dest", "http://default@127.0.0.1:1", "--state", state, "--tables", url},
      {"run", "--source", url, "--dest", "http://default@127.0.0.1:1", "--state", state, "--http", url},
      {"check", "--source", url, "--dest", "http://default@127.0.0.1:1", "--tables", "u:Zq7echo@h"},
      {"pause", "--state", state, "--table", "u:Zq7echo@h"},
      {"resume", "--state", state, "--table", url},
      {"resync", "--state", state, "--table", url},
      {"status", "--state", scratch_.path() + "/u:Zq7echo@h"},
      {"decode", scratch_.path() + "/u:Zq7echo@h.bin"},
      {"explain-ddl", scratch_.path() + "/u:Zq7echo@h.sql"},
      {"tail", "--source", url, "--from", "u:Zq7echo@h"},
      {"tail", "--source", url, "--from-gtid", "u:Zq7echo@h"},
      {"query", "--dest", "http://default:Zq7echo@127.0.0.1:1", "--format", "u:Zq7echo@h", "SELECT 1"},
      {"verify", "--source", url, "--dest", "http://default@127.0.0.1:1", "--tables", "u:Zq7echo@h"},
  };
  for (const auto& args : commands) Check(args, "", {}, 8000);
}

TEST_F(SecretsCli, StatusOfAStateDirectoryThatHoldsAPassword) {
  // A status.json written by an older chsync, whose messages were not redacted.
  const std::string state = scratch_.path() + "/old";
  std::filesystem::create_directories(state);
  chsync::test::WriteText(
      state + "/status.json",
      R"({"phase":"streaming","pid":1,"updated_at_ms":1,"position":"binlog.000001:4",)"
      R"("last_event_time":0,"rows_applied":0,"transactions":0,)"
      R"("last_error":"Unknown database '/chsync:Zq7old@127.0.0.1:3307' at mysql://u:Zq7old@h",)"
      R"("source":"mysql://u:Zq7old@h:3306","destination":"http://default:Zq7old@ch:8123",)"
      R"("schema_changes":[]})");
  Check({"status", "--state", state});
}

TEST_F(SecretsCli, HelpKeepsItsPlaceholders) {
  Outcome r = Chsync({"run", "--help"}, scratch_.path());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("mysql://USER:PASSWORD@HOST:PORT"), std::string::npos) << r.out;
}

}  // namespace
