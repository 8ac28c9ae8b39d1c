#pragma once

#include <cstdint>

namespace chsync {

/// Days from 1970-01-01 to the given proleptic Gregorian date (negative before 1970).
/// REQUIRES: 1 <= month <= 12.
constexpr int64_t DaysFromCivil(int64_t year, uint32_t month, uint32_t day) {
  // Shift the year to start in March so that the leap day is the last day of the "year".
  year -= month <= 2 ? 1 : 0;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const int64_t year_of_era = year - era * 400;                                             // [0, 399]
  const int64_t month_index = month > 2 ? month - 3 : month + 9;                            // March = 0
  const int64_t day_of_year = (153 * month_index + 2) / 5 + static_cast<int64_t>(day) - 1;  // [0, 365]
  const int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;  // 719468 = days from 0000-03-01 to 1970-01-01
}

static_assert(DaysFromCivil(1970, 1, 1) == 0);
static_assert(DaysFromCivil(1969, 12, 31) == -1);
static_assert(DaysFromCivil(2000, 3, 1) == 11017);
static_assert(DaysFromCivil(1900, 1, 1) == -25567);
static_assert(DaysFromCivil(2024, 6, 15) == 19889);

}  // namespace chsync
