# Issue 34: the Applier (src/pipe/applier.h), the owner of applying the binlog's events in order,
# against the real ClickHouse server and a captured MariaDB binlog file with a fake pipe as its
# host; and BinlogSession (src/pipe/binlog_session.h) over it, reading the real MariaDB.
chsync_test(applier_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/applier_test.cpp
  DEPS chsync_pipe chsync_pipe_compare chsync_test_env chsync_binlog
  LABELS integration)
