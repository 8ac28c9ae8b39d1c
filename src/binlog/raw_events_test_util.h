#pragma once

// Test helpers shared by the PARTIAL_ROW_DATA tests: a binlog file's events as raw bytes.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "binlog/file_reader.h"

namespace chsync::binlog::test_util {

/// Every event of a binlog file, as its raw bytes, with its position.
struct RawEvents {
  std::vector<std::string> events;
  std::vector<uint64_t> positions;
};

inline RawEvents Split(const std::string& path) {
  RawEvents f;
  auto reader = FileReader::Open(path);
  EXPECT_TRUE(reader.ok()) << path;
  if (!reader.ok()) return f;
  while (true) {
    auto raw = (*reader)->NextRaw();
    EXPECT_TRUE(raw.ok()) << path;
    if (!raw.ok() || !*raw) break;
    f.events.emplace_back((*raw)->bytes);
    f.positions.push_back((*raw)->position);
  }
  return f;
}

/// Writes `v` little-endian over the four bytes of `s` at `at`.
inline void PutLE32(std::string& s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace chsync::binlog::test_util
