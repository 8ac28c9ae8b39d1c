# Issue 15 end to end: source failover by GTID against the MariaDB primary/replica pair
# (replication_pair.cmake). Every test kills, promotes or resets the shared pair: RESOURCE_LOCK
# mysql_pair, one at a time.
chsync_test(failover_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/failover_test.cpp
  DEPS chsync_pipe_compare chsync_test_env chsync_mysql
  LABELS integration
  RESOURCE_LOCK mysql_pair)
if(TARGET failover_test)
  add_dependencies(failover_test chsync)
endif()
