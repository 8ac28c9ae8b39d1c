#include "policy/ddl_policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

#include "clickhouse/sql_quoting.h"
#include "clickhouse/type_mapping.h"
#include "policy/type_change.h"
#include "schema/default_translation.h"
#include "schema/explain.h"

namespace chsync::pipe {
namespace {

using Kind = schema::SchemaChange::Kind;

/// The statement on one line (newlines and tabs as spaces, ends trimmed), for messages.
std::string OneLine(std::string_view text) {
  std::string out;
  for (char c : text) out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  size_t begin = out.find_first_not_of(' ');
  if (begin == std::string::npos) return "";
  size_t end = out.find_last_not_of(' ');
  return out.substr(begin, end - begin + 1);
}

std::string Backquote(std::string_view name) {
  return "`" + std::string(name) + "`";
}

std::string OnCluster(const clickhouse::DdlTarget& target) {
  return target.cluster.empty() ? "" : " ON CLUSTER " + clickhouse::QuoteIdentifier(target.cluster);
}

/// The error that stops the pipe: names the table, quotes the statement with its position, says
/// what the statement does that chsync cannot follow, and what to do.
Error Stop(const PolicyContext& context, const std::string& table, std::string_view what) {
  std::string at = context.position.empty() ? "" : " at " + context.position;
  return Error(ErrorKind::kUnsupported, fmt::format("table {}: `{}`{} {}; run `chsync resync --table {}`",
                                                    table, OneLine(context.statement), at, what, table));
}

/// Stop's error for a table chsync will not replicate as it is: `what` says what to do (no resync,
/// which would refuse it too).
Error Refuse(const PolicyContext& context, const std::string& table, std::string_view what) {
  std::string at = context.position.empty() ? "" : " at " + context.position;
  return Error(ErrorKind::kUnsupported,
               fmt::format("table {}: `{}`{} {}", table, OneLine(context.statement), at, what));
}

/// The ClickHouse table options of the context's mapping (CreateTable names the table by them).
clickhouse::CreateOptions AppliedOptions(const PolicyContext& context) {
  clickhouse::CreateOptions options = context.mapping.CreateOptions();
  if (context.mapping.source_table.empty()) options.table.clear();  // no mapping: the source's name
  return options;
}

/// The source's DEFAULT clause as the user wrote it, for log lines.
std::string SourceDefault(const schema::DefaultValue& d) {
  switch (d.kind) {
    case schema::DefaultKind::kNone: return "no default";
    case schema::DefaultKind::kNull: return "DEFAULT NULL";
    case schema::DefaultKind::kString: return "DEFAULT " + schema::QuoteForDisplay(d.text);
    case schema::DefaultKind::kBit: return "DEFAULT b'" + d.text + "'";
    case schema::DefaultKind::kHex: return "DEFAULT X'" + d.text + "'";
    case schema::DefaultKind::kExpression: return "DEFAULT (" + d.text + ")";
    case schema::DefaultKind::kNumber:
    case schema::DefaultKind::kBool:
    case schema::DefaultKind::kCurrentTimestamp: return "DEFAULT " + d.text;
  }
  return "DEFAULT " + d.text;
}

/// What a position-shifting change does, for the ordinal-mode stop message.
std::string ShiftDescription(const schema::SchemaChange& change) {
  switch (change.kind) {
    case Kind::kColumnDropped: return "drops column " + Backquote(change.column.name);
    case Kind::kColumnAdded:
      return fmt::format("adds column {} {}, which moves the columns after it", Backquote(change.column.name),
                         change.after_column.empty() ? "FIRST" : "AFTER " + Backquote(change.after_column));
    case Kind::kColumnMoved:
      return fmt::format("moves column {} to position {}", Backquote(change.column.name), change.position);
    default: return fmt::format("changes column positions ({})", schema::SchemaChangeKindName(change.kind));
  }
}

std::string KeyText(const clickhouse::SortingKey& key) {
  std::string out = "(";
  for (size_t i = 0; i < key.columns.size(); ++i) {
    if (i > 0) out += ", ";
    out += key.columns[i];
  }
  return out + ")";
}

bool SameKey(const clickhouse::SortingKey& a, const clickhouse::SortingKey& b) {
  return a.full_row == b.full_row &&
         std::equal(
             a.columns.begin(), a.columns.end(), b.columns.begin(), b.columns.end(),
             [](const std::string& x, const std::string& y) { return schema::EqualsIgnoreCase(x, y); });
}

bool Contains(const std::vector<std::string>& names, std::string_view name) {
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& n) { return schema::EqualsIgnoreCase(n, name); });
}

/// The ClickHouse DEFAULT of an added column, or why there is none. Whether a default travels is
/// the seeds' rule, decided by schema::TranslateDefault (the change's default_translation); the
/// expression is clickhouse::DefaultExpression's, which casts to the exact column type
/// (`CAST('1.50' AS Decimal(10, 2))` rather than a Float64 literal) and canonicalises ENUM/SET
/// members. YEAR is the exception: its translation already expands two-digit years.
struct DefaultChoice {
  std::optional<std::string> expression;
  std::string reason;
};

DefaultChoice ChooseDefault(const schema::SchemaChange& change, const clickhouse::MappedType& mapped) {
  const schema::DefaultTranslation& t = change.default_translation;
  if (!t.propagated) return {std::nullopt, t.reason};
  if (change.column.type == schema::ColumnType::kYear) return {t.literal, ""};
  schema::Column column = change.column;
  if (column.default_value.kind == schema::DefaultKind::kBool) {
    column.default_value = schema::DefaultValue{schema::DefaultKind::kNumber, t.literal, ""};
  }
  std::optional<std::string> expression = clickhouse::DefaultExpression(column, mapped);
  if (!expression) {
    return {std::nullopt, fmt::format("{} cannot be held exactly by ClickHouse {}", t.literal, mapped.type)};
  }
  return {expression, ""};
}

