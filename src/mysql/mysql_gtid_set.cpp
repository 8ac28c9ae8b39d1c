#include "mysql/mysql_gtid_set.h"

#include <algorithm>
#include <cassert>
#include <tuple>

#include "common/byte_reader.h"

namespace chsync::mysql {
namespace {

constexpr size_t kUuidTextLength = 36;
constexpr uint8_t kTaggedFormat = 1;

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}
bool IsAlpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool IsTagStart(char c) {
  return IsAlpha(c) || c == '_';
}
bool IsTagChar(char c) {
  return IsAlpha(c) || IsDigit(c) || c == '_';
}
char Lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// Parses the 36-character UUID at the start of `text`.
bool ParseUuid(std::string_view text, std::array<uint8_t, 16>& out) {
  if (text.size() < kUuidTextLength) return false;
  size_t byte = 0;
  for (size_t i = 0; i < kUuidTextLength;) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i] != '-') return false;
      ++i;
      continue;
    }
    int hi = HexValue(text[i]);
    int lo = HexValue(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[byte++] = static_cast<uint8_t>((hi << 4) | lo);
    i += 2;
  }
  return true;
}

void AppendU16(std::string& out, uint16_t v) {
  for (int i = 0; i < 2; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void AppendU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void AppendU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

/// Text parser with the offending part and its offset in every error.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<MysqlGtidSet> Run() {
    MysqlGtidSet set;
    SkipSpace();
    while (true) {
      while (Peek() == ',') {
        ++pos_;
        SkipSpace();
      }
      if (AtEnd()) return set;
      std::array<uint8_t, 16> uuid{};
      if (!ParseUuid(text_.substr(pos_), uuid)) {
        return Fail("expected a UUID such as 3e11fa47-71ca-11e1-9e33-c80aa9429562", Word());
      }
      pos_ += kUuidTextLength;
      SkipSpace();
      std::string tag;
      while (Peek() == ':') {
        ++pos_;
        SkipSpace();
        if (IsTagStart(Peek())) {
          CHSYNC_ASSIGN_OR_RETURN(tag, ParseTag());
        } else if (IsDigit(Peek())) {
          CHSYNC_ASSIGN_OR_RETURN(MysqlGtidSet::Interval iv, ParseInterval());
          set.Add(uuid, tag, iv.start, iv.end);
        } else {
          return Fail("expected an interval (N or N-M) or a tag after ':'", Word());
        }
      }
      if (!AtEnd() && Peek() != ',') {
        return Fail("expected ',' or ':' after the UUID's intervals", Word());
      }
    }
  }

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  void SkipSpace() {
    while (!AtEnd() && IsSpace(text_[pos_])) ++pos_;
  }
  /// The text at the cursor up to the next separator, for messages.
  std::string_view Word() const {
    size_t end = pos_;
    while (end < text_.size() && !IsSpace(text_[end]) && text_[end] != ',' && end - pos_ < 40) ++end;
    if (end == pos_ && end < text_.size()) ++end;
    return text_.substr(pos_, end - pos_);
  }

  Error Fail(std::string_view problem, std::string_view part) const {
    std::string shown(text_.substr(0, 200));
    if (text_.size() > 200) shown += "...";
    std::string at = AtEnd() ? "the end" : "'" + std::string(part) + "' at offset " + std::to_string(pos_);
    return Error(ErrorKind::kUsage, "GTID set '" + shown + "' is not a MySQL GTID set: " +
                                        std::string(problem) + ", found " + at);
  }

  Result<std::string> ParseTag() {
    size_t start = pos_;
    while (!AtEnd() && IsTagChar(text_[pos_])) ++pos_;
    std::string_view tag = text_.substr(start, pos_ - start);
    if (tag.size() > MysqlGtidSet::kMaxTagLength) {
      pos_ = start;
      return Fail("a tag has at most 32 characters", tag);
    }
    SkipSpace();
    if (!AtEnd() && Peek() != ':' && Peek() != ',') {
      pos_ = start;
      return Fail("a tag is a letter or '_' followed by letters, digits or '_'", Word());
    }
    std::string lower(tag);
    for (char& c : lower) c = Lower(c);
    return lower;
  }

  Result<int64_t> ParseNumber() {
    size_t start = pos_;
    uint64_t value = 0;
    bool overflow = false;
    while (!AtEnd() && IsDigit(text_[pos_])) {
      uint64_t digit = static_cast<uint64_t>(text_[pos_] - '0');
      if (value > (static_cast<uint64_t>(MysqlGtidSet::kMaxGno) - digit) / 10) overflow = true;
      if (!overflow) value = value * 10 + digit;
      ++pos_;
    }
    if (pos_ == start) return Fail("expected a transaction number", Word());
    std::string_view digits = text_.substr(start, pos_ - start);
    if (overflow) {
      pos_ = start;
      return Fail("transaction numbers go up to 9223372036854775806", digits);
    }
    if (value == 0) {
      pos_ = start;
      return Fail("transaction numbers start at 1", digits);
    }
    return static_cast<int64_t>(value);
  }

  Result<MysqlGtidSet::Interval> ParseInterval() {
    size_t start_pos = pos_;
    CHSYNC_ASSIGN_OR_RETURN(int64_t first, ParseNumber());
    SkipSpace();
    int64_t last = first;
    if (Peek() == '-') {
      ++pos_;
      SkipSpace();
      CHSYNC_ASSIGN_OR_RETURN(last, ParseNumber());
      SkipSpace();
      if (last < first) {
        std::string_view range = text_.substr(start_pos, pos_ - start_pos);
        pos_ = start_pos;
        return Fail("an interval N-M needs N <= M", range);
      }
    }
    return MysqlGtidSet::Interval{first, last + 1};
  }

  std::string_view text_;
  size_t pos_ = 0;
};

