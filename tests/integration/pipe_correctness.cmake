# Issue 13 end to end: XA transactions (committed, rolled back, across a pipe kill), identical rows
# in compressed MariaDB events, wide rows with bounded memory, a ClickHouse that goes away (failed
# DDL applied later, SIGTERM while retrying) and a resume against another server refused.
#
# Registered by hand rather than with chsync_test(): the tests that kill and restart the
# `clickhouse-fault` server (suite FaultClickHouse) must not run at the same time as each other,
# so they get a ctest RESOURCE_LOCK; the other tests run in parallel as usual. Links
# chsync_pipe_compare (pipe_e2e.cmake, included after this file: names resolve at generate time).
if(CHSYNC_BUILD_TESTS)
  find_package(nlohmann_json REQUIRED)
  add_executable(pipe_correctness_test ${CMAKE_CURRENT_LIST_DIR}/pipe_correctness_test.cpp)
  target_compile_options(pipe_correctness_test PRIVATE ${CHSYNC_WARNINGS})
  target_compile_definitions(pipe_correctness_test PRIVATE
    CHSYNC_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    CHSYNC_BINARY_DIR="${PROJECT_BINARY_DIR}")
  target_link_libraries(pipe_correctness_test PRIVATE chsync_pipe_compare chsync_test_env chsync_mysql
    nlohmann_json::nlohmann_json GTest::gtest GTest::gtest_main)
  gtest_discover_tests(pipe_correctness_test TEST_FILTER "-FaultClickHouse.*"
    PROPERTIES LABELS integration DISCOVERY_TIMEOUT 60)
  gtest_discover_tests(pipe_correctness_test TEST_FILTER "FaultClickHouse.*"
    PROPERTIES LABELS integration RESOURCE_LOCK chsync_clickhouse_fault DISCOVERY_TIMEOUT 60)
  add_dependencies(pipe_correctness_test chsync)
endif()
