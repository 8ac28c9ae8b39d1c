// `chsync status --state DIR [--all] [--table PATTERN]`: where a pipe is (position, lag, tables by
// state, held tables first, snapshot progress), its last error, the schema-change policies in force
// and the schema changes it saw, from the state directory (no server is contacted); the text is
// cli/status_text.h's.
// Exit 0 when the state could be read, 1 when there is none or it is damaged, 2 on bad usage.

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/status_text.h"
#include "state/checkpoint.h"
#include "state/run_status.h"
#include "state/state_dir.h"

namespace chsync::cli {
namespace {

struct StatusOptions {
  std::string state;
  bool all = false;
  std::vector<std::string> tables;
};

/// True when a pipe holds the directory's lock (it is running).
bool PipeRunning(const std::string& dir) {
  int fd = open((dir + "/lock").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool held = flock(fd, LOCK_EX | LOCK_NB) != 0;
  if (!held) flock(fd, LOCK_UN);
  close(fd);
  return held;
}

uint64_t NowMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

int RunStatusCommand(const StatusOptions& o) {
  auto checkpoint = pipe::ReadCheckpoint(o.state);
  if (!checkpoint.ok()) {
    fmt::print(stderr, "chsync status: {}\n", checkpoint.error().message());
    return kExitFailure;
  }
  if (!checkpoint->has_value()) {
    fmt::print(stderr, "chsync status: no pipe has saved a checkpoint in {} yet\n", o.state);
    return kExitFailure;
  }
  auto status = pipe::ReadRunStatus(o.state);
  pipe::RunStatus run;
  if (status.ok() && status->has_value()) run = **status;
  StatusTextOptions text;
  text.state_dir = o.state;
  text.running = PipeRunning(o.state);
  text.now_ms = NowMs();
  if (o.all) text.shown = 0;
  text.tables = o.tables;
  fmt::print("{}", StatusText(**checkpoint, run, text));
  return kExitOk;
}

void AddStatusCommand(CLI::App& app, RunFunction& run) {
  auto options = std::make_shared<StatusOptions>();
  CLI::App* sub = app.add_subcommand(
      "status",
      "Show a pipe's position, lag, tables, last error, schema policies and schema changes from its "
      "state directory");
  sub->add_option("--state", options->state, "the pipe's state directory")->required();
  sub->add_flag("--all", options->all, "list every table (by default each list stops after 20)");
  sub->add_option("--table", options->tables,
                  "list only the tables matching PATTERN (DB.TABLE, * and ?; repeatable), every one of them");
  sub->callback([options, &run] { run = [options] { return RunStatusCommand(*options); }; });
}

const CommandRegistration kRegistration{55, &AddStatusCommand};

}  // namespace
}  // namespace chsync::cli
