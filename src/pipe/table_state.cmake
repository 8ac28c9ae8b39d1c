# Parked and paused tables (table_state.h): which failures concern one table, and the board the
# flusher parks a table on when ClickHouse refuses its INSERT.
target_sources(chsync_pipe PRIVATE ${CMAKE_CURRENT_LIST_DIR}/table_state.cpp)

chsync_test(table_state_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/table_state_test.cpp
  DEPS chsync_pipe)