bool ValidTag(std::string_view tag) {
  if (tag.size() > MysqlGtidSet::kMaxTagLength) return false;
  if (tag.empty()) return true;
  if (!IsTagStart(tag[0])) return false;
  return std::all_of(tag.begin(), tag.end(), IsTagChar);
}

}  // namespace

std::string UuidText(const std::array<uint8_t, 16>& uuid) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(kUuidTextLength);
  for (size_t i = 0; i < uuid.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[uuid[i] >> 4]);
    out.push_back(kHex[uuid[i] & 15]);
  }
  return out;
}

Result<MysqlGtidSet> MysqlGtidSet::Parse(std::string_view text) {
  return Parser(text).Run();
}

void MysqlGtidSet::Add(const std::array<uint8_t, 16>& uuid, const std::string& tag, int64_t start,
                       int64_t end) {
  assert(start >= 1 && start < end && end - 1 <= kMaxGno);
  auto key = [](const Entry& e) { return std::tie(e.uuid, e.tag); };
  Entry probe{uuid, tag, {}};
  auto it = std::lower_bound(entries_.begin(), entries_.end(), probe,
                             [&](const Entry& a, const Entry& b) { return key(a) < key(b); });
  if (it == entries_.end() || key(*it) != key(probe)) it = entries_.insert(it, std::move(probe));
  std::vector<Interval>& ivs = it->intervals;
  // Merge [start, end) with every interval it overlaps or touches.
  auto first = std::lower_bound(ivs.begin(), ivs.end(), start,
                                [](const Interval& iv, int64_t s) { return iv.end < s; });
  auto last = first;
  while (last != ivs.end() && last->start <= end) {
    start = std::min(start, last->start);
    end = std::max(end, last->end);
    ++last;
  }
  first = ivs.erase(first, last);
  ivs.insert(first, Interval{start, end});
}

bool MysqlGtidSet::has_tags() const {
  return std::any_of(entries_.begin(), entries_.end(), [](const Entry& e) { return !e.tag.empty(); });
}

std::string MysqlGtidSet::Encode() const {
  bool tagged = has_tags();
  std::string out;
  uint64_t n = entries_.size();
  AppendU64(out, tagged ? (uint64_t{kTaggedFormat} << 56) | (n << 8) | kTaggedFormat : n);
  for (const Entry& e : entries_) {
    out.append(reinterpret_cast<const char*>(e.uuid.data()), e.uuid.size());
    if (tagged) {
      // A serialization-library varlen integer: below 128 it is one byte, the value shifted
      // left by one (the low bit 0 says "no more bytes"). Tags are at most 32 characters.
      out.push_back(static_cast<char>(e.tag.size() << 1));
      out.append(e.tag);
    }
    AppendU64(out, e.intervals.size());
    for (const Interval& iv : e.intervals) {
      AppendU64(out, static_cast<uint64_t>(iv.start));
      AppendU64(out, static_cast<uint64_t>(iv.end));
    }
  }
  return out;
}

