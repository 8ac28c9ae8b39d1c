#pragma once

#include <memory>
#include <string>
#include <vector>

#include "clickhouse/connection.h"

namespace chsync::clickhouse {

class ChdbEngine;

/// Embedded ClickHouse through chDB: libchdb.so is loaded with dlopen on first use (never linked,
/// so chsync starts without it) and boots one engine over a store directory.
///
/// chDB allows one store path per process: every EmbeddedConnection to the same path shares the
/// one engine (statements are serialized); opening a different path while the engine runs fails
/// with kConfig. The engine stays up until the process exits, because booting it is expensive and
/// chDB advises against repeated shutdown and boot.
///
/// Inserts go through chDB's streaming INSERT API (chdb_stream_insert_n/append/done) when the
/// library exports it: chDB 26.7 misreads RowBinary data of more than about 1 MB that follows an
/// INSERT inline in one chdb_query_n call. Older libraries get the inline form.
class EmbeddedConnection final : public Connection {
 public:
  /// Loads the library (search order in ConnectOptions::chdb_library) and boots the engine over
  /// `store_path`, creating the directory when missing.
  static Result<std::unique_ptr<EmbeddedConnection>> Open(const std::string& store_path,
                                                          const ConnectOptions& options);

  /// The places Open looks for libchdb.so, in order: options.chdb_library alone when set, else
  /// $CHSYNC_CHDB_LIB alone when set (an explicit choice that is missing is an error, not a reason
  /// to load another copy), else <dir of the executable>/../lib/libchdb.so, the build's
  /// .deps/chdb/libchdb.so, and "libchdb.so" for the loader's search path.
  static std::vector<std::string> LibraryCandidates(const ConnectOptions& options);

  /// The first candidate that exists, else "libchdb.so" for the loader path. Fails (kConfig) when
  /// options.chdb_library names a missing file; the message lists where it looked and says how to
  /// install chDB.
  static Result<std::string> LocateLibrary(const ConnectOptions& options);

  std::string Describe() const override;
  bool embedded() const override { return true; }

 protected:
  Result<std::string> Run(std::string_view sql, std::string_view data, std::string_view format,
                          const RequestOptions& request) override;

 private:
  explicit EmbeddedConnection(std::shared_ptr<ChdbEngine> engine) : engine_(std::move(engine)) {}
  /// Sends `data` through chDB's streaming INSERT API (`insert` without its FORMAT clause).
  Result<std::string> StreamInsert(std::string_view insert, std::string_view input_format,
                                   std::string_view data);
  std::shared_ptr<ChdbEngine> engine_;
};

}  // namespace chsync::clickhouse
