// Insert benchmark (issue 5): N rows of mixed types into a ClickHouse server, once through
// chsync's RowBinary path (values → RowBinaryEncoder → HTTP insert, batch by batch) and once with
// `clickhouse-client` inserting the same rows from a TSV file, in the same run. Prints rows/s of
// each and the ratio (chsync ÷ clickhouse-client), then checks both tables hold the same data.
//
//   clickhouse_insert_bench --dest http://default:pw@127.0.0.1:8123 --native-port 9000 [--rows N]
//   clickhouse_insert_bench --dest file:/tmp/store [--rows N]    (embedded: chsync's rate only)
//
// Defaults: --dest $CHSYNC_TEST_CLICKHOUSE, --native-port $CHSYNC_TEST_CLICKHOUSE_NATIVE_PORT,
// --rows 10000000, --batch-rows 1000000. Time for chsync covers encoding the values of each batch
// and sending it (values are generated untimed, as they come from the decoder in chsync); time
// for clickhouse-client covers the client's whole run (reading and parsing the TSV, sending);
// writing the TSV file is not timed.

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <string>
#include <vector>

#include "clickhouse/capabilities.h"
#include "clickhouse/connection.h"
#include "clickhouse/ddl.h"
#include "clickhouse/row_binary.h"
#include "clickhouse/sql_quoting.h"

namespace chsync::clickhouse {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string dest;
  std::string native_port;
  uint64_t rows = 10'000'000;
  uint64_t batch_rows = 1'000'000;
  std::string tsv_path = "/tmp/chsync_clickhouse_insert_bench.tsv";
};

const char* const kStatuses[] = {"new", "paid", "shipped", "cancelled"};

/// The values of row `i`, the same for both paths.
struct Row {
  uint64_t id;
  int64_t qty;
  char price[32];
  bool ratio_null;
  double ratio;
  DateTimeCell created;
  char name[48];
  bool note_null;
  char note[96];
  uint64_t status;  // 1-based enum index

  void Fill(uint64_t i) {
    id = i + 1;
    qty = static_cast<int64_t>(i % 1000) - 500;
    std::snprintf(price, sizeof(price), "%llu.%04llu", static_cast<unsigned long long>((i * 7919) % 1000000),
                  static_cast<unsigned long long>(i % 10000));
    ratio_null = i % 7 == 0;
    ratio = static_cast<double>(i % 1000) / 8.0;
    uint64_t second = i % (86400ULL * 365);
    created = DateTimeCell{2024,
                           1,
                           1 + static_cast<uint32_t>(second / 86400 % 28),
                           static_cast<uint32_t>(second / 3600 % 24),
                           static_cast<uint32_t>(second / 60 % 60),
                           static_cast<uint32_t>(second % 60),
                           static_cast<uint32_t>(i % 1000) * 1000};
    std::snprintf(name, sizeof(name), "customer-%llu",
                  static_cast<unsigned long long>((i * 2654435761ULL) % 1000003));
    note_null = i % 3 == 0;
    std::snprintf(note, sizeof(note), "order note %llu: deliver to door %llu",
                  static_cast<unsigned long long>(i), static_cast<unsigned long long>(i % 97));
    status = 1 + i % 4;
  }
};

schema::Column Column(std::string name, schema::ColumnType type, bool nullable) {
  schema::Column c;
  c.name = std::move(name);
  c.type = type;
  c.type_spelling = std::string(schema::ColumnTypeName(type));
  c.nullable = nullable;
  return c;
}

schema::TableSchema BenchTable(const std::string& name) {
  using schema::ColumnType;
  schema::TableSchema t;
  t.name = name;
  t.columns.push_back(Column("id", ColumnType::kBigInt, false));
  t.columns.back().is_unsigned = true;
  t.columns.push_back(Column("qty", ColumnType::kInt, false));
  t.columns.push_back(Column("price", ColumnType::kDecimal, false));
  t.columns.back().precision = 18;
  t.columns.back().scale = 4;
  t.columns.push_back(Column("ratio", ColumnType::kDouble, true));
  t.columns.push_back(Column("created", ColumnType::kDateTime, false));
  t.columns.back().fsp = 3;
  t.columns.push_back(Column("name", ColumnType::kVarChar, false));
  t.columns.push_back(Column("note", ColumnType::kVarChar, true));
  t.columns.push_back(Column("status", ColumnType::kEnum, false));
  t.columns.back().enum_values = {"new", "paid", "shipped", "cancelled"};
  t.primary_key = {"id"};
  t.RenumberColumns();
  return t;
}

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

int Fail(const std::string& what) {
  fmt::print(stderr, "clickhouse_insert_bench: {}\n", what);
  return 1;
}

