#include "mysql/binlog_stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/url.h"
#include "mysql/binlog_read_ahead.h"

namespace chsync::mysql {
namespace {

constexpr uint8_t kRotate = 4;
constexpr uint8_t kWriteRowsV1 = 23;
constexpr uint8_t kXid = 16;
constexpr uint8_t kHeartbeat = 27;
constexpr uint8_t kMariaGtid = 162;

/// Options for the FULL MariaDB test server; fails the test when the variable is unset.
ConnectOptions ServerOptions() {
  const char* url_text = std::getenv("CHSYNC_TEST_MYSQL_FULL");
  EXPECT_NE(url_text, nullptr)
      << "CHSYNC_TEST_MYSQL_FULL is not set: run the tests through scripts/test-servers";
  if (url_text == nullptr) return {};
  auto url = ParseUrl(url_text);
  EXPECT_TRUE(url.ok());
  auto options = OptionsFromUrl(*url);
  EXPECT_TRUE(options.ok());
  return *options;
}

std::unique_ptr<Connection> Connect(unsigned read_timeout_s = 60) {
  ConnectOptions o = ServerOptions();
  o.read_timeout_s = read_timeout_s;
  auto conn = Connection::Open(o);
  EXPECT_TRUE(conn.ok()) << conn.error().message();
  return conn.ok() ? std::move(*conn) : nullptr;
}

void Exec(Connection& c, const std::string& sql) {
  Status s = c.Execute(sql);
  ASSERT_TRUE(s.ok()) << sql << ": " << s.error().message();
}

/// The bytes of `file` in the server's data directory at [position, position + size).
std::string FileBytes(const std::string& file, uint64_t position, size_t size) {
  const char* dir = std::getenv("CHSYNC_TEST_MYSQL_FULL_DATADIR");
  EXPECT_NE(dir, nullptr) << "CHSYNC_TEST_MYSQL_FULL_DATADIR is not set";
  if (dir == nullptr) return {};
  std::ifstream in(std::string(dir) + "/" + file, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << dir << "/" << file;
  in.seekg(static_cast<std::streamoff>(position));
  std::string out(size, '\0');
  in.read(out.data(), static_cast<std::streamsize>(size));
  out.resize(static_cast<size_t>(in.gcount()));
  return out;
}

struct Seen {
  std::string bytes;
  BinlogCoordinate at;
  uint8_t type;
  bool artificial;
};

/// Reads events until `stop` returns true for one of them, or for at most 30 seconds (the
/// stream's heartbeats keep Next() returning while the server is idle).
template <typename Stop>
std::vector<Seen> ReadUntil(BinlogStream& stream, Stop stop) {
  std::vector<Seen> seen;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    auto ev = stream.Next();
    EXPECT_TRUE(ev.ok()) << ev.error().message();
    if (!ev.ok()) break;
    seen.push_back({std::string(ev->bytes), ev->at.coordinate(), ev->type, ev->artificial});
    if (stop(seen.back())) break;
  }
  return seen;
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(BinlogCoordinateTest, ParsesFileAndPosition) {
  auto c = ParseCoordinate("binlog.000042:1234");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->file, "binlog.000042");
  EXPECT_EQ(c->position, 1234u);
  EXPECT_EQ(c->ToString(), "binlog.000042:1234");
  auto big = ParseCoordinate("mysql-bin.000001:8589934592");
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->position, 8589934592u);
}

TEST(BinlogCoordinateTest, RejectsMalformedCoordinates) {
  for (const char* bad :
       {"binlog.000042", ":4", "binlog.000042:", "binlog.000042:x", "binlog.000042:3", "binlog.000042:4x"}) {
    auto c = ParseCoordinate(bad);
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_EQ(c.error().kind(), ErrorKind::kUsage) << bad;
  }
}

TEST(BinlogCoordinateTest, OrdersByFileNumberThenPosition) {
  EXPECT_LT(CompareCoordinates({"binlog.000009", 9000}, {"binlog.000010", 4}), 0);
  EXPECT_GT(CompareCoordinates({"binlog.000010", 4}, {"binlog.000009", 9000}), 0);
  EXPECT_LT(CompareCoordinates({"binlog.000010", 4}, {"binlog.000010", 5}), 0);
  EXPECT_EQ(CompareCoordinates({"binlog.000010", 77}, {"binlog.000010", 77}), 0);
  EXPECT_LT(CompareCoordinates({"binlog.999999", 4}, {"binlog.1000000", 4}), 0);
}

TEST(BinlogStreamTest, StreamsEventsAsTheyAreInTheBinlogFile) {
  auto setup = Connect();
  ASSERT_NE(setup, nullptr);
  Exec(*setup, "CREATE DATABASE IF NOT EXISTS live_stream");
  Exec(*setup, "CREATE TABLE IF NOT EXISTS live_stream.t (id INT PRIMARY KEY, note VARCHAR(64))");
  auto start = CurrentBinlogPosition(*setup);
  ASSERT_TRUE(start.ok()) << start.error().message();

  BinlogStreamOptions options;
  options.server_id = 4200101;
  options.heartbeat_ms = 1000;
  // From the position just read: tests running beside this one write to the same server.
  options.start = *start;
  auto stream = BinlogStream::Open(Connect(), options);
  ASSERT_TRUE(stream.ok()) << stream.error().message();
  EXPECT_TRUE((*stream)->is_mariadb());
  EXPECT_EQ((*stream)->checksum(), "CRC32");

  std::string marker =
      "stream-marker-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  Exec(*setup, "DELETE FROM live_stream.t");
  Exec(*setup, "INSERT INTO live_stream.t VALUES (1, '" + marker + "-1'), (2, '" + marker + "-2')");

  bool saw_rows = false;
  auto seen = ReadUntil(**stream, [&](const Seen& s) {
    if (s.type == kWriteRowsV1 && Contains(s.bytes, marker + "-2")) saw_rows = true;
    return saw_rows && s.type == kXid;
  });
  ASSERT_TRUE(saw_rows) << "the WRITE_ROWS event of the insert never arrived";

  // The stream starts with the fake ROTATE naming the start coordinate.
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen[0].type, kRotate);
  EXPECT_TRUE(seen[0].artificial);
  EXPECT_EQ(seen[0].at.file, start->file);
  EXPECT_EQ(seen[0].at.position, start->position);

