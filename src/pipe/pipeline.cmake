# The pipe itself: set-up, snapshot orchestration, the binlog stream, checkpoints, status.
target_sources(chsync_pipe PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/applier.cpp
  ${CMAKE_CURRENT_LIST_DIR}/binlog_session.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cascades.cpp
  ${CMAKE_CURRENT_LIST_DIR}/checkpointer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/clock.cpp
  ${CMAKE_CURRENT_LIST_DIR}/destination.cpp
  ${CMAKE_CURRENT_LIST_DIR}/table_set.cpp
  ${CMAKE_CURRENT_LIST_DIR}/flusher.cpp
  ${CMAKE_CURRENT_LIST_DIR}/follow_selection.cpp
  ${CMAKE_CURRENT_LIST_DIR}/holds.cpp
  ${CMAKE_CURRENT_LIST_DIR}/live_tables.cpp
  ${CMAKE_CURRENT_LIST_DIR}/names.cpp
  ${CMAKE_CURRENT_LIST_DIR}/outbox.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pipeline.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rebuild.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rebuilds.cpp
  ${CMAKE_CURRENT_LIST_DIR}/schema_applier.cpp
  ${CMAKE_CURRENT_LIST_DIR}/schema_history.cpp
  ${CMAKE_CURRENT_LIST_DIR}/stream.cpp
  ${CMAKE_CURRENT_LIST_DIR}/table_control.cpp)

# Unit tests of the engine's parts (fakes where a server is not needed).
foreach(part flusher cascades destination live_tables checkpointer rebuilds table_set holds outbox schema_applier)
  chsync_test(${part}_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/${part}_test.cpp DEPS chsync_pipe)
endforeach()
