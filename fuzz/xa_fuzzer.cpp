// libFuzzer target for the XA parts of the pipe: the input is read as an XA statement's text (and
// given to TransactionBoundaries as a QUERY event, after an XA group was opened), and as a
// prepared-XA rows file. Errors are fine; crashes and sanitizer reports are not, nor an XA id that
// does not round-trip through its own text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "position/transaction_boundary.h"
#include "state/xa_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  if (auto id = chsync::pipe::ParseXaId(in)) {
    // Canonical text parses back to itself.
    auto again = chsync::pipe::ParseXaId(*id);
    if (!again || *again != *id) std::abort();
  }
  chsync::pipe::TransactionBoundaries t;
  chsync::binlog::Event e;
  chsync::binlog::QueryEvent q;
  q.query = "XA START 'a'";
  e.body = q;
  (void)t.Observe(e, 100);
  std::string sql = "XA COMMIT " + std::string(in);
  q.query = sql;
  e.body = q;
  (void)t.Observe(e, 200);
  (void)chsync::pipe::DecodeXaRows(in, "fuzz");
  return 0;
}
