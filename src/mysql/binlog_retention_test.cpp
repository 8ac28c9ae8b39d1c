#include "mysql/binlog_retention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace chsync::mysql {
namespace {

constexpr uint64_t kDay = 86400;
constexpr uint64_t kT0 = 1795971600000;  // 2026-11-29T17:00:00Z

RetentionReading Reading(uint64_t at_s, std::vector<BinaryLogFile> files, uint64_t expire = kDay) {
  RetentionReading r;
  r.files = std::move(files);
  r.expire_seconds = expire;
  r.read_at_ms = kT0 + at_s * 1000;
  return r;
}

QueryResult Variables(const std::vector<std::pair<std::string, std::string>>& values) {
  QueryResult r;
  r.columns = {"Variable_name", "Value"};
  for (const auto& [name, value] : values) r.rows.push_back({name, value});
  return r;
}

void ExpectNear(double actual, double expected, const std::string& what) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(actual)) << what << ": " << actual;
  } else {
    EXPECT_NEAR(actual, expected, 1e-6 * std::max(1.0, std::fabs(expected))) << what;
  }
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Readings fed in order, then one checkpoint asked about.
struct HeadroomCase {
  const char* name;
  std::vector<RetentionReading> readings;
  std::string file;
  uint64_t offset;
  uint64_t bytes_behind;
  double rate;
  double headroom_bytes;
  double headroom_seconds;
  bool present;
};

