#include "policy/schema_policy.h"

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "common/glob.h"

namespace chsync::pipe {
namespace {

// The names of each enum's values, in the enum's declaration order.
constexpr std::array<std::string_view, 3> kRenameColumnNames{"rename", "ignore", "fail"};
constexpr std::array<std::string_view, 2> kTypeChangeNames{"follow", "fail"};
constexpr std::array<std::string_view, 3> kTruncateNames{"propagate", "ignore", "fail"};
constexpr std::array<std::string_view, 3> kCreateTableNames{"replicate", "ignore", "fail"};
constexpr std::array<std::string_view, 3> kDropTableNames{"keep", "drop", "fail"};
constexpr std::array<std::string_view, 2> kRenameTableNames{"follow", "fail"};
constexpr std::array<std::string_view, 3> kDropColumnNames{"keep", "propagate", "fail"};
constexpr std::array<std::string_view, 2> kPositionShiftNames{"follow", "fail"};
constexpr std::array<std::string_view, 2> kKeyChangeNames{"rebuild", "fail"};
constexpr std::array<std::string_view, 2> kKeylessNames{"refuse", "distinct"};
constexpr std::array<std::string_view, 2> kTableErrorNames{"park", "stop"};

/// One SchemaPolicy field: its configuration key, the names of its values, and access to it by
/// value index.
struct Key {
  std::string_view name;
  std::span<const std::string_view> values;
  size_t (*get)(const SchemaPolicy&);
  void (*set)(SchemaPolicy&, size_t);
};

template <auto kField>
Key MakeKey(std::string_view name, std::span<const std::string_view> values) {
  using Enum = std::remove_cvref_t<decltype(std::declval<SchemaPolicy&>().*kField)>;
  return Key{name, values, [](const SchemaPolicy& p) { return static_cast<size_t>(p.*kField); },
             [](SchemaPolicy& p, size_t v) { p.*kField = static_cast<Enum>(v); }};
}

const std::array<Key, 11>& Keys() {
  static const std::array<Key, 11> keys = {
      MakeKey<&SchemaPolicy::rename_column>("rename_column", kRenameColumnNames),
      MakeKey<&SchemaPolicy::type_change>("type_change", kTypeChangeNames),
      MakeKey<&SchemaPolicy::truncate>("truncate", kTruncateNames),
      MakeKey<&SchemaPolicy::create_table>("create_table", kCreateTableNames),
      MakeKey<&SchemaPolicy::drop_table>("drop_table", kDropTableNames),
      MakeKey<&SchemaPolicy::rename_table>("rename_table", kRenameTableNames),
      MakeKey<&SchemaPolicy::drop_column>("drop_column", kDropColumnNames),
      MakeKey<&SchemaPolicy::position_shift>("position_shift", kPositionShiftNames),
      MakeKey<&SchemaPolicy::key_change>("key_change", kKeyChangeNames),
      MakeKey<&SchemaPolicy::keyless>("keyless", kKeylessNames),
      MakeKey<&SchemaPolicy::on_table_error>("on_table_error", kTableErrorNames),
  };
  return keys;
}

const Key* FindKey(std::string_view name) {
  for (const Key& k : Keys()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

/// Index of `value` among the key's values; values.size() when it is not one.
size_t FindValue(const Key& key, std::string_view value) {
  for (size_t i = 0; i < key.values.size(); ++i) {
    if (key.values[i] == value) return i;
  }
  return key.values.size();
}

/// "a, b or c".
std::string OrList(std::span<const std::string_view> names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i != 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

std::string KeyList() {
  std::string out;
  for (const Key& k : Keys()) out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Error PolicyError(std::string_view origin, const std::string& what) {
  return Error(ErrorKind::kConfig, std::string(origin) + ": " + what);
}

}  // namespace

Status PolicySet::Assign(std::string_view assignment) {
  const std::string origin = "--schema-policy '" + std::string(assignment) + "'";
  size_t eq = assignment.find('=');
  if (eq == std::string_view::npos) {
    return PolicyError(origin, "expected KEY=VALUE or DB.TABLE:KEY=VALUE (keys: " + KeyList() + ")");
  }
  std::string_view target = assignment.substr(0, eq);
  std::string_view value = Trim(assignment.substr(eq + 1));
  size_t colon = target.rfind(':');
  std::string_view pattern;
  std::string_view key = Trim(target);
  if (colon != std::string_view::npos) {
    pattern = Trim(target.substr(0, colon));
    key = Trim(target.substr(colon + 1));
    if (pattern.empty()) {
      return PolicyError(origin,
                         "no table pattern before ':' (expected DB.TABLE:KEY=VALUE, or KEY=VALUE for "
                         "every table)");
    }
  }
  return Assign(pattern, key, value, origin);
}

Status PolicySet::Assign(std::string_view pattern, std::string_view key, std::string_view value,
                         std::string_view origin) {
  const Key* k = FindKey(key);
  if (k == nullptr) {
    return PolicyError(origin, "'" + std::string(key) + "' is not a schema policy (keys: " + KeyList() + ")");
  }
  size_t index = FindValue(*k, value);
  if (index == k->values.size()) {
    return PolicyError(origin, "'" + std::string(key) + "' must be " + OrList(k->values) + ", not '" +
                                   std::string(value) + "'");
  }
  if (pattern.empty()) {
    k->set(defaults_, index);
    return Status::Ok();
  }
  std::string_view database;
  std::string_view table;
  if (!SplitTablePattern(pattern, database, table)) {
    return PolicyError(origin, "table pattern '" + std::string(pattern) +
                                   "' must be DB.TABLE (wildcards * and ?, e.g. shop.orders, shop.*, "
                                   "*.audit_log)");
  }
  // A later assignment of the same key to the same pattern replaces the earlier one.
  std::erase_if(overrides_, [&](const Override& o) { return o.pattern == pattern && o.key == k->name; });
  overrides_.push_back(Override{std::string(pattern), std::string(k->name), std::string(value)});
  return Status::Ok();
}

SchemaPolicy PolicySet::For(std::string_view database, std::string_view table) const {
  SchemaPolicy policy = defaults_;
  for (const Override& o : overrides_) {
    std::string_view db_pattern;
    std::string_view table_pattern;
    if (!SplitTablePattern(o.pattern, db_pattern, table_pattern)) continue;  // Assign checked it
    if (!GlobMatch(db_pattern, database) || !GlobMatch(table_pattern, table)) continue;
    const Key* k = FindKey(o.key);
    if (k != nullptr) k->set(policy, FindValue(*k, o.value));
  }
  return policy;
}

std::vector<std::string> PolicySet::Describe() const {
  std::vector<std::string> lines;
  std::string defaults = "defaults:";
  for (const Key& k : Keys()) {
    defaults += " " + std::string(k.name) + "=" + std::string(k.values[k.get(defaults_)]);
  }
  lines.push_back(std::move(defaults));
  for (const Override& o : overrides_) lines.push_back(o.pattern + ": " + o.key + "=" + o.value);
  return lines;
}

std::string_view PolicyValueName(SchemaPolicy::RenameColumn v) {
  return kRenameColumnNames.at(static_cast<size_t>(v));
}
std::string_view PolicyValueName(SchemaPolicy::TypeChange v) {
  return kTypeChangeNames.at(static_cast<size_t>(v));
}
std::string_view PolicyValueName(SchemaPolicy::Truncate v) {
  return kTruncateNames.at(static_cast<size_t>(v));
}
std::string_view PolicyValueName(SchemaPolicy::CreateTable v) {
  return kCreateTableNames.at(static_cast<size_t>(v));
}
std::string_view PolicyValueName(SchemaPolicy::DropTable v) {
  return kDropTableNames.at(static_cast<size_t>(v));
}
std::string_view PolicyValueName(SchemaPolicy::RenameTable v) {
  return kRenameTableNames.at(static_cast<size_t>(v));
}
std::string_view PolicyValueName(SchemaPolicy::DropColumn v) {
  return kDropColumnNames.at(static_cast<size_t>(v));
}
std::string_view PolicyValueName(SchemaPolicy::PositionShift v) {
  return kPositionShiftNames.at(static_cast<size_t>(v));
}
std::string_view PolicyValueName(SchemaPolicy::KeyChange v) {
  return kKeyChangeNames.at(static_cast<size_t>(v));
}
std::string_view PolicyValueName(SchemaPolicy::Keyless v) {
  return kKeylessNames.at(static_cast<size_t>(v));
}
std::string_view PolicyValueName(SchemaPolicy::TableError v) {
  return kTableErrorNames.at(static_cast<size_t>(v));
}

}  // namespace chsync::pipe
