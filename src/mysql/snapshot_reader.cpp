#include "mysql/snapshot_reader.h"

#include <mariadb/mysql.h>

#include <nlohmann/json.hpp>

#include "common/civil_date.h"
#include "common/hex.h"

#include <cstdio>
#include <cstring>

namespace chsync::mysql {
namespace {

Result<std::string> HexDecode(std::string_view hex) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (hex.size() % 2 != 0) return Error(ErrorKind::kCorrupt, "odd-length hex text in a snapshot key");
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return Error(ErrorKind::kCorrupt, "bad hex digit in a snapshot key");
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

bool IsIntegerField(enum_field_types t) {
  return t == MYSQL_TYPE_TINY || t == MYSQL_TYPE_SHORT || t == MYSQL_TYPE_INT24 || t == MYSQL_TYPE_LONG ||
         t == MYSQL_TYPE_LONGLONG;
}

bool IsTemporalField(enum_field_types t) {
  return t == MYSQL_TYPE_DATE || t == MYSQL_TYPE_NEWDATE || t == MYSQL_TYPE_DATETIME ||
         t == MYSQL_TYPE_TIMESTAMP || t == MYSQL_TYPE_TIME;
}

std::string TemporalText(const MYSQL_TIME& t) {
  char buf[64];
  if (t.time_type == MYSQL_TIMESTAMP_DATE) {
    std::snprintf(buf, sizeof buf, "%04u-%02u-%02u", t.year, t.month, t.day);
  } else if (t.time_type == MYSQL_TIMESTAMP_TIME) {
    std::snprintf(buf, sizeof buf, "%s%u:%02u:%02u.%06lu", t.neg ? "-" : "", t.day * 24 + t.hour, t.minute,
                  t.second, t.second_part);
  } else {
    std::snprintf(buf, sizeof buf, "%04u-%02u-%02u %02u:%02u:%02u.%06lu", t.year, t.month, t.day, t.hour,
                  t.minute, t.second, t.second_part);
  }
  return buf;
}

}  // namespace

std::string KeyToJson(const Key& key) {
  nlohmann::json j = nlohmann::json::array();
  for (const KeyValue& v : key) {
    switch (v.kind) {
      case KeyValue::Kind::kInt: j.push_back({{"i", v.i}}); break;
      case KeyValue::Kind::kUint: j.push_back({{"u", v.u}}); break;
      case KeyValue::Kind::kDouble: j.push_back({{"d", v.d}}); break;
      case KeyValue::Kind::kText: j.push_back({{"x", Hex(v.text)}}); break;
      case KeyValue::Kind::kTemporal: j.push_back({{"t", v.text}}); break;
    }
  }
  return j.dump();
}

Result<Key> KeyFromJson(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_array())
    return Error(ErrorKind::kCorrupt, "snapshot key is not a JSON array");
  Key key;
  try {
    for (const auto& item : j) {
      if (!item.is_object() || item.size() != 1)
        return Error(ErrorKind::kCorrupt, "malformed snapshot key element");
      KeyValue v;
      const auto& [tag, value] = *item.items().begin();
      if (tag == "i") {
        v.kind = KeyValue::Kind::kInt;
        v.i = value.get<int64_t>();
      } else if (tag == "u") {
        v.kind = KeyValue::Kind::kUint;
        v.u = value.get<uint64_t>();
      } else if (tag == "d") {
        v.kind = KeyValue::Kind::kDouble;
        v.d = value.get<double>();
      } else if (tag == "x") {
        v.kind = KeyValue::Kind::kText;
        CHSYNC_ASSIGN_OR_RETURN(v.text, HexDecode(value.get<std::string>()));
      } else if (tag == "t") {
        v.kind = KeyValue::Kind::kTemporal;
        v.text = value.get<std::string>();
      } else {
        return Error(ErrorKind::kCorrupt, "unknown snapshot key element '" + tag + "'");
      }
      key.push_back(std::move(v));
    }
  } catch (const nlohmann::json::exception& e) {
    return Error(ErrorKind::kCorrupt, std::string("malformed snapshot key: ") + e.what());
  }
  return key;
}

