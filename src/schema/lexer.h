#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace chsync::schema {

/// How to read MySQL text: the parts of sql_mode that change lexing, and which executable comments run.
struct LexOptions {
  /// sql_mode ANSI_QUOTES: "x" is an identifier, not a string.
  bool ansi_quotes = false;
  /// sql_mode NO_BACKSLASH_ESCAPES: backslash is an ordinary character in strings.
  bool no_backslash_escapes = false;
  /// `/*!NNNNN … */` and `/*M!NNNNNN … */` are code when NNNNN ≤ this (MySQL 80013 = 8.0.13,
  /// MariaDB 100100 = 10.1.0) and comments otherwise. The default runs every versioned comment
  /// except MariaDB's 999999 sentinel (`/*M!999999\- enable the sandbox mode */`).
  uint32_t server_version = 999998;
  /// Whether `/*M!…*/` is code (MariaDB) or a comment (MySQL).
  bool mariadb_comments = true;
  /// The text was run by a MariaDB server (of version server_version), which reads `/*!NNNNN … */`
  /// as MariaDB does: code for NNNNN ≤ 50699 and for 100000 ≤ NNNNN ≤ its version, a comment for
  /// the MySQL 5.7–9.x versions 50700–99999 (a MariaDB server never ran them: Sakila's
  /// `address.location` is inside `/*!50705 … */`). Off, every version up to server_version runs,
  /// as MySQL reads it.
  bool mariadb_server = false;
};

/// Fills ansi_quotes/no_backslash_escapes from a sql_mode value ("ANSI_QUOTES,STRICT_TRANS_TABLES",
/// also the combination modes ANSI, DB2, ORACLE, POSTGRESQL, MSSQL, MAXDB which imply ANSI_QUOTES).
LexOptions LexOptionsFromSqlMode(std::string_view sql_mode);

enum class TokenKind {
  kEnd,               ///< end of input (always the last token)
  kWord,              ///< unquoted identifier or keyword; value is the text
  kQuotedIdentifier,  ///< `x` (or "x" under ANSI_QUOTES); value is the name, quotes undone
  kString,            ///< 'x' (or "x"); value is the decoded bytes
  kNumber,            ///< 12, 1.5, .5, 1e5 (no sign); value is the text
  kHex,               ///< X'41' or 0x41; value is the hex digits
  kBit,               ///< b'101' or 0b101; value is the binary digits
  kVariable,          ///< @x, @@x, @'x'; value is the text
  kPunct,             ///< operator or punctuation: ( ) , ; . = + - * / < > <= >= <> != := || && etc.
};

/// One token. `text` views the source (the caller keeps the source alive).
struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string_view text;
  std::string value;
  size_t offset = 0;          ///< byte offset of the first byte in the source
  uint32_t line = 1;          ///< 1-based
  uint32_t column = 1;        ///< 1-based, in bytes
  bool national = false;      ///< N'x'
  bool space_before = false;  ///< whitespace or a comment separates this token from the previous one

  bool IsWord(std::string_view keyword) const;  ///< kWord equal to keyword, case-insensitive
  bool IsPunct(std::string_view p) const { return kind == TokenKind::kPunct && text == p; }
};

/// "line 3, column 14 (byte 52)".
std::string DescribePosition(const Token& token);

/// Splits `sql` into tokens; comments and whitespace are dropped, executable comments opened.
/// Errors (ErrorKind::kCorrupt) name the position: unterminated string, identifier or comment.
Result<std::vector<Token>> Lex(std::string_view sql, const LexOptions& options);

}  // namespace chsync::schema
