#include "state/ddl_journal.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "binlog/compression.h"
#include "common/test_util.h"

namespace chsync::pipe {
namespace {

using test::Exists;

const DdlStep kRoom0{"binlog.000003", 516086236, "0/room"};
const DdlStep kRename0{"binlog.000003", 516086236, "0/rename"};
const DdlStep kRename1{"binlog.000003", 516086236, "1/rename"};
const DdlStep kLater{"binlog.000004", 120, "0/rename"};

TEST(DdlJournal, KeyNamesTheStatementAndTheStep) {
  EXPECT_EQ(kRename1.ToString(), "binlog.000003:516086236#1/rename");
}

TEST(DdlJournal, NoFileIsAnEmptyJournal) {
  test::TempDir dir("chsync-ddl-journal-test");
  auto journal = DdlJournal::Open(dir);
  ASSERT_TRUE(journal.ok()) << journal.error().message();
  EXPECT_TRUE(journal->steps().empty());
  EXPECT_FALSE(journal->Done(kRoom0));
  EXPECT_FALSE(Exists(journal->path()));  // nothing written until a step is recorded
}

TEST(DdlJournal, RecordedStepsAreDoneAfterReopening) {
  test::TempDir dir("chsync-ddl-journal-test");
  {
    auto journal = DdlJournal::Open(dir);
    ASSERT_TRUE(journal.ok());
    ASSERT_TRUE(journal->Record(kRoom0).ok());
    ASSERT_TRUE(journal->Record(kRename0).ok());
    ASSERT_TRUE(journal->Record(kRename0).ok());  // once is enough
    EXPECT_TRUE(journal->Done(kRoom0));
    EXPECT_TRUE(journal->Done(kRename0));
    EXPECT_FALSE(journal->Done(kRename1));
  }
  auto again = DdlJournal::Open(dir);
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(again->steps(), (std::vector<DdlStep>{kRoom0, kRename0}));
  EXPECT_FALSE(again->Done(kRename1));
  EXPECT_FALSE(again->Done({"binlog.000003", 516086237, "0/rename"}));  // another statement
  ASSERT_TRUE(again->Record(kRename1).ok());
  auto third = DdlJournal::Open(dir);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->steps(), (std::vector<DdlStep>{kRoom0, kRename0, kRename1}));
}

TEST(DdlJournal, StepsBeforeTheResumePositionAreForgotten) {
  test::TempDir dir("chsync-ddl-journal-test");
  auto journal = DdlJournal::Open(dir);
  ASSERT_TRUE(journal.ok());
  ASSERT_TRUE(journal->Record(kRename0).ok());
  ASSERT_TRUE(journal->Record(kLater).ok());
  // A checkpoint at the statement's own start: it may still be replayed.
  ASSERT_TRUE(journal->Forget("binlog.000003", 516086236).ok());
  EXPECT_EQ(journal->steps(), (std::vector<DdlStep>{kRename0, kLater}));
  // Past it (by position, and by file number: binlog.000010 comes after binlog.000004).
  ASSERT_TRUE(journal->Forget("binlog.000003", 516086300).ok());
  EXPECT_EQ(journal->steps(), (std::vector<DdlStep>{kLater}));
  auto reopened = DdlJournal::Open(dir);
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ(reopened->steps(), (std::vector<DdlStep>{kLater}));
  ASSERT_TRUE(reopened->Forget("binlog.000010", 4).ok());
  EXPECT_TRUE(reopened->steps().empty());
  EXPECT_FALSE(Exists(reopened->path()));  // nothing left: no file
  ASSERT_TRUE(reopened->Forget("binlog.000011", 4).ok());
  ASSERT_TRUE(reopened->Record(kLater).ok());  // and a new one when needed
  EXPECT_TRUE(Exists(reopened->path()));
}

TEST(DdlJournal, TornLastLineIsIgnoredAndCutOff) {
  test::TempDir dir("chsync-ddl-journal-test");
  std::string path;
  std::string whole;
  {
    auto journal = DdlJournal::Open(dir);
    ASSERT_TRUE(journal.ok());
    ASSERT_TRUE(journal->Record(kRoom0).ok());
    ASSERT_TRUE(journal->Record(kRename0).ok());
    path = journal->path();
    whole = test::ReadText(path);
  }
  const size_t first_line = whole.find('\n') + 1;
  // Every cut inside the second line (and a second line of zeros, as a crash may leave) leaves
  // the first step only.
  std::vector<std::string> damaged;
  for (size_t cut = first_line + 1; cut < whole.size(); ++cut) damaged.push_back(whole.substr(0, cut));
  damaged.push_back(whole.substr(0, first_line) + std::string(20, '\0'));
  damaged.push_back(whole.substr(0, first_line) + std::string(20, '\0') + "\n");
  std::string flipped = whole;
  flipped[whole.size() - 3] ^= 0x01;  // in the step's name: its checksum no longer fits
  damaged.push_back(flipped);
  for (const std::string& content : damaged) {
    SCOPED_TRACE(testing::PrintToString(content));
    test::WriteText(path, content);
    auto journal = DdlJournal::Open(dir);
    ASSERT_TRUE(journal.ok()) << journal.error().message();
    EXPECT_EQ(journal->steps(), (std::vector<DdlStep>{kRoom0}));
    EXPECT_EQ(test::ReadText(path), whole.substr(0, first_line));  // cut off: the next record starts a line
    ASSERT_TRUE(journal->Record(kRename1).ok());
    auto reopened = DdlJournal::Open(dir);
    ASSERT_TRUE(reopened.ok()) << reopened.error().message();
    EXPECT_EQ(reopened->steps(), (std::vector<DdlStep>{kRoom0, kRename1}));
  }
  // A torn only line: an empty journal, and no file.
  test::WriteText(path, whole.substr(0, 5));
  auto journal = DdlJournal::Open(dir);
  ASSERT_TRUE(journal.ok());
  EXPECT_TRUE(journal->steps().empty());
  EXPECT_FALSE(Exists(path));
}

TEST(DdlJournal, DamagedLineBeforeTheLastIsAnError) {
  test::TempDir dir("chsync-ddl-journal-test");
  std::string path;
  std::string whole;
  {
    auto journal = DdlJournal::Open(dir);
    ASSERT_TRUE(journal.ok());
    ASSERT_TRUE(journal->Record(kRoom0).ok());
    ASSERT_TRUE(journal->Record(kRename0).ok());
    path = journal->path();
    whole = test::ReadText(path);
  }
  for (size_t i = 0; i + 1 < whole.find('\n'); ++i) {
    std::string flipped = whole;
    flipped[i] ^= 0x04;
    test::WriteText(path, flipped);
    auto journal = DdlJournal::Open(dir);
    ASSERT_FALSE(journal.ok()) << "flip at " << i;
    EXPECT_EQ(journal.error().kind(), ErrorKind::kCorrupt);
    EXPECT_NE(journal.error().message().find(path), std::string::npos) << journal.error().message();
    EXPECT_NE(journal.error().message().find("line 1"), std::string::npos) << journal.error().message();
    EXPECT_EQ(test::ReadText(path), flipped);  // left for the user to look at
  }
}

TEST(DdlJournal, LinesThatDoNotParseAreDamaged) {
  test::TempDir dir("chsync-ddl-journal-test");
  const std::string path = static_cast<const std::string&>(dir) + "/ddl-journal";
  for (const std::string& line :
       {std::string(""), std::string("0000000"), std::string("zzzzzzzz binlog.000001:4#0/room"),
        std::string("00000000 binlog.000001:4#0/room"), std::string("00000000")}) {
    SCOPED_TRACE(line);
    std::string twice = line;
    twice.append("\n").append(line).append("\n");
    test::WriteText(path, twice);
    auto journal = DdlJournal::Open(dir);
    ASSERT_FALSE(journal.ok());
    EXPECT_EQ(journal.error().kind(), ErrorKind::kCorrupt);
  }
  // The checksum fits, the key does not: no position, no step, no file, a position that is no number.
  for (const std::string key : {"binlog.000001#0/room", "binlog.000001:4", "binlog.000001:4#", ":4#0/room",
                                "binlog.000001:x4#0/room", "binlog.000001:#0/room"}) {
    SCOPED_TRACE(key);
    const std::string line = fmt::format("{:08x} {}\n", binlog::Crc32(key), key);
    test::WriteText(path, line + line);
    auto journal = DdlJournal::Open(dir);
    ASSERT_FALSE(journal.ok());
    EXPECT_EQ(journal.error().kind(), ErrorKind::kCorrupt);
  }
}

}  // namespace
}  // namespace chsync::pipe
