#include "binlog/value.h"

#include <charconv>
#include <cstdio>
#include <cstring>

namespace chsync::binlog {
namespace {

void AppendFraction(uint32_t micros, uint8_t fsp, std::string& out) {
  if (fsp == 0) return;
  if (fsp > 6) fsp = 6;
  char buf[8];
  std::snprintf(buf, sizeof buf, "%06u", micros % 1000000);
  out.push_back('.');
  out.append(buf, fsp);
}

// Days since 1970-01-01 to a civil date (proleptic Gregorian).
void CivilFromDays(int64_t z, int& y, unsigned& m, unsigned& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t yy = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = static_cast<int>(yy + (m <= 2));
}

template <typename T>
void AppendNumber(T v, std::string& out) {
  char buf[40];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

}  // namespace

void AppendValueText(const Value& v, std::string& out) {
  char buf[64];
  switch (v.kind) {
    case ValueKind::kAbsent: return;
    case ValueKind::kNull: out.append("NULL"); return;
    case ValueKind::kInt: AppendNumber(v.i, out); return;
    case ValueKind::kUint:
    case ValueKind::kBit:
    case ValueKind::kEnum:
    case ValueKind::kSet: AppendNumber(v.u, out); return;
    case ValueKind::kFloat: AppendNumber(v.f, out); return;
    case ValueKind::kDouble: AppendNumber(v.d, out); return;
    case ValueKind::kYear: {
      int n = std::snprintf(buf, sizeof buf, "%04llu", static_cast<unsigned long long>(v.u));
      out.append(buf, static_cast<size_t>(n));
      return;
    }
    case ValueKind::kDate: {
      int n = std::snprintf(buf, sizeof buf, "%04u-%02u-%02u", v.date.year, v.date.month, v.date.day);
      out.append(buf, static_cast<size_t>(n));
      return;
    }
    case ValueKind::kTime: {
      int n = std::snprintf(buf, sizeof buf, "%s%02u:%02u:%02u", v.time.negative ? "-" : "", v.time.hour,
                            v.time.minute, v.time.second);
      out.append(buf, static_cast<size_t>(n));
      AppendFraction(v.time.microsecond, v.fsp, out);
      return;
    }
    case ValueKind::kDateTime: {
      const DateTime& t = v.datetime;
      int n = std::snprintf(buf, sizeof buf, "%04u-%02u-%02u %02u:%02u:%02u", t.year, t.month, t.day, t.hour,
                            t.minute, t.second);
      out.append(buf, static_cast<size_t>(n));
      AppendFraction(t.microsecond, v.fsp, out);
      return;
    }
    case ValueKind::kTimestamp: {
      if (v.timestamp.seconds == 0 && v.timestamp.microsecond == 0) {
        out.append("0000-00-00 00:00:00");
      } else {
        int64_t secs = v.timestamp.seconds;
        int y;
        unsigned m, d;
        CivilFromDays(secs / 86400, y, m, d);
        int64_t rem = secs % 86400;
        int n = std::snprintf(buf, sizeof buf, "%04d-%02u-%02u %02d:%02d:%02d", y, m, d,
                              static_cast<int>(rem / 3600), static_cast<int>(rem / 60 % 60),
                              static_cast<int>(rem % 60));
        out.append(buf, static_cast<size_t>(n));
      }
      AppendFraction(v.timestamp.microsecond, v.fsp, out);
      return;
    }
    case ValueKind::kDecimal:
    case ValueKind::kString:
    case ValueKind::kJson:
    case ValueKind::kJsonDiff:
    case ValueKind::kGeometry: out.append(v.text); return;
    case ValueKind::kVector: {
      out.push_back('[');
      for (size_t i = 0; i + 4 <= v.text.size(); i += 4) {
        if (i > 0) out.push_back(',');
        uint32_t bits = 0;
        for (size_t k = 0; k < 4; ++k) bits |= uint32_t{static_cast<uint8_t>(v.text[i + k])} << (8 * k);
        float f;
        std::memcpy(&f, &bits, 4);
        AppendNumber(f, out);
      }
      out.push_back(']');
      return;
    }
  }
}

}  // namespace chsync::binlog
