#include "binlog/json_binary.h"

#include <array>
#include <charconv>
#include <cstring>

#include "binlog/decimal.h"
#include "common/byte_reader.h"

namespace chsync::binlog {
namespace {

enum JsonType : uint8_t {
  kSmallObject = 0x00,
  kLargeObject = 0x01,
  kSmallArray = 0x02,
  kLargeArray = 0x03,
  kLiteral = 0x04,
  kInt16 = 0x05,
  kUint16 = 0x06,
  kInt32 = 0x07,
  kUint32 = 0x08,
  kInt64 = 0x09,
  kUint64 = 0x0a,
  kDouble = 0x0b,
  kString = 0x0c,
  kOpaque = 0x0f,
};

constexpr int kMaxDepth = 200;

// MySQL field types that opaque JSON values carry and that we render specially.
constexpr uint8_t kFieldNewDecimal = 246;
constexpr uint8_t kFieldDate = 10;
constexpr uint8_t kFieldTime = 11;
constexpr uint8_t kFieldDateTime = 12;
constexpr uint8_t kFieldTimestamp = 7;

class JsonWriter {
 public:
  JsonWriter(std::string_view data, uint64_t base, std::string& out)
      : data_(reinterpret_cast<const uint8_t*>(data.data())), size_(data.size()), base_(base), out_(out) {}

  Status Top() {
    if (size_ == 0) {
      out_.append("null");
      return Status::Ok();
    }
    return Value(data_[0], 1, size_ - 1, 0);
  }

 private:
  Error Bad(size_t at, std::string_view what) const {
    return Error(ErrorKind::kCorrupt,
                 "invalid binary JSON: " + std::string(what) + " at offset " + std::to_string(base_ + at));
  }

  uint64_t Read(size_t at, size_t n) const {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t{data_[at + i]} << (8 * i);
    return v;
  }

  // A value of `type` whose data starts at `at` and may use `avail` bytes.
  Status Value(uint8_t type, size_t at, size_t avail, int depth) {
    if (depth > kMaxDepth) return Bad(at, "nesting too deep");
    switch (type) {
      case kSmallObject: return Container(at, avail, false, true, depth);
      case kLargeObject: return Container(at, avail, true, true, depth);
      case kSmallArray: return Container(at, avail, false, false, depth);
      case kLargeArray: return Container(at, avail, true, false, depth);
      case kLiteral:
        if (avail < 1) return Bad(at, "truncated literal");
        return Literal(data_[at], at);
      case kInt16:
        if (avail < 2) return Bad(at, "truncated int16");
        AppendInt(static_cast<int16_t>(Read(at, 2)));
        return Status::Ok();
      case kUint16:
        if (avail < 2) return Bad(at, "truncated uint16");
        AppendUint(Read(at, 2));
        return Status::Ok();
      case kInt32:
        if (avail < 4) return Bad(at, "truncated int32");
        AppendInt(static_cast<int32_t>(Read(at, 4)));
        return Status::Ok();
      case kUint32:
        if (avail < 4) return Bad(at, "truncated uint32");
        AppendUint(Read(at, 4));
        return Status::Ok();
      case kInt64:
        if (avail < 8) return Bad(at, "truncated int64");
        AppendInt(static_cast<int64_t>(Read(at, 8)));
        return Status::Ok();
      case kUint64:
        if (avail < 8) return Bad(at, "truncated uint64");
        AppendUint(Read(at, 8));
        return Status::Ok();
      case kDouble: {
        if (avail < 8) return Bad(at, "truncated double");
        uint64_t bits = Read(at, 8);
        double d;
        std::memcpy(&d, &bits, 8);
        AppendDouble(d);
        return Status::Ok();
      }
      case kString: {
        size_t len = 0, used = 0;
        CHSYNC_RETURN_IF_ERROR(VarLen(at, avail, len, used));
        if (len > avail - used) return Bad(at, "string longer than its container");
        AppendJsonString({reinterpret_cast<const char*>(data_ + at + used), len}, out_);
        return Status::Ok();
      }
      case kOpaque: {
        if (avail < 1) return Bad(at, "truncated opaque value");
        uint8_t field_type = data_[at];
        size_t len = 0, used = 0;
        CHSYNC_RETURN_IF_ERROR(VarLen(at + 1, avail - 1, len, used));
        if (len > avail - 1 - used) return Bad(at, "opaque value longer than its container");
        return Opaque(field_type, at + 1 + used, len);
      }
      default: return Bad(at, "unknown value type " + std::to_string(type));
    }
  }

