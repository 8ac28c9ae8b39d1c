#include "clickhouse/embedded_connection.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <system_error>

#include "clickhouse/server_error.h"
#include "common/log.h"

#ifndef CHSYNC_DEFAULT_CHDB_LIB
#define CHSYNC_DEFAULT_CHDB_LIB ""
#endif

namespace chsync::clickhouse {
namespace {

// The chDB C API (chdb.h, v3 connection API), declared from its public documentation: the npm
// package that ships libchdb.so has no header. Handles are opaque pointers.
struct ChdbResult;
using ChdbConnection = void*;  // chdb_connection: pointer to an opaque struct
using ConnectFn = ChdbConnection* (*)(int argc, char** argv);
using CloseFn = void (*)(ChdbConnection* conn);
using QueryNFn = ChdbResult* (*)(ChdbConnection conn, const char* query, size_t query_len, const char* format,
                                 size_t format_len);
using ResultBufferFn = char* (*)(ChdbResult* result);
using ResultLengthFn = size_t (*)(ChdbResult* result);
using ResultErrorFn = const char* (*)(ChdbResult* result);
using DestroyResultFn = void (*)(ChdbResult* result);
using InsertStream = void*;  // chdb_insert_stream
using StreamInsertNFn = InsertStream (*)(ChdbConnection conn, const char* query, size_t query_len,
                                         const char* format, size_t format_len);
using StreamAppendFn = int (*)(InsertStream stream, const void* data, size_t len);  // 0 = CHDBSuccess
using StreamDoneFn = ChdbResult* (*)(InsertStream stream);
using StreamErrorFn = const char* (*)(InsertStream stream);
using DestroyStreamFn = void (*)(InsertStream stream);

std::filesystem::path ExecutableDir() {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return exe.parent_path();
}

}  // namespace

/// The process-wide chDB engine: the loaded library, its one connection, and the store path.
class ChdbEngine {
 public:
  std::string path;
  std::mutex mutex;  // one statement at a time
  ChdbConnection* conn = nullptr;
  QueryNFn query_n = nullptr;
  ResultBufferFn result_buffer = nullptr;
  ResultLengthFn result_length = nullptr;
  ResultErrorFn result_error = nullptr;
  DestroyResultFn destroy_result = nullptr;
  // Streaming INSERT (chDB 4.x); null when the library predates it.
  StreamInsertNFn stream_insert_n = nullptr;
  StreamAppendFn stream_append = nullptr;
  StreamDoneFn stream_done = nullptr;
  StreamErrorFn stream_insert_error = nullptr;
  DestroyStreamFn destroy_insert_stream = nullptr;

