# pipe_crash_test: `chsync run` killed with SIGKILL 20 times under a sustained workload, then
# caught up; the destination's FINAL view must equal the source (MariaDB FULL → ClickHouse 18.16
# server, → the two-shard cluster, and → an embedded store). The cluster case holds the
# RESOURCE_LOCK of the cluster tests (pipe_cluster.cmake), which stop its servers.
if(CHSYNC_BUILD_TESTS)
  add_executable(pipe_crash_test ${CMAKE_CURRENT_LIST_DIR}/pipe_crash_test.cpp)
  target_compile_options(pipe_crash_test PRIVATE ${CHSYNC_WARNINGS})
  target_compile_definitions(pipe_crash_test PRIVATE
    CHSYNC_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    CHSYNC_BINARY_DIR="${PROJECT_BINARY_DIR}")
  target_link_libraries(pipe_crash_test PRIVATE chsync_test_env chsync_mysql GTest::gtest GTest::gtest_main)
  gtest_discover_tests(pipe_crash_test TEST_FILTER "-*Cluster*"
    PROPERTIES LABELS integration DISCOVERY_TIMEOUT 60)
  gtest_discover_tests(pipe_crash_test TEST_FILTER "*Cluster*"
    PROPERTIES LABELS integration RESOURCE_LOCK chsync_cluster DISCOVERY_TIMEOUT 60)
  add_dependencies(pipe_crash_test chsync)
endif()