class Planner {
 public:
  Planner(const DestinationTable& before, const schema::TableSchema* after_source,
          const PolicyContext& context, std::string table)
      : before_(before), after_source_(after_source), context_(context), table_(std::move(table)) {
    plan_.after = before;
    if (after_source != nullptr) plan_.after.source = *after_source;
    for (const schema::Column& c : before.source.columns)
      in_clickhouse_.push_back(before.ClickHouseName(c.name));
    for (const std::string& name : before.kept_columns) in_clickhouse_.push_back(name);
    for (const std::string& name : before.aliases) in_clickhouse_.push_back(name);
  }

  Result<TablePlan> Run(const std::vector<schema::SchemaChange>& changes) {
    // Everything that stops the pipe is decided before anything is planned: a plan runs whole or
    // not at all.
    const SchemaPolicy& policy = context_.policy;
    for (const schema::SchemaChange& c : changes) {
      if (context_.ordinal_mode && c.shifts_positions &&
          policy.position_shift == SchemaPolicy::PositionShift::kFail) {
        return Stop(context_, table_,
                    ShiftDescription(c) +
                        ", and positions can no longer be matched because binlog_row_metadata is not FULL "
                        "(position_shift=fail)");
      }
      switch (c.kind) {
        case Kind::kColumnRenamed:
          if (policy.rename_column == SchemaPolicy::RenameColumn::kFail) {
            return Stop(context_, table_,
                        fmt::format("renames column {} to {} (rename_column=fail)",
                                    Backquote(c.old_column_name), Backquote(c.column.name)));
          }
          break;
        case Kind::kTableTruncated:
          if (policy.truncate == SchemaPolicy::Truncate::kFail)
            return Stop(context_, table_, "truncates the table (truncate=fail)");
          break;
        case Kind::kTableCreated:
          if (policy.create_table == SchemaPolicy::CreateTable::kFail)
            return Stop(context_, table_, "creates a table that matches --tables (create_table=fail)");
          break;
        case Kind::kTableDropped:
          if (policy.drop_table == SchemaPolicy::DropTable::kFail && !context_.migration_leftover)
            return Stop(context_, table_, "drops the table (drop_table=fail)");
          break;
        case Kind::kColumnDropped:
          if (policy.drop_column == SchemaPolicy::DropColumn::kFail) {
            return Stop(context_, table_,
                        fmt::format("drops column {} (drop_column=fail)", Backquote(c.column.name)));
          }
          break;
        case Kind::kTableRenamed:
        case Kind::kTableReplaced:
          return Error(ErrorKind::kInternal,
                       "table " + table_ + ": table renames are applied by the pipe, not planned per table");
        default: break;
      }
    }
    bool created = std::any_of(changes.begin(), changes.end(),
                               [](const schema::SchemaChange& c) { return c.kind == Kind::kTableCreated; });
    bool dropped = std::any_of(changes.begin(), changes.end(),
                               [](const schema::SchemaChange& c) { return c.kind == Kind::kTableDropped; });
    if (!created && !dropped && after_source_ != nullptr && !before_.source.columns.empty()) {
      // Keys compare by ClickHouse column: a key column renamed by this statement is the same column.
      auto stored = [&](const std::string& name) {
        for (const schema::SchemaChange& c : changes) {
          if (c.kind == Kind::kColumnRenamed && schema::EqualsIgnoreCase(c.column.name, name))
            return before_.ClickHouseName(c.old_column_name);
        }
        return before_.ClickHouseName(name);
      };
      clickhouse::SortingKey old_key = clickhouse::ChooseSortingKey(before_.source);
      for (std::string& column : old_key.columns) column = before_.ClickHouseName(column);
      clickhouse::SortingKey new_key = clickhouse::ChooseSortingKey(*after_source_);
      for (std::string& column : new_key.columns) column = stored(column);
      // A keyless table is sorted by every column: one added later must join the key too, or rows
      // that differ only in it collapse into one (issue 33, case 6: 1 of 3 rows seen), and a DELETE
      // of one removes them all. Only a new table can have a new sorting key: a rebuild.
      if (!SameKey(old_key, new_key)) {
        std::string what = fmt::format(
            "changes the ClickHouse sorting key from {} to {}{}", KeyText(old_key), KeyText(new_key),
            old_key.full_row || new_key.full_row
                ? " (a table without a primary key or NOT NULL unique key is sorted by every column)"
                : "");
        if (policy.key_change == SchemaPolicy::KeyChange::kFail)
          return Stop(context_, table_, what + " (key_change=fail)");
        if (new_key.full_row && !old_key.full_row) {
          if (std::optional<std::string> refused = KeylessRefusal(*after_source_, policy))
            return Refuse(context_, table_, "leaves the table without a key: " + *refused);
        }
        return RebuildPlan(what);
      }
    }
    for (const schema::SchemaChange& c : changes) {
      CHSYNC_RETURN_IF_ERROR(PlanChange(c));
      if (plan_.rebuild) break;
    }
    if (plan_.rebuild) return RebuildPlan(plan_.rebuild_reason);
    return std::move(plan_);
  }

 private:
  /// The ClickHouse table's name: the mapping's dest_table, else the source table's.
  std::string ClickHouseTable() const {
    if (!context_.mapping.dest_table.empty()) return context_.mapping.dest_table;
    return before_.source.name.empty() ? plan_.after.source.name : before_.source.name;
  }

