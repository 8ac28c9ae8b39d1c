#include "clickhouse/ddl.h"

#include <fmt/format.h>

#include <charconv>
#include <set>

#include "clickhouse/cluster.h"
#include "clickhouse/merged_type.h"
#include "clickhouse/row_binary.h"
#include "clickhouse/sql_quoting.h"
#include "common/civil_date.h"

namespace chsync::clickhouse {
namespace {

using schema::DefaultKind;

std::string OnCluster(const DdlTarget& target) {
  return target.cluster.empty() ? "" : " ON CLUSTER " + QuoteIdentifier(target.cluster);
}

/// The type without its Nullable( ) wrapper.
std::string BaseType(const MappedType& mapped) {
  constexpr std::string_view kNullable = "Nullable(";
  if (mapped.nullable && mapped.type.starts_with(kNullable)) {
    return mapped.type.substr(kNullable.size(), mapped.type.size() - kNullable.size() - 1);
  }
  return mapped.type;
}

bool IsIntegerEncoding(Encoding e) {
  switch (e) {
    case Encoding::kInt8:
    case Encoding::kInt16:
    case Encoding::kInt32:
    case Encoding::kInt64:
    case Encoding::kUInt8:
    case Encoding::kUInt16:
    case Encoding::kUInt32:
    case Encoding::kUInt64: return true;
    default: return false;
  }
}

/// Encodes `cell` into a throwaway buffer: true when the column's type holds it exactly.
bool Fits(const MappedType& mapped, const Cell& cell) {
  MappedType non_null = mapped;
  non_null.nullable = false;
  std::string scratch;
  return EncodeCell(non_null, cell, scratch).ok();
}

std::optional<std::string> IntegerLiteral(std::string_view text, const MappedType& mapped) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  if (text.front() == '-') {
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || ptr != text.data() + text.size() || !Fits(mapped, Cell(v))) return std::nullopt;
    return std::to_string(v);
  }
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || !Fits(mapped, Cell(v))) return std::nullopt;
  return std::to_string(v);
}

std::optional<uint64_t> ParseBase(std::string_view digits, int base) {
  if (digits.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return std::nullopt;
  return v;
}

std::optional<std::string> HexBytes(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    auto byte = ParseBase(hex.substr(i, 2), 16);
    if (!byte) return std::nullopt;
    out.push_back(static_cast<char>(*byte));
  }
  return out;
}

/// Reads exactly `width` digits at `pos`.
bool Digits(std::string_view s, size_t& pos, size_t width, uint32_t& value) {
  if (s.size() - pos < width) return false;
  value = 0;
  for (size_t i = 0; i < width; ++i) {
    char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  pos += width;
  return true;
}

/// "YYYY-MM-DD[ HH:MM:SS[.ffffff]]" into a DateTimeCell; false when the text has another shape.
bool ParseDateTimeText(std::string_view s, bool allow_time, DateTimeCell& out) {
  size_t pos = 0;
  uint32_t year = 0;
  if (!Digits(s, pos, 4, year) || pos >= s.size() || s[pos++] != '-') return false;
  if (!Digits(s, pos, 2, out.month) || pos >= s.size() || s[pos++] != '-') return false;
  if (!Digits(s, pos, 2, out.day)) return false;
  out.year = static_cast<int32_t>(year);
  if (pos == s.size()) return true;
  if (!allow_time || s[pos++] != ' ') return false;
  if (!Digits(s, pos, 2, out.hour) || pos >= s.size() || s[pos++] != ':') return false;
  if (!Digits(s, pos, 2, out.minute) || pos >= s.size() || s[pos++] != ':') return false;
  if (!Digits(s, pos, 2, out.second)) return false;
  if (pos == s.size()) return true;
  if (s[pos++] != '.') return false;
  size_t width = s.size() - pos;
  if (width == 0 || width > 6) return false;
  uint32_t frac = 0;
  if (!Digits(s, pos, width, frac)) return false;
  for (size_t i = width; i < 6; ++i) frac *= 10;
  out.microsecond = frac;
  return true;
}

std::optional<std::string> TemporalDefault(std::string_view text, const MappedType& mapped) {
  const bool date_only = mapped.encoding == Encoding::kDate || mapped.encoding == Encoding::kDate32;
  DateTimeCell dt;
  if (!ParseDateTimeText(text, !date_only, dt)) return std::nullopt;
  if (dt.month == 0 || dt.day == 0 || dt.year == 0 || dt.month > 12 || dt.day > 31 || dt.hour > 23 ||
      dt.minute > 59 || dt.second > 59) {
    return std::nullopt;
  }
  // Only dates inside the type's range: outside it, CAST and the encoder's clamping could differ.
  int64_t days = DaysFromCivil(dt.year, dt.month, dt.day);
  int64_t lo = 0;
  int64_t hi = 0;
  switch (mapped.encoding) {
    case Encoding::kDate:
    case Encoding::kDateTime: hi = DaysFromCivil(2105, 12, 31); break;
    default:
      lo = DaysFromCivil(1900, 1, 1);
      hi = DaysFromCivil(2299, 12, 31);
      break;
  }
  if (days < lo || days > hi) return std::nullopt;
  std::string canonical(text.substr(0, date_only ? 10 : text.size()));
  if (!date_only && canonical.size() == 10) canonical += " 00:00:00";
  if (mapped.encoding == Encoding::kDateTime && dt.microsecond != 0) return std::nullopt;
  return "CAST(" + QuoteString(canonical) + " AS " + BaseType(mapped) + ")";
}

std::optional<std::string> SetDefault(std::string_view text, const MappedType& mapped) {
  std::set<size_t> members;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view label = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    size_t i = 0;
    while (i < mapped.labels.size() && !schema::EqualsIgnoreCase(mapped.labels[i], label)) ++i;
    if (i == mapped.labels.size()) return std::nullopt;
    members.insert(i);
  }
  std::string canonical;
  for (size_t i : members) {
    if (!canonical.empty()) canonical += ',';
    canonical += mapped.labels[i];
  }
  return QuoteString(canonical);
}

