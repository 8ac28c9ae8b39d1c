#include "replication_pair.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/url.h"
#include "test_env.h"

namespace chsync::testing {
namespace {

constexpr const char* kPrimary = "CHSYNC_TEST_MYSQL_PRIMARY";
constexpr const char* kReplica = "CHSYNC_TEST_MYSQL_REPLICA";

/// Runs a script of scripts/test-servers and returns its exit code and output. Not RunProcess:
/// a server the script starts must inherit none of this process's descriptors (a connection of
/// the test kept open inside a restarted server would never close).
ProcessResult RunScript(const std::string& script) {
  ProcessResult result;
  int fds[2];
  if (pipe(fds) != 0) {
    ADD_FAILURE() << "pipe: " << std::strerror(errno);
    return result;
  }
  pid_t child = fork();
  if (child < 0) {
    ADD_FAILURE() << "fork: " << std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return result;
  }
  if (child == 0) {
    int in = open("/dev/null", O_RDONLY);
    if (in >= 0) dup2(in, STDIN_FILENO);
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    close_range(3, ~0U, 0);
    execl("/bin/bash", "bash", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  std::array<char, 4096> buf;
  ssize_t n;
  while ((n = read(fds[0], buf.data(), buf.size())) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) result.output.append(buf.data(), static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::unique_ptr<mysql::Connection> Connect(const std::string& url, const char* what) {
  if (url.empty()) return nullptr;
  auto parsed = ParseUrl(url);
  if (!parsed.ok()) {
    ADD_FAILURE() << "bad URL of the " << what << ": " << parsed.error().message();
    return nullptr;
  }
  auto options = mysql::OptionsFromUrl(*parsed);
  if (!options.ok()) {
    ADD_FAILURE() << options.error().message();
    return nullptr;
  }
  options->connect_timeout_s = 5;
  auto conn = mysql::Connection::Open(*options);
  if (!conn.ok()) {
    ADD_FAILURE() << "cannot connect to the " << what << ": " << conn.error().message();
    return nullptr;
  }
  return std::move(conn).value();
}

/// Starts the server of `env` with its start script and checks that it accepts connections.
bool StartPairServer(const char* env, const std::string& url, const char* what) {
  std::string start = RequireEnv((std::string(env) + "_START").c_str());
  if (start.empty()) return false;
  ProcessResult r = RunScript(start);
  if (r.exit_code != 0) {
    ADD_FAILURE() << start << " (" << what << ") failed with exit code " << r.exit_code << ":\n" << r.output;
    return false;
  }
  return Connect(url, what) != nullptr;
}

/// One value of a query, "" for NULL; records a failure (naming `what`) when the query fails.
std::optional<std::string> Value(mysql::Connection& conn, const std::string& sql, const char* what) {
  auto v = conn.QueryValue(sql);
  if (!v.ok()) {
    ADD_FAILURE() << sql << " on the " << what << ": " << v.error().message();
    return std::nullopt;
  }
  return v->value_or("");
}

/// The named columns of SHOW SLAVE STATUS as "Name: value, …" ("no replication configured" when
/// it has no row), for failure messages.
std::string SlaveStatus(mysql::Connection& conn, const std::vector<std::string>& names) {
  auto status = conn.Query("SHOW SLAVE STATUS");
  if (!status.ok()) return "SHOW SLAVE STATUS failed: " + status.error().message();
  if (status->rows.empty()) return "no replication configured";
  std::string text;
  for (const std::string& name : names) {
    int i = status->ColumnIndex(name);
    if (!text.empty()) text += ", ";
    text += name + ": " + (i < 0 ? "?" : status->rows[0][i].value_or("NULL"));
  }
  return text;
}

/// Domain → sequence number of a GTID position; nullopt when it is malformed.
std::optional<std::map<uint32_t, uint64_t>> ParseGtidPos(const std::string& pos) {
  std::map<uint32_t, uint64_t> domains;
  size_t start = 0;
  while (start <= pos.size()) {
    size_t end = pos.find(',', start);
    if (end == std::string::npos) end = pos.size();
    std::string gtid = pos.substr(start, end - start);
    size_t first = gtid.find_first_not_of(" \t\r\n");
    size_t last = gtid.find_last_not_of(" \t\r\n");
    gtid = first == std::string::npos ? "" : gtid.substr(first, last - first + 1);
    if (!gtid.empty()) {
      uint32_t domain = 0, server = 0;
      uint64_t seq = 0;
      const char* p = gtid.data();
      const char* e = gtid.data() + gtid.size();
      auto r1 = std::from_chars(p, e, domain);
      if (r1.ec != std::errc() || r1.ptr == e || *r1.ptr != '-') return std::nullopt;
      auto r2 = std::from_chars(r1.ptr + 1, e, server);
      if (r2.ec != std::errc() || r2.ptr == e || *r2.ptr != '-') return std::nullopt;
      auto r3 = std::from_chars(r2.ptr + 1, e, seq);
      if (r3.ec != std::errc() || r3.ptr != e) return std::nullopt;
      if (!domains.emplace(domain, seq).second) return std::nullopt;
    }
    start = end + 1;
  }
  return domains;
}

}  // namespace

bool GtidPosContains(const std::string& pos, const std::string& other) {
  auto have = ParseGtidPos(pos);
  auto want = ParseGtidPos(other);
  if (!have || !want) return false;
  for (const auto& [domain, seq] : *want) {
    auto it = have->find(domain);
    if (it == have->end() || it->second < seq) return false;
  }
  return true;
}

ReplicationPair::ReplicationPair() : primary_url_(RequireEnv(kPrimary)), replica_url_(RequireEnv(kReplica)) {}

void ReplicationPair::Reset() {
  std::string reset = RequireEnv("CHSYNC_TEST_MYSQL_PAIR_RESET");
  if (reset.empty()) return;
  ProcessResult r = RunScript(reset);
  if (r.exit_code != 0) {
    ADD_FAILURE() << reset << " failed with exit code " << r.exit_code << ":\n" << r.output;
  }
}

bool ReplicationPair::KillPrimary() {
  return KillServer(kPrimary);
}

bool ReplicationPair::StartPrimary() {
  return StartPairServer(kPrimary, primary_url_, "primary");
}

bool ReplicationPair::KillReplica() {
  return KillServer(kReplica);
}

bool ReplicationPair::StartReplica() {
  return StartPairServer(kReplica, replica_url_, "replica");
}

std::unique_ptr<mysql::Connection> ReplicationPair::ConnectPrimary() const {
  return Connect(primary_url_, "primary");
}

std::unique_ptr<mysql::Connection> ReplicationPair::ConnectReplica() const {
  return Connect(replica_url_, "replica");
}

bool ReplicationPair::Promote() {
  auto replica = ConnectReplica();
  if (replica == nullptr) return false;
  // Receive nothing more, then let the SQL thread apply what was received.
  Status stopped = replica->Execute("STOP SLAVE IO_THREAD");
  if (!stopped.ok()) {
    ADD_FAILURE() << "STOP SLAVE IO_THREAD on the replica: " << stopped.error().message();
    return false;
  }
  auto status = replica->Query("SHOW SLAVE STATUS");
  if (!status.ok()) {
    ADD_FAILURE() << "SHOW SLAVE STATUS on the replica: " << status.error().message();
    return false;
  }
  if (status->rows.empty()) {
    ADD_FAILURE() << "the replica does not replicate (promoted already?): nothing to promote";
    return false;
  }
  int column = status->ColumnIndex("Gtid_IO_Pos");
  if (column < 0) {
    ADD_FAILURE() << "SHOW SLAVE STATUS on the replica has no Gtid_IO_Pos column";
    return false;
  }
  std::string received = status->rows[0][column].value_or("");
  auto waited =
      Value(*replica, "SELECT MASTER_GTID_WAIT(" + mysql::QuoteString(received) + ", 30)", "replica");
  if (!waited) return false;
  if (*waited != "0") {
    ADD_FAILURE() << "the replica did not apply what it received (Gtid_IO_Pos " << received
                  << ") within 30 s: gtid_slave_pos "
                  << Value(*replica, "SELECT @@gtid_slave_pos", "replica").value_or("?") << "; "
                  << SlaveStatus(*replica, {"Slave_SQL_Running", "Last_SQL_Error"});
    return false;
  }
  for (const char* sql : {"STOP SLAVE", "RESET SLAVE ALL"}) {
    Status s = replica->Execute(sql);
    if (!s.ok()) {
      ADD_FAILURE() << sql << " on the replica: " << s.error().message();
      return false;
    }
  }
  return true;
}

bool ReplicationPair::WaitReplicaCaughtUp(int seconds) {
  auto primary = ConnectPrimary();
  auto replica = ConnectReplica();
  if (primary == nullptr || replica == nullptr) return false;
  auto target = Value(*primary, "SELECT @@gtid_binlog_pos", "primary");
  if (!target) return false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  std::string applied;
  while (true) {
    auto pos = Value(*replica, "SELECT @@gtid_slave_pos", "replica");
    if (!pos) return false;
    applied = *pos;
    if (GtidPosContains(applied, *target)) return true;
    if (std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ADD_FAILURE() << "the replica did not catch up within " << seconds << " s: primary @@gtid_binlog_pos '"
                << *target << "', replica @@gtid_slave_pos '" << applied << "'; "
                << SlaveStatus(*replica, {"Slave_IO_Running", "Slave_SQL_Running", "Gtid_IO_Pos",
                                          "Last_IO_Error", "Last_SQL_Error"});
  return false;
}

}  // namespace chsync::testing
