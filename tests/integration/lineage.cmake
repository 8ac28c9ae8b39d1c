# Issue 33, case 1: row versions only grow across a change of the source's binlog lineage (a proxy
# re-pointed to the promoted replica, RESET MASTER with and without the GTID state, rows past the
# checkpoint followed by a move). The tests promote, reset and re-point the MariaDB pair
# (replication_pair.cmake): RESOURCE_LOCK mysql_pair, one at a time.
chsync_test(lineage_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/lineage_test.cpp ${CMAKE_CURRENT_LIST_DIR}/tcp_proxy.cpp
  DEPS chsync_pipe_compare chsync_test_env chsync_mysql
  LABELS integration
  RESOURCE_LOCK mysql_pair)
if(TARGET lineage_integration_test)
  add_dependencies(lineage_integration_test chsync)
endif()
