#include "http/read_only.h"

#include <array>
#include <cctype>
#include <string>

namespace chsync::http {
namespace {

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

bool IsSpace(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

std::string Upper(std::string_view word) {
  std::string out(word);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

/// Walks SQL text outside quotes and comments.
class Scanner {
 public:
  explicit Scanner(std::string_view sql) : sql_(sql) {}

  /// Skips whitespace and comments. False on an unterminated comment or a `#` comment.
  bool SkipBlank() {
    while (i_ < sql_.size()) {
      char c = sql_[i_];
      if (IsSpace(c)) {
        ++i_;
      } else if (c == '-' && Next() == '-') {
        size_t eol = sql_.find('\n', i_);
        i_ = eol == std::string_view::npos ? sql_.size() : eol + 1;
      } else if (c == '/' && Next() == '*') {
        if (!SkipBlockComment()) return false;
      } else if (c == '#') {
        return false;
      } else {
        return true;
      }
    }
    return true;
  }

  /// Skips a quoted literal or identifier starting at the current quote. False if unterminated.
  bool SkipQuoted() {
    char quote = sql_[i_++];
    while (i_ < sql_.size()) {
      char c = sql_[i_++];
      if (c == '\\') {
        if (i_ >= sql_.size()) return false;
        ++i_;
      } else if (c == quote) {
        return true;  // a doubled quote reopens at the next step
      }
    }
    return false;
  }

  std::string_view Word() {
    size_t start = i_;
    while (i_ < sql_.size() && IsWordChar(sql_[i_])) ++i_;
    return sql_.substr(start, i_ - start);
  }

  bool AtEnd() const { return i_ >= sql_.size(); }
  char Peek() const { return sql_[i_]; }
  void Advance() { ++i_; }

 private:
  char Next() const { return i_ + 1 < sql_.size() ? sql_[i_ + 1] : '\0'; }

  bool SkipBlockComment() {
    int depth = 0;
    while (i_ < sql_.size()) {
      if (sql_[i_] == '/' && Next() == '*') {
        ++depth;
        i_ += 2;
      } else if (sql_[i_] == '*' && Next() == '/') {
        --depth;
        i_ += 2;
        if (depth == 0) return true;
      } else {
        ++i_;
      }
    }
    return false;
  }

  std::string_view sql_;
  size_t i_ = 0;
};

constexpr std::array<std::string_view, 7> kReadKeywords = {"SELECT", "WITH",   "SHOW",   "DESCRIBE",
                                                           "DESC",   "EXISTS", "EXPLAIN"};

}  // namespace

bool IsReadOnlyStatement(std::string_view sql) {
  Scanner s(sql);
  while (true) {
    if (!s.SkipBlank() || s.AtEnd()) return false;
    if (s.Peek() != '(') break;
    s.Advance();
  }
  std::string first = Upper(s.Word());
  bool known = false;
  for (std::string_view keyword : kReadKeywords) known = known || first == keyword;
  if (!known) return false;

  std::string previous_word;
  while (true) {
    if (!s.SkipBlank()) return false;
    if (s.AtEnd()) return true;
    char c = s.Peek();
    if (c == '\'' || c == '"' || c == '`') {
      if (!s.SkipQuoted()) return false;
      previous_word.clear();
    } else if (IsWordChar(c)) {
      std::string word = Upper(s.Word());
      if (word == "OUTFILE" && previous_word == "INTO") return false;
      previous_word = std::move(word);
    } else if (c == ';') {
      s.Advance();
      if (!s.SkipBlank()) return false;
      return s.AtEnd();
    } else if (c == '$') {
      return false;
    } else {
      s.Advance();
      previous_word.clear();
    }
  }
}

}  // namespace chsync::http