  // Every real event carries its own place in the file: the bytes there are the bytes we got.
  size_t real = 0;
  uint64_t previous_end = 0;
  for (const Seen& s : seen) {
    if (s.artificial) continue;
    // Other tests may rotate the shared server's binlog meanwhile (FLUSH BINARY LOGS): the events
    // of the start's file are the ones checked.
    if (s.at.file != start->file) continue;
    ++real;
    EXPECT_GE(s.at.position, start->position);
    EXPECT_GE(s.at.position, previous_end) << "events out of order at " << s.at.ToString();
    previous_end = s.at.position + s.bytes.size();
    EXPECT_EQ(FileBytes(s.at.file, s.at.position, s.bytes.size()), s.bytes)
        << "event type " << int(s.type) << " at " << s.at.ToString() << " differs from the binlog file";
  }
  const bool rotated =
      std::any_of(seen.begin(), seen.end(), [&](const Seen& s) { return s.at.file != start->file; });
  if (!rotated) {  // the insert's events all in the start's file
    EXPECT_GE(real, 4u) << "expected GTID, TABLE_MAP, WRITE_ROWS and XID at least";
    EXPECT_EQ(
        CompareCoordinates((*stream)->next_coordinate(), BinlogCoordinate{seen.back().at.file, previous_end}),
        0);
  }
}

