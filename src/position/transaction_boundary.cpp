#include "position/transaction_boundary.h"

#include <cctype>
#include <variant>

namespace chsync::pipe {
namespace {

constexpr uint8_t kMariaGtidStandalone = 1;
constexpr uint8_t kMariaGtidPreparedXa = 64;

bool IsSpace(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (IsSpace(s.front()) || s.front() == ';')) s.remove_prefix(1);
  while (!s.empty() && (IsSpace(s.back()) || s.back() == ';')) s.remove_suffix(1);
  return s;
}

/// The next word of `s` (letters only), upper-cased; consumes it and the spaces before it.
std::string NextWord(std::string_view& s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  std::string word;
  while (!s.empty() && std::isalpha(static_cast<unsigned char>(s.front())) != 0) {
    word += static_cast<char>(std::toupper(static_cast<unsigned char>(s.front())));
    s.remove_prefix(1);
  }
  return word;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// One part of an XA id: X'hex', 0xhex, 'text' or "text" (with '' and backslash escapes).
std::optional<std::string> ParsePart(std::string_view& s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  std::string out;
  auto hex = [&](std::string_view digits) -> bool {
    if (digits.size() % 2 != 0) return false;
    for (size_t i = 0; i < digits.size(); i += 2) {
      int hi = HexDigit(digits[i]), lo = HexDigit(digits[i + 1]);
      if (hi < 0 || lo < 0) return false;
      out += static_cast<char>(hi * 16 + lo);
    }
    return true;
  };
  if ((s.front() == 'X' || s.front() == 'x') && s.size() > 1 && s[1] == '\'') {
    size_t close = s.find('\'', 2);
    if (close == std::string_view::npos || !hex(s.substr(2, close - 2))) return std::nullopt;
    s.remove_prefix(close + 1);
    return out;
  }
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    size_t end = 2;
    while (end < s.size() && HexDigit(s[end]) >= 0) ++end;
    if (!hex(s.substr(2, end - 2))) return std::nullopt;
    s.remove_prefix(end);
    return out;
  }
  if (s.front() != '\'' && s.front() != '"') return std::nullopt;
  char quote = s.front();
  size_t i = 1;
  while (i < s.size()) {
    char c = s[i];
    if (c == '\\' && i + 1 < s.size()) {
      out += s[i + 1];
      i += 2;
    } else if (c == quote) {
      if (i + 1 < s.size() && s[i + 1] == quote) {
        out += quote;
        i += 2;
      } else {
        s.remove_prefix(i + 1);
        return out;
      }
    } else {
      out += c;
      ++i;
    }
  }
  return std::nullopt;
}

bool Consume(std::string_view& s, char c) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  if (s.empty() || s.front() != c) return false;
  s.remove_prefix(1);
  return true;
}

}  // namespace

std::string XaIdText(uint32_t format_id, std::string_view gtrid, std::string_view bqual) {
  static constexpr char kHex[] = "0123456789abcdef";
  auto hex = [](std::string_view bytes) {
    std::string out = "X'";
    for (unsigned char c : bytes) {
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
    return out + "'";
  };
  return hex(gtrid) + "," + hex(bqual) + "," + std::to_string(format_id);
}

std::optional<std::string> ParseXaId(std::string_view s) {
  std::optional<std::string> gtrid = ParsePart(s);
  if (!gtrid) return std::nullopt;
  std::string bqual;
  uint64_t format_id = 1;
  if (Consume(s, ',')) {
    std::optional<std::string> b = ParsePart(s);
    if (!b) return std::nullopt;
    bqual = std::move(*b);
    if (Consume(s, ',')) {
      while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
      size_t digits = 0;
      format_id = 0;
      while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits])) != 0 && digits < 10) {
        format_id = format_id * 10 + static_cast<uint64_t>(s[digits] - '0');
        ++digits;
      }
      if (digits == 0 || format_id > UINT32_MAX) return std::nullopt;
      s.remove_prefix(digits);
    }
  }
  if (gtrid->size() > 64 || bqual.size() > 64) return std::nullopt;
  return XaIdText(static_cast<uint32_t>(format_id), *gtrid, bqual);
}

