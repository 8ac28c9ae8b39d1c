# Tracker::CheckTableMap against real TABLE_MAP events of both MariaDB test servers (FULL and
# MINIMAL binlog_row_metadata): every column type's metadata, and position-shifting ALTERs followed
# by the tracker (or missed by it).
chsync_test(table_map_metadata_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/table_map_metadata_test.cpp
  DEPS chsync_test_env chsync_schema chsync_mysql chsync_binlog
  LABELS integration)