/// "`name` Type[ DEFAULT e][ CODEC(c)]".
std::string ColumnDefinition(const TableLayout::Column& column) {
  std::string def = QuoteIdentifier(column.name) + " " + column.type;
  if (!column.default_expression.empty()) def += " DEFAULT " + column.default_expression;
  if (!column.codec.empty()) def += " CODEC(" + column.codec + ")";
  return def;
}

/// "ClickHouse 18.16" (or "this ClickHouse" for capabilities built by hand), for messages.
std::string ServerName(const Capabilities& caps) {
  return caps.version == ServerVersion{}
             ? "this ClickHouse"
             : "ClickHouse " + std::to_string(caps.version.major) + "." + std::to_string(caps.version.minor);
}

std::string MajorMinor(const ServerVersion& v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor);
}

/// A table option the server cannot take (kUnsupported): names the option, the first version that
/// has it and the server's.
Error NeedsNewerServer(std::string_view what, std::string_view option, std::string_view capability,
                       const Capabilities& caps, std::string_view extra = "") {
  return Error(ErrorKind::kUnsupported, std::string(what) + ": " + std::string(option) +
                                            " needs ClickHouse " + MajorMinor(FirstVersionWith(capability)) +
                                            " or later, and the destination is " + ServerName(caps) +
                                            std::string(extra) +
                                            ": remove the option from table_options, or upgrade ClickHouse");
}

/// The layout column of `column` (mapped to `mapped`) under `options`; `what` names it in errors.
Result<TableLayout::Column> LayoutColumn(const schema::Column& column, const MappedType& mapped,
                                         const Capabilities& caps, const CreateOptions& options,
                                         std::string_view what) {
  TableLayout::Column out;
  out.name = options.ClickHouseName(column.name);
  out.source = column.name;
  const ColumnOptions* column_options = options.Column(column.name);
  CHSYNC_ASSIGN_OR_RETURN(out.type, DestinationType(mapped, column_options, caps, what));
  out.default_expression = DefaultExpression(column, mapped).value_or("");
  if (column_options != nullptr && !column_options->codec.empty()) {
    if (!caps.codec) return NeedsNewerServer(what, "CODEC", "codec", caps);
    out.codec = column_options->codec;
  }
  return out;
}

Status CheckNotMetadataName(const schema::Column& column, std::string_view table) {
  for (std::string_view reserved : {kVersionColumn, kIsDeletedColumn, kSyncedAtColumn}) {
    if (schema::EqualsIgnoreCase(column.name, reserved)) {
      return Error(ErrorKind::kUnsupported,
                   "table " + std::string(table) + " has a column named " + column.name +
                       ", which chsync reserves for its own metadata; rename it at the "
                       "source or leave the table out of the replication");
    }
  }
  return Status::Ok();
}