struct SnapshotReader::Impl {
  Connection* conn = nullptr;
  SnapshotQuery query;
  std::vector<size_t> key_index;  // position of each key column in query.columns
  MYSQL_STMT* first = nullptr;
  MYSQL_STMT* next = nullptr;
  std::string table_name;  // `db`.`t` for messages

  // Result buffers, one per column.
  struct Column {
    MYSQL_BIND bind;
    unsigned long length = 0;
    my_bool is_null = 0;
    my_bool error = 0;
    int64_t integer = 0;
    double dbl = 0;
    float flt = 0;
    MYSQL_TIME time{};
    std::string buffer;      // strings, decimals, bits (bound)
    std::string long_value;  // a value longer than `buffer`, fetched separately
  };
  std::vector<Column> columns;
  std::vector<binlog::Value> row;

  ~Impl() {
    if (first != nullptr) mysql_stmt_close(first);
    if (next != nullptr) mysql_stmt_close(next);
  }

  Error StmtError(MYSQL_STMT* stmt, const std::string& what) const {
    unsigned code = mysql_stmt_errno(stmt);
    std::string message = mysql_stmt_error(stmt);
    if (code == 0) {
      // A fetch that failed because the connection died leaves the statement without an error:
      // the connection has it (or nobody does, which only a lost connection explains).
      code = mysql_errno(conn->handle());
      message = mysql_error(conn->handle());
      if (code == 0) {
        code = 2013;
        message = "Lost connection to server during query";
      }
    }
    ErrorKind kind = code >= 2000 && code < 3000 ? ErrorKind::kNetwork : ErrorKind::kServer;
    return Error(kind,
                 what + " " + table_name + " on " + conn->options().Address() + ": " + message + " (error " +
                     std::to_string(code) + ")",
                 static_cast<int>(code));
  }
};

SnapshotReader::SnapshotReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SnapshotReader::~SnapshotReader() = default;

