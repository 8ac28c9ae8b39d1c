# MySQL GTID sets (text, binary) and the COM_BINLOG_DUMP_GTID request (issue 3, GTID start).
target_sources(chsync_mysql PRIVATE ${CMAKE_CURRENT_LIST_DIR}/mysql_gtid_set.cpp)

# Reads the PREVIOUS_GTIDS events of the real binlogs in the shared fixtures (binlog module).
chsync_test(mysql_gtid_set_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/mysql_gtid_set_test.cpp
  DEPS chsync_mysql chsync_binlog)

chsync_test(mysql_gtid_live_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/mysql_gtid_live_test.cpp
  DEPS chsync_mysql
  LABELS integration)
