// ClassifyTypeChange against the live MariaDB (CHSYNC_TEST_MYSQL_FULL) and both ClickHouse
// destinations (the 18.16 server and embedded 26.7): for each case, the source table is filled
// with edge values and copied into ClickHouse the way the snapshot does (SnapshotReader,
// RowConverter, RowBinary), a row deleted at the source leaves its tombstone (an old row version
// holding a value the new type may not hold), then the source runs the ALTER and the schema
// tracker applies it. The verdict must be the expected one, and
// - kUnchanged / kModify: after nothing / MODIFY COLUMN, the ClickHouse table reads exactly what a
//   fresh copy of the source's rows into the new type reads (same type, same values);
// - kRebuild: the source did change values (or ClickHouse cannot MODIFY, for NOT NULL).

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "clickhouse/capabilities.h"
#include "clickhouse/connection.h"
#include "clickhouse/ddl.h"
#include "clickhouse/row_binary.h"
#include "clickhouse/test_destinations.h"
#include "clickhouse/type_mapping.h"
#include "common/url.h"
#include "mysql/connection.h"
#include "mysql/snapshot_reader.h"
#include "pipe/row_converter.h"
#include "policy/type_change.h"
#include "schema/information_schema.h"
#include "schema/tracker.h"
#include "test_env.h"

