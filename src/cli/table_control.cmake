# `chsync pause` and `chsync resume` (issue 17), and `chsync resync --table` while a pipe runs:
# control requests for one table of a running pipe (state/control.h, docs/table-control.md).
target_sources(chsync PRIVATE ${CMAKE_CURRENT_LIST_DIR}/table_control_command.cpp)
target_link_libraries(chsync PRIVATE chsync_pipe)

# Runs the built binary against a state directory, with this test holding the lock as a running
# pipe would (no servers).
chsync_test(table_control_cli_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/table_control_cli_test.cpp
  DEPS chsync_pipe)
if(TARGET table_control_cli_test)
  target_compile_definitions(table_control_cli_test PRIVATE CHSYNC_BINARY="$<TARGET_FILE:chsync>")
  add_dependencies(table_control_cli_test chsync)
endif()
