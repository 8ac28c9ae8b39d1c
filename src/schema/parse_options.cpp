// Table options (CREATE TABLE and ALTER TABLE), database options, charset/collation options and
// MariaDB's engine-defined options.

#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "schema/parse_core.h"

namespace chsync::schema {
namespace {

/// Table options that take a value: [=] number, string or word.
constexpr std::string_view kValued[] = {"AUTO_INCREMENT",   "AVG_ROW_LENGTH",
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

/// Other words read before '=' by some option or clause.
constexpr std::string_view kOtherOptionKeywords[] = {
    "ENGINE",    "TYPE", "COMMENT",    "UNION",      "TABLESPACE", "DATA",       "CHARSET",      "COLLATE",
    "ALGORITHM", "LOCK", "CLUSTERING", "COMPRESSED", "DEFINER",    "PARTITIONS", "SUBPARTITIONS"};

}  // namespace

bool DdlParser::IsOptionKeyword(std::string_view word) {
  auto in = [&](std::span<const std::string_view> words) {
    return std::any_of(words.begin(), words.end(),
                       [&](std::string_view w) { return EqualsIgnoreCase(w, word); });
  };
  return in(kValued) || in(kOtherOptionKeywords);
}

bool DdlParser::AtCharsetKeyword() const {
  return (Peek().IsWord("CHARACTER") && Peek(1).IsWord("SET")) || Peek().IsWord("CHARSET") ||
         (Peek().IsWord("CHAR") && Peek(1).IsWord("SET"));
}

bool DdlParser::AcceptCharsetKeyword() {
  return AcceptSeq({"CHARACTER", "SET"}) || Accept("CHARSET") || AcceptSeq({"CHAR", "SET"});
}

Result<bool> DdlParser::CharsetOption(TableOptions& options) {
  size_t start = pos_;
  Accept("DEFAULT");
  bool collate = false;
  if (!AcceptCharsetKeyword()) {
    collate = Accept("COLLATE");
    if (!collate) {
      pos_ = start;
      return false;
    }
  }
  AcceptPunct("=");
  CHSYNC_ASSIGN_OR_RETURN(std::string name, CharsetName());
  if (collate) {
    options.collation = CanonicalCollation(name);
  } else {
    options.charset = CanonicalCharset(name);
  }
  return true;
}

Status DdlParser::OptionValue(std::string_view what) {
  AcceptPunct("=");
  const Token& v = Peek();
  if (v.kind == TokenKind::kNumber || v.kind == TokenKind::kString || v.kind == TokenKind::kWord ||
      v.kind == TokenKind::kQuotedIdentifier) {
    Next();
    return Status::Ok();
  }
  return Unexpected(what);
}

Result<bool> DdlParser::EngineDefinedOption() {
  // MariaDB's grammar takes an engine-defined option's name from IDENT_sys, the words that are no
  // keyword. Its SHOW CREATE TABLE and mariadb-dump quote every name (`PAGE_COMPRESSED`='1',
  // `ENCRYPTED`=YES); hand-written DDL often does not (ENGINE=CONNECT TABLE_TYPE=ODBC).
  const Token& t = Peek();
  bool is_name = t.kind == TokenKind::kQuotedIdentifier ||
                 (t.kind == TokenKind::kWord && !IsReserved(t.text) && !IsOptionKeyword(t.text));
  if (!is_name || !Peek(1).IsPunct("=")) return false;
  std::string name = Next().value;
  CHSYNC_RETURN_IF_ERROR(OptionValue(fmt::format("a value for `{}`", name)));
  return true;
}

Status DdlParser::TableOptionList(TableOptions& options, bool in_alter) {
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

Result<bool> DdlParser::TableOption(TableOptions& options) {
  CHSYNC_ASSIGN_OR_RETURN(bool charset, CharsetOption(options));
  if (charset) return true;
  // DEFAULT goes before the options that take it: charset and collation (above) and ENCRYPTION,
  // as in MySQL 8's `/*!80016 DEFAULT ENCRYPTION='N' */`.
  if (Peek().IsWord("DEFAULT") && Peek(1).IsWord("ENCRYPTION")) Next();
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
    CHSYNC_RETURN_IF_ERROR(StringLiteral());
    return true;
  }
  if (Accept("UNION")) {
    AcceptPunct("=");
    CHSYNC_RETURN_IF_ERROR(ParenthesisedText());
    return true;
  }
  if (Accept("TABLESPACE")) {
    CHSYNC_RETURN_IF_ERROR(CharsetName());
    if (Accept("STORAGE")) {
      if (!(Accept("DISK") || Accept("MEMORY") || Accept("DEFAULT"))) return Unexpected("DISK or MEMORY");
    }
    return true;
  }
  for (std::string_view name : kValued) {
    if (Accept(name)) {
      CHSYNC_RETURN_IF_ERROR(OptionValue(fmt::format("a value for {}", name)));
      return true;
    }
  }
  return EngineDefinedOption();
}

Status DdlParser::ParseDatabaseOptions(Statement& st) {
  while (!AtStatementEnd()) {
    CHSYNC_ASSIGN_OR_RETURN(bool charset, CharsetOption(st.options));
    if (charset) continue;
    // [DEFAULT] ENCRYPTION [=] 'Y', COMMENT [=] '…', READ ONLY [=] 1, …: accepted, not kept.
    Accept("DEFAULT");
    if (Peek().kind != TokenKind::kWord) return Unexpected("a database option");
    if (!AcceptSeq({"READ", "ONLY"})) Next();
    CHSYNC_RETURN_IF_ERROR(OptionValue("an option value"));
  }
  return Status::Ok();
}

}  // namespace chsync::schema
