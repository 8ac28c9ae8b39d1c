# Issue 36: many source tables into one ClickHouse table (table_options' source_column).
chsync_test(fan_in_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/fan_in_test.cpp
  DEPS chsync_pipe_compare chsync_test_env chsync_mysql
  LABELS integration)
if(TARGET fan_in_test)
  add_dependencies(fan_in_test chsync)
endif()
