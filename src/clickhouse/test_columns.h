#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "schema/table_schema.h"

namespace chsync::clickhouse::testing {

/// A column for tests: Col("a", ColumnType::kDecimal).Precision(65, 30).NotNull().
struct Col {
  schema::Column c;
  Col(std::string name, schema::ColumnType type) {
    c.name = std::move(name);
    c.type = type;
    c.type_spelling = std::string(schema::ColumnTypeName(type));
  }
  Col& Unsigned() {
    c.is_unsigned = true;
    return *this;
  }
  Col& NotNull() {
    c.nullable = false;
    return *this;
  }
  Col& Precision(uint32_t p, uint32_t s) {
    c.precision = p;
    c.scale = s;
    return *this;
  }
  Col& Fsp(uint32_t f) {
    c.fsp = f;
    return *this;
  }
  Col& Length(uint32_t n) {
    c.length = n;
    return *this;
  }
  Col& Labels(std::initializer_list<std::string> labels) {
    c.enum_values = labels;
    return *this;
  }
  Col& Default(schema::DefaultKind kind, std::string text) {
    c.default_value.kind = kind;
    c.default_value.text = std::move(text);
    return *this;
  }
  operator schema::Column() const { return c; }  // NOLINT(google-explicit-constructor)
};

}  // namespace chsync::clickhouse::testing
