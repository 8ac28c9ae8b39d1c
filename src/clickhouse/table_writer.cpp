#include "clickhouse/table_writer.h"

#include <algorithm>

#include "clickhouse/sql_quoting.h"
#include "clickhouse/typed_insert.h"

namespace chsync::clickhouse {
namespace {

std::vector<MappedType> WithMetadata(std::vector<MappedType> types, bool source) {
  types.push_back(VersionColumnType());
  types.push_back(IsDeletedColumnType());
  if (source) types.push_back(MappedType{.type = "String", .encoding = Encoding::kString});
  return types;
}

}  // namespace

Result<TableWriter> TableWriter::Create(const schema::TableSchema& table, const Capabilities& caps,
                                        const DdlTarget& target, const WriterOptions& options) {
  std::vector<MappedType> types;
  std::vector<std::string> names;
  for (size_t i = 0; i < table.columns.size(); ++i) {
    const schema::Column& column = table.columns[i];
    names.push_back(column.name);
    if (i < options.types.size() && options.types[i]) {
      types.push_back(*options.types[i]);
      continue;
    }
    auto mapped = MapColumn(column, caps);
    if (!mapped.ok()) return std::move(mapped.error().AddContext("table " + table.QualifiedName()));
    types.push_back(std::move(mapped).value());
  }
  names.emplace_back(kVersionColumn);
  names.emplace_back(kIsDeletedColumn);
  const bool source = !options.source_column.empty();
  if (source) names.push_back(options.source_column);
  TableWriter writer(std::move(types), table.name, std::move(names), source);
  writer.source_value_ = options.source_value;
  writer.prefix_ = InsertPrefix(target.database, table.name, writer.names_, writer.HasJson());
  if (source) {
    // A shared table's columns may be widened by another source at any moment: its INSERTs are
    // checked against the types they were encoded for (typed_insert.h).
    std::vector<std::string> encoded;
    for (const MappedType& t : WithMetadata(writer.types_, true)) encoded.push_back(t.type);
    writer.prefix_ = TypedInsertHeader(target.database, table.name, writer.names_, encoded) + writer.prefix_;
  }
  writer.qualified_ = QualifiedName(target.database, table.name);
  return writer;
}

TableWriter::TableWriter(std::vector<MappedType> types, std::string table, std::vector<std::string> names,
                         bool source)
    : types_(std::move(types)), table_(std::move(table)), names_(std::move(names)), has_source_(source) {
  encoders_.emplace_back(WithMetadata(types_, has_source_));
}

void TableWriter::RouteTo(ShardRouter router, std::string_view local_database) {
  std::vector<RowBinaryEncoder> encoders;
  for (size_t i = 0; i < router.shards(); ++i) encoders.emplace_back(WithMetadata(types_, has_source_));
  if (!encoders.empty()) encoders[0] = std::move(encoders_[0]);
  encoders_ = std::move(encoders);
  router_.emplace(std::move(router));
  local_prefix_ = InsertPrefix(local_database, table_, names_, HasJson());
}

bool TableWriter::HasJson() const {
  return std::any_of(types_.begin(), types_.end(),
                     [](const MappedType& t) { return t.encoding == Encoding::kJson; });
}

size_t TableWriter::rows() const {
  size_t n = 0;
  for (const RowBinaryEncoder& e : encoders_) n += e.rows();
  return n;
}

size_t TableWriter::batch_rows() const {
  size_t n = 0;
  for (const RowBinaryEncoder& e : encoders_) n = std::max(n, e.rows());
  return n;
}

size_t TableWriter::bytes() const {
  size_t n = 0;
  for (const RowBinaryEncoder& e : encoders_) n += e.data().size();
  return n;
}

std::string TableWriter::TakeData() {
  if (encoders_.size() == 1) return encoders_[0].TakeData();
  std::string out;
  out.reserve(bytes());
  for (RowBinaryEncoder& e : encoders_) {
    out += e.data();
    e.Clear();
  }
  return out;
}

std::vector<std::pair<size_t, std::string>> TableWriter::TakeShardData() {
  std::vector<std::pair<size_t, std::string>> out;
  for (size_t i = 0; i < encoders_.size(); ++i) {
    if (encoders_[i].rows() > 0) out.emplace_back(i, encoders_[i].TakeData());
  }
  return out;
}

Status TableWriter::Append(std::span<const Cell> values, uint64_t version, bool is_deleted) {
  if (values.size() != types_.size()) {
    return Error(ErrorKind::kInternal, "row of " + std::to_string(values.size()) + " values for " +
                                           std::to_string(types_.size()) + " columns of " + prefix_);
  }
  row_.assign(values.begin(), values.end());
  row_.emplace_back(version);
  row_.emplace_back(uint64_t{is_deleted ? 1u : 0u});
  if (has_source_) row_.emplace_back(std::string_view(source_value_));
  size_t shard = 0;
  if (router_) {
    CHSYNC_ASSIGN_OR_RETURN(shard, router_->Route(values));
  }
  return encoders_[shard].AppendRow(row_);
}

Status TableWriter::Flush(Connection& connection, const RequestOptions& request) {
  const size_t n = rows();
  if (n == 0) return Status::Ok();
  std::string joined;
  if (encoders_.size() > 1) {
    for (const RowBinaryEncoder& e : encoders_) joined += e.data();
  }
  Status s = connection.Insert(prefix_, encoders_.size() > 1 ? std::string_view(joined) : encoders_[0].data(),
                               request);
  if (!s.ok()) {
    s.error().AddContext("while inserting " + std::to_string(n) + " rows");
    return s;
  }
  for (RowBinaryEncoder& e : encoders_) e.Clear();
  return Status::Ok();
}

}  // namespace chsync::clickhouse
