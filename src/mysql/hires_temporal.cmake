# MariaDB 5.3 hires TIME/DATETIME/TIMESTAMP (mysql56_temporal_format=OFF) decoded from a live binlog.
if(TARGET chsync_binlog AND TARGET chsync_schema)
  chsync_test(hires_temporal_live_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/hires_temporal_live_test.cpp
    DEPS chsync_mysql chsync_binlog chsync_schema
    LABELS integration
    # Sets the global mysql56_temporal_format OFF for a moment: no other test may create tables then.
    SERIAL)
endif()
