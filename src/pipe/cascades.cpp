#include "pipe/cascades.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "clickhouse/sql_quoting.h"
#include "common/log.h"
#include "mysql/binlog_stream.h"
#include "pipe/live_tables.h"
#include "pipe/names.h"

namespace chsync::pipe {
namespace {

using clickhouse::QuoteIdentifier;

/// Matches in one statement at most: a query stays well under ClickHouse's max_query_size (256 KiB)
/// for keys of a few columns.
constexpr size_t kMatchesPerStatement = 200;
/// And at most about this much key text (long string keys).
constexpr size_t kMatchBytesPerStatement = size_t{64} * 1024;

/// `type` without Nullable( ) and LowCardinality( ) around it.
std::string_view BaseType(std::string_view type) {
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (std::string_view wrapper : {"Nullable(", "LowCardinality("}) {
      if (type.starts_with(wrapper) && type.ends_with(")")) {
        type = type.substr(wrapper.size(), type.size() - wrapper.size() - 1);
        stripped = true;
      }
    }
  }
  return type;
}

/// "(`a` = CAST('1' AS Int32) AND `b` = CAST('x' AS String))".
std::string Match(const CascadeChild& child, const std::vector<std::string>& values) {
  std::string out = "(";
  for (size_t i = 0; i < child.fk.size(); ++i) {
    const size_t at = child.fk[i];
    if (i > 0) out += " AND ";
    out += fmt::format("{} = CAST({} AS {})", QuoteIdentifier(child.names[at]), values[i],
                       BaseType(child.types[at].type));
  }
  return out + ")";
}

/// INSERT INTO child (…) SELECT <columns, the fk ones replaced by `set`>, version, deleted FROM
/// child FINAL WHERE live AND (one of `matches`).
std::string Statement(const CascadeChild& child, const std::vector<std::string>* set, uint64_t version,
                      bool deleted, std::span<const CascadeChange> matches) {
  std::string columns;
  std::string select;
  for (size_t i = 0; i < child.names.size(); ++i) {
    if (i > 0) {
      columns += ", ";
      select += ", ";
    }
    const std::string name = QuoteIdentifier(child.names[i]);
    columns += name;
    if (i + 2 == child.names.size()) {
      select += fmt::format("toUInt64({})", version);
      continue;
    }
    if (i + 1 == child.names.size()) {
      select += deleted ? "toUInt8(1)" : "toUInt8(0)";
      continue;
    }
    if (i >= child.kept_from && !deleted && child.types[i].nullable) {
      select += fmt::format("CAST(NULL AS {})", child.types[i].type);
      continue;
    }
    auto fk = std::find(child.fk.begin(), child.fk.end(), i);
    if (set == nullptr || fk == child.fk.end()) {
      select += name;
      continue;
    }
    const std::string& value = (*set)[static_cast<size_t>(fk - child.fk.begin())];
    select += fmt::format("CAST({} AS {})", value,
                          value == "NULL" ? child.types[i].type : BaseType(child.types[i].type));
  }
  std::string where;
  for (const CascadeChange& m : matches) where += (where.empty() ? "" : " OR ") + Match(child, m.old_values);
  // Only rows older than the cascade: one written later (a replay, a one-phase XA's later rows, a
  // key used again) is not the row the cascade changed at the source.
  const std::string& deleted_column = child.names.back();
  const std::string& version_column = child.names[child.names.size() - 2];
  return fmt::format("INSERT INTO {} ({}) SELECT {} FROM {} FINAL WHERE {} = 0 AND {} < {} AND ({})",
                     child.table, columns, select, child.table, QuoteIdentifier(deleted_column),
                     QuoteIdentifier(version_column), version, where);
}

}  // namespace

std::optional<std::string> CascadeLiteral(std::string_view key_text) {
  if (key_text.size() >= 2 && key_text.front() == '(' && key_text.back() == ')') {
    key_text = key_text.substr(1, key_text.size() - 2);
  }
  if (key_text == "NULL") return std::nullopt;
  if (key_text.starts_with('\'')) return std::string(key_text);
  return "'" + std::string(key_text) + "'";
}

