#include "clickhouse/table_writer.h"

namespace chsync::clickhouse {
namespace {

std::vector<MappedType> WithMetadata(std::vector<MappedType> types) {
  types.push_back(VersionColumnType());
  types.push_back(IsDeletedColumnType());
  return types;
}

}  // namespace

Result<TableWriter> TableWriter::Create(const schema::TableSchema& table, const Capabilities& caps,
                                        const DdlTarget& target) {
  std::vector<MappedType> types;
  std::vector<std::string> names;
  for (const schema::Column& column : table.columns) {
    auto mapped = MapColumn(column, caps);
    if (!mapped.ok()) return std::move(mapped.error().AddContext("table " + table.QualifiedName()));
    types.push_back(std::move(mapped).value());
    names.push_back(column.name);
  }
  names.emplace_back(kVersionColumn);
  names.emplace_back(kIsDeletedColumn);
  return TableWriter(std::move(types), InsertPrefix(target.database, table.name, names));
}

TableWriter::TableWriter(std::vector<MappedType> types, std::string prefix)
    : types_(std::move(types)), prefix_(std::move(prefix)), encoder_(WithMetadata(types_)) {}

Status TableWriter::Append(std::span<const Cell> values, uint64_t version, bool is_deleted) {
  if (values.size() != types_.size()) {
    return Error(ErrorKind::kInternal, "row of " + std::to_string(values.size()) + " values for " +
                                           std::to_string(types_.size()) + " columns of " + prefix_);
  }
  row_.assign(values.begin(), values.end());
  row_.emplace_back(version);
  row_.emplace_back(uint64_t{is_deleted ? 1u : 0u});
  return encoder_.AppendRow(row_);
}

Status TableWriter::Flush(Connection& connection, const RequestOptions& request) {
  if (encoder_.rows() == 0) return Status::Ok();
  Status s = connection.Insert(prefix_, encoder_.data(), request);
  if (!s.ok()) {
    s.error().AddContext("while inserting " + std::to_string(encoder_.rows()) + " rows");
    return s;
  }
  encoder_.Clear();
  return Status::Ok();
}

}  // namespace chsync::clickhouse
