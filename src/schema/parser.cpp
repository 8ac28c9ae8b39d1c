#include "schema/parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>

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

bool IsReserved(std::string_view word) {
  return std::any_of(kReserved.begin(), kReserved.end(),
                     [&](std::string_view r) { return EqualsIgnoreCase(r, word); });
}

std::string Upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

std::string DescribeToken(const Token& token) {
  if (token.kind == TokenKind::kEnd) return "end of statement";
  std::string_view text = token.text;
  if (text.size() > 40) return fmt::format("'{}…'", text.substr(0, 40));
  return fmt::format("'{}'", text);
}

/// Bytes per character of common charsets, for TEXT(M)/BLOB(M) sizing.
uint64_t BytesPerChar(std::string_view charset) {
  if (charset.empty() || charset == "utf8mb4") return 4;
  if (charset == "utf8mb3" || charset == "utf8") return 3;
  if (charset == "ucs2" || charset == "utf16" || charset == "utf16le") return charset == "ucs2" ? 2 : 4;
  if (charset == "utf32") return 4;
  return 1;
}

class Parser {
 public:
  Parser(std::string_view sql, std::vector<Token> tokens) : sql_(sql), tokens_(std::move(tokens)) {}

  Result<Statement> Parse() {
    Statement st;
    if (AtEnd()) {
      st.kind = StatementKind::kEmpty;
      st.description = "EMPTY";
      return st;
    }
    st.offset = Peek().offset;
    CHSYNC_RETURN_IF_ERROR(ParseTop(st));
    // A terminating ';' and nothing after it.
    AcceptPunct(";");
    if (Peek().kind != TokenKind::kEnd) return Unexpected("end of statement");
    const Token& last = tokens_[tokens_.size() >= 2 ? tokens_.size() - 2 : 0];
    st.length = last.offset + last.text.size() - st.offset;
    return st;
  }

 private:
  // ---- token helpers ----
  const Token& Peek(size_t ahead = 0) const {
    size_t i = pos_ + ahead;
    return i < tokens_.size() ? tokens_[i] : tokens_.back();
  }
  const Token& Next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool AtEnd() const {
    return Peek().kind == TokenKind::kEnd || (Peek().IsPunct(";") && Peek(1).kind == TokenKind::kEnd);
  }
  /// End of input or a ';' (what follows a ';' is reported by Parse as trailing text).
  bool AtStatementEnd() const { return Peek().kind == TokenKind::kEnd || Peek().IsPunct(";"); }
  bool Accept(std::string_view word) {
    if (!Peek().IsWord(word)) return false;
    Next();
    return true;
  }
  bool AcceptSeq(std::initializer_list<std::string_view> words) {
    size_t i = 0;
    for (std::string_view w : words) {
      if (!Peek(i).IsWord(w)) return false;
      ++i;
    }
    for (size_t k = 0; k < i; ++k) Next();
    return true;
  }
  bool AcceptPunct(std::string_view p) {
    if (!Peek().IsPunct(p)) return false;
    Next();
    return true;
  }
  Status Expect(std::string_view word) {
    if (Accept(word)) return Status::Ok();
    return Unexpected(Upper(word));
  }
  Status ExpectPunct(std::string_view p) {
    if (AcceptPunct(p)) return Status::Ok();
    return Unexpected(fmt::format("'{}'", p));
  }
  Error Unexpected(std::string_view expected) const {
    const Token& t = Peek();
    return Error(ErrorKind::kCorrupt,
                 fmt::format("expected {}, found {} at {}", expected, DescribeToken(t), DescribePosition(t)));
  }
  Error ErrorAt(const Token& t, std::string_view message) const {
    return Error(ErrorKind::kCorrupt, fmt::format("{} at {}", message, DescribePosition(t)));
  }
  std::string TextBetween(size_t first_token, size_t end_token) const {
    if (end_token <= first_token) return {};
    const Token& a = tokens_[first_token];
    const Token& b = tokens_[end_token - 1];
    return std::string(sql_.substr(a.offset, b.offset + b.text.size() - a.offset));
  }

  bool IsIdentifierToken(const Token& t) const {
    return t.kind == TokenKind::kQuotedIdentifier || (t.kind == TokenKind::kWord && !IsReserved(t.text));
  }

  Result<std::string> Identifier(std::string_view what) {
    if (!IsIdentifierToken(Peek())) return Unexpected(what);
    return Next().value;
  }

