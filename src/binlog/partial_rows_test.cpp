#include "binlog/partial_rows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "binlog/compression.h"
#include "binlog/decoder.h"
#include "binlog/event_printer.h"
#include "binlog/file_reader.h"
#include "binlog/raw_events_test_util.h"

namespace chsync::binlog {
namespace {

const std::string kFixtures = CHSYNC_SOURCE_DIR "/../shared/fixtures/binlog/";
// MariaDB 10.x, CRC32, WRITE_ROWS_V1.
const std::string kMariaCrc = kFixtures + "blackbeam/rust_mysql_common/test-data/binlogs/mariadb-bin.000001";
// MariaDB, checksum NONE, many WRITE/UPDATE/DELETE_ROWS_V1.
const std::string kMariaNone = kFixtures + "MariaDB/server/mysql-test/std_data/mdev6020-mysql-bin.000001";
// MariaDB 11.8 events with CRC32, one of them WRITE_ROWS_COMPRESSED_V1.
const std::string kMariaCompressed = kFixtures + "_generated/vlasky-zongji/binlog-mariadb118.events.bin";
// MySQL 8.0, CRC32, WRITE_ROWS_V2 and a TRANSACTION_PAYLOAD.
const std::string kMysql80 =
    kFixtures + "MariaDB/server/mysql-test/std_data/mdev35643_mysql_80_binlog.000001";

constexpr uint8_t kPartialRowDataType = 172;

using test_util::PutLE32;
using test_util::RawEvents;
using test_util::Split;

bool IsRows(const std::string& event) {
  auto t = static_cast<uint8_t>(event[4]);
  return (t >= 23 && t <= 25) || (t >= 30 && t <= 32) || (t >= 166 && t <= 171);
}

uint32_t GetLE32(std::string_view s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(s[at + i]);
  return v;
}

// The original event without its trailing CRC32, with event_size saying so.
std::string StripChecksum(std::string event) {
  event.resize(event.size() - 4);
  PutLE32(event, 9, static_cast<uint32_t>(event.size()));
  return event;
}

// Adds a CRC32 and counts it in event_size.
std::string AddChecksum(std::string event) {
  PutLE32(event, 9, static_cast<uint32_t>(event.size() + 4));
  uint32_t crc = Crc32(event);
  event.resize(event.size() + 4);
  PutLE32(event, event.size() - 4, crc);
  return event;
}

// Splits `data` into chunks of at most `chunk` bytes (at least one chunk) and returns the
// fragment bodies as the server writes them: FL_ORIG_EVENT_SIZE on fragment 1 only.
std::vector<std::string> MakeFragments(std::string_view data, size_t chunk) {
  size_t total = data.empty() ? 1 : (data.size() + chunk - 1) / chunk;
  std::vector<std::string> out;
  for (size_t i = 0; i < total; ++i) {
    PartialRowsFragment f;
    f.total = static_cast<uint32_t>(total);
    f.sequence = static_cast<uint32_t>(i + 1);
    if (i == 0) f.original_size = data.size();
    f.chunk = data.substr(std::min(data.size(), i * chunk), chunk);
    std::string body;
    AppendPartialRowsFragment(f, body);
    out.push_back(std::move(body));
  }
  return out;
}

Result<PartialRowsFragment> Parse(const std::string& body, uint64_t offset = 1000) {
  return ParsePartialRowsFragment(ByteReader(body, offset));
}

// Feeds every body; returns the reassembled event of the last one (and checks the others
// returned nothing).
Result<ReassembledRowsEvent> Feed(PartialRowsAssembler& a, const std::vector<std::string>& bodies,
                                  ChecksumAlgorithm checksum, uint64_t position = 100) {
  for (size_t i = 0; i < bodies.size(); ++i) {
    CHSYNC_ASSIGN_OR_RETURN(PartialRowsFragment f, Parse(bodies[i], position + 19));
    CHSYNC_ASSIGN_OR_RETURN(std::optional<ReassembledRowsEvent> done,
                            a.Add(f, "bin.000001", position, checksum));
    if (i + 1 < bodies.size()) {
      EXPECT_FALSE(done.has_value()) << "fragment " << i + 1;
      EXPECT_TRUE(a.in_progress());
      EXPECT_EQ(a.received(), i + 1);
    } else if (done) {
      return *done;
    }
    position += 19 + bodies[i].size() + 4;
  }
  return Error(ErrorKind::kInternal, "the last fragment did not complete the group");
}

std::string Print(const Event& e) {
  std::string out;
  AppendEvent(e, PrintFormat::kText, out);
  return out;
}

// What the decoder prints for an event, without the leading "file:position" that differs
// between a file event and one decoded on its own.
std::string PrintBody(const Event& e) {
  std::string s = Print(e);
  return s.substr(s.find(' '));
}

// The brief's main property, over every rows event of a real binlog: split into fragments of
// many sizes (one fragment, a few, one byte each), joined back, the event is byte for byte the
// original (without its checksum), and decodes to the same rows.
void CheckRoundTrips(const std::string& path, ChecksumAlgorithm checksum, size_t want_rows_events) {
  RawEvents raw = Split(path);
  ASSERT_FALSE(raw.events.empty());
  Decoder decoder;
  decoder.SetFile("bin.000001");
  size_t rows_events = 0, decoded_ok = 0;
  PartialRowsAssembler assembler;
  for (size_t i = 0; i < raw.events.size(); ++i) {
    const std::string& original = raw.events[i];
    auto decoded = decoder.Decode(original, raw.positions[i]);
    if (!IsRows(original)) {
      ASSERT_TRUE(decoded.ok()) << decoded.error().message();
      continue;
    }
    ++rows_events;
    // A rows event the decoder cannot read (the zongji file has one) must fail the same way
    // when reassembled.
    const std::string expected_rows =
        decoded.ok() ? PrintBody(*decoded) : "ERROR " + decoded.error().message();
    const bool crc = decoder.checksum() == ChecksumAlgorithm::kCrc32;
    ASSERT_EQ(crc, checksum == ChecksumAlgorithm::kCrc32);
    const std::string bare = crc ? StripChecksum(original) : original;

    // The forms the chunks may take: the whole event as written (with its CRC32 when the
    // binlog has checksums), the event without a CRC32, and without one but counted in
    // event_size.
    std::vector<std::pair<std::string, bool>> forms = {{original, crc}};
    if (crc) {
      forms.emplace_back(bare, false);
      std::string counted = bare;
      PutLE32(counted, 9, static_cast<uint32_t>(counted.size() + 4));
      forms.emplace_back(counted, false);
    }
    for (const auto& [data, has_crc] : forms) {
      for (size_t chunk :
           {data.size(), data.size() - 1, data.size() / 2 + 1, size_t{19}, size_t{7}, size_t{1}}) {
        SCOPED_TRACE("event " + std::to_string(i) + " form size " + std::to_string(data.size()) + " chunk " +
                     std::to_string(chunk));
        std::vector<std::string> bodies = MakeFragments(data, chunk);
        auto joined = Feed(assembler, bodies, checksum, 1000);
        ASSERT_TRUE(joined.ok()) << joined.error().message();
        EXPECT_EQ(joined->event, bare);
        EXPECT_EQ(joined->had_checksum, has_crc);
        EXPECT_EQ(joined->fragments, bodies.size());
        EXPECT_EQ(joined->first_position, 1000u);
        EXPECT_EQ(joined->first_file, "bin.000001");
        EXPECT_EQ(joined->carried_bytes, data.size());
        EXPECT_EQ(static_cast<uint8_t>(joined->type), static_cast<uint8_t>(original[4]));
        EXPECT_EQ(GetLE32(joined->event, 9), joined->event.size());
        EXPECT_FALSE(assembler.in_progress());

        // Decode the joined event with the same decoder state (its TABLE_MAP is cached) and
        // compare with the original's rows. The public Decode() wants the binlog's checksum.
        std::string again(joined->event);
        if (crc) again = AddChecksum(again);
        EXPECT_EQ(again, original);
        auto redecoded = decoder.Decode(again, raw.positions[i]);
        if (!redecoded.ok()) {
          EXPECT_EQ("ERROR " + redecoded.error().message(), expected_rows);
          continue;
        }
        EXPECT_EQ(PrintBody(*redecoded), expected_rows);
        EXPECT_FALSE(std::get<RowsEvent>(redecoded->body).rows.empty());
        ++decoded_ok;
      }
    }
  }
  EXPECT_EQ(rows_events, want_rows_events);
  EXPECT_GT(decoded_ok, 0u);
}

TEST(PartialRowsTest, MariaDbWriteRowsV1WithCrc32RoundTrips) {
  CheckRoundTrips(kMariaCrc, ChecksumAlgorithm::kCrc32, 2);
}

TEST(PartialRowsTest, MariaDbCompressedRowsEventRoundTrips) {
  CheckRoundTrips(kMariaCompressed, ChecksumAlgorithm::kCrc32, 8);
}

TEST(PartialRowsTest, MySqlWriteRowsV2RoundTrips) {
  CheckRoundTrips(kMysql80, ChecksumAlgorithm::kCrc32, 5);
}

TEST(PartialRowsTest, EveryRowsEventOfALargeMariaDbBinlogWithoutChecksumsRoundTrips) {
  RawEvents raw = Split(kMariaNone);
  Decoder decoder;
  decoder.SetFile("mdev6020-mysql-bin.000001");
  PartialRowsAssembler assembler;
  size_t rows_events = 0, rows = 0, multi = 0;
  for (size_t i = 0; i < raw.events.size(); ++i) {
    auto decoded = decoder.Decode(raw.events[i], raw.positions[i]);
    ASSERT_TRUE(decoded.ok()) << decoded.error().message();
    if (!IsRows(raw.events[i])) continue;
    ++rows_events;
    const std::string expected = Print(*decoded);  // before the next Decode() invalidates it
    // A different split for each event: 1..37 bytes a chunk.
    std::vector<std::string> bodies = MakeFragments(raw.events[i], 1 + i % 37);
    if (bodies.size() > 1) ++multi;
    auto joined = Feed(assembler, bodies, ChecksumAlgorithm::kNone, raw.positions[i]);
    ASSERT_TRUE(joined.ok()) << joined.error().message();
    ASSERT_EQ(joined->event, raw.events[i]);
    ASSERT_FALSE(joined->had_checksum);
    auto redecoded = decoder.Decode(joined->event, raw.positions[i]);
    ASSERT_TRUE(redecoded.ok()) << redecoded.error().message();
    ASSERT_EQ(Print(*redecoded), expected);
    rows += std::get<RowsEvent>(redecoded->body).rows.size();
  }
  EXPECT_EQ(rows_events, 1116u + 774u + 598u);
  EXPECT_GT(multi, rows_events / 2);
  EXPECT_GT(rows, rows_events);
}

// The fragments as complete events in a binlog: each has its own header (type 172) and CRC32,
// which FileReader frames like any event; their bodies parse and join back to the original.
TEST(PartialRowsTest, FragmentEventsInABinlogFileJoinBack) {
  RawEvents raw = Split(kMariaCrc);
  std::string file =
      "\xfe"
      "bin";
  std::vector<std::string> originals;
  for (const std::string& event : raw.events) {
    if (!IsRows(event)) {
      file += event;
      continue;
    }
    originals.push_back(event);
    for (const std::string& body : MakeFragments(event, 10)) {
      std::string ev = event.substr(0, 19);
      ev[4] = static_cast<char>(kPartialRowDataType);
      ev += body;
      ev = AddChecksum(ev);
      file += ev;
    }
  }
  ASSERT_EQ(originals.size(), 2u);
  auto reader = FileReader::FromBytes(file, "bin.000001");
  ASSERT_TRUE(reader.ok());
  PartialRowsAssembler assembler;
  std::vector<std::string> joined;
  while (true) {
    auto next = (*reader)->NextRaw();
    ASSERT_TRUE(next.ok()) << next.error().message();
    if (!*next) break;
    std::string_view bytes = (*next)->bytes;
    auto type = static_cast<EventType>(static_cast<uint8_t>(bytes[4]));
    if (static_cast<uint8_t>(type) != kPartialRowDataType) {
      ASSERT_TRUE(assembler.BeforeOtherEvent(type, "bin.000001", (*next)->position).ok());
      continue;
    }
    ASSERT_EQ(GetLE32(bytes, bytes.size() - 4), Crc32(bytes.substr(0, bytes.size() - 4)));
    auto f =
        ParsePartialRowsFragment(ByteReader(bytes.substr(19, bytes.size() - 23), (*next)->position + 19));
    ASSERT_TRUE(f.ok()) << f.error().message();
    auto done = assembler.Add(*f, "bin.000001", (*next)->position, ChecksumAlgorithm::kCrc32);
    ASSERT_TRUE(done.ok()) << done.error().message();
    if (*done) joined.emplace_back(AddChecksum(std::string((*done)->event)));
  }
  EXPECT_EQ(joined, originals);
}

TEST(PartialRowsTest, ParsesTheDocumentedLayout) {
  // total 3, sequence 1, FL_ORIG_EVENT_SIZE, original size 0x0102030405, chunk "abc".
  std::string body(
      "\x03\x00\x00\x00\x01\x00\x00\x00\x01\x05\x04\x03\x02\x01\x00\x00\x00"
      "abc",
      20);
  auto f = Parse(body);
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_EQ(f->total, 3u);
  EXPECT_EQ(f->sequence, 1u);
  EXPECT_EQ(f->flags, kPartialRowsFlagOrigEventSize);
  EXPECT_EQ(f->original_size, uint64_t{0x0102030405});
  EXPECT_EQ(f->chunk, "abc");
  std::string written;
  AppendPartialRowsFragment(*f, written);
  EXPECT_EQ(written, body);

  // Without the flag there is no size; the chunk starts right after the flags.
  std::string second = std::string("\x03\x00\x00\x00\x02\x00\x00\x00\x00xyz", 12);
  auto g = Parse(second);
  ASSERT_TRUE(g.ok()) << g.error().message();
  EXPECT_EQ(g->sequence, 2u);
  EXPECT_FALSE(g->original_size.has_value());
  EXPECT_EQ(g->chunk, "xyz");
}

TEST(PartialRowsTest, ZeroTotalIsRejectedWithItsOffset) {
  auto f = Parse(std::string("\x00\x00\x00\x00\x01\x00\x00\x00\x00", 9), 500);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().kind(), ErrorKind::kCorrupt);
  EXPECT_NE(
      f.error().message().find("fragment numbers 0 and 1 (the sequence number and the total count from 1)"),
      std::string::npos)
      << f.error().message();
  EXPECT_NE(f.error().message().find("offset 500"), std::string::npos) << f.error().message();
}

TEST(PartialRowsTest, SequenceZeroIsRejected) {
  std::string body("\x03\x00\x00\x00\x00\x00\x00\x00\x00", 9);
  auto f = Parse(body, 500);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.error().message().find(
                "fragment numbers 3 and 0 (the sequence number and the total count from 1) at offset 500"),
            std::string::npos)
      << f.error().message();
}

