#include "state/progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "common/log.h"

namespace chsync::pipe {
namespace {

constexpr std::chrono::milliseconds kRedrawInterval{250};

double Seconds(SnapshotProgress::Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

/// 1234567 -> "1,234,567".
std::string Grouped(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

uint64_t Rate(uint64_t rows, double seconds) {
  return seconds > 0 ? static_cast<uint64_t>(static_cast<double>(rows) / seconds) : 0;
}

/// "1:02:03" or "2:03".
std::string Duration(uint64_t seconds) {
  uint64_t h = seconds / 3600, m = seconds / 60 % 60, s = seconds % 60;
  return h > 0 ? fmt::format("{}:{:02}:{:02}", h, m, s) : fmt::format("{}:{:02}", m, s);
}

}  // namespace

SnapshotProgress::SnapshotProgress(bool terminal, std::chrono::milliseconds log_interval, std::FILE* out)
    : terminal_(terminal), log_interval_(log_interval), out_(out) {}

size_t SnapshotProgress::AddTable(std::string name, uint64_t estimate) {
  std::lock_guard lock(mu_);
  Table t;
  t.name = std::move(name);
  t.estimate = estimate;
  tables_.push_back(std::move(t));
  return tables_.size() - 1;
}

void SnapshotProgress::Started(size_t id, uint64_t rows_before, bool resumed) {
  std::lock_guard lock(mu_);
  Table& t = tables_[id];
  t.state = State::kCopying;
  t.rows_before = rows_before;
  t.rows = rows_before;
  t.started = Clock::now();
  if (terminal_) return;
  if (resumed) {
    log::Info("snapshot of {}: resuming after {} rows (~{} rows in the table)", t.name, Grouped(rows_before),
              Grouped(t.estimate));
  } else {
    log::Info("snapshot of {}: starting (~{} rows)", t.name, Grouped(t.estimate));
  }
}

void SnapshotProgress::Copied(size_t id, uint64_t rows) {
  std::lock_guard lock(mu_);
  tables_[id].rows = rows;
}

void SnapshotProgress::Finished(size_t id) {
  std::lock_guard lock(mu_);
  Table& t = tables_[id];
  t.state = State::kDone;
  t.finished = Clock::now();
  if (terminal_) {
    finished_lines_.push_back(DoneLine(t));
  } else {
    log::Info("snapshot of {}", DoneLine(t));
  }
}

void SnapshotProgress::Interrupted(size_t id) {
  std::lock_guard lock(mu_);
  Table& t = tables_[id];
  if (t.state != State::kCopying) return;
  t.state = State::kInterrupted;
  t.finished = Clock::now();
}

std::chrono::milliseconds SnapshotProgress::tick_interval() const {
  return terminal_ ? kRedrawInterval : std::min(log_interval_, std::chrono::milliseconds(1000));
}

std::string SnapshotProgress::LiveLine(const Table& t, Clock::time_point now) const {
  uint64_t copied_now = t.rows - std::min(t.rows, t.rows_before);
  uint64_t rate = Rate(copied_now, Seconds(now - t.started));
  std::string line = fmt::format("{}: {} / ~{} rows", t.name, Grouped(t.rows), Grouped(t.estimate));
  if (t.estimate > 0) {
    line += fmt::format(" ({}%)", std::min<uint64_t>(100, t.rows * 100 / t.estimate));
  }
  line += fmt::format(", {} rows/s", Grouped(rate));
  if (rate > 0 && t.estimate > t.rows) line += ", ETA " + Duration((t.estimate - t.rows) / rate);
  return line;
}

std::string SnapshotProgress::DoneLine(const Table& t) {
  uint64_t copied_now = t.rows - std::min(t.rows, t.rows_before);
  double secs = Seconds(t.finished - t.started);
  std::string line = fmt::format("{}: done, {} rows in {:.1f} s ({} rows/s)", t.name, Grouped(t.rows), secs,
                                 Grouped(Rate(copied_now, secs)));
  if (t.rows_before > 0) line += fmt::format(", {} of them copied by an earlier run", Grouped(t.rows_before));
  return line;
}

std::string SnapshotProgress::TotalsLine(Clock::time_point now) const {
  size_t done = 0;
  uint64_t rows = 0, copied_now = 0;
  for (const Table& t : tables_) {
    if (t.state == State::kDone) ++done;
    rows += t.rows;
    copied_now += t.rows - std::min(t.rows, t.rows_before);
  }
  double secs = Seconds(now - start_);
  return fmt::format("snapshot: {}/{} tables done, {} rows, {} rows/s, {}", done, tables_.size(),
                     Grouped(rows), Grouped(Rate(copied_now, secs)), Duration(static_cast<uint64_t>(secs)));
}

std::string SnapshotProgress::EraseBlock() {
  std::string out;
  if (block_lines_ > 0) out = fmt::format("\x1b[{}A", block_lines_);
  out += "\r\x1b[J";
  block_lines_ = 0;
  return out;
}

void SnapshotProgress::Redraw(Clock::time_point now) {
  std::string out = EraseBlock();
  for (const std::string& line : finished_lines_) out += "  " + line + "\n";
  finished_lines_.clear();
  for (const Table& t : tables_) {
    if (t.state != State::kCopying) continue;
    out += "  " + LiveLine(t, now) + "\x1b[K\n";
    ++block_lines_;
  }
  out += TotalsLine(now) + "\x1b[K\n";
  ++block_lines_;
  std::fwrite(out.data(), 1, out.size(), out_);
  std::fflush(out_);
  last_draw_ = now;
}

void SnapshotProgress::Tick() {
  std::lock_guard lock(mu_);
  Clock::time_point now = Clock::now();
  if (terminal_) {
    if (now - last_draw_ >= kRedrawInterval) Redraw(now);
    return;
  }
  if (now - last_log_ < log_interval_) return;
  last_log_ = now;
  for (const Table& t : tables_) {
    if (t.state == State::kCopying) log::Info("snapshot of {}", LiveLine(t, now));
  }
}

void SnapshotProgress::Summary() {
  std::lock_guard lock(mu_);
  Clock::time_point now = Clock::now();
  size_t unfinished = 0;
  for (const Table& t : tables_) unfinished += t.state == State::kDone ? 0 : 1;
  std::string totals = TotalsLine(now);
  if (unfinished > 0) totals += fmt::format(" ({} not finished)", unfinished);
  if (terminal_) {
    std::string out = EraseBlock();
    for (const std::string& line : finished_lines_) out += "  " + line + "\n";
    finished_lines_.clear();
    out += totals + "\n";
    std::fwrite(out.data(), 1, out.size(), out_);
    std::fflush(out_);
  } else {
    log::Info("{}", totals);
  }
}

}  // namespace chsync::pipe
