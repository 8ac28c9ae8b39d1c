#include "binlog/decoder.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "binlog/compression.h"
#include "binlog/file_reader.h"

namespace chsync::binlog {
namespace {

const std::string kFixtures = CHSYNC_SOURCE_DIR "/../shared/fixtures/binlog/";
const std::string kEasyPost = kFixtures + "EasyPost/rust-mysql-binlog/test_data/bin-log.000001";

struct RawFixture {
  std::vector<std::string> events;
  std::vector<uint64_t> positions;
};

RawFixture Split(const std::string& path) {
  RawFixture f;
  auto reader = FileReader::Open(path);
  EXPECT_TRUE(reader.ok()) << path;
  if (!reader.ok()) return f;
  while (true) {
    auto raw = (*reader)->NextRaw();
    if (!raw.ok() || !*raw) break;
    f.events.emplace_back((*raw)->bytes);
    f.positions.push_back((*raw)->position);
  }
  return f;
}

void PutLE32(std::string& s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// Recomputes the trailing CRC32 after a deliberate edit, so a test reaches the check it targets.
void Reseal(std::string& event) {
  PutLE32(event, 9, static_cast<uint32_t>(event.size()));
  PutLE32(event, event.size() - 4, Crc32(std::string_view(event).substr(0, event.size() - 4)));
}

class EasyPostTest : public testing::Test {
 protected:
  void SetUp() override {
    raw_ = Split(kEasyPost);
    ASSERT_EQ(raw_.events.size(), 14u);
    decoder_.SetFile("bin-log.000001");
    ASSERT_TRUE(decoder_.Decode(raw_.events[0], 4).ok());
  }
  Result<Event> At(size_t i) { return decoder_.Decode(raw_.events[i], raw_.positions[i]); }
  RawFixture raw_;
  Decoder decoder_;
};

// Values documented for this file (rust-mysql-binlog test_parse_file and its CREATE TABLE).
TEST_F(EasyPostTest, HeaderFieldsAndRowValues) {
  const FormatDescriptionEvent* f = decoder_.format();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->server_version, "5.7.24-27-log");
  EXPECT_EQ(f->checksum, ChecksumAlgorithm::kCrc32);
  EXPECT_TRUE(f->crc_matched_without_in_use_flag);  // copied while in use (INDEX.md quirk)
  EXPECT_EQ(f->header_length, 19);
  for (size_t i = 1; i <= 7; ++i) ASSERT_TRUE(At(i).ok()) << i;
  auto rows = At(7);
  ASSERT_TRUE(rows.ok()) << rows.error().message();
  EXPECT_EQ(rows->position, 652u);
  EXPECT_EQ(rows->header.type, EventType::kWriteRowsV2);
  EXPECT_EQ(rows->header.server_id, 36431u);
  EXPECT_EQ(rows->header.event_size, 66u);
  EXPECT_EQ(rows->header.log_pos, 718u);
  EXPECT_EQ(rows->header.timestamp, 1550192291u);
  EXPECT_TRUE(rows->checksum_verified);
  const auto& r = std::get<RowsEvent>(rows->body);
  ASSERT_NE(r.table, nullptr);
  EXPECT_EQ(r.table->database, "bltest");
  EXPECT_EQ(r.table->table, "foo");
  ASSERT_EQ(r.rows.size(), 1u);
  RowImage after = r.rows[0].after;
  ASSERT_EQ(after.size(), 3u);
  EXPECT_EQ(after[0].kind, ValueKind::kInt);
  EXPECT_EQ(after[0].i, 1);
  EXPECT_EQ(after[1].kind, ValueKind::kDecimal);
  EXPECT_EQ(after[1].text, "0.10000");
  EXPECT_EQ(after[2].kind, ValueKind::kString);
  EXPECT_EQ(after[2].text, "zero point one");
  EXPECT_TRUE(r.rows[0].before.empty());
}

TEST_F(EasyPostTest, TruncatedEventIsCorrupt) {
  std::string e = raw_.events[8].substr(0, 10);
  auto res = decoder_.Decode(e, 718);
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().kind(), ErrorKind::kCorrupt);
  EXPECT_NE(res.error().message().find("bin-log.000001:718"), std::string::npos) << res.error().message();
}

TEST_F(EasyPostTest, EventSizeNotMatchingBytesIsCorrupt) {
  std::string e = raw_.events[8];
  PutLE32(e, 9, 500);
  auto res = decoder_.Decode(e, 718);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.error().message().find("event_size 500"), std::string::npos) << res.error().message();
}

TEST_F(EasyPostTest, BadChecksumIsCorrupt) {
  std::string e = raw_.events[8];
  e[20] ^= 0x01;
  auto res = decoder_.Decode(e, 718);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.error().message().find("checksum mismatch"), std::string::npos) << res.error().message();
  EXPECT_NE(res.error().message().find("XID event at bin-log.000001:718"), std::string::npos)
      << res.error().message();
}

