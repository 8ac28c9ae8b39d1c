# `chsync query` (issue 5): runs one statement on a ClickHouse destination and prints the result.
target_sources(chsync PRIVATE ${CMAKE_CURRENT_LIST_DIR}/query_command.cpp ${CMAKE_CURRENT_LIST_DIR}/live_pipe.cpp)
target_link_libraries(chsync PRIVATE chsync_clickhouse)
