#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "schema/lexer.h"
#include "schema/statement.h"

namespace chsync::schema {

/// The recursive-descent parser behind parser.h. Internal to the parser's files, one per
/// statement family: parse_core.cpp (the token cursor, names, literals, balanced skipping),
/// parser.cpp (dispatch, classified statements, DROP/RENAME/TRUNCATE), parse_create.cpp,
/// parse_alter.cpp, parse_keys.cpp (key definitions and index options), parse_column.cpp (types,
/// column attributes, defaults) and parse_options.cpp (table, database and engine options).
///
/// One instance parses one statement. Each member parses one piece of the grammar at the current
/// token and either consumes it or returns a kCorrupt error naming the position and what was
/// expected. The cursor never moves past the kEnd token that ends every token list, so no member
/// reads out of bounds whatever the input.
class DdlParser {
 public:
  /// REQUIRES: `tokens` is what Lex(sql) returned (it ends with a kEnd token); `sql` outlives
  /// the parser.
  DdlParser(std::string_view sql, std::vector<Token> tokens) : sql_(sql), tokens_(std::move(tokens)) {}

  /// The whole statement, a trailing ';' allowed.
  Result<Statement> Parse();

 private:
  /// `VERB OBJECT …` whose statement is classified, not parsed (CREATE VIEW, DROP USER, …).
  struct ObjectRule {
    std::string_view word;
    StatementKind kind;
  };

  // ---- parse_core.cpp: cursor, errors, names, numbers, literals, skipping ----
  const Token& Peek(size_t ahead = 0) const {
    size_t i = pos_ + ahead;
    return i < tokens_.size() ? tokens_[i] : tokens_.back();
  }
  const Token& Next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  /// End of input, or a ';' that ends it.
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
  /// All of `words` in a row, or nothing consumed.
  bool AcceptSeq(std::initializer_list<std::string_view> words);
  bool AcceptPunct(std::string_view p) {
    if (!Peek().IsPunct(p)) return false;
    Next();
    return true;
  }
  Status Expect(std::string_view word);
  Status ExpectPunct(std::string_view p);
  /// "expected EXPECTED, found 'x' at line …".
  Error Unexpected(std::string_view expected) const;
  Error ErrorAt(const Token& t, std::string_view message) const;
  /// Source text of tokens [first_token, end_token).
  std::string TextBetween(size_t first_token, size_t end_token) const;

  static bool IsReserved(std::string_view word);
  static std::string Upper(std::string_view text);
  static bool IsIdentifierToken(const Token& t);
  /// Whether the token `ahead` is a word written directly before '.' and another word (`default.t`):
  /// MySQL's and MariaDB's lexers read it as an identifier even when it is a keyword.
  bool WordBeforeDot(size_t ahead = 0) const;
  /// An unquoted non-reserved word, a quoted identifier, or any word directly before '.' and a word.
  Result<std::string> Identifier(std::string_view what);
  Result<TableName> ParseTableName();
  /// A column reference or field_ident: c, t.c, db.t.c or .c (the qualifier is not checked against
  /// the table: the server did); returns the last part.
  Result<std::string> ColumnName(std::string_view what = "a column name");
  /// A plain unsigned integer that fits 32 bits.
  Result<uint32_t> Unsigned32(std::string_view what);
  Status SkipUnsigned32(std::string_view what);
  /// MySQL's field_length: an integer, or a decimal number (DECIMAL_NUM, `19.5`) read as the
  /// server reads it, up to the dot (Create_field::init calls my_strtoull on the text).
  Result<uint32_t> FieldLength(std::string_view what);
  /// Whether `t` is a number written with a dot and no exponent (MySQL's DECIMAL_NUM).
  static bool IsDottedNumber(const Token& t);
  /// MariaDB's [WAIT n | NOWAIT].
  Status SkipWaitNowait();

  /// Counts `t` into `depth` when it is '(' or ')'; an error past kMaxNesting.
  Status Nest(const Token& t, int& depth) const;
  /// A balanced parenthesised group starting at '('; returns the text inside.
  Result<std::string> ParenthesisedText();
  /// Tokens up to (not including) ',' or ')' at depth 0, or the end; with `stop_at_attributes`
  /// also up to a column attribute at depth 0. Returns the text.
  Result<std::string> SkipUntilSeparator(bool stop_at_attributes = false);
  /// Tokens to the end of the statement, or to one of `stop_words` at depth 0; parentheses must
  /// balance. Returns the text.
  Result<std::string> SkipToEnd(std::initializer_list<std::string_view> stop_words = {});

