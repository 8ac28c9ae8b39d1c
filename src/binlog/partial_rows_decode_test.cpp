// Decoder-level tests of MariaDB PARTIAL_ROW_DATA events: real binlogs whose rows events are
// rewritten as groups of fragments, read back through FileReader.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "binlog/compression.h"
#include "binlog/decoder.h"
#include "binlog/event_printer.h"
#include "binlog/file_reader.h"
#include "binlog/partial_rows.h"
#include "binlog/raw_events_test_util.h"

namespace chsync::binlog {
namespace {

const std::string kFixtures = CHSYNC_SOURCE_DIR "/../shared/fixtures/binlog/";
const std::string kMariaCrc = kFixtures + "blackbeam/rust_mysql_common/test-data/binlogs/mariadb-bin.000001";
const std::string kMariaNone = kFixtures + "MariaDB/server/mysql-test/std_data/mdev6020-mysql-bin.000001";

using test_util::PutLE32;
using test_util::RawEvents;
using test_util::Split;

bool IsRows(std::string_view event) {
  auto t = static_cast<uint8_t>(event[4]);
  return (t >= 23 && t <= 25) || (t >= 166 && t <= 168);
}

std::string Print(const Event& e) {
  std::string out;
  AppendEvent(e, PrintFormat::kText, out);
  return out;
}

// The printed event from its type on (file:position and the header's size/log_pos differ).
std::string Content(const Event& e) {
  std::string s = Print(e);
  size_t crc = s.find(" crc_ok");
  size_t flags = s.find(" flags=");
  std::string type = s.substr(s.find(' ') + 1);
  type = type.substr(0, type.find(' '));
  std::string rest = s.substr(flags);
  rest = rest.substr(rest.find(' ', 1));
  if (crc != std::string::npos && rest.compare(0, 7, " crc_ok") == 0) rest = rest.substr(7);
  if (rest.compare(0, 12, " reassembled") == 0) rest = rest.substr(12);
  return type + rest;
}

struct Fragmented {
  std::string file;            // the whole binlog, magic included
  std::vector<size_t> groups;  // fragments per rewritten rows event
  std::vector<uint64_t> first_positions;
};

// Rewrites every rows event of `raw` as PARTIAL_ROW_DATA events carrying `chunk` bytes each,
// as MariaDB 12.3 writes them: the original event with its checksum (when the binlog has
// one) split in order, FL_ORIG_EVENT_SIZE and the size on fragment 1, each fragment a whole
// event with the original's header fields, type 172 and its own CRC32. `drop_last_of` drops
// the last fragment of that rows event (counted from 0).
Fragmented Fragment(const RawEvents& raw, bool crc, size_t chunk, int drop_last_of = -1) {
  Fragmented out;
  out.file =
      "\xfe"
      "bin";
  int rows_index = 0;
  for (const std::string& event : raw.events) {
    if (!IsRows(event)) {
      out.file += event;
      continue;
    }
    size_t total = (event.size() + chunk - 1) / chunk;
    out.groups.push_back(total);
    out.first_positions.push_back(out.file.size());
    for (size_t k = 0; k < total; ++k) {
      if (rows_index == drop_last_of && k + 1 == total) break;
      PartialRowsFragment f;
      f.total = static_cast<uint32_t>(total);
      f.sequence = static_cast<uint32_t>(k + 1);
      if (k == 0) f.original_size = event.size();
      f.chunk = std::string_view(event).substr(k * chunk, chunk);
      std::string ev = event.substr(0, 19);
      ev[4] = static_cast<char>(172);
      AppendPartialRowsFragment(f, ev);
      if (crc) ev.resize(ev.size() + 4);
      PutLE32(ev, 9, static_cast<uint32_t>(ev.size()));
      PutLE32(ev, 13, static_cast<uint32_t>(out.file.size() + ev.size()));
      if (crc) PutLE32(ev, ev.size() - 4, Crc32(std::string_view(ev).substr(0, ev.size() - 4)));
      out.file += ev;
    }
    ++rows_index;
  }
  return out;
}

// Reads a binlog through FileReader, and returns Content() of every rows event, whether top
// level or reassembled, in order; checks the PARTIAL_ROW_DATA events on the way.
std::vector<std::string> RowsContents(const std::string& file, const Fragmented* fragmented = nullptr) {
  std::vector<std::string> out;
  auto reader = FileReader::FromBytes(file, "bin.000001");
  EXPECT_TRUE(reader.ok());
  if (!reader.ok()) return out;
  size_t group = 0;
  uint32_t expect_sequence = 1;
  while (true) {
    auto next = (*reader)->Next();
    EXPECT_TRUE(next.ok()) << next.error().message();
    if (!next.ok() || !*next) break;
    const Event& e = **next;
    if (std::holds_alternative<RowsEvent>(e.body)) out.push_back(Content(e));
    const auto* p = std::get_if<PartialRowDataEvent>(&e.body);
    if (!p) continue;
    EXPECT_EQ(EventTypeName(e.header.type), "PARTIAL_ROW_DATA");
    EXPECT_TRUE(e.checksum_verified || (*reader)->decoder().checksum() == ChecksumAlgorithm::kNone);
    EXPECT_EQ(p->sequence, expect_sequence);
    if (fragmented) {
      EXPECT_EQ(p->total, fragmented->groups[group]);
    }
    EXPECT_EQ(p->original_size.has_value(), p->sequence == 1);
    if (p->sequence < p->total) {
      EXPECT_TRUE(p->events.empty());
      ++expect_sequence;
      continue;
    }
    EXPECT_EQ(p->events.size(), 1u);
    if (p->events.empty()) continue;
    const Event& inner = p->events[0];
    EXPECT_TRUE(std::holds_alternative<RowsEvent>(inner.body));
    if (fragmented) {
      // The reassembled event sits at its group's first fragment.
      EXPECT_EQ(inner.position, fragmented->first_positions[group]);
      // Row versions are position + row index: they stay inside the group's bytes.
      const auto& rows = std::get<RowsEvent>(inner.body);
      EXPECT_LT(inner.position + rows.rows.size(), e.end_position());
    }
    EXPECT_NE(
        Print(e).find("fragment=" + std::to_string(p->sequence) + " fragments=" + std::to_string(p->total)),
        std::string::npos)
        << Print(e);
    EXPECT_NE(Print(e).find(" reassembled "), std::string::npos) << Print(e);
    out.push_back(Content(inner));
    expect_sequence = 1;
    ++group;
  }
  return out;
}

std::string ReadFile(const std::string& path) {
  RawEvents raw = Split(path);
  std::string file =
      "\xfe"
      "bin";
  for (const std::string& e : raw.events) file += e;
  return file;
}

TEST(PartialRowsDecodeTest, FragmentedMariaDbBinlogWithCrc32DecodesToTheSameRows) {
  RawEvents raw = Split(kMariaCrc);
  std::vector<std::string> expected = RowsContents(ReadFile(kMariaCrc));
  ASSERT_EQ(expected.size(), 2u);
  for (size_t chunk : {size_t{1}, size_t{7}, size_t{64}, size_t{100000}}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    Fragmented f = Fragment(raw, /*crc=*/true, chunk);
    EXPECT_EQ(RowsContents(f.file, &f), expected);
  }
}

TEST(PartialRowsDecodeTest, FragmentedMariaDbBinlogWithoutChecksumsDecodesToTheSameRows) {
  RawEvents raw = Split(kMariaNone);
  std::vector<std::string> expected = RowsContents(ReadFile(kMariaNone));
  ASSERT_EQ(expected.size(), 1116u + 774u + 598u);
  Fragmented f = Fragment(raw, /*crc=*/false, 50);
  EXPECT_EQ(RowsContents(f.file, &f), expected);
}

TEST(PartialRowsDecodeTest, PrintsFragmentsThenTheReassembledEvent) {
  Fragmented f = Fragment(Split(kMariaCrc), /*crc=*/true, 40);
  auto reader = FileReader::FromBytes(f.file, "bin.000001");
  ASSERT_TRUE(reader.ok());
  std::string text;
  while (true) {
    auto next = (*reader)->Next();
    ASSERT_TRUE(next.ok()) << next.error().message();
    if (!*next) break;
    AppendEvent(**next, PrintFormat::kText, text);
  }
  std::string first = "bin.000001:" + std::to_string(f.first_positions[0]) + " PARTIAL_ROW_DATA ";
  size_t at = text.find(first);
  ASSERT_NE(at, std::string::npos) << text;
  std::string line = text.substr(at, text.find('\n', at) - at);
  EXPECT_NE(line.find(" crc_ok fragment=1 fragments=" + std::to_string(f.groups[0]) + " original_size="),
            std::string::npos)
      << line;
  // After the last fragment's line, the rows event at the first fragment's position.
  std::string inner = "\nbin.000001:" + std::to_string(f.first_positions[0]) + " WRITE_ROWS_V1 ";
  size_t inner_at = text.find(inner);
  ASSERT_NE(inner_at, std::string::npos) << text;
  std::string before = text.substr(0, inner_at);
  std::string last_line = before.substr(before.rfind('\n') + 1);
  EXPECT_NE(last_line.find(" fragment=" + std::to_string(f.groups[0]) +
                           " fragments=" + std::to_string(f.groups[0])),
            std::string::npos)
      << last_line;
  EXPECT_NE(text.find(" reassembled ", inner_at), std::string::npos);
}

TEST(PartialRowsDecodeTest, AMissingFragmentIsReportedAtTheNextEvent) {
  RawEvents raw = Split(kMariaCrc);
  Fragmented f = Fragment(raw, /*crc=*/true, 30, /*drop_last_of=*/0);
  auto reader = FileReader::FromBytes(f.file, "bin.000001");
  ASSERT_TRUE(reader.ok());
  std::vector<std::string> errors;
  size_t rows = 0;
  while (true) {
    auto next = (*reader)->Next();
    if (!next.ok()) {
      errors.push_back(next.error().message());
      continue;
    }
    if (!*next) break;
    if (const auto* p = std::get_if<PartialRowDataEvent>(&(*next)->body)) rows += p->events.size();
  }
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("interrupts the fragmented rows event that began at bin.000001:" +
                           std::to_string(f.first_positions[0])),
            std::string::npos)
      << errors[0];
  EXPECT_NE(errors[0].find("fragment " + std::to_string(f.groups[0]) + "/" + std::to_string(f.groups[0]) +
                           " was expected"),
            std::string::npos)
      << errors[0];
  // The second rows event still decodes.
  EXPECT_EQ(rows, 1u);
}

TEST(PartialRowsDecodeTest, ReadingThatStartsInsideAGroupFailsClearly) {
  RawEvents raw = Split(kMariaCrc);
  Fragmented f = Fragment(raw, /*crc=*/true, 30);
  auto reader = FileReader::FromBytes(f.file, "bin.000001");
  ASSERT_TRUE(reader.ok());
  // Decode the FORMAT_DESCRIPTION, then jump to the group's second fragment.
  auto fde = (*reader)->Next();
  ASSERT_TRUE(fde.ok() && *fde);
  Decoder& d = (*reader)->decoder();
  uint64_t second = f.first_positions[0];
  second += static_cast<uint8_t>(f.file[second + 9]) | (static_cast<uint8_t>(f.file[second + 10]) << 8);
  std::string_view ev(f.file.data() + second, 19);
  uint32_t size = static_cast<uint8_t>(ev[9]) | (static_cast<uint8_t>(ev[10]) << 8);
  auto r = d.Decode(std::string_view(f.file).substr(second, size), second);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("fragment 2/"), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().message().find("expected fragment 1"), std::string::npos) << r.error().message();
}

}  // namespace
}  // namespace chsync::binlog
