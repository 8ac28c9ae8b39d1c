#include "common/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <limits>

namespace chsync::metrics {
namespace {

void AtomicAdd(std::atomic<double>& target, double amount) {
  double current = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(current, current + amount, std::memory_order_relaxed)) {
  }
}

bool IsNameStart(char c, bool colon) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
}

bool IsNameChar(char c, bool colon) {
  return IsNameStart(c, colon) || (c >= '0' && c <= '9');
}

/// [a-zA-Z_:][a-zA-Z0-9_:]* for metric names (colon), [a-zA-Z_][a-zA-Z0-9_]* for label names.
[[maybe_unused]] bool ValidName(std::string_view name, bool colon) {
  if (name.empty() || !IsNameStart(name[0], colon)) return false;
  return std::all_of(name.begin() + 1, name.end(), [colon](char c) { return IsNameChar(c, colon); });
}

void AssertNames(std::string_view name, const std::vector<std::string>& labels) {
  assert(ValidName(name, true) && "metric name must match [a-zA-Z_:][a-zA-Z0-9_:]*");
  for (const std::string& label : labels) {
    assert(ValidName(label, false) && "label name must match [a-zA-Z_][a-zA-Z0-9_]*");
    assert(label.rfind("__", 0) != 0 && "label names starting with __ are reserved");
    (void)label;
  }
  (void)name;
}

/// Collectors run from Render()/Value()/Samples(); a collector that calls Value() must not run
/// the collectors again.
thread_local bool t_collecting = false;

std::string EscapeHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

/// `{a="x",b="y"}` (with `extra` appended as one more pair), or "" without any label.
void AppendLabels(std::string& out, const std::vector<std::string>& names, const LabelValues& values,
                  std::string_view extra_name = {}, std::string_view extra_value = {}) {
  if (names.empty() && extra_name.empty()) return;
  out += '{';
  bool first = true;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!first) out += ',';
    first = false;
    out += names[i];
    out += "=\"";
    out += EscapeLabelValue(values[i]);
    out += '"';
  }
  if (!extra_name.empty()) {
    if (!first) out += ',';
    out += extra_name;
    out += "=\"";
    out += EscapeLabelValue(extra_value);
    out += '"';
  }
  out += '}';
}

void AppendHeader(std::string& out, const std::string& name, const std::string& help, std::string_view type) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += EscapeHelp(help);
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

void AppendSample(std::string& out, std::string_view name, const std::vector<std::string>& label_names,
                  const LabelValues& values, double value, std::string_view extra_name = {},
                  std::string_view extra_value = {}) {
  out += name;
  AppendLabels(out, label_names, values, extra_name, extra_value);
  out += ' ';
  out += FormatValue(value);
  out += '\n';
}

}  // namespace

void Counter::Add(double amount) {
  assert(amount >= 0 && "a counter only grows");
  AtomicAdd(value_, amount);
}

void Gauge::Add(double amount) {
  AtomicAdd(value_, amount);
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), buckets_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {
  for (size_t i = 0; i < bounds_.size(); ++i) {
    assert(std::isfinite(bounds_[i]) && "histogram bounds are finite (+Inf is implicit)");
    assert((i == 0 || bounds_[i - 1] < bounds_[i]) && "histogram bounds ascend strictly");
  }
}

void Histogram::Observe(double value) {
  // le semantics: the first bound >= value; NaN and values above every bound go to +Inf.
  size_t index = bounds_.size();
  if (!std::isnan(value)) {
    index = static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
  }
  buckets_[index].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  AtomicAdd(sum_, value);
}

std::vector<uint64_t> Histogram::CumulativeCounts() const {
  std::vector<uint64_t> counts(bounds_.size() + 1);
  uint64_t total = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    total += buckets_[i].load(std::memory_order_relaxed);
    counts[i] = total;
  }
  return counts;
}

template <typename T>
T& Family<T>::With(const LabelValues& values) {
  assert(values.size() == label_names_.size() && "one value per label name");
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = children_.find(values);
  if (it == children_.end()) it = children_.emplace(values, make_()).first;
  return *it->second;
}

template <typename T>
void Family<T>::Remove(const LabelValues& values) {
  std::lock_guard<std::mutex> lock(mutex_);
  children_.erase(values);
}

template <typename T>
void Family<T>::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  children_.clear();
}

template <typename T>
std::vector<std::pair<LabelValues, const T*>> Family<T>::Children() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<LabelValues, const T*>> out;
  out.reserve(children_.size());
  for (const auto& [values, child] : children_) out.emplace_back(values, child.get());
  return out;
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

const std::string& Registry::Entry::name() const {
  switch (type) {
    case Type::kCounter: return counter->name();
    case Type::kGauge: return gauge->name();
    case Type::kHistogram: break;
  }
  return histogram->name();
}

// REQUIRES: mutex_ held.
const Registry::Entry* Registry::Find(std::string_view name) const {
  for (const auto& entry : entries_) {
    if (entry->name() == name) return entry.get();
  }
  return nullptr;
}

Family<Counter>& Registry::AddCounter(std::string name, std::string help, std::vector<std::string> labels) {
  AssertNames(name, labels);
  auto entry = std::make_unique<Entry>();
  entry->type = Type::kCounter;
  entry->counter = std::make_unique<Family<Counter>>(std::move(name), std::move(help), std::move(labels),
                                                     [] { return std::make_unique<Counter>(); });
  Family<Counter>& family = *entry->counter;
  std::lock_guard<std::mutex> lock(mutex_);
  assert(Find(family.name()) == nullptr && "metric name already registered");
  entries_.push_back(std::move(entry));
  return family;
}

