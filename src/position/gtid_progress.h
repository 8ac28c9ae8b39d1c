#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "mysql/mysql_gtid_set.h"
#include "mysql/source_set.h"

namespace chsync::pipe {

/// The GTIDs of every transaction the stream applied, in the source flavor's terms: MariaDB's
/// GTID position (the last GTID per domain) or MySQL's executed GTID set. A transaction's GTID is
/// noted when its GTID event is read and counts once the transaction ends (Commit), so that the
/// text saved with a checkpoint names exactly the transactions before its position.
class GtidProgress {
 public:
  /// Starts from a checkpoint's text ("" when it had none). kCorrupt when it does not parse.
  static Result<GtidProgress> Load(std::string_view text, bool mariadb);

  void NoteMariaDb(uint32_t domain, uint32_t server_id, uint64_t seq);
  /// An anonymous GTID (gtid_mode OFF) is not noted.
  void NoteMySql(const std::array<uint8_t, 16>& sid, const std::string& tag, uint64_t gno);
  /// The transaction of the noted GTID ended: it is applied.
  void Commit();
  /// The open transaction was abandoned (a reconnect): its GTID is not applied.
  void Discard() { pending_maria_.reset(), pending_mysql_.reset(); }

  bool mariadb() const { return mariadb_; }
  bool empty() const { return mariadb_ ? maria_.empty() : mysql_.empty(); }
  /// The saved form: "0-1-42,1-2-9" or "uuid:1-42,uuid:tag:1-3".
  std::string ToString() const;
  /// ToString with the open transaction's GTID counted too: every transaction some rows of which
  /// may have been sent.
  std::string ToStringWithOpen() const;
  /// The open transaction's GTID ("0-1-42", "uuid:42", "uuid:tag:42"); "" when none was noted.
  std::string OpenGtid() const;
  const mysql::MariaDbGtidList& mariadb_list() const { return maria_; }
  const mysql::MysqlGtidSet& mysql_set() const { return mysql_; }

 private:
  struct MySqlGtid {
    std::array<uint8_t, 16> sid{};
    std::string tag;
    int64_t gno = 0;
  };
  bool mariadb_ = true;
  mysql::MariaDbGtidList maria_;
  mysql::MysqlGtidSet mysql_;
  std::optional<mysql::MariaDbGtidList::Gtid> pending_maria_;
  std::optional<MySqlGtid> pending_mysql_;
};

}  // namespace chsync::pipe