  /// The ClickHouse table, qualified, for log lines.
  std::string Destination() const {
    return clickhouse::QualifiedName(context_.target.database, ClickHouseTable());
  }

  std::string AlterTable() const {
    // On a sharded cluster the shard-local tables; the pipe recreates the Distributed table after.
    return "ALTER TABLE " + clickhouse::QualifiedName(context_.target.StorageDatabase(), ClickHouseTable()) +
           OnCluster(context_.target);
  }

  void Add(std::string sql, std::string skip_if_column_exists = "") {
    plan_.statements.push_back(std::move(sql));
    plan_.skip_if_column_exists.push_back(std::move(skip_if_column_exists));
  }

  /// ALTER TABLE … DROP COLUMN `name` (an alias or a column), safe to run again.
  void AddDropColumn(const std::string& name) {
    // IF EXISTS for columns came with IF NOT EXISTS (19.4); before it the pipe checks system.columns.
    const bool if_exists = context_.caps.add_column_if_not_exists;
    Add(AlterTable() + " DROP COLUMN " + (if_exists ? "IF EXISTS " : "") + clickhouse::QuoteIdentifier(name));
    plan_.skip_if_column_missing.resize(plan_.statements.size());
    if (!if_exists) plan_.skip_if_column_missing.back() = name;
  }

  /// Replaces whatever was planned by a rebuild of the table under its new schema.
  Result<TablePlan> RebuildPlan(const std::string& what) {
    if (after_source_ == nullptr) {
      return Error(ErrorKind::kInternal, "table " + table_ + ": a rebuild without the table's new schema");
    }
    TablePlan plan;
    plan.rebuild = true;
    plan.rebuild_reason = what;
    plan.after = NewDestination(*after_source_, context_.caps, context_.mapping, before_.excluded);
    plan.log_lines = std::move(plan_.log_lines);
    plan.log_lines.push_back(fmt::format(
        "the statement {}: the rows in ClickHouse cannot be brought to the new schema by ALTERs, so {} is "
        "rebuilt "
        "online (copied again into a new table while the binlog keeps streaming into it, swapped in when the "
        "copy is done)",
        what, table_));
    return plan;
  }

  /// Marks the plan as a rebuild (the caller stops planning).
  Status Rebuild(std::string what) {
    plan_.rebuild = true;
    plan_.rebuild_reason = std::move(what);
    return Status::Ok();
  }

  /// `column` under its ClickHouse name (as tracked before the statement).
  schema::Column InClickHouse(const schema::Column& column) const {
    schema::Column out = column;
    out.name = plan_.after.ClickHouseName(column.name);
    return out;
  }

  bool IsKeyColumn(std::string_view source_name) const {
    return Contains(clickhouse::ChooseSortingKey(before_.source).columns, source_name) ||
           Contains(context_.mapping.KeyColumns(before_.source), source_name) ||
           Contains(context_.clickhouse_key_columns, source_name);
  }

  /// The DEFAULT expression (without the keyword; empty: none) for a MODIFY COLUMN of `column`
  /// (ClickHouse name; as the tracker knew it before the statement): the default the ClickHouse
  /// column has, which ClickHouse 18.16 would otherwise drop.
  std::string RestatedDefaultExpression(const schema::Column& column) const {
    std::string restated = RestatedDefault(column);
    return restated.empty() ? "" : restated.substr(std::string_view(" DEFAULT ").size());
  }

  /// " DEFAULT expr" for a MODIFY COLUMN of `column` (ClickHouse name; as the tracker knew it before
  /// the statement): the default the ClickHouse column has, which ClickHouse 18.16 would otherwise drop.
  std::string RestatedDefault(const schema::Column& column) const {
    auto recorded = plan_.after.clickhouse_defaults.find(column.name);
    std::string expression;
    if (recorded != plan_.after.clickhouse_defaults.end()) {
      expression = recorded->second;
    } else if (auto mapped = clickhouse::MapColumn(column, context_.caps); mapped.ok()) {
      expression = clickhouse::DefaultExpression(column, *mapped).value_or("");
    }
    return expression.empty() ? "" : " DEFAULT " + expression;
  }

