#include "verify/plan.h"

#include <algorithm>
#include <cctype>

#include "clickhouse/ddl.h"
#include "clickhouse/sql_quoting.h"
#include "clickhouse/type_mapping.h"
#include "mysql/connection.h"

namespace chsync::verify {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool IsInteger(std::string_view text) {
  if (!text.empty() && text[0] == '-') text.remove_prefix(1);
  return !text.empty() && text.size() <= 20 && text.find_first_not_of("0123456789") == std::string_view::npos;
}

std::string SourceRowHash(const TablePlan& plan) {
  return SourceHash64(plan.source_row_text);
}
std::string DestRowHash(const TablePlan& plan) {
  return DestHash64(plan.dest_row_text);
}

std::string InList(const std::vector<uint64_t>& values) {
  std::string out = "(";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(values[i]);
  }
  return out + ")";
}

std::string SourceSub(const TablePlan& plan, uint64_t subs) {
  return "MOD(" + SourceHash32Low(plan.source_key_text) + ", " + std::to_string(subs) + ")";
}
std::string DestSub(const TablePlan& plan, uint64_t subs) {
  return "(" + DestHash32Low(plan.dest_key_text) + " % " + std::to_string(subs) + ")";
}

std::string SourceCells(const TablePlan& plan) {
  std::string out;
  for (size_t i = 0; i < plan.columns.size(); ++i) {
    if (i > 0) out += ", ";
    out += plan.columns[i].source_sql;
  }
  return out;
}
std::string DestCells(const TablePlan& plan) {
  std::string out;
  for (size_t i = 0; i < plan.columns.size(); ++i) {
    if (i > 0) out += ", ";
    out += plan.columns[i].dest_sql;
  }
  return out;
}

}  // namespace

Result<TablePlan> PlanTable(const schema::TableSchema& table, const ColumnMapping& mapping,
                            std::string_view dest_database, std::string_view dest_table,
                            const clickhouse::Capabilities& caps, const SourceFlavor& flavor) {
  TablePlan plan;
  plan.source_name = table.database + "." + table.name;
  plan.dest_name = std::string(dest_database) + "." + std::string(dest_table);
  plan.source_table = mysql::QuoteIdentifier(table.database) + "." + mysql::QuoteIdentifier(table.name);
  if (!mapping.where.empty()) {
    plan.source_table = "(SELECT * FROM " + plan.source_table + " WHERE (" + mapping.where + ")) _chsync_vf";
    plan.notes.push_back("rows: only those of the row filter (where: " + mapping.where + ")");
  }
  plan.dest_table =
      clickhouse::QuoteIdentifier(dest_database) + "." + clickhouse::QuoteIdentifier(dest_table);
  if (!mapping.source_column.empty()) {
    plan.dest_filter = clickhouse::QuoteIdentifier(mapping.source_column) + " = " +
                       clickhouse::QuoteString(mapping.source_value);
    plan.notes.push_back("rows: those of the shared table whose " + mapping.source_column + " is '" +
                         mapping.source_value + "'");
  }
  std::vector<std::string> excluded;
  for (const std::string& e : mapping.excluded) excluded.push_back(Lower(e));
  std::map<std::string, std::string> renamed;
  for (const auto& [from, to] : mapping.renamed) renamed[Lower(from)] = to;

  schema::TableSchema projected = table;
  projected.columns.clear();
  for (const schema::Column& column : table.columns) {
    if (std::find(excluded.begin(), excluded.end(), Lower(column.name)) != excluded.end()) {
      plan.notes.push_back(column.name + ": excluded from replication, not compared");
      continue;
    }
    projected.columns.push_back(column);
    auto it = renamed.find(Lower(column.name));
    std::string dest_name = it == renamed.end() ? column.name : it->second;
    auto dest_type = mapping.dest_types.find(dest_name);
    auto canon = CanonicalColumn(column, dest_name, caps, flavor,
                                 dest_type == mapping.dest_types.end() ? "" : dest_type->second);
    if (!canon.ok()) {
      return Error(canon.error().kind(), "table " + plan.source_name + ": " + canon.error().message());
    }
    if (canon->exactness != Exactness::kExact) {
      plan.notes.push_back(column.name + " (" + column.TypeText() +
                           "): " + std::string(ExactnessName(canon->exactness)) + ": " + canon->note);
    }
    plan.columns.push_back(std::move(*canon));
  }
  if (plan.columns.empty()) {
    return Error(ErrorKind::kUsage, "table " + plan.source_name + " has no replicated column to compare");
  }
  clickhouse::SortingKey key = clickhouse::ChooseSortingKey(projected);
  plan.full_row = key.full_row;
  for (const std::string& k : key.columns) {
    for (size_t i = 0; i < plan.columns.size(); ++i) {
      if (Lower(plan.columns[i].source_name) == Lower(k)) {
        plan.key.push_back(i);
        break;
      }
    }
  }
  if (plan.key.empty() || plan.full_row) {
    plan.full_row = true;
    plan.key.clear();
    for (size_t i = 0; i < plan.columns.size(); ++i) plan.key.push_back(i);
  }
  std::vector<std::string> source_cells, dest_cells, source_key, dest_key;
  for (const ColumnCanon& c : plan.columns) {
    source_cells.push_back(c.source_sql);
    dest_cells.push_back(c.dest_sql);
  }
  for (size_t i : plan.key) {
    source_key.push_back(plan.columns[i].source_sql);
    dest_key.push_back(plan.columns[i].dest_sql);
  }
  plan.source_row_text = SourceConcat(source_cells);
  plan.dest_row_text = DestConcat(dest_cells);
  plan.source_key_text = SourceConcat(source_key);
  plan.dest_key_text = DestConcat(dest_key);

  if (!plan.full_row) {
    const ColumnCanon& first = plan.columns[plan.key[0]];
    const int index = projected.FindColumn(first.source_name);
    const schema::Column* column = index < 0 ? nullptr : &projected.columns[static_cast<size_t>(index)];
    if (column != nullptr && schema::IsIntegerType(column->type) && !column->nullable) {
      plan.ranged = true;
      plan.range_source_column = mysql::QuoteIdentifier(first.source_name);
      plan.range_dest_column = clickhouse::QuoteIdentifier(first.dest_name);
    }
  }
  return plan;
}