TEST(PartialRowsTest, EitherFieldOrderReadsTheSameFragment) {
  // The protocol page writes (total, sequence); the server's class comment (sequence, total).
  for (auto [a, b] : {std::pair<uint8_t, uint8_t>{3, 2}, {2, 3}, {5, 1}, {1, 5}, {4, 4}}) {
    std::string body("\x00\x00\x00\x00\x00\x00\x00\x00\x00xy", 11);
    body[0] = static_cast<char>(a);
    body[4] = static_cast<char>(b);
    auto f = Parse(body, 500);
    ASSERT_TRUE(f.ok()) << f.error().message();
    EXPECT_EQ(f->total, std::max(a, b));
    EXPECT_EQ(f->sequence, std::min(a, b));
    EXPECT_EQ(f->chunk, "xy");
  }
}

TEST(PartialRowsTest, GroupWrittenSequenceFirstIsJoined) {
  // A real rows event, fragmented as the server would write it if its fields are
  // (sequence, total): joined back byte for byte.
  RawEvents raw = Split(kMariaNone);
  auto rows = std::find_if(raw.events.begin(), raw.events.end(), IsRows);
  ASSERT_NE(rows, raw.events.end());
  std::vector<std::string> bodies = MakeFragments(*rows, 10);
  ASSERT_GT(bodies.size(), 2u);
  for (std::string& body : bodies) {
    std::string total = body.substr(0, 4);
    body.replace(0, 4, body.substr(4, 4));
    body.replace(4, 4, total);
  }
  PartialRowsAssembler assembler;
  auto joined = Feed(assembler, bodies, ChecksumAlgorithm::kNone);
  ASSERT_TRUE(joined.ok()) << joined.error().message();
  EXPECT_EQ(joined->event, *rows);
  EXPECT_EQ(joined->fragments, bodies.size());
}

