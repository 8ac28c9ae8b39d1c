# Binlog streaming from a live server (issue 3, live half).
target_sources(chsync_mysql PRIVATE ${CMAKE_CURRENT_LIST_DIR}/binlog_stream.cpp
  ${CMAKE_CURRENT_LIST_DIR}/binlog_read_ahead.cpp)

chsync_test(binlog_stream_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/binlog_stream_test.cpp
  DEPS chsync_mysql
  LABELS integration)

# Streams tests/data/binlog/live_types.sql's binlog through the decoder (needs the binlog module).
if(TARGET chsync_binlog)
  chsync_test(live_types_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/live_types_test.cpp
    DEPS chsync_mysql chsync_binlog
    LABELS integration)
endif()