namespace chsync::pipe {

/// Verdict kinds by name in test failures.
void PrintTo(TypeChangeVerdict::Kind kind, std::ostream* out) {
  *out << TypeChangeKindName(kind);
}

namespace {

using Kind = TypeChangeVerdict::Kind;

constexpr Kind U = Kind::kUnchanged;
constexpr Kind M = Kind::kModify;
constexpr Kind R = Kind::kRebuild;
constexpr bool kStrict = true;
constexpr bool kLoose = false;

struct Case {
  const char* from;    ///< column definition before (MariaDB syntax)
  const char* to;      ///< after
  bool strict;         ///< sql_mode of the ALTER: default (strict) or ''
  const char* values;  ///< VALUES rows (id, c) kept at the source
  const char* gone;    ///< value of row 100, deleted before the ALTER (its tombstone stays), or nullptr
  Kind on_new;         ///< verdict for ClickHouse 26.7
  Kind on_old;         ///< verdict for ClickHouse 18.16
  /// A rebuild although the source kept every value (ClickHouse stores them differently now).
  bool rebuild_kept = false;
};

const Case kCases[] = {
    {"INT NOT NULL", "BIGINT NOT NULL", kLoose, "(1, -2147483648), (2, 2147483647), (3, 0)", nullptr, M, M},
    {"INT UNSIGNED NOT NULL", "BIGINT NOT NULL", kLoose, "(1, 4294967295), (2, 0)", nullptr, M, M},
    {"TINYINT UNSIGNED NOT NULL", "SMALLINT NOT NULL", kLoose, "(1, 255), (2, 0)", nullptr, M, M},
    {"BIGINT NOT NULL", "INT NOT NULL", kStrict, "(1, -2147483648), (2, 2147483647)", "3000000000", M, M},
    {"INT NOT NULL", "INT UNSIGNED NOT NULL", kStrict, "(1, 0), (2, 2147483647)", "-5", M, M},
    {"BIGINT UNSIGNED NOT NULL", "BIGINT NOT NULL", kStrict, "(1, 9223372036854775807)",
     "18446744073709551615", M, M},
    {"INT NOT NULL", "MEDIUMINT NOT NULL", kStrict, "(1, -8388608), (2, 8388607)", "2000000000", U, U},
    {"MEDIUMINT NULL", "INT NULL", kLoose, "(1, -8388608), (2, NULL)", nullptr, U, U},
    {"BIGINT NOT NULL", "INT NOT NULL", kLoose, "(1, 1), (2, 3000000000), (3, -3000000000)", nullptr, R, R},
    {"INT NOT NULL", "INT UNSIGNED NOT NULL", kLoose, "(1, -5), (2, 5)", nullptr, R, R},
    {"BIT(8) NOT NULL", "BIT(16) NOT NULL", kLoose, "(1, b'11111111'), (2, 0)", nullptr, U, U},
    {"BIT(16) NOT NULL", "BIT(4) NOT NULL", kLoose, "(1, b'1111111'), (2, 1)", nullptr, R, R},
    {"FLOAT NOT NULL", "DOUBLE NOT NULL", kLoose,
     "(1, 0.1), (2, 3.4e38), (3, -1.17549435e-38), (4, 16777217), (5, -0.0), (6, 1.401298464e-45)", nullptr,
     M, M},
    {"FLOAT(7,2) NOT NULL", "DOUBLE NOT NULL", kLoose, "(1, 1.1), (2, 12345.67)", nullptr, M, M},
    {"FLOAT NOT NULL", "FLOAT UNSIGNED NOT NULL", kStrict, "(1, 1.5), (2, 0)", "-1.5", U, U},
    {"DOUBLE NOT NULL", "FLOAT NOT NULL", kStrict, "(1, 0.1), (2, 1.0000001)", nullptr, R, R},
    {"DECIMAL(10,2) NOT NULL", "DECIMAL(12,2) NOT NULL", kLoose, "(1, 99999999.99), (2, -0.01), (3, 0)",
     nullptr, M, M},
    {"DECIMAL(10,2) NULL", "DECIMAL(14,5) NULL", kLoose, "(1, -99999999.99), (2, NULL)", nullptr, M, M},
    {"DECIMAL(9,2) NOT NULL", "DECIMAL(20,2) NOT NULL", kLoose, "(1, 9999999.99), (2, -1.5)", nullptr, M, M},
    {"DECIMAL(20,2) NOT NULL", "DECIMAL(40,2) NOT NULL", kLoose, "(1, 999999999999999999.99), (2, -0.5)",
     nullptr, M, R, true},
    {"DECIMAL(40,2) NOT NULL", "DECIMAL(45,2) NOT NULL", kLoose,
     "(1, 12345678901234567890123456789012345678.9)", nullptr, M, U},
    {"DECIMAL(10,2) NOT NULL", "DECIMAL(10,1) NOT NULL", kStrict, "(1, 1.25), (2, -1.25)", nullptr, R, R},
    {"DECIMAL(10,2) NOT NULL", "DECIMAL(10,2) UNSIGNED NOT NULL", kStrict, "(1, 1.25)", "-7.5", U, U},
    {"DATETIME NOT NULL", "DATETIME(3) NOT NULL", kLoose,
     "(1, '2020-01-01 10:00:01'), (2, '1970-01-01 00:00:00'), (3, '2105-12-31 23:59:59')", nullptr, M, U},
    {"TIMESTAMP(2) NULL", "TIMESTAMP(6) NULL", kLoose, "(1, '2020-01-01 10:00:01.25'), (2, NULL)", nullptr, M,
     U},
    {"DATETIME(6) NOT NULL", "DATETIME NOT NULL", kStrict, "(1, '2020-01-01 10:00:00.999999')", nullptr, R,
     R},
    {"TIME(3) NOT NULL", "TIME NOT NULL", kStrict, "(1, '10:00:00.999')", nullptr, R, R},
    {"TIME NOT NULL", "TIME(2) NOT NULL", kStrict, "(1, '-838:59:59')", nullptr, R, R, true},
    {"VARCHAR(10) NOT NULL", "VARCHAR(100) NOT NULL", kLoose, "(1, 'abc  '), (2, '')", nullptr, U, U},
    {"VARCHAR(100) NOT NULL", "VARCHAR(3) NOT NULL", kStrict, "(1, 'abc'), (2, 'é')", "abcdef", U, U},
    {"VARCHAR(100) NOT NULL", "VARCHAR(3) NOT NULL", kLoose, "(1, 'ab'), (2, 'abcdef')", nullptr, R, R},
    {"TEXT NOT NULL", "MEDIUMTEXT NOT NULL", kLoose, "(1, 'x'), (2, '日本')", nullptr, U, U},
    {"CHAR(10) NOT NULL", "VARCHAR(10) NOT NULL", kLoose, "(1, 'a  '), (2, ' b')", nullptr, U, U},
    {"CHAR(10) NOT NULL", "TEXT NOT NULL", kLoose, "(1, 'a  '), (2, ' b')", nullptr, U, U},
    {"VARCHAR(10) NOT NULL", "CHAR(10) NOT NULL", kStrict, "(1, 'a  '), (2, 'b')", nullptr, R, R},
    {"VARCHAR(10) CHARACTER SET latin1 NOT NULL", "VARCHAR(10) CHARACTER SET utf8mb4 NOT NULL", kLoose,
     "(1, 'é€'), (2, x'81')", nullptr, U, U},
    {"VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL",
     "VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL", kLoose, "(1, 'Ab')", nullptr, U, U},
    {"VARCHAR(10) CHARACTER SET utf8mb4 NOT NULL", "VARCHAR(10) CHARACTER SET latin1 NOT NULL", kStrict,
     "(1, 'é€')", nullptr, U, U},
    {"VARCHAR(10) CHARACTER SET utf8mb4 NOT NULL", "VARCHAR(10) CHARACTER SET latin1 NOT NULL", kLoose,
     "(1, 'é€'), (2, '中')", nullptr, R, R},
    {"VARBINARY(10) NOT NULL", "BLOB NOT NULL", kLoose, "(1, x'00ff00'), (2, '')", nullptr, U, U},
    {"BINARY(4) NOT NULL", "VARBINARY(6) NOT NULL", kLoose, "(1, 'ab'), (2, x'00')", nullptr, U, U},
    {"BINARY(4) NOT NULL", "BINARY(6) NOT NULL", kStrict, "(1, 'ab')", nullptr, R, R},
    {"ENUM('a','b') NOT NULL", "ENUM('a','b','c') NOT NULL", kLoose, "(1, 'a'), (2, 'b'), (3, '')", nullptr,
     M, M},
    {"ENUM('a','b') NULL", "ENUM('a','b','c','d') NULL", kLoose, "(1, 'b'), (2, NULL)", nullptr, M, M},
    {"ENUM('a','b') NOT NULL", "ENUM('b','a') NOT NULL", kStrict, "(1, 'a'), (2, 'b')", nullptr, R, R, true},
    {"SET('a','b') NOT NULL", "SET('a','b','c') NOT NULL", kLoose, "(1, 'a,b'), (2, ''), (3, 'b')", nullptr,
     U, U},
    {"SET('a','b') NOT NULL", "SET('b','a') NOT NULL", kStrict, "(1, 'a,b')", nullptr, R, R},
    {"INT NOT NULL", "INT NULL", kLoose, "(1, -1), (2, 7)", nullptr, M, M},
    {"VARCHAR(5) NOT NULL", "VARCHAR(50) NULL", kLoose, "(1, 'x')", nullptr, M, M},
    {"SMALLINT NOT NULL", "BIGINT NULL", kLoose, "(1, -32768)", nullptr, M, M},
    {"INT NULL", "INT NOT NULL", kLoose, "(1, 5), (2, NULL)", nullptr, R, R},
    {"VARCHAR(100) NOT NULL", "INT NOT NULL", kLoose, "(1, '12'), (2, 'x')", nullptr, R, R},
};

Result<mysql::ConnectOptions> SourceOptions() {
  std::string url = testing::RequireEnv("CHSYNC_TEST_MYSQL_FULL");
  if (url.empty()) return Error(ErrorKind::kConfig, "CHSYNC_TEST_MYSQL_FULL is not set");
  CHSYNC_ASSIGN_OR_RETURN(Url parsed, ParseUrl(url));
  return mysql::OptionsFromUrl(parsed);
}

Result<schema::TextRows> Rows(mysql::Connection& conn, const std::string& sql) {
  CHSYNC_ASSIGN_OR_RETURN(mysql::QueryResult r, conn.Query(sql));
  return schema::TextRows{std::move(r.columns), std::move(r.rows)};
}

struct Destination {
  std::unique_ptr<clickhouse::Connection> conn;
  clickhouse::Capabilities caps;
  std::string version;
  clickhouse::DdlTarget target;
};

std::string CaseName(const Case& c) {
  return std::string(c.from) + " → " + c.to + (c.strict ? " (strict)" : " (sql_mode '')");
}

class TypeChangeLiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto options = SourceOptions();
    ASSERT_TRUE(options.ok()) << options.error().message();
    auto conn = mysql::Connection::Open(*options);
    ASSERT_TRUE(conn.ok()) << conn.error().message();
    source_ = std::move(*conn);
    db_ = clickhouse::testing::UniqueDatabase("type_change");
    Exec("DROP DATABASE IF EXISTS " + db_);
    Exec("CREATE DATABASE " + db_ + " DEFAULT CHARACTER SET utf8mb4");
    Exec("USE " + db_);
    Exec("SET NAMES utf8mb4");

