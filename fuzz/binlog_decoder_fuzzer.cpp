// libFuzzer target for the binlog decoder: the input is a binlog file (the 4-byte magic is
// prepended when missing). Every event is decoded and printed in both formats; errors are fine,
// crashes and sanitizer reports are not. Corpus: ../shared/fixtures/binlog/. Old TIME/DATETIME/
// TIMESTAMP columns get a precision derived from the input's size, so that MariaDB 5.3 "hires"
// values are decoded too.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "binlog/event_printer.h"
#include "binlog/file_reader.h"
#include "binlog/hires_temporal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (bytes.compare(0, 4,
                    "\xfe"
                    "bin") != 0)
    bytes.insert(0,
                 "\xfe"
                 "bin");
  chsync::binlog::DecoderOptions options;
  options.max_uncompressed_size = 1 << 24;
  const auto hires = static_cast<uint8_t>(size % 7);  // 0: the classic formats
  options.complete_table_map = [hires](chsync::binlog::TableMap& map) {
    std::vector<uint8_t> fsp(map.columns.size(), hires);
    return chsync::binlog::SetHiresPrecision(map, fsp);
  };
  auto reader = chsync::binlog::FileReader::FromBytes(std::move(bytes), "fuzz.000001", options);
  if (!reader.ok()) return 0;
  std::string out;
  for (int i = 0; i < 100000; ++i) {
    auto event = (*reader)->Next();
    if (!event.ok() || !*event) break;
    out.clear();
    chsync::binlog::AppendEvent(**event, chsync::binlog::PrintFormat::kText, out);
    chsync::binlog::AppendEvent(**event, chsync::binlog::PrintFormat::kJson, out);
  }
  return 0;
}
