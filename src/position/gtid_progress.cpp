#include "position/gtid_progress.h"

namespace chsync::pipe {

Result<GtidProgress> GtidProgress::Load(std::string_view text, bool mariadb) {
  GtidProgress p;
  p.mariadb_ = mariadb;
  if (mariadb) {
    auto list = mysql::MariaDbGtidList::Parse(text);
    if (!list.ok()) {
      return Error(ErrorKind::kCorrupt,
                   "the checkpoint's GTID position '" + std::string(text) + "': " + list.error().message());
    }
    p.maria_ = std::move(list).value();
  } else {
    auto set = mysql::MysqlGtidSet::Parse(text);
    if (!set.ok()) {
      return Error(ErrorKind::kCorrupt,
                   "the checkpoint's GTID set '" + std::string(text) + "': " + set.error().message());
    }
    p.mysql_ = std::move(set).value();
  }
  return p;
}

void GtidProgress::NoteMariaDb(uint32_t domain, uint32_t server_id, uint64_t seq) {
  pending_maria_ = mysql::MariaDbGtidList::Gtid{domain, server_id, seq};
}

void GtidProgress::NoteMySql(const std::array<uint8_t, 16>& sid, const std::string& tag, uint64_t gno) {
  // GNOs outside MySQL's range never come from a server; such an event is not noted.
  if (gno == 0 || gno > static_cast<uint64_t>(mysql::MysqlGtidSet::kMaxGno)) return;
  pending_mysql_ = MySqlGtid{sid, tag, static_cast<int64_t>(gno)};
}

void GtidProgress::Commit() {
  if (pending_maria_) maria_.Set(*pending_maria_);
  if (pending_mysql_)
    mysql_.Add(pending_mysql_->sid, pending_mysql_->tag, pending_mysql_->gno, pending_mysql_->gno + 1);
  Discard();
}

std::string GtidProgress::ToString() const {
  return mariadb_ ? maria_.ToString() : mysql_.ToString();
}

std::string GtidProgress::ToStringWithOpen() const {
  if (!pending_maria_ && !pending_mysql_) return ToString();
  GtidProgress with = *this;
  with.Commit();
  return with.ToString();
}

std::string GtidProgress::OpenGtid() const {
  if (pending_maria_) {
    return std::to_string(pending_maria_->domain) + "-" + std::to_string(pending_maria_->server_id) + "-" +
           std::to_string(pending_maria_->seq);
  }
  if (!pending_mysql_) return "";
  mysql::MysqlGtidSet one;
  one.Add(pending_mysql_->sid, pending_mysql_->tag, pending_mysql_->gno, pending_mysql_->gno + 1);
  return one.ToString();
}

}  // namespace chsync::pipe