std::string Chunk::Describe(std::string_view column) const {
  if (lo || hi) {
    return std::string(column) + " in [" + (lo ? *lo : "-∞") + ", " + (hi ? *hi : "∞") + ")";
  }
  if (buckets <= 1) return "whole table";
  return "bucket " + std::to_string(bucket) + " of " + std::to_string(buckets);
}

std::string SourceChunkCondition(const TablePlan& plan, const Chunk& chunk) {
  if (plan.ranged) {
    std::string out;
    if (chunk.lo && IsInteger(*chunk.lo)) out += plan.range_source_column + " >= " + *chunk.lo;
    if (chunk.hi && IsInteger(*chunk.hi))
      out += (out.empty() ? "" : " AND ") + plan.range_source_column + " < " + *chunk.hi;
    return out.empty() ? "1" : out;
  }
  if (chunk.buckets <= 1) return "1";
  return "MOD(" + SourceHash64(plan.source_key_text) + ", " + std::to_string(chunk.buckets) +
         ") = " + std::to_string(chunk.bucket);
}

namespace {
std::string DestChunkRange(const TablePlan& plan, const Chunk& chunk);
}  // namespace

std::string DestChunkCondition(const TablePlan& plan, const Chunk& chunk) {
  if (plan.dest_filter.empty()) return DestChunkRange(plan, chunk);
  return "(" + plan.dest_filter + ") AND (" + DestChunkRange(plan, chunk) + ")";
}

namespace {
std::string DestChunkRange(const TablePlan& plan, const Chunk& chunk) {
  if (plan.ranged) {
    std::string out;
    if (chunk.lo && IsInteger(*chunk.lo)) out += plan.range_dest_column + " >= " + *chunk.lo;
    if (chunk.hi && IsInteger(*chunk.hi))
      out += (out.empty() ? "" : " AND ") + plan.range_dest_column + " < " + *chunk.hi;
    return out.empty() ? "1" : out;
  }
  if (chunk.buckets <= 1) return "1";
  return "(" + DestHash64(plan.dest_key_text) + " % " + std::to_string(chunk.buckets) +
         ") = " + std::to_string(chunk.bucket);
}
}  // namespace

