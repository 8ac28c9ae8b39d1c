#include "binlog/event.h"

namespace chsync::binlog {

std::string_view EventTypeName(EventType type) {
  switch (type) {
    case EventType::kUnknown: return "UNKNOWN";
    case EventType::kStartV3: return "START_V3";
    case EventType::kQuery: return "QUERY";
    case EventType::kStop: return "STOP";
    case EventType::kRotate: return "ROTATE";
    case EventType::kIntvar: return "INTVAR";
    case EventType::kLoad: return "LOAD";
    case EventType::kSlave: return "SLAVE";
    case EventType::kCreateFile: return "CREATE_FILE";
    case EventType::kAppendBlock: return "APPEND_BLOCK";
    case EventType::kExecLoad: return "EXEC_LOAD";
    case EventType::kDeleteFile: return "DELETE_FILE";
    case EventType::kNewLoad: return "NEW_LOAD";
    case EventType::kRand: return "RAND";
    case EventType::kUserVar: return "USER_VAR";
    case EventType::kFormatDescription: return "FORMAT_DESCRIPTION";
    case EventType::kXid: return "XID";
    case EventType::kBeginLoadQuery: return "BEGIN_LOAD_QUERY";
    case EventType::kExecuteLoadQuery: return "EXECUTE_LOAD_QUERY";
    case EventType::kTableMap: return "TABLE_MAP";
    case EventType::kPreGaWriteRows: return "PRE_GA_WRITE_ROWS";
    case EventType::kPreGaUpdateRows: return "PRE_GA_UPDATE_ROWS";
    case EventType::kPreGaDeleteRows: return "PRE_GA_DELETE_ROWS";
    case EventType::kWriteRowsV1: return "WRITE_ROWS_V1";
    case EventType::kUpdateRowsV1: return "UPDATE_ROWS_V1";
    case EventType::kDeleteRowsV1: return "DELETE_ROWS_V1";
    case EventType::kIncident: return "INCIDENT";
    case EventType::kHeartbeat: return "HEARTBEAT";
    case EventType::kIgnorable: return "IGNORABLE";
    case EventType::kRowsQuery: return "ROWS_QUERY";
    case EventType::kWriteRowsV2: return "WRITE_ROWS_V2";
    case EventType::kUpdateRowsV2: return "UPDATE_ROWS_V2";
    case EventType::kDeleteRowsV2: return "DELETE_ROWS_V2";
    case EventType::kGtid: return "GTID";
    case EventType::kAnonymousGtid: return "ANONYMOUS_GTID";
    case EventType::kPreviousGtids: return "PREVIOUS_GTIDS";
    case EventType::kTransactionContext: return "TRANSACTION_CONTEXT";
    case EventType::kViewChange: return "VIEW_CHANGE";
    case EventType::kXaPrepare: return "XA_PREPARE";
    case EventType::kPartialUpdateRows: return "PARTIAL_UPDATE_ROWS";
    case EventType::kTransactionPayload: return "TRANSACTION_PAYLOAD";
    case EventType::kHeartbeatV2: return "HEARTBEAT_V2";
    case EventType::kGtidTagged: return "GTID_TAGGED";
    case EventType::kMariaAnnotateRows: return "ANNOTATE_ROWS";
    case EventType::kMariaBinlogCheckpoint: return "BINLOG_CHECKPOINT";
    case EventType::kMariaGtid: return "MARIA_GTID";
    case EventType::kMariaGtidList: return "MARIA_GTID_LIST";
    case EventType::kMariaStartEncryption: return "START_ENCRYPTION";
    case EventType::kMariaQueryCompressed: return "QUERY_COMPRESSED";
    case EventType::kMariaWriteRowsCompressedV1: return "WRITE_ROWS_COMPRESSED_V1";
    case EventType::kMariaUpdateRowsCompressedV1: return "UPDATE_ROWS_COMPRESSED_V1";
    case EventType::kMariaDeleteRowsCompressedV1: return "DELETE_ROWS_COMPRESSED_V1";
    case EventType::kMariaWriteRowsCompressed: return "WRITE_ROWS_COMPRESSED";
    case EventType::kMariaUpdateRowsCompressed: return "UPDATE_ROWS_COMPRESSED";
    case EventType::kMariaDeleteRowsCompressed: return "DELETE_ROWS_COMPRESSED";
    case EventType::kMariaPartialRowData: return "PARTIAL_ROW_DATA";
  }
  return "UNKNOWN";
}

}  // namespace chsync::binlog
