# Row filters (`where:` in table_options, docs/mapping.md) end to end: snapshot, rows moving in and
# out of the filter while streaming, verify of the filtered rows, a filter column dropped.
chsync_test(row_filter_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/row_filter_test.cpp
  DEPS chsync_pipe_compare chsync_test_env chsync_pipe chsync_policy
  LABELS integration)
if(TARGET row_filter_integration_test)
  add_dependencies(row_filter_integration_test chsync)
endif()