  bool has_stream_insert() const {
    return stream_insert_n != nullptr && stream_append != nullptr && stream_done != nullptr &&
           stream_insert_error != nullptr && destroy_insert_stream != nullptr;
  }
};

namespace {

std::mutex g_engine_mutex;
std::shared_ptr<ChdbEngine> g_engine;  // lives until exit; never shut down (see the class comment)

template <typename Fn>
Status Resolve(void* lib, const char* name, Fn& out, const std::string& where) {
  out = reinterpret_cast<Fn>(dlsym(lib, name));
  if (out == nullptr) {
    return Error(ErrorKind::kConfig,
                 where + " does not export " + name +
                     "; chsync needs chDB 3.x or later (run scripts/setup to install it)");
  }
  return Status::Ok();
}

std::string InstallHint() {
  return "Install it with scripts/setup (it puts libchdb.so in .deps/chdb/), or point CHSYNC_CHDB_LIB at a "
         "libchdb.so";
}

Result<std::shared_ptr<ChdbEngine>> Boot(const std::string& store_path, const ConnectOptions& options) {
  CHSYNC_ASSIGN_OR_RETURN(std::string loaded, EmbeddedConnection::LocateLibrary(options));
  void* lib = dlopen(loaded.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    std::string looked;
    for (const std::string& c : EmbeddedConnection::LibraryCandidates(options)) looked += "\n  " + c;
    return Error(ErrorKind::kConfig, "a file: destination needs embedded ClickHouse (chDB), but " + loaded +
                                         " could not be loaded: " + (why != nullptr ? why : "dlopen failed") +
                                         "\nLooked at:" + looked + "\n" + InstallHint());
  }
  auto engine = std::make_shared<ChdbEngine>();
  ConnectFn connect = nullptr;
  CHSYNC_RETURN_IF_ERROR(Resolve(lib, "chdb_connect", connect, loaded));
  CHSYNC_RETURN_IF_ERROR(Resolve(lib, "chdb_query_n", engine->query_n, loaded));
  CHSYNC_RETURN_IF_ERROR(Resolve(lib, "chdb_result_buffer", engine->result_buffer, loaded));
  CHSYNC_RETURN_IF_ERROR(Resolve(lib, "chdb_result_length", engine->result_length, loaded));
  CHSYNC_RETURN_IF_ERROR(Resolve(lib, "chdb_result_error", engine->result_error, loaded));
  CHSYNC_RETURN_IF_ERROR(Resolve(lib, "chdb_destroy_query_result", engine->destroy_result, loaded));
  engine->stream_insert_n = reinterpret_cast<StreamInsertNFn>(dlsym(lib, "chdb_stream_insert_n"));
  engine->stream_append = reinterpret_cast<StreamAppendFn>(dlsym(lib, "chdb_stream_append"));
  engine->stream_done = reinterpret_cast<StreamDoneFn>(dlsym(lib, "chdb_stream_done"));
  engine->stream_insert_error = reinterpret_cast<StreamErrorFn>(dlsym(lib, "chdb_stream_insert_error"));
  engine->destroy_insert_stream = reinterpret_cast<DestroyStreamFn>(dlsym(lib, "chdb_destroy_insert_stream"));

  std::error_code ec;
  std::filesystem::create_directories(store_path, ec);
  if (ec) {
    return Error(ErrorKind::kIo,
                 "cannot create the embedded ClickHouse store " + store_path + ": " + ec.message());
  }
  std::string program = "chsync";
  std::string path_arg = "--path=" + store_path;
  char* argv[] = {program.data(), path_arg.data(), nullptr};
  engine->conn = connect(2, argv);
  if (engine->conn == nullptr || *engine->conn == nullptr) {
    return Error(ErrorKind::kConfig, "embedded ClickHouse (" + loaded + ") could not open the store " +
                                         store_path + "; is another process using it?");
  }
  engine->path = store_path;
  log::Debug("embedded ClickHouse booted from {} over {}", loaded, store_path);
  return engine;
}

}  // namespace

std::vector<std::string> EmbeddedConnection::LibraryCandidates(const ConnectOptions& options) {
  std::vector<std::string> out;
  if (!options.chdb_library.empty()) {
    out.push_back(options.chdb_library);
    return out;
  }
  if (const char* env = std::getenv("CHSYNC_CHDB_LIB"); env != nullptr && *env != '\0') {
    out.emplace_back(env);
    return out;
  }
  std::filesystem::path exe_dir = ExecutableDir();
  if (!exe_dir.empty()) out.push_back((exe_dir.parent_path() / "lib" / "libchdb.so").string());
  if (!std::string_view(CHSYNC_DEFAULT_CHDB_LIB).empty()) out.emplace_back(CHSYNC_DEFAULT_CHDB_LIB);
  out.emplace_back("libchdb.so");
  return out;
}

Result<std::string> EmbeddedConnection::LocateLibrary(const ConnectOptions& options) {
  std::vector<std::string> candidates = LibraryCandidates(options);
  std::string looked;
  for (const std::string& c : candidates) {
    if (c.find('/') == std::string::npos) return c;
    std::error_code ec;
    if (std::filesystem::is_regular_file(c, ec)) return c;
    looked += "\n  " + c + " (missing)";
  }
  return Error(ErrorKind::kConfig,
               "a file: destination needs embedded ClickHouse (chDB), but libchdb.so was not "
               "found; looked at:" +
                   looked + "\n" + InstallHint());
}

Result<std::unique_ptr<EmbeddedConnection>> EmbeddedConnection::Open(const std::string& store_path,
                                                                     const ConnectOptions& options) {
  std::error_code ec;
  std::filesystem::path absolute =
      std::filesystem::weakly_canonical(std::filesystem::absolute(store_path, ec), ec);
  std::string path = ec ? store_path : absolute.string();
  std::lock_guard lock(g_engine_mutex);
  if (g_engine != nullptr) {
    if (g_engine->path != path) {
      return Error(ErrorKind::kConfig, "embedded ClickHouse is already running over " + g_engine->path +
                                           " in this process; chDB allows one store per process, so " + path +
                                           " cannot be opened too");
    }
  } else {
    CHSYNC_ASSIGN_OR_RETURN(g_engine, Boot(path, options));
  }
  return std::unique_ptr<EmbeddedConnection>(new EmbeddedConnection(g_engine));
}

std::string EmbeddedConnection::Describe() const {
  return "embedded chDB at " + engine_->path;
}

Result<std::string> EmbeddedConnection::Run(std::string_view sql, std::string_view data,
                                            std::string_view format, const RequestOptions& request) {
  std::string text;
  std::string_view statement = sql;
  if (!request.settings.empty()) {
    // SETTINGS goes before a trailing FORMAT clause (the insert prefixes chsync builds end in one).
    std::string clause = " SETTINGS ";
    for (size_t i = 0; i < request.settings.size(); ++i) {
      if (i > 0) clause += ", ";
      clause += request.settings[i].first + " = " + request.settings[i].second;
    }
    size_t format_at = sql.rfind(" FORMAT ");
    if (format_at == std::string_view::npos) format_at = sql.size();
    text.assign(sql.substr(0, format_at));
    text += clause;
    text.append(sql.substr(format_at));
    statement = text;
  }
  if (!data.empty()) {
    size_t format_at = statement.rfind(" FORMAT ");
    if (engine_->has_stream_insert() && format_at != std::string_view::npos) {
      std::string insert(statement.substr(0, format_at));
      std::string_view input_format = statement.substr(format_at + 8);
      while (!input_format.empty() && (input_format.back() == ' ' || input_format.back() == '\n')) {
        input_format.remove_suffix(1);
      }
      return StreamInsert(insert, input_format, data);
    }
    // Without the streaming API the data follows the statement inline, which chDB 3.x accepts.
    std::string with_data(statement);
    with_data += '\n';
    with_data.append(data);
    text = std::move(with_data);
    statement = text;
  }
  if (format.empty()) format = "TabSeparated";
  std::lock_guard lock(engine_->mutex);
  ChdbResult* result =
      engine_->query_n(*engine_->conn, statement.data(), statement.size(), format.data(), format.size());
  if (result == nullptr) {
    return Error(ErrorKind::kInternal, Describe() + " returned no result for a statement");
  }
  const char* error = engine_->result_error(result);
  if (error != nullptr && *error != '\0') {
    Error e = ExceptionError(Describe(), 0, error);
    engine_->destroy_result(result);
    return e;
  }
  std::string out;
  const char* buffer = engine_->result_buffer(result);
  size_t length = engine_->result_length(result);
  if (buffer != nullptr && length > 0) out.assign(buffer, length);
  engine_->destroy_result(result);
  return out;
}

Result<std::string> EmbeddedConnection::StreamInsert(std::string_view insert, std::string_view input_format,
                                                     std::string_view data) {
  std::lock_guard lock(engine_->mutex);
  InsertStream stream = engine_->stream_insert_n(*engine_->conn, insert.data(), insert.size(),
                                                 input_format.data(), input_format.size());
  if (stream == nullptr) return Error(ErrorKind::kInternal, Describe() + " returned no insert stream");
  auto stream_error = [&]() -> Error {
    const char* message = engine_->stream_insert_error(stream);
    Error e = ExceptionError(Describe(), 0, message != nullptr ? message : "insert stream failed");
    engine_->destroy_insert_stream(stream);
    return e;
  };
  if (const char* message = engine_->stream_insert_error(stream); message != nullptr && *message != '\0') {
    return stream_error();
  }
  if (engine_->stream_append(stream, data.data(), data.size()) != 0) return stream_error();
  ChdbResult* result = engine_->stream_done(stream);
  Status status = Status::Ok();
  if (result == nullptr) {
    status = Error(ErrorKind::kInternal, Describe() + " returned no result for an insert");
  } else {
    const char* message = engine_->result_error(result);
    if (message != nullptr && *message != '\0') status = ExceptionError(Describe(), 0, message);
    engine_->destroy_result(result);
  }
  if (status.ok()) {
    if (const char* message = engine_->stream_insert_error(stream); message != nullptr && *message != '\0') {
      status = ExceptionError(Describe(), 0, message);
    }
  }
  engine_->destroy_insert_stream(stream);
  if (!status.ok()) return std::move(status).error();
  return std::string();
}

}  // namespace chsync::clickhouse
