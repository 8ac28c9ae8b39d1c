#pragma once

#include <string>

namespace chsync::cli {

/// What `chsync --version` prints, one fact a line: chsync's version and the git commit it was
/// built from ("chsync 0.1.0 (commit 88a52ff1c2d3)", "-dirty" after it when the tree had
/// uncommitted changes, "unknown" when built outside git), then the versions of the client
/// libraries loaded now (MariaDB Connector/C, libcurl with its TLS library, zstd) and where chDB
/// would be loaded from for file: destinations (it is not loaded: that takes seconds).
std::string VersionText();

/// The git commit chsync was built from, as VersionText says it ("88a52ff1c2d3", "…-dirty",
/// "unknown").
std::string BuildCommit();

}  // namespace chsync::cli
