# The pipe itself: set-up, snapshot orchestration, the binlog stream, checkpoints, status.
target_sources(chsync_pipe PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/cascades.cpp
  ${CMAKE_CURRENT_LIST_DIR}/destination.cpp
  ${CMAKE_CURRENT_LIST_DIR}/table_set.cpp
  ${CMAKE_CURRENT_LIST_DIR}/flusher.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pipeline.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rebuild.cpp
  ${CMAKE_CURRENT_LIST_DIR}/stream.cpp
  ${CMAKE_CURRENT_LIST_DIR}/table_control.cpp)

chsync_test(flusher_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/flusher_test.cpp
  DEPS chsync_pipe)

chsync_test(cascades_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/cascades_test.cpp
  DEPS chsync_pipe)

chsync_test(destination_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/destination_test.cpp
  DEPS chsync_pipe)
