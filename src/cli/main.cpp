#include <malloc.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "cli/command.h"
#include "cli/version.h"

namespace {

int Main(int argc, char** argv) {
  CLI::App app{"chsync: replicate MySQL and MariaDB into ClickHouse"};
  app.require_subcommand(1);
  app.set_version_flag(
      "--version", [] { return chsync::cli::VersionText(); },
      "Print the version, the git commit and the client libraries' versions");
  chsync::cli::RunFunction run;
  chsync::cli::AddRegisteredCommands(app, run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? chsync::cli::kExitOk : chsync::cli::kExitUsage;
  }
  if (!run) return chsync::cli::kExitUsage;
  return run();
}

/// Ends the process without running static destructors: an embedded ClickHouse engine (chDB)
/// cannot be torn down safely while its background threads run, and crashes in its own exit
/// handlers now and then. Everything chsync must keep is on disk by now (checkpoints are fsynced,
/// ClickHouse parts are written when their INSERT returns).
[[noreturn]] void Exit(int code) {
  std::fflush(nullptr);
  std::_Exit(code);
}

}  // namespace

int main(int argc, char** argv) {
  // Insert batches (up to batch.max_bytes, 32 MiB by default) come from the heap and their memory
  // is kept for the next batch once sent, instead of a fresh mmap that the kernel faults in page by
  // page for every batch (that was a fifth of chsync's CPU while catching up).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  try {
    Exit(Main(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chsync: internal error: %s (please report it)\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "chsync: internal error (please report it)\n");
  }
  Exit(chsync::cli::kExitFailure);
}