  Status PlanChange(const schema::SchemaChange& c) {
    switch (c.kind) {
      case Kind::kTableCreated: return PlanCreated(c);
      case Kind::kTableDropped:
        plan_.dropped = true;
        plan_.after.source = before_.source;
        if (context_.policy.drop_table == SchemaPolicy::DropTable::kDrop || context_.migration_leftover) {
          Add(clickhouse::DropTable(ClickHouseTable(), context_.target));
          plan_.log_lines.push_back(
              fmt::format("DROP TABLE {}: {} dropped in ClickHouse too ({})", table_, Destination(),
                          context_.migration_leftover ? "a table an online schema migration left behind"
                                                      : "drop_table=drop"));
        } else {
          plan_.log_lines.push_back(
              fmt::format("DROP TABLE {}: not propagated; {} stays in ClickHouse with the rows it has",
                          table_, Destination()));
        }
        return Status::Ok();
      case Kind::kTableTruncated:
        if (context_.policy.truncate == SchemaPolicy::Truncate::kIgnore) {
          plan_.log_lines.push_back(
              fmt::format("TRUNCATE TABLE {}: not propagated (truncate=ignore); {} keeps its rows", table_,
                          Destination()));
          return Status::Ok();
        }
        if (context_.mapping.deletes == DeleteMode::kIgnore) {
          plan_.log_lines.push_back(fmt::format(
              "TRUNCATE TABLE {}: not propagated (deletes: ignore, append-only); {} keeps its rows", table_,
              Destination()));
          return Status::Ok();
        }
        Add(clickhouse::TruncateTable(ClickHouseTable(), context_.target));
        plan_.log_lines.push_back(
            fmt::format("TRUNCATE TABLE {}: propagated, {} emptied", table_, Destination()));
        return Status::Ok();
      case Kind::kColumnAdded: return PlanAdded(c);
      case Kind::kColumnDropped: return PlanDropped(c);
      case Kind::kColumnModified: return PlanModified(c);
      case Kind::kColumnRenamed: return PlanRenamed(c);
      case Kind::kColumnMoved:
        plan_.log_lines.push_back(
            fmt::format("column {} moved to position {}: nothing to do in ClickHouse "
                        "(rows are inserted by column name)",
                        Backquote(c.column.name), c.position));
        return Status::Ok();
      case Kind::kDefaultChanged:
        plan_.log_lines.push_back(fmt::format(
            "default of column {} changed from {} to {}: not propagated (defaults travel only with ADD "
            "COLUMN)",
            Backquote(c.column.name), c.old_column ? SourceDefault(c.old_column->default_value) : "?",
            SourceDefault(c.column.default_value)));
        return Status::Ok();
      case Kind::kKeysChanged:
        plan_.log_lines.push_back(
            fmt::format("keys of {} changed; the ClickHouse sorting key {} is unchanged: nothing to do",
                        table_, KeyText(clickhouse::ChooseSortingKey(plan_.after.source))));
        return Status::Ok();
      case Kind::kTableOptionsChanged:
        plan_.log_lines.push_back(
            fmt::format("table options of {} changed ({}): nothing to do in ClickHouse", table_, c.note));
        return Status::Ok();
      case Kind::kPartitionDataChanged:
        return Rebuild(fmt::format("removes or swaps rows by partition ({})", c.note));
      case Kind::kTableRenamed:
      case Kind::kTableReplaced: break;  // refused in Run
    }
    return Stop(
        context_, table_,
        fmt::format("makes a change chsync does not handle ({})", schema::SchemaChangeKindName(c.kind)));
  }

  Status PlanCreated(const schema::SchemaChange& c) {
    const schema::TableSchema* schema = c.schema ? &*c.schema : after_source_;
    if (schema == nullptr) {
      return Error(ErrorKind::kInternal,
                   "table " + table_ + ": kTableCreated without the new table's schema");
    }
    if (context_.policy.create_table == SchemaPolicy::CreateTable::kIgnore) {
      plan_.ignored = true;
      plan_.log_lines.push_back(fmt::format("CREATE TABLE {}: not replicated (create_table=ignore)", table_));
      return Status::Ok();
    }
    auto statements = PlanCreateTable(*schema, context_);
    if (!statements.ok())
      return Stop(context_, table_,
                  "creates a table chsync cannot replicate: " + statements.error().message());
    for (std::string& sql : *statements) Add(std::move(sql));
    plan_.created = true;
    if (std::optional<std::string> refused = KeylessRefusal(*schema, context_.policy))
      plan_.park_reason = *refused;
    plan_.after = NewDestination(*schema, context_.caps, context_.mapping);
    clickhouse::SortingKey key = clickhouse::ChooseSortingKey(*schema);
    plan_.log_lines.push_back(fmt::format(
        "CREATE TABLE {}: created in ClickHouse as {}, ORDER BY {}{}", table_, Destination(), KeyText(key),
        key.full_row ? " (no primary key or NOT NULL unique key: every column is the key, identical rows "
                       "collapse into one)"
                     : ""));
    return Status::Ok();
  }