  Result<TableName> ParseTableName() {
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

  /// Column reference, optionally qualified (db.t.c or t.c); returns the last part.
  Result<std::string> ColumnName() {
    CHSYNC_ASSIGN_OR_RETURN(std::string name, Identifier("a column name"));
    while (Peek().IsPunct(".") &&
           (Peek(1).kind == TokenKind::kWord || Peek(1).kind == TokenKind::kQuotedIdentifier)) {
      Next();
      name = Next().value;
    }
    return name;
  }

  Result<uint32_t> Unsigned32(std::string_view what) {
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

  /// Skips a balanced parenthesised group starting at '('; returns the text inside.
  Result<std::string> ParenthesisedText() {
    if (!Peek().IsPunct("(")) return Unexpected("'('");
    size_t open = pos_;
    int depth = 0;
    while (true) {
      const Token& t = Peek();
      if (t.kind == TokenKind::kEnd) return ErrorAt(tokens_[open], "unbalanced '(' opened");
      if (t.IsPunct("(")) {
        if (++depth > kMaxNesting) {
          return ErrorAt(t, fmt::format("parentheses nested deeper than {}", kMaxNesting));
        }
      } else if (t.IsPunct(")")) {
        --depth;
        if (depth == 0) {
          std::string inner = TextBetween(open + 1, pos_);
          Next();
          return inner;
        }
      }
      Next();
    }
  }

  /// Skips tokens up to (not including) ',' or ')' at depth 0, or the end; returns the text.
  Result<std::string> SkipUntilSeparator(bool stop_at_words = false) {
    size_t start = pos_;
    int depth = 0;
    while (true) {
      const Token& t = Peek();
      if (t.kind == TokenKind::kEnd || (t.IsPunct(";") && Peek(1).kind == TokenKind::kEnd)) break;
      if (depth == 0 && (t.IsPunct(",") || t.IsPunct(")"))) break;
      if (depth == 0 && stop_at_words && IsColumnAttributeStart(t)) break;
      if (t.IsPunct("(")) {
        if (++depth > kMaxNesting)
          return ErrorAt(t, fmt::format("parentheses nested deeper than {}", kMaxNesting));
      } else if (t.IsPunct(")")) {
        --depth;
      }
      Next();
    }
    return TextBetween(start, pos_);
  }

  /// Skips everything to the end of the statement; returns the text.
  Result<std::string> SkipToEnd() {
    size_t start = pos_;
    int depth = 0;
    while (!AtEnd()) {
      const Token& t = Peek();
      if (t.IsPunct("(")) {
        if (++depth > kMaxNesting)
          return ErrorAt(t, fmt::format("parentheses nested deeper than {}", kMaxNesting));
      } else if (t.IsPunct(")")) {
        if (--depth < 0) return ErrorAt(t, "unbalanced ')'");
      }
      Next();
    }
    if (depth != 0) return ErrorAt(Peek(), "unbalanced '(': missing ')' before");
    return TextBetween(start, pos_);
  }

  bool IsColumnAttributeStart(const Token& t) const {
    static constexpr std::string_view kWords[] = {"NOT",
                                                  "NULL",
                                                  "DEFAULT",
                                                  "AUTO_INCREMENT",
                                                  "UNIQUE",
                                                  "PRIMARY",
                                                  "KEY",
                                                  "COMMENT",
                                                  "COLLATE",
                                                  "ON",
                                                  "REFERENCES",
                                                  "CHECK",
                                                  "CONSTRAINT",
                                                  "INVISIBLE",
                                                  "VISIBLE",
                                                  "FIRST",
                                                  "AFTER",
                                                  "COLUMN_FORMAT",
                                                  "STORAGE",
                                                  "GENERATED",
                                                  "AS",
                                                  "SERIAL",
                                                  "SRID",
                                                  "CHARACTER",
                                                  "CHARSET",
                                                  "ENGINE_ATTRIBUTE",
                                                  "SECONDARY_ENGINE_ATTRIBUTE",
                                                  "VIRTUAL",
                                                  "PERSISTENT",
                                                  "STORED",
                                                  "COMPRESSED",
                                                  "WITHOUT",
                                                  "WITH"};
    if (t.kind != TokenKind::kWord) return false;
    return std::any_of(std::begin(kWords), std::end(kWords), [&](std::string_view w) { return t.IsWord(w); });
  }

  /// One string literal, with optional introducer/N prefix, adjacent parts and trailing COLLATE.
  Result<std::string> StringLiteral(std::string* introducer = nullptr) {
    if (Peek().kind == TokenKind::kWord && Peek().text.size() > 1 && Peek().text[0] == '_' &&
        Peek(1).kind == TokenKind::kString) {
      if (introducer != nullptr) *introducer = CanonicalCharset(Peek().text.substr(1));
      Next();
    }
    if (Peek().kind != TokenKind::kString) return Unexpected("a string literal");
    std::string value = Next().value;
    while (Peek().kind == TokenKind::kString && !Peek().national) value += Next().value;
    if (Accept("COLLATE")) {
      CHSYNC_ASSIGN_OR_RETURN(std::string ignored, CharsetName());
    }
    return value;
  }

  bool AtStringLiteral() const {
    return Peek().kind == TokenKind::kString || (Peek().kind == TokenKind::kWord && Peek().text.size() > 1 &&
                                                 Peek().text[0] == '_' && Peek(1).kind == TokenKind::kString);
  }

  /// Charset or collation name: identifier, string or the word BINARY/DEFAULT.
  Result<std::string> CharsetName() {
    const Token& t = Peek();
    if (t.kind == TokenKind::kWord || t.kind == TokenKind::kQuotedIdentifier ||
        t.kind == TokenKind::kString) {
      return Next().value;
    }
    return Unexpected("a character set or collation name");
  }

  // ---- statements ----
  Status ParseTop(Statement& st) {
    const Token& first = Peek();
    if (first.IsPunct("(")) {
      st.kind = StatementKind::kDml;
      st.description = "SELECT";
      return SkipToEnd().ok() ? Status::Ok() : Status(Unexpected("a statement"));
    }
    if (first.kind != TokenKind::kWord) return Unexpected("a statement keyword");
    if (Accept("CREATE")) return ParseCreate(st);
    if (Accept("ALTER")) return ParseAlter(st);
    if (Accept("DROP")) return ParseDrop(st);
    if (Accept("RENAME")) return ParseRename(st);
    if (Accept("TRUNCATE")) return ParseTruncate(st);
    return Classify(st);
  }

  Status Classify(Statement& st) {
    struct Rule {
      std::string_view word;
      StatementKind kind;
    };
    static constexpr Rule kRules[] = {
        {"INSERT", StatementKind::kDml},
        {"UPDATE", StatementKind::kDml},
        {"DELETE", StatementKind::kDml},
        {"REPLACE", StatementKind::kDml},
        {"LOAD", StatementKind::kDml},
        {"SELECT", StatementKind::kDml},
        {"CALL", StatementKind::kDml},
        {"DO", StatementKind::kDml},
        {"WITH", StatementKind::kDml},
        {"VALUES", StatementKind::kDml},
        {"TABLE", StatementKind::kDml},
        {"HANDLER", StatementKind::kDml},
        {"BEGIN", StatementKind::kTransaction},
        {"COMMIT", StatementKind::kTransaction},
        {"ROLLBACK", StatementKind::kTransaction},
        {"SAVEPOINT", StatementKind::kTransaction},
        {"RELEASE", StatementKind::kTransaction},
        {"START", StatementKind::kTransaction},
        {"XA", StatementKind::kTransaction},
        {"GRANT", StatementKind::kAccount},
        {"REVOKE", StatementKind::kAccount},
        {"SET", StatementKind::kSession},
        {"USE", StatementKind::kSession},
        {"FLUSH", StatementKind::kAdmin},
        {"ANALYZE", StatementKind::kAdmin},
        {"OPTIMIZE", StatementKind::kAdmin},
        {"REPAIR", StatementKind::kAdmin},
        {"CHECK", StatementKind::kAdmin},
        {"CHECKSUM", StatementKind::kAdmin},
        {"INSTALL", StatementKind::kAdmin},
        {"UNINSTALL", StatementKind::kAdmin},
        {"KILL", StatementKind::kAdmin},
        {"PURGE", StatementKind::kAdmin},
        {"RESET", StatementKind::kAdmin},
        {"SHOW", StatementKind::kAdmin},
        {"DESCRIBE", StatementKind::kAdmin},
        {"DESC", StatementKind::kAdmin},
        {"EXPLAIN", StatementKind::kAdmin},
        {"LOCK", StatementKind::kAdmin},
        {"UNLOCK", StatementKind::kAdmin},
        {"CHANGE", StatementKind::kAdmin},
        {"STOP", StatementKind::kAdmin},
        {"CACHE", StatementKind::kAdmin},
        {"HELP", StatementKind::kAdmin},
        {"BINLOG", StatementKind::kAdmin},
        {"IMPORT", StatementKind::kAdmin},
        {"CLONE", StatementKind::kAdmin},
        {"SHUTDOWN", StatementKind::kAdmin},
        {"RESTART", StatementKind::kAdmin},
        {"BACKUP", StatementKind::kAdmin},
        {"PREPARE", StatementKind::kDml},
        {"EXECUTE", StatementKind::kDml},
        {"DEALLOCATE", StatementKind::kDml},
        {"SIGNAL", StatementKind::kDml},
    };
    const Token& first = Peek();
    for (const Rule& rule : kRules) {
      if (first.IsWord(rule.word)) {
        st.kind = rule.kind;
        st.description = Upper(rule.word);
        if (rule.kind == StatementKind::kSession && first.IsWord("SET") &&
            (Peek(1).IsWord("PASSWORD") || Peek(1).IsWord("ROLE") || Peek(1).IsWord("DEFAULT"))) {
          st.kind = StatementKind::kAccount;
          st.description = "SET " + Upper(Peek(1).text);
        }
        if (first.IsWord("USE")) {
          Next();
          CHSYNC_ASSIGN_OR_RETURN(st.database, Identifier("a database name"));
          return Status::Ok();
        }
        Next();
        CHSYNC_ASSIGN_OR_RETURN(std::string ignored, SkipToEnd());
        return Status::Ok();
      }
    }
    st.kind = StatementKind::kOther;
    st.description = Upper(first.text);
    CHSYNC_ASSIGN_OR_RETURN(std::string ignored, SkipToEnd());
    return Status::Ok();
  }

  /// DEFINER = user[@host] | CURRENT_USER[()]
  Status SkipDefiner() {
    if (!Accept("DEFINER")) return Status::Ok();
    CHSYNC_RETURN_IF_ERROR(ExpectPunct("="));
    if (Accept("CURRENT_USER")) {
      if (AcceptPunct("(")) CHSYNC_RETURN_IF_ERROR(ExpectPunct(")"));
      return Status::Ok();
    }
    const Token& t = Peek();
    if (t.kind != TokenKind::kWord && t.kind != TokenKind::kQuotedIdentifier &&
        t.kind != TokenKind::kString) {
      return Unexpected("a definer user");
    }
    Next();
    if (Peek().kind == TokenKind::kVariable) Next();
    return Status::Ok();
  }

  Status ParseCreate(Statement& st) {
    if (AcceptSeq({"OR", "REPLACE"})) st.or_replace = true;
    // View prefixes.
    while (true) {
      if (Accept("ALGORITHM")) {
        CHSYNC_RETURN_IF_ERROR(ExpectPunct("="));
        Next();
      } else if (Peek().IsWord("DEFINER")) {
        CHSYNC_RETURN_IF_ERROR(SkipDefiner());
      } else if (AcceptSeq({"SQL", "SECURITY"})) {
        Next();
      } else {
        break;
      }
    }
    if (Accept("TEMPORARY")) st.temporary = true;
    if (Accept("TABLE")) return ParseCreateTable(st);

    bool unique = false;
    KeyDefinition::Type index_type = KeyDefinition::Type::kIndex;
    if (Accept("UNIQUE")) {
      unique = true;
      index_type = KeyDefinition::Type::kUnique;
    } else if (Accept("FULLTEXT")) {
      index_type = KeyDefinition::Type::kFulltext;
    } else if (Accept("SPATIAL")) {
      index_type = KeyDefinition::Type::kSpatial;
    }
    Accept("ONLINE") || Accept("OFFLINE");
    if (Accept("INDEX")) return ParseCreateIndex(st, index_type);
    if (unique) return Unexpected("INDEX");

    const Token& object = Peek();
    if (object.IsWord("DATABASE") || object.IsWord("SCHEMA")) {
      Next();
      st.kind = StatementKind::kCreateDatabase;
      st.description = "CREATE DATABASE";
      if (AcceptSeq({"IF", "NOT", "EXISTS"})) st.if_not_exists = true;
      CHSYNC_ASSIGN_OR_RETURN(st.database, Identifier("a database name"));
      return ParseDatabaseOptions(st);
    }
    struct Rule {
      std::string_view word;
      StatementKind kind;
    };
    static constexpr Rule kRules[] = {
        {"VIEW", StatementKind::kView},         {"TRIGGER", StatementKind::kRoutine},
        {"PROCEDURE", StatementKind::kRoutine}, {"FUNCTION", StatementKind::kRoutine},
        {"EVENT", StatementKind::kRoutine},     {"PACKAGE", StatementKind::kRoutine},
        {"AGGREGATE", StatementKind::kRoutine}, {"SEQUENCE", StatementKind::kSequence},
        {"USER", StatementKind::kAccount},      {"ROLE", StatementKind::kAccount},
        {"TABLESPACE", StatementKind::kAdmin},  {"SERVER", StatementKind::kAdmin},
        {"LOGFILE", StatementKind::kAdmin},     {"UNDO", StatementKind::kAdmin},
        {"SPATIAL", StatementKind::kAdmin},     {"RESOURCE", StatementKind::kAdmin},
        {"SYNONYM", StatementKind::kOther},
    };
    for (const Rule& rule : kRules) {
      if (object.IsWord(rule.word)) {
        st.kind = rule.kind;
        st.description = "CREATE " + Upper(rule.word);
        Next();
        CHSYNC_ASSIGN_OR_RETURN(std::string ignored, SkipToEnd());
        return Status::Ok();
      }
    }
    return Unexpected("TABLE, INDEX, VIEW, DATABASE or another object after CREATE");
  }

  Status ParseDatabaseOptions(Statement& st) {
    while (!AtStatementEnd()) {
      Accept("DEFAULT");
      if (Accept("CHARACTER")) {
        CHSYNC_RETURN_IF_ERROR(Expect("SET"));
        AcceptPunct("=");
        CHSYNC_ASSIGN_OR_RETURN(std::string cs, CharsetName());
        st.options.charset = CanonicalCharset(cs);
      } else if (Accept("CHARSET")) {
        AcceptPunct("=");
        CHSYNC_ASSIGN_OR_RETURN(std::string cs, CharsetName());
        st.options.charset = CanonicalCharset(cs);
      } else if (Accept("COLLATE")) {
        AcceptPunct("=");
        CHSYNC_ASSIGN_OR_RETURN(std::string co, CharsetName());
        st.options.collation = CanonicalCollation(co);
      } else if (Peek().kind == TokenKind::kWord) {
        Next();
        AcceptPunct("=");
        if (Peek().kind == TokenKind::kEnd) return Unexpected("an option value");
        Next();
      } else {
        return Unexpected("a database option");
      }
    }
    return Status::Ok();
  }

  Status ParseCreateIndex(Statement& st, KeyDefinition::Type type) {
    st.kind = StatementKind::kCreateIndex;
    st.description = "CREATE INDEX";
    st.key.type = type;
    if (AcceptSeq({"IF", "NOT", "EXISTS"})) st.if_not_exists = true;
    CHSYNC_ASSIGN_OR_RETURN(st.key.name, Identifier("an index name"));
    CHSYNC_RETURN_IF_ERROR(SkipIndexType());
    CHSYNC_RETURN_IF_ERROR(Expect("ON"));
    CHSYNC_ASSIGN_OR_RETURN(st.table, ParseTableName());
    CHSYNC_RETURN_IF_ERROR(SkipIndexType());
    CHSYNC_RETURN_IF_ERROR(KeyParts(st.key));
    CHSYNC_RETURN_IF_ERROR(IndexOptions());
    return AlgorithmLockTail(st);
  }

  /// ALGORITHM [=] x / LOCK [=] x / WAIT n / NOWAIT, as trailing options of CREATE/DROP INDEX.
  Status AlgorithmLockTail(Statement& st) {
    (void)st;
    while (!AtStatementEnd()) {
      if (Accept("ALGORITHM") || Accept("LOCK")) {
        AcceptPunct("=");
        if (Peek().kind != TokenKind::kWord) return Unexpected("an ALGORITHM or LOCK value");
        Next();
      } else if (Accept("WAIT")) {
        CHSYNC_ASSIGN_OR_RETURN(uint32_t ignored, Unsigned32("a WAIT timeout"));
        (void)ignored;
      } else if (Accept("NOWAIT")) {
      } else {
        return Unexpected("ALGORITHM, LOCK or end of statement");
      }
    }
    return Status::Ok();
  }

  Status SkipIndexType() {
    if (Accept("USING") || Accept("TYPE")) {
      if (!(Accept("BTREE") || Accept("HASH") || Accept("RTREE"))) return Unexpected("BTREE, HASH or RTREE");
    }
    return Status::Ok();
  }

  /// index_option*: KEY_BLOCK_SIZE, USING, WITH PARSER, COMMENT, VISIBLE, INVISIBLE, IGNORED, …
  Status IndexOptions() {
    while (true) {
      if (Accept("KEY_BLOCK_SIZE")) {
        AcceptPunct("=");
        CHSYNC_ASSIGN_OR_RETURN(uint32_t ignored, Unsigned32("a KEY_BLOCK_SIZE"));
        (void)ignored;
      } else if (Peek().IsWord("USING") || Peek().IsWord("TYPE")) {
        CHSYNC_RETURN_IF_ERROR(SkipIndexType());
      } else if (AcceptSeq({"WITH", "PARSER"})) {
        CHSYNC_ASSIGN_OR_RETURN(std::string ignored, Identifier("a parser name"));
      } else if (Accept("COMMENT")) {
        CHSYNC_ASSIGN_OR_RETURN(std::string ignored, StringLiteral());
      } else if (Accept("VISIBLE") || Accept("INVISIBLE") || Accept("IGNORED") ||
                 AcceptSeq({"NOT", "IGNORED"})) {
      } else if (Accept("ENGINE_ATTRIBUTE") || Accept("SECONDARY_ENGINE_ATTRIBUTE") || Accept("CLUSTERING")) {
        AcceptPunct("=");
        if (Peek().kind == TokenKind::kEnd) return Unexpected("an option value");
        Next();
      } else {
        return Status::Ok();
      }
    }
  }

  /// ( key_part [, key_part]... ) where key_part = col [(len)] [ASC|DESC] | (expr) [ASC|DESC]
  Status KeyParts(KeyDefinition& key) {
    CHSYNC_RETURN_IF_ERROR(ExpectPunct("("));
    while (true) {
      if (Peek().IsPunct("(")) {
        CHSYNC_ASSIGN_OR_RETURN(std::string expr, ParenthesisedText());
        key.columns.push_back("(" + expr + ")");
      } else {
        CHSYNC_ASSIGN_OR_RETURN(std::string col, ColumnName());
        if (AcceptPunct("(")) {
          CHSYNC_ASSIGN_OR_RETURN(uint32_t ignored, Unsigned32("a key prefix length"));
          (void)ignored;
          CHSYNC_RETURN_IF_ERROR(ExpectPunct(")"));
        }
        key.columns.push_back(std::move(col));
      }
      Accept("ASC") || Accept("DESC");
      if (AcceptPunct(",")) continue;
      return ExpectPunct(")");
    }
  }

  /// Key definitions that start a CREATE TABLE element or follow ALTER … ADD.
  bool AtKeyDefinition() const {
    const Token& t = Peek();
    if (t.kind != TokenKind::kWord) return false;
    if (t.IsWord("PERIOD")) return Peek(1).IsWord("FOR");
    return t.IsWord("CONSTRAINT") || t.IsWord("PRIMARY") || t.IsWord("UNIQUE") || t.IsWord("KEY") ||
           t.IsWord("INDEX") || t.IsWord("FULLTEXT") || t.IsWord("SPATIAL") || t.IsWord("FOREIGN") ||
           t.IsWord("CHECK");
  }

  /// Returns nullopt for clauses that are parsed but define no key (MariaDB PERIOD FOR …).
  Result<std::optional<KeyDefinition>> ParseKeyDefinition(bool* if_not_exists = nullptr) {
    KeyDefinition key;
    if (Accept("PERIOD")) {
      CHSYNC_RETURN_IF_ERROR(Expect("FOR"));
      Next();
      CHSYNC_ASSIGN_OR_RETURN(std::string ignored, ParenthesisedText());
      return std::optional<KeyDefinition>();
    }
    std::string symbol;
    if (Accept("CONSTRAINT")) {
      if (AcceptSeq({"IF", "NOT", "EXISTS"}) && if_not_exists != nullptr) *if_not_exists = true;
      if (IsIdentifierToken(Peek()) && !Peek().IsWord("CHECK")) {
        CHSYNC_ASSIGN_OR_RETURN(symbol, Identifier("a constraint name"));
      }
    }
    if (Accept("PRIMARY")) {
      CHSYNC_RETURN_IF_ERROR(Expect("KEY"));
      key.type = KeyDefinition::Type::kPrimary;
      key.name = "PRIMARY";
      CHSYNC_RETURN_IF_ERROR(SkipIndexType());
      CHSYNC_RETURN_IF_ERROR(KeyParts(key));
      CHSYNC_RETURN_IF_ERROR(IndexOptions());
      return std::optional<KeyDefinition>(std::move(key));
    }
    if (Accept("FOREIGN")) {
      CHSYNC_RETURN_IF_ERROR(Expect("KEY"));
      key.type = KeyDefinition::Type::kForeign;
      if (AcceptSeq({"IF", "NOT", "EXISTS"}) && if_not_exists != nullptr) *if_not_exists = true;
      key.name = symbol;
      if (IsIdentifierToken(Peek())) {
        CHSYNC_ASSIGN_OR_RETURN(std::string index_name, Identifier("an index name"));
        if (key.name.empty()) key.name = index_name;
      }
      CHSYNC_RETURN_IF_ERROR(KeyParts(key));
      CHSYNC_RETURN_IF_ERROR(References(key));
      return std::optional<KeyDefinition>(std::move(key));
    }
    if (Accept("CHECK")) {
      key.type = KeyDefinition::Type::kCheck;
      key.name = symbol;
      CHSYNC_ASSIGN_OR_RETURN(key.check, ParenthesisedText());
      AcceptSeq({"NOT", "ENFORCED"}) || Accept("ENFORCED");
      return std::optional<KeyDefinition>(std::move(key));
    }
    if (Accept("UNIQUE")) {
      key.type = KeyDefinition::Type::kUnique;
      Accept("INDEX") || Accept("KEY");
    } else if (Accept("FULLTEXT")) {
      key.type = KeyDefinition::Type::kFulltext;
      Accept("INDEX") || Accept("KEY");
    } else if (Accept("SPATIAL")) {
      key.type = KeyDefinition::Type::kSpatial;
      Accept("INDEX") || Accept("KEY");
    } else if (!symbol.empty() || !(Accept("INDEX") || Accept("KEY"))) {
      return Unexpected("PRIMARY KEY, UNIQUE, INDEX, KEY, FULLTEXT, SPATIAL, FOREIGN KEY or CHECK");
    }
    if (AcceptSeq({"IF", "NOT", "EXISTS"}) && if_not_exists != nullptr) *if_not_exists = true;
    if (IsIdentifierToken(Peek()) && !Peek().IsWord("USING") && !Peek().IsWord("TYPE")) {
      CHSYNC_ASSIGN_OR_RETURN(key.name, Identifier("an index name"));
    }
    if (key.name.empty()) key.name = symbol;
    CHSYNC_RETURN_IF_ERROR(SkipIndexType());
    CHSYNC_RETURN_IF_ERROR(KeyParts(key));
    CHSYNC_RETURN_IF_ERROR(IndexOptions());
    return std::optional<KeyDefinition>(std::move(key));
  }

  Status References(KeyDefinition& key) {
    CHSYNC_RETURN_IF_ERROR(Expect("REFERENCES"));
    CHSYNC_ASSIGN_OR_RETURN(key.references, ParseTableName());
    if (Peek().IsPunct("(")) {
      KeyDefinition target;
      CHSYNC_RETURN_IF_ERROR(KeyParts(target));
    }
    while (true) {
      if (Accept("MATCH")) {
        if (!(Accept("FULL") || Accept("PARTIAL") || Accept("SIMPLE")))
          return Unexpected("FULL, PARTIAL or SIMPLE");
      } else if (Accept("ON")) {
        if (!(Accept("DELETE") || Accept("UPDATE"))) return Unexpected("DELETE or UPDATE");
        if (Accept("RESTRICT") || Accept("CASCADE") || AcceptSeq({"SET", "NULL"}) ||
            AcceptSeq({"SET", "DEFAULT"}) || AcceptSeq({"NO", "ACTION"})) {
          continue;
        }
        return Unexpected("RESTRICT, CASCADE, SET NULL, SET DEFAULT or NO ACTION");
      } else {
        return Status::Ok();
      }
    }
  }

  Status ParseCreateTable(Statement& st) {
    st.kind = StatementKind::kCreateTable;
    st.description = "CREATE TABLE";
    if (AcceptSeq({"IF", "NOT", "EXISTS"})) st.if_not_exists = true;
    CHSYNC_ASSIGN_OR_RETURN(st.table, ParseTableName());
    if (Accept("LIKE")) {
      st.kind = StatementKind::kCreateTableLike;
      st.description = "CREATE TABLE LIKE";
      CHSYNC_ASSIGN_OR_RETURN(st.like, ParseTableName());
      return Status::Ok();
    }
    if (Peek().IsPunct("(") && Peek(1).IsWord("LIKE")) {
      Next();
      Next();
      st.kind = StatementKind::kCreateTableLike;
      st.description = "CREATE TABLE LIKE";
      CHSYNC_ASSIGN_OR_RETURN(st.like, ParseTableName());
      return ExpectPunct(")");
    }
    if (Peek().IsPunct("(") &&
        !(Peek(1).IsWord("SELECT") || Peek(1).IsWord("WITH") || Peek(1).IsPunct("("))) {
      Next();
      while (true) {
        if (AtKeyDefinition()) {
          CHSYNC_ASSIGN_OR_RETURN(std::optional<KeyDefinition> key, ParseKeyDefinition());
          if (key) st.keys.push_back(std::move(*key));
        } else {
          CHSYNC_ASSIGN_OR_RETURN(std::string name, Identifier("a column name or key definition"));
          CHSYNC_ASSIGN_OR_RETURN(ColumnDefinition def, ParseColumnDefinition(std::move(name)));
          CHSYNC_RETURN_IF_ERROR(CollectInlineKeys(def, st.keys));
          st.columns.push_back(std::move(def));
        }
        if (AcceptPunct(",")) continue;
        if (!AcceptPunct(")")) return Unexpected("',' or ')'");
        break;
      }
    }
    CHSYNC_RETURN_IF_ERROR(TableOptionList(st.options, /*in_alter=*/false));
    if (Accept("PARTITION")) {
      CHSYNC_RETURN_IF_ERROR(SkipPartitionClauseInCreate());
    }
    Accept("IGNORE") || Accept("REPLACE");
    Accept("AS");
    if (Peek().IsWord("SELECT") || Peek().IsWord("WITH") || Peek().IsPunct("(") || Peek().IsWord("TABLE") ||
        Peek().IsWord("VALUES")) {
      st.as_select = true;
      CHSYNC_ASSIGN_OR_RETURN(std::string ignored, SkipToEnd());
    }
    if (st.columns.empty() && !st.as_select) {
      return Unexpected("a column list '(', LIKE or AS SELECT");
    }
    return Status::Ok();
  }

  /// PARTITION BY … in CREATE TABLE: skipped up to an AS SELECT or the end.
  Status SkipPartitionClauseInCreate() {
    int depth = 0;
    while (!AtEnd()) {
      const Token& t = Peek();
      if (depth == 0 && (t.IsWord("SELECT") || t.IsWord("AS") || t.IsWord("IGNORE") || t.IsWord("REPLACE")))
        break;
      if (t.IsPunct("(")) {
        if (++depth > kMaxNesting)
          return ErrorAt(t, fmt::format("parentheses nested deeper than {}", kMaxNesting));
      } else if (t.IsPunct(")")) {
        if (--depth < 0) return ErrorAt(t, "unbalanced ')'");
      }
      Next();
    }
    if (depth != 0) return ErrorAt(Peek(), "unbalanced '(': missing ')' before");
    return Status::Ok();
  }

  /// Turns `PRIMARY KEY`/`UNIQUE` written on a column into key definitions.
  Status CollectInlineKeys(const ColumnDefinition& def, std::vector<KeyDefinition>& keys) {
    if (def.primary_key) {
      KeyDefinition key;
      key.type = KeyDefinition::Type::kPrimary;
      key.name = "PRIMARY";
      key.columns.push_back(def.column.name);
      keys.push_back(std::move(key));
    }
    if (def.unique || def.serial) {
      KeyDefinition key;
      key.type = KeyDefinition::Type::kUnique;
      key.columns.push_back(def.column.name);
      keys.push_back(std::move(key));
    }
    return Status::Ok();
  }

  // ---- table options ----
  /// Parses options up to a stop (PARTITION, AS, SELECT, end, or — in ALTER — ',').
  Status TableOptionList(TableOptions& options, bool in_alter) {
    while (!AtStatementEnd()) {
      const Token& t = Peek();
      if (t.IsWord("PARTITION") || t.IsWord("AS") || t.IsWord("SELECT") || t.IsWord("IGNORE") ||
          t.IsWord("REPLACE") || (t.IsWord("WITH") && !Peek(1).IsWord("SYSTEM")) || t.IsPunct("(") ||
          t.IsWord("TABLE") || t.IsWord("VALUES")) {
        return Status::Ok();
      }
      if (in_alter && t.IsPunct(",")) return Status::Ok();
      if (AcceptPunct(",")) continue;
      CHSYNC_ASSIGN_OR_RETURN(bool parsed, TableOption(options));
      if (!parsed) return Unexpected("a table option");
    }
    return Status::Ok();
  }

  /// One table option; false (consuming nothing) when the next token starts none.
  Result<bool> TableOption(TableOptions& options) {
    size_t start = pos_;
    bool is_default = Accept("DEFAULT");
    if (Accept("CHARACTER")) {
      CHSYNC_RETURN_IF_ERROR(Expect("SET"));
      AcceptPunct("=");
      CHSYNC_ASSIGN_OR_RETURN(std::string cs, CharsetName());
      options.charset = CanonicalCharset(cs);
      return true;
    }
    if (Accept("CHARSET")) {
      AcceptPunct("=");
      CHSYNC_ASSIGN_OR_RETURN(std::string cs, CharsetName());
      options.charset = CanonicalCharset(cs);
      return true;
    }
    if (Accept("COLLATE")) {
      AcceptPunct("=");
      CHSYNC_ASSIGN_OR_RETURN(std::string co, CharsetName());
      options.collation = CanonicalCollation(co);
      return true;
    }
    if (is_default) {
      pos_ = start;
      return false;
    }
    if (Accept("ENGINE") || Accept("TYPE")) {
      AcceptPunct("=");
      CHSYNC_ASSIGN_OR_RETURN(options.engine, CharsetName());
      return true;
    }
    if (Accept("COMMENT")) {
      AcceptPunct("=");
      CHSYNC_ASSIGN_OR_RETURN(options.comment, StringLiteral());
      return true;
    }
    if (AcceptSeq({"WITH", "SYSTEM", "VERSIONING"}) || AcceptSeq({"START", "TRANSACTION"})) return true;
    if (Accept("DATA") || Accept("INDEX")) {
      CHSYNC_RETURN_IF_ERROR(Expect("DIRECTORY"));
      AcceptPunct("=");
      CHSYNC_ASSIGN_OR_RETURN(std::string ignored, StringLiteral());
      return true;
    }
    if (Accept("UNION")) {
      AcceptPunct("=");
      CHSYNC_ASSIGN_OR_RETURN(std::string ignored, ParenthesisedText());
      return true;
    }
    if (Accept("TABLESPACE")) {
      CHSYNC_ASSIGN_OR_RETURN(std::string ignored, CharsetName());
      if (Accept("STORAGE")) {
        if (!(Accept("DISK") || Accept("MEMORY") || Accept("DEFAULT"))) return Unexpected("DISK or MEMORY");
      }
      return true;
    }
    static constexpr std::string_view kValued[] = {"AUTO_INCREMENT",   "AVG_ROW_LENGTH",
                                                   "CHECKSUM",         "TABLE_CHECKSUM",
                                                   "COMPRESSION",      "CONNECTION",
                                                   "DELAY_KEY_WRITE",  "ENCRYPTION",
                                                   "INSERT_METHOD",    "KEY_BLOCK_SIZE",
                                                   "MAX_ROWS",         "MIN_ROWS",
                                                   "PACK_KEYS",        "PASSWORD",
                                                   "ROW_FORMAT",       "STATS_AUTO_RECALC",
                                                   "STATS_PERSISTENT", "STATS_SAMPLE_PAGES",
                                                   "PAGE_CHECKSUM",    "TRANSACTIONAL",
                                                   "ENCRYPTED",        "ENCRYPTION_KEY_ID",
                                                   "PAGE_COMPRESSED",  "PAGE_COMPRESSION_LEVEL",
                                                   "IETF_QUOTES",      "SEQUENCE",
                                                   "AUTOEXTEND_SIZE",  "SECONDARY_ENGINE",
                                                   "ENGINE_ATTRIBUTE", "SECONDARY_ENGINE_ATTRIBUTE",
                                                   "STORAGE"};
    for (std::string_view name : kValued) {
      if (Accept(name)) {
        AcceptPunct("=");
        const Token& v = Peek();
        if (v.kind == TokenKind::kNumber || v.kind == TokenKind::kString || v.kind == TokenKind::kWord ||
            v.kind == TokenKind::kQuotedIdentifier) {
          Next();
          return true;
        }
        return Unexpected(fmt::format("a value for {}", name));
      }
    }
    return false;
  }

  // ---- column definitions ----
  Result<ColumnDefinition> ParseColumnDefinition(std::string name) {
    ColumnDefinition def;
    def.column.name = std::move(name);
    CHSYNC_RETURN_IF_ERROR(ParseDataType(def));
    CHSYNC_RETURN_IF_ERROR(ColumnAttributes(def));
    return def;
  }

  static void SetType(Column& c, ColumnType type) { c.type = type; }

  Status OptionalLength(Column& c) {
    if (AcceptPunct("(")) {
      CHSYNC_ASSIGN_OR_RETURN(uint32_t n, Unsigned32("a length"));
      c.length = n;
      return ExpectPunct(")");
    }
    return Status::Ok();
  }

  Status OptionalPrecisionScale(Column& c, bool require_scale) {
    if (!AcceptPunct("(")) return Status::Ok();
    CHSYNC_ASSIGN_OR_RETURN(uint32_t m, Unsigned32("a precision"));
    c.precision = m;
    if (AcceptPunct(",")) {
      CHSYNC_ASSIGN_OR_RETURN(uint32_t d, Unsigned32("a scale"));
      c.scale = d;
    } else if (require_scale) {
      return Unexpected("',' and a scale");
    }
    return ExpectPunct(")");
  }

  Status ParseDataType(ColumnDefinition& def) {
    Column& c = def.column;
    size_t start = pos_;
    const Token& t = Peek();
    if (t.kind != TokenKind::kWord) return Unexpected("a data type");
    std::string word = Upper(t.text);
    Next();
    bool character = false;  // accepts CHARACTER SET/COLLATE/BINARY
    bool numeric = false;    // accepts UNSIGNED/ZEROFILL
    auto integer = [&](ColumnType type) -> Status {
      SetType(c, type);
      numeric = true;
      return OptionalLength(c);
    };
    if (word == "TINYINT" || word == "INT1") {
      CHSYNC_RETURN_IF_ERROR(integer(ColumnType::kTinyInt));
    } else if (word == "BOOL" || word == "BOOLEAN") {
      SetType(c, ColumnType::kTinyInt);
      c.length = 1;
    } else if (word == "SMALLINT" || word == "INT2") {
      CHSYNC_RETURN_IF_ERROR(integer(ColumnType::kSmallInt));
    } else if (word == "MEDIUMINT" || word == "INT3" || word == "MIDDLEINT") {
      CHSYNC_RETURN_IF_ERROR(integer(ColumnType::kMediumInt));
    } else if (word == "INT" || word == "INTEGER" || word == "INT4") {
      CHSYNC_RETURN_IF_ERROR(integer(ColumnType::kInt));
    } else if (word == "BIGINT" || word == "INT8") {
      CHSYNC_RETURN_IF_ERROR(integer(ColumnType::kBigInt));
    } else if (word == "SERIAL") {
      SetType(c, ColumnType::kBigInt);
      c.is_unsigned = true;
      c.nullable = false;
      c.auto_increment = true;
      def.serial = true;
    } else if (word == "DECIMAL" || word == "DEC" || word == "NUMERIC" || word == "FIXED" ||
               word == "NUMBER") {
      SetType(c, ColumnType::kDecimal);
      numeric = true;
      CHSYNC_RETURN_IF_ERROR(OptionalPrecisionScale(c, false));
      if (!c.precision) c.precision = 10;
      if (!c.scale) c.scale = 0;
      if (*c.precision > 65 || *c.scale > 38 || *c.scale > *c.precision) {
        return ErrorAt(
            t, fmt::format("DECIMAL({},{}) is out of range (precision ≤ 65, scale ≤ 30 and ≤ precision)",
                           *c.precision, *c.scale));
      }
    } else if (word == "FLOAT" || word == "FLOAT4") {
      SetType(c, ColumnType::kFloat);
      numeric = true;
      CHSYNC_RETURN_IF_ERROR(OptionalPrecisionScale(c, false));
      if (c.precision && !c.scale) {
        if (*c.precision > 53) return ErrorAt(t, "FLOAT(p) precision must be at most 53");
        if (*c.precision > 24) SetType(c, ColumnType::kDouble);
        c.precision.reset();
      }
    } else if (word == "DOUBLE" || word == "FLOAT8" || word == "REAL") {
      if (word == "DOUBLE") Accept("PRECISION");
      SetType(c, ColumnType::kDouble);
      numeric = true;
      CHSYNC_RETURN_IF_ERROR(OptionalPrecisionScale(c, true));
    } else if (word == "BIT") {
      SetType(c, ColumnType::kBit);
      CHSYNC_RETURN_IF_ERROR(OptionalLength(c));
      if (!c.length) c.length = 1;
      if (*c.length < 1 || *c.length > 64) return ErrorAt(t, "BIT(M) needs 1 ≤ M ≤ 64");
    } else if (word == "DATE") {
      SetType(c, ColumnType::kDate);
    } else if (word == "TIME" || word == "DATETIME" || word == "TIMESTAMP") {
      SetType(c, word == "TIME"       ? ColumnType::kTime
                 : word == "DATETIME" ? ColumnType::kDateTime
                                      : ColumnType::kTimestamp);
      c.fsp = 0;
      if (AcceptPunct("(")) {
        CHSYNC_ASSIGN_OR_RETURN(uint32_t fsp, Unsigned32("a fractional seconds precision"));
        if (fsp > 6) return ErrorAt(t, fmt::format("fractional seconds precision {} is above 6", fsp));
        c.fsp = fsp;
        CHSYNC_RETURN_IF_ERROR(ExpectPunct(")"));
      }
    } else if (word == "YEAR") {
      SetType(c, ColumnType::kYear);
      CHSYNC_RETURN_IF_ERROR(OptionalLength(c));
    } else if (word == "CHAR" || word == "CHARACTER" || word == "NCHAR" || word == "NATIONAL" ||
               word == "NVARCHAR" || word == "VARCHAR" || word == "VARCHARACTER" || word == "VARCHAR2" ||
               word == "NVARCHAR2") {
      bool national = word == "NCHAR" || word == "NATIONAL" || word == "NVARCHAR" || word == "NVARCHAR2";
      bool varying = word == "VARCHAR" || word == "VARCHARACTER" || word == "NVARCHAR" ||
                     word == "VARCHAR2" || word == "NVARCHAR2";
      if (word == "NATIONAL") {
        if (Accept("VARCHAR") || Accept("VARCHARACTER")) {
          varying = true;
        } else if (!(Accept("CHAR") || Accept("CHARACTER"))) {
          return Unexpected("CHAR, CHARACTER or VARCHAR after NATIONAL");
        }
      }
      if (!varying && (Accept("VARYING") || (word == "NCHAR" && Accept("VARCHAR")))) varying = true;
      if (!varying && Accept("BYTE")) {
        SetType(c, ColumnType::kBinary);
        CHSYNC_RETURN_IF_ERROR(OptionalLength(c));
        if (!c.length) c.length = 1;
      } else {
        SetType(c, varying ? ColumnType::kVarChar : ColumnType::kChar);
        CHSYNC_RETURN_IF_ERROR(OptionalLength(c));
        if (!c.length) {
          if (varying) return ErrorAt(Peek(), "VARCHAR needs a length, e.g. VARCHAR(255)");
          c.length = 1;
        }
        if (national) c.charset = "utf8mb3";
        character = true;
      }
    } else if (word == "BINARY") {
      SetType(c, ColumnType::kBinary);
      CHSYNC_RETURN_IF_ERROR(OptionalLength(c));
      if (!c.length) c.length = 1;
    } else if (word == "VARBINARY") {
      SetType(c, ColumnType::kVarBinary);
      CHSYNC_RETURN_IF_ERROR(OptionalLength(c));
      if (!c.length) return ErrorAt(Peek(), "VARBINARY needs a length, e.g. VARBINARY(255)");
    } else if (word == "TINYBLOB") {
      SetType(c, ColumnType::kTinyBlob);
    } else if (word == "BLOB") {
      SetType(c, ColumnType::kBlob);
      CHSYNC_RETURN_IF_ERROR(OptionalLength(c));
    } else if (word == "MEDIUMBLOB") {
      SetType(c, ColumnType::kMediumBlob);
    } else if (word == "LONGBLOB") {
      SetType(c, ColumnType::kLongBlob);
    } else if (word == "TINYTEXT") {
      SetType(c, ColumnType::kTinyText);
      character = true;
    } else if (word == "TEXT") {
      SetType(c, ColumnType::kText);
      CHSYNC_RETURN_IF_ERROR(OptionalLength(c));
      character = true;
    } else if (word == "MEDIUMTEXT") {
      SetType(c, ColumnType::kMediumText);
      character = true;
    } else if (word == "LONGTEXT") {
      SetType(c, ColumnType::kLongText);
      character = true;
    } else if (word == "LONG") {
      if (Accept("VARBINARY")) {
        SetType(c, ColumnType::kMediumBlob);
      } else {
        if (!Accept("VARCHAR") && Accept("CHAR")) CHSYNC_RETURN_IF_ERROR(Expect("VARYING"));
        SetType(c, ColumnType::kMediumText);
        character = true;
      }
    } else if (word == "ENUM" || word == "SET") {
      SetType(c, word == "ENUM" ? ColumnType::kEnum : ColumnType::kSet);
      CHSYNC_RETURN_IF_ERROR(ExpectPunct("("));
      while (true) {
        CHSYNC_ASSIGN_OR_RETURN(std::string value, StringLiteral());
        c.enum_values.push_back(std::move(value));
        if (AcceptPunct(",")) continue;
        CHSYNC_RETURN_IF_ERROR(ExpectPunct(")"));
        break;
      }
      if (c.type == ColumnType::kSet && c.enum_values.size() > 64)
        return ErrorAt(t, "SET has more than 64 members");
      if (c.enum_values.size() > 65535) return ErrorAt(t, "ENUM has more than 65535 members");
      character = true;
    } else if (word == "JSON") {
      SetType(c, ColumnType::kJson);
    } else if (word == "GEOMETRY") {
      SetType(c, ColumnType::kGeometry);
    } else if (word == "POINT") {
      SetType(c, ColumnType::kPoint);
    } else if (word == "LINESTRING") {
      SetType(c, ColumnType::kLineString);
    } else if (word == "POLYGON") {
      SetType(c, ColumnType::kPolygon);
    } else if (word == "MULTIPOINT") {
      SetType(c, ColumnType::kMultiPoint);
    } else if (word == "MULTILINESTRING") {
      SetType(c, ColumnType::kMultiLineString);
    } else if (word == "MULTIPOLYGON") {
      SetType(c, ColumnType::kMultiPolygon);
    } else if (word == "GEOMETRYCOLLECTION" || word == "GEOMCOLLECTION") {
      SetType(c, ColumnType::kGeometryCollection);
    } else if (word == "VECTOR") {
      SetType(c, ColumnType::kVector);
      CHSYNC_RETURN_IF_ERROR(OptionalLength(c));
      if (!c.length) c.length = 2048;
    } else if (word == "UUID") {
      SetType(c, ColumnType::kUuid);
    } else if (word == "INET4") {
      SetType(c, ColumnType::kInet4);
    } else if (word == "INET6") {
      SetType(c, ColumnType::kInet6);
    } else {
      pos_ = start;
      return Unexpected("a data type");
    }
    // The spelling: the type keywords, without arguments.
    for (size_t i = start; i < pos_; ++i) {
      if (tokens_[i].kind != TokenKind::kWord) break;
      if (!c.type_spelling.empty()) c.type_spelling += ' ';
      c.type_spelling += tokens_[i].text;
    }
    // Type attributes.
    bool binary_attribute = false;
    while (true) {
      if (numeric && Accept("UNSIGNED")) {
        c.is_unsigned = true;
      } else if (numeric && Accept("SIGNED")) {
      } else if (numeric && Accept("ZEROFILL")) {
        c.zerofill = true;
        c.is_unsigned = true;
      } else if (character && Accept("BINARY")) {
        binary_attribute = true;
      } else if (character && Accept("ASCII")) {
        c.charset = "latin1";
      } else if (character && Accept("UNICODE")) {
        c.charset = "ucs2";
      } else if (character && Accept("BYTE")) {
        c.charset = "binary";
      } else if (character &&
                 (AcceptSeq({"CHARACTER", "SET"}) || Accept("CHARSET") || AcceptSeq({"CHAR", "SET"}))) {
        CHSYNC_ASSIGN_OR_RETURN(std::string cs, CharsetName());
        c.charset = CanonicalCharset(cs);
      } else if (character && Accept("COLLATE")) {
        CHSYNC_ASSIGN_OR_RETURN(std::string co, CharsetName());
        c.collation = CanonicalCollation(co);
      } else {
        break;
      }
    }
    if (c.charset == "binary") {
      // CHAR(n) CHARACTER SET binary is BINARY(n), and so on.
      switch (c.type) {
        case ColumnType::kChar: c.type = ColumnType::kBinary; break;
        case ColumnType::kVarChar: c.type = ColumnType::kVarBinary; break;
        case ColumnType::kTinyText: c.type = ColumnType::kTinyBlob; break;
        case ColumnType::kText: c.type = ColumnType::kBlob; break;
        case ColumnType::kMediumText: c.type = ColumnType::kMediumBlob; break;
        case ColumnType::kLongText: c.type = ColumnType::kLongBlob; break;
        default: break;
      }
      if (!IsCharacterType(c.type)) c.charset.clear();
    }
    if (binary_attribute && c.collation.empty() && !c.charset.empty()) c.collation = c.charset + "_bin";
    if (!c.collation.empty() && c.charset.empty()) c.charset = CharsetOfCollation(c.collation);
    // TEXT(M) / BLOB(M) pick the smallest type that holds M characters/bytes.
    if ((c.type == ColumnType::kText || c.type == ColumnType::kBlob) && c.length) {
      uint64_t bytes = *c.length * (c.type == ColumnType::kText ? BytesPerChar(c.charset) : 1);
      bool text = c.type == ColumnType::kText;
      if (bytes <= 255) {
        c.type = text ? ColumnType::kTinyText : ColumnType::kTinyBlob;
      } else if (bytes <= 65535) {
        c.type = text ? ColumnType::kText : ColumnType::kBlob;
      } else if (bytes <= 16777215) {
        c.type = text ? ColumnType::kMediumText : ColumnType::kMediumBlob;
      } else {
        c.type = text ? ColumnType::kLongText : ColumnType::kLongBlob;
      }
      c.length.reset();
    }
    return Status::Ok();
  }

  Status ColumnAttributes(ColumnDefinition& def) {
    Column& c = def.column;
    while (true) {
      const Token& t = Peek();
      if (AcceptSeq({"NOT", "NULL"})) {
        c.nullable = false;
      } else if (Accept("NULL")) {
        c.nullable = true;
      } else if (Accept("DEFAULT")) {
        CHSYNC_ASSIGN_OR_RETURN(c.default_value, ParseDefault());
      } else if (Accept("AUTO_INCREMENT")) {
        c.auto_increment = true;
      } else if (AcceptSeq({"SERIAL", "DEFAULT", "VALUE"})) {
        c.nullable = false;
        c.auto_increment = true;
        def.serial = true;
      } else if (Accept("UNIQUE")) {
        Accept("KEY");
        def.unique = true;
      } else if (Accept("PRIMARY")) {
        CHSYNC_RETURN_IF_ERROR(Expect("KEY"));
        def.primary_key = true;
      } else if (Accept("KEY")) {
        def.primary_key = true;
      } else if (Accept("COMMENT")) {
        CHSYNC_ASSIGN_OR_RETURN(c.comment, StringLiteral());
      } else if (Accept("COLLATE")) {
        CHSYNC_ASSIGN_OR_RETURN(std::string co, CharsetName());
        c.collation = CanonicalCollation(co);
        if (c.charset.empty()) c.charset = CharsetOfCollation(c.collation);
      } else if (AcceptSeq({"CHARACTER", "SET"}) || Accept("CHARSET")) {
        CHSYNC_ASSIGN_OR_RETURN(std::string cs, CharsetName());
        c.charset = CanonicalCharset(cs);
      } else if (Accept("ON")) {
        CHSYNC_RETURN_IF_ERROR(Expect("UPDATE"));
        CHSYNC_ASSIGN_OR_RETURN(DefaultValue on_update, ParseDefault());
        if (on_update.kind != DefaultKind::kCurrentTimestamp) {
          return ErrorAt(t, "ON UPDATE accepts only CURRENT_TIMESTAMP (or NOW())");
        }
        c.on_update_current_timestamp = true;
      } else if (Accept("COLUMN_FORMAT")) {
        if (!(Accept("FIXED") || Accept("DYNAMIC") || Accept("DEFAULT") || Accept("COMPRESSED"))) {
          return Unexpected("FIXED, DYNAMIC or DEFAULT");
        }
      } else if (Accept("STORAGE")) {
        if (!(Accept("DISK") || Accept("MEMORY") || Accept("DEFAULT"))) return Unexpected("DISK or MEMORY");
      } else if (Accept("GENERATED")) {
        CHSYNC_RETURN_IF_ERROR(Expect("ALWAYS"));
        if (Peek().IsWord("AS") && (Peek(1).IsWord("ROW") || Peek(1).IsWord("IDENTITY"))) {
          // MariaDB system versioning: GENERATED ALWAYS AS ROW START/END.
          Next();
          Next();
          Next();
          continue;
        }
        CHSYNC_RETURN_IF_ERROR(Expect("AS"));
        CHSYNC_RETURN_IF_ERROR(GeneratedTail(c));
      } else if (Accept("AS")) {
        CHSYNC_RETURN_IF_ERROR(GeneratedTail(c));
      } else if (Accept("REFERENCES")) {
        --pos_;
        KeyDefinition ignored;
        CHSYNC_RETURN_IF_ERROR(References(ignored));
      } else if (Peek().IsWord("CONSTRAINT") || Peek().IsWord("CHECK")) {
        if (Accept("CONSTRAINT") && IsIdentifierToken(Peek()) && !Peek().IsWord("CHECK")) Next();
        CHSYNC_RETURN_IF_ERROR(Expect("CHECK"));
        CHSYNC_ASSIGN_OR_RETURN(std::string ignored, ParenthesisedText());
        AcceptSeq({"NOT", "ENFORCED"}) || Accept("ENFORCED");
      } else if (Accept("INVISIBLE")) {
        c.invisible = true;
      } else if (Accept("VISIBLE")) {
        c.invisible = false;
      } else if (Accept("SRID")) {
        CHSYNC_ASSIGN_OR_RETURN(uint32_t ignored, Unsigned32("an SRID"));
        (void)ignored;
      } else if (Accept("ENGINE_ATTRIBUTE") || Accept("SECONDARY_ENGINE_ATTRIBUTE")) {
        AcceptPunct("=");
        CHSYNC_ASSIGN_OR_RETURN(std::string ignored, StringLiteral());
      } else if (Accept("COMPRESSED")) {
        if (AcceptPunct("=")) {
          CHSYNC_ASSIGN_OR_RETURN(std::string ignored, CharsetName());
        }
      } else if (AcceptSeq({"WITH", "SYSTEM", "VERSIONING"}) ||
                 AcceptSeq({"WITHOUT", "SYSTEM", "VERSIONING"})) {
      } else if (Accept("SECONDARY_LOAD") || AcceptSeq({"NOT", "SECONDARY"})) {
      } else {
        return Status::Ok();
      }
    }
  }

  Status GeneratedTail(Column& c) {
    CHSYNC_ASSIGN_OR_RETURN(c.generation_expression, ParenthesisedText());
    c.generated = GeneratedKind::kVirtual;
    if (Accept("STORED") || Accept("PERSISTENT")) {
      c.generated = GeneratedKind::kStored;
    } else {
      Accept("VIRTUAL");
    }
    return Status::Ok();
  }

  bool AtExpressionOperator() const {
    const Token& t = Peek();
    if (t.kind != TokenKind::kPunct) return t.IsWord("DIV") || t.IsWord("MOD");
    static constexpr std::string_view kOps[] = {"+",  "-", "*", "/", "%",  "||",
                                                "&&", "|", "&", "^", "<<", ">>"};
    return std::any_of(std::begin(kOps), std::end(kOps), [&](std::string_view op) { return t.text == op; });
  }

  /// The value after DEFAULT (or ON UPDATE).
  Result<DefaultValue> ParseDefault() {
    DefaultValue v;
    size_t start = pos_;
    const Token& t = Peek();
    if (t.IsPunct("(")) {
      v.kind = DefaultKind::kExpression;
      CHSYNC_ASSIGN_OR_RETURN(v.text, ParenthesisedText());
      return v;
    }
    if (Accept("NULL")) {
      v.kind = DefaultKind::kNull;
    } else if (Accept("TRUE") || Accept("FALSE")) {
      v.kind = DefaultKind::kBool;
      v.text = Upper(t.text);
    } else if (t.IsPunct("-") || t.IsPunct("+") || t.kind == TokenKind::kNumber) {
      std::string sign;
      while (Peek().IsPunct("-") || Peek().IsPunct("+")) {
        if (Next().text == "-")
          sign = sign == "-" ? "" : "-";
        else if (sign.empty())
          sign = "+";
      }
      if (Peek().kind != TokenKind::kNumber) {
        if (Peek().IsPunct(",") || Peek().IsPunct(")") || AtStatementEnd())
          return Unexpected("a number after the sign");
        return ExpressionDefault(start);
      }
      v.kind = DefaultKind::kNumber;
      v.text = sign + Next().value;
    } else if (AtStringLiteral()) {
      v.kind = DefaultKind::kString;
      CHSYNC_ASSIGN_OR_RETURN(v.text, StringLiteral(&v.introducer));
    } else if ((t.IsWord("DATE") || t.IsWord("TIME") || t.IsWord("TIMESTAMP")) &&
               Peek(1).kind == TokenKind::kString) {
      Next();
      v.kind = DefaultKind::kString;
      CHSYNC_ASSIGN_OR_RETURN(v.text, StringLiteral());
    } else if (t.kind == TokenKind::kHex) {
      v.kind = DefaultKind::kHex;
      v.text = Upper(Next().value);
    } else if (t.kind == TokenKind::kBit) {
      v.kind = DefaultKind::kBit;
      v.text = Next().value;
    } else if (t.IsWord("CURRENT_TIMESTAMP") || t.IsWord("NOW") || t.IsWord("LOCALTIME") ||
               t.IsWord("LOCALTIMESTAMP")) {
      bool needs_parens = t.IsWord("NOW");
      Next();
      v.kind = DefaultKind::kCurrentTimestamp;
      v.text = "CURRENT_TIMESTAMP";
      if (AcceptPunct("(")) {
        if (!Peek().IsPunct(")")) {
          CHSYNC_ASSIGN_OR_RETURN(uint32_t fsp, Unsigned32("a fractional seconds precision"));
          if (fsp > 6) return ErrorAt(t, fmt::format("fractional seconds precision {} is above 6", fsp));
          if (fsp > 0) v.text += fmt::format("({})", fsp);
        }
        CHSYNC_RETURN_IF_ERROR(ExpectPunct(")"));
      } else if (needs_parens) {
        return Unexpected("'(' after NOW");
      }
    } else if (t.kind == TokenKind::kWord && !IsReserved(t.text)) {
      return ExpressionDefault(start);
    } else {
      return Unexpected("a default value");
    }
    if (AtExpressionOperator()) return ExpressionDefault(start);
    return v;
  }

  /// MariaDB-style unparenthesised default expression: runs to the next attribute, ',' or ')'.
  Result<DefaultValue> ExpressionDefault(size_t start) {
    pos_ = start;
    DefaultValue v;
    v.kind = DefaultKind::kExpression;
    CHSYNC_ASSIGN_OR_RETURN(v.text, SkipUntilSeparator(/*stop_at_words=*/true));
    if (v.text.empty()) return Unexpected("a default value");
    return v;
  }

  Status ColumnPositionClause(ColumnPosition& position) {
    if (Accept("FIRST")) {
      position.kind = ColumnPosition::Kind::kFirst;
    } else if (Accept("AFTER")) {
      position.kind = ColumnPosition::Kind::kAfter;
      CHSYNC_ASSIGN_OR_RETURN(position.after, Identifier("a column name after AFTER"));
    }
    return Status::Ok();
  }

  // ---- ALTER ----
  Status ParseAlter(Statement& st) {
    Accept("ONLINE") || Accept("OFFLINE");
    Accept("IGNORE");
    if (Peek().IsWord("DEFINER") || Peek().IsWord("ALGORITHM") || Peek().IsWord("SQL") ||
        Peek().IsWord("VIEW")) {
      st.kind = StatementKind::kView;
      st.description = "ALTER VIEW";
      CHSYNC_ASSIGN_OR_RETURN(std::string ignored, SkipToEnd());
      return Status::Ok();
    }
    if (Accept("DATABASE") || Accept("SCHEMA")) {
      st.kind = StatementKind::kAlterDatabase;
      st.description = "ALTER DATABASE";
      if (IsIdentifierToken(Peek()) && !Peek().IsWord("CHARSET") && !Peek().IsWord("COLLATE") &&
          !Peek().IsWord("CHARACTER") && !Peek().IsWord("DEFAULT") && !Peek().IsWord("UPGRADE") &&
          !Peek().IsWord("READ") && !Peek().IsWord("ENCRYPTION") && !Peek().IsWord("COMMENT")) {
        CHSYNC_ASSIGN_OR_RETURN(st.database, Identifier("a database name"));
      }
      return ParseDatabaseOptions(st);
    }
    if (!Accept("TABLE")) {
      static constexpr std::pair<std::string_view, StatementKind> kOthers[] = {
          {"PROCEDURE", StatementKind::kRoutine}, {"FUNCTION", StatementKind::kRoutine},
          {"EVENT", StatementKind::kRoutine},     {"USER", StatementKind::kAccount},
          {"ROLE", StatementKind::kAccount},      {"SEQUENCE", StatementKind::kSequence},
          {"TABLESPACE", StatementKind::kAdmin},  {"SERVER", StatementKind::kAdmin},
          {"INSTANCE", StatementKind::kAdmin},    {"LOGFILE", StatementKind::kAdmin},
          {"UNDO", StatementKind::kAdmin},        {"RESOURCE", StatementKind::kAdmin},
      };
      for (const auto& [word, kind] : kOthers) {
        if (Accept(word)) {
          st.kind = kind;
          st.description = "ALTER " + Upper(word);
          CHSYNC_ASSIGN_OR_RETURN(std::string ignored, SkipToEnd());
          return Status::Ok();
        }
      }
      return Unexpected("TABLE, DATABASE, VIEW or another object after ALTER");
    }
    st.kind = StatementKind::kAlterTable;
    st.description = "ALTER TABLE";
    if (AcceptSeq({"IF", "EXISTS"})) st.if_exists = true;
    CHSYNC_ASSIGN_OR_RETURN(st.table, ParseTableName());
    if (Accept("WAIT")) {
      CHSYNC_ASSIGN_OR_RETURN(uint32_t ignored, Unsigned32("a WAIT timeout"));
      (void)ignored;
    } else {
      Accept("NOWAIT");
    }
    while (!AtStatementEnd()) {
      CHSYNC_RETURN_IF_ERROR(ParseAlterOperation(st));
      if (AtStatementEnd()) break;
      if (AcceptPunct(",")) continue;
      // Table options and partition clauses may follow without a comma.
      if (st.operations.empty() || (st.operations.back().kind != AlterOperation::Kind::kTableOptions &&
                                    !Peek().IsWord("PARTITION") && !AtTableOptionStart())) {
        return Unexpected("',' or end of statement");
      }
    }
    return Status::Ok();
  }

  bool AtTableOptionStart() {
    size_t save = pos_;
    TableOptions ignored;
    auto parsed = TableOption(ignored);
    pos_ = save;
    return parsed.ok() && *parsed;
  }

  Status ParseAlterOperation(Statement& st) {
    AlterOperation op;
    size_t start = pos_;
    auto finish_text = [&]() { op.text = TextBetween(start, pos_); };

    if (Accept("ADD")) {
      if (Peek().IsWord("PARTITION")) {
        return PartitionOperation(st, start);
      }
      if (AtKeyDefinition() && !Peek().IsWord("COLUMN")) {
        op.kind = AlterOperation::Kind::kAddKey;
        CHSYNC_ASSIGN_OR_RETURN(std::optional<KeyDefinition> key, ParseKeyDefinition(&op.if_not_exists));
        if (!key) {
          op.kind = AlterOperation::Kind::kOther;
          finish_text();
          st.operations.push_back(std::move(op));
          return Status::Ok();
        }
        op.key = std::move(*key);
        st.operations.push_back(std::move(op));
        return Status::Ok();
      }
      if (AcceptSeq({"SYSTEM", "VERSIONING"})) {
        op.kind = AlterOperation::Kind::kOther;
        finish_text();
        st.operations.push_back(std::move(op));
        return Status::Ok();
      }
      Accept("COLUMN");
      bool if_not_exists = AcceptSeq({"IF", "NOT", "EXISTS"});
      if (AcceptPunct("(")) {
        while (true) {
          if (AtKeyDefinition()) {
            AlterOperation key_op;
            key_op.kind = AlterOperation::Kind::kAddKey;
            CHSYNC_ASSIGN_OR_RETURN(std::optional<KeyDefinition> key,
                                    ParseKeyDefinition(&key_op.if_not_exists));
            if (key) {
              key_op.key = std::move(*key);
              st.operations.push_back(std::move(key_op));
            }
          } else {
            AlterOperation col_op;
            col_op.kind = AlterOperation::Kind::kAddColumn;
            col_op.if_not_exists = if_not_exists;
            CHSYNC_ASSIGN_OR_RETURN(std::string name, Identifier("a column name"));
            CHSYNC_ASSIGN_OR_RETURN(col_op.definition, ParseColumnDefinition(std::move(name)));
            ColumnDefinition def = col_op.definition;
            st.operations.push_back(std::move(col_op));
            CHSYNC_RETURN_IF_ERROR(AddInlineKeyOperations(st, def));
          }
          if (AcceptPunct(",")) continue;
          return ExpectPunct(")");
        }
      }
      op.kind = AlterOperation::Kind::kAddColumn;
      op.if_not_exists = if_not_exists;
      CHSYNC_ASSIGN_OR_RETURN(std::string name, Identifier("a column name"));
      CHSYNC_ASSIGN_OR_RETURN(op.definition, ParseColumnDefinition(std::move(name)));
      CHSYNC_RETURN_IF_ERROR(ColumnPositionClause(op.position));
      ColumnDefinition def = op.definition;
      st.operations.push_back(std::move(op));
      return AddInlineKeyOperations(st, def);
    }
    if (Accept("DROP")) {
      if (Peek().IsWord("PARTITION")) return PartitionOperation(st, start);
      if (AcceptSeq({"PRIMARY", "KEY"})) {
        op.kind = AlterOperation::Kind::kDropPrimaryKey;
      } else if (Accept("INDEX") || Accept("KEY")) {
        op.kind = AlterOperation::Kind::kDropKey;
        op.if_exists = AcceptSeq({"IF", "EXISTS"});
        CHSYNC_ASSIGN_OR_RETURN(op.name, Identifier("an index name"));
      } else if (AcceptSeq({"FOREIGN", "KEY"})) {
        op.kind = AlterOperation::Kind::kDropForeignKey;
        op.if_exists = AcceptSeq({"IF", "EXISTS"});
        CHSYNC_ASSIGN_OR_RETURN(op.name, Identifier("a foreign key name"));
      } else if (Accept("CHECK") || Accept("CONSTRAINT")) {
        op.kind = AlterOperation::Kind::kDropConstraint;
        op.if_exists = AcceptSeq({"IF", "EXISTS"});
        CHSYNC_ASSIGN_OR_RETURN(op.name, Identifier("a constraint name"));
      } else if (AcceptSeq({"SYSTEM", "VERSIONING"}) || Peek().IsWord("PERIOD")) {
        if (Accept("PERIOD")) {
          CHSYNC_RETURN_IF_ERROR(Expect("FOR"));
          Next();
        }
        op.kind = AlterOperation::Kind::kOther;
        finish_text();
      } else {
        Accept("COLUMN");
        op.kind = AlterOperation::Kind::kDropColumn;
        op.if_exists = AcceptSeq({"IF", "EXISTS"});
        CHSYNC_ASSIGN_OR_RETURN(op.name, Identifier("a column name to drop"));
        Accept("RESTRICT") || Accept("CASCADE");
      }
      st.operations.push_back(std::move(op));
      return Status::Ok();
    }
    if (Accept("MODIFY")) {
      Accept("COLUMN");
      op.kind = AlterOperation::Kind::kModifyColumn;
      op.if_exists = AcceptSeq({"IF", "EXISTS"});
      CHSYNC_ASSIGN_OR_RETURN(std::string name, Identifier("a column name"));
      op.name = name;
      CHSYNC_ASSIGN_OR_RETURN(op.definition, ParseColumnDefinition(std::move(name)));
      CHSYNC_RETURN_IF_ERROR(ColumnPositionClause(op.position));
      ColumnDefinition def = op.definition;
      st.operations.push_back(std::move(op));
      return AddInlineKeyOperations(st, def);
    }
    if (Accept("CHANGE")) {
      Accept("COLUMN");
      op.kind = AlterOperation::Kind::kChangeColumn;
      op.if_exists = AcceptSeq({"IF", "EXISTS"});
      CHSYNC_ASSIGN_OR_RETURN(op.name, Identifier("a column name"));
      CHSYNC_ASSIGN_OR_RETURN(std::string new_name, Identifier("the new column name"));
      op.new_name = new_name;
      CHSYNC_ASSIGN_OR_RETURN(op.definition, ParseColumnDefinition(std::move(new_name)));
      CHSYNC_RETURN_IF_ERROR(ColumnPositionClause(op.position));
      ColumnDefinition def = op.definition;
      st.operations.push_back(std::move(op));
      return AddInlineKeyOperations(st, def);
    }
    if (Accept("RENAME")) {
      if (Accept("COLUMN")) {
        op.kind = AlterOperation::Kind::kRenameColumn;
        op.if_exists = AcceptSeq({"IF", "EXISTS"});
        CHSYNC_ASSIGN_OR_RETURN(op.name, Identifier("a column name"));
        CHSYNC_RETURN_IF_ERROR(Expect("TO"));
        CHSYNC_ASSIGN_OR_RETURN(op.new_name, Identifier("the new column name"));
      } else if (Accept("INDEX") || Accept("KEY")) {
        op.kind = AlterOperation::Kind::kRenameKey;
        CHSYNC_ASSIGN_OR_RETURN(op.name, Identifier("an index name"));
        CHSYNC_RETURN_IF_ERROR(Expect("TO"));
        CHSYNC_ASSIGN_OR_RETURN(op.new_name, Identifier("the new index name"));
      } else {
        Accept("TO") || Accept("AS");
        op.kind = AlterOperation::Kind::kRenameTable;
        CHSYNC_ASSIGN_OR_RETURN(op.new_table, ParseTableName());
      }
      st.operations.push_back(std::move(op));
      return Status::Ok();
    }
    if (Accept("ALTER")) {
      if (Accept("INDEX") || Accept("KEY") || Accept("CHECK") || Accept("CONSTRAINT")) {
        CHSYNC_ASSIGN_OR_RETURN(std::string ignored, Identifier("an index or constraint name"));
        if (!(Accept("VISIBLE") || Accept("INVISIBLE") || Accept("IGNORED") ||
              AcceptSeq({"NOT", "IGNORED"}) || Accept("ENFORCED") || AcceptSeq({"NOT", "ENFORCED"}))) {
          return Unexpected("VISIBLE, INVISIBLE, IGNORED or ENFORCED");
        }
        op.kind = AlterOperation::Kind::kOther;
        finish_text();
        st.operations.push_back(std::move(op));
        return Status::Ok();
      }
      Accept("COLUMN");
      op.if_exists = AcceptSeq({"IF", "EXISTS"});
      CHSYNC_ASSIGN_OR_RETURN(op.name, Identifier("a column name"));
      if (AcceptSeq({"SET", "DEFAULT"})) {
        op.kind = AlterOperation::Kind::kSetDefault;
        CHSYNC_ASSIGN_OR_RETURN(op.default_value, ParseDefault());
      } else if (AcceptSeq({"DROP", "DEFAULT"})) {
        op.kind = AlterOperation::Kind::kDropDefault;
      } else if (AcceptSeq({"SET", "VISIBLE"})) {
        op.kind = AlterOperation::Kind::kSetVisible;
      } else if (AcceptSeq({"SET", "INVISIBLE"})) {
        op.kind = AlterOperation::Kind::kSetInvisible;
      } else {
        return Unexpected("SET DEFAULT, DROP DEFAULT, SET VISIBLE or SET INVISIBLE");
      }
      st.operations.push_back(std::move(op));
      return Status::Ok();
    }
    if (Accept("CONVERT")) {
      CHSYNC_RETURN_IF_ERROR(Expect("TO"));
      if (!(AcceptSeq({"CHARACTER", "SET"}) || Accept("CHARSET"))) return Unexpected("CHARACTER SET");
      op.kind = AlterOperation::Kind::kConvertCharset;
      CHSYNC_ASSIGN_OR_RETURN(std::string cs, CharsetName());
      op.options.charset = CanonicalCharset(cs);
      if (Accept("COLLATE")) {
        CHSYNC_ASSIGN_OR_RETURN(std::string co, CharsetName());
        op.options.collation = CanonicalCollation(co);
      }
      st.operations.push_back(std::move(op));
      return Status::Ok();
    }
    if (Accept("ALGORITHM") || Accept("LOCK")) {
      op.kind =
          tokens_[start].IsWord("LOCK") ? AlterOperation::Kind::kLock : AlterOperation::Kind::kAlgorithm;
      AcceptPunct("=");
      if (Peek().kind != TokenKind::kWord) return Unexpected("an ALGORITHM or LOCK value");
      Next();
      finish_text();
      st.operations.push_back(std::move(op));
      return Status::Ok();
    }
    if (AcceptSeq({"ENABLE", "KEYS"}) || AcceptSeq({"DISABLE", "KEYS"}) || Accept("FORCE") ||
        AcceptSeq({"WITH", "VALIDATION"}) || AcceptSeq({"WITHOUT", "VALIDATION"}) ||
        AcceptSeq({"DISCARD", "TABLESPACE"}) || AcceptSeq({"IMPORT", "TABLESPACE"}) || Accept("UPGRADE")) {
      op.kind = AlterOperation::Kind::kOther;
      finish_text();
      st.operations.push_back(std::move(op));
      return Status::Ok();
    }
    if (Accept("ORDER")) {
      CHSYNC_RETURN_IF_ERROR(Expect("BY"));
      while (true) {
        CHSYNC_ASSIGN_OR_RETURN(std::string ignored, ColumnName());
        Accept("ASC") || Accept("DESC");
        if (!(Peek().IsPunct(",") && IsIdentifierToken(Peek(1)) && !AtAlterKeyword(Peek(1)))) break;
        Next();
      }
      op.kind = AlterOperation::Kind::kOther;
      finish_text();
      st.operations.push_back(std::move(op));
      return Status::Ok();
    }
    if (Peek().IsWord("PARTITION") || Peek().IsWord("COALESCE") || Peek().IsWord("REORGANIZE") ||
        Peek().IsWord("EXCHANGE") || Peek().IsWord("ANALYZE") || Peek().IsWord("CHECK") ||
        Peek().IsWord("OPTIMIZE") || Peek().IsWord("REBUILD") || Peek().IsWord("REPAIR") ||
        Peek().IsWord("REMOVE") || Peek().IsWord("TRUNCATE") || Peek().IsWord("CONVERT") ||
        ((Peek().IsWord("DISCARD") || Peek().IsWord("IMPORT")) && Peek(1).IsWord("PARTITION"))) {
      return PartitionOperation(st, start);
    }
    op.kind = AlterOperation::Kind::kTableOptions;
    CHSYNC_ASSIGN_OR_RETURN(bool parsed, TableOption(op.options));
    if (!parsed) return Unexpected("an ALTER TABLE clause");
    while (!AtStatementEnd() && !Peek().IsPunct(",")) {
      CHSYNC_ASSIGN_OR_RETURN(bool more, TableOption(op.options));
      if (!more) break;
    }
    finish_text();
    st.operations.push_back(std::move(op));
    return Status::Ok();
  }

  bool AtAlterKeyword(const Token& t) const {
    static constexpr std::string_view kWords[] = {
        "ADD",     "DROP",   "MODIFY", "CHANGE", "RENAME", "ALTER",   "ALGORITHM",     "LOCK",
        "CONVERT", "ENGINE", "FORCE",  "ORDER",  "ENABLE", "DISABLE", "AUTO_INCREMENT"};
    return std::any_of(std::begin(kWords), std::end(kWords), [&](std::string_view w) { return t.IsWord(w); });
  }

  /// Partition clauses: skipped to the end of the statement (MySQL allows them only last).
  Status PartitionOperation(Statement& st, size_t start) {
    AlterOperation op;
    op.kind = AlterOperation::Kind::kPartition;
    pos_ = start;
    const Token& first = Peek();
    op.changes_data = first.IsWord("TRUNCATE") || first.IsWord("DROP") || first.IsWord("EXCHANGE") ||
                      first.IsWord("REMOVE") || first.IsWord("DISCARD") || first.IsWord("IMPORT") ||
                      first.IsWord("COALESCE") || first.IsWord("REORGANIZE");
    // COALESCE/REORGANIZE/REMOVE move rows without losing them.
    if (first.IsWord("COALESCE") || first.IsWord("REORGANIZE") || first.IsWord("REMOVE"))
      op.changes_data = false;
    CHSYNC_ASSIGN_OR_RETURN(op.text, SkipToEnd());
    st.operations.push_back(std::move(op));
    return Status::Ok();
  }

  Status AddInlineKeyOperations(Statement& st, const ColumnDefinition& def) {
    std::vector<KeyDefinition> keys;
    CHSYNC_RETURN_IF_ERROR(CollectInlineKeys(def, keys));
    for (KeyDefinition& key : keys) {
      AlterOperation op;
      op.kind = AlterOperation::Kind::kAddKey;
      op.key = std::move(key);
      st.operations.push_back(std::move(op));
    }
    return Status::Ok();
  }

  // ---- DROP / RENAME / TRUNCATE ----
  Status ParseDrop(Statement& st) {
    if (Accept("TEMPORARY")) st.temporary = true;
    if (Accept("TABLE") || Accept("TABLES")) {
      st.kind = StatementKind::kDropTable;
      st.description = "DROP TABLE";
      if (AcceptSeq({"IF", "EXISTS"})) st.if_exists = true;
      while (true) {
        CHSYNC_ASSIGN_OR_RETURN(TableName name, ParseTableName());
        st.tables.push_back(std::move(name));
        if (!AcceptPunct(",")) break;
      }
      if (Accept("WAIT")) {
        CHSYNC_ASSIGN_OR_RETURN(uint32_t ignored, Unsigned32("a WAIT timeout"));
        (void)ignored;
      }
      Accept("NOWAIT");
      Accept("RESTRICT") || Accept("CASCADE");
      if (!st.tables.empty()) st.table = st.tables.front();
      return Status::Ok();
    }
    if (st.temporary) return Unexpected("TABLE");
    Accept("ONLINE") || Accept("OFFLINE");
    if (Accept("INDEX") || Accept("KEY")) {
      st.kind = StatementKind::kDropIndex;
      st.description = "DROP INDEX";
      if (AcceptSeq({"IF", "EXISTS"})) st.if_exists = true;
      if (Peek().IsWord("PRIMARY")) {
        Next();
        st.key.name = "PRIMARY";
        st.key.type = KeyDefinition::Type::kPrimary;
      } else {
        CHSYNC_ASSIGN_OR_RETURN(st.key.name, Identifier("an index name"));
      }
      CHSYNC_RETURN_IF_ERROR(Expect("ON"));
      CHSYNC_ASSIGN_OR_RETURN(st.table, ParseTableName());
      return AlgorithmLockTail(st);
    }
    if (Accept("DATABASE") || Accept("SCHEMA")) {
      st.kind = StatementKind::kDropDatabase;
      st.description = "DROP DATABASE";
      if (AcceptSeq({"IF", "EXISTS"})) st.if_exists = true;
      CHSYNC_ASSIGN_OR_RETURN(st.database, Identifier("a database name"));
      return Status::Ok();
    }
    static constexpr std::pair<std::string_view, StatementKind> kOthers[] = {
        {"VIEW", StatementKind::kView},         {"TRIGGER", StatementKind::kRoutine},
        {"PROCEDURE", StatementKind::kRoutine}, {"FUNCTION", StatementKind::kRoutine},
        {"EVENT", StatementKind::kRoutine},     {"PACKAGE", StatementKind::kRoutine},
        {"USER", StatementKind::kAccount},      {"ROLE", StatementKind::kAccount},
        {"SEQUENCE", StatementKind::kSequence}, {"TABLESPACE", StatementKind::kAdmin},
        {"SERVER", StatementKind::kAdmin},      {"LOGFILE", StatementKind::kAdmin},
        {"UNDO", StatementKind::kAdmin},        {"SPATIAL", StatementKind::kAdmin},
        {"RESOURCE", StatementKind::kAdmin},    {"PREPARE", StatementKind::kDml},
    };
    for (const auto& [word, kind] : kOthers) {
      if (Accept(word)) {
        st.kind = kind;
        st.description = "DROP " + Upper(word);
        CHSYNC_ASSIGN_OR_RETURN(std::string ignored, SkipToEnd());
        return Status::Ok();
      }
    }
    return Unexpected("TABLE, INDEX, DATABASE, VIEW or another object after DROP");
  }

  Status ParseRename(Statement& st) {
    if (Accept("USER")) {
      st.kind = StatementKind::kAccount;
      st.description = "RENAME USER";
      CHSYNC_ASSIGN_OR_RETURN(std::string ignored, SkipToEnd());
      return Status::Ok();
    }
    if (!(Accept("TABLE") || Accept("TABLES"))) return Unexpected("TABLE or USER after RENAME");
    st.kind = StatementKind::kRenameTable;
    st.description = "RENAME TABLE";
    if (AcceptSeq({"IF", "EXISTS"})) st.if_exists = true;
    while (true) {
      CHSYNC_ASSIGN_OR_RETURN(TableName from, ParseTableName());
      if (Accept("WAIT")) {
        CHSYNC_ASSIGN_OR_RETURN(uint32_t ignored, Unsigned32("a WAIT timeout"));
        (void)ignored;
      }
      Accept("NOWAIT");
      CHSYNC_RETURN_IF_ERROR(Expect("TO"));
      CHSYNC_ASSIGN_OR_RETURN(TableName to, ParseTableName());
      st.renames.emplace_back(std::move(from), std::move(to));
      if (!AcceptPunct(",")) break;
    }
    return Status::Ok();
  }

  Status ParseTruncate(Statement& st) {
    st.kind = StatementKind::kTruncateTable;
    st.description = "TRUNCATE TABLE";
    Accept("TABLE");
    CHSYNC_ASSIGN_OR_RETURN(st.table, ParseTableName());
    st.tables.push_back(st.table);
    if (Accept("WAIT")) {
      CHSYNC_ASSIGN_OR_RETURN(uint32_t ignored, Unsigned32("a WAIT timeout"));
      (void)ignored;
    }
    Accept("NOWAIT");
    return Status::Ok();
  }

  std::string_view sql_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
};

}  // namespace

std::string_view StatementKindName(StatementKind kind) {
  switch (kind) {
    case StatementKind::kEmpty: return "empty";
    case StatementKind::kCreateTable: return "create_table";
    case StatementKind::kCreateTableLike: return "create_table_like";
    case StatementKind::kAlterTable: return "alter_table";
    case StatementKind::kDropTable: return "drop_table";
    case StatementKind::kRenameTable: return "rename_table";
    case StatementKind::kTruncateTable: return "truncate_table";
    case StatementKind::kCreateIndex: return "create_index";
    case StatementKind::kDropIndex: return "drop_index";
    case StatementKind::kCreateDatabase: return "create_database";
    case StatementKind::kAlterDatabase: return "alter_database";
    case StatementKind::kDropDatabase: return "drop_database";
    case StatementKind::kView: return "view";
    case StatementKind::kRoutine: return "routine";
    case StatementKind::kSequence: return "sequence";
    case StatementKind::kAccount: return "account";
    case StatementKind::kTransaction: return "transaction";
    case StatementKind::kDml: return "dml";
    case StatementKind::kSession: return "session";
    case StatementKind::kAdmin: return "admin";
    case StatementKind::kOther: return "other";
  }
  return "other";
}

std::string_view KeyTypeName(KeyDefinition::Type type) {
  switch (type) {
    case KeyDefinition::Type::kPrimary: return "primary";
    case KeyDefinition::Type::kUnique: return "unique";
    case KeyDefinition::Type::kIndex: return "index";
    case KeyDefinition::Type::kFulltext: return "fulltext";
    case KeyDefinition::Type::kSpatial: return "spatial";
    case KeyDefinition::Type::kForeign: return "foreign";
    case KeyDefinition::Type::kCheck: return "check";
  }
  return "index";
}

std::string_view AlterKindName(AlterOperation::Kind kind) {
  using K = AlterOperation::Kind;
  switch (kind) {
    case K::kAddColumn: return "add_column";
    case K::kDropColumn: return "drop_column";
    case K::kModifyColumn: return "modify_column";
    case K::kChangeColumn: return "change_column";
    case K::kRenameColumn: return "rename_column";
    case K::kSetDefault: return "set_default";
    case K::kDropDefault: return "drop_default";
    case K::kSetVisible: return "set_visible";
    case K::kSetInvisible: return "set_invisible";
    case K::kAddKey: return "add_key";
    case K::kDropPrimaryKey: return "drop_primary_key";
    case K::kDropKey: return "drop_key";
    case K::kDropForeignKey: return "drop_foreign_key";
    case K::kDropConstraint: return "drop_constraint";
    case K::kRenameKey: return "rename_key";
    case K::kRenameTable: return "rename_table";
    case K::kConvertCharset: return "convert_charset";
    case K::kTableOptions: return "table_options";
    case K::kAlgorithm: return "algorithm";
    case K::kLock: return "lock";
    case K::kPartition: return "partition";
    case K::kOther: return "other";
  }
  return "other";
}

Result<Statement> ParseStatement(std::string_view sql, const LexOptions& options) {
  CHSYNC_ASSIGN_OR_RETURN(std::vector<Token> tokens, Lex(sql, options));
  return Parser(sql, std::move(tokens)).Parse();
}

Result<Column> ParseColumnType(std::string_view column_type, const LexOptions& options) {
  std::string sql = "CREATE TABLE t (c " + std::string(column_type) + ")";
  auto st = ParseStatement(sql, options);
  if (!st.ok()) {
    return Error(ErrorKind::kCorrupt,
                 fmt::format("column type '{}' does not parse: {}", column_type, st.error().message()));
  }
  if (st->columns.size() != 1)
    return Error(ErrorKind::kCorrupt, fmt::format("'{}' is not one column type", column_type));
  Column c = st->columns[0].column;
  c.name.clear();
  return c;
}

Result<DefaultValue> ParseDefaultText(std::string_view text, const LexOptions& options) {
  std::string sql = "CREATE TABLE t (c INT DEFAULT " + std::string(text) + ")";
  auto st = ParseStatement(sql, options);
  if (!st.ok()) {
    return Error(ErrorKind::kCorrupt,
                 fmt::format("default '{}' does not parse: {}", text, st.error().message()));
  }
  if (st->columns.size() != 1)
    return Error(ErrorKind::kCorrupt, fmt::format("'{}' is not one default", text));
  return st->columns[0].column.default_value;
}

Result<std::vector<StatementText>> SplitStatements(std::string_view script, const LexOptions& options) {
  std::vector<StatementText> out;
  std::string delimiter = ";";
  size_t pos = 0;
  size_t start = 0;
  uint32_t line = 1;
  uint32_t start_line = 1;
  bool at_line_start = true;
  auto emit = [&](size_t end) {
    std::string_view text = script.substr(start, end - start);
    // Drop pieces that lex to nothing (whitespace and comments only).
    auto tokens = Lex(text, options);
    if (!tokens.ok() || tokens->size() > 1) {
      // Trim leading whitespace so positions point at the statement.
      size_t skip = 0;
      uint32_t l = start_line;
      while (skip < text.size() &&
             (text[skip] == ' ' || text[skip] == '\t' || text[skip] == '\n' || text[skip] == '\r')) {
        if (text[skip] == '\n') ++l;
        ++skip;
      }
      out.push_back(StatementText{text.substr(skip), start + skip, l});
    }
  };
  while (pos < script.size()) {
    char c = script[pos];
    if (at_line_start) {
      size_t p = pos;
      while (p < script.size() && (script[p] == ' ' || script[p] == '\t')) ++p;
      if (script.size() - p >= 10 && EqualsIgnoreCase(script.substr(p, 9), "DELIMITER") &&
          (script[p + 9] == ' ' || script[p + 9] == '\t')) {
        size_t q = p + 9;
        while (q < script.size() && (script[q] == ' ' || script[q] == '\t')) ++q;
        size_t e = q;
        while (e < script.size() && script[e] != '\n' && script[e] != '\r' && script[e] != ' ' &&
               script[e] != '\t')
          ++e;
        if (e > q) {
          emit(pos);
          delimiter = std::string(script.substr(q, e - q));
          while (e < script.size() && script[e] != '\n') ++e;
          pos = e;
          start = pos;
          start_line = line;
          continue;
        }
      }
    }
    at_line_start = false;
    if (c == '\n') {
      ++line;
      at_line_start = true;
      ++pos;
      continue;
    }
    if (c == '\'' || c == '"' || c == '`') {
      ++pos;
      while (pos < script.size()) {
        char d = script[pos];
        if (d == '\n') ++line;
        if (d == '\\' && c != '`' && !options.no_backslash_escapes && pos + 1 < script.size()) {
          if (script[pos + 1] == '\n') ++line;
          pos += 2;
          continue;
        }
        ++pos;
        if (d == c) {
          if (pos < script.size() && script[pos] == c) {
            ++pos;
            continue;
          }
          break;
        }
      }
      continue;
    }
    if (c == '#' || (c == '-' && pos + 1 < script.size() && script[pos + 1] == '-' &&
                     (pos + 2 >= script.size() || script[pos + 2] == ' ' || script[pos + 2] == '\t' ||
                      script[pos + 2] == '\n' || script[pos + 2] == '\r'))) {
      while (pos < script.size() && script[pos] != '\n') ++pos;
      continue;
    }
    if (c == '/' && pos + 1 < script.size() && script[pos + 1] == '*') {
      bool executable = pos + 2 < script.size() && (script[pos + 2] == '!' || script[pos + 2] == 'M');
      if (!executable) {
        size_t end = script.find("*/", pos + 2);
        size_t stop = end == std::string_view::npos ? script.size() : end + 2;
        for (size_t i = pos; i < stop; ++i) {
          if (script[i] == '\n') ++line;
        }
        pos = stop;
        continue;
      }
    }
    if (script.compare(pos, delimiter.size(), delimiter) == 0) {
      emit(pos);
      pos += delimiter.size();
      start = pos;
      start_line = line;
      continue;
    }
    ++pos;
  }
  emit(script.size());
  return out;
}

}  // namespace chsync::schema