    for (const std::string& url : {clickhouse::testing::EmbeddedUrl(), clickhouse::testing::ServerUrl()}) {
      Destination d;
      d.conn = clickhouse::testing::ConnectOrFail(url);
      ASSERT_NE(d.conn, nullptr);
      auto version = d.conn->Version();
      ASSERT_TRUE(version.ok()) << version.error().message();
      d.caps = clickhouse::FromVersion(*version);
      d.version = version->ToString();
      d.target.database = db_;
      Status st = d.conn->Execute(clickhouse::CreateDatabase(d.target));
      ASSERT_TRUE(st.ok()) << st.error().message();
      destinations_.push_back(std::move(d));
    }
  }

  void TearDown() override {
    if (source_ != nullptr) (void)source_->Execute("DROP DATABASE IF EXISTS " + db_);
    for (Destination& d : destinations_) (void)d.conn->Execute("DROP DATABASE IF EXISTS `" + db_ + "`");
  }

  void Exec(const std::string& sql) {
    Status st = source_->Execute(sql);
    ASSERT_TRUE(st.ok()) << sql << ": " << st.error().message();
  }

  /// The table as the pipe loads it at start: information_schema, normalised by the tracker.
  Result<schema::TableSchema> LoadTable(schema::Tracker& tracker, const std::string& name) {
    std::vector<std::string> dbs{db_};
    CHSYNC_ASSIGN_OR_RETURN(schema::TextRows tables, Rows(*source_, schema::TablesQuery(dbs)));
    CHSYNC_ASSIGN_OR_RETURN(schema::TextRows columns, Rows(*source_, schema::ColumnsQuery(dbs)));
    CHSYNC_ASSIGN_OR_RETURN(schema::TextRows statistics, Rows(*source_, schema::StatisticsQuery(dbs)));
    CHSYNC_ASSIGN_OR_RETURN(
        std::vector<schema::TableSchema> loaded,
        schema::LoadSchemas(tables, columns, statistics, schema::InformationSchemaFlavor{true}));
    for (schema::TableSchema& t : loaded) {
      if (t.name == name) tracker.SetTable(std::move(t));
    }
    const schema::TableSchema* t = tracker.Find(db_, name);
    if (t == nullptr) return Error(ErrorKind::kNotFound, "table " + name + " not loaded");
    return *t;
  }

