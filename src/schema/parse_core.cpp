// The token cursor and the pieces every statement family uses: errors with positions,
// identifiers and table names, numbers, string literals, balanced skipping.

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "schema/parse_core.h"
#include "schema/parser.h"

namespace chsync::schema {
namespace {

/// Reserved words that can never be an unquoted identifier (a subset of MySQL's list: the ones
/// whose misuse would otherwise let a broken statement parse as something else).
constexpr std::array<std::string_view, 62> kReserved{
    "ADD",     "ALL",      "ALTER",     "AND",     "AS",         "ASC",    "BETWEEN",    "BY",
    "CASCADE", "CHANGE",   "CHARACTER", "CHECK",   "COLLATE",    "COLUMN", "CONSTRAINT", "CONVERT",
    "CREATE",  "DEFAULT",  "DELETE",    "DESC",    "DISTINCT",   "DROP",   "EXISTS",     "FOREIGN",
    "FROM",    "FULLTEXT", "GENERATED", "GROUP",   "IF",         "IN",     "INDEX",      "INSERT",
    "INTO",    "IS",       "KEY",       "KEYS",    "LIKE",       "NOT",    "NULL",       "ON",
    "OR",      "ORDER",    "PARTITION", "PRIMARY", "REFERENCES", "RENAME", "REPLACE",    "RESTRICT",
    "SELECT",  "SET",      "SPATIAL",   "TABLE",   "TO",         "UNIQUE", "UPDATE",     "USING",
    "VALUES",  "WHERE",    "WITH",      "FOR",     "LOCK",       "STORED"};

std::string DescribeToken(const Token& token) {
  if (token.kind == TokenKind::kEnd) return "end of statement";
  std::string_view text = token.text;
  if (text.size() > 40) return fmt::format("'{}…'", text.substr(0, 40));
  return fmt::format("'{}'", text);
}

}  // namespace

bool DdlParser::AcceptSeq(std::initializer_list<std::string_view> words) {
  size_t i = 0;
  for (std::string_view w : words) {
    if (!Peek(i).IsWord(w)) return false;
    ++i;
  }
  for (size_t k = 0; k < i; ++k) Next();
  return true;
}

Status DdlParser::Expect(std::string_view word) {
  if (Accept(word)) return Status::Ok();
  return Unexpected(Upper(word));
}

Status DdlParser::ExpectPunct(std::string_view p) {
  if (AcceptPunct(p)) return Status::Ok();
  return Unexpected(fmt::format("'{}'", p));
}

Error DdlParser::Unexpected(std::string_view expected) const {
  const Token& t = Peek();
  return Error(ErrorKind::kCorrupt,
               fmt::format("expected {}, found {} at {}", expected, DescribeToken(t), DescribePosition(t)));
}

Error DdlParser::ErrorAt(const Token& t, std::string_view message) const {
  return Error(ErrorKind::kCorrupt, fmt::format("{} at {}", message, DescribePosition(t)));
}

std::string DdlParser::TextBetween(size_t first_token, size_t end_token) const {
  if (end_token <= first_token) return {};
  const Token& a = tokens_[first_token];
  const Token& b = tokens_[end_token - 1];
  return std::string(sql_.substr(a.offset, b.offset + b.text.size() - a.offset));
}

bool DdlParser::IsReserved(std::string_view word) {
  return std::any_of(kReserved.begin(), kReserved.end(),
                     [&](std::string_view r) { return EqualsIgnoreCase(r, word); });
}

std::string DdlParser::Upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

bool DdlParser::IsIdentifierToken(const Token& t) {
  return t.kind == TokenKind::kQuotedIdentifier || (t.kind == TokenKind::kWord && !IsReserved(t.text));
}

bool DdlParser::WordBeforeDot(size_t ahead) const {
  const Token& dot = Peek(ahead + 1);
  const Token& next = Peek(ahead + 2);
  return Peek(ahead).kind == TokenKind::kWord && dot.IsPunct(".") && !dot.space_before &&
         next.kind == TokenKind::kWord && !next.space_before;
}

Result<std::string> DdlParser::Identifier(std::string_view what) {
  if (!IsIdentifierToken(Peek()) && !WordBeforeDot()) return Unexpected(what);
  return Next().value;
}

Result<TableName> DdlParser::ParseTableName() {
  TableName name;
  CHSYNC_ASSIGN_OR_RETURN(name.name, Identifier("a table name"));
  if (Peek().IsPunct(".")) {
    Next();
    name.database = std::move(name.name);
    // After a dot any word is an identifier, reserved or not.
    if (Peek().kind != TokenKind::kWord && Peek().kind != TokenKind::kQuotedIdentifier) {
      return Unexpected("a table name after '.'");
    }
    name.name = Next().value;
  }
  return name;
}

Result<std::string> DdlParser::ColumnName(std::string_view what) {
  // At most three parts, the leading dot counting as one (MySQL's field_ident and simple_ident_q).
  int parts = AcceptPunct(".") ? 2 : 1;
  CHSYNC_ASSIGN_OR_RETURN(std::string name, Identifier(what));
  for (; parts < 3 && Peek().IsPunct(".") &&
         (Peek(1).kind == TokenKind::kWord || Peek(1).kind == TokenKind::kQuotedIdentifier);
       ++parts) {
    Next();
    name = Next().value;
  }
  return name;
}

Result<uint32_t> DdlParser::Unsigned32(std::string_view what) {
  const Token& t = Peek();
  if (t.kind != TokenKind::kNumber || t.value.find_first_not_of("0123456789") != std::string::npos) {
    return Unexpected(what);
  }
  uint64_t v = 0;
  for (char c : t.value) {
    v = v * 10 + static_cast<uint64_t>(c - '0');
    if (v > UINT32_MAX) return ErrorAt(t, fmt::format("{} {} is too large", what, t.text));
  }
  Next();
  return static_cast<uint32_t>(v);
}

Status DdlParser::SkipUnsigned32(std::string_view what) {
  CHSYNC_RETURN_IF_ERROR(Unsigned32(what));
  return Status::Ok();
}

bool DdlParser::IsDottedNumber(const Token& t) {
  if (t.kind != TokenKind::kNumber) return false;
  size_t dot = t.value.find('.');
  return dot != std::string::npos && dot > 0 &&
         t.value.find_first_not_of("0123456789", dot + 1) == std::string::npos;
}

Result<uint32_t> DdlParser::FieldLength(std::string_view what) {
  const Token& t = Peek();
  if (!IsDottedNumber(t)) return Unsigned32(what);
  uint64_t v = 0;
  for (char c : std::string_view(t.value).substr(0, t.value.find('.'))) {
    v = v * 10 + static_cast<uint64_t>(c - '0');
    if (v > UINT32_MAX) return ErrorAt(t, fmt::format("{} {} is too large", what, t.text));
  }
  Next();
  return static_cast<uint32_t>(v);
}

Status DdlParser::SkipWaitNowait() {
  if (Accept("WAIT")) return SkipUnsigned32("a WAIT timeout");
  Accept("NOWAIT");
  return Status::Ok();
}

Status DdlParser::Nest(const Token& t, int& depth) const {
  if (t.IsPunct("(")) {
    if (++depth > kMaxNesting)
      return ErrorAt(t, fmt::format("parentheses nested deeper than {}", kMaxNesting));
  } else if (t.IsPunct(")")) {
    --depth;
  }
  return Status::Ok();
}

Result<std::string> DdlParser::ParenthesisedText() {
  if (!Peek().IsPunct("(")) return Unexpected("'('");
  size_t open = pos_;
  int depth = 0;
  while (true) {
    const Token& t = Peek();
    if (t.kind == TokenKind::kEnd) return ErrorAt(tokens_[open], "unbalanced '(' opened");
    CHSYNC_RETURN_IF_ERROR(Nest(t, depth));
    if (depth == 0) {
      std::string inner = TextBetween(open + 1, pos_);
      Next();
      return inner;
    }
    Next();
  }
}

Result<std::string> DdlParser::SkipUntilSeparator(bool stop_at_attributes) {
  size_t start = pos_;
  int depth = 0;
  while (!AtEnd()) {
    const Token& t = Peek();
    if (depth == 0 && (t.IsPunct(",") || t.IsPunct(")"))) break;
    if (depth == 0 && stop_at_attributes && AtColumnAttributeStart()) break;
    CHSYNC_RETURN_IF_ERROR(Nest(t, depth));
    Next();
  }
  return TextBetween(start, pos_);
}

Result<std::string> DdlParser::SkipToEnd(std::initializer_list<std::string_view> stop_words) {
  size_t start = pos_;
  int depth = 0;
  while (!AtEnd()) {
    const Token& t = Peek();
    if (depth == 0 &&
        std::any_of(stop_words.begin(), stop_words.end(), [&](std::string_view w) { return t.IsWord(w); })) {
      break;
    }
    CHSYNC_RETURN_IF_ERROR(Nest(t, depth));
    if (depth < 0) return ErrorAt(t, "unbalanced ')'");
    Next();
  }
  if (depth != 0) return ErrorAt(Peek(), "unbalanced '(': missing ')' before");
  return TextBetween(start, pos_);
}

Result<std::string> DdlParser::StringLiteral(std::string* introducer) {
  if (Peek().kind == TokenKind::kWord && Peek().text.size() > 1 && Peek().text[0] == '_' &&
      Peek(1).kind == TokenKind::kString) {
    if (introducer != nullptr) *introducer = CanonicalCharset(Peek().text.substr(1));
    Next();
  }
  if (Peek().kind != TokenKind::kString) return Unexpected("a string literal");
  std::string value = Next().value;
  while (Peek().kind == TokenKind::kString && !Peek().national) value += Next().value;
  if (Accept("COLLATE")) CHSYNC_RETURN_IF_ERROR(CharsetName());
  return value;
}

bool DdlParser::AtStringLiteral() const {
  return Peek().kind == TokenKind::kString || (Peek().kind == TokenKind::kWord && Peek().text.size() > 1 &&
                                               Peek().text[0] == '_' && Peek(1).kind == TokenKind::kString);
}

Result<std::string> DdlParser::CharsetName() {
  const Token& t = Peek();
  if (t.kind == TokenKind::kWord || t.kind == TokenKind::kQuotedIdentifier || t.kind == TokenKind::kString) {
    return Next().value;
  }
  return Unexpected("a character set or collation name");
}

}  // namespace chsync::schema
