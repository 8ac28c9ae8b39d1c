// `chsync pause --state DIR --table DB.TABLE` and `chsync resume …` (issue 17): ask the pipe of DIR
// to stop applying one table's changes, or to bring it back. The request is a file in DIR/requests
// (state/control.h, docs/table-control.md): a running `chsync run` carries it out at its next
// transaction boundary and answers; without one, the next `chsync run` on DIR does.
// `chsync resync --table` with a running pipe comes here too (run_command.cpp).
// Exit 0 when the pipe answered "done: …", or the request was queued without waiting (no pipe
// running, or --wait-s 0); 1 when it refused, or gave no answer within --wait-s; 2 on bad usage.

#include <fmt/format.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <memory>
#include <string>
#include <string_view>

#include "cli/command.h"
#include "state/control.h"

namespace chsync::cli {

int RunTableControl(std::string_view op, const std::string& state, const std::string& table, unsigned wait_s);

namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void OnInterrupt(int /*signal*/) {
  g_interrupted.store(true);
}

bool Exists(const std::string& path, bool directory) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return false;
  return directory ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode);
}

struct TableControlOptions {
  std::string state;
  std::string table;
  unsigned wait_s = 60;
};

void AddTableControlCommand(CLI::App& app, RunFunction& run, const char* op, const char* description) {
  auto options = std::make_shared<TableControlOptions>();
  CLI::App* sub = app.add_subcommand(op, description);
  sub->add_option("--state", options->state, "the state directory of the pipe (its --state)")->required();
  sub->add_option("--table", options->table, "the table, DB.TABLE as the source names it")->required();
  sub->add_option("--wait-s", options->wait_s,
                  "how long to wait for a running pipe's answer (default 60; 0: do not wait)")
      ->check(CLI::Range(0u, 86400u));
  sub->callback([options, op, &run] {
    run = [options, op] { return RunTableControl(op, options->state, options->table, options->wait_s); };
  });
}

void AddPauseCommand(CLI::App& app, RunFunction& run) {
  AddTableControlCommand(app, run, "pause",
                         "Stop applying one table's changes while the other tables keep streaming");
}

void AddResumeCommand(CLI::App& app, RunFunction& run) {
  AddTableControlCommand(app, run, "resume",
                         "Bring a paused or parked table back: the pipe copies it again online");
}

const CommandRegistration kPauseRegistration{52, &AddPauseCommand};
const CommandRegistration kResumeRegistration{53, &AddResumeCommand};

}  // namespace

/// Submits `op` ("pause", "resume" or "resync") for `table` to the pipe of `state`, waits up to
/// `wait_s` seconds for a running pipe's outcome, prints it and returns the exit code. Also called
/// by `chsync resync --table` when a pipe runs on `state` (run_command.cpp).
int RunTableControl(std::string_view op, const std::string& state, const std::string& table,
                    unsigned wait_s) {
  std::string name = "chsync " + std::string(op);
  if (op.starts_with("tables-")) name = "chsync tables " + std::string(op.substr(7));
  if (state.empty()) {
    fmt::print(stderr, "{}: --state is required: the state directory of the pipe\n", name);
    return kExitUsage;
  }
  if (!Exists(state, /*directory=*/true)) {
    fmt::print(stderr, "{}: state directory {} does not exist: give the --state of a chsync run\n", name,
               state);
    return kExitUsage;
  }
  bool running = pipe::PipeRunning(state);
  if (!Exists(state + "/checkpoint.json", /*directory=*/false)) {
    if (running) {
      fmt::print(stderr,
                 "{}: the chsync run on {} has not saved its first checkpoint yet: try again when it has\n",
                 name, state);
    } else {
      fmt::print(stderr, "{}: {} holds no checkpoint.json: it is not the state directory of a pipe\n", name,
                 state);
    }
    return kExitUsage;
  }
  if (!pipe::IsQualifiedTable(table)) {
    fmt::print(stderr, "{}: --table must be DB.TABLE, not '{}'\n", name, table);
    return kExitUsage;
  }
  auto request = pipe::SubmitRequest(state, op, table);
  if (!request.ok()) {
    fmt::print(stderr, "{}: {}\n", name, request.error().message());
    return request.error().kind() == ErrorKind::kUsage ? kExitUsage : kExitFailure;
  }
  std::string queue = state + "/requests";
  if (!running) {
    fmt::print(
        "no chsync run holds {}: the request waits in {} and the next `chsync run` on it carries it out\n",
        state, queue);
    return kExitOk;
  }

  if (wait_s == 0) {
    fmt::print(
        "the request {} waits in {}: the running pipe carries it out at its next transaction boundary\n",
        request->id, queue);
    return kExitOk;
  }

  struct sigaction action {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  auto outcome = pipe::WaitForOutcome(state, request->id, std::chrono::seconds(wait_s), &g_interrupted);
  if (!outcome.ok()) {
    fmt::print(stderr, "{}: {} (the request {} stays in {})\n", name, outcome.error().message(), request->id,
               queue);
    return kExitFailure;
  }
  if (outcome->has_value()) {
    fmt::print("{}\n", **outcome);
    return (*outcome)->rfind("done:", 0) == 0 ? kExitOk : kExitFailure;
  }
  std::string waited = g_interrupted ? "interrupted" : fmt::format("no answer within {} s", wait_s);
  if (pipe::PipeRunning(state)) {
    fmt::print(stderr,
               "{}: {}: the request {} stays queued in {} and the running pipe carries it out at its next "
               "transaction boundary\n",
               name, waited, request->id, queue);
  } else {
    fmt::print(stderr,
               "{}: {}, and the chsync run on {} has stopped: the request {} stays queued in {} and the next "
               "`chsync run` on it carries it out\n",
               name, waited, state, request->id, queue);
  }
  return kExitFailure;
}

}  // namespace chsync::cli