Result<std::unique_ptr<SnapshotReader>> SnapshotReader::Open(Connection& conn, SnapshotQuery query) {
  auto impl = std::make_unique<Impl>();
  impl->conn = &conn;
  impl->table_name = QuoteIdentifier(query.database) + "." + QuoteIdentifier(query.table);
  if (query.columns.empty())
    return Error(ErrorKind::kInternal, "snapshot of " + impl->table_name + " without columns");
  if (query.reads.empty()) query.reads.assign(query.columns.size(), SnapshotQuery::Read::kValue);
  if (query.reads.size() != query.columns.size()) {
    return Error(ErrorKind::kInternal,
                 "snapshot of " + impl->table_name + ": reads and columns differ in size");
  }
  for (const std::string& k : query.key_columns) {
    size_t i = 0;
    while (i < query.columns.size() && query.columns[i] != k) ++i;
    if (i == query.columns.size()) {
      return Error(ErrorKind::kInternal,
                   "snapshot of " + impl->table_name + ": key column " + k + " not selected");
    }
    impl->key_index.push_back(i);
  }
  // TIMESTAMP values in UTC, like the binlog's.
  CHSYNC_RETURN_IF_ERROR(conn.Execute("SET time_zone = '+00:00'"));

  std::string select = "SELECT ";
  for (size_t i = 0; i < query.columns.size(); ++i) {
    if (i > 0) select += ", ";
    std::string col = QuoteIdentifier(query.columns[i]);
    switch (query.reads[i]) {
      case SnapshotQuery::Read::kValue: select += col; break;
      case SnapshotQuery::Read::kEnumIndex:
      case SnapshotQuery::Read::kSetBits:
        select.append("(").append(col).append(" + 0) AS ").append(col);
        break;
      case SnapshotQuery::Read::kBytes16:
        select.append("CAST(").append(col).append(" AS BINARY(16)) AS ").append(col);
        break;
      case SnapshotQuery::Read::kBytes4:
        select.append("CAST(").append(col).append(" AS BINARY(4)) AS ").append(col);
        break;
    }
  }
  select += " FROM " + impl->table_name;
  std::string order;
  for (size_t i = 0; i < query.key_columns.size(); ++i) {
    // Qualified: a bare name would mean the select list's alias, which for reads other than kValue
    // is an expression (UUID bytes sort differently from UUIDs) and not the index.
    order += (i == 0 ? " ORDER BY " : ", ") + impl->table_name + "." + QuoteIdentifier(query.key_columns[i]);
  }
  std::string limit = query.key_columns.empty() ? "" : " LIMIT " + std::to_string(query.chunk_rows);
  // (k0 > ?) OR (k0 = ? AND k1 > ?) OR …: the expanded row comparison, which every server version
  // turns into index ranges.
  // Keys read as stored bytes (UUID, INET) go back as hex text turned into a binary string, which
  // the server takes as the stored form (a utf8mb4 string would be parsed as text).
  auto placeholder = [&](size_t key) {
    SnapshotQuery::Read read = query.reads[impl->key_index[key]];
    return read == SnapshotQuery::Read::kBytes16 || read == SnapshotQuery::Read::kBytes4 ? "UNHEX(?)" : "?";
  };
  std::string where;
  for (size_t i = 0; i < query.key_columns.size(); ++i) {
    where += i == 0 ? " WHERE (" : " OR (";
    for (size_t j = 0; j < i; ++j) {
      where += QuoteIdentifier(query.key_columns[j]) + " = " + placeholder(j) + " AND ";
    }
    where += QuoteIdentifier(query.key_columns[i]) + " > " + placeholder(i) + ")";
  }

  auto prepare = [&](const std::string& sql, MYSQL_STMT** out) -> Status {
    *out = mysql_stmt_init(conn.handle());
    if (*out == nullptr) return Error(ErrorKind::kInternal, "mysql_stmt_init: out of memory");
    if (mysql_stmt_prepare(*out, sql.data(), sql.size()) != 0)
      return impl->StmtError(*out, "cannot prepare the snapshot of");
    return Status::Ok();
  };
  // The row filter, parenthesised, so that its OR binds inside it.
  const std::string filter = query.where.empty() ? "" : "(" + query.where + ")";
  const std::string first_where = filter.empty() ? "" : " WHERE " + filter;
  if (!filter.empty() && !where.empty()) where = " WHERE (" + where.substr(7) + ") AND " + filter;
  CHSYNC_RETURN_IF_ERROR(prepare(select + first_where + order + limit, &impl->first));
  if (!query.key_columns.empty())
    CHSYNC_RETURN_IF_ERROR(prepare(select + where + order + limit, &impl->next));
  impl->query = std::move(query);
  return std::unique_ptr<SnapshotReader>(new SnapshotReader(std::move(impl)));
}

