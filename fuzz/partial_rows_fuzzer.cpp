// libFuzzer target for the PARTIAL_ROW_DATA reassembler: the input is a sequence of records,
// each a control byte then a 2-byte little-endian length and that many bytes. Control bit 0
// set: the record is a fragment body, parsed and added; clear: another event (its type in the
// next 7 bits) arrives. Errors are fine; crashes, sanitizer reports, and a reassembled event
// that breaks the documented guarantees are not.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "binlog/partial_rows.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using chsync::binlog::ChecksumAlgorithm;
  using chsync::binlog::EventType;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  chsync::binlog::PartialRowsAssembler assembler(1 << 16);
  uint64_t position = 4;
  while (in.size() >= 3) {
    auto control = static_cast<uint8_t>(in[0]);
    size_t n = static_cast<uint8_t>(in[1]) | (static_cast<size_t>(static_cast<uint8_t>(in[2])) << 8);
    in.remove_prefix(3);
    n = n < in.size() ? n : in.size();
    std::string_view record = in.substr(0, n);
    in.remove_prefix(n);
    position += 19 + n;
    if ((control & 1) == 0) {
      (void)assembler.BeforeOtherEvent(static_cast<EventType>(control >> 1), "fuzz.000001", position);
      continue;
    }
    auto fragment = chsync::binlog::ParsePartialRowsFragment(chsync::ByteReader(record, position + 19));
    if (!fragment.ok()) continue;
    auto checksum = (control & 2) ? ChecksumAlgorithm::kCrc32 : ChecksumAlgorithm::kNone;
    auto done = assembler.Add(*fragment, "fuzz.000001", position, checksum);
    if (!done.ok() || !*done) continue;
    const auto& event = **done;
    // A reassembled event is at least a header, and its event_size says its length.
    if (event.event.size() < 19) std::abort();
    uint32_t declared = 0;
    for (int i = 3; i >= 0; --i) declared = (declared << 8) | static_cast<uint8_t>(event.event[9 + i]);
    if (declared != event.event.size()) std::abort();
    if (event.carried_bytes != event.event.size() + (event.had_checksum ? 4 : 0)) std::abort();
  }
  return 0;
}
