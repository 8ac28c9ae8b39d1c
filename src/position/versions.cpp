#include "position/versions.h"

#include <utility>

namespace chsync::pipe {

Result<Versions> Versions::Load(const std::string& dir) {
  CHSYNC_ASSIGN_OR_RETURN(Lineage lineage, Lineage::Load(dir));
  return Versions(std::move(lineage));
}

Result<uint32_t> Versions::Sequence(std::string_view file, int64_t base) {
  if (file != file_ || base != base_) {
    // Made durable as the high-water mark before any row of a higher sequence is queued (lineage.h).
    CHSYNC_ASSIGN_OR_RETURN(sequence_, lineage_.Count(file, base));
    file_ = std::string(file);
    base_ = base;
  }
  return sequence_;
}

Result<uint64_t> Versions::Of(uint32_t sequence, const binlog::Event& event, const binlog::RowsEvent& rows,
                              size_t k) const {
  CHSYNC_ASSIGN_OR_RETURN(uint64_t offset, numbering_.Offset(event, rows, k));
  return RowVersion({sequence, offset});
}

Result<uint64_t> Versions::OfStatement(std::string_view file, int64_t base, const binlog::Event& event) {
  CHSYNC_ASSIGN_OR_RETURN(uint32_t sequence, Sequence(file, base));
  return RowVersion({sequence, event.position + shift()});
}

}  // namespace chsync::pipe
