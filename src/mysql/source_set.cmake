# Several source servers and the GTID arithmetic that decides whether one can take over a pipe
# (failover between a primary and its replicas).
target_sources(chsync_mysql PRIVATE ${CMAKE_CURRENT_LIST_DIR}/source_set.cpp)

# Pure set arithmetic, checked against the GTIDs in the real binlogs of the shared fixtures.
chsync_test(source_set_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/source_set_test.cpp
  DEPS chsync_mysql chsync_binlog)
