#pragma once

// What `chsync run --http ADDR` serves while the pipe runs: /metrics (the pipe's Prometheus
// metrics), /healthz, /readyz (streaming, and the lag under `http.ready_max_lag_s`), the status
// page at /, and ClickHouse's HTTP query interface, answered read-only by the pipe's own
// destination (for an embedded store, the engine the pipe writes with: nothing else can open
// the store while the pipe runs).
//
// For a `file:PATH` destination the observer also writes PATH.chsync-http (the address and the
// pid, 0600) so that `chsync query --dest file:PATH` finds the running pipe and asks it; the file
// is removed on a clean stop, and a stale one (its pid gone) is ignored.
//
// The server runs on its own threads and never stops the pipe: a failing request gets an error
// response, nothing more.

#include <memory>
#include <optional>
#include <string>

#include "cli/live_pipe.h"
#include "common/result.h"
#include "config/config.h"

namespace chsync::cli {

class Observer {
 public:
  /// Starts serving on `config.http_listen` (REQUIRES: not empty). Errors: the address is
  /// malformed (kConfig) or cannot be bound (kConfig, naming the address).
  static Result<std::unique_ptr<Observer>> Start(const pipe::PipeConfig& config);
  ~Observer();
  Observer(const Observer&) = delete;
  Observer& operator=(const Observer&) = delete;

  /// "http://127.0.0.1:9187/"
  std::string url() const;

  struct Impl;

 private:
  explicit Observer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace chsync::cli
