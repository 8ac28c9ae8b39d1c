#pragma once

// Where transactions begin and end in a binlog stream, and where the pipe may resume after them:
// a pure function of the events, so that every path that decides a checkpoint position has a test
// that walks it (plain transactions, DDL, MySQL's compressed TRANSACTION_PAYLOAD, XA of both
// flavors).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "binlog/event.h"

namespace chsync::pipe {

/// What one event means for the transaction around it.
struct Boundary {
  enum class Kind {
    kNone,        ///< nothing changes: rows, table maps, events inside a transaction
    kBegin,       ///< a transaction began (BEGIN, a MariaDB GTID that opens a group)
    kXaBegin,     ///< the first phase of XA transaction `xid` began: its rows wait for XA COMMIT
    kCommit,      ///< a transaction ended and its rows count (XID, COMMIT, ROLLBACK of non-transactional
                  ///< changes, MySQL's XA COMMIT … ONE PHASE)
    kXaPrepare,   ///< XA PREPARE of `xid`: the first phase ended; its rows are held
    kXaCommit,    ///< XA COMMIT `xid`: its held rows count now
    kXaRollback,  ///< XA ROLLBACK `xid`: its held rows never happened
    kStatement,   ///< any other statement (DDL): applied by the pipe; ends a group when `resume` != 0
  };
  Kind kind = Kind::kNone;
  /// kXa*: the XA id as the binlog prints it (XaIdText).
  std::string xid;
  /// Non-zero when the pipe may resume right after this event: the end of the outermost event in the
  /// file (for an event inside a TRANSACTION_PAYLOAD, the payload's end, never a point inside it).
  uint64_t resume = 0;
  /// kCommit of an XA group that was open (MySQL's XA COMMIT … ONE PHASE): the rows the pipe set
  /// aside for that group's XA PREPARE (sent out of the writers early by batch limits) count now,
  /// with the commit (issue 33, case 7: before, they waited for another XA's PREPARE or were lost).
  bool ends_open_xa = false;
};

/// Follows the transaction state of one stream, event by event. Not thread-safe.
class TransactionBoundaries {
 public:
  /// `event` as decoded (an event inside a TRANSACTION_PAYLOAD is observed on its own, after the
  /// payload itself); `outer_end` is the end position of the event as it lies in the binlog file:
  /// the payload's end for the events inside one.
  Boundary Observe(const binlog::Event& event, uint64_t outer_end);

  /// Inside a transaction (or an XA transaction's first phase).
  bool in_transaction() const { return in_transaction_; }
  /// The open group is the first phase of an XA transaction: the id, or nullopt.
  const std::optional<std::string>& open_xa() const { return xa_; }
  /// A new stream session: nothing is open.
  void Reset();

 private:
  bool in_transaction_ = false;
  std::optional<std::string> xa_;
};

/// The XA id as MariaDB and MySQL write it in XA statements: X'<gtrid hex>',X'<bqual hex>',<format id>.
std::string XaIdText(uint32_t format_id, std::string_view gtrid, std::string_view bqual);

/// The id of an XA statement ("XA COMMIT X'61',X'',1", "XA ROLLBACK 'a','b',7", …) after its verb, in
/// XaIdText form; nullopt when it does not parse.
std::optional<std::string> ParseXaId(std::string_view text);

}  // namespace chsync::pipe