TEST(PartialRowsTest, TruncatedFragmentHeaderIsRejected) {
  std::string full("\x02\x00\x00\x00\x01\x00\x00\x00\x01\x10\x00\x00\x00\x00\x00\x00\x00", 17);
  for (size_t n = 0; n < full.size(); ++n) {
    auto f = Parse(full.substr(0, n), 700);
    ASSERT_FALSE(f.ok()) << n;
    EXPECT_EQ(f.error().kind(), ErrorKind::kCorrupt);
    EXPECT_NE(f.error().message().find("truncated"), std::string::npos) << f.error().message();
    EXPECT_NE(f.error().message().find("PARTIAL_ROW_DATA"), std::string::npos) << f.error().message();
  }
  EXPECT_TRUE(Parse(full).ok());
}

// A rows event for the error tests: the second event of kMariaCrc's rows events, CRC included.
std::string SomeRowsEvent() {
  for (const std::string& e : Split(kMariaCrc).events)
    if (IsRows(e)) return e;
  ADD_FAILURE() << "no rows event";
  return std::string(40, 'x');
}

Result<std::optional<ReassembledRowsEvent>> AddBody(PartialRowsAssembler& a, const std::string& body,
                                                    uint64_t position) {
  CHSYNC_ASSIGN_OR_RETURN(PartialRowsFragment f, Parse(body, position + 19));
  return a.Add(f, "bin.000007", position, ChecksumAlgorithm::kCrc32);
}

