#include "clickhouse/sql_quoting.h"

namespace chsync::clickhouse {
namespace {

void AppendHexEscape(unsigned char c, std::string& out) {
  constexpr char kHex[] = "0123456789ABCDEF";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 0xF];
}

}  // namespace

std::string QuoteIdentifier(std::string_view name) {
  std::string out;
  out.reserve(name.size() + 2);
  out += '`';
  for (char ch : name) {
    auto c = static_cast<unsigned char>(ch);
    if (ch == '`') {
      out += "``";
    } else if (ch == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c == 0x7F) {
      AppendHexEscape(c, out);
    } else {
      out += ch;
    }
  }
  out += '`';
  return out;
}

std::string QualifiedName(std::string_view database, std::string_view table) {
  return QuoteIdentifier(database) + "." + QuoteIdentifier(table);
}

std::string QuoteString(std::string_view value) {
  std::string out;
  out.reserve(value.size() + 2);
  out += '\'';
  for (char ch : value) {
    auto c = static_cast<unsigned char>(ch);
    if (ch == '\'' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7F) {
      AppendHexEscape(c, out);
    } else {
      out += ch;
    }
  }
  out += '\'';
  return out;
}

std::vector<std::string> SplitTabSeparated(std::string_view line) {
  std::vector<std::string> fields(1);
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '\t') {
      fields.emplace_back();
    } else if (c == '\\' && i + 1 < line.size()) {
      char e = line[++i];
      switch (e) {
        case 't': fields.back() += '\t'; break;
        case 'n': fields.back() += '\n'; break;
        case 'r': fields.back() += '\r'; break;
        case 'b': fields.back() += '\b'; break;
        case 'f': fields.back() += '\f'; break;
        case '0': fields.back() += '\0'; break;
        case 'a': fields.back() += '\a'; break;
        case 'v': fields.back() += '\v'; break;
        default: fields.back() += e; break;  // \\ \' and anything else: the character itself
      }
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

}  // namespace chsync::clickhouse
