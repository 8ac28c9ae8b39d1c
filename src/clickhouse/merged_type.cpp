// The column types of a table several source tables share (merged_type.h).

#include "clickhouse/merged_type.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <utility>

namespace chsync::clickhouse {
namespace {

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

/// `text` without the wrapper `name(…)` around it, or nullopt when it has none.
std::optional<std::string_view> Unwrap(std::string_view text, std::string_view name) {
  if (!StartsWith(text, name) || text.size() < name.size() + 2 || text[name.size()] != '(' ||
      text.back() != ')')
    return std::nullopt;
  return text.substr(name.size() + 1, text.size() - name.size() - 2);
}

std::string Nullable(const std::string& type, bool nullable) {
  return nullable ? "Nullable(" + type + ")" : type;
}

struct Integer {
  bool is_unsigned = false;
  int bits = 0;
};

std::optional<Integer> IntegerOf(std::string_view type) {
  for (int bits : {8, 16, 32, 64}) {
    if (type == fmt::format("Int{}", bits)) return Integer{false, bits};
    if (type == fmt::format("UInt{}", bits)) return Integer{true, bits};
  }
  return std::nullopt;
}

Encoding IntegerEncoding(Integer i) {
  switch (i.bits) {
    case 8: return i.is_unsigned ? Encoding::kUInt8 : Encoding::kInt8;
    case 16: return i.is_unsigned ? Encoding::kUInt16 : Encoding::kInt16;
    case 32: return i.is_unsigned ? Encoding::kUInt32 : Encoding::kInt32;
    default: return i.is_unsigned ? Encoding::kUInt64 : Encoding::kInt64;
  }
}

/// The narrowest integer type holding both, or nullopt (a signed one and a UInt64).
std::optional<Integer> WiderInteger(Integer a, Integer b) {
  if (a.is_unsigned == b.is_unsigned) return Integer{a.is_unsigned, std::max(a.bits, b.bits)};
  Integer s = a.is_unsigned ? b : a;
  Integer u = a.is_unsigned ? a : b;
  if (u.bits == 64) return std::nullopt;
  return Integer{false, std::max(s.bits, u.bits * 2)};
}

struct Decimal {
  uint32_t precision = 0;
  uint32_t scale = 0;
};

std::optional<uint32_t> Number(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  uint32_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return n;
}

std::optional<Decimal> DecimalOf(std::string_view type) {
  std::optional<std::string_view> args = Unwrap(type, "Decimal");
  if (!args) return std::nullopt;
  size_t comma = args->find(',');
  if (comma == std::string_view::npos) return std::nullopt;
  std::optional<uint32_t> p = Number(args->substr(0, comma));
  std::optional<uint32_t> s = Number(args->substr(comma + 1));
  if (!p || !s) return std::nullopt;
  return Decimal{*p, *s};
}

Encoding DecimalEncoding(uint32_t precision) {
  return precision <= 9    ? Encoding::kDecimal32
         : precision <= 18 ? Encoding::kDecimal64
         : precision <= 38 ? Encoding::kDecimal128
                           : Encoding::kDecimal256;
}

std::optional<uint32_t> DateTime64Of(std::string_view type) {
  std::optional<std::string_view> args = Unwrap(type, "DateTime64");
  if (!args) return std::nullopt;
  size_t comma = args->find(',');
  return Number(args->substr(0, comma));
}

/// The labels part of an Enum8/Enum16 type ("'a' = 1, 'b' = 2"), and which one it is.
std::optional<std::pair<bool, std::string_view>> EnumOf(std::string_view type) {
  if (std::optional<std::string_view> a = Unwrap(type, "Enum8")) return std::pair{false, *a};
  if (std::optional<std::string_view> a = Unwrap(type, "Enum16")) return std::pair{true, *a};
  return std::nullopt;
}

ColumnMerge Conflict(std::string_view existing, const MappedType& ours) {
  ColumnMerge m;
  m.kind = ColumnMerge::Kind::kConflict;
  m.why = fmt::format("the shared ClickHouse column is {} and this source's is {}: no type holds both",
                      existing, ours.type);
  return m;
}

/// Merges two plain (not Nullable, not LowCardinality) types: the merged plain type and how our
/// values are written into it; nullopt when nothing holds both.
std::optional<std::pair<std::string, MappedType>> MergePlain(std::string_view existing,
                                                             std::string_view ours_plain,
                                                             const MappedType& ours, bool decimal256) {
  MappedType write = ours;
  write.nullable = false;
  if (existing == ours_plain) {
    write.type = std::string(existing);
    return std::pair{std::string(existing), write};
  }
  if (std::optional<Integer> a = IntegerOf(existing)) {
    std::optional<Integer> b = IntegerOf(ours_plain);
    if (!b) return std::nullopt;
    std::optional<Integer> w = WiderInteger(*a, *b);
    if (!w) return std::nullopt;
    std::string type = fmt::format("{}Int{}", w->is_unsigned ? "U" : "", w->bits);
    write.type = type;
    write.encoding = IntegerEncoding(*w);
    return std::pair{type, write};
  }
  if (existing == "Float64" && ours_plain == "Float32") {
    write.type = "Float64";
    write.encoding = Encoding::kFloat64;
    return std::pair{std::string("Float64"), write};
  }
  if (existing == "Float32" && ours_plain == "Float64") return std::pair{std::string("Float64"), write};
  if (std::optional<Decimal> a = DecimalOf(existing)) {
    std::optional<Decimal> b = DecimalOf(ours_plain);
    if (!b) return std::nullopt;
    uint32_t scale = std::max(a->scale, b->scale);
    uint32_t whole = std::max(a->precision - a->scale, b->precision - b->scale);
    uint32_t precision = whole + scale;
    if (precision > (decimal256 ? 76U : 38U)) return std::nullopt;
    std::string type = fmt::format("Decimal({}, {})", precision, scale);
    write.type = type;
    write.precision = precision;
    write.scale = scale;
    write.encoding = DecimalEncoding(precision);
    return std::pair{type, write};
  }
  if (std::optional<uint32_t> a = DateTime64Of(existing)) {
    std::optional<uint32_t> b = DateTime64Of(ours_plain);
    if (!b) return std::nullopt;
    uint32_t scale = std::max(*a, *b);
    std::string type = fmt::format("DateTime64({}, 'UTC')", scale);
    write.type = type;
    write.scale = scale;
    return std::pair{type, write};
  }
  if (auto a = EnumOf(existing)) {
    auto b = EnumOf(ours_plain);
    if (!b) return std::nullopt;
    // One's labels (with their values) must begin the other's: the values stay the same.
    std::string_view shorter = a->second.size() <= b->second.size() ? a->second : b->second;
    std::string_view longer = a->second.size() <= b->second.size() ? b->second : a->second;
    if (!StartsWith(longer, shorter) || (longer.size() > shorter.size() && longer[shorter.size()] != ','))
      return std::nullopt;
    bool wide = a->first || b->first;
    std::string type = fmt::format("{}({})", wide ? "Enum16" : "Enum8", longer);
    write.type = type;
    write.encoding = wide ? Encoding::kEnum16 : Encoding::kEnum8;
    return std::pair{type, write};
  }
  return std::nullopt;
}

}  // namespace

MappedType SharedStorageType(const MappedType& mapped) {
  MappedType out = mapped;
  switch (mapped.encoding) {
    case Encoding::kInt8:
    case Encoding::kInt16:
    case Encoding::kInt32:
    case Encoding::kUInt8:
    case Encoding::kUInt16:
    case Encoding::kUInt32:
      out.encoding = Encoding::kInt64;
      out.type = Nullable("Int64", mapped.nullable);
      break;
    case Encoding::kFloat32:
      out.encoding = Encoding::kFloat64;
      out.type = Nullable("Float64", mapped.nullable);
      break;
    default: break;
  }
  return out;
}

ColumnMerge MergeColumn(std::string_view existing, const MappedType& ours, bool decimal256) {
  std::string_view plain_existing = existing;
  bool low_cardinality = false;
  if (std::optional<std::string_view> inner = Unwrap(plain_existing, "LowCardinality")) {
    low_cardinality = true;
    plain_existing = *inner;
  }
  bool existing_nullable = false;
  if (std::optional<std::string_view> inner = Unwrap(plain_existing, "Nullable")) {
    existing_nullable = true;
    plain_existing = *inner;
  }
  std::string_view ours_plain = ours.type;
  if (std::optional<std::string_view> inner = Unwrap(ours_plain, "LowCardinality")) ours_plain = *inner;
  if (std::optional<std::string_view> inner = Unwrap(ours_plain, "Nullable")) ours_plain = *inner;

  auto merged = MergePlain(plain_existing, ours_plain, ours, decimal256);
  if (!merged) return Conflict(existing, ours);
  const bool nullable = existing_nullable || ours.nullable;
  std::string type = Nullable(merged->first, nullable);
  if (low_cardinality) type = "LowCardinality(" + type + ")";
  ColumnMerge m;
  m.write_as = merged->second;
  m.write_as.nullable = nullable;
  m.write_as.type = type;
  m.kind = type == existing ? ColumnMerge::Kind::kKeep : ColumnMerge::Kind::kModify;
  if (m.kind == ColumnMerge::Kind::kModify) m.type = type;
  return m;
}

StoredTypeParts ParseStoredType(std::string_view type) {
  StoredTypeParts out;
  if (auto inner = Unwrap(type, "LowCardinality")) type = *inner;
  if (auto inner = Unwrap(type, "Nullable")) {
    out.nullable = true;
    type = *inner;
  }
  if (std::optional<Decimal> d = DecimalOf(type); d && d->scale <= d->precision) {
    out.decimal_precision = d->precision;
    out.decimal_scale = d->scale;
  }
  out.datetime64_scale = DateTime64Of(type);
  return out;
}

}  // namespace chsync::clickhouse
