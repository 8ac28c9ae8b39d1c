#include "cli/status_text.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace chsync::cli {
namespace {

/// A checkpoint of `tenants` databases × users, orders, events, all copied; tenant 0500's orders
/// parked, tenant 0900's users paused, tenant 0100's events (with 100 tenants or more) being copied.
pipe::Checkpoint ManyTables(int tenants) {
  pipe::Checkpoint c;
  c.resume = {"binlog.000007", 1234, ""};
  for (int i = 1; i <= tenants; ++i) {
    const std::string db = fmt::format("tenant_{:04d}", i);
    for (const char* name : {"users", "orders", "events"}) {
      pipe::TableSnapshot t;
      t.database = db;
      t.table = name;
      t.state = pipe::TableSnapshot::State::kDone;
      t.rows_copied = 3;
      c.snapshot.push_back(t);
      pipe::DestinationState d;
      d.table = db + "." + name;
      d.clickhouse_database = "bench";
      d.clickhouse_table = name;
      c.destinations.push_back(d);
    }
  }
  if (tenants >= 100) c.snapshot[3 * 99 + 2].state = pipe::TableSnapshot::State::kCopying;
  c.held.push_back(
      {"tenant_0500.orders", "parked", "ClickHouse refused an INSERT", "", "binlog.000007:99", 0});
  c.held.push_back({"tenant_0900.users", "paused", "chsync pause", "", "binlog.000007:120", 0});
  return c;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

size_t LineOf(const std::vector<std::string>& lines, std::string_view start) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find(start) == 0) return i;
  }
  return lines.size();
}

TEST(StatusTextTest, ManyTablesSummarizeFirstListHeldTablesFirstAndCutTheRest) {
  StatusTextOptions options;
  options.state_dir = "/var/lib/chsync/tenants";
  const std::string text = StatusText(ManyTables(1000), {}, options);
  const std::vector<std::string> lines = Lines(text);

  EXPECT_NE(text.find("tables         3000 (2999 copied, 1 to copy) into 3 ClickHouse tables\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("by state       2997 streaming, 1 parked, 1 paused, 1 copying\n"), std::string::npos)
      << text;

  const size_t held = LineOf(lines, "held tables    2 (1 parked, 1 paused)");
  const size_t parked = LineOf(lines, "  tenant_0500.orders  parked since");
  const size_t paused = LineOf(lines, "  tenant_0900.users  paused since");
  const size_t copying = LineOf(lines, "  tenant_0100.events  snapshot copying, 3 rows copied");
  const size_t first_done = LineOf(lines, "  tenant_0001.users  snapshot done, 3 rows copied");
  ASSERT_LT(first_done, lines.size()) << text;
  EXPECT_LT(LineOf(lines, "by state"), held);
  EXPECT_LT(held, parked);
  EXPECT_LT(parked, paused);
  EXPECT_LT(paused, copying) << "held tables come before the others";
  EXPECT_LT(copying, first_done) << "a table being copied comes before the copied ones";
  EXPECT_EQ(text.find("tenant_0999.users  snapshot done"), std::string::npos) << "the list is cut";
  EXPECT_NE(
      text.find("  … and 2980 more table lines (`chsync status --state /var/lib/chsync/tenants --all` lists "
                "every one, `--table PATTERN` the ones matching)\n"),
      std::string::npos)
      << text;
  EXPECT_LT(lines.size(), 60U) << text;
}

TEST(StatusTextTest, AllListsEveryTableAndAPatternOnlyTheMatchingOnes) {
  StatusTextOptions options;
  options.state_dir = "st";
  options.shown = 0;
  std::string text = StatusText(ManyTables(1000), {}, options);
  EXPECT_NE(text.find("  tenant_0999.users  snapshot done"), std::string::npos);
  EXPECT_EQ(text.find("more table lines"), std::string::npos);

  options.shown = 20;
  options.tables = {"tenant_09??.users"};
  text = StatusText(ManyTables(1000), {}, options);
  EXPECT_NE(text.find("  tenant_0999.users  snapshot done"), std::string::npos) << text;
  EXPECT_NE(text.find("  tenant_0900.users  paused since"), std::string::npos) << text;
  EXPECT_EQ(text.find("tenant_0500.orders  parked since"), std::string::npos) << text;
  EXPECT_EQ(text.find("tenant_0998.orders"), std::string::npos) << text;
  EXPECT_NE(text.find("by state       2997 streaming, 1 parked, 1 paused, 1 copying\n"), std::string::npos)
      << "the counts cover every table";
}

TEST(StatusTextTest, AFewTablesAreListedAsBefore) {
  pipe::Checkpoint c = ManyTables(2);
  c.held.clear();
  for (pipe::DestinationState& d : c.destinations)
    d.clickhouse_database = d.table.substr(0, d.table.find('.'));
  StatusTextOptions options;
  options.state_dir = "st";
  const std::string text = StatusText(c, {}, options);
  EXPECT_NE(text.find("tables         6 (6 copied)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("by state       6 streaming\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  tenant_0002.events  snapshot done, 3 rows copied\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("more"), std::string::npos) << text;
}

}  // namespace
}  // namespace chsync::cli