Family<Gauge>& Registry::AddGauge(std::string name, std::string help, std::vector<std::string> labels) {
  AssertNames(name, labels);
  auto entry = std::make_unique<Entry>();
  entry->type = Type::kGauge;
  entry->gauge = std::make_unique<Family<Gauge>>(std::move(name), std::move(help), std::move(labels),
                                                 [] { return std::make_unique<Gauge>(); });
  Family<Gauge>& family = *entry->gauge;
  std::lock_guard<std::mutex> lock(mutex_);
  assert(Find(family.name()) == nullptr && "metric name already registered");
  entries_.push_back(std::move(entry));
  return family;
}

Family<Histogram>& Registry::AddHistogram(std::string name, std::string help, std::vector<double> bounds,
                                          std::vector<std::string> labels) {
  AssertNames(name, labels);
  assert(std::find(labels.begin(), labels.end(), "le") == labels.end() && "le is the bucket label");
  auto entry = std::make_unique<Entry>();
  entry->type = Type::kHistogram;
  entry->histogram = std::make_unique<Family<Histogram>>(
      std::move(name), std::move(help), std::move(labels),
      [bounds = std::move(bounds)] { return std::make_unique<Histogram>(bounds); });
  Family<Histogram>& family = *entry->histogram;
  std::lock_guard<std::mutex> lock(mutex_);
  assert(Find(family.name()) == nullptr && "metric name already registered");
  entries_.push_back(std::move(entry));
  return family;
}

void Registry::OnCollect(std::function<void()> collect) {
  std::lock_guard<std::mutex> lock(mutex_);
  collectors_.push_back(std::move(collect));
}

void Registry::Collect() {
  if (t_collecting) return;
  std::vector<std::function<void()>> collectors;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    collectors = collectors_;
  }
  t_collecting = true;
  struct Reset {
    ~Reset() { t_collecting = false; }
  } reset;
  for (const auto& collect : collectors) collect();
}

std::string Registry::Render() {
  Collect();
  std::vector<const Entry*> entries;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    entries.reserve(entries_.size());
    for (const auto& entry : entries_) entries.push_back(entry.get());
  }
  std::string out;
  for (const Entry* entry : entries) {
    switch (entry->type) {
      case Type::kCounter: {
        const Family<Counter>& family = *entry->counter;
        AppendHeader(out, family.name(), family.help(), "counter");
        std::lock_guard<std::mutex> lock(family.mutex_);
        for (const auto& [values, child] : family.children_) {
          AppendSample(out, family.name(), family.label_names(), values, child->value());
        }
        break;
      }
      case Type::kGauge: {
        const Family<Gauge>& family = *entry->gauge;
        AppendHeader(out, family.name(), family.help(), "gauge");
        std::lock_guard<std::mutex> lock(family.mutex_);
        for (const auto& [values, child] : family.children_) {
          AppendSample(out, family.name(), family.label_names(), values, child->value());
        }
        break;
      }
      case Type::kHistogram: {
        const Family<Histogram>& family = *entry->histogram;
        AppendHeader(out, family.name(), family.help(), "histogram");
        const std::string bucket = family.name() + "_bucket";
        std::lock_guard<std::mutex> lock(family.mutex_);
        for (const auto& [values, child] : family.children_) {
          const std::vector<uint64_t> counts = child->CumulativeCounts();
          const std::vector<double>& bounds = child->bounds();
          for (size_t i = 0; i < bounds.size(); ++i) {
            AppendSample(out, bucket, family.label_names(), values, static_cast<double>(counts[i]), "le",
                         FormatValue(bounds[i]));
          }
          // _count is the +Inf bucket of this same read, so one scrape is self-consistent.
          AppendSample(out, bucket, family.label_names(), values, static_cast<double>(counts.back()), "le",
                       "+Inf");
          AppendSample(out, family.name() + "_sum", family.label_names(), values, child->sum());
          AppendSample(out, family.name() + "_count", family.label_names(), values,
                       static_cast<double>(counts.back()));
        }
        break;
      }
    }
  }
  return out;
}

double Registry::Value(std::string_view name, const LabelValues& values) {
  Collect();
  const Entry* entry = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    entry = Find(name);
  }
  const double missing = std::numeric_limits<double>::quiet_NaN();
  if (entry == nullptr) return missing;
  auto lookup = [&](const auto& family) {
    std::lock_guard<std::mutex> lock(family.mutex_);
    auto it = family.children_.find(values);
    return it == family.children_.end() ? missing : it->second->value();
  };
  switch (entry->type) {
    case Type::kCounter: return lookup(*entry->counter);
    case Type::kGauge: return lookup(*entry->gauge);
    case Type::kHistogram: break;
  }
  return missing;
}

std::vector<Registry::Sample> Registry::Samples(std::string_view name) {
  Collect();
  const Entry* entry = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    entry = Find(name);
  }
  std::vector<Sample> out;
  if (entry == nullptr) return out;
  auto collect = [&](const auto& family) {
    std::lock_guard<std::mutex> lock(family.mutex_);
    out.reserve(family.children_.size());
    for (const auto& [values, child] : family.children_) out.push_back(Sample{values, child->value()});
  };
  switch (entry->type) {
    case Type::kCounter: collect(*entry->counter); break;
    case Type::kGauge: collect(*entry->gauge); break;
    case Type::kHistogram: break;
  }
  return out;
}

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  assert(start > 0 && factor > 1 && count >= 1);
  std::vector<double> bounds;
  bounds.reserve(static_cast<size_t>(count));
  double bound = start;
  for (int i = 0; i < count; ++i) {
    bounds.push_back(bound);
    bound *= factor;
  }
  return bounds;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
  if (std::trunc(value) == value && std::fabs(value) < kExactIntegers) {
    return fmt::format("{}", static_cast<int64_t>(value));
  }
  return fmt::format("{}", value);
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace chsync::metrics
