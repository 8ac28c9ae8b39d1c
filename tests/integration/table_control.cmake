# Issue 17 end to end: parked tables, and `chsync resync --table` / `pause` / `resume` carried out
# by a running pipe (docs/table-control.md).
find_package(nlohmann_json REQUIRED)
chsync_test(table_control_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/table_control_test.cpp
  DEPS chsync_pipe_compare chsync_test_env chsync_mysql nlohmann_json::nlohmann_json
  LABELS integration)
if(TARGET table_control_test)
  add_dependencies(table_control_test chsync)
endif()
