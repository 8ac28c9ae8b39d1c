// `chsync check`: the preflight a user runs before creating a pipe. Connects to both ends and
// prints what chsync will rely on, then a verdict: exit 0 when a pipe can run, 1 with each
// blocking problem and what to change, 2 on bad usage.

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "clickhouse/capabilities.h"
#include "clickhouse/cluster.h"
#include "clickhouse/connection.h"
#include "clickhouse/ddl.h"
#include "clickhouse/sql_quoting.h"
#include "clickhouse/type_mapping.h"
#include "common/url.h"
#include "config/config.h"
#include "mysql/connection.h"
#include "mysql/managed_provider.h"
#include "mysql/server_probe.h"
#include "mysql/source_set.h"
#include "mysql/source_verdict.h"
#include "mysql/table_filter.h"
#include "mysql/table_inventory.h"
#include "policy/ddl_policy.h"
#include "policy/mapping.h"

namespace chsync::cli {
namespace {

struct CheckOptions {
  std::string config_file;  ///< --config: the pipe's configuration file; flags win over its keys
  bool replication_path_given = false;
  std::string source;
  std::string dest;
  std::string tables;
  std::string dest_cluster;
  std::string replication_path = "/clickhouse/tables/{shard}/{database}/{table}";
  std::string replica_name = "{replica}";
  /// --config's table_options and dest_database: each selected table's effective mapping.
  pipe::MappingSet mappings;
  std::string dest_database;
  bool datetime_fallback_text = false;  ///< --config's datetime_fallback: string
  /// --config's schema_changes, then --schema-policy: which tables without a key are refused.
  pipe::PolicySet policies;
  std::vector<std::string> schema_policies;
};

/// A finding of the preflight: blocking ones make the verdict fail.
struct Finding {
  bool blocking;
  std::string text;
};

class Report {
 public:
  void Section(std::string_view title) { fmt::print("\n{}\n", title); }
  void Line(std::string_view key, std::string_view value) { fmt::print("  {:<26} {}\n", key, value); }
  void Text(std::string_view text) { fmt::print("  {}\n", text); }
  void Block(std::string text) { findings_.push_back({true, std::move(text)}); }
  void Warn(std::string text) { findings_.push_back({false, std::move(text)}); }

  /// Prints the verdict and returns the exit code.
  int Verdict() {
    fmt::print("\nVerdict\n");
    int blocking = 0;
    for (const Finding& f : findings_) {
      if (f.blocking) {
        ++blocking;
        fmt::print("  BLOCKING  {}\n", f.text);
      }
    }
    for (const Finding& f : findings_) {
      if (!f.blocking) fmt::print("  warning   {}\n", f.text);
    }
    if (blocking == 0) {
      fmt::print("  OK: a pipe can run with this source and destination.\n");
      return kExitOk;
    }
    fmt::print("  {} blocking problem{}: fix {} and run chsync check again.\n", blocking,
               blocking == 1 ? "" : "s", blocking == 1 ? "it" : "them");
    return kExitFailure;
  }