TEST(PartialRowsTest, OutOfOrderFragmentIsAnErrorNamingBoth) {
  std::vector<std::string> bodies = MakeFragments(SomeRowsEvent(), 16);
  ASSERT_GE(bodies.size(), 3u);
  PartialRowsAssembler a;
  ASSERT_TRUE(AddBody(a, bodies[0], 100).ok());
  auto r = AddBody(a, bodies[2], 200);
  ASSERT_FALSE(r.ok());
  const std::string& m = r.error().message();
  EXPECT_EQ(r.error().kind(), ErrorKind::kCorrupt);
  EXPECT_NE(m.find("fragment 3/" + std::to_string(bodies.size()) + " at bin.000007:200 out of order"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("expected fragment 2/"), std::string::npos) << m;
  EXPECT_NE(m.find("began at bin.000007:100"), std::string::npos) << m;
  EXPECT_FALSE(a.in_progress());

  // A repeated fragment is out of order too.
  ASSERT_TRUE(AddBody(a, bodies[0], 100).ok());
  ASSERT_TRUE(AddBody(a, bodies[1], 150).ok());
  EXPECT_FALSE(AddBody(a, bodies[1], 200).ok());
}

TEST(PartialRowsTest, GroupMustStartWithFragmentOne) {
  std::vector<std::string> bodies = MakeFragments(SomeRowsEvent(), 16);
  PartialRowsAssembler a;
  auto r = AddBody(a, bodies[1], 300);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("fragment 2/"), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().message().find("expected fragment 1"), std::string::npos) << r.error().message();
}

