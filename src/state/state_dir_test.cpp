#include "state/state_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace chsync::pipe {
namespace {

std::string TempDir() {
  char pattern[] = "/tmp/chsync-state-test.XXXXXX";
  const char* dir = mkdtemp(pattern);
  EXPECT_NE(dir, nullptr);
  return dir != nullptr ? dir : "/tmp";
}

Checkpoint WithResume(const std::string& file, uint64_t pos) {
  Checkpoint c;
  c.resume = {file, pos, ""};
  return c;
}

TEST(StateDir, FreshDirectoryHasNoCheckpoint) {
  std::string dir = TempDir() + "/nested/state";
  auto state = StateDir::Open(dir);
  ASSERT_TRUE(state.ok()) << state.error().message();
  auto loaded = (*state)->Load();
  ASSERT_TRUE(loaded.ok());
  EXPECT_FALSE(loaded->has_value());
}

TEST(StateDir, SaveThenLoadReturnsTheLastSave) {
  std::string dir = TempDir();
  auto state = StateDir::Open(dir);
  ASSERT_TRUE(state.ok());
  ASSERT_TRUE((*state)->Save(WithResume("binlog.000001", 100)).ok());
  ASSERT_TRUE((*state)->Save(WithResume("binlog.000002", 4)).ok());
  auto loaded = ReadCheckpoint(dir);
  ASSERT_TRUE(loaded.ok());
  ASSERT_TRUE(loaded->has_value());
  EXPECT_EQ((*loaded)->resume.file, "binlog.000002");
  EXPECT_EQ((*loaded)->resume.position, 4u);
  EXPECT_NE(access((dir + "/checkpoint.json.tmp").c_str(), F_OK), 0) << "temp file left behind";
}

TEST(StateDir, LeftoverTempFileFromACrashIsIgnored) {
  std::string dir = TempDir();
  auto state = StateDir::Open(dir);
  ASSERT_TRUE((*state)->Save(WithResume("binlog.000003", 77)).ok());
  std::ofstream(dir + "/checkpoint.json.tmp") << "{\"format\": 1, \"half";  // crash during a later save
  auto loaded = (*state)->Load();
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ((*loaded)->resume.position, 77u);
}

TEST(StateDir, DamagedCheckpointIsAnErrorNamingThePath) {
  std::string dir = TempDir();
  std::ofstream(dir + "/checkpoint.json") << "garbage";
  auto loaded = ReadCheckpoint(dir);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().kind(), ErrorKind::kCorrupt);
  EXPECT_NE(loaded.error().message().find(dir + "/checkpoint.json"), std::string::npos);
  EXPECT_NE(loaded.error().message().find("resync"), std::string::npos);
}

TEST(StateDir, SecondOpenOfTheSameDirectoryIsRefused) {
  std::string dir = TempDir();
  auto first = StateDir::Open(dir);
  ASSERT_TRUE(first.ok());
  auto second = StateDir::Open(dir);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().kind(), ErrorKind::kConfig);
  EXPECT_NE(second.error().message().find("in use by another chsync process"), std::string::npos);
  first->reset();
  EXPECT_TRUE(StateDir::Open(dir).ok()) << "the lock is released when the holder goes away";
}

TEST(StateDir, UnwritableLocationIsAClearError) {
  auto state = StateDir::Open("/proc/chsync-cannot-exist/state");
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.error().kind(), ErrorKind::kIo);
  EXPECT_NE(state.error().message().find("/proc/chsync-cannot-exist"), std::string::npos);
}

}  // namespace
}  // namespace chsync::pipe
