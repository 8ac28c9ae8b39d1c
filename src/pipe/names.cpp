#include "pipe/names.h"

namespace chsync::pipe {

std::string Coordinate(std::string_view file, uint64_t position) {
  return std::string(file) + ":" + std::to_string(position);
}

std::string TableKey(std::string_view database, std::string_view table) {
  std::string key;
  key.reserve(database.size() + 1 + table.size());
  key.append(database).append(1, '.').append(table);
  return key;
}

}  // namespace chsync::pipe
