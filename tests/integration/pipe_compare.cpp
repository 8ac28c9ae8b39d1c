#include "pipe_compare.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "test_env.h"

namespace chsync::testing {
namespace {

// ---------------------------------------------------------------------------------------------
// Processes

int ExitCodeOf(int status, int* signal_out) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status) && signal_out != nullptr) *signal_out = WTERMSIG(status);
  return -1;
}

[[noreturn]] void ExecChild(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execv(args[0], args.data());
  _exit(127);
}

// ---------------------------------------------------------------------------------------------
// Canonical values

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string QuoteMy(const std::string& name) {
  return mysql::QuoteIdentifier(name);
}

/// ClickHouse identifier in backquotes (accepted by 18.16 and current servers).
std::string QuoteCh(const std::string& name) {
  std::string out = "`";
  for (char c : name) {
    if (c == '`' || c == '\\') out += '\\';
    out += c;
  }
  return out + "`";
}

/// Numerically canonical decimal text: no '+', no leading zeros, no trailing fraction zeros,
/// "0" for any zero.
std::string CanonicalDecimal(const std::string& text) {
  std::string s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.erase(0, 1);
  }
  if (s.empty() || s.find_first_not_of("0123456789.") != std::string::npos) return text;  // not a decimal
  size_t dot = s.find('.');
  std::string int_part = dot == std::string::npos ? s : s.substr(0, dot);
  std::string frac = dot == std::string::npos ? "" : s.substr(dot + 1);
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  size_t nz = int_part.find_first_not_of('0');
  int_part = nz == std::string::npos ? "0" : int_part.substr(nz);
  std::string out = int_part;
  if (!frac.empty()) out += "." + frac;
  if (out == "0") return "0";
  return negative ? "-" + out : out;
}

std::string CanonicalFloat(const std::string& text, bool single) {
  errno = 0;
  char* end = nullptr;
  double d = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0') return "not a number: " + text;
  std::array<char, 64> buf{};
  if (single) {
    std::snprintf(buf.data(), buf.size(), "%.9g", static_cast<double>(static_cast<float>(d)));
  } else {
    std::snprintf(buf.data(), buf.size(), "%.17g", d);
  }
  std::string out = buf.data();
  if (out == "-0") out = "0";
  return out;
}

struct DateRange {
  std::string min;
  std::string max;
};

/// The dates a destination Date column holds (docs/types.md "Out-of-range dates clamp").
DateRange DateRangeFor(int dest_version) {
  if (dest_version >= 2109) return {"1900-01-01", "2299-12-31"};  // Date32
  return {"1970-01-01", "2105-12-31"};                            // Date
}

bool ZeroDatePart(const std::string& text) {
  // "YYYY-MM-DD…": a zero month or day (0000-00-00 included) is a zero date.
  if (text.size() < 10) return false;
  return text.compare(5, 2, "00") == 0 || text.compare(8, 2, "00") == 0;
}

std::string CanonicalSourceDate(const std::string& text, int dest_version) {
  if (ZeroDatePart(text)) return "1970-01-01";
  DateRange r = DateRangeFor(dest_version);
  if (text < r.min) return r.min;
  if (text > r.max) return r.max;
  return text;
}

std::string CanonicalDestDate(const std::string& text, int dest_version) {
  // Servers before DateTime64 print day 0 (1970-01-01) as 0000-00-00.
  if (dest_version < 2001 && text == "0000-00-00") return "1970-01-01";
  return text;
}

/// Source DATETIME/TIMESTAMP text (session time zone +00:00) as the destination must print it.
/// Rule on servers without DateTime64 (ClickHouse < 20.1, the 18.16 test server): the fraction is
/// dropped (truncated, not rounded) and the value clamps to 1970-01-01 00:00:00 … 2105-12-31
/// 23:59:59. With DateTime64 the value keeps exactly `fsp` fraction digits.
std::string CanonicalSourceDateTime(const std::string& text, int fsp, int dest_version) {
  bool has64 = dest_version >= 2001;
  std::string frac = fsp > 0 && has64 ? "." + std::string(static_cast<size_t>(fsp), '0') : "";
  if (ZeroDatePart(text)) return "1970-01-01 00:00:00" + frac;
  if (!has64) {
    std::string s = text.substr(0, 19);
    if (s < "1970-01-01 00:00:00") return "1970-01-01 00:00:00";
    if (s > "2105-12-31 23:59:59") return "2105-12-31 23:59:59";
    return s;
  }
  return text;
}

