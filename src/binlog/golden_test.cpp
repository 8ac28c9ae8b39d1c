#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "binlog/event_printer.h"
#include "binlog/file_reader.h"

namespace chsync::binlog {
namespace {

const std::string kFixtures = CHSYNC_SOURCE_DIR "/../shared/fixtures/binlog/";
const std::string kGolden = CHSYNC_SOURCE_DIR "/tests/data/binlog/golden/";

/// A MANIFEST fixture path: under the shared fixtures, or, starting with "tests/", in this
/// repository (binlogs captured for chsync: tests/data/binlog/captures/).
std::string FixturePath(const std::string& fixture) {
  if (fixture.starts_with("tests/")) return CHSYNC_SOURCE_DIR "/" + fixture;
  return kFixtures + fixture;
}

struct GoldenCase {
  std::string golden;
  std::string fixture;
};

std::vector<GoldenCase> ReadManifest() {
  std::vector<GoldenCase> cases;
  std::ifstream in(kGolden + "MANIFEST");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    GoldenCase c;
    fields >> c.golden >> c.fixture;
    if (!c.fixture.empty()) cases.push_back(c);
  }
  return cases;
}

/// Every event of the fixture as `chsync decode` prints it, then "ERROR <message>" if it stops.
std::string DecodeAll(const std::string& path) {
  std::string out;
  auto reader = FileReader::Open(path);
  if (!reader.ok()) return "ERROR " + reader.error().message() + "\n";
  while (true) {
    auto next = (*reader)->Next();
    if (!next.ok()) {
      out += "ERROR " + next.error().message() + "\n";
      break;
    }
    if (!*next) break;
    AppendEvent(**next, PrintFormat::kText, out);
  }
  return out;
}

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

class GoldenTest : public testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenTest, DecodesAsRecorded) {
  const GoldenCase& c = GetParam();
  std::string actual = DecodeAll(FixturePath(c.fixture));
  std::string golden_path = kGolden + c.golden;
  if (std::getenv("CHSYNC_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(golden_path, std::ios::binary) << actual;
  }
  std::ifstream in(golden_path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "missing golden file " << golden_path;
  std::stringstream expected;
  expected << in.rdbuf();
  std::vector<std::string> want = Lines(expected.str()), got = Lines(actual);
  for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
    ASSERT_EQ(want[i], got[i]) << c.golden << " line " << i + 1;
  }
  EXPECT_EQ(want.size(), got.size()) << c.golden << ": line count differs";
}

std::string CaseName(const testing::TestParamInfo<GoldenCase>& info) {
  std::string name = info.param.golden.substr(0, info.param.golden.rfind('.'));
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GoldenTest, testing::ValuesIn(ReadManifest()), CaseName);

}  // namespace
}  // namespace chsync::binlog
