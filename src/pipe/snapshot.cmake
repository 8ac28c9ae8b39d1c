# The parallel, resumable initial copy of the source tables (RunSnapshot) and its progress display.
target_sources(chsync_pipe PRIVATE ${CMAKE_CURRENT_LIST_DIR}/snapshot.cpp ${CMAKE_CURRENT_LIST_DIR}/progress.cpp)

chsync_test(pipe_snapshot_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/snapshot_test.cpp
  DEPS chsync_pipe
  LABELS integration)