  /// One string literal, with optional introducer/N prefix, adjacent parts and trailing COLLATE.
  Result<std::string> StringLiteral(std::string* introducer = nullptr);
  bool AtStringLiteral() const;
  /// Charset or collation name: identifier, string or the word BINARY/DEFAULT.
  Result<std::string> CharsetName();

  // ---- parser.cpp: dispatch and the statements that shape no columns ----
  Status ParseTop(Statement& st);
  Status Classify(Statement& st);
  /// When the next word is one of `rules`: sets kind and description (`VERB WORD`) and skips the
  /// rest of the statement. False (consuming nothing) otherwise.
  Result<bool> ClassifyObject(Statement& st, std::string_view verb, std::span<const ObjectRule> rules);
  Status ParseDrop(Statement& st);
  Status ParseRename(Statement& st);
  Status ParseTruncate(Statement& st);

  // ---- parse_create.cpp ----
  Status ParseCreate(Statement& st);
  /// DEFINER = user[@host] | CURRENT_USER[()]
  Status SkipDefiner();
  Status ParseCreateTable(Statement& st);
  Status ParseCreateIndex(Statement& st, KeyDefinition::Type type);
  /// Turns `PRIMARY KEY`/`UNIQUE`/SERIAL written on a column into key definitions.
  static void CollectInlineKeys(const ColumnDefinition& def, std::vector<KeyDefinition>& keys);

  // ---- parse_alter.cpp ----
  Status ParseAlter(Statement& st);
  Status ParseAlterTable(Statement& st);
  Status ParseAlterOperation(Statement& st);
  Status AlterAdd(Statement& st, size_t start);
  Status AlterDrop(Statement& st, size_t start);
  Status AlterRename(Statement& st);
  Status AlterAlter(Statement& st, size_t start);
  Status AlterConvert(Statement& st, size_t start);
  /// MariaDB's CONVERT PARTITION p TO TABLE x and CONVERT TABLE x TO PARTITION p …, after CONVERT.
  Status ConvertPartition(Statement& st, size_t start);
  Status AlterOrderBy(Statement& st, size_t start);
  /// ADD [COLUMN] / MODIFY / CHANGE after the keyword (and COLUMN, IF [NOT] EXISTS): `op` has
  /// its kind and flags; FIRST/AFTER is read unless `in_list` (ADD (…)). Keys written on the
  /// column follow as kAddKey operations.
  Status AlterColumnDefinition(Statement& st, AlterOperation op, bool in_list);
  /// ADD of a key definition; MariaDB's PERIOD FOR, which defines no key, becomes kOther.
  Status AlterAddKey(Statement& st, size_t start);
  Status PartitionOperation(Statement& st, size_t start);
  /// Records a clause kept only as its text (kOther unless `kind` says otherwise).
  Status PushTextOperation(Statement& st, size_t start,
                           AlterOperation::Kind kind = AlterOperation::Kind::kOther);
  /// [IF EXISTS] name, into op.if_exists and op.name (a qualified name gives its last part).
  Status NameIfExists(AlterOperation& op, std::string_view what);
  static bool AtAlterKeyword(const Token& t);
  bool AtTableOptionStart();

