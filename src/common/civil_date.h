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

struct CivilDate {
  int64_t year = 0;
  uint32_t month = 0;
  uint32_t day = 0;
};

/// The proleptic Gregorian date `days` after 1970-01-01 (the inverse of DaysFromCivil).
constexpr CivilDate CivilFromDays(int64_t days) {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t day_of_era = days - era * 146097;  // [0, 146096]
  const int64_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const int64_t month_index = (5 * day_of_year + 2) / 153;  // March = 0
  CivilDate date;
  date.day = static_cast<uint32_t>(day_of_year - (153 * month_index + 2) / 5 + 1);
  date.month = static_cast<uint32_t>(month_index < 10 ? month_index + 3 : month_index - 9);
  date.year = year_of_era + era * 400 + (date.month <= 2 ? 1 : 0);
  return date;
}

static_assert(CivilFromDays(0).year == 1970 && CivilFromDays(0).month == 1 && CivilFromDays(0).day == 1);
static_assert(CivilFromDays(-1).year == 1969 && CivilFromDays(-1).month == 12 && CivilFromDays(-1).day == 31);
static_assert(CivilFromDays(11016).month == 2 && CivilFromDays(11016).day == 29);  // 2000-02-29
static_assert(CivilFromDays(49672).year == 2105 && CivilFromDays(49672).month == 12 &&
              CivilFromDays(49672).day == 31);

}  // namespace chsync