TEST(PartialRowsTest, MismatchedTotalIsAnError) {
  std::string event = SomeRowsEvent();
  std::vector<std::string> bodies = MakeFragments(event, 16);
  PartialRowsAssembler a;
  ASSERT_TRUE(AddBody(a, bodies[0], 100).ok());
  PartialRowsFragment f;
  f.total = static_cast<uint32_t>(bodies.size() + 1);
  f.sequence = 2;
  f.chunk = std::string_view(event).substr(16, 16);
  auto r = a.Add(f, "bin.000007", 200, ChecksumAlgorithm::kCrc32);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(
      r.error().message().find("belongs to a group of " + std::to_string(bodies.size() + 1) + " fragments"),
      std::string::npos)
      << r.error().message();
  EXPECT_NE(r.error().message().find("has " + std::to_string(bodies.size())), std::string::npos)
      << r.error().message();
}

TEST(PartialRowsTest, AnotherEventInsideAGroupIsAnErrorNamingTheGroup) {
  std::vector<std::string> bodies = MakeFragments(SomeRowsEvent(), 16);
  ASSERT_GE(bodies.size(), 3u);
  PartialRowsAssembler a;
  ASSERT_TRUE(a.BeforeOtherEvent(EventType::kTableMap, "bin.000007", 50).ok());
  ASSERT_TRUE(AddBody(a, bodies[0], 100).ok());
  ASSERT_TRUE(AddBody(a, bodies[1], 150).ok());
  // Heartbeats carry no binlog content and may come at any time on a replication stream.
  EXPECT_TRUE(a.BeforeOtherEvent(EventType::kHeartbeat, "bin.000007", 0).ok());
  EXPECT_TRUE(a.in_progress());
  Status s = a.BeforeOtherEvent(EventType::kXid, "bin.000007", 200);
  ASSERT_FALSE(s.ok());
  const std::string& m = s.error().message();
  EXPECT_EQ(s.error().kind(), ErrorKind::kCorrupt);
  EXPECT_NE(m.find("XID event at bin.000007:200 interrupts"), std::string::npos) << m;
  EXPECT_NE(m.find("began at bin.000007:100 (2 of " + std::to_string(bodies.size()) + " fragments, 32 bytes"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("fragment 3/" + std::to_string(bodies.size()) + " was expected"), std::string::npos) << m;
  EXPECT_FALSE(a.in_progress());
  // The group is dropped: the next one starts clean.
  auto joined = Feed(a, bodies, ChecksumAlgorithm::kCrc32);
  EXPECT_TRUE(joined.ok()) << joined.error().message();
}

TEST(PartialRowsTest, DeclaredSizeLargerThanTheChunksIsAnError) {
  std::string event = SomeRowsEvent();
  std::vector<std::string> bodies = MakeFragments(event, 20);
  std::string body;
  PartialRowsFragment f = *Parse(bodies[0]);
  f.original_size = event.size() + 1;
  AppendPartialRowsFragment(f, body);
  bodies[0] = body;
  PartialRowsAssembler a;
  auto r = Feed(a, bodies, ChecksumAlgorithm::kCrc32);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("carry " + std::to_string(event.size()) +
                                     " bytes, but fragment 1 declared " + std::to_string(event.size() + 1)),
            std::string::npos)
      << r.error().message();
  EXPECT_FALSE(a.in_progress());
}

