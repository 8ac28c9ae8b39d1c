#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "schema/lexer.h"
#include "schema/statement.h"

namespace chsync::schema {

/// Parses one MySQL/MariaDB statement (a trailing `;` is allowed). Table-shaping DDL is parsed in
/// full; any other statement is classified (Statement::kind/description). Never crashes on any
/// input: text that cannot be parsed is an ErrorKind::kCorrupt error naming the position
/// (line, column, byte offset) and what was expected. Parenthesised expressions nested deeper
/// than kMaxNesting are refused.
Result<Statement> ParseStatement(std::string_view sql, const LexOptions& options = {});

/// Parses a column type as information_schema.COLUMNS.COLUMN_TYPE spells it ("int(10) unsigned",
/// "enum('a','b')", "varchar(20)") into a Column with only the type fields set.
Result<Column> ParseColumnType(std::string_view column_type, const LexOptions& options = {});

/// Parses what follows DEFAULT (e.g. information_schema's COLUMN_DEFAULT on MariaDB: "'abc'",
/// "NULL", "current_timestamp()", "uuid()", "b'101'").
Result<DefaultValue> ParseDefaultText(std::string_view text, const LexOptions& options = {});

/// Deepest parenthesis nesting accepted in expressions and option lists.
inline constexpr int kMaxNesting = 200;

/// A statement's text within a script.
struct StatementText {
  std::string_view text;  ///< without the terminating ';'
  size_t offset = 0;      ///< byte offset in the script
  uint32_t line = 1;      ///< 1-based line of the first byte of `text`
};

/// Splits a script on `;` outside quotes and comments, honouring mysql-client `DELIMITER x`
/// lines. Pieces holding only whitespace/comments are dropped. Errors name an unterminated
/// quote or comment with its position.
Result<std::vector<StatementText>> SplitStatements(std::string_view script, const LexOptions& options = {});

}  // namespace chsync::schema