TEST_F(EasyPostTest, ChecksumCheckCanBeTurnedOff) {
  Decoder lax(DecoderOptions{.verify_checksums = false});
  ASSERT_TRUE(lax.Decode(raw_.events[0], 4).ok());
  std::string e = raw_.events[8];
  e[19] ^= 0x01;  // xid low byte
  auto res = lax.Decode(e, 718);
  ASSERT_TRUE(res.ok()) << res.error().message();
  EXPECT_FALSE(res->checksum_verified);
  EXPECT_EQ(std::get<XidEvent>(res->body).xid, 11095u ^ 1u);
}

TEST_F(EasyPostTest, GarbageTableIdIsCorrupt) {
  ASSERT_TRUE(At(6).ok());  // TABLE_MAP for id 203
  std::string e = raw_.events[7];
  e[19] = static_cast<char>(0x77);  // table id 0x77 instead of 203
  Reseal(e);
  auto res = decoder_.Decode(e, 652);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.error().message().find("table id 119 without a preceding TABLE_MAP"), std::string::npos)
      << res.error().message();
}

TEST_F(EasyPostTest, MetadataLengthPastTheEndIsCorrupt) {
  std::string e = raw_.events[6];
  // TABLE_MAP body: id(6) flags(2) dblen(1)"bltest"\0 tbllen(1)"foo"\0 ncols(1) types(3) metalen(1)
  size_t meta_len_at = 19 + 6 + 2 + 1 + 6 + 1 + 1 + 3 + 1 + 1 + 3;
  e[meta_len_at] = static_cast<char>(0x40);
  Reseal(e);
  auto res = decoder_.Decode(e, 598);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.error().message().find("truncated column metadata block"), std::string::npos)
      << res.error().message();
}

TEST_F(EasyPostTest, ColumnCountPastTheEndIsCorrupt) {
  std::string e = raw_.events[6];
  size_t count_at = 19 + 6 + 2 + 1 + 6 + 1 + 1 + 3 + 1;
  e[count_at] = static_cast<char>(0xfa);
  Reseal(e);
  auto res = decoder_.Decode(e, 598);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.error().message().find("column count 250 exceeds"), std::string::npos)
      << res.error().message();
}

TEST_F(EasyPostTest, RowsColumnCountDifferentFromTableMapIsCorrupt) {
  ASSERT_TRUE(At(6).ok());
  std::string e = raw_.events[7];
  e[19 + 10] = 4;  // column count after the 10-byte v2 post-header
  Reseal(e);
  auto res = decoder_.Decode(e, 652);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.error().message().find("has 4 columns but TABLE_MAP bltest.foo"), std::string::npos)
      << res.error().message();
}

TEST_F(EasyPostTest, RowValuePastTheEndIsCorrupt) {
  ASSERT_TRUE(At(6).ok());
  std::string e = raw_.events[7];
  e.erase(e.size() - 4 - 6, 6);  // cut the end of the VARCHAR value
  Reseal(e);
  auto res = decoder_.Decode(e, 652);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.error().message().find("truncated string value"), std::string::npos) << res.error().message();
}

TEST_F(EasyPostTest, DecoderStaysUsableAfterAnError) {
  std::string bad = raw_.events[8];
  bad[25] ^= 0x10;
  ASSERT_FALSE(decoder_.Decode(bad, 718).ok());
  auto good = At(8);
  ASSERT_TRUE(good.ok()) << good.error().message();
  EXPECT_EQ(std::get<XidEvent>(good->body).xid, 11095u);
}

TEST(DecoderTest, UnknownEventTypeIsSkippedAndReported) {
  RawFixture f =
      Split(kFixtures + "osheroff/mysql-binlog-connector-java/src/test/resources/mysql-bin.aurora-padding");
  Decoder d;
  bool saw = false;
  for (size_t i = 0; i < f.events.size(); ++i) {
    auto e = d.Decode(f.events[i], f.positions[i]);
    ASSERT_TRUE(e.ok()) << e.error().message();
    if (static_cast<int>(e->header.type) == 100) {
      saw = true;
      EXPECT_EQ(e->position, 281u);
      EXPECT_EQ(e->end_position(),
                1209u);  // SHOW BINLOG EVENTS in the origin test: Aurora padding ends at 1209
      EXPECT_TRUE(std::holds_alternative<OtherEvent>(e->body));
    }
  }
  EXPECT_TRUE(saw);
}

