// Key definitions (CREATE TABLE elements and ALTER … ADD), key parts, FOREIGN KEY references,
// index options and the tail of CREATE/DROP INDEX.

#include <fmt/format.h>

#include "schema/parse_core.h"

namespace chsync::schema {

bool DdlParser::AtKeyDefinition() const {
  const Token& t = Peek();
  // `key.c INT` is a column qualified by a table named key.
  if (t.kind != TokenKind::kWord || WordBeforeDot()) return false;
  if (t.IsWord("PERIOD")) return Peek(1).IsWord("FOR") || Peek(1).IsWord("IF");
  // MariaDB 11.7's VECTOR {INDEX|KEY} [name] (…); VECTOR alone is also a column name or type.
  if (t.IsWord("VECTOR")) return Peek(1).IsWord("INDEX") || Peek(1).IsWord("KEY") || Peek(1).IsPunct("(");
  return t.IsWord("CONSTRAINT") || t.IsWord("PRIMARY") || t.IsWord("UNIQUE") || t.IsWord("KEY") ||
         t.IsWord("INDEX") || t.IsWord("FULLTEXT") || t.IsWord("SPATIAL") || t.IsWord("FOREIGN") ||
         t.IsWord("CHECK");
}

Result<std::optional<KeyDefinition>> DdlParser::ParseKeyDefinition(bool* if_not_exists) {
  auto accept_if_not_exists = [&]() {
    if (AcceptSeq({"IF", "NOT", "EXISTS"}) && if_not_exists != nullptr) *if_not_exists = true;
  };
  KeyDefinition key;
  if (Accept("PERIOD")) {
    // PERIOD [IF NOT EXISTS] FOR {SYSTEM_TIME | name} (start, end); IF NOT EXISTS only in ALTER.
    accept_if_not_exists();
    CHSYNC_RETURN_IF_ERROR(Expect("FOR"));
    Period period;
    CHSYNC_ASSIGN_OR_RETURN(period.name, Identifier("a period name"));
    CHSYNC_RETURN_IF_ERROR(ExpectPunct("("));
    CHSYNC_ASSIGN_OR_RETURN(period.start, Identifier("the period's start column"));
    CHSYNC_RETURN_IF_ERROR(ExpectPunct(","));
    CHSYNC_ASSIGN_OR_RETURN(period.end, Identifier("the period's end column"));
    CHSYNC_RETURN_IF_ERROR(ExpectPunct(")"));
    periods_.push_back(std::move(period));
    return std::optional<KeyDefinition>();
  }
  std::string symbol;
  if (Accept("CONSTRAINT")) {
    accept_if_not_exists();
    if (IsIdentifierToken(Peek()) && !Peek().IsWord("CHECK")) {
      CHSYNC_ASSIGN_OR_RETURN(symbol, Identifier("a constraint name"));
    }
  }
  if (Accept("FOREIGN")) {
    CHSYNC_RETURN_IF_ERROR(Expect("KEY"));
    key.type = KeyDefinition::Type::kForeign;
    accept_if_not_exists();
    key.name = symbol;
    if (IsIdentifierToken(Peek())) {
      CHSYNC_ASSIGN_OR_RETURN(key.index_name, Identifier("an index name"));
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
  if (Accept("PRIMARY")) {
    CHSYNC_RETURN_IF_ERROR(Expect("KEY"));
    key.type = KeyDefinition::Type::kPrimary;
  } else if (Accept("UNIQUE")) {
    key.type = KeyDefinition::Type::kUnique;
    Accept("INDEX") || Accept("KEY");
  } else if (Accept("FULLTEXT")) {
    key.type = KeyDefinition::Type::kFulltext;
    Accept("INDEX") || Accept("KEY");
  } else if (Accept("SPATIAL")) {
    key.type = KeyDefinition::Type::kSpatial;
    Accept("INDEX") || Accept("KEY");
  } else if (Accept("VECTOR")) {
    key.type = KeyDefinition::Type::kVector;
    Accept("INDEX") || Accept("KEY");
  } else if (!symbol.empty() || !(Accept("INDEX") || Accept("KEY"))) {
    return Unexpected("PRIMARY KEY, UNIQUE, INDEX, KEY, FULLTEXT, SPATIAL, FOREIGN KEY or CHECK");
  }
  // [IF NOT EXISTS] [name] [USING type | TYPE type], the same after PRIMARY KEY as after any
  // other key (MySQL's opt_index_name_and_type, MariaDB's opt_if_not_exists opt_ident …).
  accept_if_not_exists();
  if (IsIdentifierToken(Peek()) && !Peek().IsWord("USING") && !Peek().IsWord("TYPE")) {
    CHSYNC_ASSIGN_OR_RETURN(key.name, Identifier("an index name"));
  }
  if (key.name.empty()) key.name = symbol;
  // The server names every primary key PRIMARY, whatever name is written.
  if (key.type == KeyDefinition::Type::kPrimary) key.name = "PRIMARY";
  CHSYNC_RETURN_IF_ERROR(SkipIndexType());
  CHSYNC_RETURN_IF_ERROR(KeyParts(key));
  CHSYNC_RETURN_IF_ERROR(IndexOptions());
  return std::optional<KeyDefinition>(std::move(key));
}

Status DdlParser::KeyParts(KeyDefinition& key) {
  CHSYNC_RETURN_IF_ERROR(ExpectPunct("("));
  while (true) {
    if (Peek().IsPunct("(")) {
      CHSYNC_ASSIGN_OR_RETURN(std::string expr, ParenthesisedText());
      key.columns.push_back("(" + expr + ")");
    } else {
      CHSYNC_ASSIGN_OR_RETURN(std::string col, ColumnName());
      bool unique = key.type == KeyDefinition::Type::kPrimary || key.type == KeyDefinition::Type::kUnique;
      if (unique && !key.columns.empty() && AcceptSeq({"WITHOUT", "OVERLAPS"})) {
        // MariaDB's opt_without_overlaps: `, period WITHOUT OVERLAPS` ends the list.
        key.unresolved_period = std::move(col);
        return ExpectPunct(")");
      }
      if (AcceptPunct("(")) {
        CHSYNC_RETURN_IF_ERROR(SkipUnsigned32("a key prefix length"));
        CHSYNC_RETURN_IF_ERROR(ExpectPunct(")"));
      }
      key.columns.push_back(std::move(col));
    }
    Accept("ASC") || Accept("DESC");
    if (AcceptPunct(",")) continue;
    return ExpectPunct(")");
  }
}

void DdlParser::ResolvePeriod(KeyDefinition& key) const {
  if (key.unresolved_period.empty()) return;
  for (const Period& period : periods_) {
    if (!EqualsIgnoreCase(period.name, key.unresolved_period)) continue;
    // The server's order: the period's end, then its start.
    key.columns.push_back(period.end);
    key.columns.push_back(period.start);
    key.unresolved_period.clear();
    return;
  }
}

Status DdlParser::References(KeyDefinition& key) {
  CHSYNC_RETURN_IF_ERROR(Expect("REFERENCES"));
  CHSYNC_ASSIGN_OR_RETURN(key.references, ParseTableName());
  if (Peek().IsPunct("(")) {
    KeyDefinition target;
    CHSYNC_RETURN_IF_ERROR(KeyParts(target));
    key.referenced_columns = std::move(target.columns);
  }
  while (true) {
    if (Accept("MATCH")) {
      if (!(Accept("FULL") || Accept("PARTIAL") || Accept("SIMPLE")))
        return Unexpected("FULL, PARTIAL or SIMPLE");
    } else if (Accept("ON")) {
      std::optional<ForeignKey::Action>* target = nullptr;
      if (Accept("DELETE")) {
        target = &key.on_delete;
      } else if (Accept("UPDATE")) {
        target = &key.on_update;
      } else {
        return Unexpected("DELETE or UPDATE");
      }
      if (Accept("RESTRICT")) {
        *target = ForeignKey::Action::kRestrict;
      } else if (Accept("CASCADE")) {
        *target = ForeignKey::Action::kCascade;
      } else if (AcceptSeq({"SET", "NULL"})) {
        *target = ForeignKey::Action::kSetNull;
      } else if (AcceptSeq({"SET", "DEFAULT"})) {
        *target = ForeignKey::Action::kSetDefault;
      } else if (AcceptSeq({"NO", "ACTION"})) {
        *target = ForeignKey::Action::kNoAction;
      } else {
        return Unexpected("RESTRICT, CASCADE, SET NULL, SET DEFAULT or NO ACTION");
      }
    } else {
      return Status::Ok();
    }
  }
}

Status DdlParser::SkipIndexType() {
  if (Accept("USING") || Accept("TYPE")) {
    if (!(Accept("BTREE") || Accept("HASH") || Accept("RTREE"))) return Unexpected("BTREE, HASH or RTREE");
  }
  return Status::Ok();
}

Status DdlParser::IndexOptions() {
  while (true) {
    if (Accept("KEY_BLOCK_SIZE")) {
      AcceptPunct("=");
      CHSYNC_RETURN_IF_ERROR(SkipUnsigned32("a KEY_BLOCK_SIZE"));
    } else if (Peek().IsWord("USING") || Peek().IsWord("TYPE")) {
      CHSYNC_RETURN_IF_ERROR(SkipIndexType());
    } else if (AcceptSeq({"WITH", "PARSER"})) {
      CHSYNC_RETURN_IF_ERROR(Identifier("a parser name"));
    } else if (Accept("COMMENT")) {
      CHSYNC_RETURN_IF_ERROR(StringLiteral());
    } else if (Accept("VISIBLE") || Accept("INVISIBLE") || Accept("IGNORED") ||
               AcceptSeq({"NOT", "IGNORED"})) {
    } else if (Accept("ENGINE_ATTRIBUTE") || Accept("SECONDARY_ENGINE_ATTRIBUTE") || Accept("CLUSTERING")) {
      CHSYNC_RETURN_IF_ERROR(OptionValue("an option value"));
    } else {
      CHSYNC_ASSIGN_OR_RETURN(bool engine_defined, EngineDefinedOption());
      if (!engine_defined) return Status::Ok();
    }
  }
}

Status DdlParser::AlgorithmOrLockValue() {
  AcceptPunct("=");
  if (Peek().kind != TokenKind::kWord) return Unexpected("an ALGORITHM or LOCK value");
  Next();
  return Status::Ok();
}

Status DdlParser::IndexStatementTail(bool with_index_options) {
  // MariaDB writes WAIT/NOWAIT right after the key parts (or the table), before index options.
  CHSYNC_RETURN_IF_ERROR(SkipWaitNowait());
  while (!AtStatementEnd()) {
    size_t before = pos_;
    if (Accept("ALGORITHM") || Accept("LOCK")) {
      CHSYNC_RETURN_IF_ERROR(AlgorithmOrLockValue());
    } else if (Peek().IsWord("WAIT") || Peek().IsWord("NOWAIT")) {
      CHSYNC_RETURN_IF_ERROR(SkipWaitNowait());
    } else if (with_index_options) {
      CHSYNC_RETURN_IF_ERROR(IndexOptions());
    }
    if (pos_ == before) return Unexpected("ALGORITHM, LOCK or end of statement");
  }
  return Status::Ok();
}

}  // namespace chsync::schema
