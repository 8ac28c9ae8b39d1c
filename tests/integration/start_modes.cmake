# Start modes end to end (issue 35): snapshot.mode never from now, a position, a GTID and a time;
# refused across a schema change of a replicated table; snapshot.mode only (docs/configuration.md).
chsync_test(start_modes_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/start_modes_test.cpp
  DEPS chsync_pipe_compare chsync_test_env
  LABELS integration)
if(TARGET start_modes_test)
  add_dependencies(start_modes_test chsync)
endif()
