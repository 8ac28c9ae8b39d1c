# Issue 18, faults survived: servers killed with SIGKILL (MariaDB `mysql-fault`, ClickHouse
# `clickhouse-fault`), network cuts through a loopback TCP proxy in the test (tcp_proxy.cpp), a
# state directory on a tmpfs that fills up or turns read-only, two runs on one state directory.
#
# Registered by hand: the tests that kill a server hold a ctest RESOURCE_LOCK, so that no other test
# of that server runs meanwhile (chsync_clickhouse_fault is shared with pipe_correctness.cmake's
# FaultClickHouse suite; mysql-fault is used by this suite alone). Links chsync_pipe_compare
# (pipe_e2e.cmake; names resolve at generate time).
if(CHSYNC_BUILD_TESTS)
  find_package(nlohmann_json REQUIRED)
  add_executable(faults_test ${CMAKE_CURRENT_LIST_DIR}/faults_test.cpp ${CMAKE_CURRENT_LIST_DIR}/tcp_proxy.cpp)
  target_compile_options(faults_test PRIVATE ${CHSYNC_WARNINGS})
  target_link_libraries(faults_test PRIVATE chsync_pipe_compare chsync_test_env chsync_mysql
    nlohmann_json::nlohmann_json GTest::gtest GTest::gtest_main)
  gtest_discover_tests(faults_test TEST_FILTER "-FaultsMariaDb.*:FaultsClickHouse.*:FaultsSoak.*"
    PROPERTIES LABELS integration DISCOVERY_TIMEOUT 60)
  # The soak holds both fault servers. gtest_discover_tests splits a list given in PROPERTIES (the
  # soak held chsync_mysql_fault alone, and killed clickhouse-fault under the FaultsClickHouse
  # tests that ran beside it): its locks are set by a file ctest reads after the discovered tests.
  gtest_discover_tests(faults_test TEST_FILTER "FaultsSoak.*"
    PROPERTIES LABELS integration DISCOVERY_TIMEOUT 60)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/faults_soak_locks.cmake
    "set_tests_properties(FaultsSoak.WritersSchemaChangesTruncatesAndKills PROPERTIES RESOURCE_LOCK "
    "\"chsync_mysql_fault;chsync_clickhouse_fault\")\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${CMAKE_CURRENT_BINARY_DIR}/faults_soak_locks.cmake)
  gtest_discover_tests(faults_test TEST_FILTER "FaultsMariaDb.*"
    PROPERTIES LABELS integration RESOURCE_LOCK chsync_mysql_fault DISCOVERY_TIMEOUT 60)
  gtest_discover_tests(faults_test TEST_FILTER "FaultsClickHouse.*"
    PROPERTIES LABELS integration RESOURCE_LOCK chsync_clickhouse_fault DISCOVERY_TIMEOUT 60)
  add_dependencies(faults_test chsync)
endif()
