#pragma once

#include <string>

#include "binlog/event.h"

namespace chsync::binlog {

enum class PrintFormat { kText, kJson };

/// Appends one line (ending in '\n') describing `event`: its file:position, type, header fields
/// and content; rows events list every row with values named by COLUMN_NAME metadata where the
/// TABLE_MAP had it (else @1, @2, …), ENUM/SET also as strings where the metadata lists them.
/// Events inside a TRANSACTION_PAYLOAD follow their payload event, each on its own line.
///
/// Text format, one event per line:
///   binlog.000001:4 FORMAT_DESCRIPTION ts=1700000000 server_id=1 size=121 log_pos=125 flags=0x0 …
///   binlog.000001:812 WRITE_ROWS_V2 … table=db.t rows=1 row0:after={id=1 name='x' …}
/// Strings are quoted with ' and escaped (\\, \', \n, \t, \r, \0; other control bytes and bytes
/// that are not valid UTF-8 as \xNN) so a line never breaks; columns with the binary collation
/// (63), GEOMETRY and user variables print as x'HEX'. JSON format: one JSON object per line with
/// the same content; strings that are not valid UTF-8 become {"hex": "…"}, JSON columns are
/// embedded as JSON, DECIMAL and temporal values are strings.
void AppendEvent(const Event& event, PrintFormat format, std::string& out);

}  // namespace chsync::binlog
