# Binlog retention headroom: how long until the source purges the file a checkpoint needs.
target_sources(chsync_mysql PRIVATE ${CMAKE_CURRENT_LIST_DIR}/binlog_retention.cpp)

chsync_test(binlog_retention_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/binlog_retention_test.cpp
  DEPS chsync_mysql)

# Reads SHOW BINARY LOGS of the FULL test server and rotates its binlog (FLUSH BINARY LOGS); changes
# no global variable.
chsync_test(binlog_retention_live_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/binlog_retention_live_test.cpp
  DEPS chsync_mysql
  LABELS integration)

# Sets max_binlog_size to 4 KiB and binlog_expire_logs_seconds to an hour on the FULL server
# (restored at the end) and purges its binlog files: alone (SERIAL).
chsync_test(binlog_retention_purge_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/binlog_retention_purge_test.cpp
  DEPS chsync_mysql
  LABELS integration
  SERIAL)
