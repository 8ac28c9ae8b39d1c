// RowBinary INSERTs checked against the column types they were encoded for (typed_insert.h).

#include "clickhouse/typed_insert.h"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <random>

#include "clickhouse/sql_quoting.h"
#include "common/crash_point.h"
#include "common/log.h"

namespace chsync::clickhouse {
namespace {

constexpr std::string_view kMark = "/* chsync typed insert\n";
constexpr std::string_view kEnd = "*/ ";

/// A field of the header: '%', '*', tab and line break written as %XX, so that no name or type
/// ends the comment or a line early.
std::string Escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '%' || c == '*' || c == '\t' || c == '\n') {
      out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out;
}

std::optional<std::string> Unescape(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    int value = 0;
    for (size_t k = 1; k <= 2; ++k) {
      const char h = text[i + k];
      value *= 16;
      if (h >= '0' && h <= '9') {
        value += h - '0';
      } else if (h >= 'A' && h <= 'F') {
        value += h - 'A' + 10;
      } else {
        return std::nullopt;
      }
    }
    out += static_cast<char>(value);
    i += 2;
  }
  return out;
}

/// The table's columns and types now, in its order.
Result<std::vector<std::pair<std::string, std::string>>> StoredTypes(Connection& connection,
                                                                     const TypedInsert& insert) {
  CHSYNC_ASSIGN_OR_RETURN(
      std::string text,
      connection.Query("SELECT name, type FROM system.columns WHERE database = " +
                           QuoteString(insert.database) + " AND table = " + QuoteString(insert.table),
                       "TabSeparatedRaw"));
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + start, end - start);
    start = end + 1;
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos) continue;
    out.emplace_back(std::string(line.substr(0, tab)), std::string(line.substr(tab + 1)));
  }
  return out;
}

/// The first column whose type is not the encoded one ("" when all are): "`d` Decimal(10, 2) is
/// now Decimal(20, 4)".
std::string Difference(const TypedInsert& insert,
                       const std::vector<std::pair<std::string, std::string>>& stored) {
  for (const auto& [name, type] : insert.columns) {
    const std::string* now = nullptr;
    for (const auto& column : stored) {
      if (column.first == name) now = &column.second;
    }
    if (now == nullptr) return fmt::format("{} is no longer a column", QuoteIdentifier(name));
    if (*now != type) return fmt::format("{} was {} and is now {}", QuoteIdentifier(name), type, *now);
  }
  return "";
}

/// Sends the rows into a Memory table of the encoded types, then INSERT … SELECT into the table:
/// ClickHouse converts each value to the column's type now.
Status InsertStaged(Connection& connection, const TypedInsert& insert, std::string_view data,
                    const RequestOptions& request) {
  const std::string table = QualifiedName(insert.database, insert.table);
  const std::string stage_name = fmt::format("{}__chsync_staged_{:016x}", insert.table,
                                             std::random_device{}() * 4294967296ULL + std::random_device{}());
  const std::string stage = QualifiedName(insert.database, stage_name);
  std::string columns;
  std::string names;
  for (const auto& [name, type] : insert.columns) {
    columns += (columns.empty() ? "" : ", ") + QuoteIdentifier(name) + " " + type;
    names += (names.empty() ? "" : ", ") + QuoteIdentifier(name);
  }
  std::string statement = insert.statement;
  const size_t at = statement.find(table);
  if (at == std::string::npos)
    return Error(ErrorKind::kInternal, "the INSERT does not name " + table + ": " + statement);
  statement.replace(at, table.size(), stage);
  CHSYNC_RETURN_IF_ERROR(connection.Execute("CREATE TABLE " + stage + " (" + columns + ") ENGINE = Memory"));
  Status s = connection.Insert(statement, data, request);
  if (s.ok()) {
    s = connection.Execute("INSERT INTO " + table + " (" + names + ") SELECT " + names + " FROM " + stage,
                           request);
  }
  Status dropped = connection.Execute("DROP TABLE IF EXISTS " + stage);
  if (!dropped.ok()) log::Warn("dropping the staging table {}: {}", stage, dropped.error().message());
  return s;
}

}  // namespace

std::string TypedInsertHeader(std::string_view database, std::string_view table,
                              const std::vector<std::string>& names, const std::vector<std::string>& types) {
  std::string header(kMark);
  header += Escape(database) + "\t" + Escape(table) + "\n";
  for (size_t i = 0; i < names.size() && i < types.size(); ++i) {
    header += Escape(names[i]) + "\t" + Escape(types[i]) + "\n";
  }
  header += kEnd;
  return header;
}