void AppendTsvDateTime(const DateTimeCell& dt, bool with_millis, std::string& out) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%04d-%02u-%02u %02u:%02u:%02u", dt.year, dt.month, dt.day, dt.hour,
                dt.minute, dt.second);
  out += buf;
  if (with_millis) {
    std::snprintf(buf, sizeof(buf), ".%03u", dt.microsecond / 1000);
    out += buf;
  }
}

int Run(const Options& o) {
  auto conn_result = Connect(o.dest);
  if (!conn_result.ok()) return Fail(conn_result.error().message());
  std::unique_ptr<Connection> conn = std::move(conn_result).value();
  auto version = conn->Version();
  if (!version.ok()) return Fail(version.error().message());
  Capabilities caps = FromVersion(*version);
  auto url = ParseUrl(o.dest);
  DdlTarget target{.database = "chsync_insert_bench"};
  if (!conn->Execute("DROP DATABASE IF EXISTS " + QuoteIdentifier(target.database)).ok())
    return Fail("drop failed");
  if (Status s = conn->Execute(CreateDatabase(target)); !s.ok()) return Fail(s.error().message());
  schema::TableSchema ours = BenchTable("via_chsync");
  schema::TableSchema theirs = BenchTable("via_client");
  for (const schema::TableSchema* t : {&ours, &theirs}) {
    auto sql = CreateTable(*t, caps, target);
    if (!sql.ok()) return Fail(sql.error().message());
    if (Status s = conn->Execute(*sql); !s.ok()) return Fail(s.error().message());
  }

  std::vector<MappedType> types;
  std::vector<std::string> names;
  for (const schema::Column& c : ours.columns) {
    auto mapped = MapColumn(c, caps);
    if (!mapped.ok()) return Fail(mapped.error().message());
    types.push_back(*mapped);
    names.push_back(c.name);
  }
  types.push_back(VersionColumnType());
  types.push_back(IsDeletedColumnType());
  names.emplace_back(kVersionColumn);
  names.emplace_back(kIsDeletedColumn);

  fmt::print("ClickHouse {} at {}, {} rows, batches of {} rows\n", version->ToString(), conn->Describe(),
             o.rows, o.batch_rows);

  // chsync: per batch, the rows' values are generated first (not timed: in chsync they come from
  // the binlog decoder or the snapshot reader), then encoded and sent (timed). One batch is sent
  // while the next is encoded, as the pipe does.
  RowBinaryEncoder encoders[2] = {RowBinaryEncoder(types), RowBinaryEncoder(types)};
  std::vector<Row> batch(o.batch_rows);
  for (RowBinaryEncoder& e : encoders) e.Reserve(o.batch_rows * 96);
  size_t bytes_sent = 0;
  Clock::duration timed{};
  Clock::duration encode_time{};
  std::string prefix = InsertPrefix(target.database, ours.name, names);
  std::future<Status> in_flight;
  int current = 0;
  for (uint64_t first = 0; first < o.rows; first += o.batch_rows) {
    uint64_t count = std::min(o.batch_rows, o.rows - first);
    for (uint64_t k = 0; k < count; ++k) batch[k].Fill(first + k);
    Clock::time_point start = Clock::now();
    RowBinaryEncoder& encoder = encoders[current];
    encoder.Clear();
    for (uint64_t k = 0; k < count; ++k) {
      const Row& r = batch[k];
      Cell cells[] = {r.id,
                      r.qty,
                      DecimalCell{r.price},
                      r.ratio_null ? Cell(NullCell{}) : Cell(r.ratio),
                      r.created,
                      std::string_view(r.name),
                      r.note_null ? Cell(NullCell{}) : Cell(std::string_view(r.note)),
                      r.status,
                      uint64_t{0},
                      uint64_t{0}};
      if (Status s = encoder.AppendRow(cells); !s.ok()) return Fail(s.error().message());
    }
    encode_time += Clock::now() - start;
    if (in_flight.valid()) {
      if (Status s = in_flight.get(); !s.ok()) return Fail(s.error().message());
    }
    bytes_sent += encoder.data().size();
    in_flight = std::async(std::launch::async,
                           [&conn, &prefix, &encoder] { return conn->Insert(prefix, encoder.data()); });
    current = 1 - current;
    timed += Clock::now() - start;
  }
  Clock::time_point drain = Clock::now();
  if (in_flight.valid()) {
    if (Status s = in_flight.get(); !s.ok()) return Fail(s.error().message());
  }
  timed += Clock::now() - drain;
  double ours_s = Seconds(timed);
  Row row;

  double ours_rate = static_cast<double>(o.rows) / ours_s;
  fmt::print("chsync RowBinary insert    : {:8.2f} s  {:12.0f} rows/s  ({:.1f} MB RowBinary)\n", ours_s,
             ours_rate, static_cast<double>(bytes_sent) / 1e6);
  fmt::print("  of which encoding {:.2f} s (overlapping the previous batch's send)\n", Seconds(encode_time));
  if (conn->embedded()) {
    // clickhouse-client cannot write into an embedded store: report chsync's rate alone.
    auto count = conn->Query("SELECT count() FROM " + QualifiedName(target.database, ours.name));
    fmt::print("rows in the table: {}", count.ok() ? *count : "?\n");
    return 0;
  }

  // clickhouse-client: the same rows from TSV.
  {
    std::FILE* f = std::fopen(o.tsv_path.c_str(), "wb");
    if (f == nullptr) return Fail("cannot write " + o.tsv_path);
    std::string line;
    for (uint64_t i = 0; i < o.rows; ++i) {
      row.Fill(i);
      line.clear();
      line += std::to_string(row.id) + '\t' + std::to_string(row.qty) + '\t' + row.price + '\t';
      line += row.ratio_null ? std::string("\\N") : fmt::format("{}", row.ratio);
      line += '\t';
      AppendTsvDateTime(row.created, caps.datetime64, line);
      line += '\t';
      line += row.name;
      line += '\t';
      line += row.note_null ? std::string("\\N") : std::string(row.note);
      line += '\t';
      line += kStatuses[row.status - 1];
      line += "\t0\t0\n";
      std::fwrite(line.data(), 1, line.size(), f);
    }
    std::fclose(f);
  }
  std::string command = fmt::format(
      "clickhouse-client --host {} --port {} --user {} --password {} --query {} < {}", url->host,
      o.native_port, url->user.empty() ? "default" : url->user, url->password.empty() ? "''" : url->password,
      "'INSERT INTO " + target.database +
          ".via_client (id, qty, price, ratio, created, name, note, status, "
          "_chsync_version, _chsync_is_deleted) FORMAT TabSeparated'",
      o.tsv_path);
  Clock::time_point start = Clock::now();
  int rc = std::system(command.c_str());
  double theirs_s = Seconds(Clock::now() - start);
  std::remove(o.tsv_path.c_str());
  if (rc != 0) return Fail("clickhouse-client failed (exit " + std::to_string(rc) + ")");

  double theirs_rate = static_cast<double>(o.rows) / theirs_s;
  fmt::print("clickhouse-client TSV      : {:8.2f} s  {:12.0f} rows/s\n", theirs_s, theirs_rate);
  fmt::print("ratio chsync / client      : {:.2f}\n", ours_rate / theirs_rate);

  std::string check =
      "SELECT count(), sum(id), sum(qty), sum(toFloat64(price)), sum(ratio), countIf(ratio IS NULL), "
      "min(created), "
      "max(created), sum(length(name)), countIf(note IS NULL), sum(length(assumeNotNull(note))), "
      "groupUniqArray(toString(status)) FROM " +
      QualifiedName(target.database, "{}");
  auto a = conn->Query(fmt::format(fmt::runtime(check), "via_chsync"));
  auto b = conn->Query(fmt::format(fmt::runtime(check), "via_client"));
  if (!a.ok() || !b.ok()) return Fail("cannot compare the tables");
  bool same = *a == *b;
  fmt::print("tables identical by aggregates: {}\n", same ? "yes" : "NO");
  if (!same) fmt::print("  chsync: {}  client: {}", *a, *b);
  conn->Execute("DROP DATABASE IF EXISTS " + QuoteIdentifier(target.database)).ok();
  return same ? 0 : 1;
}

}  // namespace
}  // namespace chsync::clickhouse

