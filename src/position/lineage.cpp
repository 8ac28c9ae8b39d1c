#include "position/lineage.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "position/row_version.h"
#include "state/state_dir.h"

namespace chsync::pipe {

Result<Lineage> Lineage::Load(const std::string& dir) {
  Lineage lineage(dir + "/" + std::string(kFile));
  int fd = open(lineage.path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return lineage;
    return Error(ErrorKind::kIo, fmt::format("cannot open {}: {}", lineage.path_, std::strerror(errno)));
  }
  std::string text;
  char buffer[4096];
  while (true) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return Error(ErrorKind::kIo, fmt::format("cannot read {}: {}", lineage.path_, std::strerror(err)));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  auto corrupt = [&](const std::string& what) {
    return Error(
        ErrorKind::kCorrupt,
        fmt::format("{} is damaged ({}): it holds the highest row version this pipe wrote. Remove it "
                    "only after `chsync resync`, which copies every table into fresh ones",
                    lineage.path_, what));
  };
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return corrupt("not a JSON object");
  auto it = j.find("high_water_sequence");
  if (it == j.end() || !it->is_number_unsigned()) return corrupt("no high_water_sequence");
  const uint64_t mark = it->get<uint64_t>();
  if (mark > kMaxFileSequence)
    return corrupt("high_water_sequence " + std::to_string(mark) + " is out of range");
  lineage.high_water_ = static_cast<uint32_t>(mark);
  if (auto sent = j.find("sent_gtids"); sent != j.end()) {
    if (!sent->is_string()) return corrupt("sent_gtids is not a string");
    lineage.sent_gtids_ = sent->get<std::string>();
  }
  return lineage;
}

Status Lineage::Save(uint32_t mark, const std::string& sent) {
  nlohmann::ordered_json j;
  j["format"] = 1;
  j["high_water_sequence"] = mark;
  j["sent_gtids"] = sent;
  if (Status s = WriteFileAtomically(path_, j.dump() + "\n"); !s.ok()) {
    return StateSaveError(path_.substr(0, path_.rfind('/')),
                          "the checkpoint's record of the row versions and GTIDs sent (lineage.json)",
                          s.error());
  }
  high_water_ = mark;
  sent_gtids_ = sent;
  return Status::Ok();
}

Status Lineage::NoteSent(const std::string& gtids) {
  if (gtids == sent_gtids_) return Status::Ok();
  return Save(high_water_, gtids);
}

Result<uint32_t> Lineage::Count(std::string_view file, int64_t base) {
  CHSYNC_ASSIGN_OR_RETURN(uint32_t sequence, BinlogFileSequence(file));
  const int64_t counted = static_cast<int64_t>(sequence) + base;
  if (counted < 1 || counted > static_cast<int64_t>(kMaxFileSequence)) {
    return Error(
        ErrorKind::kUnsupported,
        fmt::format("binlog {} counts as file {} of this pipe (sequence base {}), beyond the {} files "
                    "row versions can number: run `chsync resync` to copy the tables into fresh ones",
                    file, counted, base, kMaxFileSequence));
  }
  const auto result = static_cast<uint32_t>(counted);
  if (result > high_water_) CHSYNC_RETURN_IF_ERROR(Save(result, sent_gtids_));
  return result;
}

Result<int64_t> Lineage::EpochBase(std::string_view file) const {
  CHSYNC_ASSIGN_OR_RETURN(uint32_t sequence, BinlogFileSequence(file));
  const int64_t base = static_cast<int64_t>(high_water_) + 1 - static_cast<int64_t>(sequence);
  if (static_cast<int64_t>(high_water_) + 1 > static_cast<int64_t>(kMaxFileSequence)) {
    return Error(
        ErrorKind::kUnsupported,
        fmt::format("a new epoch of row versions would count binlog {} as file {}, beyond the {} files "
                    "row versions can number: run `chsync resync` to copy the tables into fresh ones",
                    file, high_water_ + 1, kMaxFileSequence));
  }
  return base;
}

Status Lineage::Raise(uint32_t counted) {
  if (counted <= high_water_) return Status::Ok();
  return Save(counted, sent_gtids_);
}

}  // namespace chsync::pipe
