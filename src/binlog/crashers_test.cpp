#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "binlog/event_printer.h"
#include "binlog/file_reader.h"

namespace chsync::binlog {
namespace {

const std::filesystem::path kCrashers = CHSYNC_SOURCE_DIR "/tests/data/binlog/crashers";

// Replays inputs that once crashed or hung the decoder (fuzz/binlog_decoder_fuzzer.cpp feeds
// them the same way): each must now decode to events or to an error, and end.
TEST(CrashersTest, EveryRecordedInputEndsWithoutCrashing) {
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kCrashers)) {
    if (!entry.is_regular_file() || entry.path().extension() == ".md") continue;
    ++files;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    std::string bytes = s.str();
    if (bytes.compare(0, 4,
                      "\xfe"
                      "bin") != 0)
      bytes.insert(0,
                   "\xfe"
                   "bin");
    DecoderOptions options;
    options.max_uncompressed_size = 1 << 24;
    auto reader = FileReader::FromBytes(std::move(bytes), entry.path().filename().string(), options);
    if (!reader.ok()) continue;
    std::string out;
    size_t events = 0;
    while (events < 100000) {
      auto e = (*reader)->Next();
      if (!e.ok() || !*e) break;
      ++events;
      out.clear();
      AppendEvent(**e, PrintFormat::kText, out);
      AppendEvent(**e, PrintFormat::kJson, out);
    }
    EXPECT_LT(events, 100000u) << entry.path();
  }
  EXPECT_GT(files, 0u) << "no recorded inputs in " << kCrashers;
}

}  // namespace
}  // namespace chsync::binlog
