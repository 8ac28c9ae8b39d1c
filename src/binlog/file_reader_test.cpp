#include "binlog/file_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace chsync::binlog {
namespace {

const std::string kFixtures = CHSYNC_SOURCE_DIR "/../shared/fixtures/binlog/";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Reads every event; returns the number read and the error that stopped it (empty when none).
std::pair<size_t, std::string> ReadAll(FileReader& r) {
  size_t n = 0;
  while (true) {
    auto e = r.Next();
    if (!e.ok()) return {n, e.error().message()};
    if (!*e) return {n, ""};
    ++n;
  }
}

std::pair<size_t, std::string> ReadBytes(std::string bytes) {
  auto r = FileReader::FromBytes(std::move(bytes), "test.000001");
  if (!r.ok()) return {0, r.error().message()};
  return ReadAll(**r);
}

const std::string kEasyPost = kFixtures + "EasyPost/rust-mysql-binlog/test_data/bin-log.000001";

TEST(FileReaderTest, ReadsEveryEventWithPositionsFromSizes) {
  auto r = FileReader::Open(kEasyPost);
  ASSERT_TRUE(r.ok()) << r.error().message();
  std::vector<uint64_t> positions;
  while (true) {
    auto e = (*r)->Next();
    ASSERT_TRUE(e.ok()) << e.error().message();
    if (!*e) break;
    EXPECT_EQ((*e)->file, "bin-log.000001");
    positions.push_back((*e)->position);
    EXPECT_EQ((*e)->end_position(), (*r)->position());
  }
  std::vector<uint64_t> expected = {4, 123, 194, 259, 459, 524, 598, 652, 718, 749, 814, 888, 942, 1008};
  EXPECT_EQ(positions, expected);
  EXPECT_EQ((*r)->position(), (*r)->size());
}

TEST(FileReaderTest, BadMagicIsCorrupt) {
  std::string bytes = ReadFile(kEasyPost);
  bytes[1] = 'X';
  auto [n, err] = ReadBytes(bytes);
  EXPECT_EQ(n, 0u);
  EXPECT_NE(err.find("not a binlog file"), std::string::npos) << err;
}

TEST(FileReaderTest, TruncatedTailNamesTheOffset) {
  std::string bytes = ReadFile(kEasyPost);
  bytes.resize(1008 + 20);
  auto [n, err] = ReadBytes(bytes);
  EXPECT_EQ(n, 13u);
  EXPECT_NE(err.find("truncated event at offset 1008"), std::string::npos) << err;
}

TEST(FileReaderTest, TruncatedHeaderNamesTheOffset) {
  std::string bytes = ReadFile(kEasyPost);
  bytes.resize(1008 + 7);
  auto [n, err] = ReadBytes(bytes);
  EXPECT_EQ(n, 13u);
  EXPECT_NE(err.find("truncated event header at offset 1008"), std::string::npos) << err;
}

/// Writes `bytes` to a new file under the temp directory and removes it again on destruction.
class TempFile {
 public:
  explicit TempFile(const std::string& bytes) {
    path_ = (std::filesystem::temp_directory_path() /
             ("chsync-file-reader-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++)))
                .string();
    std::ofstream(path_, std::ios::binary) << bytes;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

// A file on disk is read through a window of about 1 MiB: events that straddle its edge and
// events larger than it come back whole, with their positions.
TEST(FileReaderTest, FileOnDiskGivesEveryEventWholeAcrossTheReadWindow) {
  std::string file{'\xfe', 'b', 'i', 'n'};
  std::vector<std::pair<uint64_t, std::string>> events;
  size_t sizes[] = {19, 1000, 777777, 3u << 20, 25, 1u << 20, 4099, 19};
  for (size_t k = 0; k < 300; ++k) {
    size_t size = k < std::size(sizes) ? sizes[k] : 1000 + 37 * k;
    std::string e(size, static_cast<char>('a' + k % 26));
    e[4] = 0x1c;  // IGNORABLE: the reader does not decode raw events
    for (int b = 0; b < 4; ++b) e[9 + b] = static_cast<char>((size >> (8 * b)) & 0xff);
    events.emplace_back(file.size(), e);
    file += e;
  }
  TempFile tmp(file);
  auto r = FileReader::Open(tmp.path());
  ASSERT_TRUE(r.ok()) << r.error().message();
  for (const auto& [position, bytes] : events) {
    auto raw = (*r)->NextRaw();
    ASSERT_TRUE(raw.ok()) << raw.error().message();
    ASSERT_TRUE(raw->has_value());
    EXPECT_EQ((*raw)->position, position);
    ASSERT_EQ((*raw)->bytes.size(), bytes.size()) << "at " << position;
    EXPECT_TRUE((*raw)->bytes == bytes) << "at " << position;
  }
  auto end = (*r)->NextRaw();
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(end->has_value());
}

TEST(FileReaderTest, TruncatedTailOfAFileOnDiskNamesTheOffset) {
  std::string bytes = ReadFile(kEasyPost);
  bytes.resize(1008 + 20);
  TempFile tmp(bytes);
  auto r = FileReader::Open(tmp.path());
  ASSERT_TRUE(r.ok()) << r.error().message();
  auto [n, err] = ReadAll(**r);
  EXPECT_EQ(n, 13u);
  EXPECT_NE(err.find("truncated event at offset 1008"), std::string::npos) << err;
}

TEST(FileReaderTest, EmptyFileOnDiskIsNotABinlog) {
  TempFile tmp("");
  auto r = FileReader::Open(tmp.path());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("not a binlog file"), std::string::npos) << r.error().message();
}

TEST(FileReaderTest, EventSizeBelowHeaderIsCorrupt) {
  std::string bytes = ReadFile(kEasyPost);
  bytes[718 + 9] = 5;
  bytes[718 + 10] = bytes[718 + 11] = bytes[718 + 12] = 0;
  auto [n, err] = ReadBytes(bytes);
  EXPECT_EQ(n, 8u);
  EXPECT_NE(err.find("bad event_size 5 at offset 718"), std::string::npos) << err;
}

TEST(FileReaderTest, SkipToAnEventStartKeepsTheFormat) {
  auto r = FileReader::Open(kEasyPost);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE((*r)->SkipTo(718).ok());
  auto e = (*r)->Next();
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_EQ((*e)->header.type, EventType::kXid);
  EXPECT_TRUE((*e)->checksum_verified);  // the FDE was decoded on the way
}

TEST(FileReaderTest, SkipToTheMiddleOfAnEventFails) {
  auto r = FileReader::Open(kEasyPost);
  ASSERT_TRUE(r.ok());
  Status s = (*r)->SkipTo(700);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("not the start of an event"), std::string::npos) << s.error().message();
}

// The deliberately damaged files among the fixtures (INDEX.md), each stopping where it is broken.
struct CorruptFixture {
  const char* path;
  size_t events_before_error;
  const char* error;
};

class CorruptFixtureTest : public testing::TestWithParam<CorruptFixture> {};

TEST_P(CorruptFixtureTest, StopsWithAnErrorNamingTheOffset) {
  auto r = FileReader::Open(kFixtures + GetParam().path);
  ASSERT_TRUE(r.ok()) << r.error().message();
  auto [n, err] = ReadAll(**r);
  EXPECT_EQ(n, GetParam().events_before_error) << err;
  EXPECT_NE(err.find(GetParam().error), std::string::npos) << err;
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, CorruptFixtureTest,
    testing::Values(
        CorruptFixture{"MariaDB/server/mysql-test/std_data/corrupt-relay-bin.000624", 872,
                       "QUERY event at corrupt-relay-bin.000624:91204: truncated status variables"},
        CorruptFixture{"MariaDB/server/mysql-test/std_data/bug11747416_32228_binlog.000001", 4,
                       "truncated event at offset 316: event_size 65567"},
        CorruptFixture{"MariaDB/server/mysql-test/std_data/mdev-39404-binlog.000001", 1,
                       "MARIA_GTID event at mdev-39404-binlog.000001:256: checksum mismatch"},
        CorruptFixture{"MariaDB/server/mysql-test/suite/binlog/std_data/invalid_row_v2_tag.001", 1,
                       "WRITE_ROWS_V2 event at invalid_row_v2_tag.001:256"},
        CorruptFixture{
            "blackbeam/rust_mysql_common/test-data/binlogs/binlog_truncated_prev_gtid_event.000001", 1,
            "truncated event header at offset 120"},
        CorruptFixture{"blackbeam/rust_mysql_common/test-data/binlogs/binlog_truncated_event.000001", 0,
                       "truncated event header at offset 4"}),
    [](const testing::TestParamInfo<CorruptFixture>& p) { return "Case" + std::to_string(p.index); });

// Flipping one bit anywhere in a real file must give an error or a decoding, never a crash (run
// this under ASan/UBSan). In files with CRC32 checksums, every flip must be detected.
struct FlipCase {
  const char* path;
  bool crc32;
};

class BitFlipTest : public testing::TestWithParam<FlipCase> {};

TEST_P(BitFlipTest, EveryFlipGivesAnErrorNeverACrash) {
  std::string original = ReadFile(kFixtures + GetParam().path);
  ASSERT_GT(original.size(), 4u);
  size_t undetected = 0;
  for (size_t at = 0; at < original.size(); ++at) {
    std::string bytes = original;
    bytes[at] = static_cast<char>(bytes[at] ^ (1u << (at % 8)));
    auto [n, err] = ReadBytes(std::move(bytes));
    bool in_use_flag = at == 4 + 17 && at % 8 == 0;  // LOG_EVENT_BINLOG_IN_USE_F of the FDE
    if (err.empty() && !in_use_flag) ++undetected;
  }
  if (GetParam().crc32) {
    EXPECT_EQ(undetected, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, BitFlipTest,
    testing::Values(FlipCase{"EasyPost/rust-mysql-binlog/test_data/bin-log.000001", true},
                    FlipCase{"blackbeam/rust_mysql_common/test-data/binlogs/vector.binlog", true},
                    FlipCase{"blackbeam/rust_mysql_common/test-data/binlogs/json-opaque.binlog", true},
                    FlipCase{"blackbeam/rust_mysql_common/test-data/binlogs/mariadb-bin.000001", true},
                    FlipCase{"blackbeam/rust_mysql_common/test-data/binlogs/transaction_compression.000001",
                             true},
                    FlipCase{"_generated/vlasky-zongji/binlog-mysql84-fullmeta.events.bin", true},
                    FlipCase{"_generated/vlasky-zongji/binlog-mariadb118.events.bin", true},
                    FlipCase{"MariaDB/server/mysql-test/suite/binlog/std_data/update-full-row.binlog", false},
                    FlipCase{"MariaDB/server/mysql-test/suite/binlog/std_data/ver_trunk_row_v2.001", false},
                    FlipCase{"zalora/binlog-parser/data/fixtures/mysql-bin.07", false}),
    [](const testing::TestParamInfo<FlipCase>& p) { return "File" + std::to_string(p.index); });

}  // namespace
}  // namespace chsync::binlog
