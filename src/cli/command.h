#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string_view>

namespace chsync::cli {

/// Process exit codes shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  ///< the job failed, or the checked setup cannot run a pipe
inline constexpr int kExitUsage = 2;    ///< bad flags, URL or configuration

/// Runs the chosen subcommand and returns the process exit code.
using RunFunction = std::function<int()>;

/// Adds one subcommand to `app`; when the user picks it, the callback stores in `run` what runs it.
using AddCommandFunction = void (*)(CLI::App& app, RunFunction& run);

/// Registers a command from a static initializer in the chsync executable's sources, so a command
/// file is added by listing it in a *.cmake file beside this one, without editing main.cpp.
/// `order` sorts the commands in --help.
struct CommandRegistration {
  CommandRegistration(int order, AddCommandFunction add);
};

/// Calls every registered AddCommandFunction in `order`.
void AddRegisteredCommands(CLI::App& app, RunFunction& run);

}  // namespace chsync::cli
