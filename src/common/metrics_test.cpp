#include "common/metrics.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace chsync::metrics {
namespace {

TEST(MetricsRender, CounterWithLabelsSortedByValues) {
  Registry registry;
  Family<Counter>& rows = registry.AddCounter("chsync_rows_total", "Rows applied.", {"table", "op"});
  rows.With({"shop.orders", "insert"}).Add(3);
  rows.With({"shop.customers", "update"}).Add();
  rows.With({"shop.orders", "delete"}).Add(0.5);
  EXPECT_EQ(registry.Render(),
            "# HELP chsync_rows_total Rows applied.\n"
            "# TYPE chsync_rows_total counter\n"
            "chsync_rows_total{table=\"shop.customers\",op=\"update\"} 1\n"
            "chsync_rows_total{table=\"shop.orders\",op=\"delete\"} 0.5\n"
            "chsync_rows_total{table=\"shop.orders\",op=\"insert\"} 3\n");
}

TEST(MetricsRender, GaugeWithoutLabels) {
  Registry registry;
  Gauge& lag = registry.AddGauge("chsync_lag_seconds", "Replication lag.").With();
  lag.Set(10);
  lag.Add(-2.25);
  EXPECT_EQ(registry.Render(),
            "# HELP chsync_lag_seconds Replication lag.\n"
            "# TYPE chsync_lag_seconds gauge\n"
            "chsync_lag_seconds 7.75\n");
}

TEST(MetricsRender, HistogramBucketsCumulativeThenInfSumCount) {
  Registry registry;
  Family<Histogram>& latency =
      registry.AddHistogram("chsync_flush_seconds", "Flush latency.", {0.005, 0.1, 1}, {"table"});
  Histogram& h = latency.With({"t"});
  h.Observe(0.005);  // le: exactly on a bound counts in that bucket
  h.Observe(0.05);
  h.Observe(0.1);
  h.Observe(0.5);
  h.Observe(7);
  EXPECT_EQ(h.count(), 5u);
  EXPECT_EQ(h.CumulativeCounts(), (std::vector<uint64_t>{1, 3, 4, 5}));
  EXPECT_EQ(registry.Render(),
            "# HELP chsync_flush_seconds Flush latency.\n"
            "# TYPE chsync_flush_seconds histogram\n"
            "chsync_flush_seconds_bucket{table=\"t\",le=\"0.005\"} 1\n"
            "chsync_flush_seconds_bucket{table=\"t\",le=\"0.1\"} 3\n"
            "chsync_flush_seconds_bucket{table=\"t\",le=\"1\"} 4\n"
            "chsync_flush_seconds_bucket{table=\"t\",le=\"+Inf\"} 5\n"
            "chsync_flush_seconds_sum{table=\"t\"} 7.655\n"
            "chsync_flush_seconds_count{table=\"t\"} 5\n");
}

TEST(MetricsRender, HistogramWithoutLabels) {
  Registry registry;
  registry.AddHistogram("h", "H.", {1, 2}).With().Observe(1.5);
  EXPECT_EQ(registry.Render(),
            "# HELP h H.\n"
            "# TYPE h histogram\n"
            "h_bucket{le=\"1\"} 0\n"
            "h_bucket{le=\"2\"} 1\n"
            "h_bucket{le=\"+Inf\"} 1\n"
            "h_sum 1.5\n"
            "h_count 1\n");
}

TEST(MetricsRender, LabelValuesEscaped) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  Registry registry;
  registry.AddCounter("c", "C.", {"v"}).With({"say \"hi\"\\\n"}).Add(2);
  EXPECT_EQ(registry.Render(),
            "# HELP c C.\n"
            "# TYPE c counter\n"
            "c{v=\"say \\\"hi\\\"\\\\\\n\"} 2\n");
}

TEST(MetricsRender, HelpEscapesBackslashAndNewlineOnly) {
  Registry registry;
  registry.AddGauge("g", "path C:\\dir \"quoted\"\nsecond line");
  EXPECT_EQ(registry.Render(),
            "# HELP g path C:\\\\dir \"quoted\"\\nsecond line\n"
            "# TYPE g gauge\n");
}

