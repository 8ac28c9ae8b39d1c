#include "mysql/binlog_retention.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include "mysql/server_probe.h"

namespace chsync::mysql {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

/// "binlog.000042" as ("binlog", 42); nullopt without a numeric extension.
struct SplitName {
  std::string_view base;
  uint64_t number = 0;
};
std::optional<SplitName> Split(std::string_view name) {
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  std::optional<uint64_t> number = WholeNumber(name.substr(dot + 1));
  if (!number) return std::nullopt;
  return SplitName{name.substr(0, dot), *number};
}

bool SameBase(const std::string& a, const std::string& b) {
  auto sa = Split(a);
  auto sb = Split(b);
  return sa && sb && sa->base == sb->base;
}

uint64_t NowMs() {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
}

}  // namespace

int CompareBinlogNames(const std::string& a, const std::string& b) {
  auto sa = Split(a);
  auto sb = Split(b);
  if (sa && sb && sa->base == sb->base) {
    if (sa->number == sb->number) return 0;
    return sa->number < sb->number ? -1 : 1;
  }
  int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

uint64_t ExpireSecondsFromVariables(const QueryResult& variables) {
  std::map<std::string, std::string> v;
  for (const auto& row : variables.rows) {
    if (row.size() >= 2 && row[0]) v[*row[0]] = row[1].value_or("");
  }
  auto auto_purge = v.find("binlog_expire_logs_auto_purge");  // MySQL ≥ 8.0.29
  if (auto_purge != v.end() && (EqualsIgnoreCase(auto_purge->second, "OFF") || auto_purge->second == "0")) {
    return 0;
  }
  auto seconds = v.find("binlog_expire_logs_seconds");
  if (seconds != v.end()) {
    if (std::optional<uint64_t> s = WholeNumber(seconds->second); s && *s > 0) return *s;
  }
  auto days = v.find("expire_logs_days");  // a whole number on MySQL, a fraction allowed on MariaDB
  if (days != v.end()) {
    char* end = nullptr;
    double d = std::strtod(days->second.c_str(), &end);
    if (end != days->second.c_str() && std::isfinite(d) && d > 0) return static_cast<uint64_t>(d * 86400);
  }
  return 0;
}

Result<RetentionReading> ReadRetention(Connection& conn) {
  RetentionReading reading;
  auto logs = conn.Query("SHOW BINARY LOGS");
  if (!logs.ok()) {
    Error e = std::move(logs).error();
    e.AddContext(
        "reading the binlog files for their retention (needs binary logging and the BINLOG MONITOR "
        "or REPLICATION CLIENT privilege)");
    return e;
  }
  reading.read_at_ms = NowMs();
  int name_column = logs->ColumnIndex("Log_name");
  int size_column = logs->ColumnIndex("File_size");
  if (name_column < 0) name_column = 0;
  if (size_column < 0) size_column = 1;
  for (const auto& row : logs->rows) {
    auto at = [&](int i) -> std::optional<std::string> {
      return static_cast<size_t>(i) < row.size() ? row[static_cast<size_t>(i)] : std::nullopt;
    };
    std::optional<std::string> name = at(name_column);
    if (!name || name->empty()) continue;
    BinaryLogFile file;
    file.name = *name;
    file.size = WholeNumber(at(size_column).value_or("0")).value_or(0);
    reading.files.push_back(std::move(file));
  }
  auto vars = conn.Query(
      "SHOW GLOBAL VARIABLES WHERE Variable_name IN "
      "('binlog_expire_logs_seconds','expire_logs_days','binlog_expire_logs_auto_purge')");
  if (!vars.ok()) {
    Error e = std::move(vars).error();
    e.AddContext("reading the binlog expiry variables");
    return e;
  }
  reading.expire_seconds = ExpireSecondsFromVariables(*vars);
  return reading;
}

void RetentionEstimator::Add(const RetentionReading& reading) {
  if (!have_reading_) {
    for (const BinaryLogFile& f : reading.files) total_bytes_ += f.size;
  } else {
    std::map<std::string, uint64_t> previous;
    for (const BinaryLogFile& f : latest_.files) previous[f.name] = f.size;
    for (const BinaryLogFile& f : reading.files) {
      auto it = previous.find(f.name);
      if (it == previous.end()) {
        total_bytes_ += f.size;  // begun since the previous reading (or after a reset)
      } else if (f.size >= it->second) {
        total_bytes_ += f.size - it->second;
      } else {
        total_bytes_ += f.size;  // shrank: the binlogs were reset and the name used again
      }
    }
  }
  latest_ = reading;
  have_reading_ = true;

  if (!samples_.empty() && reading.read_at_ms < samples_.back().at_ms) samples_.clear();
  samples_.push_back(Sample{reading.read_at_ms, total_bytes_});
  const uint64_t newest = samples_.back().at_ms;
  while (samples_.size() > 2 && samples_[1].at_ms + kRateWindowMs <= newest) samples_.pop_front();
}

double RetentionEstimator::WriteRate() const {
  if (samples_.size() < 2) return 0;
  const Sample& first = samples_.front();
  const Sample& last = samples_.back();
  if (last.at_ms <= first.at_ms) return 0;
  return static_cast<double>(last.total_bytes - first.total_bytes) * 1000.0 /
         static_cast<double>(last.at_ms - first.at_ms);
}

RetentionHeadroom RetentionEstimator::For(const std::string& checkpoint_file,
                                          uint64_t checkpoint_offset) const {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  RetentionHeadroom h;
  h.write_rate_bytes_per_s = WriteRate();
  const std::vector<BinaryLogFile>& files = latest_.files;
  if (!have_reading_ || checkpoint_file.empty() || files.empty()) return h;

  const double rate = h.write_rate_bytes_per_s;
  const auto expire = static_cast<double>(latest_.expire_seconds);
  auto found = std::find_if(files.begin(), files.end(),
                            [&](const BinaryLogFile& f) { return f.name == checkpoint_file; });
  if (found == files.end()) {
    if (SameBase(checkpoint_file, files.back().name) &&
        CompareBinlogNames(checkpoint_file, files.back().name) > 0) {
      // Ahead of the reading (a file begun since): as young as the newest file.
      if (expire > 0) {
        h.headroom_seconds = expire;
        h.headroom_bytes = rate > 0 ? expire * rate : kNaN;
      }
      return h;
    }
    h.checkpoint_file_present = false;
    for (const BinaryLogFile& f : files) h.bytes_behind += f.size;
    h.headroom_bytes = 0;
    h.headroom_seconds = 0;
    return h;
  }

  uint64_t written_since_closed = 0;
  for (auto it = found + 1; it != files.end(); ++it) written_since_closed += it->size;
  h.bytes_behind = found->size - std::min(checkpoint_offset, found->size) + written_since_closed;
  if (expire <= 0) return h;  // never purged by age
  const bool newest = found + 1 == files.end();
  const auto since = static_cast<double>(written_since_closed);
  h.headroom_bytes = rate > 0 ? expire * rate - since : kNaN;
  if (newest) {
    h.headroom_seconds = expire;
  } else {
    h.headroom_seconds = rate > 0 ? expire - since / rate : kNaN;
  }
  return h;
}

}  // namespace chsync::mysql