int main(int argc, char** argv) {
  chsync::clickhouse::Options o;
  if (const char* v = std::getenv("CHSYNC_TEST_CLICKHOUSE")) o.dest = v;
  if (const char* v = std::getenv("CHSYNC_TEST_CLICKHOUSE_NATIVE_PORT")) o.native_port = v;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    std::string value = argv[i + 1];
    if (flag == "--dest") {
      o.dest = value;
    } else if (flag == "--native-port") {
      o.native_port = value;
    } else if (flag == "--rows") {
      o.rows = std::strtoull(value.c_str(), nullptr, 10);
    } else if (flag == "--batch-rows") {
      o.batch_rows = std::strtoull(value.c_str(), nullptr, 10);
    } else if (flag == "--tsv") {
      o.tsv_path = value;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  bool embedded = o.dest.rfind("file:", 0) == 0;
  if (o.dest.empty() || (o.native_port.empty() && !embedded) || o.rows == 0 || o.batch_rows == 0) {
    std::fprintf(stderr,
                 "usage: clickhouse_insert_bench --dest http://USER:PW@HOST:HTTP_PORT --native-port TCP_PORT "
                 "[--rows N] [--batch-rows N] [--tsv PATH]\n");
    return 2;
  }
  return chsync::clickhouse::Run(o);
}