TEST(MetricsRender, FamilyWithoutChildrenRendersHelpAndTypeOnly) {
  Registry registry;
  registry.AddCounter("a_total", "A.", {"x"});
  registry.AddHistogram("b_seconds", "B.", {1});
  EXPECT_EQ(registry.Render(),
            "# HELP a_total A.\n"
            "# TYPE a_total counter\n"
            "# HELP b_seconds B.\n"
            "# TYPE b_seconds histogram\n");
}

TEST(MetricsRender, FamiliesInOrderAdded) {
  Registry registry;
  registry.AddGauge("z", "Z.").With().Set(1);
  registry.AddGauge("a", "A.").With().Set(2);
  EXPECT_EQ(registry.Render(),
            "# HELP z Z.\n# TYPE z gauge\nz 1\n"
            "# HELP a A.\n# TYPE a gauge\na 2\n");
}

TEST(MetricsFormatValue, Cases) {
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(-0.0), "0");
  EXPECT_EQ(FormatValue(42), "42");
  EXPECT_EQ(FormatValue(-7), "-7");
  EXPECT_EQ(FormatValue(9007199254740991.0), "9007199254740991");  // 2^53 - 1
  EXPECT_EQ(std::stod(FormatValue(9007199254740992.0)), 9007199254740992.0);
  EXPECT_EQ(FormatValue(0.1), "0.1");
  EXPECT_EQ(FormatValue(2.5), "2.5");
  EXPECT_EQ(FormatValue(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(std::stod(FormatValue(1e300)), 1e300);
  EXPECT_EQ(std::stod(FormatValue(1e-300)), 1e-300);
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
}

TEST(MetricsFamily, RemoveAndClear) {
  Registry registry;
  Family<Gauge>& g = registry.AddGauge("g", "G.", {"t"});
  g.With({"a"}).Set(1);
  g.With({"b"}).Set(2);
  g.With({"c"}).Set(3);
  g.Remove({"b"});
  g.Remove({"missing"});
  EXPECT_EQ(registry.Render(), "# HELP g G.\n# TYPE g gauge\ng{t=\"a\"} 1\ng{t=\"c\"} 3\n");
  ASSERT_EQ(g.Children().size(), 2u);
  EXPECT_EQ(g.Children()[1].first, (LabelValues{"c"}));
  g.Clear();
  EXPECT_TRUE(g.Children().empty());
  EXPECT_EQ(registry.Render(), "# HELP g G.\n# TYPE g gauge\n");
  // A removed child starts again from zero.
  EXPECT_EQ(g.With({"a"}).value(), 0);
}

TEST(MetricsFamily, WithReturnsTheSameChild) {
  Registry registry;
  Family<Counter>& c = registry.AddCounter("c", "C.", {"t"});
  Counter& first = c.With({"x"});
  for (int i = 0; i < 100; ++i) c.With({"y" + std::to_string(i)});
  EXPECT_EQ(&first, &c.With({"x"}));
  first.Add(5);
  EXPECT_EQ(c.With({"x"}).value(), 5);
}

TEST(MetricsRegistry, OnCollectRunsBeforeRender) {
  Registry registry;
  Gauge& uptime = registry.AddGauge("uptime", "Up.").With();
  int calls = 0;
  registry.OnCollect([&] {
    ++calls;
    uptime.Set(calls * 10);
  });
  // A collector may read and create values without deadlocking or recursing.
  registry.OnCollect([&] { registry.AddCounter("late", "L.").With().Add(registry.Value("uptime")); });
  EXPECT_EQ(registry.Render(),
            "# HELP uptime Up.\n# TYPE uptime gauge\nuptime 10\n"
            "# HELP late L.\n# TYPE late counter\nlate 10\n");
  EXPECT_EQ(calls, 1);
}

TEST(MetricsRegistry, ValueAndSamples) {
  Registry registry;
  Family<Counter>& c = registry.AddCounter("c_total", "C.", {"t"});
  c.With({"b"}).Add(2);
  c.With({"a"}).Add(1);
  registry.AddGauge("g", "G.").With().Set(-3.5);
  registry.AddHistogram("h", "H.", {1}).With().Observe(1);

  EXPECT_EQ(registry.Value("c_total", {"b"}), 2);
  EXPECT_EQ(registry.Value("g"), -3.5);
  EXPECT_TRUE(std::isnan(registry.Value("c_total", {"zz"})));
  EXPECT_TRUE(std::isnan(registry.Value("nope")));
  EXPECT_TRUE(std::isnan(registry.Value("h")));

  std::vector<Registry::Sample> samples = registry.Samples("c_total");
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].labels, (LabelValues{"a"}));
  EXPECT_EQ(samples[0].value, 1);
  EXPECT_EQ(samples[1].labels, (LabelValues{"b"}));
  EXPECT_EQ(samples[1].value, 2);
  EXPECT_TRUE(registry.Samples("nope").empty());
  EXPECT_TRUE(registry.Samples("h").empty());
}