  Status Literal(uint8_t v, size_t at) {
    switch (v) {
      case 0: out_.append("null"); return Status::Ok();
      case 1: out_.append("true"); return Status::Ok();
      case 2: out_.append("false"); return Status::Ok();
      default: return Bad(at, "unknown literal " + std::to_string(v));
    }
  }

  Status VarLen(size_t at, size_t avail, size_t& len, size_t& used) const {
    uint64_t v = 0;
    for (size_t i = 0; i < 5; ++i) {
      if (i >= avail) return Bad(at, "truncated length");
      uint8_t b = data_[at + i];
      v |= uint64_t{b & 0x7fu} << (7 * i);
      if ((b & 0x80) == 0) {
        if (v > UINT32_MAX) return Bad(at, "length too large");
        len = static_cast<size_t>(v);
        used = i + 1;
        return Status::Ok();
      }
    }
    return Bad(at, "length longer than 5 bytes");
  }

  Status Container(size_t at, size_t avail, bool large, bool object, int depth) {
    size_t w = large ? 4 : 2;
    if (avail < 2 * w) return Bad(at, "truncated container header");
    uint64_t count = Read(at, w);
    uint64_t size = Read(at + w, w);
    if (size > avail) return Bad(at, "container size past the end");
    if (size < 2 * w) return Bad(at, "container size too small");
    size_t key_entry = w + 2;
    size_t value_entry = 1 + w;
    uint64_t header = 2 * w + count * (object ? key_entry : 0) + count * value_entry;
    if (count > size || header > size) return Bad(at, "container entries past its size");
    out_.push_back(object ? '{' : '[');
    for (uint64_t i = 0; i < count; ++i) {
      if (i > 0) out_.append(", ");
      if (object) {
        size_t ke = at + 2 * w + i * key_entry;
        uint64_t koff = Read(ke, w);
        uint64_t klen = Read(ke + w, 2);
        if (koff > size || klen > size - koff) return Bad(ke, "key past the container");
        AppendJsonString({reinterpret_cast<const char*>(data_ + at + koff), static_cast<size_t>(klen)}, out_);
        out_.append(": ");
      }
      size_t ve = at + 2 * w + count * (object ? key_entry : 0) + i * value_entry;
      uint8_t type = data_[ve];
      bool inlined = type == kLiteral || type == kInt16 || type == kUint16 ||
                     (large && (type == kInt32 || type == kUint32));
      if (inlined) {
        CHSYNC_RETURN_IF_ERROR(Value(type, ve + 1, w, depth + 1));
      } else {
        uint64_t off = Read(ve + 1, w);
        if (off >= size) return Bad(ve, "value offset past the container");
        CHSYNC_RETURN_IF_ERROR(Value(type, at + off, static_cast<size_t>(size - off), depth + 1));
      }
    }
    out_.push_back(object ? '}' : ']');
    return Status::Ok();
  }

  Status Opaque(uint8_t field_type, size_t at, size_t len) {
    switch (field_type) {
      case kFieldNewDecimal: {
        if (len < 2) return Bad(at, "truncated opaque DECIMAL");
        ByteReader r(data_ + at + 2, len - 2, base_ + at + 2);
        return ReadDecimal(r, data_[at], data_[at + 1], out_);
      }
      case kFieldDate:
      case kFieldTime:
      case kFieldDateTime:
      case kFieldTimestamp: {
        if (len < 8) return Bad(at, "truncated opaque temporal value");
        int64_t packed = static_cast<int64_t>(Read(at, 8));
        AppendPackedTemporal(field_type, packed);
        return Status::Ok();
      }
      default:
        out_.append("\"base64:type");
        out_.append(std::to_string(field_type));
        out_.push_back(':');
        AppendBase64(at, len);
        out_.push_back('"');
        return Status::Ok();
    }
  }

