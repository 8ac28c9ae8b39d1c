#include "position/row_version.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "binlog/file_reader.h"
#include "position/transaction_boundary.h"

namespace chsync::pipe {
namespace {

const std::string kFixtures = CHSYNC_SOURCE_DIR "/../shared/fixtures/binlog/";
const std::string kCaptures = CHSYNC_SOURCE_DIR "/tests/data/binlog/captures/";

struct Numbered {
  std::vector<uint64_t> offsets;             ///< every row's, in binlog order
  std::map<uint64_t, size_t> rows_before;    ///< event end position → rows numbered before it
  std::map<uint64_t, uint64_t> shift_after;  ///< event end position → shift there
  std::vector<uint64_t> checkpoints;         ///< where the pipe may resume (transaction ends)
  size_t events_with_more_rows_than_bytes = 0;
};

/// Numbers every row of `path` as the pipe does, from `start` (an event boundary) with `shift`.
/// With `skip_rows`, row values are not decoded (as for tables that are not replicated).
Numbered NumberFile(const std::string& path, uint64_t start = 4, uint64_t shift = 0, bool skip_rows = false) {
  Numbered out;
  binlog::DecoderOptions options;
  if (skip_rows) options.decode_rows_of = [](const binlog::TableMap&) { return false; };
  auto reader = binlog::FileReader::Open(path, options);
  EXPECT_TRUE(reader.ok()) << reader.error().message();
  if (!reader.ok()) return out;
  if (start > 4) EXPECT_TRUE((*reader)->SkipTo(start).ok());
  RowNumbering numbering;
  TransactionBoundaries boundaries;
  std::string file = path.substr(path.rfind('/') + 1);
  numbering.Resume(file, shift);
  auto number_rows = [&](const binlog::Event& e) {
    const auto* rows = std::get_if<binlog::RowsEvent>(&e.body);
    if (rows == nullptr) return;
    if (rows->rows.size() > e.header.event_size) ++out.events_with_more_rows_than_bytes;
    for (size_t k = 0; k < rows->rows.size(); ++k) {
      auto offset = numbering.Offset(e, *rows, k);
      ASSERT_TRUE(offset.ok()) << offset.error().message();
      out.offsets.push_back(*offset);
    }
  };
  while (true) {
    auto ev = (*reader)->Next();
    EXPECT_TRUE(ev.ok()) << ev.error().message();
    if (!ev.ok() || !*ev) break;
    const binlog::Event& e = **ev;
    numbering.BeginEvent(e, file);
    number_rows(e);
    bool resumable = boundaries.Observe(e, e.end_position()).resume != 0;
    if (const auto* payload = std::get_if<binlog::TransactionPayloadEvent>(&e.body)) {
      for (const binlog::Event& inner : payload->events) {
        number_rows(inner);
        resumable = boundaries.Observe(inner, e.end_position()).resume != 0 || resumable;
      }
    }
    if (resumable) out.checkpoints.push_back(e.end_position());
    out.rows_before[e.end_position()] = out.offsets.size();
    out.shift_after[e.end_position()] = numbering.shift();
  }
  return out;
}

void ExpectStrictlyIncreasing(const std::vector<uint64_t>& offsets, const std::string& what) {
  for (size_t i = 1; i < offsets.size(); ++i) {
    ASSERT_LT(offsets[i - 1], offsets[i]) << what << ": row " << i << " does not sort after the row before";
  }
}

TEST(RowNumbering, CompressedRowsWithMoreRowsThanBytesStayInBinlogOrder) {
  // MariaDB 10.11, log_bin_compress=ON: 5000 identical rows in 11 compressed events of <= 88
  // bytes (481 rows each), then updates and deletes of some of them.
  Numbered n = NumberFile(kCaptures + "mariadb-10.11.19-compressed-rows.bin");
  ASSERT_GT(n.events_with_more_rows_than_bytes, 0u) << "the capture must hold the collision case";
  ASSERT_GE(n.offsets.size(), 5000u);
  ExpectStrictlyIncreasing(n.offsets, "compressed rows");
}

TEST(RowNumbering, ARowsOrderDoesNotDependOnWhichTablesAreDecoded) {
  Numbered decoded = NumberFile(kCaptures + "mariadb-10.11.19-compressed-rows.bin");
  Numbered skipped = NumberFile(kCaptures + "mariadb-10.11.19-compressed-rows.bin", 4, 0, /*skip_rows=*/true);
  EXPECT_TRUE(skipped.offsets.empty());
  EXPECT_EQ(decoded.shift_after, skipped.shift_after);
}

TEST(RowNumbering, AReplayFromAnyCheckpointNumbersRowsAsTheFirstPass) {
  for (const std::string& path :
       {kCaptures + "mariadb-10.11.19-compressed-rows.bin",
        kFixtures + "blackbeam/rust_mysql_common/test-data/binlogs/transaction_compression.000001",
        kFixtures + "osheroff/mysql-binlog-connector-java/src/test/resources/mysql-bin.compressed"}) {
    Numbered first = NumberFile(path);
    ASSERT_FALSE(first.offsets.empty()) << path;
    ExpectStrictlyIncreasing(first.offsets, path);
    size_t replays = 0, shifted = 0;
    for (uint64_t position : first.checkpoints) {
      if (position >= first.shift_after.rbegin()->first) continue;
      Numbered again = NumberFile(path, position, first.shift_after[position]);
      std::vector<uint64_t> expected(
          first.offsets.begin() + static_cast<std::ptrdiff_t>(first.rows_before[position]),
          first.offsets.end());
      ASSERT_EQ(again.offsets, expected) << path << " replayed from " << position;
      ++replays;
      shifted += first.shift_after[position] > 0;
    }
    EXPECT_GT(replays, 0u);
    if (path.find("compressed-rows") != std::string::npos) {
      EXPECT_GT(shifted, 0u) << "replays from positions behind compressed events, whose shift is not 0";
    }
  }
}

TEST(RowNumbering, ShiftStartsAgainInEveryFile) {
  binlog::Event e;
  e.header.event_size = 100;
  binlog::RowsEvent rows;
  rows.compressed = true;
  rows.inflated_size = 1000;
  e.body = rows;
  RowNumbering n;
  n.Resume("binlog.000001", 0);
  n.BeginEvent(e, "binlog.000001");
  EXPECT_EQ(n.shift(), 900u);
  n.BeginEvent(e, "binlog.000001");
  EXPECT_EQ(n.shift(), 1800u);
  n.BeginEvent(e, "binlog.000002");
  EXPECT_EQ(n.shift(), 900u);
  binlog::Event plain;
  plain.header.event_size = 100;
  plain.body = binlog::RowsEvent{};
  EXPECT_EQ(RowSlotExpansion(plain), 0u);
  // A compressed event that claims fewer inflated bytes than it has rows is refused.
  binlog::RowsEvent liar = rows;
  liar.inflated_size = 1;
  liar.rows.resize(2);
  e.body = liar;
  EXPECT_FALSE(n.Offset(e, liar, 1).ok());
  EXPECT_TRUE(n.Offset(e, liar, 0).ok());
}

TEST(RowVersion, IncreasesWithOffsetAndAcrossFiles) {
  uint64_t a = *RowVersion({42, 4});
  uint64_t b = *RowVersion({42, 5});
  uint64_t end_of_file = *RowVersion({42, kMaxOffset});
  uint64_t next_file = *RowVersion({43, 4});
  EXPECT_LT(a, b);
  EXPECT_LT(end_of_file, next_file);
  EXPECT_GT(a, 0u) << "stream rows always beat snapshot rows (version 0)";
  EXPECT_EQ(*RowVersion({1, 0}), uint64_t{1} << 44);
}

TEST(RowVersion, OutOfRangeCoordinatesAreErrors) {
  EXPECT_FALSE(RowVersion({0, 4}).ok());
  EXPECT_FALSE(RowVersion({kMaxFileSequence + 1, 4}).ok());
  EXPECT_TRUE(RowVersion({kMaxFileSequence, kMaxOffset}).ok());
  auto too_far = RowVersion({1, kMaxOffset + 1});
  ASSERT_FALSE(too_far.ok());
  EXPECT_EQ(too_far.error().kind(), ErrorKind::kUnsupported);
}

TEST(BinlogFileSequence, ParsesSuffixes) {
  EXPECT_EQ(*BinlogFileSequence("binlog.000042"), 42u);
  EXPECT_EQ(*BinlogFileSequence("mysql-bin.1000000"), 1000000u);
  EXPECT_EQ(*BinlogFileSequence("host.name-bin.000001"), 1u);
  EXPECT_FALSE(BinlogFileSequence("binlog").ok());
  EXPECT_FALSE(BinlogFileSequence("binlog.").ok());
  EXPECT_FALSE(BinlogFileSequence("binlog.12a").ok());
  EXPECT_FALSE(BinlogFileSequence("binlog.99999999999").ok());
}

}  // namespace
}  // namespace chsync::pipe