TEST(MetricsRegistry, ValueRunsCollectors) {
  Registry registry;
  Gauge& g = registry.AddGauge("g", "G.").With();
  registry.OnCollect([&] { g.Set(99); });
  EXPECT_EQ(registry.Value("g"), 99);
}

TEST(MetricsBuckets, Exponential) {
  EXPECT_EQ(ExponentialBuckets(0.001, 10, 4), (std::vector<double>{0.001, 0.01, 0.1, 1}));
  std::vector<double> b = ExponentialBuckets(1, 2, 3);
  EXPECT_EQ(b, (std::vector<double>{1, 2, 4}));
}

TEST(MetricsHistogram, NaNAndAboveAllBoundsGoToInf) {
  Histogram h({1, 2});
  h.Observe(3);
  h.Observe(std::numeric_limits<double>::quiet_NaN());
  h.Observe(-5);
  EXPECT_EQ(h.CumulativeCounts(), (std::vector<uint64_t>{1, 1, 3}));
  EXPECT_EQ(h.count(), 3u);
}

TEST(MetricsConcurrency, ExactTotalWhileRendering) {
  Registry registry;
  Family<Counter>& family = registry.AddCounter("c_total", "C.", {"t"});
  Family<Histogram>& hist = registry.AddHistogram("h", "H.", {0.5});
  Counter& counter = family.With({"x"});
  constexpr int kThreads = 4;
  constexpr int kAdds = 100000;
  std::atomic<bool> done{false};
  std::thread renderer([&] {
    while (!done.load()) {
      std::string text = registry.Render();
      EXPECT_NE(text.find("# TYPE c_total counter\n"), std::string::npos);
    }
  });
  std::vector<std::thread> writers;
  writers.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kAdds; ++i) {
        counter.Add();
        if (i % 1000 == 0) {
          family.With({"t" + std::to_string(t)}).Add();
          hist.With().Observe(1);
        }
      }
    });
  }
  for (std::thread& w : writers) w.join();
  done.store(true);
  renderer.join();
  EXPECT_EQ(counter.value(), kThreads * kAdds);
  EXPECT_EQ(registry.Value("c_total", {"x"}), kThreads * kAdds);
  EXPECT_EQ(hist.With().count(), static_cast<uint64_t>(kThreads * (kAdds / 1000)));
  EXPECT_NE(registry.Render().find("c_total{t=\"x\"} 400000\n"), std::string::npos);
}

TEST(MetricsDeathTest, BugsAssert) {
  Registry registry;
  Counter& c = registry.AddCounter("c_total", "C.").With();
  EXPECT_DEBUG_DEATH(c.Add(-1), "only grows");
  EXPECT_DEBUG_DEATH(registry.AddGauge("bad-name", "B."), "metric name");
  EXPECT_DEBUG_DEATH(registry.AddGauge("g", "G.", {"0label"}), "label name");
  EXPECT_DEBUG_DEATH(registry.AddGauge("c_total", "Again."), "already registered");
}

}  // namespace
}  // namespace chsync::metrics
