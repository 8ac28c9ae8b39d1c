# Start modes (issue 35): snapshot.mode initial, never (from now, start_position, start_gtid or
# start_time, refused across a schema change of a replicated table) and only; docs/configuration.md.
target_sources(chsync_pipe PRIVATE ${CMAKE_CURRENT_LIST_DIR}/start_modes.cpp ${CMAKE_CURRENT_LIST_DIR}/start_point.cpp)
chsync_test(start_point_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/start_point_test.cpp DEPS chsync_pipe)