std::string SourceNextBoundarySql(const TablePlan& plan, const std::optional<std::string>& lo,
                                  uint64_t rows) {
  std::string sql = "SELECT " + plan.range_source_column + " FROM " + plan.source_table;
  if (lo && IsInteger(*lo)) sql += " WHERE " + plan.range_source_column + " >= " + *lo;
  sql += " ORDER BY " + plan.range_source_column + " LIMIT 1 OFFSET " + std::to_string(rows);
  return sql;
}

std::string SourceNextValueSql(const TablePlan& plan, const std::string& value) {
  return "SELECT MIN(" + plan.range_source_column + ") FROM " + plan.source_table + " WHERE " +
         plan.range_source_column + " > " + (IsInteger(value) ? value : "0");
}

std::string SourceSummarySql(const TablePlan& plan, const Chunk& chunk) {
  const std::string where = " WHERE " + SourceChunkCondition(plan, chunk);
  if (plan.full_row) {
    return "SELECT COUNT(*), SUM(_chsync_vh) FROM (SELECT DISTINCT " + SourceRowHash(plan) +
           " AS _chsync_vh FROM " + plan.source_table + where + ") _chsync_vd";
  }
  return "SELECT COUNT(*), SUM(" + SourceRowHash(plan) + ") FROM " + plan.source_table + where;
}

std::string DestSummarySql(const TablePlan& plan, const Chunk& chunk) {
  return "SELECT count(), sum(" + DestRowHash(plan) + ") FROM " + plan.dest_table + " FINAL WHERE (" +
         DestChunkCondition(plan, chunk) + ") AND _chsync_is_deleted = 0";
}

std::string SourceBucketSummarySql(const TablePlan& plan, uint64_t buckets) {
  const std::string k = std::to_string(buckets);
  if (plan.full_row) {
    return "SELECT MOD(_chsync_vh, " + k +
           ") AS _chsync_vb, COUNT(*), SUM(_chsync_vh) FROM (SELECT DISTINCT " + SourceRowHash(plan) +
           " AS _chsync_vh FROM " + plan.source_table + ") _chsync_vd GROUP BY _chsync_vb";
  }
  return "SELECT MOD(" + SourceHash64(plan.source_key_text) + ", " + k + ") AS _chsync_vb, COUNT(*), SUM(" +
         SourceRowHash(plan) + ") FROM " + plan.source_table + " GROUP BY _chsync_vb";
}

std::string DestBucketSummarySql(const TablePlan& plan, uint64_t buckets) {
  const std::string filter = plan.dest_filter.empty() ? "" : "(" + plan.dest_filter + ") AND ";
  return "SELECT " + DestHash64(plan.dest_key_text) + " % " + std::to_string(buckets) +
         " AS _chsync_vb, count(), sum(" + DestRowHash(plan) + ") FROM " + plan.dest_table + " FINAL WHERE " +
         filter + "_chsync_is_deleted = 0 GROUP BY _chsync_vb";
}

std::string SourceSubBucketSql(const TablePlan& plan, const Chunk& chunk, uint64_t subs) {
  const std::string where = " WHERE " + SourceChunkCondition(plan, chunk);
  if (plan.full_row) {
    return "SELECT _chsync_vs, COUNT(*), SUM(_chsync_vh) FROM (SELECT DISTINCT " + SourceSub(plan, subs) +
           " AS _chsync_vs, " + SourceRowHash(plan) + " AS _chsync_vh FROM " + plan.source_table + where +
           ") _chsync_vd GROUP BY _chsync_vs";
  }
  return "SELECT " + SourceSub(plan, subs) + " AS _chsync_vs, COUNT(*), SUM(" + SourceRowHash(plan) +
         ") FROM " + plan.source_table + where + " GROUP BY _chsync_vs";
}

