# Source rows (snapshot or binlog) to ClickHouse cells.
target_sources(chsync_pipe PRIVATE ${CMAKE_CURRENT_LIST_DIR}/row_converter.cpp)

chsync_test(row_converter_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/row_converter_test.cpp DEPS chsync_pipe)
chsync_test(row_converter_live_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/row_converter_live_test.cpp
  DEPS chsync_pipe chsync_test_env LABELS integration)