TEST(PartialRowsTest, ChunksBeyondTheDeclaredSizeAreAnError) {
  std::string event = SomeRowsEvent();
  std::vector<std::string> bodies = MakeFragments(event, 20);
  ASSERT_GE(bodies.size(), 3u);
  std::string body;
  PartialRowsFragment f = *Parse(bodies[0]);
  f.original_size = 30;
  AppendPartialRowsFragment(f, body);
  bodies[0] = body;
  PartialRowsAssembler a;
  ASSERT_TRUE(AddBody(a, bodies[0], 100).ok());
  auto r = AddBody(a, bodies[1], 150);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kCorrupt);
  EXPECT_NE(r.error().message().find("fragment 2/" + std::to_string(bodies.size()) + " at bin.000007:150"),
            std::string::npos)
      << r.error().message();
  EXPECT_NE(r.error().message().find("to 40 bytes, past the original size of 30 bytes"), std::string::npos)
      << r.error().message();
}

TEST(PartialRowsTest, HugeDeclaredSizeIsRefusedBeforeStoringAnything) {
  for (uint64_t size : {UINT64_MAX, uint64_t{1} << 40, (uint64_t{1} << 31) + 1}) {
    PartialRowsFragment f;
    f.total = 2;
    f.sequence = 1;
    f.original_size = size;
    f.chunk = "abcdef";
    PartialRowsAssembler a;
    auto r = a.Add(f, "bin.000007", 100, ChecksumAlgorithm::kCrc32);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind(), ErrorKind::kUnsupported);
    EXPECT_NE(r.error().message().find("declares a rows event of " + std::to_string(size) + " bytes"),
              std::string::npos)
        << r.error().message();
    EXPECT_EQ(a.bytes(), 0u);
    EXPECT_FALSE(a.in_progress());
  }
}

TEST(PartialRowsTest, ChunksWithoutADeclaredSizeStopAtTheLimit) {
  PartialRowsAssembler a(100);
  PartialRowsFragment f;
  f.total = 1000;
  std::string chunk(30, 'x');
  f.chunk = chunk;
  for (uint32_t i = 1; i <= 3; ++i) {
    f.sequence = i;
    ASSERT_TRUE(a.Add(f, "bin.000007", 100 * i, ChecksumAlgorithm::kNone).ok());
  }
  f.sequence = 4;
  auto r = a.Add(f, "bin.000007", 400, ChecksumAlgorithm::kNone);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(r.error().message().find("to 120 bytes, past the limit of 100 bytes"), std::string::npos)
      << r.error().message();
}

