// `chsync tail`: streams a live server's binlog as a replica and prints every event with its
// position and row values, one event per line (text or JSON). Exit 0 when --until-caught-up
// reached its target, 1 when the stream or an event failed (after printing what it could),
// 2 on bad usage.

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "binlog/decoder.h"
#include "binlog/event.h"
#include "binlog/event_printer.h"
#include "binlog/hires_temporal.h"
#include "cli/command.h"
#include "common/url.h"
#include "mysql/binlog_stream.h"
#include "mysql/connection.h"

namespace chsync::cli {
namespace {

struct TailOptions {
  std::string source;
  std::string from;
  std::string from_gtid;
  bool until_caught_up = false;
  std::optional<uint32_t> server_id;
  std::string format = "text";
  uint32_t heartbeat_ms = 0;
};

/// A replica id unlikely to clash with real replicas or with another `chsync tail` (the
/// server disconnects the older of two replicas with the same id).
uint32_t DefaultServerId() {
  return 0x43480000u | (static_cast<uint32_t>(getpid()) & 0xFFFFu);
}

int Fail(const Error& e) {
  fmt::print(stderr, "chsync tail: {}\n", e.message());
  return e.kind() == ErrorKind::kUsage ? kExitUsage : kExitFailure;
}

/// Writes `text` to stdout now: a tail is read while it runs.
bool Emit(const std::string& text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size()) return false;
  return std::fflush(stdout) == 0;
}

/// MariaDB 5.3 "hires" TIME(n)/DATETIME(n)/TIMESTAMP(n) columns (tables created with
/// mysql56_temporal_format=OFF) arrive in TABLE_MAP as the old type codes without their precision,
/// which their values' width depends on. tail asks the server's information_schema for it, on a
/// second connection opened the first time such a column shows up, once per table. That is the
/// table's precision now: a table altered since the event was written may decode wrongly (the
/// error then names the column).
class HiresPrecisions {
 public:
  explicit HiresPrecisions(mysql::ConnectOptions options) : options_(std::move(options)) {}

  Status Complete(binlog::TableMap& map) {
    bool old_temporal = false;
    for (const binlog::ColumnInfo& c : map.columns) {
      old_temporal = old_temporal || (binlog::IsOldTemporalType(c.type) && c.metadata == 0);
    }
    if (!old_temporal) return Status::Ok();
    std::string key = mysql::QuoteIdentifier(map.database) + "." + mysql::QuoteIdentifier(map.table);
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      CHSYNC_ASSIGN_OR_RETURN(std::vector<uint8_t> fsp, Lookup(map.database, map.table));
      it = cache_.emplace(key, std::move(fsp)).first;
    }
    if (it->second.size() != map.columns.size()) {
      // Dropped or changed since: the width of its temporal values cannot be known, and its
      // rows are left undecoded (DecodeRowsOf) rather than misread.
      if (unknown_.insert(key).second) {
        fmt::print(stderr,
                   "chsync tail: rows of {}.{} are not decoded: its TIME/DATETIME/TIMESTAMP columns may be "
                   "MariaDB 5.3 \"hires\" columns, whose precision is not in the binlog, and the server no "
                   "longer has the table as it was then (dropped or altered since)\n",
                   map.database, map.table);
      }
      return Status::Ok();
    }
    return binlog::SetHiresPrecision(map, it->second);
  }

  /// Whether rows of `map` can be decoded: not when it still has old temporal columns without a
  /// precision and the server could not say what it is.
  bool DecodeRowsOf(const binlog::TableMap& map) const {
    if (unknown_.empty()) return true;
    return !unknown_.contains(mysql::QuoteIdentifier(map.database) + "." + mysql::QuoteIdentifier(map.table));
  }

  /// After a statement that may have changed a table: look precisions up again.
  void Forget() {
    cache_.clear();
    unknown_.clear();
  }

 private:
  Result<std::vector<uint8_t>> Lookup(std::string_view database, std::string_view table) {
    if (!conn_) {
      auto opened = mysql::Connection::Open(options_);
      if (!opened.ok()) {
        return std::move(opened).error().AddContext(
            "reading the precision of MariaDB 5.3 temporal columns from information_schema");
      }
      conn_ = std::move(*opened);
    }
    CHSYNC_ASSIGN_OR_RETURN(
        mysql::QueryResult r,
        conn_->Query(
            "SELECT COALESCE(DATETIME_PRECISION, 0) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = " +
            mysql::QuoteString(database) + " AND TABLE_NAME = " + mysql::QuoteString(table) +
            " ORDER BY ORDINAL_POSITION"));
    std::vector<uint8_t> fsp;
    for (const auto& row : r.rows) {
      unsigned v =
          row.empty() || !row[0] ? 0 : static_cast<unsigned>(std::strtoul(row[0]->c_str(), nullptr, 10));
      fsp.push_back(static_cast<uint8_t>(v <= 6 ? v : 0));
    }
    return fsp;
  }

  mysql::ConnectOptions options_;
  std::unique_ptr<mysql::Connection> conn_;
  std::unordered_map<std::string, std::vector<uint8_t>> cache_;
  std::unordered_set<std::string> unknown_;
};

