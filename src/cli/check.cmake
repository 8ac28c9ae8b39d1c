target_sources(chsync PRIVATE ${CMAKE_CURRENT_LIST_DIR}/check_command.cpp)
target_link_libraries(chsync PRIVATE chsync_mysql chsync_clickhouse chsync_config)