void TransactionBoundaries::Reset() {
  in_transaction_ = false;
  xa_.reset();
}

Boundary TransactionBoundaries::Observe(const binlog::Event& event, uint64_t outer_end) {
  Boundary b;
  auto end = [&](Boundary::Kind kind, std::string xid = "") {
    in_transaction_ = false;
    xa_.reset();
    b.kind = kind;
    b.xid = std::move(xid);
    b.resume = outer_end;
    return b;
  };
  if (std::holds_alternative<binlog::XidEvent>(event.body)) return end(Boundary::Kind::kCommit);
  if (const auto* prepare = std::get_if<binlog::XaPrepareEvent>(&event.body)) {
    if (prepare->one_phase) {
      b.ends_open_xa = xa_.has_value();
      return end(Boundary::Kind::kCommit);
    }
    std::string xid = XaIdText(prepare->format_id, prepare->gtrid, prepare->bqual);
    return end(Boundary::Kind::kXaPrepare, std::move(xid));
  }
  if (const auto* gtid = std::get_if<binlog::MariaGtidEvent>(&event.body)) {
    xa_.reset();
    in_transaction_ = (gtid->flags2 & kMariaGtidStandalone) == 0;
    if ((gtid->flags2 & kMariaGtidPreparedXa) != 0 && gtid->xa_format_id) {
      in_transaction_ = true;
      xa_ = XaIdText(*gtid->xa_format_id, gtid->xa_gtrid, gtid->xa_bqual);
      b.kind = Boundary::Kind::kXaBegin;
      b.xid = *xa_;
      return b;
    }
    if (in_transaction_) b.kind = Boundary::Kind::kBegin;
    return b;
  }
  const auto* query = std::get_if<binlog::QueryEvent>(&event.body);
  if (query == nullptr) return b;

  std::string_view sql = Trim(query->query);
  std::string_view rest = sql;
  std::string verb = NextWord(rest);
  if (verb == "BEGIN" && Trim(rest).empty()) {
    in_transaction_ = true;
    b.kind = Boundary::Kind::kBegin;
    return b;
  }
  if (verb == "START") {
    std::string_view after = rest;
    if (NextWord(after) == "TRANSACTION" && Trim(after).empty()) {
      in_transaction_ = true;
      b.kind = Boundary::Kind::kBegin;
      return b;
    }
  }
  if ((verb == "COMMIT" || verb == "ROLLBACK") && Trim(rest).empty()) return end(Boundary::Kind::kCommit);
  if (verb == "XA") {
    std::string action = NextWord(rest);
    std::optional<std::string> xid = ParseXaId(rest);
    if (action == "START" || action == "BEGIN") {
      in_transaction_ = true;
      xa_ = xid.value_or(std::string(Trim(rest)));
      b.kind = Boundary::Kind::kXaBegin;
      b.xid = *xa_;
      return b;
    }
    if (action == "END") return b;
    if (action == "COMMIT" || action == "ROLLBACK") {
      std::string id = xid.value_or(std::string(Trim(rest)));
      // One phase: the transaction whose first phase is open right now commits.
      if (action == "COMMIT" && xa_ && *xa_ == id) return end(Boundary::Kind::kCommit);
      if (action == "ROLLBACK" && xa_ && *xa_ == id) return end(Boundary::Kind::kXaRollback, std::move(id));
      return end(action == "COMMIT" ? Boundary::Kind::kXaCommit : Boundary::Kind::kXaRollback, std::move(id));
    }
  }
  b.kind = Boundary::Kind::kStatement;
  if (!in_transaction_) b.resume = outer_end;
  return b;
}

}  // namespace chsync::pipe