TEST(BinlogStreamTest, FollowsRotationToTheNextFile) {
  auto setup = Connect();
  ASSERT_NE(setup, nullptr);
  Exec(*setup, "CREATE DATABASE IF NOT EXISTS live_stream");
  Exec(*setup, "CREATE TABLE IF NOT EXISTS live_stream.r (id INT PRIMARY KEY, note VARCHAR(64))");
  BinlogStreamOptions options;
  options.server_id = 4200102;
  options.heartbeat_ms = 1000;
  auto stream = BinlogStream::Open(Connect(), options);
  ASSERT_TRUE(stream.ok()) << stream.error().message();
  std::string old_file = (*stream)->next_coordinate().file;

  Exec(*setup, "FLUSH BINARY LOGS");
  std::string marker =
      "rotate-marker-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  Exec(*setup, "DELETE FROM live_stream.r");
  Exec(*setup, "INSERT INTO live_stream.r VALUES (1, '" + marker + "')");

  bool rotated = false;
  auto seen = ReadUntil(**stream, [&](const Seen& s) {
    if (s.type == kRotate && !s.artificial) rotated = true;
    return rotated && s.type == kWriteRowsV1 && Contains(s.bytes, marker);
  });
  ASSERT_TRUE(rotated) << "no real ROTATE event arrived after FLUSH BINARY LOGS";
  const Seen& rows = seen.back();
  EXPECT_NE(rows.at.file, old_file);
  EXPECT_LT(CompareCoordinates({old_file, 4}, {rows.at.file, 4}), 0);
  EXPECT_EQ(FileBytes(rows.at.file, rows.at.position, rows.bytes.size()), rows.bytes);
}

