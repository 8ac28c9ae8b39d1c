// `chsync tables add --state DIR PATTERN` and `chsync tables remove …`: change which tables the pipe
// of DIR replicates, on top of its configured `tables:` (docs/table-control.md). A table that enters
// the selection is copied online while the others stream on; one that leaves it stops being
// applied, its ClickHouse table kept. The change is a control request (state/control.h), carried
// out once by the running pipe, or by the next `chsync run` on DIR, and kept in its checkpoint.

#include <memory>
#include <string>

#include "cli/command.h"

namespace chsync::cli {

/// Defined in table_control_command.cpp.
int RunTableControl(std::string_view op, const std::string& state, const std::string& table, unsigned wait_s);

namespace {

struct TablesOptions {
  std::string state;
  std::string pattern;
  unsigned wait_s = 60;
};

void AddTablesCommand(CLI::App& app, RunFunction& run) {
  CLI::App* tables = app.add_subcommand("tables", "Add tables to a running pipe's selection, or remove them");
  tables->require_subcommand(1);
  for (const char* op : {"add", "remove"}) {
    auto options = std::make_shared<TablesOptions>();
    CLI::App* sub = tables->add_subcommand(
        op, std::string(op) == "add"
                ? "Replicate the tables PATTERN names too: each is copied online, the others stream on"
                : "Stop replicating the tables PATTERN names: their ClickHouse tables are kept");
    sub->add_option("--state", options->state, "the state directory of the pipe (its --state)")->required();
    sub->add_option("pattern", options->pattern, "DB.TABLE, wildcards * and ? (DB.* for a whole database)")
        ->required();
    sub->add_option("--wait-s", options->wait_s,
                    "how long to wait for a running pipe's answer (default 60; 0: do not wait)")
        ->check(CLI::Range(0u, 86400u));
    sub->callback([options, op, &run] {
      const std::string request = std::string("tables-") + op;
      run = [options, request] {
        return RunTableControl(request, options->state, options->pattern, options->wait_s);
      };
    });
  }
}

const CommandRegistration kTablesRegistration{54, &AddTablesCommand};

}  // namespace
}  // namespace chsync::cli
