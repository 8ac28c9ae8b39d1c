#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "binlog/event_printer.h"
#include "binlog/file_reader.h"
#include "cli/command.h"

namespace chsync::cli {
namespace {

struct DecodeOptions {
  std::vector<std::string> files;
  uint64_t start_position = 0;
  std::optional<uint64_t> stop_position;
  std::string format = "text";
};

void Flush(std::string& out) {
  std::fwrite(out.data(), 1, out.size(), stdout);
  out.clear();
}

/// Prints every event of `path`; returns false after reporting an error on stderr.
bool DecodeFile(const std::string& path, const DecodeOptions& o, bool first, bool last, std::string& out) {
  binlog::PrintFormat format = o.format == "json" ? binlog::PrintFormat::kJson : binlog::PrintFormat::kText;
  auto opened = binlog::FileReader::Open(path);
  if (!opened.ok()) {
    std::fprintf(stderr, "chsync decode: %s\n", opened.error().message().c_str());
    return false;
  }
  binlog::FileReader& reader = **opened;
  if (first && o.start_position > reader.position()) {
    Status s = reader.SkipTo(o.start_position);
    if (!s.ok()) {
      Flush(out);
      std::fprintf(stderr, "chsync decode: %s\n", s.error().message().c_str());
      return false;
    }
  }
  while (true) {
    if (last && o.stop_position && reader.position() >= *o.stop_position) break;
    auto next = reader.Next();
    if (!next.ok()) {
      Flush(out);
      std::fflush(stdout);
      std::fprintf(stderr, "chsync decode: %s: %s\n", path.c_str(), next.error().message().c_str());
      return false;
    }
    if (!*next) break;
    binlog::AppendEvent(**next, format, out);
    if (out.size() >= (1u << 20)) Flush(out);
  }
  return true;
}

void AddDecodeCommand(CLI::App& app, RunFunction& run) {
  auto opts = std::make_shared<DecodeOptions>();
  CLI::App* cmd = app.add_subcommand("decode", "Print the events of binlog files, one per line");
  cmd->add_option("files", opts->files, "Binlog or relay-log files")->required()->check(CLI::ExistingFile);
  cmd->add_option("--start-position", opts->start_position,
                  "Skip events before this byte offset in the first file (must be an event start)");
  cmd->add_option("--stop-position", opts->stop_position,
                  "Stop before the first event at or after this byte offset in the last file");
  cmd->add_option("--format", opts->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  cmd->callback([opts, &run]() {
    run = [opts]() {
      std::string out;
      out.reserve(1u << 21);
      bool ok = true;
      for (size_t i = 0; i < opts->files.size(); ++i) {
        if (!DecodeFile(opts->files[i], *opts, i == 0, i + 1 == opts->files.size(), out)) {
          ok = false;
          break;
        }
      }
      Flush(out);
      std::fflush(stdout);
      return ok ? kExitOk : kExitFailure;
    };
  });
}

const CommandRegistration kRegistration{20, &AddDecodeCommand};

}  // namespace
}  // namespace chsync::cli