Result<SnapshotReader::Chunk> SnapshotReader::ReadChunk(const Key& after, const RowCallback& on_row) {
  Impl& s = *impl_;
  const bool resume = !after.empty();
  if (resume && after.size() != s.key_index.size()) {
    return Error(ErrorKind::kCorrupt, "snapshot key of " + s.table_name + " has " +
                                          std::to_string(after.size()) + " values, the table's key " +
                                          std::to_string(s.key_index.size()));
  }
  MYSQL_STMT* stmt = resume ? s.next : s.first;

  // Parameters: for key column i, the expansion uses key values 0..i.
  std::vector<MYSQL_BIND> params;
  std::vector<KeyValue> param_values;
  if (resume) {
    for (size_t i = 0; i < after.size(); ++i) {
      for (size_t j = 0; j <= i; ++j) {
        param_values.push_back(after[j]);
        // Stored-bytes keys are compared through UNHEX(?) (see Open).
        SnapshotQuery::Read read = s.query.reads[s.key_index[j]];
        if (read == SnapshotQuery::Read::kBytes16 || read == SnapshotQuery::Read::kBytes4)
          param_values.back().text = Hex(after[j].text);
      }
    }
    params.resize(param_values.size());
    for (size_t p = 0; p < param_values.size(); ++p) {
      MYSQL_BIND& b = params[p];
      std::memset(&b, 0, sizeof b);
      KeyValue& v = param_values[p];
      switch (v.kind) {
        case KeyValue::Kind::kInt:
          b.buffer_type = MYSQL_TYPE_LONGLONG;
          b.buffer = &v.i;
          break;
        case KeyValue::Kind::kUint:
          b.buffer_type = MYSQL_TYPE_LONGLONG;
          b.buffer = &v.u;
          b.is_unsigned = 1;
          break;
        case KeyValue::Kind::kDouble:
          b.buffer_type = MYSQL_TYPE_DOUBLE;
          b.buffer = &v.d;
          break;
        case KeyValue::Kind::kText:
        case KeyValue::Kind::kTemporal:
          b.buffer_type = MYSQL_TYPE_STRING;
          b.buffer = v.text.data();
          b.buffer_length = v.text.size();
          b.length_value = v.text.size();
          break;
      }
    }
    if (mysql_stmt_bind_param(stmt, params.data()) != 0) return s.StmtError(stmt, "cannot bind the key for");
  }
  if (mysql_stmt_execute(stmt) != 0) return s.StmtError(stmt, "cannot read");

  MYSQL_RES* meta = mysql_stmt_result_metadata(stmt);
  if (meta == nullptr) return s.StmtError(stmt, "no result metadata for");
  const unsigned n = mysql_num_fields(meta);
  MYSQL_FIELD* fields = mysql_fetch_fields(meta);
  s.columns.assign(n, Impl::Column{});
  std::vector<MYSQL_BIND> binds(n);
  for (unsigned i = 0; i < n; ++i) {
    Impl::Column& c = s.columns[i];
    MYSQL_BIND& b = binds[i];
    std::memset(&b, 0, sizeof b);
    b.length = &c.length;
    b.is_null = &c.is_null;
    b.error = &c.error;
    enum_field_types t = fields[i].type;
    if (IsIntegerField(t) || t == MYSQL_TYPE_YEAR) {
      b.buffer_type = MYSQL_TYPE_LONGLONG;
      b.buffer = &c.integer;
      b.is_unsigned = (fields[i].flags & UNSIGNED_FLAG) != 0;
    } else if (t == MYSQL_TYPE_FLOAT) {
      b.buffer_type = MYSQL_TYPE_FLOAT;
      b.buffer = &c.flt;
    } else if (t == MYSQL_TYPE_DOUBLE) {
      b.buffer_type = MYSQL_TYPE_DOUBLE;
      b.buffer = &c.dbl;
    } else if (IsTemporalField(t)) {
      b.buffer_type = t == MYSQL_TYPE_NEWDATE ? MYSQL_TYPE_DATE : t;
      b.buffer = &c.time;
    } else {
      c.buffer.resize(256);
      b.buffer_type = t == MYSQL_TYPE_BIT ? MYSQL_TYPE_BIT : MYSQL_TYPE_BLOB;
      b.buffer = c.buffer.data();
      b.buffer_length = c.buffer.size();
    }
  }
  if (mysql_stmt_bind_result(stmt, binds.data()) != 0) {
    mysql_free_result(meta);
    return s.StmtError(stmt, "cannot bind the result of");
  }

  Chunk chunk;
  s.row.assign(n, binlog::Value{});
  Status callback_status;
  while (true) {
    int rc = mysql_stmt_fetch(stmt);
    if (rc == MYSQL_NO_DATA) break;
    if (rc == 1) {
      Error e = s.StmtError(stmt, "reading failed for");
      mysql_free_result(meta);
      mysql_stmt_free_result(stmt);
      return e;
    }
    for (unsigned i = 0; i < n; ++i) {
      Impl::Column& c = s.columns[i];
      binlog::Value& v = s.row[i];
      v = binlog::Value{};
      enum_field_types t = fields[i].type;
      v.type = static_cast<binlog::ColumnType>(t);
      if (c.is_null) {
        v.kind = binlog::ValueKind::kNull;
        continue;
      }
      if (binds[i].buffer_type == MYSQL_TYPE_BLOB || binds[i].buffer_type == MYSQL_TYPE_BIT) {
        if (c.length > binds[i].buffer_length) {
          // Truncated: fetch the whole value into a second buffer. The bound buffer stays as it is,
          // because the statement keeps its own copy of the binding.
          c.long_value.resize(c.length);
          MYSQL_BIND whole = binds[i];
          whole.buffer = c.long_value.data();
          whole.buffer_length = c.long_value.size();
          unsigned long whole_length = 0;
          whole.length = &whole_length;
          if (mysql_stmt_fetch_column(stmt, &whole, i, 0) != 0) {
            Error e = s.StmtError(stmt, "reading a long value failed for");
            mysql_free_result(meta);
            mysql_stmt_free_result(stmt);
            return e;
          }
          v.text = std::string_view(c.long_value.data(), c.length);
        } else {
          v.text = std::string_view(c.buffer.data(), c.length);
        }
      }
      SnapshotQuery::Read read = s.query.reads[i];
      if (read == SnapshotQuery::Read::kEnumIndex || read == SnapshotQuery::Read::kSetBits) {
        v.kind = read == SnapshotQuery::Read::kEnumIndex ? binlog::ValueKind::kEnum : binlog::ValueKind::kSet;
        v.type =
            read == SnapshotQuery::Read::kEnumIndex ? binlog::ColumnType::kEnum : binlog::ColumnType::kSet;
        v.u = static_cast<uint64_t>(c.integer);
        continue;
      }
      if (t == MYSQL_TYPE_YEAR) {
        v.kind = binlog::ValueKind::kYear;
        v.u = static_cast<uint64_t>(c.integer);
      } else if (IsIntegerField(t)) {
        if (binds[i].is_unsigned) {
          v.kind = binlog::ValueKind::kUint;
          v.u = static_cast<uint64_t>(c.integer);
        } else {
          v.kind = binlog::ValueKind::kInt;
          v.i = c.integer;
        }
      } else if (t == MYSQL_TYPE_FLOAT) {
        v.kind = binlog::ValueKind::kFloat;
        v.f = c.flt;
      } else if (t == MYSQL_TYPE_DOUBLE) {
        v.kind = binlog::ValueKind::kDouble;
        v.d = c.dbl;
      } else if (t == MYSQL_TYPE_DATE || t == MYSQL_TYPE_NEWDATE) {
        v.kind = binlog::ValueKind::kDate;
        v.date = {static_cast<uint16_t>(c.time.year), static_cast<uint8_t>(c.time.month),
                  static_cast<uint8_t>(c.time.day)};
      } else if (t == MYSQL_TYPE_DATETIME) {
        v.kind = binlog::ValueKind::kDateTime;
        v.fsp = static_cast<uint8_t>(fields[i].decimals);
        v.datetime = {static_cast<uint16_t>(c.time.year),       static_cast<uint8_t>(c.time.month),
                      static_cast<uint8_t>(c.time.day),         static_cast<uint8_t>(c.time.hour),
                      static_cast<uint8_t>(c.time.minute),      static_cast<uint8_t>(c.time.second),
                      static_cast<uint32_t>(c.time.second_part)};
      } else if (t == MYSQL_TYPE_TIMESTAMP) {
        v.kind = binlog::ValueKind::kTimestamp;
        v.fsp = static_cast<uint8_t>(fields[i].decimals);
        bool zero = c.time.year == 0 && c.time.month == 0 && c.time.day == 0;
        int64_t secs = zero ? 0
                            : DaysFromCivil(c.time.year, c.time.month, c.time.day) * 86400 +
                                  int64_t{c.time.hour} * 3600 + int64_t{c.time.minute} * 60 + c.time.second;
        v.timestamp = {static_cast<uint32_t>(secs), zero ? 0u : static_cast<uint32_t>(c.time.second_part)};
      } else if (t == MYSQL_TYPE_TIME) {
        v.kind = binlog::ValueKind::kTime;
        v.fsp = static_cast<uint8_t>(fields[i].decimals);
        v.time = {c.time.neg != 0, c.time.day * 24 + c.time.hour, static_cast<uint8_t>(c.time.minute),
                  static_cast<uint8_t>(c.time.second), static_cast<uint32_t>(c.time.second_part)};
      } else if (t == MYSQL_TYPE_BIT) {
        v.kind = binlog::ValueKind::kBit;
        v.fsp = static_cast<uint8_t>(fields[i].length);
        uint64_t bits = 0;
        for (unsigned char byte : v.text) bits = (bits << 8) | byte;
        v.u = bits;
        v.text = {};
      } else if (t == MYSQL_TYPE_NEWDECIMAL || t == MYSQL_TYPE_DECIMAL) {
        v.kind = binlog::ValueKind::kDecimal;
      } else if (t == MYSQL_TYPE_JSON) {
        v.kind = binlog::ValueKind::kJson;
      } else if (t == MYSQL_TYPE_GEOMETRY) {
        v.kind = binlog::ValueKind::kGeometry;
      } else {
        v.kind = binlog::ValueKind::kString;
      }
    }
    callback_status = on_row(s.row);
    if (!callback_status.ok()) break;
    ++chunk.rows;
    // The key of the latest row, overwritten in place (strings keep their capacity).
    chunk.last_key.resize(s.key_index.size());
    for (size_t j = 0; j < s.key_index.size(); ++j) {
      size_t k = s.key_index[j];
      const binlog::Value& v = s.row[k];
      KeyValue& kv = chunk.last_key[j];
      switch (v.kind) {
        case binlog::ValueKind::kInt:
          kv.kind = KeyValue::Kind::kInt;
          kv.i = v.i;
          break;
        case binlog::ValueKind::kUint:
        case binlog::ValueKind::kYear:
        case binlog::ValueKind::kBit:
        case binlog::ValueKind::kEnum:
        case binlog::ValueKind::kSet:
          kv.kind = KeyValue::Kind::kUint;
          kv.u = v.u;
          break;
        case binlog::ValueKind::kFloat:
          kv.kind = KeyValue::Kind::kDouble;
          kv.d = v.f;
          break;
        case binlog::ValueKind::kDouble:
          kv.kind = KeyValue::Kind::kDouble;
          kv.d = v.d;
          break;
        case binlog::ValueKind::kDate:
        case binlog::ValueKind::kDateTime:
        case binlog::ValueKind::kTimestamp:
        case binlog::ValueKind::kTime:
          kv.kind = KeyValue::Kind::kTemporal;
          kv.text = TemporalText(s.columns[k].time);
          break;
        default:
          kv.kind = KeyValue::Kind::kText;
          kv.text.assign(v.text);
          break;
      }
    }
  }
  mysql_free_result(meta);
  mysql_stmt_free_result(stmt);
  if (!callback_status.ok()) return std::move(callback_status).error();
  chunk.last = s.query.key_columns.empty() || chunk.rows < s.query.chunk_rows;
  return chunk;
}

}  // namespace chsync::mysql