Status CheckDurable(const Capabilities& caps, const DdlTarget& target, std::string_view table) {
  if (!target.durable || caps.fsync_after_insert) return Status::Ok();
  std::string server = ServerName(caps);
  ServerVersion since = FirstVersionWith("fsync_after_insert");
  return Error(ErrorKind::kUnsupported,
               "table " + std::string(table) + ": " + server +
                   " cannot fsync inserted parts (fsync_after_insert needs " + std::to_string(since.major) +
                   "." + std::to_string(since.minor) +
                   " or later): upgrade, or use replicas with insert_quorum (?insert_quorum=2 in the "
                   "destination URL)");
}

}  // namespace

SortingKey ChooseSortingKey(const schema::TableSchema& table) {
  SortingKey key;
  if (!table.primary_key.empty()) {
    key.columns = table.primary_key;
    return key;
  }
  for (const schema::Key& unique : table.unique_keys) {
    bool all_not_null = !unique.columns.empty();
    for (const std::string& name : unique.columns) {
      const schema::Column* c = table.GetColumn(name);
      all_not_null = all_not_null && c != nullptr && !c->nullable;
    }
    if (all_not_null) {
      key.columns = unique.columns;
      return key;
    }
  }
  key.full_row = true;
  for (const schema::Column& c : table.columns) key.columns.push_back(c.name);
  return key;
}

std::string CreateDatabase(const DdlTarget& target) {
  return CreateDatabase(target.database, target);
}

std::string CreateDatabase(std::string_view database, const DdlTarget& target) {
  return "CREATE DATABASE IF NOT EXISTS " + QuoteIdentifier(database) + OnCluster(target);
}

std::string ReplacingEngine(std::string_view table, std::string_view arguments, const DdlTarget& target) {
  if (target.cluster.empty()) return "ReplacingMergeTree(" + std::string(arguments) + ")";
  std::string path =
      ReplicationPath(target.replication_path, target.StorageDatabase(), table, target.path_token);
  return "ReplicatedReplacingMergeTree(" + QuoteString(path) + ", " + QuoteString(target.replica_name) +
         (arguments.empty() ? "" : ", ") + std::string(arguments) + ")";
}

std::string CreateOptions::ClickHouseName(std::string_view column) const {
  for (const auto& [name, clickhouse_name] : column_names) {
    if (schema::EqualsIgnoreCase(name, column)) return clickhouse_name;
  }
  return std::string(column);
}

const ColumnOptions* CreateOptions::Column(std::string_view column) const {
  for (const auto& [name, options] : columns) {
    if (schema::EqualsIgnoreCase(name, column)) return &options;
  }
  for (const auto& [name, options] : columns) {
    if (ClickHouseName(name) == column) return &options;
  }
  return nullptr;
}

Result<std::string> DestinationType(const MappedType& mapped, const ColumnOptions* options,
                                    const Capabilities& caps, std::string_view what) {
  if (options == nullptr || !options->low_cardinality) return mapped.type;
  if (!caps.low_cardinality) {
    return NeedsNewerServer(what, "LowCardinality", "low_cardinality", caps,
                            " (18.16 has it only behind allow_experimental_low_cardinality_type, which "
                            "chsync does not set)");
  }
  const std::string base = BaseType(mapped);
  if (base != "String") {
    return Error(ErrorKind::kConfig, std::string(what) +
                                         ": low_cardinality needs a column stored as String, and " +
                                         "this one is " + mapped.type +
                                         " (ClickHouse refuses LowCardinality of numbers, dates and enums "
                                         "without allow_suspicious_low_cardinality_types)");
  }
  return "LowCardinality(" + mapped.type + ")";
}

Result<std::string> CodecClause(const ColumnOptions* options, const Capabilities& caps,
                                std::string_view what) {
  if (options == nullptr || options->codec.empty()) return std::string();
  if (!caps.codec) return NeedsNewerServer(what, "CODEC", "codec", caps);
  return " CODEC(" + options->codec + ")";
}

