#include "http/status_page.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace chsync::http {
namespace {

constexpr uint64_t kNow = 1767225600000;  // 2026-01-01 00:00:00 UTC

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

/// The points="…" of the n-th polyline.
std::string PolylinePoints(const std::string& html, int n) {
  size_t at = 0;
  for (int i = 0; i <= n; ++i) {
    at = html.find("<polyline", at);
    if (at == std::string::npos) return "";
    at += 1;
  }
  size_t start = html.find("points=\"", at) + 8;
  return html.substr(start, html.find('"', start) - start);
}

StatusPageData Sample() {
  StatusPageData d;
  d.title = "chsync \u00b7 shop";
  d.phase = "streaming";
  d.source = "mysql://repl:***@db1.internal:3306";
  d.destination = "clickhouse://default@ch1.internal:8123/shop";
  d.position = "binlog.000042:123456789";
  d.gtid_position = "0-1-98765";
  d.lag_seconds = 1.4;
  d.seconds_since_last_event = 0.3;
  d.rows_applied = 48213907;
  d.transactions = 1203877;
  d.started_at_ms = kNow - (2 * 3600 + 5 * 60) * 1000ULL;
  d.updated_at_ms = kNow - 800;
  d.now_ms = kNow;
  d.retention_headroom_bytes = 3.4e9;
  d.retention_headroom_seconds = 5 * 86400 + 4 * 3600;
  for (int i = 0; i < 720; ++i) {
    uint64_t at = kNow - 3600 * 1000ULL + static_cast<uint64_t>(i) * 5000;
    double wave = std::sin(i / 40.0);
    d.lag_series.push_back(
        {at, std::max(0.0, 1.2 + 0.8 * wave + (i > 400 && i < 460 ? (i - 400) * 0.5 : 0))});
    d.rate_series.push_back({at, 1200 + 700 * std::cos(i / 55.0) + (i % 37) * 9});
  }
  d.tables = {
      {"shop.orders", "streaming", 30120044, 2500000, 2500000},
      {"shop.order_items", "streaming", 17002211, 9800000, 9700000},
      {"shop.customers", "snapshot", 1091652, 431000, 1200000},
      {"shop.audit_log", "parked", 0, 0, 0},
  };
  d.schema_changes = {
      {kNow - 50ULL * 60 * 1000,
       "binlog.000041:88812",
       "shop.orders",
       "ALTER TABLE orders ADD COLUMN coupon VARCHAR(32) NULL AFTER total",
       {"ALTER TABLE shop.orders ADD COLUMN coupon Nullable(String) AFTER total"}},
      {kNow - 12ULL * 60 * 1000,
       "binlog.000042:1002",
       "shop.customers",
       "ALTER TABLE customers MODIFY email VARCHAR(320) NOT NULL",
       {}},
  };
  return d;
}

TEST(StatusPageTest, EscapesUntrustedStrings) {
  StatusPageData d = Sample();
  d.tables.push_back({"shop.<script>alert(1)</script>", "streaming", 1, 0, 0});
  d.last_error = "table \"x\" & <b>bold</b>";
  d.schema_changes.push_back(
      {kNow, "p", "t'1", "ALTER TABLE `t` COMMENT '</pre><script>x</script>'", {"<a>"}});
  std::string html = RenderStatusPage(d);
  EXPECT_NE(html.find("shop.&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(html.find("<script>x"), std::string::npos);
  EXPECT_NE(html.find("table &quot;x&quot; &amp; &lt;b&gt;bold&lt;/b&gt;"), std::string::npos);
  EXPECT_NE(html.find("t&#39;1"), std::string::npos);
  EXPECT_EQ(Count(html, "<script>"), 1u);  // the page's own
}

TEST(StatusPageTest, PolylineHasOnePointPerSample) {
  StatusPageData d = Sample();
  std::string html = RenderStatusPage(d);
  std::string lag = PolylinePoints(html, 0);
  std::string rate = PolylinePoints(html, 1);
  EXPECT_EQ(Count(lag, ","), d.lag_series.size());
  EXPECT_EQ(Count(rate, ","), d.rate_series.size());
  EXPECT_EQ(Count(html, "<polyline"), 2u);
}

TEST(StatusPageTest, DropsSamplesOlderThanAnHour) {
  StatusPageData d = Sample();
  d.lag_series = {{kNow - 2ULL * 3600 * 1000, 5}, {kNow - 60ULL * 1000, 1}, {kNow - 1000, 2}};
  std::string html = RenderStatusPage(d);
  EXPECT_EQ(Count(PolylinePoints(html, 0), ","), 2u);
}

TEST(StatusPageTest, HasNoExternalResources) {
  std::string html = RenderStatusPage(Sample());
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_NE(html.rfind("<!DOCTYPE html>", 0), std::string::npos);
}

TEST(StatusPageTest, EmptySeriesSayNoDataYet) {
  StatusPageData d;
  d.phase = "snapshot";
  d.now_ms = kNow;
  std::string html = RenderStatusPage(d);
  EXPECT_EQ(Count(html, "no data yet"), 2u);
  EXPECT_EQ(html.find("<polyline"), std::string::npos);
  EXPECT_NE(html.find("no tables yet"), std::string::npos);
  EXPECT_NE(html.find("no schema changes"), std::string::npos);
  EXPECT_EQ(html.find("class=\"error\""), std::string::npos);
}

TEST(StatusPageTest, BadgeColourFollowsThePhase) {
  const std::pair<const char*, const char*> cases[] = {
      {"streaming", "badge green"}, {"snapshot", "badge blue"}, {"stopped", "badge grey"},
      {"failed", "badge red"},      {"whatever", "badge grey"},
  };
  for (const auto& [phase, badge] : cases) {
    StatusPageData d;
    d.phase = phase;
    d.now_ms = kNow;
    EXPECT_NE(RenderStatusPage(d).find(badge), std::string::npos) << phase;
  }
}

TEST(StatusPageTest, ShowsTheLastErrorInARedBox) {
  StatusPageData d = Sample();
  d.phase = "failed";
  d.last_error = "ClickHouse refused the insert: Code: 241. MEMORY_LIMIT_EXCEEDED";
  std::string html = RenderStatusPage(d);
  EXPECT_NE(html.find("<div class=\"error\""), std::string::npos);
  EXPECT_NE(html.find("MEMORY_LIMIT_EXCEEDED"), std::string::npos);
}

TEST(StatusPageTest, SchemaChangesNewestFirst) {
  std::string html = RenderStatusPage(Sample());
  EXPECT_LT(html.find("MODIFY email"), html.find("ADD COLUMN coupon"));
}

TEST(StatusPageTest, SnapshotProgressBar) {
  std::string html = RenderStatusPage(Sample());
  EXPECT_NE(html.find("style=\"width:35.9%\""), std::string::npos);  // 431k of 1.2M
  EXPECT_NE(html.find("36% \u00b7 431k / 1.2M"), std::string::npos);
  EXPECT_NE(html.find("style=\"width:100.0%\""), std::string::npos);  // copied beyond the estimate
}

TEST(StatusPageTest, ManyTablesShowTheCountsThenTheHeldTablesThenTheRestCut) {
  StatusPageData data;
  data.now_ms = kNow;
  data.phase = "streaming";
  for (int i = 1; i <= 1000; ++i) {
    TableRow row;
    row.name = "tenant_" + std::to_string(i) + ".users";
    row.state = i == 700 ? "parked" : i == 800 ? "snapshot" : "streaming";
    row.rows_applied = 10;
    data.tables.push_back(row);
  }
  data.table_states = {{"streaming", 998}, {"snapshot", 1}, {"parked", 1}};
  data.held = {{"tenant_700.users", "parked"}};
  const std::string html = RenderStatusPage(data);

  const size_t summary = html.find("<p class=\"summary\">");
  ASSERT_NE(summary, std::string::npos);
  EXPECT_LT(html.find(">1 parked<", summary), html.find(">1 snapshot<", summary));
  EXPECT_LT(html.find(">1 snapshot<", summary), html.find(">998 streaming<", summary));
  const size_t held = html.find("<th>Held table</th>");
  ASSERT_NE(held, std::string::npos);
  EXPECT_LT(summary, held);
  const size_t parked_row = html.find(">tenant_700.users<", held);
  const size_t snapshot_row = html.find(">tenant_800.users<", held);
  const size_t streaming_row = html.find(">tenant_1.users<", held);
  ASSERT_NE(streaming_row, std::string::npos);
  EXPECT_LT(parked_row, snapshot_row) << "the held table first";
  EXPECT_LT(snapshot_row, streaming_row) << "then the one being copied, then the others";
  EXPECT_EQ(html.find(">tenant_999.users<"), std::string::npos) << "the list is cut";
  EXPECT_NE(html.find("… and 950 more tables"), std::string::npos);
  EXPECT_LT(html.size(), 100'000U);
}

TEST(StatusPageTest, AClickHouseTableOfManySourcesSaysHowMany) {
  StatusPageData data;
  data.now_ms = kNow;
  data.tables = {{"bench.users", "streaming", 3000, 0, 0, 1000}};
  data.table_states = {{"streaming", 1000}};
  const std::string html = RenderStatusPage(data);
  EXPECT_NE(html.find("1000 source tables into 1 table replicated"), std::string::npos);
  EXPECT_NE(html.find("1,000 source tables</div>"), std::string::npos)
      << html.substr(html.find("bench.users"), 300);
}

TEST(StatusPageTest, RefreshesEveryFiveSeconds) {
  std::string html = RenderStatusPage(Sample());
  EXPECT_NE(html.find("<meta http-equiv=\"refresh\" content=\"5\">"), std::string::npos);
  EXPECT_NE(html.find("location.reload()"), std::string::npos);
}

TEST(HumanUnitsTest, Counts) {
  EXPECT_EQ(HumanCount(0), "0");
  EXPECT_EQ(HumanCount(7.26), "7.3");
  EXPECT_EQ(HumanCount(950), "950");
  EXPECT_EQ(HumanCount(1234), "1.2k");
  EXPECT_EQ(HumanCount(34500), "34.5k");
  EXPECT_EQ(HumanCount(123456), "123k");
  EXPECT_EQ(HumanCount(999999), "1M");
  EXPECT_EQ(HumanCount(48213907), "48.2M");
  EXPECT_EQ(HumanCount(3.4e9), "3.4G");
  EXPECT_EQ(HumanCount(std::nan("")), "\u2013");
}

TEST(HumanUnitsTest, Bytes) {
  EXPECT_EQ(HumanBytes(512), "512 B");
  EXPECT_EQ(HumanBytes(3400), "3.4 kB");
  EXPECT_EQ(HumanBytes(3.4e6), "3.4 MB");
  EXPECT_EQ(HumanBytes(12e9), "12 GB");
  EXPECT_EQ(HumanBytes(std::nan("")), "\u2013");
}

TEST(HumanUnitsTest, Durations) {
  EXPECT_EQ(HumanDuration(0), "0 s");
  EXPECT_EQ(HumanDuration(0.4), "0.4 s");
  EXPECT_EQ(HumanDuration(45), "45 s");
  EXPECT_EQ(HumanDuration(200), "3 min 20 s");
  EXPECT_EQ(HumanDuration(180), "3 min");
  EXPECT_EQ(HumanDuration(754), "12 min");
  EXPECT_EQ(HumanDuration(2 * 3600 + 5 * 60), "2 h 5 min");
  EXPECT_EQ(HumanDuration(7200), "2 h");
  EXPECT_EQ(HumanDuration(3 * 86400 + 4 * 3600), "3 d 4 h");
  EXPECT_EQ(HumanDuration(std::nan("")), "\u2013");
}

TEST(HtmlEscapeTest, EscapesTheFive) {
  EXPECT_EQ(HtmlEscape("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

/// The sample page with a table name that is markup: shown as text. CHSYNC_STATUS_SAMPLE=FILE also
/// writes the page there, to look at in a browser.
TEST(StatusPageTest, ATableNameThatIsMarkupIsShownAsText) {
  StatusPageData d = Sample();
  d.tables.push_back({"shop.<script>evil</script>", "resyncing", 12, 40, 100});
  const std::string page = RenderStatusPage(d);
  EXPECT_NE(page.find("shop.&lt;script&gt;evil&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(page.find("<script>evil"), std::string::npos);
  if (const char* path = std::getenv("CHSYNC_STATUS_SAMPLE"); path != nullptr) std::ofstream(path) << page;
}

}  // namespace
}  // namespace chsync::http