  void AppendPackedTemporal(uint8_t field_type, int64_t packed) {
    bool negative = packed < 0;
    uint64_t v = negative ? uint64_t(0) - static_cast<uint64_t>(packed) : static_cast<uint64_t>(packed);
    uint64_t frac = v % (1u << 24);
    uint64_t intpart = v >> 24;
    char buf[64];
    int n = 0;
    if (field_type == kFieldTime) {
      uint64_t hour = (intpart >> 12) % (1u << 10);
      uint64_t minute = (intpart >> 6) % 64;
      uint64_t second = intpart % 64;
      n = std::snprintf(buf, sizeof buf, "\"%s%02llu:%02llu:%02llu.%06llu\"", negative ? "-" : "",
                        static_cast<unsigned long long>(hour), static_cast<unsigned long long>(minute),
                        static_cast<unsigned long long>(second), static_cast<unsigned long long>(frac));
    } else {
      uint64_t ymd = intpart >> 17;
      uint64_t ym = ymd >> 5;
      uint64_t hms = intpart % (1u << 17);
      unsigned long long year = ym / 13, month = ym % 13, day = ymd % 32;
      unsigned long long hour = hms >> 12, minute = (hms >> 6) % 64, second = hms % 64;
      if (field_type == kFieldDate) {
        n = std::snprintf(buf, sizeof buf, "\"%04llu-%02llu-%02llu\"", year, month, day);
      } else {
        n = std::snprintf(buf, sizeof buf, "\"%04llu-%02llu-%02llu %02llu:%02llu:%02llu.%06llu\"", year,
                          month, day, hour, minute, second, static_cast<unsigned long long>(frac));
      }
    }
    out_.append(buf, static_cast<size_t>(n));
  }

  void AppendBase64(size_t at, size_t len) {
    static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
      uint32_t v = (uint32_t{data_[at + i]} << 16) | (uint32_t{data_[at + i + 1]} << 8) | data_[at + i + 2];
      out_.push_back(kAlphabet[(v >> 18) & 63]);
      out_.push_back(kAlphabet[(v >> 12) & 63]);
      out_.push_back(kAlphabet[(v >> 6) & 63]);
      out_.push_back(kAlphabet[v & 63]);
    }
    if (len - i == 1) {
      uint32_t v = uint32_t{data_[at + i]} << 16;
      out_.push_back(kAlphabet[(v >> 18) & 63]);
      out_.push_back(kAlphabet[(v >> 12) & 63]);
      out_.append("==");
    } else if (len - i == 2) {
      uint32_t v = (uint32_t{data_[at + i]} << 16) | (uint32_t{data_[at + i + 1]} << 8);
      out_.push_back(kAlphabet[(v >> 18) & 63]);
      out_.push_back(kAlphabet[(v >> 12) & 63]);
      out_.push_back(kAlphabet[(v >> 6) & 63]);
      out_.push_back('=');
    }
  }

  void AppendInt(int64_t v) {
    char buf[24];
    auto res = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, res.ptr);
  }
  void AppendUint(uint64_t v) {
    char buf[24];
    auto res = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, res.ptr);
  }
  void AppendDouble(double d) {
    char buf[32];
    auto res = std::to_chars(buf, buf + sizeof buf, d);
    for (char* p = buf; p < res.ptr; ++p) {
      if (*p == '+') continue;  // MySQL prints 1e20, not 1e+20
      out_.push_back(*p);
    }
  }

  const uint8_t* data_;
  size_t size_;
  uint64_t base_;
  std::string& out_;
};

}  // namespace

// Bytes AppendJsonString copies unchanged: all but control characters, '"' and '\\'.
constexpr std::array<bool, 256> kJsonPlain = [] {
  std::array<bool, 256> t{};
  for (size_t c = 0x20; c < 256; ++c) t[c] = c != '"' && c != '\\';
  return t;
}();

void AppendJsonString(std::string_view s, std::string& out) {
  out.push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    size_t plain = i;
    while (plain < s.size() && kJsonPlain[static_cast<unsigned char>(s[plain])]) ++plain;
    if (plain > i) {
      out.append(s.data() + i, plain - i);
      i = plain;
      if (i == s.size()) break;
    }
    char c = s[i];
    auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\b': out.append("\\b"); break;
      case '\f': out.append("\\f"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      default: {
        static constexpr char kHex[] = "0123456789abcdef";
        out.append("\\u00");
        out.push_back(kHex[u >> 4]);
        out.push_back(kHex[u & 15]);
      }
    }
  }
  out.push_back('"');
}

Status JsonBinaryToText(std::string_view data, uint64_t base_offset, std::string& out) {
  return JsonWriter(data, base_offset, out).Top();
}

}  // namespace chsync::binlog