Result<TableLayout> DestinationLayout(const schema::TableSchema& table, const Capabilities& caps,
                                      const DdlTarget& target, const CreateOptions& options) {
  const std::string name = table.QualifiedName();
  if (table.columns.empty()) return Error(ErrorKind::kUnsupported, "table " + name + " has no columns");
  CHSYNC_RETURN_IF_ERROR(CheckDurable(caps, target, name));
  TableLayout layout;
  layout.database = target.StorageDatabase();
  layout.table = options.table.empty() ? table.name : options.table;
  if (!options.source_column.empty()) {
    if (table.FindColumn(options.source_column) >= 0) {
      return Error(ErrorKind::kConfig,
                   fmt::format("table {}: source_column {} is a column of the table: choose "
                               "another name in table_options",
                               name, options.source_column));
    }
    layout.columns.push_back({options.source_column, "String", "", "", ""});
  }
  for (const schema::Column& column : table.columns) {
    CHSYNC_RETURN_IF_ERROR(CheckNotMetadataName(column, name));
    auto type = MapColumn(column, caps);
    if (!type.ok()) return std::move(type.error().AddContext("table " + name));
    if (!options.source_column.empty()) *type = SharedStorageType(*type);
    CHSYNC_ASSIGN_OR_RETURN(
        TableLayout::Column mapped,
        LayoutColumn(column, *type, caps, options, "table " + name + ": column " + column.name));
    schema::Column renamed;
    renamed.name = mapped.name;
    CHSYNC_RETURN_IF_ERROR(CheckNotMetadataName(renamed, name));
    for (const TableLayout::Column& earlier : layout.columns) {
      if (earlier.name == mapped.name) {
        return Error(ErrorKind::kConfig, "table " + name + ": columns " + earlier.source + " and " +
                                             column.name + " would both be the ClickHouse column " +
                                             mapped.name);
      }
    }
    layout.columns.push_back(std::move(mapped));
  }
  layout.columns.push_back({std::string(kVersionColumn), "UInt64", "", "", ""});
  layout.columns.push_back({std::string(kIsDeletedColumn), "UInt8", "", "", ""});
  if (caps.datetime64 && caps.now64) {
    layout.columns.push_back({std::string(kSyncedAtColumn), "DateTime64(3)", "now64(3)", "", ""});
  } else {
    layout.columns.push_back({std::string(kSyncedAtColumn), "DateTime", "now()", "", ""});
  }
  layout.engine = target.cluster.empty() ? "ReplacingMergeTree" : "ReplicatedReplacingMergeTree";
  layout.engine_columns = {std::string(kVersionColumn)};
  if (caps.replacing_is_deleted) layout.engine_columns.emplace_back(kIsDeletedColumn);

  if (!options.source_column.empty()) layout.order_by.push_back(QuoteIdentifier(options.source_column));
  if (!options.order_by.empty()) {
    for (const std::string& element : options.order_by) {
      if (element != QuoteIdentifier(options.source_column) && element != options.source_column)
        layout.order_by.push_back(element);
    }
  } else {
    for (const std::string& key : ChooseSortingKey(table).columns) {
      const schema::Column* column = table.GetColumn(key);
      if (column == nullptr) {
        return Error(ErrorKind::kUnsupported,
                     fmt::format("table {}: key column {} is not a column of the table", name, key));
      }
      std::string quoted = QuoteIdentifier(options.ClickHouseName(column->name));
      auto mapped = MapColumn(*column, caps);
      if (mapped.ok() && mapped->nullable) {
        layout.order_by.push_back("isNull(" + quoted + ")");
        layout.order_by.push_back("assumeNotNull(" + quoted + ")");
      } else {
        layout.order_by.push_back(std::move(quoted));
      }
    }
  }
  layout.partition_by = options.partition_by;
  if (!options.ttl.empty() && !caps.ttl) return NeedsNewerServer("table " + name, "TTL", "ttl", caps);
  layout.ttl = options.ttl;
  if (target.durable) {
    layout.settings = {{"fsync_after_insert", "1"}, {"fsync_part_directory", "1"}};
  }
  for (const auto& [setting, value] : options.settings) {
    for (std::string_view durable : {"fsync_after_insert", "fsync_part_directory"}) {
      if (target.durable && schema::EqualsIgnoreCase(durable, setting)) {
        return Error(ErrorKind::kConfig,
                     fmt::format("table {}: setting {} is chsync's own with durable_inserts; remove it from "
                                 "table_options",
                                 name, setting));
      }
    }
    layout.settings.emplace_back(setting, value);
  }
  return layout;
}

