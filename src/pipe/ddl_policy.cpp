#include "pipe/ddl_policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

#include "clickhouse/sql_quoting.h"
#include "clickhouse/type_mapping.h"
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

/// What a change that chsync does not follow yet does; empty for changes it handles.
std::string UnsupportedDescription(const schema::SchemaChange& change) {
  switch (change.kind) {
    case Kind::kTableRenamed:
      return fmt::format("renames table {}.{} to {}.{}, which chsync does not propagate yet",
                         change.old_table.database, change.old_table.name, change.table.database,
                         change.table.name);
    case Kind::kTableReplaced:
      return fmt::format("replaces the table ({}), which chsync does not propagate yet", change.note);
    case Kind::kColumnRenamed:
      return fmt::format("renames column {} to {}, which chsync does not propagate yet",
                         Backquote(change.old_column_name), Backquote(change.column.name));
    case Kind::kPartitionDataChanged:
      return fmt::format("removes or swaps rows by partition ({}), which chsync does not propagate",
                         change.note);
    default: return "";
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
    for (const schema::Column& c : before.source.columns) in_clickhouse_.push_back(c.name);
    for (const std::string& name : before.kept_columns) in_clickhouse_.push_back(name);
  }

  Result<TablePlan> Run(const std::vector<schema::SchemaChange>& changes) {
    // Everything that stops the pipe is decided before anything is planned: a plan runs whole or
    // not at all.
    if (context_.ordinal_mode) {
      for (const schema::SchemaChange& c : changes) {
        if (c.shifts_positions) {
          return Stop(context_, table_,
                      ShiftDescription(c) +
                          ", and positions can no longer be matched because binlog_row_metadata is not FULL");
        }
      }
    }
    for (const schema::SchemaChange& c : changes) {
      if (std::string what = UnsupportedDescription(c); !what.empty()) return Stop(context_, table_, what);
    }
    bool created = std::any_of(changes.begin(), changes.end(),
                               [](const schema::SchemaChange& c) { return c.kind == Kind::kTableCreated; });
    if (!created && after_source_ != nullptr && !before_.source.columns.empty()) {
      clickhouse::SortingKey old_key = clickhouse::ChooseSortingKey(before_.source);
      clickhouse::SortingKey new_key = clickhouse::ChooseSortingKey(*after_source_);
      // A keyless table keeps the sorting key it was created with (its columns then): columns added
      // later stay out of it, and the rows and tombstones written after them still match the old
      // rows by the key columns, which all remain.
      bool only_added = old_key.full_row && new_key.full_row &&
                        std::all_of(old_key.columns.begin(), old_key.columns.end(),
                                    [&](const std::string& c) { return Contains(new_key.columns, c); });
      if (!SameKey(old_key, new_key) && !only_added) {
        return Stop(context_, table_,
                    fmt::format("changes the ClickHouse sorting key from {} to {}{}, which chsync does not "
                                "propagate yet",
                                KeyText(old_key), KeyText(new_key),
                                old_key.full_row || new_key.full_row
                                    ? " (a table without a primary key or NOT NULL unique key is sorted by "
                                      "every column)"
                                    : ""));
      }
    }
    for (const schema::SchemaChange& c : changes) CHSYNC_RETURN_IF_ERROR(PlanChange(c));
    return std::move(plan_);
  }

 private:
  std::string Destination(std::string_view name) const {
    return clickhouse::QualifiedName(context_.target.database, name);
  }

  void Add(std::string sql, std::string skip_if_column_exists = "") {
    plan_.statements.push_back(std::move(sql));
    plan_.skip_if_column_exists.push_back(std::move(skip_if_column_exists));
  }

  /// " DEFAULT expr" for a MODIFY COLUMN of `column` (as the tracker knew it before the statement):
  /// the default the ClickHouse column has, which ClickHouse 18.16 would otherwise drop.
  std::string RestatedDefault(const schema::Column& column) const {
    auto recorded = before_.clickhouse_defaults.find(column.name);
    std::string expression;
    if (recorded != before_.clickhouse_defaults.end()) {
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
        plan_.log_lines.push_back(
            fmt::format("DROP TABLE {}: not propagated; {} stays in ClickHouse with the rows it has", table_,
                        Destination(c.table.name)));
        return Status::Ok();
      case Kind::kTableTruncated:
        Add(clickhouse::TruncateTable(c.table.name, context_.target));
        plan_.log_lines.push_back(
            fmt::format("TRUNCATE TABLE {}: propagated, {} emptied", table_, Destination(c.table.name)));
        return Status::Ok();
      case Kind::kColumnAdded: return PlanAdded(c);
      case Kind::kColumnDropped: return PlanDropped(c);
      case Kind::kColumnModified: return PlanModified(c);
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
      case Kind::kTableRenamed:
      case Kind::kTableReplaced:
      case Kind::kColumnRenamed:
      case Kind::kPartitionDataChanged: break;  // stopped in Run
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
    if (!before_.source.columns.empty()) {
      return Stop(
          context_, table_,
          fmt::format("creates a table whose name an earlier, dropped table still holds in ClickHouse "
                      "({} is kept with its rows); re-creating a dropped table is not supported yet: "
                      "drop or rename {} in ClickHouse first",
                      Destination(schema->name), Destination(schema->name)));
    }
    auto statements = PlanCreateTable(*schema, context_);
    if (!statements.ok())
      return Stop(context_, table_,
                  "creates a table chsync cannot replicate: " + statements.error().message());
    for (std::string& sql : *statements) Add(std::move(sql));
    plan_.created = true;
    plan_.after = NewDestination(*schema, context_.caps);
    clickhouse::SortingKey key = clickhouse::ChooseSortingKey(*schema);
    plan_.log_lines.push_back(fmt::format(
        "CREATE TABLE {}: created in ClickHouse as {}, ORDER BY {}{}", table_, Destination(schema->name),
        KeyText(key),
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
    if (Contains(before_.kept_columns, column.name)) {
      return Stop(
          context_, table_,
          fmt::format("adds column {}, which was dropped earlier and is kept in ClickHouse; re-adding a "
                      "dropped column is not supported yet",
                      Backquote(column.name)));
    }
    auto mapped = clickhouse::MapColumn(column, context_.caps);
    if (!mapped.ok()) {
      return Stop(context_, table_,
                  fmt::format("adds column {}, which has no ClickHouse type: {}", Backquote(column.name),
                              mapped.error().message()));
    }
    DefaultChoice def = ChooseDefault(c, *mapped);
    std::string sql =
        "ALTER TABLE " + Destination(c.table.name) + OnCluster(context_.target) + " ADD COLUMN ";
    if (context_.caps.add_column_if_not_exists) sql += "IF NOT EXISTS ";
    sql += clickhouse::QuoteIdentifier(column.name) + " " + mapped->type;
    if (def.expression) sql += " DEFAULT " + *def.expression;
    // Position does not matter (inserts name their columns); AFTER only names a column that
    // exists in ClickHouse by the time this statement runs.
    if (!c.after_column.empty()) {
      if (context_.caps.add_column_after && Contains(in_clickhouse_, c.after_column)) {
        sql += " AFTER " + clickhouse::QuoteIdentifier(c.after_column);
      }
    } else if (context_.caps.add_column_first) {
      sql += " FIRST";
    }
    Add(std::move(sql), context_.caps.add_column_if_not_exists ? "" : column.name);
    in_clickhouse_.push_back(column.name);
    plan_.after.clickhouse_defaults[column.name] = def.expression.value_or("");

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

  Status PlanDropped(const schema::SchemaChange& c) {
    const schema::Column& column = c.column;
    std::string name = Backquote(column.name);
    if (!Contains(plan_.after.kept_columns, column.name)) plan_.after.kept_columns.push_back(column.name);
    if (column.nullable) {
      plan_.log_lines.push_back(fmt::format(
          "DROP COLUMN {}: not propagated; {} stays in ClickHouse and is NULL in rows replicated from now on",
          name, name));
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
    auto sql = clickhouse::ModifyColumn(c.table.name, nullable, context_.caps, context_.target);
    if (!sql.ok()) {
      return Stop(context_, table_,
                  fmt::format("drops NOT NULL column {}, which must become Nullable in ClickHouse: {}", name,
                              sql.error().message()));
    }
    Add(*sql + RestatedDefault(column));
    plan_.log_lines.push_back(
        fmt::format("DROP COLUMN {}: not propagated; {} stays in ClickHouse, made {} so that rows replicated "
                    "from now on hold NULL",
                    name, name, mapped->type));
    return Status::Ok();
  }

  Status PlanModified(const schema::SchemaChange& c) {
    if (!c.old_column)
      return Error(ErrorKind::kInternal, "table " + table_ + ": kColumnModified without old_column");
    const schema::Column& old = *c.old_column;
    const schema::Column& now = c.column;
    std::string name = Backquote(now.name);
    auto old_mapped = clickhouse::MapColumn(old, context_.caps);
    auto new_mapped = clickhouse::MapColumn(now, context_.caps);
    if (!old_mapped.ok() || !new_mapped.ok()) {
      return Stop(
          context_, table_,
          fmt::format("changes column {} to {}, which has no ClickHouse type: {}", name, now.TypeText(),
                      (!new_mapped.ok() ? new_mapped : old_mapped).error().message()));
    }
    const std::string change_text =
        fmt::format("MODIFY COLUMN {} {}{} => {}{}", name, old.TypeText(), old.nullable ? "" : " NOT NULL",
                    now.TypeText(), now.nullable ? "" : " NOT NULL");
    if (old_mapped->type == new_mapped->type) {
      plan_.log_lines.push_back(
          fmt::format("{}: ClickHouse type {} unchanged, nothing to do{}", change_text, new_mapped->type,
                      old.default_value == now.default_value ? "" : " (default changes are not propagated)"));
      return Status::Ok();
    }
    if (old.nullable && !now.nullable) {
      return Stop(context_, table_,
                  fmt::format("makes column {} NOT NULL ({} => {} in ClickHouse), which chsync does not "
                              "propagate yet",
                              name, old_mapped->type, new_mapped->type));
    }
    // What the ClickHouse column would be if only the nullability changed.
    schema::Column relaxed = old;
    relaxed.nullable = now.nullable;
    auto relaxed_mapped = clickhouse::MapColumn(relaxed, context_.caps);
    const bool only_nullable = relaxed_mapped.ok() && relaxed_mapped->type == new_mapped->type;
    const bool enum_appended =
        old.type == schema::ColumnType::kEnum && now.type == schema::ColumnType::kEnum &&
        now.enum_values.size() > old.enum_values.size() &&
        std::equal(old.enum_values.begin(), old.enum_values.end(), now.enum_values.begin());
    if (!only_nullable && !enum_appended) {
      return Stop(context_, table_,
                  fmt::format("changes the type of column {} from {} to {} ({} => {} in ClickHouse), which "
                              "chsync does not propagate yet",
                              name, old.TypeText(), now.TypeText(), old_mapped->type, new_mapped->type));
    }
    if (Contains(clickhouse::ChooseSortingKey(before_.source).columns, now.name)) {
      return Stop(context_, table_,
                  fmt::format("changes column {} ({} => {} in ClickHouse), which is part of the ClickHouse "
                              "sorting key; changing a key column is not supported yet",
                              name, old_mapped->type, new_mapped->type));
    }
    auto sql = clickhouse::ModifyColumn(c.table.name, now, context_.caps, context_.target);
    if (!sql.ok()) {
      return Stop(context_, table_,
                  fmt::format("changes column {} to {}: {}", name, new_mapped->type, sql.error().message()));
    }
    Add(*sql + RestatedDefault(old));
    plan_.log_lines.push_back(fmt::format(
        "{}: ClickHouse column changed from {} to {} ({})", change_text, old_mapped->type, new_mapped->type,
        enum_appended ? "ENUM labels appended at the end, existing values keep "
                        "their numbers"
                      : "now Nullable"));
    return Status::Ok();
  }

  const DestinationTable& before_;
  const schema::TableSchema* after_source_;
  const PolicyContext& context_;
  std::string table_;
  /// Columns the ClickHouse table has at this point of the plan (source names, kept, added).
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
  Planner planner(before, after_source, context, std::move(table));
  return planner.Run(changes);
}

Result<std::vector<std::string>> PlanCreateTable(const schema::TableSchema& table,
                                                 const PolicyContext& context) {
  std::vector<std::string> statements{clickhouse::CreateDatabase(context.target)};
  CHSYNC_ASSIGN_OR_RETURN(std::string create, clickhouse::CreateTable(table, context.caps, context.target));
  statements.push_back(std::move(create));
  return statements;
}

DestinationTable NewDestination(const schema::TableSchema& table, const clickhouse::Capabilities& caps) {
  DestinationTable out{table, {}, {}};
  for (const schema::Column& column : table.columns) {
    auto mapped = clickhouse::MapColumn(column, caps);
    out.clickhouse_defaults[column.name] =
        mapped.ok() ? clickhouse::DefaultExpression(column, *mapped).value_or("") : std::string();
  }
  return out;
}

schema::TableSchema WriterSchema(const DestinationTable& table) {
  schema::TableSchema out = table.source;
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
