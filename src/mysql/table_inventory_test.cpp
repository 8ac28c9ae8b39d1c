#include "mysql/table_inventory.h"

#include <gtest/gtest.h>

namespace chsync::mysql {
namespace {

QueryResult Rows(std::vector<std::vector<std::optional<std::string>>> rows) {
  QueryResult r;
  r.rows = std::move(rows);
  return r;
}

TEST(CascadingForeignKeysTest, OnlyCascadingRulesOfSelectedChildTablesAreListed) {
  // As information_schema.REFERENTIAL_CONSTRAINTS lists Sakila's and the employees database's keys.
  const QueryResult rows = Rows({
      {"sakila", "film_category", "fk_film_category_category", "sakila", "category", "RESTRICT", "CASCADE"},
      {"sakila", "payment", "fk_payment_rental", "sakila", "rental", "SET NULL", "CASCADE"},
      {"employees", "dept_emp", "dept_emp_ibfk_1", "employees", "employees", "CASCADE", "RESTRICT"},
      {"sakila", "rental", "fk_rental_staff", "sakila", "staff", "RESTRICT", "RESTRICT"},
      {"sakila", "broken"},
  });
  auto filter = TableFilter::Parse("sakila.*");
  ASSERT_TRUE(filter.ok());
  const std::vector<CascadingForeignKey> keys = ParseCascades(rows, *filter);
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[0].Describe(),
            "sakila.film_category (fk_film_category_category) -> sakila.category: ON UPDATE CASCADE");
  EXPECT_EQ(keys[1].Describe(),
            "sakila.payment (fk_payment_rental) -> sakila.rental: ON DELETE SET NULL, ON "
            "UPDATE CASCADE");
  EXPECT_EQ(ParseCascades(rows, TableFilter::All()).size(), 3u);
}

}  // namespace
}  // namespace chsync::mysql
