#include "binlog/decoder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "binlog/compression.h"
#include "binlog/file_reader.h"

namespace chsync::binlog {
namespace {

const std::string kFixtures = CHSYNC_SOURCE_DIR "/../shared/fixtures/binlog/";
const std::string kEasyPost = kFixtures + "EasyPost/rust-mysql-binlog/test_data/bin-log.000001";
const std::string kCaptures = CHSYNC_SOURCE_DIR "/tests/data/binlog/captures/";
const std::string kMariaXa = kCaptures + "mariadb-10.11.19-xa.bin";
const std::string kMariaCompressedRows = kCaptures + "mariadb-10.11.19-compressed-rows.bin";

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

// Every statement repeats its table's TABLE_MAP: the same bytes give the same object, which the
// rows events then point at (the pipe maps a table's columns again only for a new object).
TEST_F(EasyPostTest, RepeatedTableMapIsTheSameObject) {
  std::vector<size_t> maps;
  for (size_t i = 1; i < raw_.events.size(); ++i) {
    auto e = At(i);
    ASSERT_TRUE(e.ok()) << i << ": " << e.error().message();
    if (e->header.type == EventType::kTableMap) maps.push_back(i);
  }
  ASSERT_FALSE(maps.empty());
  auto first = At(maps[0]);
  ASSERT_TRUE(first.ok());
  std::shared_ptr<const TableMap> map = std::get<TableMapEvent>(first->body).table;
  auto again = At(maps[0]);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(std::get<TableMapEvent>(again->body).table, map);
  auto rows = At(maps[0] + 1);
  ASSERT_TRUE(rows.ok());
  ASSERT_TRUE(std::holds_alternative<RowsEvent>(rows->body));
  EXPECT_EQ(std::get<RowsEvent>(rows->body).table, map);

  // Other bytes (here another table id) are another map.
  std::string changed = raw_.events[maps[0]];
  changed[19] = static_cast<char>(changed[19] ^ 0x40);
  Reseal(changed);
  auto other = decoder_.Decode(changed, raw_.positions[maps[0]]);
  ASSERT_TRUE(other.ok()) << other.error().message();
  EXPECT_NE(std::get<TableMapEvent>(other->body).table, map);
  EXPECT_EQ(std::get<TableMapEvent>(other->body).table->table_id, map->table_id ^ 0x40);
}

// What decode_rows_of says is part of a kept map: once it changes (a table starts being
// replicated), the map is parsed again, with its optional metadata.
TEST_F(EasyPostTest, RepeatedTableMapIsParsedAgainWhenItsTableIsWantedNow) {
  bool want = false;
  DecoderOptions options;
  options.decode_rows_of = [&](const TableMap&) { return want; };
  Decoder decoder(options);
  decoder.SetFile("bin-log.000001");
  ASSERT_TRUE(decoder.Decode(raw_.events[0], 4).ok());
  size_t map_at = 0;
  std::shared_ptr<const TableMap> skipped;
  for (size_t i = 1; i < raw_.events.size() && map_at == 0; ++i) {
    auto e = decoder.Decode(raw_.events[i], raw_.positions[i]);
    ASSERT_TRUE(e.ok()) << i;
    if (e->header.type == EventType::kTableMap) {
      map_at = i;
      skipped = std::get<TableMapEvent>(e->body).table;
    }
  }
  ASSERT_NE(map_at, 0u);
  auto same = decoder.Decode(raw_.events[map_at], raw_.positions[map_at]);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(std::get<TableMapEvent>(same->body).table, skipped);
  want = true;
  auto wanted = decoder.Decode(raw_.events[map_at], raw_.positions[map_at]);
  ASSERT_TRUE(wanted.ok());
  EXPECT_NE(std::get<TableMapEvent>(wanted->body).table, skipped);
  auto rows = decoder.Decode(raw_.events[map_at + 1], raw_.positions[map_at + 1]);
  ASSERT_TRUE(rows.ok());
  EXPECT_FALSE(std::get<RowsEvent>(rows->body).skipped);
  EXPECT_EQ(std::get<RowsEvent>(rows->body).rows.size(), 1u);
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

// --- MariaDB GTID events: XA ids, group commit ids and the extra flags (layout: event.h).

struct GtidWant {
  uint64_t seq_no;
  uint8_t flags2;
  std::optional<uint64_t> commit_id;
  std::optional<uint32_t> xa_format_id;
  std::string gtrid, bqual;
  std::optional<uint8_t> flags_extra, extra_engines;
  std::optional<uint64_t> sa_seq_no;
};

// Every GTID of the XA capture (tests/data/binlog/captures/README.md lists the statements).
TEST(MariaGtidTest, XaCaptureGtidsCarryTheirXaIdsAndExtraFlags) {
  const std::vector<GtidWant> want = {
      {34, 0x4c, {}, 1, "a", "", 0x01, 255, {}},  // XA START 'a' … XA PREPARE
      {35, 0x0c, {}, {}, "", "", {}, {}, {}},     // ordinary INSERT between PREPARE and COMMIT
      {36, 0x8d, {}, 1, "a", "", {}, {}, {}},     // XA COMMIT 'a'
      {37, 0x4c, {}, 1, "b", "", 0x01, 255, {}},  // XA PREPARE 'b'
      {38, 0x8d, {}, 1, "b", "", {}, {}, {}},     // XA ROLLBACK 'b': the same flags as a commit
      {39, 0x0c, {}, {}, "", "", {}, {}, {}},     // XA COMMIT 'c' ONE PHASE: no XA trace
      {40, 0x4c, {}, 7, "gtrid-xyz", "bq", 0x01, 255, {}},
      {41, 0x0c, {}, {}, "", "", {}, {}, {}},
      {42, 0x8d, {}, 7, "gtrid-xyz", "bq", {}, {}, {}},
      {43, 0x4c, {}, 3, std::string("\x00\xff\x41", 3), "", 0x01, 255, {}},
      {44, 0x8d, {}, 3, std::string("\x00\xff\x41", 3), "", {}, {}, {}},
      {45, 0x4e, 177, 1, "gc", "", 0x01, 255, {}},  // XA PREPARE in a group commit
      {46, 0x0e, 177, {}, "", "", {}, {}, {}},
      {47, 0x0e, 181, {}, "", "", {}, {}, {}},
      {48, 0x8f, 181, 1, "gc", "", {}, {}, {}},  // XA COMMIT in a group commit
      {49, 0x29, {}, {}, "", "", 0x02, {}, {}},  // START ALTER (padded to 19 bytes)
      {50, 0x29, {}, {}, "", "", 0x04, {}, 49},  // COMMIT ALTER
      {51, 0x0c, {}, {}, "", "", {}, {}, {}},
      {52, 0x29, {}, {}, "", "", 0x02, {}, {}},  // START ALTER
      {53, 0x29, {}, {}, "", "", 0x08, {}, 52},  // ROLLBACK ALTER
  };
  RawFixture f = Split(kMariaXa);
  ASSERT_FALSE(f.events.empty());
  Decoder d;
  d.SetFile("binlog.000005");
  size_t next = 0;
  std::vector<std::string> xa_statements;
  size_t prepares = 0;
  std::vector<std::pair<uint8_t, uint64_t>> alters;
  for (size_t i = 0; i < f.events.size(); ++i) {
    auto e = d.Decode(f.events[i], f.positions[i]);
    ASSERT_TRUE(e.ok()) << e.error().message();
    if (const auto* q = std::get_if<QueryEvent>(&e->body)) {
      if (q->query.starts_with("XA ")) xa_statements.emplace_back(q->query);
      if (q->status.gtid_flags3) {
        // The ALTERs' QUERY events repeat the GTID's flags_extra and START ALTER seq_no.
        alters.push_back({*q->status.gtid_flags3, q->status.sa_seq_no.value_or(0)});
        EXPECT_FALSE(q->status.unknown_code) << f.positions[i];
      }
    }
    if (const auto* x = std::get_if<XaPrepareEvent>(&e->body)) {
      EXPECT_FALSE(x->one_phase);
      ++prepares;
    }
    const auto* g = std::get_if<MariaGtidEvent>(&e->body);
    if (g == nullptr) continue;
    ASSERT_LT(next, want.size()) << "more GTIDs than expected at " << f.positions[i];
    const GtidWant& w = want[next++];
    SCOPED_TRACE("GTID 0-101-" + std::to_string(w.seq_no) + " at " + std::to_string(f.positions[i]));
    EXPECT_EQ(g->seq_no, w.seq_no);
    EXPECT_EQ(g->domain_id, 0u);
    EXPECT_EQ(e->header.server_id, 101u);
    EXPECT_EQ(g->flags2, w.flags2);
    EXPECT_EQ(g->commit_id, w.commit_id);
    EXPECT_EQ(g->xa_format_id, w.xa_format_id);
    EXPECT_EQ(g->xa_gtrid, w.gtrid);
    EXPECT_EQ(g->xa_bqual, w.bqual);
    EXPECT_EQ(g->flags_extra, w.flags_extra);
    EXPECT_EQ(g->extra_engines, w.extra_engines);
    EXPECT_EQ(g->sa_seq_no, w.sa_seq_no);
  }
  EXPECT_EQ(next, want.size());
  EXPECT_EQ(prepares, 5u);
  const std::vector<std::string> statements = {
      "XA END X'61',X'',1",
      "XA COMMIT X'61',X'',1",
      "XA END X'62',X'',1",
      "XA ROLLBACK X'62',X'',1",
      "XA END X'67747269642d78797a',X'6271',7",
      "XA COMMIT X'67747269642d78797a',X'6271',7",
      "XA END X'00ff41',X'',3",
      "XA COMMIT X'00ff41',X'',3",
      "XA END X'6763',X'',1",
      "XA COMMIT X'6763',X'',1",
  };
  EXPECT_EQ(xa_statements, statements);
  const std::vector<std::pair<uint8_t, uint64_t>> want_alters = {{2, 0}, {4, 49}, {2, 0}, {8, 52}};
  EXPECT_EQ(alters, want_alters);
}

// A MariaDB GTID event (type 162, server 101) with `body`, sealed with its CRC32, decoded after
// the XA capture's FORMAT_DESCRIPTION.
Result<Event> DecodeMariaGtidBody(const std::string& body) {
  static const RawFixture f = Split(kMariaXa);
  Decoder d;
  EXPECT_TRUE(d.Decode(f.events.at(0), 4).ok());
  std::string e(19, '\0');
  e[4] = static_cast<char>(EventType::kMariaGtid);
  e[5] = 101;
  e[17] = 0x08;
  e += body;
  e += std::string(4, '\0');
  Reseal(e);
  return d.Decode(e, 379);
}

std::string LE(uint64_t v, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}

// seq_no 1000, domain 5, then `flags2`.
std::string GtidHead(uint8_t flags2) {
  return LE(1000, 8) + LE(5, 4) + std::string(1, static_cast<char>(flags2));
}

TEST(MariaGtidTest, StartAlterWithoutCommitIdIsReadRightAfterFlags2) {
  // 13 bytes + flags_extra, then zero padding to 19: no 6-byte gap before flags_extra.
  auto e = DecodeMariaGtidBody(GtidHead(0x29) + "\x02" + std::string(5, '\0'));
  ASSERT_TRUE(e.ok()) << e.error().message();
  const auto& g = std::get<MariaGtidEvent>(e->body);
  EXPECT_EQ(g.seq_no, 1000u);
  EXPECT_EQ(g.domain_id, 5u);
  EXPECT_FALSE(g.commit_id);
  EXPECT_EQ(g.flags_extra, kMariaGtidExtraStartAlter);
  EXPECT_FALSE(g.extra_engines);
  EXPECT_FALSE(g.sa_seq_no);  // START ALTER carries none
}

TEST(MariaGtidTest, StartAlterWithCommitIdFollowsTheCommitId) {
  auto e = DecodeMariaGtidBody(GtidHead(0x2b) + LE(0x1122334455667788, 8) + "\x02");
  ASSERT_TRUE(e.ok()) << e.error().message();
  const auto& g = std::get<MariaGtidEvent>(e->body);
  EXPECT_EQ(g.commit_id, 0x1122334455667788u);
  EXPECT_EQ(g.flags_extra, kMariaGtidExtraStartAlter);
  EXPECT_FALSE(g.sa_seq_no);
}

TEST(MariaGtidTest, CommitAlterWithAndWithoutCommitIdCarriesTheStartAltersSeqNo) {
  auto without = DecodeMariaGtidBody(GtidHead(0x29) + "\x04" + LE(999, 8));
  ASSERT_TRUE(without.ok()) << without.error().message();
  EXPECT_FALSE(std::get<MariaGtidEvent>(without->body).commit_id);
  EXPECT_EQ(std::get<MariaGtidEvent>(without->body).sa_seq_no, 999u);
  auto with = DecodeMariaGtidBody(GtidHead(0x2b) + LE(77, 8) + "\x04" + LE(999, 8));
  ASSERT_TRUE(with.ok()) << with.error().message();
  EXPECT_EQ(std::get<MariaGtidEvent>(with->body).commit_id, 77u);
  EXPECT_EQ(std::get<MariaGtidEvent>(with->body).flags_extra, kMariaGtidExtraCommitAlter);
  EXPECT_EQ(std::get<MariaGtidEvent>(with->body).sa_seq_no, 999u);
}

TEST(MariaGtidTest, ExtraEnginesComeBeforeTheStartAltersSeqNo) {
  auto e = DecodeMariaGtidBody(GtidHead(0x29) + "\x09\x03" + LE(123456789, 8));
  ASSERT_TRUE(e.ok()) << e.error().message();
  const auto& g = std::get<MariaGtidEvent>(e->body);
  EXPECT_EQ(g.flags_extra, kMariaGtidExtraMultiEngine | kMariaGtidExtraRollbackAlter);
  EXPECT_EQ(g.extra_engines, 3u);
  EXPECT_EQ(g.sa_seq_no, 123456789u);
}

TEST(MariaGtidTest, XaIdWithCommitIdAndExtraEngines) {
  auto e = DecodeMariaGtidBody(GtidHead(0x4e) + LE(5, 8) + LE(42, 4) + "\x03\x02" + "abcXY" + "\x01\x02");
  ASSERT_TRUE(e.ok()) << e.error().message();
  const auto& g = std::get<MariaGtidEvent>(e->body);
  EXPECT_EQ(g.commit_id, 5u);
  EXPECT_EQ(g.xa_format_id, 42u);
  EXPECT_EQ(g.xa_gtrid, "abc");
  EXPECT_EQ(g.xa_bqual, "XY");
  EXPECT_EQ(g.extra_engines, 2u);
}

TEST(MariaGtidTest, ZeroPaddingIsNotFlagsExtra) {
  for (uint8_t flags2 : {uint8_t{0x0c}, uint8_t{0x29}}) {
    auto e = DecodeMariaGtidBody(GtidHead(flags2) + std::string(6, '\0'));
    ASSERT_TRUE(e.ok()) << e.error().message();
    EXPECT_FALSE(std::get<MariaGtidEvent>(e->body).flags_extra);
    EXPECT_FALSE(std::get<MariaGtidEvent>(e->body).xa_format_id);
  }
}

TEST(MariaGtidTest, XaIdPartLongerThan64BytesIsCorrupt) {
  auto e = DecodeMariaGtidBody(GtidHead(0x4c) + LE(1, 4) + "\x41\x00" + std::string(65, 'g'));
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().kind(), ErrorKind::kCorrupt);
  EXPECT_NE(e.error().message().find("longer than 64"), std::string::npos) << e.error().message();
}

// Every cut of real XA GTID bodies (the PREPARE of a group commit: commit id, XA id, extra
// engines; the XA COMMIT: XA id only) and of a COMMIT ALTER decodes or fails with a kCorrupt
// error naming the offset: never reads past the end. A cut inside a part the flags announce is
// an error; a cut just after a complete part is a shorter, valid event.
TEST(MariaGtidTest, TruncatedXaGtidBodiesAreErrorsNeverCrashes) {
  RawFixture f = Split(kMariaXa);
  std::map<uint64_t, std::string> bodies;  // by position
  for (uint64_t at : {3194u, 3061u, 4313u}) {
    for (size_t i = 0; i < f.positions.size(); ++i) {
      if (f.positions[i] == at) bodies[at] = f.events[i].substr(19, f.events[i].size() - 19 - 4);
    }
  }
  ASSERT_EQ(bodies.size(), 3u);
  // Body lengths at which a cut leaves a complete event.
  const std::map<uint64_t, std::vector<size_t>> complete = {
      {3194, {29, 31}},  // 13 + commit id 8 + XA 4+1+1+2 = 29; + flags_extra, extra_engines
      {3061, {22}},      // 13 + XA 4+1+1+3
      {4313, {13, 22}},  // 13, + flags_extra 0x04 and sa_seq_no
  };
  for (const auto& [at, body] : bodies) {
    const std::vector<size_t>& ok = complete.at(at);
    ASSERT_EQ(body.size(), ok.back()) << at;
    for (size_t len = 0; len <= body.size(); ++len) {
      auto e = DecodeMariaGtidBody(body.substr(0, len));
      bool want_ok = std::find(ok.begin(), ok.end(), len) != ok.end();
      ASSERT_EQ(e.ok(), want_ok) << "GTID at " << at << " cut to " << len << " bytes"
                                 << (e.ok() ? "" : ": " + e.error().message());
      if (!e.ok()) {
        EXPECT_EQ(e.error().kind(), ErrorKind::kCorrupt);
        EXPECT_NE(e.error().message().find("at offset "), std::string::npos) << e.error().message();
      }
    }
  }
}

// --- TRANSACTION_PAYLOAD: the offset of each inner event in the uncompressed payload.

TEST(DecoderTest, PayloadEventsCarryTheirOffsetsInTheUncompressedPayload) {
  for (const char* fixture :
       {"blackbeam/rust_mysql_common/test-data/binlogs/transaction_compression.000001",
        "osheroff/mysql-binlog-connector-java/src/test/resources/mysql-bin.compressed"}) {
    SCOPED_TRACE(fixture);
    RawFixture f = Split(kFixtures + fixture);
    Decoder d;
    size_t payloads = 0;
    for (size_t i = 0; i < f.events.size(); ++i) {
      auto e = d.Decode(f.events[i], f.positions[i]);
      ASSERT_TRUE(e.ok()) << e.error().message();
      EXPECT_EQ(e->payload_offset, 0u);
      const auto* p = std::get_if<TransactionPayloadEvent>(&e->body);
      if (p == nullptr) continue;
      ++payloads;
      ASSERT_EQ(p->events.size(), 4u);
      uint64_t offset = 0;
      for (size_t k = 0; k < p->events.size(); ++k) {
        const Event& inner = p->events[k];
        EXPECT_EQ(inner.payload_index, k);
        EXPECT_EQ(inner.payload_offset, offset) << "event " << k;
        EXPECT_EQ(inner.position, e->position);
        offset += inner.header.event_size;
      }
      EXPECT_EQ(offset, p->uncompressed_size);
    }
    EXPECT_EQ(payloads, 1u);
  }
}

// --- MariaDB compressed rows events: the declared inflated size, decoded or skipped.

struct CompressedRows {
  uint64_t position, event_size, inflated_size;
  size_t rows;
  EventType type;
};

// The rows events of `path`, every table's rows decoded, or none (`skip`).
std::vector<CompressedRows> RowsEventsOf(const std::string& path, bool skip) {
  RawFixture f = Split(path);
  DecoderOptions options;
  if (skip) options.decode_rows_of = [](const TableMap&) { return false; };
  Decoder d(options);
  std::vector<CompressedRows> out;
  for (size_t i = 0; i < f.events.size(); ++i) {
    auto e = d.Decode(f.events[i], f.positions[i]);
    if (!e.ok()) continue;  // the hires table of the zongji capture (see MariaDbCaptureValues)
    const auto* r = std::get_if<RowsEvent>(&e->body);
    if (r == nullptr) continue;
    EXPECT_EQ(r->skipped, skip);
    out.push_back({e->position, e->header.event_size, r->inflated_size, r->rows.size(), e->header.type});
  }
  return out;
}

TEST(DecoderTest, CompressedRowsDeclareTheirInflatedSizeDecodedOrSkipped) {
  std::vector<CompressedRows> decoded = RowsEventsOf(kMariaCompressedRows, false);
  std::vector<CompressedRows> skipped = RowsEventsOf(kMariaCompressedRows, true);
  ASSERT_EQ(decoded.size(), 13u);
  ASSERT_EQ(skipped.size(), decoded.size());
  size_t rows = 0, more_rows_than_bytes = 0;
  for (size_t i = 0; i < decoded.size(); ++i) {
    const CompressedRows& r = decoded[i];
    SCOPED_TRACE("rows event at " + std::to_string(r.position));
    // MariaDB writes v1 rows events: *_ROWS_COMPRESSED_V1 (166..168)
    EXPECT_GE(static_cast<int>(r.type), 166);
    EXPECT_LE(static_cast<int>(r.type), 168);
    EXPECT_GE(r.inflated_size, r.rows);
    EXPECT_GT(r.inflated_size, r.event_size);
    // A row image is 17 bytes: null bitmap 1, INT 4, VARCHAR(100) utf8mb4 length 2 + 10 bytes.
    size_t images = r.type == EventType::kMariaUpdateRowsCompressedV1 ? 2 : 1;
    EXPECT_EQ(r.inflated_size, r.rows * images * 17);
    EXPECT_EQ(skipped[i].inflated_size, r.inflated_size);
    EXPECT_EQ(skipped[i].rows, 0u);
    rows += r.rows;
    more_rows_than_bytes += r.rows > r.event_size;
  }
  EXPECT_EQ(rows, 5000u + 10u + 5u);
  // 481 identical rows in an 88-byte event: row versions counted from the event position would
  // run into the next event.
  EXPECT_EQ(more_rows_than_bytes, 11u);
  EXPECT_EQ(decoded[0].rows, 481u);
  EXPECT_EQ(decoded[0].event_size, 88u);
}

TEST(DecoderTest, CompressedRowsV1InflatedSizeAndUncompressedZero) {
  const std::string zongji = kFixtures + "_generated/vlasky-zongji/binlog-mariadb118.events.bin";
  std::vector<CompressedRows> decoded = RowsEventsOf(zongji, false);
  std::vector<CompressedRows> skipped = RowsEventsOf(zongji, true);
  size_t compressed = 0;
  std::map<uint64_t, uint64_t> skipped_sizes;
  for (const CompressedRows& r : skipped) skipped_sizes[r.position] = r.inflated_size;
  for (const CompressedRows& r : decoded) {
    SCOPED_TRACE("rows event at " + std::to_string(r.position));
    if (r.type == EventType::kMariaWriteRowsCompressedV1) {
      ++compressed;
      EXPECT_EQ(r.rows, 1u);
      // Its VARCHAR COMPRESSED value ('flat-' x 40) stays compressed inside the row data.
      EXPECT_EQ(r.inflated_size, 19u);
      EXPECT_EQ(skipped_sizes.at(r.position), r.inflated_size);
    } else {
      EXPECT_EQ(r.inflated_size, 0u);
      EXPECT_EQ(skipped_sizes.at(r.position), 0u);
    }
  }
  EXPECT_EQ(compressed, 1u);
}

TEST(DecoderTest, SkippedCompressedRowsWithABadHeaderAreCorrupt) {
  RawFixture f = Split(kMariaCompressedRows);
  DecoderOptions options;
  options.decode_rows_of = [](const TableMap&) { return false; };
  Decoder d(options);
  size_t damaged = 0;
  for (size_t i = 0; i < f.events.size(); ++i) {
    std::string e = f.events[i];
    bool rows = static_cast<uint8_t>(e[4]) == static_cast<uint8_t>(EventType::kMariaWriteRowsCompressedV1);
    if (rows && damaged == 0) {
      // post-header 8 (table id 6, flags 2), column count 1 byte, bitmap 1 byte: the compression
      // header byte is at 19 + 10.
      ASSERT_EQ(static_cast<uint8_t>(e[19 + 10]), 0x82);
      e[19 + 10] = 0x05;
      Reseal(e);
      ++damaged;
      auto res = d.Decode(e, f.positions[i]);
      ASSERT_FALSE(res.ok());
      EXPECT_EQ(res.error().kind(), ErrorKind::kCorrupt);
      EXPECT_NE(res.error().message().find("compressed-data header byte 5"), std::string::npos)
          << res.error().message();
      continue;
    }
    ASSERT_TRUE(d.Decode(e, f.positions[i]).ok());
  }
  EXPECT_EQ(damaged, 1u);
}

}  // namespace
}  // namespace chsync::binlog
