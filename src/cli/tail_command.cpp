// `chsync tail`: streams a live server's binlog as a replica and prints every event with its
// position and row values, one event per line (text or JSON). Exit 0 when --until-caught-up
// reached its target, 1 when the stream or an event failed (after printing what it could),
// 2 on bad usage.

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "binlog/decoder.h"
#include "binlog/event.h"
#include "binlog/event_printer.h"
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
  CLI::Option* gtid =
      sub->add_option("--from-gtid", options->from_gtid,
                      "start after this MariaDB GTID list, e.g. 0-1-42 (MySQL GTID sets: not yet)");
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
