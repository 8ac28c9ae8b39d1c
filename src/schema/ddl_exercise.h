#pragma once

#include <string>
#include <string_view>

namespace chsync::schema {

/// Runs untrusted bytes through everything in this module that reads text: the parser under
/// both lexing modes, the tracker applying what parses (to a state holding a table), the
/// explain printers, the statement splitter, the tracker state reader and the column type
/// parser. Shared by the libFuzzer target and the crasher regression test.
/// Returns an empty string when every invariant held, else which one broke (e.g. a state that
/// does not survive its own serialization round trip). Crashing is the other failure mode.
std::string ExerciseDdlInput(std::string_view bytes);

}  // namespace chsync::schema