std::optional<TypedInsert> ParseTypedInsert(std::string_view prefix) {
  if (!prefix.starts_with(kMark)) return std::nullopt;
  const size_t end = prefix.find(kEnd);
  if (end == std::string_view::npos) return std::nullopt;
  std::string_view body = prefix.substr(kMark.size(), end - kMark.size());
  TypedInsert out;
  out.statement = std::string(prefix.substr(end + kEnd.size()));
  bool first = true;
  while (!body.empty()) {
    const size_t nl = body.find('\n');
    if (nl == std::string_view::npos) return std::nullopt;
    std::string_view line = body.substr(0, nl);
    body.remove_prefix(nl + 1);
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos) return std::nullopt;
    std::optional<std::string> a = Unescape(line.substr(0, tab));
    std::optional<std::string> b = Unescape(line.substr(tab + 1));
    if (!a || !b) return std::nullopt;
    if (first) {
      out.database = std::move(*a);
      out.table = std::move(*b);
      first = false;
    } else {
      out.columns.emplace_back(std::move(*a), std::move(*b));
    }
  }
  if (first) return std::nullopt;
  return out;
}

TypeGate& TypeGate::Of(std::string_view database, std::string_view table) {
  // One gate per table for the life of the process: as many as the shared tables written.
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<TypeGate>, std::less<>> gates;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<TypeGate>& gate = gates[QualifiedName(database, table)];
  if (!gate) gate = std::make_unique<TypeGate>();
  return *gate;
}

TypeGate::Held TypeGate::Insert(std::string_view database, std::string_view table) {
  TypeGate& gate = Of(database, table);
  std::unique_lock<std::mutex> lock(gate.mutex_);
  gate.turn_.wait(lock, [&] { return !gate.changing_ && gate.changes_waiting_ == 0; });
  ++gate.inserters_;
  return Held(&gate, false);
}

TypeGate::Held TypeGate::Change(std::string_view database, std::string_view table) {
  TypeGate& gate = Of(database, table);
  std::unique_lock<std::mutex> lock(gate.mutex_);
  ++gate.changes_waiting_;
  if (gate.changing_ || gate.inserters_ > 0) {
    log::Info("{}: its column types change once the {} INSERT(s) into it that checked them end",
              QualifiedName(database, table), gate.inserters_);
  }
  gate.turn_.wait(lock, [&] { return !gate.changing_ && gate.inserters_ == 0; });
  --gate.changes_waiting_;
  gate.changing_ = true;
  return Held(&gate, true);
}

int TypeGate::ChangesWaiting(std::string_view database, std::string_view table) {
  TypeGate& gate = Of(database, table);
  std::lock_guard<std::mutex> lock(gate.mutex_);
  return gate.changes_waiting_;
}

TypeGate::Held::~Held() {
  if (gate_ == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(gate_->mutex_);
    if (change_) {
      gate_->changing_ = false;
    } else {
      --gate_->inserters_;
    }
  }
  gate_->turn_.notify_all();
}

Status InsertTyped(Connection& connection, const TypedInsert& insert, std::string_view data,
                   const RequestOptions& request) {
  const std::string table = QualifiedName(insert.database, insert.table);
  const TypeGate::Held inserting = TypeGate::Insert(insert.database, insert.table);
  CHSYNC_ASSIGN_OR_RETURN(auto before, StoredTypes(connection, insert));
  std::string differs = Difference(insert, before);
  if (differs.empty()) {
    DelayPoint("typed_insert.checked");  // tests: a change of the table's types comes now
    Status sent = connection.Insert(insert.statement, data, request);
    // Another writer may have altered the table between the check and the INSERT: then ClickHouse
    // read the rows as the new types, and refused them (most widenings change a value's width) or
    // took other values. They are sent again through the staging table; at equal versions the
    // later rows are the ones ReplacingMergeTree keeps.
    auto after = StoredTypes(connection, insert);
    if (!after.ok()) return sent.ok() ? Status(std::move(after).error()) : sent;
    differs = Difference(insert, *after);
    if (differs.empty()) return sent;
    log::Warn("{} changed during an INSERT into it ({}): its rows are sent again, converted{}", table,
              differs,
              sent.ok() ? "" : " (ClickHouse refused them as they were: " + sent.error().message() + ")");
  } else {
    log::Info("{}: {} since these rows were encoded; they are converted by ClickHouse (INSERT … SELECT)",
              table, differs);
  }
  Status staged = InsertStaged(connection, insert, data, request);
  if (!staged.ok()) staged.error().AddContext(fmt::format("inserting into {} ({})", table, differs));
  return staged;
}

}  // namespace chsync::clickhouse