Result<std::string> CreateTable(const schema::TableSchema& table, const Capabilities& caps,
                                const DdlTarget& target, const CreateOptions& options) {
  CHSYNC_ASSIGN_OR_RETURN(TableLayout layout, DestinationLayout(table, caps, target, options));
  std::string sql = "CREATE TABLE IF NOT EXISTS " + QualifiedName(layout.database, layout.table) +
                    OnCluster(target) + "\n(\n";
  for (size_t i = 0; i < layout.columns.size(); ++i) {
    sql += "    " + ColumnDefinition(layout.columns[i]) + (i + 1 < layout.columns.size() ? ",\n" : "\n");
  }
  std::string engine_args;
  for (const std::string& column : layout.engine_columns) {
    if (!engine_args.empty()) engine_args += ", ";
    engine_args += QuoteIdentifier(column);
  }
  sql += ")\nENGINE = " + ReplacingEngine(layout.table, engine_args, target);
  if (!layout.partition_by.empty()) sql += "\nPARTITION BY " + layout.partition_by;
  sql += "\nORDER BY (";
  for (size_t i = 0; i < layout.order_by.size(); ++i) sql += (i > 0 ? ", " : "") + layout.order_by[i];
  sql += ")";
  if (!layout.ttl.empty()) sql += "\nTTL " + layout.ttl;
  for (size_t i = 0; i < layout.settings.size(); ++i) {
    sql += (i == 0 ? "\nSETTINGS " : ", ") + layout.settings[i].first + " = " + layout.settings[i].second;
  }
  return sql;
}

Result<std::string> AddColumn(std::string_view table, const schema::Column& column, std::string_view after,
                              const Capabilities& caps, const DdlTarget& target,
                              const CreateOptions& options) {
  CHSYNC_RETURN_IF_ERROR(CheckNotMetadataName(column, table));
  CHSYNC_ASSIGN_OR_RETURN(MappedType mapped, MapColumn(column, caps));
  if (!options.source_column.empty()) mapped = SharedStorageType(mapped);
  CHSYNC_ASSIGN_OR_RETURN(
      TableLayout::Column layout,
      LayoutColumn(column, mapped, caps, options, "table " + std::string(table) + ": column " + column.name));
  schema::Column renamed;
  renamed.name = layout.name;
  CHSYNC_RETURN_IF_ERROR(CheckNotMetadataName(renamed, table));
  std::string sql =
      "ALTER TABLE " + QualifiedName(target.StorageDatabase(), table) + OnCluster(target) + " ADD COLUMN ";
  if (caps.add_column_if_not_exists) sql += "IF NOT EXISTS ";
  sql += ColumnDefinition(layout);
  if (!options.source_column.empty()) {
    // A shared table: the columns of its other sources may stand anywhere.
  } else if (!after.empty()) {
    sql += " AFTER " + QuoteIdentifier(options.ClickHouseName(after));
  } else if (caps.add_column_first) {
    sql += " FIRST";
  }
  return sql;
}

Result<std::string> ModifyColumn(std::string_view table, const schema::Column& column,
                                 const Capabilities& caps, const DdlTarget& target,
                                 const CreateOptions& options, std::string_view restated_default) {
  CHSYNC_ASSIGN_OR_RETURN(MappedType mapped, MapColumn(column, caps));
  if (mapped.nullable && !caps.modify_to_nullable) {
    return Error(ErrorKind::kUnsupported, "this ClickHouse cannot change a column to Nullable");
  }
  const std::string what = "table " + std::string(table) + ": column " + column.name;
  const ColumnOptions* column_options = options.Column(column.name);
  CHSYNC_ASSIGN_OR_RETURN(std::string type, DestinationType(mapped, column_options, caps, what));
  CHSYNC_ASSIGN_OR_RETURN(std::string codec, CodecClause(column_options, caps, what));
  std::string sql = "ALTER TABLE " + QualifiedName(target.StorageDatabase(), table) + OnCluster(target) +
                    " MODIFY COLUMN " + QuoteIdentifier(options.ClickHouseName(column.name)) + " " + type;
  if (!restated_default.empty()) sql += " DEFAULT " + std::string(restated_default);
  return sql + codec;
}

Result<std::string> RenameColumn(std::string_view table, std::string_view from, std::string_view to,
                                 const Capabilities& caps, const DdlTarget& target) {
  if (!caps.rename_column) {
    return Error(ErrorKind::kUnsupported, "renaming column " + std::string(from) + " of " +
                                              std::string(table) + " needs ClickHouse " +
                                              FirstVersionWith("rename_column").ToString() +
                                              " or later (ALTER TABLE … RENAME COLUMN)");
  }
  return "ALTER TABLE " + QualifiedName(target.StorageDatabase(), table) + OnCluster(target) +
         " RENAME COLUMN " + QuoteIdentifier(from) + " TO " + QuoteIdentifier(to);
}

std::string MakeDurable(std::string_view table, const DdlTarget& target) {
  return "ALTER TABLE " + QualifiedName(target.StorageDatabase(), table) + OnCluster(target) +
         " MODIFY SETTING " + std::string(kDurableSettings);
}

