# Source failover (issue 15): the link to the source (source_link.cpp: choosing a server among
# --source's, its identity checked on every session), moving a checkpoint from one server to
# another by GTID, binlog gaps.
target_sources(chsync_pipe PRIVATE ${CMAKE_CURRENT_LIST_DIR}/failover.cpp ${CMAKE_CURRENT_LIST_DIR}/source_link.cpp)