  Status PlanAdded(const schema::SchemaChange& c) {
    const schema::Column& column = c.column;
    for (std::string_view reserved :
         {clickhouse::kVersionColumn, clickhouse::kIsDeletedColumn, clickhouse::kSyncedAtColumn}) {
      if (schema::EqualsIgnoreCase(column.name, reserved)) {
        return Stop(
            context_, table_,
            fmt::format("adds column {}, a name chsync reserves for its own metadata (rename it at the "
                        "source or leave the table out of the replication)",
                        Backquote(column.name)));
      }
    }
    // A column table_options rename is added under its ClickHouse name.
    const std::string name = context_.mapping.DestColumn(column.name);
    if (Contains(in_clickhouse_, name)) {
      // A kept (dropped) column, an ALIAS or a renamed column's old name holds it in ClickHouse.
      return Rebuild(fmt::format(
          "adds column {}, a name the ClickHouse table still uses for {}", Backquote(name),
          Contains(plan_.after.kept_columns, column.name) ? "a dropped column it keeps" : "another column"));
    }
    auto mapped = clickhouse::MapColumn(column, context_.caps);
    if (!mapped.ok()) {
      return Stop(context_, table_,
                  fmt::format("adds column {}, which has no ClickHouse type: {}", Backquote(column.name),
                              mapped.error().message()));
    }
    DefaultChoice def = ChooseDefault(c, *mapped);
    // A configured column (table_options: columns:) is added as CreateTable would create it.
    const clickhouse::CreateOptions options = AppliedOptions(context_);
    const clickhouse::ColumnOptions* column_options = options.Column(column.name);
    const std::string what = "table " + table_ + ": column " + column.name;
    auto type = clickhouse::DestinationType(*mapped, column_options, context_.caps, what);
    auto codec = type.ok() ? clickhouse::CodecClause(column_options, context_.caps, what)
                           : Result<std::string>(type.error());
    if (!codec.ok()) {
      return Stop(context_, table_,
                  fmt::format("adds column {}, which cannot be stored as table_options configure it: {}",
                              Backquote(column.name), codec.error().message()));
    }
    std::string sql = AlterTable() + " ADD COLUMN ";
    if (context_.caps.add_column_if_not_exists) sql += "IF NOT EXISTS ";
    sql += clickhouse::QuoteIdentifier(name) + " " + *type;
    if (def.expression) sql += " DEFAULT " + *def.expression;
    sql += *codec;
    // Position does not matter (inserts name their columns); AFTER only names a column that
    // exists in ClickHouse by the time this statement runs.
    if (!c.after_column.empty()) {
      std::string after = plan_.after.ClickHouseName(c.after_column);
      if (context_.caps.add_column_after && Contains(in_clickhouse_, after)) {
        sql += " AFTER " + clickhouse::QuoteIdentifier(after);
      }
    } else if (context_.caps.add_column_first) {
      sql += " FIRST";
    }
    Add(std::move(sql), context_.caps.add_column_if_not_exists ? "" : name);
    in_clickhouse_.push_back(name);
    plan_.after.clickhouse_defaults[name] = def.expression.value_or("");
    if (name != column.name) plan_.after.clickhouse_names[column.name] = name;

    // The tracker stores a nullable column without DEFAULT as DEFAULT NULL; the translation, made
    // from the statement's own definition, tells whether the statement had a DEFAULT clause.
    static const std::string kNoDefault = schema::TranslateDefault(schema::Column{}, true).reason;
    const bool had_default = c.default_translation.propagated || c.default_translation.reason != kNoDefault;
    std::string line = fmt::format("ADD COLUMN {} {}", Backquote(column.name), column.TypeText());
    if (had_default) line += " " + SourceDefault(column.default_value);
    if (def.expression) {
      line += fmt::format(": column added as {} DEFAULT {} (rows already in ClickHouse read this default)",
                          mapped->type, *def.expression);
    } else if (!had_default) {
      line += fmt::format(": column added as {}", mapped->type);
    } else {
      line += fmt::format(
          ": default omitted ({}); column added as {} (rows already in ClickHouse read the type's default, "
          "a resync is needed if they must hold the source default)",
          def.reason, mapped->type);
    }
    if (!mapped->fallback_note.empty()) line += "; " + mapped->fallback_note;
    plan_.log_lines.push_back(std::move(line));
    return Status::Ok();
  }

  /// Drops the ALIAS column chsync added under `name`, if any.
  void DropAlias(const std::string& name) {
    auto it = std::find_if(plan_.after.aliases.begin(), plan_.after.aliases.end(),
                           [&](const std::string& a) { return schema::EqualsIgnoreCase(a, name); });
    if (it == plan_.after.aliases.end()) return;
    AddDropColumn(*it);
    std::erase_if(in_clickhouse_, [&](const std::string& n) { return schema::EqualsIgnoreCase(n, *it); });
    plan_.after.aliases.erase(it);
  }

  /// Forgets the ClickHouse name recorded for source column `name`.
  void EraseName(const std::string& name) {
    std::erase_if(plan_.after.clickhouse_names,
                  [&](const auto& entry) { return schema::EqualsIgnoreCase(entry.first, name); });
  }

  Status PlanRenamed(const schema::SchemaChange& c) {
    const std::string& from = c.old_column_name;
    const std::string& to = c.column.name;
    const std::string stored = plan_.after.ClickHouseName(from);  // the ClickHouse column holding the data
    std::string head = fmt::format("RENAME COLUMN {} TO {}", Backquote(from), Backquote(to));
    EraseName(from);
    if (schema::EqualsIgnoreCase(stored, to)) {
      // Renamed back to the name ClickHouse kept.
      DropAlias(from);
      plan_.log_lines.push_back(
          fmt::format("{}: the ClickHouse column {} has that name already", head, Backquote(stored)));
      return Status::Ok();
    }
    if (Contains(in_clickhouse_, to)) {
      return Rebuild(
          fmt::format("renames column {} to {}, a name the ClickHouse table still uses for another "
                      "column",
                      Backquote(from), Backquote(to)));
    }
    if (!schema::EqualsIgnoreCase(context_.mapping.DestColumn(from), from)) {
      // table_options name the ClickHouse column: it keeps that name.
      plan_.after.clickhouse_names[to] = stored;
      plan_.log_lines.push_back(
          fmt::format("{}: rows keep going to the ClickHouse column {}, which rename_columns names", head,
                      Backquote(stored)));
      return Status::Ok();
    }
    if (context_.policy.rename_column == SchemaPolicy::RenameColumn::kIgnore) {
      plan_.after.clickhouse_names[to] = stored;
      plan_.log_lines.push_back(fmt::format(
          "{}: not propagated (rename_column=ignore); rows keep going to the ClickHouse column {}", head,
          Backquote(stored)));
      return Status::Ok();
    }
    const bool key = IsKeyColumn(from);
    if (context_.caps.rename_column && !key && schema::EqualsIgnoreCase(stored, from)) {
      Add(AlterTable() + " RENAME COLUMN IF EXISTS " + clickhouse::QuoteIdentifier(stored) + " TO " +
          clickhouse::QuoteIdentifier(to));
      std::erase_if(in_clickhouse_,
                    [&](const std::string& n) { return schema::EqualsIgnoreCase(n, stored); });
      in_clickhouse_.push_back(to);
      if (auto d = plan_.after.clickhouse_defaults.find(stored); d != plan_.after.clickhouse_defaults.end()) {
        std::string expression = d->second;
        plan_.after.clickhouse_defaults.erase(d);
        plan_.after.clickhouse_defaults[to] = expression;
      }
      plan_.log_lines.push_back(fmt::format("{}: ClickHouse column renamed, its data kept", head));
      return Status::Ok();
    }
    // ClickHouse keeps the column under its name; an ALIAS column gives it the new one.
    DropAlias(from);
    plan_.after.clickhouse_names[to] = stored;
    // Newer ClickHouse wants the ALIAS column's type; 18.16 takes it too.
    auto mapped = clickhouse::MapColumn(c.column, context_.caps);
    std::string type = mapped.ok() ? " " + mapped->type : "";
    Add(AlterTable() + " ADD COLUMN " + (context_.caps.add_column_if_not_exists ? "IF NOT EXISTS " : "") +
            clickhouse::QuoteIdentifier(to) + type + " ALIAS " + clickhouse::QuoteIdentifier(stored),
        context_.caps.add_column_if_not_exists ? "" : to);
    plan_.after.aliases.push_back(to);
    in_clickhouse_.push_back(to);
    plan_.log_lines.push_back(fmt::format(
        "{}: {}; the data stays in the ClickHouse column {} and an ALIAS column {} reads it", head,
        key ? "ClickHouse cannot rename a sorting-key column"
            : "this ClickHouse has no ALTER TABLE … RENAME COLUMN (20.4 and later have it)",
        Backquote(stored), Backquote(to)));
    return Status::Ok();
  }

