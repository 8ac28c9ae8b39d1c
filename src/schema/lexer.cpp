#include "schema/lexer.h"

#include <fmt/format.h>

#include "schema/table_schema.h"

namespace chsync::schema {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}
bool IsHexDigit(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool IsIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c) || c == '_' || c == '$' ||
         static_cast<unsigned char>(c) >= 0x80;
}

class Lexer {
 public:
  Lexer(std::string_view sql, const LexOptions& options) : sql_(sql), options_(options) {}

  Result<std::vector<Token>> Run() {
    std::vector<Token> tokens;
    bool space = false;
    while (true) {
      CHSYNC_ASSIGN_OR_RETURN(bool skipped, SkipSpaceAndComments());
      space = space || skipped;
      if (pos_ >= sql_.size()) break;
      Token token;
      token.offset = pos_;
      token.line = line_;
      token.column = static_cast<uint32_t>(pos_ - line_start_ + 1);
      token.space_before = space;
      space = false;
      CHSYNC_RETURN_IF_ERROR(Next(token));
      token.text = sql_.substr(token.offset, pos_ - token.offset);
      tokens.push_back(std::move(token));
    }
    if (in_exec_comment_) {
      return Fail(exec_comment_start_, "unterminated executable comment /*!…");
    }
    Token end;
    end.offset = sql_.size();
    end.line = line_;
    end.column = static_cast<uint32_t>(pos_ - line_start_ + 1);
    tokens.push_back(end);
    return tokens;
  }

 private:
  Error Fail(size_t offset, std::string_view what) const {
    uint32_t line = 1;
    size_t start = 0;
    for (size_t i = 0; i < offset && i < sql_.size(); ++i) {
      if (sql_[i] == '\n') {
        ++line;
        start = i + 1;
      }
    }
    return Error(ErrorKind::kCorrupt,
                 fmt::format("{} at line {}, column {} (byte {})", what, line, offset - start + 1, offset));
  }

  char Peek(size_t ahead = 0) const { return pos_ + ahead < sql_.size() ? sql_[pos_ + ahead] : '\0'; }

  void Advance() {
    if (sql_[pos_] == '\n') {
      ++line_;
      line_start_ = pos_ + 1;
    }
    ++pos_;
  }

  /// Returns whether anything was skipped.
  Result<bool> SkipSpaceAndComments() {
    bool skipped = false;
    while (pos_ < sql_.size()) {
      char c = sql_[pos_];
      if (IsSpace(c)) {
        Advance();
        skipped = true;
      } else if (c == '#' || (c == '-' && Peek(1) == '-' &&
                              (pos_ + 2 >= sql_.size() || IsSpace(Peek(2)) ||
                               static_cast<unsigned char>(Peek(2)) < 0x20))) {
        while (pos_ < sql_.size() && sql_[pos_] != '\n') Advance();
        skipped = true;
      } else if (c == '*' && Peek(1) == '/' && in_exec_comment_) {
        Advance();
        Advance();
        in_exec_comment_ = false;
        skipped = true;
      } else if (c == '/' && Peek(1) == '*') {
        size_t start = pos_;
        bool mysql_exec = Peek(2) == '!';
        bool mariadb_exec = (Peek(2) == 'M' || Peek(2) == 'm') && Peek(3) == '!';
        if ((mysql_exec || (mariadb_exec && options_.mariadb_comments)) && !in_exec_comment_) {
          size_t p = pos_ + (mysql_exec ? 3 : 4);
          size_t digits_start = p;
          while (p < sql_.size() && IsDigit(sql_[p]) && p - digits_start < 6) ++p;
          uint64_t version = 0;
          for (size_t i = digits_start; i < p; ++i)
            version = version * 10 + static_cast<uint64_t>(sql_[i] - '0');
          bool run = p == digits_start || version <= options_.server_version;
          // MariaDB skips the MySQL 5.7+ versions of `/*!NNNNN` (not of its own `/*M!`).
          if (run && mysql_exec && options_.mariadb_server && p != digits_start && version >= 50700 &&
              version <= 99999) {
            run = false;
          }
          if (run) {
            while (pos_ < p) Advance();
            in_exec_comment_ = true;
            exec_comment_start_ = start;
            skipped = true;
            continue;
          }
        }
        Advance();
        Advance();
        bool closed = false;
        while (pos_ < sql_.size()) {
          if (sql_[pos_] == '*' && Peek(1) == '/') {
            Advance();
            Advance();
            closed = true;
            break;
          }
          Advance();
        }
        if (!closed) return Fail(start, "unterminated comment /*…");
        skipped = true;
      } else {
        break;
      }
    }
    return skipped;
  }