TEST(BinlogStreamTest, PurgedOrMissingFileIsAClearError) {
  BinlogStreamOptions options;
  options.server_id = 4200103;
  options.start = {"binlog.999999", 4};
  auto stream = BinlogStream::Open(Connect(), options);
  ASSERT_TRUE(stream.ok()) << stream.error().message();
  auto ev = (*stream)->Next();
  ASSERT_FALSE(ev.ok());
  const Error& e = ev.error();
  EXPECT_EQ(e.kind(), ErrorKind::kServer);
  EXPECT_EQ(e.server_code(), 1236);
  EXPECT_NE(e.message().find("binlog.999999:4"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("chsync resync"), std::string::npos) << e.message();
  auto setup = Connect();
  ASSERT_NE(setup, nullptr);
  auto first = FirstBinlogFile(*setup);
  ASSERT_TRUE(first.ok());
  EXPECT_NE(e.message().find(*first + ":4"), std::string::npos) << e.message();
  EXPECT_EQ(e.message().find("chsync-pw"), std::string::npos) << "the password leaked into: " << e.message();
}

TEST(BinlogStreamTest, StartsAfterAGtid) {
  auto setup = Connect();
  ASSERT_NE(setup, nullptr);
  Exec(*setup, "CREATE DATABASE IF NOT EXISTS live_stream");
  Exec(*setup,
       "CREATE TABLE IF NOT EXISTS live_stream.g (id INT PRIMARY KEY AUTO_INCREMENT, note VARCHAR(64))");
  std::string tag = std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  Exec(*setup, "INSERT INTO live_stream.g (note) VALUES ('before-" + tag + "')");
  auto gtid = setup->QueryValue("SELECT @@last_gtid");
  ASSERT_TRUE(gtid.ok() && gtid->has_value() && !(*gtid)->empty());
  Exec(*setup, "INSERT INTO live_stream.g (note) VALUES ('after-" + tag + "')");

  BinlogStreamOptions options;
  options.server_id = 4200104;
  options.heartbeat_ms = 1000;
  options.gtid_set = **gtid;
  auto stream = BinlogStream::Open(Connect(), options);
  ASSERT_TRUE(stream.ok()) << stream.error().message();
  bool saw_before = false;
  auto seen = ReadUntil(**stream, [&](const Seen& s) {
    if (Contains(s.bytes, "before-" + tag)) saw_before = true;
    return s.type == kWriteRowsV1 && Contains(s.bytes, "after-" + tag);
  });
  ASSERT_FALSE(seen.empty());
  EXPECT_TRUE(seen.back().type == kWriteRowsV1 && Contains(seen.back().bytes, "after-" + tag))
      << "the transaction after the GTID never arrived";
  EXPECT_FALSE(saw_before) << "the transaction of GTID " << **gtid << " itself was streamed";
  EXPECT_FALSE(seen.back().at.file.empty());
  EXPECT_EQ(FileBytes(seen.back().at.file, seen.back().at.position, seen.back().bytes.size()),
            seen.back().bytes);
  // The first real event is a GTID event: the stream starts at a transaction boundary.
  for (const Seen& s : seen) {
    if (s.artificial || s.type == 15 /* FORMAT_DESCRIPTION */ || s.type == 163 /* GTID_LIST */ ||
        s.type == 161 /* BINLOG_CHECKPOINT */) {
      continue;
    }
    EXPECT_EQ(s.type, kMariaGtid) << "first event after the GTID start is type " << int(s.type);
    break;
  }
}

TEST(BinlogStreamTest, RejectsAGtidSetThatIsNotMariaDbSyntax) {
  BinlogStreamOptions options;
  options.server_id = 4200105;
  options.gtid_set = "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5";
  auto stream = BinlogStream::Open(Connect(), options);
  ASSERT_FALSE(stream.ok());
  EXPECT_EQ(stream.error().kind(), ErrorKind::kUsage);
}

TEST(BinlogStreamTest, HeartbeatsArriveWhileIdle) {
  BinlogStreamOptions options;
  options.server_id = 4200106;
  options.heartbeat_ms = 300;
  auto stream = BinlogStream::Open(Connect(5), options);
  ASSERT_TRUE(stream.ok()) << stream.error().message();
  auto began = std::chrono::steady_clock::now();
  int heartbeats = 0;
  // Other tests may write to the shared server meanwhile; heartbeats come in the idle gaps.
  while (heartbeats < 2 && std::chrono::steady_clock::now() - began < std::chrono::seconds(20)) {
    auto ev = (*stream)->Next();
    ASSERT_TRUE(ev.ok()) << ev.error().message();
    if (ev->type == kHeartbeat) {
      ++heartbeats;
      EXPECT_TRUE(ev->artificial);
      EXPECT_EQ(CompareCoordinates(ev->at.coordinate(), (*stream)->next_coordinate()), 0);
    }
  }
  EXPECT_EQ(heartbeats, 2);
}

// The read-ahead hands out what the stream itself reads, event by event and in order, with the
// same coordinates; through a rotation.
TEST(BinlogReadAheadTest, HandsOutTheStreamsEventsInOrder) {
  auto setup = Connect();
  ASSERT_NE(setup, nullptr);
  Exec(*setup, "CREATE DATABASE IF NOT EXISTS live_stream");
  Exec(*setup, "CREATE TABLE IF NOT EXISTS live_stream.ra (id INT PRIMARY KEY, note VARCHAR(64))");
  auto start = CurrentBinlogPosition(*setup);
  ASSERT_TRUE(start.ok()) << start.error().message();
  const std::string marker =
      "read-ahead-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  Exec(*setup, "DELETE FROM live_stream.ra");
  Exec(*setup, "INSERT INTO live_stream.ra SELECT seq, CONCAT('row ', seq) FROM live_stream.seq_1_to_500");
  Exec(*setup, "FLUSH BINARY LOGS");
  Exec(*setup, "UPDATE live_stream.ra SET note = CONCAT(note, ' changed') WHERE id <= 300");
  Exec(*setup, "INSERT INTO live_stream.ra VALUES (1000, '" + marker + "')");

  BinlogStreamOptions options;
  options.start = {start->file, start->position};
  options.heartbeat_ms = 1000;
  options.server_id = 4200110;
  auto direct = BinlogStream::Open(Connect(), options);
  ASSERT_TRUE(direct.ok()) << direct.error().message();
  auto is_marker = [&](const Seen& e) { return e.type == kWriteRowsV1 && Contains(e.bytes, marker); };
  std::vector<Seen> expected = ReadUntil(**direct, is_marker);
  ASSERT_FALSE(expected.empty());
  ASSERT_TRUE(is_marker(expected.back())) << "the marker row never arrived";

  // Read ahead (in small batches, so that the reading thread waits for room too), and without a
  // thread.
  for (bool read_ahead : {true, false}) {
    SCOPED_TRACE(read_ahead ? "read ahead" : "on the caller's thread");
    options.server_id = read_ahead ? 4200111 : 4200114;
    auto opened = BinlogStream::Open(Connect(), options);
    ASSERT_TRUE(opened.ok()) << opened.error().message();
    BinlogReadAhead ahead(std::move(*opened), read_ahead, 4096);
    EXPECT_EQ(ahead.checksum(), (*direct)->checksum());
    bool rotated = false;
    for (size_t i = 0; i < expected.size(); ++i) {
      if (expected[i].type == kHeartbeat) continue;  // heartbeats come when they come
      auto ev = ahead.Next();
      while (ev.ok() && ev->type == kHeartbeat) ev = ahead.Next();
      ASSERT_TRUE(ev.ok()) << "event " << i << ": " << ev.error().message();
      SCOPED_TRACE("event " + std::to_string(i) + " at " + expected[i].at.ToString());
      EXPECT_EQ(ev->type, expected[i].type);
      EXPECT_EQ(ev->artificial, expected[i].artificial);
      EXPECT_EQ(ev->at.file, expected[i].at.file);
      EXPECT_EQ(ev->at.position, expected[i].at.position);
      ASSERT_EQ(ev->bytes, expected[i].bytes);
      rotated = rotated || (ev->type == kRotate && !ev->artificial);
      if (!ev->artificial) {
        // Where the next event starts: right after this one in its file, or the rotation's file.
        EXPECT_TRUE(ev->type == kRotate ||
                    (ahead.next_coordinate().file == ev->at.file &&
                     ahead.next_coordinate().position == ev->at.position + ev->bytes.size()))
            << ahead.next_coordinate().ToString();
      }
    }
    EXPECT_TRUE(rotated) << "no real ROTATE among the events read ahead";
  }
}

// The stream's error comes from the read-ahead as the stream gives it.
TEST(BinlogReadAheadTest, GivesTheStreamsError) {
  BinlogStreamOptions options;
  options.server_id = 4200112;
  options.start = {"binlog.999999", 4};
  auto stream = BinlogStream::Open(Connect(), options);
  ASSERT_TRUE(stream.ok()) << stream.error().message();
  BinlogReadAhead ahead(std::move(*stream));
  auto ev = ahead.Next();
  ASSERT_FALSE(ev.ok());
  EXPECT_EQ(ev.error().server_code(), 1236);
  EXPECT_NE(ev.error().message().find("binlog.999999:4"), std::string::npos) << ev.error().message();
  auto again = ahead.Next();  // and keeps giving it
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().server_code(), 1236);
}