  Status PlanDropped(const schema::SchemaChange& c) {
    const schema::Column column = InClickHouse(c.column);
    std::string name = Backquote(column.name);
    // The ClickHouse table's own keys when the pipe read them (table_options may name others since).
    const bool read_by_key = context_.clickhouse_key_columns.empty()
                                 ? IsKeyColumn(c.column.name)
                                 : Contains(context_.clickhouse_key_columns, c.column.name);
    if (read_by_key) {
      // Kept, it would hold NULL in every later row: a changed row's new version gets another
      // sorting key (or partition) than its old one, and both stay live (issue 33, case 3).
      return Stop(
          context_, table_,
          fmt::format("drops column {}, which the ClickHouse table's ORDER BY or PARTITION BY reads: "
                      "its later rows would hold NULL there and stand beside their earlier versions as "
                      "second live rows; if order_by or partition_by in table_options name {}, take it "
                      "out first",
                      Backquote(c.column.name), Backquote(c.column.name)));
    }
    EraseName(c.column.name);
    if (context_.policy.drop_column == SchemaPolicy::DropColumn::kPropagate) {
      DropAlias(c.column.name);  // an ALIAS reading the column would keep ClickHouse from dropping it
      AddDropColumn(column.name);
      std::erase_if(in_clickhouse_,
                    [&](const std::string& n) { return schema::EqualsIgnoreCase(n, column.name); });
      plan_.after.clickhouse_defaults.erase(column.name);
      plan_.log_lines.push_back(fmt::format(
          "DROP COLUMN {}: dropped in ClickHouse too (drop_column=propagate)", Backquote(c.column.name)));
      return Status::Ok();
    }
    if (!Contains(plan_.after.kept_columns, column.name)) plan_.after.kept_columns.push_back(column.name);
    if (column.nullable) {
      plan_.log_lines.push_back(fmt::format(
          "DROP COLUMN {}: not propagated; {} stays in ClickHouse and is NULL in rows replicated from now on",
          Backquote(c.column.name), name));
      return Status::Ok();
    }
    schema::Column nullable = column;
    nullable.nullable = true;
    auto mapped = clickhouse::MapColumn(nullable, context_.caps);
    if (!mapped.ok()) {
      return Stop(context_, table_,
                  fmt::format("drops column {}, which chsync cannot make Nullable in ClickHouse: {}", name,
                              mapped.error().message()));
    }
    auto sql = clickhouse::ModifyColumn(ClickHouseTable(), nullable, context_.caps, context_.target,
                                        AppliedOptions(context_), RestatedDefaultExpression(column));
    if (!sql.ok()) {
      return Stop(context_, table_,
                  fmt::format("drops NOT NULL column {}, which must become Nullable in ClickHouse: {}", name,
                              sql.error().message()));
    }
    Add(*sql);
    plan_.log_lines.push_back(
        fmt::format("DROP COLUMN {}: not propagated; {} stays in ClickHouse, made {} so that rows replicated "
                    "from now on hold NULL",
                    Backquote(c.column.name), name, mapped->type));
    return Status::Ok();
  }