  /// Reads a quoted run starting at the opening quote; decodes into `out`.
  Status ReadQuoted(char quote, bool escapes, std::string& out, std::string_view what) {
    size_t start = pos_;
    Advance();
    while (true) {
      if (pos_ >= sql_.size()) return Fail(start, fmt::format("unterminated {}", what));
      char c = sql_[pos_];
      if (c == quote) {
        if (Peek(1) == quote) {
          out += quote;
          Advance();
          Advance();
          continue;
        }
        Advance();
        return Status::Ok();
      }
      if (c == '\\' && escapes) {
        if (pos_ + 1 >= sql_.size()) return Fail(start, fmt::format("unterminated {}", what));
        char e = sql_[pos_ + 1];
        switch (e) {
          case '0': out += '\0'; break;
          case 'b': out += '\b'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'Z': out += '\x1a'; break;
          case '%': out += "\\%"; break;
          case '_': out += "\\_"; break;
          default: out += e; break;
        }
        Advance();
        Advance();
        continue;
      }
      out += c;
      Advance();
    }
  }

  Status ReadDigitsLiteral(Token& token, TokenKind kind, bool (*valid)(char)) {
    // X'..' or B'..' form: pos_ at the prefix letter.
    size_t start = pos_;
    Advance();
    Advance();
    while (pos_ < sql_.size() && sql_[pos_] != '\'') {
      if (!valid(sql_[pos_])) {
        return Fail(pos_, kind == TokenKind::kHex ? "invalid digit in hexadecimal literal X'…'"
                                                  : "invalid digit in bit literal b'…'");
      }
      token.value += sql_[pos_];
      Advance();
    }
    if (pos_ >= sql_.size()) return Fail(start, "unterminated literal");
    Advance();
    if (kind == TokenKind::kHex && token.value.size() % 2 != 0) {
      return Fail(start, "hexadecimal literal X'…' needs an even number of digits");
    }
    token.kind = kind;
    return Status::Ok();
  }

