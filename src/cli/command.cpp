#include "cli/command.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace chsync::cli {
namespace {

std::vector<std::pair<int, AddCommandFunction>>& Registry() {
  static std::vector<std::pair<int, AddCommandFunction>> registry;
  return registry;
}

}  // namespace

CommandRegistration::CommandRegistration(int order, AddCommandFunction add) {
  Registry().emplace_back(order, add);
}

void AddRegisteredCommands(CLI::App& app, RunFunction& run) {
  auto commands = Registry();
  std::stable_sort(commands.begin(), commands.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [order, add] : commands) add(app, run);
}

}  // namespace chsync::cli
