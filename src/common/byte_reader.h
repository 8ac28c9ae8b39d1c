#pragma once

#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "common/result.h"

namespace chsync {

/// A bounds-checked cursor over bytes it does not own.
///
/// Every read checks that the bytes exist before touching them, and lengths read from the
/// input are compared with what remains before anything is allocated or sliced. A failed
/// read leaves the cursor where it was and returns an Error naming the offset (relative to
/// `base_offset`, so a reader over one event reports positions in the file).
///
/// Lifetime: the viewed bytes must outlive the reader and every string_view it returns.
/// Not thread-safe; cheap to copy (copying makes an independent cursor).
class ByteReader {
 public:
  ByteReader() = default;
  ByteReader(const uint8_t* data, size_t size, uint64_t base_offset = 0)
      : data_(data), size_(size), base_offset_(base_offset) {}
  ByteReader(std::string_view bytes, uint64_t base_offset = 0)
      : ByteReader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), base_offset) {}

  size_t position() const { return pos_; }
  size_t size() const { return size_; }
  size_t remaining() const { return size_ - pos_; }
  bool empty() const { return pos_ == size_; }
  /// Offset of the cursor as the caller counts it (base_offset + position()).
  uint64_t offset() const { return base_offset_ + pos_; }
  const uint8_t* current() const { return data_ + pos_; }
  const uint8_t* data() const { return data_; }

  /// Fails unless `n` more bytes exist. `what` names the field for the error message.
  Status Need(size_t n, std::string_view what) const {
    if (n > size_ - pos_) return Truncated(n, what);
    return Status::Ok();
  }

  Status Skip(size_t n, std::string_view what = "bytes") {
    CHSYNC_RETURN_IF_ERROR(Need(n, what));
    pos_ += n;
    return Status::Ok();
  }

  /// Moves past `n` bytes the caller has checked are there. REQUIRES: n <= remaining().
  void Advance(size_t n) {
    assert(n <= size_ - pos_);
    pos_ += n;
  }

  /// Moves the cursor to an absolute position inside the view.
  Status Seek(size_t pos) {
    if (pos > size_) return Error(ErrorKind::kCorrupt, "seek past the end");
    pos_ = pos;
    return Status::Ok();
  }

  /// Little-endian unsigned integer of `n` bytes (1..8).
  Result<uint64_t> ReadUintLE(size_t n, std::string_view what = "integer") {
    if (n > size_ - pos_) [[unlikely]]
      return Truncated(n, what);
    uint64_t v;
    if (size_ - pos_ >= 8) {
      // One unaligned load, the bytes past `n` masked off (little-endian hosts only).
      std::memcpy(&v, data_ + pos_, 8);
      if constexpr (std::endian::native == std::endian::little) {
        if (n < 8) v &= (uint64_t{1} << (8 * n)) - 1;
      } else {
        v = SlowLE(n);
      }
    } else {
      v = SlowLE(n);
    }
    pos_ += n;
    return v;
  }
  /// Big-endian unsigned integer of `n` bytes (1..8), as DECIMAL and temporal types store them.
  Result<uint64_t> ReadUintBE(size_t n, std::string_view what = "integer") {
    if (n > size_ - pos_) [[unlikely]]
      return Truncated(n, what);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | data_[pos_ + i];
    pos_ += n;
    return v;
  }
  Result<uint8_t> ReadU8(std::string_view what = "byte") {
    if (pos_ == size_) [[unlikely]]
      return Truncated(1, what);
    return data_[pos_++];
  }
  Result<uint16_t> ReadU16(std::string_view what = "uint16") {
    CHSYNC_ASSIGN_OR_RETURN(uint64_t v, ReadUintLE(2, what));
    return static_cast<uint16_t>(v);
  }
  Result<uint32_t> ReadU32(std::string_view what = "uint32") {
    CHSYNC_ASSIGN_OR_RETURN(uint64_t v, ReadUintLE(4, what));
    return static_cast<uint32_t>(v);
  }
  Result<uint64_t> ReadU64(std::string_view what = "uint64") { return ReadUintLE(8, what); }

  /// MySQL length-encoded integer (0xFB..0xFF prefixes). 0xFB (NULL) and 0xFF are rejected.
  Result<uint64_t> ReadPackedInt(std::string_view what = "length-encoded integer") {
    CHSYNC_ASSIGN_OR_RETURN(uint8_t first, ReadU8(what));
    if (first < 0xFB) return uint64_t{first};
    switch (first) {
      case 0xFC: return ReadUintLE(2, what);
      case 0xFD: return ReadUintLE(3, what);
      case 0xFE: return ReadUintLE(8, what);
      default:
        --pos_;
        return Error(ErrorKind::kCorrupt, "invalid " + std::string(what) + " prefix 0x" + Hex(first) +
                                              " at offset " + std::to_string(offset()));
    }
  }

  /// A view of the next `n` bytes; the cursor moves past them.
  Result<std::string_view> ReadBytes(size_t n, std::string_view what = "bytes") {
    if (n > size_ - pos_) [[unlikely]]
      return Truncated(n, what);
    std::string_view v(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return v;
  }
  /// A view of everything left.
  std::string_view ReadRest() {
    std::string_view v(reinterpret_cast<const char*>(data_ + pos_), size_ - pos_);
    pos_ = size_;
    return v;
  }
  /// A sub-reader over the next `n` bytes (offsets stay file-relative); the cursor moves past them.
  Result<ByteReader> Sub(size_t n, std::string_view what = "bytes") {
    CHSYNC_RETURN_IF_ERROR(Need(n, what));
    ByteReader r(data_ + pos_, n, base_offset_ + pos_);
    pos_ += n;
    return r;
  }

  /// An Error of kind kCorrupt that names the field and the current offset.
  Error Corrupt(std::string_view what) const {
    return Error(ErrorKind::kCorrupt, std::string(what) + " at offset " + std::to_string(offset()));
  }

 private:
  static std::string Hex(uint8_t b) {
    static constexpr char kDigits[] = "0123456789abcdef";
    return {kDigits[b >> 4], kDigits[b & 15]};
  }
  uint64_t SlowLE(size_t n) const {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t{data_[pos_ + i]} << (8 * i);
    return v;
  }
  [[gnu::noinline, gnu::cold]] Error Truncated(size_t n, std::string_view what) const {
    return Error(ErrorKind::kCorrupt, "truncated " + std::string(what) + " at offset " +
                                          std::to_string(offset()) + ": needs " + std::to_string(n) +
                                          " bytes, " + std::to_string(size_ - pos_) + " left");
  }

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t pos_ = 0;
  uint64_t base_offset_ = 0;
};

}  // namespace chsync
