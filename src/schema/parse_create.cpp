// CREATE: TABLE (columns, keys, options, LIKE, AS SELECT), INDEX, DATABASE, and the objects that
// are only classified (VIEW, TRIGGER, …).

#include <fmt/format.h>

#include "schema/parse_core.h"

namespace chsync::schema {

Status DdlParser::SkipDefiner() {
  if (!Accept("DEFINER")) return Status::Ok();
  CHSYNC_RETURN_IF_ERROR(ExpectPunct("="));
  if (Accept("CURRENT_USER")) {
    if (AcceptPunct("(")) CHSYNC_RETURN_IF_ERROR(ExpectPunct(")"));
    return Status::Ok();
  }
  const Token& t = Peek();
  if (t.kind != TokenKind::kWord && t.kind != TokenKind::kQuotedIdentifier && t.kind != TokenKind::kString) {
    return Unexpected("a definer user");
  }
  Next();
  if (Peek().kind == TokenKind::kVariable) Next();
  return Status::Ok();
}

Status DdlParser::ParseCreate(Statement& st) {
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
  } else if (Peek().IsWord("VECTOR") && Peek(1).IsWord("INDEX")) {
    Next();
    index_type = KeyDefinition::Type::kVector;
  }
  Accept("ONLINE") || Accept("OFFLINE");
  if (Accept("INDEX")) return ParseCreateIndex(st, index_type);
  if (unique) return Unexpected("INDEX");

  if (Accept("DATABASE") || Accept("SCHEMA")) {
    st.kind = StatementKind::kCreateDatabase;
    st.description = "CREATE DATABASE";
    if (AcceptSeq({"IF", "NOT", "EXISTS"})) st.if_not_exists = true;
    CHSYNC_ASSIGN_OR_RETURN(st.database, Identifier("a database name"));
    return ParseDatabaseOptions(st);
  }
  static constexpr ObjectRule kOthers[] = {
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
  CHSYNC_ASSIGN_OR_RETURN(bool classified, ClassifyObject(st, "CREATE", kOthers));
  if (classified) return Status::Ok();
  return Unexpected("TABLE, INDEX, VIEW, DATABASE or another object after CREATE");
}

Status DdlParser::ParseCreateIndex(Statement& st, KeyDefinition::Type type) {
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
  return IndexStatementTail(/*with_index_options=*/true);
}

Status DdlParser::ParseCreateTable(Statement& st) {
  st.kind = StatementKind::kCreateTable;
  st.description = "CREATE TABLE";
  if (AcceptSeq({"IF", "NOT", "EXISTS"})) st.if_not_exists = true;
  CHSYNC_ASSIGN_OR_RETURN(st.table, ParseTableName());
  bool like_in_parentheses = Peek().IsPunct("(") && Peek(1).IsWord("LIKE");
  if (like_in_parentheses) Next();
  if (Accept("LIKE")) {
    st.kind = StatementKind::kCreateTableLike;
    st.description = "CREATE TABLE LIKE";
    CHSYNC_ASSIGN_OR_RETURN(st.like, ParseTableName());
    return like_in_parentheses ? ExpectPunct(")") : Status::Ok();
  }
  if (Peek().IsPunct("(") && !(Peek(1).IsWord("SELECT") || Peek(1).IsWord("WITH") || Peek(1).IsPunct("("))) {
    Next();
    while (true) {
      if (AtKeyDefinition()) {
        CHSYNC_ASSIGN_OR_RETURN(std::optional<KeyDefinition> key, ParseKeyDefinition());
        if (key) st.keys.push_back(std::move(*key));
      } else {
        CHSYNC_ASSIGN_OR_RETURN(std::string name, ColumnName("a column name or key definition"));
        CHSYNC_ASSIGN_OR_RETURN(ColumnDefinition def, ParseColumnDefinition(std::move(name)));
        CollectInlineKeys(def, st.keys);
        st.columns.push_back(std::move(def));
      }
      if (AcceptPunct(",")) continue;
      if (!AcceptPunct(")")) return Unexpected("',' or ')'");
      break;
    }
    for (KeyDefinition& key : st.keys) ResolvePeriod(key);
  }
  CHSYNC_RETURN_IF_ERROR(TableOptionList(st.options, /*in_alter=*/false));
  // PARTITION BY …: skipped up to an AS SELECT or the end.
  if (Accept("PARTITION")) CHSYNC_RETURN_IF_ERROR(SkipToEnd({"SELECT", "AS", "IGNORE", "REPLACE"}));
  Accept("IGNORE") || Accept("REPLACE");
  Accept("AS");
  if (Peek().IsWord("SELECT") || Peek().IsWord("WITH") || Peek().IsPunct("(") || Peek().IsWord("TABLE") ||
      Peek().IsWord("VALUES")) {
    st.as_select = true;
    CHSYNC_RETURN_IF_ERROR(SkipToEnd());
  }
  if (st.columns.empty() && !st.as_select) return Unexpected("a column list '(', LIKE or AS SELECT");
  return Status::Ok();
}

void DdlParser::CollectInlineKeys(const ColumnDefinition& def, std::vector<KeyDefinition>& keys) {
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
}

}  // namespace chsync::schema
