# pipe_crash_test: `chsync run` killed with SIGKILL 20 times under a sustained workload, then
# caught up; the destination's FINAL view must equal the source (MariaDB FULL → ClickHouse 18.16
# server, and → an embedded store).
chsync_test(pipe_crash_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/pipe_crash_test.cpp
  DEPS chsync_test_env chsync_mysql
  LABELS integration)
add_dependencies(pipe_crash_test chsync)
