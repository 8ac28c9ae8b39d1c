#include <string>

#include "binlog/event_parsers.h"

namespace chsync::binlog::internal {
namespace {

enum MetadataKind : uint8_t {
  kSignedness = 1,
  kDefaultCharset = 2,
  kColumnCharset = 3,
  kColumnName = 4,
  kSetStrValue = 5,
  kEnumStrValue = 6,
  kGeometryType = 7,
  kSimplePrimaryKey = 8,
  kPrimaryKeyWithPrefix = 9,
  kEnumAndSetDefaultCharset = 10,
  kEnumAndSetColumnCharset = 11,
  kColumnVisibility = 12,
  kVectorDimensionality = 13,
};

Status ReadColumnMetadata(ByteReader& m, ColumnInfo& c) {
  int size = ColumnMetadataSize(c.type);
  if (size < 0) {
    return Error(ErrorKind::kUnsupported, "column type " + std::to_string(static_cast<int>(c.type)) +
                                              " has unknown metadata, at offset " +
                                              std::to_string(m.offset()));
  }
  c.real_type = c.type;
  // TIMESTAMP/TIME/DATETIME (7/11/12) have no metadata even when they are MariaDB 5.3 hires
  // TIME(n)/DATETIME(n)/TIMESTAMP(n) (tables created with mysql56_temporal_format=OFF, checked
  // against MariaDB 10.11): the precision must come from the schema (binlog/hires_temporal.h).
  if (size == 0) {
    if (c.type == ColumnType::kDate) c.real_type = ColumnType::kDate;
    return Status::Ok();
  }
  CHSYNC_RETURN_IF_ERROR(m.Need(static_cast<size_t>(size), "column metadata"));
  const uint8_t* p = m.current();
  CHSYNC_RETURN_IF_ERROR(m.Skip(static_cast<size_t>(size)));
  switch (c.type) {
    case ColumnType::kVarchar:
    case ColumnType::kVarString:
    case ColumnType::kMariaVarcharCompressed:
      c.metadata = static_cast<uint16_t>(p[0] | (p[1] << 8));
      c.max_length = c.metadata;
      break;
    case ColumnType::kBit: c.metadata = static_cast<uint16_t>(p[0] | (p[1] << 8)); break;
    case ColumnType::kNewDecimal:
    case ColumnType::kEnum:
    case ColumnType::kSet: c.metadata = static_cast<uint16_t>((p[0] << 8) | p[1]); break;
    case ColumnType::kString: {
      c.metadata = static_cast<uint16_t>((p[0] << 8) | p[1]);
      uint8_t b0 = p[0], b1 = p[1];
      if ((b0 & 0x30) != 0x30) {
        c.max_length = b1 | (uint32_t{static_cast<uint8_t>((b0 & 0x30) ^ 0x30)} << 4);
        c.real_type = static_cast<ColumnType>(b0 | 0x30);
      } else {
        c.max_length = b1;
        c.real_type = static_cast<ColumnType>(b0);
      }
      if (c.real_type != ColumnType::kEnum && c.real_type != ColumnType::kSet)
        c.real_type = ColumnType::kString;
      break;
    }
    default: c.metadata = p[0]; break;
  }
  return Status::Ok();
}

template <typename Pred>
std::vector<ColumnInfo*> Select(TableMap& t, Pred pred) {
  std::vector<ColumnInfo*> out;
  for (auto& c : t.columns) {
    if (pred(c)) out.push_back(&c);
  }
  return out;
}

Status ReadCharsets(ByteReader& v, std::vector<ColumnInfo*> cols, bool with_default,
                    std::optional<uint32_t>& default_out) {
  if (with_default) {
    CHSYNC_ASSIGN_OR_RETURN(uint64_t def, v.ReadPackedInt("default collation"));
    default_out = static_cast<uint32_t>(def);
    for (auto* c : cols) c->charset = static_cast<uint32_t>(def);
    while (!v.empty()) {
      CHSYNC_ASSIGN_OR_RETURN(uint64_t index, v.ReadPackedInt("charset column index"));
      CHSYNC_ASSIGN_OR_RETURN(uint64_t coll, v.ReadPackedInt("column collation"));
      if (index >= cols.size())
        return v.Corrupt("charset column index " + std::to_string(index) + " out of range");
      cols[index]->charset = static_cast<uint32_t>(coll);
    }
    return Status::Ok();
  }
  for (auto* c : cols) {
    if (v.empty()) break;
    CHSYNC_ASSIGN_OR_RETURN(uint64_t coll, v.ReadPackedInt("column collation"));
    c->charset = static_cast<uint32_t>(coll);
  }
  return Status::Ok();
}

Status ReadStringLists(ByteReader& v, const std::vector<ColumnInfo*>& cols) {
  for (auto* c : cols) {
    if (v.empty()) break;
    CHSYNC_ASSIGN_OR_RETURN(uint64_t count, v.ReadPackedInt("value count"));
    if (count > v.remaining())
      return v.Corrupt("ENUM/SET value count " + std::to_string(count) + " past the end");
    c->enum_values.clear();
    c->enum_values.reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
      CHSYNC_ASSIGN_OR_RETURN(uint64_t len, v.ReadPackedInt("value length"));
      CHSYNC_ASSIGN_OR_RETURN(std::string_view s, v.ReadBytes(len, "ENUM/SET value"));
      c->enum_values.emplace_back(s);
    }
  }
  return Status::Ok();
}

Status ReadOptionalMetadata(ByteReader& r, TableMap& t, bool mariadb) {
  auto is_numeric = [mariadb](const ColumnInfo& c) {
    return IsNumericType(c.real_type) || (mariadb && c.real_type == ColumnType::kYear);
  };
  // MariaDB's GEOMETRY is a BLOB underneath and has a (binary) collation in the charset lists.
  auto is_char = [mariadb](const ColumnInfo& c) {
    return IsCharacterType(c.real_type) || (mariadb && c.real_type == ColumnType::kGeometry);
  };
  auto is_enum_set = [](const ColumnInfo& c) { return IsEnumOrSetType(c.real_type); };
  while (!r.empty()) {
    CHSYNC_ASSIGN_OR_RETURN(uint8_t kind, r.ReadU8("optional metadata type"));
    CHSYNC_ASSIGN_OR_RETURN(uint64_t len, r.ReadPackedInt("optional metadata length"));
    CHSYNC_ASSIGN_OR_RETURN(ByteReader v, r.Sub(len, "optional metadata field"));
    t.metadata_kinds.push_back(kind);
    switch (kind) {
      case kSignedness: {
        size_t bit = 0;
        for (auto* c : Select(t, is_numeric)) {
          if (bit / 8 >= v.size()) return v.Corrupt("SIGNEDNESS bitmap shorter than the numeric columns");
          c->is_unsigned = (v.data()[bit / 8] & (0x80 >> (bit % 8))) != 0;
          ++bit;
        }
        break;
      }
      case kDefaultCharset:
        CHSYNC_RETURN_IF_ERROR(ReadCharsets(v, Select(t, is_char), true, t.default_charset));
        break;
      case kColumnCharset: {
        std::optional<uint32_t> unused;
        CHSYNC_RETURN_IF_ERROR(ReadCharsets(v, Select(t, is_char), false, unused));
        break;
      }
      case kEnumAndSetDefaultCharset:
        CHSYNC_RETURN_IF_ERROR(ReadCharsets(v, Select(t, is_enum_set), true, t.enum_set_default_charset));
        break;
      case kEnumAndSetColumnCharset: {
        std::optional<uint32_t> unused;
        CHSYNC_RETURN_IF_ERROR(ReadCharsets(v, Select(t, is_enum_set), false, unused));
        break;
      }
      case kColumnName:
        for (auto& c : t.columns) {
          if (v.empty()) break;
          CHSYNC_ASSIGN_OR_RETURN(uint64_t n, v.ReadPackedInt("column name length"));
          CHSYNC_ASSIGN_OR_RETURN(std::string_view s, v.ReadBytes(n, "column name"));
          c.name.assign(s);
        }
        break;
      case kSetStrValue:
        CHSYNC_RETURN_IF_ERROR(ReadStringLists(
            v, Select(t, [](const ColumnInfo& c) { return c.real_type == ColumnType::kSet; })));
        break;
      case kEnumStrValue:
        CHSYNC_RETURN_IF_ERROR(ReadStringLists(
            v, Select(t, [](const ColumnInfo& c) { return c.real_type == ColumnType::kEnum; })));
        break;
      case kGeometryType:
        for (auto* c : Select(t, [](const ColumnInfo& c) { return c.real_type == ColumnType::kGeometry; })) {
          if (v.empty()) break;
          CHSYNC_ASSIGN_OR_RETURN(uint64_t g, v.ReadPackedInt("geometry type"));
          c->geometry_type = static_cast<uint32_t>(g);
        }
        break;
      case kSimplePrimaryKey:
        while (!v.empty()) {
          CHSYNC_ASSIGN_OR_RETURN(uint64_t index, v.ReadPackedInt("primary key column"));
          if (index >= t.columns.size())
            return v.Corrupt("primary key column " + std::to_string(index) + " out of range");
          t.primary_key.push_back(static_cast<uint32_t>(index));
          t.primary_key_prefix.push_back(0);
        }
        break;
      case kPrimaryKeyWithPrefix:
        while (!v.empty()) {
          CHSYNC_ASSIGN_OR_RETURN(uint64_t index, v.ReadPackedInt("primary key column"));
          CHSYNC_ASSIGN_OR_RETURN(uint64_t prefix, v.ReadPackedInt("primary key prefix"));
          if (index >= t.columns.size())
            return v.Corrupt("primary key column " + std::to_string(index) + " out of range");
          t.primary_key.push_back(static_cast<uint32_t>(index));
          t.primary_key_prefix.push_back(static_cast<uint32_t>(prefix));
        }
        break;
      case kColumnVisibility: {
        size_t bit = 0;
        for (auto& c : t.columns) {
          if (bit / 8 >= v.size()) return v.Corrupt("COLUMN_VISIBILITY bitmap shorter than the columns");
          c.visible = (v.data()[bit / 8] & (0x80 >> (bit % 8))) != 0;
          ++bit;
        }
        break;
      }
      case kVectorDimensionality:
        for (auto* c : Select(t, [](const ColumnInfo& c) { return c.real_type == ColumnType::kVector; })) {
          if (v.empty()) break;
          CHSYNC_ASSIGN_OR_RETURN(uint64_t d, v.ReadPackedInt("vector dimensionality"));
          c->vector_dimensions = static_cast<uint32_t>(d);
        }
        break;
      default: break;  // unknown kinds are skipped by their length
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::shared_ptr<TableMap>> ParseTableMap(ByteReader r, uint8_t post_header_len, bool mariadb,
                                                const std::function<bool(const TableMap&)>* wanted) {
  auto t = std::make_shared<TableMap>();
  if (post_header_len != 6 && post_header_len != 8) {
    return r.Corrupt("TABLE_MAP post-header length " + std::to_string(post_header_len) +
                     " is neither 6 nor 8");
  }
  CHSYNC_ASSIGN_OR_RETURN(t->table_id, r.ReadUintLE(post_header_len == 6 ? 4 : 6, "table id"));
  CHSYNC_ASSIGN_OR_RETURN(t->flags, r.ReadU16("table map flags"));
  CHSYNC_ASSIGN_OR_RETURN(uint8_t db_len, r.ReadU8("database name length"));
  CHSYNC_ASSIGN_OR_RETURN(std::string_view db, r.ReadBytes(db_len, "database name"));
  CHSYNC_RETURN_IF_ERROR(r.Skip(1, "database name terminator"));
  CHSYNC_ASSIGN_OR_RETURN(uint8_t table_len, r.ReadU8("table name length"));
  CHSYNC_ASSIGN_OR_RETURN(std::string_view table, r.ReadBytes(table_len, "table name"));
  CHSYNC_RETURN_IF_ERROR(r.Skip(1, "table name terminator"));
  t->database.assign(db);
  t->table.assign(table);
  CHSYNC_ASSIGN_OR_RETURN(uint64_t count, r.ReadPackedInt("column count"));
  if (count > r.remaining()) {
    return r.Corrupt("column count " + std::to_string(count) + " exceeds the bytes left in the TABLE_MAP");
  }
  CHSYNC_ASSIGN_OR_RETURN(std::string_view types, r.ReadBytes(count, "column types"));
  t->columns.resize(count);
  for (size_t i = 0; i < count; ++i)
    t->columns[i].type = static_cast<ColumnType>(static_cast<uint8_t>(types[i]));
  if (r.empty()) {
    // MySQL 5.1.15-5.1.17 (pre-GA row format) wrote no metadata and no null bitmap.
    for (auto& c : t->columns) c.real_type = c.type;
    return t;
  }
  CHSYNC_ASSIGN_OR_RETURN(uint64_t meta_len, r.ReadPackedInt("metadata length"));
  CHSYNC_ASSIGN_OR_RETURN(ByteReader m, r.Sub(meta_len, "column metadata block"));
  for (size_t i = 0; i < count; ++i) {
    Status s = ReadColumnMetadata(m, t->columns[i]);
    if (!s.ok()) {
      return std::move(s).error().AddContext("column " + std::to_string(i + 1) + " of " + t->database + "." +
                                             t->table);
    }
  }
  CHSYNC_ASSIGN_OR_RETURN(std::string_view nulls, r.ReadBytes((count + 7) / 8, "null bitmap"));
  for (size_t i = 0; i < count; ++i) {
    t->columns[i].nullable = (static_cast<uint8_t>(nulls[i / 8]) >> (i % 8)) & 1;
  }
  // A table whose rows will not be decoded needs no optional metadata (nor can a flaw in it matter).
  if (wanted != nullptr && *wanted && !(*wanted)(*t)) return t;
  Status s = ReadOptionalMetadata(r, *t, mariadb);
  if (!s.ok()) return std::move(s).error().AddContext("optional metadata of " + t->database + "." + t->table);
  return t;
}

}  // namespace chsync::binlog::internal
