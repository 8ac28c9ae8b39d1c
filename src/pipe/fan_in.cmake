# Many source tables into one ClickHouse table (issue 36): the shared table and its sources' rows.
target_sources(chsync_pipe PRIVATE ${CMAKE_CURRENT_LIST_DIR}/fan_in.cpp)
