#include "pipe/live_tables.h"

namespace chsync::pipe {

Rebuilder::~Rebuilder() {
  Stop();
}

void Rebuilder::Stop() {
  stop = true;
  if (thread.joinable()) thread.join();
}

TableStates::iterator TableStates::Find(std::string_view database, std::string_view table) {
  key_scratch_.assign(database).append(1, '.').append(table);
  return map_.find(std::string_view(key_scratch_));
}

TableStates::iterator TableStates::Find(const binlog::TableMap& map,
                                        const std::shared_ptr<const binlog::TableMap>& keep) {
  if (found_erasures_ != erasures_) {
    found_.clear();
    found_erasures_ = erasures_;
  }
  for (const FoundTable& f : found_) {
    if (f.map.get() == &map) return f.table;
  }
  auto it = Find(map.database, map.table);
  // Only tables found are kept (one not found may be added), and only with their map held.
  if (it == map_.end() || !keep) return it;
  if (found_.size() < kFoundMaps) {
    found_.push_back({keep, it});
  } else {
    found_[found_next_] = {keep, it};
    found_next_ = (found_next_ + 1) % kFoundMaps;
  }
  return it;
}

}  // namespace chsync::pipe
