#include "schema/parser.h"

#include <fmt/format.h>

#include "schema/parse_core.h"

// Dispatch, the statements that are classified rather than parsed, DROP/RENAME/TRUNCATE and the
// public entry points. CREATE, ALTER, keys, column definitions and options have their own
// parse_*.cpp files (see parse_core.h).

namespace chsync::schema {

Result<Statement> DdlParser::Parse() {
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

Status DdlParser::ParseTop(Statement& st) {
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

Status DdlParser::Classify(Statement& st) {
  static constexpr ObjectRule kRules[] = {
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
  for (const ObjectRule& rule : kRules) {
    if (!first.IsWord(rule.word)) continue;
    st.kind = rule.kind;
    st.description = Upper(rule.word);
    if (rule.kind == StatementKind::kSession && first.IsWord("SET") &&
        (Peek(1).IsWord("PASSWORD") || Peek(1).IsWord("ROLE") || Peek(1).IsWord("DEFAULT"))) {
      st.kind = StatementKind::kAccount;
      st.description = "SET " + Upper(Peek(1).text);
    }
    Next();
    if (first.IsWord("USE")) {
      CHSYNC_ASSIGN_OR_RETURN(st.database, Identifier("a database name"));
      return Status::Ok();
    }
    CHSYNC_RETURN_IF_ERROR(SkipToEnd());
    return Status::Ok();
  }
  st.kind = StatementKind::kOther;
  st.description = Upper(first.text);
  CHSYNC_RETURN_IF_ERROR(SkipToEnd());
  return Status::Ok();
}

Result<bool> DdlParser::ClassifyObject(Statement& st, std::string_view verb,
                                       std::span<const ObjectRule> rules) {
  for (const ObjectRule& rule : rules) {
    if (!Accept(rule.word)) continue;
    st.kind = rule.kind;
    st.description = fmt::format("{} {}", verb, Upper(rule.word));
    CHSYNC_RETURN_IF_ERROR(SkipToEnd());
    return true;
  }
  return false;
}

Status DdlParser::ParseDrop(Statement& st) {
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
    CHSYNC_RETURN_IF_ERROR(SkipWaitNowait());
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
    if (Accept("PRIMARY")) {
      st.key.name = "PRIMARY";
      st.key.type = KeyDefinition::Type::kPrimary;
    } else {
      CHSYNC_ASSIGN_OR_RETURN(st.key.name, Identifier("an index name"));
    }
    CHSYNC_RETURN_IF_ERROR(Expect("ON"));
    CHSYNC_ASSIGN_OR_RETURN(st.table, ParseTableName());
    return IndexStatementTail(/*with_index_options=*/false);
  }
  if (Accept("DATABASE") || Accept("SCHEMA")) {
    st.kind = StatementKind::kDropDatabase;
    st.description = "DROP DATABASE";
    if (AcceptSeq({"IF", "EXISTS"})) st.if_exists = true;
    CHSYNC_ASSIGN_OR_RETURN(st.database, Identifier("a database name"));
    return Status::Ok();
  }
  static constexpr ObjectRule kOthers[] = {
      {"VIEW", StatementKind::kView},         {"TRIGGER", StatementKind::kRoutine},
      {"PROCEDURE", StatementKind::kRoutine}, {"FUNCTION", StatementKind::kRoutine},
      {"EVENT", StatementKind::kRoutine},     {"PACKAGE", StatementKind::kRoutine},
      {"USER", StatementKind::kAccount},      {"ROLE", StatementKind::kAccount},
      {"SEQUENCE", StatementKind::kSequence}, {"TABLESPACE", StatementKind::kAdmin},
      {"SERVER", StatementKind::kAdmin},      {"LOGFILE", StatementKind::kAdmin},
      {"UNDO", StatementKind::kAdmin},        {"SPATIAL", StatementKind::kAdmin},
      {"RESOURCE", StatementKind::kAdmin},    {"PREPARE", StatementKind::kDml},
  };
  CHSYNC_ASSIGN_OR_RETURN(bool classified, ClassifyObject(st, "DROP", kOthers));
  if (classified) return Status::Ok();
  return Unexpected("TABLE, INDEX, DATABASE, VIEW or another object after DROP");
}

Status DdlParser::ParseRename(Statement& st) {
  static constexpr ObjectRule kUser[] = {{"USER", StatementKind::kAccount}};
  CHSYNC_ASSIGN_OR_RETURN(bool classified, ClassifyObject(st, "RENAME", kUser));
  if (classified) return Status::Ok();
  if (!(Accept("TABLE") || Accept("TABLES"))) return Unexpected("TABLE or USER after RENAME");
  st.kind = StatementKind::kRenameTable;
  st.description = "RENAME TABLE";
  if (AcceptSeq({"IF", "EXISTS"})) st.if_exists = true;
  while (true) {
    CHSYNC_ASSIGN_OR_RETURN(TableName from, ParseTableName());
    CHSYNC_RETURN_IF_ERROR(SkipWaitNowait());
    CHSYNC_RETURN_IF_ERROR(Expect("TO"));
    CHSYNC_ASSIGN_OR_RETURN(TableName to, ParseTableName());
    st.renames.emplace_back(std::move(from), std::move(to));
    if (!AcceptPunct(",")) break;
  }
  return Status::Ok();
}

Status DdlParser::ParseTruncate(Statement& st) {
  st.kind = StatementKind::kTruncateTable;
  st.description = "TRUNCATE TABLE";
  Accept("TABLE");
  CHSYNC_ASSIGN_OR_RETURN(st.table, ParseTableName());
  st.tables.push_back(st.table);
  return SkipWaitNowait();
}

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
    case KeyDefinition::Type::kVector: return "vector";
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
  return DdlParser(sql, std::move(tokens)).Parse();
}

namespace {

/// Parses `CREATE TABLE t (c <definition>)` and returns its one column; errors name `what` and
/// `text`, the caller's piece.
Result<Column> ParseOneColumn(const std::string& definition, std::string_view what, std::string_view text,
                              const LexOptions& options) {
  auto st = ParseStatement("CREATE TABLE t (c " + definition + ")", options);
  if (!st.ok()) {
    return Error(ErrorKind::kCorrupt,
                 fmt::format("{} '{}' does not parse: {}", what, text, st.error().message()));
  }
  if (st->columns.size() != 1)
    return Error(ErrorKind::kCorrupt, fmt::format("'{}' is not one {}", text, what));
  return st->columns[0].column;
}

}  // namespace

Result<Column> ParseColumnType(std::string_view column_type, const LexOptions& options) {
  CHSYNC_ASSIGN_OR_RETURN(Column c,
                          ParseOneColumn(std::string(column_type), "column type", column_type, options));
  c.name.clear();
  return c;
}

Result<DefaultValue> ParseDefaultText(std::string_view text, const LexOptions& options) {
  CHSYNC_ASSIGN_OR_RETURN(Column c,
                          ParseOneColumn("INT DEFAULT " + std::string(text), "default", text, options));
  return c.default_value;
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