// Closing a read-ahead whose thread waits for the server (idle, no heartbeats asked) returns: its
// read is ended, not waited for (a hang here is what fails, by the test's timeout).
TEST(BinlogReadAheadTest, ClosesWhileItsReadWaits) {
  auto setup = Connect();
  ASSERT_NE(setup, nullptr);
  auto end = CurrentBinlogPosition(*setup);
  ASSERT_TRUE(end.ok()) << end.error().message();
  BinlogStreamOptions options;
  options.server_id = 4200113;
  options.start = {end->file, end->position};
  auto stream = BinlogStream::Open(Connect(3600), options);
  ASSERT_TRUE(stream.ok()) << stream.error().message();
  auto ahead = std::make_unique<BinlogReadAhead>(std::move(*stream));
  auto first = ahead->Next();  // the artificial ROTATE the server starts with
  ASSERT_TRUE(first.ok()) << first.error().message();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // its thread now waits in a read
  ahead.reset();
  SUCCEED();
}

TEST(BinlogStreamTest, ZeroServerIdIsRefused) {
  BinlogStreamOptions options;
  options.server_id = 0;
  auto stream = BinlogStream::Open(Connect(), options);
  ASSERT_FALSE(stream.ok());
  EXPECT_EQ(stream.error().kind(), ErrorKind::kUsage);
}

}  // namespace
}  // namespace chsync::mysql