std::string DropTable(std::string_view table, const DdlTarget& target) {
  return "DROP TABLE IF EXISTS " + QualifiedName(target.StorageDatabase(), table) + OnCluster(target);
}

std::string TruncateTable(std::string_view table, const DdlTarget& target) {
  return "TRUNCATE TABLE IF EXISTS " + QualifiedName(target.StorageDatabase(), table) + OnCluster(target);
}

std::string RenameTable(std::string_view from, std::string_view to, const DdlTarget& target) {
  return "RENAME TABLE " + QualifiedName(target.StorageDatabase(), from) + " TO " +
         QualifiedName(target.StorageDatabase(), to) + OnCluster(target);
}

std::optional<std::string> DefaultExpression(const schema::Column& column, const MappedType& mapped) {
  const schema::DefaultValue& def = column.default_value;
  const std::string& text = def.text;
  if (def.kind == DefaultKind::kNone || def.kind == DefaultKind::kNull ||
      def.kind == DefaultKind::kCurrentTimestamp || def.kind == DefaultKind::kExpression) {
    return std::nullopt;
  }
  const Encoding e = mapped.encoding;
  if (IsIntegerEncoding(e)) {
    switch (def.kind) {
      case DefaultKind::kNumber:
      case DefaultKind::kString: return IntegerLiteral(text, mapped);
      case DefaultKind::kBool: return IntegerLiteral(text == "TRUE" ? "1" : "0", mapped);
      case DefaultKind::kBit:
      case DefaultKind::kHex: {
        auto v = ParseBase(text, def.kind == DefaultKind::kBit ? 2 : 16);
        if (!v || !Fits(mapped, Cell(*v))) return std::nullopt;
        return std::to_string(*v);
      }
      default: return std::nullopt;
    }
  }
  switch (e) {
    case Encoding::kFloat32:
    case Encoding::kFloat64: {
      if (def.kind != DefaultKind::kNumber && def.kind != DefaultKind::kString) return std::nullopt;
      std::string_view t = text;
      if (!t.empty() && t.front() == '+') t.remove_prefix(1);
      double v = 0;
      auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      if (ec != std::errc() || ptr != t.data() + t.size()) return std::nullopt;
      return "CAST(" + QuoteString(t) + " AS " + BaseType(mapped) + ")";
    }
    case Encoding::kDecimal32:
    case Encoding::kDecimal64:
    case Encoding::kDecimal128:
    case Encoding::kDecimal256:
    case Encoding::kDecimalText: {
      if (def.kind != DefaultKind::kNumber && def.kind != DefaultKind::kString) return std::nullopt;
      if (!Fits(mapped, Cell(DecimalCell{text}))) return std::nullopt;
      if (e == Encoding::kDecimalText) return QuoteString(text);
      return "CAST(" + QuoteString(text) + " AS " + BaseType(mapped) + ")";
    }
    case Encoding::kString:
      if (def.kind == DefaultKind::kString || def.kind == DefaultKind::kNumber) return QuoteString(text);
      if (def.kind == DefaultKind::kHex) {
        auto bytes = HexBytes(text);
        if (bytes) return QuoteString(*bytes);
      }
      return std::nullopt;
    case Encoding::kEnum8:
    case Encoding::kEnum16:
      if (def.kind != DefaultKind::kString) return std::nullopt;
      for (const std::string& label : mapped.labels) {
        if (schema::EqualsIgnoreCase(label, text)) return QuoteString(label);
      }
      return std::nullopt;
    case Encoding::kSetText:
      if (def.kind != DefaultKind::kString) return std::nullopt;
      return SetDefault(text, mapped);
    case Encoding::kDate:
    case Encoding::kDate32:
    case Encoding::kDateTime:
    case Encoding::kDateTime64:
      if (def.kind != DefaultKind::kString) return std::nullopt;
      return TemporalDefault(text, mapped);
    default: return std::nullopt;
  }
}

std::string InsertPrefix(std::string_view database, std::string_view table,
                         const std::vector<std::string>& columns, bool json) {
  std::string sql = "INSERT INTO " + QualifiedName(database, table) + " (";
  for (size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) sql += ", ";
    sql += QuoteIdentifier(columns[i]);
  }
  sql += ")";
  if (json)
    sql += " SETTINGS input_format_binary_read_json_as_string = 1, type_json_skip_duplicated_paths = 1";
  sql += " FORMAT RowBinary";
  return sql;
}

}  // namespace chsync::clickhouse
