# The parallel, resumable initial copy of the source tables (RunSnapshot); its progress display is
# state/progress.h.
target_sources(chsync_pipe PRIVATE ${CMAKE_CURRENT_LIST_DIR}/snapshot.cpp)

chsync_test(pipe_snapshot_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/snapshot_test.cpp
  DEPS chsync_pipe
  LABELS integration)
