#include "schema/ddl_exercise.h"

#include "schema/explain.h"
#include "schema/parser.h"
#include "schema/tracker.h"

namespace chsync::schema {
namespace {

Tracker MakeTracker() {
  Tracker tracker;
  auto r = tracker.ApplySql(
      "CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10) DEFAULT 'x', b DECIMAL(10,2), e ENUM('p','q'), "
      "UNIQUE KEY ua (a))",
      "db");
  (void)r;
  return tracker;
}

}  // namespace

std::string ExerciseDdlInput(std::string_view text) {
  static const Tracker kBase = MakeTracker();
  for (int mode = 0; mode < 2; ++mode) {
    LexOptions options;
    options.ansi_quotes = mode == 1;
    options.no_backslash_escapes = mode == 1;
    auto statement = ParseStatement(text, options);
    if (statement.ok()) {
      std::string explained = ExplainStatement(*statement);
      Tracker tracker = kBase;
      auto applied = tracker.Apply(*statement, "db");
      if (applied.ok()) {
        for (const auto& change : applied->changes) explained += ExplainChange(change);
        std::string state = tracker.Serialize();
        auto copy = Tracker::Deserialize(state);
        if (!copy.ok()) return "tracker state does not load: " + copy.error().message();
        if (copy->Serialize() != state) return "tracker state changes in a serialization round trip";
      }
    } else if (statement.error().message().empty()) {
      return "parse error without a message";
    }
    auto pieces = SplitStatements(text, options);
    if (pieces.ok()) {
      for (const StatementText& piece : *pieces) {
        if (piece.offset > text.size() || piece.text.size() > text.size() - piece.offset) {
          return "split statement outside the input";
        }
      }
    }
  }
  auto state = Tracker::Deserialize(text);
  if (state.ok()) {
    auto again = Tracker::Deserialize(state->Serialize());
    if (!again.ok()) return "re-serialized state does not load: " + again.error().message();
  }
  auto type = ParseColumnType(text);
  (void)type;
  auto def = ParseDefaultText(text);
  (void)def;
  return "";
}

}  // namespace chsync::schema