  Status Next(Token& token) {
    char c = sql_[pos_];
    char n = Peek(1);
    if ((c == 'x' || c == 'X') && n == '\'') {
      return ReadDigitsLiteral(token, TokenKind::kHex, IsHexDigit);
    }
    if ((c == 'b' || c == 'B') && n == '\'') {
      return ReadDigitsLiteral(token, TokenKind::kBit, [](char d) { return d == '0' || d == '1'; });
    }
    if ((c == 'n' || c == 'N') && n == '\'') {
      Advance();
      token.kind = TokenKind::kString;
      token.national = true;
      return ReadQuoted('\'', !options_.no_backslash_escapes, token.value, "string literal");
    }
    if (c == '\'' || (c == '"' && !options_.ansi_quotes)) {
      token.kind = TokenKind::kString;
      return ReadQuoted(c, !options_.no_backslash_escapes, token.value, "string literal");
    }
    if (c == '`' || (c == '"' && options_.ansi_quotes)) {
      token.kind = TokenKind::kQuotedIdentifier;
      return ReadQuoted(c, false, token.value, "quoted identifier");
    }
    if (c == '0' && (n == 'x' || n == 'b')) {
      size_t p = pos_ + 2;
      auto valid = [n](char d) { return n == 'x' ? IsHexDigit(d) : (d == '0' || d == '1'); };
      while (p < sql_.size() && valid(sql_[p])) ++p;
      if (p > pos_ + 2 && (p >= sql_.size() || !IsIdentChar(sql_[p]))) {
        token.kind = n == 'x' ? TokenKind::kHex : TokenKind::kBit;
        token.value = std::string(sql_.substr(pos_ + 2, p - pos_ - 2));
        while (pos_ < p) Advance();
        return Status::Ok();
      }
    }
    if (IsDigit(c) || (c == '.' && IsDigit(n))) {
      size_t p = pos_;
      while (p < sql_.size() && IsDigit(sql_[p])) ++p;
      bool is_number = true;
      if (p < sql_.size() && sql_[p] == '.') {
        ++p;
        while (p < sql_.size() && IsDigit(sql_[p])) ++p;
      }
      if (p < sql_.size() && (sql_[p] == 'e' || sql_[p] == 'E')) {
        size_t q = p + 1;
        if (q < sql_.size() && (sql_[q] == '+' || sql_[q] == '-')) ++q;
        if (q < sql_.size() && IsDigit(sql_[q])) {
          while (q < sql_.size() && IsDigit(sql_[q])) ++q;
          p = q;
        }
      }
      if (p < sql_.size() && IsIdentChar(sql_[p]) && sql_[pos_] != '.') {
        // MySQL identifiers may begin with digits (1abc); only a pure-digit prefix qualifies.
        size_t q = pos_;
        while (q < sql_.size() && IsDigit(sql_[q])) ++q;
        if (q < sql_.size() && IsIdentChar(sql_[q])) is_number = false;
      }
      if (is_number) {
        token.kind = TokenKind::kNumber;
        token.value = std::string(sql_.substr(pos_, p - pos_));
        while (pos_ < p) Advance();
        return Status::Ok();
      }
    }
    if (IsIdentChar(c)) {
      size_t p = pos_;
      while (p < sql_.size() && IsIdentChar(sql_[p])) ++p;
      token.kind = TokenKind::kWord;
      token.value = std::string(sql_.substr(pos_, p - pos_));
      while (pos_ < p) Advance();
      return Status::Ok();
    }
    if (c == '@') {
      size_t start = pos_;
      Advance();
      if (Peek() == '@') Advance();
      if (Peek() == '\'' || Peek() == '"' || Peek() == '`') {
        std::string ignored;
        CHSYNC_RETURN_IF_ERROR(ReadQuoted(Peek(), Peek() != '`', ignored, "variable name"));
      } else {
        while (pos_ < sql_.size() && (IsIdentChar(sql_[pos_]) || sql_[pos_] == '.')) Advance();
      }
      token.kind = TokenKind::kVariable;
      token.value = std::string(sql_.substr(start, pos_ - start));
      return Status::Ok();
    }
    token.kind = TokenKind::kPunct;
    static constexpr std::string_view kMulti[] = {
        "<=>", "->>", "<=", ">=", "<>", "!=", ":=", "||", "&&", "<<", ">>", "->"};
    for (std::string_view m : kMulti) {
      if (sql_.substr(pos_, m.size()) == m) {
        for (size_t i = 0; i < m.size(); ++i) Advance();
        return Status::Ok();
      }
    }
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return Fail(pos_, fmt::format("unexpected control byte 0x{:02x}", static_cast<unsigned char>(c)));
    }
    Advance();
    return Status::Ok();
  }

  std::string_view sql_;
  LexOptions options_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  size_t line_start_ = 0;
  bool in_exec_comment_ = false;
  size_t exec_comment_start_ = 0;
};

}  // namespace

bool Token::IsWord(std::string_view keyword) const {
  return kind == TokenKind::kWord && EqualsIgnoreCase(text, keyword);
}

std::string DescribePosition(const Token& token) {
  return fmt::format("line {}, column {} (byte {})", token.line, token.column, token.offset);
}

LexOptions LexOptionsFromSqlMode(std::string_view sql_mode) {
  LexOptions options;
  size_t start = 0;
  while (start <= sql_mode.size()) {
    size_t comma = sql_mode.find(',', start);
    if (comma == std::string_view::npos) comma = sql_mode.size();
    std::string_view mode = sql_mode.substr(start, comma - start);
    while (!mode.empty() && IsSpace(mode.front())) mode.remove_prefix(1);
    while (!mode.empty() && IsSpace(mode.back())) mode.remove_suffix(1);
    for (std::string_view ansi : {"ANSI_QUOTES", "ANSI", "DB2", "ORACLE", "POSTGRESQL", "MSSQL", "MAXDB"}) {
      if (EqualsIgnoreCase(mode, ansi)) options.ansi_quotes = true;
    }
    if (EqualsIgnoreCase(mode, "NO_BACKSLASH_ESCAPES")) options.no_backslash_escapes = true;
    start = comma + 1;
  }
  return options;
}

Result<std::vector<Token>> Lex(std::string_view sql, const LexOptions& options) {
  return Lexer(sql, options).Run();
}

}  // namespace chsync::schema
