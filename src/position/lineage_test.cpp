#include "position/lineage.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "common/test_util.h"
#include "position/row_version.h"

namespace chsync::pipe {
namespace {

using test::TempDir;
using test::WriteText;

TEST(LineageTest, ANewDirectoryHasNoMarkAndWritesNoFileUntilARowIsNumbered) {
  TempDir dir;
  auto lineage = Lineage::Load(dir.path());
  ASSERT_TRUE(lineage.ok()) << lineage.error().message();
  EXPECT_EQ(lineage->high_water(), 0u);
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/lineage.json"));
}

TEST(LineageTest, CountingAHigherSequenceSavesTheMarkBeforeReturning) {
  TempDir dir;
  auto lineage = Lineage::Load(dir.path());
  ASSERT_TRUE(lineage.ok());
  auto counted = lineage->Count("binlog.000007", 0);
  ASSERT_TRUE(counted.ok()) << counted.error().message();
  EXPECT_EQ(*counted, 7u);
  // Durable: a process that starts now (after a kill -9) reads the mark.
  auto again = Lineage::Load(dir.path());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->high_water(), 7u);
  // A replay of an earlier file under the same base counts as before and lowers nothing.
  auto earlier = lineage->Count("binlog.000005", 0);
  ASSERT_TRUE(earlier.ok());
  EXPECT_EQ(*earlier, 5u);
  EXPECT_EQ(Lineage::Load(dir.path())->high_water(), 7u);
}

TEST(LineageTest, AnEpochCountsItsFirstFileAboveEverySequenceEverCounted) {
  TempDir dir;
  auto lineage = Lineage::Load(dir.path());
  ASSERT_TRUE(lineage.ok());
  // Rows of binlog.000009 were sent (past the checkpoint, say, in binlog.000004).
  ASSERT_TRUE(lineage->Count("binlog.000009", 0).ok());
  // The pipe moves to a server (or a reset binlog) whose files begin at 1.
  auto base = lineage->EpochBase("mysql-bin.000001");
  ASSERT_TRUE(base.ok()) << base.error().message();
  EXPECT_EQ(*base, 9);
  auto first = lineage->Count("mysql-bin.000001", *base);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, 10u);
  // Every version of the new epoch is above every version of the old one.
  auto old_top = RowVersion({9, kMaxOffset});
  auto new_bottom = RowVersion({*first, 0});
  ASSERT_TRUE(old_top.ok() && new_bottom.ok());
  EXPECT_GT(*new_bottom, *old_top);
  // A server numbered higher than the mark gets a negative base: still one above.
  auto ahead = lineage->EpochBase("binlog.000500");
  ASSERT_TRUE(ahead.ok());
  EXPECT_EQ(*ahead, 11 - 500);
}

TEST(LineageTest, ACrashBeforeTheEpochWasCheckpointedBeginsAnotherAboveIt) {
  TempDir dir;
  {
    auto lineage = Lineage::Load(dir.path());
    ASSERT_TRUE(lineage->Count("binlog.000003", 0).ok());
    auto base = lineage->EpochBase("binlog.000001");
    ASSERT_TRUE(base.ok());
    ASSERT_TRUE(lineage->Count("binlog.000001", *base).ok());  // rows sent, then kill -9
  }
  auto lineage = Lineage::Load(dir.path());
  ASSERT_TRUE(lineage.ok());
  EXPECT_EQ(lineage->high_water(), 4u);
  auto base = lineage->EpochBase("binlog.000001");
  ASSERT_TRUE(base.ok());
  EXPECT_EQ(*lineage->Count("binlog.000001", *base), 5u);
}

TEST(LineageTest, RaiseNeverLowersTheMark) {
  TempDir dir;
  auto lineage = Lineage::Load(dir.path());
  ASSERT_TRUE(lineage->Raise(12).ok());
  ASSERT_TRUE(lineage->Raise(3).ok());
  EXPECT_EQ(Lineage::Load(dir.path())->high_water(), 12u);
}

TEST(LineageTest, SequencesOutOfRangeAreRefusedWithWhatToDo) {
  TempDir dir;
  auto lineage = Lineage::Load(dir.path());
  auto below = lineage->Count("binlog.000002", -5);
  ASSERT_FALSE(below.ok());
  EXPECT_NE(below.error().message().find("chsync resync"), std::string::npos);
  ASSERT_TRUE(lineage->Raise(kMaxFileSequence).ok());
  auto full = lineage->EpochBase("binlog.000001");
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.error().kind(), ErrorKind::kUnsupported);
}

TEST(LineageTest, ADamagedFileIsAnErrorNamingIt) {
  TempDir dir;
  WriteText(dir.path() + "/lineage.json", "{\"high_water_sequence\": \"x\"");
  auto lineage = Lineage::Load(dir.path());
  ASSERT_FALSE(lineage.ok());
  EXPECT_EQ(lineage.error().kind(), ErrorKind::kCorrupt);
  EXPECT_NE(lineage.error().message().find("lineage.json"), std::string::npos);
  WriteText(dir.path() + "/lineage.json", "{\"high_water_sequence\": 99999999}");
  EXPECT_FALSE(Lineage::Load(dir.path()).ok());
}

}  // namespace
}  // namespace chsync::pipe