TEST(DecoderTest, FakeRotateBeforeFormatDescriptionDetectsItsChecksum) {
  // A replication stream starts with a fake ROTATE carrying a CRC32 before any FDE.
  std::string e(19, '\0');
  e[4] = static_cast<char>(EventType::kRotate);
  e += std::string("\x04\0\0\0\0\0\0\0", 8);
  e += "binlog.000042";
  e += std::string(4, '\0');
  e[17] = static_cast<char>(kFlagArtificial);
  Reseal(e);
  Decoder d;
  auto res = d.Decode(e, 0);
  ASSERT_TRUE(res.ok()) << res.error().message();
  EXPECT_TRUE(res->checksum_verified);
  EXPECT_EQ(std::get<RotateEvent>(res->body).next_file, "binlog.000042");
  EXPECT_EQ(std::get<RotateEvent>(res->body).position, 4u);
  // The rotate names the file of the events that follow.
  std::string stop(19, '\0');
  stop[4] = static_cast<char>(EventType::kStop);
  stop += std::string(4, '\0');
  Reseal(stop);
  auto next = d.Decode(stop, 4);
  ASSERT_TRUE(next.ok()) << next.error().message();
  EXPECT_EQ(next->file, "binlog.000042");
}

TEST(DecoderTest, TransactionPayloadInflatesToTheDocumentedEvents) {
  RawFixture f =
      Split(kFixtures + "blackbeam/rust_mysql_common/test-data/binlogs/transaction_compression.000001");
  Decoder d;
  const TransactionPayloadEvent* payload = nullptr;
  Result<Event> keep = Error(ErrorKind::kInternal, "");
  for (size_t i = 0; i < f.events.size() && !payload; ++i) {
    keep = d.Decode(f.events[i], f.positions[i]);
    ASSERT_TRUE(keep.ok()) << keep.error().message();
    payload = std::get_if<TransactionPayloadEvent>(&keep->body);
  }
  ASSERT_NE(payload, nullptr);
  EXPECT_EQ(payload->compression_type, 0u);
  ASSERT_EQ(payload->events.size(), 4u);
  EXPECT_EQ(payload->events[0].header.type, EventType::kQuery);
  EXPECT_EQ(payload->events[1].header.type, EventType::kTableMap);
  EXPECT_EQ(payload->events[2].header.type, EventType::kWriteRowsV2);
  EXPECT_EQ(payload->events[3].header.type, EventType::kXid);
  const auto& rows = std::get<RowsEvent>(payload->events[2].body);
  ASSERT_EQ(rows.rows.size(), 1u);
  EXPECT_EQ(rows.rows[0].after[0].i, 1);
  EXPECT_EQ(rows.table->table, "tb1");
}

TEST(DecoderTest, MariaDbCaptureValues) {
  RawFixture f = Split(kFixtures + "_generated/vlasky-zongji/binlog-mariadb118.events.bin");
  Decoder d;
  std::vector<std::string> compressed_values;
  int errors = 0;
  for (size_t i = 0; i < f.events.size(); ++i) {
    auto e = d.Decode(f.events[i], f.positions[i]);
    if (!e.ok()) {
      // Only the table of MariaDB 5.3 "hires" temporal columns fails: its TABLE_MAP carries no
      // fractional precision, so the value sizes are unknown.
      EXPECT_EQ(f.positions[i], 5376u) << e.error().message();
      ++errors;
      continue;
    }
    auto* rows = std::get_if<RowsEvent>(&e->body);
    if (!rows || !rows->table || rows->table->table != "capture_mariadb") continue;
    for (const auto& row : rows->rows) {
      if (row.after[6].kind == ValueKind::kString) compressed_values.emplace_back(row.after[6].text);
      if (row.after[0].i == 1) {
        EXPECT_EQ(row.after[1].text,
                  std::string("\x11\x11\x11\x11\x22\x22\x33\x33\x44\x44\x55\x55\x55\x55\x55\x55", 16));
        EXPECT_EQ(row.after[2].text, std::string("\xc0\xa8\x01\x0a", 4));  // 192.168.1.10
        EXPECT_EQ(row.after[7].text, "caf\xe9 latin one");
      }
      if (row.after[0].i == 2) {
        EXPECT_EQ(row.after[3].text, std::string(16, '\0'));  // '::', trailing zeros restored
      }
    }
  }
  EXPECT_EQ(errors, 1);
  ASSERT_EQ(compressed_values.size(), 2u);
  std::string squash, flat;
  for (int i = 0; i < 30; ++i) squash += "squash-";
  for (int i = 0; i < 40; ++i) flat += "flat-";
  EXPECT_EQ(compressed_values[0], squash);
  EXPECT_EQ(compressed_values[1], flat);  // inside the compressed rows event (type 166)
}

TEST(DecoderTest, EncryptedBinlogIsReportedNotDecoded) {
  RawFixture f = Split(kFixtures + "MariaDB/server/mysql-test/std_data/binlog_before_20574.bin");
  Decoder d;
  ASSERT_TRUE(d.Decode(f.events[0], f.positions[0]).ok());
  auto start = d.Decode(f.events[1], f.positions[1]);
  ASSERT_TRUE(start.ok()) << start.error().message();
  EXPECT_TRUE(std::holds_alternative<StartEncryptionEvent>(start->body));
  auto next = d.Decode(f.events[2], f.positions[2]);
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.error().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(next.error().message().find("encrypted"), std::string::npos);
}

}  // namespace
}  // namespace chsync::binlog