 private:
  std::vector<Finding> findings_;
};

std::string OrEmpty(const std::string& value) {
  return value.empty() ? "(empty)" : value;
}

/// One replication channel of a source that is a replica: its lines, and warnings when it does not
/// position by GTID or does not run.
void CheckReplicaChannel(const mysql::ServerInfo& info, const mysql::ReplicaChannel& c,
                         const std::string& address, Report& report) {
  const std::string primary = c.PrimaryAddress();
  const std::string channel = c.name.empty() ? "" : " (channel '" + c.name + "')";
  report.Line(
      c.name.empty() ? "replica of" : "replica '" + c.name + "' of",
      fmt::format("{}, IO thread {}, SQL thread {}, {}", primary, c.io_running.empty() ? "?" : c.io_running,
                  c.sql_running.empty() ? "?" : c.sql_running,
                  c.seconds_behind ? fmt::format("{} s behind", *c.seconds_behind)
                                   : std::string("seconds behind unknown")));
  if (c.using_gtid) {
    report.Line("  Using_Gtid", OrEmpty(*c.using_gtid));
  } else if (c.auto_position) {
    report.Line("  Auto_Position", *c.auto_position ? "1" : "0");
  }
  if (!c.UsesGtid()) {
    const std::string for_channel = c.name.empty() ? "" : " FOR CHANNEL '" + c.name + "'";
    std::string how = "CHANGE MASTER TO MASTER_AUTO_POSITION=1" + for_channel;
    if (info.is_mariadb()) {
      how = "CHANGE MASTER " + (c.name.empty() ? "" : "'" + c.name + "' ") + "TO master_use_gtid=slave_pos";
    } else if (info.version.AtLeast(8, 0, 23)) {
      how = "CHANGE REPLICATION SOURCE TO SOURCE_AUTO_POSITION=1" + for_channel;
    }
    report.Warn(fmt::format(
        "replica {} replicates from {}{} by binlog file and position, not by GTID ({}): when {} fails over, "
        "the replica cannot be moved to the new primary by GTID, nor can a pipe that reads from it; stop "
        "replication, run {}, and start it again{}",
        address, primary, channel,
        c.using_gtid ? "Using_Gtid=" + OrEmpty(*c.using_gtid) : std::string("Auto_Position=0"), primary, how,
        info.is_mariadb() ? "" : " (needs gtid_mode=ON on the replica and its primary)"));
  }
  if (!c.ThreadsRunning()) {
    std::string errors;
    if (!c.last_io_error.empty()) errors += "; Last_IO_Error: " + c.last_io_error;
    if (!c.last_sql_error.empty()) errors += "; Last_SQL_Error: " + c.last_sql_error;
    report.Warn(fmt::format(
        "replication on {} from {}{} is not running (IO thread {}, SQL thread {}{}): its binlog "
        "is behind the primary, and a pipe that reads from it falls behind as much; fix the cause and run {}",
        address, primary, channel, c.io_running.empty() ? "?" : c.io_running,
        c.sql_running.empty() ? "?" : c.sql_running, errors,
        info.is_mariadb()                ? "START SLAVE" + (c.name.empty() ? "" : " '" + c.name + "'")
        : info.version.AtLeast(8, 0, 22) ? "START REPLICA"
                                         : "START SLAVE"));
  }
}

/// The GTID section: whether the source can be resumed by GTID and followed through a failover, and
/// when it is itself a replica, whether its binlog can feed a pipe.
void CheckGtid(const mysql::ServerInfo& info, const mysql::ConnectOptions& options, Report& report) {
  report.Section("GTID");
  const std::string address = options.Address();
  if (info.is_mariadb()) {
    report.Line("gtid_domain_id", info.gtid_domain_id ? std::to_string(*info.gtid_domain_id) : "unknown");
    report.Line("gtid_binlog_pos", info.gtid_position.empty() ? "(empty: no transaction in the binlog yet)"
                                                              : info.gtid_position);
    if (info.gtid_binlog_state && *info.gtid_binlog_state != info.gtid_position) {
      report.Line("gtid_binlog_state", *info.gtid_binlog_state);
    }
    if (!info.gtid_strict_mode.has_value()) {
      report.Line("gtid_strict_mode", "unknown (the server has no such variable)");
    } else {
      report.Line("gtid_strict_mode", *info.gtid_strict_mode ? "ON" : "OFF");  // judged by JudgeSource
    }
  } else {
    report.Line("gtid_mode", OrEmpty(info.gtid_mode));
    report.Line("enforce_gtid_consistency", info.enforce_gtid_consistency.value_or("unknown"));
    report.Line("gtid_executed", OrEmpty(info.gtid_position));
    if (info.gtid_purged) report.Line("gtid_purged", OrEmpty(*info.gtid_purged));
    // gtid_mode other than ON: a warning of JudgeSource.
  }

  if (!info.replica_channels.has_value()) {
    const std::string message =
        info.replica_status_error ? info.replica_status_error->message() : "no answer";
    report.Line("replica", "unknown: " + info.replica_status_statement + " failed: " + message);
    std::string grant =
        info.is_mariadb() && info.version.AtLeast(10, 5, 8) ? "SLAVE MONITOR" : "REPLICATION CLIENT";
    int code = info.replica_status_error ? info.replica_status_error->server_code() : 0;
    report.Warn(fmt::format(
        "cannot tell whether {} is a replica: {} failed{}; a replica feeds a pipe only with {}=ON, which "
        "chsync check verifies once it may run the statement: GRANT {} ON *.* TO '{}'@'…'",
        address, info.replica_status_statement, code != 0 ? fmt::format(" (error {})", code) : "",
        info.log_replica_updates_variable.empty() ? "log_slave_updates" : info.log_replica_updates_variable,
        grant, options.user));
    return;
  }
  if (!info.is_replica()) {
    report.Line("replica", "no (" + info.replica_status_statement + " shows no replication channel)");
    return;
  }
  for (const mysql::ReplicaChannel& c : *info.replica_channels) CheckReplicaChannel(info, c, address, report);
  if (info.is_mariadb() && info.gtid_slave_pos) report.Line("gtid_slave_pos", OrEmpty(*info.gtid_slave_pos));

  const std::string variable =
      info.log_replica_updates_variable.empty() ? "log_slave_updates" : info.log_replica_updates_variable;
  const std::string primaries = [&] {
    std::vector<std::string> all;
    for (const mysql::ReplicaChannel& c : *info.replica_channels) all.push_back(c.PrimaryAddress());
    return fmt::format("{}", fmt::join(all, ", "));
  }();
  std::string usable;
  if (!info.log_replica_updates.has_value()) {
    report.Line(variable, "unknown (the server has no such variable)");
    usable = "unknown: cannot tell whether its binlog has the replicated transactions";
    report.Warn(
        fmt::format("replica {}: neither log_replica_updates nor log_slave_updates is shown, so chsync "
                    "cannot tell whether its binlog has the transactions it replicates from {}; check "
                    "that one is ON, or point --source at {}",
                    address, primaries, primaries));
  } else if (!*info.log_replica_updates) {
    report.Line(variable, "OFF: its binlog lacks the replicated transactions");
    usable = fmt::format("no: {}=OFF", variable);  // blocking: a finding of JudgeSource
  } else {
    report.Line(variable, "ON: its binlog has the replicated transactions");
    bool gtid = std::all_of(info.replica_channels->begin(), info.replica_channels->end(),
                            [](const mysql::ReplicaChannel& c) { return c.UsesGtid(); });
    bool running = std::all_of(info.replica_channels->begin(), info.replica_channels->end(),
                               [](const mysql::ReplicaChannel& c) { return c.ThreadsRunning(); });
    usable = gtid && running ? "yes: it replicates by GTID and keeps up with its primary"
                             : fmt::format("yes, but {}{}{} (see the warnings)", gtid ? "" : "not by GTID",
                                           gtid || running ? "" : " and ", running ? "" : "not running");
  }
  report.Line("usable as a source", usable);
}

/// Foreign keys that change replicated rows without binlog row events (issue 33, case 9).
void CheckCascades(mysql::Connection& conn, const mysql::TableFilter& selected,
                   const std::string& dest_cluster, Report& report) {
  auto cascades = mysql::CascadingForeignKeys(conn, selected);
  if (!cascades.ok()) {
    report.Warn("reading the source's foreign keys failed: " + cascades.error().message());
    return;
  }
  if (cascades->empty()) return;
  std::string list;
  size_t unfollowed = 0;
  for (const mysql::CascadingForeignKey& fk : *cascades) {
    // What `chsync run` decides (pipe/cascades.h), as far as the source tells.
    std::string why;
    if (!selected.Matches(fk.parent_database, fk.parent_table)) {
      why = "its parent table is not replicated";
    } else if (!dest_cluster.empty()) {
      why = "chsync does not follow cascades on a cluster destination yet";
    }
    list += "\n      " + fk.Describe() + (why.empty() ? ": followed" : ": not followed, " + why);
    unfollowed += why.empty() ? 0 : 1;
  }
  if (unfollowed == 0) {
    // Nothing to warn about: the stream applies them (docs/delivery.md, "Foreign-key cascades").
    report.Line("cascading keys",
                fmt::format("{} followed in ClickHouse from the parent's row changes", cascades->size()));
    return;
  }
  report.Warn(fmt::format(
      "{} cascading foreign key{} change{} replicated tables inside the storage engine, without binlog row "
      "events, "
      "and chsync cannot follow {} of them: ClickHouse keeps the child rows their cascades change or remove. "
      "After such a change run `chsync resync --table CHILD` (and `chsync verify` to find them), or "
      "replicate the "
      "parent table too:{}",
      cascades->size(), cascades->size() == 1 ? "" : "s", cascades->size() == 1 ? "s" : "", unfollowed,
      list));
}

/// Under "Tables": each table's effective mapping (table_options), checked against its source
/// columns as `chsync run` checks it at start-up (without the server's capabilities).
void CheckMappings(mysql::Connection& conn, bool mariadb, const std::vector<mysql::TableInfo>& tables,
                   const CheckOptions& o, Report& report) {
  std::vector<std::string> databases;
  std::vector<std::pair<std::string, std::string>> names;
  for (const mysql::TableInfo& t : tables) {
    if (std::find(databases.begin(), databases.end(), t.database) == databases.end())
      databases.push_back(t.database);
    names.emplace_back(t.database, t.name);
  }
  report.Section("Mapping  table_options of " + o.config_file);
  if (Status s = o.mappings.CheckDestinations(names, o.dest_database); !s.ok())
    report.Block(s.error().message());
  auto schemas = mysql::LoadTableSchemas(conn, databases, mariadb);
  if (!schemas.ok()) {
    report.Block("reading the source tables' columns failed: " + schemas.error().message());
    return;
  }
  for (const schema::TableSchema& t : *schemas) {
    if (std::find(names.begin(), names.end(), std::pair{t.database, t.name}) == names.end()) continue;
    const pipe::EffectiveMapping m = o.mappings.For(t.database, t.name, o.dest_database);
    for (const std::string& line : m.Describe()) fmt::print("  {}\n", line);
    if (Status valid = pipe::Validate(m, t); !valid.ok()) report.Block(valid.error().message());
  }
}

/// The selected tables without a primary key: those with no NOT NULL unique key either are sorted by
/// every column in ClickHouse (docs/types.md, "Keys"). Under keyless=refuse, the default, `run` parks
/// each at once: blocking. Under keyless=distinct, a warning that identical rows collapse.
void CheckKeyless(mysql::Connection& conn, bool mariadb, const std::vector<mysql::TableInfo>& tables,
                  const CheckOptions& o, Report& report) {
  std::vector<std::string> databases;
  for (const mysql::TableInfo& t : tables) {
    if (t.primary_key.empty() && std::find(databases.begin(), databases.end(), t.database) == databases.end())
      databases.push_back(t.database);
  }
  auto schemas = mysql::LoadTableSchemas(conn, databases, mariadb);
  if (!schemas.ok()) {
    report.Warn("cannot read the columns of the tables without a primary key: " + schemas.error().message());
    return;
  }
  std::vector<std::string> distinct;
  for (const schema::TableSchema& t : *schemas) {
    const bool selected = std::any_of(tables.begin(), tables.end(), [&](const mysql::TableInfo& i) {
      return i.database == t.database && i.name == t.name && i.primary_key.empty();
    });
    if (!selected || !clickhouse::ChooseSortingKey(t).full_row) continue;
    const pipe::SchemaPolicy policy = o.policies.For(t.database, t.name);
    if (std::optional<std::string> refused = pipe::KeylessRefusal(t, policy)) {
      report.Block(*refused + "; until then `chsync run` parks it");
    } else {
      distinct.push_back(t.QualifiedName());
    }
  }
  if (!distinct.empty()) {
    report.Warn(fmt::format(
        "{} without a primary key or NOT NULL unique key, replicated as the set of {} distinct rows "
        "(keyless=distinct): rows equal in every column are one row in ClickHouse",
        fmt::join(distinct, ", "), distinct.size() == 1 ? "its" : "their"));
  }
}

/// The selected tables that have DATE, DATETIME or TIMESTAMP columns, for CheckTemporal; empty
/// (with a note) when their columns cannot be read.
std::vector<schema::TableSchema> TemporalTables(mysql::Connection& conn, bool mariadb,
                                                const std::vector<mysql::TableInfo>& tables, Report& report) {
  std::vector<std::string> databases;
  for (const mysql::TableInfo& t : tables) {
    if (std::find(databases.begin(), databases.end(), t.database) == databases.end())
      databases.push_back(t.database);
  }
  auto schemas = mysql::LoadTableSchemas(conn, databases, mariadb);
  if (!schemas.ok()) {
    report.Text("cannot read the tables' columns for the date checks: " + schemas.error().message());
    return {};
  }
  std::vector<schema::TableSchema> out;
  for (schema::TableSchema& t : *schemas) {
    const bool selected = std::any_of(tables.begin(), tables.end(), [&](const mysql::TableInfo& i) {
      return i.database == t.database && i.name == t.name;
    });
    const bool temporal = std::any_of(t.columns.begin(), t.columns.end(), [](const schema::Column& c) {
      return c.type == schema::ColumnType::kDate || c.type == schema::ColumnType::kDateTime ||
             c.type == schema::ColumnType::kTimestamp;
    });
    if (selected && temporal) out.push_back(std::move(t));
  }
  return out;
}

/// Under the destination: what its types do to the source's dates. Without DateTime64, a warning
/// per DATETIME/TIMESTAMP column with fractional seconds (dropped, unless datetime_fallback: string
/// keeps them as text); and a warning per table whose DATE/DATETIME values outside the ClickHouse
/// type's range will be clamped.
void CheckTemporal(const clickhouse::Capabilities& server_caps,
                   const std::vector<schema::TableSchema>& tables, const CheckOptions& o, Report& report) {
  clickhouse::Capabilities caps = server_caps;
  caps.datetime_fallback_text = o.datetime_fallback_text;
  const std::string version = fmt::format("{}.{}", caps.version.major, caps.version.minor);
  const clickhouse::ServerVersion first = clickhouse::FirstVersionWith("datetime64");
  const std::string since = fmt::format("{}.{}", first.major, first.minor);
  for (const schema::TableSchema& t : tables) {
    std::vector<std::string> clamped;
    for (const schema::Column& c : t.columns) {
      auto mapped = clickhouse::MapColumn(c, caps);
      if (!mapped.ok()) continue;
      const std::string name = t.QualifiedName() + "." + c.name;
      std::string type = c.TypeText();
      std::transform(type.begin(), type.end(), type.begin(),
                     [](unsigned char ch) { return std::toupper(ch); });
      if ((c.type == schema::ColumnType::kDateTime || c.type == schema::ColumnType::kTimestamp) &&
          c.fsp.value_or(0) > 0 && !caps.datetime64) {
        if (mapped->encoding == clickhouse::Encoding::kDateTimeText) {
          report.Text(
              fmt::format("{} {}: ClickHouse {} has no DateTime64 ({}+): kept exactly as text in a "
                          "String (datetime_fallback: string)",
                          name, type, version, since));
        } else {
          report.Warn(
              fmt::format("{} {}: ClickHouse {} has no DateTime64 ({}+): its fraction is dropped; set "
                          "datetime_fallback: string to keep it as text, or upgrade",
                          name, type, version, since));
        }
      }
      switch (mapped->encoding) {
        case clickhouse::Encoding::kDate:
          clamped.push_back(c.name + " (Date, 1970-01-01..2105-12-31)");
          break;
        case clickhouse::Encoding::kDate32:
          clamped.push_back(c.name + " (Date32, 1900-01-01..2299-12-31)");
          break;
        case clickhouse::Encoding::kDateTime:
          // A TIMESTAMP (1970..2038) always fits.
          if (c.type == schema::ColumnType::kDateTime)
            clamped.push_back(c.name + " (DateTime, 1970-01-01 00:00:00..2105-12-31 23:59:59)");
          break;
        default: break;
      }
    }
    if (!clamped.empty()) {
      report.Warn(
          fmt::format("{}: values outside the ClickHouse type's range will be clamped to its first or "
                      "last value and counted (log, chsync_values_clamped_total): {}",
                      t.QualifiedName(), fmt::join(clamped, ", ")));
    }
  }
}

void CheckSource(const mysql::ConnectOptions& options, const std::optional<mysql::TableFilter>& filter,
                 const CheckOptions& o, Report& report, std::vector<schema::TableSchema>* temporal) {
  report.Section(fmt::format("Source  mysql://{}:***@{}", options.user, options.Address()));
  auto conn = mysql::Connection::Open(options);
  if (!conn.ok()) {
    report.Text("cannot connect: " + conn.error().message());
    std::string what = conn.error().kind() == ErrorKind::kAuth
                           ? "check the user name and password of --source"
                       : conn.error().kind() == ErrorKind::kConfig
                           ? "fix the TLS parameters of --source (ssl, ssl-ca) or the server's TLS setup"
                           : "check that the server runs and that host and port of --source are right";
    if (conn.error().message().find("SSH tunnel") != std::string::npos) {  // it says what to do itself
      report.Block("source " + options.Address() + ": " + conn.error().message());
      return;
    }
    report.Block("source " + options.Address() + " unreachable: " + conn.error().message() + "; " + what);
    return;
  }
  auto probe = mysql::Probe(**conn);
  if (!probe.ok()) {
    report.Block("source " + options.Address() + ": " + probe.error().message());
    return;
  }
  mysql::ServerInfo& info = *probe;
  const mysql::ProviderGuess provider = mysql::DetectProvider(info.variables);
  if (provider.provider == mysql::Provider::kRds || provider.provider == mysql::Provider::kAurora) {
    // RDS and Aurora purge binlogs by their own setting, not by binlog_expire_logs_seconds.
    if (auto hours = mysql::ReadRdsBinlogRetention(**conn); hours.ok())
      info.rds_binlog_retention_hours = *hours;
  }
  // Every decision on the settings below, a pure function of what the server said.
  const mysql::SourceVerdict verdict = mysql::JudgeSource(info, options.Address(), options.user);
  for (const mysql::SourceFinding& f : verdict.findings) {
    if (f.blocking) {
      report.Block(f.text);
    } else {
      report.Warn(f.text);
    }
  }
  report.Line("flavor", mysql::FlavorName(info.flavor));
  if (provider.managed()) {
    report.Line("provider",
                fmt::format("{} ({})", mysql::ProviderName(provider.provider), provider.evidence));
  }
  report.Line("version",
              info.version_string + (info.version_comment.empty() ? "" : " (" + info.version_comment + ")"));
  report.Line("server_id", std::to_string(info.server_id));
  if (auto tls = (*conn)->ServerTlsStatus(); tls.ok()) {  // as the server sees this session
    report.Line("tls", tls->empty() ? "off: plain TCP (add ssl-ca=FILE to --source for TLS)"
                       : options.tls_ca.empty()
                           ? *tls + ", server certificate NOT verified (no ssl-ca)"
                           : *tls + ", server certificate verified against " + options.tls_ca);
  }
  report.Line("binlog", info.log_bin ? "ON" : "OFF");
  report.Line("binlog_format", info.binlog_format);
  report.Line("binlog_row_image", info.binlog_row_image);
  std::string metadata;
  if (!info.row_metadata_supported) {
    metadata = fmt::format("not available on {} {} (needs {}): ordinal mode, columns matched by position",
                           mysql::FlavorName(info.flavor), info.version.ToString(),
                           info.is_mariadb() ? "MariaDB 10.5" : "MySQL 8.0.1");
  } else if (info.binlog_row_metadata.value_or("MINIMAL") == "FULL") {
    metadata = "FULL: columns matched by name, every row checked against the tracked schema";
  } else {
    metadata = "MINIMAL: ordinal mode, columns matched by position";
  }
  report.Line("binlog_row_metadata", metadata);
  if (info.binlog_row_value_options.has_value()) {
    std::string v = info.binlog_row_value_options->empty() ? "(empty)" : *info.binlog_row_value_options;
    report.Line("binlog_row_value_options",
                v + (info.binlog_row_value_options->empty() ? "" : ": partial JSON updates are decoded"));
  } else {
    report.Line("binlog_row_value_options", fmt::format("not on {}", mysql::FlavorName(info.flavor)));
  }
  report.Line("binlog_checksum", info.binlog_checksum.empty() ? "unknown" : info.binlog_checksum);
  report.Line("binlog retention", verdict.retention);
  if (info.binlog_status_error) {
    report.Line("binlog position",
                info.binlog_status_statement + " failed: " + info.binlog_status_error->message());
  } else if (info.binlog_file.empty()) {
    report.Line("binlog position", info.binlog_status_statement + " returned no row");
  } else {
    report.Line("binlog position", fmt::format("{}:{} ({})", info.binlog_file, info.binlog_position,
                                               info.binlog_status_statement));
  }
  std::vector<std::string> missing = info.MissingReplicationPrivileges();
  report.Line("privileges", missing.empty() ? "REPLICATION SLAVE, REPLICATION CLIENT: granted"
                                            : "missing " + fmt::format("{}", fmt::join(missing, ", ")));
  CheckGtid(info, options, report);

  mysql::TableFilter selected = filter ? *filter : mysql::TableFilter::All();
  auto tables = mysql::InspectTables(**conn, selected);
  if (!tables.ok()) {
    report.Block("listing the source tables failed: " + tables.error().message());
    return;
  }
  report.Section(fmt::format("Tables  {} selected by '{}'", tables->size(), selected.spec()));
  if (tables->empty() && filter) {
    report.Block(
        fmt::format("no table matches --tables '{}': check the pattern (DB.TABLE, DB.*, wildcards * and ?) "
                    "and that user '{}' can see the tables",
                    selected.spec(), options.user));
  } else if (tables->empty()) {
    report.Block(
        fmt::format("user '{}' sees no table outside the system schemas: create the tables to replicate, "
                    "or GRANT SELECT on them",
                    options.user));
  }
  int without_key = 0;
  for (const mysql::TableInfo& t : *tables) {
    std::string key = t.primary_key.empty()
                          ? "NO PRIMARY KEY"
                          : "primary key (" + fmt::format("{}", fmt::join(t.primary_key, ", ")) + ")";
    fmt::print("  {}.{}  {}, ~{} rows{}\n", t.database, t.name, key, t.row_estimate,
               t.engine.empty() ? "" : ", " + t.engine);
    if (t.primary_key.empty()) ++without_key;
    for (const mysql::ColumnNote& n : t.notes) {
      if (n.column.empty()) {
        fmt::print("      note: {}\n", n.note);
      } else {
        fmt::print("      column {} {}: {}\n", n.column, n.column_type, n.note);
      }
    }
    if (!t.select_ok) {
      report.Block(fmt::format("user '{}' cannot read {}.{}: GRANT SELECT ON `{}`.* TO '{}'@'…' ({})",
                               options.user, t.database, t.name, t.database, options.user, t.select_error));
    }
  }
  if (without_key > 0) CheckKeyless(**conn, info.is_mariadb(), *tables, o, report);
  if (!tables->empty()) CheckCascades(**conn, selected, o.dest_cluster, report);
  if (!o.config_file.empty() && !tables->empty())
    CheckMappings(**conn, info.is_mariadb(), *tables, o, report);
  if (temporal != nullptr && !tables->empty())
    *temporal = TemporalTables(**conn, info.is_mariadb(), *tables, report);
}

void CheckDestination(const Url& url, const std::vector<schema::TableSchema>& temporal, const CheckOptions& o,
                      Report& report) {
  report.Section("Destination  " + url.Redacted());
  clickhouse::ConnectOptions options;
  options.retry.max_attempts = 1;  // a preflight reports at once
  auto conn = clickhouse::Connect(url, options);
  if (!conn.ok()) {
    report.Text("cannot open: " + conn.error().message());
    report.Block("destination: " + conn.error().message());
    return;
  }
  auto version = (*conn)->Version();
  if (!version.ok()) {
    report.Text("cannot query: " + version.error().message());
    std::string what =
        version.error().kind() == ErrorKind::kAuth      ? "check the user name and password of --dest"
        : version.error().kind() == ErrorKind::kNetwork ? "check that ClickHouse runs and that host and port "
                                                          "of --dest are right (HTTP port, 8123 by default)"
        : version.error().kind() == ErrorKind::kConfig
            ? "fix the TLS parameters of --dest (ssl-ca, ssl-verify)"
            : "see the server's message";
    if (version.error().message().find("SSH tunnel") != std::string::npos) {  // it says what to do itself
      report.Block("destination " + (*conn)->Describe() + ": " + version.error().message());
      return;
    }
    report.Block("destination " + (*conn)->Describe() + ": " + version.error().message() + "; " + what);
    return;
  }
  report.Line("engine", (*conn)->embedded()     ? "embedded ClickHouse (chDB)"
                        : url.scheme == "https" ? "ClickHouse server over HTTPS"
                                                : "ClickHouse server over HTTP");
  report.Line("version", version->ToString());
  clickhouse::Capabilities caps = clickhouse::FromVersion(*version);
  for (const auto& [name, available] : clickhouse::ListCapabilities(caps)) {
    report.Line(name, available ? "yes" : "no");
  }
  CheckTemporal(caps, temporal, o, report);
}

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

/// `chsync check --dest-cluster`: the cluster's topology, and on every node given in --dest its
/// version, its macros, that ZooKeeper answers and that the distributed DDL queue exists.
void CheckCluster(const std::vector<Url>& urls, const CheckOptions& o, Report& report) {
  report.Section("Cluster  " + o.dest_cluster);
  clickhouse::ConnectOptions options;
  options.retry.max_attempts = 1;
  std::vector<std::string> needed = clickhouse::ServerMacros(o.replication_path);
  for (const std::string& m : clickhouse::ServerMacros(o.replica_name)) {
    if (std::find(needed.begin(), needed.end(), m) == needed.end()) needed.push_back(m);
  }
  std::optional<clickhouse::ClusterTopology> topology;
  std::string first_version;
  for (const Url& url : urls) {
    auto conn = clickhouse::Connect(url, options);
    if (!conn.ok()) continue;
    clickhouse::Connection& c = **conn;
    auto version = c.Query("SELECT version()");
    if (!version.ok()) continue;  // reported in its Destination section
    std::string v = Trimmed(*version);
    if (first_version.empty()) first_version = v;
    if (v.substr(0, v.find('.', v.find('.') + 1)) !=
        first_version.substr(0, first_version.find('.', first_version.find('.') + 1))) {
      report.Block(
          fmt::format("{} runs ClickHouse {}, another node {}: run one version (major.minor) on every node "
                      "of the cluster",
                      c.Describe(), v, first_version));
    }
    if (!topology) {
      auto rows = c.Query(clickhouse::TopologyQuery(o.dest_cluster));
      if (rows.ok()) {
        auto parsed = clickhouse::ParseTopology(o.dest_cluster, *rows);
        if (parsed.ok()) {
          topology = std::move(parsed).value();
          report.Line("topology", topology->Describe());
        } else {
          auto known = c.Query("SELECT DISTINCT cluster FROM system.clusters ORDER BY cluster");
          std::string list = known.ok() ? Trimmed(*known) : "";
          std::replace(list.begin(), list.end(), '\n', ' ');
          report.Line("topology", "not defined on " + c.Describe());
          report.Block(
              fmt::format("cluster '{}' is not defined on {} (its clusters: {}); name one of them in "
                          "--dest-cluster, or define it in remote_servers of every node",
                          o.dest_cluster, c.Describe(), list.empty() ? "none" : list));
        }
      }
    }
    auto macros = c.Query("SELECT macro, substitution FROM system.macros ORDER BY macro");
    std::string have;
    std::vector<std::string> names;
    if (macros.ok()) {
      for (const auto& [name, value] : clickhouse::ParsePairs(*macros)) {
        names.push_back(name);
        have.append(have.empty() ? "" : " ").append(name).append("=").append(value);
      }
    }
    for (const std::string& m : needed) {
      if (std::find(names.begin(), names.end(), m) == names.end()) {
        report.Block(
            fmt::format("{} has no macro {{{}}} (used by the table path '{}' or replica name '{}'); add it "
                        "to <macros> in its config, or choose a --dest-replication-path with the macros it "
                        "has ({})",
                        c.Describe(), m, o.replication_path, o.replica_name, have.empty() ? "none" : have));
      }
    }
    auto zk = c.Query("SELECT count() FROM system.zookeeper WHERE path = '/'");
    auto queue = c.Query("SELECT count() FROM system.zookeeper WHERE path = '/clickhouse/task_queue'");
    report.Line(c.Describe(),
                fmt::format("ClickHouse {}; macros {}; ZooKeeper {}", v, have.empty() ? "none" : have,
                            zk.ok() ? "answers" : "does not answer"));
    if (!zk.ok()) {
      report.Block(c.Describe() + ": ZooKeeper does not answer (" + zk.error().message() +
                   "); replicated tables and ON CLUSTER statements need it: check <zookeeper> in its config");
    } else if (queue.ok() && queue->starts_with("0")) {
      report.Warn(c.Describe() +
                  ": no distributed DDL queue at /clickhouse/task_queue/ddl yet (it appears with "
                  "the first ON CLUSTER statement; check <distributed_ddl> if ON CLUSTER fails)");
    }
  }
  if (topology && topology->shards() > 1) {
    report.Text(
        "tables: <database>_local.<table> (ReplicatedReplacingMergeTree) on every shard, and a Distributed "
        "<database>.<table> over them sharded by the primary key");
  } else if (topology) {
    report.Text("tables: <database>.<table> (ReplicatedReplacingMergeTree) on every replica");
  }
}

/// Warnings for files holding a password that every user of the host may read (mode o+r): the
/// configuration file `path` when a source or dest URL in it has a password, and the password
/// files it names. Each says how to fix it.
std::vector<std::string> ReadableSecretWarnings(const std::string& path, const pipe::PipeConfig& file) {
  std::vector<std::string> out;
  auto readable_by_others = [&out](const std::string& at, const std::string& what, const std::string& fix) {
    struct stat st {};
    if (stat(at.c_str(), &st) != 0 || (st.st_mode & S_IROTH) == 0) return;
    out.push_back(fmt::format("{} {} and every user of this host can read it (mode {:04o}): {}", at, what,
                              st.st_mode & 07777, fix));
  };
  std::vector<std::string> keys;
  for (const auto& [key, urls] : {std::pair{"source", file.source}, std::pair{"dest", file.dest}}) {
    for (const std::string& text : clickhouse::SplitUrls(urls)) {
      auto url = ParseUrl(text);
      if (url.ok() && url->has_password) {
        keys.emplace_back(key);
        break;
      }
    }
  }
  if (!keys.empty()) {
    readable_by_others(path, fmt::format("holds a password (in {})", fmt::join(keys, " and ")),
                       fmt::format("chmod o-r {0} (root:chsync 0640 for the chsync service), or move the "
                                   "password into an environment file (CHSYNC_SOURCE_PASSWORD=…, "
                                   "CHSYNC_DEST_PASSWORD=…, mode 0600) or a file named by "
                                   "source_password_file / dest_password_file",
                                   path));
  }
  for (const auto& [key, name] : {std::pair{"source_password_file", file.source_password_file},
                                  std::pair{"dest_password_file", file.dest_password_file}}) {
    if (name.empty()) continue;
    // As LoadConfigFile reads it: relative to the configuration file's folder.
    std::string at = name;
    size_t slash = path.rfind('/');
    if (at.front() != '/' && slash != std::string::npos) at.insert(0, path, 0, slash + 1);
    readable_by_others(at, fmt::format("(the {} of {}) holds a password", key, path),
                       fmt::format("chmod o-r {} (root:chsync 0640 for the chsync service)", at));
  }
  return out;
}

/// --config: the pipe's source, destination, tables and cluster settings for the flags not given,
/// and the warnings of ReadableSecretWarnings. Exit code kExitUsage when the file is bad.
int ApplyConfigFile(CheckOptions& o, std::vector<std::string>& warnings) {
  pipe::PipeConfig file;
  Status loaded = pipe::LoadConfigFile(o.config_file, file);
  if (!loaded.ok()) {
    fmt::print(stderr, "chsync check: {}\n", loaded.error().message());
    return kExitUsage;
  }
  if (o.source.empty()) o.source = file.source;
  if (o.dest.empty()) o.dest = file.dest;
  // source_ssh: / dest_ssh: apply to --source and --dest too.
  file.source = o.source;
  file.dest = o.dest;
  if (Status ssh = pipe::ApplySshKeys(file); !ssh.ok()) {
    fmt::print(stderr, "chsync check: {}: {}\n", o.config_file, ssh.error().message());
    return kExitUsage;
  }
  o.source = file.source;
  o.dest = file.dest;
  if (o.tables.empty()) o.tables = file.tables;
  if (o.dest_cluster.empty()) o.dest_cluster = file.dest_cluster;
  if (!o.replication_path_given) o.replication_path = file.dest_replication_path;
  o.replica_name = file.dest_replica_name;
  o.mappings = file.mappings;
  o.dest_database = file.dest_database;
  o.datetime_fallback_text = file.datetime_fallback == pipe::PipeConfig::DateTimeFallback::kString;
  o.policies = file.policies;
  warnings = ReadableSecretWarnings(o.config_file, file);
  return kExitOk;
}

int RunCheck(CheckOptions o) {
  std::vector<std::string> config_warnings;
  if (!o.config_file.empty()) {
    if (int code = ApplyConfigFile(o, config_warnings); code != kExitOk) return code;
  }
  for (const std::string& assignment : o.schema_policies) {
    if (Status assigned = o.policies.Assign(assignment); !assigned.ok()) {
      fmt::print(stderr, "chsync check: {}\n", assigned.error().message());
      return kExitUsage;
    }
  }
  if (o.source.empty() || o.dest.empty()) {
    fmt::print(stderr, "chsync check: give --source and --dest, or --config FILE with source: and dest:\n");
    return kExitUsage;
  }
  // Several --source URLs (a primary and its replicas): each server gets its own section.
  std::vector<mysql::ConnectOptions> sources;
  auto set = mysql::SourceSet::Parse(o.source);
  if (!set.ok()) {
    fmt::print(stderr, "chsync check: --source: {}\n", set.error().message());
    return kExitUsage;
  }
  for (const std::string& text : set->urls()) {
    auto source_url = ParseUrl(text);
    if (!source_url.ok()) {
      fmt::print(stderr, "chsync check: --source: {}\n", source_url.error().message());
      return kExitUsage;
    }
    auto source = mysql::OptionsFromUrl(*source_url);
    if (!source.ok()) {
      fmt::print(stderr, "chsync check: --source: {}\n", source.error().message());
      return kExitUsage;
    }
    sources.push_back(std::move(source).value());
  }
  std::vector<Url> dest_urls;
  for (const std::string& text : clickhouse::SplitUrls(o.dest)) {
    auto dest_url = ParseUrl(text);
    if (!dest_url.ok()) {
      fmt::print(stderr, "chsync check: --dest: {}\n", dest_url.error().message());
      return kExitUsage;
    }
    if (dest_url->scheme != "http" && dest_url->scheme != "https" &&
        (dest_url->scheme != "file" || !o.dest_cluster.empty())) {
      fmt::print(stderr, "chsync check: --dest must be http(s)://USER:PASSWORD@HOST:PORT{} (got {})\n",
                 o.dest_cluster.empty() ? " or file:PATH" : " (a cluster's nodes)", dest_url->Redacted());
      return kExitUsage;
    }
    dest_urls.push_back(std::move(dest_url).value());
  }
  if (dest_urls.empty()) {
    fmt::print(stderr, "chsync check: --dest is empty\n");
    return kExitUsage;
  }
  std::optional<mysql::TableFilter> filter;
  if (!o.tables.empty()) {
    auto f = mysql::TableFilter::Parse(o.tables);
    if (!f.ok()) {
      fmt::print(stderr, "chsync check: {}\n", f.error().message());
      return kExitUsage;
    }
    filter = std::move(*f);
  }
  Report report;
  fmt::print("chsync check\n");
  for (std::string& warning : config_warnings) report.Warn(std::move(warning));
  std::vector<schema::TableSchema> temporal;  // the first source's tables with dates
  for (const mysql::ConnectOptions& source : sources)
    CheckSource(source, filter, o, report, &source == &sources.front() ? &temporal : nullptr);
  for (const Url& url : dest_urls) CheckDestination(url, temporal, o, report);
  if (!o.dest_cluster.empty()) CheckCluster(dest_urls, o, report);
  int code = report.Verdict();
  std::fflush(stdout);
  return code;
}

void AddCheckCommand(CLI::App& app, RunFunction& run) {
  auto options = std::make_shared<CheckOptions>();
  CLI::App* sub =
      app.add_subcommand("check", "Preflight: check that a source and a destination can run a pipe");
  sub->add_option("--config", options->config_file,
                  "the pipe's YAML configuration file: source, dest, tables and cluster keys for the flags "
                  "not given; warns when it holds a password that others can read");
  sub->add_option("--source", options->source,
                  "mysql://USER:PASSWORD@HOST:PORT (password also from CHSYNC_SOURCE_PASSWORD); several, "
                  "comma-separated: a primary and its replicas, each checked");
  sub->add_option(
      "--dest", options->dest,
      "http(s)://USER:PASSWORD@HOST:PORT for a ClickHouse server (several, comma-separated, for a "
      "cluster's nodes), file:PATH for an embedded store (password also from CHSYNC_DEST_PASSWORD)");
  sub->add_option("--tables", options->tables, "tables to replicate: 'db.*,db2.t,!db.tmp_*' (default: all)");
  sub->add_option("--dest-cluster", options->dest_cluster,
                  "a ClickHouse cluster: report its topology, and each --dest node's macros and ZooKeeper");
  sub->add_option("--dest-replication-path", options->replication_path,
                  "ZooKeeper path pattern of the Replicated tables, whose macros each node must have");
  sub->add_option("--schema-policy", options->schema_policies,
                  "KEY=VALUE or DB.TABLE:KEY=VALUE, as for run (e.g. keyless=distinct)")
      ->allow_extra_args(false);
  sub->callback([options, sub, &run] {
    options->replication_path_given = sub->count("--dest-replication-path") > 0;
    run = [options] { return RunCheck(*options); };
  });
}

const CommandRegistration kRegistration{10, &AddCheckCommand};

}  // namespace
}  // namespace chsync::cli