TEST(RetentionEstimator, HeadroomTable) {
  const HeadroomCase cases[] = {
      {"no readings: unknown", {}, "binlog.000001", 4, 0, 0, kNaN, kNaN, true},
      {"one reading: no rate yet, the open file's age is known",
       {Reading(0, {{"binlog.000001", 1000}, {"binlog.000002", 500}})},
       "binlog.000002",
       100,
       400,
       0,
       kNaN,
       double(kDay),
       true},
      {"one reading: a closed file's age is unknown",
       {Reading(0, {{"binlog.000001", 1000}, {"binlog.000002", 500}})},
       "binlog.000001",
       100,
       1400,
       0,
       kNaN,
       kNaN,
       true},
      {"rate from two readings, checkpoint in a closed file",
       {Reading(0, {{"binlog.000001", 1000}, {"binlog.000002", 500}}),
        Reading(100, {{"binlog.000001", 1000}, {"binlog.000002", 10500}})},
       // 10000 bytes in 100 s: 100 B/s; 10500 bytes written since binlog.000001 closed: 105 s old.
       "binlog.000001",
       0,
       11500,
       100,
       100.0 * kDay - 10500,
       kDay - 105.0,
       true},
      {"checkpoint in the newest (open) file",
       {Reading(0, {{"binlog.000001", 1000}, {"binlog.000002", 500}}),
        Reading(100, {{"binlog.000001", 1000}, {"binlog.000002", 10500}})},
       "binlog.000002",
       10000,
       500,
       100,
       100.0 * kDay,
       double(kDay),
       true},
      {"rotation between readings counts the old file's growth and the whole new file",
       {Reading(0, {{"binlog.000001", 1000}}),
        Reading(10, {{"binlog.000001", 1600}, {"binlog.000002", 400}})},
       "binlog.000001",
       1600,
       400,
       100,
       100.0 * kDay - 400,
       kDay - 4.0,
       true},
      {"a purge between readings does not make the rate negative",
       {Reading(0, {{"binlog.000001", 5000}, {"binlog.000002", 5000}, {"binlog.000003", 100}}),
        Reading(10, {{"binlog.000003", 300}})},
       "binlog.000003",
       300,
       0,
       20,
       20.0 * kDay,
       double(kDay),
       true},
      {"a purge and a rotation between readings",
       {Reading(0, {{"binlog.000001", 5000}, {"binlog.000002", 100}}),
        Reading(10, {{"binlog.000002", 800}, {"binlog.000003", 300}})},
       "binlog.000002",
       0,
       1100,
       100,
       100.0 * kDay - 300,
       kDay - 3.0,
       true},
      {"checkpoint file purged",
       {Reading(0, {{"binlog.000005", 1000}, {"binlog.000006", 200}}),
        Reading(10, {{"binlog.000005", 1000}, {"binlog.000006", 1200}})},
       "binlog.000003",
       77,
       2200,
       100,
       0,
       0,
       false},
      {"checkpoint file of another base name is not there",
       {Reading(0, {{"binlog.000005", 1000}})},
       "mysql-bin.000007",
       4,
       1000,
       0,
       0,
       0,
       false},
      {"checkpoint ahead of the reading: as young as the newest file",
       {Reading(0, {{"binlog.000005", 1000}}), Reading(10, {{"binlog.000005", 2000}})},
       "binlog.000006",
       4,
       0,
       100,
       100.0 * kDay,
       double(kDay),
       true},
      {"expire 0: never purged by age",
       {Reading(0, {{"binlog.000001", 1000}, {"binlog.000002", 0}}, 0),
        Reading(10, {{"binlog.000001", 1000}, {"binlog.000002", 1000}}, 0)},
       "binlog.000001",
       0,
       2000,
       100,
       kNaN,
       kNaN,
       true},
      {"overdue: negative headroom",
       // 1 B/s, expire 100 s; 150 bytes since binlog.000001 closed: 150 s old, 50 s overdue.
       {Reading(0, {{"binlog.000001", 1000}, {"binlog.000002", 50}}, 100),
        Reading(100, {{"binlog.000001", 1000}, {"binlog.000002", 150}}, 100)},
       "binlog.000001",
       1000,
       150,
       1,
       -50,
       -50,
       true},
      {"quiet server: a closed file's age is unknown",
       {Reading(0, {{"binlog.000001", 1000}, {"binlog.000002", 50}}),
        Reading(100, {{"binlog.000001", 1000}, {"binlog.000002", 50}})},
       "binlog.000001",
       0,
       1050,
       0,
       kNaN,
       kNaN,
       true},
      {"offset past the end of the file counts as its end",
       {Reading(0, {{"binlog.000001", 1000}})},
       "binlog.000001",
       5000,
       0,
       0,
       kNaN,
       double(kDay),
       true},
      {"empty checkpoint file: unknown",
       {Reading(0, {{"binlog.000001", 1000}})},
       "",
       0,
       0,
       0,
       kNaN,
       kNaN,
       true},
      {"reset of the binlogs: the shrunk file counts whole, the rate stays positive",
       {Reading(0, {{"binlog.000001", 9000}, {"binlog.000002", 9000}}),
        Reading(10, {{"binlog.000001", 500}})},
       "binlog.000001",
       0,
       500,
       50,
       50.0 * kDay,
       double(kDay),
       true},
  };
  for (const HeadroomCase& c : cases) {
    RetentionEstimator estimator;
    for (const RetentionReading& r : c.readings) estimator.Add(r);
    RetentionHeadroom h = estimator.For(c.file, c.offset);
    EXPECT_EQ(h.bytes_behind, c.bytes_behind) << c.name;
    ExpectNear(h.write_rate_bytes_per_s, c.rate, std::string(c.name) + " (rate)");
    ExpectNear(h.headroom_bytes, c.headroom_bytes, std::string(c.name) + " (bytes)");
    ExpectNear(h.headroom_seconds, c.headroom_seconds, std::string(c.name) + " (seconds)");
    EXPECT_EQ(h.checkpoint_file_present, c.present) << c.name;
  }
}

TEST(RetentionEstimator, RateCoversTheLastFiveMinutesOfReadings) {
  RetentionEstimator estimator;
  // 10 B/s for the first 10 minutes, then 100 B/s for 10 minutes, a reading every 30 s.
  uint64_t size = 0;
  for (uint64_t t = 0; t <= 1200; t += 30) {
    estimator.Add(Reading(t, {{"binlog.000001", size}}));
    size += t < 600 ? 300 : 3000;
  }
  EXPECT_NEAR(estimator.WriteRate(), 100, 1e-9) << "the old, slower readings have left the window";
  EXPECT_NEAR(estimator.For("binlog.000001", 0).write_rate_bytes_per_s, 100, 1e-9);
}

