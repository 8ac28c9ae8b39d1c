#include <malloc.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>
#include <string_view>

#include "cli/command.h"
#include "cli/version.h"
#include "common/redact.h"

namespace {

/// The passwords chsync is given on its command line and in its environment, registered before
/// anything can print them (common/redact.h). Password files and configuration files register
/// theirs when they are read; every URL registers its password when it is parsed.
void RegisterGivenSecrets(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) chsync::RegisterSecretsIn(argv[i]);
  for (const char* name : {"CHSYNC_SOURCE_PASSWORD", "CHSYNC_DEST_PASSWORD"}) {
    if (const char* value = std::getenv(name)) chsync::RegisterSecret(value);
  }
}

/// The descriptors of the redacting streams, which their cookies point to.
int g_stdout_fd = STDOUT_FILENO;
int g_stderr_fd = STDERR_FILENO;

/// fopencookie's write: `data` redacted, to the descriptor `cookie` points to.
ssize_t WriteRedacted(void* cookie, const char* data, size_t size) {
  const int fd = *static_cast<const int*>(cookie);
  const std::string text = chsync::Redact(std::string_view(data, size));
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    done += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(size);
}

/// Replaces `stream` (stdout or stderr) with a stream to `fd`, its descriptor, that redacts what
/// passes through it: the last line of defence for every message a command prints, whatever
/// prints it. Unbuffered (stderr: every fprintf, fmt::print or progress redraw leaves at once, as
/// before) or line-buffered with lines up to 64 KiB whole (stdout). The original stream is flushed
/// and kept open. Left as it is when the stream cannot be made.
void RedactStream(FILE*& stream, int* fd, bool line_buffered) {
  static std::array<char, 1 << 16> stdout_buffer;
  cookie_io_functions_t io{};
  io.write = WriteRedacted;
  std::fflush(stream);
  FILE* redacting = fopencookie(fd, "w", io);
  if (redacting == nullptr) return;
  if (line_buffered) {
    std::setvbuf(redacting, stdout_buffer.data(), _IOLBF, stdout_buffer.size());
  } else {
    std::setvbuf(redacting, nullptr, _IONBF, 0);
  }
  stream = redacting;
}

/// Commands whose standard output is data (query results, events, DDL explained): printed as it
/// is, since rows must not be altered and are never redacted (their messages go to stderr).
bool PrintsData(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) {
    const std::string& name = sub->get_name();
    if (name == "query" || name == "tail" || name == "decode" || name == "explain-ddl") return true;
  }
  return false;
}

int Main(int argc, char** argv) {
  RegisterGivenSecrets(argc, argv);
  RedactStream(stderr, &g_stderr_fd, /*line_buffered=*/false);
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
    // Help and version as they are (their "USER:PASSWORD@HOST" hints included); errors, which
    // may quote an argument, through the redacting stderr.
    std::ostringstream out, err;
    int code = app.exit(e, out, err);
    std::fputs(out.str().c_str(), stdout);
    std::fputs(err.str().c_str(), stderr);
    return code == 0 ? chsync::cli::kExitOk : chsync::cli::kExitUsage;
  }
  if (!run) return chsync::cli::kExitUsage;
  if (!PrintsData(app)) RedactStream(stdout, &g_stdout_fd, /*line_buffered=*/true);
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
