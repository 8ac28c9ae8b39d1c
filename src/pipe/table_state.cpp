#include "pipe/table_state.h"

#include <algorithm>

#include "clickhouse/connection.h"
#include "clickhouse/server_error.h"

namespace chsync::pipe {

bool ConcernsOneTable(const Error& error) {
  if (error.kind() == ErrorKind::kUnsupported) return true;
  if (error.kind() != ErrorKind::kServer) return false;
  if (clickhouse::IsRetryable(error) || clickhouse::IsCancelled(error)) return false;
  switch (error.server_code()) {
    case 164:  // READONLY: the user may not write at all
    case 497:  // ACCESS_DENIED
    case 516:  // AUTHENTICATION_FAILED
    case 192:  // UNKNOWN_USER
    case 193:  // WRONG_PASSWORD
    case 194:  // REQUIRED_PASSWORD
    case 0: return false;
    default: return true;
  }
}

bool ParkBoard::Park(HeldTable held) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string key = held.table;
  if (parked_.contains(key)) return false;
  parked_.emplace(key, std::move(held));
  taken_[key] = false;
  return true;
}

bool ParkBoard::Parked(const std::string& table) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return parked_.contains(table);
}

std::vector<HeldTable> ParkBoard::TakeNew() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<HeldTable> out;
  for (auto& [key, taken] : taken_) {
    if (taken) continue;
    taken = true;
    out.push_back(parked_.at(key));
  }
  return out;
}

std::vector<HeldTable> ParkBoard::Owed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<HeldTable> out;
  out.reserve(parked_.size());
  for (const auto& [key, held] : parked_) out.push_back(held);
  return out;
}

void ParkBoard::Forget(const std::string& table) {
  std::lock_guard<std::mutex> lock(mutex_);
  parked_.erase(table);
  taken_.erase(table);
}

void ParkBoard::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  parked_.clear();
  taken_.clear();
}

void MergeHeld(std::vector<HeldTable>& held, const std::vector<HeldTable>& extra) {
  for (const HeldTable& h : extra) {
    bool present =
        std::any_of(held.begin(), held.end(), [&](const HeldTable& x) { return x.table == h.table; });
    if (!present) held.push_back(h);
  }
}

}  // namespace chsync::pipe