std::string CanonicalDestDateTime(const std::string& text, int dest_version) {
  if (dest_version < 2001 && text == "0000-00-00 00:00:00") return "1970-01-01 00:00:00";
  return text;
}

/// WKT with every number re-printed as the shortest-exact %.17g of its double, and no spaces
/// after commas or inside parentheses.
std::string CanonicalWkt(const std::string& wkt) {
  std::string out;
  size_t i = 0;
  while (i < wkt.size()) {
    char c = wkt[i];
    bool starts_number = std::isdigit(static_cast<unsigned char>(c)) != 0 ||
                         ((c == '-' || c == '+' || c == '.') && i + 1 < wkt.size() &&
                          (std::isdigit(static_cast<unsigned char>(wkt[i + 1])) != 0 || wkt[i + 1] == '.'));
    if (starts_number) {
      char* end = nullptr;
      double d = std::strtod(wkt.c_str() + i, &end);
      std::array<char, 64> buf{};
      std::snprintf(buf.data(), buf.size(), "%.17g", d);
      out += std::string(buf.data()) == "-0" ? "0" : buf.data();
      i = static_cast<size_t>(end - wkt.c_str());
      continue;
    }
    if (c == ' ' && (out.empty() || out.back() == ',' || out.back() == '(' || out.back() == ' ' ||
                     (i + 1 < wkt.size() && (wkt[i + 1] == ',' || wkt[i + 1] == ')' || wkt[i + 1] == '(')))) {
      ++i;
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

std::optional<std::string> CanonicalValue(const SourceColumn& c, const std::optional<std::string>& v,
                                          bool source, int dest_version) {
  if (!v.has_value()) return std::nullopt;
  switch (c.kind) {
    case CompareKind::kInteger: return *v;
    case CompareKind::kFloat: return CanonicalFloat(*v, /*single=*/true);
    case CompareKind::kDouble: return CanonicalFloat(*v, /*single=*/false);
    case CompareKind::kDecimal: return CanonicalDecimal(*v);
    case CompareKind::kDate:
      return source ? CanonicalSourceDate(*v, dest_version) : CanonicalDestDate(*v, dest_version);
    case CompareKind::kDateTime:
      return source ? CanonicalSourceDateTime(*v, c.fsp, dest_version)
                    : CanonicalDestDateTime(*v, dest_version);
    case CompareKind::kText: return *v;
    case CompareKind::kGeometry: return CanonicalWkt(*v);
    case CompareKind::kBytes: return Upper(*v);
  }
  return *v;
}

bool ValidUtf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    }
    i += n;
  }
  return true;
}

std::string HexDecode(const std::string& hex) {
  std::string out;
  auto nib = [](char ch) { return ch <= '9' ? ch - '0' : (ch & ~0x20) - 'A' + 10; };
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(nib(hex[i]) * 16 + nib(hex[i + 1])));
  return out;
}

/// A canonical value for a human: NULL, numbers as they are, bytes as a quoted string (control
/// bytes escaped) or, when not UTF-8, as x'hex'.
std::string Display(const SourceColumn& c, const std::optional<std::string>& v) {
  if (!v.has_value()) return "NULL";
  if (c.kind != CompareKind::kBytes) {
    if (c.kind == CompareKind::kText || c.kind == CompareKind::kGeometry || c.kind == CompareKind::kDate ||
        c.kind == CompareKind::kDateTime) {
      return "'" + *v + "'";
    }
    return *v;
  }
  std::string bytes = HexDecode(*v);
  if (!ValidUtf8(bytes)) return "x'" + *v + "'";
  std::string out = "'";
  for (char ch : bytes) {
    auto u = static_cast<unsigned char>(ch);
    if (u < 0x20 || u == 0x7f || ch == '\'' || ch == '\\') {
      std::array<char, 8> buf{};
      std::snprintf(buf.data(), buf.size(), "\\x%02X", u);
      out += buf.data();
    } else {
      out += ch;
    }
  }
  if (out.size() > 200) out = out.substr(0, 200) + "…";
  return out + "'";
}