std::vector<std::string> CascadeStatements(const CascadeChild& child,
                                           std::span<const CascadeChange> changes) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < changes.size()) {
    const CascadeChange& first = changes[i];
    if (first.kind == CascadeChange::Kind::kUpdate) {
      // One parent row at a time: a later row's old values may be an earlier row's new ones.
      std::span<const CascadeChange> one = changes.subspan(i, 1);
      out.push_back(Statement(child, &first.new_values, first.version, false, one));
      if (child.key_moves) out.push_back(Statement(child, nullptr, first.version, true, one));
      ++i;
      continue;
    }
    size_t end = i;
    uint64_t version = 0;
    size_t bytes = 0;
    while (end < changes.size() && changes[end].kind == first.kind && end - i < kMatchesPerStatement &&
           bytes < kMatchBytesPerStatement) {
      version = std::max(version, changes[end].version);
      for (const std::string& v : changes[end].old_values) bytes += v.size();
      ++end;
    }
    std::span<const CascadeChange> group = changes.subspan(i, end - i);
    if (first.kind == CascadeChange::Kind::kDelete) {
      out.push_back(Statement(child, nullptr, version, true, group));
    } else {
      const std::vector<std::string> nulls(child.fk.size(), "NULL");
      out.push_back(Statement(child, &nulls, version, false, group));
      if (child.key_moves) out.push_back(Statement(child, nullptr, version, true, group));
    }
    i = end;
  }
  return out;
}

bool CascadeFollower::Refresh(TableStates& tables, const schema::Tracker& tracker, uint64_t erasures,
                              bool clustered) {
  if (!stale_ && erasures == erasures_) return false;
  stale_ = false;
  erasures_ = erasures;
  parents_.clear();
  struct Line {
    std::string child;
    std::string parent;
    std::string text;
    bool followed = false;
  };
  std::vector<Line> lines;
  for (auto& entry : tables) {
    const std::string& child_key = entry.first;
    const std::unique_ptr<TableState>& child = entry.second;
    const schema::TableSchema* tracked = tracker.Find(child->dest.source.database, child->dest.source.name);
    for (const schema::ForeignKey& fk : (tracked != nullptr ? *tracked : child->dest.source).foreign_keys) {
      const bool on_delete = fk.on_delete == schema::ForeignKey::Action::kCascade ||
                             fk.on_delete == schema::ForeignKey::Action::kSetNull;
      const bool on_update = fk.on_update == schema::ForeignKey::Action::kCascade ||
                             fk.on_update == schema::ForeignKey::Action::kSetNull;
      if (!on_delete && !on_update) continue;
      // As mysql::CascadingForeignKey::Describe says it (`chsync check`), then whether it is followed.
      std::string line =
          fmt::format("{} ({}) -> {}.{}: ", child_key, fk.name, fk.parent_database, fk.parent_table);
      if (on_delete) line += fmt::format("ON DELETE {}", schema::ForeignKeyActionName(fk.on_delete));
      if (on_update) {
        line +=
            fmt::format("{}ON UPDATE {}", on_delete ? ", " : "", schema::ForeignKeyActionName(fk.on_update));
      }
      auto why_not = [&]() -> std::string {
        const std::string parent_key = TableKey(fk.parent_database, fk.parent_table);
        auto parent = tables.find(parent_key);
        if (parent == tables.end()) return "its parent table is not replicated";
        if (clustered) return "chsync does not follow cascades on a cluster destination yet";
        if (!parent->second->writer && parent->second->held) {
          // Its rows are not read: ChildrenOf parks the children of its changes.
          Link link;
          link.child = child_key;
          link.key = fk;
          parents_[parent_key].push_back(std::move(link));
          return "";
        }
        if (!parent->second->writer || !child->writer) return "the table is not set up";
        if (fk.columns.size() != fk.parent_columns.size() || fk.columns.empty()) {
          return "its columns and the parent's differ in number";
        }
        Link link;
        link.child = child_key;
        link.key = fk;
        const schema::TableSchema& p = parent->second->dest.source;
        const schema::TableSchema& c = child->dest.source;
        std::vector<std::string> names;
        for (const schema::Column& column : p.columns) names.push_back(column.name);
        const std::vector<clickhouse::MappedType> types(
            parent->second->writer->types().begin(),
            parent->second->writer->types().begin() + static_cast<std::ptrdiff_t>(p.columns.size()));
        for (size_t i = 0; i < fk.columns.size(); ++i) {
          const int pi = p.FindColumn(fk.parent_columns[i]);
          const int ci = c.FindColumn(fk.columns[i]);
          if (pi < 0) return "the parent's column " + fk.parent_columns[i] + " is not replicated";
          if (ci < 0) return "column " + fk.columns[i] + " is not replicated";
          auto printer = clickhouse::ShardRouter::Create(
              QuoteIdentifier(p.columns[static_cast<size_t>(pi)].name), names, types, {1});
          if (!printer.ok())
            return "the values of " + fk.parent_columns[i] + ": " + printer.error().message();
          link.parent_indexes.push_back(static_cast<size_t>(pi));
          link.child_indexes.push_back(static_cast<size_t>(ci));
          link.printers.push_back(std::move(printer).value());
        }
        parents_[parent_key].push_back(std::move(link));
        return "";
      };
      const std::string why = why_not();
      line += why.empty() ? ": followed" : ": not followed, ";
      line += why;
      lines.push_back(
          {child_key, TableKey(fk.parent_database, fk.parent_table), std::move(line), why.empty()});
    }
  }
  for (const mysql::CascadingForeignKey& known : source_keys_) {
    const std::string child_key = TableKey(known.database, known.table);
    if (!tables.contains(child_key)) continue;
    const bool tracked = std::any_of(lines.begin(), lines.end(), [&](const Line& l) {
      return l.child == child_key && l.text.starts_with(child_key + " (" + known.name + ")");
    });
    if (tracked) continue;
    lines.push_back(
        {child_key, TableKey(known.parent_database, known.parent_table),
         known.Describe() +
             ": not followed, the tracked schema does not have it yet (added at the source after the "
             "checkpoint, followed once the stream reaches it; or a state written before chsync "
             "tracked foreign keys, which `chsync resync --table " +
             child_key + "` reads again)",
         false});
  }
  // A change cascaded into a table is not cascaded on from there (InnoDB goes on, up to 15 deep).
  std::vector<std::string> described;
  for (Line& line : lines) {
    for (const Line& into : lines) {
      if (line.followed && into.followed && into.child == line.parent) {
        line.text += fmt::format(
            " (not for the rows of {} that a cascade from {} changes: not followed, one level only)",
            line.parent, into.parent);
      }
    }
    described.push_back(std::move(line.text));
  }
  if (described == described_) return false;
  for (const std::string& line : described) {
    if (line.find("not followed") == std::string::npos) {
      log::Info("foreign key {}", line);
    } else {
      log::Warn(
          "foreign key {}: ClickHouse keeps the child rows its cascades change (run `chsync resync "
          "--table` for the child after one)",
          line);
    }
  }
  described_ = std::move(described);
  return true;
}