  Status PlanModified(const schema::SchemaChange& c) {
    if (!c.old_column)
      return Error(ErrorKind::kInternal, "table " + table_ + ": kColumnModified without old_column");
    const schema::Column old = InClickHouse(*c.old_column);
    schema::Column now = c.column;
    now.name = old.name;
    std::string name = Backquote(c.column.name);
    const std::string change_text = fmt::format(
        "MODIFY COLUMN {} {}{} => {}{}", name, c.old_column->TypeText(),
        c.old_column->nullable ? "" : " NOT NULL", c.column.TypeText(), c.column.nullable ? "" : " NOT NULL");
    TypeChangeVerdict verdict =
        ClassifyTypeChange(*c.old_column, c.column, context_.strict_mode, context_.caps);
    if (verdict.kind == TypeChangeVerdict::Kind::kUnchanged &&
        c.old_column->TypeText() == c.column.TypeText() && c.old_column->nullable == c.column.nullable) {
      return Status::Ok();  // a MODIFY that only moved the column (kColumnMoved says so) or changed nothing
    }
    if (verdict.kind == TypeChangeVerdict::Kind::kUnchanged) {
      plan_.log_lines.push_back(fmt::format(
          "{}: nothing to do in ClickHouse ({}){}", change_text, verdict.reason,
          c.old_column->default_value == c.column.default_value ? ""
                                                                : " (default changes are not propagated)"));
      return Status::Ok();
    }
    auto rebuild_or_stop = [&](const std::string& why) -> Status {
      std::string what = fmt::format("changes column {} from {} to {} ({})", name, c.old_column->TypeText(),
                                     c.column.TypeText(), why);
      if (context_.policy.type_change == SchemaPolicy::TypeChange::kFail)
        return Stop(context_, table_, what + " (type_change=fail)");
      return Rebuild(what);
    };
    if (verdict.kind == TypeChangeVerdict::Kind::kRebuild) return rebuild_or_stop(verdict.reason);
    if (IsKeyColumn(c.column.name)) {
      return rebuild_or_stop("a sorting-key column, whose type ClickHouse cannot change in place");
    }
    if (context_.policy.type_change == SchemaPolicy::TypeChange::kFail) {
      return Stop(context_, table_, change_text + " (type_change=fail)");
    }
    auto new_mapped = clickhouse::MapColumn(now, context_.caps);
    auto sql = clickhouse::ModifyColumn(ClickHouseTable(), now, context_.caps, context_.target,
                                        AppliedOptions(context_), RestatedDefaultExpression(old));
    if (!new_mapped.ok() || !sql.ok())
      return rebuild_or_stop((!sql.ok() ? sql : Result<std::string>(new_mapped.error())).error().message());
    Add(*sql);
    plan_.log_lines.push_back(fmt::format("{}: ClickHouse column changed to {} ({})", change_text,
                                          new_mapped->type, verdict.reason));
    return Status::Ok();
  }

  const DestinationTable& before_;
  const schema::TableSchema* after_source_;
  const PolicyContext& context_;
  std::string table_;
  /// Columns the ClickHouse table has at this point of the plan (ClickHouse names: source, kept,
  /// aliases, added).
  std::vector<std::string> in_clickhouse_;
  TablePlan plan_;
};

}  // namespace

Result<TablePlan> PlanTableChanges(const std::vector<schema::SchemaChange>& changes,
                                   const DestinationTable& before, const schema::TableSchema* after_source,
                                   const PolicyContext& context) {
  std::string table;
  if (!before.source.name.empty()) {
    table = before.source.QualifiedName();
  } else if (after_source != nullptr) {
    table = after_source->QualifiedName();
  } else if (!changes.empty()) {
    table = changes.front().table.database + "." + changes.front().table.name;
  }
  // Excluded columns: their changes are left out, and the plan sees the tracked schema without them.
  std::vector<std::string> excluded = before.excluded;
  std::vector<schema::SchemaChange> kept;
  auto excluded_here = [&](std::string_view name) {
    return Contains(excluded, name) || context.mapping.Excluded(name);
  };
  auto project = [&](const schema::TableSchema& schema) -> Result<schema::TableSchema> {
    for (const schema::Column& c : schema.columns) {
      if (excluded_here(c.name) && !Contains(excluded, c.name)) excluded.push_back(c.name);
    }
    for (const std::string& c : schema.primary_key) {
      if (excluded_here(c)) {
        return Stop(context, table,
                    fmt::format("makes excluded column {} part of the primary key, which ClickHouse needs "
                                "(remove it from exclude_columns, or key the table without it)",
                                Backquote(c)));
      }
    }
    return WithoutColumns(schema, excluded);
  };
  for (const schema::SchemaChange& c : changes) {
    schema::SchemaChange out = c;
    switch (c.kind) {
      case Kind::kColumnRenamed:
        if (excluded_here(c.old_column_name)) {
          if (!Contains(excluded, c.column.name)) excluded.push_back(c.column.name);  // stays excluded
          continue;
        }
        if (excluded_here(c.column.name)) {
          // Renamed onto an excluded name: from now on it is excluded, like a column dropped.
          out.kind = Kind::kColumnDropped;
          out.column.name = c.old_column_name;
          if (!Contains(excluded, c.column.name)) excluded.push_back(c.column.name);
        }
        break;
      case Kind::kColumnAdded:
      case Kind::kColumnDropped:
      case Kind::kColumnModified:
      case Kind::kColumnMoved:
      case Kind::kDefaultChanged:
        if (excluded_here(c.column.name)) {
          if (c.kind == Kind::kColumnAdded && !Contains(excluded, c.column.name))
            excluded.push_back(c.column.name);
          continue;
        }
        break;
      default: break;
    }
    if (out.schema && c.kind != Kind::kTableCreated) {  // PlanCreateTable checks the whole table
      CHSYNC_ASSIGN_OR_RETURN(schema::TableSchema projected, project(*out.schema));
      out.schema = std::move(projected);
    }
    kept.push_back(std::move(out));
  }
  std::optional<schema::TableSchema> after;
  if (after_source != nullptr) {
    CHSYNC_ASSIGN_OR_RETURN(schema::TableSchema projected, project(*after_source));
    after = std::move(projected);
  }
  Planner planner(before, after ? &*after : nullptr, context, std::move(table));
  CHSYNC_ASSIGN_OR_RETURN(TablePlan plan, planner.Run(kept));
  plan.after.excluded = std::move(excluded);
  return plan;
}

