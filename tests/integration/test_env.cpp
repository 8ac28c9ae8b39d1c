#include "test_env.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace chsync::testing {

ProcessResult RunProcess(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env) {
  ProcessResult result;
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) {
    ADD_FAILURE() << "pipe: " << std::strerror(errno);
    return result;
  }
  pid_t pid = fork();
  if (pid < 0) {
    ADD_FAILURE() << "fork: " << std::strerror(errno);
    return result;
  }
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    for (const std::string& e : extra_env) putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  std::array<char, 65536> buf;
  ssize_t n;
  while ((n = read(pipe_fds[0], buf.data(), buf.size())) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) result.output.append(buf.data(), static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string ChsyncBinary() {
  return CHSYNC_BINARY_DIR "/src/cli/chsync";
}

int FreeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Tail(const std::string& text, size_t max_bytes) {
  return text.size() <= max_bytes ? text : "…" + text.substr(text.size() - max_bytes);
}

std::string MakeTempDir(const std::string& prefix) {
  const char* base = std::getenv("CHSYNC_TEST_TMPDIR");
  std::string pattern =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/" + prefix + ".XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp " << pattern << ": " << std::strerror(errno);
    return "";
  }
  return buf.data();
}

namespace {

/// The process id in the pid file named by $<server>_PIDFILE, 0 when there is none.
pid_t ServerPid(const std::string& server) {
  std::string path = RequireEnv((server + "_PIDFILE").c_str());
  if (path.empty()) return 0;
  std::ifstream in(path);
  long pid = 0;
  if (!(in >> pid) || pid <= 0) return 0;
  return static_cast<pid_t>(pid);
}

/// True while `pid` is a live process (not gone, not a zombie waiting to be reaped).
bool Alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z' &&
         line[paren + 2] != 'X';
}

/// ClickHouse servers answer `SELECT 1` at $<server> (the start scripts of ZooKeeper and MariaDB,
/// CHSYNC_TEST_MYSQL_*, wait by themselves until the server serves).
bool Answers(const std::string& server) {
  if (server.find("ZOOKEEPER") != std::string::npos || server.starts_with("CHSYNC_TEST_MYSQL")) return true;
  std::string url = RequireEnv(server.c_str());
  if (url.empty()) return false;
  ProcessResult r = RunProcess({ChsyncBinary(), "query", "--dest", url, "SELECT 1"});
  return r.exit_code == 0 && r.output.find('1') != std::string::npos;
}

}  // namespace

bool KillServer(const std::string& server) {
  pid_t pid = ServerPid(server);
  if (pid == 0 || !Alive(pid)) return true;
  if (kill(pid, SIGKILL) != 0 && errno != ESRCH) {
    ADD_FAILURE() << "kill -9 " << pid << " (" << server << "): " << std::strerror(errno);
    return false;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (Alive(pid)) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << server << " (pid " << pid << ") still runs 30 s after SIGKILL";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

bool StartServer(const std::string& server) {
  pid_t pid = ServerPid(server);
  if (pid != 0 && Alive(pid) && Answers(server)) return true;
  std::string start = RequireEnv((server + "_START").c_str());
  if (start.empty()) return false;
  // Run by hand rather than through RunProcess: the server must inherit none of this process's
  // descriptors (a source connection kept open by a ClickHouse server would never disconnect).
  const std::string log = start.substr(0, start.rfind('/') + 1) + "log/start.log";
  pid_t child = fork();
  if (child < 0) {
    ADD_FAILURE() << "fork: " << std::strerror(errno);
    return false;
  }
  if (child == 0) {
    int in = open("/dev/null", O_RDONLY);
    int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (in >= 0) dup2(in, STDIN_FILENO);
    if (out >= 0) {
      dup2(out, STDOUT_FILENO);
      dup2(out, STDERR_FILENO);
    }
    close_range(3, ~0U, 0);
    execl("/bin/bash", "bash", start.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    ADD_FAILURE() << start << " failed (status " << status << "); " << log << ":\n" << text.str();
    return false;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (!Answers(server)) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << server << " does not answer SELECT 1 within 90 s of " << start;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return true;
}

bool FaultClickHouseAnswers() {
  return Answers("CHSYNC_TEST_CLICKHOUSE_FAULT");
}

std::string FaultClickHousePath() {
  std::string start = RequireEnv("CHSYNC_TEST_CLICKHOUSE_FAULT_START");
  return start.substr(0, start.rfind('/') + 1) + "data/";
}

std::string FaultClickHouseState() {
  const std::string server = "CHSYNC_TEST_CLICKHOUSE_FAULT";
  pid_t pid = ServerPid(server);
  std::string state = "fault ClickHouse: pid file names " + std::to_string(pid) + ", " +
                      (pid != 0 && Alive(pid) ? "alive" : "not running");
  std::string start = RequireEnv((server + "_START").c_str());
  if (start.empty()) return state;
  std::ifstream in(start.substr(0, start.rfind('/') + 1) + "log/error.log");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    size_t digits = 0;
    while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits])) != 0) ++digits;
    if (digits > 0 && line.compare(digits, 2, ". ") == 0) continue;  // "3. /lib/…": a stack frame
    lines.push_back(line.substr(0, 400));
    if (lines.size() > 12) lines.erase(lines.begin());
  }
  state += "; the end of its error log:";
  for (const std::string& line : lines) state += "\n  " + line;
  return state;
}

bool KillFaultClickHouse() {
  return KillServer("CHSYNC_TEST_CLICKHOUSE_FAULT");
}

bool StartFaultClickHouse() {
  return StartServer("CHSYNC_TEST_CLICKHOUSE_FAULT");
}

}  // namespace chsync::testing