std::string KeyText(const std::vector<SourceColumn>& columns, const std::vector<size_t>& key_columns,
                    const std::vector<std::optional<std::string>>& row) {
  std::string key;
  for (size_t k : key_columns) {
    if (!key.empty()) key += '\x1f';
    key += row[k].has_value() ? "v" + *row[k] : std::string("N");
  }
  (void)columns;
  return key;
}

std::string DisplayKey(const CanonicalTable& t, const std::vector<std::optional<std::string>>& row) {
  std::string out = "(";
  for (size_t i = 0; i < t.key_columns.size(); ++i) {
    if (i > 0) out += ", ";
    const SourceColumn& c = t.columns[t.key_columns[i]];
    out += c.name + "=" + Display(c, row[t.key_columns[i]]);
  }
  if (out.size() > 300) out = out.substr(0, 300) + "…";
  return out + ")";
}

void AddRow(CanonicalTable& t, std::vector<std::optional<std::string>> row) {
  std::string key = KeyText(t.columns, t.key_columns, row);
  t.rows[key].push_back(std::move(row));
  ++t.row_count;
}

/// Chooses the comparison kind and canonical expressions of a column.
bool ClassifyColumn(SourceColumn& c, std::string* error) {
  const std::string& t = c.data_type;
  const std::string my = QuoteMy(c.name);
  const std::string ch = QuoteCh(c.name);
  c.source_expr = my;
  c.dest_expr = ch;
  if (t == "tinyint" || t == "smallint" || t == "mediumint" || t == "int" || t == "bigint") {
    c.kind = CompareKind::kInteger;
  } else if (t == "bit" || t == "year") {
    c.kind = CompareKind::kInteger;
    c.source_expr = "(" + my + " + 0)";
  } else if (t == "float") {
    c.kind = CompareKind::kFloat;
    c.source_expr = "CAST(" + my + " AS DOUBLE)";  // the text protocol prints FLOAT with 6 digits
    c.dest_expr = "toFloat64(" + ch + ")";
  } else if (t == "double" || t == "real") {
    c.kind = CompareKind::kDouble;
  } else if (t == "decimal" || t == "numeric") {
    c.kind = CompareKind::kDecimal;
    c.dest_expr = "toString(" + ch + ")";
  } else if (t == "date") {
    c.kind = CompareKind::kDate;
  } else if (t == "datetime" || t == "timestamp") {
    c.kind = CompareKind::kDateTime;
  } else if (t == "time") {
    c.kind = CompareKind::kText;
  } else if (t == "uuid" || t == "inet4" || t == "inet6") {
    c.kind = CompareKind::kText;
    c.dest_expr = "toString(" + ch + ")";
  } else if (t == "geometry" || t == "point" || t == "linestring" || t == "polygon" || t == "multipoint" ||
             t == "multilinestring" || t == "multipolygon" || t == "geometrycollection" ||
             t == "geomcollection") {
    c.kind = CompareKind::kGeometry;
    c.source_expr = "ST_AsText(" + my + ")";
  } else if (t == "enum") {
    c.kind = CompareKind::kBytes;
    c.source_expr = "HEX(CONVERT(" + my + " USING utf8mb4))";
    c.dest_expr = "hex(toString(" + ch + "))";
  } else if (t == "char" || t == "varchar" || t == "tinytext" || t == "text" || t == "mediumtext" ||
             t == "longtext" || t == "binary" || t == "varbinary" || t == "tinyblob" || t == "blob" ||
             t == "mediumblob" || t == "longblob" || t == "set" || t == "json") {
    c.kind = CompareKind::kBytes;
    // Text arrives as UTF-8 whatever the column's character set (docs/types.md "Character sets and
    // bytes"), as the server converts it for a SELECT; bytes (charset binary) are copied untouched.
    bool text = !c.charset.empty() && c.charset != "binary";
    c.source_expr = text ? "HEX(CONVERT(" + my + " USING utf8mb4))" : "HEX(" + my + ")";
    c.dest_expr = "hex(" + ch + ")";
  } else {
    *error = "column " + c.name + ": type " + c.column_type + " is not known to the comparison";
    return false;
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Processes

std::string CommandResult::Describe() const {
  std::string s =
      exit_code >= 0 ? "exit " + std::to_string(exit_code) : "killed by signal " + std::to_string(signal);
  if (timed_out) s += " (timed out: the test killed it)";
  s += "\n--- stdout ---\n" + (out.size() > 20000 ? out.substr(0, 20000) + "…" : out);
  s += "\n--- stderr ---\n" + (err.size() > 20000 ? err.substr(err.size() - 20000) : err);
  return s;
}

CommandResult RunCommand(const std::vector<std::string>& argv, int timeout_ms) {
  CommandResult result;
  int out_fds[2];
  int err_fds[2];
  if (pipe(out_fds) != 0 || pipe(err_fds) != 0) {
    result.err = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  pid_t pid = fork();
  if (pid < 0) {
    result.err = std::string("fork: ") + std::strerror(errno);
    return result;
  }
  if (pid == 0) {
    dup2(out_fds[1], STDOUT_FILENO);
    dup2(err_fds[1], STDERR_FILENO);
    close(out_fds[0]);
    close(out_fds[1]);
    close(err_fds[0]);
    close(err_fds[1]);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    ExecChild(argv);
  }
  close(out_fds[1]);
  close(err_fds[1]);
  std::array<pollfd, 2> fds{pollfd{out_fds[0], POLLIN, 0}, pollfd{err_fds[0], POLLIN, 0}};
  std::array<std::string*, 2> sinks{&result.out, &result.err};
  std::array<char, 65536> buf{};
  int open_count = 2;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (open_count > 0) {
    int wait_ms = -1;
    if (timeout_ms > 0) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        kill(pid, SIGKILL);
        result.timed_out = true;
        wait_ms = 1000;  // drain what is left, then stop
      } else {
        wait_ms = static_cast<int>(left.count());
      }
    }
    int ready = poll(fds.data(), fds.size(), wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (ready == 0) {
      if (result.timed_out) break;
      continue;
    }
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = read(fds[i].fd, buf.data(), buf.size());
      if (n > 0) {
        sinks[i]->append(buf.data(), static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
  for (pollfd& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = ExitCodeOf(status, &result.signal);
  return result;
}

std::optional<BackgroundProcess> BackgroundProcess::Start(const std::vector<std::string>& argv,
                                                          const std::string& log_path) {
  pid_t pid = fork();
  if (pid < 0) {
    ADD_FAILURE() << "fork: " << std::strerror(errno);
    return std::nullopt;
  }
  if (pid == 0) {
    int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log >= 0) {
      dup2(log, STDOUT_FILENO);
      dup2(log, STDERR_FILENO);
    }
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    ExecChild(argv);
  }
  return BackgroundProcess(pid, log_path);
}

BackgroundProcess::BackgroundProcess(BackgroundProcess&& other) noexcept
    : pid_(other.pid_),
      reaped_(other.reaped_),
      exit_code_(other.exit_code_),
      log_path_(std::move(other.log_path_)) {
  other.pid_ = -1;
  other.reaped_ = true;
}

BackgroundProcess::~BackgroundProcess() {
  if (pid_ > 0 && !reaped_) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

bool BackgroundProcess::Running() {
  if (reaped_ || pid_ <= 0) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    reaped_ = true;
    exit_code_ = ExitCodeOf(status, nullptr);
    return false;
  }
  return true;
}

int BackgroundProcess::SignalAndWait(int sig, int timeout_ms) {
  if (!Running()) return exit_code_;
  kill(pid_, sig);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (!Running()) return exit_code_;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  reaped_ = true;
  exit_code_ = -2;
  return -2;
}

std::string BackgroundProcess::Log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ---------------------------------------------------------------------------------------------
// Destination reads

TsvRows ParseTabSeparated(const std::string& text) {
  TsvRows rows;
  std::vector<std::optional<std::string>> row;
  std::string field;
  bool escaped_null = false;
  auto end_field = [&] {
    if (escaped_null && field.empty()) {
      row.emplace_back(std::nullopt);
    } else {
      row.emplace_back(field);
    }
    field.clear();
    escaped_null = false;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\t') {
      end_field();
    } else if (c == '\n') {
      end_field();
      rows.push_back(std::move(row));
      row.clear();
    } else if (c == '\\' && i + 1 < text.size()) {
      char n = text[++i];
      switch (n) {
        case 'N':
          if (field.empty()) {
            escaped_null = true;
          } else {
            field += "\\N";
          }
          break;
        case 't': field += '\t'; break;
        case 'n': field += '\n'; break;
        case 'r': field += '\r'; break;
        case '0': field += '\0'; break;
        case 'b': field += '\b'; break;
        case 'f': field += '\f'; break;
        case 'a': field += '\a'; break;
        case 'v': field += '\v'; break;
        default: field += n; break;
      }
    } else {
      field += c;
    }
  }
  if (!field.empty() || !row.empty()) {
    end_field();
    rows.push_back(std::move(row));
  }
  return rows;
}

std::optional<TsvRows> QueryDestination(const std::string& dest_url, const std::string& sql,
                                        std::string* error) {
  CommandResult r = RunCommand({ChsyncBinary(), "query", "--dest", dest_url, sql});
  if (r.exit_code != 0) {
    *error = "chsync query \"" + sql + "\" failed: " + r.Describe();
    return std::nullopt;
  }
  return ParseTabSeparated(r.out);
}

int DestinationVersion(const std::string& dest_url, std::string* error) {
  static std::map<std::string, int> known;  // tests are single-threaded
  if (auto it = known.find(dest_url); it != known.end()) return it->second;
  auto rows = QueryDestination(dest_url, "SELECT version()", error);
  if (!rows.has_value()) return -1;
  if (rows->size() != 1 || rows->front().size() != 1 || !rows->front()[0].has_value()) {
    *error = "SELECT version() returned no single value";
    return -1;
  }
  const std::string& v = *rows->front()[0];
  int major = 0;
  int minor = 0;
  if (std::sscanf(v.c_str(), "%d.%d", &major, &minor) != 2) {
    *error = "cannot parse the version '" + v + "'";
    return -1;
  }
  known[dest_url] = major * 100 + minor;
  return major * 100 + minor;
}

// ---------------------------------------------------------------------------------------------
// Tables

bool DescribeSourceTable(mysql::Connection& source, const std::string& db, const std::string& table,
                         int dest_version, std::vector<SourceColumn>* columns,
                         std::vector<size_t>* key_columns, std::string* error) {
  (void)dest_version;
  columns->clear();
  key_columns->clear();
  auto cols = source.Query(
      "SELECT COLUMN_NAME, LOWER(DATA_TYPE), COLUMN_TYPE, IS_NULLABLE, COALESCE(DATETIME_PRECISION, 0), "
      "COALESCE(CHARACTER_SET_NAME, '') "
      "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = " +
      mysql::QuoteString(db) + " AND TABLE_NAME = " + mysql::QuoteString(table) +
      " ORDER BY ORDINAL_POSITION");
  if (!cols.ok()) {
    *error = "information_schema.COLUMNS: " + cols.error().message();
    return false;
  }
  if (cols->rows.empty()) {
    *error = "the source has no table " + db + "." + table;
    return false;
  }
  for (const auto& r : cols->rows) {
    SourceColumn c;
    c.name = r[0].value_or("");
    c.data_type = r[1].value_or("");
    c.column_type = Lower(r[2].value_or(""));
    c.nullable = r[3].value_or("") == "YES";
    c.fsp = std::atoi(r[4].value_or("0").c_str());
    c.charset = Lower(r[5].value_or(""));
    if (!ClassifyColumn(c, error)) return false;
    columns->push_back(std::move(c));
  }
  auto keys = source.Query(
      "SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS WHERE NON_UNIQUE = 0 AND "
      "TABLE_SCHEMA = " +
      mysql::QuoteString(db) + " AND TABLE_NAME = " + mysql::QuoteString(table) +
      " ORDER BY INDEX_NAME = 'PRIMARY' DESC, INDEX_NAME, SEQ_IN_INDEX");
  if (!keys.ok()) {
    *error = "information_schema.STATISTICS: " + keys.error().message();
    return false;
  }
  std::vector<std::pair<std::string, std::vector<size_t>>> indexes;
  for (const auto& r : keys->rows) {
    std::string index = r[0].value_or("");
    std::string col = r[1].value_or("");
    if (indexes.empty() || indexes.back().first != index) indexes.emplace_back(index, std::vector<size_t>{});
    for (size_t i = 0; i < columns->size(); ++i) {
      if ((*columns)[i].name == col) indexes.back().second.push_back(i);
    }
  }
  for (const auto& [name, idx] : indexes) {
    bool usable = std::none_of(idx.begin(), idx.end(), [&](size_t i) { return (*columns)[i].nullable; });
    if (usable || name == "PRIMARY") {
      *key_columns = idx;
      return true;
    }
  }
  for (size_t i = 0; i < columns->size(); ++i) key_columns->push_back(i);  // full-row key
  return true;
}

std::optional<CanonicalTable> ReadSourceTable(mysql::Connection& source, const std::string& db,
                                              const std::string& table,
                                              const std::vector<SourceColumn>& columns,
                                              const std::vector<size_t>& key_columns, int dest_version,
                                              std::string* error) {
  Status tz = source.Execute("SET time_zone = '+00:00'");
  if (!tz.ok()) {
    *error = "SET time_zone: " + tz.error().message();
    return std::nullopt;
  }
  std::string sql = "SELECT ";
  for (size_t i = 0; i < columns.size(); ++i) sql += (i > 0 ? ", " : "") + columns[i].source_expr;
  sql += " FROM " + QuoteMy(db) + "." + QuoteMy(table);
  auto result = source.Query(sql);
  if (!result.ok()) {
    *error = "source " + sql + ": " + result.error().message();
    return std::nullopt;
  }
  CanonicalTable t;
  t.columns = columns;
  t.key_columns = key_columns;
  for (const auto& r : result->rows) {
    std::vector<std::optional<std::string>> row;
    row.reserve(columns.size());
    for (size_t i = 0; i < columns.size(); ++i) {
      row.push_back(CanonicalValue(columns[i], r[i], /*source=*/true, dest_version));
    }
    AddRow(t, std::move(row));
  }
  return t;
}

std::optional<CanonicalTable> ReadDestinationTable(const std::string& dest_url, const std::string& dest_db,
                                                   const std::string& table,
                                                   const std::vector<SourceColumn>& columns,
                                                   const std::vector<size_t>& key_columns, int dest_version,
                                                   std::string* error) {
  std::string sql = "SELECT ";
  for (size_t i = 0; i < columns.size(); ++i) sql += (i > 0 ? ", " : "") + columns[i].dest_expr;
  sql += " FROM " + QuoteCh(dest_db) + "." + QuoteCh(table) + " FINAL WHERE _chsync_is_deleted = 0";
  auto rows = QueryDestination(dest_url, sql, error);
  if (!rows.has_value()) return std::nullopt;
  CanonicalTable t;
  t.columns = columns;
  t.key_columns = key_columns;
  for (const auto& r : *rows) {
    if (r.size() != columns.size()) {
      *error = "destination row with " + std::to_string(r.size()) + " fields, expected " +
               std::to_string(columns.size()) + " (" + sql + ")";
      return std::nullopt;
    }
    std::vector<std::optional<std::string>> row;
    row.reserve(columns.size());
    for (size_t i = 0; i < columns.size(); ++i) {
      row.push_back(CanonicalValue(columns[i], r[i], /*source=*/false, dest_version));
    }
    AddRow(t, std::move(row));
  }
  return t;
}

std::string CompareTable(mysql::Connection& source, const std::string& dest_url, const std::string& db,
                         const std::string& table, const CompareOptions& options) {
  const std::string name = db + "." + table;
  std::string error;
  int version = DestinationVersion(dest_url, &error);
  if (version < 0) return name + ": " + error;
  std::vector<SourceColumn> all;
  std::vector<size_t> all_keys;
  if (!DescribeSourceTable(source, db, table, version, &all, &all_keys, &error)) return name + ": " + error;
  // Drop ignored columns (they cannot be key columns: the key identifies rows).
  std::vector<SourceColumn> columns;
  std::vector<size_t> keys;
  for (size_t i = 0; i < all.size(); ++i) {
    bool ignored = std::find(options.ignore_columns.begin(), options.ignore_columns.end(), all[i].name) !=
                   options.ignore_columns.end();
    bool is_key = std::find(all_keys.begin(), all_keys.end(), i) != all_keys.end();
    if (ignored && !is_key) continue;
    if (is_key) keys.push_back(columns.size());
    columns.push_back(all[i]);
  }
  auto src = ReadSourceTable(source, db, table, columns, keys, version, &error);
  if (!src.has_value()) return name + ": " + error;
  auto dst = ReadDestinationTable(dest_url, options.dest_database.empty() ? db : options.dest_database,
                                  options.dest_table.empty() ? table : options.dest_table, columns, keys,
                                  version, &error);
  if (!dst.has_value()) return name + ": " + error;

  std::vector<std::string> lines;
  size_t differences = 0;
  std::map<std::string, size_t> per_kind;  // "missing", "extra", "duplicated", "column c"
  size_t max_lines = options.max_differences;
  if (const char* env = std::getenv("CHSYNC_E2E_MAX_DIFFERENCES"); env != nullptr && *env != '\0') {
    max_lines = static_cast<size_t>(std::strtoul(env, nullptr, 10));
  }
  auto note = [&](const std::string& kind, const std::string& line) {
    ++differences;
    ++per_kind[kind];
    if (lines.size() < max_lines) lines.push_back("  " + line);
  };
  auto values = [&](const std::vector<std::optional<std::string>>& row) {
    std::string out;
    for (size_t i = 0; i < columns.size(); ++i) {
      out += (i > 0 ? ", " : "") + columns[i].name + "=" + Display(columns[i], row[i]);
    }
    return out.size() > 400 ? out.substr(0, 400) + "…" : out;
  };
  auto s = src->rows.begin();
  auto d = dst->rows.begin();
  while (s != src->rows.end() || d != dst->rows.end()) {
    if (d == dst->rows.end() || (s != src->rows.end() && s->first < d->first)) {
      note("missing at the destination",
           "key " + DisplayKey(*src, s->second.front()) +
               ": missing at the destination (source row: " + values(s->second.front()) + ")");
      ++s;
      continue;
    }
    if (s == src->rows.end() || d->first < s->first) {
      note("extra at the destination", "key " + DisplayKey(*dst, d->second.front()) +
                                           ": extra at the destination (" + values(d->second.front()) + ")");
      ++d;
      continue;
    }
    auto srows = s->second;
    auto drows = d->second;
    if (srows.size() != drows.size()) {
      note("row count differs for a key", "key " + DisplayKey(*src, srows.front()) + ": " +
                                              std::to_string(srows.size()) + " row(s) at the source, " +
                                              std::to_string(drows.size()) + " at the destination");
    } else {
      std::sort(srows.begin(), srows.end());
      std::sort(drows.begin(), drows.end());
      for (size_t r = 0; r < srows.size(); ++r) {
        for (size_t i = 0; i < columns.size(); ++i) {
          if (srows[r][i] != drows[r][i]) {
            note("column " + columns[i].name, "key " + DisplayKey(*src, srows[r]) + " column " +
                                                  columns[i].name + " (" + columns[i].column_type +
                                                  "): source " + Display(columns[i], srows[r][i]) +
                                                  ", destination " + Display(columns[i], drows[r][i]));
          }
        }
      }
    }
    ++s;
    ++d;
  }
  if (differences == 0) return "";
  std::string report = name + ": " + std::to_string(differences) + " difference(s) between the source (" +
                       std::to_string(src->row_count) + " rows) and the destination's FINAL view (" +
                       std::to_string(dst->row_count) + " rows):\n";
  for (const std::string& l : lines) report += l + "\n";
  if (differences > lines.size()) {
    report += "  … " + std::to_string(differences - lines.size()) + " more; all differences by kind:\n";
    for (const auto& [kind, count] : per_kind) report += "    " + kind + ": " + std::to_string(count) + "\n";
  }
  return report;
}

}  // namespace chsync::testing
