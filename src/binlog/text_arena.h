#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

namespace chsync::binlog {

/// Bump allocator for text the decoder produces (DECIMAL and JSON text, inflated payloads).
/// Storage handed out stays at its address until Reset(): blocks are never moved, so views into
/// them stay valid while more is allocated. Reset() keeps the largest block for reuse.
class TextArena {
 public:
  /// Returns `n` writable bytes.
  char* Allocate(size_t n) {
    if (n > capacity_ - used_) NewBlock(n);
    char* p = current_ + used_;
    used_ += n;
    return p;
  }
  /// Copies `s` into the arena.
  std::string_view Copy(std::string_view s) {
    if (s.empty()) return {};
    char* p = Allocate(s.size());
    std::memcpy(p, s.data(), s.size());
    return {p, s.size()};
  }
  /// Gives back the unused tail of the most recent Allocate(n) so it holds only `keep` bytes.
  /// REQUIRES: the last Allocate returned `p` and keep <= its size.
  void Shrink(const char* p, size_t keep) { used_ = static_cast<size_t>(p - current_) + keep; }
  void Reset() {
    if (blocks_.size() > 1) {
      std::unique_ptr<char[]> last = std::move(blocks_.back());
      blocks_.clear();
      blocks_.push_back(std::move(last));
    }
    used_ = 0;
  }

 private:
  void NewBlock(size_t n) {
    size_t size = n > kBlockSize ? n : kBlockSize;
    blocks_.push_back(std::make_unique<char[]>(size));
    current_ = blocks_.back().get();
    capacity_ = size;
    used_ = 0;
  }
  static constexpr size_t kBlockSize = size_t{64} * 1024;
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* current_ = nullptr;
  size_t capacity_ = 0;
  size_t used_ = 0;
};

}  // namespace chsync::binlog
