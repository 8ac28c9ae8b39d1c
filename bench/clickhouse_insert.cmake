# clickhouse_insert_bench (issue 5): chsync's RowBinary insert path against clickhouse-client
# inserting the same rows from TSV, same run. Needs a ClickHouse server and clickhouse-client.
add_executable(clickhouse_insert_bench ${CMAKE_CURRENT_LIST_DIR}/clickhouse_insert_bench.cpp)
target_compile_options(clickhouse_insert_bench PRIVATE ${CHSYNC_WARNINGS})
target_link_libraries(clickhouse_insert_bench PRIVATE chsync_clickhouse fmt::fmt)