TEST(RetentionEstimator, RateNeverNegativeAcrossPurgesAndRotations) {
  RetentionEstimator estimator;
  // A server that rotates every 1000 bytes and keeps three files, read every 5 s at 100 B/s.
  uint64_t written = 0;
  for (uint64_t t = 0; t <= 600; t += 5) {
    std::vector<BinaryLogFile> files;
    uint64_t newest = written / 1000;
    for (uint64_t n = newest >= 2 ? newest - 2 : 0; n <= newest; ++n) {
      uint64_t size = n < newest ? 1000 : written % 1000;
      files.push_back(
          {"binlog." + std::string(6 - std::to_string(n + 1).size(), '0') + std::to_string(n + 1), size});
    }
    estimator.Add(Reading(t, files));
    EXPECT_GE(estimator.WriteRate(), 0) << t;
    written += 500;
  }
  EXPECT_NEAR(estimator.WriteRate(), 100, 1e-9);
}

TEST(RetentionEstimator, ClockGoingBackRestartsTheWindow) {
  RetentionEstimator estimator;
  estimator.Add(Reading(100, {{"binlog.000001", 0}}));
  estimator.Add(Reading(200, {{"binlog.000001", 1000}}));
  EXPECT_NEAR(estimator.WriteRate(), 10, 1e-9);
  estimator.Add(Reading(50, {{"binlog.000001", 2000}}));
  EXPECT_EQ(estimator.WriteRate(), 0) << "one reading since the clock jumped";
  estimator.Add(Reading(60, {{"binlog.000001", 2500}}));
  EXPECT_NEAR(estimator.WriteRate(), 50, 1e-9);
}

TEST(CompareBinlogNames, ByNumberWithinABaseName) {
  EXPECT_LT(CompareBinlogNames("binlog.000009", "binlog.000010"), 0);
  EXPECT_LT(CompareBinlogNames("binlog.999999", "binlog.1000000"), 0);
  EXPECT_GT(CompareBinlogNames("binlog.1000000", "binlog.999999"), 0);
  EXPECT_EQ(CompareBinlogNames("binlog.000042", "binlog.000042"), 0);
  EXPECT_LT(CompareBinlogNames("a.log", "b.log"), 0) << "no numeric extension: as text";
}

TEST(ExpireSeconds, FromTheVariablesOfEachServer) {
  struct Case {
    const char* name;
    std::vector<std::pair<std::string, std::string>> variables;
    uint64_t expected;
  };
  const Case cases[] = {
      {"MySQL 8 default", {{"binlog_expire_logs_seconds", "2592000"}, {"expire_logs_days", "0"}}, 2592000},
      {"MySQL 8 auto purge off",
       {{"binlog_expire_logs_auto_purge", "OFF"}, {"binlog_expire_logs_seconds", "2592000"}},
       0},
      {"MySQL 8 auto purge on",
       {{"binlog_expire_logs_auto_purge", "ON"}, {"binlog_expire_logs_seconds", "60"}},
       60},
      {"MySQL 8.4 without expire_logs_days", {{"binlog_expire_logs_seconds", "3600"}}, 3600},
      {"seconds 0, days set", {{"binlog_expire_logs_seconds", "0"}, {"expire_logs_days", "7"}}, 7 * kDay},
      {"MariaDB 10.11 fractional days",
       {{"binlog_expire_logs_seconds", "0"}, {"expire_logs_days", "0.500000"}},
       kDay / 2},
      {"MariaDB 10.11 both set (aliases)",
       {{"binlog_expire_logs_seconds", "172800"}, {"expire_logs_days", "2.000000"}},
       2 * kDay},
      {"never expires", {{"binlog_expire_logs_seconds", "0"}, {"expire_logs_days", "0.000000"}}, 0},
      {"old server with days only", {{"expire_logs_days", "10"}}, 10 * kDay},
      {"neither variable", {}, 0},
      {"garbage", {{"binlog_expire_logs_seconds", "x"}, {"expire_logs_days", "y"}}, 0},
  };
  for (const Case& c : cases)
    EXPECT_EQ(ExpireSecondsFromVariables(Variables(c.variables)), c.expected) << c.name;
}

}  // namespace
}  // namespace chsync::mysql
