# Issue 35, part 1: tables added to and removed from a running pipe (`chsync tables add|remove`,
# SIGHUP, a restart under a changed configuration; docs/table-control.md).
find_package(nlohmann_json REQUIRED)
chsync_test(table_selection_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/table_selection_test.cpp
  DEPS chsync_pipe_compare chsync_test_env chsync_mysql nlohmann_json::nlohmann_json
  LABELS integration)
if(TARGET table_selection_test)
  add_dependencies(table_selection_test chsync)
endif()