Result<CascadeFollower::Work> CascadeFollower::StatementsFor(TableStates& tables, const std::string& parent,
                                                             TableState& table, const binlog::RowsEvent& rows,
                                                             std::span<const uint64_t> versions,
                                                             const SourcePosition& at) {
  Work work;
  auto found = parents_.find(parent);
  if (found == parents_.end() || rows.kind == binlog::RowsKind::kWrite) return work;
  // Texts of the referenced columns of one image, per link; nullopt entries for NULLs.
  auto texts = [&](const binlog::RowImage& image, Link& link,
                   std::vector<clickhouse::Cell>& cells) -> Result<std::vector<std::optional<std::string>>> {
    const size_t n = table.map_index.size();
    ordered_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t index = table.map_index[i];
      if (index >= image.size()) return Error(ErrorKind::kCorrupt, "a row image shorter than its table");
      ordered_[i] = image[index];
    }
    for (size_t i : link.parent_indexes) {
      if (ordered_[i].is_absent()) {
        return Error(ErrorKind::kUnsupported, "the binlog row image leaves out " +
                                                  table.dest.source.columns[i].name +
                                                  " (binlog_row_image is not FULL), which the cascade needs");
      }
    }
    CHSYNC_RETURN_IF_ERROR(table.converter->Convert(ordered_, ValueOrigin::kBinlog, cells));
    std::vector<std::optional<std::string>> out;
    for (size_t i = 0; i < link.printers.size(); ++i) {
      CHSYNC_ASSIGN_OR_RETURN(std::string text, link.printers[i].KeyText(cells));
      out.push_back(CascadeLiteral(text));
    }
    return out;
  };
  for (Link& link : found->second) {
    auto child = tables.find(link.child);
    if (child == tables.end() || child->second->held || !child->second->writer) continue;
    // Copied from a later point (an offline resync): the copy holds what the cascade did.
    const std::optional<SourcePosition>& from = child->second->stream_from;
    if (from && mysql::CompareCoordinates({at.file, at.position}, {from->file, from->position}) < 0) continue;
    const bool deleting = rows.kind == binlog::RowsKind::kDelete;
    const schema::ForeignKey::Action action = deleting ? link.key.on_delete : link.key.on_update;
    if (action != schema::ForeignKey::Action::kCascade && action != schema::ForeignKey::Action::kSetNull)
      continue;
    std::vector<CascadeChange> changes;
    Status refused = Status::Ok();
    for (size_t k = 0; k < rows.rows.size() && refused.ok(); ++k) {
      auto old_values = texts(rows.rows[k].before, link, before_);
      if (!old_values.ok()) {
        refused = old_values.error();
        break;
      }
      CascadeChange change;
      change.version = versions[k];
      bool has_null = false;
      for (auto& v : *old_values) {
        has_null = has_null || !v;
        change.old_values.push_back(v.value_or(""));
      }
      if (has_null) continue;  // no child row references a NULL
      if (deleting) {
        change.kind = action == schema::ForeignKey::Action::kCascade ? CascadeChange::Kind::kDelete
                                                                     : CascadeChange::Kind::kSetNull;
      } else {
        auto new_values = texts(rows.rows[k].after, link, after_);
        if (!new_values.ok()) {
          refused = new_values.error();
          break;
        }
        bool same = true;
        for (size_t i = 0; i < new_values->size(); ++i) {
          const std::optional<std::string>& v = (*new_values)[i];
          change.new_values.push_back(v.value_or("NULL"));
          same = same && v && *v == change.old_values[i];
        }
        if (same) continue;  // the referenced values did not change: InnoDB cascades nothing
        change.kind = action == schema::ForeignKey::Action::kCascade ? CascadeChange::Kind::kUpdate
                                                                     : CascadeChange::Kind::kSetNull;
      }
      changes.push_back(std::move(change));
    }
    if (!refused.ok()) {
      work.refused.emplace_back(link.child, refused.error());
      continue;
    }
    TableState& c = *child->second;
    // An append-only child (`deletes: ignore`) keeps the rows a cascade deletes at the source.
    if (c.ignore_deletes) {
      std::erase_if(changes, [](const CascadeChange& ch) { return ch.kind == CascadeChange::Kind::kDelete; });
    }
    if (changes.empty()) continue;
    if (!c.shared.source_column.empty()) {
      // A table shared by several sources (pipe/fan_in.h): its cascade statement would have to name
      // this source's rows; not followed yet, so the child parks (its rows owed until resynced).
      work.refused.emplace_back(
          link.child, Error(ErrorKind::kUnsupported,
                            "a cascade from " + parent + " into a table shared by several sources (" +
                                c.shared.source_column +
                                "): chsync does not follow it yet; run `chsync resync "
                                "--table " +
                                link.child + "` after the parent's change"));
      continue;
    }
    if (c.rebuild) {
      // Its copy runs on another thread: a chunk read before the cascade may land after it.
      work.refused.emplace_back(
          link.child, Error(ErrorKind::kUnsupported,
                            "a cascade from " + parent + " arrived while the table was copied online"));
      continue;
    }
    CascadeChild target;
    target.table = c.writer->qualified();
    target.names = c.writer->names();
    target.types.assign(c.writer->types().begin(), c.writer->types().end());
    target.kept_from = c.dest.source.columns.size();
    target.fk = link.child_indexes;
    target.key_moves = c.full_row;
    for (size_t i : link.child_indexes) {
      target.key_moves = target.key_moves || std::find(c.key_indexes.begin(), c.key_indexes.end(),
                                                       static_cast<int>(i)) != c.key_indexes.end();
    }
    for (std::string& s : CascadeStatements(target, changes))
      work.statements.emplace_back(link.child, std::move(s));
  }
  return work;
}

std::vector<std::string> CascadeFollower::ChildrenOf(std::string_view parent, bool deleting) const {
  std::vector<std::string> children;
  auto found = parents_.find(parent);
  if (found == parents_.end()) return children;
  for (const Link& link : found->second) {
    const schema::ForeignKey::Action action = deleting ? link.key.on_delete : link.key.on_update;
    if (action == schema::ForeignKey::Action::kCascade || action == schema::ForeignKey::Action::kSetNull) {
      children.push_back(link.child);
    }
  }
  return children;
}

void CascadeFollower::Defer(std::vector<std::pair<std::string, std::string>> statements) {
  for (auto& s : statements) deferred_.push_back(std::move(s));
}

std::vector<std::pair<std::string, std::string>> CascadeFollower::TakeDeferred() {
  return std::exchange(deferred_, {});
}

std::vector<std::string> CascadeFollower::DeferredChildren() const {
  std::set<std::string> children;
  for (const auto& [child, statement] : deferred_) children.insert(child);
  return {children.begin(), children.end()};
}

}  // namespace chsync::pipe