  /// Copies the source table's rows into ClickHouse table `dest_table` as the snapshot does.
  Status CopyRows(const schema::TableSchema& table, Destination& d, const std::string& dest_table) {
    std::vector<clickhouse::MappedType> types;
    std::vector<std::string> names;
    for (const schema::Column& c : table.columns) {
      CHSYNC_ASSIGN_OR_RETURN(clickhouse::MappedType m, clickhouse::MapColumn(c, d.caps));
      types.push_back(std::move(m));
      names.push_back(c.name);
    }
    CHSYNC_ASSIGN_OR_RETURN(RowConverter converter, RowConverter::Create(table, types));
    CHSYNC_ASSIGN_OR_RETURN(auto reader,
                            mysql::SnapshotReader::Open(*source_, SnapshotQueryFor(table, 1000)));
    clickhouse::RowBinaryEncoder encoder(types);
    std::vector<clickhouse::Cell> cells;
    mysql::Key after;
    while (true) {
      CHSYNC_ASSIGN_OR_RETURN(auto chunk,
                              reader->ReadChunk(after, [&](const std::vector<binlog::Value>& row) -> Status {
                                CHSYNC_RETURN_IF_ERROR(converter.Convert(row, ValueOrigin::kSnapshot, cells));
                                return encoder.AppendRow(cells);
                              }));
      if (chunk.last) break;
      after = chunk.last_key;
    }
    return d.conn->Insert(clickhouse::InsertPrefix(db_, dest_table, names), encoder.data());
  }