Result<MysqlGtidSet> MysqlGtidSet::Decode(std::string_view bytes) {
  ByteReader r(bytes);
  MysqlGtidSet set;
  CHSYNC_ASSIGN_OR_RETURN(uint64_t head, r.ReadU64("GTID set entry count"));
  auto format = static_cast<uint8_t>(head >> 56);
  uint64_t count = head;
  if (format == kTaggedFormat) {
    if ((head & 0xFF) != kTaggedFormat) {
      return Error(ErrorKind::kCorrupt,
                   "encoded GTID set: tagged format marker missing in the low byte at offset 0");
    }
    count = (head >> 8) & 0xFFFFFFFFFFFFULL;
  } else if (format != 0) {
    return Error(ErrorKind::kCorrupt,
                 "encoded GTID set: unknown format " + std::to_string(format) + " at offset 0");
  }
  size_t min_entry = format == kTaggedFormat ? 16 + 1 + 8 : 16 + 8;
  if (count > r.remaining() / min_entry) {
    return Error(ErrorKind::kCorrupt, "encoded GTID set: " + std::to_string(count) +
                                          " entries do not fit in " + std::to_string(bytes.size()) +
                                          " bytes");
  }
  for (uint64_t i = 0; i < count; ++i) {
    std::array<uint8_t, 16> uuid{};
    CHSYNC_ASSIGN_OR_RETURN(std::string_view uuid_bytes, r.ReadBytes(16, "GTID set UUID"));
    std::copy(uuid_bytes.begin(), uuid_bytes.end(), uuid.begin());
    std::string tag;
    if (format == kTaggedFormat) {
      size_t at = r.offset();
      CHSYNC_ASSIGN_OR_RETURN(uint8_t len, r.ReadU8("GTID tag length"));
      // Lengths up to 32 take one varlen byte with the low bit clear.
      if ((len & 1) != 0 || (len >> 1) > kMaxTagLength) {
        return Error(ErrorKind::kCorrupt, "encoded GTID set: bad tag length byte " + std::to_string(len) +
                                              " at offset " + std::to_string(at));
      }
      CHSYNC_ASSIGN_OR_RETURN(std::string_view tag_bytes, r.ReadBytes(len >> 1, "GTID tag"));
      if (!ValidTag(tag_bytes)) {
        return Error(ErrorKind::kCorrupt,
                     "encoded GTID set: invalid tag at offset " + std::to_string(at + 1));
      }
      tag.assign(tag_bytes);
      for (char& c : tag) c = Lower(c);
    }
    CHSYNC_ASSIGN_OR_RETURN(uint64_t n, r.ReadU64("GTID interval count"));
    if (n > r.remaining() / 16) {
      return Error(ErrorKind::kCorrupt, "encoded GTID set: " + std::to_string(n) + " intervals of " +
                                            UuidText(uuid) + " do not fit in the " +
                                            std::to_string(r.remaining()) + " bytes left");
    }
    int64_t previous_end = 0;
    for (uint64_t k = 0; k < n; ++k) {
      size_t at = r.offset();
      CHSYNC_ASSIGN_OR_RETURN(uint64_t start, r.ReadU64("GTID interval start"));
      CHSYNC_ASSIGN_OR_RETURN(uint64_t end, r.ReadU64("GTID interval end"));
      // As MySQL checks them: ascending, not touching, non-empty, within the signed range.
      if (start > static_cast<uint64_t>(kMaxGno) || end > static_cast<uint64_t>(kMaxGno) + 1 ||
          static_cast<int64_t>(start) <= previous_end || end <= start) {
        return Error(ErrorKind::kCorrupt, "encoded GTID set: interval [" + std::to_string(start) + ", " +
                                              std::to_string(end) + ") of " + UuidText(uuid) + " at offset " +
                                              std::to_string(at) + " is empty, out of order or out of range");
      }
      previous_end = static_cast<int64_t>(end);
      set.Add(uuid, tag, static_cast<int64_t>(start), static_cast<int64_t>(end));
    }
  }
  if (!r.empty()) {
    return Error(ErrorKind::kCorrupt, "encoded GTID set: " + std::to_string(r.remaining()) +
                                          " bytes left over at offset " + std::to_string(r.offset()));
  }
  return set;
}

std::string MysqlGtidSet::ToString() const {
  std::string out;
  const Entry* previous = nullptr;
  for (const Entry& e : entries_) {
    if (previous == nullptr || previous->uuid != e.uuid) {
      if (previous != nullptr) out.push_back(',');
      out += UuidText(e.uuid);
    }
    if (!e.tag.empty()) {
      out.push_back(':');
      out += e.tag;
    }
    for (const Interval& iv : e.intervals) {
      out.push_back(':');
      out += std::to_string(iv.start);
      if (iv.end - 1 > iv.start) {
        out.push_back('-');
        out += std::to_string(iv.end - 1);
      }
    }
    previous = &e;
  }
  return out;
}

bool LooksLikeMariaDbGtidList(std::string_view text) {
  bool any = false;
  size_t i = 0;
  auto skip_space = [&] {
    while (i < text.size() && IsSpace(text[i])) ++i;
  };
  skip_space();
  while (i < text.size()) {
    for (int part = 0; part < 3; ++part) {
      if (part > 0) {
        if (i >= text.size() || text[i] != '-') return false;
        ++i;
      }
      size_t digits = i;
      while (i < text.size() && IsDigit(text[i])) ++i;
      if (i == digits) return false;
    }
    any = true;
    skip_space();
    if (i < text.size()) {
      if (text[i] != ',') return false;
      ++i;
      skip_space();
    }
  }
  return any;
}

std::string BuildComBinlogDumpGtid(uint16_t flags, uint32_t server_id, std::string_view file,
                                   uint64_t position, std::string_view gtid_data) {
  std::string out;
  out.reserve(1 + 2 + 4 + 4 + file.size() + 8 + 4 + gtid_data.size());
  out.push_back(static_cast<char>(kComBinlogDumpGtid));
  AppendU16(out, flags);
  AppendU32(out, server_id);
  AppendU32(out, static_cast<uint32_t>(file.size()));
  out.append(file);
  AppendU64(out, position);
  if ((flags & kBinlogThroughGtid) != 0) {
    AppendU32(out, static_cast<uint32_t>(gtid_data.size()));
    out.append(gtid_data);
  }
  return out;
}

}  // namespace chsync::mysql
