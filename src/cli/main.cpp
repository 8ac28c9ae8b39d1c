#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

#include "cli/command.h"

namespace {

int Main(int argc, char** argv) {
  CLI::App app{"chsync: replicate MySQL and MariaDB into ClickHouse"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "chsync " CHSYNC_VERSION);
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

}  // namespace

int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chsync: internal error: %s (please report it)\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "chsync: internal error (please report it)\n");
  }
  return chsync::cli::kExitFailure;
}
