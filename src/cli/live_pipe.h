#pragma once

// How `chsync query --dest file:PATH` finds a `chsync run --http` that holds that store: the
// running pipe writes PATH.chsync-http (its URL and pid, mode 0600) and removes it when it stops
// (cli/observe.h).

#include <optional>
#include <string>

namespace chsync::cli {

/// The discovery file of an embedded store: PATH + ".chsync-http".
std::string DiscoveryFilePath(const std::string& store_path);

/// The URL of a live pipe serving `store_path` (from its discovery file, whose pid still runs);
/// nullopt when there is none.
std::optional<std::string> FindLivePipe(const std::string& store_path);

}  // namespace chsync::cli
