// Feeds arbitrary bytes to the DDL lexer/parser (under each sql_mode that changes lexing), applies
// whatever parses to a tracker holding a table, and reads the bytes as a serialized tracker state
// (schema::ExerciseDdlInput). Any crash, sanitizer report, hang or broken invariant is a bug: the
// parser's contract is an error, never a crash. Crashers go to tests/data/ddl/crashers/.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "schema/ddl_exercise.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string broken =
      chsync::schema::ExerciseDdlInput(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!broken.empty()) {
    std::fprintf(stderr, "invariant broken: %s\n", broken.c_str());
    __builtin_trap();
  }
  return 0;
}
