// ALTER: TABLE clause by clause (MySQL's and MariaDB's), DATABASE, and the objects that are only
// classified (VIEW, PROCEDURE, …).

#include <fmt/format.h>

#include <algorithm>

#include "schema/parse_core.h"

namespace chsync::schema {

using AlterKind = AlterOperation::Kind;

Status DdlParser::ParseAlter(Statement& st) {
  Accept("ONLINE") || Accept("OFFLINE");
  Accept("IGNORE");
  if (Peek().IsWord("DEFINER") || Peek().IsWord("ALGORITHM") || Peek().IsWord("SQL") ||
      Peek().IsWord("VIEW")) {
    st.kind = StatementKind::kView;
    st.description = "ALTER VIEW";
    CHSYNC_RETURN_IF_ERROR(SkipToEnd());
    return Status::Ok();
  }
  if (Accept("DATABASE") || Accept("SCHEMA")) {
    st.kind = StatementKind::kAlterDatabase;
    st.description = "ALTER DATABASE";
    static constexpr std::string_view kOptionWords[] = {"CHARSET", "COLLATE", "CHARACTER",  "DEFAULT",
                                                        "UPGRADE", "READ",    "ENCRYPTION", "COMMENT"};
    bool at_option = AtCharsetKeyword() || std::any_of(std::begin(kOptionWords), std::end(kOptionWords),
                                                       [&](std::string_view w) { return Peek().IsWord(w); });
    if (IsIdentifierToken(Peek()) && !at_option) {
      CHSYNC_ASSIGN_OR_RETURN(st.database, Identifier("a database name"));
    }
    return ParseDatabaseOptions(st);
  }
  if (Accept("TABLE")) return ParseAlterTable(st);
  static constexpr ObjectRule kOthers[] = {
      {"PROCEDURE", StatementKind::kRoutine}, {"FUNCTION", StatementKind::kRoutine},
      {"EVENT", StatementKind::kRoutine},     {"USER", StatementKind::kAccount},
      {"ROLE", StatementKind::kAccount},      {"SEQUENCE", StatementKind::kSequence},
      {"TABLESPACE", StatementKind::kAdmin},  {"SERVER", StatementKind::kAdmin},
      {"INSTANCE", StatementKind::kAdmin},    {"LOGFILE", StatementKind::kAdmin},
      {"UNDO", StatementKind::kAdmin},        {"RESOURCE", StatementKind::kAdmin},
  };
  CHSYNC_ASSIGN_OR_RETURN(bool classified, ClassifyObject(st, "ALTER", kOthers));
  if (classified) return Status::Ok();
  return Unexpected("TABLE, DATABASE, VIEW or another object after ALTER");
}

Status DdlParser::ParseAlterTable(Statement& st) {
  st.kind = StatementKind::kAlterTable;
  st.description = "ALTER TABLE";
  if (AcceptSeq({"IF", "EXISTS"})) st.if_exists = true;
  CHSYNC_ASSIGN_OR_RETURN(st.table, ParseTableName());
  CHSYNC_RETURN_IF_ERROR(SkipWaitNowait());
  while (!AtStatementEnd()) {
    CHSYNC_RETURN_IF_ERROR(ParseAlterOperation(st));
    if (AtStatementEnd()) break;
    if (AcceptPunct(",")) continue;
    // Table options and partition clauses may follow without a comma.
    if (st.operations.empty() || (st.operations.back().kind != AlterKind::kTableOptions &&
                                  !Peek().IsWord("PARTITION") && !AtTableOptionStart())) {
      return Unexpected("',' or end of statement");
    }
  }
  for (AlterOperation& op : st.operations) {
    if (op.kind == AlterKind::kAddKey) ResolvePeriod(op.key);
  }
  return Status::Ok();
}

bool DdlParser::AtTableOptionStart() {
  size_t save = pos_;
  TableOptions ignored;
  auto parsed = TableOption(ignored);
  pos_ = save;
  return parsed.ok() && *parsed;
}

bool DdlParser::AtAlterKeyword(const Token& t) {
  static constexpr std::string_view kWords[] = {"ADD",   "DROP",      "MODIFY", "CHANGE",  "RENAME",
                                                "ALTER", "ALGORITHM", "LOCK",   "CONVERT", "ENGINE",
                                                "FORCE", "ORDER",     "ENABLE", "DISABLE", "AUTO_INCREMENT"};
  return std::any_of(std::begin(kWords), std::end(kWords), [&](std::string_view w) { return t.IsWord(w); });
}

Status DdlParser::PushTextOperation(Statement& st, size_t start, AlterKind kind) {
  AlterOperation op;
  op.kind = kind;
  op.text = TextBetween(start, pos_);
  st.operations.push_back(std::move(op));
  return Status::Ok();
}

Status DdlParser::NameIfExists(AlterOperation& op, std::string_view what) {
  op.if_exists = AcceptSeq({"IF", "EXISTS"});
  CHSYNC_ASSIGN_OR_RETURN(op.name, ColumnName(what));
  return Status::Ok();
}

Status DdlParser::ParseAlterOperation(Statement& st) {
  size_t start = pos_;
  if (Accept("ADD")) return AlterAdd(st, start);
  if (Accept("DROP")) return AlterDrop(st, start);
  if (Accept("MODIFY") || Accept("CHANGE")) {
    AlterOperation op;
    op.kind = tokens_[start].IsWord("MODIFY") ? AlterKind::kModifyColumn : AlterKind::kChangeColumn;
    Accept("COLUMN");
    op.if_exists = AcceptSeq({"IF", "EXISTS"});
    return AlterColumnDefinition(st, std::move(op), /*in_list=*/false);
  }
  if (Accept("RENAME")) return AlterRename(st);
  if (Accept("ALTER")) return AlterAlter(st, start);
  if (Accept("CONVERT")) return AlterConvert(st, start);
  if (Accept("ALGORITHM") || Accept("LOCK")) {
    CHSYNC_RETURN_IF_ERROR(AlgorithmOrLockValue());
    return PushTextOperation(st, start,
                             tokens_[start].IsWord("LOCK") ? AlterKind::kLock : AlterKind::kAlgorithm);
  }
  if (AcceptSeq({"ENABLE", "KEYS"}) || AcceptSeq({"DISABLE", "KEYS"}) || Accept("FORCE") ||
      AcceptSeq({"WITH", "VALIDATION"}) || AcceptSeq({"WITHOUT", "VALIDATION"}) ||
      AcceptSeq({"DISCARD", "TABLESPACE"}) || AcceptSeq({"IMPORT", "TABLESPACE"}) || Accept("UPGRADE")) {
    return PushTextOperation(st, start);
  }
  if (Accept("ORDER")) return AlterOrderBy(st, start);
  if (Peek().IsWord("PARTITION") || Peek().IsWord("COALESCE") || Peek().IsWord("REORGANIZE") ||
      Peek().IsWord("EXCHANGE") || Peek().IsWord("ANALYZE") || Peek().IsWord("CHECK") ||
      Peek().IsWord("OPTIMIZE") || Peek().IsWord("REBUILD") || Peek().IsWord("REPAIR") ||
      Peek().IsWord("REMOVE") || Peek().IsWord("TRUNCATE") ||
      ((Peek().IsWord("DISCARD") || Peek().IsWord("IMPORT")) && Peek(1).IsWord("PARTITION"))) {
    return PartitionOperation(st, start);
  }
  AlterOperation op;
  op.kind = AlterKind::kTableOptions;
  CHSYNC_ASSIGN_OR_RETURN(bool parsed, TableOption(op.options));
  if (!parsed) return Unexpected("an ALTER TABLE clause");
  while (!AtStatementEnd() && !Peek().IsPunct(",")) {
    CHSYNC_ASSIGN_OR_RETURN(bool more, TableOption(op.options));
    if (!more) break;
  }
  op.text = TextBetween(start, pos_);
  st.operations.push_back(std::move(op));
  return Status::Ok();
}

Status DdlParser::AlterAdd(Statement& st, size_t start) {
  if (Peek().IsWord("PARTITION")) return PartitionOperation(st, start);
  if (AtKeyDefinition() && !Peek().IsWord("COLUMN")) return AlterAddKey(st, start);
  if (AcceptSeq({"SYSTEM", "VERSIONING"})) return PushTextOperation(st, start);
  Accept("COLUMN");
  AlterOperation op;
  op.kind = AlterKind::kAddColumn;
  op.if_not_exists = AcceptSeq({"IF", "NOT", "EXISTS"});
  if (!AcceptPunct("(")) return AlterColumnDefinition(st, std::move(op), /*in_list=*/false);
  // ADD [COLUMN] (definition or key, …)
  while (true) {
    if (AtKeyDefinition()) {
      CHSYNC_RETURN_IF_ERROR(AlterAddKey(st, pos_));
    } else {
      CHSYNC_RETURN_IF_ERROR(AlterColumnDefinition(st, op, /*in_list=*/true));
    }
    if (AcceptPunct(",")) continue;
    return ExpectPunct(")");
  }
}

Status DdlParser::AlterAddKey(Statement& st, size_t start) {
  AlterOperation op;
  op.kind = AlterKind::kAddKey;
  CHSYNC_ASSIGN_OR_RETURN(std::optional<KeyDefinition> key, ParseKeyDefinition(&op.if_not_exists));
  if (!key) return PushTextOperation(st, start);
  op.key = std::move(*key);
  st.operations.push_back(std::move(op));
  return Status::Ok();
}

Status DdlParser::AlterColumnDefinition(Statement& st, AlterOperation op, bool in_list) {
  std::string name;
  if (op.kind == AlterKind::kChangeColumn) {
    CHSYNC_ASSIGN_OR_RETURN(op.name, ColumnName());
    CHSYNC_ASSIGN_OR_RETURN(name, ColumnName("the new column name"));
    op.new_name = name;
  } else {
    CHSYNC_ASSIGN_OR_RETURN(name, ColumnName());
    if (op.kind == AlterKind::kModifyColumn) op.name = name;
  }
  CHSYNC_ASSIGN_OR_RETURN(op.definition, ParseColumnDefinition(std::move(name)));
  if (!in_list) CHSYNC_RETURN_IF_ERROR(ColumnPositionClause(op.position));
  std::vector<KeyDefinition> keys;
  CollectInlineKeys(op.definition, keys);
  st.operations.push_back(std::move(op));
  for (KeyDefinition& key : keys) {
    AlterOperation key_op;
    key_op.kind = AlterKind::kAddKey;
    key_op.key = std::move(key);
    st.operations.push_back(std::move(key_op));
  }
  return Status::Ok();
}

Status DdlParser::AlterDrop(Statement& st, size_t start) {
  if (Peek().IsWord("PARTITION")) return PartitionOperation(st, start);
  AlterOperation op;
  if (AcceptSeq({"PRIMARY", "KEY"})) {
    op.kind = AlterKind::kDropPrimaryKey;
  } else if (Accept("INDEX") || Accept("KEY")) {
    op.kind = AlterKind::kDropKey;
    CHSYNC_RETURN_IF_ERROR(NameIfExists(op, "an index name"));
  } else if (AcceptSeq({"FOREIGN", "KEY"})) {
    op.kind = AlterKind::kDropForeignKey;
    CHSYNC_RETURN_IF_ERROR(NameIfExists(op, "a foreign key name"));
  } else if (Accept("CHECK") || Accept("CONSTRAINT")) {
    op.kind = AlterKind::kDropConstraint;
    CHSYNC_RETURN_IF_ERROR(NameIfExists(op, "a constraint name"));
  } else if (AcceptSeq({"SYSTEM", "VERSIONING"})) {
    return PushTextOperation(st, start);
  } else if (Accept("PERIOD")) {
    AcceptSeq({"IF", "EXISTS"});
    CHSYNC_RETURN_IF_ERROR(Expect("FOR"));
    CHSYNC_RETURN_IF_ERROR(Identifier("a period name"));
    return PushTextOperation(st, start);
  } else {
    Accept("COLUMN");
    op.kind = AlterKind::kDropColumn;
    CHSYNC_RETURN_IF_ERROR(NameIfExists(op, "a column name to drop"));
    Accept("RESTRICT") || Accept("CASCADE");
  }
  st.operations.push_back(std::move(op));
  return Status::Ok();
}

Status DdlParser::AlterRename(Statement& st) {
  AlterOperation op;
  if (Accept("COLUMN")) {
    op.kind = AlterKind::kRenameColumn;
    CHSYNC_RETURN_IF_ERROR(NameIfExists(op, "a column name"));
    CHSYNC_RETURN_IF_ERROR(Expect("TO"));
    CHSYNC_ASSIGN_OR_RETURN(op.new_name, Identifier("the new column name"));
  } else if (Accept("INDEX") || Accept("KEY")) {
    op.kind = AlterKind::kRenameKey;
    CHSYNC_ASSIGN_OR_RETURN(op.name, Identifier("an index name"));
    CHSYNC_RETURN_IF_ERROR(Expect("TO"));
    CHSYNC_ASSIGN_OR_RETURN(op.new_name, Identifier("the new index name"));
  } else {
    Accept("TO") || Accept("AS");
    op.kind = AlterKind::kRenameTable;
    CHSYNC_ASSIGN_OR_RETURN(op.new_table, ParseTableName());
  }
  st.operations.push_back(std::move(op));
  return Status::Ok();
}

Status DdlParser::AlterAlter(Statement& st, size_t start) {
  AlterOperation op;
  if (Accept("INDEX") || Accept("KEY") || Accept("CHECK") || Accept("CONSTRAINT")) {
    // MySQL's ALTER INDEX i [IN]VISIBLE and ALTER CHECK|CONSTRAINT c [NOT] ENFORCED; MariaDB's
    // ALTER {INDEX|KEY} [IF EXISTS] i [NOT] IGNORED.
    CHSYNC_RETURN_IF_ERROR(NameIfExists(op, "an index or constraint name"));
    if (!(Accept("VISIBLE") || Accept("INVISIBLE") || Accept("IGNORED") || AcceptSeq({"NOT", "IGNORED"}) ||
          Accept("ENFORCED") || AcceptSeq({"NOT", "ENFORCED"}))) {
      return Unexpected("VISIBLE, INVISIBLE, IGNORED or ENFORCED");
    }
    op.kind = AlterKind::kOther;
    op.text = TextBetween(start, pos_);
    st.operations.push_back(std::move(op));
    return Status::Ok();
  }
  Accept("COLUMN");
  CHSYNC_RETURN_IF_ERROR(NameIfExists(op, "a column name"));
  if (AcceptSeq({"SET", "DEFAULT"})) {
    op.kind = AlterKind::kSetDefault;
    CHSYNC_ASSIGN_OR_RETURN(op.default_value, ParseDefault());
  } else if (AcceptSeq({"DROP", "DEFAULT"})) {
    op.kind = AlterKind::kDropDefault;
  } else if (AcceptSeq({"SET", "VISIBLE"})) {
    op.kind = AlterKind::kSetVisible;
  } else if (AcceptSeq({"SET", "INVISIBLE"})) {
    op.kind = AlterKind::kSetInvisible;
  } else {
    return Unexpected("SET DEFAULT, DROP DEFAULT, SET VISIBLE or SET INVISIBLE");
  }
  st.operations.push_back(std::move(op));
  return Status::Ok();
}

Status DdlParser::AlterConvert(Statement& st, size_t start) {
  if (Peek().IsWord("PARTITION") || Peek().IsWord("TABLE")) return ConvertPartition(st, start);
  CHSYNC_RETURN_IF_ERROR(Expect("TO"));
  if (!AcceptCharsetKeyword()) return Unexpected("CHARACTER SET");
  AlterOperation op;
  op.kind = AlterKind::kConvertCharset;
  CHSYNC_ASSIGN_OR_RETURN(std::string cs, CharsetName());
  op.options.charset = CanonicalCharset(cs);
  if (Accept("COLLATE")) {
    CHSYNC_ASSIGN_OR_RETURN(std::string co, CharsetName());
    op.options.collation = CanonicalCollation(co);
  }
  st.operations.push_back(std::move(op));
  return Status::Ok();
}

Status DdlParser::ConvertPartition(Statement& st, size_t start) {
  // Like MariaDB's other partition commands, CONVERT is the statement's only clause.
  if (!st.operations.empty())
    return ErrorAt(tokens_[start], "CONVERT PARTITION or TABLE after another clause");
  AlterOperation op;
  op.kind = AlterKind::kPartition;
  op.changes_data = true;
  if (Accept("PARTITION")) {
    CHSYNC_RETURN_IF_ERROR(Identifier("a partition name"));
    CHSYNC_RETURN_IF_ERROR(Expect("TO"));
    CHSYNC_RETURN_IF_ERROR(Expect("TABLE"));
    CHSYNC_ASSIGN_OR_RETURN(op.new_table, ParseTableName());
    if (!AtStatementEnd()) return Unexpected("end of statement");
    op.converted_table = AlterOperation::ConvertedTable::kCreated;
  } else {
    CHSYNC_RETURN_IF_ERROR(Expect("TABLE"));
    CHSYNC_ASSIGN_OR_RETURN(op.new_table, ParseTableName());
    CHSYNC_RETURN_IF_ERROR(Expect("TO"));
    CHSYNC_RETURN_IF_ERROR(Expect("PARTITION"));
    CHSYNC_RETURN_IF_ERROR(Identifier("a partition name"));
    // The partition's VALUES and options, skipped as PartitionOperation skips its clauses.
    CHSYNC_RETURN_IF_ERROR(SkipToEnd());
    op.converted_table = AlterOperation::ConvertedTable::kDropped;
  }
  op.text = TextBetween(start, pos_);
  st.operations.push_back(std::move(op));
  return Status::Ok();
}

Status DdlParser::AlterOrderBy(Statement& st, size_t start) {
  CHSYNC_RETURN_IF_ERROR(Expect("BY"));
  while (true) {
    CHSYNC_RETURN_IF_ERROR(ColumnName());
    Accept("ASC") || Accept("DESC");
    if (!(Peek().IsPunct(",") && IsIdentifierToken(Peek(1)) && !AtAlterKeyword(Peek(1)))) break;
    Next();
  }
  return PushTextOperation(st, start);
}

Status DdlParser::PartitionOperation(Statement& st, size_t start) {
  AlterOperation op;
  op.kind = AlterKind::kPartition;
  pos_ = start;
  const Token& first = Peek();
  // What removes or swaps rows; COALESCE, REORGANIZE and REMOVE PARTITIONING move rows without
  // losing any.
  op.changes_data = first.IsWord("TRUNCATE") || first.IsWord("DROP") || first.IsWord("EXCHANGE") ||
                    first.IsWord("DISCARD") || first.IsWord("IMPORT");
  CHSYNC_ASSIGN_OR_RETURN(op.text, SkipToEnd());
  st.operations.push_back(std::move(op));
  return Status::Ok();
}

}  // namespace chsync::schema
