#pragma once

// Metrics a running pipe keeps for Prometheus: counters, gauges and histograms in families with
// labels, rendered in Prometheus' text exposition format (version 0.0.4). Updating a value is a
// relaxed atomic operation, cheap enough for the streaming hot path when the caller keeps the
// child (`Counter&`) instead of looking it up per row. Thread-safe throughout: values may be
// updated from any thread while another renders.
//
// Families and their children live as long as the Registry; references handed out stay valid.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace chsync::metrics {

/// Label values of one child, in the order of the family's label names.
using LabelValues = std::vector<std::string>;

/// A value that only grows (or resets when the process starts).
class Counter {
 public:
  void Add(double amount = 1.0);
  /// Add for a counter that one thread alone adds to (readers may be on any thread): a plain load
  /// and store instead of an atomic read-modify-write, for counts made per binlog event.
  void AddFromOneThread(double amount = 1.0) {
    value_.store(value_.load(std::memory_order_relaxed) + amount, std::memory_order_relaxed);
  }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

/// A value that goes up and down.
class Gauge {
 public:
  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Add(double amount);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

/// Observations counted into cumulative buckets (upper bounds ascending; +Inf is implicit).
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double value);
  const std::vector<double>& bounds() const { return bounds_; }
  /// Cumulative counts per bound, then the +Inf bucket (== count()).
  std::vector<uint64_t> CumulativeCounts() const;
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  double sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // per bound, not cumulative, plus +Inf
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0.0};
};

enum class Type { kCounter, kGauge, kHistogram };

class Registry;

/// A family: one metric name, its help text, label names and one child per label-value set.
/// REQUIRES: `values.size()` equals the number of label names (asserted).
template <typename T>
class Family {
 public:
  Family(std::string name, std::string help, std::vector<std::string> label_names,
         std::function<std::unique_ptr<T>()> make)
      : name_(std::move(name)),
        help_(std::move(help)),
        label_names_(std::move(label_names)),
        make_(std::move(make)) {}

  /// The child for `values`, created on first use.
  T& With(const LabelValues& values = {});
  /// Forgets the child for `values` (a table that was dropped); references to it dangle.
  void Remove(const LabelValues& values);
  /// Forgets every child.
  void Clear();
  /// Every child with its label values, sorted by them.
  std::vector<std::pair<LabelValues, const T*>> Children() const;

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::vector<std::string>& label_names() const { return label_names_; }

 private:
  friend class Registry;  // reads children under mutex_, so a concurrent Remove cannot free them

  std::string name_, help_;
  std::vector<std::string> label_names_;
  std::function<std::unique_ptr<T>()> make_;
  mutable std::mutex mutex_;
  std::map<LabelValues, std::unique_ptr<T>> children_;
};

/// A set of families, rendered in the order they were added.
class Registry {
 public:
  /// REQUIRES: `name` matches [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]*, and
  /// the name is new to this registry (asserted: names are chosen in code, not by users).
  Family<Counter>& AddCounter(std::string name, std::string help, std::vector<std::string> labels = {});
  Family<Gauge>& AddGauge(std::string name, std::string help, std::vector<std::string> labels = {});
  Family<Histogram>& AddHistogram(std::string name, std::string help, std::vector<double> bounds,
                                  std::vector<std::string> labels = {});

  /// Runs before every Render() (and Value(), Samples()), in the order added: refreshes gauges
  /// that are read from elsewhere (a clock, a status) instead of kept up to date. A collector may
  /// call Value(), Samples() and With() (collectors are not re-run from inside a collector); two
  /// concurrent renders may run the collectors concurrently.
  void OnCollect(std::function<void()> collect);

  /// The text exposition format: `# HELP` and `# TYPE` per family, one line per sample, label
  /// values escaped (\\, \", \n), histograms as _bucket{le=…}, _sum and _count. Families
  /// without children render only their HELP and TYPE lines.
  std::string Render();

  /// The current value of a counter or gauge child; nullopt-like NaN when there is none. For
  /// the status page and tests.
  double Value(std::string_view name, const LabelValues& values = {});

  struct Sample {
    LabelValues labels;
    double value = 0;
  };
  /// Every child of the counter or gauge family `name` (empty when there is no such family),
  /// sorted by label values; runs the collectors first, like Value().
  std::vector<Sample> Samples(std::string_view name);

 private:
  struct Entry {
    Type type;
    std::unique_ptr<Family<Counter>> counter;
    std::unique_ptr<Family<Gauge>> gauge;
    std::unique_ptr<Family<Histogram>> histogram;
    const std::string& name() const;
  };
  void Collect();
  const Entry* Find(std::string_view name) const;

  mutable std::mutex mutex_;  // guards entries_ and collectors_ (not the values)
  std::vector<std::unique_ptr<Entry>> entries_;
  std::vector<std::function<void()>> collectors_;
};

/// Buckets `start`, `start*factor`, … (`count` of them), for latencies and sizes.
std::vector<double> ExponentialBuckets(double start, double factor, int count);

/// Formats a sample value as Prometheus expects: integers without a fraction, +Inf, -Inf, NaN.
std::string FormatValue(double value);

/// Escapes a label value for the text format.
std::string EscapeLabelValue(std::string_view value);

}  // namespace chsync::metrics
