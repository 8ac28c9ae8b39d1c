#include "verify/diff.h"

#include <algorithm>

#include "clickhouse/sql_quoting.h"

namespace chsync::verify {
namespace {

/// A cell for people, quoted when it is text: 'abc', NULL, 42.
std::string Shown(const ColumnCanon& column, const std::string& cell) {
  std::string value = DisplayCell(cell, column.prefixed);
  if (cell == "N") return value;
  std::string out;
  const bool quote = column.prefixed;
  if (quote) out += '\'';
  for (unsigned char c : value) {
    if (c == '\'' && quote) {
      out += "\\'";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c == 0x7f) {
      static const char* kHex = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (quote) out += '\'';
  if (out.size() > 200) out = out.substr(0, 200) + "…";
  return out;
}

std::string KeyForPeople(const TablePlan& plan, const std::vector<std::string>& row) {
  std::string out;
  for (size_t i : plan.key) {
    if (!out.empty()) out += ", ";
    out += plan.columns[i].source_name + "=" + Shown(plan.columns[i], row[i]);
  }
  return plan.full_row ? "row (" + out + ")" : out;
}

}  // namespace

std::string KeyText(const TablePlan& plan, const std::vector<std::string>& row) {
  std::string out;
  for (size_t n = 0; n < plan.key.size(); ++n) {
    if (n > 0) out += ',';
    out += row[plan.key[n]];
  }
  return out;
}

Result<std::vector<RowDifference>> CompareRows(const TablePlan& plan, const CellRows& source,
                                               const CellRows& dest) {
  using Index = std::map<std::string, std::vector<const std::vector<std::string>*>>;
  auto index = [&](const CellRows& rows, const char* side) -> Result<Index> {
    Index out;
    for (const auto& row : rows) {
      if (row.size() != plan.columns.size()) {
        return Error(ErrorKind::kCorrupt, std::string("a ") + side + " row of " + plan.source_name + " has " +
                                              std::to_string(row.size()) + " values, expected " +
                                              std::to_string(plan.columns.size()));
      }
      out[KeyText(plan, row)].push_back(&row);
    }
    return out;
  };
  CHSYNC_ASSIGN_OR_RETURN(Index by_source, index(source, "source"));
  CHSYNC_ASSIGN_OR_RETURN(Index by_dest, index(dest, "destination"));
  std::vector<RowDifference> out;
  for (const auto& [key, rows] : by_dest) {
    if (rows.size() < 2) continue;
    // Two live versions of one key: each would be compared as if it were the only one.
    auto at_source = by_source.find(key);
    const std::vector<std::string>* row = at_source != by_source.end() ? at_source->second.front() : nullptr;
    RowDifference d{RowDifference::Kind::kDuplicate, key, KeyForPeople(plan, *rows.front()), {}, rows.size()};
    for (size_t i = 0; i < plan.columns.size(); ++i) {
      std::string values;
      bool differs = false;
      for (const auto* copy : rows) {
        values += (values.empty() ? "" : " | ") + Shown(plan.columns[i], (*copy)[i]);
        differs = differs || (*copy)[i] != (row != nullptr ? (*row)[i] : (*rows.front())[i]);
      }
      if (differs) {
        d.cells.push_back({plan.columns[i].source_name,
                           row != nullptr ? Shown(plan.columns[i], (*row)[i]) : "(no row)", values});
      }
    }
    out.push_back(std::move(d));
  }
  for (const auto& [key, rows] : by_source) {
    const std::vector<std::string>& row = *rows.front();
    auto it = by_dest.find(key);
    if (it == by_dest.end()) {
      out.push_back({RowDifference::Kind::kMissing, key, KeyForPeople(plan, row), {}});
      continue;
    }
    if (it->second.size() > 1) continue;  // a kDuplicate above
    const std::vector<std::string>& there = *it->second.front();
    RowDifference d{RowDifference::Kind::kValues, key, KeyForPeople(plan, row), {}};
    for (size_t i = 0; i < plan.columns.size(); ++i) {
      if (row[i] != there[i]) {
        d.cells.push_back(
            {plan.columns[i].source_name, Shown(plan.columns[i], row[i]), Shown(plan.columns[i], there[i])});
      }
    }
    if (!d.cells.empty()) out.push_back(std::move(d));
  }
  for (const auto& [key, rows] : by_dest) {
    if (rows.size() == 1 && !by_source.contains(key))
      out.push_back({RowDifference::Kind::kExtra, key, KeyForPeople(plan, *rows.front()), {}});
  }
  std::sort(out.begin(), out.end(),
            [](const RowDifference& a, const RowDifference& b) { return a.key_text < b.key_text; });
  return out;
}

bool MayBeLag(const LagView& lag, std::optional<uint64_t> latest_dest_version) {
  if (!lag.checkpoint_passed) return true;
  if (!latest_dest_version || !lag.first_version_after) return false;
  return *latest_dest_version >= *lag.first_version_after;
}

std::string DescribeDifference(const RowDifference& difference) {
  switch (difference.kind) {
    case RowDifference::Kind::kMissing: return difference.key + ": missing in the destination";
    case RowDifference::Kind::kExtra: return difference.key + ": in the destination only";
    case RowDifference::Kind::kValues: break;
    case RowDifference::Kind::kDuplicate: {
      std::string out = difference.key + ": " + std::to_string(difference.copies) +
                        " live rows in the destination (one key, several ClickHouse sorting keys or shards)";
      for (size_t i = 0; i < difference.cells.size(); ++i) {
        const auto& c = difference.cells[i];
        out += (i == 0 ? ": " : "; ") + c.column + ": source " + c.source + ", destination " + c.dest;
      }
      return out;
    }
  }
  std::string out = difference.key + ":";
  for (size_t i = 0; i < difference.cells.size(); ++i) {
    const auto& c = difference.cells[i];
    out += (i == 0 ? " " : "; ") + c.column + ": source " + c.source + ", destination " + c.dest;
  }
  return out;
}

std::vector<std::vector<std::string>> ParseTabSeparated(std::string_view text) {
  std::vector<std::vector<std::string>> rows;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    rows.push_back(clickhouse::SplitTabSeparated(text.substr(start, end - start)));
    start = end + 1;
  }
  return rows;
}

}  // namespace chsync::verify