TEST(PartialRowsTest, JoinedBytesMustBeARowsEventOfTheRightSize) {
  std::string event = SomeRowsEvent();
  PartialRowsAssembler a;
  {
    std::string query = event;
    query[4] = 2;  // QUERY
    auto r = Feed(a, MakeFragments(query, 25), ChecksumAlgorithm::kCrc32);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message().find("is a QUERY event, not a rows event"), std::string::npos)
        << r.error().message();
  }
  {
    std::string wrong = event;
    PutLE32(wrong, 9, static_cast<uint32_t>(event.size() + 9));
    auto r = Feed(a, MakeFragments(wrong, 25), ChecksumAlgorithm::kCrc32);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message().find("says event_size " + std::to_string(event.size() + 9) +
                                       ", but the fragments carry " + std::to_string(event.size())),
              std::string::npos)
        << r.error().message();
    EXPECT_NE(r.error().message().find("reassembled from"), std::string::npos) << r.error().message();
  }
  {
    auto r = Feed(a, MakeFragments(event.substr(0, 18), 5), ChecksumAlgorithm::kCrc32);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message().find("fewer than an event header"), std::string::npos)
        << r.error().message();
  }
  // A CRC32 that does not match is not taken for a checksum: with event_size counting it, the
  // bytes are kept whole (the rows decoder then sees them).
  {
    std::string damaged = event;
    damaged.back() ^= 1;
    auto r = Feed(a, MakeFragments(damaged, 25), ChecksumAlgorithm::kCrc32);
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_FALSE(r->had_checksum);
    EXPECT_EQ(r->event, damaged);
  }
  // With checksums off, a valid-looking CRC32 is not removed either.
  {
    auto r = Feed(a, MakeFragments(event, 25), ChecksumAlgorithm::kNone);
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_FALSE(r->had_checksum);
    EXPECT_EQ(r->event, event);
  }
}

TEST(PartialRowsTest, SingleFragmentAndEmptyChunksWork) {
  std::string event = SomeRowsEvent();
  PartialRowsAssembler a;
  auto one = Feed(a, MakeFragments(event, event.size()), ChecksumAlgorithm::kCrc32);
  ASSERT_TRUE(one.ok()) << one.error().message();
  EXPECT_EQ(one->fragments, 1u);
  EXPECT_TRUE(one->had_checksum);
  EXPECT_EQ(one->event, StripChecksum(event));

  // Empty chunks anywhere in the group change nothing.
  std::vector<PartialRowsFragment> parts(4);
  std::string_view chunks[] = {"", std::string_view(event).substr(0, 10), "",
                               std::string_view(event).substr(10)};
  std::vector<std::string> bodies;
  for (uint32_t i = 0; i < 4; ++i) {
    parts[i].total = 4;
    parts[i].sequence = i + 1;
    parts[i].chunk = chunks[i];
    if (i == 0) parts[i].original_size = event.size();
    bodies.emplace_back();
    AppendPartialRowsFragment(parts[i], bodies.back());
  }
  auto joined = Feed(a, bodies, ChecksumAlgorithm::kCrc32);
  ASSERT_TRUE(joined.ok()) << joined.error().message();
  EXPECT_EQ(joined->event, StripChecksum(event));
}

TEST(PartialRowsTest, ResetDropsTheGroup) {
  std::vector<std::string> bodies = MakeFragments(SomeRowsEvent(), 16);
  PartialRowsAssembler a;
  ASSERT_TRUE(AddBody(a, bodies[0], 100).ok());
  EXPECT_TRUE(a.in_progress());
  EXPECT_EQ(a.total(), bodies.size());
  EXPECT_EQ(a.bytes(), 16u);
  a.Reset();
  EXPECT_FALSE(a.in_progress());
  EXPECT_EQ(a.bytes(), 0u);
  EXPECT_TRUE(a.BeforeOtherEvent(EventType::kXid, "bin.000007", 200).ok());
}

}  // namespace
}  // namespace chsync::binlog