  // ---- parse_keys.cpp ----
  /// Key definitions that start a CREATE TABLE element or follow ALTER … ADD.
  bool AtKeyDefinition() const;
  /// Returns nullopt for clauses that are parsed but define no key (MariaDB's PERIOD FOR, which
  /// is recorded in `periods_`).
  Result<std::optional<KeyDefinition>> ParseKeyDefinition(bool* if_not_exists = nullptr);
  /// ( key_part [, key_part]... ) where key_part = col [(len)] [ASC|DESC] | (expr) [ASC|DESC];
  /// a PRIMARY KEY or UNIQUE key may end with MariaDB's `, period WITHOUT OVERLAPS`.
  Status KeyParts(KeyDefinition& key);
  /// Appends the end and start columns of the period named by key.unresolved_period when this
  /// statement defined it, and clears unresolved_period.
  void ResolvePeriod(KeyDefinition& key) const;
  Status References(KeyDefinition& key);
  /// [USING | TYPE] {BTREE | HASH | RTREE}
  Status SkipIndexType();
  /// index_option*: KEY_BLOCK_SIZE, USING, WITH PARSER, COMMENT, VISIBLE, INVISIBLE, [NOT]
  /// IGNORED, ENGINE_ATTRIBUTE, MariaDB's engine-defined `NAME`=value, …
  Status IndexOptions();
  /// What follows CREATE INDEX's key parts (`with_index_options`) or DROP INDEX … ON t: WAIT n,
  /// NOWAIT, index options, ALGORITHM [=] x and LOCK [=] x.
  Status IndexStatementTail(bool with_index_options);
  /// The word after ALGORITHM [=] or LOCK [=].
  Status AlgorithmOrLockValue();

  // ---- parse_column.cpp ----
  Result<ColumnDefinition> ParseColumnDefinition(std::string name);
  Status ParseDataType(ColumnDefinition& def);
  Status DataTypeAttributes(Column& c, bool numeric, bool character);
  Status ColumnAttributes(ColumnDefinition& def);
  Status OptionalLength(Column& c);
  /// float_options of FLOAT/DECIMAL (`require_scale` false) or DOUBLE/REAL's (M,D).
  Status OptionalPrecisionScale(Column& c, bool require_scale);
  /// What follows [GENERATED ALWAYS] AS: (expr) [VIRTUAL | STORED | PERSISTENT], or MariaDB's
  /// ROW START / ROW END.
  Status GeneratedTail(Column& c);
  /// The value after DEFAULT (or ON UPDATE).
  Result<DefaultValue> ParseDefault();
  /// MariaDB-style unparenthesised default expression: runs to the next attribute, ',' or ')'.
  Result<DefaultValue> ExpressionDefault(size_t start);
  bool AtExpressionOperator() const;
  /// Whether the next token starts a column attribute (ends an unparenthesised default).
  bool AtColumnAttributeStart() const;
  Status ColumnPositionClause(ColumnPosition& position);

  // ---- parse_options.cpp ----
  /// Options up to a stop (PARTITION, AS, SELECT, end, or — in ALTER — ',').
  Status TableOptionList(TableOptions& options, bool in_alter);
  /// One table option; false (consuming nothing) when the next token starts none.
  Result<bool> TableOption(TableOptions& options);
  /// [DEFAULT] {CHARACTER SET | CHARSET | CHAR SET | COLLATE} [=] name; false (consuming
  /// nothing) when the next tokens start none.
  Result<bool> CharsetOption(TableOptions& options);
  /// CHARACTER SET, CHARSET or CHAR SET (MySQL and MariaDB take CHAR SET wherever CHARACTER SET
  /// goes).
  bool AcceptCharsetKeyword();
  bool AtCharsetKeyword() const;
  /// MariaDB's engine-defined table, column or index option: NAME = value, the name quoted (as
  /// SHOW CREATE TABLE prints it) or a word that is no keyword the parser knows (CONNECT's
  /// TABLE_TYPE=ODBC, a vector index's M=8). False (consuming nothing) when the next tokens are
  /// not one; callers try the options they know first.
  Result<bool> EngineDefinedOption();
  /// Whether `word` is a keyword that some option or clause reads before '=' (ENGINE,
  /// AUTO_INCREMENT, ALGORITHM, KEY_BLOCK_SIZE, …), never an engine-defined option's name.
  static bool IsOptionKeyword(std::string_view word);
  /// [=] value, the value one number, string, word or quoted identifier.
  Status OptionValue(std::string_view what);
  /// CREATE/ALTER DATABASE options.
  Status ParseDatabaseOptions(Statement& st);

  /// MariaDB's PERIOD FOR name (start, end), as this statement defines them.
  struct Period {
    std::string name;
    std::string start;
    std::string end;
  };

  std::string_view sql_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  std::vector<Period> periods_;
};

}  // namespace chsync::schema
