#pragma once

// How the pipe names what it reports: binlog coordinates and source tables.

#include <cstdint>
#include <string>
#include <string_view>

namespace chsync::pipe {

/// "binlog.000003:1234".
std::string Coordinate(std::string_view file, uint64_t position);
/// "db.t".
std::string TableKey(std::string_view database, std::string_view table);

}  // namespace chsync::pipe
