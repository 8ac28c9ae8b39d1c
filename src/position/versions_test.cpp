#include "position/versions.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "binlog/file_reader.h"
#include "common/test_util.h"

namespace chsync::pipe {
namespace {

using test::TempDir;

// A binlog file of MariaDB 10.11 with compressed rows events (more rows than bytes in some).
const std::string kFile =
    CHSYNC_SOURCE_DIR "/tests/data/binlog/captures/mariadb-10.11.19-compressed-rows.bin";

/// The version of every row of kFile, numbered as the stream does under `name` (the file's name on
/// the server read) and sequence base `base`.
std::vector<uint64_t> VersionsOf(Versions& versions, const std::string& name, int64_t base) {
  std::vector<uint64_t> out;
  auto reader = binlog::FileReader::Open(kFile, {});
  EXPECT_TRUE(reader.ok()) << reader.error().message();
  if (!reader.ok()) return out;
  versions.Resume(name, 0);
  auto number = [&](const binlog::Event& e, uint32_t sequence) {
    const auto* rows = std::get_if<binlog::RowsEvent>(&e.body);
    if (rows == nullptr) return;
    for (size_t k = 0; k < rows->rows.size(); ++k) {
      auto version = versions.Of(sequence, e, *rows, k);
      ASSERT_TRUE(version.ok()) << version.error().message();
      out.push_back(*version);
    }
  };
  while (true) {
    auto ev = (*reader)->Next();
    EXPECT_TRUE(ev.ok());
    if (!ev.ok() || !*ev) break;
    const binlog::Event& e = **ev;
    versions.BeginEvent(e, name);
    auto sequence = versions.Sequence(name, base);
    EXPECT_TRUE(sequence.ok());
    if (!sequence.ok()) break;
    number(e, *sequence);
    if (const auto* payload = std::get_if<binlog::TransactionPayloadEvent>(&e.body)) {
      for (const binlog::Event& inner : payload->events) number(inner, *sequence);
    }
  }
  return out;
}

TEST(VersionsTest, RowsAreNumberedInBinlogOrderAndAReplayNumbersThemAlike) {
  TempDir dir;
  auto versions = Versions::Load(dir.path());
  ASSERT_TRUE(versions.ok()) << versions.error().message();
  std::vector<uint64_t> first = VersionsOf(*versions, "binlog.000003", 0);
  ASSERT_GT(first.size(), 100u);
  for (size_t i = 1; i < first.size(); ++i) ASSERT_LT(first[i - 1], first[i]) << "row " << i;
  EXPECT_EQ(first.front() >> kOffsetBits, 3u);
  // The mark is durable once the file is counted, before any of its rows is numbered.
  auto fresh = Versions::Load(dir.path());
  ASSERT_TRUE(fresh.ok());
  ASSERT_TRUE(fresh->Sequence("binlog.000004", 0).ok());
  EXPECT_EQ(Lineage::Load(dir.path())->high_water(), 4u);
  // A replay (a reconnect, a restart from the checkpoint) under the same base: the same versions.
  auto restarted = Versions::Load(dir.path());
  ASSERT_TRUE(restarted.ok());
  EXPECT_EQ(VersionsOf(*restarted, "binlog.000003", 0), first);
}

// A statement's own rows (a shared table's deletions at a TRUNCATE) sit between the rows of the
// binlog around it: above every row before the statement, below every row after it.
TEST(VersionsTest, AStatementsVersionIsBetweenTheRowsBeforeAndAfterIt) {
  TempDir dir;
  auto versions = Versions::Load(dir.path());
  ASSERT_TRUE(versions.ok()) << versions.error().message();
  auto reader = binlog::FileReader::Open(kFile, {});
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  const std::string name = "binlog.000003";
  versions->Resume(name, 0);
  std::vector<uint64_t> order;  // every row's version and every other event's, in binlog order
  size_t statements = 0;
  while (true) {
    auto ev = (*reader)->Next();
    ASSERT_TRUE(ev.ok());
    if (!*ev) break;
    const binlog::Event& e = **ev;
    versions->BeginEvent(e, name);
    auto sequence = versions->Sequence(name, 0);
    ASSERT_TRUE(sequence.ok());
    std::vector<const binlog::Event*> events = {&e};
    if (const auto* payload = std::get_if<binlog::TransactionPayloadEvent>(&e.body)) {
      for (const binlog::Event& inner : payload->events) events.push_back(&inner);
    }
    bool rows_seen = false;
    for (const binlog::Event* one : events) {
      const auto* rows = std::get_if<binlog::RowsEvent>(&one->body);
      if (rows == nullptr) continue;
      rows_seen = true;
      for (size_t k = 0; k < rows->rows.size(); ++k) {
        auto version = versions->Of(*sequence, *one, *rows, k);
        ASSERT_TRUE(version.ok());
        order.push_back(*version);
      }
    }
    if (rows_seen) continue;
    auto version = versions->OfStatement(name, 0, e);
    ASSERT_TRUE(version.ok()) << version.error().message();
    order.push_back(*version);
    ++statements;
  }
  ASSERT_GT(statements, 10u);
  for (size_t i = 1; i < order.size(); ++i) ASSERT_LT(order[i - 1], order[i]) << "at " << i;
}

/// Numbers kFile as `old_name` under base 0, then as `new_name` in a new epoch, on the same Versions
/// or (`restart`) on one loaded anew: every version of the second pass must be above every one of the
/// first. Returns the counted sequence of the second pass's file (0 on a failure).
uint32_t NewEpochAbove(const std::string& old_name, const std::string& new_name, bool restart) {
  TempDir dir;
  auto first = Versions::Load(dir.path());
  EXPECT_TRUE(first.ok());
  if (!first.ok()) return 0;
  std::vector<uint64_t> before = VersionsOf(*first, old_name, 0);
  auto second = restart ? Versions::Load(dir.path()) : std::move(first);
  EXPECT_TRUE(second.ok());
  if (!second.ok()) return 0;
  auto base = second->lineage().EpochBase(new_name);
  EXPECT_TRUE(base.ok());
  if (!base.ok()) return 0;
  std::vector<uint64_t> after = VersionsOf(*second, new_name, *base);
  EXPECT_FALSE(before.empty() || after.empty());
  if (before.empty() || after.empty()) return 0;
  EXPECT_GT(after.front(), before.back());
  // The old file under the old base still counts as it did (a replay of the old epoch).
  auto old = second->Sequence(old_name, 0);
  EXPECT_TRUE(old.ok());
  auto expected = BinlogFileSequence(old_name);
  if (old.ok() && expected.ok()) EXPECT_EQ(*old, *expected);
  return static_cast<uint32_t>(after.front() >> kOffsetBits);
}

// Another server (a failover, a proxy re-pointed) whose files begin at 1: a new epoch, above every
// row numbered before, also after a restart.
TEST(VersionsTest, AfterAMoveToALowerNumberedBinlogVersionsStillGrow) {
  EXPECT_EQ(NewEpochAbove("binlog.000042", "mysql-bin.000001", /*restart=*/true), 43u);
}

// RESET MASTER with the GTID state kept: the binlog begins again under the same file names. The
// same object counts the same name again under the new base, not from what it counted before.
TEST(VersionsTest, TheSameFileNameUnderANewEpochCountsAnew) {
  EXPECT_EQ(NewEpochAbove("binlog.000001", "binlog.000001", /*restart=*/false), 2u);
}

TEST(VersionsTest, AFileOutsideTheCountableRangeIsRefused) {
  TempDir dir;
  auto versions = Versions::Load(dir.path());
  ASSERT_TRUE(versions.ok());
  auto counted = versions->Sequence("binlog.9999999", 0);
  ASSERT_FALSE(counted.ok());
  EXPECT_EQ(counted.error().kind(), ErrorKind::kUnsupported) << counted.error().message();
}

}  // namespace
}  // namespace chsync::pipe