std::string DestSubBucketSql(const TablePlan& plan, const Chunk& chunk, uint64_t subs) {
  return "SELECT " + DestSub(plan, subs) + " AS _chsync_vs, count(), sum(" + DestRowHash(plan) + ") FROM " +
         plan.dest_table + " FINAL WHERE (" + DestChunkCondition(plan, chunk) +
         ") AND _chsync_is_deleted = 0 GROUP BY _chsync_vs";
}

std::string SourceRowsSql(const TablePlan& plan, const Chunk& chunk, uint64_t subs,
                          const std::vector<uint64_t>& which) {
  std::string sql = std::string("SELECT ") + (plan.full_row ? "DISTINCT " : "") + SourceCells(plan) +
                    " FROM " + plan.source_table + " WHERE " + SourceChunkCondition(plan, chunk);
  if (!which.empty()) sql += " AND " + SourceSub(plan, subs) + " IN " + InList(which);
  return sql;
}

std::string DestRowsSql(const TablePlan& plan, const Chunk& chunk, uint64_t subs,
                        const std::vector<uint64_t>& which) {
  std::string sql = "SELECT " + DestCells(plan) + " FROM " + plan.dest_table + " FINAL WHERE (" +
                    DestChunkCondition(plan, chunk) + ") AND _chsync_is_deleted = 0";
  if (!which.empty()) sql += " AND " + DestSub(plan, subs) + " IN " + InList(which);
  return sql;
}

std::string DestVersionsSql(const TablePlan& plan, const Chunk& chunk, uint64_t subs,
                            const std::vector<uint64_t>& which) {
  std::string sql = "SELECT " + plan.dest_key_text + " AS _chsync_vk, max(_chsync_version) FROM " +
                    plan.dest_table + " WHERE (" + DestChunkCondition(plan, chunk) + ")";
  if (!which.empty()) sql += " AND " + DestSub(plan, subs) + " IN " + InList(which);
  return sql + " GROUP BY _chsync_vk";
}

Result<uint64_t> ParseSum(std::string_view text) {
  if (text.empty() || text == "NULL" || text == "\\N") return uint64_t{0};
  // MySQL's SUM of unsigned values is an exact DECIMAL, possibly with a ".0…" tail.
  size_t dot = text.find('.');
  std::string_view digits = text.substr(0, dot);
  if (dot != std::string_view::npos &&
      text.substr(dot + 1).find_first_not_of('0') != std::string_view::npos) {
    return Error(ErrorKind::kCorrupt, "hash sum is not an integer: " + std::string(text));
  }
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos) {
    return Error(ErrorKind::kCorrupt, "hash sum is not an unsigned number: " + std::string(text));
  }
  uint64_t value = 0;
  for (char c : digits) value = value * 10 + static_cast<uint64_t>(c - '0');  // wraps: modulo 2^64
  return value;
}

Result<uint64_t> ParseCount(std::string_view text) {
  if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string_view::npos) {
    return Error(ErrorKind::kCorrupt, "count is not an unsigned number: " + std::string(text));
  }
  uint64_t value = 0;
  for (char c : text) {
    uint64_t next = value * 10 + static_cast<uint64_t>(c - '0');
    if (next / 10 != value)
      return Error(ErrorKind::kCorrupt, "count does not fit 64 bits: " + std::string(text));
    value = next;
  }
  return value;
}

std::vector<uint64_t> DifferingBuckets(const std::map<uint64_t, Summary>& source,
                                       const std::map<uint64_t, Summary>& dest) {
  std::vector<uint64_t> out;
  for (const auto& [bucket, summary] : source) {
    auto it = dest.find(bucket);
    if (it == dest.end() || !(it->second == summary)) out.push_back(bucket);
  }
  for (const auto& [bucket, summary] : dest) {
    if (!source.contains(bucket)) out.push_back(bucket);
  }
  std::sort(out.begin(), out.end());
  return out;
}

uint64_t SubBucketsFor(uint64_t rows) {
  return std::clamp<uint64_t>(rows / 32, 1, 4096);
}

}  // namespace chsync::verify
