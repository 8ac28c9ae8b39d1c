#include "position/gtid_progress.h"

#include <gtest/gtest.h>

namespace chsync::pipe {
namespace {

std::array<uint8_t, 16> Uuid(uint8_t last) {
  std::array<uint8_t, 16> u{};
  u.fill(0x11);
  u[15] = last;
  return u;
}

TEST(GtidProgress, MariaDbKeepsTheLastGtidPerDomainOnceCommitted) {
  auto p = GtidProgress::Load("0-1-41", /*mariadb=*/true);
  ASSERT_TRUE(p.ok()) << p.error().message();
  p->NoteMariaDb(0, 1, 42);
  EXPECT_EQ(p->ToString(), "0-1-41") << "a GTID counts only when its transaction ended";
  p->Commit();
  EXPECT_EQ(p->ToString(), "0-1-42");
  p->NoteMariaDb(1, 7, 5);
  p->Commit();
  p->NoteMariaDb(0, 2, 43);  // a promoted replica writes on in domain 0
  p->Commit();
  EXPECT_EQ(p->ToString(), "0-2-43,1-7-5");
}

// The open transaction's GTID, for the history table's _chsync_gtid (pipe/history.h).
TEST(GtidProgress, OpenGtidNamesTheTransactionBeingRead) {
  auto maria = GtidProgress::Load("0-1-41", /*mariadb=*/true);
  ASSERT_TRUE(maria.ok());
  EXPECT_EQ(maria->OpenGtid(), "");
  maria->NoteMariaDb(2, 7, 42);
  EXPECT_EQ(maria->OpenGtid(), "2-7-42");
  maria->Commit();
  EXPECT_EQ(maria->OpenGtid(), "");
  auto mysql = GtidProgress::Load("", /*mariadb=*/false);
  ASSERT_TRUE(mysql.ok());
  mysql->NoteMySql(Uuid(1), "", 6);
  EXPECT_EQ(mysql->OpenGtid(), "11111111-1111-1111-1111-111111111101:6");
  mysql->NoteMySql(Uuid(1), "tag", 7);
  EXPECT_EQ(mysql->OpenGtid(), "11111111-1111-1111-1111-111111111101:tag:7");
}

TEST(GtidProgress, AnAbandonedTransactionIsNotApplied) {
  auto p = GtidProgress::Load("", /*mariadb=*/true);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->empty());
  p->NoteMariaDb(0, 1, 9);
  p->Discard();
  p->Commit();  // e.g. a transaction without a GTID of its own
  EXPECT_EQ(p->ToString(), "");
}

TEST(GtidProgress, MySqlAddsEachCommittedGtidToTheExecutedSet) {
  auto p = GtidProgress::Load("11111111-1111-1111-1111-111111111101:1-5", /*mariadb=*/false);
  ASSERT_TRUE(p.ok()) << p.error().message();
  p->NoteMySql(Uuid(0x01), "", 6);
  p->Commit();
  p->NoteMySql(Uuid(0x01), "mytag", 1);
  p->Commit();
  p->NoteMySql(Uuid(0x02), "", 9);
  p->Commit();
  EXPECT_EQ(p->ToString(),
            "11111111-1111-1111-1111-111111111101:1-6:mytag:1,11111111-1111-1111-1111-111111111102:9");
}

TEST(GtidProgress, ACorruptCheckpointTextIsReported) {
  auto maria = GtidProgress::Load("0-1-x", /*mariadb=*/true);
  ASSERT_FALSE(maria.ok());
  EXPECT_EQ(maria.error().kind(), ErrorKind::kCorrupt);
  EXPECT_NE(maria.error().message().find("0-1-x"), std::string::npos) << maria.error().message();
  EXPECT_FALSE(GtidProgress::Load("not-a-uuid:1-2", /*mariadb=*/false).ok());
}

}  // namespace
}  // namespace chsync::pipe