  /// The live rows of a ClickHouse table, one line per row: id, type, value.
  Result<std::string> Read(Destination& d, const std::string& table) {
    return d.conn->Query("SELECT id, toTypeName(c), toString(c) FROM `" + db_ + "`.`" + table +
                         "` FINAL WHERE _chsync_is_deleted = 0 ORDER BY id");
  }

  /// Waits until the table has no unfinished mutation; fails on a mutation that failed. ClickHouse
  /// 18.16 converts the parts within the ALTER itself (and has no latest_fail_reason).
  Status WaitForMutations(Destination& d, const std::string& table) {
    if (!d.caps.datetime64) return Status::Ok();
    for (int i = 0; i < 300; ++i) {
      CHSYNC_ASSIGN_OR_RETURN(std::string pending,
                              d.conn->Query("SELECT count(), any(latest_fail_reason) FROM system.mutations "
                                            "WHERE database = '" +
                                            db_ + "' AND table = '" + table + "' AND is_done = 0"));
      if (pending.starts_with("0\t")) return Status::Ok();
      if (pending.find("\t\n") == std::string::npos) {
        return Error(ErrorKind::kServer, "mutation failed on " + table + ": " + pending);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return Error(ErrorKind::kServer, "mutation of " + table + " did not finish");
  }

  /// Whether the source's values of c equal those saved in `saved` before the ALTER: as UTF-8
  /// text for character columns, as bytes for byte columns, as text across type families, else by
  /// value (so FLOAT 0.1 equals DOUBLE 0.10000000149011612 and DATETIME equals DATETIME(3)).
  bool SourceKept(const std::string& table, const std::string& saved, const schema::Column& from,
                  const schema::Column& to) {
    auto bytes = [](schema::ColumnType t) {
      return t == schema::ColumnType::kBinary || t == schema::ColumnType::kVarBinary ||
             t == schema::ColumnType::kBlob || t == schema::ColumnType::kTinyBlob;
    };
    auto number = [](schema::ColumnType t) {
      return schema::IsIntegerType(t) || t == schema::ColumnType::kDecimal ||
             t == schema::ColumnType::kFloat || t == schema::ColumnType::kDouble ||
             t == schema::ColumnType::kBit;
    };
    std::string same;
    if (schema::IsCharacterType(from.type) && schema::IsCharacterType(to.type)) {
      same = "hex(convert(t.c using utf8mb4)) <=> hex(convert(b.c using utf8mb4))";
    } else if (bytes(from.type) && bytes(to.type)) {
      same = "hex(t.c) <=> hex(b.c)";
    } else if (from.type == to.type || (number(from.type) && number(to.type))) {
      same = "t.c <=> b.c";
    } else {
      same = "concat(t.c) <=> concat(b.c)";
    }
    auto differing = source_->QueryValue("SELECT count(*) FROM " + table + " t LEFT JOIN " + saved +
                                         " b USING (id) WHERE NOT (" + same + ")");
    EXPECT_TRUE(differing.ok()) << differing.error().message();
    return differing.ok() && differing->value_or("") == "0";
  }

  void RunCase(size_t index, const Case& c) {
    SCOPED_TRACE(CaseName(c));
    const std::string table = "t" + std::to_string(index);
    Exec("SET SESSION sql_mode = ''");
    Exec("CREATE TABLE " + table + " (id INT PRIMARY KEY, c " + c.from + ")");
    Exec(std::string("INSERT INTO ") + table + " (id, c) VALUES " + c.values);
    if (c.gone != nullptr) {
      Exec("INSERT INTO " + table + " (id, c) VALUES (100, '" + c.gone + "')");
    }
    schema::Tracker::Options topt;
    topt.mariadb = true;
    schema::Tracker tracker(topt);
    auto old_table = LoadTable(tracker, table);
    ASSERT_TRUE(old_table.ok()) << old_table.error().message();
    const schema::Column old_column = *old_table->GetColumn("c");

    for (Destination& d : destinations_) {
      auto create = clickhouse::CreateTable(*old_table, d.caps, d.target);
      ASSERT_TRUE(create.ok()) << create.error().message();
      Status st = d.conn->Execute(*create);
      ASSERT_TRUE(st.ok()) << *create << ": " << st.error().message();
      st = CopyRows(*old_table, d, table);
      ASSERT_TRUE(st.ok()) << "ClickHouse " << d.version << ": " << st.error().message();
    }
    if (c.gone != nullptr) {
      // The row is deleted at the source; the stream writes its before-image as a tombstone.
      Exec("DELETE FROM " + table + " WHERE id = 100");
      for (Destination& d : destinations_) {
        std::string t = "`" + db_ + "`.`" + table + "`";
        Status st = d.conn->Execute("INSERT INTO " + t +
                                    " (id, c, _chsync_version, _chsync_is_deleted) SELECT id, c, 1, 1 FROM " +
                                    t + " WHERE id = 100");
        ASSERT_TRUE(st.ok()) << st.error().message();
      }
    }

    Exec("CREATE TABLE " + table + "_saved AS SELECT id, c FROM " + table);
    const std::string alter = "ALTER TABLE " + table + " MODIFY c " + c.to;
    Exec(c.strict ? "SET SESSION sql_mode = DEFAULT" : "SET SESSION sql_mode = ''");
    Exec(alter);
    Exec("SET SESSION sql_mode = DEFAULT");
    auto applied = tracker.ApplySql(alter, db_);
    ASSERT_TRUE(applied.ok()) << applied.error().message();
    const schema::TableSchema* new_table = tracker.Find(db_, table);
    ASSERT_NE(new_table, nullptr);
    const schema::Column new_column = *new_table->GetColumn("c");
    const bool kept = SourceKept(table, table + "_saved", old_column, new_column);

    for (Destination& d : destinations_) {
      SCOPED_TRACE("ClickHouse " + d.version);
      TypeChangeVerdict verdict = ClassifyTypeChange(old_column, new_column, c.strict, d.caps);
      const Kind expected = d.caps.datetime64 ? c.on_new : c.on_old;
      EXPECT_EQ(verdict.kind, expected) << verdict.reason;
      std::cout << "ClickHouse " << d.version << ": " << verdict.reason << "\n";
      if (verdict.kind == Kind::kRebuild) {
        EXPECT_EQ(kept, c.rebuild_kept) << "source kept its values: " << kept << "; " << verdict.reason;
        continue;
      }
      EXPECT_TRUE(kept) << "the source changed values under verdict: " << verdict.reason;
      if (verdict.kind == Kind::kModify) {
        auto modify = clickhouse::ModifyColumn(table, new_column, d.caps, d.target);
        ASSERT_TRUE(modify.ok()) << modify.error().message();
        Status st = d.conn->Execute(*modify);
        ASSERT_TRUE(st.ok()) << *modify << ": " << st.error().message();
        st = WaitForMutations(d, table);
        ASSERT_TRUE(st.ok()) << st.error().message();
      }
      // What a fresh copy of the source's rows into the new type holds.
      const std::string fresh = table + "_fresh";
      schema::TableSchema fresh_schema = *new_table;
      fresh_schema.name = fresh;
      auto create = clickhouse::CreateTable(fresh_schema, d.caps, d.target);
      ASSERT_TRUE(create.ok()) << create.error().message();
      Status st = d.conn->Execute(*create);
      ASSERT_TRUE(st.ok()) << st.error().message();
      st = CopyRows(*new_table, d, fresh);
      ASSERT_TRUE(st.ok()) << st.error().message();
      auto actual = Read(d, table);
      auto wanted = Read(d, fresh);
      ASSERT_TRUE(actual.ok()) << actual.error().message();
      ASSERT_TRUE(wanted.ok()) << wanted.error().message();
      EXPECT_FALSE(wanted->empty());
      EXPECT_EQ(*actual, *wanted) << verdict.reason;
      // The tombstone's old value did not break the conversion, and still marks the row deleted.
      if (c.gone != nullptr) {
        auto tombstone = d.conn->Query("SELECT count() FROM `" + db_ + "`.`" + table +
                                       "` WHERE id = 100 AND _chsync_is_deleted = 1");
        ASSERT_TRUE(tombstone.ok()) << tombstone.error().message();
        EXPECT_EQ(*tombstone, "1\n");
      }
    }
  }

  std::unique_ptr<mysql::Connection> source_;
  std::vector<Destination> destinations_;
  std::string db_;
};

TEST_F(TypeChangeLiveTest, VerdictsMatchWhatSourceAndClickHouseDo) {
  for (size_t i = 0; i < std::size(kCases); ++i) {
    RunCase(i, kCases[i]);
    if (HasFatalFailure()) return;
  }
}

/// 127 → 128 labels: Enum8 becomes Enum16 in ClickHouse, and MODIFY keeps every value.
TEST_F(TypeChangeLiveTest, EnumGrowingIntoEnum16) {
  std::string labels;
  for (int i = 1; i <= 127; ++i) labels += (i > 1 ? "," : "") + std::string("'l") + std::to_string(i) + "'";
  const std::string from = "ENUM(" + labels + ") NOT NULL";
  const std::string to = "ENUM(" + labels + ",'l128') NOT NULL";
  const Case c{from.c_str(), to.c_str(), kLoose, "(1, 'l1'), (2, 'l127'), (3, '')", nullptr, M, M};
  RunCase(1000, c);
}

/// Strict NOT NULL: the source refuses while a NULL exists, so values are kept, but ClickHouse
/// cannot MODIFY Nullable(T) to T while an old row version holds NULL: the verdict is kRebuild.
TEST_F(TypeChangeLiveTest, NotNullCannotBeModifiedWhileOldVersionsHoldNull) {
  Exec("CREATE TABLE n (id INT PRIMARY KEY, c INT NULL)");
  Exec("INSERT INTO n VALUES (1, NULL)");
  Status refused = source_->Execute("ALTER TABLE n MODIFY c INT NOT NULL");
  EXPECT_FALSE(refused.ok()) << "strict MariaDB accepted NOT NULL over a NULL";

  for (Destination& d : destinations_) {
    SCOPED_TRACE("ClickHouse " + d.version);
    std::string t = "`" + db_ + "`.`n`";
    Status st =
        d.conn->Execute("CREATE TABLE " + t +
                        " (id Int32, c Nullable(Int32), _chsync_version UInt64, _chsync_is_deleted UInt8) "
                        "ENGINE = ReplacingMergeTree(_chsync_version) ORDER BY id");
    ASSERT_TRUE(st.ok()) << st.error().message();
    // Row 1 held NULL (version 0), then was updated to 5 (version 1): only the old version is NULL.
    st = d.conn->Execute("INSERT INTO " + t + " VALUES (1, NULL, 0, 0), (1, 5, 1, 0)");
    ASSERT_TRUE(st.ok()) << st.error().message();
    st = d.conn->Execute("ALTER TABLE " + t + " MODIFY COLUMN c Int32");
    if (st.ok()) st = WaitForMutations(d, "n");
    EXPECT_FALSE(st.ok()) << "ClickHouse converted an old NULL version to non-Nullable";
  }
  schema::Column from;
  from.name = "c";
  from.type = schema::ColumnType::kInt;
  from.nullable = true;
  schema::Column to = from;
  to.nullable = false;
  for (Destination& d : destinations_) {
    EXPECT_EQ(ClassifyTypeChange(from, to, true, d.caps).kind, Kind::kRebuild);
  }
}

}  // namespace
}  // namespace chsync::pipe
