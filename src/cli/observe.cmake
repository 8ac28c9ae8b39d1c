# `chsync run --http` (issue 16): metrics, health checks, the status page and live read-only queries.
target_sources(chsync PRIVATE ${CMAKE_CURRENT_LIST_DIR}/observe.cpp)
target_link_libraries(chsync PRIVATE chsync_http chsync_config chsync_metrics chsync_pipe chsync_clickhouse)
