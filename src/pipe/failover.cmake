# Source failover (issue 15): the GTIDs a pipe applied, choosing a server among --source's, moving
# a checkpoint from one server to another, binlog gaps.
target_sources(chsync_pipe PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/failover.cpp
  ${CMAKE_CURRENT_LIST_DIR}/resume_position.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gtid_progress.cpp)

chsync_test(gtid_progress_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/gtid_progress_test.cpp
  DEPS chsync_pipe)

chsync_test(resume_position_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/resume_position_test.cpp
  DEPS chsync_pipe)