int RunTail(const TailOptions& o) {
  auto url = ParseUrl(o.source);
  if (!url.ok()) return Fail(url.error().AddContext("--source"));
  auto connect = mysql::OptionsFromUrl(*url);
  if (!connect.ok()) return Fail(connect.error().AddContext("--source"));

  mysql::BinlogStreamOptions stream_options;
  stream_options.server_id = o.server_id.value_or(DefaultServerId());
  stream_options.heartbeat_ms = o.heartbeat_ms != 0 ? o.heartbeat_ms : (o.until_caught_up ? 1000 : 30000);
  if (!o.from.empty()) {
    auto start = mysql::ParseCoordinate(o.from);
    if (!start.ok()) return Fail(start.error().AddContext("--from"));
    stream_options.start = *start;
  }
  stream_options.gtid_set = o.from_gtid;

  auto conn = mysql::Connection::Open(*connect);
  if (!conn.ok()) return Fail(conn.error());
  std::optional<mysql::BinlogCoordinate> target;
  if (o.until_caught_up) {
    auto current = mysql::CurrentBinlogPosition(**conn);
    if (!current.ok()) return Fail(current.error());
    target = *current;
  }
  auto stream = mysql::BinlogStream::Open(std::move(*conn), stream_options);
  if (!stream.ok()) return Fail(stream.error());

  binlog::DecoderOptions decoder_options;
  decoder_options.checksum_before_format =
      (*stream)->checksum() == "CRC32" ? binlog::ChecksumAlgorithm::kCrc32 : binlog::ChecksumAlgorithm::kNone;
  HiresPrecisions hires(*connect);
  if ((*stream)->is_mariadb()) {
    decoder_options.complete_table_map = [&hires](binlog::TableMap& map) { return hires.Complete(map); };
    decoder_options.decode_rows_of = [&hires](const binlog::TableMap& map) {
      return hires.DecodeRowsOf(map);
    };
  }
  binlog::Decoder decoder(decoder_options);
  binlog::PrintFormat format = o.format == "json" ? binlog::PrintFormat::kJson : binlog::PrintFormat::kText;
  auto caught_up = [&](const mysql::BinlogCoordinate& at) {
    return target && !at.file.empty() && mysql::CompareCoordinates(at, *target) >= 0;
  };

  std::string line;
  while (true) {
    auto ev = (*stream)->Next();
    if (!ev.ok()) return Fail(ev.error());
    if (decoder.file() != ev->at.file) decoder.SetFile(ev->at.file);
    auto decoded = decoder.Decode(ev->bytes, ev->at.position);
    if (!decoded.ok()) return Fail(decoded.error());

    if (const auto* hb = std::get_if<binlog::HeartbeatEvent>(&decoded->body)) {
      // Heartbeats are not binlog events: they only say how far the server is, which ends
      // --until-caught-up when no events are left to send.
      if (target && hb->log_file == (*stream)->next_coordinate().file &&
          caught_up({std::string(hb->log_file), decoded->header.log_pos})) {
        return kExitOk;
      }
      continue;
    }
    if (const auto* q = std::get_if<binlog::QueryEvent>(&decoded->body); q && q->query != "BEGIN")
      hires.Forget();
    line.clear();
    binlog::AppendEvent(*decoded, format, line);
    if (!Emit(line)) {
      fmt::print(stderr, "chsync tail: cannot write to standard output\n");
      return kExitFailure;
    }
    bool fake_rotate = ev->artificial && ev->type == static_cast<uint8_t>(binlog::EventType::kRotate);
    if (!fake_rotate && caught_up((*stream)->next_coordinate())) return kExitOk;
  }
}

void AddTailCommand(CLI::App& app, RunFunction& run) {
  auto options = std::make_shared<TailOptions>();
  CLI::App* sub = app.add_subcommand("tail", "Stream a server's binlog as a replica and print every event");
  sub->add_option("--source", options->source,
                  "mysql://USER:PASSWORD@HOST:PORT (password also from CHSYNC_SOURCE_PASSWORD)")
      ->required();
  CLI::Option* from = sub->add_option(
      "--from", options->from, "start at FILE:POS, e.g. binlog.000042:4 (default: the current position)");
  CLI::Option* gtid = sub->add_option(
      "--from-gtid", options->from_gtid,
      "start from GTIDs. MySQL: a GTID set such as 3e11fa47-71ca-11e1-9e33-c80aa9429562:1-42 of the "
      "transactions you already have (like gtid_executed); the server sends every transaction NOT in "
      "it (needs gtid_mode=ON). MariaDB: a GTID list such as 0-1-42; the stream starts after it");
  from->excludes(gtid);
  sub->add_flag("--until-caught-up", options->until_caught_up,
                "stop once the binlog position the server had at start is reached");
  sub->add_option(
         "--server-id", options->server_id,
         "replica server_id to register with, unique among the source's replicas (default: from the pid)")
      ->check(CLI::Range(1u, 0xFFFFFFFFu));
  sub->add_option("--format", options->format, "text (default) or json: one event per line")
      ->check(CLI::IsMember({"text", "json"}));
  sub->add_option(
         "--heartbeat-ms", options->heartbeat_ms,
         "ask for a heartbeat after this many idle milliseconds (default 30000; 1000 with --until-caught-up)")
      ->check(CLI::Range(1u, 300000u));
  sub->callback([options, &run] { run = [options] { return RunTail(*options); }; });
}

const CommandRegistration kRegistration{30, &AddTailCommand};

}  // namespace
}  // namespace chsync::cli
