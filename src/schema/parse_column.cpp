// Column definitions: the data type and its attributes, column attributes, DEFAULT and ON UPDATE
// values, generated columns, FIRST/AFTER.

#include <fmt/format.h>

#include <algorithm>

#include "schema/parse_core.h"

namespace chsync::schema {
namespace {

/// Bytes per character of common charsets, for TEXT(M)/BLOB(M) sizing.
uint64_t BytesPerChar(std::string_view charset) {
  if (charset.empty() || charset == "utf8mb4") return 4;
  if (charset == "utf8mb3" || charset == "utf8") return 3;
  if (charset == "ucs2" || charset == "utf16" || charset == "utf16le") return charset == "ucs2" ? 2 : 4;
  if (charset == "utf32") return 4;
  return 1;
}

/// What may follow a plain type keyword: UNSIGNED/ZEROFILL, CHARACTER SET/COLLATE/BINARY, (M).
enum TypeFlag : uint8_t { kNumeric = 1, kCharacter = 2, kLength = 4 };

/// Type keywords whose only argument is an optional (M).
struct PlainType {
  std::string_view word;
  ColumnType type;
  uint8_t flags;
};

constexpr PlainType kPlainTypes[] = {
    {"TINYINT", ColumnType::kTinyInt, kNumeric | kLength},
    {"INT1", ColumnType::kTinyInt, kNumeric | kLength},
    {"SMALLINT", ColumnType::kSmallInt, kNumeric | kLength},
    {"INT2", ColumnType::kSmallInt, kNumeric | kLength},
    {"MEDIUMINT", ColumnType::kMediumInt, kNumeric | kLength},
    {"INT3", ColumnType::kMediumInt, kNumeric | kLength},
    {"MIDDLEINT", ColumnType::kMediumInt, kNumeric | kLength},
    {"INT", ColumnType::kInt, kNumeric | kLength},
    {"INTEGER", ColumnType::kInt, kNumeric | kLength},
    {"INT4", ColumnType::kInt, kNumeric | kLength},
    {"BIGINT", ColumnType::kBigInt, kNumeric | kLength},
    {"INT8", ColumnType::kBigInt, kNumeric | kLength},
    {"DATE", ColumnType::kDate, 0},
    {"YEAR", ColumnType::kYear, kLength},
    {"TINYBLOB", ColumnType::kTinyBlob, 0},
    {"BLOB", ColumnType::kBlob, kLength},
    {"MEDIUMBLOB", ColumnType::kMediumBlob, 0},
    {"LONGBLOB", ColumnType::kLongBlob, 0},
    {"TINYTEXT", ColumnType::kTinyText, kCharacter},
    {"TEXT", ColumnType::kText, kCharacter | kLength},
    {"MEDIUMTEXT", ColumnType::kMediumText, kCharacter},
    {"LONGTEXT", ColumnType::kLongText, kCharacter},
    {"JSON", ColumnType::kJson, 0},
    {"GEOMETRY", ColumnType::kGeometry, 0},
    {"POINT", ColumnType::kPoint, 0},
    {"LINESTRING", ColumnType::kLineString, 0},
    {"POLYGON", ColumnType::kPolygon, 0},
    {"MULTIPOINT", ColumnType::kMultiPoint, 0},
    {"MULTILINESTRING", ColumnType::kMultiLineString, 0},
    {"MULTIPOLYGON", ColumnType::kMultiPolygon, 0},
    {"GEOMETRYCOLLECTION", ColumnType::kGeometryCollection, 0},
    {"GEOMCOLLECTION", ColumnType::kGeometryCollection, 0},
    {"UUID", ColumnType::kUuid, 0},
    {"INET4", ColumnType::kInet4, 0},
    {"INET6", ColumnType::kInet6, 0},
};

bool OneOf(std::string_view word, std::initializer_list<std::string_view> words) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

}  // namespace

Result<ColumnDefinition> DdlParser::ParseColumnDefinition(std::string name) {
  ColumnDefinition def;
  def.column.name = std::move(name);
  CHSYNC_RETURN_IF_ERROR(ParseDataType(def));
  CHSYNC_RETURN_IF_ERROR(ColumnAttributes(def));
  return def;
}

Status DdlParser::OptionalLength(Column& c) {
  if (!AcceptPunct("(")) return Status::Ok();
  CHSYNC_ASSIGN_OR_RETURN(c.length, FieldLength("a length"));
  return ExpectPunct(")");
}

Status DdlParser::OptionalPrecisionScale(Column& c, bool require_scale) {
  if (!AcceptPunct("(")) return Status::Ok();
  // FLOAT and DECIMAL take MySQL's float_options: (M), (M,D), or field_length's DECIMAL_NUM
  // (sql_yacc.yy: `float_options: field_length | precision`, `field_length: '(' DECIMAL_NUM ')'`,
  // `precision: '(' NUM ',' NUM ')'`). Create_field::init reads that length with my_strtoull,
  // which stops at the dot, and finds no scale: DECIMAL(19.5) is DECIMAL(19,0) and FLOAT(7.4)
  // is FLOAT(7), single precision. DOUBLE and REAL take only (M,D) (opt_precision).
  if (!require_scale && IsDottedNumber(Peek())) {
    CHSYNC_ASSIGN_OR_RETURN(c.precision, FieldLength("a precision"));
    return ExpectPunct(")");
  }
  CHSYNC_ASSIGN_OR_RETURN(c.precision, Unsigned32("a precision"));
  if (AcceptPunct(",")) {
    CHSYNC_ASSIGN_OR_RETURN(c.scale, Unsigned32("a scale"));
  } else if (require_scale) {
    return Unexpected("',' and a scale");
  }
  return ExpectPunct(")");
}

Status DdlParser::ParseDataType(ColumnDefinition& def) {
  Column& c = def.column;
  size_t start = pos_;
  const Token& t = Peek();
  if (t.kind != TokenKind::kWord) return Unexpected("a data type");
  std::string word = Upper(t.text);
  Next();
  bool character = false;  // accepts CHARACTER SET/COLLATE/BINARY
  bool numeric = false;    // accepts UNSIGNED/ZEROFILL
  auto plain = std::find_if(std::begin(kPlainTypes), std::end(kPlainTypes),
                            [&](const PlainType& p) { return p.word == word; });
  if (plain != std::end(kPlainTypes)) {
    c.type = plain->type;
    numeric = (plain->flags & kNumeric) != 0;
    character = (plain->flags & kCharacter) != 0;
    if ((plain->flags & kLength) != 0) CHSYNC_RETURN_IF_ERROR(OptionalLength(c));
  } else if (word == "BOOL" || word == "BOOLEAN") {
    c.type = ColumnType::kTinyInt;
    c.length = 1;
  } else if (word == "SERIAL") {
    c.type = ColumnType::kBigInt;
    c.is_unsigned = true;
    c.nullable = false;
    c.auto_increment = true;
    def.serial = true;
  } else if (OneOf(word, {"DECIMAL", "DEC", "NUMERIC", "FIXED", "NUMBER"})) {
    c.type = ColumnType::kDecimal;
    numeric = true;
    CHSYNC_RETURN_IF_ERROR(OptionalPrecisionScale(c, false));
    if (!c.scale) c.scale = 0;
    // DECIMAL and DECIMAL(0) are DECIMAL(10,0) (my_decimal_trim).
    if (c.precision.value_or(0) == 0 && *c.scale == 0) c.precision = 10;
    if (*c.precision > 65 || *c.scale > 38 || *c.scale > *c.precision) {
      return ErrorAt(
          t, fmt::format("DECIMAL({},{}) is out of range (precision ≤ 65, scale ≤ 30 and ≤ precision)",
                         *c.precision, *c.scale));
    }
  } else if (word == "FLOAT" || word == "FLOAT4") {
    c.type = ColumnType::kFloat;
    numeric = true;
    CHSYNC_RETURN_IF_ERROR(OptionalPrecisionScale(c, false));
    if (c.precision && !c.scale) {
      if (*c.precision > 53) return ErrorAt(t, "FLOAT(p) precision must be at most 53");
      if (*c.precision > 24) c.type = ColumnType::kDouble;
      c.precision.reset();
    }
  } else if (word == "DOUBLE" || word == "FLOAT8" || word == "REAL") {
    if (word == "DOUBLE") Accept("PRECISION");
    c.type = ColumnType::kDouble;
    numeric = true;
    CHSYNC_RETURN_IF_ERROR(OptionalPrecisionScale(c, true));
  } else if (word == "BIT") {
    c.type = ColumnType::kBit;
    CHSYNC_RETURN_IF_ERROR(OptionalLength(c));
    if (!c.length) c.length = 1;
    if (*c.length < 1 || *c.length > 64) return ErrorAt(t, "BIT(M) needs 1 ≤ M ≤ 64");
  } else if (word == "TIME" || word == "DATETIME" || word == "TIMESTAMP") {
    c.type = word == "TIME"       ? ColumnType::kTime
             : word == "DATETIME" ? ColumnType::kDateTime
                                  : ColumnType::kTimestamp;
    c.fsp = 0;
    if (AcceptPunct("(")) {
      CHSYNC_ASSIGN_OR_RETURN(uint32_t fsp, Unsigned32("a fractional seconds precision"));
      if (fsp > 6) return ErrorAt(t, fmt::format("fractional seconds precision {} is above 6", fsp));
      c.fsp = fsp;
      CHSYNC_RETURN_IF_ERROR(ExpectPunct(")"));
    }
  } else if (OneOf(word, {"CHAR", "CHARACTER", "NCHAR", "NATIONAL", "NVARCHAR", "VARCHAR", "VARCHARACTER",
                          "VARCHAR2", "NVARCHAR2"})) {
    bool national = OneOf(word, {"NCHAR", "NATIONAL", "NVARCHAR", "NVARCHAR2"});
    bool varying = OneOf(word, {"VARCHAR", "VARCHARACTER", "NVARCHAR", "VARCHAR2", "NVARCHAR2"});
    if (word == "NATIONAL") {
      if (Accept("VARCHAR") || Accept("VARCHARACTER")) {
        varying = true;
      } else if (!(Accept("CHAR") || Accept("CHARACTER"))) {
        return Unexpected("CHAR, CHARACTER or VARCHAR after NATIONAL");
      }
    }
    if (!varying && (Accept("VARYING") || (word == "NCHAR" && Accept("VARCHAR")))) varying = true;
    if (!varying && Accept("BYTE")) {
      c.type = ColumnType::kBinary;
      CHSYNC_RETURN_IF_ERROR(OptionalLength(c));
      if (!c.length) c.length = 1;
    } else {
      c.type = varying ? ColumnType::kVarChar : ColumnType::kChar;
      CHSYNC_RETURN_IF_ERROR(OptionalLength(c));
      if (!c.length) {
        if (varying) return ErrorAt(Peek(), "VARCHAR needs a length, e.g. VARCHAR(255)");
        c.length = 1;
      }
      if (national) c.charset = "utf8mb3";
      character = true;
    }
  } else if (word == "BINARY") {
    c.type = ColumnType::kBinary;
    CHSYNC_RETURN_IF_ERROR(OptionalLength(c));
    if (!c.length) c.length = 1;
  } else if (word == "VARBINARY") {
    c.type = ColumnType::kVarBinary;
    CHSYNC_RETURN_IF_ERROR(OptionalLength(c));
    if (!c.length) return ErrorAt(Peek(), "VARBINARY needs a length, e.g. VARBINARY(255)");
  } else if (word == "LONG") {
    if (Accept("VARBINARY")) {
      c.type = ColumnType::kMediumBlob;
    } else {
      if (!Accept("VARCHAR") && Accept("CHAR")) CHSYNC_RETURN_IF_ERROR(Expect("VARYING"));
      c.type = ColumnType::kMediumText;
      character = true;
    }
  } else if (word == "ENUM" || word == "SET") {
    c.type = word == "ENUM" ? ColumnType::kEnum : ColumnType::kSet;
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
  } else if (word == "VECTOR") {
    c.type = ColumnType::kVector;
    CHSYNC_RETURN_IF_ERROR(OptionalLength(c));
    if (!c.length) c.length = 2048;
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
  return DataTypeAttributes(c, numeric, character);
}

Status DdlParser::DataTypeAttributes(Column& c, bool numeric, bool character) {
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
    } else if (character && AcceptCharsetKeyword()) {
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
    bool text = c.type == ColumnType::kText;
    uint64_t bytes = *c.length * (text ? BytesPerChar(c.charset) : 1);
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

Status DdlParser::ColumnAttributes(ColumnDefinition& def) {
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
    } else if (AcceptCharsetKeyword()) {
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
      if (Peek().IsWord("AS") && Peek(1).IsWord("IDENTITY")) {
        Next();
        Next();
        Next();
        continue;
      }
      CHSYNC_RETURN_IF_ERROR(Expect("AS"));
      CHSYNC_RETURN_IF_ERROR(GeneratedTail(c));
    } else if (Accept("AS")) {
      CHSYNC_RETURN_IF_ERROR(GeneratedTail(c));
    } else if (Peek().IsWord("REFERENCES")) {
      KeyDefinition key;
      key.type = KeyDefinition::Type::kForeign;
      key.columns.push_back(c.name);
      CHSYNC_RETURN_IF_ERROR(References(key));
      def.references = std::move(key);
    } else if (Peek().IsWord("CONSTRAINT") || Peek().IsWord("CHECK")) {
      if (Accept("CONSTRAINT") && IsIdentifierToken(Peek()) && !Peek().IsWord("CHECK")) Next();
      CHSYNC_RETURN_IF_ERROR(Expect("CHECK"));
      // MariaDB's JSON: CHECK (json_valid(`col`)) on the column itself.
      const Token& arg = Peek(3);
      if (Peek().IsPunct("(") && Peek(1).IsWord("json_valid") && Peek(2).IsPunct("(") &&
          (arg.kind == TokenKind::kWord || arg.kind == TokenKind::kQuotedIdentifier) &&
          EqualsIgnoreCase(arg.value, c.name) && Peek(4).IsPunct(")") && Peek(5).IsPunct(")")) {
        c.json_valid_check = true;
      }
      CHSYNC_RETURN_IF_ERROR(ParenthesisedText());
      AcceptSeq({"NOT", "ENFORCED"}) || Accept("ENFORCED");
    } else if (Accept("INVISIBLE")) {
      c.invisible = true;
    } else if (Accept("VISIBLE")) {
      c.invisible = false;
    } else if (Accept("SRID")) {
      CHSYNC_RETURN_IF_ERROR(SkipUnsigned32("an SRID"));
    } else if (Accept("ENGINE_ATTRIBUTE") || Accept("SECONDARY_ENGINE_ATTRIBUTE")) {
      AcceptPunct("=");
      CHSYNC_RETURN_IF_ERROR(StringLiteral());
    } else if (Accept("COMPRESSED")) {
      if (AcceptPunct("=")) CHSYNC_RETURN_IF_ERROR(CharsetName());
    } else if (AcceptSeq({"WITH", "SYSTEM", "VERSIONING"}) ||
               AcceptSeq({"WITHOUT", "SYSTEM", "VERSIONING"})) {
    } else if (Accept("SECONDARY_LOAD") || AcceptSeq({"NOT", "SECONDARY"})) {
    } else {
      CHSYNC_ASSIGN_OR_RETURN(bool engine_defined, EngineDefinedOption());
      if (!engine_defined) return Status::Ok();
    }
  }
}

Status DdlParser::GeneratedTail(Column& c) {
  if (Accept("ROW")) {
    // MariaDB's system-versioning columns, [GENERATED ALWAYS] AS ROW {START | END}: stored
    // columns the server fills, as the binlog's row images show them.
    if (!(Accept("START") || Accept("END"))) return Unexpected("START or END after AS ROW");
    return Status::Ok();
  }
  CHSYNC_ASSIGN_OR_RETURN(c.generation_expression, ParenthesisedText());
  c.generated = GeneratedKind::kVirtual;
  if (Accept("STORED") || Accept("PERSISTENT")) {
    c.generated = GeneratedKind::kStored;
  } else {
    Accept("VIRTUAL");
  }
  return Status::Ok();
}

bool DdlParser::AtColumnAttributeStart() const {
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
  const Token& t = Peek();
  if (t.kind != TokenKind::kWord) return false;
  // CHAR alone is also the CHAR() function; CHAR SET is the attribute.
  if (t.IsWord("CHAR")) return Peek(1).IsWord("SET");
  return std::any_of(std::begin(kWords), std::end(kWords), [&](std::string_view w) { return t.IsWord(w); });
}

bool DdlParser::AtExpressionOperator() const {
  const Token& t = Peek();
  if (t.kind != TokenKind::kPunct) return t.IsWord("DIV") || t.IsWord("MOD");
  static constexpr std::string_view kOps[] = {"+", "-", "*", "/", "%", "||", "&&", "|", "&", "^", "<<", ">>"};
  return std::any_of(std::begin(kOps), std::end(kOps), [&](std::string_view op) { return t.text == op; });
}

Result<DefaultValue> DdlParser::ParseDefault() {
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
      if (Next().text == "-") {
        sign = sign == "-" ? "" : "-";
      } else if (sign.empty()) {
        sign = "+";
      }
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

Result<DefaultValue> DdlParser::ExpressionDefault(size_t start) {
  pos_ = start;
  DefaultValue v;
  v.kind = DefaultKind::kExpression;
  CHSYNC_ASSIGN_OR_RETURN(v.text, SkipUntilSeparator(/*stop_at_attributes=*/true));
  if (v.text.empty()) return Unexpected("a default value");
  return v;
}

Status DdlParser::ColumnPositionClause(ColumnPosition& position) {
  if (Accept("FIRST")) {
    position.kind = ColumnPosition::Kind::kFirst;
  } else if (Accept("AFTER")) {
    position.kind = ColumnPosition::Kind::kAfter;
    CHSYNC_ASSIGN_OR_RETURN(position.after, Identifier("a column name after AFTER"));
  }
  return Status::Ok();
}

}  // namespace chsync::schema
