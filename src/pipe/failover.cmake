# Source failover (issue 15): the GTIDs a pipe applied, choosing a server among --source's, moving
# a checkpoint from one server to another, binlog gaps.
target_sources(chsync_pipe PRIVATE ${CMAKE_CURRENT_LIST_DIR}/failover.cpp)