std::optional<std::string> KeylessRefusal(const schema::TableSchema& table, const SchemaPolicy& policy) {
  if (policy.keyless != SchemaPolicy::Keyless::kRefuse || !clickhouse::ChooseSortingKey(table).full_row)
    return std::nullopt;
  const std::string name = table.QualifiedName();
  return fmt::format(
      "{0} has no primary key or NOT NULL unique key, so ClickHouse would sort it by every column, where "
      "rows "
      "equal in every column are one row and a DELETE of one removes them all (keyless=refuse). Give it a "
      "primary key at the source (an invisible one changes no query; MariaDB 10.3+, MySQL 8.0.23+: `ALTER "
      "TABLE {0} ADD COLUMN _id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY INVISIBLE`), or set "
      "keyless: distinct for it to replicate its distinct rows; then copy it (`chsync resume --state DIR "
      "--table {0}` while the pipe runs, `chsync resync --state DIR --table {0}` while it is stopped)",
      name);
}

Result<std::vector<std::string>> PlanCreateTable(const schema::TableSchema& table,
                                                 const PolicyContext& context) {
  std::vector<std::string> statements{clickhouse::CreateDatabase(context.target)};
  if (context.target.sharded) {
    statements.push_back(clickhouse::CreateDatabase(context.target.StorageDatabase(), context.target));
  }
  CHSYNC_RETURN_IF_ERROR(CheckForPipe(context.mapping, table, context.caps, context.target));
  CHSYNC_ASSIGN_OR_RETURN(std::string create,
                          clickhouse::CreateTable(context.mapping.Project(table), context.caps,
                                                  context.target, AppliedOptions(context)));
  statements.push_back(std::move(create));
  return statements;
}

std::vector<std::string> KeySourceColumns(const DestinationTable& dest, std::string_view sorting_key,
                                          std::string_view partition_key) {
  std::vector<std::string> referenced = ColumnReferences(sorting_key);
  for (std::string& name : ColumnReferences(partition_key)) referenced.push_back(std::move(name));
  const clickhouse::SortingKey key = clickhouse::ChooseSortingKey(dest.source);
  std::vector<std::string> out;
  for (const schema::Column& c : dest.source.columns) {
    const std::string stored = dest.ClickHouseName(c.name);
    const bool in_key = std::any_of(key.columns.begin(), key.columns.end(), [&](const std::string& k) {
      return schema::EqualsIgnoreCase(k, c.name);
    });
    const bool named = std::find(referenced.begin(), referenced.end(), stored) != referenced.end();
    if (in_key || named) out.push_back(c.name);
  }
  return out;
}

std::string DestinationTable::ClickHouseName(const std::string& name) const {
  for (const auto& [source_name, clickhouse_name] : clickhouse_names) {
    if (schema::EqualsIgnoreCase(source_name, name)) return clickhouse_name;
  }
  return name;
}

bool DestinationTable::Excluded(std::string_view name, const EffectiveMapping& mapping) const {
  return Contains(excluded, name) || mapping.Excluded(name);
}

DestinationTable NewDestination(const schema::TableSchema& table, const clickhouse::Capabilities& caps) {
  DestinationTable out;
  out.source = table;
  for (const schema::Column& column : table.columns) {
    auto mapped = clickhouse::MapColumn(column, caps);
    out.clickhouse_defaults[column.name] =
        mapped.ok() ? clickhouse::DefaultExpression(column, *mapped).value_or("") : std::string();
  }
  return out;
}

DestinationTable NewDestination(const schema::TableSchema& table, const clickhouse::Capabilities& caps,
                                const EffectiveMapping& mapping,
                                const std::vector<std::string>& also_excluded) {
  std::vector<std::string> excluded = also_excluded;
  for (const schema::Column& column : table.columns) {
    if (mapping.Excluded(column.name) && !Contains(excluded, column.name)) excluded.push_back(column.name);
  }
  DestinationTable out = NewDestination(WithoutColumns(table, excluded), caps);
  out.excluded = std::move(excluded);
  for (const schema::Column& column : out.source.columns) {
    std::string name = mapping.DestColumn(column.name);
    if (name == column.name) continue;
    // clickhouse_defaults are by ClickHouse name.
    auto node = out.clickhouse_defaults.extract(column.name);
    if (!node.empty()) {
      node.key() = name;
      out.clickhouse_defaults.insert(std::move(node));
    }
    out.clickhouse_names[column.name] = std::move(name);
  }
  return out;
}

schema::TableSchema WithoutColumns(const schema::TableSchema& table,
                                   const std::vector<std::string>& excluded) {
  if (excluded.empty()) return table;
  schema::TableSchema out = table;
  std::erase_if(out.columns, [&](const schema::Column& c) { return Contains(excluded, c.name); });
  std::erase_if(out.unique_keys, [&](const schema::Key& key) {
    return std::any_of(key.columns.begin(), key.columns.end(),
                       [&](const std::string& c) { return Contains(excluded, c); });
  });
  out.RenumberColumns();
  return out;
}

schema::TableSchema WriterSchema(const DestinationTable& table) {
  schema::TableSchema out = table.source;
  for (schema::Column& column : out.columns) column.name = table.ClickHouseName(column.name);
  for (const std::string& name : table.kept_columns) {
    schema::Column placeholder;
    placeholder.name = name;
    placeholder.type = schema::ColumnType::kLongText;
    placeholder.type_spelling = "longtext";
    placeholder.nullable = true;
    placeholder.default_value.kind = schema::DefaultKind::kNull;
    out.columns.push_back(std::move(placeholder));
  }
  out.RenumberColumns();
  return out;
}

}  // namespace chsync::pipe
